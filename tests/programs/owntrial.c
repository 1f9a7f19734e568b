/* owntrial.c — a first run's trial of following the program's own requests
 * (src/comm/requests.c: unblock_own_trial_start).  Ranks 0 and 1 exchange 8
 * bytes with MPI_Sendrecv, then ROUNDS rounds of 8 bytes with their own
 * MPI_Irecv, MPI_Isend and MPI_Waitall; with MODE "convert", two large
 * blocking exchanges each way come between (calls unblock converts).  Then
 * rank 1 posts its own MPI_Irecv of 100 bytes into a block and, while it is
 * pending, receives 1 MiB with MPI_Recv into the same block 200 bytes
 * further on (its pages are the Irecv's: never converted, followed or not),
 * completes the Irecv, and receives 1 MiB more into a block of its own
 * (converted only while the run follows its requests).  Each rank writes
 * what it received to OUTDIR/rank-<r>.txt, and exits 1 if a byte is wrong.
 * usage: owntrial OUTDIR ROUNDS idle|convert */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG ((size_t)1 << 20)

static unsigned char pattern(size_t i, int tag)
{
    return (unsigned char)(i * 31 + (i >> 12) + (size_t)tag * 7);
}

static void fill(unsigned char *b, size_t n, int tag)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(i, tag);
}

static int wrong(const unsigned char *b, size_t n, int tag)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern(i, tag))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: owntrial OUTDIR ROUNDS idle|convert (2 ranks or more)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rounds = atoi(argv[2]), convert = strcmp(argv[3], "convert") == 0;
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argv[1], rank);
    FILE *out = fopen(path, "w");
    if (out == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    unsigned char *block = malloc(2 * BIG), *other = malloc(BIG);
    if (rank < 2) {
        int peer = 1 - rank;
        /* 8 bytes, too few to convert: the communicator and MPI_BYTE learnt (a
         * call on either seen the first time is never converted) */
        char hello[8] = "owntrial", hi[8];
        MPI_Sendrecv(hello, 8, MPI_BYTE, peer, 9, hi, 8, MPI_BYTE, peer, 9, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        bad += memcmp(hello, hi, 8) != 0;
        for (int k = 0; convert && k < 4; k++) {
            int tag = 10 + k;
            if (rank == k % 2) {
                fill(other, BIG, tag);
                MPI_Send(other, (int)BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
            } else {
                memset(other, 0, BIG);
                MPI_Recv(other, (int)BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                bad += wrong(other, BIG, tag);
            }
        }
        long sent = 0, got = -1, sum = 0;
        for (int i = 0; i < rounds; i++) {
            MPI_Request r[2];
            MPI_Status st[2];
            sent = (long)i * 3 + rank;
            MPI_Irecv(&got, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(&sent, 1, MPI_LONG, peer, 1, MPI_COMM_WORLD, &r[1]);
            MPI_Waitall(2, r, st);
            bad += got != (long)i * 3 + peer;
            sum += got;
        }
        fprintf(out, "%d rounds, sum %ld\n", rounds, sum);
        if (rank == 0) {
            fill(block, BIG, 21);
            MPI_Send(block, (int)BIG, MPI_BYTE, 1, 21, MPI_COMM_WORLD);
            fill(block, 100, 20);
            MPI_Send(block, 100, MPI_BYTE, 1, 20, MPI_COMM_WORLD);
            fill(other, BIG, 22);
            MPI_Send(other, (int)BIG, MPI_BYTE, 1, 22, MPI_COMM_WORLD);
        } else {
            MPI_Request q;
            memset(block, 0, 2 * BIG);
            MPI_Irecv(block, 100, MPI_BYTE, 0, 20, MPI_COMM_WORLD, &q);
            MPI_Recv(block + 200, (int)BIG, MPI_BYTE, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            int b = wrong(block, 100, 20) + wrong(block + 200, BIG, 21);
            memset(other, 0, BIG);
            MPI_Recv(other, (int)BIG, MPI_BYTE, 0, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            b += wrong(other, BIG, 22);
            fprintf(out, "beside a pending Irecv and after it: %s\n", b ? "wrong" : "ok");
            bad += b;
        }
    }
    fprintf(out, "%s\n", bad ? "WRONG" : "ok");
    fclose(out);
    free(block);
    free(other);
    MPI_Finalize();
    return bad != 0;
}
