/* selftestnull.c — N calls of MPI_Test on MPI_REQUEST_NULL (a program polling a
 * request slot it has not filled): a completion call while unblock follows no
 * request of the program's, what it costs on its way to MPI
 * (tests/integration/fastpath_count.py counts the instructions, CALLS 1).
 * usage: selftestnull N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, done = 0;
    for (int i = 0; i < n; i++) {
        MPI_Request r = MPI_REQUEST_NULL;
        int flag = 0;
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        done += flag && r == MPI_REQUEST_NULL;
    }
    printf("%s: %d calls, %d flagged\n", done == n ? "ok" : "MISMATCH", n, done);
    MPI_Finalize();
    return done == n ? 0 : 1;
}
