/* tick.c — the tick (src/progress/tick.c) at the program's thread level.  Rank 1
 * posts its own MPI_Irecv of 4 MiB (a request the tick drives, so its timer is
 * armed), then makes no MPI call for a while; rank 0 sends the message with a
 * blocking MPI_Send.
 *   sleep  rank 1 sleeps in nanosleep, clock_nanosleep, usleep, poll, select,
 *          pselect and epoll_wait, 30 ms each: none may fail with EINTR or
 *          return early (exit status 1 and a line on stderr otherwise).
 *   libc   rank 1 spends 200 ms inside memcpy: every tick lands in libc and must
 *          be deferred (comm.tick.polls 0, comm.tick.deferred > 0).
 *   own    rank 1 spends 200 ms in a loop of its own: ticks poll.
 * Each rank writes OUTDIR/rank-<r>.txt (nothing that depends on timing).
 * usage: tick sleep|libc|own OUTDIR */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define N ((size_t)4 << 20)
#define SLEEP_NS 30000000L

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int bad;

/* `rc` of a call that should have slept SLEEP_NS from t0. */
static void check(const char *what, int rc, double t0)
{
    double took = now() - t0;
    if (rc != 0) {
        fprintf(stderr, "tick: %s returned %d (%s)\n", what, rc, strerror(errno));
        bad = 1;
    } else if (took < (double)SLEEP_NS / 1e9) {
        fprintf(stderr, "tick: %s slept %.6f s, not %.3f\n", what, took, (double)SLEEP_NS / 1e9);
        bad = 1;
    }
}

static void sleeps(FILE *out)
{
    struct timespec ts = { 0, SLEEP_NS };
    double t0 = now();
    check("nanosleep", nanosleep(&ts, NULL), t0);
    t0 = now();
    check("clock_nanosleep", clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL), t0);
    t0 = now();
    check("usleep", usleep(SLEEP_NS / 1000), t0);
    t0 = now();
    check("poll", poll(NULL, 0, SLEEP_NS / 1000000), t0);
    struct timeval tv = { 0, SLEEP_NS / 1000 };
    t0 = now();
    check("select", select(0, NULL, NULL, NULL, &tv), t0);
    t0 = now();
    check("pselect", pselect(0, NULL, NULL, NULL, &ts, NULL), t0);
    int ep = epoll_create1(0);
    struct epoll_event ev;
    t0 = now();
    check("epoll_wait", epoll_wait(ep, &ev, 1, SLEEP_NS / 1000000), t0);
    close(ep);
    fprintf(out, "slept 7 times\n");
}

static volatile unsigned long sink;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "sleep";
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argc > 2 ? argv[2] : ".", rank);
    FILE *out = fopen(path, "w");
    unsigned char *buf = malloc(N);
    if (rank == 0) {
        for (size_t i = 0; i < N; i++)
            buf[i] = (unsigned char)(i * 13 + i / 4096);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(buf, (int)N, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
        fprintf(out, "sent %zu bytes\n", N);
    } else if (rank == 1) {
        MPI_Request req;
        memset(buf, 0, N);
        MPI_Irecv(buf, (int)N, MPI_BYTE, 0, 9, MPI_COMM_WORLD, &req);
        MPI_Barrier(MPI_COMM_WORLD);
        if (strcmp(mode, "sleep") == 0) {
            sleeps(out);
        } else if (strcmp(mode, "libc") == 0) {
            size_t m = (size_t)32 << 20;
            char *a = malloc(m), *b = malloc(m);
            memset(a, 1, m);
            memset(b, 2, m);
            double t0 = now();
            int k = 0;
            while (now() - t0 < 0.2)
                memcpy(k++ & 1 ? a : b, k & 1 ? b : a, m);
            sink = (unsigned long)a[m / 2];
            free(a);
            free(b);
            fprintf(out, "copied\n");
        } else {
            double t0 = now();
            unsigned long x = 1;
            while (now() - t0 < 0.2)
                for (int i = 0; i < 100000; i++)
                    x = x * 6364136223846793005UL + 1442695040888963407UL;
            sink = x;
            fprintf(out, "computed\n");
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        unsigned long long sum = 0;
        for (size_t i = 0; i < N; i++)
            sum = sum * 31 + buf[i];
        fprintf(out, "received %zu bytes, sum %016llx\n", N, sum);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    fclose(out);
    free(buf);
    MPI_Finalize();
    return bad;
}
