/* A Gauss-Seidel sweep: every point reads its already updated neighbours, a
 * loop-carried dependence in both loops, repeated T times. */
#define N 64
#define T 4

void kernel(double A[N][N])
{
    for (int t = 0; t < T; t++)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                A[i][j] = (A[i - 1][j] + A[i][j - 1] + A[i][j] + A[i][j + 1] +
                           A[i + 1][j]) * 0.2;
}

#ifdef PLAN_MAIN
#include <stdio.h>
static double A[N][N];
int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            A[i][j] = (double)((i * 13 + j * 29) % 17);
    kernel(A);
    fwrite(A, sizeof(A), 1, stdout);
    return 0;
}
#endif
