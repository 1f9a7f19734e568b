/* job.h — where this process sits in its parallel job, as the launcher that started
 * it says in the environment: Open MPI's mpirun, MPICH's Hydra (mpiexec), or a
 * Slurm job step (srun).  Read before MPI_Init (the launcher and the constructor);
 * MPI's own rank, once known, is unblock_g.rank. */
#ifndef UNBLOCK_JOB_H
#define UNBLOCK_JOB_H

typedef enum {
    UNBLOCK_JOB_NONE = 0, /* no launcher: a serial run, a singleton, a batch script */
    UNBLOCK_JOB_OPENMPI,  /* OMPI_COMM_WORLD_* (mpirun.openmpi, also inside Slurm) */
    UNBLOCK_JOB_HYDRA,    /* PMI_RANK with MPI_LOCALNRANKS (mpirun.mpich, also inside Slurm) */
    UNBLOCK_JOB_SLURM     /* a task of an srun step: SLURM_STEP_ID, SLURM_PROCID, ... */
} unblock_job_launcher_t;

typedef struct {
    unblock_job_launcher_t launcher;
    int rank, size;             /* in the job; -1 where the launcher does not say */
    int local_rank, local_size; /* on this node; -1 where the launcher does not say */
    char mpi_type[16];          /* Slurm: the srun --mpi plugin (SLURM_MPI_TYPE), else "" */
} unblock_job_t;

/* Fills *job from the environment as `get` (getenv, or a test's table) reads it.
 * The first launcher that speaks wins, in the order above: a rank that mpirun or
 * Hydra started inside a Slurm allocation still carries the SLURM_* variables
 * of the step that started the daemon (rank 0 of 1 task, for every rank), so
 * those are read only when neither MPI launcher is there.  A batch script's
 * shell (no SLURM_STEP_ID) is no task of a step.  Never allocates. */
void unblock_job_from_env(unblock_job_t *job, const char *(*get)(const char *name));

/* The launcher's name for messages and the statistics: "openmpi", "hydra",
 * "slurm" or "none". */
const char *unblock_job_launcher_name(unblock_job_launcher_t launcher);

/* The number of tasks on node `node` of a Slurm tasks-per-node list such as
 * "2(x3),1" (SLURM_STEP_TASKS_PER_NODE); -1 if the list is malformed or shorter. */
int unblock_job_slurm_tasks_on(const char *list, int node);

#endif
