/* dup2own.c — a program that picks descriptor numbers itself: dup2 and dup3 of
 * its log onto every number from 50 to 79 (free without unblock; under unblock
 * the runtime keeps descriptors of its own there: the crash-safety sidecar's
 * socket, the trace's file, numbered high so that the program's opens get the
 * numbers they would get without it).  Around it, small writes that
 * write-behind merges, so the sidecar and the trace are busy before and after.
 * The log must hold the program's lines only and the data file every record
 * (the harness compares both with a run without unblock); each number must
 * be the log after the call (fstat against the log's inode).
 * Prints MISMATCH and exits 1 on wrong data.
 * usage: dup2own OUTDIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "records.h"

#define FIRST 50
#define LAST 79


int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: dup2own OUTDIR\n");
        return 2;
    }
    char p[4096];
    snprintf(p, sizeof(p), "%s/data", argv[1]);
    int data = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    snprintf(p, sizeof(p), "%s/log", argv[1]);
    int log = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (data < 0 || log < 0 || data >= FIRST || log >= FIRST) {
        perror("open");
        return 2;
    }
    records(data, 0, 20000);
    struct stat want, got;
    fstat(log, &want);
    int bad = 0;
    for (int fd = FIRST; fd <= LAST; fd++) {
        int r = fd % 2 ? dup2(log, fd) : dup3(log, fd, O_CLOEXEC);
        if (r != fd || fstat(fd, &got) != 0 || got.st_ino != want.st_ino) {
            printf("MISMATCH: descriptor %d is not the log after dup%s\n", fd, fd % 2 ? "2" : "3");
            bad = 1;
        }
        records(data, 20000 + 100 * (fd - FIRST), 20100 + 100 * (fd - FIRST));
        char line[32];
        int n = snprintf(line, sizeof(line), "through %d\n", fd);
        if (write(fd, line, (size_t)n) != n) {
            printf("MISMATCH: a line through %d\n", fd);
            bad = 1;
        }
    }
    records(data, 30000, 50000);
    for (int fd = FIRST; fd <= LAST; fd++)
        if (close(fd) != 0) {
            printf("MISMATCH: close(%d)\n", fd);
            bad = 1;
        }
    if (close(data) != 0 || close(log) != 0) {
        printf("MISMATCH: close\n");
        bad = 1;
    }
    printf("%s\n", bad ? "MISMATCH" : "ok");
    return bad;
}
