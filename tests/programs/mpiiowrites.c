/* mpiiowrites.c — N independent MPI_File_write_at of 8 bytes, each continuing
 * the last, into mpiiowrites.dat in the current directory, then the file read
 * back and checked: what a write MPI-IO write-behind takes costs
 * (tests/integration/fastpath_count.py counts its instructions; docs/mpiio.md).
 * usage: mpiiowrites N   (prints "ok" when the file holds what was written) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_SELF, "mpiiowrites.dat", MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "mpiiowrites: cannot open mpiiowrites.dat\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < n; i++) {
        long long v = 3LL * i + 1;
        MPI_File_write_at(fh, (MPI_Offset)i * 8, &v, 8, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    long long *back = malloc((size_t)n * 8 + 1);
    MPI_File_read_at(fh, 0, back, n * 8, MPI_BYTE, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += back[i] != 3LL * i + 1;
    MPI_File_close(&fh);
    printf("%s: %d writes, %d wrong\n", bad ? "MISMATCH" : "ok", n, bad);
    free(back);
    MPI_Finalize();
    return bad != 0;
}
