/* mpiioreads.c — a file of N 8-byte records written and closed, opened again
 * read-only (as IOR's read phase opens it), then N independent MPI_File_read_at
 * of 8 bytes, each continuing the last, every record checked: what a read that
 * unblock leaves to MPI costs (tests/integration/fastpath_count.py counts its
 * instructions; docs/mpiio.md).  With -DREAD_PLAIN (mpiioreads_read) the
 * records are read with MPI_File_read at the individual pointer instead; with
 * -DREAD_RDWR (mpiioreads_rdwr) the file is opened again MPI_MODE_RDWR, as HDF5
 * opens one: a handle unblock follows, where this rank holds none of its bytes.
 * usage: mpiioreads N [DIR]   (the file in DIR, default the current directory;
 * prints "ok" when every record read is what was written; exits 1 otherwise) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    char path[4096];
    snprintf(path, sizeof path, "%s/mpiioreads.dat", argc > 2 ? argv[2] : ".");
    MPI_File fh;
    MPI_File_delete(path, MPI_INFO_NULL); /* (a longer one of an earlier run) */
    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "mpiioreads: cannot create mpiioreads.dat\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long long *all = malloc((size_t)n * 8 + 8);
    for (int i = 0; i < n; i++)
        all[i] = 5LL * i + 3;
    MPI_File_write_at(fh, 0, all, n * 8, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
#ifdef READ_RDWR
    int mode = MPI_MODE_RDWR;
#else
    int mode = MPI_MODE_RDONLY;
#endif
    if (MPI_File_open(MPI_COMM_SELF, path, mode, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "mpiioreads: cannot open mpiioreads.dat\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        long long v = -1;
#ifdef READ_PLAIN
        MPI_File_read(fh, &v, 8, MPI_BYTE, MPI_STATUS_IGNORE);
#else
        MPI_File_read_at(fh, (MPI_Offset)i * 8, &v, 8, MPI_BYTE, MPI_STATUS_IGNORE);
#endif
        bad += v != 5LL * i + 3;
    }
    /* (past the end: MPI reads nothing, the status says 0) */
    MPI_Status st;
    long long v = -7;
    int got = -1;
    MPI_File_read_at(fh, (MPI_Offset)n * 8, &v, 8, MPI_BYTE, &st);
    MPI_Get_count(&st, MPI_BYTE, &got);
    bad += got != 0 || v != -7;
    MPI_File_close(&fh);
    printf("%s: %d reads, %d wrong\n", bad ? "MISMATCH" : "ok", n, bad);
    free(all);
    MPI_Finalize();
    return bad != 0;
}
