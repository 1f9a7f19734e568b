/* bufs.c — the warm buffers of MPI-IO write-behind (docs/mpiio.md): large
 * buffers freed by stage 1 and by images, kept for the next block.
 *
 * A block's buffers were fresh memory each time: a rank writing 32 MiB made
 * 8,000 more page faults than the view's run, each a kernel entry, a zeroed
 * page and a charge to the memory cgroup.  A few large ones freed are kept
 * (any thread frees them: the I/O thread its images) and the next block takes
 * the smallest that fits (a stage-1 buffer, which grows on, the largest). */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"

#include <pthread.h>
#include <stdlib.h>

#define POOL_N 4
#define POOL_MAX ((size_t)8 << 20) /* (at most 32 MiB kept) */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *p;
    size_t cap;
} pool[POOL_N];

/* A buffer of at least min bytes (*cap: how many): the smallest kept one that
 * fits, or (grow: a stage-1 buffer, which grows on) the largest. */
char *mio_buf_get(size_t min, size_t *cap, int grow)
{
    if (min >= MIO_BUF_MIN) {
        pthread_mutex_lock(&pool_lock);
        int best = -1;
        for (int i = 0; i < POOL_N; i++)
            if (pool[i].p && pool[i].cap >= min &&
                (best < 0 || (grow ? pool[i].cap > pool[best].cap : pool[i].cap < pool[best].cap)))
                best = i;
        if (best >= 0) {
            char *p = pool[best].p;
            *cap = pool[best].cap;
            pool[best].p = NULL;
            pthread_mutex_unlock(&pool_lock);
            return p;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    *cap = min;
    return malloc(min);
}

void mio_buf_put(char *p, size_t cap)
{
    if (p == NULL)
        return;
    if (cap >= MIO_BUF_MIN && cap <= POOL_MAX) { /* (in a free place, or for a smaller one) */
        pthread_mutex_lock(&pool_lock);
        int at = -1;
        for (int i = 0; i < POOL_N && at < 0; i++)
            if (pool[i].p == NULL)
                at = i;
        if (at < 0) { /* (full: the smallest, if smaller) */
            at = 0;
            for (int i = 1; i < POOL_N; i++)
                if (pool[i].cap < pool[at].cap)
                    at = i;
            if (pool[at].cap >= cap)
                at = -1;
        }
        if (at >= 0) {
            char *old = pool[at].p;
            pool[at].p = p;
            pool[at].cap = cap;
            pthread_mutex_unlock(&pool_lock);
            free(old);
            return;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    free(p);
}

void mio_buf_release(void)
{
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < POOL_N; i++) {
        free(pool[i].p);
        pool[i].p = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
}

