/* pool.c — the double-mapped pool (multiview).
 *
 * One memfd, mapped twice at fixed distance: the application's view, whose pages
 * the protection changes, and the runtime's view, which MPI and the runtime use
 * and whose protection never changes.  An address p of the application's view is
 * p + unblock_pool_delta in the runtime's, so translating a buffer is one add.
 * A receive goes straight into the runtime view while the program's pages are
 * inaccessible, and a send reads the runtime view while the program's pages are
 * read-only or even inaccessible (a receive in flight beside it).
 *
 * Both views are reserved once at their full size (UNBLOCK_POOL_MAX; MAP_SHARED
 * memfd pages are only allocated when touched, so a large reservation costs
 * address space, not memory).  Blocks are whole pages, handed out first-fit from
 * a sorted list of free extents, then from the top; a freed block's pages go back
 * to the kernel (MADV_REMOVE: punched out of the memfd), so a block is zero when
 * handed out again and calloc need not clear it.  The block registry (alloc.c)
 * keeps which blocks are in use; this file knows only extents.
 *
 * fork: a child would share the pool with its parent.  The prepare handler,
 * holding the pool lock, copies the pages in use into a fresh memfd (through the
 * runtime view: the application's may be protected); the child maps that copy over
 * both views at the same addresses, the parent closes it.  Copying in the child
 * instead would be racy: the parent runs on after fork and writes its heap. */
#define _GNU_SOURCE
#include "memory/memory.h"
#include "core/core.h"
#include "core/log.h"
#include "core/module.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

uintptr_t unblock_pool_base;
size_t unblock_pool_size;
intptr_t unblock_pool_delta;

typedef struct {
    size_t off, len; /* bytes, page multiples */
} extent_t;

static int pool_fd = -1;
static int pool_state;      /* 0 untried, 1 ready, -1 unavailable */
static int pool_lock;
static size_t top;          /* offsets [0, top) have been handed out at some time */
static extent_t *holes;     /* free extents below top, sorted by offset */
static size_t nholes, capholes;
static size_t in_use;       /* bytes of blocks handed out */
static int fork_fd = -1;    /* the copy made for a fork child */

UNBLOCK_REAL_DECL(int, madvise, (void *, size_t, int));

