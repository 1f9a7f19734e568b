/* fileio.c — the file I/O micro-benchmarks (serial).  Prints "KEY VALUE" lines.
 *
 *   writes      loops of 8 B, 64 B and 4 KiB writes, with write() and with fwrite():
 *               "write.<size>_ns" and "fwrite.<size>_ns" per call (16 MiB or
 *               --calls calls per loop, whichever is fewer; 200 000 by default)
 *   checkpoint  a 64 MiB buffer written with write() in 1 MiB calls, then a
 *               computation that overwrites the buffer, then fsync:
 *               "checkpoint.write_ms", "checkpoint.compute_ms", "checkpoint.fsync_ms",
 *               "checkpoint.total_ms"; with --repeat N, N checkpoints of the same
 *               buffer, the first one's figures as above and the last one's as
 *               "checkpoint.last_write_ms" and so on (what a run that checkpoints
 *               every few steps pays after the first)
 *   reads       loops of 8 B and 64 B reads with read() and fread() ("read.<size>_ns",
 *               "fread.<size>_ns", --calls per loop at most), 8 B reads with a
 *               stat() every 50 or an fflush() every 100 ("read.8_stat50_ns",
 *               "read.8_fflush100_ns"), sequential 4 KiB
 *               reads of a 64 MiB file ("read.small_ms"), and 8 MiB
 *               reads each consumed bottom-to-top with computation in between
 *               ("read.bottom_up_ms"), and one read() of the whole file consumed
 *               1 MiB after another with 4 passes of work over each
 *               ("read.progressive_ms", "read.progressive_call_ms": the read()
 *               call alone)
 *   steps       20 steps of a simple solver's loop: a 2 MiB grid written one 4 KiB
 *               row per pwrite(), then an 8 MiB scratch array allocated, computed
 *               on and freed ("steps.write_ms", "steps.compute_ms" per step): what
 *               write merging and the allocator cost such a loop
 *   positioned  8-byte transfers at explicit positions scattered over a 1 MiB file,
 *               none of which unblock converts: lseek+write, then lseek+read on a
 *               read-only descriptor ("positioned.lseek_write_ns",
 *               "positioned.lseek_read_ns" per pair), pwrite and pread
 *               ("positioned.pwrite_ns", "positioned.pread_ns"); --calls
 *               transfers per loop (10^6 by default here); each also as
 *               "..._cpu_ns", the process's CPU time (steadier on a loaded machine)
 *   placed      IOR's POSIX transfers (ior -a POSIX -t 8): --calls 8-byte writes
 *               in sequence, each after an lseek to where the last one ended,
 *               then as many reads the same way on a read-only descriptor,
 *               checked ("placed.lseek_write_ns", "placed.lseek_read_ns" per
 *               pair, 10^6 by default; "..._cpu_ns" too)
 *   closed      --calls times (200 by default here): open a file, write a 512 KiB
 *               grid one 2 KiB row per pwrite(), close it: a small checkpoint
 *               closed right after it is written ("closed.open_us",
 *               "closed.write_us", "closed.close_us", "closed.total_us", means)
 *   interleave  --calls 8-byte writes to one file, each followed by a 1-byte write
 *               to another (10^6 by default): "interleave.pair_ns" per pair,
 *               "interleave.total_ms"; then the same with the other file opened
 *               O_APPEND (a log: never merged, so each write to it is news that
 *               the first file was written): "interleave.append_pair_ns"; CPU
 *               time per pair as "..._cpu_ns"
 *
 * usage: fileio DIR writes|checkpoint|reads|steps|positioned|placed|interleave|closed
 *   [--mib N]
 *   [--calls N] [--repeat N] [--cold]
 *   --cold drops the page cache before reading (root; otherwise says so and reads
 *   warm). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* CPU time of the whole process (its threads included): on a loaded machine the
 * steadier measure of a loop of system calls (the *_cpu_ns keys). */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void need(int ok, const char *what)
{
    if (!ok) {
        perror(what);
        exit(1);
    }
}

static volatile double sink;

