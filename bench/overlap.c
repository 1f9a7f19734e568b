/* overlap.c — the overlap micro-benchmarks, 2 ranks.  Each prints "KEY VALUE" lines.
 *
 *   pioman   PIOMan's Table 1: rank 0 times MPI_Send followed by a write into its
 *            buffer (so the send is really complete and the buffer free); rank 1
 *            posts MPI_Irecv, computes about 50 ms, then MPI_Wait.  Without
 *            background progress a rendezvous send waits for the receiver's whole
 *            computation.  Prints "send.<size> MICROSECONDS", 4 KiB to 16 MiB, the
 *            median of --reps sends of each size (5); with more than 8, also
 *            "settled.<size> MICROSECONDS", the median of the sends after the
 *            first 8 (where the predictor has settled: its exploring is over).
 *   late     the late sender: rank 0 computes 50 ms, then sends 4 MiB; rank 1
 *            calls MPI_Recv at once, computes 50 ms on other memory, then reads
 *            the data.  About 100 ms plain; 50 ms if the receive could wait in the
 *            background.  Prints "late.recv_side_ms" and "late.sender_ms".
 *   mirror   PIOMan's case turned round: rank 0 times MPI_Send of --max bytes
 *            (16 MiB), about 50 ms of computation, then a write into its buffer;
 *            rank 1 times MPI_Recv and a read of the data.  Who copies a
 *            rendezvous (UCX's get: the receiver; put: the sender) decides
 *            whose core pays for it.  Prints "mirror.sender_ms" and
 *            "mirror.recv_ms".
 *   idle     CPU time the process uses during one idle second (after MPI_Init,
 *            nothing in flight).  Prints "idle.cpu_ms".
 *
 * --thread-level L initialises with MPI_Init_thread at level L (0 SINGLE,
 * 1 FUNNELED, 2 SERIALIZED, 3 MULTIPLE) instead of MPI_Init: what unblock keeps
 * of these results for programs that ask for each level (issue 23's targets,
 * bench/targets.py).
 *
 * usage: overlap pioman|late|mirror|idle [--max BYTES] [--compute-ms MS] [--thread-level L]
 *   [--reps N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

/* Busy work on `scratch` for about `ms` milliseconds. */
static void compute(double ms, double *scratch, size_t n)
{
    double end = MPI_Wtime() + ms / 1000.0;
    double s = 0;
    while (MPI_Wtime() < end)
        for (size_t i = 0; i < n; i++) {
            scratch[i] = scratch[i] * 0.999 + 1.0;
            s += scratch[i];
        }
    sink = s;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void pioman(int rank, long max, double compute_ms, int reps)
{
    char *buf = malloc((size_t)max);
    double scratch[512] = { 0 };
    memset(buf, 1, (size_t)max);
    enum { SETTLED = 8 };
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (long size = 4096; size <= max; size *= 4) {
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                double t0 = MPI_Wtime();
                MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                buf[0] = (char)r; /* the buffer is the program's again */
                buf[size - 1] = (char)r;
                t[r] = (MPI_Wtime() - t0) * 1e6;
            } else if (rank == 1) {
                MPI_Request req;
                MPI_Irecv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &req);
                compute(compute_ms, scratch, 512);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        }
        if (rank == 0 && reps > SETTLED) {
            qsort(t + SETTLED, (size_t)(reps - SETTLED), sizeof(double), cmp);
            printf("settled.%ld %.1f\n", size, t[SETTLED + (reps - SETTLED) / 2]);
        }
        qsort(t, (size_t)reps, sizeof(double), cmp);
        if (rank == 0)
            printf("send.%ld %.1f\n", size, t[reps / 2]);
    }
    free(t);
    free(buf);
}

