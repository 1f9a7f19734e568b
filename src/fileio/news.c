/* news.c — wrappers of the calls that may carry news of a file between
 * processes without being file calls (docs/fileio.md, "When the block reaches
 * the file"): sockets, signals sent, message queues, eventfd counters,
 * semaphores shared between processes, stdio output and names made, changed or
 * taken away in the file system.  A message
 * out may tell another process to read a file this one wrote: our blocks go
 * first (news_out).  A message in may tell this one that a file it reads ahead
 * changed: read-ahead is dropped (news_in).  Each is a load and a compare while
 * nothing is buffered or read ahead; each returns what the real call returned
 * and leaves errno as it left it. */
#define _GNU_SOURCE
#include "fileio/fileio.h"
#include "fileio/fastpath.h"

#include <errno.h>
#include <mqueue.h>
#include <semaphore.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/msg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <utime.h>

/* The _FORTIFY_SOURCE entry points (declared by glibc only under fortify). */
int __printf_chk(int flag, const char *fmt, ...);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
ssize_t __recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *restrict buf, size_t n, size_t buflen, int flags,
                       struct sockaddr *restrict from, socklen_t *restrict fromlen);

/* ---- news: calls that may tell another process, or this one, of a file ----
 * Out: our blocks go first (a load and a compare while none holds bytes; errno
 * is the call's own).  In: read-ahead is dropped. */
static __attribute__((noinline)) void flush_keeping_errno(void)
{
    int saved = errno;
    unblock_wb_flush_all();
    errno = saved;
}
static inline void news_out(unsigned id)
{
    if (unblock_io_enter(id) && __atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED))
        flush_keeping_errno();
}
static inline void news_in(unsigned id)
{
    if (unblock_io_enter(id) && __atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED)) {
        int saved = errno;
        unblock_ra_drop_all();
        errno = saved;
    }
}
/* A signal to another process ("the checkpoint is written") and a message of
 * System V or POSIX queues, both ways. */
UNBLOCK_PASS_WITH(int, kill, (pid_t pid, int sig), (pid, sig), news_out(UNBLOCK_IO_ID_kill))
/* (glibc's killpg sends with its own kill, where no wrapper sees it) */
UNBLOCK_PASS_WITH(int, killpg, (pid_t group, int sig), (group, sig), news_out(UNBLOCK_IO_ID_killpg))
UNBLOCK_PASS_WITH(int, pidfd_send_signal, (int pidfd, int sig, siginfo_t *info, unsigned flags),
                  (pidfd, sig, info, flags), news_out(UNBLOCK_IO_ID_pidfd_send_signal))
UNBLOCK_PASS_WITH(int, sigqueue, (pid_t pid, int sig, const union sigval v), (pid, sig, v),
                  news_out(UNBLOCK_IO_ID_sigqueue))
UNBLOCK_PASS_WITH(int, msgsnd, (int q, const void *p, size_t n, int fl), (q, p, n, fl),
                  news_out(UNBLOCK_IO_ID_msgsnd))
UNBLOCK_PASS_WITH(ssize_t, msgrcv, (int q, void *p, size_t n, long type, int fl),
                  (q, p, n, type, fl), news_in(UNBLOCK_IO_ID_msgrcv))
UNBLOCK_PASS_WITH(int, mq_send, (mqd_t q, const char *p, size_t n, unsigned prio),
                  (q, p, n, prio), news_out(UNBLOCK_IO_ID_mq_send))
UNBLOCK_PASS_WITH(int, mq_timedsend, (mqd_t q, const char *p, size_t n, unsigned prio,
                                      const struct timespec *t),
                  (q, p, n, prio, t), news_out(UNBLOCK_IO_ID_mq_timedsend))
UNBLOCK_PASS_WITH(ssize_t, mq_receive, (mqd_t q, char *p, size_t n, unsigned *prio),
                  (q, p, n, prio), news_in(UNBLOCK_IO_ID_mq_receive))
