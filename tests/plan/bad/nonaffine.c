void kernel(double A[64][64])
{
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            A[i * j][j] = 1.0;
}
