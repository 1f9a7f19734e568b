/* wbsync.c — small writes merged by write-behind, then a call that makes the
 * file durable or reads and writes it in glibc's own threads (src/fileio/posix.c):
 *
 *   sync_file_range, syncfs, sync, aio_fsync: right after the call (aio_fsync:
 *       after its completion) the kernel holds every byte written before it
 *       (the file's size by a raw fstat, which no wrapper sees); before, they
 *       could still be in a block of ours, not made durable;
 *   aio_write over the last records, then waited for: the file holds its bytes
 *       (without unblock: the block of the records before it, written later,
 *       undid it; the harness compares the files);
 *   aio_read of the records just written: they are read back;
 *   lio_listio (LIO_WAIT) of a write and a read: the same.
 *
 * Each phase writes 30000 8-byte records first (merged under unblock: the
 * test expects io.merged), then makes its call, then 10 more records.
 * Prints MISMATCH and exits 1 on wrong data.
 * usage: wbsync OUTDIR */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "records.h"

#define RECORDS 30000

static const char *dir;
static int bad;

static int open_file(const char *name)
{
    return open_in(dir, name, O_RDWR | O_CREAT | O_TRUNC);
}


/* The kernel's size of fd's file, with no wrapper in the way. */
static long kernel_size(int fd)
{
    struct stat st;
    return syscall(SYS_fstat, fd, &st) == 0 ? (long)st.st_size : -1;
}

static void expect_size(const char *what, int fd, long want)
{
    long got = kernel_size(fd);
    if (got != want) {
        printf("MISMATCH: %s: the kernel holds %ld bytes of %ld\n", what, got, want);
        bad = 1;
    }
}

static void wait_aio(const char *what, struct aiocb *cb, ssize_t want)
{
    const struct aiocb *list[1] = { cb };
    while (aio_error(cb) == EINPROGRESS)
        aio_suspend(list, 1, NULL);
    ssize_t r = aio_return(cb);
    if (r != want) {
        printf("MISMATCH: %s returned %zd, not %zd\n", what, r, want);
        bad = 1;
    }
}

static void check_records(const char *what, const char *got, int from, int n)
{
    char r[9];
    for (int i = 0; i < n; i++) {
        record(r, from + i);
        if (memcmp(got + 8 * i, r, 8) != 0) {
            printf("MISMATCH: %s: record %d reads '%.7s'\n", what, from + i, got + 8 * i);
            bad = 1;
            return;
        }
    }
}

static void durable(const char *name)
{
    int fd = open_file(name);
    /* (syncfs through another descriptor, opened first: an open is news) */
    int other = strcmp(name, "syncfs") == 0 ? open_file("syncfs.other") : -1;
    records(fd, 0, RECORDS);
    struct aiocb cb = { .aio_fildes = fd };
    if (strcmp(name, "sync_file_range") == 0) {
        if (sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                                          SYNC_FILE_RANGE_WAIT_AFTER) != 0)
            perror("sync_file_range"), exit(2);
    } else if (strcmp(name, "syncfs") == 0) {
        if (syncfs(other) != 0)
            perror("syncfs"), exit(2);
        close(other);
    } else if (strcmp(name, "sync") == 0) {
        sync();
    } else {
        if (aio_fsync(O_SYNC, &cb) != 0)
            perror("aio_fsync"), exit(2);
        wait_aio("aio_fsync", &cb, 0);
    }
    expect_size(name, fd, 8L * RECORDS);
    records(fd, RECORDS, RECORDS + 10);
    close(fd);
}

/* aio_write of records 'a' over the last 100 written, then aio_read of them. */
static void aio_rw(void)
{
    int fd = open_file("aio");
    records(fd, 0, RECORDS);
    static char over[800], back[800];
    memset(over, 'a', sizeof(over));
    struct aiocb w = { .aio_fildes = fd, .aio_buf = over, .aio_nbytes = sizeof(over),
                       .aio_offset = 8L * (RECORDS - 100) };
    if (aio_write(&w) != 0)
        perror("aio_write"), exit(2);
    wait_aio("aio_write", &w, sizeof(over));
    records(fd, RECORDS, 2 * RECORDS);
    struct aiocb r = { .aio_fildes = fd, .aio_buf = back, .aio_nbytes = sizeof(back),
                       .aio_offset = 8L * (2 * RECORDS - 100) };
    if (aio_read(&r) != 0)
        perror("aio_read"), exit(2);
    wait_aio("aio_read", &r, sizeof(back));
    check_records("aio_read", back, 2 * RECORDS - 100, 100);
    records(fd, 2 * RECORDS, 2 * RECORDS + 10);
    close(fd);
}

/* lio_listio, LIO_WAIT: a write of 'l' over the last 50 records and a read of
 * the 50 before them. */
static void lio(void)
{
    int fd = open_file("lio");
    records(fd, 0, RECORDS);
    static char over[400], back[400];
    memset(over, 'l', sizeof(over));
    struct aiocb w = { .aio_fildes = fd, .aio_lio_opcode = LIO_WRITE, .aio_buf = over,
                       .aio_nbytes = sizeof(over), .aio_offset = 8L * (RECORDS - 50) };
    struct aiocb r = { .aio_fildes = fd, .aio_lio_opcode = LIO_READ, .aio_buf = back,
                       .aio_nbytes = sizeof(back), .aio_offset = 8L * (RECORDS - 100) };
    struct aiocb *list[2] = { &w, &r };
    if (lio_listio(LIO_WAIT, list, 2, NULL) != 0)
        perror("lio_listio"), exit(2);
    if (aio_return(&w) != (ssize_t)sizeof(over) || aio_return(&r) != (ssize_t)sizeof(back)) {
        printf("MISMATCH: lio_listio's transfers were short\n");
        bad = 1;
    }
    check_records("lio_listio", back, RECORDS - 100, 50);
    records(fd, RECORDS, RECORDS + 10);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: wbsync OUTDIR\n");
        return 2;
    }
    dir = argv[1];
    durable("sync_file_range");
    durable("syncfs");
    durable("sync");
    durable("aio_fsync");
    aio_rw();
    lio();
    printf("%s\n", bad ? "MISMATCH" : "ok");
    return bad;
}
