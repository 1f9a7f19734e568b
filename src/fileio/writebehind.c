/* writebehind.c — small sequential writes merged in user space.
 *
 * Paper: Natvig & Elster, section III.D.  After 3 writes in sequence on a
 * descriptor this process opened itself (a regular file on a filesystem known to
 * behave; not O_APPEND, O_SYNC, O_DSYNC or O_DIRECT), small writes are copied into a
 * per-descriptor block (UNBLOCK_IO_BLOCK, 1 MiB) and return at once (so do pwrites
 * that continue the block); the block goes to the file with one pwrite when it is
 * full, and before anything that could look at the file or tell another process
 * about it:
 *   - any other call on that descriptor (read, lseek, fstat, fsync, ftruncate,
 *     mmap, dup, fcntl, close, sendfile, ...);
 *   - any call that names a path (open, stat, truncate, ...), a write to any other
 *     descriptor (a pipe, a socket, stdout: the news may travel there), any
 *     intercepted MPI call, fork, exec, exit, _exit, and fatal signals (SIGTERM,
 *     SIGINT, SIGHUP, SIGABRT at their default action, a SIGSEGV not ours).
 * A block also goes to its file when it has not changed for UNBLOCK_IO_DELAY
 * (50 ms).  Full blocks, idle blocks and copied large writes are written by a
 * worker thread, one per filesystem (a slow NFS mount does not hold up a local
 * disk); a flush the program waits for runs in its own thread after that
 * descriptor's queue.  Why no file locks are needed for other processes to see the
 * data: docs/fileio.md.
 *
 * Errors come from the original call: before a buffered write extends the file,
 * the range is reserved (fallocate FALLOC_FL_KEEP_SIZE, growing steps) and
 * RLIMIT_FSIZE is checked, so ENOSPC, EDQUOT and EFBIG/SIGXFSZ are met by a real
 * write in the program's call.  An error of a flush (EIO) is returned exactly once,
 * by the next call on the descriptor (or close, or fsync); one never consumed is
 * printed at exit and counted in io.errors_deferred.
 *
 * The same descriptor table serves read-ahead: read-only descriptors that read
 * small pieces in sequence are served from a buffer filled by one pread (see the
 * read-ahead section below and docs/fileio.md). */
#define _GNU_SOURCE
#include "fileio/writebehind.h"
#include "fileio/fileio.h"
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
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WB_FDS 4096
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
    int lock;
    uint8_t state;
    uint8_t idle;      /* timer rounds the block has not changed in */
    uint8_t seq;       /* writes in sequence seen while COUNTING */
    int error;         /* a flush error not yet returned */
    off_t off;         /* the descriptor's offset as the program sees it */
    off_t boff;        /* file offset of buf[0] */
    size_t len;        /* bytes in buf */
    off_t rlo, reserved; /* [rlo, reserved) is fallocate'd (KEEP_SIZE) */
    char *buf;
    uint32_t pending;  /* its blocks handed to the worker, not yet written (futex) */
    uint8_t wk;        /* its filesystem's worker */
    int16_t file;      /* its entry in files[], or -1 */
    uint8_t known;     /* opened through a wrapper: dev and ino are its file's */
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
    struct wb_job *pj; /* its last protected write, which the next one may extend ... */
    uint64_t pj_seq;   /* ... while its op is this one (a job is reused) */
} wb_fd_t;

/* n bytes took ns: folded into *cost, ns per KiB (recent ones weigh more). */
static void note_ns_per_kb(uint32_t *cost, size_t n, uint64_t ns)
{
    uint64_t per = ns * 1024 / n;
    if (per > UINT32_MAX)
        per = UINT32_MAX;
    uint32_t old = __atomic_load_n(cost, __ATOMIC_RELAXED);
    __atomic_store_n(cost, old ? (uint32_t)((old * 3ull + per) / 4) : (uint32_t)per,
                     __ATOMIC_RELAXED);
}

/* A write of n bytes took ns (the program's or the worker's). */
static void note_cost(wb_fd_t *w, size_t n, uint64_t ns)
{
    if (n >= WB_LARGE_MIN)
        note_ns_per_kb(&w->costs->ns_per_kb, n, ns);
}

/* A mean of ns per call, recent calls weighing more; a single call counts at
 * most 4 times the mean (`clamp`: an occasional dear one, a block handed over or
 * a reservation, is not what the next calls will cost). */
static void note_ns(uint32_t *mean, uint64_t ns, int clamp)
{
    uint32_t old = __atomic_load_n(mean, __ATOMIC_RELAXED);
    if (clamp && old && ns > 4ull * old)
        ns = 4ull * old;
    if (ns > UINT32_MAX)
        ns = UINT32_MAX;
    __atomic_store_n(mean, old ? (uint32_t)((old * 3ull + ns) / 4) : (uint32_t)ns,
                     __ATOMIC_RELAXED);
}

/* A block (or a copied large write) handed to the worker; or, with `op`, a piece
 * of a background read: len bytes at off into buf (the op's runtime buffer or
 * runtime view), through fd, a duplicate the job owns; or, with `wop`, a large
 * write from the program's own pages (buf), which wop keeps read-only until the
 * worker has written them (see "protected writes" below). */
