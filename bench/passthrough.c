/* passthrough.c — what an intercepted call costs when unblock only forwards it.
 *
 * Times three calls that unblock wraps, in a tight loop, and prints ns per call:
 *   fseek    on an fmemopen stream: no system call, so the wrapper's cost is most
 *            of what remains (the budget: 15 ns);
 *   write    of 8 bytes to /dev/null: a real system call;
 *   MPI_Test on MPI_REQUEST_NULL (when built with MPI): returns at once;
 *   own      (with MPI) a round of the program's own requests: an 8-byte
 *            MPI_Irecv and MPI_Isend to itself and their MPI_Waitall, which
 *            unblock follows but never converts (ns per round; the data are
 *            checked);
 *   allreduce (with MPI) an 8-byte MPI_Allreduce (ns per call), which unblock
 *            only counts;
 *   status   (with MPI) a round of a 16 KiB MPI_Isend to itself, its MPI_Recv
 *            with a status (never converted) and the MPI_Wait (ns per round).
 * bench/run-passthrough runs it with and without unblock and prints the
 * differences.  usage: passthrough [iterations] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifdef WITH_MPI
#include <mpi.h>
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define REPS 9

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
#ifdef WITH_MPI
    MPI_Init(&argc, &argv);
#endif
    char mem[4096];
    FILE *f = fmemopen(mem, sizeof(mem), "w+");
    int fd = open("/dev/null", O_WRONLY);
    double t[REPS];

    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (long i = 0; i < n; i++)
            fseek(f, (long)(i & 1023), SEEK_SET);
        t[r] = (now() - t0) / (double)n;
    }
    qsort(t, REPS, sizeof(double), cmp);
    printf("fseek %.2f\n", t[REPS / 2]);

    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (long i = 0; i < n / 10; i++)
            if (write(fd, "12345678", 8) != 8)
                abort();
        t[r] = (now() - t0) / (double)(n / 10);
    }
    qsort(t, REPS, sizeof(double), cmp);
    printf("write %.2f\n", t[REPS / 2]);

#ifdef WITH_MPI
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (long i = 0; i < n; i++) {
            MPI_Request req = MPI_REQUEST_NULL;
            int flag;
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        }
        t[r] = (now() - t0) / (double)n;
    }
    qsort(t, REPS, sizeof(double), cmp);
    printf("MPI_Test %.2f\n", t[REPS / 2]);

    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (long i = 0; i < n / 10; i++) {
            MPI_Request q[2];
            MPI_Status st[2]; /* (MPI_STATUSES_IGNORE draws a false warning from gcc) */
            double x = (double)i, y = -1.0;
            MPI_Irecv(&y, 1, MPI_DOUBLE, me, 7, MPI_COMM_WORLD, &q[0]);
            MPI_Isend(&x, 1, MPI_DOUBLE, me, 7, MPI_COMM_WORLD, &q[1]);
            MPI_Waitall(2, q, st);
            if (y != x)
                abort();
        }
        t[r] = (now() - t0) / (double)(n / 10);
    }
    qsort(t, REPS, sizeof(double), cmp);
    printf("own %.2f\n", t[REPS / 2]);

    for (int r = 0; r < REPS; r++) {
        double t0 = now(), x = 1.0, y = 0.0;
        for (long i = 0; i < n / 10; i++)
            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t[r] = (now() - t0) / (double)(n / 10);
        if (y != x * np) /* (the sum over the ranks) */
            abort();
    }
    qsort(t, REPS, sizeof(double), cmp);
    printf("allreduce %.2f\n", t[REPS / 2]);

    enum { LEN = 16384 };
    unsigned char *out = malloc(LEN), *in = malloc(LEN);
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (long i = 0; i < n / 100; i++) {
            MPI_Request q;
            MPI_Status st;
            out[0] = (unsigned char)i;
            MPI_Isend(out, LEN, MPI_BYTE, me, 8, MPI_COMM_WORLD, &q);
            MPI_Recv(in, LEN, MPI_BYTE, me, 8, MPI_COMM_WORLD, &st);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            if (in[0] != out[0] || st.MPI_TAG != 8)
                abort();
        }
        t[r] = (now() - t0) / (double)(n / 100);
    }
    qsort(t, REPS, sizeof(double), cmp);
    printf("status %.2f\n", t[REPS / 2]);
    free(out);
    free(in);
    MPI_Finalize();
#endif
    fclose(f);
    close(fd);
    return 0;
}
