/* transpose.c — a distributed matrix transpose written with the program's own
 * nonblocking calls, as FFT and spectral codes write it: an N x N matrix of
 * doubles in rows over P ranks (N/P rows each); each rank packs block q of
 * its rows (columns q*N/P ...) transposed into a buffer of its own, posts an
 * MPI_Irecv from every other rank, an MPI_Isend to every other rank, waits
 * for all with MPI_Waitall, and unpacks what it received.  Nothing in it is a
 * blocking call unblock would convert: what taking its calls costs.
 *
 * Prints "transpose.N US" per size, the median over batches of the time of
 * one transpose (the slowest rank's), and "check.N ok" when transposing twice
 * gave the matrix back on every rank (exits 1 otherwise).
 * usage: transpose [--sizes N,N,...] [--iters K] (N a multiple of the ranks;
 * default 64,256,1024: 8 KiB, 128 KiB and 2 MiB blocks between 2 ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCHES = 7 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n doubles starting a page.  Where malloc put the buffers moved the copies'
 * speed with them: MPICH, 2 ranks, N = 64, 2.46 µs a transpose plain, 4.01
 * with 8 KiB malloc'd before the program's (the source and destination of
 * its copies then a few bytes apart modulo 4 KiB), which reading a profile at
 * start under unblock did (docs/performance.md). */
static double *page_alloc(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 4096, n * sizeof(double) + 1) == 0 ? p : NULL;
}

/* dst = src transposed across the ranks (both N/P rows of N). */
static void transpose(int n, int p, int me, const double *src, double *dst, double *sbuf,
                      double *rbuf, MPI_Request *req, MPI_Status *st)
{
    int b = n / p;
    size_t blk = (size_t)b * b;
    for (int q = 0; q < p; q++) /* block q, transposed, contiguous */
        for (int i = 0; i < b; i++)
            for (int j = 0; j < b; j++)
                sbuf[q * blk + (size_t)j * b + i] = src[(size_t)i * n + (size_t)q * b + j];
    int k = 0;
    for (int q = 0; q < p; q++)
        if (q != me)
            MPI_Irecv(rbuf + q * blk, (int)blk, MPI_DOUBLE, q, 7, MPI_COMM_WORLD, &req[k++]);
    for (int q = 0; q < p; q++)
        if (q != me)
            MPI_Isend(sbuf + q * blk, (int)blk, MPI_DOUBLE, q, 7, MPI_COMM_WORLD, &req[k++]);
    memcpy(rbuf + me * blk, sbuf + me * blk, blk * sizeof(double));
    MPI_Waitall(k, req, st);
    for (int q = 0; q < p; q++) /* block q of the result's rows: columns q*b... */
        for (int i = 0; i < b; i++)
            memcpy(dst + (size_t)i * n + (size_t)q * b, rbuf + q * blk + (size_t)i * b,
                   (size_t)b * sizeof(double));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, p, iters = 0, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const char *sizes = "64,256,1024";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc)
            sizes = argv[++i];
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atoi(argv[++i]);
    }
    char *list = strdup(sizes);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int n = atoi(tok);
        if (n <= 0 || n % p != 0) {
            if (me == 0)
                fprintf(stderr, "transpose: %s is not a multiple of %d ranks\n", tok, p);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        int b = n / p;
        size_t mine = (size_t)b * n;
        double *a = page_alloc(mine), *t = page_alloc(mine), *back = page_alloc(mine);
        double *sbuf = page_alloc(mine), *rbuf = page_alloc(mine);
        MPI_Request *req = malloc(2 * (size_t)p * sizeof(MPI_Request));
        MPI_Status *st = malloc(2 * (size_t)p * sizeof(MPI_Status));
        if (!a || !t || !back || !sbuf || !rbuf || !req || !st)
            MPI_Abort(MPI_COMM_WORLD, 2);
        for (size_t i = 0; i < mine; i++)
            a[i] = (double)((size_t)me * mine + i) * 0.5;
        /* about 0.2 s a batch at any size */
        long cells = (long)n * n;
        int k = iters > 0 ? iters : (int)(4000000L / cells < 1 ? 1 : 4000000L / cells);
        double tb[BATCHES];
        for (int batch = -1; batch < BATCHES; batch++) { /* batch -1 warms up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int it = 0; it < k; it++)
                transpose(n, p, me, a, t, sbuf, rbuf, req, st);
            double dt = (MPI_Wtime() - t0) / k * 1e6, slowest;
            MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (batch >= 0)
                tb[batch] = slowest;
        }
        transpose(n, p, me, t, back, sbuf, rbuf, req, st);
        int wrong = memcmp(a, back, mine * sizeof(double)) != 0, any;
        /* and one element of the transpose itself: t[i][j] = A[j][me*b + i] */
        int i = b / 2, j = n - 1, owner = j / b;
        double want = (double)((size_t)owner * mine + (size_t)(j % b) * n + (size_t)me * b + i) * 0.5;
        wrong |= t[(size_t)i * n + j] != want;
        MPI_Allreduce(&wrong, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        qsort(tb, BATCHES, sizeof(double), cmp);
        if (me == 0)
            printf("transpose.%d %.3f\ncheck.%d %s\n", n, tb[BATCHES / 2], n, any ? "WRONG" : "ok");
        bad |= any;
        free(a), free(t), free(back), free(sbuf), free(rbuf), free(req), free(st);
    }
    free(list);
    MPI_Finalize();
    return bad;
}
