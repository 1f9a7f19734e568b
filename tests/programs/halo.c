/* halo.c — a small 1-D halo exchange with the calls our users write: rank 0 reads
 * an input file it created and scatters it with MPI_Send, neighbours exchange
 * borders with MPI_Sendrecv, a reduction, a gather, and rank 0 writes the result
 * with small write() calls.  Each rank writes its results to OUTDIR/rank-<r>.txt
 * (the transparency harness compares these byte for byte); timings go to stderr.
 *
 * usage: halo OUTDIR [iterations] [cells-per-rank] [nofinalize]
 * (nofinalize: exit without MPI_Finalize, as some programs do) */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *outdir = argc > 1 ? argv[1] : ".";
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    int n = argc > 3 ? atoi(argv[3]) : 4096;
    double t0 = MPI_Wtime();

    /* Rank 0 makes the input file, reads it back and distributes it. */
    double *u = calloc((size_t)n + 2, sizeof(double));
    double *unew = calloc((size_t)n + 2, sizeof(double));
    char path[4096];
    if (rank == 0) {
        double *all = malloc(sizeof(double) * (size_t)n * (size_t)size);
        for (long i = 0; i < (long)n * size; i++)
            all[i] = (double)((i * 7919) % 1000) / 10.0;
        snprintf(path, sizeof(path), "%s/input.bin", outdir);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (fd < 0 || write(fd, all, sizeof(double) * (size_t)n * size) < 0) {
            perror("write input");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        close(fd);
        memset(all, 0, sizeof(double) * (size_t)n * size);
        fd = open(path, O_RDONLY);
        ssize_t got = read(fd, all, sizeof(double) * (size_t)n * size);
        close(fd);
        if (got != (ssize_t)(sizeof(double) * (size_t)n * size)) {
            fprintf(stderr, "short read\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memcpy(u + 1, all, sizeof(double) * (size_t)n);
        for (int r = 1; r < size; r++)
            MPI_Send(all + (size_t)r * n, n, MPI_DOUBLE, r, 0, MPI_COMM_WORLD);
        free(all);
    } else {
        MPI_Recv(u + 1, n, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    double residual = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Sendrecv(u + 1, 1, MPI_DOUBLE, left, 1, u + n + 1, 1, MPI_DOUBLE, right, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(u + n, 1, MPI_DOUBLE, right, 2, u, 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        double local = 0;
        for (int i = 1; i <= n; i++) {
            unew[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1];
            local += (unew[i] - u[i]) * (unew[i] - u[i]);
        }
        memcpy(u + 1, unew + 1, sizeof(double) * (size_t)n);
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }

    double sum = 0;
    for (int i = 1; i <= n; i++)
        sum += u[i] * (double)(i % 13 + 1);
    double *sums = rank == 0 ? malloc(sizeof(double) * size) : NULL;
    MPI_Gather(&sum, 1, MPI_DOUBLE, sums, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    snprintf(path, sizeof(path), "%s/rank-%d.txt", outdir, rank);
    FILE *f = fopen(path, "w");
    fprintf(f, "rank %d of %d: iterations %d cells %d\n", rank, size, iters, n);
    fprintf(f, "residual %.17g\nchecksum %.17g\n", residual, sum);
    fprintf(f, "borders %.17g %.17g\n", u[1], u[n]);
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            fprintf(f, "sum[%d] %.17g\n", r, sums[r]);
        /* The result file, in small writes as checkpoints are written. */
        snprintf(path, sizeof(path), "%s/result.txt", outdir);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        char line[64];
        for (int r = 0; r < size; r++) {
            int len = snprintf(line, sizeof(line), "%d %.17g\n", r, sums[r]);
            if (write(fd, line, (size_t)len) != len)
                perror("write result");
        }
        fsync(fd);
        close(fd);
    }
    fclose(f);
    fprintf(stderr, "rank %d: %.3f s\n", rank, MPI_Wtime() - t0);
    free(u);
    free(unew);
    free(sums);
    if (argc > 4 && strcmp(argv[4], "nofinalize") == 0)
        return 0;
    MPI_Finalize();
    return 0;
}
