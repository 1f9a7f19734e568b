/* alloc.c — the malloc family, with large blocks on pages of their own.
 *
 * Small requests, requests made inside MPI, and everything before start-up go to
 * glibc (__libc_malloc and friends: no dlsym, so no bootstrap problem).  Requests of
 * UNBLOCK_LARGE_ALLOC bytes or more are mapped directly and recorded in a sorted
 * registry, so that protect/ knows that all of their pages belong to one allocation
 * (memory.h says why that matters).  glibc does the same above its mmap threshold;
 * the difference is only that the block starts on a page boundary with its header
 * kept here instead of in front of it.
 *
 * In the link-time variant these are __wrap_malloc and so on (a static program's
 * libc.a defines malloc and __libc_malloc in one object, so they cannot be
 * replaced by name there).
 *
 * free/realloc of a block an operation still owns complete that operation first
 * (the design's rule: memory is never released under an in-flight transfer). */
#define _GNU_SOURCE
#include "memory/memory.h"
#include "core/core.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"
#include "protect/protect.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void __libc_free(void *);
void *__libc_memalign(size_t, size_t);
void *__libc_valloc(size_t);
void *__libc_pvalloc(size_t);


typedef struct {
    uintptr_t start;
    size_t len;    /* mapped length (whole pages) */
    size_t asked;  /* what the program asked for */
} block_t;

/* The registry: sorted by start, in memory of its own (never the malloc we serve). */
static block_t *blocks;
static size_t nblocks, capblocks;
static int reg_lock;

static void lock(void)
{
    while (__atomic_exchange_n(&reg_lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&reg_lock, __ATOMIC_RELAXED))
            __builtin_ia32_pause();
}

static void unlock(void)
{
    __atomic_store_n(&reg_lock, 0, __ATOMIC_RELEASE);
}

