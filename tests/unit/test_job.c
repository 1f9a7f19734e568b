/* test_job.c — the job placement read from launchers' variables (core/job.c):
 * Slurm's tasks-per-node lists, and which launcher wins when a rank carries the
 * variables of several (mpirun or Hydra inside a Slurm allocation). */
#include "core/job.h"
#include "test.h"

/* The environment of one case: NAME=VALUE strings, NULL-terminated. */
static const char *const *env_now;

static const char *env_get(const char *name)
{
    size_t n = strlen(name);
    for (const char *const *e = env_now; *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

static unblock_job_t place(const char *const *env)
{
    unblock_job_t job;
    env_now = env;
    unblock_job_from_env(&job, env_get);
    return job;
}

static void test_tasks_per_node(void)
{
    ASSERT_EQ(unblock_job_slurm_tasks_on("2", 0), 2);
    ASSERT_EQ(unblock_job_slurm_tasks_on("2", 1), -1);
    ASSERT_EQ(unblock_job_slurm_tasks_on("2(x3),1", 0), 2);
    ASSERT_EQ(unblock_job_slurm_tasks_on("2(x3),1", 2), 2);
    ASSERT_EQ(unblock_job_slurm_tasks_on("2(x3),1", 3), 1);
    ASSERT_EQ(unblock_job_slurm_tasks_on("2(x3),1", 4), -1);
    ASSERT_EQ(unblock_job_slurm_tasks_on("4,3,1(x2)", 1), 3);
    ASSERT_EQ(unblock_job_slurm_tasks_on("4,3,1(x2)", 3), 1);
    ASSERT_EQ(unblock_job_slurm_tasks_on("", 0), -1);
    ASSERT_EQ(unblock_job_slurm_tasks_on(NULL, 0), -1);
    ASSERT_EQ(unblock_job_slurm_tasks_on("2(3)", 0), -1);
    ASSERT_EQ(unblock_job_slurm_tasks_on("2(x0)", 0), -1);
    ASSERT_EQ(unblock_job_slurm_tasks_on("2;1", 1), -1);
    ASSERT_EQ(unblock_job_slurm_tasks_on("x", 0), -1);
}

static void test_srun_task(void)
{
    static const char *const env[] = {
        "SLURM_STEP_ID=0", "SLURM_PROCID=5", "SLURM_LOCALID=1", "SLURM_NODEID=2",
        "SLURM_STEP_NUM_TASKS=7", "SLURM_NTASKS=8", "SLURM_STEP_TASKS_PER_NODE=2(x3),1",
        "SLURM_MPI_TYPE=pmix", "PMIX_RANK=5", NULL
    };
    unblock_job_t job = place(env);
    ASSERT_EQ(job.launcher, UNBLOCK_JOB_SLURM);
    ASSERT_EQ(job.rank, 5);
    ASSERT_EQ(job.size, 7); /* the step's tasks, not the allocation's */
    ASSERT_EQ(job.local_rank, 1);
    ASSERT_EQ(job.local_size, 2);
    ASSERT_STREQ(job.mpi_type, "pmix");
    ASSERT_STREQ(unblock_job_launcher_name(job.launcher), "slurm");
}

/* srun --mpi=pmi2 sets PMI_RANK and PMI_FD as Hydra does, but no MPI_LOCALNRANKS. */
static void test_srun_pmi2_is_slurm(void)
{
    static const char *const env[] = {
        "SLURM_STEPID=3", "SLURM_PROCID=1", "SLURM_LOCALID=1", "SLURM_NODEID=0",
        "SLURM_NTASKS=2", "SLURM_STEP_TASKS_PER_NODE=2", "SLURM_MPI_TYPE=pmi2",
        "PMI_FD=11", "PMI_RANK=1", "PMI_SIZE=2", NULL
    };
    unblock_job_t job = place(env);
    ASSERT_EQ(job.launcher, UNBLOCK_JOB_SLURM);
    ASSERT_EQ(job.rank, 1);
    ASSERT_EQ(job.size, 2);
    ASSERT_EQ(job.local_size, 2);
    ASSERT_STREQ(job.mpi_type, "pmi2");
}

/* mpirun inside an sbatch job: every rank also has the SLURM_* of the batch step
 * (rank 0, local 0); Open MPI's variables win. */
static void test_mpirun_inside_slurm(void)
{
    static const char *const env[] = {
        "SLURM_STEP_ID=0", "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NTASKS=2",
        "SLURM_STEP_TASKS_PER_NODE=1", "OMPI_COMM_WORLD_SIZE=2", "OMPI_COMM_WORLD_RANK=1",
        "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2", NULL
    };
    unblock_job_t job = place(env);
    ASSERT_EQ(job.launcher, UNBLOCK_JOB_OPENMPI);
    ASSERT_EQ(job.rank, 1);
    ASSERT_EQ(job.local_rank, 1);
    ASSERT_EQ(job.local_size, 2);
    ASSERT_STREQ(job.mpi_type, "");
}

/* Hydra under Slurm starts its proxies with srun: one task per node. */
static void test_hydra_inside_slurm(void)
{
    static const char *const env[] = {
        "SLURM_STEP_ID=0", "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_STEP_TASKS_PER_NODE=1",
        "PMI_FD=6", "PMI_RANK=3", "PMI_SIZE=4", "MPI_LOCALRANKID=1", "MPI_LOCALNRANKS=2", NULL
    };
    unblock_job_t job = place(env);
    ASSERT_EQ(job.launcher, UNBLOCK_JOB_HYDRA);
    ASSERT_EQ(job.rank, 3);
    ASSERT_EQ(job.size, 4);
    ASSERT_EQ(job.local_rank, 1);
    ASSERT_EQ(job.local_size, 2);
}

/* A batch script's shell, or a program it runs without srun: no step, no task. */
static void test_batch_script_is_no_task(void)
{
    static const char *const env[] = {
        "SLURM_JOB_ID=7", "SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NTASKS=2",
        "SLURM_TASKS_PER_NODE=2", NULL
    };
    unblock_job_t job = place(env);
    ASSERT_EQ(job.launcher, UNBLOCK_JOB_NONE);
    ASSERT_EQ(job.rank, -1);
    ASSERT_EQ(job.local_size, -1);
    static const char *const none[] = { NULL };
    job = place(none);
    ASSERT_EQ(job.launcher, UNBLOCK_JOB_NONE);
    ASSERT_STREQ(unblock_job_launcher_name(job.launcher), "none");
}

/* Malformed values give "unknown" (-1), never a wrong number. */
static void test_bad_values(void)
{
    static const char *const env[] = {
        "SLURM_STEP_ID=0", "SLURM_PROCID=1x", "SLURM_LOCALID=-1", "SLURM_NTASKS=",
        "SLURM_STEP_TASKS_PER_NODE=two", "SLURM_MPI_TYPE=a-very-long-plugin-name-indeed", NULL
    };
    unblock_job_t job = place(env);
    ASSERT_EQ(job.launcher, UNBLOCK_JOB_SLURM);
    ASSERT_EQ(job.rank, -1);
    ASSERT_EQ(job.size, -1);
    ASSERT_EQ(job.local_rank, -1);
    ASSERT_EQ(job.local_size, -1);
    ASSERT_EQ(strlen(job.mpi_type), sizeof(job.mpi_type) - 1);
}

int main(void)
{
    RUN_TEST(test_tasks_per_node);
    RUN_TEST(test_srun_task);
    RUN_TEST(test_srun_pmi2_is_slurm);
    RUN_TEST(test_mpirun_inside_slurm);
    RUN_TEST(test_hydra_inside_slurm);
    RUN_TEST(test_batch_script_is_no_task);
    RUN_TEST(test_bad_values);
    return TEST_SUMMARY();
}
