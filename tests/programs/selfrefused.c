/* selfrefused.c — N rounds of a 4 KiB MPI_Isend to itself, a blocking MPI_Recv of it
 * into a 4 KiB heap block (large enough to convert, UNBLOCK_RECV_MIN; too small to
 * have pages of its own, so never protected: every receive is refused for its
 * memory) and the MPI_Wait: what the refused receive costs once its site takes the
 * quick path (tests/integration/fastpath_count.py counts the instructions, CALLS 3).
 * usage: selfrefused N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEN = 4096 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    unsigned char *out = malloc(LEN), *in = malloc(LEN);
    long sum = 0, want = 0;
    for (int i = 0; i < n; i++) {
        MPI_Request r;
        memset(out, i & 0xff, LEN);
        MPI_Isend(out, LEN, MPI_BYTE, me, 7, MPI_COMM_WORLD, &r);
        MPI_Recv(in, LEN, MPI_BYTE, me, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        sum += in[i % LEN] + in[LEN - 1];
        want += 2 * (i & 0xff);
    }
    printf("%s: %d rounds, sum %ld\n", sum == want ? "ok" : "MISMATCH", n, sum);
    free(out);
    free(in);
    MPI_Finalize();
    return sum == want ? 0 : 1;
}