static size_t page(void)
{
    static size_t ps;
    if (ps == 0)
        ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

/* Index of the first block with start > p. */
static size_t upper(uintptr_t p)
{
    size_t lo = 0, hi = nblocks;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (blocks[mid].start <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int insert(uintptr_t start, size_t len, size_t asked)
{
    lock();
    if (nblocks == capblocks) {
        size_t ncap = capblocks ? capblocks * 2 : 1024;
        void *n = mmap(NULL, ncap * sizeof(block_t), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (n == MAP_FAILED) {
            unlock();
            return -1;
        }
        if (blocks) {
            memcpy(n, blocks, nblocks * sizeof(block_t));
            munmap(blocks, capblocks * sizeof(block_t));
        }
        blocks = n;
        capblocks = ncap;
    }
    size_t i = upper(start);
    memmove(&blocks[i + 1], &blocks[i], (nblocks - i) * sizeof(block_t));
    blocks[i] = (block_t){ start, len, asked };
    nblocks++;
    unblock_counter_add(&unblock_stats.large_blocks, 1);
    unblock_counter_add(&unblock_stats.large_bytes, asked);
    unblock_counter_add(&unblock_stats.large_overhead, len - asked);
    unlock();
    return 0;
}

/* The block starting exactly at p: its mapped length (0 if there is none) and
 * the size asked for; with `remove`, it leaves the registry. */
static size_t exact(uintptr_t p, size_t *asked, int remove)
{
    size_t len = 0;
    lock();
    size_t i = upper(p);
    if (i > 0 && blocks[i - 1].start == p) {
        len = blocks[i - 1].len;
        if (asked)
            *asked = blocks[i - 1].asked;
        if (remove) {
            memmove(&blocks[i - 1], &blocks[i], (nblocks - i) * sizeof(block_t));
            nblocks--;
        }
    }
    unlock();
    return len;
}

int unblock_memory_block_of(const void *addr, size_t len, uintptr_t *start, uintptr_t *end)
{
    uintptr_t p = (uintptr_t)addr;
    int found = 0;
    if (__atomic_load_n(&nblocks, __ATOMIC_RELAXED) == 0)
        return 0;
    lock();
    size_t i = upper(p);
    if (i > 0 && p + len <= blocks[i - 1].start + blocks[i - 1].len) {
        *start = blocks[i - 1].start;
        *end = blocks[i - 1].start + blocks[i - 1].len;
        found = 1;
    }
    unlock();
    return found;
}

/* Whether a request of n bytes gets a block of its own. */
static inline int large(size_t n)
{
    return n >= unblock_opt.large_alloc && unblock_opt.large_alloc > 0 &&
           unblock_g.protect_ready && unblock_tls.mpi_depth == 0;
}

/* A block's pages go back where they came from: the pool, or the kernel. */
static void unmap_block(void *p, size_t len)
{
    if (unblock_pool_has((uintptr_t)p, (uintptr_t)p + len))
        unblock_pool_free(p, len);
    else
        munmap(p, len);
}

static void *large_alloc(size_t n)
{
    size_t len = (n + page() - 1) & ~(page() - 1);
    if (len < n)
        return NULL;
    /* Larger blocks than UNBLOCK_POOL_LARGEST stay plain mappings, where the
     * kernel may back them with huge pages (the pool's memfd pages are 4 KiB
     * here: a first touch costs a fault per page). */
    void *p = unblock_opt.pool_largest == 0 || len <= unblock_opt.pool_largest
                  ? unblock_pool_alloc(len) : NULL;
    if (p == NULL) {
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        unblock_counter_add(&unblock_stats.pool_outside, 1);
    }
    if (insert((uintptr_t)p, len, n) != 0) {
        unmap_block(p, len);
        return NULL;
    }
    return p;
}

/* glibc's malloc_usable_size (ours overrides the name; glibc has no __libc_ alias). */
UNBLOCK_REAL_DECL(size_t, malloc_usable_size, (void *));
static size_t libc_usable(void *p)
{
    return UNBLOCK_REAL(malloc_usable_size)(p);
}

static inline int maybe_ours(const void *p)
{
    return p != NULL && ((uintptr_t)p & (page() - 1)) == 0 &&
           __atomic_load_n(&nblocks, __ATOMIC_RELAXED) != 0;
}

UNBLOCK_EXPORT void *UNBLOCK_WRAP(malloc)(size_t n)
{
    if (unblock_unlikely(large(n))) {
        void *p = large_alloc(n);
        if (p)
            return p;
    }
    return __libc_malloc(n);
}

UNBLOCK_EXPORT void *UNBLOCK_WRAP(calloc)(size_t k, size_t n)
{
    size_t total;
    if (unblock_unlikely(!__builtin_mul_overflow(k, n, &total) && large(total))) {
        void *p = large_alloc(total); /* fresh anonymous pages are zero */
        if (p)
            return p;
    }
    return __libc_calloc(k, n);
}

/* Our block at p, about to be freed or moved: what owns its pages finishes
 * first.  Its mapped length, or 0 if p is not ours (asked may be NULL). */
static size_t ours_settled(void *p, size_t *asked)
{
    size_t len = maybe_ours(p) ? exact((uintptr_t)p, asked, 0) : 0;
    if (len && __atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE))
        unblock_protect_release_range(p, len);
    return len;
}

UNBLOCK_EXPORT void UNBLOCK_WRAP(free)(void *p)
{
    if (ours_settled(p, NULL)) {
        size_t len = exact((uintptr_t)p, NULL, 1);
        if (len)
            unmap_block(p, len);
        return;
    }
    __libc_free(p);
}

UNBLOCK_EXPORT void *UNBLOCK_WRAP(realloc)(void *p, size_t n)
{
    size_t asked;
    size_t len = ours_settled(p, &asked);
    if (len) {
        if (n == 0) {
            UNBLOCK_WRAP(free)(p);
            return NULL;
        }
        if (n >= unblock_opt.large_alloc) {
            /* Stay on pages of our own: in the pool, in place when the pages
             * after the block are free; outside it, the kernel moves the pages
             * (as glibc does for its mmapped chunks).  Either way not a copy. */
            size_t nlen = (n + page() - 1) & ~(page() - 1);
            int in_pool = unblock_pool_has((uintptr_t)p, (uintptr_t)p + len);
            if (nlen == len || (in_pool && unblock_pool_resize(p, len, nlen))) {
                exact((uintptr_t)p, NULL, 1);
                insert((uintptr_t)p, nlen, n);
                return p;
            }
            void *q = in_pool ? MAP_FAILED
                              : (void *)syscall(SYS_mremap, p, len, nlen, MREMAP_MAYMOVE, NULL);
            if (q != MAP_FAILED) {
                exact((uintptr_t)p, NULL, 1);
                insert((uintptr_t)q, nlen, n);
                return q;
            }
        }
        void *q = UNBLOCK_WRAP(malloc)(n);
        if (q == NULL)
            return NULL; /* p stays valid, as realloc promises */
        memcpy(q, p, asked < n ? asked : n);
        UNBLOCK_WRAP(free)(p);
        return q;
    }
    if (p != NULL && large(n)) {
        /* A small block growing large: move it to pages of its own. */
        size_t old = libc_usable(p);
        void *q = large_alloc(n);
        if (q) {
            memcpy(q, p, old < n ? old : n);
            __libc_free(p);
            return q;
        }
    }
    return __libc_realloc(p, n);
}

static void *aligned(size_t align, size_t n)
{
    if (align <= page() && large(n)) {
        void *p = large_alloc(n);
        if (p)
            return p;
    }
    return __libc_memalign(align, n);
}

UNBLOCK_EXPORT int UNBLOCK_WRAP(posix_memalign)(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return EINVAL;
    void *p = aligned(align, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

UNBLOCK_EXPORT void *UNBLOCK_WRAP(aligned_alloc)(size_t align, size_t n)
{
    return aligned(align, n);
}

UNBLOCK_EXPORT void *UNBLOCK_WRAP(memalign)(size_t align, size_t n)
{
    return aligned(align, n);
}

UNBLOCK_EXPORT void *UNBLOCK_WRAP(valloc)(size_t n)
{
    return large(n) ? aligned(page(), n) : __libc_valloc(n);
}

UNBLOCK_EXPORT void *UNBLOCK_WRAP(pvalloc)(size_t n)
{
    return large(n) ? aligned(page(), (n + page() - 1) & ~(page() - 1)) : __libc_pvalloc(n);
}

UNBLOCK_EXPORT size_t UNBLOCK_WRAP(malloc_usable_size)(void *p)
{
    if (maybe_ours(p)) {
        size_t asked;
        size_t len = exact((uintptr_t)p, &asked, 0);
        if (len)
            return len;
    }
    return libc_usable(p);
}

/* ---- memory released or re-protected by the program ---- */

/* munmap, mremap, madvise and mprotect on pages an operation owns complete it first
 * (calls from inside MPI are MPI's own business). */
static inline void before_release(const void *addr, size_t len)
{
    if (unblock_unlikely(__atomic_load_n(&unblock_ops_inflight, __ATOMIC_RELAXED)) &&
        unblock_tls.mpi_depth == 0 && unblock_g.active)
        unblock_protect_release_range(addr, len);
}

UNBLOCK_REAL_DECL(int, munmap, (void *, size_t));
UNBLOCK_EXPORT int UNBLOCK_WRAP(munmap)(void *addr, size_t len)
{
    before_release(addr, len);
    return UNBLOCK_REAL(munmap)(addr, len);
}

UNBLOCK_REAL_DECL(int, madvise, (void *, size_t, int));
UNBLOCK_EXPORT int UNBLOCK_WRAP(madvise)(void *addr, size_t len, int advice)
{
    before_release(addr, len);
    return UNBLOCK_REAL(madvise)(addr, len, advice);
}

UNBLOCK_REAL_DECL(int, mprotect, (void *, size_t, int));
UNBLOCK_EXPORT int UNBLOCK_WRAP(mprotect)(void *addr, size_t len, int prot)
{
    before_release(addr, len);
    return UNBLOCK_REAL(mprotect)(addr, len, prot);
}

UNBLOCK_REAL_DECL(void *, mremap, (void *, size_t, size_t, int, ...));
UNBLOCK_EXPORT void *UNBLOCK_WRAP(mremap)(void *addr, size_t old, size_t len, int flags, ...)
{
    void *target = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        target = va_arg(ap, void *);
        va_end(ap);
        before_release(target, len);
    }
    before_release(addr, old);
    return UNBLOCK_REAL(mremap)(addr, old, len, flags, target);
}