UNBLOCK_PASS_WITH(ssize_t, mq_timedreceive, (mqd_t q, char *restrict p, size_t n,
                                             unsigned *restrict prio,
                                             const struct timespec *restrict t),
                  (q, p, n, prio, t), news_in(UNBLOCK_IO_ID_mq_timedreceive))
/* An eventfd's counter (one inherited by, or passed to, a watcher): glibc's
 * eventfd_write and eventfd_read move it inside themselves, where no wrapper
 * of write or read sees it. */
UNBLOCK_PASS_WITH(int, eventfd_write, (int fd, eventfd_t v), (fd, v),
                  news_out(UNBLOCK_IO_ID_eventfd_write))
UNBLOCK_PASS_WITH(int, eventfd_read, (int fd, eventfd_t *v), (fd, v),
                  news_in(UNBLOCK_IO_ID_eventfd_read))

/* A semaphore shared between processes (sem_open's, or sem_init's with pshared
 * in shared memory), posted when the file is written; one private to the
 * process (a thread pool's) is no news, so that its posts do not force merged
 * blocks out.  Shared or not: glibc's `private` field after the 64-bit value
 * (nptl's struct new_sem: 0 for a private one, FUTEX_PRIVATE_FLAG, 128, for a
 * shared one, checked for sem_init's both and sem_open's on glibc 2.36), read
 * only while blocks hold bytes; anything else counts as shared. */
static int sem_shared(sem_t *s)
{
    int private;
    return unblock_copy_from_program(&private, (const char *)s + sizeof(uint64_t),
                                     sizeof(private)) != 0 || private != 0;
}
UNBLOCK_PASS_WITH(int, sem_post, (sem_t *s), (s),
                  if (unblock_io_enter(UNBLOCK_IO_ID_sem_post) &&
                      unblock_unlikely(__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED)) &&
                      sem_shared(s)) flush_keeping_errno())

/* Names in the file system, which other processes watch: a file renamed into
 * place when written (the atomic publication), a link or symbolic link to the
 * latest checkpoint, a directory or FIFO made and a lock file removed ("done"),
 * times set on a sentinel.  Our blocks go first, as for a message: before
 * 2026-11-28 none was wrapped, and a process that saw the name read a short
 * file (serial.writebehind.namenews).  Times set on a file with bytes in our
 * blocks also stay the last change, as without unblock (a flush after them
 * would set its time again).  Each first completes the message receives in
 * flight, as a read does (fileio.h: UNBLOCK_SYNC_LOOK): the sender of one may
 * have made or removed the name before it sent. */