typedef struct wb_job {
    struct wb_job *next;
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

static wb_fd_t wb[WB_FDS];
/* One past the highest descriptor ever followed: the scans stop there. */
static int fds_seen;

static inline int fd_end(void)
{
    return __atomic_load_n(&fds_seen, __ATOMIC_ACQUIRE);
}
/* Descriptors with bytes in their block, plus jobs queued for the workers: while
 * nonzero, some written data is not in its file yet. */
uint32_t unblock_wb_dirty;
/* Descriptors holding a read-ahead buffer (RAHEAD): 0 makes the drop a no-op. */
uint32_t unblock_ra_live;
static int signals_installed;
#define WB_JOBS 512
static wb_job_t jobs[WB_JOBS], *job_free;
static int qlock; /* the job lists, spare blocks, workers[] and files[] */
static size_t queued_bytes; /* bytes of copies the workers hold (atomic) */
static char *spare_blocks[16]; /* block-sized buffers kept for reuse */
static unsigned nspare;

/* One worker per filesystem (st_dev), started when a descriptor on it first
 * buffers; past WB_WORKERS filesystems, several share one.  Its queue is FIFO and a
 * descriptor always uses the same worker, so a file's writes land in program
 * order. */
#define WB_WORKERS 8
typedef struct {
    dev_t dev;
    uint8_t used, started, ok;
    wb_job_t *head, *tail;
    uint32_t queued;    /* futex: the worker sleeps while 0 and no block is dirty */
    pid_t tid;          /* its thread: read lease breaks are signalled to it (blocked) */
    uint32_t rd_ns_per_kb; /* what cold reads of its filesystem cost (0: not measured) */
    uintptr_t last_lo, last_hi; /* the last piece read, in memory (qlock) ... */
    uintptr_t urgent_lo;        /* ... and the last one the program waited for */
    int down;                   /* the program waits for pieces in falling order */
} wb_worker_t;
static wb_worker_t workers[WB_WORKERS];

/* A fatal signal: the workers write everything now (unblock_wb_drain_fatal). */
static uint32_t dying, dying_done;

/* Per-file access pattern (stats): the first WB_FILES files opened for writing. */
static unblock_wb_file_t files[UNBLOCK_WB_FILES];
static int nfiles;

/* Test hook (docs/testing.md): UNBLOCK_TEST_FAIL_WRITE=N makes the Nth write of
 * a merged block or queued large write fail with EIO instead of reaching the file. */
static long fail_at;
static uint32_t flush_writes;
/* UNBLOCK_TEST_PIECE_DELAY_US=N: the worker waits N us in each piece of a
 * protected write after announcing it (JW_RUN) and before writing it, so that a
 * fault that would open the pages without waiting for the piece is caught. */
static long piece_delay_us;

/* Raw system calls: the runtime never calls its own wrappers. */
static ssize_t sys_pwrite(int fd, const void *p, size_t n, off_t off)
{
    return syscall(SYS_pwrite64, fd, p, n, off);
}

static void wlock(wb_fd_t *w)
{
    while (__atomic_exchange_n(&w->lock, 1, __ATOMIC_ACQUIRE))
        syscall(SYS_sched_yield);
}

static int wtrylock(wb_fd_t *w)
{
    return !__atomic_exchange_n(&w->lock, 1, __ATOMIC_ACQUIRE);
}

static void wunlock(wb_fd_t *w)
{
    __atomic_store_n(&w->lock, 0, __ATOMIC_RELEASE);
}

static inline wb_fd_t *slot(int fd)
{
    return fd >= 0 && fd < WB_FDS ? &wb[fd] : NULL;
}

/* Everything of fd to the file (locked): the worker's jobs, then the block, here.
 * Sets the kernel's offset to where the program believes it is (buffered writes
 * did not move it).  0, or -1 with w->error set. */
static void write_out(int fd, wb_fd_t *w, const char *buf, size_t len, off_t off);
static void drain_locked(wb_fd_t *w);

/* The block's bytes are written or queued: it is empty again (locked). */
static void block_done_locked(wb_fd_t *w)
{
    w->len = 0;
    __atomic_sub_fetch(&unblock_wb_dirty, 1, __ATOMIC_RELAXED);
    unblock_counter_add(&unblock_stats.io_flushes, 1);
}

static int flush_locked(int fd, wb_fd_t *w)
{
    drain_locked(w);
    if (w->len) {
        write_out(fd, w, w->buf, w->len, w->boff);
        block_done_locked(w);
    }
    syscall(SYS_lseek, fd, w->off, SEEK_SET);
    return __atomic_load_n(&w->error, __ATOMIC_ACQUIRE) ? -1 : 0;
}

/* Everything of fd to the file, whatever its state (locked).  The kernel offset is
 * only set while the descriptor is followed. */
static void ra_drop_locked(int fd, wb_fd_t *w);
static void ra_drop_same_file(int fd);
static void rd_settle(int all);

/* Whether fd's file is known; a descriptor not opened through a wrapper (a
 * pipe, the terminal, an inherited file) is looked up once, and forgotten again
 * when it is closed.  Unlocked: a racing lookup writes the same values. */
static int learn_file(int fd, wb_fd_t *w)
{
    struct stat st;
    if (w && !w->known && syscall(SYS_fstat, fd, &st) == 0) {
        w->dev = st.st_dev;
        w->ino = st.st_ino;
        w->known = 1;
    }
    return w && w->known;
}

static int settle_locked(int fd, wb_fd_t *w)
{
    if (w->state == WB_BUFFERING)
        return flush_locked(fd, w);
    if (w->state == WB_RAHEAD)
        ra_drop_locked(fd, w);
    drain_locked(w);
    return 0;
}

/* The deferred error, returned once. */
static int take_error(wb_fd_t *w)
{
    int e = __atomic_exchange_n(&w->error, 0, __ATOMIC_ACQ_REL);
    if (e)
        unblock_counter_add(&unblock_stats.io_errors_returned, 1);
    return e;
}

static void qlock_(void)
{
    while (__atomic_exchange_n(&qlock, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
}

static void qunlock(void)
{
    __atomic_store_n(&qlock, 0, __ATOMIC_RELEASE);
}

/* A free job slot, or NULL; and giving one back (`copied`: the bytes of the copy
 * it held, no longer queued). */
static wb_job_t *job_take(void)
{
    qlock_();
    wb_job_t *j = job_free;
    if (j)
        job_free = j->next;
    qunlock();
    return j;
}

static void job_put(wb_job_t *j, size_t copied)
{
    qlock_();
    __atomic_sub_fetch(&queued_bytes, copied, __ATOMIC_RELAXED); /* faults add outside qlock */
    j->next = job_free;
    job_free = j;
    qunlock();
}

/* Appends j to k's queue; `copied`: the bytes of a copy it holds. */
static void job_push(wb_worker_t *k, wb_job_t *j, size_t copied)
{
    qlock_();
    if (k->tail)
        k->tail->next = j;
    else
        k->head = j;
    k->tail = j;
    __atomic_add_fetch(&queued_bytes, copied, __ATOMIC_RELAXED);
    qunlock();
}

/* k has one more job: it wakes if it sleeps. */
static void job_kick(wb_worker_t *k)
{
    __atomic_add_fetch(&k->queued, 1, __ATOMIC_SEQ_CST);
    unblock_futex_wake(&k->queued);
}

/* A buffer for a job or a block: a spare block when the size is a block's. */
static char *get_buffer(size_t cap)
{
    char *b = NULL;
    if (cap == unblock_opt.io_block) {
        qlock_();
        if (nspare)
            b = spare_blocks[--nspare];
        qunlock();
        if (b)
            return b;
    }
    b = (char *)syscall(SYS_mmap, NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    return b == MAP_FAILED ? NULL : b;
}

static void put_buffer(char *b, size_t cap)
{
    if (cap == unblock_opt.io_block) {
        qlock_();
        if (nspare < sizeof(spare_blocks) / sizeof(spare_blocks[0])) {
            spare_blocks[nspare++] = b;
            b = NULL;
        }
        qunlock();
    }
    if (b)
        syscall(SYS_munmap, b, cap);
}

/* Hands a filled job of w to its worker k (`copied`: the bytes of a copy it holds). */
static void enqueue_job(wb_fd_t *w, wb_worker_t *k, wb_job_t *j, size_t copied)
{
    job_push(k, j, copied);
    __atomic_add_fetch(&w->pending, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST);
    job_kick(k);
}

/* Queues `len` bytes of `buf` (capacity cap, now the worker's) for offset off of
 * fd.  0, or -1 if the worker is not running or no job slot is free (the caller
 * writes it itself). */
static int enqueue(int fd, wb_fd_t *w, char *buf, size_t len, size_t cap, off_t off)
{
    wb_worker_t *k = &workers[w->wk];
    if (!__atomic_load_n(&k->ok, __ATOMIC_ACQUIRE))
        return -1;
    wb_job_t *j = job_take();
    if (!j)
        return -1;
    *j = (wb_job_t){ .fd = fd, .buf = buf, .len = len, .cap = cap, .off = off };
    enqueue_job(w, k, j, len);
    return 0;
}

/* Waits until the worker has written every job of fd (locked: a worker never
 * waits for a descriptor lock while it writes, so this cannot deadlock). */
static void drain_locked(wb_fd_t *w)
{
    uint32_t p = __atomic_load_n(&w->pending, __ATOMIC_SEQ_CST);
    if (p == 0)
        return;
    unblock_counter_add(&unblock_stats.io_waits, 1);
    do
        unblock_futex_wait(&w->pending, p, 0);
    while ((p = __atomic_load_n(&w->pending, __ATOMIC_SEQ_CST)) != 0);
}

/* An error of a background write, kept for the program's next call on fd. */
static void defer_error(wb_fd_t *w, int e)
{
    int zero = 0;
    if (__atomic_compare_exchange_n(&w->error, &zero, e, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        unblock_counter_add(&unblock_stats.io_errors_deferred, 1);
}

/* Writes len bytes at off, whole: 0, or -1 with the error kept for the program. */
static int write_range(int fd, wb_fd_t *w, const char *buf, size_t len, off_t off)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = sys_pwrite(fd, buf + done, len - done, off + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            defer_error(w, r < 0 ? errno : EIO);
            return -1;
        }
        done += (size_t)r;
    }
    return 0;
}

/* The test hook: whether this background write is the one to fail (EIO kept). */
static int fail_injected(wb_fd_t *w)
{
    if (unblock_likely(!fail_at) ||
        (long)__atomic_add_fetch(&flush_writes, 1, __ATOMIC_RELAXED) != fail_at)
        return 0;
    defer_error(w, EIO);
    return 1;
}

/* Writes len bytes at off, whole; an error is kept for the program. */
static void write_out(int fd, wb_fd_t *w, const char *buf, size_t len, off_t off)
{
    if (fail_injected(w))
        return;
    unblock_counter_add(&unblock_stats.io_flushed_bytes, len);
    write_range(fd, w, buf, len, off);
}

/* Hands the block to the worker and gives the descriptor a fresh one (locked).
 * Falls back to writing it here when no job slot or buffer is free. */
static void submit_block_locked(int fd, wb_fd_t *w)
{
    if (w->len == 0)
        return;
    char *fresh = get_buffer(unblock_opt.io_block);
    if (fresh == NULL || enqueue(fd, w, w->buf, w->len, unblock_opt.io_block, w->boff) != 0) {
        if (fresh)
            put_buffer(fresh, unblock_opt.io_block);
        write_out(fd, w, w->buf, w->len, w->boff);
    } else {
        w->buf = fresh;
    }
    block_done_locked(w);
}

static void fold_locked(wb_fd_t *w);

/* Frees the block and forgets the descriptor (locked). */
static void forget_locked(wb_fd_t *w, int state)
{
    fold_locked(w);
    if (w->lease) { /* its record lives on (its own descriptor) until its reads end */
        qlock_();
        w->lease = 0;
        qunlock();
    }
    if (w->state == WB_RAHEAD)
        __atomic_sub_fetch(&unblock_ra_live, 1, __ATOMIC_RELAXED);
    if (w->buf)
        put_buffer(w->buf, unblock_opt.io_block);
    w->buf = NULL;
    w->len = 0;
    w->seq = 0;
    w->rlo = w->reserved = 0;
    w->state = (uint8_t)state;
}

/* ---- the hooks the wrappers call ---- */

/* UNBLOCK_IO_FS: filesystem types the user allows besides the built-in list. */
static const struct {
    const char *name;
    unsigned long magic;
} extra_fs[] = { { "fuse", 0x65735546 },   { "cifs", 0xFF534D42 }, { "smb2", 0xFE534D42 },
                 { "ceph", 0x00C36400 },   { "beegfs", 0x19830326 }, { "9p", 0x01021997 },
                 { "overlay", 0x794C7630 } };
static unsigned long extra_allowed[8];

static void parse_extra_fs(void)
{
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    const char *p = unblock_opt.io_fs;
    unsigned n = 0;
    while (p && *p) {
        size_t len = strcspn(p, ",");
        unsigned i;
        for (i = 0; i < sizeof(extra_fs) / sizeof(extra_fs[0]); i++)
            if (strlen(extra_fs[i].name) == len && strncmp(p, extra_fs[i].name, len) == 0)
                break;
        if (i == sizeof(extra_fs) / sizeof(extra_fs[0]))
            unblock_warn("UNBLOCK_IO_FS: unknown filesystem type '%.*s' ignored (known: fuse, "
                         "cifs, smb2, ceph, beegfs, 9p, overlay)", (int)len, p);
        else if (n < sizeof(extra_allowed) / sizeof(extra_allowed[0]))
            extra_allowed[n++] = extra_fs[i].magic;
        p += len + (p[len] == ',');
    }
}

static int fs_allowed(int fd)
{
    struct statfs sf;
    if (syscall(SYS_fstatfs, fd, &sf) != 0)
        return 0;
    parse_extra_fs();
    for (unsigned i = 0; i < sizeof(extra_allowed) / sizeof(extra_allowed[0]); i++)
        if (extra_allowed[i] && extra_allowed[i] == (unsigned long)sf.f_type)
            return 1;
    switch ((unsigned long)sf.f_type) {
    case EXT4_SUPER_MAGIC: /* ext2/3/4 */
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case NFS_SUPER_MAGIC:
    case 0x0BD00BD0: /* Lustre */
    case 0x47504653: /* GPFS */
        return 1;
    default:
        return 0;
    }
}

/* A background error nobody will return any more is printed, never dropped. */
static void report_unconsumed(int fd, wb_fd_t *w)
{
    int e = __atomic_exchange_n(&w->error, 0, __ATOMIC_ACQ_REL);
    if (e)
        unblock_warn("a background write to descriptor %d failed and the program never "
                     "saw it: %s", fd, strerror(e));
}

/* The worker of the filesystem `dev` (qlock held). */
static uint8_t worker_for(dev_t dev)
{
    int k, unused = -1;
    for (k = 0; k < WB_WORKERS; k++) {
        if (workers[k].used && workers[k].dev == dev)
            return (uint8_t)k;
        if (!workers[k].used && unused < 0)
            unused = k;
    }
    if (unused < 0)
        return (uint8_t)(dev % WB_WORKERS); /* more filesystems than workers: share */
    workers[unused].used = 1;
    workers[unused].dev = dev;
    return (uint8_t)unused;
}

/* The access-pattern entry of a file (qlock held): -1 once the table is full. */
static int16_t file_for(const struct stat *st, const char *path)
{
    for (int i = 0; i < nfiles; i++)
        if (files[i].dev == st->st_dev && files[i].ino == st->st_ino)
            return (int16_t)i;
    if (nfiles == UNBLOCK_WB_FILES)
        return -1;
    unblock_wb_file_t *f = &files[nfiles];
    memset(f, 0, sizeof(*f));
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    snprintf(f->path, sizeof(f->path), "%s", path ? path : "?");
    return (int16_t)nfiles++;
}

static void counter_max(uint64_t *c, uint64_t v)
{
    uint64_t cur = __atomic_load_n(c, __ATOMIC_RELAXED);
    while (cur < v && !__atomic_compare_exchange_n(c, &cur, v, 1, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
        ;
}

/* One write of n bytes at off on a followed descriptor (locked): its file's
 * access pattern.  Sequential: it starts where the last one ended; strided: at the
 * same distance from it as the last one; random: anything else. */
static void note_write(wb_fd_t *w, off_t off, size_t n, int merged)
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

/* The descriptor's counts to its file's entry and the totals (locked). */
static void fold_locked(wb_fd_t *w)
{
    if (w->writes == 0)
        return;
    unblock_counter_add(&unblock_stats.io_merged, w->merged);
    unblock_counter_add(&unblock_stats.io_direct, w->direct);
    if (w->file >= 0) {
        unblock_wb_file_t *f = &files[w->file];
        __atomic_add_fetch(&f->writes, w->writes, __ATOMIC_RELAXED);
        __atomic_add_fetch(&f->bytes, w->bytes, __ATOMIC_RELAXED);
        __atomic_add_fetch(&f->merged, w->merged, __ATOMIC_RELAXED);
        __atomic_add_fetch(&f->direct, w->direct, __ATOMIC_RELAXED);
        __atomic_add_fetch(&f->sequential, w->sequential, __ATOMIC_RELAXED);
        __atomic_add_fetch(&f->strided, w->strided, __ATOMIC_RELAXED);
        __atomic_add_fetch(&f->random, w->random, __ATOMIC_RELAXED);
        counter_max(&f->max_size, w->max_size);
        uint64_t lo = __atomic_load_n(&f->min_size, __ATOMIC_RELAXED);
        if (lo == 0 || w->min_size < lo)
            __atomic_store_n(&f->min_size, w->min_size, __ATOMIC_RELAXED); /* a race blurs it */
    }
    w->writes = w->bytes = w->merged = w->direct = w->sequential = w->strided = w->random = 0;
    w->min_size = w->max_size = 0;
}

/* Before the statistics are written: every descriptor's counts to the totals
 * (a descriptor another thread holds is left out). */
void unblock_wb_fold(void)
{
    for (int fd = 0; fd < fd_end(); fd++)
        if (wb[fd].writes && wtrylock(&wb[fd])) {
            fold_locked(&wb[fd]);
            wunlock(&wb[fd]);
        }
}

int unblock_wb_files(const unblock_wb_file_t **out)
{
    *out = files;
    return __atomic_load_n(&nfiles, __ATOMIC_ACQUIRE);
}

void unblock_wb_opened(int fd, int flags, const char *path)
{
    wb_fd_t *w = slot(fd);
    if (!w)
        return;
    wlock(w);
    forget_locked(w, WB_NONE); /* a number we did not see closed is new now */
    report_unconsumed(fd, w);
    w->file = -1;
    struct stat st;
    int acc = flags & O_ACCMODE;
    w->known = !(flags & O_PATH) && syscall(SYS_fstat, fd, &st) == 0;
    if (w->known) {
        w->dev = st.st_dev;
        w->ino = st.st_ino;
    }
    int seen = fd_end();
    while (fd >= seen && !__atomic_compare_exchange_n(&fds_seen, &seen, fd + 1, 0,
                                                      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        ;
    if (unblock_opt.io_block > 0 && (acc == O_WRONLY || acc == O_RDWR) &&
        !(flags & (O_APPEND | O_SYNC | O_DSYNC | O_DIRECT)) && w->known &&
        S_ISREG(st.st_mode) && fs_allowed(fd)) {
        w->state = WB_COUNTING;
        w->off = 0;
        w->last_end = w->last_gap = 0;
        qlock_();
        w->wk = worker_for(st.st_dev);
        w->file = file_for(&st, path);
        qunlock();
        memset(&w->own_costs, 0, sizeof(w->own_costs));
        w->costs = w->file >= 0 ? &files[w->file].costs : &w->own_costs;
    } else if (unblock_opt.io_block > 0 && acc == O_RDONLY && !(flags & O_DIRECT) && w->known &&
               S_ISREG(st.st_mode) && fs_allowed(fd)) {
        w->state = WB_RCOUNTING;
        w->off = 0;
        w->plast = 0;
        w->rbytes = 0;
        w->strikes = 0;
    }
    wunlock(w);
}

static void install_signals(void);
static int start_worker(int k);

/* Makes sure the file can hold [start, end), so that ENOSPC, EDQUOT or EFBIG
 * come from a real write in the program's call, as they would without us: the
 * range is reserved (fallocate KEEP_SIZE, 1 MiB steps) and RLIMIT_FSIZE checked.
 * One range per descriptor, grown while writes continue it.  1 if it can
 * (locked). */
static int reserve_locked(int fd, wb_fd_t *w, off_t start, off_t end)
{
    if (start >= w->rlo && end <= w->reserved)
        return 1;
    /* Not a continuation: a new range (never the hole before it). */
    int fresh = start < w->rlo || start > w->reserved;
    off_t from = fresh ? start : w->reserved;
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 ||
        (rl.rlim_cur != RLIM_INFINITY && (rlim_t)end > rl.rlim_cur))
        return 0;
    /* The step grows with the range (1 MiB, 2, 4, ... 64 MiB): a long stream of
     * writes calls fallocate a few times, not once per MiB.  That matters where
     * fallocate waits for the worker's write to the same file (the inode lock on
     * FUSE, NFS). */
    off_t step = fresh ? 0 : w->reserved - w->rlo;
    /* Large writes (a checkpoint in 1 MiB calls) reserve 32 of themselves ahead
     * at least: queued without a copy they come every few tens of microseconds,
     * far ahead of the worker, and each fallocate waited 8-11 ms for the
     * worker's writes on slowfs (1, 2, 4, ... MiB steps: 6 calls for 64 MiB). */
    if (end - start > (off_t)(unblock_opt.io_block / 4) && step < 32 * (end - start))
        step = 32 * (end - start);
    if (step > WB_RESERVE_MAX)
        step = WB_RESERVE_MAX;
    off_t want = ((end + step + WB_RESERVE_STEP - 1) / WB_RESERVE_STEP) * WB_RESERVE_STEP;
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)want > rl.rlim_cur)
        want = (off_t)rl.rlim_cur;
    if (want <= from ||
        syscall(SYS_fallocate, fd, FALLOC_FL_KEEP_SIZE, from, want - from) != 0) {
        if (want > from && errno != ENOSPC && errno != EDQUOT)
            w->state = WB_OFF; /* no fallocate here: stop buffering this one */
        return 0;
    }
    if (fresh)
        w->rlo = start;
    w->reserved = want;
    return 1;
}

/* Copies n bytes written at file position pos into the block (locked); a block
 * they do not continue, or cannot join, goes to the worker first.  0, or -1 when
 * the caller must make the real call (no room in the file, a bad buffer). */
static int merge_locked(int fd, wb_fd_t *w, const void *p, size_t n, off_t pos)
{
    if (w->len && (pos != w->boff + (off_t)w->len || w->len + n > unblock_opt.io_block))
        submit_block_locked(fd, w);
    if (!reserve_locked(fd, w, pos, pos + (off_t)n))
        return -1;
    /* A bad buffer: the real call gives the kernel's answer (EFAULT). */
    if (unblock_unlikely(unblock_copy_from_program(w->buf + w->len, p, n) != 0))
        return -1;
    if (w->len == 0) {
        w->boff = pos;
        if (__atomic_add_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST) == 1)
            unblock_futex_wake(&workers[w->wk].queued); /* its worker may sleep */
    }
    w->idle = 0;
    note_write(w, pos, n, 1);
    w->len += n;
    return 0;
}

/* ---- small writes: merged where that pays ----
 *
 * Merging saves a system call per write and costs a copy in the call, plus the
 * worker's write of the block, which is the program's loss where the worker
 * shares its cores.  For 8-byte writes the call is 35x cheaper merged; for a
 * grid written one 4 KiB row per pwrite into the page cache, by ranks bound to
 * every core, merging saved nothing and the worker's writes slowed the next
 * communication phase by 15 %.  So both ways are timed (one merged write in 16
 * and one made in the call in 8; the first small write of a file is made in the
 * call), and small writes are merged while that is UNBLOCK_IO_MERGE_GAIN percent
 * cheaper (0: always merged, untimed).  Every WB_SMALL_RECHECK small writes the
 * other way is tried again: one write made in the call, at the next write that
 * finds the block empty and the worker without a block of the descriptor (a
 * block is never split for it, and the worker's write holds the file's lock: 2-3
 * us instead of 0.8 for a 4 KiB row here), or WB_SMALL_RUN merged ones timed
 * together (a single one would pay for starting a block alone). */
#define WB_SMALL_RECHECK 256
#define WB_SMALL_RUN 64

/* Whether small writes of n bytes (class c of the file's costs) cost less made
 * in the call (measured both ways; until then they are merged). */
static int small_direct(const unblock_wb_costs_t *costs, const unblock_wb_small_t *c, size_t n)
{
    uint64_t d = __atomic_load_n(&c->small_ns, __ATOMIC_RELAXED);
    uint64_t merge = __atomic_load_n(&c->merged_ns, __ATOMIC_RELAXED);
    if (d == 0 || merge == 0)
        return 0;
    if (!unblock_spare_core())
        merge += (uint64_t)__atomic_load_n(&costs->ns_per_kb, __ATOMIC_RELAXED) * n / 1024;
    return d * 100 < merge * (100 + unblock_opt.io_merge_gain);
}

/* A small write of n bytes at pos while buffering (locked): merged (0), made here
 * with its result in *ret and errno (1), or -1 when the caller must make the real
 * call (merge_locked's refusal). */
static int small_write_locked(int fd, wb_fd_t *w, const void *p, size_t n, off_t pos,
                              ssize_t *ret)
{
    if (unblock_opt.io_merge_gain == 0) /* always merged, neither way timed */
        return merge_locked(fd, w, p, n, pos) != 0 ? -1 : 0;
    unblock_wb_small_t *c = &w->costs->small[n < 256 ? 0 : n < 4096 ? 1 : 2];
    uint32_t k = __atomic_fetch_add(&c->calls, 1, __ATOMIC_RELAXED);
    int direct = __atomic_load_n(&c->direct, __ATOMIC_RELAXED), run = 0, probe = 0;
    if (__atomic_load_n(&c->run_left, __ATOMIC_RELAXED)) {
        direct = 0;
        run = 1;
    } else if (direct && k % WB_SMALL_RECHECK == WB_SMALL_RECHECK - 1) {
        __atomic_store_n(&c->run_left, WB_SMALL_RUN, __ATOMIC_RELAXED);
        direct = 0;
        run = 1;
    } else if (!direct && (k == 0 || k % WB_SMALL_RECHECK == WB_SMALL_RECHECK - 1 ||
                           __atomic_load_n(&c->probe, __ATOMIC_RELAXED))) {
        direct = w->len == 0 && __atomic_load_n(&w->pending, __ATOMIC_ACQUIRE) == 0;
        __atomic_store_n(&c->probe, !direct, __ATOMIC_RELAXED);
        probe = direct;
    }
    int timed = run || probe || k % (direct ? 8 : 16) == 8;
    uint64_t t0 = timed ? unblock_now_ns() : 0;
    int how = 0;
    if (direct) {
        ssize_t r = sys_pwrite(fd, p, n, pos);
        int e = errno;
        if (timed && r == (ssize_t)n)
            note_ns(&c->small_ns, unblock_now_ns() - t0, !probe);
        if (r > 0) {
            note_write(w, pos, (size_t)r, 0);
            w->direct++;
        }
        errno = e;
        *ret = r;
        how = 1;
    } else {
        if (merge_locked(fd, w, p, n, pos) != 0)
            return -1;
        if (run) { /* races between descriptors of the file only blur it */
            c->run_ns += unblock_now_ns() - t0;
            c->run_n++;
            if (__atomic_sub_fetch(&c->run_left, 1, __ATOMIC_RELAXED) != 0)
                return 0;
            note_ns(&c->merged_ns, c->run_ns / (c->run_n ? c->run_n : 1), 0);
            c->run_ns = c->run_n = 0;
        } else if (timed) {
            note_ns(&c->merged_ns, unblock_now_ns() - t0, 1);
        }
    }
    if (timed)
        __atomic_store_n(&c->direct, (uint8_t)small_direct(w->costs, c, n), __ATOMIC_RELAXED);
    return how;
}

/* The write, here and now, after everything before it (locked; unlocks): the
 * real call's result, errors included.  The descriptor counts writes again. */
static int write_now_locked(int fd, wb_fd_t *w, const void *p, size_t n, ssize_t *ret)
{
    if (flush_locked(fd, w) != 0) {
        errno = take_error(w);
        wunlock(w);
        *ret = -1;
        return 1;
    }
    uint64_t t0 = n >= WB_LARGE_MIN ? unblock_now_ns() : 0;
    ssize_t r = syscall(SYS_write, fd, p, n);
    int e = errno;
    if (t0 && r == (ssize_t)n)
        note_cost(w, n, unblock_now_ns() - t0);
    if (r > 0) {
        note_write(w, w->off, (size_t)r, 0);
        w->off += r;
    }
    if (w->state == WB_BUFFERING && r != (ssize_t)n)
        w->state = WB_COUNTING, w->seq = 0;
    wunlock(w);
    errno = e;
    *ret = r;
    return 1;
}


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

/* n more bytes of the copy budget for the workers' copies; 0 past it. */
static int budget_take(size_t n)
{
    size_t q = __atomic_load_n(&queued_bytes, __ATOMIC_RELAXED);
    do
        if (q + n > unblock_opt.copy_budget)
            return 0;
    while (!__atomic_compare_exchange_n(&queued_bytes, &q, q + n, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    return 1;
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
            __atomic_sub_fetch(&queued_bytes, rest, __ATOMIC_RELAXED);
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
    if (j->wop && j->wseq == w->pj_seq && !j->started && j->fd == (int)(w - wb) &&
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

/* A large write of n bytes from p at file offset `at`, queued after everything
 * of w: from the program's pages, made read-only, when they may be protected
 * (locked).  0, or -1 (the caller copies or writes it). */
static int protect_write_locked(int fd, wb_fd_t *w, const void *p, size_t n, off_t at)
{
    uintptr_t ps, pe;
    wb_worker_t *k = &workers[w->wk];
    if (unblock_opt.io_protect_min == 0 || n < unblock_opt.io_protect_min ||
        !__atomic_load_n(&k->ok, __ATOMIC_ACQUIRE) || !unblock_protect_eligible(p, n, &ps, &pe))
        return -1;
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
        *j = (wb_job_t){ .fd = fd, .buf = (char *)p, .len = n, .off = at, .wop = op,
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

/* A large write of n bytes from the cnt buffers of iov at `at` (locked): queued
 * after the block, in order, where the file is slower than our copy: from the
 * program's pages made read-only (one buffer), or copied.  0, or -1 when it must
 * be written here (after the block, which is handed over either way). */
static int large_write_locked(int fd, wb_fd_t *w, const struct iovec *iov, int cnt, size_t n,
                              off_t at)
{
    submit_block_locked(fd, w);
    uint32_t cost = __atomic_load_n(&w->costs->ns_per_kb, __ATOMIC_RELAXED);
    if ((cost != 0 && cost < unblock_opt.io_queue_ns) || !reserve_locked(fd, w, at, at + (off_t)n))
        return -1;
    /* From the program's pages when they are one buffer, else copied. */
    int queued = cnt == 1 && protect_write_locked(fd, w, iov[0].iov_base, n, at) == 0;
    if (!queued &&
        __atomic_load_n(&queued_bytes, __ATOMIC_RELAXED) + n <= unblock_opt.copy_budget) {
        char *b = get_buffer(n);
        if (b) {
            size_t done = 0;
            queued = 1;
            for (int i = 0; i < cnt && queued; done += iov[i++].iov_len)
                queued = unblock_copy_from_program(b + done, iov[i].iov_base, iov[i].iov_len) == 0;
            queued = queued && enqueue(fd, w, b, n, n, at) == 0;
            if (!queued)
                put_buffer(b, n);
        }
    }
    if (!queued)
        return -1;
    note_write(w, at, n, 0);
    unblock_counter_add(&unblock_stats.io_async, 1);
    return 0;
}

/* Before a write to fd: the reads in flight get the file as it was, and
 * read-ahead buffers of its file go. */
static void before_write(int fd)
{
    rd_settle(0);
    if (unblock_unlikely(__atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED)))
        ra_drop_same_file(fd);
}

/* A large write of n bytes from iov at pos (-1: at the descriptor's offset, which
 * then moves) on buffering w (locked; unlocks): 1 with *ret (n, or a deferred
 * error) when queued, 0 for the real call after the block. */
static int large_write_unlock(int fd, wb_fd_t *w, const struct iovec *iov, int cnt, size_t n,
                              off_t pos, ssize_t *ret)
{
    int e = take_error(w);
    if (!e && large_write_locked(fd, w, iov, cnt, n, pos < 0 ? w->off : pos) != 0) {
        wunlock(w);
        return 0;
    }
    if (!e && pos < 0)
        w->off += (off_t)n;
    wunlock(w);
    if (e)
        errno = e;
    *ret = e ? -1 : (ssize_t)n;
    return 1;
}

/* write(fd, p, n) on a descriptor we may buffer.  Returns 1 and sets *ret if it
 * handled the call; 0 means "forward it" (after which unblock_wb_wrote updates). */
int unblock_wb_write(int fd, const void *p, size_t n, ssize_t *ret)
{
    before_write(fd);
    wb_fd_t *w = slot(fd);
    if (!w || w->state != WB_BUFFERING || n == 0) {
        if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED) &&
            (!w || w->state != WB_BUFFERING))
            unblock_wb_flush_all(); /* the news may travel through this descriptor */
        return 0;
    }
    wlock(w);
    if (w->state != WB_BUFFERING) {
        wunlock(w);
        return 0;
    }
    int e = take_error(w);
    if (e) {
        wunlock(w);
        errno = e;
        *ret = -1;
        return 1;
    }
    if (n > unblock_opt.io_block / 4) {
        struct iovec one = { (void *)p, n };
        if (large_write_locked(fd, w, &one, 1, n, w->off) != 0)
            return write_now_locked(fd, w, p, n, ret);
        w->off += (off_t)n;
        wunlock(w);
        *ret = (ssize_t)n;
        return 1;
    }
    int how = small_write_locked(fd, w, p, n, w->off, ret);
    if (how < 0)
        return write_now_locked(fd, w, p, n, ret);
    if (how == 0)
        *ret = (ssize_t)n;
    if (*ret > 0)
        w->off += (off_t)*ret;
    e = errno;
    wunlock(w);
    errno = e;
    return 1;
}

/* writev(fd, iov, cnt) (pos -1) or pwritev at pos: a large one (over a quarter
 * of a block in all, at most WB_IOV buffers) is copied and queued like a large
 * write(); anything else is forwarded (0) after the block.  A bad iovec array or
 * buffer gets the real call's answer. */
#define WB_IOV 64
int unblock_wb_writev(int fd, const struct iovec *iov, int cnt, off_t pos, ssize_t *ret)
{
    wb_fd_t *w = slot(fd);
    struct iovec v[WB_IOV];
    if (!w || w->state != WB_BUFFERING || cnt <= 0 || cnt > WB_IOV || pos < -1 ||
        unblock_copy_from_program(v, iov, (size_t)cnt * sizeof(*v)) != 0)
        return 0;
    size_t n = 0;
    for (int i = 0; i < cnt; i++) {
        if (n + v[i].iov_len < n || v[i].iov_len > SSIZE_MAX)
            return 0; /* EINVAL, from the kernel */
        n += v[i].iov_len;
    }
    if (n <= unblock_opt.io_block / 4 || n > SSIZE_MAX)
        return 0;
    before_write(fd);
    wlock(w);
    if (w->state != WB_BUFFERING) {
        wunlock(w);
        return 0;
    }
    return large_write_unlock(fd, w, v, cnt, n, pos, ret);
}

/* pwrite(fd, p, n, pos): like a small write() when it continues the previous
 * write, e.g. rows written one pwrite each at consecutive offsets (merged, or made
 * here where merging does not pay).  Anything else is forwarded (0) after the
 * block. */
int unblock_wb_pwrite(int fd, const void *p, size_t n, off_t pos, ssize_t *ret)
{
    before_write(fd);
    wb_fd_t *w = slot(fd);
    if (!w || w->state != WB_BUFFERING || n == 0 || pos < 0)
        return 0;
    wlock(w);
    if (w->state == WB_BUFFERING && n > unblock_opt.io_block / 4) {
        /* A large one, wherever it goes: queued like a large write(). */
        struct iovec one = { (void *)p, n };
        return large_write_unlock(fd, w, &one, 1, n, pos, ret);
    }
    if (w->state != WB_BUFFERING || pos != w->last_end) {
        wunlock(w);
        return 0;
    }
    int e = take_error(w);
    int how = e ? 1 : small_write_locked(fd, w, p, n, pos, ret);
    if (how < 0) {
        wunlock(w);
        return 0; /* the real call, after the block */
    }
    if (e) {
        errno = e;
        *ret = -1;
    } else if (how == 0) {
        *ret = (ssize_t)n;
    }
    e = errno;
    wunlock(w);
    errno = e;
    return 1;
}

/* The descriptor has seen 3 complete writes in sequence: its writes are merged
 * from now on (locked). */
static void start_buffering_locked(wb_fd_t *w)
{
    if (!unblock_protect_init() || !start_worker(w->wk))
        return;
    char *b = get_buffer(unblock_opt.io_block);
    if (b != NULL) {
        w->buf = b;
        w->len = 0;
        w->rlo = w->reserved = 0;
        w->state = WB_BUFFERING;
        install_signals();
    }
}

/* After a forwarded write(fd) returned r: counts writes in sequence and switches
 * the descriptor to buffering after the third. */
void unblock_wb_wrote(int fd, size_t n, ssize_t r, uint64_t ns)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state != WB_COUNTING)
        return;
    wlock(w);
    if (ns && r == (ssize_t)n)
        note_cost(w, n, ns);
    if (w->state == WB_COUNTING && r >= 0) {
        if (r > 0)
            note_write(w, w->off, (size_t)r, 0);
        w->off += r;
        if ((size_t)r == n) {
            /* 3 writes in sequence (the paper's rule), or one large write the
             * file took slower than a copy: the next large ones are queued. */
            if (++w->seq >= 3 ||
                (n > unblock_opt.io_block / 4 && n >= WB_LARGE_MIN && ns &&
                 __atomic_load_n(&w->costs->ns_per_kb, __ATOMIC_RELAXED) >= unblock_opt.io_queue_ns))
                start_buffering_locked(w);
        } else {
            w->seq = 0;
        }
    }
    wunlock(w);
}

/* After a forwarded pwrite: complete ones that continue the previous write count
 * toward buffering, as write()s do. */
void unblock_wb_pwrote(int fd, size_t n, off_t off, ssize_t r)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE || w->state == WB_OFF || r <= 0)
        return;
    wlock(w);
    if (w->state != WB_NONE && w->state != WB_OFF) {
        int continues = off == w->last_end;
        note_write(w, off, (size_t)r, 0);
        if (w->state == WB_COUNTING) {
            if (continues && (size_t)r == n && ++w->seq >= 3)
                start_buffering_locked(w);
            else if (!continues || (size_t)r != n)
                w->seq = 0;
        }
    }
    wunlock(w);
}

/* Before any other call on fd: its block goes to the file.  Returns a deferred
 * error (to be returned by this call) or 0.  With `off` the descriptor stops
 * being followed (dup, fcntl, mmap: it may be shared or mapped). */
/* ---- read-ahead: small sequential reads served from a runtime buffer ---- */

#define RA_MIN (64 << 10) /* the first fill: at least a filesystem block, many of them */
#define RA_PAYS 16        /* reads a buffer must serve to have paid for itself */

/* Forgets fd's read-ahead buffer (locked); the kernel's offset is set to where
 * the program believes it is (fills used pread and did not move it). */
static void ra_drop_locked(int fd, wb_fd_t *w)
{
    if (w->state != WB_RAHEAD)
        return;
    if (w->served < RA_PAYS)
        w->strikes += w->strikes < 255;
    else
        w->strikes = 0;
    w->rbytes = 0; /* the next run of reads starts small again */
    syscall(SYS_lseek, fd, w->off, SEEK_SET);
    if (w->buf)
        put_buffer(w->buf, unblock_opt.io_block);
    w->buf = NULL;
    w->len = 0;
    w->seq = 0;
    w->state = WB_RCOUNTING;
    __atomic_sub_fetch(&unblock_ra_live, 1, __ATOMIC_RELAXED);
}

void unblock_ra_drop_all(void)
{
    if (__atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED) == 0)
        return;
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = &wb[fd];
        if (w->state != WB_RAHEAD)
            continue;
        wlock(w);
        ra_drop_locked(fd, w);
        wunlock(w);
    }
}

static void flush_same_file(int fd);

/* Something may change fd's file (a write, a truncation, any call through
 * another descriptor): read-ahead of that file on other descriptors (of every
 * file, when fd's is unknown) is dropped. */
static void ra_drop_same_file(int fd)
{
    wb_fd_t *w = slot(fd);
    int known = learn_file(fd, w);
    for (int o = 0; o < fd_end(); o++) {
        wb_fd_t *x = &wb[o];
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

/* A run of reads (or preads) seen while RCOUNTING: the descriptor reads ahead
 * from `at` from now on, if a buffer can be had (locked). */
static void ra_start_locked(wb_fd_t *w, off_t at)
{
    char *b = unblock_protect_init() ? get_buffer(unblock_opt.io_block) : NULL;
    if (!b)
        return;
    w->buf = b;
    w->len = 0;
    w->boff = at;
    w->reof = 0;
    w->served = 0;
    w->ahead = 2 * w->rbytes < RA_MIN ? RA_MIN : 2 * w->rbytes;
    if (w->ahead > unblock_opt.io_block)
        w->ahead = unblock_opt.io_block;
    w->state = WB_RAHEAD;
    __atomic_add_fetch(&unblock_ra_live, 1, __ATOMIC_RELAXED);
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
    if (w->seq < 255)
        w->seq++;
    return w->seq >= (3u << (w->strikes < 6 ? w->strikes : 6));
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
            ra_start_locked(w, w->plast);
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
        if (ra_run_locked(w, n, r, 1))
            ra_start_locked(w, w->off);
    } else if (w->state != WB_NONE && w->state != WB_OFF && r > 0) {
        w->off += r;
        w->seq = 0;
    }
    wunlock(w);
}

/* Another descriptor of the same file (or of any file, when fd's is unknown) may
 * hold merged writes: they go first, so fd sees them. */
static void flush_same_file(int fd)
{
    wb_fd_t *w = slot(fd);
    int known = learn_file(fd, w);
    for (int o = 0; o < fd_end(); o++) {
        wb_fd_t *x = &wb[o];
        if (o == fd || x->state == WB_RAHEAD ||
            (x->len == 0 && __atomic_load_n(&x->pending, __ATOMIC_SEQ_CST) == 0) ||
            (known && (!x->known || x->dev != w->dev || x->ino != w->ino)))
            continue;
        wlock(x);
        settle_locked(o, x);
        wunlock(x);
    }
}

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
    e = take_error(w);
    if (flags & UNBLOCK_WB_STOP)
        forget_locked(w, WB_OFF);
    if (flags & UNBLOCK_WB_RESIZE)
        w->rlo = w->reserved = 0;
    wunlock(w);
    return e;
}

/* The offset moved (lseek, read): follow it.  `pos` < 0: unknown, stop following. */
void unblock_wb_moved(int fd, off_t pos)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE || w->state == WB_OFF)
        return;
    wlock(w);
    if (pos < 0)
        forget_locked(w, WB_OFF);
    else
        w->off = pos, w->seq = 0, w->rbytes = 0;
    wunlock(w);
}

