/* The real run: the kernel KERNEL (a C file: the original or what unblock plan
 * made of it) with its disk-resident array U in the file DIR/U.dat, read and
 * written through a buffer manager of FRAMES frames of one stripe (STRIPE
 * bytes) each, LRU, pread on a miss and pwrite of a changed frame when it is
 * evicted or at the end.  The page cache is kept out of it (POSIX_FADV_RANDOM,
 * and POSIX_FADV_DONTNEED after each transfer), so every miss is one read
 * request to the filesystem.  Writes U, V, W to stdout as the in-memory driver
 * does; prints the misses, write-backs and the kernel's time to stderr.
 *
 *   cc -DKERNEL='"k.c"' -DFRAMES=2 -DSTRIPE=4096 run.c -o run && ./run DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int fd;
    long misses, writebacks;
} ub_file_t;

static struct {
    ub_file_t *f;
    long stripe, used;
    char data[STRIPE], orig[STRIPE];
} frames[FRAMES];
static long ub_clock;
static ub_file_t ub_U;

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void writeback(int k)
{
    if (frames[k].f && memcmp(frames[k].data, frames[k].orig, STRIPE) != 0) {
        if (pwrite(frames[k].f->fd, frames[k].data, STRIPE, frames[k].stripe * STRIPE) != STRIPE)
            die("pwrite");
        /* (clean first: a dirty page, or one still being written, is not dropped,
         * and a later miss of the stripe was then served by the page cache, not
         * the file system: one request fewer than the simulator's fetches in a
         * loaded run) */
        if (fdatasync(frames[k].f->fd) != 0)
            die("fdatasync");
        posix_fadvise(frames[k].f->fd, frames[k].stripe * STRIPE, STRIPE, POSIX_FADV_DONTNEED);
        frames[k].f->writebacks++;
    }
}

static void *ub_at(ub_file_t *f, long byte)
{
    long stripe = byte / STRIPE;
    int victim = 0;
    for (int k = 0; k < FRAMES; k++) {
        if (frames[k].f == f && frames[k].stripe == stripe) {
            frames[k].used = ++ub_clock;
            return frames[k].data + byte % STRIPE;
        }
        if (frames[k].used < frames[victim].used)
            victim = k;
    }
    writeback(victim);
    if (pread(f->fd, frames[victim].data, STRIPE, stripe * STRIPE) != STRIPE)
        die("pread");
    posix_fadvise(f->fd, stripe * STRIPE, STRIPE, POSIX_FADV_DONTNEED);
    memcpy(frames[victim].orig, frames[victim].data, STRIPE);
    frames[victim].f = f;
    frames[victim].stripe = stripe;
    frames[victim].used = ++ub_clock;
    f->misses++;
    return frames[victim].data + byte % STRIPE;
}

#define AT(a, i, j) (*(double *)ub_at(&ub_##a, ((long)(i) * N + (long)(j)) * (long)sizeof(double)))
#include KERNEL

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: run DIR\n");
        return 2;
    }
    static double U[N][N], V[N], W[N];
    char path[4096];
    snprintf(path, sizeof(path), "%s/U.dat", argv[1]);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            U[i][j] = (double)((i * 37 + j * 11) % 101) / 7.0;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || pwrite(fd, U, sizeof(U), 0) != (ssize_t)sizeof(U) || fsync(fd) != 0)
        die(path);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    ub_U.fd = fd;
    memset(U, 0, sizeof(U));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    kernel(U, V, W);
    for (int k = 0; k < FRAMES; k++)
        writeback(k);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (pread(fd, U, sizeof(U), 0) != (ssize_t)sizeof(U))
        die("pread");
    close(fd);
    fwrite(U, sizeof(U), 1, stdout);
    fwrite(V, sizeof(V), 1, stdout);
    fwrite(W, sizeof(W), 1, stdout);
    fprintf(stderr, "misses %ld writebacks %ld seconds %.6f\n", ub_U.misses, ub_U.writebacks,
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    return 0;
}
