/* selfsend.c — N blocking sends of 8 bytes to itself, each received at once:
 * what a send and a receive unblock leaves to MPI cost on their way to it
 * (tests/integration/fastpath_count.py counts their instructions).
 * usage: selfsend N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    double x = 1.0, y = 0.0, sum = 0.0;
    for (int i = 0; i < n; i++) {
        x = (double)i;
        MPI_Send(&x, 1, MPI_DOUBLE, me, 7, MPI_COMM_WORLD);
        MPI_Recv(&y, 1, MPI_DOUBLE, me, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += y;
    }
    double want = (double)n * (double)(n - 1) / 2.0;
    printf("%s: %d round trips, sum %.0f\n", sum == want ? "ok" : "MISMATCH", n, sum);
    MPI_Finalize();
    return sum == want ? 0 : 1;
}
