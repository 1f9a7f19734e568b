/* mpiio.c — MPI-IO calls write-behind must keep exact.  Every case writes its
 * file in OUTDIR and what the calls returned (counts, sizes, bytes read back) to
 * OUTDIR/result-<rank>.txt, so the transparency harness compares both, byte for
 * byte, with and without unblock; a rank that reads back other bytes than it
 * wrote prints MISMATCH.
 *
 * usage: mpiio OUTDIR [CASE...]   (default: every case below but big, noclose,
 *                                  nonblocking, split and large)
 *   cells8, cells40  interleaved cells of 8 and 40 bytes (cell i on rank i mod np),
 *                    with write_at, write (individual pointer), iwrite_at, iwrite;
 *                    each rank also writes its own segment 8 bytes at a time
 *   ryow             read-your-own-writes, later writes of the same bytes win
 *   syncread         rank 0 writes, sync-barrier-sync, the last rank reads it
 *   collective       independent writes, then a collective write over them
 *   setsize          set_size below buffered data, then get_size
 *   views            a subarray file view, and a vector memory type
 *   lbview           a view whose filetype's lower bound is not 0 (a resized
 *                    double), written with the individual pointer at once
 *   e32view          a view in external32 (not followed: its writes pass through),
 *                    atomic mode on and off, then writes (taken at their offsets
 *                    from 0, not the view's 64, before the view was refused
 *                    whole)
 *   nonblocking      nonblocking reads and collective writes under a strided view
 *                    (MPI's own requests) while the I/O thread runs (not in the
 *                    default cases)
 *   cont             8-byte writes each continuing the last (the continuation
 *                    path), broken by every change that must end it: a view, a
 *                    write elsewhere in the block, another type, a read, a file
 *                    closed and another opened; then strided cells (the
 *                    wrapper's strided cursor) broken the same ways
 *   served           reads of a rank's own writes among many records (600 per
 *                    round, scattered, overwriting some), 8 rounds of writes then
 *                    reads: the reads are served from the buffers through an
 *                    index of the records while it is rebuilt a few times, then
 *                    they flush (not in the default cases)
 *   nofd             a file MPI's driver reaches and the kernel does not (MPICH's
 *                    ROMIO testfs: stores nothing): rank 0 writes pieces of a
 *                    block rank 1 owns and reads, while rank 1 opens another
 *                    file collectively (not in the default cases; MPICH only)
 *   split            split collectives (every _begin/_end pair, reads and
 *                    writes, explicit offsets, the shared pointer's ordered
 *                    forms) between taken writes, so the I/O thread runs (not
 *                    in the default cases)
 *   whole            each rank's own 1 MiB segment 8 bytes at a time (whole
 *                    blocks, written while the program goes on), 8 bytes of
 *                    three of them written again, the segment read back
 *   steps            4 steps of interleaved 40-byte cells with 40 ms of work
 *                    (CPU time) after each: stage 1 sits idle while the
 *                    program computes and goes to the owners at the next call;
 *                    then each rank reads its cells back (not in the default
 *                    cases)
 *   stepsleep        the same with the program asleep instead of working: stage
 *                    1 stays (not in the default cases)
 *   reopen           20 rounds of: open, 16 interleaved 8-byte cells a rank (in
 *                    blocks of other ranks too), close, a barrier, then every
 *                    rank reads the round's cells of all ranks back (few runs:
 *                    each rank writes its own at close; not in the default cases)
 *   large            interleaved 24-byte cells with the MPI_Count forms (MPI 4.0:
 *                    MPI_File_write_at_c, _write_c, _iwrite_at_c, _iwrite_c)
 *   big MIB          each rank writes MIB MiB interleaved in 4 KiB cells
 *   noclose          a file left open at MPI_Finalize
 *   enospc DIR       writes until a small file system is full: the error class
 *   enospc-late DIR  the same with 5 ms asleep after each write (the I/O thread
 *                    writes the full blocks meanwhile; the one that fails is
 *                    written again by the program's next call, through MPI)
 *   failcoll [CALL]  each rank writes 32 cells of 4 KiB, interleaved; rank 0 seeks
 *                    to the end (a flush of its own writes), asks the size until
 *                    it returns no error, writes its first cell again and seeks
 *                    again; then a collective call (CALL: write_at_all, the
 *                    default, set_view or set_atomicity), a
 *                    get_size and the close; prints the call of the
 *                    first error and its class (mpiio_failcoll.sh: rank 0's
 *                    writes fail under a test hook)
 *   unlinked DIR     3 MiB a rank to a file of its own in 64 KiB calls, the file
 *                    removed by a raw unlink system call (as by another process:
 *                    no wrapper sees it), then sync and close; prints the call
 *                    of the first error ("write", "sync", "close" or "none") and
 *                    its class (mpiio_enospc.sh, CASE unlinked)
 *   replaced DIR     the same, a directory of the same name made after the
 *                    unlink (the name leads to another file; CASE replaced)
 *   quiet            interleaved cells written in phases with only collective
 *                    reads between them (each checks the next rank's latest
 *                    cell): taken; 5 collective calls (the file goes quiet);
 *                    passed to MPI; 16 (the 16th asks: taken again); rank 0
 *                    alone, taken; 5; passed; a collective write over each
 *                    rank's first cell (it wins); every cell read back after
 *                    the close
 *   ownidle          (with UNBLOCK_MPIIO_BLOCK=64K) each rank writes 32 KiB of
 *                    cells in its own block (rank r: block r, whose owner it
 *                    is), computes 40 ms (its stage 1 idle: shipped to its
 *                    own image at the next call), then reads every cell back
 *   ownwake          ownidle three times, each round in blocks of its own after
 *                    100 ms asleep (nothing held: the I/O thread of a file of
 *                    one rank sleeps too, until a write wakes it)
 *   quietsleep       8 collective writes (the file goes quiet), 1 s asleep
 *                    with the file open, an independent write each (passed:
 *                    the file is quiet), close; every cell read back through
 *                    a handle opened MPI_MODE_RDONLY (not followed)
 *   killed           interleaved cells, a barrier, a pause, then SIGTERM to itself
 *   aborted          the same ending in MPI_Abort(MPI_COMM_WORLD, 3)
 *   exitnow          the same ending in _exit(0) (what Python's os._exit calls),
 *                    without MPI_Finalize
 *   quickexit        the same with quick_exit(0)
 *   exec             the same with execl("/bin/true"), no MPI_Finalize either
 *   execfail         interleaved cells, an execl of a path that is not there
 *                    (it fails: ENOENT), more cells over and past them, close
 *   twohandles       two handles of one file in each rank, as PnetCDF 1.15
 *                    keeps them: cells written through one on MPI_COMM_SELF,
 *                    read back through the one on MPI_COMM_WORLD, then a
 *                    collective write through it over some, more cells through
 *                    the first over others, close both (no sync between)
 *   rdhandle         each rank writes its own file through a handle on
 *                    MPI_COMM_SELF, 8 bytes at a time, and reads every round
 *                    back through two handles opened MPI_MODE_RDONLY (one
 *                    before the writer's open, and read through then, one
 *                    after; neither followed: nothing to write), at explicit
 *                    offsets and at the individual pointer, and asks the size
 *                    through one; no sync between (ROMIO and OMPIO write in
 *                    the call)
 *   permuted         writes through a memory type whose blocks fill its extent
 *                    out of order (PnetCDF's varm with a transposing map), read
 *                    back as ints and through the same type
 *   onewrite         HDF5's t_mpi "1 write Many read": one rank writes cells of
 *                    the shared handle, MPI_Bcast (or a barrier alone), every
 *                    rank reads them, no sync (MPI does not promise it: run with
 *                    UNBLOCK_MPIIO_VISIBLE=messages)
 *   waw              HDF5's fill of a contiguous dataset: rank 0 writes a region,
 *                    a barrier, the last rank writes the same region, a barrier
 *                    (8 regions); the file is read back after close
 *   waw-part         the same, rank 0 writing all of each region but its first
 *                    8 bytes (its block then waits at the owner, not full)
 *   waw-wronly       waw-part through a handle opened MPI_MODE_WRONLY (news
 *                    only with UNBLOCK_MPIIO_VISIBLE=messages)
 *   ask-stale        (3 ranks) rank 2 writes a whole region of rank 0's, then
 *                    waits for rank 1's message (sent 50 ms later, after rank
 *                    1 wrote 8 bytes inside it), then writes those 8 bytes
 *                    again, a barrier: every rank reads rank 2's 8 bytes
 *   waw-kept         the last rank writes a whole region, a barrier, rank 0
 *                    writes 8 bytes inside it, a barrier (8 regions): the
 *                    whole regions are kept blocks in 64 KiB blocks, written
 *                    by the last rank itself; every rank reads the 8 bytes
 *                    back, then the file is read back after close
 *   barriers         interleaved 8-byte cells, a barrier after each round (HDF5
 *                    meets one at every H5Fclose and many H5Dwrite): each
 *                    barrier is news, the file is read back after close
 *   sizes            one rank writes past the end, a barrier, every rank's
 *                    MPI_File_get_size must count it (HDF5 asks on rank 0)
 *   seethrough       rank 0 writes 4 regions (all but 8 bytes of each), a
 *                    barrier, the last rank writes them again through an
 *                    external32 view (not taken: MPI's own write); read back
 *                    after close
 *   solonews         each rank writes cells of one file through its own handle
 *                    on MPI_COMM_SELF, an MPI call tells the next rank, which
 *                    reads them through its own (PnetCDF 1.15's intra-node
 *                    aggregation): each round another call carries the news */
#include <mpi.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>

static int rank, np;
static const char *dir;
static FILE *out;

static MPI_File open_w(const char *name)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", p);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return fh;
}

/* A case's count of what it read back wrong: MISMATCH on stdout when any, and
 * the count in the result file. */
static void verdict(const char *name, int bad, const char *what)
{
    if (bad)
        printf("MISMATCH: %s: %d %s read back wrong\n", name, bad, what);
    fprintf(out, "%s: %d %s read back wrong\n", name, bad, what);
}

static void fill(char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (char)('a' + (seed * 31 + i * 7) % 26);
}

