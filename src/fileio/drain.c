/* drain.c — everything written goes to the file when something could look.
 *
 * Before any other call on a descriptor, before a call that names a path or
 * writes elsewhere (news may travel), at close, fork, exit, and on the fatal
 * signals SIGTERM, SIGINT, SIGHUP and SIGABRT at their default action: the
 * worker's jobs of a descriptor, then its block, go to the file; read-ahead
 * buffers of a file that may change are dropped; background reads in flight are
 * read first.  Why no file locks are needed for other processes to see the data:
 * docs/fileio.md.
 * A signal handler's write to a descriptor whose lock the code it interrupted
 * holds is kept and made when that code lets go (wb_defer, wb_replay).
 * Owns: whether the fatal-signal handlers are installed; each thread's writes
 * kept from its handlers.
 * Calls: fdtable.c, merge.c, readahead.c, bgread.c, worker.c (the fatal drain),
 * posix.c (a kept write made as the program's call). */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h"
#include "core/module.h"

#include <sys/mman.h>
static int signals_installed;

/* ---- a signal handler's writes in the middle of one of ours ----
 * The program's handler writes to the very descriptor whose block the code it
 * interrupted was changing, under that descriptor's lock: waiting for the lock
 * would wait for ourselves (the process hung, serial.writebehind.sigsame).  So
 * the bytes are copied, with where they go, into memory of the thread's (mmap:
 * a handler may not allocate), the call returns their count, and they are
 * written through the wrappers, in order, when the thread lets go of its last
 * descriptor lock (wunlock): as if the signal had come just after the
 * interrupted call.  A write that then fails leaves its error to the
 * descriptor's next call, as a background write's. */
typedef struct {
    size_t used, cap;
} wb_kept_t;
typedef struct {
    int fd;
    off_t pos;   /* -1: at the descriptor's offset (write) */
    size_t n;    /* bytes after this header, padded to 8 */
} wb_kept_call_t;
static size_t kept_size(size_t n)
{
    return sizeof(wb_kept_call_t) + ((n + 7) & ~(size_t)7);
}

int wb_defer(int fd, const void *p, size_t n, off_t pos, ssize_t *ret)
{
    wb_kept_t *k = unblock_tls.wb_deferred;
    size_t need = kept_size(n);
    if (k == NULL || k->used + need > k->cap) {
        size_t used = k ? k->used : sizeof(*k), cap = k ? k->cap : 0;
        while (cap < used + need)
            cap = cap ? 2 * cap : 1u << 16;
        void *m = k ? (void *)syscall(SYS_mremap, k, k->cap, cap, MREMAP_MAYMOVE)
                    : (void *)syscall(SYS_mmap, NULL, cap, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            errno = ENOMEM; /* (what the kernel says when it cannot take a write) */
            *ret = -1;
            return 1;
        }
        k = m;
        k->used = used;
        k->cap = cap;
        unblock_tls.wb_deferred = k;
    }
    wb_kept_call_t *c = (wb_kept_call_t *)((char *)k + k->used);
    void *env = unblock_tls.copy_env; /* (the interrupted code may be copying too) */
    int bad = unblock_copy_from_program(c + 1, p, n) != 0;
    unblock_tls.copy_env = env;
    if (bad) {
        errno = EFAULT;
        *ret = -1;
        return 1;
    }
    c->fd = fd, c->pos = pos, c->n = n;
    k->used += need;
    unblock_counter_add(&unblock_stats.io_handler_kept, 1);
    *ret = (ssize_t)n;
    return 1;
}

void wb_replay(void)
{
    if (unblock_tls.wb_replaying)
        return; /* (a handler's, during a replay: the loop below takes them) */
    unblock_tls.wb_replaying = 1;
    int e = errno;
    wb_kept_t *k;
    while ((k = __atomic_exchange_n((wb_kept_t **)&unblock_tls.wb_deferred, NULL,
                                    __ATOMIC_ACQ_REL)) != NULL) {
        for (size_t at = sizeof(*k); at < k->used;) {
            wb_kept_call_t *c = (wb_kept_call_t *)((char *)k + at);
            ssize_t r = unblock_wb_call_write(c->fd, c + 1, c->n, c->pos);
            wb_fd_t *w = slot(c->fd);
            if (r < 0 && w != NULL)
                defer_error(w, errno);
            at += kept_size(c->n);
        }
        syscall(SYS_munmap, k, k->cap);
    }
    unblock_tls.wb_replaying = 0;
    errno = e;
}

