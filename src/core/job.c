/* job.c — the process's place in its job, from its launcher's variables (job.h).
 *
 * Used by the launcher (which MPI a script needs, --log=info), by the constructor
 * (unblock_g.job, in the statistics) and by the completion thread (how many ranks
 * share this node's cores).  Only getenv-style reads and strtol: safe in the
 * constructor, before libc's stdio is of any use. */
#include "core/job.h"

#include <stdlib.h>
#include <string.h>

/* A non-negative integer, or -1 (absent, empty, trailing junk, negative). */
static int number(const char *s)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end == '\0' && v >= 0 && v <= 0x7fffffff ? (int)v : -1;
}

int unblock_job_slurm_tasks_on(const char *list, int node)
{
    if (list == NULL || node < 0)
        return -1;
    const char *p = list;
    while (*p) {
        char *end;
        long tasks = strtol(p, &end, 10);
        if (end == p || tasks < 0)
            return -1;
        long times = 1;
        p = end;
        if (p[0] == '(') { /* "N(xR)": R nodes with N tasks each */
            if (p[1] != 'x')
                return -1;
            times = strtol(p + 2, &end, 10);
            if (end == p + 2 || *end != ')' || times < 1)
                return -1;
            p = end + 1;
        }
        if (node < times)
            return (int)tasks;
        node -= (int)times;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return -1;
    }
    return -1;
}

void unblock_job_from_env(unblock_job_t *job, const char *(*get)(const char *name))
{
    memset(job, 0, sizeof(*job));
    job->rank = job->size = job->local_rank = job->local_size = -1;
    if (get("OMPI_COMM_WORLD_SIZE") != NULL) {
        job->launcher = UNBLOCK_JOB_OPENMPI;
        job->rank = number(get("OMPI_COMM_WORLD_RANK"));
        job->size = number(get("OMPI_COMM_WORLD_SIZE"));
        job->local_rank = number(get("OMPI_COMM_WORLD_LOCAL_RANK"));
        job->local_size = number(get("OMPI_COMM_WORLD_LOCAL_SIZE"));
        return;
    }
    /* Slurm's pmi2 plugin sets PMI_RANK and PMI_FD too, but not MPI_LOCALNRANKS. */
    if (get("MPI_LOCALNRANKS") != NULL) {
        job->launcher = UNBLOCK_JOB_HYDRA;
        job->rank = number(get("PMI_RANK"));
        job->size = number(get("PMI_SIZE"));
        job->local_rank = number(get("MPI_LOCALRANKID"));
        job->local_size = number(get("MPI_LOCALNRANKS"));
        return;
    }
    const char *step = get("SLURM_STEP_ID");
    if (step == NULL)
        step = get("SLURM_STEPID");
    if (step != NULL && get("SLURM_PROCID") != NULL) {
        job->launcher = UNBLOCK_JOB_SLURM;
        job->rank = number(get("SLURM_PROCID"));
        job->size = number(get("SLURM_STEP_NUM_TASKS"));
        if (job->size < 0)
            job->size = number(get("SLURM_NTASKS"));
        job->local_rank = number(get("SLURM_LOCALID"));
        int node = number(get("SLURM_NODEID"));
        job->local_size = unblock_job_slurm_tasks_on(get("SLURM_STEP_TASKS_PER_NODE"),
                                                     node < 0 ? 0 : node);
        const char *type = get("SLURM_MPI_TYPE");
        if (type != NULL) {
            size_t n = strlen(type);
            if (n >= sizeof(job->mpi_type))
                n = sizeof(job->mpi_type) - 1;
            memcpy(job->mpi_type, type, n);
            job->mpi_type[n] = '\0';
        }
    }
}

const char *unblock_job_launcher_name(unblock_job_launcher_t launcher)
{
    switch (launcher) {
    case UNBLOCK_JOB_OPENMPI:
        return "openmpi";
    case UNBLOCK_JOB_HYDRA:
        return "hydra";
    case UNBLOCK_JOB_SLURM:
        return "slurm";
    default:
        return "none";
    }
}
