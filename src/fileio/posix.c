/* posix.c — wrappers of the POSIX file calls and of stdio's file calls (the
 * calls that only carry news, sockets, signals, queues and stdio output, are
 * news.c's).  Each returns exactly what the real call returned and leaves errno
 * as it left it. */
#define _GNU_SOURCE
#include "fileio/fileio.h"
#include "fileio/fastpath.h"
#include "fileio/precount.h"

#include <aio.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

const unsigned unblock_io_fn_count = UNBLOCK_IO_ID_COUNT_;
const char *const unblock_io_fn_names[] = {
#define UNBLOCK_IO_FN(name, cat) #name,
#include "fileio/posix_functions.h"
#undef UNBLOCK_IO_FN
};
const unsigned char unblock_io_fn_cat[] = {
#define UNBLOCK_IO_FN(name, cat) UNBLOCK_IO_CAT_##cat,
#include "fileio/posix_functions.h"
#undef UNBLOCK_IO_FN
};
_Static_assert((int)UNBLOCK_IO_ID_COUNT_ <= (int)UNBLOCK_COUNT_IO_MAX,
               "core/counts.h: more file functions than slots");

/* The program opened or looked at a file that a module may hold writes of
 * (core.h: unblock_outside_look, MPI-IO write-behind): they go to it first.  A
 * load and a compare while no module holds any, and inside MPI (ROMIO's own
 * opens: no fstat of theirs); the stat family makes its call again where
 * something was written.  A descriptor opened on such a file is marked: its
 * later calls look first too (fdtable.c: unblock_wb_outside, from the full
 * paths below; before, a pread through a descriptor opened before the writes
 * read none of them). */
static __attribute__((noinline)) int outside_look(uint64_t dev, uint64_t ino)
{
    unblock_outside_look_t look = __atomic_load_n(&unblock_outside_look, __ATOMIC_ACQUIRE);
    if (look == NULL)
        return 0;
    int saved = errno;
    int r = look(0, dev, ino);
    errno = saved;
    return r;
}
static __attribute__((noinline)) void outside_look_fd(int fd)
{
    struct stat st;
    if (fd >= 0 && syscall(SYS_fstat, fd, &st) == 0 &&
        (outside_look((uint64_t)st.st_dev, (uint64_t)st.st_ino) & UNBLOCK_LOOK_FOLLOWED))
        unblock_wb_outside_mark(fd);
}
#define OUTSIDE_LOOKING() \
    (unblock_unlikely(__atomic_load_n(&unblock_outside_look, __ATOMIC_RELAXED) != NULL) && \
     unblock_tls.mpi_depth == 0)
/* After an open (fd) or a stat (st) that succeeded. */
#define LOOKED_FD(fd) \
    if (OUTSIDE_LOOKING()) \
        outside_look_fd(fd)
#define LOOKED_STAT(r, st, again) \
    if (OUTSIDE_LOOKING() && (r) == 0 && \
        (outside_look((uint64_t)(st)->st_dev, (uint64_t)(st)->st_ino) & UNBLOCK_LOOK_WROTE)) \
        r = again


/* Declarations glibc 2.33+ no longer provides, for binaries built before it. */
int __fxstat(int ver, int fd, struct stat *buf);
int __fxstat64(int ver, int fd, struct stat64 *buf);
int __xstat(int ver, const char *path, struct stat *buf);
int __xstat64(int ver, const char *path, struct stat64 *buf);
int __lxstat(int ver, const char *path, struct stat *buf);
int __lxstat64(int ver, const char *path, struct stat64 *buf);
/* The _FORTIFY_SOURCE entry points (declared by glibc only under fortify). */
ssize_t __read_chk(int fd, void *buf, size_t nbytes, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t nbytes, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t nbytes, off64_t offset, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *stream);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

/* ---- data ---- */
void unblock_io_sync_iov(const struct iovec *iov, int cnt, int kernel_writes)
{
    for (int i = 0; i < cnt; i++)
        unblock_protect_sync_range(iov[i].iov_base, iov[i].iov_len, kernel_writes);
}

/* The fast path (fastpath.h): when the descriptor and the process allow it,
 * `small` holds and the descriptor is not followed (PASS) or `precount` noted
 * the call, the call is counted and made, as the wrapper's last call.  Writes
 * need no reservation anywhere (a write that fails for want of space is made
 * again after unblock gives back what it held: the full path). */