/* Everything of fd to the file, whatever its state (locked).  The kernel offset is
 * only set while the descriptor is followed. */
int settle_locked(int fd, wb_fd_t *w)
{
    if (w->state == WB_BUFFERING) {
        /* A block forced out before it held WB_PAYS writes did not pay: each
         * such flush is a system call or two more than the writes it saved (a
         * program that writes a file and, after each write, a pipe, a terminal
         * or a file not followed: 2.2x plain).  The descriptor counts again,
         * from the fast path, and needs a run twice as long to merge again.
         * Not when a handler held in one of ours forces it out (signals.c): it
         * comes right after that call, often the one that began the block,
         * whatever the program's pace (a handler that reports progress every
         * 50 us stopped merging at every block's start, serial.writebehind.
         * sigwrite); without unblock it would have come during that call. */
        uint32_t held = w->len ? w->bwrites : WB_PAYS;
        int r = flush_locked(fd, w);
        if (r == 0 && held < WB_PAYS && !unblock_tls.sig_releasing) {
            give_back_locked(fd, w);
            forget_locked(w, WB_COUNTING);
            w->wstrikes += w->wstrikes < 255;
            unblock_counter_add(&unblock_stats.io_merge_stops, 1);
        }
        return r;
    }
    if (w->state == WB_RAHEAD)
        ra_drop_locked(fd, w);
    drain_locked(w);
    return 0;
}


/* Another descriptor of the same file (or of any file, when fd's is unknown) may
 * hold merged writes: they go first, so fd sees them. */
void flush_same_file(int fd)
{
    wb_fd_t *w = slot(fd);
    int known = learn_file(fd, w);
    for (int o = 0; o < fd_end(); o++) {
        wb_fd_t *x = slot(o);
        if (o == fd || x->state == WB_RAHEAD ||
            (x->len == 0 && __atomic_load_n(&x->pending, __ATOMIC_SEQ_CST) == 0) ||
            (known && (!x->known || x->dev != w->dev || x->ino != w->ino)))
            continue;
        wlock(x);
        settle_locked(o, x);
        wunlock(x);
    }
}

/* Before any other call on fd: its block goes to the file.  Returns a deferred
 * error (to be returned by this call) or 0.  With UNBLOCK_WB_STOP the descriptor
 * stops being followed (dup, fcntl, mmap: it may be shared or mapped). */
int unblock_wb_before_fd(int fd, int flags)
{
    rd_settle(0); /* a truncation, a write, a mapping of the file... */
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED))
        flush_same_file(fd);
    if (__atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED))
        ra_drop_same_file(fd);
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE || w->state == WB_OFF)
        return 0;
    wlock(w);
    int e = 0;
    settle_locked(fd, w);
    if (!(flags & UNBLOCK_WB_KEEP))
        e = take_error(w);
    else if (__atomic_load_n(&w->error, __ATOMIC_ACQUIRE))
        flags &= ~UNBLOCK_WB_STOP; /* (an OFF descriptor returns none) */
    /* Space reserved ahead of the data is given back before the descriptor is
     * no longer followed (it would stay allocated past the end of the file for
     * good) or the program changes the file's size (a size that grows into it
     * would keep the rest). */
    if (flags & (UNBLOCK_WB_STOP | UNBLOCK_WB_RESIZE)) {
        give_back_locked(fd, w);
        w->alloc_end = 0; /* its blocks may go */
    }
    if (flags & UNBLOCK_WB_STOP)
        forget_locked(w, WB_OFF);
    wunlock(w);
    return e;
}


/* close(fd): the block goes first; returns the deferred error, if any. */
int unblock_wb_closing(int fd)
{
    wb_fd_t *w = slot(fd);
    if (!w || (w->state == WB_NONE && !__atomic_load_n(&w->outside, __ATOMIC_RELAXED)))
        return 0;
    wlock(w);
    w->outside = 0;
    w->bwrites = WB_PAYS; /* a last flush is no verdict on merging */
    settle_locked(fd, w);
    int e = take_error(w);
    give_back_locked(fd, w);
    forget_locked(w, WB_NONE);
    w->known = 0;
    wunlock(w);
    return e;
}

