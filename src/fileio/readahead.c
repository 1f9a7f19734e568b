/* readahead.c — small sequential reads served from a runtime buffer.
 *
 * A read-only descriptor that reads small pieces in sequence (3 in a row) gets a
 * buffer filled by one pread of twice what it has read so far (at least RA_MIN,
 * at most a block); reads are served from it until the program reads elsewhere
 * or news arrives that the file may have changed (any MPI call, a write to the
 * file through another descriptor, a path or process call): then it is dropped
 * and the kernel's offset set to where the program believes it is.
 * A buffer lives only under a read lease on its file (bgread.c's records): no
 * process can open the file for writing or truncate it before the lease is
 * given up, and its break (polled by the worker, RA_LEASE_POLL_MS) drops the
 * buffer first, so news the runtime cannot see (a signal, shared memory, a
 * sleep) never finds old bytes in it.  Where no lease can be had (the file is
 * open for writing somewhere, not ours, a filesystem without leases) the
 * descriptor does not read ahead.
 * Owns: the buffer of each descriptor it reads ahead on (in its fdtable entry),
 * and its reference to the lease.
 * Calls: fdtable.c, worker.c (buffers, the filesystem's worker), bgread.c
 * (leases), drain.c (our own merged writes to the file go first). */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h"
#define RA_MIN (64 << 10) /* the first fill: at least a filesystem block, many of them */
#define RA_PAYS 16        /* reads a buffer must serve to have paid for itself */

/* Forgets fd's read-ahead buffer (locked); the kernel's offset is set to where
 * the program believes it is (fills used pread and did not move it). */
void ra_drop_locked(int fd, wb_fd_t *w)
{
    if (w->state != WB_RAHEAD)
        return;
    if (w->served < RA_PAYS)
        w->strikes += w->strikes < 255;
    else
        w->strikes = 0;
    w->rbytes = 0; /* the next run of reads starts small again */
    syscall(SYS_lseek, fd, w->off, SEEK_SET);
    ra_unlease_locked(w);
    if (w->buf)
        put_buffer(w->buf, unblock_opt.io_block);
    w->buf = NULL;
    w->len = 0;
    w->seq = 0;
    w->state = WB_RCOUNTING;
    __atomic_sub_fetch(&unblock_ra_live, 1, __ATOMIC_RELAXED);
}

/* Read-ahead's reference to its lease goes (locked): the last one gives the
 * lease up, and a writer waiting for it goes on. */
void ra_unlease_locked(wb_fd_t *w)
{
    int l = w->ralease;
    if (!l)
        return;
    w->ralease = 0;
    rd_lease_put(l);
}

/* A worker, while read-ahead buffers live: a lease of theirs that the kernel is
 * breaking (SIGURG, blocked in the workers, says one may be) drops its buffer and
 * gives the lease up, so the writer's open returns and the program's next read
 * meets the file.  A descriptor whose lock is held is looked at again at the
 * next poll: a worker never waits for a descriptor lock. */
void ra_check_leases(void)
{
    sigset_t urg;
    sigemptyset(&urg);
    sigaddset(&urg, SIGURG);
    struct timespec now = { 0, 0 };
    static uint32_t retry; /* a broken lease was left for the next poll */
    if (syscall(SYS_rt_sigtimedwait, &urg, NULL, &now, 8) != SIGURG &&
        !__atomic_load_n(&retry, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&retry, 0, __ATOMIC_RELAXED);
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = slot(fd);
        int l = w->ralease; /* looked at again under the lock */
        if (w->state != WB_RAHEAD || !l || rd_lease_held(l))
            continue;
        if (!wtrylock(w)) {
            __atomic_store_n(&retry, 1, __ATOMIC_RELAXED);
            continue;
        }
        if (w->state == WB_RAHEAD && w->ralease == l) {
            ra_drop_locked(fd, w);
            unblock_counter_add(&unblock_stats.io_readahead_broken, 1);
        }
        wunlock(w);
    }
}

void unblock_ra_drop_all(void)
{
    if (__atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED) == 0)
        return;
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = slot(fd);
        if (w->state != WB_RAHEAD || !wlock_sweep(w))
            continue;
        ra_drop_locked(fd, w);
        wunlock(w);
    }
}