static void late(int rank, double compute_ms)
{
    const int size = 4 << 20;
    char *buf = malloc(size);
    double scratch[512] = { 0 };
    memset(buf, rank, size);
    double sender = 0, receiver = 0;
    enum { REPS = 5 };
    double tr[REPS], ts[REPS];
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
            compute(compute_ms, scratch, 512);
            buf[0] = (char)r;
            MPI_Send(buf, size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            ts[r] = (MPI_Wtime() - t0) * 1e3;
        } else if (rank == 1) {
            MPI_Recv(buf, size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            compute(compute_ms, scratch, 512);
            long s = 0;
            for (int i = 0; i < size; i += 4096) /* now read the data */
                s += buf[i];
            sink = (double)s;
            tr[r] = (MPI_Wtime() - t0) * 1e3;
        }
    }
    if (rank == 1) {
        qsort(tr, REPS, sizeof(double), cmp);
        receiver = tr[REPS / 2];
        MPI_Send(&receiver, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 0) {
        qsort(ts, REPS, sizeof(double), cmp);
        sender = ts[REPS / 2];
        MPI_Recv(&receiver, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("late.recv_side_ms %.2f\nlate.sender_ms %.2f\n", receiver, sender);
    }
    free(buf);
}

static void mirror(int rank, long size, double compute_ms)
{
    char *buf = malloc((size_t)size);
    double scratch[512] = { 0 };
    memset(buf, rank, (size_t)size);
    enum { REPS = 5 };
    double t[REPS], other = 0;
    for (int r = 0; r < REPS; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            compute(compute_ms, scratch, 512);
            buf[0] = (char)r; /* the buffer is the program's again */
            buf[size - 1] = (char)r;
        } else if (rank == 1) {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            long sum = 0;
            for (long i = 0; i < size; i += 4096) /* the data, read at once */
                sum += buf[i];
            sink = (double)sum;
        }
        t[r] = (MPI_Wtime() - t0) * 1e3;
    }
    qsort(t, REPS, sizeof(double), cmp);
    if (rank == 1)
        MPI_Send(&t[REPS / 2], 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    else if (rank == 0) {
        MPI_Recv(&other, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("mirror.sender_ms %.2f\nmirror.recv_ms %.2f\n", t[REPS / 2], other);
    }
    free(buf);
}

static double cpu_ms(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void idle(int rank)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_ms();
    struct timespec one = { 1, 0 };
    nanosleep(&one, NULL);
    double used = cpu_ms() - c0, other = 0;
    if (rank == 1)
        MPI_Send(&used, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    if (rank == 0) {
        if (MPI_Recv(&other, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS)
            used = used > other ? used : other;
        printf("idle.cpu_ms %.2f\n", used);
    }
}

int main(int argc, char **argv)
{
    long max = 16L << 20;
    double compute_ms = 50;
    int reps = 5;
    int level = -1; /* MPI_Init */
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--max") == 0 && i + 1 < argc)
            max = atol(argv[++i]);
        else if (strcmp(argv[i], "--compute-ms") == 0 && i + 1 < argc)
            compute_ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 5;
        else if (strcmp(argv[i], "--thread-level") == 0 && i + 1 < argc)
            level = atoi(argv[++i]);
    }
    const int levels[] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                           MPI_THREAD_MULTIPLE };
    int provided;
    if (level >= 0 && level <= 3)
        MPI_Init_thread(&argc, &argv, levels[level], &provided);
    else
        MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 2 overlap pioman|late|mirror|idle [--max B] "
                            "[--compute-ms MS] [--thread-level L]\n");
        MPI_Finalize();
        return 2;
    }
    if (strcmp(argv[1], "pioman") == 0)
        pioman(rank, max, compute_ms, reps);
    else if (strcmp(argv[1], "mirror") == 0)
        mirror(rank, max, compute_ms);
    else if (strcmp(argv[1], "late") == 0)
        late(rank, compute_ms);
    else if (strcmp(argv[1], "idle") == 0)
        idle(rank);
    MPI_Finalize();
    return 0;
}
