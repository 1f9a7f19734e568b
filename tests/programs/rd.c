/* rd.c — large reads that unblock answers in the background (docs/fileio.md):
 * each case writes its file, drops it from the page cache (fsync, then
 * POSIX_FADV_DONTNEED), reads it with one large read() or pread(), and prints what
 * the calls returned and checksums of what the program then sees.  Run with and
 * without unblock: the outputs must be identical.
 *
 * usage: rd OUTDIR [all|fail]
 *   all   every case below, on stdout
 *   fail  one cold 8 MiB read whose data are then used (with
 *         UNBLOCK_TEST_FAIL_READ=1 the background read fails: SIGBUS) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define FILE_MIB 24

static char path[4096];
static char static_buf[4 * MIB];

static unsigned char pat(size_t i)
{
    uint32_t x = (uint32_t)(i >> 3) * 2654435761u;
    x ^= x >> 13;
    return (unsigned char)(x >> (8 * (i & 3)));
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* The same sum, page by page from the last page to the first (each page's own
 * sum folded in): a program that consumes its block bottom-to-top. */
static uint64_t fnv_backwards(const unsigned char *p, size_t n)
{
    uint64_t h = 0;
    size_t page = 4096;
    for (size_t end = n; end > 0;) {
        size_t start = end > page ? end - page : 0;
        h = h * 31 + fnv(p + start, end - start);
        end = start;
    }
    return h;
}

/* The file, written with plain writes and dropped from the page cache. */
static void make_file(size_t mib)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    unsigned char *b = malloc(MIB);
    for (size_t m = 0; m < mib; m++) {
        for (size_t i = 0; i < MIB; i++)
            b[i] = pat(m * MIB + i);
        if (write(fd, b, MIB) != (ssize_t)MIB)
            perror("write");
    }
    free(b);
    fsync(fd);
    close(fd);
}

static int cold_open(int flags)
{
    int fd = open(path, flags);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return fd;
}

static void show(const char *what, long rc, const void *p, size_t n)
{
    printf("%-34s rc=%ld", what, rc);
    if (p && rc > 0)
        printf(" sum %016llx", (unsigned long long)fnv(p, (size_t)rc < n ? (size_t)rc : n));
    printf("\n");
}

