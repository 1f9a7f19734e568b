/* protect.c — the table of in-flight operations, page protection, finishing.
 *
 * See protect.h for the life of an operation and the locking rule.  Everything
 * here may run inside the SIGSEGV handler except claim/buffer/activate/release:
 * only futexes, mprotect, memcpy and the spin lock. */
#define _GNU_SOURCE
#include "protect/protect.h"
#include "core/log.h"
#include "core/options.h"
#include "core/sites.h"
#include "core/stats.h"
#include "memory/memory.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

unblock_op_t unblock_ops[UNBLOCK_OPS_MAX];
uint32_t unblock_ops_active;
uint32_t unblock_engine_sleeping;
uint32_t unblock_engine_deep;
static uint32_t ops_done; /* DONE, not yet finished */
unblock_protect_engine_t unblock_protect_engine;
size_t unblock_page_size = 4096;

/* A slot keeps its runtime buffer for the next operation (a fresh mapping costs a
 * page fault per page: 2 ms for 4 MiB here), as long as all the slots together
 * keep no more than UNBLOCK_COPY_BUDGET: memory held between transfers stays
 * bounded. */
static size_t maps_total; /* bytes mapped by all slots */

static int table_lock;
static uint64_t next_seq = 1;
static size_t copy_bytes; /* send copies in flight (under the lock) */

/* ---- small primitives, all async-signal-safe ---- */

static void lock(void)
{
    unblock_spin_lock(&table_lock);
}

static void unlock(void)
{
    unblock_spin_unlock(&table_lock);
}

void unblock_futex_wait(uint32_t *word, uint32_t val, long timeout_ns)
{
    struct timespec ts = { timeout_ns / 1000000000L, timeout_ns % 1000000000L };
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, timeout_ns > 0 ? &ts : NULL, NULL, 0);
}

