/* bgread.c — large reads that return while the worker reads.
 *
 * Owns: the pieces in flight and their count, the read leases (rd_leases), the job
 * kind "background read", the test hook UNBLOCK_TEST_FAIL_READ.
 * Calls: fdtable.c, worker.c (jobs, the worker's cold-read cost), drain.c (merged
 * writes of the file go first), protect/ (the operations whose pages stay
 * inaccessible), core/sites.h (the predictor decides per call site). */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h"

/* ---- background reads: large reads return while the worker reads ----
 *
 * Paper: Natvig & Elster, section III.C.  A read()/pread() of UNBLOCK_READ_MIN or
 * more on a followed descriptor, into memory that may be protected (whole pages
 * of one large allocation), first takes what the page cache has at once
 * (preadv2 RWF_NOWAIT).  The rest, up to the end of the file as fstat sees it, is
 * split into pieces of about UNBLOCK_IO_BLOCK on page boundaries; each piece is an
 * operation (protect.h, op->file) whose pages are made inaccessible and which the
 * filesystem's worker reads into a runtime buffer (or the pool's runtime view).
 * The call returns the count the file gives and moves the offset as read() would.
 * A fault on a piece waits for it alone, and the worker reads the pieces the
 * program waits for first.  Everything that could let another process change the
 * file (news: any MPI call, writes, path and process calls, exit) or this one
 * change it (a write, a truncation) first waits until every piece has been read;
 * a piece that cannot be read whole (an I/O error, or the file truncated behind
 * our back by a process that told us nothing) gives the thread that uses its data
 * SIGBUS (protect.c). */

#define RD_PIECES 16 /* pieces in flight per process at most (UNBLOCK_PEER_MAX too) */
#define RD_PEER INT_MIN /* the "peer" of file reads in the operation table */

static uint32_t rd_inflight; /* pieces not read yet */
static uint32_t rd_leased;   /* ... of which under a read lease */

/* Read leases (F_SETLEASE F_RDLCK) on the open file description of a descriptor
 * with background reads in flight: while one is held, no process can open the
 * file for writing or truncate it (the kernel makes it wait until the lease is
 * given up, lease-break-time at most), so news may leave this process before
 * those reads are done: the papers' read-then-scatter overlap.  A record is held
 * by its reads in flight and by the call starting them (refs), on its own
 * duplicate of the descriptor; the last one gives the lease up.  The break is
 * signalled (SIGURG, ignored by default) to the worker thread, which blocks it. */
typedef struct {
    uint32_t refs;
    int lfd;   /* 0: free; -1: being set up */
    int owner; /* the program's descriptor */
} rd_lease_t;
static rd_lease_t rd_leases[RD_PIECES];

void rd_lease_put(int l)
{
    if (!l)
        return;
    rd_lease_t *r = &rd_leases[l - 1];
    qlock_();
    if (--r->refs == 0) {
        syscall(SYS_fcntl, r->lfd, F_SETLEASE, F_UNLCK);
        unblock_own_close(r->lfd);
        r->lfd = 0;
        if (slot(r->owner)->lease == l)
            slot(r->owner)->lease = 0;
    }
    qunlock();
}

/* Whether no lease record is in use (qlock held): a worker with none may end. */
int rd_leases_none(void)
{
    for (int i = 0; i < RD_PIECES; i++)
        if (__atomic_load_n(&rd_leases[i].lfd, __ATOMIC_ACQUIRE) != 0)
            return 0;
    return 1;
}

/* Whether lease record l still holds its lease: 0 once another process (or
 * this one) opened the file for writing or truncated it, and the kernel breaks
 * the lease (it then waits for us to give it up, lease-break-time at most). */
int rd_lease_held(int l)
{
    int lfd = __atomic_load_n(&rd_leases[l - 1].lfd, __ATOMIC_ACQUIRE);
    return lfd > 0 && syscall(SYS_fcntl, lfd, F_GETLEASE) == F_RDLCK;
}

/* A read lease for fd's background reads and read-ahead (locked): its record + 1
 * (held once for the caller), or 0 (not read-only, another process or this one
 * has the file open for writing, no permission, a filesystem without leases). */