/* Something may change fd's file (a write, a truncation, any call through
 * another descriptor): read-ahead of that file on other descriptors (of every
 * file, when fd's is unknown) is dropped. */
void ra_drop_same_file(int fd)
{
    wb_fd_t *w = slot(fd);
    int known = learn_file(fd, w);
    for (int o = 0; o < fd_end(); o++) {
        wb_fd_t *x = slot(o);
        if (o == fd || x->state != WB_RAHEAD ||
            (known && (x->dev != w->dev || x->ino != w->ino)))
            continue;
        wlock(x);
        ra_drop_locked(o, x);
        wunlock(x);
    }
}

/* read(fd, p, n): 1 if served (from the buffer, or after one fill: a pread of
 * the next `ahead` bytes at the program's offset), 0 to forward it.  The answer
 * is the kernel's: a fill is a read of the file at that moment, and a short fill
 * (the end of the file) gives the short count a read would give. */
/* Copies n bytes of the file at `at` from fd's read-ahead buffer, filling it at
 * `at` first when they are not all in it (locked, RAHEAD): the bytes copied
 * (short at the end of the file), or -1 when the real call must run (its error,
 * or a bad buffer: the kernel's answer, EFAULT), the buffer dropped. */
static ssize_t ra_serve_locked(int fd, wb_fd_t *w, void *p, size_t n, off_t at)
{
    off_t end = w->boff + (off_t)w->len;
    if (at < w->boff || at + (off_t)n > end) {
        size_t want = w->ahead > n ? w->ahead : n;
        ssize_t r;
        do
            r = syscall(SYS_pread64, fd, w->buf, want, at);
        while (r < 0 && errno == EINTR);
        if (r < 0) {
            ra_drop_locked(fd, w); /* the real read meets the error */
            return -1;
        }
        unblock_counter_add(&unblock_stats.io_readahead_fills, 1);
        w->boff = at;
        w->len = (size_t)r;
        w->reof = (size_t)r < want;
        uint64_t next = 2 * (w->rbytes + n);
        w->ahead = next > unblock_opt.io_block ? unblock_opt.io_block
                   : next > w->ahead ? (size_t)next : w->ahead;
        end = w->boff + (off_t)w->len;
    } else {
        unblock_counter_add(&unblock_stats.io_readahead_hits, 1);
    }
    size_t k = (size_t)(end - at) < n ? (size_t)(end - at) : n;
    if (k && unblock_copy_from_program(p, w->buf + (at - w->boff), k) != 0) {
        ra_drop_locked(fd, w);
        return -1;
    }
    w->rbytes += k;
    w->served++;
    return (ssize_t)k;
}

/* The job that wakes a worker when a lease is taken: nothing to do but that. */
static void lease_watch(wb_worker_t *k, wb_job_t *j)
{
    unblock_io_job_release(k, j);
}
static const unblock_io_kind_t lease_watch_kind = { "lease watch", lease_watch };

/* A run of reads (or preads) seen while RCOUNTING: the descriptor reads ahead
 * from `at` from now on, if a read lease and a buffer can be had (locked). */
static void ra_start_locked(int fd, wb_fd_t *w, off_t at)
{
    if (!unblock_protect_init() || !learn_file(fd, w))
        return;
    qlock_();
    uint8_t k = worker_for(w->dev);
    qunlock();
    /* Held until the buffer counts in unblock_ra_live: the lease's breaks go to
     * this worker's thread, which must not end before it watches for them. */
    int held = worker_hold(k);
    int l = held ? rd_lease_take(fd, w, worker_at(k)) : 0;
    if (!l) {
        if (held)
            worker_release(k);
        /* Tried again after twice as long a run each time. */
        w->unleased += w->unleased < 255;
        w->seq = 0;
        unblock_counter_add(&unblock_stats.io_readahead_unleased, 1);
        return;
    }
    char *b = get_buffer(unblock_opt.io_block);
    if (!b) {
        rd_lease_put(l);
        worker_release(k);
        return;
    }
    w->ralease = (int8_t)l;
    w->buf = b;
    w->len = 0;
    w->boff = at;
    w->reof = 0;
    w->served = 0;
    w->ahead = 2 * w->rbytes < RA_MIN ? RA_MIN : 2 * w->rbytes;
    if (w->ahead > unblock_opt.io_block)
        w->ahead = unblock_opt.io_block;
    w->state = WB_RAHEAD;
    __atomic_add_fetch(&unblock_ra_live, 1, __ATOMIC_SEQ_CST);
    /* The worker may sleep with no timeout: a job wakes it, and it finds the
     * buffer counted, so it looks at the leases while any buffer lives. */
    if (unblock_io_submit(k, &lease_watch_kind, NULL) != 0)
        ra_drop_locked(fd, w);
    worker_release(k);
}