void unblock_futex_wake(uint32_t *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

uint64_t unblock_protect_generation;

static int do_mprotect(uintptr_t from, uintptr_t to, int prot)
{
    unblock_counter_add(&unblock_stats.protect_calls, 1);
    __atomic_add_fetch(&unblock_protect_generation, 1, __ATOMIC_RELEASE);
    return (int)syscall(SYS_mprotect, (void *)from, to - from, prot);
}

uint64_t unblock_checksum(const void *p, size_t len)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < len; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* ---- the page table: protection of a page derived from its owners ---- */

static inline int owns(const unblock_op_t *op)
{
    return op->pend > op->pstart && op->owning;
}

/* Whether page p is in a chain's runs. */
static inline int in_runs(const unblock_op_t *chain, uintptr_t p)
{
    for (unsigned r = 0; r < chain->nruns; r++)
        if (p >= chain->runs[r][0] && p < chain->runs[r][1])
            return 1;
    return 0;
}

/* Whether the op owns page p (a chain: only its runs inside its span). */
static inline int owns_page(const unblock_op_t *op, uintptr_t p)
{
    if (!owns(op) || p < op->pstart || p >= op->pend)
        return 0;
    return op->kind != UNBLOCK_OP_CHAIN || in_runs(op, p);
}

/* Whether the op makes its pages inaccessible (not only read-only). */
static inline int hides(const unblock_op_t *op)
{
    return op->kind == UNBLOCK_OP_RECV || (op->kind == UNBLOCK_OP_CHAIN && op->chain_recv);
}

/* The protection page `p` needs from its owners (under the lock). */
static int page_prot(uintptr_t p)
{
    int prot = PROT_READ | PROT_WRITE;
    for (int i = 0; i < UNBLOCK_OPS_MAX; i++) {
        const unblock_op_t *op = &unblock_ops[i];
        if (op->state == UNBLOCK_OP_FREE || !owns_page(op, p))
            continue;
        if (hides(op))
            return PROT_NONE;
        prot = PROT_READ;
    }
    return prot;
}

/* Whether an owner other than `self` has pages in [from, to) (under the lock). */
static int others_in(const unblock_op_t *self, uintptr_t from, uintptr_t to)
{
    for (int i = 0; i < UNBLOCK_OPS_MAX; i++) {
        const unblock_op_t *op = &unblock_ops[i];
        if (op != self && op->state != UNBLOCK_OP_FREE && owns(op) && op->pstart < to &&
            op->pend > from)
            return 1;
    }
    return 0;
}

/* Gives every page of [from, to) the protection its owners need, in as few calls
 * as there are runs of equal protection (under the lock). */
static int apply(uintptr_t from, uintptr_t to)
{
    const size_t ps = unblock_page_size;
    uintptr_t run = from;
    int prot = page_prot(from);
    for (uintptr_t p = from + ps; p <= to; p += ps) {
        int next = p < to ? page_prot(p) : -1;
        if (next == prot)
            continue;
        if (do_mprotect(run, p, prot) != 0)
            return -1;
        run = p;
        prot = next;
    }
    return 0;
}

/* A chain takes (own 1) or gives up its pages: each of its runs gets what its
 * owners need then.  -1 if a protection was refused (under the lock). */
static int chain_own(unblock_op_t *chain, int own)
{
    int rc = 0;
    chain->owning = own;
    for (unsigned r = 0; r < chain->nruns; r++)
        if (apply(chain->runs[r][0], chain->runs[r][1]) != 0)
            rc = -1;
    return rc;
}

/* ---- claiming and starting ---- */

unblock_op_t *unblock_op_claim(unblock_op_kind_t kind, int peer)
{
    unblock_op_t *got = NULL;
    unsigned per_peer = 0;
    lock();
    for (int i = 0; i < UNBLOCK_OPS_MAX; i++) {
        unblock_op_t *op = &unblock_ops[i];
        if (op->state == UNBLOCK_OP_FREE) {
            if (got == NULL)
                got = op;
        } else if (op->peer == peer) {
            per_peer++;
        }
    }
    if (got && per_peer < unblock_opt.peer_max) {
        got->state = UNBLOCK_OP_CLAIMED;
        got->kind = kind;
        got->peer = peer;
        got->index = (int)(got - unblock_ops);
        got->seq = next_seq++;
        got->pstart = got->pend = 0;
        got->bytes = (unblock_bytes_t){ 0, NULL, 0 };
        got->flat = NULL;
        got->view = 0;
        got->chain = -1;
        got->pending = 0;
        got->closed = 0;
        got->nruns = 0;
        got->owning = 0;
        got->got = 0;
        got->rtbuf = NULL;
        got->copybytes = 0;
        got->error = 0;
        got->file = 0;
        got->urgent = 0;
        got->io = NULL;
        got->site = -1;
        got->call_pc = 0;
        got->call_fn = 0;
        got->t_issue = got->t_done = 0;
        __atomic_add_fetch(&unblock_ops_inflight, 1, __ATOMIC_ACQ_REL);
    } else {
        got = NULL;
    }
    unlock();
    return got;
}

int unblock_copy_budget_take(size_t n)
{
    int ok;
    lock();
    ok = copy_bytes + n <= unblock_opt.copy_budget;
    if (ok)
        copy_bytes += n;
    unlock();
    return ok;
}

void unblock_copy_budget_give(size_t n)
{
    lock();
    copy_bytes -= n;
    unlock();
}

/* A runtime buffer of at least len bytes (*cap: its size), populated at once:
 * one kernel call instead of a fault per page while the copy runs (a fresh 16
 * MiB buffer: 4096 faults, about 10 ms here; populated, 6.5).  From 2 MiB on
 * in whole huge pages (THP on request, the machine's setting `madvise`): 16
 * MiB populated in 1.1-1.3 ms here, where the host already backs the memory. */
static void *op_map(size_t len, size_t *cap)
{
    if (len < UNBLOCK_HUGE_PAGE) {
        *cap = (len + 65535) & ~(size_t)65535;
        void *m = mmap(NULL, *cap, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        return m == MAP_FAILED ? NULL : m;
    }
    size_t l = (len + UNBLOCK_HUGE_PAGE - 1) & ~(UNBLOCK_HUGE_PAGE - 1);
    char *p = unblock_map_huge(l);
    if (p == NULL)
        return NULL;
    unblock_populate(p, l);
    *cap = l;
    return p;
}

char *unblock_op_buffer(unblock_op_t *op, size_t len)
{
    if (len <= UNBLOCK_OP_INLINE)
        return op->inline_buf;
    if (op->mapcap < len) {
        if (op->map) {
            munmap(op->map, op->mapcap);
            __atomic_sub_fetch(&maps_total, op->mapcap, __ATOMIC_RELAXED);
        }
        size_t cap = 0;
        void *m = op_map(len, &cap);
        op->map = m;
        op->mapcap = m ? cap : 0;
        __atomic_add_fetch(&maps_total, op->mapcap, __ATOMIC_RELAXED);
        if (op->map == NULL)
            return NULL;
    }
    return op->map;
}


static void finish_chain(unblock_op_t *chain);

static void free_slot(unblock_op_t *op)
{
    if (op->chain >= 0) {
        /* A member: its chain finishes with its last member once closed. */
        unblock_op_t *chain = &unblock_ops[op->chain];
        op->chain = -1;
        if (--chain->pending == 0 && chain->closed)
            finish_chain(chain);
    }
    if (op->site >= 0 && op->t_issue && op->t_done > op->t_issue)
        unblock_site_estimated(op->site, op->t_done - op->t_issue);
    copy_bytes -= op->copybytes;
    op->copybytes = 0;
    if (op->flat) {
        unblock_flat_release(op->flat);
        op->flat = NULL;
    }
    op->owning = 0;
    if (op->map && __atomic_load_n(&maps_total, __ATOMIC_RELAXED) > unblock_opt.copy_budget) {
        syscall(SYS_munmap, op->map, op->mapcap);
        __atomic_sub_fetch(&maps_total, op->mapcap, __ATOMIC_RELAXED);
        op->map = NULL;
        op->mapcap = 0;
    }
    __atomic_store_n(&op->state, UNBLOCK_OP_FREE, __ATOMIC_RELEASE);
    __atomic_sub_fetch(&unblock_ops_inflight, 1, __ATOMIC_ACQ_REL);
}

int unblock_op_activate(unblock_op_t *op)
{
    int rc = 0;
    lock();
    if (op->chain >= 0 && !unblock_ops[op->chain].owning) {
        /* The first member of a chain that stays in flight: protect all of it. */
        unblock_op_t *c = &unblock_ops[op->chain];
        if (chain_own(c, 1) != 0) {
            unblock_counter_add(&unblock_stats.protect_enomem, 1);
            chain_own(c, 0);
            unlock();
            return -1;
        }
    }
    if (op->pend > op->pstart) {
        op->owning = 1;
        if (others_in(op, op->pstart, op->pend))
            rc = apply(op->pstart, op->pend);
        else
            rc = do_mprotect(op->pstart, op->pend,
                             op->kind == UNBLOCK_OP_RECV ? PROT_NONE : PROT_READ);
        if (rc != 0) {
            /* ENOMEM (too many mappings): undo, and let the caller complete it now. */
            unblock_counter_add(&unblock_stats.protect_enomem, 1);
            op->owning = 0;
            apply(op->pstart, op->pend);
            unlock();
            return -1;
        }
    }
    __atomic_store_n(&op->state, UNBLOCK_OP_ACTIVE, __ATOMIC_RELEASE);
    if (op->file) { /* an I/O worker's work, not the completion thread's */
        unlock();
        return 0;
    }
    __atomic_add_fetch(&unblock_ops_active, 1, __ATOMIC_SEQ_CST);
    unlock();
    if (__atomic_load_n(&unblock_engine_sleeping, __ATOMIC_SEQ_CST))
        unblock_futex_wake(&unblock_ops_active);
    return 0;
}

int unblock_op_extend(unblock_op_t *op, uint64_t seq, size_t len)
{
    int rc = -1;
    lock();
    if (op->seq == seq && op->state == UNBLOCK_OP_ACTIVE && op->file == UNBLOCK_OP_FILE_WRITE &&
        op->owning && len >= op->bytes.count) {
        uintptr_t old = op->pend;
        uintptr_t pend = (op->bytes.base + len + unblock_page_size - 1) & ~(unblock_page_size - 1);
        op->pend = pend;
        rc = pend > old ? apply(old, pend) : 0;
        if (rc != 0) { /* ENOMEM: the new pages go back to what others need */
            unblock_counter_add(&unblock_stats.protect_enomem, 1);
            op->pend = old;
            apply(old, pend);
        } else {
            op->bytes.count = len;
        }
    }
    unlock();
    return rc;
}

void unblock_op_release(unblock_op_t *op)
{
    lock();
    free_slot(op);
    unlock();
}

static void finish(unblock_op_t *op);

/* ---- chains ---- */

static void finish_chain(unblock_op_t *chain)
{
    if (chain->owning)
        chain_own(chain, 0);
    free_slot(chain);
    unblock_futex_wake(&chain->state);
}

int unblock_chain_begin(const uintptr_t (*runs)[2], unsigned nruns, int recv)
{
    if (nruns == 0 || nruns > UNBLOCK_CHAIN_RUNS)
        return -1;
    unblock_op_t *op = unblock_op_claim(UNBLOCK_OP_CHAIN, -2);
    if (op == NULL)
        return -1;
    lock();
    op->nruns = nruns;
    memcpy(op->runs, runs, nruns * sizeof(runs[0]));
    op->pstart = runs[0][0];
    op->pend = runs[nruns - 1][1];
    op->chain_recv = recv;
    /* The pages are protected when the first member is activated (a member that
     * completes at once needs none). */
    __atomic_store_n(&op->state, UNBLOCK_OP_CHAINED, __ATOMIC_RELEASE);
    unlock();
    return op->index;
}

static int chain_is(const unblock_op_t *c, uint64_t seq) /* under the lock */
{
    return c->kind == UNBLOCK_OP_CHAIN && c->seq == seq && c->state == UNBLOCK_OP_CHAINED;
}

int unblock_chain_link(int slot, uint64_t seq, unblock_op_t *op, int last)
{
    unblock_op_t *c = &unblock_ops[slot];
    int linked = 0;
    lock();
    if (chain_is(c, seq) && !c->closed) {
        int covered = 1;
        for (uintptr_t p = op->pstart; p < op->pend && covered; p += unblock_page_size)
            covered = in_runs(c, p);
        if (covered) {
            op->chain = slot;
            op->pstart = op->pend = 0;
            c->pending++;
            linked = 1;
        }
        if (last || !covered) {
            c->closed = 1;
            if (c->pending == 0)
                finish_chain(c);
        }
    }
    unlock();
    return linked;
}

void unblock_chain_close(int slot, uint64_t seq)
{
    unblock_op_t *c = &unblock_ops[slot];
    lock();
    if (chain_is(c, seq) && !c->closed) {
        c->closed = 1;
        if (c->pending == 0)
            finish_chain(c);
    }
    unlock();
}

int unblock_chain_open(int slot, uint64_t seq)
{
    unblock_op_t *c = &unblock_ops[slot];
    lock();
    int open = chain_is(c, seq) && !c->closed;
    unlock();
    return open;
}

void unblock_op_mark_done(unblock_op_t *op, int error)
{
    op->error = error;
    op->t_done = unblock_now_ns();
    uint64_t seq = op->seq;
    /* Multiview (nothing to copy into the program's pages, nothing of them read:
     * the verify checksum reads the runtime view) or a copied send: finish it
     * now (under the lock, so a waiter that saw DONE first finishes it instead,
     * once).  Single-view operations are finished by the program's threads, as
     * before multiview: finishing one here (its checksum reads the program's
     * pages, which another operation may have made inaccessible) hung the
     * threads test. */
    int here = op->view != 0 || op->kind == UNBLOCK_OP_SEND_COPY ||
               op->file == UNBLOCK_OP_FILE_WRITE; /* its pages only open */
    if (op->file && error)
        here = 0; /* kept protected: the thread that uses the data learns of it */
    __atomic_add_fetch(&ops_done, 1, __ATOMIC_ACQ_REL);
    if (!op->file)
        __atomic_sub_fetch(&unblock_ops_active, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&op->state, UNBLOCK_OP_DONE, __ATOMIC_RELEASE);
    if (here) {
        lock();
        if (op->seq == seq && op->state == UNBLOCK_OP_DONE) {
            finish(op);
            unblock_counter_add(&unblock_stats.protect_finished_early, 1);
        }
        unlock();
    }
    unblock_futex_wake(&op->state);
}

/* A background file read that failed, finished by this thread (finish sets it,
 * the callers report it once the table lock is released): read_failed_report. */
static UNBLOCK_TLS int read_failed_errno;
static UNBLOCK_TLS uintptr_t read_failed_at;

/* The data a failed background read should have brought were about to be used
 * (`use`: a fault on them, a kernel or MPI call with them): the thread gets
 * SIGBUS, as a read through a failed mmap would, after a one-line message.
 * Otherwise (the memory is freed, the program exits) a warning only. */
static void read_failed_report(int use)
{
    int e = read_failed_errno;
    if (e == 0)
        return;
    read_failed_errno = 0;
    unblock_counter_add(&unblock_stats.io_read_errors, 1);
    if (!use) {
        unblock_warn("a background read into %#lx failed (%s); the program never used "
                     "the data", (unsigned long)read_failed_at, strerrordesc_np(e));
        return;
    }
    unblock_error("a background read into %#lx failed after read() returned (%s): "
                  "SIGBUS, as a failed mmap read gives", (unsigned long)read_failed_at,
                  strerrordesc_np(e));
    syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), SIGBUS);
}

