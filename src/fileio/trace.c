/* trace.c — UNBLOCK_TRACE=DIR: the program's own reads and writes of regular
 * files, per process, in DIR/trace.<pid>.txt (docs/fileio.md, "The I/O trace").
 *
 * The file, text, one record a line, numbers in decimal:
 *   # unblock trace 1
 *   F <id> <path>                       a file (absolute path), before its first run
 *   R <id> <offset> <length> <calls>    a run of reads
 *   W <id> <offset> <length> <calls>    a run of writes
 * A run is calls of one kind on one file, each starting where the previous one
 * ended; it is written when a call on its file breaks it, and every run still
 * open at exit, fork, exec and the other process calls (unblock_process_quiesce).
 * What is traced: what reaches the POSIX wrappers from the program (read, write,
 * pread, pwrite, the readv/writev family, with what they moved; not the MPI
 * library's own calls, which run with mpi_depth > 0), on descriptors below
 * WB_FDS of regular files, and what another module reports through
 * unblock_trace_io (MPI-IO).  A traced descriptor never takes the fast path
 * (its fdtable byte says SLOW), so tracing off costs the fast path nothing.
 * Owns: the trace file, its buffer (static: nothing allocated), the table of
 * files, each with its open run.  Everything under one spin lock; the fatal
 * drain only tries it.  Calls: fdtable.c's table (a descriptor's `trace`). */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h"
#include "core/module.h"

#define TRACE_FILES 1024     /* files per process; more are not traced (one line says so) */
#define TRACE_BUF (64 << 10)
#define TRACE_LINE_MAX (PATH_MAX + 64)

int unblock_trace_on;

typedef struct {
    dev_t dev;
    ino_t ino;
    uint8_t declared; /* its F line is out (in this process's file) */
    char op;          /* its open run: 'R', 'W', or 0 for none */
    long long off, len, calls;
} trace_file_t;

static trace_file_t files[TRACE_FILES];
static int nfiles;
static int lock;
static int tfd = -1;   /* the trace file; -1: not open in this process yet */
static int failed;     /* it could not be written: tracing stopped (one line said why) */
static char buf[TRACE_BUF];
static size_t used;
static char dir[PATH_MAX];
/* This thread is inside the trace: a signal handler's call on it records
 * nothing (the locks held would never be released). */
static UNBLOCK_TLS int inside;

/* ---- output, without stdio or allocation ---- */

static void out_flush_locked(void)
{
    size_t done = 0;
    while (tfd >= 0 && done < used) {
        ssize_t r = syscall(SYS_write, tfd, buf + done, used - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (!failed)
                unblock_warn("UNBLOCK_TRACE: writing the trace failed: %s; tracing stops",
                             strerror(errno));
            failed = 1;
            break;
        }
        done += (size_t)r;
    }
    used = 0;
}

/* `path` says s is a file's name: a newline in it becomes '?' (one line each). */
static void out_text(const char *s, int path)
{
    for (; *s && used < TRACE_BUF; s++)
        buf[used++] = path && *s == '\n' ? '?' : *s;
}
#define out_str(s) out_text((s), 0)

