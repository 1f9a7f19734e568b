/* fileio_internal.h — what the files of src/fileio/ share, and nothing else does.
 *
 * The mechanisms (one file each; each file's opening comment says what it owns
 * and what it calls):
 *   fdtable.c    the per-descriptor table: which descriptors are followed, their
 *                state, locks, deferred errors, per-file access patterns and
 *                costs; writing a descriptor's bytes (write_out)
 *   merge.c      small writes merged into a block per descriptor, the space
 *                reserved ahead of them, large writes queued (copied)
 *   protected.c  large writes queued from the program's own pages, read-only
 *                until the worker has written them
 *   readahead.c  small sequential reads served from a runtime buffer
 *   bgread.c     large reads that return while the worker reads (read leases)
 *   drain.c      everything to the file: before other calls, at close, fork,
 *                exit, news, and on fatal signals
 *   worker.c     the per-filesystem worker threads, their job queue and timer;
 *                jobs of registered kinds (worker.h)
 *   sidecar.c    the workers' buffers in shared memory, and the process that
 *                writes them if the program is killed (crash safety)
 *   trace.c      UNBLOCK_TRACE: the program's reads and writes, per file, in runs
 *   fastpath.h   calls nothing needs to look at go straight to the kernel: the
 *                per-descriptor byte that says so, kept by wunlock (posix.c
 *                reads it; the counting it needs, inlined into posix.c, is in
 *                precount.h)
 * A descriptor's state moves COUNTING -> BUFFERING (writes) or RCOUNTING ->
 * RAHEAD (read-only descriptors); OFF: no longer followed.  docs/fileio.md says
 * why each rule is what it is. */
#ifndef UNBLOCK_FILEIO_INTERNAL_H
#define UNBLOCK_FILEIO_INTERNAL_H

#include "fileio/fileio.h"
#include "fileio/fastpath.h"
#include "fileio/sidecar.h"
#include "fileio/worker.h"
#include "core/log.h"
#include "core/options.h"
#include "core/sites.h"
#include "core/stats.h"
#include "interpose/interpose.h"
#include "memory/memory.h"
#include "progress/progress.h"
#include "protect/protect.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define WB_FDS UNBLOCK_FIO_FDS
#define WB_RESERVE_STEP (1u << 20)
#define WB_RESERVE_MAX (64 << 20)
/* A large write is queued only where the file takes writes slower than our copy
 * costs (UNBLOCK_IO_QUEUE_NS, 1024 ns per KiB): about 0.3-0.5 ns per byte into
 * fresh memory here, page faults included (a local disk in the page cache takes
 * 0.3-0.4 ns per byte itself: copying there made the 16 MiB checkpoint's write
 * phase 2x slower). */
#define WB_LARGE_MIN UNBLOCK_WB_TIMED /* writes timed for that */
/* The "peer" of file writes in the operation table (UNBLOCK_PEER_MAX of them). */
#define WB_PEER (INT_MIN + 1)


/* Write side: COUNTING -> BUFFERING; read side (read-only descriptors):
 * RCOUNTING -> RAHEAD; OFF: no longer followed. */
enum { WB_NONE = 0, WB_COUNTING, WB_BUFFERING, WB_OFF, WB_RCOUNTING, WB_RAHEAD };

