/* mpiiostrided.c — N independent MPI_File_write_at of 8 bytes at every other
 * cell (16 bytes apart), then N more into the cells between, into
 * mpiiostrided.dat in the current directory; the file closed, opened again
 * read-only and checked: what a strided write (interleaved cells) costs MPI-IO
 * write-behind, its take and its paint into the block's image
 * (tests/integration/fastpath_count.py counts its instructions; docs/mpiio.md).
 * usage: mpiiostrided N   (prints "ok" when the file holds what was written) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_SELF, "mpiiostrided.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "mpiiostrided: cannot open mpiiostrided.dat\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int half = 0; half < 2; half++)
        for (int i = 0; i < n; i++) {
            long long v = 3LL * i + 1 + half;
            MPI_File_write_at(fh, (MPI_Offset)i * 16 + half * 8, &v, 8, MPI_BYTE,
                              MPI_STATUS_IGNORE);
        }
    MPI_File_close(&fh);
    long long *back = malloc((size_t)n * 16 + 1);
    MPI_File_open(MPI_COMM_SELF, "mpiiostrided.dat", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_read_at(fh, 0, back, n * 16, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    int bad = 0;
    for (int i = 0; i < n; i++)
        bad += back[2 * i] != 3LL * i + 1 || back[2 * i + 1] != 3LL * i + 2;
    printf("%s: %d writes, %d wrong\n", bad ? "MISMATCH" : "ok", 2 * n, bad);
    free(back);
    MPI_Finalize();
    return bad != 0;
}