void unblock_wb_moved_by(int fd, ssize_t n)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE || w->state == WB_OFF || n <= 0)
        return;
    wlock(w);
    w->off += n;
    w->seq = 0;
    wunlock(w);
}

void unblock_wb_forget(int fd)
{
    wb_fd_t *w = slot(fd);
    if (w && w->state == WB_NONE)
        w->known = 0;
}

/* Gives back the blocks reserved past the end of the file (locked; close, exit). */
static void give_back_locked(int fd, wb_fd_t *w)
{
    struct stat st;
    if (w->reserved > 0 && syscall(SYS_fstat, fd, &st) == 0 && w->reserved > st.st_size)
        syscall(SYS_ftruncate, fd, st.st_size);
    w->rlo = w->reserved = 0;
}

/* close(fd): the block goes first; returns the deferred error, if any. */
int unblock_wb_closing(int fd)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE)
        return 0;
    wlock(w);
    settle_locked(fd, w);
    int e = take_error(w);
    give_back_locked(fd, w);
    forget_locked(w, WB_NONE);
    w->known = 0;
    wunlock(w);
    return e;
}

void unblock_wb_flush_all(void)
{
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED) == 0)
        return;
    rd_settle(0); /* what background reads read must be the file before the news */
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = &wb[fd];
        if (w->state == WB_RAHEAD ||
            (w->len == 0 && __atomic_load_n(&w->pending, __ATOMIC_SEQ_CST) == 0))
            continue;
        wlock(w);
        settle_locked(fd, w);
        wunlock(w);
    }
}

