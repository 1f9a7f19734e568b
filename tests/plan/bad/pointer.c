void kernel(double *A)
{
    for (int i = 0; i < 64; i++)
        *(A + i) = 1.0;
}
