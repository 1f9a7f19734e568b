/* fileio.c — a serial program that uses every kind of file call unblock wraps,
 * including the failing ones, and prints what each returned (and errno) on stdout.
 * Writes its files into OUTDIR.  Run with and without unblock, both outputs must
 * be identical.  usage: fileio OUTDIR */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static void show(const char *what, long rc)
{
    printf("%-28s rc=%ld errno=%s\n", what, rc, rc < 0 ? strerrorname_np(errno) : "-");
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : ".";
    char path[4096], buf[256];
    snprintf(path, sizeof(path), "%s/data.bin", out);

    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0640);
    show("open", fd >= 0 ? 0 : -1);
    for (int i = 0; i < 1000; i++) { /* small sequential writes: a checkpoint */
        int len = snprintf(buf, sizeof(buf), "%d:%d\n", i, i * i);
        if (write(fd, buf, (size_t)len) != len)
            show("short write", -1);
    }
    show("pwrite", pwrite(fd, "HOLE", 4, 100000));
    struct iovec iov[2] = { { "ab", 2 }, { "cdef", 4 } };
    show("writev", writev(fd, iov, 2));
    show("pwritev", pwritev(fd, iov, 2, 50));
    struct stat st;
    show("fstat", fstat(fd, &st));
    printf("size %lld mode %o\n", (long long)st.st_size, st.st_mode & 0777);
    show("lseek", lseek(fd, 0, SEEK_SET));
    memset(buf, 0, sizeof(buf));
    show("read", read(fd, buf, 20));
    printf("data %.20s\n", buf);
    show("pread past end", pread(fd, buf, 10, 1 << 30));
    char a[3] = { 0 }, b[5] = { 0 };
    struct iovec riov[2] = { { a, 2 }, { b, 4 } };
    show("preadv", preadv(fd, riov, 2, 50));
    printf("preadv %s %s\n", a, b);
    show("ftruncate", ftruncate(fd, 60000));
    show("fallocate", fallocate(fd, 0, 60000, 4096));
    show("fdatasync", fdatasync(fd));
    show("fsync", fsync(fd));
    int fd2 = dup(fd);
    show("dup", fd2 >= 0 ? 0 : -1);
    show("fcntl getfl", fcntl(fd2, F_GETFL) & O_ACCMODE);
    show("dup2", dup2(fd, 100) == 100 ? 0 : -1);
    show("close dup2", close(100));
    void *m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    show("mmap", m == MAP_FAILED ? -1 : 0);
    if (m != MAP_FAILED) {
        printf("mmap %.6s\n", (char *)m);
        munmap(m, 4096);
    }
    show("close", close(fd));
    show("close dup", close(fd2));
    show("close again", close(fd));
    show("stat", stat(path, &st));
    printf("size %lld\n", (long long)st.st_size);
    show("truncate", truncate(path, 30000));

    /* errors must be the program's own */
    show("open missing", open("/nonexistent/dir/file", O_RDONLY));
    show("write bad fd", write(-1, "x", 1));
    show("read bad fd", read(999, buf, 1));
    show("open readonly dir", open("/proc/self", O_WRONLY));
    show("fsync bad fd", fsync(-3));
    show("stat missing", stat("/nonexistent", &st));

    /* stdio */
    snprintf(path, sizeof(path), "%s/text.txt", out);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 500; i++)
        fprintf(f, "line %d\n", i);
    size_t w = fwrite("tail\n", 1, 5, f);
    show("fwrite", (long)w);
    show("fflush", fflush(f));
    show("fseek", fseek(f, 0, SEEK_SET));
    fputs("LINE", f);
    show("fclose", fclose(f));
    f = fopen(path, "r");
    size_t r = fread(buf, 1, 12, f);
    show("fread", (long)r);
    printf("text %.12s\n", buf);
    fclose(f);
    show("fopen missing", fopen("/nonexistent/x", "r") ? 0 : -1);
    return 0;
}