uint32_t unblock_io_urgent;

/* Waits for a file read to leave ACTIVE, asking its worker to serve it first.
 * Only atomics and a futex: the fault handler calls it.  (The worker is busy with
 * a queue that holds it, so it needs no wake-up.) */
static void file_wait(unblock_op_t *op)
{
    uint32_t no = 0; /* 0 -> 1; the worker sets 2 when it has served it */
    if (__atomic_compare_exchange_n(&op->urgent, &no, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        __atomic_add_fetch(&unblock_io_urgent, 1, __ATOMIC_SEQ_CST);
    uint32_t s;
    while ((s = __atomic_load_n(&op->state, __ATOMIC_ACQUIRE)) == UNBLOCK_OP_ACTIVE)
        unblock_futex_wait(&op->state, s, 0);
}

/* ---- finishing (any thread of the program; under the lock) ---- */

static void finish(unblock_op_t *op)
{
    if (op->file && op->error) {
        read_failed_errno = op->error;
        read_failed_at = op->bytes.base;
        op->got = 0; /* nothing to copy: the pages open with what they held */
    }
    if (op->kind == UNBLOCK_OP_SEND_PROT && unblock_opt.verify) {
        uintptr_t lo, hi;
        unblock_bytes_span(&op->bytes, &lo, &hi);
        /* Through the runtime view where there is one: a receive beside the
         * send may have made the program's pages inaccessible. */
        if (unblock_checksum((const void *)(lo + op->view), hi - lo) != op->checksum) {
            unblock_counter_add(&unblock_stats.verify_failures, 1);
            unblock_warn("verify: a send buffer at %#lx (%lu bytes) changed while in flight",
                         (unsigned long)lo, (unsigned long)(hi - lo));
        }
    }
    if (op->view) {
        /* Multiview: the data (if any) are in place already. */
        op->owning = 0;
        if (op->pend > op->pstart)
            apply(op->pstart, op->pend);
    } else if (owns(op) && op->kind == UNBLOCK_OP_RECV && op->got &&
        __atomic_load_n(&unblock_g.program_threads, __ATOMIC_RELAXED) > 0 &&
        unblock_copy_in_place(op) == 0) {
        /* The data are in place: the pages get what their other owners need. */
        unblock_counter_add(&unblock_stats.protect_copied_in_place, 1);
        op->owning = 0;
        apply(op->pstart, op->pend);
    } else if (owns(op)) {
        /* Make the pages writable for the copy (a receive) or simply accessible
         * again; then give back to other owners the protection they need. */
        do_mprotect(op->pstart, op->pend, PROT_READ | PROT_WRITE);
        if (op->kind == UNBLOCK_OP_RECV && op->got)
            unblock_bytes_scatter(&op->bytes, op->rtbuf, op->got);
        op->owning = 0;
        if (others_in(op, op->pstart, op->pend))
            apply(op->pstart, op->pend);
    } else if (op->kind == UNBLOCK_OP_RECV && op->got) {
        unblock_bytes_scatter(&op->bytes, op->rtbuf, op->got);
    }
    __atomic_sub_fetch(&ops_done, 1, __ATOMIC_ACQ_REL);
    free_slot(op);
}

void (*unblock_io_write_release)(unblock_op_t *op, uint64_t seq, int copy);

/* Waits for the op that had sequence number `seq` and finishes it, unless another
 * thread already did (the slot may even hold a newer op by then).  `take`: the
 * caller is about to write or release the op's pages, so a background file write
 * may copy out what its worker has not written instead of being waited for. */
static void complete_seq(unblock_op_t *op, uint64_t seq, int in_handler, int take)
{
    /* What the program waits here is a cost of the site that started the op. */
    int site = op->site;
    uint64_t t0 = unblock_now_ns();
    if (op->kind == UNBLOCK_OP_CHAIN) /* waiting for it: no member joins any more */
        unblock_chain_close(op->index, seq);
    for (;;) {
        uint32_t s = __atomic_load_n(&op->state, __ATOMIC_ACQUIRE);
        if (s == UNBLOCK_OP_FREE || op->seq != seq)
            return;
        if (s == UNBLOCK_OP_DONE) {
            lock();
            int mine = op->seq == seq && op->state == UNBLOCK_OP_DONE;
            if (mine)
                finish(op);
            unlock();
            if (mine)
                unblock_site_waited(site, t0, unblock_now_ns(), 0);
            return;
        }
        if (s == UNBLOCK_OP_ACTIVE && op->file == UNBLOCK_OP_FILE_WRITE) {
            unblock_io_write_release(op, seq, take);
        } else if (s == UNBLOCK_OP_ACTIVE && op->file) {
            if (in_handler)
                unblock_counter_add(&unblock_stats.io_read_faults, 1);
            file_wait(op);
        }
        else if (s == UNBLOCK_OP_ACTIVE || s == UNBLOCK_OP_TESTING || s == UNBLOCK_OP_CHAINED)
            unblock_protect_engine.wait_done(op, in_handler);
        else
            syscall(SYS_sched_yield); /* CLAIMED: its thread is starting it */
    }
}

void unblock_op_complete(unblock_op_t *op, int in_handler)
{
    complete_seq(op, op->seq, in_handler, 0);
}

void unblock_ops_reap(void)
{
    if (__atomic_load_n(&ops_done, __ATOMIC_ACQUIRE) == 0)
        return;
    lock();
    for (int i = 0; i < UNBLOCK_OPS_MAX; i++)
        if (unblock_ops[i].state == UNBLOCK_OP_DONE &&
            !(unblock_ops[i].file && unblock_ops[i].error)) { /* kept for its user */
            int site = unblock_ops[i].site;
            uint64_t t0 = unblock_now_ns();
            finish(&unblock_ops[i]);
            unblock_site_waited(site, t0, unblock_now_ns(), 0);
        }
    unlock();
}

/* Collects the ops matching a predicate under the lock, then completes them in
 * issue order outside it (completing may sleep). */
typedef struct {
    uintptr_t a, b;           /* a page range */
    int write;                /* the caller writes there */
    int recv;                 /* unblock_protect_order: the new op is a receive */
    intptr_t view;            /* ... it works on the runtime view */
    const unblock_bytes_t *bytes; /* ... and its bytes */
} match_t;
typedef int (*match_fn)(const unblock_op_t *op, const match_t *m);

static unsigned collect(match_fn match, const match_t *m, unblock_op_t **ops, uint64_t *seqs)
{
    unsigned n = 0;
    lock();
    for (int i = 0; i < UNBLOCK_OPS_MAX; i++) {
        unblock_op_t *op = &unblock_ops[i];
        if (op->state != UNBLOCK_OP_FREE && match(op, m)) {
            ops[n] = op;
            seqs[n++] = op->seq;
        }
    }
    unlock();
    /* insertion sort by seq: a handful of entries */
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && seqs[j - 1] > seqs[j]; j--) {
            uint64_t s = seqs[j];
            seqs[j] = seqs[j - 1];
            seqs[j - 1] = s;
            unblock_op_t *o = ops[j];
            ops[j] = ops[j - 1];
            ops[j - 1] = o;
        }
    return n;
}

static void complete_matching(match_fn match, const match_t *m, int in_handler, int take)
{
    unblock_op_t *ops[UNBLOCK_OPS_MAX];
    uint64_t seqs[UNBLOCK_OPS_MAX];
    unsigned n = collect(match, m, ops, seqs);
    for (unsigned i = 0; i < n; i++)
        complete_seq(ops[i], seqs[i], in_handler, take);
}

/* Pages of [a, b) that the op owns: a kernel or MPI access there would fail or
 * fault.  With `write`, read-only owners count too. */
static int match_pages(const unblock_op_t *op, const match_t *m)
{
    if (!(op->pend > op->pstart && op->pstart < m->b && op->pend > m->a))
        return 0;
    return m->write || hides(op);
}

/* `use`: the caller is about to use the data (read_failed_report). */
static void sync_pages(const void *addr, size_t len, int write, int use)
{
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) == 0 || len == 0)
        return;
    match_t m = { .a = (uintptr_t)addr & ~(unblock_page_size - 1),
                  .b = ((uintptr_t)addr + len + unblock_page_size - 1) & ~(unblock_page_size - 1),
                  .write = write };
    complete_matching(match_pages, &m, 0, write);
    read_failed_report(use);
}

