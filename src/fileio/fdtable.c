/* fdtable.c — the per-descriptor table of write-behind and read-ahead.
 *
 * Owns: the table (one entry per descriptor number, with its lock, state, offset,
 * block, deferred error and counts), the highest descriptor followed, the
 * per-file access patterns and costs (files[]), the test hook that fails the Nth
 * background write (UNBLOCK_TEST_FAIL_WRITE), and the two flags every hook reads
 * first (unblock_wb_dirty, unblock_ra_live).  Which descriptors are followed is
 * decided here at open: regular files this process opened itself, on a
 * filesystem known to behave, not O_APPEND, O_SYNC, O_DSYNC or O_DIRECT.
 * Calls: the worker's lock and buffers (worker.c), nothing else of fileio/.
 * Errors: a background write's error is kept (defer_error) and returned once, by
 * the next call on the descriptor (take_error); one never consumed is printed at
 * exit and counted in io.errors_deferred. */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h"

#include <linux/magic.h>
#include <sys/statfs.h>
/* n bytes took ns: folded into *cost, ns per KiB (recent ones weigh more). */
void note_ns_per_kb(uint32_t *cost, size_t n, uint64_t ns)
{
    uint64_t per = ns * 1024 / n;
    if (per > UINT32_MAX)
        per = UINT32_MAX;
    uint32_t old = __atomic_load_n(cost, __ATOMIC_RELAXED);
    __atomic_store_n(cost, old ? (uint32_t)((old * 3ull + per) / 4) : (uint32_t)per,
                     __ATOMIC_RELAXED);
}

/* A write of n bytes took ns (the program's or the worker's). */
void note_cost(wb_fd_t *w, size_t n, uint64_t ns)
{
    if (n >= WB_LARGE_MIN)
        note_ns_per_kb(&w->costs->ns_per_kb, n, ns);
}

/* A mean of ns per call, recent calls weighing more; a single call counts at
 * most 4 times the mean (`clamp`: an occasional dear one, a block handed over or
 * a reservation, is not what the next calls will cost). */
void note_ns(uint32_t *mean, uint64_t ns, int clamp)
{
    uint32_t old = __atomic_load_n(mean, __ATOMIC_RELAXED);
    if (clamp && old && ns > 4ull * old)
        ns = 4ull * old;
    if (ns > UINT32_MAX)
        ns = UINT32_MAX;
    __atomic_store_n(mean, old ? (uint32_t)((old * 3ull + ns) / 4) : (uint32_t)ns,
                     __ATOMIC_RELAXED);
}


/* The table and its bound are reached inline (fileio_internal.h: slot, fd_end),
 * the one exception to this folder's rule that state stays static: every file
 * call of the program looks up its descriptor, and a function call there cost
 * 1-2 ns of a 19 ns merged write (bench/compare.py, before and after). */
wb_fd_t unblock_fio_fds[WB_FDS];
int unblock_fio_fds_seen;
/* The fast path's byte per descriptor (fastpath.h): 0, PASS, for every number
 * never followed. */
uint8_t unblock_fio_fast[UNBLOCK_FIO_FDS];
/* Descriptors holding space reserved ahead (fastpath.h: writes need none held). */
uint32_t unblock_wb_reserving;
#define wb unblock_fio_fds
#define fds_seen unblock_fio_fds_seen
/* unblock_wb_dirty (core.h: unblock_busy): descriptors with bytes in their
 * block, plus jobs queued for the workers: while nonzero, some written data is
 * not in its file yet.  unblock_ra_live: descriptors holding a read-ahead buffer
 * (RAHEAD): 0 makes the drop a no-op. */

/* Per-file access pattern (stats): the first WB_FILES files opened for writing. */
static unblock_wb_file_t files[UNBLOCK_WB_FILES];
static int nfiles;

/* Test hook (docs/testing.md): UNBLOCK_TEST_FAIL_WRITE=N makes the Nth write of
 * a merged block or queued large write fail with EIO instead of reaching the file. */
static long fail_at = -1; /* -1: not read yet */
static uint32_t flush_writes;

/* Raw system calls: the runtime never calls its own wrappers. */
ssize_t sys_pwrite(int fd, const void *p, size_t n, off_t off)
{
    return syscall(SYS_pwrite64, fd, p, n, off);
}




