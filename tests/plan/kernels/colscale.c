/* Counters declared at the top (C89 style), a column-major sweep of two
 * row-major files. */
#define N 64

void kernel(double A[N][N], double B[N][N])
{
    int i, j;
    for (j = 0; j < N; j++)
        for (i = 0; i < N; i++)
            B[i][j] = A[i][j] * 2.0 - 1.0;
}

#ifdef PLAN_MAIN
#include <stdio.h>
static double A[N][N], B[N][N];
int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            A[i][j] = (double)(i - 2 * j) / 5.0;
    kernel(A, B);
    fwrite(B, sizeof(B), 1, stdout);
    return 0;
}
#endif
