/* posix.c — wrappers of the POSIX file calls and of stdio.
 *
 * For now every wrapper counts the call and forwards it (the write-behind and read
 * issues add the work).  Each returns exactly what the real call returned and
 * leaves errno as it left it: counting happens before the call and touches neither. */
#define _GNU_SOURCE
#include "fileio/fileio.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
unblock_counter_t unblock_io_fn_calls[UNBLOCK_IO_ID_COUNT_];


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

UNBLOCK_PASS_BUF(ssize_t, read, (int fd, void *buf, size_t n),
                 (fd, buf, n), buf, n, 1)
UNBLOCK_PASS_BUF(ssize_t, write, (int fd, const void *buf, size_t n),
                 (fd, buf, n), buf, n, 0)
UNBLOCK_PASS_BUF(ssize_t, pread, (int fd, void *buf, size_t n, off_t off),
                 (fd, buf, n, off), buf, n, 1)
UNBLOCK_PASS_BUF(ssize_t, pread64, (int fd, void *buf, size_t n, off64_t off),
                 (fd, buf, n, off), buf, n, 1)
UNBLOCK_PASS_BUF(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off),
                 (fd, buf, n, off), buf, n, 0)
UNBLOCK_PASS_BUF(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t off),
                 (fd, buf, n, off), buf, n, 0)
UNBLOCK_PASS_IOV(ssize_t, readv, (int fd, const struct iovec *iov, int cnt),
                 (fd, iov, cnt), 1)
UNBLOCK_PASS_IOV(ssize_t, writev, (int fd, const struct iovec *iov, int cnt),
                 (fd, iov, cnt), 0)
UNBLOCK_PASS_IOV(ssize_t, preadv, (int fd, const struct iovec *iov, int cnt, off_t off),
                 (fd, iov, cnt, off), 1)
UNBLOCK_PASS_IOV(ssize_t, preadv64, (int fd, const struct iovec *iov, int cnt, off64_t off),
                 (fd, iov, cnt, off), 1)
UNBLOCK_PASS_IOV(ssize_t, pwritev, (int fd, const struct iovec *iov, int cnt, off_t off),
                 (fd, iov, cnt, off), 0)
UNBLOCK_PASS_IOV(ssize_t, pwritev64, (int fd, const struct iovec *iov, int cnt, off64_t off),
                 (fd, iov, cnt, off), 0)
UNBLOCK_PASS_IOV(ssize_t, preadv2, (int fd, const struct iovec *iov, int cnt, off_t off, int fl),
                 (fd, iov, cnt, off, fl), 1)
UNBLOCK_PASS_IOV(ssize_t, pwritev2, (int fd, const struct iovec *iov, int cnt, off_t off, int fl),
                 (fd, iov, cnt, off, fl), 0)
UNBLOCK_PASS_IOV(ssize_t, preadv64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int fl),
                 (fd, iov, cnt, off, fl), 1)
UNBLOCK_PASS_IOV(ssize_t, pwritev64v2, (int fd, const struct iovec *iov, int cnt, off64_t off, int fl),
                 (fd, iov, cnt, off, fl), 0)
UNBLOCK_PASS_BUF(ssize_t, __read_chk, (int fd, void *buf, size_t n, size_t buflen),
                 (fd, buf, n, buflen), buf, n, 1)
UNBLOCK_PASS_BUF(ssize_t, __pread_chk, (int fd, void *buf, size_t n, off_t off, size_t buflen),
                 (fd, buf, n, off, buflen), buf, n, 1)
UNBLOCK_PASS_BUF(ssize_t, __pread64_chk, (int fd, void *buf, size_t n, off64_t off, size_t buflen),
                 (fd, buf, n, off, buflen), buf, n, 1)

/* ---- open: the mode argument exists only with O_CREAT or O_TMPFILE ---- */
static mode_t open_mode(int flags, va_list ap)
{
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
        return (mode_t)va_arg(ap, int);
    return 0;
}

#define UNBLOCK_OPEN(name) \
    UNBLOCK_REAL_DECL(int, name, (const char *, int, ...)); \
    UNBLOCK_EXPORT int UNBLOCK_WRAP(name)(const char *path, int flags, ...) \
    { \
        va_list ap; \
        va_start(ap, flags); \
        mode_t mode = open_mode(flags, ap); \
        va_end(ap); \
        unblock_io_enter(UNBLOCK_IO_ID_##name); \
        return UNBLOCK_REAL(name)(path, flags, mode); \
    }
#define UNBLOCK_OPENAT(name) \
    UNBLOCK_REAL_DECL(int, name, (int, const char *, int, ...)); \
    UNBLOCK_EXPORT int UNBLOCK_WRAP(name)(int dirfd, const char *path, int flags, ...) \
    { \
        va_list ap; \
        va_start(ap, flags); \
        mode_t mode = open_mode(flags, ap); \
        va_end(ap); \
        unblock_io_enter(UNBLOCK_IO_ID_##name); \
        return UNBLOCK_REAL(name)(dirfd, path, flags, mode); \
    }
UNBLOCK_OPEN(open)
UNBLOCK_OPEN(open64)
UNBLOCK_OPENAT(openat)
UNBLOCK_OPENAT(openat64)
UNBLOCK_PASS(int, __open_2, (const char *path, int flags), (path, flags))
UNBLOCK_PASS(int, __open64_2, (const char *path, int flags), (path, flags))
UNBLOCK_PASS(int, __openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags))
UNBLOCK_PASS(int, __openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags))
UNBLOCK_PASS(int, creat, (const char *path, mode_t mode), (path, mode))
UNBLOCK_PASS(int, creat64, (const char *path, mode_t mode), (path, mode))