/* Whether fd's file is known; a descriptor not opened through a wrapper (a
 * pipe, the terminal, an inherited file) is looked up once, and forgotten again
 * when it is closed.  Unlocked: a racing lookup writes the same values. */
/* w's file is the one st describes. */
static void know_file(wb_fd_t *w, const struct stat *st)
{
    w->dev = st->st_dev;
    w->ino = st->st_ino;
    w->exec = (st->st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) != 0;
    w->known = 1;
}

int learn_file(int fd, wb_fd_t *w)
{
    struct stat st;
    if (w && !w->known && syscall(SYS_fstat, fd, &st) == 0)
        know_file(w, &st);
    return w && w->known;
}


/* The deferred error, returned once. */
int take_error(wb_fd_t *w)
{
    int e = __atomic_exchange_n(&w->error, 0, __ATOMIC_ACQ_REL);
    if (e)
        unblock_counter_add(&unblock_stats.io_errors_returned, 1);
    return e;
}


/* An error of a background write, kept for the program's next call on fd. */
void defer_error(wb_fd_t *w, int e)
{
    int zero = 0;
    if (__atomic_compare_exchange_n(&w->error, &zero, e, 0, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE))
        unblock_counter_add(&unblock_stats.io_errors_deferred, 1);
    /* The next call on the descriptor must take the full path, which returns it
     * (fast_update looks at the error again after storing the byte). */
    __atomic_store_n(&unblock_fio_fast[w - wb], UNBLOCK_FIO_SLOW, __ATOMIC_SEQ_CST);
}

/* Writes len bytes at off, whole: 0, or -1 with the error kept for the program. */
int write_range(int fd, wb_fd_t *w, const char *buf, size_t len, off_t off)
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
int fail_injected(wb_fd_t *w)
{
    if (unblock_unlikely(fail_at < 0)) { /* read once, racing threads read the same */
        const char *f = getenv("UNBLOCK_TEST_FAIL_WRITE");
        fail_at = f ? atol(f) : 0;
    }
    if (unblock_likely(!fail_at) ||
        (long)__atomic_add_fetch(&flush_writes, 1, __ATOMIC_RELAXED) != fail_at)
        return 0;
    defer_error(w, EIO);
    return 1;
}

/* Writes len bytes at off, whole; an error is kept for the program. */
void write_out(int fd, wb_fd_t *w, const char *buf, size_t len, off_t off)
{
    if (fail_injected(w))
        return;
    unblock_counter_add(&unblock_stats.io_flushed_bytes, len);
    write_range(fd, w, buf, len, off);
}


static void fold_locked(wb_fd_t *w);

/* Frees the block and forgets the descriptor (locked). */
void forget_locked(wb_fd_t *w, int state)
{
    fold_locked(w);
    ra_unlease_locked(w);
    sc_forget((int)(w - unblock_fio_fds), w);
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
    w->alloc_end = 0;
    w->resv_min = 0;
    w->resv_made = 0;
    set_reserved(w, 0, 0);
    w->noquota = 0;
    w->calm = 0;
    w->quiet = 0;
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
void report_unconsumed(int fd, wb_fd_t *w)
{
    int e = __atomic_exchange_n(&w->error, 0, __ATOMIC_ACQ_REL);
    if (e)
        unblock_warn("a background write to descriptor %d failed and the program never "
                     "saw it: %s", fd, strerror(e));
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
    w->wstrikes = 0; /* a new file: merging is tried after the first 3 writes again */
    w->bwrites = 0;
    if (unblock_trace_on)
        w->trace = TRACE_UNKNOWN; /* looked at on its first traced call */
    w->file = -1;
    struct stat st;
    int acc = flags & O_ACCMODE;
    w->known = 0;
    w->outside = 0; /* (LOOKED_FD marks it again, posix.c) */
    if (!(flags & O_PATH) && syscall(SYS_fstat, fd, &st) == 0)
        know_file(w, &st);
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
        w->unleased = 0;
    }
    wunlock(w);
}


/* ---- descriptors of a file a module holds writes of (writebehind.h) ---- */
static void outside_mark_locked(wb_fd_t *w)
{
    w->outside = 1;
    if (w->state == WB_RCOUNTING || w->state == WB_RAHEAD)
        forget_locked(w, WB_OFF); /* (a buffer read ahead would keep the old bytes) */
}