static void out_num(long long v)
{
    char d[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do
        d[n++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    if (v < 0 && used < TRACE_BUF)
        buf[used++] = '-';
    while (n > 0 && used < TRACE_BUF)
        buf[used++] = d[--n];
}

/* Room for one more line; the trace file opened first where it is not yet. */
static int out_room_locked(void);

static void emit_run_locked(int id)
{
    trace_file_t *f = &files[id];
    if (!f->op || !out_room_locked())
        return;
    char head[3] = { f->op, ' ', 0 };
    out_str(head);
    out_num(id);
    out_str(" ");
    out_num(f->off);
    out_str(" ");
    out_num(f->len);
    out_str(" ");
    out_num(f->calls);
    out_str("\n");
    f->op = 0;
}

static void open_locked(void)
{
    char path[PATH_MAX + 32];
    int n = snprintf(path, sizeof(path), "%s/trace.%d.txt", dir, (int)syscall(SYS_getpid));
    if (n <= 0 || (size_t)n >= sizeof(path)) {
        failed = 1;
        return;
    }
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        unblock_warn("UNBLOCK_TRACE: cannot create %s: %s; no trace", path, strerror(errno));
        failed = 1;
        return;
    }
    /* Numbered high, so the program's next open gets the number it would get
     * without unblock. */
    int high = dup_high(fd);
    if (high >= 0) {
        syscall(SYS_close, fd);
        fd = high;
    }
    tfd = fd;
    unblock_own_hold(tfd, &tfd);
    used = 0;
    out_str("# unblock trace 1\n");
}

static int out_room_locked(void)
{
    if (failed)
        return 0;
    if (tfd < 0)
        open_locked();
    if (tfd < 0)
        return 0;
    if (TRACE_BUF - used < TRACE_LINE_MAX)
        out_flush_locked();
    return !failed;
}

/* ---- files ---- */

/* The id of the file (dev, ino) named `path`, declared once per process; -1 when
 * the table is full. */
static int file_id_locked(dev_t dev, ino_t ino, const char *path)
{
    int id;
    for (id = 0; id < nfiles; id++)
        if (files[id].dev == dev && files[id].ino == ino)
            break;
    if (id == nfiles) {
        if (nfiles == TRACE_FILES) {
            static int said;
            if (!said++)
                unblock_warn("UNBLOCK_TRACE: more than %d files; the others are not traced",
                             TRACE_FILES);
            return -1;
        }
        files[nfiles++] = (trace_file_t){ .dev = dev, .ino = ino };
    }
    if (!files[id].declared && out_room_locked()) {
        out_str("F ");
        out_num(id);
        out_str(" ");
        out_text(path, 1);
        out_str("\n");
        files[id].declared = 1;
    }
    return id;
}

/* The absolute path of fd's file (the kernel's name for it), or `hint`. */
static void fd_path(int fd, const char *hint, char *out, size_t cap)
{
    char link[40];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = syscall(SYS_readlinkat, AT_FDCWD, link, out, cap - 1);
    if (n > 0 && out[0] == '/') {
        out[n] = 0;
        return;
    }
    snprintf(out, cap, "%s", hint ? hint : "?");
}

/* fd's file id, looking at the descriptor the first time (w locked): -1 when it
 * is not traced (not a regular file). */
static int fd_id_locked(int fd, wb_fd_t *w, const char *hint)
{
    if (w->trace != TRACE_UNKNOWN)
        return (int)w->trace - 1;
    struct stat st;
    int id = -1;
    if (syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode)) {
        char path[PATH_MAX];
        fd_path(fd, hint, path, sizeof(path));
        id = file_id_locked(st.st_dev, st.st_ino, path);
    }
    w->trace = (uint16_t)(id + 1);
    return id;
}

/* One call moved `len` bytes at `off` of file id. */
static void record_locked(int id, char op, long long off, long long len)
{
    trace_file_t *f = &files[id];
    if (f->op == op && off == f->off + f->len) {
        f->len += len;
        f->calls++;
        return;
    }
    emit_run_locked(id);
    f->op = op;
    f->off = off;
    f->len = len;
    f->calls = 1;
}

/* Where the call that just moved r bytes at the descriptor's offset started: the
 * program's offset after it (the runtime's where it keeps it, else the
 * kernel's), less r. */
static long long started_at(int fd, wb_fd_t *w, ssize_t r)
{
    off_t end;
    if (w->state == WB_BUFFERING || w->state == WB_RAHEAD)
        end = w->off;
    else
        end = (off_t)syscall(SYS_lseek, fd, 0, SEEK_CUR);
    return end < 0 ? -1 : (long long)end - r;
}

void unblock_trace_call(int fd, char op, long long pos, ssize_t r)
{
    wb_fd_t *w = slot(fd);
    if (!w || r <= 0 || !w->trace || inside)
        return; /* (trace 0: looked at, not a regular file) */
    int e = errno;
    inside = 1;
    wlock(w);
    unblock_spin_lock(&lock);
    int id = fd_id_locked(fd, w, NULL);
    long long off = id < 0 ? -1 : pos >= 0 ? pos : started_at(fd, w, r);
    if (off >= 0)
        record_locked(id, op, off, r);
    unblock_spin_unlock(&lock);
    wunlock(w); /* the fast path's byte follows w->trace */
    inside = 0;
    errno = e;
}