void unblock_wb_news(void)
{
    unblock_wb_flush_all();
    unblock_ra_drop_all();
}

/* fork: the child shares every descriptor's offset; stop following them all. */
void unblock_wb_forking(void)
{
    rd_settle(1); /* no worker in the child: everything read first */
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = &wb[fd];
        if (w->state == WB_NONE)
            continue;
        wlock(w);
        settle_locked(fd, w);
        if (w->state != WB_NONE)
            forget_locked(w, WB_OFF);
        wunlock(w);
    }
}

/* At exit: everything to the file; errors nobody consumed are reported. */
void unblock_wb_at_exit(void)
{
    unblock_wb_flush_all();
    for (int fd = 0; fd < fd_end(); fd++) {
        report_unconsumed(fd, &wb[fd]);
        if (wb[fd].reserved > 0 && wtrylock(&wb[fd])) {
            give_back_locked(fd, &wb[fd]);
            wunlock(&wb[fd]);
        }
    }
}

/* ---- fatal signals: write, then die ---- */

/* SIGTERM, SIGINT, SIGHUP and SIGABRT where the program left the default action
 * (SIGSEGV goes through the fault handler, signals.c). */
static const int wb_signals[] = { SIGTERM, SIGINT, SIGHUP, SIGABRT };

/* The workers write every queue and every block (they own no lock the dying
 * thread could hold); a descriptor whose worker is not running is written here
 * if its lock is free.  Waits 2 s at most.  Async-signal-safe. */
