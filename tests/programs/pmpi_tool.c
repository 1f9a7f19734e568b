/* pmpi_tool.c — a minimal PMPI tool of the kind users stack with unblock (mpiP,
 * Darshan): it defines MPI_Send, MPI_Recv, MPI_Sendrecv and MPI_Finalize, counts,
 * calls the PMPI_ versions, and at MPI_Finalize writes its counts to
 * $PMPI_TOOL_DIR/tool-<rank>.txt.  Preloaded after unblock, it must see every call
 * exactly as without unblock. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long sends, recvs, sendrecvs;

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    recvs++;
    return PMPI_Recv(buf, count, type, src, tag, comm, status);
}

int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                 void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    sendrecvs++;
    return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,
                         status);
}

int MPI_Finalize(void)
{
    int rank;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *dir = getenv("PMPI_TOOL_DIR");
    if (dir) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/tool-%d.txt", dir, rank);
        FILE *f = fopen(path, "w");
        if (f) {
            fprintf(f, "send %ld recv %ld sendrecv %ld\n", sends, recvs, sendrecvs);
            fclose(f);
        }
    }
    return PMPI_Finalize();
}
