/* counts.c — the per-thread slabs of call counts (counts.h). */
#define _GNU_SOURCE
#include "core/counts.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct slab {
    unblock_counter_t c[UNBLOCK_COUNT_SLOTS];
    struct slab *next; /* the list of every slab, newest first; never shortened */
    int free;          /* 1: its thread ended; a new thread may take it over */
} slab_t;

static slab_t *slabs;
/* Where no slab can be mapped: shared by such threads, whose counts may then race. */
static slab_t spare;
static pthread_key_t key;
static int key_state; /* 0 none yet, 1 being made, 2 made, 3 failed */

/* The thread ends: its slab, counts kept, is free for the next new thread. */
static void slab_release(void *p)
{
    slab_t *s = p;
    if (s != NULL && s != &spare)
        __atomic_store_n(&s->free, 1, __ATOMIC_RELEASE);
    unblock_tls.count_slab = NULL;
}

static void key_make(void)
{
    int expect = 0;
    if (__atomic_compare_exchange_n(&key_state, &expect, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        __atomic_store_n(&key_state, pthread_key_create(&key, slab_release) == 0 ? 2 : 3,
                         __ATOMIC_RELEASE);
}

/* A free slab, taken over by compare-and-swap (so a signal handler that counts
 * while this thread is here takes another one). */
static slab_t *slab_reuse(void)
{
    for (slab_t *s = __atomic_load_n(&slabs, __ATOMIC_ACQUIRE); s != NULL; s = s->next) {
        int one = 1;
        if (__atomic_load_n(&s->free, __ATOMIC_RELAXED) &&
            __atomic_compare_exchange_n(&s->free, &one, 0, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return s;
    }
    return NULL;
}

unblock_counter_t *unblock_count_slab_new(void)
{
    key_make();
    slab_t *s = slab_reuse();
    if (s == NULL) {
        /* The system call itself: the library's own mmap is a counted wrapper. */
        void *p = (void *)syscall(SYS_mmap, NULL, sizeof(slab_t), PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0L);
        if (p == MAP_FAILED) {
            unblock_tls.count_slab = spare.c;
            return spare.c;
        }
        s = p;
        s->next = __atomic_load_n(&slabs, __ATOMIC_RELAXED);
        while (!__atomic_compare_exchange_n(&slabs, &s->next, s, 1, __ATOMIC_ACQ_REL,
                                            __ATOMIC_RELAXED))
            ;
    }
    unblock_tls.count_slab = s->c;
    if (__atomic_load_n(&key_state, __ATOMIC_ACQUIRE) == 2)
        pthread_setspecific(key, s);
    return s->c;
}

uint64_t unblock_count_get(unsigned i)
{
    uint64_t n = __atomic_load_n(&spare.c[i], __ATOMIC_RELAXED);
    for (slab_t *s = __atomic_load_n(&slabs, __ATOMIC_ACQUIRE); s != NULL; s = s->next)
        n += __atomic_load_n(&s->c[i], __ATOMIC_RELAXED);
    return n;
}
