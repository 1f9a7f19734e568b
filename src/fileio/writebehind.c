/* writebehind.c — small sequential writes merged in user space.
 *
 * Paper: Natvig & Elster, section III.D.  After 3 writes in sequence on a
 * descriptor this process opened itself (a regular file on a filesystem known to
 * behave; not O_APPEND, O_SYNC, O_DSYNC or O_DIRECT), small writes are copied into a
 * per-descriptor block (UNBLOCK_IO_BLOCK, 1 MiB) and return at once; the block goes
 * to the file with one pwrite when it is full, and before anything that could look
 * at the file or tell another process about it:
 *   - any other call on that descriptor (read, lseek, fstat, fsync, ftruncate,
 *     mmap, dup, fcntl, close, ...);
 *   - any call that names a path (open, stat, truncate, ...), a write to any other
 *     descriptor (a pipe, a socket, stdout: the news may travel there), any
 *     intercepted MPI call, fork, exec, exit, _exit, and SIGTERM, SIGINT and SIGHUP
 *     left at their default action.
 * A block also goes to its file when it has not changed for UNBLOCK_IO_DELAY
 * (50 ms), written by a timer thread.  Flushes run in the calling thread or the
 * timer thread; the per-filesystem workers and the OFD locks come next
 * (docs/fileio.md).
 *
 * Errors come from the original call: before a buffered write extends the file,
 * the range is reserved (fallocate FALLOC_FL_KEEP_SIZE, 1 MiB steps) and
 * RLIMIT_FSIZE is checked, so ENOSPC, EDQUOT and EFBIG/SIGXFSZ are met by a real
 * write in the program's call.  An error of a flush (EIO) is returned exactly once,
 * by the next call on the descriptor (or close, or fsync); one never consumed is
 * printed at exit and counted in io.errors_deferred. */
#define _GNU_SOURCE
#include "fileio/writebehind.h"
#include "core/log.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"
#include "protect/protect.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WB_FDS 4096
#define WB_RESERVE_STEP (1u << 20)

enum { WB_NONE = 0, WB_COUNTING, WB_BUFFERING, WB_OFF };

typedef struct {
    int lock;
    uint8_t state;
    uint8_t idle;      /* timer rounds the block has not changed in */
    uint8_t seq;       /* writes in sequence seen while COUNTING */
    int error;         /* a flush error not yet returned */
    off_t off;         /* the descriptor's offset as the program sees it */
    off_t boff;        /* file offset of buf[0] */
    size_t len;        /* bytes in buf */
    off_t reserved;    /* fallocate'd (KEEP_SIZE) up to here */
    char *buf;
} wb_fd_t;

static wb_fd_t wb[WB_FDS];
uint32_t unblock_wb_dirty; /* descriptors with bytes in their block */
static int signals_installed;
static int worker_started;
static uint32_t worker_stop;

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

/* Writes the block (locked).  Sets the kernel's offset to where the program
 * believes it is (buffered writes did not move it).  0, or -1 with w->error set. */
static int flush_locked(int fd, wb_fd_t *w)
{
    size_t done = 0;
    while (done < w->len) {
        ssize_t r = sys_pwrite(fd, w->buf + done, w->len - done, w->boff + (off_t)done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            w->error = r < 0 ? errno : EIO;
            break;
        }
        done += (size_t)r;
    }
    if (w->len) {
        w->len = 0;
        __atomic_sub_fetch(&unblock_wb_dirty, 1, __ATOMIC_RELAXED);
        unblock_counter_add(&unblock_stats.io_flushes, 1);
    }
    syscall(SYS_lseek, fd, w->off, SEEK_SET);
    if (w->error)
        unblock_counter_add(&unblock_stats.io_errors_deferred, 1);
    return w->error ? -1 : 0;
}

/* The deferred error, returned once. */
static int take_error(wb_fd_t *w)
{
    int e = w->error;
    w->error = 0;
    if (e)
        unblock_counter_add(&unblock_stats.io_errors_returned, 1);
    return e;
}

/* Frees the block and forgets the descriptor (locked). */
static void forget_locked(wb_fd_t *w, int state)
{
    if (w->buf)
        munmap(w->buf, unblock_opt.io_block);
    w->buf = NULL;
    w->len = 0;
    w->seq = 0;
    w->reserved = 0;
    w->state = (uint8_t)state;
}

/* ---- the hooks the wrappers call ---- */

