/* reopen.c — a file opened, written a little and closed at every step (a
 * checkpoint per step): what MPI-IO write-behind's fixed costs of open and close
 * come to (docs/performance.md).  Each round opens OUTDIR/reopen-<r mod 4>.dat on
 * MPI_COMM_WORLD, each rank makes BYTES/T MPI_File_write_at of T bytes at its
 * own BYTES, and closes it; after 5 rounds not counted, rank 0 prints
 * "round.us" (the mean of ROUNDS rounds, µs) and the last file's checksum.
 *
 * usage: reopen OUTDIR [--rounds ROUNDS] [--bytes BYTES] [--t T]   (200, 1024, 8) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, rounds = 200;
    long bytes = 1024, t = 8;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 2) {
        fprintf(stderr, "usage: reopen OUTDIR [--rounds ROUNDS] [--bytes BYTES] [--t T]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bytes"))
            bytes = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--t"))
            t = atol(argv[i + 1]);
    }
    if (rounds < 1 || bytes < 1 || t < 1 || bytes % t) {
        fprintf(stderr, "reopen: ROUNDS, BYTES and T positive, BYTES a multiple of T\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = malloc((size_t)bytes), path[4096];
    for (long i = 0; i < bytes; i++)
        buf[i] = (char)('a' + (i * 7 + rank) % 26);
    double t0 = 0;
    for (int r = 0; r < rounds + 5; r++) {
        if (r == 5) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        snprintf(path, sizeof path, "%s/reopen-%d.dat", argv[1], r % 4);
        MPI_File fh;
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                          &fh) != MPI_SUCCESS) {
            fprintf(stderr, "reopen: cannot open %s\n", path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (long i = 0; i < bytes; i += t)
            MPI_File_write_at(fh, (MPI_Offset)rank * bytes + i, buf + i, (int)t, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        MPI_File_close(&fh);
    }
    double us = (MPI_Wtime() - t0) / rounds * 1e6, maxus;
    MPI_Reduce(&us, &maxus, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen(path, "rb");
        uint64_t h = 1469598103934665603ull;
        int c;
        while (f && (c = getc(f)) != EOF)
            h = (h ^ (uint64_t)(unsigned char)c) * 1099511628211ull;
        if (f)
            fclose(f);
        printf("checksum %llu\nround.us %.1f\n", (unsigned long long)h, maxus);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
