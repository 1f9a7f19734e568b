/* dlopen_mpi.c — a program that loads MPI at run time (as plug-in hosts and
 * language runtimes do) and finds its functions through the global scope.  Built
 * against one MPI's mpi.h, never linked with it.  Sends a token around a ring and
 * writes OUTDIR/rank-<r>.txt.  usage: dlopen_mpi OUTDIR */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef MPI_SONAME
#error define MPI_SONAME
#endif

static void *need(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p) {
        fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (!dlopen(MPI_SONAME, RTLD_NOW | RTLD_GLOBAL)) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int (*init)(int *, char ***) = need("MPI_Init");
    int (*fin)(void) = need("MPI_Finalize");
    int (*rank_of)(MPI_Comm, int *) = need("MPI_Comm_rank");
    int (*size_of)(MPI_Comm, int *) = need("MPI_Comm_size");
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = need("MPI_Send");
    int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *) = need("MPI_Recv");
#ifdef OPEN_MPI
    MPI_Comm world = need("ompi_mpi_comm_world");
    MPI_Datatype type_int = need("ompi_mpi_int");
#else
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_Datatype type_int = MPI_INT;
#endif
    init(&argc, &argv);
    int rank, size, token = 0;
    rank_of(world, &rank);
    size_of(world, &size);
    if (size > 1) {
        if (rank == 0) {
            token = 42;
            send(&token, 1, type_int, 1, 0, world);
            recv(&token, 1, type_int, size - 1, 0, world, MPI_STATUS_IGNORE);
        } else {
            recv(&token, 1, type_int, rank - 1, 0, world, MPI_STATUS_IGNORE);
            token += rank;
            send(&token, 1, type_int, (rank + 1) % size, 0, world);
        }
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argv[1], rank);
    FILE *f = fopen(path, "w");
    fprintf(f, "rank %d of %d token %d\n", rank, size, token);
    fclose(f);
    fin();
    return 0;
}
