/* protected.c — large writes queued from the program's own pages, not copied.
 *
 * Owns: the job kind "protected write" (its ctl word protocol below), the release
 * hook protect.h calls when the program touches such pages
 * (unblock_io_write_release, installed at the first protected write), and the
 * test hook UNBLOCK_TEST_PIECE_DELAY_US.
 * Calls: fdtable.c (errors, costs), worker.c (jobs, budget), protect/ (the
 * operation that keeps the pages read-only). */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h"

#include <time.h>


/* ---- protected writes: large writes from the program's pages, not copied ----
 *
 * Paper: Natvig & Elster, section III.D ("the worker thread copies the data when
 * the application tries to access it").  A queued large write of at least
 * UNBLOCK_IO_PROTECT_MIN bytes whose source lies in one large allocation (whole
 * pages of its own: src/memory/alloc.c) is not copied: an operation of the
 * operation table (protect.h, kind SEND_PROT, op->file UNBLOCK_OP_FILE_WRITE)
 * makes its pages read-only, and the worker writes from them, in pieces of a
 * block (UNBLOCK_IO_BLOCK, one request of an NFS-sized wsize: quarter-block
 * pieces made the 64 MiB checkpoint 8 % longer on slowfs, 4x the requests).
 * When the job is written the op is done and the pages open.
 * Frees, munmap, fork, the program's own writes to those pages (a fault), a read
 * or receive into them reach the op through protect.c like any other; those
 * that are about to write the pages call release_write:
 *   - the rest (what the worker has not written) is copied to a runtime buffer,
 *     if the copies the workers hold stay within UNBLOCK_COPY_BUDGET; the job's
 *     source becomes the copy, and the pages open at once;
 *   - past the budget, the caller waits for the worker to write the job.
 * The job's ctl word keeps the worker off the pages once the program may write
 * them: the worker sets JW_RUN (fetch_or) before a piece from the program's
 * pages and so learns atomically whether JW_COPY is set; the fault sets JW_COPY
 * and then waits for JW_RUN to clear before it opens the pages.  JW_CLAIM: one
 * thread takes the job over; JW_END: the worker has written all of it; whoever
 * of the two comes second leaves the op to the first (JW_END without JW_CLAIM:
 * the worker finishes the op; with it, the claimer does).  JW_EXT: the program
 * is growing the job (a write that continues it, before the worker has started
 * it), which a claimer waits out.  Only atomics, futexes, mmap and memcpy on
 * the fault's side: it runs in the SIGSEGV handler. */

/* UNBLOCK_TEST_PIECE_DELAY_US=N: the worker waits N us in each piece of a
 * protected write after announcing it (JW_RUN) and before writing it, so that a
 * fault that would open the pages without waiting for the piece is caught. */
static long piece_delay_us = -1; /* -1: not read yet */

static void write_job_protected(wb_worker_t *k, wb_job_t *j);
static const unblock_io_kind_t protected_kind = { "protected write", write_job_protected };

#define JW_RUN 1u   /* the worker is writing a piece from the program's pages */
#define JW_COPY 2u  /* the rest is in j->copy: the worker reads that */
#define JW_CLAIM 4u /* a thread of the program takes the job over */
#define JW_END 8u   /* the worker has written the job (or given up on an error) */
#define JW_EXT 16u  /* the program is growing the job */
#define JW_WAIT 32u /* someone sleeps on ctl */

/* Waits until ctl has none of `bits`. */
static void ctl_wait_clear(wb_job_t *j, uint32_t bits)
{
    uint32_t c;
    while ((c = __atomic_load_n(&j->ctl, __ATOMIC_SEQ_CST)) & bits) {
        c = __atomic_or_fetch(&j->ctl, JW_WAIT, __ATOMIC_SEQ_CST);
        if (c & bits)
            unblock_futex_wait(&j->ctl, c, 0);
    }
}

/* Waits until ctl has all of `bits`. */
static void ctl_wait_set(wb_job_t *j, uint32_t bits)
{
    uint32_t c;
    while (((c = __atomic_load_n(&j->ctl, __ATOMIC_SEQ_CST)) & bits) != bits) {
        c = __atomic_or_fetch(&j->ctl, JW_WAIT, __ATOMIC_SEQ_CST);
        if ((c & bits) != bits)
            unblock_futex_wait(&j->ctl, c, 0);
    }
}

/* Clears `bits` and wakes whoever waits on ctl. */
static void ctl_clear(wb_job_t *j, uint32_t bits)
{
    if (__atomic_fetch_and(&j->ctl, ~bits, __ATOMIC_SEQ_CST) & JW_WAIT)
        unblock_futex_wake(&j->ctl);
}

/* Waits until op (started as seq) is no longer ACTIVE. */
static void wait_op(unblock_op_t *op, uint64_t seq)
{
    uint32_t s;
    while (__atomic_load_n(&op->seq, __ATOMIC_ACQUIRE) == seq &&
           (s = __atomic_load_n(&op->state, __ATOMIC_ACQUIRE)) == UNBLOCK_OP_ACTIVE)
        unblock_futex_wait(&op->state, s, 0);
}

