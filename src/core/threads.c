/* threads.c — threads the MPI library starts belong to MPI.
 *
 * Open MPI starts its PMIx and libevent progress threads, and ROMIO its helper
 * threads, from inside MPI calls.  Their POSIX calls are MPI's own and must pass
 * through like the calls MPI makes on the program's threads: a thread created while
 * its creator is inside an MPI call starts with the "inside MPI" depth set. */
#define _GNU_SOURCE
#include "core/core.h"
#include "interpose/interpose.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct {
    void *(*fn)(void *);
    void *arg;
} mpi_thread_start_t;

static void *mpi_thread_main(void *p)
{
    mpi_thread_start_t start = *(mpi_thread_start_t *)p;
    free(p);
    unblock_tls.mpi_depth = 1;
    return start.fn(start.arg);
}

UNBLOCK_REAL_DECL(int, pthread_create,
                  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));

UNBLOCK_EXPORT int UNBLOCK_WRAP(pthread_create)(pthread_t *thread, const pthread_attr_t *attr,
                                  void *(*fn)(void *), void *arg)
{
    unblock_real_pthread_create_t real = UNBLOCK_REAL(pthread_create);
    if (unblock_tls.mpi_depth == 0 || !unblock_g.active)
        return real(thread, attr, fn, arg);
    mpi_thread_start_t *start = malloc(sizeof(*start));
    if (start == NULL)
        return real(thread, attr, fn, arg);
    start->fn = fn;
    start->arg = arg;
    int rc = real(thread, attr, mpi_thread_main, start);
    if (rc != 0)
        free(start);
    return rc;
}
