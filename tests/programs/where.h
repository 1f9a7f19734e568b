/* where.h — a test program says where its rank ran: OUTDIR/where-<rank>.txt holds
 * "rank R of N on HOST via LAUNCHER", HOST as MPI names the processor and LAUNCHER
 * as the rank's environment tells (mpirun, mpiexec/Hydra, or srun and its --mpi
 * plugin).  The Slurm tests check that a job had N distinct ranks, each once, and
 * the plugin asked for: a job of singletons (an MPI that cannot talk to the
 * plugin) writes where-0.txt N times over, "rank 0 of 1". */
#ifndef TEST_WHERE_H
#define TEST_WHERE_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void where_write(const char *outdir, int rank, int size)
{
    char host[MPI_MAX_PROCESSOR_NAME + 1], path[4096], via[64];
    int len = 0;
    MPI_Get_processor_name(host, &len);
    host[len] = '\0';
    if (getenv("OMPI_COMM_WORLD_SIZE"))
        snprintf(via, sizeof(via), "mpirun (Open MPI)");
    else if (getenv("MPI_LOCALNRANKS"))
        snprintf(via, sizeof(via), "mpiexec (Hydra)");
    else if (getenv("SLURM_STEP_ID") && getenv("SLURM_MPI_TYPE"))
        snprintf(via, sizeof(via), "srun --mpi=%.40s", getenv("SLURM_MPI_TYPE"));
    else
        snprintf(via, sizeof(via), "no launcher");
    snprintf(path, sizeof(path), "%s/where-%d.txt", outdir, rank);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fprintf(f, "rank %d of %d on %s via %s\n", rank, size, host, via);
    fclose(f);
}

#endif