typedef struct {
    uintptr_t lock;    /* its holder's thread (&unblock_tls); 0: free */
    uint8_t state;
    uint8_t idle;      /* timer rounds the block has not changed in */
    uint8_t wstrikes;  /* blocks the program's other calls forced out before they paid */
    uint8_t quiet;     /* COUNTING, its writes sampled: no run for WB_QUIET_AFTER writes */
    uint16_t seq;      /* writes (reads) in sequence seen while COUNTING (RCOUNTING) */
    uint16_t calm;     /* writes in a row (COUNTING) that did not continue the last one */
    int error;         /* a flush error not yet returned */
    off_t off;         /* the descriptor's offset as the program sees it */
    off_t boff;        /* file offset of buf[0] */
    size_t len;        /* bytes in buf */
    off_t rlo, reserved; /* [rlo, reserved) is fallocate'd (KEEP_SIZE) */
    off_t alloc_end;   /* [0, alloc_end) of the file had its blocks, no hole, when
                          buffering started: writes there need no reservation */
    off_t resv_min;    /* the least reserved ahead of a write (MPI-IO write-behind's
                          descriptors: unblock_wb_reserve_ahead), or 0 */
    uint8_t resv_made; /* it reserved before (merge.c: only its first range is
                          reserved a page at a time) */
    char *buf;
    uint32_t pending;  /* its blocks handed to the worker, not yet written (futex) */
    uint32_t bwrites;  /* writes merged into the current block */
    uint8_t wk;        /* its filesystem's worker */
    int16_t file;      /* its entry in files[], or -1 */
    uint8_t known;     /* opened through a wrapper: dev and ino are its file's */
    uint8_t exec;      /* ... and its mode had an execute bit (sidecar.c: sc_forget) */
    dev_t dev;
    ino_t ino;
    off_t last_end;    /* where the previous write ended (access pattern) */
    off_t last_gap;
    /* Counted here under the lock (no atomics on the write path), added to the
     * file's entry and io.merged by fold_locked. */
    uint64_t writes, bytes, merged, direct, sequential, strided, random, min_size, max_size;
    /* What writes cost the file: its entry's (files[]), or own_costs when the
     * table is full.  Large writes below UNBLOCK_IO_QUEUE_NS are not queued; small
     * writes are merged only where that pays (small_direct). */
    unblock_wb_costs_t *costs, own_costs;
    /* Read-ahead (RAHEAD): buf holds len bytes of the file from boff; reof: the
     * last fill met the end of the file; ahead: the next fill's size; rbytes: bytes
     * the program has read through the descriptor. */
    uint8_t reof;
    uint8_t strikes;   /* buffers dropped before they served RA_PAYS reads */
    uint32_t served;   /* reads the current buffer served */
    size_t ahead;
    uint64_t rbytes;
    off_t plast;       /* where the last pread ended (sequential preads) */
    int8_t lease;      /* background reads: the read lease record + 1, or 0 (qlock) */
    int8_t ralease;    /* read-ahead's own reference to that record + 1, or 0 */
    uint8_t unleased;  /* read-ahead refused for want of a lease (backs off) */
    uint8_t sc;        /* the sidecar holds a duplicate of it */
    uint16_t trace;    /* UNBLOCK_TRACE: its file's id + 1, TRACE_UNKNOWN, 0 (trace.c) */
#define TRACE_UNKNOWN 0xFFFF /* ... a descriptor not looked at yet */
    uint8_t noquota;   /* no quota of its file readable (merge.c: quota_room) */
    uint8_t outside;   /* its file is one a module holds writes of (core.h:
                          unblock_outside_look): every call looks there first */
    struct wb_job *pj; /* its last protected write, which the next one may extend ... */
    uint64_t pj_seq;   /* ... while its op is this one (a job is reused) */
} wb_fd_t;

/* A block (or a copied large write) handed to the worker; or, with `op`, a piece
 * of a background read: len bytes at off into buf (the op's runtime buffer or
 * runtime view), through fd, a duplicate the job owns; or, with `wop`, a large
 * write from the program's own pages (buf), which wop keeps read-only until the
 * worker has written them (see "protected writes" below). */
