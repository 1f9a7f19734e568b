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

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void (*unblock_memory_release_hook)(const void *addr, size_t len);

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
    int foreign;   /* the program changed its pages' protection or mapping */
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
    blocks[i] = (block_t){ start, len, asked, 0 };
    nblocks++;
    unblock_counter_add(&unblock_stats.large_blocks, 1);
    unblock_counter_add(&unblock_stats.large_bytes, asked);
    unblock_counter_add(&unblock_stats.large_overhead, len - asked);
    unlock();
    return 0;
}

/* The block starting exactly at p: its mapped length (0 if there is none), and
 * in *out (may be NULL) its record; with `remove`, it leaves the registry. */
static size_t exact(uintptr_t p, block_t *out, int remove)
{
    size_t len = 0;
    lock();
    size_t i = upper(p);
    if (i > 0 && blocks[i - 1].start == p) {
        len = blocks[i - 1].len;
        if (out)
            *out = blocks[i - 1];
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

/* ---- freed blocks kept for the next allocation ----
 *
 * A program that allocates and frees the same large buffers over and over (a
 * gather buffer per checkpoint, a scratch array per step) gets its memory back
 * from glibc's heap without a page fault: glibc raises its mmap threshold to the
 * largest block freed (up to 32 MiB) and keeps freed memory.  Unmapping our blocks
 * at free made every such allocation fault in all of its pages again, a fault per
 * 4 KiB (about 1 us here): an 8 MiB scratch array per step made a compute loop
 * 1.66x slower.  So freed blocks of up to half of UNBLOCK_ALLOC_KEEP stay mapped,
 * up to UNBLOCK_ALLOC_KEEP bytes in all (the oldest go first), and an allocation
 * takes the smallest kept block that fits it with at most a quarter to spare.
 * Kept blocks have no operation on them (free waited for their owners) and their
 * pages are read-write; blocks whose protection or mapping the program changed
 * itself are not kept.  Registry lock. */
#define KEEP_SLOTS 16

typedef struct {
    uintptr_t start;
    size_t len;
    int in_pool;
} kept_t;

static kept_t kept[KEEP_SLOTS]; /* oldest first */
static unsigned nkept;
static size_t kept_bytes;

size_t unblock_alloc_kept(int in_pool)
{
    size_t n = 0;
    lock();
    for (unsigned i = 0; i < nkept; i++)
        if (kept[i].in_pool == in_pool)
            n += kept[i].len;
    unlock();
    return n;
}

/* Keeps the freed block [start, start+len): 1, or 0 when the caller unmaps it.
 * Older blocks that no longer fit are unmapped here. */
static int keep(uintptr_t start, size_t len)
{
    size_t budget = unblock_opt.alloc_keep;
    if (len > budget / 2)
        return 0;
    kept_t out[KEEP_SLOTS];
    unsigned nout = 0;
    lock();
    while (nkept > 0 && (nkept == KEEP_SLOTS || kept_bytes + len > budget)) {
        out[nout++] = kept[0];
        kept_bytes -= kept[0].len;
        memmove(&kept[0], &kept[1], --nkept * sizeof(kept_t));
    }
    kept[nkept++] = (kept_t){ start, len, unblock_pool_has(start, start + len) };
    kept_bytes += len;
    unlock();
    for (unsigned i = 0; i < nout; i++)
        unmap_block((void *)out[i].start, out[i].len);
    return 1;
}

/* The smallest kept block of len to len + len/4 bytes, in the pool or not as
 * asked, taken off the list (its length in *got); NULL if there is none. */
static void *take_kept(size_t len, int in_pool, size_t *got)
{
    if (__atomic_load_n(&nkept, __ATOMIC_RELAXED) == 0)
        return NULL;
    lock();
    unsigned best = KEEP_SLOTS;
    for (unsigned i = 0; i < nkept; i++)
        if (kept[i].in_pool == in_pool && kept[i].len >= len && kept[i].len - len <= len / 4 &&
            (best == KEEP_SLOTS || kept[i].len < kept[best].len))
            best = i;
    void *p = NULL;
    if (best < KEEP_SLOTS) {
        p = (void *)kept[best].start;
        *got = kept[best].len;
        kept_bytes -= kept[best].len;
        memmove(&kept[best], &kept[best + 1], (--nkept - best) * sizeof(kept_t));
    }
    unlock();
    return p;
}

/* A block of its own for n bytes; *fresh says whether its pages are new (zero). */
static void *large_alloc(size_t n, int *fresh)
{
    size_t len = (n + page() - 1) & ~(page() - 1);
    if (len < n)
        return NULL;
    /* Larger blocks than UNBLOCK_POOL_LARGEST stay plain mappings, where the
     * kernel may back them with huge pages (the pool's memfd pages are 4 KiB
     * here: a first touch costs a fault per page). */
    int want_pool = unblock_opt.pool_largest == 0 || len <= unblock_opt.pool_largest;
    size_t got;
    void *p = take_kept(len, want_pool && unblock_pool_base != 0, &got);
    *fresh = p == NULL;
    if (p != NULL) {
        len = got;
        unblock_counter_add(&unblock_stats.large_reused, 1);
    } else if (want_pool) {
        p = unblock_pool_alloc(len);
    }
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
    int fresh;
    if (unblock_unlikely(large(n))) {
        void *p = large_alloc(n, &fresh);
        if (p)
            return p;
    }
    return __libc_malloc(n);
}

UNBLOCK_EXPORT void *UNBLOCK_WRAP(calloc)(size_t k, size_t n)
{
    size_t total;
    if (unblock_unlikely(!__builtin_mul_overflow(k, n, &total) && large(total))) {
        int fresh;
        void *p = large_alloc(total, &fresh);
        if (p && !fresh)
            memset(p, 0, total); /* fresh anonymous pages are zero already */
        if (p)
            return p;
    }
    return __libc_calloc(k, n);
}

/* Our block at p, about to be freed or moved: what owns its pages finishes
 * first.  Its mapped length, or 0 if p is not ours (asked may be NULL). */
static size_t ours_settled(void *p, size_t *asked)
{
    block_t b;
    size_t len = maybe_ours(p) ? exact((uintptr_t)p, &b, 0) : 0;
    if (len && asked)
        *asked = b.asked;
    void (*release)(const void *, size_t) = unblock_memory_release_hook;
    if (len && release)
        release(p, len);
    return len;
}

/* free of a block that may be ours (maybe_ours). */
static __attribute__((noinline)) void free_maybe_ours(void *p)
{
    if (ours_settled(p, NULL)) {
        block_t b;
        size_t len = exact((uintptr_t)p, &b, 1);
        if (len && (b.foreign || !keep(b.start, len)))
            unmap_block(p, len);
        return;
    }
    __libc_free(p);
}

/* A block not on a page's start (every block of glibc's heap) goes to glibc
 * at once, a jump: through ours_settled's frame first, a malloc and free of
 * 24 bytes (Open MPI's Fortran MPI_WAITALL makes one at each call) cost 41
 * instructions of unblock. */
UNBLOCK_EXPORT void UNBLOCK_WRAP(free)(void *p)
{
    if (unblock_unlikely(maybe_ours(p))) {
        free_maybe_ours(p);
        return;
    }
    __libc_free(p);
}

/* realloc of a block that may be ours, or to a large size (below). */
static __attribute__((noinline)) void *realloc_maybe_ours(void *p, size_t n)
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
        int fresh;
        void *q = large_alloc(n, &fresh);
        if (q) {
            memcpy(q, p, old < n ? old : n);
            __libc_free(p);
            return q;
        }
    }
    return __libc_realloc(p, n);
}

