/* Three loop nests over one disk-resident array, in the pattern of Figure 3 of
 * the disk-reuse paper: the first sweeps U by rows, the second by columns, the
 * third by columns again from the last row up; each touches every stripe, so in
 * the original order every nest brings every stripe in again (and the column
 * sweeps many times). */
#define N 64

void kernel(double U[N][N], double V[N], double W[N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            U[i][j] = 0.5 * U[i][j] + 1.0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            V[j] += U[i][j];
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++)
            W[j] += U[N - 1 - i][j] * U[N - 1 - i][j];
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
