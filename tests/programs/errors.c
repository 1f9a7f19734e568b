/* errors.c — bad arguments must come back from MPI with the same error with and
 * without unblock.  With MPI_ERRORS_RETURN on MPI_COMM_WORLD, makes calls MPI must
 * refuse and writes each error class (and, for files, what the call returned) to
 * OUTDIR/rank-<r>.txt.  usage: errors OUTDIR */
#include <mpi.h>
#include <stdio.h>

static void record(FILE *f, const char *what, int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    fprintf(f, "%-24s %s class %d\n", what, rc == MPI_SUCCESS ? "ok   " : "error", cls);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argc > 1 ? argv[1] : ".", rank);
    FILE *f = fopen(path, "w");
    record(f, "send to bad rank", MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD));
    record(f, "send negative count", MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD));
    record(f, "recv bad tag", MPI_Recv(&x, 1, MPI_INT, 0, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    record(f, "bcast bad root", MPI_Bcast(&x, 1, MPI_INT, size + 1, MPI_COMM_WORLD));
    record(f, "sendrecv to self", MPI_Sendrecv(&rank, 1, MPI_INT, rank, 3, &x, 1, MPI_INT, rank, 3,
                                               MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    fprintf(f, "received %d\n", x);
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    record(f, "file open missing", MPI_File_open(MPI_COMM_WORLD, "/nonexistent/dir/file",
                                                 MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    fclose(f);
    MPI_Finalize();
    return 0;
}