static int fs_allowed(int fd)
{
    struct statfs sf;
    if (syscall(SYS_fstatfs, fd, &sf) != 0)
        return 0;
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

void unblock_wb_opened(int fd, int flags)
{
    wb_fd_t *w = slot(fd);
    if (!w)
        return;
    wlock(w);
    forget_locked(w, WB_NONE); /* a number we did not see closed is new now */
    w->error = 0;
    struct stat st;
    int acc = flags & O_ACCMODE;
    if (unblock_opt.io_block > 0 && (acc == O_WRONLY || acc == O_RDWR) &&
        !(flags & (O_APPEND | O_SYNC | O_DSYNC | O_DIRECT | O_PATH)) &&
        syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) && fs_allowed(fd)) {
        w->state = WB_COUNTING;
        w->off = 0;
    }
    wunlock(w);
}

static void install_signals(void);
static void start_worker(void);

/* write(fd, p, n) on a descriptor we may buffer.  Returns 1 and sets *ret if it
 * handled the call; 0 means "forward it" (after which unblock_wb_wrote updates). */
int unblock_wb_write(int fd, const void *p, size_t n, ssize_t *ret)
{
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
    if (w->len + n > unblock_opt.io_block || n > unblock_opt.io_block / 4) {
        /* full, or a large write: the block goes first, the large one directly */
        if (flush_locked(fd, w) != 0) {
            errno = take_error(w);
            wunlock(w);
            *ret = -1;
            return 1;
        }
        if (n > unblock_opt.io_block / 4) {
            ssize_t r = syscall(SYS_write, fd, p, n);
            if (r > 0)
                w->off += r;
            wunlock(w);
            *ret = r;
            return 1;
        }
    }
    off_t end = w->off + (off_t)n;
    if (end > w->reserved) {
        /* Make sure the file can hold it, so that ENOSPC, EDQUOT or EFBIG come
         * from a real write in this call, as they would without us. */
        struct rlimit rl;
        int ok = getrlimit(RLIMIT_FSIZE, &rl) == 0 &&
                 (rl.rlim_cur == RLIM_INFINITY || (rlim_t)end <= rl.rlim_cur);
        off_t want = ((end + WB_RESERVE_STEP - 1) / WB_RESERVE_STEP) * WB_RESERVE_STEP;
        if (ok && rl.rlim_cur != RLIM_INFINITY && (rlim_t)want > rl.rlim_cur)
            want = (off_t)rl.rlim_cur;
        if (ok && syscall(SYS_fallocate, fd, FALLOC_FL_KEEP_SIZE, w->reserved,
                          want - w->reserved) != 0) {
            ok = 0;
            if (errno != ENOSPC && errno != EDQUOT)
                w->state = WB_OFF; /* no fallocate here: stop buffering this one */
        }
        if (!ok) {
            if (flush_locked(fd, w) != 0) {
                errno = take_error(w);
                wunlock(w);
                *ret = -1;
                return 1;
            }
            ssize_t r = syscall(SYS_write, fd, p, n);
            if (r > 0)
                w->off += r;
            if (w->state == WB_BUFFERING)
                w->state = WB_COUNTING, w->seq = 0;
            wunlock(w);
            *ret = r;
            return 1;
        }
        w->reserved = want;
    }
    if (w->len == 0) {
        w->boff = w->off;
        if (__atomic_add_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST) == 1)
            unblock_futex_wake(&unblock_wb_dirty); /* the timer thread may sleep */
    }
    w->idle = 0;
    memcpy(w->buf + w->len, p, n);
    w->len += n;
    w->off = end;
    unblock_counter_add(&unblock_stats.io_merged, 1);
    wunlock(w);
    *ret = (ssize_t)n;
    return 1;
}

/* After a forwarded write(fd) returned r: counts writes in sequence and switches
 * the descriptor to buffering after the third. */
void unblock_wb_wrote(int fd, size_t n, ssize_t r)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state != WB_COUNTING)
        return;
    wlock(w);
    if (w->state == WB_COUNTING && r >= 0) {
        w->off += r;
        if ((size_t)r == n && n < unblock_opt.io_block / 4) {
            if (++w->seq >= 3) {
                void *b = mmap(NULL, unblock_opt.io_block, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (b != MAP_FAILED) {
                    w->buf = b;
                    w->len = 0;
                    w->reserved = 0;
                    w->state = WB_BUFFERING;
                    install_signals();
                    start_worker();
                }
            }
        } else {
            w->seq = 0;
        }
    }
    wunlock(w);
}

/* Before any other call on fd: its block goes to the file.  Returns a deferred
 * error (to be returned by this call) or 0.  With `off` the descriptor stops
 * being followed (dup, fcntl, mmap: it may be shared or mapped). */
int unblock_wb_before_fd(int fd, int flags)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE || w->state == WB_OFF)
        return 0;
    wlock(w);
    int e = 0;
    if (w->state == WB_BUFFERING) {
        flush_locked(fd, w);
        e = take_error(w);
    }
    if (flags & UNBLOCK_WB_STOP)
        forget_locked(w, WB_OFF);
    if (flags & UNBLOCK_WB_RESIZE)
        w->reserved = 0;
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
        w->off = pos, w->seq = 0;
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