int unblock_wb_closing_range(unsigned first, unsigned last, int report)
{
    int e = 0;
    unsigned end = (unsigned)fd_end();
    for (unsigned fd = first; fd <= last && fd < end; fd++) {
        int x = unblock_wb_closing((int)fd);
        if (x && report)
            unblock_warn("a background write to descriptor %u failed and the program, which "
                         "closed it with closefrom, cannot see it: %s", fd, strerror(x));
        if (x && !e)
            e = x;
    }
    return e;
}

void unblock_wb_flush_all(void)
{
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED) == 0)
        return;
    rd_settle(0); /* what background reads read must be the file before the news */
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = slot(fd);
        if (w->state == WB_RAHEAD ||
            (w->len == 0 && __atomic_load_n(&w->pending, __ATOMIC_SEQ_CST) == 0) ||
            !wlock_sweep(w))
            continue;
        settle_locked(fd, w);
        wunlock(w);
    }
}

void unblock_wb_news(void)
{
    unblock_wb_flush_all();
    unblock_ra_drop_all();
    if (__atomic_load_n(&unblock_sc_unsettled, __ATOMIC_RELAXED))
        sc_settle(); /* (a load and a compare where the sidecar let go already) */
}

/* A lock is news both ways: another process may take it next and read the file
 * (the lock-file pattern: lock, write, unlock), or this one reads what another
 * wrote under it.  Before, a lock on another descriptor (a lock file) flushed
 * nothing, and a reader that took it after our unlock read a short file.
 * `ofd`: a lock of the open file description (flock, OFD locks, leases), which
 * outlives the program's close while the crash-safety sidecar holds a duplicate:
 * closes wait for the sidecar from now on. */
void unblock_wb_locking(int ofd)
{
    if (ofd)
        unblock_wb_sidecar_must_wait();
    unblock_wb_news();
}

/* truncate(path): the file of any descriptor may have lost blocks. */
void unblock_wb_truncated(void)
{
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = slot(fd);
        if (w->alloc_end == 0)
            continue;
        wlock(w);
        w->alloc_end = 0;
        wunlock(w);
    }
}

/* fork: the child shares every descriptor's offset; stop following them all. */
void unblock_wb_forking(void)
{
    rd_settle(1); /* no worker in the child: everything read first */
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = slot(fd);
        if (w->state == WB_NONE)
            continue;
        wlock(w);
        w->bwrites = WB_PAYS; /* a last flush is no verdict on merging */
        settle_locked(fd, w);
        give_back_locked(fd, w);
        if (w->state != WB_NONE)
            forget_locked(w, WB_OFF);
        wunlock(w);
    }
    sc_settle(); /* the child may execute one of them */
}

void unblock_wb_limit_changing(void)
{
    unblock_wb_flush_all();
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = slot(fd);
        if (w->reserved == 0)
            continue;
        wlock(w);
        give_back_locked(fd, w);
        wunlock(w);
    }
}

/* A call of the program met ENOSPC or EDQUOT: the space reserved ahead of
 * buffered data (merge.c: reserve_locked) may be what it lacked, space the
 * program has not written and, without unblock, would not hold.  Everything
 * buffered goes to its file (its space is reserved: this cannot fail for want
 * of it) and every reservation is given back.  1 when there was one: the call
 * is tried again, and meets the error again only if it would have without us.
 * Only on that error path: nothing on the common one. */
int unblock_wb_space_short(int err)
{
    if (err != ENOSPC && err != EDQUOT)
        return 0;
    int any = 0;
    for (int fd = 0; fd < fd_end() && !any; fd++)
        any = slot(fd)->reserved > 0;
    if (!any)
        return 0;
    unblock_wb_limit_changing();
    unblock_counter_add(&unblock_stats.io_space_retries, 1);
    return 1;
}

