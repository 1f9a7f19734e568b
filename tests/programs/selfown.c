/* selfown.c — N rounds of the program's own 8-byte MPI_Irecv and MPI_Isend to
 * itself and their MPI_Waitall: requests unblock follows (the log of small own
 * requests, src/comm/requests.c) but never converts or drives.  What following
 * them costs in instructions (tests/integration/fastpath_count.py, CALLS 3).
 * Built with -DBYTES=B (selfown_1k): B bytes of MPI_BYTE instead, 512 elements
 * or more, whose size the wrappers look up.
 * usage: selfown N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, me, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
#ifdef BYTES
    static unsigned char out[BYTES], in[BYTES];
#endif
    long lout = 0, lin = -1;
    for (int i = 0; i < n; i++) {
        MPI_Request r[2];
        MPI_Status st[2];
        lout = (long)i * 7 + 1;
#ifdef BYTES
        out[0] = (unsigned char)lout, out[BYTES - 1] = (unsigned char)(lout >> 8);
        MPI_Irecv(in, BYTES, MPI_BYTE, me, 3, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(out, BYTES, MPI_BYTE, me, 3, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, st);
        lin = in[0] == out[0] && in[BYTES - 1] == out[BYTES - 1] ? lout : -1;
#else
        MPI_Irecv(&lin, 1, MPI_LONG, me, 3, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(&lout, 1, MPI_LONG, me, 3, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, st);
#endif
        bad += lin != lout;
    }
    printf(bad ? "wrong: %d\n" : "ok\n", bad);
    MPI_Finalize();
    return bad != 0;
}
