/* btio.c — a BTIO-like write benchmark: many small independent writes per rank, the
 * pattern of the write-behind comparison (Liao et al., two-stage write-behind;
 * NAS BTIO "simple" subtype against its collective "full" subtype).
 *
 * The solution is an N x N x N grid of cells of 5 doubles (40 bytes, as in BT),
 * stored in the file row-major (k slowest, i fastest).  The ranks split the i and j
 * dimensions (MPI_Dims_create), so each rank's part of a snapshot is N x ly runs of
 * lx cells: small pieces scattered over the file.  Every step the ranks update their
 * cells (about COMPUTE_MS of work) and append a snapshot at offset step * N^3 * 40.
 *
 *   --mode independent  one MPI_File_write_at per run (what a simple code writes)
 *   --mode collective   a subarray file view and one MPI_File_write_at_all per step
 *                       (the hand-optimised reference)
 *   --mode posix        one pwrite() per run on a descriptor each rank opened
 *
 * Every mode writes the same bytes: rank 0 reads the file back after the timings
 * and prints "checksum X" (FNV-1a, decimal), then "time.write", "time.comp",
 * "time.total" (seconds, maximum over ranks), "time.close" (of time.write, the
 * sync and close: the slowest rank's), "bw.mbs" (file MB written per
 * second of write time) and "cpu.write" (CPU seconds, user and system, of every
 * thread of every rank from before the open to after the close, summed over
 * ranks: with more ranks than cores the copies' cost decides the time).
 *
 * usage: btio OUTDIR [--n N] [--steps S] [--mode M] [--compute-ms MS] [--sync] */
#define _GNU_SOURCE
#include <mpi.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { INDEPENDENT, COLLECTIVE, POSIX };
#define CELL 5 /* doubles per cell */

