/* filecalls.c — N rounds of three 8-byte file calls that unblock leaves to the
 * kernel: a pwrite at a scattered position, an lseek to another, a read there,
 * on one descriptor open for reading and writing (followed by write-behind,
 * never merged: no two writes continue each other).  What they cost on their
 * way to the kernel (tests/integration/fastpath_count.py counts the
 * instructions; src/fileio/fastpath.h).  First, tries of merging that a log
 * line ends each (8-byte writes to one file, each followed by a line in a log
 * opened O_APPEND): each try leaves the crash-safety sidecar a descriptor to let
 * go of, and the rounds after must take the fast path all the same (before,
 * every file call took the full path until the next MPI call or process start).
 * usage: filecalls N   (works in files of the current directory) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SLOTS 4096

static off_t slot_at(long i)
{
    return (off_t)(((unsigned long)i * 2731u) % SLOTS) * 8;
}

/* 40 pairs: merging tried after 3, 6 and 12 writes in sequence, each try
 * ended by the next line (src/fileio/drain.c: settle_locked). */
static int tries(void)
{
    int data = open("filecalls.tried", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    int log = open("filecalls.log", O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
    if (data < 0 || log < 0)
        return -1;
    for (int i = 0; i < 40; i++)
        if (write(data, "12345678", 8) != 8 || write(log, "x\n", 2) != 2)
            return -1;
    struct stat st;
    if (fstat(data, &st) != 0 || st.st_size != 320 || close(data) != 0 || close(log) != 0)
        return -1;
    /* No call that names a path from here to the rounds: it would wait for the
     * sidecar (news). */
    usleep(20000); /* (the sidecar lets go meanwhile; a late one only slows a few rounds) */
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000, bad = 0;
    const char *path = "filecalls.bin";

    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (fd < 0 || ftruncate(fd, SLOTS * 8) != 0) {
        perror("filecalls: open");
        return 1;
    }
    if (tries() != 0) {
        perror("filecalls: tries");
        return 1;
    }
    for (long i = 0; i < n; i++) {
        char out[8], in[8];
        memcpy(out, &i, sizeof(out));
        if (pwrite(fd, out, 8, slot_at(i)) != 8 || lseek(fd, slot_at(i), SEEK_SET) != slot_at(i) ||
            read(fd, in, 8) != 8) {
            perror("filecalls");
            return 1;
        }
        bad += memcmp(in, out, 8) != 0;
    }
    close(fd);
    unlink(path);
    unlink("filecalls.tried");
    unlink("filecalls.log");
    printf("%s: %ld rounds, %ld wrong\n", bad ? "MISMATCH" : "ok", n, bad);
    return bad != 0;
}