typedef struct wb_job {
    struct wb_job *next;
    const struct unblock_io_kind *kind; /* what the worker does with it (worker.h) */
    void *arg;         /* a kind of another module: its own description of the job */
    int fd;
    char *buf;
    size_t len, cap;
    off_t off;
    unblock_op_t *op;
    int lease;         /* a read under a read lease: its record + 1, else 0 */
    unblock_op_t *wop; /* a protected write: its op, started as wseq */
    uint64_t wseq;
    uint32_t ctl;      /* JW_* (a futex word) */
    uint32_t takers;   /* threads that reached the job through its op: not reused meanwhile */
    uint8_t started;   /* dequeued by its worker: no longer extended (qlock) */
    size_t done;       /* bytes written so far */
    char *copy;        /* bytes [copy_from, len) copied out by a fault ... */
    size_t copy_from, copy_cap, copy_bytes; /* ... its mapping, and the budget it holds */
} wb_job_t;

/* One worker per filesystem (st_dev), started when a descriptor on it first
 * buffers; past WB_WORKERS filesystems, several share one.  Its queue is FIFO and a
 * descriptor always uses the same worker, so a file's writes land in program
 * order. */
#define WB_WORKERS 8
typedef struct wb_worker {
    dev_t dev;
    uint8_t used, started, ok; /* (qlock) started: a thread runs or is starting, or
                                  could not start; ok: it runs (atomic) */
    uint32_t holds;     /* callers about to give it work (worker_hold): it stays */
    uint32_t gen;       /* threads that ran it: each adds 1 once it runs */
    wb_job_t *head, *tail;
    uint32_t queued;    /* futex: the worker sleeps while 0 and no block is dirty */
    pid_t tid;          /* its thread: read lease breaks are signalled to it (blocked) */
    uint32_t rd_ns_per_kb; /* what cold reads of its filesystem cost (0: not measured) */
    uintptr_t last_lo, last_hi; /* the last piece read, in memory (qlock) ... */
    uintptr_t urgent_lo;        /* ... and the last one the program waited for */
    int down;                   /* the program waits for pieces in falling order */
} wb_worker_t;

/* A descriptor's lock.  The thread's count of those it holds
 * (unblock_tls.wb_locks) tells a sweep over every descriptor that it runs
 * inside one of our own locked regions, which only a signal handler of the
 * program can make happen (a handler that writes to stderr or sends a signal:
 * news, drain.c): such a sweep takes no lock that is busy, since the holder may
 * be the very code it interrupted (wlock_sweep). */
