/* Transpose-then-scale: the first nest writes the transpose of A to B (B lives
 * on disk too), the second scales B into C. */
#define N 64

void kernel(double A[N][N], double B[N][N], double C[N][N], double s)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            B[j][i] = A[i][j];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            C[i][j] = s * B[i][j];
}

#ifdef PLAN_MAIN
#include <stdio.h>
static double A[N][N], B[N][N], C[N][N];
int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            A[i][j] = (double)(i * N + j) / 3.0;
    kernel(A, B, C, 1.0 / 3.0);
    fwrite(B, sizeof(B), 1, stdout);
    fwrite(C, sizeof(C), 1, stdout);
    return 0;
}
#endif