#define FAST_WRITES(name) \
    (UNBLOCK_IO_ID_##name == UNBLOCK_IO_ID_write || unblock_io_allocates(UNBLOCK_IO_ID_##name))
#define FAST_PATH(name, args, fd, small, quiet, precount) \
    unsigned m_; \
    unblock_real_##name##_t f_; \
    unblock_counter_t *c_; \
    if (unblock_likely(unblock_fio_fast_ok((fd), &m_) && (small) && \
                       (!FAST_WRITES(name) || \
                        __atomic_load_n(&unblock_wb_reserving, __ATOMIC_RELAXED) == 0) && \
                       UNBLOCK_FIO_READY(name, f_, c_))) { \
        /* (three returns, not one after m_ == PASS || precount: with one, GCC \
         * saved the counting's registers before the mode's test) */ \
        if (m_ == UNBLOCK_FIO_PASS) { \
            unblock_count_in(c_, UNBLOCK_COUNT_IO + UNBLOCK_IO_ID_##name); \
            return f_ args; \
        } \
        if (m_ == UNBLOCK_FIO_QUIET) { \
            if (quiet) { \
                unblock_count_in(c_, UNBLOCK_COUNT_IO + UNBLOCK_IO_ID_##name); \
                return f_ args; \
            } \
        } else if (precount) { \
            unblock_count_in(c_, UNBLOCK_COUNT_IO + UNBLOCK_IO_ID_##name); \
            return f_ args; \
        } \
    }
/* read: on a descriptor open for writing too, the offset follows after the call
 * (a short read is usual there). */
#define FAST_READ(name, args) \
    unsigned m_; \
    unblock_real_##name##_t f_; \
    unblock_counter_t *c_; \
    if (unblock_likely(unblock_fio_fast_ok(fd, &m_) && unblock_fio_small_read(n) && \
                       UNBLOCK_FIO_READY(name, f_, c_))) { \
        if (m_ == UNBLOCK_FIO_WCOUNT) { \
            unblock_count_in(c_, UNBLOCK_COUNT_IO + UNBLOCK_IO_ID_##name); \
            ssize_t r_ = f_ args; \
            unblock_fio_counted_read(fd, r_); \
            return r_; \
        } \
        if (m_ == UNBLOCK_FIO_PASS || m_ == UNBLOCK_FIO_QUIET || \
            unblock_fio_precount_read(fd, n)) { \
            unblock_count_in(c_, UNBLOCK_COUNT_IO + UNBLOCK_IO_ID_##name); \
            return f_ args; \
        } \
    }

/* write: after 3 in sequence, small writes go to the descriptor's block. */
UNBLOCK_REAL_DECL(ssize_t, write, (int, const void *, size_t));
static __attribute__((noinline)) ssize_t unblock_full_write(int fd, const void *buf, size_t n)
{
    int io = unblock_io_enter_full(UNBLOCK_IO_ID_write);
    UNBLOCK_SYNC_BUF(buf, n, 0);
    unblock_wb_outside(fd);
    if (!io)
        return UNBLOCK_REAL(write)(fd, buf, n);
    ssize_t r;
    if (unblock_wb_write(fd, buf, n, &r))
        return r;
    uint64_t t0 = n >= UNBLOCK_WB_TIMED ? unblock_now_ns() : 0;
    r = UNBLOCK_REAL(write)(fd, buf, n);
    if (unblock_unlikely(r < 0) && unblock_wb_space_short(errno))
        r = UNBLOCK_REAL(write)(fd, buf, n);
    int saved = errno;
    unblock_wb_wrote(fd, n, r, t0 ? unblock_now_ns() - t0 : 0);
    errno = saved;
    return r;
}
UNBLOCK_IO_TRACED(ssize_t, write, (int fd, const void *buf, size_t n), (fd, buf, n),
                  UNBLOCK_TRACE_AFTER(fd, 'W', -1, r_))
UNBLOCK_EXPORT ssize_t UNBLOCK_WRAP(write)(int fd, const void *buf, size_t n)
{
    FAST_PATH(write, (fd, buf, n), fd, n < UNBLOCK_WB_TIMED, unblock_fio_quiet_write(fd, n),
              unblock_fio_precount_write(fd, m_, n));
    UNBLOCK_IO_TAIL(write, (fd, buf, n));
}

#define FD_CALL(ret, name, params, args, fd, flags, always, after) \
    UNBLOCK_IO_CALL(ret, name, params, args, unblock_wb_outside(fd); always, \
                    e_ = unblock_wb_before_fd((fd), (flags)), after)
/* A call the descriptor's buffer may answer itself (`serve` sets s_ and is true:
 * read-ahead for read, the merged block for pwrite); else FD_CALL's path. */
#define SERVED_CALL(name, params, args, fast, op, pos, kernel_writes, serve, after) \
    UNBLOCK_IO_CALL_FAST(ssize_t, name, params, args, fast, UNBLOCK_TRACE_AFTER(fd, op, pos, r_), \
                         UNBLOCK_SYNC_BUF(buf, n, kernel_writes); unblock_wb_outside(fd), \
                    ssize_t s_; \
                    if (serve) \
                        return s_; \
                    e_ = unblock_wb_before_fd(fd, 0), \
                    after)
/* read: after 3 small sequential reads on a read-only descriptor, served from a
 * read-ahead buffer. */
#define UNBLOCK_READ(name, params, args) \
    SERVED_CALL(name, params, args, \
                FAST_READ(name, args), 'R', -1, 1, \
                unblock_rd_read(fd, buf, n, -1, UNBLOCK_IO_ID_##name, \
                                (uintptr_t)__builtin_return_address(0), &s_) || \
                    unblock_wb_read(fd, buf, n, &s_), \
                unblock_wb_read_done(fd, n, r_))
UNBLOCK_READ(read, (int fd, void *buf, size_t n), (fd, buf, n))
UNBLOCK_READ(__read_chk, (int fd, void *buf, size_t n, size_t buflen), (fd, buf, n, buflen))
/* pread: large ones like read, at their own offset; small ones that continue the
 * previous one from the read-ahead buffer. */
#define UNBLOCK_PREAD(name, params, args) \
    SERVED_CALL(name, params, args, \
                FAST_PATH(name, args, fd, unblock_fio_small_read(n), 1, \
                          unblock_fio_precount_pread(fd, m_, n, off)), 'R', off, 1, \
                off >= 0 && (unblock_rd_read(fd, buf, n, off, UNBLOCK_IO_ID_##name, \
                                             (uintptr_t)__builtin_return_address(0), &s_) || \
                             unblock_wb_pread(fd, buf, n, off, &s_)), \
                unblock_wb_pread_done(fd, n, off, r_))
UNBLOCK_PREAD(pread, (int fd, void *buf, size_t n, off_t off), (fd, buf, n, off))
UNBLOCK_PREAD(pread64, (int fd, void *buf, size_t n, off64_t off), (fd, buf, n, off))
UNBLOCK_PREAD(__pread_chk, (int fd, void *buf, size_t n, off_t off, size_t buflen),
              (fd, buf, n, off, buflen))
UNBLOCK_PREAD(__pread64_chk, (int fd, void *buf, size_t n, off64_t off, size_t buflen),
              (fd, buf, n, off, buflen))
/* pwrite: merged like write when it continues the block (rows written in turn). */
#define UNBLOCK_PWRITE(name, off_type) \
    SERVED_CALL(name, (int fd, const void *buf, size_t n, off_type off), (fd, buf, n, off), \
                FAST_PATH(name, (fd, buf, n, off), fd, n < UNBLOCK_WB_TIMED, \
                          unblock_fio_quiet_write(fd, n), \
                          unblock_fio_precount_pwrite(fd, m_, n, off)), 'W', off, 0, \
                unblock_wb_pwrite(fd, buf, n, off, &s_), unblock_wb_pwrote(fd, n, off, r_))
UNBLOCK_PWRITE(pwrite, off_t)
UNBLOCK_PWRITE(pwrite64, off64_t)
/* A write a signal handler made while this thread held the descriptor's lock
 * (drain.c: wb_replay): made now as the program made it. */
ssize_t unblock_wb_call_write(int fd, const void *p, size_t n, off_t pos)
{
    return pos < 0 ? UNBLOCK_WRAP(write)(fd, p, n) : UNBLOCK_WRAP(pwrite)(fd, p, n, pos);
}

/* The vector forms: traced (op, at pos, or at the descriptor's offset when pos < 0).
 * readv and writev on a descriptor unblock does not follow (a socket: Open MPI's
 * TCP transport makes one of each a message; a pipe) take the fast path like read
 * and write; on a followed one, the full path. */
#define TRACED_CALL_FAST(name, params, args, fast, op, pos, always, after) \
    UNBLOCK_IO_CALL_FAST(ssize_t, name, params, args, fast, UNBLOCK_TRACE_AFTER(fd, op, pos, r_), \
                         always; unblock_wb_outside(fd), e_ = unblock_wb_before_fd(fd, 0), after)
#define TRACED_CALL(name, params, args, op, pos, always, after) \
    TRACED_CALL_FAST(name, params, args, , op, pos, always, after)
TRACED_CALL_FAST(readv, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt),
                 FAST_PATH(readv, (fd, iov, cnt), fd, 1, 0, 0), 'R', -1, UNBLOCK_SYNC_IOV(1),
                 unblock_wb_moved_by(fd, r_))
/* writev, pwritev: a large one queued like a large write() (pos -1: at the
 * descriptor's offset). */
#define UNBLOCK_WRITEV(name, params, args, pos, tpos, after, fast) \
    UNBLOCK_IO_CALL_FAST(ssize_t, name, params, args, fast, UNBLOCK_TRACE_AFTER(fd, 'W', tpos, r_), \
                         UNBLOCK_SYNC_IOV(0); unblock_wb_outside(fd), \
                    ssize_t s_; \
                    if (unblock_wb_writev(fd, iov, cnt, (pos), &s_)) \
                        return s_; \
                    e_ = unblock_wb_before_fd(fd, 0), \
                    after)
UNBLOCK_WRITEV(writev, (int fd, const struct iovec *iov, int cnt), (fd, iov, cnt), -1, -1,
               unblock_wb_moved_by(fd, r_), FAST_PATH(writev, (fd, iov, cnt), fd, 1, 0, 0))
TRACED_CALL(preadv, (int fd, const struct iovec *iov, int cnt, off_t off), (fd, iov, cnt, off),
            'R', off, UNBLOCK_SYNC_IOV(1), )
TRACED_CALL(preadv64, (int fd, const struct iovec *iov, int cnt, off64_t off),
            (fd, iov, cnt, off), 'R', off, UNBLOCK_SYNC_IOV(1), )
UNBLOCK_WRITEV(pwritev, (int fd, const struct iovec *iov, int cnt, off_t off), (fd, iov, cnt, off),
               off < 0 ? -2 : off, off, , )
UNBLOCK_WRITEV(pwritev64, (int fd, const struct iovec *iov, int cnt, off64_t off),
               (fd, iov, cnt, off), off < 0 ? -2 : off, off, , )
/* The v2 forms move the offset when off is -1. */
TRACED_CALL(preadv2, (int fd, const struct iovec *iov, int cnt, off_t off, int fl),
            (fd, iov, cnt, off, fl), 'R', off, UNBLOCK_SYNC_IOV(1),
            if (off == -1) unblock_wb_moved_by(fd, r_))
TRACED_CALL(pwritev2, (int fd, const struct iovec *iov, int cnt, off_t off, int fl),
            (fd, iov, cnt, off, fl), 'W', off, UNBLOCK_SYNC_IOV(0),
            if (off == -1) unblock_wb_moved_by(fd, r_))
TRACED_CALL(preadv64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int fl),
            (fd, iov, cnt, off, fl), 'R', off, UNBLOCK_SYNC_IOV(1),
            if (off == -1) unblock_wb_moved_by(fd, r_))
TRACED_CALL(pwritev64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int fl),
            (fd, iov, cnt, off, fl), 'W', off, UNBLOCK_SYNC_IOV(0),
            if (off == -1) unblock_wb_moved_by(fd, r_))

/* Calls that move bytes between two descriptors in the kernel: both go to their
 * files first (the news may travel through the output), and a descriptor whose
 * offset the call uses moves with it. */
#define TWO_FD_CALL(ret, name, params, args, in, in_off, out, out_off) \
    UNBLOCK_IO_CALL(ret, name, params, args, unblock_wb_outside(in); unblock_wb_outside(out), \
                    unblock_wb_flush_all(); e_ = unblock_wb_before_fd((in), 0); \
                    if (!e_) e_ = unblock_wb_before_fd((out), 0), \
                    if ((in_off) == NULL) unblock_wb_moved_by((in), r_); \
                    if ((out_off) == NULL) unblock_wb_moved_by((out), r_))
TWO_FD_CALL(ssize_t, sendfile, (int out, int in, off_t *off, size_t n), (out, in, off, n),
            in, off, out, NULL)
TWO_FD_CALL(ssize_t, sendfile64, (int out, int in, off64_t *off, size_t n), (out, in, off, n),
            in, off, out, NULL)
TWO_FD_CALL(ssize_t, copy_file_range, (int in, off64_t *in_off, int out, off64_t *out_off,
                                       size_t n, unsigned fl),
            (in, in_off, out, out_off, n, fl), in, in_off, out, out_off)
TWO_FD_CALL(ssize_t, splice, (int in, off64_t *in_off, int out, off64_t *out_off, size_t n,
                              unsigned fl),
            (in, in_off, out, out_off, n, fl), in, in_off, out, out_off)

/* ---- open: the mode argument exists only with O_CREAT or O_TMPFILE ---- */
static mode_t open_mode(int flags, va_list ap)
{
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
        return (mode_t)va_arg(ap, int);
    return 0;
}

/* open and openat (and their 64-bit forms): `decl` and `params` the
 * declaration's, `args` the real call's. */
#define UNBLOCK_OPEN_CALL(name, decl, params, args) \
    UNBLOCK_REAL_DECL(int, name, decl); \
    UNBLOCK_EXPORT int UNBLOCK_WRAP(name) params \
    { \
        va_list ap; \
        va_start(ap, flags); \
        mode_t mode = open_mode(flags, ap); \
        va_end(ap); \
        UNBLOCK_SYNC_LOOK; \
        int io = unblock_io_enter(UNBLOCK_IO_ID_##name); \
        if (io) \
            unblock_wb_news(); \
        int fd = UNBLOCK_REAL(name) args; \
        if (io && fd >= 0) { \
            int saved = errno; \
            unblock_wb_opened(fd, flags, path); \
            errno = saved; \
        } \
        LOOKED_FD(fd); \
        return fd; \
    }
#define UNBLOCK_OPEN(name) \
    UNBLOCK_OPEN_CALL(name, (const char *, int, ...), (const char *path, int flags, ...), \
                      (path, flags, mode))
#define UNBLOCK_OPENAT(name) \
    UNBLOCK_OPEN_CALL(name, (int, const char *, int, ...), \
                      (int dirfd, const char *path, int flags, ...), (dirfd, path, flags, mode))
UNBLOCK_OPEN(open)
UNBLOCK_OPEN(open64)
UNBLOCK_OPENAT(openat)
UNBLOCK_OPENAT(openat64)
#define PATH_CALL(ret, name, params, args, after) \
    UNBLOCK_IO_CALL(ret, name, params, args, UNBLOCK_SYNC_LOOK, unblock_wb_news(), after)
PATH_CALL(int, __open_2, (const char *path, int flags), (path, flags),
          if (r_ >= 0) unblock_wb_opened(r_, flags, path); LOOKED_FD(r_))
PATH_CALL(int, __open64_2, (const char *path, int flags), (path, flags),
          if (r_ >= 0) unblock_wb_opened(r_, flags, path); LOOKED_FD(r_))
PATH_CALL(int, __openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
          if (r_ >= 0) unblock_wb_opened(r_, flags, path); LOOKED_FD(r_))
PATH_CALL(int, __openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
          if (r_ >= 0) unblock_wb_opened(r_, flags, path); LOOKED_FD(r_))
PATH_CALL(int, creat, (const char *path, mode_t mode), (path, mode),
          if (r_ >= 0) unblock_wb_opened(r_, O_WRONLY | O_CREAT | O_TRUNC, path))
PATH_CALL(int, creat64, (const char *path, mode_t mode), (path, mode),
          if (r_ >= 0) unblock_wb_opened(r_, O_WRONLY | O_CREAT | O_TRUNC, path))

/* ---- descriptors and files ---- */
/* close: the block goes first; an error a background write met is returned here
 * (after the descriptor is closed, as the kernel does for write-back errors). */
UNBLOCK_REAL_DECL(int, close, (int));
UNBLOCK_EXPORT int UNBLOCK_WRAP(close)(int fd)
{
    if (unblock_unlikely(unblock_fd_is_own(fd)) && unblock_tls.mpi_depth == 0) {
        errno = EBADF; /* a number the program does not have (core.h) */
        return -1;
    }
    int e = unblock_io_enter(UNBLOCK_IO_ID_close) ? unblock_wb_closing(fd) : 0;
    int r = UNBLOCK_REAL(close)(fd);
    if (unblock_unlikely(unblock_trace_on)) /* the number may name another file next */
        unblock_trace_forget(fd);
    if (e && r == 0) {
        errno = e;
        return -1;
    }
    return r;
}
/* close_range and closefrom (glibc 2.34) close many descriptors at once: each
 * that unblock follows goes first, as at close.  An error a background write
 * met is returned after the call by close_range (as close returns it); closefrom
 * returns nothing, so it is printed.  CLOSE_RANGE_CLOEXEC closes nothing (exec
 * puts everything in its file anyway).  Before, the bytes of a descriptor
 * closed this way were written later to a number that was closed, or that a
 * later open had reused (serial.writebehind.closerange). */
UNBLOCK_REAL_DECL(int, close_range, (unsigned, unsigned, int));
/* The real close_range over [first, last] less the runtime's own descriptors
 * (core.h: unblock_own_fds), in as many calls as it takes. */
static int close_range_not_own(unsigned first, unsigned last, int flags)
{
    if (first > last || unblock_tls.mpi_depth > 0)
        return UNBLOCK_REAL(close_range)(first, last, flags);
    unsigned lo = first;
    int r = 0;
    for (unsigned fd = first; fd <= last && fd < UNBLOCK_OWN_FDS; fd++)
        if (unblock_fd_is_own((int)fd)) {
            if (fd > lo && UNBLOCK_REAL(close_range)(lo, fd - 1, flags) != 0)
                r = -1;
            lo = fd + 1;
        }
    if (lo <= last && UNBLOCK_REAL(close_range)(lo, last, flags) != 0)
        r = -1;
    return r;
}
UNBLOCK_EXPORT int UNBLOCK_WRAP(close_range)(unsigned first, unsigned last, int flags)
{
    int e = 0;
    if (unblock_io_enter(UNBLOCK_IO_ID_close_range) && !(flags & CLOSE_RANGE_CLOEXEC))
        e = unblock_wb_closing_range(first, last, 0);
    int r = close_range_not_own(first, last, flags);
    if (unblock_unlikely(unblock_trace_on) && !(flags & CLOSE_RANGE_CLOEXEC))
        for (unsigned fd = first; fd <= last && fd < UNBLOCK_FIO_FDS; fd++)
            unblock_trace_forget((int)fd);
    if (e && r == 0) {
        errno = e;
        return -1;
    }
    return r;
}
UNBLOCK_REAL_DECL(void, closefrom, (int));
UNBLOCK_EXPORT void UNBLOCK_WRAP(closefrom)(int first)
{
    if (unblock_io_enter(UNBLOCK_IO_ID_closefrom) && first >= 0)
        unblock_wb_closing_range((unsigned)first, ~0u, 1);
    if (first < 0 || unblock_tls.mpi_depth > 0 ||
        close_range_not_own((unsigned)first, ~0u, 0) != 0)
        UNBLOCK_REAL(closefrom)(first); /* (what glibc does when close_range fails) */
    if (unblock_unlikely(unblock_trace_on))
        for (int fd = first < 0 ? 0 : first; fd < UNBLOCK_FIO_FDS; fd++)
            unblock_trace_forget(fd);
}
/* A seek from the end, or to data or a hole, looks at the file's size: it
 * waits for the receives in flight, as fstat does (on the full path: the fast
 * one is never taken while operations are in flight).  One to where the
 * offset is keeps the block and the read-ahead buffer (fdtable.c:
 * unblock_wb_seek_in_place). */
#define UNBLOCK_LSEEK(ret, name, params) \
    UNBLOCK_IO_CALL_FAST(ret, name, params, (fd, off, whence), \
                         FAST_PATH(name, (fd, off, whence), fd, 1, \
                                   whence == SEEK_SET || whence == SEEK_CUR, \
                                   unblock_fio_precount_seek(fd, off, whence)), , \
                         if (whence != SEEK_SET && whence != SEEK_CUR) { \
                             UNBLOCK_SYNC_LOOK; \
                             unblock_wb_outside(fd); \
                         }, \
                         off_t in_; \
                         if (unblock_wb_seek_in_place(fd, off, whence, &in_)) \
                             return (ret)in_; \
                         e_ = unblock_wb_before_fd(fd, 0), if (r_ >= 0) unblock_wb_moved(fd, r_))
UNBLOCK_LSEEK(off_t, lseek, (int fd, off_t off, int whence))
UNBLOCK_LSEEK(off64_t, lseek64, (int fd, off64_t off, int whence))
/* (inside an MPI call, counted: MPI_File_sync then needs no fsync of unblock's
 * descriptor of the file, mpiio/file.c: sync_file) */
FD_CALL(int, fsync, (int fd), (fd), fd, 0, unblock_tls.mpi_fsyncs += unblock_tls.mpi_depth > 0, )
FD_CALL(int, fdatasync, (int fd), (fd), fd, 0,
        unblock_tls.mpi_fsyncs += unblock_tls.mpi_depth > 0, )
/* The calls that make durable what the kernel holds: the blocks go to it first
 * (sync_file_range: the descriptor's; syncfs and sync: every descriptor's).
 * Until 2026-11-28 they were not wrapped: a checkpoint of small writes synced
 * this way was not on the disk when the call returned, it was still in a block
 * of ours (serial.writebehind.syncnews: the kernel's size of the file right
 * after each call).  An error a background write met is returned as fsync
 * returns it (sync_file_range; syncfs for its descriptor's); sync() returns
 * nothing, and leaves such errors to each descriptor's next call. */
FD_CALL(int, sync_file_range, (int fd, off64_t off, off64_t n, unsigned flags),
        (fd, off, n, flags), fd, 0, , )
UNBLOCK_IO_CALL(int, syncfs, (int fd), (fd), ,
                e_ = unblock_wb_before_fd(fd, 0); unblock_wb_flush_all(), )
UNBLOCK_REAL_DECL(void, sync, (void));
UNBLOCK_EXPORT void UNBLOCK_WRAP(sync)(void)
{
    if (unblock_io_enter(UNBLOCK_IO_ID_sync))
        unblock_wb_flush_all();
    UNBLOCK_REAL(sync)();
}
/* POSIX AIO: glibc's own threads make the transfer, with calls no wrapper sees.
 * So each request's descriptor is settled first, as before any call on it: an
 * aio_read reads what was written before it, an aio_write lands after those
 * bytes (before, the block went out after it and undid it), aio_fsync makes
 * them durable.  An error a background write met is the submission's (-1 and
 * errno, as aio_fsync's own check would). */
static int aio_settle(const struct aiocb *cb)
{
    int fd;
    if (cb == NULL || unblock_copy_from_program(&fd, &cb->aio_fildes, sizeof(fd)) != 0 || fd < 0)
        return 0; /* (the real call answers a bad request) */
    return unblock_wb_before_fd(fd, 0);
}
#define UNBLOCK_AIO(name, params, args, cb) \
    UNBLOCK_IO_CALL(int, name, params, args, , e_ = aio_settle((const struct aiocb *)(cb)), )
UNBLOCK_AIO(aio_read, (struct aiocb *cb), (cb), cb)
UNBLOCK_AIO(aio_read64, (struct aiocb64 *cb), (cb), cb)
UNBLOCK_AIO(aio_write, (struct aiocb *cb), (cb), cb)
UNBLOCK_AIO(aio_write64, (struct aiocb64 *cb), (cb), cb)
UNBLOCK_AIO(aio_fsync, (int op, struct aiocb *cb), (op, cb), cb)
UNBLOCK_AIO(aio_fsync64, (int op, struct aiocb64 *cb), (op, cb), cb)
/* lio_listio: every request of the list (a bad list is the real call's). */
static int lio_settle(const void *const *list, int n)
{
    int e = 0;
    for (int i = 0; i < n; i++) {
        const void *cb;
        if (unblock_copy_from_program(&cb, &list[i], sizeof(cb)) != 0)
            break;
        int x = aio_settle(cb);
        if (x && !e)
            e = x;
    }
    return e;
}
#define UNBLOCK_LIO(name, cbtype) \
    UNBLOCK_IO_CALL(int, name, (int mode, cbtype *const list[], int n, struct sigevent *sev), \
                    (mode, list, n, sev), , \
                    e_ = lio_settle((const void *const *)list, n), )
UNBLOCK_LIO(lio_listio, struct aiocb)
UNBLOCK_LIO(lio_listio64, struct aiocb64)
FD_CALL(int, ftruncate, (int fd, off_t len), (fd, len), fd, UNBLOCK_WB_RESIZE, , )
FD_CALL(int, ftruncate64, (int fd, off64_t len), (fd, len), fd, UNBLOCK_WB_RESIZE, , )
PATH_CALL(int, truncate, (const char *path, off_t len), (path, len), unblock_wb_truncated())
PATH_CALL(int, truncate64, (const char *path, off64_t len), (path, len),
          unblock_wb_truncated())
FD_CALL(int, fallocate, (int fd, int mode, off_t off, off_t len), (fd, mode, off, len), fd,
        UNBLOCK_WB_RESIZE, , )
FD_CALL(int, fallocate64, (int fd, int mode, off64_t off, off64_t len), (fd, mode, off, len), fd,
        UNBLOCK_WB_RESIZE, , )
#define STAT_AGAIN(name, args) LOOKED_STAT(r_, st, UNBLOCK_REAL(name) args)
FD_CALL(int, fstat, (int fd, struct stat *st), (fd, st), fd, 0, UNBLOCK_SYNC_LOOK,
        STAT_AGAIN(fstat, (fd, st)))
FD_CALL(int, fstat64, (int fd, struct stat64 *st), (fd, st), fd, 0, UNBLOCK_SYNC_LOOK,
        STAT_AGAIN(fstat64, (fd, st)))
PATH_CALL(int, stat, (const char *restrict path, struct stat *restrict st), (path, st),
          STAT_AGAIN(stat, (path, st)))
PATH_CALL(int, stat64, (const char *restrict path, struct stat64 *restrict st), (path, st),
          STAT_AGAIN(stat64, (path, st)))
PATH_CALL(int, lstat, (const char *restrict path, struct stat *restrict st), (path, st),
          STAT_AGAIN(lstat, (path, st)))
PATH_CALL(int, lstat64, (const char *restrict path, struct stat64 *restrict st), (path, st),
          STAT_AGAIN(lstat64, (path, st)))
PATH_CALL(int, fstatat, (int dirfd, const char *restrict path, struct stat *restrict st,
                         int flags), (dirfd, path, st, flags),
          STAT_AGAIN(fstatat, (dirfd, path, st, flags)))
PATH_CALL(int, fstatat64, (int dirfd, const char *restrict path,
                           struct stat64 *restrict st, int flags), (dirfd, path, st, flags),
          STAT_AGAIN(fstatat64, (dirfd, path, st, flags)))
PATH_CALL(int, statx, (int dirfd, const char *restrict path, int flags, unsigned mask,
                       struct statx *restrict stx), (dirfd, path, flags, mask, stx),
          if (OUTSIDE_LOOKING() && r_ == 0 &&
              outside_look((uint64_t)makedev(stx->stx_dev_major, stx->stx_dev_minor),
                           (uint64_t)stx->stx_ino))
              r_ = UNBLOCK_REAL(statx)(dirfd, path, flags, mask, stx))
/* The other calls that look at names: whether a file is there, where a link
 * points, what a directory holds.  They count the call and wait for the
 * receives in flight, as stat does. */
#define LOOK_CALL(ret, name, params, args) \
    UNBLOCK_PASS_WITH(ret, name, params, args, \
                      UNBLOCK_SYNC_LOOK; unblock_io_enter(UNBLOCK_IO_ID_##name))
LOOK_CALL(int, access, (const char *path, int mode), (path, mode))
LOOK_CALL(int, faccessat, (int dirfd, const char *path, int mode, int flags),
          (dirfd, path, mode, flags))
LOOK_CALL(int, euidaccess, (const char *path, int mode), (path, mode))
LOOK_CALL(ssize_t, readlink, (const char *restrict path, char *restrict buf, size_t n),
          (path, buf, n))
LOOK_CALL(ssize_t, readlinkat, (int dirfd, const char *restrict path, char *restrict buf,
                                size_t n), (dirfd, path, buf, n))
LOOK_CALL(DIR *, opendir, (const char *path), (path))
LOOK_CALL(DIR *, fdopendir, (int fd), (fd))
LOOK_CALL(struct dirent *, readdir, (DIR *d), (d))
LOOK_CALL(struct dirent64 *, readdir64, (DIR *d), (d))
#ifndef UNBLOCK_LINK_WRAP /* compat-only symbols: nothing new links against them */
FD_CALL(int, __fxstat, (int ver, int fd, struct stat *st), (ver, fd, st), fd, 0,
        UNBLOCK_SYNC_LOOK, )
FD_CALL(int, __fxstat64, (int ver, int fd, struct stat64 *st), (ver, fd, st), fd, 0,
        UNBLOCK_SYNC_LOOK, )
PATH_CALL(int, __xstat, (int ver, const char *path, struct stat *st), (ver, path, st), )
PATH_CALL(int, __xstat64, (int ver, const char *path, struct stat64 *st), (ver, path, st), )
PATH_CALL(int, __lxstat, (int ver, const char *path, struct stat *st), (ver, path, st), )
PATH_CALL(int, __lxstat64, (int ver, const char *path, struct stat64 *st), (ver, path, st), )
#endif
/* A duplicate shares the offset: stop following both; the target of dup2/dup3
 * is closed by the call, so it is flushed and forgotten first.  A target that
 * is one of the runtime's own descriptors (core.h: unblock_own_fds) is moved
 * out of the way first, so the program's call finds the number free, as
 * without unblock.  Before 2026-11-28 the call replaced it: the sidecar's
 * messages, the trace, MPI-IO's merged blocks or the pool's memory went to the
 * program's file from then on (serial.dup2own). */
#define DUP_ONTO(fd, fd2) \
    if (fd != fd2) { \
        if (unblock_unlikely(unblock_fd_is_own(fd2)) && unblock_tls.mpi_depth == 0) \
            unblock_own_move(fd2); \
        if (unblock_io_active()) \
            unblock_wb_closing(fd2); \
        if (unblock_trace_on) \
            unblock_trace_forget(fd2); \
    }
FD_CALL(int, dup, (int fd), (fd), fd, UNBLOCK_WB_STOP, , unblock_wb_outside_dup(fd, r_))
FD_CALL(int, dup2, (int fd, int fd2), (fd, fd2), fd, UNBLOCK_WB_STOP, DUP_ONTO(fd, fd2),
        unblock_wb_outside_dup(fd, r_))
FD_CALL(int, dup3, (int fd, int fd2, int flags), (fd, fd2, flags), fd, UNBLOCK_WB_STOP,
        DUP_ONTO(fd, fd2), unblock_wb_outside_dup(fd, r_))
/* A mapping of fd that the wrappers below did not see (memory/ucm.c: UCX's
 * hooks replaced them): what they do first, but an error cannot be returned. */
int unblock_io_map_unseen(int fd)
{
    unblock_wb_outside(fd);
    if (unblock_io_enter(UNBLOCK_IO_ID_mmap))
        unblock_wb_before_fd(fd, UNBLOCK_WB_STOP | UNBLOCK_WB_KEEP);
    return 0;
}
FD_CALL(void *, mmap, (void *addr, size_t len, int prot, int flags, int fd, off_t off),
        (addr, len, prot, flags, fd, off), fd, UNBLOCK_WB_STOP, , )
FD_CALL(void *, mmap64, (void *addr, size_t len, int prot, int flags, int fd, off64_t off),
        (addr, len, prot, flags, fd, off), fd, UNBLOCK_WB_STOP, , )

/* fcntl's third argument is an int or a pointer depending on the command; both
 * travel in one integer register, so forwarding it as a pointer is exact. */
#define UNBLOCK_FCNTL(name) \
    UNBLOCK_REAL_DECL(int, name, (int, int, ...)); \
    UNBLOCK_EXPORT int UNBLOCK_WRAP(name)(int fd, int cmd, ...) \
    { \
        va_list ap; \
        va_start(ap, cmd); \
        void *arg = va_arg(ap, void *); \
        va_end(ap); \
        if (unblock_io_enter(UNBLOCK_IO_ID_##name)) { \
            int stop = cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC || cmd == F_SETFL; \
            if (cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || \
                cmd == F_OFD_SETLKW || cmd == F_SETLEASE) \
                unblock_wb_locking(cmd != F_SETLK && cmd != F_SETLKW); \
            int e = unblock_wb_before_fd(fd, stop ? UNBLOCK_WB_STOP : 0); \
            if (e) { \
                errno = e; \
                return -1; \
            } \
        } \
        return UNBLOCK_REAL(name)(fd, cmd, arg); \
    }
UNBLOCK_FCNTL(fcntl)
UNBLOCK_FCNTL(fcntl64)

/* Locks are news (drain.c: unblock_wb_locking), also on a descriptor of
 * another file (a lock file).  flock's belong to the open file description;
 * lockf's, as fcntl's F_SETLK, to the process (the sidecar's duplicate does not
 * hold them). */
UNBLOCK_IO_CALL(int, flock, (int fd, int op), (fd, op), , unblock_wb_locking(1), )
UNBLOCK_IO_CALL(int, lockf, (int fd, int cmd, off_t len), (fd, cmd, len), ,
                unblock_wb_locking(0), )
UNBLOCK_IO_CALL(int, lockf64, (int fd, int cmd, off64_t len), (fd, cmd, len), ,
                unblock_wb_locking(0), )
/* A file made executable may be executed next, by anyone: the sidecar lets go
 * of what it holds, and closes wait for it from now on (sidecar.c). */
UNBLOCK_IO_CALL(int, chmod, (const char *path, mode_t mode), (path, mode), ,
                unblock_wb_news(); unblock_wb_sidecar_must_wait(), )
UNBLOCK_IO_CALL(int, fchmod, (int fd, mode_t mode), (fd, mode), ,
                unblock_wb_sidecar_must_wait(); e_ = unblock_wb_before_fd(fd, 0), )
UNBLOCK_IO_CALL(int, fchmodat, (int dirfd, const char *path, mode_t mode, int flags),
                (dirfd, path, mode, flags), ,
                unblock_wb_news(); unblock_wb_sidecar_must_wait(), )

/* ---- stdio ---- */
/* stdio writes reach the kernel inside glibc, where no wrapper sees them: our
 * blocks go first, so the order of bytes in a file is the program's. */
PATH_CALL(FILE *, fopen, (const char *restrict path, const char *restrict mode), (path, mode),
          if (r_) LOOKED_FD(fileno(r_)))
PATH_CALL(FILE *, fopen64, (const char *restrict path, const char *restrict mode), (path, mode),
          if (r_) LOOKED_FD(fileno(r_)))
UNBLOCK_REAL_DECL(FILE *, fdopen, (int, const char *));
UNBLOCK_EXPORT FILE *UNBLOCK_WRAP(fdopen)(int fd, const char *mode)
{
    if (unblock_io_enter(UNBLOCK_IO_ID_fdopen)) {
        int e = unblock_wb_before_fd(fd, UNBLOCK_WB_STOP); /* stdio owns it now */
        if (e) {
            errno = e;
            return NULL;
        }
    }
    return UNBLOCK_REAL(fdopen)(fd, mode);
}
PATH_CALL(FILE *, freopen, (const char *restrict path, const char *restrict mode,
                            FILE *restrict f), (path, mode, f), )
PATH_CALL(FILE *, freopen64, (const char *restrict path, const char *restrict mode,
                              FILE *restrict f), (path, mode, f), )
/* fclose closes its descriptor inside glibc: the number is forgotten first. */
UNBLOCK_IO_CALL(int, fclose, (FILE *f), (f),
                if (unblock_trace_on) unblock_trace_forget(fileno(f)),
                unblock_wb_news(); unblock_wb_forget(fileno(f)), )
UNBLOCK_IO_CALL(size_t, fread, (void *restrict p, size_t size, size_t n, FILE *restrict f),
                (p, size, n, f), UNBLOCK_SYNC_BUF(p, size * n, 1); unblock_wb_outside(fileno(f)),
                unblock_wb_news(), )
UNBLOCK_IO_CALL(size_t, __fread_chk, (void *p, size_t plen, size_t size, size_t n, FILE *f),
                (p, plen, size, n, f), UNBLOCK_SYNC_BUF(p, size * n, 1);
                unblock_wb_outside(fileno(f)), unblock_wb_news(), )
UNBLOCK_IO_CALL(size_t, fwrite, (const void *restrict p, size_t size, size_t n, FILE *restrict f),
                (p, size, n, f), UNBLOCK_SYNC_BUF(p, size * n, 0), unblock_wb_flush_all(), )
/* fflush sends bytes out (our blocks go first); it brings no news in, so
 * read-ahead stays (a program printing its progress while it reads). */
UNBLOCK_IO_CALL(int, fflush, (FILE *f), (f), , unblock_wb_flush_all(), )
UNBLOCK_PASS(int, fseek, (FILE *f, long off, int whence), (f, off, whence))
UNBLOCK_PASS(int, fseeko, (FILE *f, off_t off, int whence), (f, off, whence))
UNBLOCK_PASS(int, fseeko64, (FILE *f, off64_t off, int whence), (f, off, whence))
