/* An imperfect nest: a statement between two loops of the nest (each row's
 * accumulator starts from the row's first element, then the row is added
 * column by column into the accumulator array of another disk-resident file). */
#define N 64

void kernel(double X[N][N], double S[N][N])
{
    for (int j = 0; j < N; j++) {
        S[0][j] = X[0][j];
        for (int i = 1; i < N; i++)
            S[i][j] = S[i - 1][j] + X[i][j];
    }
}

#ifdef PLAN_MAIN
#include <stdio.h>
static double X[N][N], S[N][N];
int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            X[i][j] = 1.0 / (double)(1 + i + j);
    kernel(X, S);
    fwrite(S, sizeof(S), 1, stdout);
    return 0;
}
#endif
