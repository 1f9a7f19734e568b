/* tracecalls.c — known reads and writes, for the UNBLOCK_TRACE test
 * (tests/integration/trace_check.py): each call that moved bytes of a regular file
 * is logged on stdout as "pid op path offset length", so that the check can build
 * the trace the runtime must have written; calls on a pipe are made too (never
 * traced).  Covers: runs of write() merged by write-behind and of pwrite(), two
 * files written in turn (one O_APPEND, not followed), lseek+read, read at the
 * end of the file, pread, readv/writev, preadv/pwritev, a read-only descriptor
 * read ahead, dup2 onto a traced number, and a fork child that writes a file of
 * its own (traced with UNBLOCK_CHILDREN=1).  usage: tracecalls DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[2048];

static const char *at(const char *name)
{
    static char p[4][2200];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
    return p[k];
}

static void need(int ok, const char *what)
{
    if (!ok) {
        perror(what);
        exit(1);
    }
}

/* One call that moved r bytes at off of `name` (logged when it moved any). */
static void logged(char op, const char *name, long long off, long long r)
{
    if (r > 0)
        printf("%d %c %s %lld %lld\n", (int)getpid(), op, at(name), off, r);
}

int main(int argc, char **argv)
{
    need(argc == 2, "usage: tracecalls DIR");
    snprintf(dir, sizeof(dir), "%s", argv[1]);
    char b[4096];
    memset(b, 'a', sizeof(b));
    int a = open(at("a.bin"), O_CREAT | O_TRUNC | O_RDWR, 0644);
    int ap = open(at("append.log"), O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
    int p[2];
    need(a >= 0 && ap >= 0 && pipe(p) == 0, "open");
    long long pos = 0, r;
    for (int i = 0; i < 10; i++) { /* merged after the third */
        r = write(a, b, 16);
        logged('W', "a.bin", pos, r);
        pos += r;
    }
    for (int i = 0; i < 5; i++) { /* two files in turn, and a pipe between */
        r = write(a, b, 8);
        logged('W', "a.bin", pos, r);
        pos += r;
        r = write(ap, b, 1);
        logged('W', "append.log", i, r);
        need(write(p[1], "x", 1) == 1 && read(p[0], b + 100, 1) == 1, "pipe");
    }
    r = pwrite(a, b, 8, 1000);
    logged('W', "a.bin", 1000, r);
    r = pwrite(a, b, 8, 1008);
    logged('W', "a.bin", 1008, r);
    r = pwrite(a, b, 8, 500);
    logged('W', "a.bin", 500, r);
    need(lseek(a, 0, SEEK_SET) == 0, "lseek");
    pos = 0;
    for (int i = 0; i < 3; i++) {
        r = read(a, b, 32);
        logged('R', "a.bin", pos, r);
        pos += r;
    }
    need(lseek(a, 1010, SEEK_SET) == 1010, "lseek");
    r = read(a, b, 64); /* the end of the file: 6 bytes */
    logged('R', "a.bin", 1010, r);
    r = read(a, b, 64); /* nothing */
    logged('R', "a.bin", 1016, r);
    r = pread(a, b, 16, 100);
    logged('R', "a.bin", 100, r);
    r = pread(a, b, 16, 116);
    logged('R', "a.bin", 116, r);
    struct iovec v[2] = { { b, 4 }, { b + 4, 12 } };
    need(lseek(a, 2000, SEEK_SET) == 2000, "lseek");
    r = writev(a, v, 2);
    logged('W', "a.bin", 2000, r);
    r = pwritev(a, v, 2, 2016);
    logged('W', "a.bin", 2016, r);
    r = preadv(a, v, 2, 0);
    logged('R', "a.bin", 0, r);
    need(lseek(a, 2000, SEEK_SET) == 2000, "lseek");
    r = readv(a, v, 2);
    logged('R', "a.bin", 2000, r);
    /* dup2 onto the number of the appended file: from now on it is a.bin's. */
    need(dup2(a, ap) == ap && lseek(ap, 0, SEEK_SET) == 0, "dup2");
    r = read(ap, b, 10);
    logged('R', "a.bin", 0, r);
    need(close(ap) == 0 && close(a) == 0, "close");

    printf("%d fork\n", (int)getpid()); /* the runs open so far are written now */
    fflush(stdout);
    pid_t child = fork();
    need(child >= 0, "fork");
    if (child == 0) {
        int c = open(at("child.bin"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
        need(c >= 0, "open");
        for (int i = 0; i < 3; i++) {
            r = write(c, b, 100);
            logged('W', "child.bin", 100 * i, r);
        }
        close(c);
        fflush(stdout);
        exit(0);
    }
    int status;
    need(waitpid(child, &status, 0) == child && WIFEXITED(status), "wait");

    int rd = open(at("a.bin"), O_RDONLY); /* read ahead after 3 small reads */
    need(rd >= 0, "open");
    pos = 0;
    for (int i = 0; i < 100; i++) {
        r = read(rd, b, 20);
        logged('R', "a.bin", pos, r);
        pos += r;
    }
    close(rd);
    close(p[0]);
    close(p[1]);
    printf("done\n");
    return 0;
}