void unblock_protect_sync_range(const void *addr, size_t len, int write)
{
    sync_pages(addr, len, write, 1);
}

void unblock_protect_release_range(const void *addr, size_t len)
{
    sync_pages(addr, len, 1, 0);
}

/* memory.h's release hook: the malloc family and munmap & co. call it for memory
 * the program gives back; nothing to do while nothing is in flight. */
static void release_if_owned(const void *addr, size_t len)
{
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE))
        unblock_protect_release_range(addr, len);
}

void unblock_protect_hook_memory(void)
{
    unblock_memory_release_hook = release_if_owned;
}

/* What a new operation cannot run beside:
 *   - a receive waits for operations on the same bytes (their order is the
 *     program's), except sends from a copy, which no longer read them; and for
 *     single-view protected sends on the pages it makes inaccessible (MPI reads
 *     those pages);
 *   - a send waits for receives on the same bytes; and, when it reads the
 *     program's pages (copied now, or read by MPI later: single view), for
 *     receives that own a page its bytes are on: those pages cannot be read until
 *     they finish.
 * Multiview operations read and write the runtime view, whose pages are never
 * protected: for them only bytes count.  Operations that share pages but no byte
 * otherwise run together. */
static int match_order(const unblock_op_t *op, const match_t *m)
{
    if (m->recv) {
        if (op->kind == UNBLOCK_OP_SEND_PROT && op->view == 0 && op->pend > op->pstart &&
            op->pstart < m->b && op->pend > m->a)
            return 1;
        return op->kind != UNBLOCK_OP_SEND_COPY && unblock_bytes_overlap(&op->bytes, m->bytes);
    }
    if (op->kind != UNBLOCK_OP_RECV)
        return 0;
    if (m->view)
        return unblock_bytes_overlap(&op->bytes, m->bytes);
    if (op->pend <= op->pstart)
        return 0;
    unblock_bytes_t pages = { op->pstart, NULL, op->pend - op->pstart };
    return unblock_bytes_overlap(&pages, m->bytes);
}