static inline int wtrylock(wb_fd_t *w)
{
    unblock_tls.wb_locks++; /* first: a handler may come right after the exchange */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    uintptr_t free_ = 0;
    if (__atomic_compare_exchange_n(&w->lock, &free_, (uintptr_t)&unblock_tls, 0,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return 1;
    if (--unblock_tls.wb_locks == 0 && unblock_unlikely(unblock_tls.sig_pending))
        unblock_signals_release(); /* (one came in the moment it counted) */
    return 0;
}

static inline void wlock(wb_fd_t *w)
{
    while (!wtrylock(w))
        syscall(SYS_sched_yield);
}

/* Whether this thread holds w's lock: a signal handler's call came in the middle
 * of one of ours on w (drain.c: wb_defer). */
static inline int wlock_mine(const wb_fd_t *w)
{
    return unblock_unlikely(__atomic_load_n(&unblock_tls.wb_locks, __ATOMIC_RELAXED) != 0) &&
           __atomic_load_n(&w->lock, __ATOMIC_RELAXED) == (uintptr_t)&unblock_tls;
}

/* For a sweep over every descriptor: w's lock, or 0 when this thread holds a
 * descriptor's lock already and w's is busy (the sweep passes w by: its bytes
 * reach the file at the latest when the interrupted code's call is over and its
 * timer or the next news comes; waiting would wait for ourselves).
 * serial.writebehind.sigwrite hung before. */
static inline int wlock_sweep(wb_fd_t *w)
{
    if (unblock_unlikely(__atomic_load_n(&unblock_tls.wb_locks, __ATOMIC_RELAXED) != 0))
        return wtrylock(w);
    wlock(w);
    return 1;
}

extern UNBLOCK_HIDDEN wb_fd_t unblock_fio_fds[WB_FDS]; /* read only through slot and fd_end */

/* What the fast path may do with calls on w (fastpath.h), from its state. */
static inline uint8_t fast_mode(const wb_fd_t *w)
{
    if (w->trace || w->outside || __atomic_load_n(&w->error, __ATOMIC_RELAXED))
        return UNBLOCK_FIO_SLOW;
    switch (w->state) {
    case WB_NONE:
    case WB_OFF:
        return UNBLOCK_FIO_PASS;
    case WB_COUNTING:
        return w->quiet ? UNBLOCK_FIO_QUIET : UNBLOCK_FIO_WCOUNT;
    case WB_RCOUNTING:
        return UNBLOCK_FIO_RCOUNT;
    default:
        return UNBLOCK_FIO_SLOW;
    }
}

/* The fast path's byte follows w's state (w locked, or owned).  An error a worker
 * leaves meanwhile (defer_error: error, then SLOW) is never hidden: it is looked
 * at again after the byte is stored. */
static inline void fast_update(wb_fd_t *w)
{
    uint8_t *b = &unblock_fio_fast[w - unblock_fio_fds], m = fast_mode(w);
    if (__atomic_load_n(b, __ATOMIC_RELAXED) == m)
        return; /* the common case: no store, no fence (a merged write's unlock) */
    __atomic_store_n(b, m, __ATOMIC_SEQ_CST);
    if (m != UNBLOCK_FIO_SLOW && __atomic_load_n(&w->error, __ATOMIC_SEQ_CST))
        __atomic_store_n(b, UNBLOCK_FIO_SLOW, __ATOMIC_SEQ_CST);
}

void wb_replay(void); /* drain.c */
/* Every change of a descriptor's state is made under its lock, so the fast path's
 * byte is brought up to date here. */
static inline void wunlock(wb_fd_t *w)
{
    fast_update(w);
    __atomic_store_n(&w->lock, 0, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (--unblock_tls.wb_locks == 0 &&
        unblock_unlikely(((uintptr_t)unblock_tls.wb_deferred | (uintptr_t)unblock_tls.sig_pending) != 0)) {
        if (unblock_tls.wb_deferred != NULL)
            wb_replay(); /* what a signal handler wrote meanwhile (drain.c) */
        if (unblock_tls.sig_pending)
            unblock_signals_release(); /* the handlers held meanwhile (signals.c) */
    }
}


/* A duplicate of fd for the runtime's own use (a lease, the sidecar's socket),
 * numbered high: while it lives, the program's next open still gets the number
 * it would get without unblock.  High, but inside the kernel's first table of
 * descriptors (64): growing the table of a process with threads waits for an
 * RCU grace period (9 ms measured here). */
static inline int dup_high(int fd)
{
    return unblock_own_fd((int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, UNBLOCK_OWN_FD_LOW));
}

/* ---- fdtable.c ---- */
/* Writes in sequence that start merging: 3 (the paper's rule), doubled for each
 * block that other calls forced out before it held WB_PAYS writes (drain.c), up
 * to 3 << 20 (3 M writes: a few seconds of 8-byte writes between two tries, so
 * that a file that never pays keeps its worker ended, worker.c, nearly all the
 * time; at 3 << 14 a try every 50 ms kept it alive half the time). */
#define WB_PAYS 16
#define WB_STRIKES_MAX 20
static inline unsigned wb_run_length(const wb_fd_t *w)
{
    return 3u << (w->wstrikes < WB_STRIKES_MAX ? w->wstrikes : WB_STRIKES_MAX);
}
/* A counting descriptor whose last WB_QUIET_AFTER writes each started elsewhere
 * than where the one before ended (transfers at scattered positions) goes quiet
 * (mode QUIET, fastpath.h): its writes are counted in `writes` and `bytes` only,
 * and the one in WB_QUIET_SAMPLE takes the full path, which counts the next
 * WB_QUIET_WINDOW one by one (offset read from the kernel) and starts merging if
 * they continue each other.  The counting cost an 8-byte lseek+write 3 % of its
 * time here, a pwrite 1.6 % (docs/performance.md, "Quiet descriptors"). */
#define WB_QUIET_AFTER 64
#define WB_QUIET_SAMPLE 256 /* a power of two */
#define WB_QUIET_WINDOW 8
/* After a write on w (COUNTING, locked) that continued the last one or not:
 * the run of calm writes, and quiet once it is long enough. */
static inline void note_calm(wb_fd_t *w, int continues)
{
    w->calm = continues ? 0 : (uint16_t)(w->calm + 1u);
    if (w->calm >= WB_QUIET_AFTER && !w->quiet) {
        w->quiet = 1;
        unblock_counter_add(&unblock_stats.io_quiet, 1);
    }
}
/* Whether a write of n bytes on quiet w is its sample: the one in
 * WB_QUIET_SAMPLE by its count (the fast path's test, precount.h:
 * unblock_fio_quiet_write; a write the full path takes because the process is
 * busy is counted as the fast path would, so that a program with operations
 * always in flight does not read the offset again every few writes), and every
 * write the fast path never takes (timed: a large one may start queueing). */
static inline int quiet_sample(const wb_fd_t *w, size_t n)
{
    return n >= UNBLOCK_WB_TIMED || ((w->writes + 1) & (WB_QUIET_SAMPLE - 1)) == 0;
}
/* A quiet w's write that is not its sample: counted, nothing else. */
static inline void quiet_count(wb_fd_t *w, size_t n)
{
    w->writes++;
    w->bytes += n;
}
/* A full-path write of n bytes (r written) on w, locked and COUNTING, after
 * the call, which moved the offset by `moved`: 1 when w is quiet and the
 * write is not its sample (counted as on the fast path, nothing else to
 * note); else 0, w awake (a sample wakes it: the next WB_QUIET_WINDOW writes
 * are counted one by one, from the kernel's offset). */
int quiet_kept_locked(int fd, wb_fd_t *w, size_t n, size_t r, ssize_t moved);
/* [lo, hi) of w's file is reserved now (none: 0, 0), locked: the count of
 * descriptors holding a reservation follows (fastpath.h). */
static inline void set_reserved(wb_fd_t *w, off_t lo, off_t hi)
{
    if (w->reserved > 0 && (lo > w->rlo || hi < w->reserved))
        __atomic_add_fetch(&unblock_wb_resv_shrinks, 1, __ATOMIC_RELEASE);
    if ((w->reserved > 0) != (hi > 0))
        __atomic_add_fetch(&unblock_wb_reserving, hi > 0 ? 1u : (uint32_t)-1, __ATOMIC_SEQ_CST);
    w->rlo = lo;
    w->reserved = hi;
}
/* One write of n bytes at off on a followed descriptor (locked, or
 * the fast path's count): its file's access pattern.  Inline: the fast path
 * counts every write of a descriptor not yet merging.  Sequential: it starts where the last one ended; strided: at the
 * same distance from it as the last one; random: anything else. */
static inline void note_write(wb_fd_t *w, off_t off, size_t n, int merged)
{
    off_t gap = off - w->last_end;
    if (gap == 0)
        w->sequential++;
    else if (gap == w->last_gap)
        w->strided++;
    else
        w->random++;
    w->writes++;
    w->bytes += n;
    w->merged += (unsigned)merged;
    if (n > w->max_size)
        w->max_size = n;
    if (w->min_size == 0 || n < w->min_size)
        w->min_size = n;
    w->last_gap = gap;
    w->last_end = off + (off_t)n;
}

extern UNBLOCK_HIDDEN int unblock_fio_fds_seen;
/* fd's entry, or NULL past the table. */
static inline wb_fd_t *slot(int fd)
{
    return fd >= 0 && fd < WB_FDS ? &unblock_fio_fds[fd] : NULL;
}
/* One past the highest descriptor ever followed: the scans stop there. */
static inline int fd_end(void)
{
    return __atomic_load_n(&unblock_fio_fds_seen, __ATOMIC_ACQUIRE);
}
void note_ns_per_kb(uint32_t *cost, size_t n, uint64_t ns);
void note_cost(wb_fd_t *w, size_t n, uint64_t ns);
void note_ns(uint32_t *mean, uint64_t ns, int clamp);
ssize_t sys_pwrite(int fd, const void *p, size_t n, off_t off);
int learn_file(int fd, wb_fd_t *w);
void sync_offset_locked(int fd, wb_fd_t *w);
int take_error(wb_fd_t *w);
void defer_error(wb_fd_t *w, int e);
/* drain.c: a write or pwrite (pos >= 0) a signal handler made on w while this
 * thread held w's lock, kept until it lets go of its last (wunlock): 1 with
 * *ret (n, or -1 and errno). */
int wb_defer(int fd, const void *p, size_t n, off_t pos, ssize_t *ret);
ssize_t unblock_wb_call_write(int fd, const void *p, size_t n, off_t pos); /* posix.c */
int write_range(int fd, wb_fd_t *w, const char *buf, size_t len, off_t off);
int fail_injected(wb_fd_t *w);
void write_out(int fd, wb_fd_t *w, const char *buf, size_t len, off_t off);
void forget_locked(wb_fd_t *w, int state);
void report_unconsumed(int fd, wb_fd_t *w);
void give_back_locked(int fd, wb_fd_t *w);
void give_back_sure_locked(int fd, wb_fd_t *w, off_t end);
extern UNBLOCK_HIDDEN long unblock_test_giveback_ms;

/* ---- merge.c ---- */
void block_done_locked(wb_fd_t *w);
int flush_locked(int fd, wb_fd_t *w);
void submit_block_locked(int fd, wb_fd_t *w);
int reserve_locked(int fd, wb_fd_t *w, off_t start, off_t end);
extern UNBLOCK_HIDDEN const unblock_io_kind_t merge_write_kind; /* a block, or a copied large write */

/* ---- protected.c ---- */
int protect_write_locked(int fd, wb_fd_t *w, const void *p, size_t n, off_t at);

/* ---- readahead.c ---- */
void ra_drop_locked(int fd, wb_fd_t *w);
void ra_drop_same_file(int fd);
void ra_unlease_locked(wb_fd_t *w);
void ra_check_leases(void);        /* a worker: buffers whose lease breaks are dropped */
#define RA_LEASE_POLL_MS 2         /* ... looked for this often while any is held */

/* ---- bgread.c ---- */
void rd_settle(int all);
int rd_lease_take(int fd, wb_fd_t *w, wb_worker_t *k);
void rd_lease_put(int l);
int rd_lease_held(int l);

/* ---- drain.c ---- */
int settle_locked(int fd, wb_fd_t *w);
void flush_same_file(int fd);
void install_signals(void);

/* ---- sidecar.c ---- */
extern UNBLOCK_HIDDEN sc_journal_t *unblock_sc_journal; /* NULL: no sidecar */
extern UNBLOCK_HIDDEN char *unblock_sc_base;
extern UNBLOCK_HIDDEN uint64_t unblock_sc_size;
int sc_running(void);              /* starts it the first time */
void sc_follow(int fd, wb_fd_t *w);
void sc_forget(int fd, wb_fd_t *w);
void sc_settle(void);               /* every descriptor forgotten is let go of */
void sc_quit(void);                 /* exit, exec: it closes everything and ends */
char *sc_alloc(size_t cap);
int sc_free(char *b, size_t cap);
void sc_job_queued(int i, int fd, const char *buf, size_t len, off_t off);
void sc_job_written(int i);
static inline int sc_in_arena(const char *b)
{
    return unblock_sc_journal && b >= unblock_sc_base + SC_ARENA_START &&
           b < unblock_sc_base + unblock_sc_size;
}
/* The journal follows fd's block (locked): after its bytes, its length. */
static inline void sc_block(int fd, const wb_fd_t *w, size_t added)
{
    sc_journal_t *j = unblock_sc_journal;
    if (unblock_likely(!j) || fd >= SC_FDS)
        return;
    if (!sc_in_arena(w->buf)) {
        if (w->len == added)
            unblock_counter_add(&unblock_stats.io_sidecar_unsafe, 1);
        return;
    }
    sc_extent_t *x = &j->blocks[fd];
    x->off = (uint64_t)(w->buf - unblock_sc_base);
    x->pos = w->boff;
    __atomic_store_n(&x->len, w->len, __ATOMIC_RELEASE);
}

/* The journal no longer names fd's block (locked): its bytes are in the file,
 * or a queued job names them now, or its buffer is given back.  Before the
 * buffer can change hands: a block's extent left in the journal after the
 * worker freed its buffer would, if the program died then, have the sidecar
 * write whatever the buffer's next owner put there. */
static inline void sc_block_gone(int fd)
{
    sc_journal_t *j = unblock_sc_journal;
    if (j && fd >= 0 && fd < SC_FDS)
        __atomic_store_n(&j->blocks[fd].len, 0, __ATOMIC_RELEASE);
}

/* ---- worker.c ---- */
void qlock_(void);                 /* the job lists, spare blocks, workers[] and files[] */
void qunlock(void);
wb_worker_t *worker_at(int k);
uint8_t worker_for(dev_t dev);     /* (qlock held) */
int start_worker(int k);
int worker_hold(int k);
void worker_release(int k);
int rd_leases_none(void);
wb_job_t *job_take(void);
void job_put(wb_job_t *j, size_t copied);
void job_push(wb_worker_t *k, wb_job_t *j, size_t copied);
void job_kick(wb_worker_t *k);
void job_end(wb_worker_t *k, wb_job_t *j, size_t copied, int reuse);
void job_done(wb_worker_t *k, wb_job_t *j);
int job_index(const wb_job_t *j);
void buffers_forked_child(void);   /* the spare buffers are forgotten */
void buffers_warm_one(void);       /* one block's memory made ready, a spare */
char *get_buffer(size_t cap);
void put_buffer(char *b, size_t cap);
void enqueue_job(wb_fd_t *w, wb_worker_t *k, wb_job_t *j, size_t copied);
int enqueue(int fd, wb_fd_t *w, char *buf, size_t len, size_t cap, off_t off);
void drain_locked(wb_fd_t *w);
void reserve_ahead(int fd, wb_fd_t *w, off_t done);
int budget_take(size_t n);         /* n more bytes of the workers' copies; 0 past the bound */
void budget_give(size_t n);
size_t budget_used(void);
void budget_freed(void);             /* after queued copies went back: wakes budget_wait */
uint32_t budget_seen(void);          /* before a try: what budget_wait compares */
int budget_wait(uint32_t seen);      /* until copies went back since `seen`; 0 if none is held */
int workers_dying(void);           /* a fatal signal: the workers write everything now */
/* Nonzero from the start of a fatal signal's drain (unblock_wb_drain_fatal) or
 * of the exit's (unblock_wb_at_exit) on (bit 0), and while an exec is under way
 * (2 each: unblock_wb_exec_begin): every write of the program's other threads,
 * checked under its descriptor's lock, is made in its call after what the
 * descriptor holds, never merged or queued. */
extern UNBLOCK_HIDDEN uint32_t unblock_wb_ending;
static inline int wb_ending(void)
{
    return __atomic_load_n(&unblock_wb_ending, __ATOMIC_SEQ_CST) != 0;
}
/* Sets it (exec: 2 more; else bit 0), then waits until the writes that read it
 * as 0 are over (drain.c). */
void wb_ending_begin(int exec);
extern UNBLOCK_HIDDEN long unblock_test_handover_ms; /* test hook (merge.c: handover_pause) */

#endif