/* Sets unblock_wb_ending (exec: 2 more; else bit 0).  A write of another
 * thread that read it as 0 under its descriptor's lock may still be merging,
 * into a block the flush after this would pass by as empty (or return at once,
 * nothing yet counted dirty): each lock another thread holds is waited for,
 * 100 ms at most in all (async-signal-safe: the fatal drain calls it; its
 * thread holds no lock, the trampoline saw to that).  A writer that takes the
 * lock again after it reads the flag as set. */
void wb_ending_begin(int exec)
{
    if (exec)
        __atomic_add_fetch(&unblock_wb_ending, 2, __ATOMIC_SEQ_CST);
    else
        __atomic_or_fetch(&unblock_wb_ending, 1, __ATOMIC_SEQ_CST);
    uint64_t until = 0;
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = slot(fd);
        while (__atomic_load_n(&w->lock, __ATOMIC_ACQUIRE) != 0 && !wlock_mine(w)) {
            uint64_t now = unblock_now_ns();
            if (until == 0)
                until = now + 100000000ull;
            else if (now > until)
                break;
            syscall(SYS_sched_yield);
        }
    }
}

/* At exit: everything to the file; errors nobody consumed are reported.  The
 * program's other threads may still write until the process ends (exit_group):
 * from here on their writes are made in their calls (unblock_wb_ending, as
 * during a fatal signal's drain).  Before, those merged after this flush were
 * lost with the process though their write() had returned: a program whose
 * second thread wrote 8-byte records while the main thread called exit() lost
 * some in 18 of 20 runs (serial.writebehind.exit-thread). */
void unblock_wb_at_exit(void)
{
    if ((pid_t)syscall(SYS_getpid) == unblock_g.pid) { /* (not a vfork child's exit) */
        wb_ending_begin(0);
    }
    unblock_wb_flush_all();
    for (int fd = 0; fd < fd_end(); fd++) {
        report_unconsumed(fd, slot(fd));
        if (slot(fd)->reserved > 0 && wtrylock(slot(fd))) {
            give_back_locked(fd, slot(fd));
            wunlock(slot(fd));
        }
    }
    sc_quit();
}

void unblock_wb_execing(void)
{
    sc_quit();
}

/* exec replaces the whole process, the program's other threads with it: from
 * before its flush until it fails, their writes are made in their calls
 * (unblock_wb_ending counts execs under way in steps of 2).  Before, those
 * merged after the flush were lost by a successful exec: a second thread
 * writing 8-byte records while the main thread exec'd lost some in 20 of 20
 * programs (serial.writebehind.exec-thread). */
int unblock_wb_exec_begin(void)
{
    if ((pid_t)syscall(SYS_getpid) != unblock_g.pid)
        return 0; /* a vfork child: its exec takes none of its parent's threads */
    wb_ending_begin(1);
    return 1;
}

void unblock_wb_exec_failed(int began)
{
    if (began)
        __atomic_sub_fetch(&unblock_wb_ending, 2, __ATOMIC_SEQ_CST);
}

/* ---- fatal signals: write, then die ---- */

/* SIGTERM, SIGINT, SIGHUP and SIGABRT where the program left the default action
 * (SIGSEGV goes through the fault handler, signals.c). */
static const int wb_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGABRT };

static void on_fatal(int sig)
{
    int saved = errno;
    /* Every module's drain, from the top: MPI-IO write-behind's pieces, then
     * this module's blocks (unblock_wb_drain_fatal). */
    unblock_modules_fatal_drain();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    errno = saved;
    syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
}

void unblock_wb_fatal_signals(void)
{
    install_signals();
}

void install_signals(void)
{
    if (__atomic_exchange_n(&signals_installed, 1, __ATOMIC_ACQ_REL))
        return;
    for (unsigned i = 0; i < sizeof(wb_signals) / sizeof(wb_signals[0]); i++) {
        struct sigaction old, sa;
        /* Only where the program left the default: its own handler stays its own
         * (and exit() from it still flushes, through the destructor). */
        if (sigaction(wb_signals[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        /* (Through our own sigaction, signals.c: like the program's handlers,
         * this one is held while the thread holds a descriptor lock, so the
         * drain never comes in the middle of one of ours and passes that
         * descriptor's block by; serial.writebehind.sigend-term.) */
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_fatal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(wb_signals[i], &sa, NULL);
    }
}
