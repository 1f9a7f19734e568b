/* gate.c — the MPI library's thread safety as the program sees it
 * (src/comm/gate.c).
 *
 * The flag: Open MPI's `opal_uses_threads` (libopen-pal exports it); MPICH's
 * `MPIR_ThreadInfo.isThreaded`, which libmpich does not export: found here by a
 * scan of the writable data of the object that holds PMPI_Query_thread for the
 * one place laid out as MPIR_ThreadInfo (a level 0-3, then the thread that
 * called MPI_Init at +8, then 0 or 1 at +16), not the way unblock finds it.
 *
 * A program at MPI_THREAD_SINGLE: plain, the flag stays clear the whole run.  Under unblock (which asks MPI_Init for
 * MPI_THREAD_MULTIPLE) the thread gate clears it after MPI_Init, sets it while a
 * converted operation is in flight, and clears it again at the first MPI calls
 * after a quiet spell; with UNBLOCK_THREAD_GATE=0 it stays set.  Rounds: rank 1
 * sends 4 MiB after 30 ms, rank 0 receives it (converted: returns at once, the
 * flag seen then), then checks the data; 30 ms of quiet, three 8-byte ping-pongs,
 * and the flag must be as expected.  Then two MPI-IO files on MPI_COMM_WORLD
 * (OUT/gate-0.dat, -1.dat), each opened after 30 ms of quiet and written 8 bytes
 * a rank: the first closed at once, the second given 8 collective writes (quiet
 * under unblock) and kept open; after 30 ms and three ping-pongs the flag must
 * be as with nothing in flight.  Writes OUT/gate-<rank>.txt (the data's sum, the same plain
 * and under unblock); prints MISMATCH and exits 1 when the flag or the data are
 * wrong.
 *
 * usage: gate OUT */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ROUNDS = 6, LEN = 4 << 20 };

static int rank, bad;

static int is_unblock(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    return info->dlpi_name && strstr(info->dlpi_name, "libunblock") != NULL;
}

typedef struct {
    uintptr_t code;
    const int *found;
    int matches;
} scan_t;

/* MPICH: the object that holds PMPI_Query_thread, its writable segments scanned. */
static int scan_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    scan_t *s = data;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && s->code >= lo && s->code < lo + ph->p_memsz)
            holds = 1;
    }
    if (!holds)
        return 0;
    pthread_t self = pthread_self();
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
            continue;
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7;
        uintptr_t hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        for (uintptr_t a = lo; a + 24 <= hi; a += 8) {
            const int *t = (const int *)a;
            if (t[0] >= 0 && t[0] <= 3 && pthread_equal(*(const pthread_t *)(a + 8), self) &&
                (t[4] == 0 || t[4] == 1)) {
                s->found = t + 4;
                s->matches++;
            }
        }
    }
    return 1;
}

static volatile int *mpich_flag(void)
{
    scan_t s = { (uintptr_t)dlsym(RTLD_DEFAULT, "PMPI_Query_thread"), NULL, 0 };
    if (s.code == 0 || dl_iterate_phdr(scan_object, &s) == 0 || s.matches != 1) {
        fprintf(stderr, "MISMATCH: MPIR_ThreadInfo not found (%d places like it)\n", s.matches);
        return NULL;
    }
    return (volatile int *)s.found;
}

static volatile bool *ompi_flag;
static volatile int *mpich_flag_p;

static int flag_now(void)
{
    return ompi_flag ? *ompi_flag : *mpich_flag_p;
}

static void expect(const char *what, int got, int want)
{
    if (got != want) {
        fprintf(stderr, "MISMATCH: rank %d: the thread flag %s is %d, expected %d\n", rank,
                what, got, want);
        bad = 1;
    }
}

/* Three 8-byte ping-pongs between ranks 0 and 1: the program's next MPI calls,
 * the first of which freezes a gate asked for. */
