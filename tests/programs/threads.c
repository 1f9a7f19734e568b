/* threads.c — a program that calls MPI from 4 threads (MPI_THREAD_MULTIPLE), in
 * pairs of ranks.  Thread t of a rank talks to thread t of its peer on its own
 * duplicate of MPI_COMM_WORLD: blocking sends and receives of 1 MiB buffers, each
 * received buffer read at once.  Then the threads touch each other's buffers:
 * after a pthread barrier, thread t reads the buffer thread (t+1)%4 just
 * received (a fault on a page another thread's operation owns) and writes over
 * the buffer thread (t+2)%4 just sent.  Each rank writes OUTDIR/rank-<r>.txt with a
 * checksum and ok/MISMATCH per check (one line per thread, in thread order).
 *
 * usage: threads OUTDIR */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 6 };
#define N ((size_t)1 << 20)

static int rank, peer;
static MPI_Comm comms[THREADS];
static unsigned char *sendbuf[THREADS], *recvbuf[THREADS];
static pthread_barrier_t barrier;
static char lines[THREADS][ROUNDS][160];

static unsigned char pat(int r, int t, int round, size_t i)
{
    uint32_t x = (uint32_t)(r * 7919 + t * 104729 + round * 1299709) + (uint32_t)(i >> 2) * 2654435761u;
    x ^= x >> 15;
    x *= 0x2c1b3c6dU;
    x ^= x >> 12;
    return (unsigned char)(x >> (8 * (i & 3)));
}

static int differs(const unsigned char *p, int r, int t, int round)
{
    for (size_t i = 0; i < N; i++)
        if (p[i] != pat(r, t, round, i))
            return 1;
    return 0;
}

static uint64_t fnv(const unsigned char *p)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < N; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t i = 0; i < N; i++)
            sendbuf[t][i] = pat(rank, t, round, i);
        if (rank & 1) {
            MPI_Recv(recvbuf[t], (int)N, MPI_BYTE, peer, round, comms[t], MPI_STATUS_IGNORE);
            MPI_Send(sendbuf[t], (int)N, MPI_BYTE, peer, round, comms[t]);
        } else {
            MPI_Send(sendbuf[t], (int)N, MPI_BYTE, peer, round, comms[t]);
            MPI_Recv(recvbuf[t], (int)N, MPI_BYTE, peer, round, comms[t], MPI_STATUS_IGNORE);
        }
        int own = 1;
        if (round % 2 == 0) { /* its own buffer, read from the end at once */
            own = recvbuf[t][N - 1] == pat(peer, t, round, N - 1);
        }
        pthread_barrier_wait(&barrier);
        /* Another thread's received buffer, and another thread's sent one. */
        int o = (t + 1) % THREADS, w = (t + 2) % THREADS;
        int theirs = !differs(recvbuf[o], peer, o, round);
        uint64_t sum = fnv(recvbuf[o]);
        pthread_barrier_wait(&barrier);
        memset(sendbuf[w] + (size_t)t * (N / THREADS), 0xee, N / THREADS);
        pthread_barrier_wait(&barrier);
        snprintf(lines[t][round], sizeof(lines[t][round]),
                 "round %d thread %d: own %s, thread %d's buffer sum %016llx %s", round, t,
                 own ? "ok" : "MISMATCH", o, (unsigned long long)sum, theirs ? "ok" : "MISMATCH");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int mismatched = 0;
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 2 || provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "usage: threads OUTDIR (needs MPI_THREAD_MULTIPLE, got %d)\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    peer = (rank ^ 1) < size ? rank ^ 1 : -1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argv[1], rank);
    FILE *out = fopen(path, "w");
    if (!out)
        MPI_Abort(MPI_COMM_WORLD, 2);
    fprintf(out, "rank %d of %d, peer %d, thread level %d\n", rank, size, peer, provided);
    for (int t = 0; t < THREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    if (peer >= 0) {
        for (int t = 0; t < THREADS; t++) {
            sendbuf[t] = malloc(N);
            recvbuf[t] = malloc(N);
        }
        pthread_barrier_init(&barrier, NULL, THREADS);
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        long bad = 0;
        for (int round = 0; round < ROUNDS; round++)
            for (int t = 0; t < THREADS; t++) {
                fprintf(out, "%s\n", lines[t][round]);
                bad += strstr(lines[t][round], "MISMATCH") != NULL;
            }
        fprintf(out, "%ld lines with a mismatch\n", bad);
        mismatched = bad != 0;
        if (bad)
            fprintf(stderr, "threads rank %d: %ld mismatches\n", rank, bad);
    } else {
        fprintf(out, "no peer, idle\n");
    }
    for (int t = 0; t < THREADS; t++)
        MPI_Comm_free(&comms[t]);
    fclose(out);
    MPI_Finalize();
    return mismatched;
}