int rd_lease_take(int fd, wb_fd_t *w, wb_worker_t *k)
{
    int fl = (int)syscall(SYS_fcntl, fd, F_GETFL);
    pid_t tid = __atomic_load_n(&k->tid, __ATOMIC_ACQUIRE);
    if (fl < 0 || (fl & O_ACCMODE) != O_RDONLY || tid == 0)
        return 0;
    int l = 0;
    qlock_();
    if (w->lease && rd_leases[w->lease - 1].lfd > 0) {
        l = w->lease;
        rd_leases[l - 1].refs++;
        qunlock();
        return l;
    }
    for (int i = 0; i < RD_PIECES && !l; i++)
        if (rd_leases[i].lfd == 0) {
            rd_leases[i].lfd = -1;
            l = i + 1;
        }
    qunlock();
    if (!l)
        return 0;
    struct f_owner_ex to = { F_OWNER_TID, tid };
    sc_settle(); /* a read lease is refused while the sidecar holds the file for writing */
    int lfd = dup_high(fd);
    if (lfd < 0 || syscall(SYS_fcntl, lfd, F_SETSIG, SIGURG) != 0 ||
        syscall(SYS_fcntl, lfd, F_SETLEASE, F_RDLCK) != 0) {
        if (lfd >= 0)
            unblock_own_close(lfd);
        __atomic_store_n(&rd_leases[l - 1].lfd, 0, __ATOMIC_RELEASE);
        return 0;
    }
    syscall(SYS_fcntl, lfd, F_SETOWN_EX, &to);
    qlock_();
    rd_leases[l - 1] = (rd_lease_t){ 1, lfd, fd };
    unblock_own_hold(lfd, &rd_leases[l - 1].lfd);
    w->lease = (int8_t)l;
    qunlock();
    unblock_counter_add(&unblock_stats.io_read_leases, 1);
    return l;
}
static long fail_read_at = -1; /* test hook UNBLOCK_TEST_FAIL_READ=N (-1: not read yet) */
static uint32_t reads_done;

static void rd_note_cost(wb_worker_t *k, size_t n, uint64_t ns);

/* Reads [off, off+n) into p whole (the worker's pieces, and what the program's
 * thread reads itself): 0, or the errno of the read that failed (ENODATA: the
 * file ended first); *done: the bytes read. */
