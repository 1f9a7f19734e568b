/* bufs.c — the warm buffers of MPI-IO write-behind (docs/mpiio.md): large
 * buffers freed by stage 1 and by images, kept for the next block.
 *
 * A block's buffers were fresh memory each time: a rank writing 32 MiB made
 * 8,000 more page faults than the view's run, each a kernel entry, a zeroed
 * page and a charge to the memory cgroup.  A few large ones freed are kept
 * (any thread frees them: the I/O thread its images) and the next block takes
 * the smallest that fits (a stage-1 buffer, which grows on, the largest); a
 * fresh one is a mapping of huge pages where it is large enough (map_big). */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "memory/memory.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_SZ UNBLOCK_HUGE_PAGE

static void pool_keep(char *p, size_t cap);

/* A buffer for min bytes or more (*cap: its length): up to 512 KiB from malloc
 * (warm memory, no system call), above a mapping of its own made of whole huge
 * pages, aligned, the kernel asked to back it with them: a block's buffer then
 * costs one fault a 2 MiB
 * instead of one a page (4 MiB written 8 bytes at a time here: 0.19 ms
 * against 1.34, medians of 100; from malloc it came from the memfd pool, 2.2
 * us a page).  Two buffers of a 1 MiB block (images) share one huge page: the
 * second half is kept for the next.  Without huge pages (the hint is only a
 * hint), or `small` (a file's first image: a huge page is zeroed whole at the
 * first touch, 0.1 ms more for a file of 64 KiB a rank), a fault a page. */
static char *map_big(size_t min, size_t *cap, int small)
{
    size_t pg = 4096, len;
    if (min <= HUGE_SZ / 4) {
        *cap = min;
        return malloc(min);
    }
    if (small) {
        len = (min + pg - 1) & ~(pg - 1);
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        *cap = len;
        return m;
    }
    len = (min + HUGE_SZ - 1) & ~(HUGE_SZ - 1);
    char *p = unblock_map_huge(len);
    if (p == NULL)
        return NULL;
    if (min <= HUGE_SZ / 2) { /* (a half for the next) */
        pool_keep(p + HUGE_SZ / 2, HUGE_SZ / 2);
        len = HUGE_SZ / 2;
    }
    *cap = len;
    return p;
}

#define POOL_N 4
#define POOL_MAX ((size_t)8 << 20) /* (at most 32 MiB kept) */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *p;
    size_t cap;
} pool[POOL_N];

/* A buffer of at least min bytes (*cap: how many): the smallest kept one that
 * fits, or (MIO_BUF_GROW: a stage-1 buffer, which grows on) the largest. */
char *mio_buf_get(size_t min, size_t *cap, int flags)
{
    int grow = (flags & MIO_BUF_GROW) != 0;
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
    if (min >= MIO_BUF_MIN)
        return map_big(min, cap, (flags & MIO_BUF_SMALL) != 0);
    *cap = min;
    return malloc(min);
}

static void unmap_or_free(char *p, size_t cap)
{
    if (cap > HUGE_SZ / 4) /* (map_big's mappings) */
        munmap(p, cap);
    else
        free(p);
}

static void pool_keep(char *p, size_t cap)
{
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
            size_t oldcap = pool[at].cap;
            pool[at].p = p;
            pool[at].cap = cap;
            pthread_mutex_unlock(&pool_lock);
            if (old)
                unmap_or_free(old, oldcap);
            return;
        }
        pthread_mutex_unlock(&pool_lock);
    }
    unmap_or_free(p, cap);
}

void mio_buf_put(char *p, size_t cap)
{
    if (p != NULL)
        pool_keep(p, cap);
}

void mio_buf_release(void)
{
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < POOL_N; i++) {
        if (pool[i].p)
            unmap_or_free(pool[i].p, pool[i].cap);
        pool[i].p = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
}

