/* test_merge.c — write merging (src/fileio/merge.c), through the wrappers of
 * open, write, lseek and close that this test program is linked with: small
 * sequential writes are merged (counted), and whoever looks at the file (the
 * descriptor's own lseek, another descriptor, the kernel after close) sees every
 * byte, in place, the program's patches included. */
#define _GNU_SOURCE
#include "core/core.h"
#include "core/options.h"
#include "core/stats.h"
#include "fileio/writebehind.h"
#include "test.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N 3000
#define REC 8

static unsigned char want[N * REC];

static void record(unsigned char *p, int i)
{
    for (int k = 0; k < REC; k++)
        p[k] = (unsigned char)(i * 13 + k * 7 + 1);
}

/* The file's bytes as the kernel has them (raw system calls, no wrapper). */
static long file_bytes(const char *path, unsigned char *buf, size_t cap)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
    long got = 0, r;
    while (fd >= 0 && (r = syscall(SYS_read, fd, buf + got, cap - got)) > 0)
        got += r;
    if (fd >= 0)
        syscall(SYS_close, fd);
    return got;
}

static void test_small_writes_merge_and_land_in_place(void)
{
    char dir[] = "/tmp/unblock-merge-XXXXXX", path[64];
    ASSERT(mkdtemp(dir) != NULL);
    snprintf(path, sizeof(path), "%s/f", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT(fd >= 0);
    uint64_t merged0 = unblock_stats.io_merged;
    for (int i = 0; i < N; i++) {
        record(want + i * REC, i);
        ASSERT_EQ(write(fd, want + i * REC, REC), REC);
    }
    unblock_wb_fold();
    ASSERT(unblock_stats.io_merged - merged0 > N - 10); /* all but the first few */
    /* Not in the file yet: the merged block holds them. */
    static unsigned char got[N * REC + 4096];
    ASSERT(file_bytes(path, got, sizeof(got)) < N * REC);
    /* The descriptor's own offset is where the program wrote to. */
    ASSERT_EQ(lseek(fd, 0, SEEK_CUR), N * REC);
    /* Another descriptor (a path call: the block goes first) sees every byte. */
    int rd = open(path, O_RDONLY);
    long n = 0, r;
    while ((r = read(rd, got + n, sizeof(got) - n)) > 0)
        n += r;
    close(rd);
    ASSERT_EQ(n, N * REC);
    ASSERT(memcmp(got, want, N * REC) == 0);
    /* A patch in the middle, then more small writes at the end. */
    unsigned char patch[REC] = { 'p', 'a', 't', 'c', 'h', '!', '!', '!' };
    ASSERT_EQ(lseek(fd, 100 * REC, SEEK_SET), 100 * REC);
    ASSERT_EQ(write(fd, patch, REC), REC);
    memcpy(want + 100 * REC, patch, REC);
    ASSERT_EQ(lseek(fd, 0, SEEK_END), N * REC);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(write(fd, patch, REC), REC);
    ASSERT_EQ(close(fd), 0);
    n = file_bytes(path, got, sizeof(got));
    ASSERT_EQ(n, N * REC + 5 * REC);
    ASSERT(memcmp(got, want, N * REC) == 0);
    ASSERT(memcmp(got + N * REC + 4 * REC, patch, REC) == 0);
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    unblock_opt.io_merge_gain = 0; /* always merged, untimed: deterministic */
    ASSERT(unblock_g.active);      /* the constructor made this process the program */
    RUN_TEST(test_small_writes_merge_and_land_in_place);
    return TEST_SUMMARY();
}