/* unblock_io_write_release (protect.h): the caller is about to write or release
 * the pages of the file write op (started as seq).  Async-signal-safe. */
static void release_write(unblock_op_t *op, uint64_t seq, int copy)
{
    wb_job_t *j = __atomic_load_n((wb_job_t **)&op->io, __ATOMIC_ACQUIRE);
    if (!copy || !j) {
        wait_op(op, seq);
        return;
    }
    /* Announced first: a job is reused only when its op is done and no thread
     * that reached it through the op is still looking at it. */
    __atomic_add_fetch(&j->takers, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&op->seq, __ATOMIC_SEQ_CST) != seq ||
        __atomic_load_n(&op->state, __ATOMIC_SEQ_CST) != UNBLOCK_OP_ACTIVE ||
        __atomic_load_n(&j->wseq, __ATOMIC_SEQ_CST) != seq) {
        __atomic_sub_fetch(&j->takers, 1, __ATOMIC_SEQ_CST);
        return; /* done meanwhile: the caller finds it so */
    }
    uint32_t old = __atomic_fetch_or(&j->ctl, JW_CLAIM, __ATOMIC_SEQ_CST);
    if (old & (JW_CLAIM | JW_END)) { /* another thread, or the worker, finishes it */
        __atomic_sub_fetch(&j->takers, 1, __ATOMIC_SEQ_CST);
        wait_op(op, seq);
        return;
    }
    ctl_wait_clear(j, JW_EXT); /* a growth in progress ends first */
    size_t len = __atomic_load_n(&j->len, __ATOMIC_ACQUIRE);
    size_t from = __atomic_load_n(&j->done, __ATOMIC_ACQUIRE);
    size_t rest = len - from;
    int copied = 0;
    if (rest && budget_take(rest)) {
        size_t cap = (rest + unblock_page_size - 1) & ~(unblock_page_size - 1);
        char *b = (char *)syscall(SYS_mmap, NULL, cap, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (b != MAP_FAILED) {
            /* Read-only pages: reading them is fine, and the worker may go on
             * writing from them meanwhile. */
            memcpy(b, j->buf + from, rest);
            j->copy = b;
            j->copy_from = from;
            j->copy_cap = cap;
            j->copy_bytes = rest;
            __atomic_fetch_or(&j->ctl, JW_COPY, __ATOMIC_SEQ_CST);
            copied = 1;
            unblock_counter_add(&unblock_stats.io_write_faults, 1);
        } else {
            budget_give(rest);
        }
    }
    if (rest && !copied) {
        unblock_counter_add(&unblock_stats.io_write_waits, 1);
        ctl_wait_set(j, JW_END); /* past the bound: the worker writes it all */
    } else {
        ctl_wait_clear(j, JW_RUN); /* the piece it writes from the pages now */
    }
    unblock_op_mark_done(op, 0); /* the pages open */
    __atomic_sub_fetch(&j->takers, 1, __ATOMIC_SEQ_CST);
}

/* The largest protected job: a fault copies at most this much at once. */
static size_t prot_job_max(void)
{
    size_t m = unblock_opt.copy_budget / 4;
    return m < unblock_opt.io_block ? unblock_opt.io_block : m;
}

/* A write of n bytes from p that continues w's last protected job, in the file
 * and in memory, joins it while its worker has not started it: one op and one
 * job for a checkpoint written in many calls (locked).  0 if it did. */
static int extend_locked(wb_fd_t *w, const char *p, size_t n, off_t at)
{
    wb_job_t *j = w->pj;
    int ok = 0;
    if (!j)
        return -1;
    qlock_();
    uint32_t zero = 0;
    if (j->wop && j->wseq == w->pj_seq && !j->started && slot(j->fd) == w &&
        j->buf + j->len == p && j->off + (off_t)j->len == at &&
        j->len + n <= prot_job_max() &&
        __atomic_compare_exchange_n(&j->ctl, &zero, JW_EXT, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST)) {
        /* Held under qlock, so the worker cannot start it meanwhile. */
        if (unblock_op_extend(j->wop, j->wseq, j->len + n) == 0) {
            if (unblock_opt.verify)
                j->wop->checksum = unblock_checksum(j->buf, j->len + n);
            __atomic_store_n(&j->len, j->len + n, __ATOMIC_RELEASE);
            ok = 1;
        }
        ctl_clear(j, JW_EXT);
    }
    qunlock();
    return ok ? 0 : -1;
}

static int protect_write_held(int fd, wb_fd_t *w, wb_worker_t *k, const void *p, size_t n,
                              off_t at, uintptr_t ps, uintptr_t pe);

/* A large write of n bytes from p at file offset `at`, queued after everything
 * of w: from the program's pages, made read-only, when they may be protected
 * (locked).  0, or -1 (the caller copies or writes it). */