void unblock_protect_order(int recv, intptr_t view, const unblock_bytes_t *bytes,
                           uintptr_t pstart, uintptr_t pend)
{
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) == 0)
        return;
    match_t m = { .a = pstart, .b = pend, .recv = recv, .view = view, .bytes = bytes };
    complete_matching(match_order, &m, 0, 1); /* the new op may write the bytes */
    read_failed_report(1);
}

static int match_all(const unblock_op_t *op, const match_t *m)
{
    (void)op, (void)m;
    return 1;
}

void unblock_protect_quiesce(void)
{
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) == 0)
        return;
    match_t m = { 0 };
    complete_matching(match_all, &m, 0, 0); /* file writes: their worker writes them */
    read_failed_report(0);
}

static int match_message_recv(const unblock_op_t *op, const match_t *m)
{
    (void)m;
    return op->kind == UNBLOCK_OP_RECV && op->peer != INT_MIN; /* (INT_MIN: a file's) */
}

void unblock_protect_receives_done(void)
{
    /* (a thread that converted a receive, or another of the program's where
     * the completion thread completes them: without it, waiting is calling
     * MPI, which the thread level may not allow that thread.  Never an MPI
     * library's own threads: they read their sockets and event descriptors
     * while the receives in flight need them to progress, and waiting there
     * hung MPICH over UCX's TCP) */
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) == 0 || unblock_tls.runtime)
        return;
    if (!unblock_tls.received &&
        !(unblock_tls.program && unblock_protect_engine.driven != NULL &&
          unblock_protect_engine.driven()))
        return;
    match_t m = { 0 };
    complete_matching(match_message_recv, &m, 0, 0);
    read_failed_report(0);
}

