void kernel(double A[64], int P[64])
{
    for (int i = 0; i < 64; i++)
        A[P[i]] = 0.0;
}
