/* selfsendrecv.c — N blocking MPI_Sendrecv of 8 KiB with itself: above
 * UNBLOCK_SEND_MIN, so each call meets the predictor, which soon runs it as the
 * original call (converting a message to itself only costs): what a call at a
 * site that passes costs on its way to MPI (tests/integration/fastpath_count.py
 * counts its instructions).  Built with -DWITH_STATUS (selfsendrecv_status): the
 * same with a status, whose count, tag and source are checked.  Built with
 * -DSMALL (selfsendrecv_small): 8 bytes each way, under the thresholds (the
 * front).
 * usage: selfsendrecv N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    static double a[1024], b[1024];
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        a[0] = (double)i;
        a[1023] = (double)(2 * i);
#ifdef WITH_STATUS
        MPI_Status st;
        int c = 0;
        MPI_Sendrecv(a, 1024, MPI_DOUBLE, me, 7, b, 1024, MPI_DOUBLE, me, 7, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &c);
        if (c != 1024 || st.MPI_TAG != 7 || st.MPI_SOURCE != me)
            sum = -1e300; /* (a wrong status: MISMATCH) */
#elif defined(SMALL)
        MPI_Sendrecv(a, 1, MPI_DOUBLE, me, 7, b, 1, MPI_DOUBLE, me, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        b[1023] = 2 * b[0];
#else
        MPI_Sendrecv(a, 1024, MPI_DOUBLE, me, 7, b, 1024, MPI_DOUBLE, me, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
#endif
        sum += b[0] + b[1023];
    }
    double want = 3.0 * (double)n * (double)(n - 1) / 2.0;
    printf("%s: %d calls, sum %.0f\n", sum == want ? "ok" : "MISMATCH", n, sum);
    MPI_Finalize();
    return sum == want ? 0 : 1;
}