void unblock_trace_io(int fd_or_minus1, const char *path_or_NULL, char op,
                                     long long offset, long long length)
{
    if (!__atomic_load_n(&unblock_trace_on, __ATOMIC_RELAXED) || length <= 0 || offset < 0 ||
        (op != 'R' && op != 'W') || inside)
        return;
    int e = errno;
    inside = 1;
    wb_fd_t *w = slot(fd_or_minus1);
    if (w) {
        wlock(w);
        unblock_spin_lock(&lock);
        int id = fd_id_locked(fd_or_minus1, w, path_or_NULL);
        if (id >= 0)
            record_locked(id, op, offset, length);
        unblock_spin_unlock(&lock);
        wunlock(w);
    } else if (path_or_NULL) {
        struct stat st;
        char path[PATH_MAX], cwd[PATH_MAX];
        int k;
        if (path_or_NULL[0] == '/')
            k = snprintf(path, sizeof(path), "%s", path_or_NULL);
        else if (syscall(SYS_getcwd, cwd, sizeof(cwd)) > 0)
            k = snprintf(path, sizeof(path), "%s/%s", cwd, path_or_NULL);
        else
            k = -1;
        if (k > 0 && (size_t)k < sizeof(path) &&
            syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0 && S_ISREG(st.st_mode)) {
            unblock_spin_lock(&lock);
            int id = file_id_locked(st.st_dev, st.st_ino, path);
            if (id >= 0)
                record_locked(id, op, offset, length);
            unblock_spin_unlock(&lock);
        }
    }
    inside = 0;
    errno = e;
}

void unblock_trace_forget(int fd)
{
    wb_fd_t *w = slot(fd);
    if (!w || inside)
        return;
    wlock(w);
    w->trace = TRACE_UNKNOWN;
    wunlock(w);
}

/* Every open run and the buffer to the file. */
void unblock_trace_flush(void)
{
    if (!__atomic_load_n(&unblock_trace_on, __ATOMIC_RELAXED))
        return;
    if (inside)
        return;
    int e = errno;
    inside = 1;
    unblock_spin_lock(&lock);
    for (int id = 0; id < nfiles; id++)
        emit_run_locked(id);
    out_flush_locked();
    unblock_spin_unlock(&lock);
    inside = 0;
    errno = e;
}

/* ---- the module's hooks ---- */

static void trace_init(void)
{
    const char *d = unblock_opt.trace;
    if (!d || !*d)
        return;
    if (strlen(d) >= sizeof(dir) - 32) {
        unblock_warn("UNBLOCK_TRACE: directory name too long; no trace");
        return;
    }
    snprintf(dir, sizeof(dir), "%s", d);
    if (syscall(SYS_mkdirat, AT_FDCWD, dir, 0777) != 0 && errno != EEXIST) {
        unblock_warn("UNBLOCK_TRACE: cannot create %s: %s; no trace", dir, strerror(errno));
        return;
    }
    /* Every descriptor is looked at on its first traced call (those the program
     * inherited too), and until then takes the full path. */
    for (int fd = 0; fd < WB_FDS; fd++) {
        unblock_fio_fds[fd].trace = TRACE_UNKNOWN;
        unblock_fio_fast[fd] = UNBLOCK_FIO_SLOW;
    }
    unblock_spin_lock(&lock);
    out_room_locked(); /* the file exists from the start */
    unblock_spin_unlock(&lock);
    __atomic_store_n(&unblock_trace_on, !failed, __ATOMIC_RELEASE);
}

/* A fork child: its own file, opened at its first record; the parent's runs were
 * written before the fork (unblock_process_quiesce) and are the parent's. */
static void trace_fork_child(void)
{
    if (!unblock_trace_on)
        return;
    lock = 0;
    if (tfd >= 0)
        unblock_own_close(tfd);
    tfd = -1;
    used = 0;
    for (int id = 0; id < nfiles; id++) {
        files[id].declared = 0;
        files[id].op = 0;
    }
}

/* A fatal signal: what the buffer holds, if no thread is inside the trace. */
static void trace_fatal(void)
{
    if (!unblock_trace_on || tfd < 0 || __atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
        return;
    for (int id = 0; id < nfiles; id++)
        emit_run_locked(id);
    out_flush_locked();
    unblock_spin_unlock(&lock);
}

UNBLOCK_MODULE(unblock_trace_module) = {
    .name = "trace",
    .order = UNBLOCK_ORDER_FILEIO,
    .init = trace_init,
    .fork_child = trace_fork_child,
    .quiesce = unblock_trace_flush,
    .exit_drain = unblock_trace_flush,
    .fatal_drain = trace_fatal,
};