void unblock_wb_drain_fatal(void)
{
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_SEQ_CST) == 0)
        return;
    int started = 0;
    if (__atomic_exchange_n(&dying, 1, __ATOMIC_ACQ_REL) == 0) {
        for (int k = 0; k < WB_WORKERS; k++)
            if (__atomic_load_n(&workers[k].ok, __ATOMIC_ACQUIRE)) {
                started++;
                unblock_futex_wake(&workers[k].queued);
            }
        for (int fd = 0; fd < fd_end(); fd++) {
            wb_fd_t *w = &wb[fd];
            if (w->state == WB_BUFFERING && w->len && !workers[w->wk].ok && wtrylock(w)) {
                write_out(fd, w, w->buf, w->len, w->boff);
                block_done_locked(w);
                wunlock(w);
            }
        }
    } else {
        for (int k = 0; k < WB_WORKERS; k++)
            started += __atomic_load_n(&workers[k].ok, __ATOMIC_ACQUIRE);
    }
    for (int i = 0; i < 20; i++) {
        uint32_t d = __atomic_load_n(&dying_done, __ATOMIC_SEQ_CST);
        if ((int)d >= started)
            break;
        unblock_futex_wait(&dying_done, d, 100000000L);
    }
}

static void on_fatal(int sig)
{
    int saved = errno;
    unblock_wb_drain_fatal();
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    errno = saved;
    syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
}

