/* Matrix multiply with disk-resident operands (Figure 4(b) of the paper): W is
 * accumulated in floating point, so the k order of each W[i][j] must stay. */
#define N 32

void kernel(float W[N][N], float U[N][N], float V[N][N])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < N; k++)
                W[i][j] += U[i][k] * V[k][j];
}

#ifdef PLAN_MAIN
#include <stdio.h>
static float W[N][N], U[N][N], V[N][N];
int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            U[i][j] = 1.0f / (float)(1 + i + 3 * j);
            V[i][j] = (float)((i * 7 + j) % 13) * 0.1f;
            W[i][j] = 0.0f;
        }
    kernel(W, U, V);
    fwrite(W, sizeof(W), 1, stdout);
    return 0;
}
#endif
