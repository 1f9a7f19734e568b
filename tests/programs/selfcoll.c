/* selfcoll.c — N rounds of an 8-byte MPI_Allreduce, an 8-byte MPI_Bcast and an
 * MPI_Barrier (a solver's convergence check): calls unblock never converts,
 * what they cost on their way to MPI with nothing in flight
 * (tests/integration/fastpath_count.py counts the instructions, CALLS 3).
 * usage: selfcoll N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double x, y = 0, sum = 0;
    for (int i = 0; i < n; i++) {
        x = (double)i;
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Bcast(&y, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        sum += y;
    }
    double want = (double)size * (double)n * (double)(n - 1) / 2.0;
    printf("%s: %d rounds, sum %.0f\n", sum == want ? "ok" : "MISMATCH", n, sum);
    MPI_Finalize();
    return sum == want ? 0 : 1;
}