static void die(const char *msg)
{
    fprintf(stderr, "btio: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static void block(int n, int parts, int idx, int *len, int *off)
{
    *len = n / parts + (idx < n % parts);
    *off = idx * (n / parts) + (idx < n % parts ? idx : n % parts);
}

static double now(void)
{
    return MPI_Wtime();
}

/* CPU seconds of the whole process (every thread: an I/O thread's too). */
static double cpu_now(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* About MS milliseconds of arithmetic on the rank's cells: the solver's step. */
static void compute(double *u, size_t cells, int step, double ms, size_t gi0)
{
    double until = now() + ms / 1000.0;
    do {
        for (size_t c = 0; c < cells * CELL; c++)
            u[c] = (double)((gi0 + c) % 977) * 0.5 + step;
    } while (now() < until);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = 64, steps = 10, mode = INDEPENDENT, dosync = 0;
    double compute_ms = 5;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || argv[1][0] == '-')
        die("usage: btio OUTDIR [--n N] [--steps S] [--mode independent|collective|posix] "
            "[--compute-ms MS] [--sync]");
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sync")) {
            dosync = 1;
            continue;
        }
        if (!v)
            die("option needs a value");
        i++;
        if (!strcmp(a, "--n"))
            n = atoi(v);
        else if (!strcmp(a, "--steps"))
            steps = atoi(v);
        else if (!strcmp(a, "--compute-ms"))
            compute_ms = atof(v);
        else if (!strcmp(a, "--mode"))
            mode = !strcmp(v, "independent") ? INDEPENDENT : !strcmp(v, "collective") ? COLLECTIVE
                 : !strcmp(v, "posix") ? POSIX : (die("unknown mode"), 0);
        else
            die("unknown option");
    }
    int dims[2] = { 0, 0 };
    MPI_Dims_create(size, 2, dims);
    int lx, x0, ly, y0; /* i range (fastest) and j range of this rank */
    block(n, dims[0], rank % dims[0], &lx, &x0);
    block(n, dims[1], rank / dims[0], &ly, &y0);
    if (n < 2 || steps < 1 || lx < 1 || ly < 1)
        die("bad sizes");
    size_t cells = (size_t)n * ly * lx;
    double *u = malloc(cells * CELL * sizeof(double));
    if (!u)
        die("out of memory");
    char path[4096];
    snprintf(path, sizeof(path), "%s/btio.out", argv[1]);
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);

    const MPI_Offset snap = (MPI_Offset)n * n * n * CELL * sizeof(double);
    const size_t run = (size_t)lx * CELL * sizeof(double);
    MPI_File fh = MPI_FILE_NULL;
    int fd = -1;
    MPI_Datatype cell, view = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(CELL, MPI_DOUBLE, &cell);
    MPI_Type_commit(&cell);
    double t_write = 0, t_comp = 0, start = now(), cpu0 = cpu_now();
    if (mode == POSIX) {
        fd = open(path, O_WRONLY | O_CREAT, 0644);
        if (fd < 0)
            die("cannot open the output file");
    } else {
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                          &fh) != MPI_SUCCESS)
            die("cannot open the output file");
        if (mode == COLLECTIVE) {
            int gs[3] = { n, n, n }, ls[3] = { n, ly, lx }, st[3] = { 0, y0, x0 };
            MPI_Type_create_subarray(3, gs, ls, st, MPI_ORDER_C, cell, &view);
            MPI_Type_commit(&view);
        }
    }
    for (int s = 0; s < steps; s++) {
        double t0 = now();
        compute(u, cells, s, compute_ms, (size_t)rank * cells * CELL);
        double t1 = now();
        t_comp += t1 - t0;
        if (mode == COLLECTIVE) {
            MPI_File_set_view(fh, s * snap, cell, view, "native", MPI_INFO_NULL);
            MPI_File_write_at_all(fh, 0, u, (int)cells, cell, MPI_STATUS_IGNORE);
        } else {
            for (int k = 0; k < n; k++)
                for (int j = 0; j < ly; j++) {
                    MPI_Offset off = s * snap +
                                     (((MPI_Offset)k * n + y0 + j) * n + x0) * CELL * (MPI_Offset)sizeof(double);
                    const double *src = u + ((size_t)k * ly + j) * lx * CELL;
                    if (mode == INDEPENDENT) {
                        MPI_File_write_at(fh, off, src, lx, cell, MPI_STATUS_IGNORE);
                    } else if (pwrite(fd, src, run, off) != (ssize_t)run) {
                        die("pwrite failed");
                    }
                }
        }
        t_write += now() - t1;
    }
    double t0 = now();
    if (mode == POSIX) {
        if ((dosync && fsync(fd) != 0) || close(fd) != 0)
            die("close failed");
    } else {
        if (dosync)
            MPI_File_sync(fh);
        MPI_File_close(&fh);
    }
    double t_close = now() - t0;
    t_write += t_close;
    double cpu = cpu_now() - cpu0, cpu_sum = 0;
    double mine[4] = { t_write, t_comp, now() - start, t_close }, maxt[4];
    MPI_Reduce(mine, maxt, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (view != MPI_DATATYPE_NULL)
        MPI_Type_free(&view);
    MPI_Type_free(&cell);

    if (rank == 0) {
        /* Read the file back (outside the timings) so every mode is checked. */
        uint64_t h = 1469598103934665603ull;
        unsigned char buf[65536];
        ssize_t r;
        long long total = 0;
        int in = open(path, O_RDONLY);
        while (in >= 0 && (r = read(in, buf, sizeof(buf))) > 0) {
            for (ssize_t i = 0; i < r; i++)
                h = (h ^ buf[i]) * 1099511628211ull;
            total += r;
        }
        if (in < 0 || total != (long long)snap * steps)
            die("the output file has the wrong size");
        close(in);
        printf("checksum %llu\n", (unsigned long long)(h >> 12));
        printf("time.write %.6f\ntime.comp %.6f\ntime.total %.6f\n", maxt[0], maxt[1], maxt[2]);
        printf("time.close %.6f\n", maxt[3]);
        printf("bw.mbs %.1f\n", (double)snap * steps / 1e6 / maxt[0]);
        printf("cpu.write %.6f\n", cpu_sum);
        printf("writes.per_rank %lld\n",
               mode == COLLECTIVE ? (long long)steps : (long long)steps * n * ly);
    }
    free(u);
    MPI_Finalize();
    return 0;
}
