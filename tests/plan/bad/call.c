double next_value(void);

void kernel(double A[64][64])
{
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++)
            A[i][j] = next_value();
}