static size_t page_size(void)
{
    static size_t ps;
    if (ps == 0)
        ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

static void *map(void *at, size_t len, int prot, int flags, int fd)
{
    return (void *)syscall(SYS_mmap, at, len, prot, flags, fd, 0L);
}

/* Reserves both views of `size` bytes; 0 on success. */
static int reserve(size_t size)
{
    /* One reservation for both views, so neither can land inside the other's
     * range and the distance between them is fixed by construction. */
    char *r = map(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1);
    if (r == MAP_FAILED)
        return -1;
    if (map(r, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, pool_fd) == MAP_FAILED ||
        map(r + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, pool_fd) == MAP_FAILED) {
        syscall(SYS_munmap, r, 2 * size);
        return -1;
    }
    /* A core dump shows the program's view; the runtime's is the same memory.
     * Huge pages where the administrator allows them for shared memory
     * (shmem_enabled=advise): without, a first touch costs a fault per 4 KiB. */
    syscall(SYS_madvise, r + size, size, MADV_DONTDUMP);
    syscall(SYS_madvise, r, 2 * size, MADV_HUGEPAGE);
    unblock_front_set(UNBLOCK_FRONT_POOL, 1); /* (the fronts' test of the pool: core.h) */
    unblock_pool_base = (uintptr_t)r;
    unblock_pool_size = size;
    unblock_pool_delta = (intptr_t)size;
    return 0;
}

static void prepare(void);
static void parent(void);
static void child(void);

/* Sets the pool up (first large allocation; under the pool lock).  1 if ready. */
static int setup(void)
{
    if (pool_state)
        return pool_state > 0;
    pool_state = -1;
    if (!unblock_opt.pool)
        return 0;
    (void)UNBLOCK_REAL(madvise); /* resolved now: dlsym may allocate */
    size_t size = unblock_opt.pool_max;
    if (size == 0) {
        long pages = sysconf(_SC_PHYS_PAGES);
        size = pages > 0 ? 2 * (size_t)pages * page_size() : (size_t)64 << 30;
    }
    const size_t min = (size_t)64 << 20;
    size = size < min ? min : (size + min - 1) & ~(min - 1);
    pool_fd = unblock_own_fd((int)syscall(SYS_memfd_create, "unblock-pool", MFD_CLOEXEC));
    unblock_own_hold(pool_fd, &pool_fd); /* (a dup2 of the program's onto it moves it) */
    if (pool_fd < 0) {
        unblock_debug("multiview: memfd_create failed (%s); single view", strerror(errno));
        return 0;
    }
    /* Under an address-space limit (ulimit -v), a smaller pool. */
    for (; size >= min; size = (size / 2) & ~(min - 1))
        if (syscall(SYS_ftruncate, pool_fd, (off_t)size) == 0 && reserve(size) == 0)
            break;
    if (unblock_pool_base == 0) {
        unblock_debug("multiview: cannot map the pool (%s); single view", strerror(errno));
        unblock_own_close(pool_fd);
        pool_fd = -1;
        return 0;
    }
    unblock_modules_atfork(); /* early: our prepare runs after those registered later */
    unblock_counter_add(&unblock_stats.pool_reserved, unblock_pool_size);
    pool_state = 1;
    return 1;
}

static void note_peak(void) /* under the pool lock */
{
    if (in_use > unblock_stats.pool_peak)
        __atomic_store_n(&unblock_stats.pool_peak, in_use, __ATOMIC_RELAXED);
}

static int grow_holes(void)
{
    size_t ncap = capholes ? 2 * capholes : 256;
    extent_t *n = map(NULL, ncap * sizeof(extent_t), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1);
    if (n == MAP_FAILED)
        return -1;
    if (holes) {
        memcpy(n, holes, nholes * sizeof(extent_t));
        syscall(SYS_munmap, holes, capholes * sizeof(extent_t));
    }
    holes = n;
    capholes = ncap;
    return 0;
}

void *unblock_pool_alloc(size_t len)
{
    void *p = NULL;
    unblock_spin_lock(&pool_lock);
    if (setup()) {
        for (size_t i = 0; i < nholes; i++)
            if (holes[i].len >= len) {
                p = (void *)(unblock_pool_base + holes[i].off);
                holes[i].off += len;
                holes[i].len -= len;
                if (holes[i].len == 0) {
                    memmove(&holes[i], &holes[i + 1], (nholes - i - 1) * sizeof(extent_t));
                    nholes--;
                }
                break;
            }
        if (p == NULL && len <= unblock_pool_size - top) {
            p = (void *)(unblock_pool_base + top);
            top += len;
        }
        if (p) {
            in_use += len;
            note_peak();
        }
    }
    unblock_spin_unlock(&pool_lock);
    return p;
}

/* Returns [off, off+len) to the free extents (under the pool lock). */
static void release(size_t off, size_t len)
{
    in_use -= len;
    size_t i = 0;
    while (i < nholes && holes[i].off < off)
        i++;
    int left = i > 0 && holes[i - 1].off + holes[i - 1].len == off;
    int right = i < nholes && off + len == holes[i].off;
    if (left && right) {
        holes[i - 1].len += len + holes[i].len;
        memmove(&holes[i], &holes[i + 1], (nholes - i - 1) * sizeof(extent_t));
        nholes--;
    } else if (left) {
        holes[i - 1].len += len;
    } else if (right) {
        holes[i].off = off;
        holes[i].len += len;
    } else if (off + len == top) {
        top = off;
        return;
    } else if (nholes < capholes || grow_holes() == 0) {
        memmove(&holes[i + 1], &holes[i], (nholes - i) * sizeof(extent_t));
        holes[i] = (extent_t){ off, len };
        nholes++;
    } /* else: the extent is lost to the pool (no memory for the list); still correct */
    /* The last hole may now reach the top: lower it. */
    if (nholes && holes[nholes - 1].off + holes[nholes - 1].len == top) {
        top = holes[nholes - 1].off;
        nholes--;
    }
}

void unblock_pool_free(void *p, size_t len)
{
    /* The pages go back to the kernel, through the MPI library's memory hooks
     * (madvise), so registration caches forget them. */
    UNBLOCK_REAL(madvise)(p, len, MADV_REMOVE);
    unblock_spin_lock(&pool_lock);
    release((uintptr_t)p - unblock_pool_base, len);
    unblock_spin_unlock(&pool_lock);
}

int unblock_pool_resize(void *p, size_t len, size_t nlen)
{
    size_t off = (uintptr_t)p - unblock_pool_base;
    if (nlen < len) {
        unblock_pool_free((char *)p + nlen, len - nlen);
        return 1;
    }
    int ok = 0;
    size_t more = nlen - len, end = off + len;
    unblock_spin_lock(&pool_lock);
    if (end == top && more <= unblock_pool_size - top) {
        top += more;
        ok = 1;
    } else {
        for (size_t i = 0; i < nholes && holes[i].off <= end; i++)
            if (holes[i].off == end && holes[i].len >= more) {
                holes[i].off += more;
                holes[i].len -= more;
                if (holes[i].len == 0) {
                    memmove(&holes[i], &holes[i + 1], (nholes - i - 1) * sizeof(extent_t));
                    nholes--;
                }
                ok = 1;
                break;
            }
    }
    if (ok) {
        in_use += more;
        note_peak();
    }
    unblock_spin_unlock(&pool_lock);
    return ok;
}

size_t unblock_pool_in_use(void)
{
    return __atomic_load_n(&in_use, __ATOMIC_RELAXED);
}

/* ---- fork ---- */

/* Copies the pages handed out (everything below top but the holes) to a fresh
 * memfd, holding the pool lock until the fork is over. */
static void prepare(void)
{
    unblock_spin_lock(&pool_lock);
    if (top == 0)
        return;
    fork_fd = unblock_own_fd((int)syscall(SYS_memfd_create, "unblock-pool", MFD_CLOEXEC));
    unblock_own_hold(fork_fd, &fork_fd);
    if (fork_fd < 0 || syscall(SYS_ftruncate, fork_fd, (off_t)unblock_pool_size) != 0)
        goto failed;
    const char *rt = (const char *)(unblock_pool_base + unblock_pool_delta);
    size_t from = 0;
    for (size_t i = 0; i <= nholes; i++) {
        size_t to = i < nholes ? holes[i].off : top;
        while (from < to) {
            ssize_t w = syscall(SYS_pwrite64, fork_fd, rt + from, to - from, (off_t)from);
            if (w <= 0)
                goto failed;
            from += (size_t)w;
        }
        if (i < nholes)
            from = holes[i].off + holes[i].len;
    }
    unblock_counter_add(&unblock_stats.pool_fork_copies, 1);
    unblock_counter_add(&unblock_stats.pool_fork_bytes, top);
    return;
failed:
    /* The child would share the parent's heap: that cannot be allowed silently. */
    unblock_error("multiview: cannot copy the pool for a fork child (%s); the child "
                  "shares the parent's large allocations", strerror(errno));
    if (fork_fd >= 0)
        unblock_own_close(fork_fd);
    fork_fd = -1;
}

static void parent(void)
{
    if (fork_fd >= 0)
        unblock_own_close(fork_fd);
    fork_fd = -1;
    unblock_spin_unlock(&pool_lock);
}

static void child(void)
{
    if (fork_fd >= 0) {
        char *app = (char *)unblock_pool_base, *rt = app + unblock_pool_delta;
        if (map(app, unblock_pool_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                fork_fd) == MAP_FAILED ||
            map(rt, unblock_pool_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                fork_fd) == MAP_FAILED) {
            /* Half-mapped: the child cannot run on. */
            static const char msg[] = "unblock: multiview: cannot map the pool in a fork child\n";
            syscall(SYS_write, 2, msg, sizeof(msg) - 1);
            syscall(SYS_exit_group, 127);
        }
        syscall(SYS_madvise, rt, unblock_pool_size, MADV_DONTDUMP);
        unblock_own_close(pool_fd);
        pool_fd = fork_fd;
        unblock_own_hold(pool_fd, &pool_fd);
        fork_fd = -1;
    }
    unblock_spin_unlock(&pool_lock);
}

/* ---- the memory module's table (core/module.h) ---- */

static void memory_stats(unblock_emitter_t *e)
{
#define get unblock_counter_get
    unblock_emit(e, "  \"memory\": {\n    \"pool\": %s,\n    \"pool_reserved\": %llu,\n"
             "    \"pool_in_use\": %llu,\n    \"pool_peak\": %llu,\n    \"outside_pool\": %llu,\n"
             "    \"kept\": %llu,\n"
             "    \"fork_copies\": %llu,\n    \"fork_bytes\": %llu,\n    \"ucm_events\": %llu\n  },\n",
         unblock_pool_base ? "true" : "false",
         (unsigned long long)get(&unblock_stats.pool_reserved),
         (unsigned long long)(unblock_pool_in_use() - unblock_alloc_kept(1)),
         (unsigned long long)get(&unblock_stats.pool_peak),
         (unsigned long long)get(&unblock_stats.pool_outside),
         (unsigned long long)(unblock_alloc_kept(0) + unblock_alloc_kept(1)),
         (unsigned long long)get(&unblock_stats.pool_fork_copies),
         (unsigned long long)get(&unblock_stats.pool_fork_bytes),
         (unsigned long long)unblock_memory_ucm_events());
#undef get
}

/* The fork hooks take the pool lock whether or not the pool is set up: a thread
 * setting it up meanwhile waits for the fork to be over. */
UNBLOCK_MODULE(unblock_memory_module) = {
    .name = "memory",
    .order = UNBLOCK_ORDER_MEMORY,
    .fork_prepare = prepare,
    .fork_parent = parent,
    .fork_child = child,
    .stats = memory_stats,
};
