/* pmpi_tool.c — a minimal PMPI tool of the kind users stack with unblock (mpiP,
 * Darshan): it defines MPI_Send, MPI_Recv, MPI_Sendrecv and MPI_Finalize, counts,
 * calls the PMPI_ versions, and at MPI_Finalize writes its counts to
 * $PMPI_TOOL_DIR/tool-<rank>.txt.  It also wraps the Fortran mpi_send_ and
 * mpi_recv_ (mpif.h), calling the next definition (MPI's binding), writes
 * their counts on a second line when there were any, and writes the file at
 * mpi_finalize_ too.  Preloaded after unblock,
 * it must see every call exactly as without unblock. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long sends, recvs, sendrecvs, fsends, frecvs;

typedef void (*fsend_t)(void *, void *, void *, void *, void *, void *, void *);
typedef void (*frecv_t)(void *, void *, void *, void *, void *, void *, void *, void *);

void mpi_send_(void *buf, void *count, void *type, void *dest, void *tag, void *comm, void *ierr)
{
    static fsend_t next;
    if (next == NULL)
        next = (fsend_t)dlsym(RTLD_NEXT, "mpi_send_");
    fsends++;
    next(buf, count, type, dest, tag, comm, ierr);
}

void mpi_recv_(void *buf, void *count, void *type, void *src, void *tag, void *comm,
               void *status, void *ierr)
{
    static frecv_t next;
    if (next == NULL)
        next = (frecv_t)dlsym(RTLD_NEXT, "mpi_recv_");
    frecvs++;
    next(buf, count, type, src, tag, comm, status, ierr);
}

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

static void write_counts(void)
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
            if (fsends + frecvs > 0)
                fprintf(f, "fsend %ld frecv %ld\n", fsends, frecvs);
            fclose(f);
        }
    }
}

int MPI_Finalize(void)
{
    write_counts();
    return PMPI_Finalize();
}

/* (Open MPI's Fortran binding calls PMPI_Finalize, MPICH's MPI_Finalize: the
 * file is written again with the same counts.) */
void mpi_finalize_(void *ierr)
{
    static void (*next)(void *);
    if (next == NULL)
        next = (void (*)(void *))dlsym(RTLD_NEXT, "mpi_finalize_");
    write_counts();
    next(ierr);
}