static void writes(const char *dir, long calls)
{
    static const int sizes[] = { 8, 64, 4096 };
    char path[4096], buf[4096];
    memset(buf, 'x', sizeof(buf));
    snprintf(path, sizeof(path), "%s/writes.bin", dir);
    for (unsigned s = 0; s < 3; s++) {
        long n = (16L << 20) / sizes[s];
        if (n > calls)
            n = calls;
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        need(fd >= 0, "open");
        double t0 = now_ms();
        for (long i = 0; i < n; i++)
            need(write(fd, buf, (size_t)sizes[s]) == sizes[s], "write");
        double t1 = now_ms();
        close(fd);
        printf("write.%d_ns %.1f\n", sizes[s], (t1 - t0) * 1e6 / n);
        FILE *f = fopen(path, "w");
        need(f != NULL, "fopen");
        t0 = now_ms();
        for (long i = 0; i < n; i++)
            need(fwrite(buf, 1, (size_t)sizes[s], f) == (size_t)sizes[s], "fwrite");
        fflush(f);
        t1 = now_ms();
        fclose(f);
        printf("fwrite.%d_ns %.1f\n", sizes[s], (t1 - t0) * 1e6 / n);
    }
    unlink(path);
}

static void checkpoint(const char *dir, int mib, int repeat)
{
    size_t len = (size_t)mib << 20;
    double *a = malloc(len);
    need(a != NULL, "malloc");
    for (size_t i = 0; i < len / sizeof(double); i++)
        a[i] = (double)i;
    for (int r = 0; r < repeat; r++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/checkpoint.bin", dir);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        need(fd >= 0, "open");
        double t0 = now_ms();
        for (size_t off = 0; off < len; off += 1 << 20)
            need(write(fd, (char *)a + off, 1 << 20) == 1 << 20, "write");
        double t1 = now_ms();
        for (int pass = 0; pass < 4; pass++) /* the next phase overwrites the buffer */
            for (size_t i = 0; i < len / sizeof(double); i++)
                a[i] = a[i] * 0.5 + 1.0;
        double t2 = now_ms();
        need(fsync(fd) == 0, "fsync");
        double t3 = now_ms();
        close(fd);
        sink = a[len / sizeof(double) / 2];
        if (r == 0 || r == repeat - 1) {
            const char *w = r == 0 ? "" : "last_";
            printf("checkpoint.%swrite_ms %.2f\ncheckpoint.%scompute_ms %.2f\n"
                   "checkpoint.%sfsync_ms %.2f\ncheckpoint.%stotal_ms %.2f\n", w, t1 - t0, w, t2 - t1,
                   w, t3 - t2, w, t3 - t0);
        }
        unlink(path);
    }
    free(a);
}

static void drop_caches(int cold)
{
    if (!cold)
        return;
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    if (fd < 0 || write(fd, "3\n", 2) != 2)
        fprintf(stderr, "fileio: cannot drop the page cache (not root?): reading warm\n");
    if (fd >= 0)
        close(fd);
}

/* Loops of 8 B and 64 B read() and fread() over the file, ns per call. */
static void small_reads(const char *path, size_t len, long calls)
{
    static const int sizes[] = { 8, 64 };
    char buf[64];
    long sum = 0;
    for (unsigned s = 0; s < 2; s++) {
        long n = (long)(len / (size_t)sizes[s]);
        if (n > calls)
            n = calls;
        int fd = open(path, O_RDONLY);
        need(fd >= 0, "open");
        double t0 = now_ms();
        for (long i = 0; i < n; i++) {
            need(read(fd, buf, (size_t)sizes[s]) == sizes[s], "read");
            sum += buf[1];
        }
        double t1 = now_ms();
        close(fd);
        printf("read.%d_ns %.1f\n", sizes[s], (t1 - t0) * 1e6 / n);
        FILE *f = fopen(path, "r");
        need(f != NULL, "fopen");
        t0 = now_ms();
        for (long i = 0; i < n; i++) {
            need(fread(buf, 1, (size_t)sizes[s], f) == (size_t)sizes[s], "fread");
            sum += buf[1];
        }
        t1 = now_ms();
        fclose(f);
        printf("fread.%d_ns %.1f\n", sizes[s], (t1 - t0) * 1e6 / n);
    }
    /* 8-byte reads with other calls in between: a stat() every 50 reads (news
     * may come in), an fflush() of another stream every 100 (news goes out). */
    long n = (long)(len / 8) < calls ? (long)(len / 8) : calls;
    for (int variant = 0; variant < 2; variant++) {
        int fd = open(path, O_RDONLY);
        FILE *other = fopen("/dev/null", "w");
        need(fd >= 0 && other != NULL, "open");
        struct stat st;
        double t0 = now_ms();
        for (long i = 0; i < n; i++) {
            need(read(fd, buf, 8) == 8, "read");
            sum += buf[1];
            if (variant == 0 && i % 50 == 49)
                need(stat(path, &st) == 0, "stat");
            if (variant == 1 && i % 100 == 99) {
                fprintf(other, "%ld\n", i);
                fflush(other);
            }
        }
        double t1 = now_ms();
        close(fd);
        fclose(other);
        printf("read.8_%s_ns %.1f\n", variant ? "fflush100" : "stat50", (t1 - t0) * 1e6 / n);
    }
    sink += (double)sum;
}