void unblock_protect_files_read(int all)
{
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) == 0)
        return;
    for (int i = 0; i < UNBLOCK_OPS_MAX; i++) {
        unblock_op_t *op = &unblock_ops[i];
        int file = __atomic_load_n(&op->file, __ATOMIC_ACQUIRE);
        if ((file == 1 || (file == 2 && all)) &&
            __atomic_load_n(&op->state, __ATOMIC_ACQUIRE) == UNBLOCK_OP_ACTIVE)
            file_wait(op); /* returns once it is no longer ACTIVE */
    }
}

int unblock_protect_eligible(const void *addr, size_t len, uintptr_t *pstart, uintptr_t *pend)
{
    uintptr_t bs, be;
    if (len == 0 || !unblock_memory_block_of(addr, len, &bs, &be))
        return 0;
    *pstart = (uintptr_t)addr & ~(unblock_page_size - 1);
    *pend = ((uintptr_t)addr + len + unblock_page_size - 1) & ~(unblock_page_size - 1);
    return *pstart >= bs && *pend <= be;
}

/* ---- the fault path ---- */

static int match_fault(const unblock_op_t *op, const match_t *m)
{
    return owns_page(op, m->a);
}

int unblock_protect_on_fault(uintptr_t addr)
{
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) == 0)
        return 0;
    unblock_op_t *ops[UNBLOCK_OPS_MAX];
    uint64_t seqs[UNBLOCK_OPS_MAX];
    uintptr_t page = addr & ~(unblock_page_size - 1);
    match_t m = { .a = page };
    unsigned n = collect(match_fault, &m, ops, seqs);
    if (n == 0)
        return 0;
    if (unblock_tls.runtime) {
        /* Only this thread could complete what it would wait for: a bug, which
         * must crash loudly rather than hang the job. */
        unblock_error("the completion thread touched a protected page at %#lx; aborting",
                      (unsigned long)addr);
        return 0;
    }
    unblock_counter_add(&unblock_stats.comm_faults, 1);
    unblock_chain_boundary = 1; /* the program is past its communication phase */
    uint64_t now = unblock_now_ns(); /* (for the timeline: when the program waited) */
    unblock_site_waited(ops[0]->site, now, now, 1); /* the kernel's part of the fault */
    for (unsigned i = 0; i < n; i++)
        if (ops[i]->kind == UNBLOCK_OP_SEND_PROT)
            unblock_site_protected(ops[i]->site, 1);
    for (unsigned i = 0; i < n; i++)
        complete_seq(ops[i], seqs[i], 1, 1);
    read_failed_report(1);
    return 1;
}