/* close(fd): the block goes first; returns the deferred error, if any. */
int unblock_wb_closing(int fd)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE)
        return 0;
    wlock(w);
    int e = 0;
    if (w->state == WB_BUFFERING)
        flush_locked(fd, w);
    e = take_error(w);
    if (w->reserved > 0) {
        /* Give back the blocks reserved past the end of the file. */
        struct stat st;
        if (syscall(SYS_fstat, fd, &st) == 0 && w->reserved > st.st_size)
            syscall(SYS_ftruncate, fd, st.st_size);
    }
    forget_locked(w, WB_NONE);
    wunlock(w);
    return e;
}

void unblock_wb_flush_all(void)
{
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED) == 0)
        return;
    for (int fd = 0; fd < WB_FDS; fd++) {
        wb_fd_t *w = &wb[fd];
        if (w->state != WB_BUFFERING || w->len == 0)
            continue;
        wlock(w);
        if (w->state == WB_BUFFERING)
            flush_locked(fd, w);
        wunlock(w);
    }
}

/* fork: the child shares every descriptor's offset; stop following them all. */
void unblock_wb_forking(void)
{
    for (int fd = 0; fd < WB_FDS; fd++) {
        wb_fd_t *w = &wb[fd];
        if (w->state == WB_NONE)
            continue;
        wlock(w);
        if (w->state == WB_BUFFERING)
            flush_locked(fd, w);
        if (w->state != WB_NONE)
            forget_locked(w, WB_OFF);
        wunlock(w);
    }
}

/* At exit: everything to the file; errors nobody consumed are reported. */
void unblock_wb_at_exit(void)
{
    unblock_wb_flush_all();
    for (int fd = 0; fd < WB_FDS; fd++)
        if (wb[fd].error) {
            unblock_warn("a background write to descriptor %d failed and the program never "
                         "saw it: %s", fd, strerror(wb[fd].error));
            wb[fd].error = 0;
        }
}

/* ---- SIGTERM, SIGINT, SIGHUP at their default action: write, then die ---- */

static const int wb_signals[] = { SIGTERM, SIGINT, SIGHUP };

static void on_fatal(int sig)
{
    int saved = errno;
    /* A descriptor another thread (or the interrupted code) holds is skipped:
     * waiting for it could deadlock. */
    for (int fd = 0; fd < WB_FDS; fd++) {
        wb_fd_t *w = &wb[fd];
        if (w->state == WB_BUFFERING && w->len && wtrylock(w)) {
            flush_locked(fd, w);
            wunlock(w);
        }
    }
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

/* ---- the timer: a block untouched for UNBLOCK_IO_DELAY goes to its file ---- */

/* One thread per process (the per-filesystem workers of the next step take the
 * block writes themselves).  It sleeps on the futex while no block holds data, so
 * an idle program pays nothing; otherwise it looks every UNBLOCK_IO_DELAY (50 ms,
 * the paper's figure) and writes the blocks that did not change since its last
 * look, so data never waits in memory much longer than that after the last write. */
static void *worker_main(void *arg)
{
    (void)arg;
    unblock_tls.mpi_depth = 1; /* its calls are the runtime's own */
    unblock_tls.runtime = 1;
    while (!__atomic_load_n(&worker_stop, __ATOMIC_ACQUIRE)) {
        if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_SEQ_CST) == 0) {
            unblock_futex_wait(&unblock_wb_dirty, 0, 0);
            continue;
        }
        unblock_futex_wait(&worker_stop, 0, (long)unblock_opt.io_delay_ms * 1000000L);
        for (int fd = 0; fd < WB_FDS; fd++) {
            wb_fd_t *w = &wb[fd];
            if (w->state != WB_BUFFERING || w->len == 0)
                continue;
            if (!wtrylock(w))
                continue; /* the program is writing it right now */
            if (w->state == WB_BUFFERING && w->len) {
                if (w->idle)
                    flush_locked(fd, w);
                else
                    w->idle = 1;
            }
            wunlock(w);
        }
    }
    return NULL;
}

UNBLOCK_REAL_DECL(int, pthread_create,
                  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));

static void start_worker(void)
{
    if (unblock_opt.io_delay_ms == 0 || __atomic_exchange_n(&worker_started, 1, __ATOMIC_ACQ_REL))
        return;
    unblock_real_pthread_create_t create = UNBLOCK_REAL(pthread_create);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (create(&t, &attr, worker_main, NULL) == 0)
        pthread_setname_np(t, "unblock-io");
    else
        unblock_warn("cannot start the write-behind timer thread; blocks wait for the next "
                     "flush event");
    pthread_attr_destroy(&attr);
}
