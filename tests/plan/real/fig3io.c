/* The Figure-3-style kernel with its disk-resident array U read through AT():
 * by default an array element (what unblock plan reads), in the real run a
 * buffer manager over U's file (tests/plan/real/run.c).  V and W live in
 * memory.  Every statement touches one element of U, so the order of the
 * references inside a statement cannot change which stripe the buffer evicts. */
#ifndef AT
#define AT(a, i, j) a[i][j]
#endif
#define N 64

void kernel(double U[N][N], double V[N], double W[N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            AT(U, i, j) = 0.5 * AT(U, i, j) + 1.0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            V[j] += AT(U, i, j);
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            W[j] += AT(U, N - 1 - i, j) * AT(U, N - 1 - i, j);
}

#ifdef PLAN_MAIN
#include <stdio.h>
static double U[N][N], V[N], W[N];
int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            U[i][j] = (double)((i * 37 + j * 11) % 101) / 7.0;
    kernel(U, V, W);
    fwrite(U, sizeof(U), 1, stdout);
    fwrite(V, sizeof(V), 1, stdout);
    fwrite(W, sizeof(W), 1, stdout);
    return 0;
}
#endif
