/* selfstatus.c — N rounds of a 16 KiB MPI_Isend to itself, a blocking MPI_Recv of
 * it with a status (a receive unblock never converts: the full path refuses it
 * for its status, convert.c) whose count the program reads, and the MPI_Wait:
 * what such a receive costs on its way to MPI (tests/integration/
 * fastpath_count.py counts the instructions, CALLS 3).
 * usage: selfstatus N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEN = 16384 };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    unsigned char *out = malloc(LEN), *in = malloc(LEN);
    long sum = 0, want = 0, got = 0;
    for (int i = 0; i < n; i++) {
        MPI_Request r;
        MPI_Status st;
        int c = 0;
        memset(out, i & 0xff, LEN);
        MPI_Isend(out, LEN, MPI_BYTE, me, 7, MPI_COMM_WORLD, &r);
        MPI_Recv(in, LEN, MPI_BYTE, me, 7, MPI_COMM_WORLD, &st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Get_count(&st, MPI_BYTE, &c);
        got += c == LEN && st.MPI_TAG == 7 && st.MPI_SOURCE == me;
        sum += in[i % LEN] + in[LEN - 1];
        want += 2 * (i & 0xff);
    }
    int ok = sum == want && got == n;
    printf("%s: %d rounds, sum %ld, statuses %ld\n", ok ? "ok" : "MISMATCH", n, sum, got);
    free(out);
    free(in);
    MPI_Finalize();
    return ok ? 0 : 1;
}
