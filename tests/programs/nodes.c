/* nodes.c — where every rank runs, and large blocking exchanges between them: the
 * program the two-node tests (scripts/cluster) run with and without unblock.
 *
 * Rank 0 prints "rank R of N on HOST" for every rank (gethostname of each) and the
 * number of distinct hosts, on stdout and in OUTDIR/nodes.txt.  Then, ITERS times,
 * every rank sends BYTES to its right neighbour with MPI_Send/MPI_Recv (even ranks
 * send first) and BYTES to its left one with MPI_Sendrecv, rewriting each send
 * buffer as soon as the call returns and checking every byte received.  With ranks
 * placed in blocks of K per node, at least 2 * ITERS * BYTES cross between the nodes
 * in each direction.  Each rank writes OUTDIR/rank-R.txt: checksums and "ok", or
 * "MISMATCH" for data that arrived wrong, and OUTDIR/where-R.txt (where.h).
 *
 * usage: nodes OUTDIR [iterations] [bytes] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "where.h"

#define HOSTLEN 256

static double value(int from, int it, long i)
{
    return (double)from * 1e6 + (double)it * 1e3 + (double)(i % 997);
}

static void fill(double *buf, long n, int from, int it)
{
    for (long i = 0; i < n; i++)
        buf[i] = value(from, it, i);
}

static long check(const double *buf, long n, int from, int it, double *sum)
{
    long bad = 0;
    for (long i = 0; i < n; i++) {
        bad += buf[i] != value(from, it, i);
        *sum += buf[i] * (double)(i % 7 + 1);
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *outdir = argc > 1 ? argv[1] : ".";
    int iters = argc > 2 ? atoi(argv[2]) : 10;
    long bytes = argc > 3 ? atol(argv[3]) : 1L << 20;
    long n = bytes / (long)sizeof(double);
    where_write(outdir, rank, size);

    char host[HOSTLEN] = { 0 };
    gethostname(host, sizeof(host) - 1);
    char *hosts = rank == 0 ? malloc((size_t)HOSTLEN * size) : NULL;
    MPI_Gather(host, HOSTLEN, MPI_CHAR, hosts, HOSTLEN, MPI_CHAR, 0, MPI_COMM_WORLD);
    char path[4096];
    if (rank == 0) {
        snprintf(path, sizeof(path), "%s/nodes.txt", outdir);
        FILE *f = fopen(path, "w");
        int distinct = 0;
        for (int r = 0; r < size; r++) {
            const char *h = hosts + (size_t)r * HOSTLEN;
            int seen = 0;
            for (int q = 0; q < r; q++)
                seen |= strcmp(h, hosts + (size_t)q * HOSTLEN) == 0;
            distinct += !seen;
            printf("rank %d of %d on %s\n", r, size, h);
            if (f)
                fprintf(f, "rank %d of %d on %s\n", r, size, h);
        }
        printf("hosts %d\n", distinct);
        if (f) {
            fprintf(f, "hosts %d\n", distinct);
            fclose(f);
        }
        fflush(stdout);
        free(hosts);
    }

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double *out = malloc(sizeof(double) * (size_t)n);
    double *in = malloc(sizeof(double) * (size_t)n);
    double sum = 0;
    long bad = 0;
    for (int it = 0; it < iters && size > 1; it++) {
        fill(out, n, rank, it);
        if (rank % 2 == 0) {
            MPI_Send(out, (int)n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
            memset(out, 0xff, sizeof(double) * (size_t)n); /* the call returned: ours again */
            MPI_Recv(in, (int)n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(in, (int)n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(out, (int)n, MPI_DOUBLE, right, 1, MPI_COMM_WORLD);
            memset(out, 0xff, sizeof(double) * (size_t)n);
        }
        bad += check(in, n, left, it, &sum);
        fill(out, n, rank, it + iters);
        MPI_Sendrecv(out, (int)n, MPI_DOUBLE, left, 2, in, (int)n, MPI_DOUBLE, right, 2,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        memset(out, 0xff, sizeof(double) * (size_t)n);
        bad += check(in, n, right, it + iters, &sum);
    }

    snprintf(path, sizeof(path), "%s/rank-%d.txt", outdir, rank);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "rank %d of %d: %d iterations of %ld bytes each way\nchecksum %.17g\n%s\n", rank,
                size, iters, n * (long)sizeof(double), sum, bad ? "MISMATCH" : "ok");
        fclose(f);
    }
    free(out);
    free(in);
    MPI_Finalize();
    return bad != 0;
}