static void case_all(void)
{
    make_file(FILE_MIB);
    size_t size = FILE_MIB * MIB;
    unsigned char *big = malloc(size + 100);

    /* One read of the whole file, used top to bottom; the offset moved. */
    int fd = cold_open(O_RDONLY);
    ssize_t r = read(fd, big, size);
    show("read whole, forwards", r, big, size);
    printf("offset after it %lld\n", (long long)lseek(fd, 0, SEEK_CUR));

    /* Again, consumed bottom to top; then a read at the end of the file. */
    lseek(fd, 0, SEEK_SET);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    r = read(fd, big, size);
    printf("read whole, backwards rc=%ld sum %016llx\n", (long)r,
           (unsigned long long)fnv_backwards(big, size));
    r = read(fd, big, MIB);
    show("read at end of file", r, big, MIB);

    /* An odd offset into an odd address, past the end of the file (short). */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    r = pread(fd, big + 100, 8 * MIB, (off_t)(size - 3 * MIB - 12345));
    show("pread short at end of file", r, big + 100, 8 * MIB);
    show("pread past end of file", pread(fd, big, 8 * MIB, (off_t)size + 10), big, 8 * MIB);
    printf("offset unchanged %lld\n", (long long)lseek(fd, 0, SEEK_CUR));

    /* Partly cached: the first 2 MiB are in the page cache. */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    pread(fd, big, 2 * MIB, 0);
    r = pread(fd, big, 12 * MIB, 0);
    show("pread half cached", r, big, 12 * MIB);

    /* Static and stack memory: read as the call reads. */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    r = pread(fd, static_buf, sizeof(static_buf), MIB);
    show("pread into static memory", r, static_buf, sizeof(static_buf));
    {
        unsigned char stack_buf[512 * 1024];
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        r = pread(fd, stack_buf, sizeof(stack_buf), 3 * MIB);
        show("pread into the stack", r, stack_buf, sizeof(stack_buf));
    }

    /* The file changed by this process after the read returned (another
     * descriptor: a truncation, then a write): the data are the file's at the
     * read. */
    int fd2 = open(path, O_WRONLY); /* (an open is news: the reads are done) */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    r = pread(fd, big, 16 * MIB, 0);
    ftruncate(fd2, MIB);
    show("pread, then truncated", r, big, 16 * MIB);
    close(fd2);
    make_file(FILE_MIB);
    fd2 = open(path, O_WRONLY);
    memset(static_buf, 'x', sizeof(static_buf));
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    r = pread(fd, big, 16 * MIB, 0);
    pwrite(fd2, static_buf, sizeof(static_buf), 2 * MIB);
    show("pread, then overwritten", r, big, 16 * MIB);
    close(fd2);

    /* The buffer handed to the kernel and to free() before the program reads it. */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    r = pread(fd, big, 8 * MIB, 0);
    int out = open("/dev/null", O_WRONLY);
    show("pread, then written out", r > 0 ? write(out, big, (size_t)r) : r, NULL, 0);
    close(out);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    unsigned char *tmp = malloc(8 * MIB);
    r = pread(fd, tmp, 8 * MIB, 0);
    free(tmp);
    show("pread, then freed", r, NULL, 0);

    /* Two reads in a row into one buffer, the second over the first's pages. */
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    r = pread(fd, big, 8 * MIB, 0);
    ssize_t r2 = pread(fd, big + 4 * MIB, 8 * MIB, 16 * MIB);
    show("two reads, overlapping memory", r + r2, big, 12 * MIB);
    close(fd);

    /* Another process rewrites the file as soon as this one tells it (a pipe)
     * that its read returned: the data are still the file as it was (unblock
     * holds a read lease until its reads are done: the writer's open waits). */
    make_file(FILE_MIB);
    int tell[2];
    if (pipe(tell) != 0)
        perror("pipe");
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        char c;
        if (read(tell[0], &c, 1) == 1) {
            int w = open(path, O_WRONLY);
            memset(static_buf, 'y', sizeof(static_buf));
            for (size_t m = 0; m < FILE_MIB; m += 4)
                pwrite(w, static_buf, sizeof(static_buf), (off_t)(m * MIB));
            close(w);
        }
        _exit(0);
    }
    fd = cold_open(O_RDONLY);
    r = pread(fd, big, 20 * MIB, 0);
    write(tell[1], "x", 1);
    waitpid(child, NULL, 0);
    show("pread, then another process rewrote it", r, big, 20 * MIB);
    close(fd);

    /* A write-only descriptor and a file that is not regular: as the call. */
    fd = open(path, O_WRONLY);
    show("read from a write-only fd", read(fd, big, MIB), NULL, 0);
    close(fd);
    fd = open("/proc/self/status", O_RDONLY);
    printf("read /proc/self/status %s\n", read(fd, big, MIB) > 0 ? "ok" : "failed");
    close(fd);
    free(big);
}

static void case_fail(void)
{
    make_file(8);
    unsigned char *b = malloc(8 * MIB);
    int fd = cold_open(O_RDONLY);
    ssize_t r = read(fd, b, 8 * MIB);
    printf("read rc=%ld\n", (long)r);
    fflush(stdout);
    printf("sum %016llx\n", (unsigned long long)fnv(b, 8 * MIB));
    close(fd);
    free(b);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rd OUTDIR [all|fail]\n");
        return 2;
    }
    snprintf(path, sizeof(path), "%s/rd.dat", argv[1]);
    const char *c = argc > 2 ? argv[2] : "all";
    if (strcmp(c, "fail") == 0)
        case_fail();
    else
        case_all();
    return 0;
}