/* ---- descriptors and files ---- */
UNBLOCK_PASS(int, close, (int fd), (fd))
UNBLOCK_PASS(off_t, lseek, (int fd, off_t off, int whence), (fd, off, whence))
UNBLOCK_PASS(off64_t, lseek64, (int fd, off64_t off, int whence), (fd, off, whence))
UNBLOCK_PASS(int, fsync, (int fd), (fd))
UNBLOCK_PASS(int, fdatasync, (int fd), (fd))
UNBLOCK_PASS(int, ftruncate, (int fd, off_t len), (fd, len))
UNBLOCK_PASS(int, ftruncate64, (int fd, off64_t len), (fd, len))
UNBLOCK_PASS(int, truncate, (const char *path, off_t len), (path, len))
UNBLOCK_PASS(int, truncate64, (const char *path, off64_t len), (path, len))
UNBLOCK_PASS(int, fallocate, (int fd, int mode, off_t off, off_t len), (fd, mode, off, len))
UNBLOCK_PASS(int, fallocate64, (int fd, int mode, off64_t off, off64_t len),
             (fd, mode, off, len))
UNBLOCK_PASS(int, fstat, (int fd, struct stat *st), (fd, st))
UNBLOCK_PASS(int, fstat64, (int fd, struct stat64 *st), (fd, st))
UNBLOCK_PASS(int, stat, (const char *restrict path, struct stat *restrict st), (path, st))
UNBLOCK_PASS(int, stat64, (const char *restrict path, struct stat64 *restrict st), (path, st))
UNBLOCK_PASS(int, lstat, (const char *restrict path, struct stat *restrict st), (path, st))
UNBLOCK_PASS(int, lstat64, (const char *restrict path, struct stat64 *restrict st), (path, st))
UNBLOCK_PASS(int, fstatat, (int dirfd, const char *restrict path, struct stat *restrict st,
                            int flags), (dirfd, path, st, flags))
UNBLOCK_PASS(int, fstatat64, (int dirfd, const char *restrict path,
                              struct stat64 *restrict st, int flags), (dirfd, path, st, flags))
UNBLOCK_PASS(int, statx, (int dirfd, const char *restrict path, int flags, unsigned mask,
                          struct statx *restrict stx), (dirfd, path, flags, mask, stx))
#ifndef UNBLOCK_LINK_WRAP /* compat-only symbols: nothing new links against them */
UNBLOCK_PASS(int, __fxstat, (int ver, int fd, struct stat *st), (ver, fd, st))
UNBLOCK_PASS(int, __fxstat64, (int ver, int fd, struct stat64 *st), (ver, fd, st))
UNBLOCK_PASS(int, __xstat, (int ver, const char *path, struct stat *st), (ver, path, st))
UNBLOCK_PASS(int, __xstat64, (int ver, const char *path, struct stat64 *st), (ver, path, st))
UNBLOCK_PASS(int, __lxstat, (int ver, const char *path, struct stat *st), (ver, path, st))
UNBLOCK_PASS(int, __lxstat64, (int ver, const char *path, struct stat64 *st), (ver, path, st))
#endif
UNBLOCK_PASS(int, dup, (int fd), (fd))
UNBLOCK_PASS(int, dup2, (int fd, int fd2), (fd, fd2))
UNBLOCK_PASS(int, dup3, (int fd, int fd2, int flags), (fd, fd2, flags))
UNBLOCK_PASS(void *, mmap, (void *addr, size_t len, int prot, int flags, int fd, off_t off),
             (addr, len, prot, flags, fd, off))
UNBLOCK_PASS(void *, mmap64,
             (void *addr, size_t len, int prot, int flags, int fd, off64_t off),
             (addr, len, prot, flags, fd, off))

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
        unblock_io_enter(UNBLOCK_IO_ID_##name); \
        return UNBLOCK_REAL(name)(fd, cmd, arg); \
    }
UNBLOCK_FCNTL(fcntl)
UNBLOCK_FCNTL(fcntl64)

/* ---- stdio ---- */
UNBLOCK_PASS(FILE *, fopen, (const char *restrict path, const char *restrict mode), (path, mode))
UNBLOCK_PASS(FILE *, fopen64, (const char *restrict path, const char *restrict mode),
             (path, mode))
UNBLOCK_PASS(FILE *, fdopen, (int fd, const char *mode), (fd, mode))
UNBLOCK_PASS(FILE *, freopen, (const char *restrict path, const char *restrict mode,
                               FILE *restrict f), (path, mode, f))
UNBLOCK_PASS(FILE *, freopen64, (const char *restrict path, const char *restrict mode,
                                 FILE *restrict f), (path, mode, f))
UNBLOCK_PASS(int, fclose, (FILE *f), (f))
UNBLOCK_PASS_BUF(size_t, fread, (void *restrict p, size_t size, size_t n, FILE *restrict f),
                 (p, size, n, f), p, size * n, 1)
UNBLOCK_PASS_BUF(size_t, __fread_chk, (void *p, size_t plen, size_t size, size_t n, FILE *f),
                 (p, plen, size, n, f), p, size * n, 1)
UNBLOCK_PASS_BUF(size_t, fwrite, (const void *restrict p, size_t size, size_t n, FILE *restrict f),
                 (p, size, n, f), p, size * n, 0)
UNBLOCK_PASS(int, fflush, (FILE *f), (f))
UNBLOCK_PASS(int, fseek, (FILE *f, long off, int whence), (f, off, whence))
UNBLOCK_PASS(int, fseeko, (FILE *f, off_t off, int whence), (f, off, whence))
UNBLOCK_PASS(int, fseeko64, (FILE *f, off64_t off, int whence), (f, off, whence))
