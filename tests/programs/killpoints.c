/* killpoints.c — a write-heavy program to be killed (SIGKILL) at any point.
 *
 * usage: killpoints FILE PROGRESS small|checkpoint
 *        killpoints --check FILE   (prints its size and the first byte that is
 *                                   not pattern(p), or -1)
 *
 * Byte p of FILE is always pattern(p), whatever the sizes of the writes, so a
 * file cut anywhere can be checked without the program.  After each write()
 * returns, the bytes handed to the kernel so far are stored in PROGRESS (8
 * bytes, mapped shared: the store outlives the process).  A kill at any point
 * must leave FILE with at least that many bytes, each pattern(p): nothing the
 * program handed to write() lost, and no hole (tests/integration/killpoints.py).
 *   small       9-byte writes, every 997th one 3000 bytes (merged blocks, and
 *               blocks handed over early)
 *   checkpoint  1 MiB writes from a buffer the program fills again between them */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static unsigned char pattern(uint64_t p)
{
    return (unsigned char)((p * 2654435761u) >> 11 ^ p >> 20);
}

static void fill(unsigned char *b, size_t n, uint64_t at)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(at + i);
}

static int check(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { /* killed before it opened the file */
        printf("0 -1\n");
        return 0;
    }
    static unsigned char b[1 << 16];
    uint64_t at = 0;
    long long bad = -1;
    size_t n;
    while (bad < 0 && (n = fread(b, 1, sizeof(b), f)) > 0) {
        for (size_t i = 0; i < n && bad < 0; i++)
            if (b[i] != pattern(at + i))
                bad = (long long)(at + i);
        at += n;
    }
    while ((n = fread(b, 1, sizeof(b), f)) > 0)
        at += n;
    fclose(f);
    printf("%llu %lld\n", (unsigned long long)at, bad);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--check") == 0)
        return check(argv[2]);
    if (argc != 4)
        return 2;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int pf = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || pf < 0 || ftruncate(pf, 4096) != 0)
        return 2;
    volatile uint64_t *progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, pf, 0);
    if (progress == MAP_FAILED)
        return 2;
    int checkpoint = strcmp(argv[3], "checkpoint") == 0;
    size_t cap = checkpoint ? (1u << 20) : 3000;
    unsigned char *b = malloc(cap);
    uint64_t at = 0, limit = checkpoint ? (256ull << 20) : (48ull << 20);
    for (long i = 0; at < limit; i++) {
        size_t n = checkpoint ? cap : i % 997 == 996 ? 3000 : 9;
        fill(b, n, at); /* the computation of the next piece */
        ssize_t r = write(fd, b, n);
        if (r != (ssize_t)n) {
            perror("write");
            return 1;
        }
        at += n;
        *progress = at;
    }
    close(fd);
    return 0;
}
