/* filecalls.c — N rounds of three 8-byte file calls that unblock leaves to the
 * kernel: a pwrite at a scattered position, an lseek to another, a read there,
 * on one descriptor open for reading and writing (followed by write-behind,
 * never merged: no two writes continue each other).  What they cost on their
 * way to the kernel (tests/integration/fastpath_count.py counts the
 * instructions; src/fileio/fastpath.h).
 * usage: filecalls N   (works in a file of the current directory) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 4096

static off_t slot_at(long i)
{
    return (off_t)(((unsigned long)i * 2731u) % SLOTS) * 8;
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
    printf("%s: %ld rounds, %ld wrong\n", bad ? "MISMATCH" : "ok", n, bad);
    return bad != 0;
}
