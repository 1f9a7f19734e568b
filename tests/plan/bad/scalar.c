void kernel(double A[64], double s)
{
    for (int i = 0; i < 64; i++)
        s += A[i];
}
