/* records.h — what the write-behind test programs (wb.c, wbsync.c, dup2own.c,
 * sigend.c, mpisigend.c) write: 8-byte records "%07d\n", one write() each, into
 * files of an output directory; and the check of a file a signal ended. */
#ifndef UNBLOCK_TESTS_RECORDS_H
#define UNBLOCK_TESTS_RECORDS_H

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

/* A page of file dir/name shared with other processes (a count of records
 * written); `create`: made (and emptied) first.  Exits 2 if it cannot be. */
static inline volatile long *shared_page(const char *dir, const char *name, int create)
{
    int c = open_in(dir, name, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR);
    if (create && ftruncate(c, 4096) != 0)
        exit(2);
    void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, c, 0);
    close(c);
    if (m == MAP_FAILED)
        exit(2);
    return (volatile long *)m;
}

/* Scans file f from its start: records 0, 1, ... in order, at most max of
 * them, with a signal handler's lines "SIGNAL!\n" among them (marks_last:
 * only after the last record).  Stops at the end of the file or at the first
 * 8 bytes that are neither (a piece of a record at the end included); returns
 * that offset, with the records and lines before it in *recs and *marks, or -1
 * if f cannot be read. */
static inline long scan_records(int f, long max, int marks_last, long *recs, long *marks)
{
    static char buf[1 << 16];
    char r[9];
    long at = 0;
    *recs = *marks = 0;
    for (;;) {
        ssize_t got = pread(f, buf, sizeof(buf), at);
        if (got < 0)
            return -1;
        for (ssize_t i = 0; i + 8 <= got; i += 8, at += 8) {
            if (memcmp(buf + i, "SIGNAL!\n", 8) == 0) {
                (*marks)++;
                continue;
            }
            if (*recs == max || (marks_last && *marks))
                return at;
            record(r, (int)*recs);
            if (memcmp(buf + i, r, 8) != 0)
                return at;
            (*recs)++;
        }
        if (got < (ssize_t)sizeof(buf))
            return at;
    }
}

/* NULL if dir/name holds records 0..k-1, k = n or n + 1 (the write a signal
 * came after may be there), then a handler's line "SIGNAL!\n" (line: 1 it must,
 * 0 it must not, 2 it may), and nothing else; else what is wrong. */
static inline const char *check_ended(const char *dir, const char *name, long n, int line)
{
    int f = open_in(dir, name, O_RDONLY);
    struct stat st;
    long recs, lines, end = fstat(f, &st) == 0 ? scan_records(f, LONG_MAX, 1, &recs, &lines) : -1;
    close(f);
    if (end < 0)
        return "cannot be read";
    if (st.st_size % 8 != 0)
        return "holds a piece of a record";
    if (end != (long)st.st_size)
        return "holds a record out of place";
    if (recs < n || recs > n + 1)
        return "holds another count of records than were written";
    if (lines > 1 || (lines == 1 && line == 0))
        return "holds a handler's line that was not written";
    if (lines == 0 && line == 1)
        return "lacks the handler's line at its end";
    return NULL;
}

#endif
