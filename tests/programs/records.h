/* records.h — what the write-behind test programs (wb.c, wbsync.c, dup2own.c,
 * sigend.c) write: 8-byte records "%07d\n", one write() each, into files of an
 * output directory. */
#ifndef UNBLOCK_TESTS_RECORDS_H
#define UNBLOCK_TESTS_RECORDS_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* dir/name opened with flags (mode 0644); exits 2 if it cannot be. */
static inline int open_in(const char *dir, const char *name, int flags)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    int fd = open(p, flags, 0644);
    if (fd < 0) {
        perror(p);
        exit(2);
    }
    return fd;
}

static inline void record(char *buf, int i)
{
    snprintf(buf, 9, "%07d\n", i % 10000000);
}

/* Records from .. to-1 with one write() each; how many did not write 8 bytes. */
static inline long write_records(int fd, int from, int to)
{
    char r[9];
    long bad = 0;
    for (int i = from; i < to; i++) {
        record(r, i);
        if (write(fd, r, 8) != 8)
            bad++;
    }
    return bad;
}

/* The same, exiting 2 when one was short. */
static inline void records(int fd, int from, int to)
{
    if (write_records(fd, from, to) != 0) {
        perror("write");
        exit(2);
    }
}

#endif