/* Whether a full small read of n bytes (r returned) continues a run that has
 * reached the length that starts read-ahead (locked, RCOUNTING): 3 in a row, and
 * each buffer that was dropped before it paid for its fill doubles that (news
 * that keeps coming: a stat between the reads). */
static int ra_run_locked(wb_fd_t *w, size_t n, ssize_t r, int continues)
{
    w->rbytes += (uint64_t)(r > 0 ? r : 0);
    if ((size_t)r != n || n == 0 || n > unblock_opt.io_block / 4 || !continues) {
        w->seq = 0;
        return 0;
    }
    if (w->seq < UINT16_MAX)
        w->seq++;
    unsigned shift = (w->strikes < 6 ? w->strikes : 6) + (w->unleased < 8 ? w->unleased : 8);
    return w->seq >= (3u << shift);
}

int unblock_wb_read(int fd, void *p, size_t n, ssize_t *ret)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state != WB_RAHEAD) {
        /* A pipe, a socket, the terminal: news that a file changed may come
         * through them.  (Reads of other followed files do not drop.) */
        if (__atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED) &&
            (!w || (w->state != WB_RCOUNTING && w->state != WB_COUNTING &&
                    w->state != WB_BUFFERING)))
            unblock_ra_drop_all();
        return 0;
    }
    if (n == 0 || n > unblock_opt.io_block / 4)
        return 0;
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED))
        flush_same_file(fd); /* our own merged writes to this file go first */
    wlock(w);
    if (w->state != WB_RAHEAD) {
        wunlock(w);
        return 0;
    }
    ssize_t k = ra_serve_locked(fd, w, p, n, w->off);
    if (k >= 0)
        w->off += (off_t)k;
    wunlock(w);
    if (k < 0)
        return 0;
    *ret = k;
    return 1;
}

int unblock_wb_pread(int fd, void *p, size_t n, off_t off, ssize_t *ret)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state != WB_RAHEAD || n == 0 || n > unblock_opt.io_block / 4 || off < 0)
        return 0;
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED))
        flush_same_file(fd);
    wlock(w);
    /* Inside the buffer, or continuing the last pread; else the real call
     * (which drops the buffer: the program reads elsewhere now). */
    ssize_t k = w->state != WB_RAHEAD ? -1
                : (off >= w->boff && off + (off_t)n <= w->boff + (off_t)w->len) ||
                          off == w->plast
                      ? ra_serve_locked(fd, w, p, n, off)
                      : -1;
    if (k >= 0)
        w->plast = off + (off_t)k;
    wunlock(w);
    if (k < 0)
        return 0;
    *ret = k;
    return 1;
}

/* After a forwarded read(fd, n) returned r: the offset follows; on a read-only
 * descriptor, 3 complete small reads in a row start read-ahead.  `rbytes` counts
 * the bytes of the current run of sequential reads (the fill size follows it). */
void unblock_wb_pread_done(int fd, size_t n, off_t off, ssize_t r)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state != WB_RCOUNTING || r < 0 || off < 0)
        return;
    wlock(w);
    if (w->state == WB_RCOUNTING) {
        int continues = off == w->plast;
        w->plast = off + (off_t)r;
        if (ra_run_locked(w, n, r, continues))
            ra_start_locked(fd, w, w->plast);
    }
    wunlock(w);
}

void unblock_wb_read_done(int fd, size_t n, ssize_t r)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE || w->state == WB_OFF || r < 0)
        return;
    wlock(w);
    if (w->state == WB_RCOUNTING) {
        w->off += r;
        if (ra_run_locked(w, n, r, 1)) {
            sync_offset_locked(fd, w); /* not the fast path's count (fastpath.h) */
            ra_start_locked(fd, w, w->off);
        }
    } else if (w->state != WB_NONE && w->state != WB_OFF && r > 0) {
        w->off += r;
        w->seq = 0;
    }
    wunlock(w);
}