void unblock_wb_outside_file(uint64_t dev, uint64_t ino)
{
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = &wb[fd];
        if (!__atomic_load_n(&w->known, __ATOMIC_RELAXED) || w->dev != (dev_t)dev ||
            w->ino != (ino_t)ino || unblock_fd_is_own(fd))
            continue;
        wlock(w);
        if (w->known && w->dev == (dev_t)dev && w->ino == (ino_t)ino)
            outside_mark_locked(w);
        wunlock(w);
    }
}

void unblock_wb_outside_mark(int fd)
{
    wb_fd_t *w = slot(fd);
    if (!w || unblock_fd_is_own(fd) || unblock_tls.wb_locks > 0)
        return;
    wlock(w);
    if (learn_file(fd, w))
        outside_mark_locked(w);
    wunlock(w);
}

void unblock_wb_outside_dup(int fd, int to)
{
    wb_fd_t *w = slot(fd);
    if (w && to >= 0 && __atomic_load_n(&w->outside, __ATOMIC_RELAXED))
        unblock_wb_outside_mark(to);
}

/* Before a call on a marked descriptor: the module's look at its file (a load
 * and a compare for every other one).  Inside MPI (MPI-IO's own calls), and
 * where the module could not tell, the mark stays; where it no longer follows
 * the file, or follows none, it goes. */
void unblock_wb_outside(int fd)
{
    wb_fd_t *w = slot(fd);
    if (!w || !__atomic_load_n(&w->outside, __ATOMIC_RELAXED) || unblock_tls.mpi_depth > 0 ||
        unblock_tls.wb_locks > 0)
        return;
    unblock_outside_look_t look = __atomic_load_n(&unblock_outside_look, __ATOMIC_ACQUIRE);
    int saved = errno;
    int r = look ? look(0, (uint64_t)w->dev, (uint64_t)w->ino) : UNBLOCK_LOOK_GONE;
    errno = saved;
    if (r & UNBLOCK_LOOK_GONE) {
        wlock(w);
        w->outside = 0;
        wunlock(w);
    }
}

/* The offset moved (lseek, read): follow it.  `pos` < 0: unknown, stop following. */
void unblock_wb_moved(int fd, off_t pos)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE || w->state == WB_OFF)
        return;
    wlock(w);
    if (pos < 0) {
        give_back_locked(fd, w);
        forget_locked(w, WB_OFF);
    }
    else if (pos != w->off)
        w->off = pos, w->seq = 0, w->rbytes = 0;
    wunlock(w);
}

/* IOR's POSIX transfers (and other codes that place each one) seek to where
 * the last one ended before each: a seek that moves nothing is no news (it
 * looks at no byte of the file), so the block keeps its writes and read-ahead
 * its buffer, and the answer is the program's offset, with no system call:
 * the kernel's stays where the merged writes and the reads served from the
 * buffer left it, behind, as after any of them (a flush or a dropped buffer
 * sets it).  Not with an error to return (the next call returns it: the full
 * path). */
int unblock_wb_seek_in_place(int fd, off_t off, int whence, off_t *ret)
{
    wb_fd_t *w = slot(fd);
    if (!w || (w->state != WB_BUFFERING && w->state != WB_RAHEAD) ||
        (whence != SEEK_SET && whence != SEEK_CUR))
        return 0;
    rd_settle(0); /* (as before any call on a descriptor) */
    wlock(w);
    int here = (w->state == WB_BUFFERING || w->state == WB_RAHEAD) &&
               (whence == SEEK_SET ? off == w->off : off == 0) &&
               !__atomic_load_n(&w->error, __ATOMIC_ACQUIRE);
    off_t to = w->off;
    wunlock(w);
    if (here)
        *ret = to;
    return here;
}

/* The kernel's offset of fd, the program's while fd is counting: merging and
 * read-ahead start from it, not from the fast path's unlocked count.  A failure
 * keeps what was counted. */
void sync_offset_locked(int fd, wb_fd_t *w)
{
    off_t k = (off_t)syscall(SYS_lseek, fd, 0, SEEK_CUR);
    if (k >= 0)
        w->off = k;
}