int protect_write_locked(int fd, wb_fd_t *w, const void *p, size_t n, off_t at)
{
    uintptr_t ps, pe;
    wb_worker_t *k = worker_at(w->wk);
    if (unblock_opt.io_protect_min == 0 || n < unblock_opt.io_protect_min ||
        !unblock_protect_eligible(p, n, &ps, &pe) || !worker_hold(w->wk))
        return -1;
    int r = protect_write_held(fd, w, k, p, n, at, ps, pe);
    worker_release(w->wk);
    return r;
}

/* The rest of protect_write_locked, its worker held. */
static int protect_write_held(int fd, wb_fd_t *w, wb_worker_t *k, const void *p, size_t n,
                              off_t at, uintptr_t ps, uintptr_t pe)
{
    if (unblock_unlikely(piece_delay_us < 0)) { /* once, before any protected write exists */
        const char *f = getenv("UNBLOCK_TEST_PIECE_DELAY_US");
        piece_delay_us = f ? atol(f) : 0;
        unblock_io_write_release = release_write;
    }
    /* Receives into those pages (a background read too) land first. */
    unblock_bytes_t bytes = { (uintptr_t)p, NULL, n };
    unblock_protect_order(0, 0, &bytes, ps, pe);
    if (extend_locked(w, p, n, at) != 0) {
        unblock_op_t *op = unblock_op_claim(UNBLOCK_OP_SEND_PROT, WB_PEER);
        if (!op)
            return -1;
        wb_job_t *j = job_take();
        if (!j) {
            unblock_op_release(op);
            return -1;
        }
        op->file = UNBLOCK_OP_FILE_WRITE;
        op->bytes = bytes;
        op->pstart = ps;
        op->pend = pe;
        *j = (wb_job_t){ .kind = &protected_kind, .fd = fd, .buf = (char *)p, .len = n, .off = at, .wop = op,
                         .wseq = op->seq };
        op->io = j;
        if (unblock_opt.verify)
            op->checksum = unblock_checksum(p, n);
        if (unblock_op_activate(op) != 0) {
            job_put(j, 0);
            unblock_op_release(op);
            return -1;
        }
        enqueue_job(w, k, j, 0);
        w->pj = j;
        w->pj_seq = op->seq;
    }
    unblock_counter_add(&unblock_stats.io_protected_writes, 1);
    unblock_counter_add(&unblock_stats.io_protected_bytes, n);
    return 0;
}


/* The worker: a protected write, piece by piece, from the program's pages until
 * a fault switches it to the copy (see "protected writes" above). */
static void write_job_protected(wb_worker_t *k, wb_job_t *j)
{
    wb_fd_t *w = slot(j->fd);
    size_t len = __atomic_load_n(&j->len, __ATOMIC_ACQUIRE); /* started: it no longer grows */
    size_t piece = unblock_opt.io_block > (64u << 10) ? unblock_opt.io_block : (64u << 10);
    uint64_t t0 = unblock_now_ns();
    int failed = fail_injected(w);
    size_t done = 0;
    while (!failed && done < len) {
        size_t m = len - done < piece ? len - done : piece;
        uint32_t old = __atomic_fetch_or(&j->ctl, JW_RUN, __ATOMIC_SEQ_CST);
        const char *src = j->buf + done;
        if (old & JW_COPY) {
            ctl_clear(j, JW_RUN); /* not the program's pages: nobody waits for it */
            src = j->copy + (done - j->copy_from);
        } else if (unblock_unlikely(piece_delay_us > 0)) { /* read at the first protected write */
            struct timespec ts = { piece_delay_us / 1000000, piece_delay_us % 1000000 * 1000 };
            syscall(SYS_nanosleep, &ts, NULL);
        }
        failed = write_range(j->fd, w, src, m, j->off + (off_t)done) != 0;
        if (!failed)
            done += m;
        __atomic_store_n(&j->done, done, __ATOMIC_RELEASE);
        if (!(old & JW_COPY))
            ctl_clear(j, JW_RUN);
    }
    if (!failed) {
        unblock_counter_add(&unblock_stats.io_flushed_bytes, len);
        if (len >= WB_LARGE_MIN)
            note_cost(w, len, unblock_now_ns() - t0);
    }
    uint32_t old = __atomic_fetch_or(&j->ctl, JW_END, __ATOMIC_SEQ_CST);
    if (!(old & JW_CLAIM))
        unblock_op_mark_done(j->wop, 0); /* the pages open */
    else if (old & JW_WAIT)
        unblock_futex_wake(&j->ctl); /* the claimer waits for the end */
    /* A thread that reached the job through its op may still look at it. */
    int keep = 0;
    while (__atomic_load_n(&j->takers, __ATOMIC_SEQ_CST)) {
        if (workers_dying()) {
            keep = 1; /* a dying program's thread may never come back: never reused */
            break;
        }
        syscall(SYS_sched_yield);
    }
    if (j->copy && !keep)
        syscall(SYS_munmap, j->copy, j->copy_cap);
    reserve_ahead(j->fd, w, j->off + (off_t)len);
    job_end(k, j, j->copy_bytes, !keep);
}

