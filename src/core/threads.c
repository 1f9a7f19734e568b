/* threads.c — threads the MPI library starts belong to MPI; the program's threads
 * get an alternate signal stack for the fault handler.
 *
 * Open MPI starts its PMIx and libevent progress threads, and ROMIO its helper
 * threads, from inside MPI calls.  Their POSIX calls are MPI's own and must pass
 * through like the calls MPI makes on the program's threads: a thread created while
 * its creator is inside an MPI call starts with the "inside MPI" depth set. */
#define _GNU_SOURCE
#include "core/core.h"
#include "interpose/interpose.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

int unblock_spare_core_of(int cpus, long online, long local)
{
    /* Bound (fewer CPUs than online): the CPUs are this process's own; else
     * they are shared by the ranks of the node. */
    return cpus < online ? cpus > 1 : cpus > (local > 0 ? local : 1);
}

int unblock_spare_core(void)
{
    static int known = -1;
    int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (v >= 0)
        return v;
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    const char *ranks = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (ranks == NULL)
        ranks = getenv("MPI_LOCALNRANKS"); /* MPICH's launcher */
    v = unblock_spare_core_of(cpus, sysconf(_SC_NPROCESSORS_ONLN),
                              ranks ? strtol(ranks, NULL, 10) : 1);
    __atomic_store_n(&known, v, __ATOMIC_RELAXED);
    return v;
}

typedef struct {
    void *(*fn)(void *);
    void *arg;
    int in_mpi;
} mpi_thread_start_t;

void unblock_protect_thread_init(void);
void unblock_protect_thread_fini(void);

static void *mpi_thread_main(void *p)
{
    mpi_thread_start_t start = *(mpi_thread_start_t *)p;
    free(p);
    unblock_tls.mpi_depth = start.in_mpi;
    if (!start.in_mpi && unblock_g.protect_ready)
        unblock_protect_thread_init(); /* the program's threads may fault on our pages */
    void *ret = start.fn(start.arg);
    unblock_protect_thread_fini();
    return ret;
}

UNBLOCK_REAL_DECL(int, pthread_create,
                  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));

UNBLOCK_EXPORT int UNBLOCK_WRAP(pthread_create)(pthread_t *thread, const pthread_attr_t *attr,
                                  void *(*fn)(void *), void *arg)
{
    unblock_real_pthread_create_t real = UNBLOCK_REAL(pthread_create);
    if (unblock_tls.mpi_depth == 0 && !unblock_tls.runtime)
        __atomic_add_fetch(&unblock_g.program_threads, 1, __ATOMIC_RELAXED);
    if (!unblock_g.active || (unblock_tls.mpi_depth == 0 && !unblock_g.protect_ready))
        return real(thread, attr, fn, arg);
    mpi_thread_start_t *start = malloc(sizeof(*start));
    if (start == NULL)
        return real(thread, attr, fn, arg);
    start->fn = fn;
    start->arg = arg;
    start->in_mpi = unblock_tls.mpi_depth > 0;
    int rc = real(thread, attr, mpi_thread_main, start);
    if (rc != 0)
        free(start);
    return rc;
}