static void reads(const char *dir, int mib, int cold, long calls)
{
    size_t len = (size_t)mib << 20;
    char path[4096];
    snprintf(path, sizeof(path), "%s/reads.bin", dir);
    char *a = malloc(len);
    need(a != NULL, "malloc");
    memset(a, 7, len);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    need(fd >= 0 && write(fd, a, len) == (ssize_t)len, "write input");
    close(fd);

    small_reads(path, len, calls);
    drop_caches(cold);
    fd = open(path, O_RDONLY);
    double t0 = now_ms();
    char small[4096];
    long s = 0;
    while (read(fd, small, sizeof(small)) > 0)
        s += small[100];
    double t1 = now_ms();
    close(fd);
    printf("read.small_ms %.2f\n", t1 - t0);

    drop_caches(cold);
    fd = open(path, O_RDONLY);
    const size_t chunk = 8 << 20;
    t0 = now_ms();
    for (size_t off = 0; off < len; off += chunk) {
        need(read(fd, a, chunk) == (ssize_t)chunk, "read");
        double acc = 0;
        for (size_t i = chunk; i-- > 0;) /* consumed bottom-to-top, with work */
            acc += a[i] * 0.5;
        sink = acc;
    }
    t1 = now_ms();
    close(fd);
    printf("read.bottom_up_ms %.2f\n", t1 - t0);

    /* One large read, then work that consumes it from the start, block by block:
     * what a background read can hide. */
    drop_caches(cold);
    fd = open(path, O_RDONLY);
    t0 = now_ms();
    need(read(fd, a, len) == (ssize_t)len, "read");
    double tc = now_ms();
    double acc = 0;
    for (size_t blk = 0; blk < len; blk += 1 << 20)
        for (int pass = 1; pass <= 4; pass++)
            for (size_t i = blk; i < blk + (1 << 20) && i < len; i++)
                acc += a[i] * pass;
    t1 = now_ms();
    close(fd);
    sink += acc;
    printf("read.progressive_ms %.2f\nread.progressive_call_ms %.2f\n", t1 - t0, tc - t0);
    sink += (double)s;
    unlink(path);
    free(a);
}

static void steps(const char *dir)
{
    enum { ROW = 4096, ROWS = 512, STEPS = 20 };
    const size_t scratch = (size_t)8 << 20;
    char *grid = malloc((size_t)ROW * ROWS);
    need(grid != NULL, "malloc");
    memset(grid, 1, (size_t)ROW * ROWS);
    char path[4096];
    snprintf(path, sizeof(path), "%s/steps.bin", dir);
    double tw = 0, tc = 0;
    for (int s = 0; s < STEPS; s++) {
        double t0 = now_ms();
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        need(fd >= 0, "open");
        for (int i = 0; i < ROWS; i++)
            need(pwrite(fd, grid + (size_t)i * ROW, ROW, (off_t)i * ROW) == ROW, "pwrite");
        close(fd);
        double t1 = now_ms();
        double *m = malloc(scratch);
        need(m != NULL, "malloc");
        for (int pass = 0; pass < 4; pass++)
            for (size_t i = 0; i < scratch / sizeof(double); i++)
                m[i] = (pass ? m[i] : 0.0) * 0.5 + (double)i;
        sink = m[scratch / sizeof(double) / 2];
        free(m);
        tw += t1 - t0;
        tc += now_ms() - t1;
    }
    printf("steps.write_ms %.3f\nsteps.compute_ms %.3f\n", tw / STEPS, tc / STEPS);
    unlink(path);
    free(grid);
}

