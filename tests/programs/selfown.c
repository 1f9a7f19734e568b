/* selfown.c — N rounds of the program's own 8-byte MPI_Irecv and MPI_Isend to
 * itself and their MPI_Waitall: requests unblock follows (the log of small own
 * requests, src/comm/requests.c) but never converts or drives.  What following
 * them costs in instructions (tests/integration/fastpath_count.py, CALLS 3).
 * usage: selfown N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, me, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    long out = 0, in = -1;
    for (int i = 0; i < n; i++) {
        MPI_Request r[2];
        MPI_Status st[2];
        out = (long)i * 7 + 1;
        MPI_Irecv(&in, 1, MPI_LONG, me, 3, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&out, 1, MPI_LONG, me, 3, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, st);
        bad += in != out;
    }
    printf(bad ? "wrong: %d\n" : "ok\n", bad);
    MPI_Finalize();
    return bad != 0;
}