static void small_pingpongs(void)
{
    unsigned char small[8] = { 0 };
    for (int i = 0; i < 3 && rank < 2; i++) {
        if (rank == 0) {
            MPI_Send(small, 8, MPI_BYTE, 1, 100, MPI_COMM_WORLD);
            MPI_Recv(small, 8, MPI_BYTE, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(small, 8, MPI_BYTE, 0, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(small, 8, MPI_BYTE, 0, 101, MPI_COMM_WORLD);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gate OUT\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#ifdef OPEN_MPI
    ompi_flag = dlsym(RTLD_DEFAULT, "opal_uses_threads");
    if (ompi_flag == NULL)
        fprintf(stderr, "MISMATCH: opal_uses_threads not found\n");
#else
    mpich_flag_p = mpich_flag();
#endif
    if (ompi_flag == NULL && mpich_flag_p == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    /* Under unblock (its library is loaded) with the gate, or without it. */
    int unblock = dl_iterate_phdr(is_unblock, NULL) != 0;
    const char *g = getenv("UNBLOCK_THREAD_GATE");
    int gated = unblock && !(g && strcmp(g, "0") == 0);
    int idle = unblock && !gated; /* what the flag is with nothing in flight */
    expect("after MPI_Init", flag_now(), idle);
    unsigned char *buf = malloc(LEN);
    long sum = 0;
    int seen_on = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (rank == 1) {
            usleep(30000);
            for (size_t i = 0; i < LEN; i++)
                buf[i] = (unsigned char)(i * 7 + (size_t)r);
            MPI_Send(buf, LEN, MPI_BYTE, 0, r, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(buf, LEN, MPI_BYTE, 1, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            seen_on |= flag_now(); /* in flight: the engine may call MPI */
            for (size_t i = 0; i < LEN; i++) {
                if (buf[i] != (unsigned char)(i * 7 + (size_t)r)) {
                    fprintf(stderr, "MISMATCH: round %d byte %zu\n", r, i);
                    bad = 1;
                    break;
                }
                sum += buf[i];
            }
        }
        usleep(30000); /* quiet: the engine goes to sleep and asks for a freeze */
        small_pingpongs();
        expect("after a quiet spell and small messages", flag_now(), idle);
    }
    /* Plain: never set.  Gated: set while some receive was in flight (the first
     * rounds may pass while the predictor explores; most convert). */
    if (rank == 0)
        expect("while a receive was in flight (any round)", seen_on, unblock ? 1 : 0);
    char path[4096];
    /* MPI-IO write-behind's I/O thread keeps the flag set while a file of several
     * ranks takes writes, but not once the file is closed, nor while it is quiet
     * (where the engine slept with the gate open, it is woken to ask again). */
    char cell[64];
    memset(cell, 'a' + rank % 26, sizeof cell);
    for (int phase = 0; phase < 2; phase++) {
        usleep(30000); /* the engine deep asleep */
        MPI_File fh;
        snprintf(path, sizeof(path), "%s/gate-%d.dat", argv[1], phase);
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                          &fh) != MPI_SUCCESS) {
            fprintf(stderr, "MISMATCH: cannot open %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        MPI_File_write_at(fh, rank * 64, cell, 8, MPI_CHAR, MPI_STATUS_IGNORE);
        if (phase == 0)
            MPI_File_close(&fh);
        else /* collective calls that take no write: quiet after 4 */
            for (int k = 1; k <= 8; k++)
                MPI_File_write_at_all(fh, (k * 4 + rank) * 64, cell, 64, MPI_CHAR,
                                      MPI_STATUS_IGNORE);
        usleep(30000); /* (woken, the engine asks for a freeze again) */
        small_pingpongs();
        expect(phase ? "while a quiet MPI-IO file is open" : "after an MPI-IO file closed",
               flag_now(), idle);
        if (phase == 1)
            MPI_File_close(&fh);
    }
    snprintf(path, sizeof(path), "%s/gate-%d.txt", argv[1], rank);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "rank %d sum %ld\n", rank, sum);
        fclose(f);
    }
    free(buf);
    MPI_Finalize();
    return bad;
}