/* The position of the i-th 8-byte transfer: every slot of a 1 MiB file once per
 * 2^17 transfers, in an order the kernel's read-ahead cannot follow. */
static off_t scattered(long i)
{
    return (off_t)(((unsigned long)i * 40503u) & ((1u << 17) - 1)) * 8;
}

/* Prints KEY_ns and KEY_cpu_ns per call for a loop timed from (t0, c0). */
static void per_call(const char *key, double t0, double c0, long calls)
{
    printf("%s_ns %.1f\n%s_cpu_ns %.1f\n", key, (now_ms() - t0) * 1e6 / calls, key,
           (cpu_ms() - c0) * 1e6 / calls);
}

static void positioned(const char *dir, long calls)
{
    char path[4096], buf[8] = "12345678";
    snprintf(path, sizeof(path), "%s/positioned.bin", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    need(fd >= 0 && ftruncate(fd, 1 << 20) == 0, "open");
    double t0 = now_ms(), c0 = cpu_ms();
    for (long i = 0; i < calls; i++)
        need(lseek(fd, scattered(i), SEEK_SET) >= 0 && write(fd, buf, 8) == 8, "lseek+write");
    per_call("positioned.lseek_write", t0, c0, calls);
    t0 = now_ms(), c0 = cpu_ms();
    for (long i = 0; i < calls; i++)
        need(pwrite(fd, buf, 8, scattered(i)) == 8, "pwrite");
    per_call("positioned.pwrite", t0, c0, calls);
    close(fd);
    fd = open(path, O_RDONLY);
    need(fd >= 0, "open");
    long sum = 0;
    t0 = now_ms(), c0 = cpu_ms();
    for (long i = 0; i < calls; i++) {
        need(lseek(fd, scattered(i), SEEK_SET) >= 0 && read(fd, buf, 8) == 8, "lseek+read");
        sum += buf[i & 7];
    }
    per_call("positioned.lseek_read", t0, c0, calls);
    t0 = now_ms(), c0 = cpu_ms();
    for (long i = 0; i < calls; i++) {
        need(pread(fd, buf, 8, scattered(i)) == 8, "pread");
        sum += buf[i & 7];
    }
    per_call("positioned.pread", t0, c0, calls);
    close(fd);
    need(calls % 8 != 0 || sum == calls / 4 * 420, "data"); /* '1'+...+'8' per 8 reads */
    unlink(path);
}

static void placed(const char *dir, long calls)
{
    char path[4096], buf[8];
    snprintf(path, sizeof(path), "%s/placed.bin", dir);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    need(fd >= 0, "open");
    double t0 = now_ms(), c0 = cpu_ms();
    for (long i = 0; i < calls; i++) {
        memcpy(buf, &i, sizeof(buf));
        need(lseek(fd, (off_t)i * 8, SEEK_SET) == (off_t)i * 8 && write(fd, buf, 8) == 8,
             "lseek+write");
    }
    per_call("placed.lseek_write", t0, c0, calls);
    need(close(fd) == 0, "close");
    fd = open(path, O_RDONLY);
    need(fd >= 0, "open");
    long bad = 0;
    t0 = now_ms(), c0 = cpu_ms();
    for (long i = 0; i < calls; i++) {
        long v;
        need(lseek(fd, (off_t)i * 8, SEEK_SET) == (off_t)i * 8 && read(fd, buf, 8) == 8,
             "lseek+read");
        memcpy(&v, buf, sizeof(v));
        bad += v != i;
    }
    per_call("placed.lseek_read", t0, c0, calls);
    close(fd);
    need(bad == 0, "data");
    unlink(path);
}

static void closed(const char *dir, long calls)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/closed.bin", dir);
    enum { ROW = 2048, ROWS = 256 };
    static char row[ROW];
    double to = 0, tw = 0, tc = 0;
    for (long r = 0; r < calls; r++) {
        memset(row, 'a' + (int)(r % 26), sizeof(row));
        double t0 = now_ms();
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        need(fd >= 0, "open");
        double t1 = now_ms();
        for (int i = 0; i < ROWS; i++)
            need(pwrite(fd, row, ROW, (off_t)i * ROW) == ROW, "pwrite");
        double t2 = now_ms();
        need(close(fd) == 0, "close");
        double t3 = now_ms();
        to += t1 - t0, tw += t2 - t1, tc += t3 - t2;
    }
    /* The last grid, whole, in the file. */
    int fd = open(path, O_RDONLY);
    static char back[ROW];
    need(fd >= 0, "open for reading");
    for (int i = 0; i < ROWS; i++)
        need(pread(fd, back, ROW, (off_t)i * ROW) == ROW && memcmp(back, row, ROW) == 0, "data");
    close(fd);
    unlink(path);
    printf("closed.open_us %.2f\nclosed.write_us %.2f\nclosed.close_us %.2f\nclosed.total_us %.2f\n",
           to * 1e3 / calls, tw * 1e3 / calls, tc * 1e3 / calls, (to + tw + tc) * 1e3 / calls);
}