static void install_signals(void)
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
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_fatal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(wb_signals[i], &sa, NULL);
    }
}

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

static void rd_lease_put(int l)
{
    if (!l)
        return;
    rd_lease_t *r = &rd_leases[l - 1];
    qlock_();
    if (--r->refs == 0) {
        syscall(SYS_fcntl, r->lfd, F_SETLEASE, F_UNLCK);
        syscall(SYS_close, r->lfd);
        r->lfd = 0;
        if (wb[r->owner].lease == l)
            wb[r->owner].lease = 0;
    }
    qunlock();
}

/* A read lease for fd's background reads (locked): its record + 1 (held once
 * for the caller), or 0 (not read-only, another process or this one has the
 * file open for writing, no permission, a filesystem without leases). */
static int rd_lease_take(int fd, wb_fd_t *w, wb_worker_t *k)
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
    int lfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0);
    if (lfd < 0 || syscall(SYS_fcntl, lfd, F_SETSIG, SIGURG) != 0 ||
        syscall(SYS_fcntl, lfd, F_SETLEASE, F_RDLCK) != 0) {
        if (lfd >= 0)
            syscall(SYS_close, lfd);
        __atomic_store_n(&rd_leases[l - 1].lfd, 0, __ATOMIC_RELEASE);
        return 0;
    }
    syscall(SYS_fcntl, lfd, F_SETOWN_EX, &to);
    qlock_();
    rd_leases[l - 1] = (rd_lease_t){ 1, lfd, fd };
    w->lease = (int8_t)l;
    qunlock();
    unblock_counter_add(&unblock_stats.io_read_leases, 1);
    return l;
}
static long fail_read_at;    /* test hook UNBLOCK_TEST_FAIL_READ=N */
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
    syscall(SYS_close, j->fd);
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
static void rd_settle(int all)
{
    uint32_t n = __atomic_load_n(&rd_inflight, __ATOMIC_SEQ_CST);
    if (n == 0 || (!all && n == __atomic_load_n(&rd_leased, __ATOMIC_SEQ_CST)))
        return;
    unblock_counter_add(&unblock_stats.io_waits, 1);
    unblock_protect_files_read(all);
}



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
    int dfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0);
    wb_job_t *j = dfd >= 0 ? job_take() : NULL;
    if (!j || unblock_op_activate(op) != 0) {
        if (j)
            job_put(j, 0);
        unblock_op_release(op);
        if (dfd >= 0)
            syscall(SYS_close, dfd);
        return -1;
    }
    /* The predictor's costs (core/sites.h): the program's waits for any piece,
     * and, from the last piece, what the original call would have waited. */
    op->site = site;
    op->t_issue = t_issue;
    *j = (wb_job_t){ .fd = dfd, .buf = dst, .len = n, .cap = n, .off = off, .op = op, .lease = lease };
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
        uint32_t cost = __atomic_load_n(&workers[wk].rd_ns_per_kb, __ATOMIC_RELAXED);
        if (unblock_opt.read_fast_ns && cost == 0 && rest > 2 * piece) {
            /* Not measured yet: the first piece is read here, timed. */
            uint64_t t0 = unblock_now_ns();
            size_t got;
            if (read_whole(fd, q, piece, off + r0, &got) != 0) {
                wunlock(w);
                return 0; /* an error, or the file shrank: the real call answers */
            }
            rd_note_cost(&workers[wk], piece, unblock_now_ns() - t0);
            q += piece;
            cost = __atomic_load_n(&workers[wk].rd_ns_per_kb, __ATOMIC_RELAXED);
        }
        int bg = start_worker(wk) &&
                 !(unblock_opt.read_fast_ns && cost && cost < unblock_opt.read_fast_ns);
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
        int started = 0, lease = bg ? rd_lease_take(fd, w, &workers[wk]) : 0;
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
            if (rd_piece(fd, &workers[wk], q, (size_t)(e - q), off + (q - (char *)p), lease, site,
                         e == end ? t_call : 0) != 0)
                break;
            started++;
            q = e;
        }
        if (q < end) { /* what could not be handed over, or a fast file */
            uint64_t t0 = unblock_now_ns();
            size_t got;
            int e = read_whole(fd, q, (size_t)(end - q), off + (q - (char *)p), &got);
            if (e == 0) {
                uint64_t t1 = unblock_now_ns();
                rd_note_cost(&workers[wk], got, t1 - t0);
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

/* ---- the workers: queued blocks and large writes, and the timer ---- */

/* Each writes its filesystem's queued jobs in order; while blocks on its
 * filesystem hold data it also looks every UNBLOCK_IO_DELAY_MS (50 ms, the paper's
 * figure) and queues the blocks that did not change since its last look, so data
 * never waits in memory much longer than that after the last write.  With nothing
 * queued and no block holding data it sleeps on the futex: an idle program pays
 * nothing. */

static long now_ms(void)
{
    return (long)(unblock_now_ns() / 1000000u);
}

/* The next job: FIFO, except that a read the program waits for goes first, and
 * after a piece its neighbour in the direction the program consumes them (the
 * paper's reordering: reading goes on from where the program faulted, in pieces
 * of about 1 MiB; a program that consumes its block bottom to top gets the
 * pieces bottom to top).  Reads may pass writes: none of their file is queued
 * (rd_read settles it first). */
static wb_job_t *dequeue(wb_worker_t *k)
{
    qlock_();
    wb_job_t **pp = &k->head, *prev = NULL, *x;
    int found = 0;
    if (__atomic_load_n(&unblock_io_urgent, __ATOMIC_ACQUIRE))
        for (x = k->head; x && !found; prev = x, x = x->next)
            if (x->op && __atomic_load_n(&x->op->urgent, __ATOMIC_ACQUIRE) == 1) {
                pp = prev ? &prev->next : &k->head;
                found = 1;
                break;
            }
    if (found) {
        uintptr_t lo = (*pp)->op->bytes.base;
        k->down = k->urgent_lo && lo < k->urgent_lo;
        k->urgent_lo = lo;
    } else if (k->last_hi) {
        prev = NULL;
        for (x = k->head; x; prev = x, x = x->next)
            if (x->op && (k->down ? x->op->bytes.base + x->len == k->last_lo
                                  : x->op->bytes.base == k->last_hi)) {
                pp = prev ? &prev->next : &k->head;
                found = 1;
                break;
            }
    }
    if (!found)
        prev = NULL;
    wb_job_t *j = *pp;
    if (j && pp != &k->head)
        unblock_counter_add(&unblock_stats.io_read_reorders, 1);
    if (j && j->op) {
        k->last_lo = j->op->bytes.base;
        k->last_hi = j->op->bytes.base + j->len;
    } else {
        k->last_lo = k->last_hi = 0;
    }
    if (j) {
        *pp = j->next;
        if (k->tail == j)
            k->tail = pp == &k->head ? NULL : prev;
        j->started = 1; /* a protected write no longer grows */
    }
    qunlock();
    return j;
}

static void read_job(wb_worker_t *k, wb_job_t *j);

/* A write job of worker k is over: the `copied` bytes of copy budget it held go
 * back, and its slot too unless `reuse` is 0 (a dying program's thread may still
 * look at it); its descriptor's drain may end. */
static void job_end(wb_worker_t *k, wb_job_t *j, size_t copied, int reuse)
{
    wb_fd_t *w = &wb[j->fd];
    if (reuse)
        job_put(j, copied);
    else
        __atomic_sub_fetch(&queued_bytes, copied, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&k->queued, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&w->pending, 1, __ATOMIC_SEQ_CST);
    unblock_futex_wake(&w->pending);
}

/* A block or a copied large write is in the file (or failed). */
static void job_done(wb_worker_t *k, wb_job_t *j)
{
    put_buffer(j->buf, j->cap);
    job_end(k, j, j->len, 1);
}

/* Blocks of this worker's descriptors that did not change since the last look are
 * queued; with `all`, every block is written (a fatal signal: a lock the dying
 * program holds is waited for 100 ms at most). */
static void scan_blocks(int me, int all)
{
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = &wb[fd];
        if (w->wk != me || w->state != WB_BUFFERING || w->len == 0)
            continue;
        int locked = wtrylock(w);
        for (long t0 = now_ms(); !locked && all && now_ms() - t0 < 100;)
            syscall(SYS_sched_yield), locked = wtrylock(w);
        if (!locked)
            continue; /* the program is writing it right now */
        if (w->state == WB_BUFFERING && w->len) {
            if (all) {
                write_out(fd, w, w->buf, w->len, w->boff);
                block_done_locked(w);
            } else if (w->idle) {
                submit_block_locked(fd, w);
            } else {
                w->idle = 1;
            }
        }
        wunlock(w);
    }
}

static int reserve_locked(int fd, wb_fd_t *w, off_t start, off_t end);

/* After the worker wrote up to `done` on fd: when less than half of the range
 * the descriptor reserved is left ahead of it, the worker reserves the next step
 * itself, while no write of its own holds the file (fallocate waits for a
 * running write on FUSE and NFS).  The program's writes then find their range
 * reserved; a failure here is left to the program's own call to meet. */
static void reserve_ahead(int fd, wb_fd_t *w, off_t done)
{
    if (w->state != WB_BUFFERING || !wtrylock(w))
        return;
    off_t range = w->reserved - w->rlo;
    if (w->state == WB_BUFFERING && range > 0 && done >= w->rlo && w->reserved - done < range / 2) {
        reserve_locked(fd, w, w->reserved, w->reserved + 1);
        if (w->state == WB_OFF)
            w->state = WB_BUFFERING; /* the program's next reservation decides */
    }
    wunlock(w);
}


/* The worker: a protected write, piece by piece, from the program's pages until
 * a fault switches it to the copy (see "protected writes" above). */
static void write_job_protected(wb_worker_t *k, wb_job_t *j)
{
    wb_fd_t *w = &wb[j->fd];
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
        } else if (unblock_unlikely(piece_delay_us > 0)) {
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
        if (__atomic_load_n(&dying, __ATOMIC_ACQUIRE)) {
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

static void *worker_main(void *arg)
{
    int me = (int)(intptr_t)arg;
    wb_worker_t *k = &workers[me];
    __atomic_store_n(&k->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    unblock_tls.mpi_depth = 1; /* its calls are the runtime's own */
    unblock_tls.runtime = 1;
    /* The program's asynchronous signals are for its own threads. */
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    long delay = (long)unblock_opt.io_delay_ms, next_scan = now_ms() + delay;
    int drained = 0;
    for (;;) {
        wb_job_t *j = dequeue(k);
        if (j && j->op) {
            read_job(k, j);
            continue;
        }
        if (j && j->wop) {
            write_job_protected(k, j);
            continue;
        }
        if (j) {
            uint64_t t0 = j->len >= WB_LARGE_MIN ? unblock_now_ns() : 0;
            write_out(j->fd, &wb[j->fd], j->buf, j->len, j->off);
            if (t0)
                note_cost(&wb[j->fd], j->len, unblock_now_ns() - t0);
            reserve_ahead(j->fd, &wb[j->fd], j->off + (off_t)j->len);
            job_done(k, j);
            continue;
        }
        if (unblock_unlikely(__atomic_load_n(&dying, __ATOMIC_ACQUIRE)) && !drained) {
            scan_blocks(me, 1);
            drained = 1;
            __atomic_add_fetch(&dying_done, 1, __ATOMIC_SEQ_CST);
            unblock_futex_wake(&dying_done);
            continue;
        }
        int dirty = delay > 0 && __atomic_load_n(&unblock_wb_dirty, __ATOMIC_SEQ_CST) != 0;
        long t = now_ms();
        if (dirty && t >= next_scan) {
            scan_blocks(me, 0);
            next_scan = t + delay;
            continue;
        }
        if (!dirty)
            next_scan = t + delay;
        if (__atomic_load_n(&k->queued, __ATOMIC_SEQ_CST) == 0 &&
            (drained || !__atomic_load_n(&dying, __ATOMIC_ACQUIRE)))
            unblock_futex_wait(&k->queued, 0, dirty ? (next_scan - t) * 1000000L : 0);
    }
    return NULL;
}

UNBLOCK_REAL_DECL(int, pthread_create,
                  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));

/* Starts worker k once; 1 if it runs. */
static int start_worker(int k)
{
    static int jobs_ready;
    wb_worker_t *wk = &workers[k];
    if (__atomic_exchange_n(&wk->started, 1, __ATOMIC_ACQ_REL))
        return __atomic_load_n(&wk->ok, __ATOMIC_ACQUIRE);
    qlock_();
    if (!jobs_ready) {
        jobs_ready = 1;
        for (int i = 0; i < WB_JOBS; i++) {
            jobs[i].next = job_free;
            job_free = &jobs[i];
        }
        const char *f = getenv("UNBLOCK_TEST_FAIL_WRITE");
        fail_at = f ? atol(f) : 0;
        f = getenv("UNBLOCK_TEST_PIECE_DELAY_US");
        piece_delay_us = f ? atol(f) : 0;
        unblock_io_write_release = release_write; /* before any protected write */
        f = getenv("UNBLOCK_TEST_FAIL_READ");
        fail_read_at = f ? atol(f) : 0;
    }
    qunlock();
    unblock_real_pthread_create_t create = UNBLOCK_REAL(pthread_create);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (create(&t, &attr, worker_main, (void *)(intptr_t)k) == 0) {
        pthread_setname_np(t, "unblock-io");
        unblock_counter_add(&unblock_stats.io_workers, 1);
        while (!__atomic_load_n(&wk->tid, __ATOMIC_ACQUIRE)) /* it sets it first thing */
            syscall(SYS_sched_yield);
        __atomic_store_n(&wk->ok, 1, __ATOMIC_RELEASE);
    } else {
        unblock_warn("cannot start a write-behind thread; writes to that filesystem are "
                     "not buffered");
    }
    pthread_attr_destroy(&attr);
    return __atomic_load_n(&wk->ok, __ATOMIC_ACQUIRE);
}
