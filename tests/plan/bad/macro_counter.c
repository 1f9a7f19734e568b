#define AI A[i]

void kernel(double A[64])
{
    for (int i = 0; i < 64; i++)
        AI = 1.0;
}