static void cells(int size)
{
    char name[32];
    snprintf(name, sizeof name, "cells%d.dat", size);
    MPI_File fh = open_w(name);
    const int ncells = (3 << 20) / size; /* 3 MiB: several blocks */
    char c[64];
    int n = 0, got;
    MPI_Status st;
    for (int i = rank; i < ncells; i += np) {
        fill(c, (size_t)size, (unsigned)i);
        MPI_Offset off = (MPI_Offset)i * size;
        switch ((i / np) % 4) {
        case 0:
            MPI_File_write_at(fh, off, c, size, MPI_BYTE, &st);
            MPI_Get_count(&st, MPI_BYTE, &got);
            break;
        case 1:
            MPI_File_seek(fh, off, MPI_SEEK_SET);
            MPI_File_write(fh, c, size / 4, MPI_INT, &st);
            MPI_Get_count(&st, MPI_INT, &got);
            got *= 4;
            break;
        case 2: {
            MPI_Request r;
            MPI_File_iwrite_at(fh, off, c, size, MPI_CHAR, &r);
            MPI_Wait(&r, &st);
            MPI_Get_count(&st, MPI_CHAR, &got);
            break;
        }
        default: {
            MPI_Request r;
            int done = 0;
            MPI_File_seek(fh, off, MPI_SEEK_SET);
            MPI_File_iwrite(fh, c, size, MPI_BYTE, &r);
            while (!done)
                MPI_Test(&r, &done, &st);
            MPI_Get_count(&st, MPI_BYTE, &got);
            MPI_Offset pos;
            MPI_File_get_position(fh, &pos);
            if (pos != off + size)
                printf("MISMATCH: position %lld after iwrite at %lld\n", (long long)pos,
                       (long long)off);
            break;
        }
        }
        if (got != size)
            printf("MISMATCH: count %d of %d\n", got, size);
        n++;
    }
    /* Each rank's own segment, 8 bytes at a time with the individual pointer. */
    MPI_Offset seg = (MPI_Offset)ncells * size + (MPI_Offset)rank * 65536;
    MPI_File_seek(fh, seg, MPI_SEEK_SET);
    for (int i = 0; i < 8192; i++) {
        fill(c, 8, (unsigned)(i + rank * 100000));
        MPI_File_write(fh, c, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    fprintf(out, "cells%d: %d writes, position %lld\n", size, n, (long long)pos);
    MPI_File_close(&fh);
}

static void ryow(void)
{
    MPI_File fh = open_w("ryow.dat");
    char a[100], b[100];
    MPI_Offset base = (MPI_Offset)rank * 4096;
    for (int k = 0; k < 50; k++) {
        fill(a, 100, (unsigned)(k + 1000 * rank));
        MPI_File_write_at(fh, base + k * 37, a, 100, MPI_BYTE, MPI_STATUS_IGNORE);
        memset(b, 0, sizeof b);
        MPI_Status st;
        MPI_File_read_at(fh, base + k * 37, b, 100, MPI_BYTE, &st);
        int got;
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got != 100 || memcmp(a, b, 100) != 0)
            printf("MISMATCH: rank %d read back other bytes at step %d\n", rank, k);
    }
    MPI_Offset size;
    MPI_File_get_size(fh, &size);
    fprintf(out, "ryow: size at least %d\n", size >= base + 49 * 37 + 100);
    /* a write past the end, not read back: the size counts it at once */
    fill(a, 96, (unsigned)(77 + rank));
    MPI_File_write_at(fh, base + 4000, a, 96, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_get_size(fh, &size);
    fprintf(out, "ryow: size counts the last write %d\n", size >= base + 4096);
    /* 8 bytes between holes, read back with the holes: zeros around them, and
     * the count reaches the read's end (the file goes on to base + 4096) */
    fill(a, 8, (unsigned)(91 + rank));
    MPI_File_write_at(fh, base + 2000, a, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    memset(b, 0x55, sizeof b);
    MPI_Status st;
    MPI_File_read_at(fh, base + 1990, b, 20, MPI_BYTE, &st);
    int got = -1, holes = 0;
    MPI_Get_count(&st, MPI_BYTE, &got);
    for (int i = 0; i < 20; i++)
        holes += (i < 10 || i >= 18) ? b[i] == 0 : b[i] == a[i - 10];
    fprintf(out, "ryow: between holes %d bytes, %d right, next %d\n", got, holes, b[20]);
    MPI_File_close(&fh);
}

static void syncread(void)
{
    MPI_File fh = open_w("syncread.dat");
    char a[4096];
    if (rank == 0)
        for (int k = 0; k < 64; k++) {
            fill(a, 64, (unsigned)k);
            MPI_File_write_at(fh, k * 64, a, 64, MPI_BYTE, MPI_STATUS_IGNORE);
        }
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    if (rank == np - 1) {
        char b[4096];
        MPI_Status st;
        MPI_File_read_at(fh, 0, b, 4096, MPI_BYTE, &st);
        int got;
        MPI_Get_count(&st, MPI_BYTE, &got);
        unsigned long sum = 0;
        for (int i = 0; i < got; i++)
            sum = sum * 31 + (unsigned char)b[i];
        fprintf(out, "syncread: %d bytes, sum %lu\n", got, sum);
    }
    MPI_File_close(&fh);
}

static void collective(void)
{
    MPI_File fh = open_w("collective.dat");
    char a[256];
    for (int k = 0; k < 32; k++) {
        fill(a, 8, (unsigned)(k + 77 * rank));
        MPI_File_write_at(fh, (MPI_Offset)(k * np + rank) * 8, a, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    /* every rank rewrites its own first 4 cells collectively */
    fill(a, 8, 999u + (unsigned)rank);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * 8, a, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
}

static void setsize(void)
{
    MPI_File fh = open_w("setsize.dat");
    char a[1000];
    fill(a, 1000, (unsigned)rank);
    MPI_File_write_at(fh, (MPI_Offset)rank * 1000, a, 1000, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_set_size(fh, 1500);
    MPI_Offset size;
    MPI_File_get_size(fh, &size);
    fprintf(out, "setsize: %lld\n", (long long)size);
    MPI_File_close(&fh);
}

static void views(void)
{
    /* A 2-D grid of 64 x 64 doubles split in column blocks: each rank's view is a
     * subarray; its memory a vector (every other double of a larger buffer). */
    MPI_File fh = open_w("views.dat");
    int sizes[2] = { 64, 64 }, sub[2] = { 64, 64 / np }, start[2] = { 0, rank * (64 / np) };
    if (rank == np - 1)
        sub[1] = 64 - start[1];
    MPI_Datatype ft, mt;
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_vector(sub[0] * sub[1], 1, 2, MPI_DOUBLE, &mt);
    MPI_Type_commit(&mt);
    double *m = malloc(sizeof(double) * 4 * 64 * 64);
    for (int i = 0; i < 4 * 64 * 64; i++)
        m[i] = rank * 10000.0 + i;
    MPI_File_set_view(fh, 0, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
    /* in two halves: the second one continues the first in the view */
    int half = sub[0] * sub[1] / 2;
    MPI_Status st;
    MPI_File_write(fh, m, half, MPI_DOUBLE, &st);
    MPI_Type_free(&ft);
    MPI_File_write(fh, m + 2 * half, 1, mt, &st); /* (runs past the view's end: wraps) */
    int got;
    MPI_Get_count(&st, mt, &got);
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    fprintf(out, "views: count %d position %lld\n", got, (long long)pos);
    /* Another view while those pieces are buffered: bytes from the rank's first
     * column on.  Its first double is written again (the later write wins), and
     * the pointer starts at 0 in the new view. */
    MPI_File_set_view(fh, (MPI_Offset)start[1] * 8, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_File_get_position(fh, &pos);
    double again = -1.0 - rank;
    MPI_File_write(fh, &again, 8, MPI_BYTE, &st);
    MPI_File_get_position(fh, &pos);
    fprintf(out, "views: after set_view position %lld\n", (long long)pos);
    MPI_Type_free(&mt);
    free(m);
    MPI_File_close(&fh);
}

/* Each rank's own segment of 1 MiB, 8 bytes at a time: whole blocks (1 MiB by
 * default; the test `*.mpiio-whole` sets 64 KiB), written by the rank's I/O
 * thread while the program goes on, most of them blocks another rank owns.  A
 * cell near the end of the segment's fifth 64 KiB first (that block's records
 * do not cover it in order: it goes to its owner), 8 bytes in three places
 * written again after their blocks were full (the later bytes win over a block
 * being written, and over a kept block when they go to its owner), and the
 * segment read back in one call. */
static void whole(void)
{
    const int seg = 1 << 20;
    MPI_File fh = open_w("whole.dat");
    char *mine = malloc(seg), *back = malloc(seg);
    for (int i = 0; i < seg; i += 8)
        fill(mine + i, 8, (unsigned)(i / 8 + rank * 1000003));
    MPI_Offset base = (MPI_Offset)rank * seg;
    const int early = 5 * 65536 - 8;
    MPI_File_write_at(fh, base + early, mine + early, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    for (int i = 0; i < seg; i += 8)
        MPI_File_write_at(fh, base + i, mine + i, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    /* (in blocks 0 and 15, this rank's own at 3 ranks, and 2, one it kept: those
     * bytes go to its owner, after the kept block) */
    const int again[3] = { 8, 2 * 65536 + 4000, seg - 16 };
    for (int k = 0; k < 3; k++) {
        fill(mine + again[k], 8, (unsigned)(77 + k + rank));
        MPI_File_write_at(fh, base + again[k], mine + again[k], 8, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    /* (the last rank 8 bytes past its segment: the file's end is not a whole
     * MiB, and space reserved past it must go back at close) */
    if (rank == np - 1)
        MPI_File_write_at(fh, base + seg + 100, mine, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_Status st;
    int got = 0;
    MPI_File_read_at(fh, base, back, seg, MPI_BYTE, &st);
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != seg || memcmp(back, mine, (size_t)seg) != 0)
        printf("MISMATCH: whole: the segment read back differs (%d bytes)\n", got);
    MPI_File_close(&fh);
    fprintf(out, "whole: %d bytes read back\n", got);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* blocks allocated past the end of the file (64 KiB of slack) */
        char p[4096];
        struct stat sb;
        snprintf(p, sizeof p, "%s/whole.dat", dir);
        if (stat(p, &sb) == 0)
            fprintf(out, "whole: size %lld, blocks past its end: %s\n", (long long)sb.st_size,
                    (long long)sb.st_blocks * 512 > (sb.st_size + 4095) / 4096 * 4096 + 65536
                        ? "yes"
                        : "no");
    }
    free(mine);
    free(back);
}

/* About ms of this thread's CPU time (at most 4 s of the clock's, on a loaded
 * machine). */
static void work(int ms)
{
    struct timespec c0, c, w0, w;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &w0);
    volatile double x = 1.0;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
        clock_gettime(CLOCK_MONOTONIC, &w);
    } while ((c.tv_sec - c0.tv_sec) * 1000 + (c.tv_nsec - c0.tv_nsec) / 1000000 < ms &&
             w.tv_sec - w0.tv_sec < 4);
}

/* Steps as BT-IO's: interleaved 40-byte cells, 48 KiB per rank a step, each
 * followed by 40 ms of work (asleep: nothing the I/O thread should take for the
 * program computing), then every cell read back by the rank that wrote it. */
static void steps(int asleep)
{
    MPI_File fh = open_w(asleep ? "stepsleep.dat" : "steps.dat");
    char c[40], b[40];
    const int cells = 48 * 1024 / 40, nsteps = 4;
    for (int k = 0; k < nsteps; k++) {
        MPI_Offset base = (MPI_Offset)k * cells * np * 40;
        for (int i = 0; i < cells; i++) {
            fill(c, 40, (unsigned)(k * 1000003 + i * np + rank));
            MPI_File_write_at(fh, base + (MPI_Offset)(i * np + rank) * 40, c, 40, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
        if (asleep)
            usleep(40000);
        else
            work(40);
    }
    int bad = 0;
    for (int k = 0; k < nsteps; k++)
        for (int i = 0; i < cells; i += 97) {
            MPI_Offset base = (MPI_Offset)k * cells * np * 40;
            fill(c, 40, (unsigned)(k * 1000003 + i * np + rank));
            MPI_File_read_at(fh, base + (MPI_Offset)(i * np + rank) * 40, b, 40, MPI_BYTE,
                             MPI_STATUS_IGNORE);
            bad += memcmp(b, c, 40) != 0;
        }
    if (bad)
        printf("MISMATCH: steps: %d cells read back differ\n", bad);
    MPI_File_close(&fh);
    fprintf(out, "steps: %d of %d cells, %d read back wrong\n", nsteps, cells, bad);
}

/* A rank's writes in a block it owns, idle, then read back: shipped to its own
 * image, where the read must find them (own.c: mio_read_served). */
static void ownidle(int rounds)
{
    enum { B = 65536, CELL = 64 };
    char c[CELL], b[CELL];
    int bad = 0;
    MPI_File fh = open_w(rounds > 1 ? "ownwake.dat" : "ownidle.dat");
    for (int k = 0; k < rounds; k++) {
        MPI_Offset base = ((MPI_Offset)k * np + rank) * B;
        if (rounds > 1)
            usleep(100000);
        for (int i = 0; i < B / 2 / CELL; i++) {
            fill(c, CELL, (unsigned)(k * 7919 + i * np + rank));
            MPI_File_write_at(fh, base + (MPI_Offset)i * CELL, c, CELL, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
        work(40);
        if (rounds > 1) /* (a read would keep stage 1 for the reads: own.c) */
            MPI_File_sync(fh);
    }
    for (int k = 0; k < rounds; k++)
        for (int i = 0; i < B / 2 / CELL; i++) {
            MPI_Offset base = ((MPI_Offset)k * np + rank) * B;
            fill(c, CELL, (unsigned)(k * 7919 + i * np + rank));
            MPI_File_read_at(fh, base + (MPI_Offset)i * CELL, b, CELL, MPI_BYTE,
                             MPI_STATUS_IGNORE);
            bad += memcmp(b, c, CELL) != 0;
        }
    MPI_File_close(&fh);
    verdict(rounds > 1 ? "ownwake" : "ownidle", bad, "cells");
}

/* Files opened, written a little and closed, round after round (a checkpoint
 * per step): what every rank wrote is there once all have closed. */
static void reopen(void)
{
    char c[8], b[8], name[64];
    int bad = 0;
    for (int k = 0; k < 20; k++) {
        snprintf(name, sizeof name, "reopen-%d.dat", k % 3);
        MPI_File fh = open_w(name);
        for (int i = 0; i < 16; i++) {
            fill(c, 8, (unsigned)(k * 7919 + i * np + rank));
            /* (cells 8 KiB apart: the round's cells of each rank span blocks) */
            MPI_File_write_at(fh, (MPI_Offset)(i * np + rank) * 8192, c, 8, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
        MPI_File_close(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        for (int i = 0; i < 16 * np; i++) {
            fill(c, 8, (unsigned)(k * 7919 + i));
            MPI_File_read_at(fh, (MPI_Offset)i * 8192, b, 8, MPI_BYTE, MPI_STATUS_IGNORE);
            bad += memcmp(b, c, 8) != 0;
        }
        MPI_File_close(&fh);
    }
    if (bad)
        printf("MISMATCH: reopen: %d cells read back differ\n", bad);
    fprintf(out, "reopen: 20 rounds, %d cells wrong\n", bad);
}

/* An exec that fails between two rounds of cells (the second over half of the
 * first and past it): the program goes on, and the file is as without unblock
 * (under unblock the second round is MPI's own calls: mpiio.c's exec drain). */
static void execfail(void)
{
    MPI_File fh = open_w("execfail.dat");
    char c[40];
    for (int r = 0; r < 2; r++) {
        for (int k = r * 500; k < 1000 + r * 500; k++) {
            fill(c, 40, (unsigned)(r * 100003 + k * np + rank));
            MPI_File_write_at(fh, (MPI_Offset)(k * np + rank) * 40, c, 40, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
        if (r == 0) {
            execl("/nonexistent/unblock-test", "x", (char *)NULL);
            fprintf(out, "execfail: exec failed\n");
        }
    }
    MPI_File_close(&fh);
}

/* Two handles of one file per rank (PnetCDF 1.15's independent and collective
 * ones): ROMIO and OMPIO write in the call, so each handle sees the other's
 * writes at once and the later of two writes of the same bytes wins, though
 * MPI promises that only after a sync. */
static void twohandles_cells(MPI_File fh, int from, int step, unsigned seed, int coll)
{
    char c[24];
    for (int k = from; k < 400; k += step) {
        fill(c, 24, seed + (unsigned)(k * np + rank));
        MPI_Offset at = (MPI_Offset)(k * np + rank) * 24;
        if (coll)
            MPI_File_write_at_all(fh, at, c, 24, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            MPI_File_write_at(fh, at, c, 24, MPI_BYTE, MPI_STATUS_IGNORE);
    }
}

static void twohandles(void)
{
    MPI_File fc = open_w("twohandles.dat"), fs;
    char p[4096], c[24], b[24];
    snprintf(p, sizeof p, "%s/twohandles.dat", dir);
    if (MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDWR, MPI_INFO_NULL, &fs) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int bad = 0;
    for (int r = 0; r < 3; r++) {
        twohandles_cells(fs, 0, 1, r * 7919, 0);
        for (int k = 0; k < 400; k += 7) {
            fill(c, 24, (unsigned)(r * 7919 + k * np + rank));
            MPI_File_read_at(fc, (MPI_Offset)(k * np + rank) * 24, b, 24, MPI_BYTE,
                             MPI_STATUS_IGNORE);
            bad += memcmp(b, c, 24) != 0;
        }
        /* (a collective write over every 5th cell of this rank's, then the
         * independent handle again over every 3rd) */
        twohandles_cells(fc, r, 5, r * 104729, 1);
        twohandles_cells(fs, 1, 3, r * 15485863, 0);
    }
    MPI_File_close(&fs);
    MPI_File_close(&fc);
    verdict("twohandles", bad, "cells");
}

/* A handle opened MPI_MODE_RDONLY beside a followed one of the same file: its
 * reads and its size see what the rank wrote through the other, though MPI
 * promises that only after MPI_File_sync (ROMIO and OMPIO write in the call).
 * Before, both read none of it (the read-only handle is not followed, and its
 * calls looked at no other handle): 8,000 bytes written, a size of 0. */
static void rdhandle(void)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/rdhandle-%d.dat", dir, rank);
    MPI_File fw, fr, fb;
    MPI_File_delete(p, MPI_INFO_NULL);
    /* (the file made first, so that a read-only handle can open it before the
     * writer's) */
    if (MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fw) !=
            MPI_SUCCESS ||
        MPI_File_close(&fw) != MPI_SUCCESS ||
        MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fb) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    /* (reads through fb while no handle writes the file: from then on its reads
     * go to MPI from the wrapper's front, until the writer's open) */
    int bad = 0, got = -1;
    long long sizes = 0, v0 = -3;
    MPI_Status st;
    for (int k = 0; k < 3; k++) {
        MPI_File_read_at(fb, 0, &v0, 8, MPI_BYTE, &st);
        MPI_Get_count(&st, MPI_BYTE, &got);
        bad += got != 0 || v0 != -3;
    }
    if (MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDWR, MPI_INFO_NULL, &fw) != MPI_SUCCESS ||
        MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fr) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int r = 0; r < 5; r++) {
        for (long long k = 0; k < 200; k++) {
            long long v = (r * 1000 + k) * 8 + rank;
            MPI_File_write_at(fw, (MPI_Offset)(r * 200 + k) * 8, &v, 8, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
        /* (this round's records: one through fb at its offset first, as before
         * the writer's open; every 3rd through fr at its offset, all of them
         * through fb at its individual pointer, moved there first) */
        long long v1 = -1;
        MPI_File_read_at(fb, (MPI_Offset)(r * 200 + 1) * 8, &v1, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        bad += v1 != (r * 1000 + 1) * 8 + rank;
        for (long long k = 0; k < 200; k += 3) {
            long long v = -1;
            MPI_File_read_at(fr, (MPI_Offset)(r * 200 + k) * 8, &v, 8, MPI_BYTE,
                             MPI_STATUS_IGNORE);
            bad += v != (r * 1000 + k) * 8 + rank;
        }
        MPI_File_seek(fb, (MPI_Offset)r * 1600, MPI_SEEK_SET);
        for (long long k = 0; k < 200; k++) {
            long long v = -1;
            MPI_File_read(fb, &v, 8, MPI_BYTE, MPI_STATUS_IGNORE);
            bad += v != (r * 1000 + k) * 8 + rank;
        }
        MPI_Offset size = -1;
        MPI_File_get_size(fr, &size);
        sizes += size;
        /* (a record rewritten, read back at once through fr) */
        long long w = -5 - r, v = 0;
        MPI_File_write_at(fw, (MPI_Offset)(r * 200 + 7) * 8, &w, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_read_at(fr, (MPI_Offset)(r * 200 + 7) * 8, &v, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        bad += v != w;
    }
    MPI_File_close(&fr);
    MPI_File_close(&fb);
    MPI_File_close(&fw);
    fprintf(out, "rdhandle: sizes %lld\n", sizes);
    verdict("rdhandle", bad, "records");
}

/* A memory type that visits the bytes of its extent out of memory order: a 4 x 6
 * int array written column by column (PnetCDF's varm with a transposing imap,
 * test_bput).  Its size, extent and true extent are alike; before, its writes
 * were taken as if contiguous, rows instead of columns. */
static void permuted(void)
{
    MPI_File fh = open_w("permuted.dat");
    int a[4][6], b[4][6], back[24], bl[24], bad = 0;
    MPI_Aint disp[24];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 4; j++) {
            bl[i * 4 + j] = 1;
            disp[i * 4 + j] = (MPI_Aint)((j * 6 + i) * sizeof(int));
        }
    MPI_Datatype t;
    MPI_Type_create_hindexed(24, bl, disp, MPI_INT, &t);
    MPI_Type_commit(&t);
    for (int k = 0; k < 300; k++) {
        for (int j = 0; j < 4; j++)
            for (int i = 0; i < 6; i++)
                a[j][i] = (k * np + rank) * 100 + j * 6 + i;
        MPI_Offset at = (MPI_Offset)(k * np + rank) * 96;
        MPI_File_write_at(fh, at, a, 1, t, MPI_STATUS_IGNORE);
        if (k % 10 != 9)
            continue;
        MPI_File_read_at(fh, at, back, 24, MPI_INT, MPI_STATUS_IGNORE);
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 4; j++)
                bad += back[i * 4 + j] != a[j][i];
        memset(b, 0, sizeof b);
        MPI_File_read_at(fh, at, b, 1, t, MPI_STATUS_IGNORE);
        bad += memcmp(a, b, sizeof a) != 0;
    }
    MPI_Type_free(&t);
    MPI_File_close(&fh);
    verdict("permuted", bad, "values");
}

/* HDF5's t_mpi "1 write Many read" (test_mpio_1wMr without its sync or atomic
 * mode): one rank writes through the file's shared handle, a broadcast from it
 * (or, every other round, a barrier alone) tells the others, which read the
 * bytes back at once.  MPI promises that only after MPI_File_sync, a barrier
 * and MPI_File_sync; ROMIO and OMPIO write in the call. */
static void onewrite(void)
{
    MPI_File fh = open_w("onewrite.dat");
    char c[64], b[64];
    int bad = 0;
    for (int r = 0; r < 24; r++) {
        int w = r % np, rc = MPI_SUCCESS;
        if (rank == w)
            for (int k = 0; k < 16; k++) {
                fill(c, 64, (unsigned)(r * 16 + k));
                rc |= MPI_File_write_at(fh, (MPI_Offset)(r * 16 + k) * 64, c, 64, MPI_BYTE,
                                        MPI_STATUS_IGNORE);
            }
        if (r % 2 == 0)
            MPI_Bcast(&rc, 1, MPI_INT, w, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 0; k < 16; k++) {
            fill(c, 64, (unsigned)(r * 16 + k));
            MPI_File_read_at(fh, (MPI_Offset)(r * 16 + k) * 64, b, 64, MPI_BYTE, MPI_STATUS_IGNORE);
            bad += memcmp(b, c, 64) != 0;
        }
    }
    MPI_File_close(&fh);
    verdict("onewrite", bad, "cells");
}

/* After close: each rank reads its share of the file's nreg regions of
 * `region` bytes back against fill(r), with 8 bytes 'F' at f_at (-1: none);
 * the count of regions wrong. */
static int regions_bad(const char *file, int region, int nreg, int f_at)
{
    MPI_File fh = open_w(file);
    char *c = malloc((size_t)region), *b = malloc((size_t)region);
    int bad = 0;
    for (int r = rank; r < nreg; r += np) {
        fill(c, (size_t)region, (unsigned)r);
        if (f_at >= 0)
            memset(c + f_at, 'F', 8);
        MPI_File_read_at(fh, (MPI_Offset)r * region, b, region, MPI_BYTE, MPI_STATUS_IGNORE);
        bad += memcmp(b, c, (size_t)region) != 0;
    }
    MPI_File_close(&fh);
    free(c);
    free(b);
    return bad;
}

/* ... and says what it found. */
static void regions_verdict(const char *file, const char *name, int region, int nreg)
{
    verdict(name, regions_bad(file, region, nreg, -1), "regions");
}

/* HDF5 1.14's fill of a contiguous dataset (H5D__contig_fill): rank 0 alone
 * writes the fill values, then a barrier, then another rank writes its data
 * over them.  ROMIO and OMPIO write in the call, so the data wins; held back
 * until close, rank 0's older bytes landed last in some runs (HDF5's
 * t_pmulti_dset, and a plain H5Dcreate with a fill value then H5Dwrite: every
 * element 0 in 2 of 11 runs). */
static void waw(int part, int wronly)
{
    MPI_File fh = open_w("waw.dat");
    if (wronly) { /* (reopened write-only: not news under UNBLOCK_MPIIO_VISIBLE=auto) */
        char p[4096];
        MPI_File_close(&fh);
        snprintf(p, sizeof p, "%s/waw.dat", dir);
        MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    }
    enum { REGION = 64 << 10, NREG = 8 };
    char *c = malloc(REGION);
    for (int r = 0; r < NREG; r++) {
        if (rank == 0) { /* (part: all but its first 8 bytes) */
            memset(c, 'F', REGION);
            MPI_File_write_at(fh, (MPI_Offset)r * REGION + part * 8, c, REGION - part * 8, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == np - 1) {
            fill(c, REGION, (unsigned)r);
            MPI_File_write_at(fh, (MPI_Offset)r * REGION, c, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    free(c);
    regions_verdict("waw.dat", "waw", REGION, NREG);
}

/* A rank's whole block of another owner, which it writes itself (a kept block),
 * then, after a barrier, another rank's 8 bytes inside it: those win, as
 * without unblock.  The barrier is the first rank's news, which writes its
 * kept blocks before it returns; written later by its I/O thread, they could
 * land over the 8 bytes, which the owner writes at close. */
static void waw_kept(void)
{
    MPI_File fh = open_w("wawkept.dat");
    enum { REGION = 64 << 10, NREG = 8, AT = 4096 };
    char *c = malloc(REGION), *b = malloc(REGION);
    int bad = 0;
    for (int r = 0; r < NREG; r++) {
        if (rank == np - 1) {
            fill(c, REGION, (unsigned)r);
            MPI_File_write_at(fh, (MPI_Offset)r * REGION, c, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            memset(c, 'F', 8);
            MPI_File_write_at(fh, (MPI_Offset)r * REGION + AT, c, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* (a read: the owners write what they hold now, as the first rank's
         * kept block may still be on its way to the file) */
        memset(b, 0, 8);
        MPI_File_read_at(fh, (MPI_Offset)r * REGION + AT, b, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        bad += memcmp(b, "FFFFFFFF", 8) != 0;
    }
    MPI_File_close(&fh);
    free(c);
    free(b);
    verdict("waw-kept", bad + regions_bad("wawkept.dat", REGION, NREG, AT), "reads and regions");
}

/* Rank 2's whole block of rank 0's: its owner is asked about it ahead
 * (stage.c: ask_ahead), and the block waits in stage 1.  Rank 1's 8 bytes in
 * it reach the owner after that ask, and rank 2 hears of them (MPI_Wait, a
 * call that tells nothing, so no flush) before it writes the same 8 bytes
 * again: rank 2's bytes win, so the owner must write rank 1's first, asked
 * again (the ask ahead was made before news was heard). */
static void ask_stale(void)
{
    MPI_File fh = open_w("askstale.dat");
    enum { REGION = 64 << 10, NREG = 6, AT = 4096 };
    char *c = malloc(REGION), b[8];
    int bad = 0;
    for (int r = 0; r < NREG && np >= 3; r++) {
        MPI_Offset at = (MPI_Offset)(3 * r) * REGION; /* (block 3r: rank 0's) */
        int tok = r;
        if (rank == 2) {
            MPI_Request req;
            MPI_Irecv(&tok, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
            fill(c, REGION, (unsigned)r);
            MPI_File_write_at(fh, at, c, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_File_write_at(fh, at + AT, "AAAAAAAA", 8, MPI_BYTE, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            usleep(50000);
            MPI_File_write_at(fh, at + AT, "CCCCCCCC", 8, MPI_BYTE, MPI_STATUS_IGNORE);
            MPI_Send(&tok, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_read_at(fh, at + AT, b, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        bad += memcmp(b, "AAAAAAAA", 8) != 0;
    }
    MPI_File_close(&fh);
    free(c);
    verdict("ask-stale", bad, "reads");
}

/* Rank 0 writes each region of its own block but the region's last 8 bytes
 * (the block does not fill, so it is neither written at once nor kept), a
 * barrier (its news: its bytes wait painted in its image; nothing is sent),
 * then the last rank writes all of it but the first 8 bytes and closes: the
 * close's flush, made by each rank itself where they hold few runs, writes
 * every rank's images (the owners' older bytes) before any rank's stage 1
 * (with UNBLOCK_TEST_MPIIO_WRITE_MS, the images 20 ms late). */
static void waw_close(void)
{
    MPI_File fh = open_w("wawclose.dat");
    enum { REGION = 4096, NREG = 16 }; /* (one block of 64 KiB: rank 0's) */
    char *c = malloc(REGION);
    for (int r = 0; r < NREG; r++)
        if (rank == 0) {
            memset(c, 'F', REGION);
            MPI_File_write_at(fh, (MPI_Offset)r * REGION, c, REGION - 8, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < NREG; r++)
        if (rank == np - 1) {
            fill(c, REGION, (unsigned)r);
            memset(c, 'F', 8);
            MPI_File_write_at(fh, (MPI_Offset)r * REGION + 8, c + 8, REGION - 8, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
    MPI_File_close(&fh);
    free(c);
    verdict("waw-close", regions_bad("wawclose.dat", REGION, NREG, 0), "regions");
}

/* Interleaved cells with a barrier after each round, as HDF5 meets one at each
 * H5Fclose: in this MPI_MODE_RDWR file each barrier is news (by default), and
 * each rank's cells then wait painted at their owners, who write each block
 * once, merged (the test counts the write calls); before, each rank's barrier
 * had the owners write its cells alone, a write per cell. */
static void barriers(void)
{
    MPI_File fh = open_w("barriers.dat");
    enum { CELL = 8, PER = 2048, ROUNDS = 8 };
    char c[CELL], b[CELL];
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < PER; k++) {
            int64_t i = ((int64_t)r * PER + k) * np + rank;
            fill(c, CELL, (unsigned)i);
            MPI_File_write_at(fh, (MPI_Offset)i * CELL, c, CELL, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    fh = open_w("barriers.dat");
    int bad = 0;
    for (int64_t i = rank; i < (int64_t)ROUNDS * PER * np; i += 7) {
        fill(c, CELL, (unsigned)i);
        MPI_File_read_at(fh, (MPI_Offset)i * CELL, b, CELL, MPI_BYTE, MPI_STATUS_IGNORE);
        bad += memcmp(b, c, CELL) != 0;
    }
    MPI_File_close(&fh);
    verdict("barriers", bad, "cells");
}

/* One rank writes past the file's end, a barrier, and every rank asks the
 * size: ROMIO and OMPIO wrote in the call, so each counts it (HDF5 compares it
 * with its end of allocation at every flush and close, on rank 0).  A second
 * barrier: no rank writes the next before all have asked. */
static void sizes(void)
{
    MPI_File fh = open_w("sizes.dat");
    char c[100];
    int bad = 0;
    for (int r = 0; r < 12; r++) {
        if (rank == r % np) {
            fill(c, sizeof c, (unsigned)r);
            MPI_File_write_at(fh, (MPI_Offset)r * 1000, c, 100, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Offset sz = -1;
        MPI_File_get_size(fh, &sz);
        bad += sz != (MPI_Offset)r * 1000 + 100;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&fh);
    verdict("sizes", bad, "sizes");
}

/* Rank 0 writes 4 regions of 64 KiB (blocks of several owners), a barrier,
 * then the last rank writes them again through a view in external32, whose
 * writes are MPI's own (not taken): the older bytes other ranks' owners hold
 * must be in the file before it, or they land over it at close. */
static void seethrough(void)
{
    enum { REGION = 64 << 10, NREG = 4 };
    MPI_File fh = open_w("seethrough.dat");
    char *c = malloc(REGION);
    if (rank == 0)
        for (int r = 0; r < NREG; r++) {
            memset(c, 'F', REGION); /* (not the first 8 bytes: the block waits, not full) */
            MPI_File_write_at(fh, (MPI_Offset)r * REGION + 8, c, REGION - 8, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL);
    if (rank == np - 1)
        for (int r = 0; r < NREG; r++) {
            fill(c, REGION, (unsigned)r);
            MPI_File_write_at(fh, (MPI_Offset)r * REGION, c, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
        }
    MPI_File_close(&fh);
    free(c);
    regions_verdict("seethrough.dat", "seethrough", REGION, NREG);
}

/* Each rank's cells through its own handle on MPI_COMM_SELF, then an MPI call
 * that tells the next rank they are written, which reads them through its own
 * handle (PnetCDF 1.15's intra-node aggregation in independent mode: the
 * aggregator reads what the other ranks of its node wrote through theirs).
 * ROMIO and OMPIO write in the call, so the reader finds them, though MPI
 * promises that only after MPI_File_sync, a barrier and MPI_File_sync. */
enum { SOLO_CELLS = 64, SOLO_ROUNDS = 2 };
static const char *const solo_news[] = { "send", "barrier", "allreduce", "isend", "sendrecv",
                                         "allgather", "write_at_all", "irecv-ssend" };
static void solonews_tell(int how, MPI_File fw, int round)
{
    int prev = (rank + np - 1) % np, next = (rank + 1) % np, t = round, u = 0, v[64];
    MPI_Request q[2];
    MPI_Status sts[2];
    switch (how) {
    case 0: /* (rank 0 first: each rank hears from the previous after it wrote) */
        if (rank == 0) {
            MPI_Send(&t, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
            MPI_Recv(&u, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&u, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&t, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
        }
        break;
    case 1:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case 2:
        MPI_Allreduce(&t, &u, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case 3:
        MPI_Irecv(&u, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(&t, 1, MPI_INT, next, 6, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, sts);
        break;
    case 4:
        MPI_Sendrecv(&t, 1, MPI_INT, next, 7, &u, 1, MPI_INT, prev, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        break;
    case 5:
        MPI_Allgather(&t, 1, MPI_INT, v, 1, MPI_INT, MPI_COMM_WORLD);
        break;
    case 6: /* (a collective call on another file) */
        MPI_File_write_at_all(fw, (MPI_Offset)(round * np + rank) * 4, &t, 1, MPI_INT,
                              MPI_STATUS_IGNORE);
        break;
    default: /* (the writer's receive, started after its writes, completes the
              * reader's synchronous send) */
        MPI_Irecv(&u, 1, MPI_INT, next, 8, MPI_COMM_WORLD, &q[0]);
        MPI_Ssend(&t, 1, MPI_INT, prev, 8, MPI_COMM_WORLD);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        break;
    }
}

static void solonews(void)
{
    char p[4096], c[24], b[24];
    snprintf(p, sizeof p, "%s/solonews.dat", dir);
    MPI_File fs, fw = open_w("solonews-coll.dat");
    if (MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fs) !=
        MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const int nhow = (int)(sizeof solo_news / sizeof solo_news[0]);
    int prev = (rank + np - 1) % np, total = 0;
    for (int r = 0; r < nhow * SOLO_ROUNDS; r++) {
        for (int k = 0; k < SOLO_CELLS; k++) {
            fill(c, 24, (unsigned)((r * SOLO_CELLS + k) * np + rank));
            MPI_File_write_at(fs, (MPI_Offset)((r * SOLO_CELLS + k) * np + rank) * 24, c, 24,
                              MPI_BYTE, MPI_STATUS_IGNORE);
        }
        solonews_tell(r % nhow, fw, r);
        int bad = 0;
        for (int k = 0; k < SOLO_CELLS; k++) {
            int cell = (r * SOLO_CELLS + k) * np + prev;
            fill(c, 24, (unsigned)cell);
            MPI_File_read_at(fs, (MPI_Offset)cell * 24, b, 24, MPI_BYTE, MPI_STATUS_IGNORE);
            bad += memcmp(b, c, 24) != 0;
        }
        if (bad)
            printf("MISMATCH: solonews: round %d, news by %s: %d of the previous rank's %d cells "
                   "not read back\n", r, solo_news[r % nhow], bad, SOLO_CELLS);
        total += bad;
        /* (nobody writes the next round before every rank has read this one) */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_File_close(&fs);
    MPI_File_close(&fw);
    fprintf(out, "solonews: %d cells of the previous rank read back wrong\n", total);
}

/* mib MiB per rank in interleaved 4 KiB cells; `sparse`: every other cell's
 * place left a hole, so that no block is ever whole and the owners' images wait
 * for the cache's bound (with every place written, blocks passed by the
 * writers fill their images, which are written as they fill: whether a rank
 * reached the bound at all depended on how far the ranks drifted apart). */
static void big(int mib, int sparse)
{
    MPI_File fh = open_w(sparse ? "bigsparse.dat" : "big.dat");
    char *c = malloc(4096);
    long cells = (long)mib * 256;
    for (long i = 0; i < cells; i++) {
        fill(c, 4096, (unsigned)(i * np + rank));
        MPI_File_write_at(fh, (MPI_Offset)(i * np + rank) * 4096 * (sparse ? 2 : 1), c, 4096,
                          MPI_BYTE, MPI_STATUS_IGNORE);
    }
    free(c);
    MPI_File_close(&fh);
    fprintf(out, "big%s: %d MiB\n", sparse ? "sparse" : "", mib);
}

static void noclose(void)
{
    MPI_File fh = open_w("noclose.dat");
    char a[24];
    for (int k = 0; k < 1000; k++) {
        fill(a, 24, (unsigned)(k * np + rank));
        MPI_File_write_at(fh, (MPI_Offset)(k * np + rank) * 24, a, 24, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    }
    fprintf(out, "noclose: left open\n");
}

/* The cases that end the program, by how they end it (killed's `how`): SIGTERM,
 * MPI_Abort, _exit, quick_exit, exec; each writes CASE.dat. */
static const char *const end_cases[] = { "killed", "aborted", "exitnow", "quickexit", "exec" };

static int end_case(const char *c)
{
    for (int i = 0; i < (int)(sizeof end_cases / sizeof end_cases[0]); i++)
        if (!strcmp(c, end_cases[i]))
            return i;
    return -1;
}

static void killed(int how)
{
    char name[32];
    snprintf(name, sizeof name, "%s.dat", end_cases[how]);
    MPI_File fh = open_w(name);
    char a[40];
    for (int k = 0; k < 20000; k++) {
        fill(a, 40, (unsigned)(k * np + rank));
        MPI_File_write_at(fh, (MPI_Offset)(k * np + rank) * 40, a, 40, MPI_BYTE,
                          MPI_STATUS_IGNORE);
    }
    fclose(out);
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(300000); /* (pieces on their way to owners arrive: docs/mpiio.md) */
    if (how == 2)
        _exit(0);
    if (how == 3)
        quick_exit(0);
    if (how == 4) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(4);
    }
    if (how == 1)
        MPI_Abort(MPI_COMM_WORLD, 3);
    raise(SIGTERM);
}

/* WHERE/STEM-RANK.dat opened for writing on MPI_COMM_SELF into *fh (its path
 * into p): 0, or 1 said as "CASE: cannot open". */
static int open_self(const char *where, const char *stem, const char *name, MPI_File *fh,
                     char p[4096])
{
    snprintf(p, 4096, "%s/%s-%d.dat", where, stem, rank);
    if (MPI_File_open(MPI_COMM_SELF, p, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, fh)) {
        fprintf(out, "%s: cannot open\n", name);
        return 1;
    }
    return 0;
}

static void enospc(const char *where, int pause_ms)
{
    char p[4096];
    MPI_File fh;
    if (open_self(where, "full", "enospc", &fh, p))
        return;
    char *c = calloc(1, 65536);
    int first = 0, cls = 0, calls = 0;
    for (int i = 0; i < 64 && !first; i++, calls++) /* 4 MiB: more than the file system has */
    {
        first = MPI_File_write_at(fh, (MPI_Offset)i * 65536, c, 65536, MPI_BYTE,
                                  MPI_STATUS_IGNORE);
        if (pause_ms) {
            struct timespec ts = { 0, pause_ms * 1000000L };
            while (nanosleep(&ts, &ts) != 0)
                ;
        }
    }
    if (!first)
        first = MPI_File_sync(fh);
    int rc = MPI_File_close(&fh);
    if (!first)
        first = rc;
    if (first)
        MPI_Error_class(first, &cls);
    fprintf(out, "enospc: error class %s\n",
            cls == MPI_ERR_NO_SPACE ? "MPI_ERR_NO_SPACE" : cls == MPI_ERR_IO ? "MPI_ERR_IO"
                                                     : cls ? "other" : "none");
    (void)calls;
    free(c);
    MPI_File_delete(p, MPI_INFO_NULL);
}

/* The first error of a case's calls: the call's name in *at, its class in *cls
 * (failcoll, unlinked).  Returns e. */
static int first_error(int e, const char *what, const char **at, int *cls)
{
    if (e && !*cls) {
        *at = what;
        MPI_Error_class(e, cls);
    }
    return e;
}

/* The quiet file (mpiio.h: f->quiet): phases of interleaved cells, each
 * rank's cells written again by each phase, with collective reads between
 * them in the counts that make the file quiet and take its writes again. */
static void quiet(void)
{
    MPI_File fh = open_w("quiet.dat");
    enum { CELL = 8, PER = 256 };
    static const int colls[] = { 5, 16, 5 }; /* (after phases 0, 1, 2) */
    char c[CELL], b[CELL];
    int bad = 0, ph;
    for (ph = 0; ph < 4; ph++) {
        for (int k = 0; k < PER && (ph != 2 || rank == 0); k++) { /* (2: rank 0 alone) */
            int64_t i = (int64_t)k * np + rank;
            fill(c, CELL, (unsigned)(ph * 100003 + i));
            MPI_File_write_at(fh, (MPI_Offset)i * CELL, c, CELL, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        if (ph == 3)
            break;
        MPI_Barrier(MPI_COMM_WORLD); /* (a collective read may read each rank's own
                                        part itself: the next rank's cells written) */
        for (int j = 0; j < colls[ph]; j++) { /* (the next rank's cell j) */
            int next = (rank + 1) % np, wrote = ph != 2 || next == 0 ? ph : ph - 1;
            int64_t i = (int64_t)j * np + next;
            MPI_File_read_at_all(fh, (MPI_Offset)i * CELL, b, CELL, MPI_BYTE,
                                 MPI_STATUS_IGNORE);
            fill(c, CELL, (unsigned)(wrote * 100003 + i));
            bad += memcmp(b, c, CELL) != 0;
        }
    }
    fill(c, CELL, 9999u + (unsigned)rank); /* (over phase 3's, passed: it wins) */
    MPI_File_write_at_all(fh, (MPI_Offset)rank * CELL, c, CELL, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    fh = open_w("quiet.dat");
    for (int k = 0; k < PER; k++) {
        int64_t i = (int64_t)k * np + rank;
        fill(c, CELL, k ? (unsigned)(3 * 100003 + i) : 9999u + (unsigned)rank);
        MPI_File_read_at(fh, (MPI_Offset)i * CELL, b, CELL, MPI_BYTE, MPI_STATUS_IGNORE);
        bad += memcmp(b, c, CELL) != 0;
    }
    MPI_File_close(&fh);
    verdict("quiet", bad, "cells");
}

/* A quiet file kept open while the program sleeps: the I/O thread sleeps too
 * (thread.c: DEEP_NS). */
static void quietsleep(void)
{
    enum { CELL = 64 };
    char c[CELL], b[CELL];
    int bad = 0;
    MPI_File fh = open_w("quietsleep.dat");
    for (int k = 0; k < 8; k++) { /* (collective: passed, quiet after 4) */
        fill(c, CELL, (unsigned)(k * np + rank));
        MPI_File_write_at_all(fh, (MPI_Offset)(k * np + rank) * CELL, c, CELL, MPI_BYTE,
                              MPI_STATUS_IGNORE);
    }
    usleep(1000000);
    fill(c, CELL, (unsigned)(8 * np + rank));
    MPI_File_write_at(fh, (MPI_Offset)(8 * np + rank) * CELL, c, CELL, MPI_BYTE,
                      MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    char p[4096]; /* (read-only: no I/O thread's polls for it) */
    snprintf(p, sizeof p, "%s/quietsleep.dat", dir);
    if (MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "cannot open %s\n", p);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int k = 0; k <= 8; k++) {
        fill(c, CELL, (unsigned)(k * np + rank));
        MPI_File_read_at(fh, (MPI_Offset)(k * np + rank) * CELL, b, CELL, MPI_BYTE,
                         MPI_STATUS_IGNORE);
        bad += memcmp(b, c, CELL) != 0;
    }
    MPI_File_close(&fh);
    verdict("quietsleep", bad, "cells");
}

/* A write failed in the background on rank 0 alone, then collective calls:
 * every rank must get through them (mpiio_failcoll.sh).  CALL: the first
 * collective call after the error is kept. */
static void failcoll(const char *call)
{
    MPI_File fh = open_w("failcoll.dat");
    char c[4096];
    const char *at = "none";
    int cls = 0;
#define FAILCOLL_NOTE(call, what) first_error((call), (what), &at, &cls)
    for (int k = rank; k < 32 * np; k += np) {
        fill(c, sizeof c, (unsigned)k);
        FAILCOLL_NOTE(MPI_File_write_at(fh, (MPI_Offset)k * 4096, c, 4096, MPI_BYTE,
                                        MPI_STATUS_IGNORE), "write");
    }
    MPI_Offset size;
    if (rank == 0) { /* (until a call returns no kept error, then its first cell
                           again: the error of its block, owned by rank 0, is
                           kept at the second seek, for the calls after it) */
        FAILCOLL_NOTE(MPI_File_seek(fh, 0, MPI_SEEK_END), "seek");
        for (int i = 0; i < 4; i++)
            if (FAILCOLL_NOTE(MPI_File_get_size(fh, &size), "get_size") == MPI_SUCCESS)
                break;
        fill(c, sizeof c, 0);
        FAILCOLL_NOTE(MPI_File_write_at(fh, 0, c, 4096, MPI_BYTE, MPI_STATUS_IGNORE), "rewrite");
        FAILCOLL_NOTE(MPI_File_seek(fh, 0, MPI_SEEK_END), "seek");
    }
    if (!strcmp(call, "set_view"))
        FAILCOLL_NOTE(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
                      "set_view");
    else if (!strcmp(call, "set_atomicity"))
        FAILCOLL_NOTE(MPI_File_set_atomicity(fh, 0), "set_atomicity");
    fill(c, 8, 1000);
    FAILCOLL_NOTE(MPI_File_write_at_all(fh, (MPI_Offset)(32 * np + rank) * 8, c, 8, MPI_BYTE,
                                        MPI_STATUS_IGNORE), "write_at_all");
    FAILCOLL_NOTE(MPI_File_get_size(fh, &size), "get_size");
    FAILCOLL_NOTE(MPI_File_close(&fh), "close");
#undef FAILCOLL_NOTE
    fprintf(out, "failcoll: %s %s\n", at,
            cls == MPI_ERR_IO ? "MPI_ERR_IO" : cls ? "other" : "none");
}

/* mpiio_enospc.sh, CASE unlinked: a file removed while open, on a full file
 * system, before the sync whose flush writes its bytes under unblock. */
static void unlinked(const char *where, int replace)
{
    char p[4096];
    MPI_File fh;
    if (open_self(where, "unlinked", "unlinked", &fh, p))
        return;
    char *c = calloc(1, 65536);
    const char *at = "none";
    int cls = 0;
    for (int i = 0; i < 48; i++)
        first_error(MPI_File_write_at(fh, (MPI_Offset)i * 65536, c, 65536, MPI_BYTE,
                                      MPI_STATUS_IGNORE),
                    "write", &at, &cls);
    if (syscall(SYS_unlink, p) != 0)
        fprintf(out, "unlinked: unlink failed\n");
    if (replace && syscall(SYS_mkdirat, AT_FDCWD, p, 0700) != 0)
        fprintf(out, "unlinked: mkdir failed\n");
    first_error(MPI_File_sync(fh), "sync", &at, &cls);
    first_error(MPI_File_close(&fh), "close", &at, &cls);
    fprintf(out, "%s %d\n", at, cls);
    free(c);
}

/* An error the program never sees: rank 0 writes 2.5 MiB in 64 KiB calls to a
 * file of its own (MPI_COMM_SELF in a job of several: no space reserved ahead)
 * on a 2 MiB file system, ignores what the calls return and leaves the file
 * open at MPI_Finalize, whose flush fails under unblock: it must say so
 * (mpiio_enospc.sh, CASE enospc-open). */
static void enospc_open(const char *where)
{
    static MPI_File fh; /* (left open) */
    char p[4096];
    if (rank != 0 || open_self(where, "open", "enospc-open", &fh, p))
        return;
    char *c = calloc(1, 65536);
    for (int i = 0; i < 40; i++)
        (void)MPI_File_write_at(fh, (MPI_Offset)i * 65536, c, 65536, MPI_BYTE, MPI_STATUS_IGNORE);
    fprintf(out, "enospc-open: 40 writes made, the file left open\n");
    free(c);
}

/* The MPI_Count forms, as cells() does with the int ones (a library whose header
 * has none, such as Open MPI 4.1, is not asked for this case). */
static void large(void)
{
#if MPI_VERSION >= 4
    MPI_File fh = open_w("large.dat");
    const int ncells = 100000, size = 24;
    char c[24];
    int n = 0;
    MPI_Status st;
    for (int i = rank; i < ncells; i += np) {
        fill(c, sizeof c, (unsigned)i);
        MPI_Offset off = (MPI_Offset)i * size;
        MPI_Request r;
        MPI_Count got = 0;
        switch ((i / np) % 4) {
        case 0:
            MPI_File_write_at_c(fh, off, c, (MPI_Count)size, MPI_BYTE, &st);
            MPI_Get_count_c(&st, MPI_BYTE, &got);
            break;
        case 1:
            MPI_File_seek(fh, off, MPI_SEEK_SET);
            MPI_File_write_c(fh, c, (MPI_Count)(size / 8), MPI_DOUBLE, &st);
            MPI_Get_count_c(&st, MPI_DOUBLE, &got);
            got *= 8;
            break;
        case 2:
            MPI_File_iwrite_at_c(fh, off, c, (MPI_Count)size, MPI_CHAR, &r);
            MPI_Wait(&r, &st);
            MPI_Get_count_c(&st, MPI_CHAR, &got);
            break;
        default:
            MPI_File_seek(fh, off, MPI_SEEK_SET);
            MPI_File_iwrite_c(fh, c, (MPI_Count)(size / 4), MPI_INT, &r);
            MPI_Wait(&r, &st);
            MPI_Get_count_c(&st, MPI_INT, &got);
            got *= 4;
            break;
        }
        if (got != size)
            printf("MISMATCH: count %lld of %d\n", (long long)got, size);
        n++;
    }
    /* read back this rank's first cell */
    char back[24];
    fill(c, sizeof c, (unsigned)rank);
    MPI_File_read_at_c(fh, (MPI_Offset)rank * size, back, (MPI_Count)size, MPI_BYTE, &st);
    if (memcmp(back, c, sizeof c) != 0)
        printf("MISMATCH: rank %d reads other bytes at its first cell\n", rank);
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    MPI_File_close(&fh);
    fprintf(out, "large: %d writes, position %lld\n", n, (long long)pos);
#else
    fprintf(stderr, "large: this MPI has no MPI_Count forms\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
#endif
}

/* A filetype whose lower bound is not where its data is: a double with lb 8 and
 * extent 24, so the view's data lie at 0, 24, 48, ... (the lower bound moves no
 * data).  Written with the individual pointer straight after set_view (MPICH 4.0
 * reports position -1 there), then with write_at, then read back. */
static void lbview(void)
{
    MPI_File fh = open_w("lbview.dat");
    /* Every byte written first: ROMIO's data sieving would write back what it
     * read past the end of the file (not zeros) into the holes. */
    double *pre = malloc(sizeof(double) * 12 * (size_t)np);
    for (int i = 0; i < 12 * np; i++)
        pre[i] = -1.0 - i;
    if (rank == 0)
        MPI_File_write_at(fh, 0, pre, 12 * np, MPI_DOUBLE, MPI_STATUS_IGNORE);
    free(pre);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_Datatype t;
    MPI_Type_create_resized(MPI_DOUBLE, 8, 24, &t);
    MPI_Type_commit(&t);
    MPI_File_set_view(fh, (MPI_Offset)rank * 96, MPI_DOUBLE, t, "native", MPI_INFO_NULL);
    double v[3] = { 100.0 + rank, 200.0 + rank, 300.0 + rank }, back[4] = { 0, 0, 0, 0 };
    MPI_Status st;
    int got = 0;
    MPI_File_write(fh, v, 2, MPI_DOUBLE, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &got);
    MPI_File_write_at(fh, 3, &v[2], 1, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    MPI_File_read_at(fh, 0, back, 4, MPI_DOUBLE, MPI_STATUS_IGNORE);
    if (back[0] != v[0] || back[1] != v[1] || back[3] != v[2])
        printf("MISMATCH: rank %d reads %g %g %g through the view\n", rank, back[0], back[1],
               back[3]);
    MPI_File_close(&fh);
    MPI_Type_free(&t);
    fprintf(out, "lbview: count %d, position %lld\n", got, (long long)pos);
}

static void e32view(void)
{
    MPI_File fh = open_w("e32view.dat");
    MPI_File_set_view(fh, 64, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL);
    MPI_File_set_atomicity(fh, 1);
    MPI_File_set_atomicity(fh, 0);
    char b[16];
    for (int i = 0; i < 32; i++) {
        fill(b, sizeof b, (unsigned)(i * np + rank));
        MPI_File_write_at(fh, (MPI_Offset)(i * np + rank) * 16, b, 16, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    MPI_File_close(&fh);
    fprintf(out, "e32view: 32 pieces\n");
}

/* Nonblocking calls MPI makes itself (reads, collective writes: not taken) while
 * write-behind's I/O thread calls MPI too.  Each rank owns 2 ints in every 2*np
 * (a vector filetype), writes them with iwrite, then reads them back several
 * times with iread_at (completed by MPI_Test), and every 16th time also with
 * iread_all and rewrites them with iwrite_at_all: 256 times under Open MPI (the
 * race in OMPIO's progress this guards against is a narrow one), 32 elsewhere
 * (MPICH's collective calls take 100 ms each with 3 ranks on 2 cores; Open MPI's
 * nonblocking collective ones as long without unblock). */
static void nonblocking(void)
{
    MPI_File fh = open_w("nonblocking.dat");
    const int n = 4096;
    MPI_Datatype ft;
    MPI_Type_vector(n, 2, 2 * np, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    MPI_File_set_view(fh, (MPI_Offset)rank * 2 * (MPI_Offset)sizeof(int), MPI_INT, ft, "native",
                      MPI_INFO_NULL);
    int *w = malloc(sizeof(int) * 2 * (size_t)n), *r = malloc(sizeof(int) * 2 * (size_t)n);
    for (int i = 0; i < 2 * n; i++)
        w[i] = rank * 1000000 + i;
    MPI_Request q;
    MPI_Status st;
    int got = 0, bad = 0;
    MPI_File_iwrite(fh, w, 2 * n, MPI_INT, &q);
    MPI_Wait(&q, &st);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
#if defined(OPEN_MPI)
    const int reps = 256;
#else
    const int reps = 32;
#endif
    for (int rep = 0; rep < reps; rep++) {
        int done = 0;
        memset(r, 0, sizeof(int) * 2 * (size_t)n);
        MPI_File_iread_at(fh, 0, r, 2 * n, MPI_INT, &q);
        while (!done)
            MPI_Test(&q, &done, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        bad += got != 2 * n || memcmp(r, w, sizeof(int) * 2 * (size_t)n) != 0;
        if (rep % 16 != 15)
            continue;
        memset(r, 0, sizeof(int) * 2 * (size_t)n);
        MPI_File_seek(fh, 0, MPI_SEEK_SET);
        MPI_File_iread_all(fh, r, 2 * n, MPI_INT, &q);
        MPI_Wait(&q, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        bad += got != 2 * n || memcmp(r, w, sizeof(int) * 2 * (size_t)n) != 0;
        w[rep] = -rep;
        MPI_File_iwrite_at_all(fh, 0, w, 2 * n, MPI_INT, &q);
        MPI_Wait(&q, &st);
    }
    if (bad)
        printf("MISMATCH: rank %d: %d nonblocking reads gave other bytes or counts\n", rank, bad);
    MPI_File_close(&fh);
    MPI_Type_free(&ft);
    free(w);
    free(r);
    fprintf(out, "nonblocking: %d reads wrong\n", bad);
}

/* The continuation path (docs/mpiio.md): runs of 8-byte write_at, each continuing
 * the last, in this rank's 64 KiB region, and between them whatever must end a
 * run: a view whose etype is not a byte (the next write's offset counts ints),
 * a write elsewhere in the block through the individual pointer, the same bytes
 * as another type, a read, and a second file opened after the first closed (the
 * handle may be the same); then every third cell, broken by a status asked
 * for, another size, an earlier cell written again, reads and another
 * distance.  Every write's status is checked; the files are compared with and
 * without unblock. */
static void cont(void)
{
    MPI_Offset base = (MPI_Offset)rank * 65536;
    long v;
    MPI_Status st;
    int got, bad = 0;
    for (int round = 0; round < 2; round++) {
        MPI_File fh = open_w(round ? "cont2.dat" : "cont.dat");
        MPI_Offset at = base;
        for (int i = 0; i < 100; i++, at += 8) { /* a run */
            v = round * 1000000 + i;
            MPI_File_write_at(fh, at, &v, 1, MPI_LONG, &st);
            MPI_Get_count(&st, MPI_BYTE, &got);
            bad += got != 8;
        }
        /* a view of ints: offset `at` now counts ints (4 times further) */
        MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
        v = -1;
        MPI_File_write_at(fh, at, &v, 1, MPI_LONG, &st); /* (byte 4 * at, the run's type) */
        MPI_File_write_at(fh, at / 4, &v, 2, MPI_INT, &st); /* (byte at, through the view) */
        MPI_File_write_at(fh, at / 4 + 2, &v, 2, MPI_INT, &st);
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        at += 16;
        for (int i = 0; i < 50; i++, at += 8) {
            v = 2000 + i;
            MPI_File_write_at(fh, at, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        /* a write elsewhere in the block, then the run goes on */
        MPI_File_seek(fh, base + 30000, MPI_SEEK_SET);
        v = -2;
        MPI_File_write(fh, &v, 1, MPI_LONG, &st);
        for (int i = 0; i < 50; i++, at += 8) {
            v = 3000 + i;
            MPI_File_write_at(fh, at, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        /* the same bytes as another type, then the first again */
        int two[2] = { 7, 8 };
        MPI_File_write_at(fh, at, two, 2, MPI_INT, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        bad += got != 2;
        at += 8;
        v = 4000;
        MPI_File_write_at(fh, at, &v, 1, MPI_LONG, &st);
        at += 8;
        /* a read (this rank's pieces written first), then the run goes on */
        long back = 0;
        MPI_File_read_at(fh, at - 8, &back, 1, MPI_LONG, &st);
        bad += back != 4000;
        for (int i = 0; i < 50; i++, at += 8) {
            v = 5000 + i;
            MPI_File_write_at(fh, at, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        MPI_File_read_at(fh, at - 8, &back, 1, MPI_LONG, &st);
        bad += back != 5049;
        /* strided cells (the wrapper's strided cursor): every third 8-byte
         * cell, the run broken by a status asked for, another size at the next
         * cell's place, an earlier cell written again (the later write wins),
         * reads of them, and cells of another distance in the gaps */
        MPI_Offset s = base + 32768;
        for (int i = 0; i < 200; i++) {
            v = round * 1000000 + 6000 + i;
            MPI_File_write_at(fh, s + i * 24, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        v = 6200;
        MPI_File_write_at(fh, s + 200 * 24, &v, 1, MPI_LONG, &st);
        MPI_Get_count(&st, MPI_BYTE, &got);
        bad += got != 8;
        int small = 77;
        MPI_File_write_at(fh, s + 201 * 24, &small, 1, MPI_INT, MPI_STATUS_IGNORE);
        for (int i = 202; i < 300; i++) {
            v = 6000 + i;
            MPI_File_write_at(fh, s + i * 24, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        v = -3;
        MPI_File_write_at(fh, s + 150 * 24, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        for (int i = 300; i < 400; i++) {
            v = 6000 + i;
            MPI_File_write_at(fh, s + i * 24, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        MPI_File_read_at(fh, s + 150 * 24, &back, 1, MPI_LONG, &st);
        bad += back != -3;
        MPI_File_read_at(fh, s + 399 * 24, &back, 1, MPI_LONG, &st);
        bad += back != 6399;
        for (int i = 400; i < 600; i++) {
            v = 6000 + i;
            MPI_File_write_at(fh, s + i * 24, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < 100; i++) {
            v = 7000 + i;
            MPI_File_write_at(fh, s + 8 + i * 48, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        MPI_File_read_at(fh, s + 8 + 99 * 48, &back, 1, MPI_LONG, &st);
        bad += back != 7099;
        MPI_File_close(&fh);
    }
    if (bad)
        printf("MISMATCH: rank %d: %d continued writes wrong\n", rank, bad);
    fprintf(out, "cont: %d wrong\n", bad);
}

/* A run written with a derived type, the type freed, a new one of another size
 * made (MPI may give it the freed one's handle), and the run going on with it:
 * the wrapper's cursor must not take the new type's writes at the old size.
 * Prints whether the handle came back, so the case says what it tested. */
static void typereuse(void)
{
    MPI_File fh = open_w("typereuse.dat");
    MPI_Offset at = (MPI_Offset)rank * 65536;
    double v[4];
    int same = 0;
    for (int round = 0; round < 6; round++) {
        MPI_Datatype t;
        int k = 1 + round % 4; /* doubles in the type: 1, 2, 3, 4, 1, 2 */
        MPI_Type_contiguous(k, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        static MPI_Datatype last = MPI_DATATYPE_NULL;
        same += round > 0 && t == last;
        for (int i = 0; i < 100; i++, at += 8 * k) {
            for (int j = 0; j < k; j++)
                v[j] = round * 1000 + i + j / 10.0;
            MPI_File_write_at(fh, at, v, 1, t, MPI_STATUS_IGNORE);
        }
        last = t;
        MPI_Type_free(&t);
    }
    MPI_File_close(&fh);
    fprintf(out, "typereuse: written to %lld; a freed type's handle came back: %s\n",
            (long long)at, same ? "yes" : "no");
}

/* Reads of this rank's own writes among many records (docs/mpiio.md): each round
 * writes 600 scattered 8-byte cells of its 64 KiB region (every 16 bytes, in a
 * shuffled order, overwriting those of the round before), then reads 20 ranges
 * of 24-40 bytes that straddle cells and gaps (every other one with
 * MPI_File_read at the individual pointer), and checks every byte against what
 * it wrote and where the pointer went.  8 rounds: an index of the records serves the reads while it
 * is built a few times, then the reads flush. */
static void served(void)
{
    MPI_File fh = open_w("served.dat");
    MPI_Offset base = (MPI_Offset)rank * 65536;
    static unsigned char mine[65536];
    memset(mine, 0, sizeof mine);
    int bad = 0;
    unsigned x = 12345u + (unsigned)rank;
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < 600; i++) {
            x = x * 1103515245u + 12345u;
            int cell = (int)((x >> 8) % 4000);
            unsigned char v[8];
            for (int k = 0; k < 8; k++)
                v[k] = (unsigned char)(round * 31 + i + k + 1);
            MPI_File_write_at(fh, base + cell * 16, v, 8, MPI_BYTE, MPI_STATUS_IGNORE);
            memcpy(mine + cell * 16, v, 8);
        }
        for (int j = 0; j < 20; j++) {
            x = x * 1103515245u + 12345u;
            int at = (int)((x >> 8) % 64000), len = 24 + (int)((x >> 4) % 17);
            unsigned char back[64];
            MPI_Status st;
            int got = -1;
            if (j % 2) { /* through the individual pointer, which moves on */
                MPI_Offset pos = -1;
                MPI_File_seek(fh, base + at, MPI_SEEK_SET);
                MPI_File_read(fh, back, len, MPI_BYTE, &st);
                MPI_File_get_position(fh, &pos);
                bad += pos != base + at + len;
            } else {
                MPI_File_read_at(fh, base + at, back, len, MPI_BYTE, &st);
            }
            MPI_Get_count(&st, MPI_BYTE, &got);
            bad += got != len || memcmp(back, mine + at, (size_t)len) != 0;
        }
    }
    if (bad)
        printf("MISMATCH: rank %d: %d reads of its own writes wrong\n", rank, bad);
    MPI_File_close(&fh);
    fprintf(out, "served: %d wrong\n", bad);
}

/* A file that MPI's I/O layer reaches and the kernel does not (ROMIO's "testfs:"
 * driver prints its calls and stores nothing; PVFS2 or DAOS are others): owners
 * cannot write such a file but through MPI.  Rank 0 writes pieces of a block
 * rank 1 would own and reads (its pieces must be written first), while rank 1
 * opens and closes another file collectively, 20 times.  Through MPI the owner's
 * I/O thread waited for ROMIO's lock, which rank 1 held in the open waiting for
 * rank 0: a hang.  Only the end is checked (the runs print the driver's calls,
 * which differ). */
static void nofd(void)
{
#if defined(OPEN_MPI)
    fprintf(out, "nofd: not run (testfs is ROMIO's, in MPICH)\n");
#else
    char p[4096], q[4096];
    snprintf(p, sizeof p, "testfs:%s/nofd-f.dat", dir);
    snprintf(q, sizeof q, "testfs:%s/nofd-g.dat", dir);
    MPI_File f, g;
    MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &f);
    for (int round = 0; round < 20; round++) {
        if (rank == 0) {
            long v = round;
            for (int i = 0; i < 100; i++)
                MPI_File_write_at(f, (1 << 20) + i * 16, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
            MPI_File_read_at(f, 0, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        }
        MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &g);
        MPI_File_close(&g);
    }
    MPI_File_close(&f);
    fprintf(out, "nofd: done\n");
#endif
}

/* Split collectives while write-behind's I/O thread runs: OMPIO runs each as a
 * nonblocking collective request that its _end waits for, the same request
 * list its progress walks from the thread's MPI calls.  Each round a rank takes
 * 64 cells of 8 bytes (independent writes, so the thread has work), then
 * rewrites its block with write_at_all_begin/_end, reads every rank's block
 * back with read_at_all_begin/_end (checking its own), and through its vector view with
 * write_all/read_all_begin/_end; every 8th round also the ordered forms (the
 * shared pointer).  Counts and bytes are checked; the results file holds them.
 * 64 rounds under Open MPI, 16 elsewhere. */
static void split(void)
{
    MPI_File fh = open_w("split.dat");
    const int n = 512;
#if defined(OPEN_MPI)
    const int reps = 64;
#else
    const int reps = 16; /* (MPICH's collective calls: 100 ms each with 3 ranks on 2 cores) */
#endif
    int *w = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n * (size_t)np);
    MPI_Datatype ft;
    MPI_Type_vector(n / 2, 2, 2 * np, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    MPI_Offset region = (MPI_Offset)sizeof(int) * n * np; /* blocks, view, ordered, cells */
    MPI_Status st;
    int got, bad = 0;
    long sum = 0;
    for (int rep = 0; rep < reps; rep++) {
        MPI_Offset base = 3 * region + (MPI_Offset)rep * 64 * 8 * np;
        for (int c = 0; c < 64; c++) {
            long v = (long)rep * 1000 + c * np + rank;
            MPI_File_write_at(fh, base + (MPI_Offset)(c * np + rank) * 8, &v, 1, MPI_LONG,
                              MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < n; i++)
            w[i] = rep * 100000 + rank * 1000 + i;
        MPI_File_write_at_all_begin(fh, (MPI_Offset)rank * n * sizeof(int), w, n, MPI_INT);
        MPI_File_write_at_all_end(fh, w, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        bad += got != n;
        memset(r, 0, sizeof(int) * (size_t)n * (size_t)np);
        MPI_File_read_at_all_begin(fh, 0, r, n * np, MPI_INT);
        MPI_File_read_at_all_end(fh, r, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        bad += got != n * np;
        for (int i = 0; i < n; i++) /* (other ranks' bytes: only after sync, barrier, sync) */
            bad += r[rank * n + i] != w[i];
        MPI_File_set_view(fh, region + (MPI_Offset)rank * 2 * sizeof(int), MPI_INT, ft, "native",
                          MPI_INFO_NULL);
        MPI_File_write_all_begin(fh, w, n, MPI_INT);
        MPI_File_write_all_end(fh, w, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        bad += got != n;
        MPI_File_seek(fh, 0, MPI_SEEK_SET);
        memset(r, 0, sizeof(int) * (size_t)n);
        MPI_File_read_all_begin(fh, r, n, MPI_INT);
        MPI_File_read_all_end(fh, r, &st);
        MPI_Get_count(&st, MPI_INT, &got);
        bad += got != n || memcmp(r, w, sizeof(int) * (size_t)n) != 0;
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        if (rep % 8 == 7) {
            MPI_File_seek_shared(fh, 2 * region, MPI_SEEK_SET);
            MPI_File_write_ordered_begin(fh, w, 16, MPI_INT);
            MPI_File_write_ordered_end(fh, w, &st);
            MPI_Get_count(&st, MPI_INT, &got);
            bad += got != 16;
            MPI_File_seek_shared(fh, 2 * region, MPI_SEEK_SET);
            memset(r, 0, sizeof(int) * 16);
            MPI_File_read_ordered_begin(fh, r, 16, MPI_INT);
            MPI_File_read_ordered_end(fh, r, &st);
            MPI_Get_count(&st, MPI_INT, &got);
            bad += got != 16 || memcmp(r, w, sizeof(int) * 16) != 0;
        }
        sum += r[0];
    }
    if (bad)
        printf("MISMATCH: rank %d: %d split collective results wrong\n", rank, bad);
    MPI_File_close(&fh);
    MPI_Type_free(&ft);
    free(w);
    free(r);
    fprintf(out, "split: %d wrong, %ld\n", bad, sum);
}

int main(int argc, char **argv)
{
    /* MPIIO_TEST_MULTIPLE=1: at MPI_THREAD_MULTIPLE, where a continuing write
     * takes the per-thread memo instead of the wrapper's cursor (own.c) */
    const char *mt = getenv("MPIIO_TEST_MULTIPLE");
    int provided;
    if (mt && *mt == '1')
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2) {
        fprintf(stderr, "usage: mpiio OUTDIR [CASE...]\n");
        return 2;
    }
    dir = argv[1];
    char p[4096];
    snprintf(p, sizeof p, "%s/result-%d.txt", dir, rank);
    out = fopen(p, "w");
    if (argc == 2) {
        cells(8);
        cells(40);
        ryow();
        syncread();
        collective();
        setsize();
        views();
        lbview();
        e32view();
        cont();
        whole();
    }
    for (int i = 2; i < argc; i++) {
        const char *c = argv[i];
        if (!strcmp(c, "cells8"))
            cells(8);
        else if (!strcmp(c, "cells40"))
            cells(40);
        else if (!strcmp(c, "ryow"))
            ryow();
        else if (!strcmp(c, "syncread"))
            syncread();
        else if (!strcmp(c, "collective"))
            collective();
        else if (!strcmp(c, "setsize"))
            setsize();
        else if (!strcmp(c, "views"))
            views();
        else if (!strcmp(c, "typereuse"))
            typereuse();
        else if (!strcmp(c, "lbview"))
            lbview();
        else if (!strcmp(c, "e32view"))
            e32view();
        else if (!strcmp(c, "nonblocking"))
            nonblocking();
        else if (!strcmp(c, "split"))
            split();
        else if (!strcmp(c, "cont"))
            cont();
        else if (!strcmp(c, "whole"))
            whole();
        else if (!strcmp(c, "nofd"))
            nofd();
        else if (!strcmp(c, "served"))
            served();
        else if (!strcmp(c, "steps"))
            steps(0);
        else if (!strcmp(c, "stepsleep"))
            steps(1);
        else if (!strcmp(c, "reopen"))
            reopen();
        else if (!strcmp(c, "large"))
            large();
        else if (!strcmp(c, "big") && i + 1 < argc)
            big(atoi(argv[++i]), 0);
        else if (!strcmp(c, "bigsparse") && i + 1 < argc)
            big(atoi(argv[++i]), 1);
        else if (!strcmp(c, "noclose"))
            noclose();
        else if (end_case(c) >= 0)
            killed(end_case(c));
        else if (!strcmp(c, "execfail"))
            execfail();
        else if (!strcmp(c, "twohandles"))
            twohandles();
        else if (!strcmp(c, "solonews"))
            solonews();
        else if (!strcmp(c, "onewrite"))
            onewrite();
        else if (!strcmp(c, "waw"))
            waw(0, 0);
        else if (!strcmp(c, "waw-part"))
            waw(1, 0);
        else if (!strcmp(c, "waw-wronly"))
            waw(1, 1);
        else if (!strcmp(c, "waw-kept"))
            waw_kept();
        else if (!strcmp(c, "waw-close"))
            waw_close();
        else if (!strcmp(c, "ask-stale"))
            ask_stale();
        else if (!strcmp(c, "barriers"))
            barriers();
        else if (!strcmp(c, "sizes"))
            sizes();
        else if (!strcmp(c, "seethrough"))
            seethrough();
        else if (!strcmp(c, "permuted"))
            permuted();
        else if (!strcmp(c, "rdhandle"))
            rdhandle();
        else if (!strcmp(c, "enospc") && i + 1 < argc)
            enospc(argv[++i], 0);
        else if (!strcmp(c, "enospc-late") && i + 1 < argc)
            enospc(argv[++i], 5);
        else if (!strcmp(c, "enospc-open") && i + 1 < argc)
            enospc_open(argv[++i]);
        else if (!strcmp(c, "quiet"))
            quiet();
        else if (!strcmp(c, "quietsleep"))
            quietsleep();
        else if (!strcmp(c, "ownidle"))
            ownidle(1);
        else if (!strcmp(c, "ownwake"))
            ownidle(3);
        else if (!strcmp(c, "failcoll")) {
            const char *call = "write_at_all";
            if (i + 1 < argc && (!strcmp(argv[i + 1], "set_view") ||
                                 !strcmp(argv[i + 1], "set_atomicity")))
                call = argv[++i];
            failcoll(call);
        }
        else if (!strcmp(c, "unlinked") && i + 1 < argc)
            unlinked(argv[++i], 0);
        else if (!strcmp(c, "replaced") && i + 1 < argc)
            unlinked(argv[++i], 1);
        else {
            fprintf(stderr, "unknown case %s\n", c);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    fclose(out);
    MPI_Finalize();
    return 0;
}