int quiet_kept_locked(int fd, wb_fd_t *w, size_t n, size_t r, ssize_t moved)
{
    if (!w->quiet)
        return 0;
    if (!quiet_sample(w, n)) {
        quiet_count(w, r);
        return 1;
    }
    w->quiet = 0;
    w->calm = WB_QUIET_AFTER - WB_QUIET_WINDOW;
    w->seq = 0;
    sync_offset_locked(fd, w); /* (not followed while quiet) */
    w->off -= moved;
    unblock_counter_add(&unblock_stats.io_quiet_samples, 1);
    return 0;
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
    if (w && __atomic_load_n(&w->outside, __ATOMIC_RELAXED) && unblock_tls.wb_locks == 0) {
        wlock(w);
        w->outside = 0;
        wunlock(w);
    }
    if (w && w->state == WB_NONE)
        w->known = 0;
}

long unblock_test_giveback_ms; /* test hook UNBLOCK_TEST_GIVEBACK_MS (worker.c reads it) */

/* Gives back the blocks reserved past the end of the file (locked; fd still
 * its file's: close, exit, fork, a descriptor no longer followed, ENOSPC).
 *
 * The blocks go by cutting the file to its size, which is safe only while
 * nothing else can write the file: another process, or another open of it in
 * this one, may extend it between our fstat and our ftruncate, and the cut
 * would drop its bytes (silently: it already returned).  A write lease proves
 * it: the kernel grants one only when this open file is the file's only one
 * for reading or writing, and holds any other open back until we let it go.
 * So the size is read again and the file cut under a lease, held for those
 * two calls.  Without one (the file open elsewhere, a file not ours to lease, a
 * filesystem without leases) the blocks stay allocated past the end of the file
 * (its size is right; `du` counts them) and io.reserve_kept counts it.
 * `sure`: the caller knows every writer of the file is done (MPI-IO at close,
 * after every rank of the file wrote everything: src/mpiio/), and `end` is
 * where the furthest reservation of any of them ends (0: the file is cut
 * elsewhere, this descriptor's reservation is only forgotten). */
static void give_back_(int fd, wb_fd_t *w, int sure, off_t end)
{
    struct stat st;
    /* (within the file's last page the blocks hold its data anyway) */
    const off_t pg = (off_t)unblock_page_size;
    if (end > 0 && syscall(SYS_fstat, fd, &st) == 0 && end > (st.st_size + pg - 1) / pg * pg) {
        if (unblock_unlikely(unblock_test_giveback_ms)) { /* a writer may come now */
            struct timespec ts = { unblock_test_giveback_ms / 1000,
                                   unblock_test_giveback_ms % 1000 * 1000000L };
            while (syscall(SYS_nanosleep, &ts, &ts) != 0 && errno == EINTR)
                ;
        }
        if (sure) {
            syscall(SYS_ftruncate, fd, st.st_size);
        } else {
            /* The lease's break would be signalled to this process: SIGURG
             * (ignored by default) rather than SIGIO (fatal by default), the
             * descriptor's own signal and owner put back after. */
            sc_settle(); /* a duplicate of an earlier open of it would refuse the lease */
            int sig = (int)syscall(SYS_fcntl, fd, F_GETSIG);
            struct f_owner_ex own;
            int owned = syscall(SYS_fcntl, fd, F_GETOWN_EX, &own) == 0;
            int leased = sig >= 0 && syscall(SYS_fcntl, fd, F_SETSIG, SIGURG) == 0 &&
                         syscall(SYS_fcntl, fd, F_SETLEASE, F_WRLCK) == 0;
            if (leased) {
                if (syscall(SYS_fstat, fd, &st) == 0 && end > st.st_size)
                    syscall(SYS_ftruncate, fd, st.st_size);
                syscall(SYS_fcntl, fd, F_SETLEASE, F_UNLCK);
            } else {
                unblock_counter_add(&unblock_stats.io_reserve_kept, 1);
            }
            if (sig >= 0)
                syscall(SYS_fcntl, fd, F_SETSIG, sig);
            if (owned)
                syscall(SYS_fcntl, fd, F_SETOWN_EX, &own);
        }
    }
    set_reserved(w, 0, 0);
}

void give_back_locked(int fd, wb_fd_t *w)
{
    give_back_(fd, w, 0, w->reserved);
}

void give_back_sure_locked(int fd, wb_fd_t *w, off_t end)
{
    give_back_(fd, w, 1, end);
}