#define NAME_NEWS(name, params, args) \
    UNBLOCK_PASS_WITH(int, name, params, args, UNBLOCK_SYNC_LOOK; news_out(UNBLOCK_IO_ID_##name))
NAME_NEWS(rename, (const char *a, const char *b), (a, b))
NAME_NEWS(renameat, (int da, const char *a, int db, const char *b), (da, a, db, b))
NAME_NEWS(renameat2, (int da, const char *a, int db, const char *b, unsigned fl),
          (da, a, db, b, fl))
NAME_NEWS(link, (const char *a, const char *b), (a, b))
NAME_NEWS(linkat, (int da, const char *a, int db, const char *b, int fl), (da, a, db, b, fl))
NAME_NEWS(symlink, (const char *a, const char *b), (a, b))
NAME_NEWS(symlinkat, (const char *a, int db, const char *b), (a, db, b))
NAME_NEWS(unlink, (const char *p), (p))
NAME_NEWS(unlinkat, (int d, const char *p, int fl), (d, p, fl))
NAME_NEWS(remove, (const char *p), (p)) /* (glibc's calls unlink or rmdir inside itself) */
NAME_NEWS(mkdir, (const char *p, mode_t m), (p, m))
NAME_NEWS(mkdirat, (int d, const char *p, mode_t m), (d, p, m))
NAME_NEWS(rmdir, (const char *p), (p))
NAME_NEWS(mkfifo, (const char *p, mode_t m), (p, m))
NAME_NEWS(mkfifoat, (int d, const char *p, mode_t m), (d, p, m))
NAME_NEWS(mknod, (const char *p, mode_t m, dev_t dev), (p, m, dev))
NAME_NEWS(mknodat, (int d, const char *p, mode_t m, dev_t dev), (d, p, m, dev))
NAME_NEWS(utime, (const char *p, const struct utimbuf *t), (p, t))
NAME_NEWS(utimes, (const char *p, const struct timeval t[2]), (p, t))
NAME_NEWS(lutimes, (const char *p, const struct timeval t[2]), (p, t))
NAME_NEWS(futimes, (int fd, const struct timeval t[2]), (fd, t))
NAME_NEWS(utimensat, (int d, const char *p, const struct timespec t[2], int fl), (d, p, t, fl))
NAME_NEWS(futimens, (int fd, const struct timespec t[2]), (fd, t))

/* ---- sockets ----
 * A message sent may tell another process to read a file this one wrote: our
 * blocks go first, as for a write to a pipe.  One received may tell this process
 * that a file it reads ahead has changed: read-ahead is dropped, as for a read of
 * a pipe.  Their buffers are checked like read's and write's, so that a receive
 * into pages an operation still owns waits for it instead of failing with
 * EFAULT.  With nothing buffered, read ahead or in flight, the call is the
 * wrapper's last (UCX's TCP transport sends and receives through some of them;
 * MPI's own calls inside a wrapped MPI call pass through). */
static void sync_msg(const struct msghdr *m, int kernel_writes)
{
    unblock_io_sync_iov(m->msg_iov, (int)m->msg_iovlen, kernel_writes);
    if (m->msg_name)
        unblock_protect_sync_range(m->msg_name, m->msg_namelen, kernel_writes);
    if (m->msg_control)
        unblock_protect_sync_range(m->msg_control, m->msg_controllen, kernel_writes);
}
static void sync_mmsg(const struct mmsghdr *v, unsigned n, int kernel_writes)
{
    for (unsigned i = 0; i < n; i++)
        sync_msg(&v[i].msg_hdr, kernel_writes);
}
#define SOCKET_FAST(name, args) \
    unblock_real_##name##_t f_; \
    unblock_counter_t *c_; \
    if (unblock_likely(unblock_fio_idle() && UNBLOCK_FIO_READY(name, f_, c_))) { \
        unblock_count_in(c_, UNBLOCK_COUNT_IO + UNBLOCK_IO_ID_##name); \
        return f_ args; \
    }
#define SOCKET_NEWS_IN \
    if (__atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED)) \
        unblock_ra_drop_all()
#define SOCKET_CALL(ret, name, params, args, sync, news) \
    UNBLOCK_IO_CALL_FAST(ret, name, params, args, SOCKET_FAST(name, args), , sync, news, )
SOCKET_CALL(ssize_t, send, (int fd, const void *buf, size_t n, int fl), (fd, buf, n, fl),
            UNBLOCK_SYNC_BUF(buf, n, 0), unblock_wb_flush_all())
SOCKET_CALL(ssize_t, sendto, (int fd, const void *buf, size_t n, int fl,
                              const struct sockaddr *to, socklen_t tolen),
            (fd, buf, n, fl, to, tolen), UNBLOCK_SYNC_BUF(buf, n, 0), unblock_wb_flush_all())
SOCKET_CALL(ssize_t, sendmsg, (int fd, const struct msghdr *m, int fl), (fd, m, fl),
            if (unblock_unlikely(unblock_io_touches_inflight())) sync_msg(m, 0),
            unblock_wb_flush_all())
SOCKET_CALL(int, sendmmsg, (int fd, struct mmsghdr *v, unsigned n, int fl), (fd, v, n, fl),
            if (unblock_unlikely(unblock_io_touches_inflight())) sync_mmsg(v, n, 0),
            unblock_wb_flush_all())
SOCKET_CALL(ssize_t, recv, (int fd, void *buf, size_t n, int fl), (fd, buf, n, fl),
            UNBLOCK_SYNC_BUF(buf, n, 1), SOCKET_NEWS_IN)
SOCKET_CALL(ssize_t, __recv_chk, (int fd, void *buf, size_t n, size_t buflen, int fl),
            (fd, buf, n, buflen, fl), UNBLOCK_SYNC_BUF(buf, n, 1), SOCKET_NEWS_IN)
SOCKET_CALL(ssize_t, recvfrom, (int fd, void *restrict buf, size_t n, int fl,
                                struct sockaddr *restrict from, socklen_t *restrict fromlen),
            (fd, buf, n, fl, from, fromlen), UNBLOCK_SYNC_BUF(buf, n, 1), SOCKET_NEWS_IN)
SOCKET_CALL(ssize_t, __recvfrom_chk, (int fd, void *restrict buf, size_t n, size_t buflen,
                                      int fl, struct sockaddr *restrict from,
                                      socklen_t *restrict fromlen),
            (fd, buf, n, buflen, fl, from, fromlen), UNBLOCK_SYNC_BUF(buf, n, 1),
            SOCKET_NEWS_IN)
SOCKET_CALL(ssize_t, recvmsg, (int fd, struct msghdr *m, int fl), (fd, m, fl),
            if (unblock_unlikely(unblock_io_touches_inflight())) sync_msg(m, 1),
            SOCKET_NEWS_IN)
SOCKET_CALL(int, recvmmsg, (int fd, struct mmsghdr *v, unsigned n, int fl,
                            struct timespec *tmo), (fd, v, n, fl, tmo),
            if (unblock_unlikely(unblock_io_touches_inflight())) sync_mmsg(v, n, 1),
            SOCKET_NEWS_IN)
/* vmsplice: the program's pages into a pipe, news as a write to it is (its
 * buffers checked as writev's). */
SOCKET_CALL(ssize_t, vmsplice, (int fd, const struct iovec *iov, size_t cnt, unsigned fl),
            (fd, iov, cnt, fl), UNBLOCK_SYNC_IOV(0), unblock_wb_flush_all())

/* Formatted and character output: glibc hands its buffer to the kernel inside
 * itself (its own write, which no wrapper sees), when the buffer fills, at a
 * newline on a line-buffered stream, at once on an unbuffered one.  A line
 * printed to stdout, a pipe or a log may tell another process that a file is
 * written (a workflow reading a program's output line by line, then its file):
 * our blocks go first, as for a write to another descriptor, when the call's
 * bytes may reach the kernel in it (stdio_news).  Not for every call: a
 * program writing a text file a character at a time beside small writes to
 * another would flush that file's block at every character.  While no block
 * holds bytes: a load and a compare (not counted: fputc costs about 25
 * instructions in glibc).  errno is the call's own.  dprintf writes to its
 * descriptor at once. */
#define STDIO_UNBUFFERED 0x0002 /* glibc's libio.h: _IO_UNBUFFERED */
#define STDIO_LINE_BUF 0x0200   /* _IO_LINE_BUF */
/* Whether `need` bytes (at least) written to f may reach the kernel in the
 * call: an unbuffered or line-buffered stream (a terminal, stderr, setvbuf),
 * or a buffer with less room left.  NULL: a descriptor (dprintf). */
static inline int stdio_reaches_kernel(FILE *f, size_t need)
{
    if (f == NULL || (f->_flags & (STDIO_UNBUFFERED | STDIO_LINE_BUF)))
        return 1;
    if (f->_IO_write_base == NULL) /* no buffer yet: the first output makes one */
        return need >= 4096;
    return f->_IO_write_ptr == NULL || (size_t)(f->_IO_write_end - f->_IO_write_ptr) < need;
}
static __attribute__((noinline)) void stdio_news_now(FILE *f, size_t need)
{
    if (unblock_io_active() && stdio_reaches_kernel(f, need))
        flush_keeping_errno();
}
/* (need is computed only when a block holds bytes) */
#define stdio_news(f, need) \
    do { \
        if (unblock_unlikely(__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED) != 0)) \
            stdio_news_now((f), (need)); \
    } while (0)
/* A formatted output's length is not known before it is made: its format's,
 * and this much more. */
#define STDIO_FMT_SLACK 256
#define STDIO_FMT(f, fmt) stdio_news((f), strlen(fmt) + STDIO_FMT_SLACK)
/* The variadic ones call the real `va_list` form (the wrapper of that form is
 * not run again). */
#define STDIO_OUT_VA(name, params, last, vname, vargs, news) \
    UNBLOCK_EXPORT int UNBLOCK_WRAP(name) params \
    { \
        news; \
        va_list ap; \
        va_start(ap, last); \
        int r = UNBLOCK_REAL(vname) vargs; \
        va_end(ap); \
        return r; \
    }
UNBLOCK_PASS_WITH(int, vprintf, (const char *restrict fmt, va_list ap), (fmt, ap),
                  STDIO_FMT(stdout, fmt))
UNBLOCK_PASS_WITH(int, vfprintf, (FILE *restrict f, const char *restrict fmt, va_list ap),
                  (f, fmt, ap), STDIO_FMT(f, fmt))
UNBLOCK_PASS_WITH(int, vdprintf, (int fd, const char *restrict fmt, va_list ap), (fd, fmt, ap),
                  stdio_news(NULL, 0))
UNBLOCK_PASS_WITH(int, __vprintf_chk, (int flag, const char *restrict fmt, va_list ap),
                  (flag, fmt, ap), STDIO_FMT(stdout, fmt))
UNBLOCK_PASS_WITH(int, __vfprintf_chk,
                  (FILE *restrict f, int flag, const char *restrict fmt, va_list ap),
                  (f, flag, fmt, ap), STDIO_FMT(f, fmt))
UNBLOCK_PASS_WITH(int, __vdprintf_chk, (int fd, int flag, const char *restrict fmt, va_list ap),
                  (fd, flag, fmt, ap), stdio_news(NULL, 0))
STDIO_OUT_VA(printf, (const char *restrict fmt, ...), fmt, vprintf, (fmt, ap),
             STDIO_FMT(stdout, fmt))
STDIO_OUT_VA(fprintf, (FILE *restrict f, const char *restrict fmt, ...), fmt, vfprintf,
             (f, fmt, ap), STDIO_FMT(f, fmt))
STDIO_OUT_VA(dprintf, (int fd, const char *restrict fmt, ...), fmt, vdprintf, (fd, fmt, ap),
             stdio_news(NULL, 0))
STDIO_OUT_VA(__printf_chk, (int flag, const char *restrict fmt, ...), fmt, __vprintf_chk,
             (flag, fmt, ap), STDIO_FMT(stdout, fmt))
STDIO_OUT_VA(__fprintf_chk, (FILE *restrict f, int flag, const char *restrict fmt, ...), fmt,
             __vfprintf_chk, (f, flag, fmt, ap), STDIO_FMT(f, fmt))
STDIO_OUT_VA(__dprintf_chk, (int fd, int flag, const char *restrict fmt, ...), fmt,
             __vdprintf_chk, (fd, flag, fmt, ap), stdio_news(NULL, 0))
UNBLOCK_PASS_WITH(int, puts, (const char *str), (str), stdio_news(stdout, strlen(str) + 1))
UNBLOCK_PASS_WITH(int, fputs, (const char *restrict str, FILE *restrict f), (str, f),
                  stdio_news(f, strlen(str)))
UNBLOCK_PASS_WITH(int, fputs_unlocked, (const char *restrict str, FILE *restrict f), (str, f),
                  stdio_news(f, strlen(str)))
UNBLOCK_PASS_WITH(int, putchar, (int c), (c), stdio_news(stdout, 1))
UNBLOCK_PASS_WITH(int, fputc, (int c, FILE *f), (c, f), stdio_news(f, 1))
UNBLOCK_PASS_WITH(int, putc, (int c, FILE *f), (c, f), stdio_news(f, 1))
#undef fwrite_unlocked /* (a macro of bits/stdio.h when optimizing) */
UNBLOCK_PASS_WITH(size_t, fwrite_unlocked,
                  (const void *restrict p, size_t size, size_t n, FILE *restrict f),
                  (p, size, n, f), stdio_news(f, size * n))
