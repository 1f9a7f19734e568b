/* slowfs.c — a filesystem that behaves like a network filesystem's slow writes:
 * a FUSE pass-through to a local directory that sleeps on each write request and
 * each fsync, a fixed latency plus the size over a bandwidth.  Without a writeback
 * cache every write() the program makes becomes one such request, as on an NFS
 * client mounted `sync` (the papers' cluster).  This machine has no NFS server;
 * the file benchmarks and tests use this instead (bench/README.md).
 *
 * usage: slowfs BACKING_DIR MOUNTPOINT [--latency-us N] [--mbps M] [--slow-reads]
 *               [--count FILE]
 *   stays in the foreground; unmount with `fusermount3 -u MOUNTPOINT` (or
 *   `umount`).  Defaults: 200 µs per request and 110 MB/s, NFS over gigabit
 *   Ethernet.  --slow-reads delays read requests the same way (the read
 *   benchmarks: a file that is not in the client's cache).  --count FILE keeps
 *   in FILE (outside the mount) the read requests served and their bytes,
 *   "reads N bytes B", rewritten after each one. */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

static int root = -1;
static long latency_us = 200;
static double mbps = 110;
static int slow_reads;
static int count_fd = -1;             /* --count FILE */
static unsigned long long reads_served, bytes_served;

/* One read request served: the counts to FILE (one line, rewritten in place). */
static void count_read(long got)
{
    if (count_fd < 0 || got < 0)
        return;
    unsigned long long n = __atomic_add_fetch(&reads_served, 1, __ATOMIC_SEQ_CST);
    unsigned long long b = __atomic_add_fetch(&bytes_served, (unsigned long long)got,
                                              __ATOMIC_SEQ_CST);
    char line[64];
    int len = snprintf(line, sizeof(line), "reads %20llu bytes %20llu\n", n, b);
    if (pwrite(count_fd, line, (size_t)len, 0) != len)
        return;
}

/* The backing path of a FUSE path ("/a/b" -> "a/b", "/" -> "."). */
static const char *rel(const char *path)
{
    return path[1] ? path + 1 : ".";
}

static void delay(size_t bytes)
{
    double us = (double)latency_us + (mbps > 0 ? (double)bytes / mbps : 0); /* MB/s = B/µs */
    struct timespec ts = { (time_t)(us / 1e6), (long)((us - (double)(long)(us / 1e6) * 1e6) * 1e3) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int fail(int r)
{
    return r < 0 ? -errno : r;
}

static void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    conn->max_write = 1 << 20; /* NFS's usual wsize */
    cfg->use_ino = 1;
    cfg->kernel_cache = 0;
    /* No attribute or entry caching: sizes are always asked for, as NFS revalidates. */
    cfg->attr_timeout = 0;
    cfg->entry_timeout = 0;
    cfg->negative_timeout = 0;
    return NULL;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    if (fi)
        return fail(fstat((int)fi->fh, st));
    return fail(fstatat(root, rel(path), st, AT_SYMLINK_NOFOLLOW));
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off, (void)fi, (void)flags;
    int fd = openat(root, rel(path), O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (fill(buf, e->d_name, NULL, 0, 0))
            break;
    closedir(d);
    return 0;
}

static int fs_mkdir(const char *path, mode_t mode)
{
    return fail(mkdirat(root, rel(path), mode));
}

static int fs_unlink(const char *path)
{
    return fail(unlinkat(root, rel(path), 0));
}

static int fs_rmdir(const char *path)
{
    return fail(unlinkat(root, rel(path), AT_REMOVEDIR));
}

static int fs_rename(const char *from, const char *to, unsigned flags)
{
    if (flags)
        return -EINVAL;
    return fail(renameat(root, rel(from), root, rel(to)));
}

static int fs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    if (fi)
        return fail(fchmod((int)fi->fh, mode));
    return fail(fchmodat(root, rel(path), mode, 0));
}

static int fs_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    if (fi)
        return fail(futimens((int)fi->fh, tv));
    return fail(utimensat(root, rel(path), tv, AT_SYMLINK_NOFOLLOW));
}

static int fs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    delay(0);
    if (fi)
        return fail(ftruncate((int)fi->fh, size));
    int fd = openat(root, rel(path), O_WRONLY);
    if (fd < 0)
        return -errno;
    int r = fail(ftruncate(fd, size));
    close(fd);
    return r;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
    int fd = openat(root, rel(path), fi->flags & ~O_APPEND);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int fs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    delay(0);
    int fd = openat(root, rel(path), (fi->flags & ~O_APPEND) | O_CREAT, mode);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int fs_read(const char *path, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    if (slow_reads)
        delay(n);
    int got = (int)pread((int)fi->fh, buf, n, off);
    count_read(got);
    return fail(got);
}

static int fs_write(const char *path, const char *buf, size_t n, off_t off,
                    struct fuse_file_info *fi)
{
    (void)path;
    delay(n);
    return fail((int)pwrite((int)fi->fh, buf, n, off));
}

static int fs_statfs(const char *path, struct statvfs *sv)
{
    (void)path;
    return fail(fstatvfs(root, sv));
}

static int fs_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    close((int)fi->fh);
    return 0;
}

static int fs_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    (void)path;
    delay(0);
    return fail(datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh));
}

static int fs_fallocate(const char *path, int mode, off_t off, off_t len,
                        struct fuse_file_info *fi)
{
    (void)path;
    return fail(fallocate((int)fi->fh, mode, off, len));
}

static const struct fuse_operations ops = {
    .init = fs_init,
    .getattr = fs_getattr,
    .readdir = fs_readdir,
    .mkdir = fs_mkdir,
    .unlink = fs_unlink,
    .rmdir = fs_rmdir,
    .rename = fs_rename,
    .chmod = fs_chmod,
    .utimens = fs_utimens,
    .truncate = fs_truncate,
    .open = fs_open,
    .create = fs_create,
    .read = fs_read,
    .write = fs_write,
    .statfs = fs_statfs,
    .release = fs_release,
    .fsync = fs_fsync,
    .fallocate = fs_fallocate,
};

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: slowfs BACKING_DIR MOUNTPOINT [--latency-us N] [--mbps M] "
                        "[--slow-reads] [--count FILE]\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--slow-reads") == 0)
            slow_reads = 1;
        else if (strcmp(argv[i], "--latency-us") == 0 && i + 1 < argc)
            latency_us = atol(argv[++i]);
        else if (strcmp(argv[i], "--mbps") == 0 && i + 1 < argc)
            mbps = atof(argv[++i]);
        else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
            count_fd = open(argv[++i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (count_fd < 0) {
                perror(argv[i]);
                return 1;
            }
        }
        else {
            fprintf(stderr, "slowfs: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    root = open(argv[1], O_RDONLY | O_DIRECTORY);
    if (root < 0) {
        perror(argv[1]);
        return 1;
    }
    char *fargv[] = { argv[0], argv[2], "-f", "-o", "fsname=slowfs", NULL };
    return fuse_main(5, fargv, &ops, NULL);
}
