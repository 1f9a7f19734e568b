/* threads.c — threads the MPI library starts belong to MPI; the program's threads
 * get an alternate signal stack for the fault handler.
 *
 * Open MPI starts its PMIx and libevent progress threads, and ROMIO its helper
 * threads, from inside MPI calls.  Their POSIX calls are MPI's own and must pass
 * through like the calls MPI makes on the program's threads: a thread created while
 * its creator is inside an MPI call starts with the "inside MPI" depth set. */
#define _GNU_SOURCE
#include "protect/protect.h"
#include "interpose/interpose.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct {
    void *(*fn)(void *);
    void *arg;
    int in_mpi;
} mpi_thread_start_t;

static void thread_ends(void *unused)
{
    (void)unused;
    unblock_protect_thread_fini();
}

static void *mpi_thread_main(void *p)
{
    mpi_thread_start_t start = *(mpi_thread_start_t *)p;
    free(p);
    unblock_tls.mpi_depth = start.in_mpi;
    unblock_tls.program = !start.in_mpi; /* (its file reads wait for receives: protect.h) */
    if (!start.in_mpi && unblock_g.protect_ready)
        unblock_protect_thread_init(); /* the program's threads may fault on our pages */
    void *ret;
    /* The thread's alternate stack and held-signals page go with it however it
     * ends: by returning, by pthread_exit or by cancellation (the cleanup
     * handler runs in both of those). */
    pthread_cleanup_push(thread_ends, NULL);
    ret = start.fn(start.arg);
    pthread_cleanup_pop(1);
    return ret;
}

UNBLOCK_REAL_DECL(int, pthread_create,
                  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));

UNBLOCK_EXPORT int UNBLOCK_WRAP(pthread_create)(pthread_t *thread, const pthread_attr_t *attr,
                                  void *(*fn)(void *), void *arg)
{
    unblock_real_pthread_create_t real = UNBLOCK_REAL(pthread_create);
    if (unblock_tls.mpi_depth == 0 && !unblock_tls.runtime) {
        void (*hook)(void) = __atomic_load_n(&unblock_g.before_first_thread, __ATOMIC_ACQUIRE);
        if (hook && __atomic_load_n(&unblock_g.program_threads, __ATOMIC_SEQ_CST) == 0)
            hook();
        __atomic_add_fetch(&unblock_g.program_threads, 1, __ATOMIC_SEQ_CST);
    }
    if (!unblock_g.active || (unblock_tls.mpi_depth == 0 && !unblock_g.protect_ready))
        return real(thread, attr, fn, arg);
    mpi_thread_start_t *start = malloc(sizeof(*start));
    if (start == NULL)
        return real(thread, attr, fn, arg);
    start->fn = fn;
    start->arg = arg;
    /* (a thread a runtime thread starts belongs to MPI too: UCX starts its own
     * lazily, from whichever thread first drives a connection) */
    start->in_mpi = unblock_tls.mpi_depth > 0 || unblock_tls.runtime;
    int rc = real(thread, attr, mpi_thread_main, start);
    if (rc != 0)
        free(start);
    return rc;
}