static double interleave_once(const char *a, const char *b, long calls, int append, double *cpu)
{
    int fa = open(a, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    int fb = open(b, O_CREAT | O_TRUNC | O_WRONLY | (append ? O_APPEND : 0), 0644);
    need(fa >= 0 && fb >= 0, "open");
    double t0 = now_ms(), c0 = cpu_ms();
    for (long i = 0; i < calls; i++)
        need(write(fa, "12345678", 8) == 8 && write(fb, "x", 1) == 1, "write");
    double t1 = now_ms();
    *cpu = cpu_ms() - c0;
    need(close(fa) == 0 && close(fb) == 0, "close");
    struct stat sa, sb;
    need(stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_size == 8 * calls &&
         sb.st_size == calls, "sizes");
    unlink(a);
    unlink(b);
    return t1 - t0;
}

static void interleave(const char *dir, long calls)
{
    char a[4096], b[4096];
    snprintf(a, sizeof(a), "%s/interleave.a", dir);
    snprintf(b, sizeof(b), "%s/interleave.b", dir);
    double c, t = interleave_once(a, b, calls, 0, &c);
    printf("interleave.pair_ns %.1f\ninterleave.pair_cpu_ns %.1f\ninterleave.total_ms %.1f\n",
           t * 1e6 / calls, c * 1e6 / calls, t);
    t = interleave_once(a, b, calls, 1, &c);
    printf("interleave.append_pair_ns %.1f\ninterleave.append_pair_cpu_ns %.1f\n", t * 1e6 / calls,
           c * 1e6 / calls);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: fileio DIR writes|checkpoint|reads|steps|positioned|placed|interleave|closed "
                        "[--mib N] [--calls N] "
                        "[--repeat N] [--cold]\n");
        return 2;
    }
    int mib = 64, cold = 0, repeat = 1;
    long calls = strcmp(argv[2], "positioned") == 0 || strcmp(argv[2], "interleave") == 0 ||
                         strcmp(argv[2], "placed") == 0
                     ? 1000000 : strcmp(argv[2], "closed") == 0 ? 200 : 200000;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--mib") == 0 && i + 1 < argc)
            mib = atoi(argv[++i]);
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            calls = atol(argv[++i]);
        else if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else if (strcmp(argv[i], "--cold") == 0)
            cold = 1;
    }
    if (strcmp(argv[2], "writes") == 0)
        writes(argv[1], calls);
    else if (strcmp(argv[2], "checkpoint") == 0)
        checkpoint(argv[1], mib, repeat);
    else if (strcmp(argv[2], "reads") == 0)
        reads(argv[1], mib, cold, calls);
    else if (strcmp(argv[2], "steps") == 0)
        steps(argv[1]);
    else if (strcmp(argv[2], "positioned") == 0)
        positioned(argv[1], calls);
    else if (strcmp(argv[2], "interleave") == 0)
        interleave(argv[1], calls);
    else if (strcmp(argv[2], "placed") == 0)
        placed(argv[1], calls);
    else if (strcmp(argv[2], "closed") == 0)
        closed(argv[1], calls);
    else
        return 2;
    return 0;
}
