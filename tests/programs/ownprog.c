/* ownprog.c — the program's own request moves while it computes.  Rank 1 posts
 * MPI_Irecv of 4 MiB and then makes no MPI call until rank 0's blocking MPI_Send
 * of that message has returned (rank 0 says so with a file; rank 1 gives up
 * waiting after 2 s), then MPI_Wait.  Without progress in the background the
 * send can only return once rank 1 waits; under unblock the completion thread
 * drives the receive (comm.own.progressed).  With QUICK, first QUICK rounds of
 * a 64 KiB exchange waited for at once (MPI_Irecv, MPI_Isend, MPI_Waitall, at
 * other call sites): the completion thread stops driving those (comm.own.undriven)
 * and still drives the receive above.  With STALL too, the last STALL of every
 * 100 quick exchanges wait 2 ms (STALL_US) between their start and
 * MPI_Waitall (a program descheduled there, as on a loaded machine, or one
 * doing a little work), and the 4 MiB receive is left out.  Each rank writes
 * OUTDIR/rank-<r>.txt.
 * usage: ownprog OUTDIR [QUICK [STALL [STALL_US]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define N ((size_t)4 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096], flag[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argc > 1 ? argv[1] : ".", rank);
    snprintf(flag, sizeof(flag), "%s/sent", argc > 1 ? argv[1] : ".");
    FILE *out = fopen(path, "w");
    unsigned char *buf = malloc(N);
    int quick = argc > 2 ? atoi(argv[2]) : 0;
    int stall = argc > 3 ? atoi(argv[3]) : 0;
    long stall_us = argc > 4 ? atol(argv[4]) : 2000;
    if (quick > 0 && rank < 2 && size >= 2) {
        enum { Q = 65536 };
        unsigned char *a = malloc(Q), *b = malloc(Q);
        int bad = 0;
        for (int k = 0; k < quick; k++) {
            MPI_Request r[2];
            MPI_Status st[2];
            memset(a, k & 0xff, Q);
            MPI_Irecv(b, Q, MPI_BYTE, 1 - rank, 7, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(a, Q, MPI_BYTE, 1 - rank, 7, MPI_COMM_WORLD, &r[1]);
            if (k % 100 >= 100 - stall) {
                struct timespec t = { stall_us / 1000000, stall_us % 1000000 * 1000 };
                nanosleep(&t, NULL);
            }
            MPI_Waitall(2, r, st);
            bad += b[0] != (unsigned char)(k & 0xff) || b[Q - 1] != (unsigned char)(k & 0xff);
        }
        fprintf(out, "%d quick exchanges, %d wrong\n", quick, bad);
        free(a);
        free(b);
    }
    if (stall > 0) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (rank == 0) {
        for (size_t i = 0; i < N; i++)
            buf[i] = (unsigned char)(i * 7 + i / 4096);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(buf, (int)N, MPI_BYTE, 1, 5, MPI_COMM_WORLD);
        FILE *f = fopen(flag, "w");
        if (f)
            fclose(f);
        fprintf(out, "sent %zu bytes\n", N);
    } else if (rank == 1) {
        MPI_Request req;
        memset(buf, 0, N);
        MPI_Irecv(buf, (int)N, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &req);
        MPI_Barrier(MPI_COMM_WORLD);
        struct stat st;
        struct timespec pause = { 0, 2000000 };
        int i = 0;
        for (; i < 1000 && stat(flag, &st) != 0; i++) /* no MPI call: 2 s at most */
            nanosleep(&pause, NULL);
        /* The send may return a moment before the receive completes here (the
         * sender's side finishes first): 50 ms more without an MPI call, so that
         * the completion thread's next round, at its back-off's pace, sees it
         * complete before the wait does (under CI's load it once came after,
         * and comm.own.progressed was 0). */
        for (int k = 0; i < 1000 && k < 25; k++)
            nanosleep(&pause, NULL);
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
    return 0;
}
