/* A parameter-dependent bound: only the first n rows are scaled, column by
 * column; n is known at run time only (the simulator uses the spec's value, the
 * generated code works for every n). */
#define N 64

void kernel(int n, double A[N][N], double B[N][N])
{
    for (int j = 0; j < N; j++)
        for (int i = 0; i < n; i++)
            B[i][j] = 2.0 * A[i][j];
}

#ifdef PLAN_MAIN
#include <stdio.h>
#include <stdlib.h>
static double A[N][N], B[N][N];
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 48;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            A[i][j] = (double)(i - j) / 9.0;
    kernel(n, A, B);
    fwrite(B, sizeof(B), 1, stdout);
    return 0;
}
#endif