/* A block of glibc's heap that stays small goes to glibc at once, a jump (as
 * free: OMPIO reallocs at each MPI_File_read_at, 35 instructions of unblock
 * a call through ours_settled's frame). */
UNBLOCK_EXPORT void *UNBLOCK_WRAP(realloc)(void *p, size_t n)
{
    if (unblock_unlikely(maybe_ours(p) || large(n)))
        return realloc_maybe_ours(p, n);
    return __libc_realloc(p, n);
}

static void *aligned(size_t align, size_t n)
{
    int fresh;
    if (align <= page() && large(n)) {
        void *p = large_alloc(n, &fresh);
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
        size_t len = exact((uintptr_t)p, NULL, 0);
        if (len)
            return len;
    }
    return libc_usable(p);
}

/* ---- memory released or re-protected by the program ---- */

/* munmap, mremap, madvise and mprotect on pages an operation owns complete it first
 * (calls from inside MPI are MPI's own business).  Our blocks they touch, from the
 * program or from MPI, are not kept for reuse when freed: their pages may no
 * longer be plain read-write memory. */
void unblock_memory_before_release(const void *addr, size_t len)
{
    void (*release)(const void *, size_t) = unblock_memory_release_hook;
    if (release && unblock_tls.mpi_depth == 0 && unblock_g.active)
        release(addr, len);
    if (__atomic_load_n(&nblocks, __ATOMIC_RELAXED) != 0) {
        uintptr_t lo = (uintptr_t)addr, hi = lo + len;
        lock();
        size_t i = upper(lo);
        if (i > 0 && blocks[i - 1].start + blocks[i - 1].len > lo)
            blocks[i - 1].foreign = 1; /* the block lo falls in */
        for (; i < nblocks && blocks[i].start < hi; i++)
            blocks[i].foreign = 1;
        unlock();
    }
}

UNBLOCK_REAL_DECL(int, munmap, (void *, size_t));
UNBLOCK_EXPORT int UNBLOCK_WRAP(munmap)(void *addr, size_t len)
{
    unblock_memory_before_release(addr, len);
    return UNBLOCK_REAL(munmap)(addr, len);
}

UNBLOCK_REAL_DECL(int, madvise, (void *, size_t, int));
UNBLOCK_EXPORT int UNBLOCK_WRAP(madvise)(void *addr, size_t len, int advice)
{
    unblock_memory_before_release(addr, len);
    return UNBLOCK_REAL(madvise)(addr, len, advice);
}

UNBLOCK_REAL_DECL(int, mprotect, (void *, size_t, int));
UNBLOCK_EXPORT int UNBLOCK_WRAP(mprotect)(void *addr, size_t len, int prot)
{
    unblock_memory_before_release(addr, len);
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
        unblock_memory_before_release(target, len);
    }
    unblock_memory_before_release(addr, old);
    return UNBLOCK_REAL(mremap)(addr, old, len, flags, target);
}

void *unblock_map_huge(size_t len)
{
    const size_t h = UNBLOCK_HUGE_PAGE;
    char *m = mmap(NULL, len + h, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)m + h - 1) & ~(uintptr_t)(h - 1));
    if (p > m)
        munmap(m, (size_t)(p - m));
    if (m + h > p)
        munmap(p + len, (size_t)(m + h - p));
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
void unblock_populate(void *p, size_t len)
{
    /* (the system call: the wrapper of madvise is for the program's memory) */
    if (syscall(SYS_madvise, p, len, MADV_POPULATE_WRITE) != 0) /* an older kernel */
        for (size_t o = 0; o < len; o += 4096)
            ((volatile char *)p)[o] = 0;
}