static int read_whole(int fd, char *p, size_t n, off_t off, size_t *done)
{
    *done = 0;
    while (*done < n) {
        ssize_t r = syscall(SYS_pread64, fd, p + *done, n - *done, off + (off_t)*done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? errno : ENODATA;
        *done += (size_t)r;
    }
    return 0;
}

/* The worker: reads a piece whole (EOF before its end: the file was truncated). */
static void read_job(wb_worker_t *k, wb_job_t *j)
{
    if (unblock_unlikely(fail_read_at < 0)) {
        const char *f = getenv("UNBLOCK_TEST_FAIL_READ");
        fail_read_at = f ? atol(f) : 0;
    }
    unblock_op_t *op = j->op;
    size_t done = 0;
    int err = 0, lease = j->lease;
    if (unblock_unlikely(fail_read_at) &&
        (long)__atomic_add_fetch(&reads_done, 1, __ATOMIC_RELAXED) == fail_read_at)
        err = EIO;
    if (!j->buf && !err && !(j->buf = op->rtbuf = unblock_op_buffer(op, j->len)))
        err = ENOMEM;
    uint64_t t0 = unblock_now_ns();
    if (!err)
        err = read_whole(j->fd, j->buf, j->len, j->off, &done);
    if (!err)
        rd_note_cost(k, done, unblock_now_ns() - t0);
    unblock_own_close(j->fd);
    op->got = err ? 0 : done;
    if (__atomic_exchange_n(&op->urgent, 2, __ATOMIC_ACQ_REL) == 1)
        __atomic_sub_fetch(&unblock_io_urgent, 1, __ATOMIC_SEQ_CST);
    unblock_op_mark_done(op, err);
    job_put(j, 0);
    __atomic_sub_fetch(&k->queued, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST);
    if (lease)
        __atomic_sub_fetch(&rd_leased, 1, __ATOMIC_SEQ_CST);
    if (__atomic_sub_fetch(&rd_inflight, 1, __ATOMIC_SEQ_CST) == 0)
        unblock_futex_wake(&rd_inflight);
    rd_lease_put(lease);
}

/* A cold read of n bytes on k's filesystem took ns. */
static void rd_note_cost(wb_worker_t *k, size_t n, uint64_t ns)
{
    if (n >= (256u << 10))
        note_ns_per_kb(&k->rd_ns_per_kb, n, ns);
}

/* Every piece in flight read (not finished: its pages open when used); without
 * `all`, pieces under a read lease go on (nothing can write their file before
 * they are read: an open for writing waits for the lease). */
void rd_settle(int all)
{
    uint32_t n = __atomic_load_n(&rd_inflight, __ATOMIC_SEQ_CST);
    if (n == 0 || (!all && n == __atomic_load_n(&rd_leased, __ATOMIC_SEQ_CST)))
        return;
    unblock_counter_add(&unblock_stats.io_waits, 1);
    unblock_protect_files_read(all);
}



static const unblock_io_kind_t read_kind = { "background read", read_job };

/* Starts one piece: [p, p+n) from offset off; 0, or -1 if it cannot (no slot,
 * buffer, job or protection: the caller reads it itself). */
static int rd_piece(int fd, wb_worker_t *k, char *p, size_t n, off_t off, int lease, int site,
                    uint64_t t_issue)
{
    uintptr_t ps, pe;
    if (!unblock_protect_eligible(p, n, &ps, &pe))
        return -1;
    unblock_op_t *op = unblock_op_claim(UNBLOCK_OP_RECV, RD_PEER);
    if (!op)
        return -1;
    op->file = lease ? 2 : 1;
    op->bytes = (unblock_bytes_t){ (uintptr_t)p, NULL, n };
    op->pstart = ps;
    op->pend = pe;
    op->view = unblock_pool_has(ps, pe) ? unblock_pool_delta : 0;
    /* Outside the pool the worker maps the runtime buffer itself (not the
     * program's time). */
    char *dst = op->view ? p + op->view : NULL;
    int dfd = unblock_own_fd((int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0));
    wb_job_t *j = dfd >= 0 ? job_take() : NULL;
    if (!j || unblock_op_activate(op) != 0) {
        if (j)
            job_put(j, 0);
        unblock_op_release(op);
        if (dfd >= 0)
            unblock_own_close(dfd);
        return -1;
    }
    /* The predictor's costs (core/sites.h): the program's waits for any piece,
     * and, from the last piece, what the original call would have waited. */
    op->site = site;
    op->t_issue = t_issue;
    *j = (wb_job_t){ .kind = &read_kind, .fd = dfd, .buf = dst, .len = n, .cap = n, .off = off, .op = op, .lease = lease };
    unblock_own_hold(dfd, &j->fd);
    if (lease) {
        qlock_();
        rd_leases[lease - 1].refs++;
        qunlock();
        __atomic_add_fetch(&rd_leased, 1, __ATOMIC_SEQ_CST);
    }
    __atomic_add_fetch(&rd_inflight, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST);
    job_push(k, j, 0);
    job_kick(k);
    unblock_counter_add(&unblock_stats.io_read_chunks, 1);
    return 0;
}

/* read (pos < 0: at the descriptor's offset, which moves) or pread of n bytes
 * into p: 1 if handled here (*ret is the call's result), 0 to run the real call. */
int unblock_rd_read(int fd, void *p, size_t n, off_t pos, unsigned fn, uintptr_t pc,
                    ssize_t *ret)
{
    wb_fd_t *w = slot(fd);
    if (unblock_opt.read_min == 0 || n < unblock_opt.read_min || !w ||
        (w->state != WB_RCOUNTING && w->state != WB_COUNTING && w->state != WB_BUFFERING &&
         w->state != WB_RAHEAD) ||
        !unblock_memory_block_of(p, n, &(uintptr_t){ 0 }, &(uintptr_t){ 0 }) ||
        !unblock_protect_init())
        return 0;
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED))
        flush_same_file(fd); /* our own merged writes to this file go first */
    wlock(w);
    if (w->state != WB_RCOUNTING && w->state != WB_COUNTING && w->state != WB_BUFFERING &&
        w->state != WB_RAHEAD) {
        wunlock(w);
        return 0;
    }
    if (settle_locked(fd, w) != 0 || w->error) { /* the write error goes to the real call */
        wunlock(w);
        return 0;
    }
    /* A counting descriptor's offset is the kernel's (the fast path's count of it
     * may be blurred: fastpath.h). */
    if (pos < 0 && (w->state == WB_COUNTING || w->state == WB_RCOUNTING))
        sync_offset_locked(fd, w);
    off_t off = pos < 0 ? w->off : pos;
    /* What the page cache has, at once, straight into the program's memory. */
    struct iovec iov = { p, n };
    ssize_t r0 = syscall(SYS_preadv2, fd, &iov, 1, (long)off, (long)((uint64_t)off >> 32),
                         RWF_NOWAIT);
    if (r0 < 0 && errno != EAGAIN && errno != EOPNOTSUPP) {
        wunlock(w); /* an error: the real call meets it */
        return 0;
    }
    /* (EOPNOTSUPP: a filesystem that cannot say what is cached, FUSE: all of it
     * goes to the worker.) */
    if (r0 < 0)
        r0 = 0;
    struct stat st;
    size_t rest = 0;
    if ((size_t)r0 < n && syscall(SYS_fstat, fd, &st) == 0 && st.st_size > off + r0) {
        rest = n - (size_t)r0;
        if ((uint64_t)(st.st_size - off - r0) < rest)
            rest = (size_t)(st.st_size - off - r0);
    }
    size_t total = (size_t)r0 + rest;
    if (rest) {
        if (!learn_file(fd, w)) {
            wunlock(w);
            return 0;
        }
        qlock_();
        uint8_t wk = worker_for(w->dev);
        qunlock();
        /* A file that delivers faster than our pieces cost (protection, copies,
         * faults) is read here; every cold read is timed, here or by the worker. */
        char *q = (char *)p + r0, *end = q + rest;
        size_t piece = unblock_opt.io_block > 0 ? unblock_opt.io_block : (1u << 20);
        uint32_t cost = __atomic_load_n(&worker_at(wk)->rd_ns_per_kb, __ATOMIC_RELAXED);
        if (unblock_opt.read_fast_ns && cost == 0 && rest > 2 * piece) {
            /* Not measured yet: the first piece is read here, timed. */
            uint64_t t0 = unblock_now_ns();
            size_t got;
            if (read_whole(fd, q, piece, off + r0, &got) != 0) {
                wunlock(w);
                return 0; /* an error, or the file shrank: the real call answers */
            }
            rd_note_cost(worker_at(wk), piece, unblock_now_ns() - t0);
            q += piece;
            cost = __atomic_load_n(&worker_at(wk)->rd_ns_per_kb, __ATOMIC_RELAXED);
        }
        int held = worker_hold(wk); /* until the pieces are queued */
        int bg = held && !(unblock_opt.read_fast_ns && cost && cost < unblock_opt.read_fast_ns);
        /* The predictor (core/sites.h), per call site: background reads whose
         * waits cost the program as much as the read itself (nothing to hide)
         * run as the original call. */
        int site = bg ? unblock_site_of(pc, UNBLOCK_SITE_FILE_FN + fn, unblock_io_fn_names[fn],
                                        (size_t)(end - q))
                      : -1;
        int predicted_blocking = bg && !unblock_site_convert(site);
        if (predicted_blocking)
            bg = 0;
        uint64_t t_call = unblock_now_ns();
        /* Pieces end on page boundaries, RD_PIECES at most. */
        if ((size_t)(end - q) / piece >= RD_PIECES)
            piece = (size_t)(end - q) / (RD_PIECES - 1);
        int started = 0, lease = bg ? rd_lease_take(fd, w, worker_at(wk)) : 0;
        /* As the paper does: the kernel is told the whole range is wanted, so its
         * read-ahead fetches it in parallel while the worker takes it piece by
         * piece (one pread after another loses a network filesystem's parallel
         * requests: pieces of 1 MiB on slowfs were 15 % slower than one read). */
        if (bg)
            syscall(SYS_fadvise64, fd, (long)(off + (q - (char *)p)), (long)(end - q),
                    POSIX_FADV_WILLNEED);
        while (bg && q < end) {
            char *e = (char *)(((uintptr_t)q + piece) & ~(unblock_page_size - 1));
            if (e <= q || e > end || (size_t)(end - e) < unblock_page_size)
                e = end;
            if (rd_piece(fd, worker_at(wk), q, (size_t)(e - q), off + (q - (char *)p), lease, site,
                         e == end ? t_call : 0) != 0)
                break;
            started++;
            q = e;
        }
        if (held)
            worker_release(wk); /* the queued pieces keep it now */
        if (q < end) { /* what could not be handed over, or a fast file */
            uint64_t t0 = unblock_now_ns();
            size_t got;
            int e = read_whole(fd, q, (size_t)(end - q), off + (q - (char *)p), &got);
            if (e == 0) {
                uint64_t t1 = unblock_now_ns();
                rd_note_cost(worker_at(wk), got, t1 - t0);
                if (predicted_blocking)
                    unblock_site_passed(site, t0, t1);
            }
            if (e != 0 && e != ENODATA && got == 0 && !started && r0 == 0) {
                rd_lease_put(lease);
                wunlock(w);
                return 0; /* the real call gives the error */
            }
            if (got < (size_t)(end - q))
                total = (size_t)(q - (char *)p) + got;
        }
        rd_lease_put(lease); /* the pieces hold it now */
        if (started) {
            unblock_counter_add(&unblock_stats.io_reads_background, 1);
            unblock_site_converted(site, t_call, unblock_now_ns(), (size_t)(end - (char *)p));
        }
    } else if (total == n) {
        unblock_counter_add(&unblock_stats.io_reads_cached, 1);
    }
    if (pos < 0) {
        w->off = off + (off_t)total;
        syscall(SYS_lseek, fd, w->off, SEEK_SET);
    }
    w->seq = 0;
    wunlock(w);
    *ret = (ssize_t)total;
    return 1;
}
