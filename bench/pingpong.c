/* pingpong.c — blocking ping-pong between ranks 0 and 1, 8 B to 16 MiB.
 *
 * Prints one line per size: "size half-round-trip-us" (median over several
 * batches).  --thread-multiple initialises with MPI_Init_thread(MPI_THREAD_MULTIPLE)
 * instead of MPI_Init, to measure what that level costs; --thread-level L with
 * level L (0 SINGLE, 1 FUNNELED, 2 SERIALIZED, 3 MULTIPLE).  --nonblocking uses
 * MPI_Isend/MPI_Irecv + MPI_Wait instead of the blocking calls.  --max BYTES limits
 * the largest size.  --iters N: round trips per batch up to 64 KiB (default 2000;
 * a tenth of that up to 1 MiB, a hundredth beyond), fewer for slow links.
 * --file PATH: PATH is opened on MPI_COMM_WORLD before the ping-pong and closed
 * after it, as a simulation keeps its output file open while it computes and
 * communicates; first each rank writes 1 KiB of it 8 times with
 * MPI_File_write_at_all (under unblock the file is then quiet: nothing is taken,
 * and the ping-pong shows what an open file costs MPI calls:
 * docs/performance.md).
 * bench/run compares runs with and without unblock.  The buffer starts a page, as
 * OSU's benchmarks align theirs: where malloc puts it moves Open MPI's shared-
 * memory copy (4 KiB: 2.20 us one way at a page's start, 2.50 at offset 1152),
 * and unblock's own allocations move where malloc puts it. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int level = -1, nonblocking = 0; /* -1: MPI_Init */
    long max = 16L << 20;
    int base = 2000;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--thread-multiple") == 0)
            level = 3;
        else if (strcmp(argv[i], "--thread-level") == 0 && i + 1 < argc)
            level = atoi(argv[++i]);
        else if (strcmp(argv[i], "--nonblocking") == 0)
            nonblocking = 1;
        else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = atol(argv[++i]);
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            base = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 2000;
        else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
            file = argv[++i];
    }
    int provided = MPI_THREAD_SINGLE;
    const int levels[] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                           MPI_THREAD_MULTIPLE };
    if (level >= 0 && level <= 3)
        MPI_Init_thread(&argc, &argv, levels[level], &provided);
    else
        MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_File fh = MPI_FILE_NULL;
    if (file) {
        char cell[1024];
        memset(cell, 'a' + rank % 26, sizeof cell);
        if (MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                          &fh) != MPI_SUCCESS) {
            fprintf(stderr, "pingpong: cannot open %s\n", file);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int k = 0; k < 8; k++)
            MPI_File_write_at_all(fh, (MPI_Offset)(k * 64 + rank) * (MPI_Offset)sizeof cell, cell,
                                  (int)sizeof cell, MPI_CHAR, MPI_STATUS_IGNORE);
    }
    char *buf = NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (posix_memalign((void **)&buf, page > 0 ? (size_t)page : 4096, (size_t)max) != 0) {
        fprintf(stderr, "pingpong: no memory for %ld bytes\n", max);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 1, (size_t)max);
    enum { BATCHES = 7 };
    for (long size = 8; size <= max; size *= 2) {
        int iters = size <= 65536 ? base : size <= (1 << 20) ? base / 10 : base / 100;
        if (iters < 1)
            iters = 1;
        double t[BATCHES];
        for (int b = -1; b < BATCHES; b++) { /* batch -1 warms up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters && nonblocking; i++) {
                MPI_Request req;
                int peer = 1 - rank;
                if (rank > 1)
                    break;
                if (rank == 0) {
                    MPI_Isend(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    MPI_Irecv(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                } else {
                    MPI_Irecv(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                    MPI_Isend(buf, (int)size, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                }
            }
            for (int i = 0; i < iters && !nonblocking; i++) {
                if (rank == 0) {
                    MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else if (rank == 1) {
                    MPI_Recv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
                }
            }
            if (b >= 0)
                t[b] = (MPI_Wtime() - t0) / iters / 2 * 1e6;
        }
        qsort(t, BATCHES, sizeof(double), cmp);
        if (rank == 0)
            printf("%ld %.3f\n", size, t[BATCHES / 2]);
    }
    if (rank == 0 && level >= 0)
        fprintf(stderr, "thread level provided: %d\n", provided);
    free(buf);
    if (file)
        MPI_File_close(&fh);
    MPI_Finalize();
    return 0;
}
