/* p2p.c — the blocking point-to-point calls (MPI_Send, MPI_Recv, MPI_Sendrecv,
 * MPI_Sendrecv_replace, MPI_Rsend, ...) in the situations that break a runtime
 * which completes them later behind page protection: a send buffer overwritten,
 * freed, realloc'd or filled by read() right after the send; a receive buffer read
 * (last byte first), or handed to write(), right after the receive; many messages
 * in flight with one tag; wildcards; stack, static, mmap'd and heap buffers;
 * overlapping send and receive ranges in the same pages; the other send modes and
 * zero-count messages.
 *
 * Ranks work in pairs (0,1), (2,3), ... (a last odd rank idles); `replace` and
 * `sendrecv` use a ring of all ranks.  The data depend on the sending rank, the
 * case and the message, so a misplaced or stale byte shows.  Each rank writes
 * OUTDIR/rank-<r>.txt: per check one line with the case, a checksum or the values
 * received, and "ok" or "MISMATCH" (against the data computed locally); the
 * transparency harness compares these files byte for byte, and OUTDIR/where-<r>.txt
 * saying where the rank ran (where.h).  The exit status is 0 even on a mismatch;
 * mismatches are also reported on stderr.
 *
 * usage: p2p OUTDIR CASE
 *   CASE: overwrite readafter order wildcard memkinds syscalls overlapping replace
 *         modes zero free sendrecv own coll chains ownsmall, or all (every case
 *         but ownsmall, in this order) */
#include <mpi.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "where.h"

#define KiB ((size_t)1024)
#define MiB ((size_t)1024 * 1024)
#define FNV0 0xcbf29ce484222325ULL

static int rank, size, peer; /* peer: rank ^ 1, or -1 on an idle rank */
static int left, right;      /* the ring of all ranks */
static MPI_Comm pair;        /* the pair (an idle rank alone) */
static const char *outdir;
static FILE *out;
static int case_id; /* the running case's index: part of every pattern */
static long checks, mismatches;

/* ---- data patterns and checks ---- */

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* The seed of message idx sent by rank src in the running case. */
static uint32_t seed_of(int src, int idx)
{
    return mix(0x9e3779b9U * (uint32_t)(case_id + 1) ^
               mix((uint32_t)src * 0x85ebca6bU + (uint32_t)idx * 0xc2b2ae35U + 17U));
}

/* Byte i of the pattern of a seed. */
static inline unsigned char pat(uint32_t seed, size_t i)
{
    return (unsigned char)(mix(seed + (uint32_t)(i >> 2) * 0x9e3779b1U) >> (8 * (i & 3)));
}

/* Bytes [off, off+n) of the pattern into p, first to last. */
static void fill(void *p, size_t n, uint32_t seed, size_t off)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = pat(seed, off + i);
}

/* The same, from the last byte back to the first (the last page is written first). */
static void fill_rev(void *p, size_t n, uint32_t seed, size_t off)
{
    unsigned char *c = p;
    for (size_t i = n; i-- > 0;)
        c[i] = pat(seed, off + i);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* One result line: the description, then ok or MISMATCH. */
static void result(int ok, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(out, "%s %s\n", msg, ok ? "ok" : "MISMATCH");
    checks++;
    if (!ok) {
        mismatches++;
        fprintf(stderr, "p2p rank %d: MISMATCH: %s\n", rank, msg);
    }
}

/* Counts the bytes of p[0..n) that differ from the pattern at [off, off+n). */
static size_t differ(const void *p, size_t n, uint32_t seed, size_t off, size_t *first)
{
    const unsigned char *c = p;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (c[i] != pat(seed, off + i)) {
            if (!bad)
                *first = i;
            bad++;
        }
    return bad;
}

/* Checks p[0..n) against the pattern at [off, off+n) and writes a line with the
 * checksum of the data (and where they differ). */
static int check(const void *p, size_t n, uint32_t seed, size_t off, const char *fmt, ...)
{
    char what[256], detail[96] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    size_t first = 0, bad = differ(p, n, seed, off, &first);
    if (bad)
        snprintf(detail, sizeof(detail), " (%zu of %zu bytes differ, first at %zu)", bad, n,
                 first);
    result(bad == 0, "%s: sum %016llx%s", what, (unsigned long long)fnv(FNV0, p, n), detail);
    return bad == 0;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "p2p: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static int count_of(MPI_Status *st, MPI_Datatype t)
{
    int n = -1;
    MPI_Get_count(st, t, &n);
    return n;
}

/* Directions: in dir 0 the even rank of the pair sends, in dir 1 the odd one. */
static int sends_in(int dir) { return (rank & 1) == dir; }

/* ---- the cases ---- */

static const size_t sizes5[] = {8, 3000, 64 * KiB, 1 * MiB, 4 * MiB};

/* MPI_Send, then the buffer is overwritten (from its end back) and sent again. */
static void case_overwrite(void)
{
    for (int dir = 0; dir < 2; dir++) {
        int src = sends_in(dir) ? rank : peer;
        for (int s = 0; s < 5; s++) {
            size_t n = sizes5[s];
            unsigned char *buf = xmalloc(n);
            if (sends_in(dir)) {
                fill(buf, n, seed_of(src, 2 * s), 0);
                MPI_Send(buf, (int)n, MPI_BYTE, peer, 10 + s, MPI_COMM_WORLD);
                fill_rev(buf, n, seed_of(src, 2 * s + 1), 0);
                MPI_Send(buf, (int)n, MPI_BYTE, peer, 10 + s, MPI_COMM_WORLD);
                memset(buf, 0xa5, n);
            } else {
                unsigned char *buf2 = xmalloc(n);
                MPI_Recv(buf, (int)n, MPI_BYTE, peer, 10 + s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(buf2, (int)n, MPI_BYTE, peer, 10 + s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(buf, n, seed_of(src, 2 * s), 0, "overwrite dir %d size %zu first", dir, n);
                check(buf2, n, seed_of(src, 2 * s + 1), 0, "overwrite dir %d size %zu second", dir,
                      n);
                free(buf2);
            }
            free(buf);
        }
    }
}

/* MPI_Recv, then the last byte, the first byte and the guard bytes around the buffer
 * (in the same pages) are read at once, then every element. */
static void case_readafter(void)
{
    for (int dir = 0; dir < 2; dir++) {
        int src = sends_in(dir) ? rank : peer;
        for (int s = 0; s < 5; s++) {
            size_t n = sizes5[s];
            uint32_t seed = seed_of(src, s);
            if (sends_in(dir)) {
                unsigned char *buf = xmalloc(n);
                fill(buf, n, seed, 0);
                MPI_Send(buf, (int)n, MPI_BYTE, peer, 20 + s, MPI_COMM_WORLD);
                free(buf);
                continue;
            }
            unsigned char *big = xmalloc(n + 2);
            big[0] = 0x5a;
            big[n + 1] = 0xc3;
            MPI_Recv(big + 1, (int)n, MPI_BYTE, peer, 20 + s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            volatile unsigned char *v = big;
            unsigned last = v[n], first = v[1], after = v[n + 1], before = v[0];
            result(last == pat(seed, n - 1) && first == pat(seed, 0) && after == 0xc3 &&
                       before == 0x5a,
                   "readafter dir %d size %zu: last %02x first %02x guards %02x %02x", dir, n,
                   last, first, before, after);
            check(big + 1, n, seed, 0, "readafter dir %d size %zu all", dir, n);
            free(big);
        }
        /* 1 MiB of ints: last element, first element, then the sum of all. */
        size_t n = MiB / sizeof(int);
        uint32_t seed = seed_of(src, 9);
        int *a = xmalloc(n * sizeof(int));
        if (sends_in(dir)) {
            for (size_t i = 0; i < n; i++)
                a[i] = (int)mix(seed + (uint32_t)i);
            MPI_Send(a, (int)n, MPI_INT, peer, 29, MPI_COMM_WORLD);
        } else {
            MPI_Status st;
            MPI_Recv(a, (int)n, MPI_INT, peer, 29, MPI_COMM_WORLD, &st);
            volatile int *v = a;
            int last = v[n - 1], first = v[0];
            long long sum = 0;
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) {
                sum += a[i];
                bad += a[i] != (int)mix(seed + (uint32_t)i);
            }
            result(last == (int)mix(seed + (uint32_t)(n - 1)) && first == (int)mix(seed) &&
                       bad == 0 && count_of(&st, MPI_INT) == (int)n,
                   "readafter dir %d ints %zu: last %d first %d count %d sum %lld", dir, n, last,
                   first, count_of(&st, MPI_INT), sum);
        }
        free(a);
    }
}

#define NORDER 200
static const size_t order_sizes[] = {1, 100, 5000, 70000, 300000};

/* 200 messages of mixed sizes with one tag, every buffer kept to the end: they must
 * arrive in order (a sequence number in the first 4 bytes, or the byte itself). */
static void case_order(void)
{
    for (int dir = 0; dir < 2; dir++) {
        int src = sends_in(dir) ? rank : peer;
        unsigned char *bufs[NORDER];
        size_t lens[NORDER];
        for (int k = 0; k < NORDER; k++) {
            lens[k] = order_sizes[k % 5];
            bufs[k] = xmalloc(lens[k]);
        }
        if (sends_in(dir)) {
            for (int k = 0; k < NORDER; k++) {
                fill(bufs[k], lens[k], seed_of(src, k), 0);
                uint32_t seq = (uint32_t)k;
                if (lens[k] >= 4)
                    memcpy(bufs[k], &seq, 4);
                else
                    bufs[k][0] = (unsigned char)k;
                MPI_Send(bufs[k], (int)lens[k], MPI_BYTE, peer, 30, MPI_COMM_WORLD);
            }
            for (int k = 0; k < NORDER; k++)
                memset(bufs[k], 0, lens[k]);
        } else {
            int first_bad = -1, bad_count = -1;
            for (int k = 0; k < NORDER; k++) {
                MPI_Status st;
                MPI_Recv(bufs[k], (int)lens[k], MPI_BYTE, peer, 30, MPI_COMM_WORLD, &st);
                uint32_t seq;
                if (lens[k] >= 4)
                    memcpy(&seq, bufs[k], 4);
                else
                    seq = bufs[k][0];
                if (seq != (uint32_t)k && first_bad < 0)
                    first_bad = k;
                if (count_of(&st, MPI_BYTE) != (int)lens[k] && bad_count < 0)
                    bad_count = k;
            }
            result(first_bad < 0 && bad_count < 0,
                   "order dir %d: %d messages, first out of order %d, first bad count %d", dir,
                   NORDER, first_bad, bad_count);
            /* The contents, once all have arrived. */
            uint64_t h = FNV0;
            int bad_content = -1;
            for (int k = 0; k < NORDER; k++) {
                size_t first, skip = lens[k] >= 4 ? 4 : 1;
                uint32_t seq;
                if (lens[k] >= 4)
                    memcpy(&seq, bufs[k], 4);
                else
                    seq = bufs[k][0];
                if ((seq != (uint32_t)k ||
                     differ(bufs[k] + skip, lens[k] - skip, seed_of(src, k), skip, &first)) &&
                    bad_content < 0)
                    bad_content = k;
                h = fnv(h, bufs[k], lens[k]);
            }
            result(bad_content < 0, "order dir %d: contents sum %016llx, first bad message %d",
                   dir, (unsigned long long)h, bad_content);
        }
        for (int k = 0; k < NORDER; k++)
            free(bufs[k]);
    }
}

/* MPI_ANY_SOURCE / MPI_ANY_TAG receives with a real status, into a buffer larger
 * than the message (the rest must stay untouched). */
static void case_wildcard(void)
{
    static const int tags[] = {5, 3, 9, 3};
    static const size_t lens[] = {10, 70000, 2 * MiB, 1 * MiB};
    size_t cap = 4 * MiB;
    for (int dir = 0; dir < 2; dir++) {
        int src = sends_in(dir) ? rank : peer;
        unsigned char *buf = xmalloc(cap);
        if (sends_in(dir)) {
            for (int m = 0; m < 4; m++) {
                fill(buf, lens[m], seed_of(src, m), 0);
                MPI_Send(buf, (int)lens[m], MPI_BYTE, peer, tags[m], MPI_COMM_WORLD);
            }
            int ints[40];
            for (int i = 0; i < 40; i++)
                ints[i] = (int)mix(seed_of(src, 7) + (uint32_t)i);
            MPI_Send(ints, 40, MPI_INT, peer, 4, MPI_COMM_WORLD);
        } else {
            for (int m = 0; m < 4; m++) {
                MPI_Status st;
                memset(buf, 0xee, cap);
                /* any source any tag; any source tag 9; this source any tag */
                int from = m == 3 ? peer : MPI_ANY_SOURCE;
                int tag = m == 2 ? 9 : MPI_ANY_TAG;
                MPI_Recv(buf, (int)cap, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st);
                int count = count_of(&st, MPI_BYTE);
                size_t first, n = count >= 0 && (size_t)count <= cap ? (size_t)count : 0;
                int tail_ok = buf[cap - 1] == 0xee && (n >= cap || buf[n] == 0xee);
                for (size_t i = n; tail_ok && i < cap; i += 4096)
                    tail_ok = buf[i] == 0xee;
                int ok = st.MPI_SOURCE == peer && st.MPI_TAG == tags[m] &&
                         (size_t)count == lens[m] && !differ(buf, n, seed_of(src, m), 0, &first) &&
                         tail_ok;
                result(ok, "wildcard dir %d msg %d: source %d tag %d count %d sum %016llx tail %s",
                       dir, m, st.MPI_SOURCE, st.MPI_TAG, count,
                       (unsigned long long)fnv(FNV0, buf, n), tail_ok ? "untouched" : "written");
            }
            int ints[100];
            MPI_Status st;
            MPI_Recv(ints, 100, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st);
            int count = count_of(&st, MPI_INT), bad = 0;
            long long sum = 0;
            for (int i = 0; i < 40; i++) {
                bad += ints[i] != (int)mix(seed_of(src, 7) + (uint32_t)i);
                sum += ints[i];
            }
            result(!bad && count == 40 && st.MPI_SOURCE == peer && st.MPI_TAG == 4,
                   "wildcard dir %d ints: source %d tag %d count %d sum %lld", dir, st.MPI_SOURCE,
                   st.MPI_TAG, count, sum);
        }
        free(buf);
    }
}

static double bss_buf[65536];               /* 512 KiB in .bss */
static int data_buf[4096] = {1, 2, 3, 4};   /* 16 KiB in .data */
static const char *kind_names[] = {"stack", "bss", "data", "mmap", "malloc"};

/* One kind of memory as the send buffer on one side and the receive buffer on the
 * other: sent twice (overwritten in between), each checked right after arrival. */
static void memkind_one(int dir, int kind)
{
    unsigned char stack_buf[16 * KiB];
    unsigned char *p = NULL;
    size_t n = 0;
    switch (kind) {
    case 0: p = stack_buf; n = sizeof(stack_buf); break;
    case 1: p = (unsigned char *)bss_buf; n = sizeof(bss_buf); break;
    case 2: p = (unsigned char *)data_buf; n = sizeof(data_buf); break;
    case 3:
        n = MiB;
        p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("p2p: mmap");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        break;
    default: n = 200000; p = xmalloc(n); break;
    }
    int src = sends_in(dir) ? rank : peer;
    uint32_t s1 = seed_of(src, 2 * kind), s2 = seed_of(src, 2 * kind + 1);
    if (sends_in(dir)) {
        fill(p, n, s1, 0);
        MPI_Send(p, (int)n, MPI_BYTE, peer, 40 + kind, MPI_COMM_WORLD);
        fill_rev(p, n, s2, 0);
        MPI_Send(p, (int)n, MPI_BYTE, peer, 40 + kind, MPI_COMM_WORLD);
        memset(p, 0, n);
    } else {
        MPI_Recv(p, (int)n, MPI_BYTE, peer, 40 + kind, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(p, n, s1, 0, "memkinds dir %d %s %zu first", dir, kind_names[kind], n);
        MPI_Recv(p, (int)n, MPI_BYTE, peer, 40 + kind, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(p, n, s2, 0, "memkinds dir %d %s %zu second", dir, kind_names[kind], n);
    }
    if (kind == 3)
        munmap(p, n); /* right after the last send or check */
    else if (kind == 4)
        free(p);
}

static void case_memkinds(void)
{
    for (int dir = 0; dir < 2; dir++)
        for (int kind = 0; kind < 5; kind++)
            memkind_one(dir, kind);
}

static void path_of(char *path, size_t len, const char *what, int dir)
{
    snprintf(path, len, "%s/syscalls-%d-%s-dir%d.bin", outdir, rank, what, dir);
}

/* Buffers handed to the kernel right away: write(2) from a buffer just received
 * into, read(2) into a buffer just sent from; and the same through a socket:
 * send(2) (sendmsg in the second direction) from the received buffer, recv(2)
 * (recvmsg) into the sent one. */
#define SOCK_BYTES (64 * 1024)
static ssize_t sock_move(int dir, int fd, void *p, size_t n, int out)
{
    struct iovec iov = { p, n };
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (out)
        return dir == 0 ? send(fd, p, n, 0) : sendmsg(fd, &m, 0);
    return dir == 0 ? recv(fd, p, n, MSG_WAITALL) : recvmsg(fd, &m, MSG_WAITALL);
}
static void case_syscalls(void)
{
    size_t n = MiB;
    char path[4096];
    for (int dir = 0; dir < 2; dir++) {
        int src = sends_in(dir) ? rank : peer;
        unsigned char *buf = xmalloc(n);
        if (sends_in(dir)) {
            /* the input file: the second message */
            path_of(path, sizeof(path), "input", dir);
            unsigned char *tmp = xmalloc(n);
            fill(tmp, n, seed_of(src, 1), 0);
            int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
            if (fd < 0 || write(fd, tmp, n) != (ssize_t)n) {
                perror("p2p: write input");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            close(fd);
            int sp[2]; /* the input's first bytes wait in a socket */
            if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0 ||
                write(sp[1], tmp, SOCK_BYTES) != SOCK_BYTES) {
                perror("p2p: socket");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            free(tmp);

            fill(buf, n, seed_of(src, 0), 0);
            MPI_Send(buf, (int)n, MPI_BYTE, peer, 50, MPI_COMM_WORLD);
            ssize_t s = sock_move(dir, sp[0], buf, SOCK_BYTES, 0);
            int serr = s < 0 ? errno : 0;
            close(sp[0]), close(sp[1]);
            result(s == SOCK_BYTES, "syscalls dir %d: %s into the sent buffer: %zd, %s", dir,
                   dir == 0 ? "recv()" : "recvmsg()", s, serr ? strerror(serr) : "no error");
            fd = open(path, O_RDONLY);
            size_t got = s == SOCK_BYTES ? SOCK_BYTES : 0;
            ssize_t r = 0;
            if (fd >= 0)
                lseek(fd, (off_t)got, SEEK_SET);
            while (fd >= 0 && got < n && (r = read(fd, buf + got, n - got)) > 0)
                got += (size_t)r;
            int err = r < 0 ? errno : 0;
            close(fd);
            unlink(path);
            result(got == n, "syscalls dir %d: read() into the sent buffer: %zu bytes, %s", dir,
                   got, err ? strerror(err) : "no error");
            MPI_Send(buf, (int)n, MPI_BYTE, peer, 51, MPI_COMM_WORLD);
            memset(buf, 0, n);
        } else {
            MPI_Recv(buf, (int)n, MPI_BYTE, peer, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int sp[2];
            unsigned char *back = xmalloc(n);
            memset(back, 0, n);
            ssize_t s = socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0
                            ? -1
                            : sock_move(dir, sp[1], buf, SOCK_BYTES, 1);
            int serr = s < 0 ? errno : 0;
            if (s == SOCK_BYTES && read(sp[0], back, SOCK_BYTES) != SOCK_BYTES)
                s = -2;
            close(sp[0]), close(sp[1]);
            result(s == SOCK_BYTES, "syscalls dir %d: %s of the received buffer: %zd, %s", dir,
                   dir == 0 ? "send()" : "sendmsg()", s, serr ? strerror(serr) : "no error");
            check(back, SOCK_BYTES, seed_of(src, 0), 0, "syscalls dir %d: the bytes sent", dir);
            path_of(path, sizeof(path), "received", dir);
            int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
            ssize_t w = fd < 0 ? -1 : write(fd, buf, n);
            int err = w < 0 ? errno : 0;
            close(fd);
            result(w == (ssize_t)n, "syscalls dir %d: write() of the received buffer: %zd, %s",
                   dir, w, err ? strerror(err) : "no error");
            memset(back, 0, n);
            fd = open(path, O_RDONLY);
            size_t got = 0;
            ssize_t r;
            while (fd >= 0 && got < n && (r = read(fd, back + got, n - got)) > 0)
                got += (size_t)r;
            close(fd);
            check(back, n, seed_of(src, 0), 0, "syscalls dir %d: the file written (%zu bytes)",
                  dir, got);
            free(back);
            MPI_Recv(buf, (int)n, MPI_BYTE, peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(buf, n, seed_of(src, 1), 0, "syscalls dir %d: sent after read()", dir);
        }
        free(buf);
    }
}

/* One 2 MiB region: three overlapping ranges sent from it, then a receive into the
 * same pages.  The other side receives the three into adjacent unaligned ranges of
 * one region (neighbouring receives share pages) and sends back from a range that
 * overlaps all three. */
static void case_overlapping(void)
{
    const size_t r0 = 0, r1 = 512 * KiB, r2 = MiB, into = 256 * KiB, n = MiB, base = 100;
    for (int dir = 0; dir < 2; dir++) {
        if (sends_in(dir)) {
            unsigned char *R = xmalloc(2 * MiB);
            uint32_t mine = seed_of(rank, 0);
            fill(R, 2 * MiB, mine, 0);
            MPI_Send(R + r0, (int)n, MPI_BYTE, peer, 60, MPI_COMM_WORLD);
            MPI_Send(R + r1, (int)n, MPI_BYTE, peer, 61, MPI_COMM_WORLD);
            MPI_Send(R + r2, (int)n, MPI_BYTE, peer, 62, MPI_COMM_WORLD);
            MPI_Recv(R + into, (int)n, MPI_BYTE, peer, 63, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(R + into, n, seed_of(peer, 1), 0, "overlapping dir %d: received into [256K,1.25M)",
                  dir);
            check(R, into, mine, 0, "overlapping dir %d: [0,256K) unchanged", dir);
            check(R + into + n, 2 * MiB - into - n, mine, into + n,
                  "overlapping dir %d: [1.25M,2M) unchanged", dir);
            free(R);
        } else {
            unsigned char *Q = xmalloc(3 * MiB + 2 * base);
            uint32_t theirs = seed_of(peer, 0);
            memset(Q, 0x77, 3 * MiB + 2 * base);
            MPI_Recv(Q + base, (int)n, MPI_BYTE, peer, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(Q + base + n, (int)n, MPI_BYTE, peer, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(Q + base + 2 * n, (int)n, MPI_BYTE, peer, 62, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            check(Q + base, n, theirs, r0, "overlapping dir %d: range [0,1M)", dir);
            check(Q + base + n, n, theirs, r1, "overlapping dir %d: range [512K,1.5M)", dir);
            check(Q + base + 2 * n, n, theirs, r2, "overlapping dir %d: range [1M,2M)", dir);
            int guards = Q[base - 1] == 0x77 && Q[base + 3 * n] == 0x77;
            result(guards, "overlapping dir %d: guards %02x %02x", dir, Q[base - 1],
                   Q[base + 3 * n]);
            /* send back from the middle of the three, then overwrite at once */
            fill(Q + base + n / 2, n, seed_of(rank, 1), 0);
            MPI_Send(Q + base + n / 2, (int)n, MPI_BYTE, peer, 63, MPI_COMM_WORLD);
            memset(Q, 0, 3 * MiB + 2 * base);
            free(Q);
        }
    }
}

/* MPI_Sendrecv_replace around the ring: 4 MiB, 100 B, and a strided datatype whose
 * gaps must stay as they were. */
static void case_replace(void)
{
    static const size_t lens[] = {4 * MiB, 100};
    for (int m = 0; m < 2; m++)
        for (int it = 0; it < 3; it++) {
            size_t n = lens[m];
            unsigned char *buf = xmalloc(n);
            fill(buf, n, seed_of(rank, 10 * m + it), 0);
            MPI_Status st;
            MPI_Sendrecv_replace(buf, (int)n, MPI_BYTE, right, 70 + m, left, 70 + m,
                                 MPI_COMM_WORLD, &st);
            int meta = st.MPI_SOURCE == left && st.MPI_TAG == 70 + m &&
                       count_of(&st, MPI_BYTE) == (int)n;
            size_t first;
            int same = !differ(buf, n, seed_of(left, 10 * m + it), 0, &first);
            result(meta && same, "replace size %zu iteration %d: source %d tag %d count %d sum %016llx",
                   n, it, st.MPI_SOURCE, st.MPI_TAG, count_of(&st, MPI_BYTE),
                   (unsigned long long)fnv(FNV0, buf, n));
            free(buf);
        }
    /* vector of 1024 blocks of 2 doubles, stride 4 */
    MPI_Datatype vec;
    MPI_Type_vector(1024, 2, 4, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    size_t n = 4096;
    double *d = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        d[i] = (i & 2) ? -(double)i : (double)(mix(seed_of(rank, 20) + (uint32_t)i) & 0xfffff);
    MPI_Status st;
    MPI_Sendrecv_replace(d, 1, vec, right, 72, left, 72, MPI_COMM_WORLD, &st);
    size_t bad = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double want = (i & 2) ? -(double)i : (double)(mix(seed_of(left, 20) + (uint32_t)i) & 0xfffff);
        bad += d[i] != want;
        sum += d[i];
    }
    result(!bad && st.MPI_SOURCE == left, "replace vector: source %d sum %.17g, %zu wrong",
           st.MPI_SOURCE, sum, bad);
    free(d);
    MPI_Type_free(&vec);
}

/* MPI_Ssend, MPI_Bsend (attached buffer) and MPI_Rsend (the receive pre-posted,
 * then a barrier), the send buffer overwritten right after each. */
static void case_modes(void)
{
    static const size_t lens[] = {100, MiB};
    int bsize = (int)(4 * (MiB + 100 + MPI_BSEND_OVERHEAD));
    char *attached = xmalloc((size_t)bsize);
    MPI_Buffer_attach(attached, bsize);
    for (int dir = 0; dir < 2; dir++) {
        int src = sends_in(dir) ? rank : peer;
        for (int m = 0; m < 2; m++) {
            size_t n = lens[m];
            unsigned char *buf = xmalloc(n);
            uint32_t s_ss = seed_of(src, m), s_ss2 = seed_of(src, 2 + m),
                     s_bs = seed_of(src, 4 + m), s_rs = seed_of(src, 6 + m);
            if (sends_in(dir)) {
                fill(buf, n, s_ss, 0);
                MPI_Ssend(buf, (int)n, MPI_BYTE, peer, 80, MPI_COMM_WORLD);
                fill_rev(buf, n, s_ss2, 0);
                MPI_Ssend(buf, (int)n, MPI_BYTE, peer, 80, MPI_COMM_WORLD);
                fill(buf, n, s_bs, 0);
                MPI_Bsend(buf, (int)n, MPI_BYTE, peer, 81, MPI_COMM_WORLD);
                fill_rev(buf, n, s_rs, 0);
                MPI_Barrier(pair); /* the receiver has posted its receive */
                MPI_Rsend(buf, (int)n, MPI_BYTE, peer, 82, MPI_COMM_WORLD);
                memset(buf, 0, n);
            } else {
                MPI_Recv(buf, (int)n, MPI_BYTE, peer, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(buf, n, s_ss, 0, "modes dir %d size %zu Ssend first", dir, n);
                MPI_Recv(buf, (int)n, MPI_BYTE, peer, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(buf, n, s_ss2, 0, "modes dir %d size %zu Ssend second", dir, n);
                MPI_Recv(buf, (int)n, MPI_BYTE, peer, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(buf, n, s_bs, 0, "modes dir %d size %zu Bsend", dir, n);
                MPI_Request req;
                MPI_Irecv(buf, (int)n, MPI_BYTE, peer, 82, MPI_COMM_WORLD, &req);
                MPI_Barrier(pair);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                check(buf, n, s_rs, 0, "modes dir %d size %zu Rsend", dir, n);
            }
            free(buf);
        }
    }
    void *detached;
    int dsize;
    MPI_Buffer_detach(&detached, &dsize);
    result(detached == attached && dsize == bsize, "modes: buffer detached, %d bytes", dsize);
    free(attached);
}

/* Zero-count messages with NULL buffers, and zero-count MPI_Sendrecv. */
static void case_zero(void)
{
    for (int dir = 0; dir < 2; dir++) {
        if (sends_in(dir)) {
            MPI_Send(NULL, 0, MPI_BYTE, peer, 90, MPI_COMM_WORLD);
            char *p = xmalloc(64); /* zero count from a buffer freed right away */
            MPI_Send(p, 0, MPI_INT, peer, 91, MPI_COMM_WORLD);
            free(p);
        } else {
            MPI_Status st;
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 90, MPI_COMM_WORLD, &st);
            result(count_of(&st, MPI_BYTE) == 0 && st.MPI_SOURCE == peer && st.MPI_TAG == 90,
                   "zero dir %d: NULL recv source %d tag %d count %d", dir, st.MPI_SOURCE,
                   st.MPI_TAG, count_of(&st, MPI_BYTE));
            int x[4] = {7, 7, 7, 7};
            MPI_Recv(x, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            result(count_of(&st, MPI_INT) == 0 && st.MPI_TAG == 91 && x[0] == 7 && x[3] == 7,
                   "zero dir %d: recv of 4 got count %d tag %d, buffer %d %d", dir,
                   count_of(&st, MPI_INT), st.MPI_TAG, x[0], x[3]);
        }
    }
    MPI_Status st;
    MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 92, NULL, 0, MPI_BYTE, peer, 92, MPI_COMM_WORLD, &st);
    result(count_of(&st, MPI_BYTE) == 0 && st.MPI_SOURCE == peer,
           "zero: sendrecv source %d count %d", st.MPI_SOURCE, count_of(&st, MPI_BYTE));
    /* one way empty: the odd rank sends 1000 bytes, the even one nothing */
    int odd = rank & 1;
    unsigned char *sbuf = odd ? xmalloc(1000) : NULL, *rbuf = odd ? NULL : xmalloc(1000);
    if (odd)
        fill(sbuf, 1000, seed_of(rank, 0), 0);
    MPI_Sendrecv(sbuf, odd ? 1000 : 0, MPI_BYTE, peer, 93, rbuf, odd ? 0 : 1000, MPI_BYTE, peer,
                 93, MPI_COMM_WORLD, &st);
    if (odd)
        result(count_of(&st, MPI_BYTE) == 0, "zero: sendrecv 1000 out, count in %d",
               count_of(&st, MPI_BYTE));
    else
        check(rbuf, 1000, seed_of(peer, 0), 0, "zero: sendrecv 0 out, count in %d",
              count_of(&st, MPI_BYTE));
    free(sbuf);
    free(rbuf);
}

/* free() right after MPI_Send (and after MPI_Recv, unread), a new buffer of the
 * same size at once, realloc() of just-sent buffers. */
static void case_free(void)
{
    for (int dir = 0; dir < 2; dir++) {
        int src = sends_in(dir) ? rank : peer;
        if (sends_in(dir)) {
            unsigned char *a = xmalloc(4 * MiB);
            fill(a, 4 * MiB, seed_of(src, 5), 0);
            MPI_Send(a, (int)(4 * MiB), MPI_BYTE, peer, 100, MPI_COMM_WORLD); /* freed unread */
            free(a);
            a = xmalloc(4 * MiB);
            fill(a, 4 * MiB, seed_of(src, 0), 0);
            MPI_Send(a, (int)(4 * MiB), MPI_BYTE, peer, 101, MPI_COMM_WORLD);
            free(a);
            a = xmalloc(4 * MiB); /* likely the same address again */
            fill(a, 4 * MiB, seed_of(src, 1), 0);
            MPI_Send(a, (int)(4 * MiB), MPI_BYTE, peer, 102, MPI_COMM_WORLD);
            free(a);
            unsigned char *s = xmalloc(3000); /* in the heap: free() writes next to it */
            fill(s, 3000, seed_of(src, 2), 0);
            MPI_Send(s, 3000, MPI_BYTE, peer, 103, MPI_COMM_WORLD);
            free(s);
            /* realloc, large and small, right after the send */
            static const size_t from[] = {300000, 3000}, to[] = {5 * MiB, 6000};
            for (int k = 0; k < 2; k++) {
                unsigned char *r = xmalloc(from[k]);
                fill(r, from[k], seed_of(src, 3 + k), 0);
                MPI_Send(r, (int)from[k], MPI_BYTE, peer, 104 + k, MPI_COMM_WORLD);
                r = realloc(r, to[k]);
                size_t first;
                result(r && !differ(r, from[k], seed_of(src, 3 + k), 0, &first),
                       "free dir %d: realloc %zu to %zu, prefix intact", dir, from[k], to[k]);
                fill(r + from[k], to[k] - from[k], seed_of(src, 3 + k), from[k]);
                MPI_Send(r, (int)to[k], MPI_BYTE, peer, 106 + k, MPI_COMM_WORLD);
                free(r);
            }
        } else {
            unsigned char *a = xmalloc(4 * MiB);
            MPI_Recv(a, (int)(4 * MiB), MPI_BYTE, peer, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            free(a); /* unread */
            a = xmalloc(4 * MiB);
            MPI_Recv(a, (int)(4 * MiB), MPI_BYTE, peer, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(a, 4 * MiB, seed_of(src, 0), 0, "free dir %d: 4 MiB freed after send", dir);
            MPI_Recv(a, (int)(4 * MiB), MPI_BYTE, peer, 102, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(a, 4 * MiB, seed_of(src, 1), 0, "free dir %d: 4 MiB at the same place", dir);
            free(a);
            unsigned char s[3000];
            MPI_Recv(s, 3000, MPI_BYTE, peer, 103, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(s, 3000, seed_of(src, 2), 0, "free dir %d: 3000 B freed after send", dir);
            static const size_t from[] = {300000, 3000}, to[] = {5 * MiB, 6000};
            for (int k = 0; k < 2; k++) {
                unsigned char *r = xmalloc(to[k]);
                MPI_Recv(r, (int)from[k], MPI_BYTE, peer, 104 + k, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                check(r, from[k], seed_of(src, 3 + k), 0, "free dir %d: %zu before realloc", dir,
                      from[k]);
                MPI_Recv(r, (int)to[k], MPI_BYTE, peer, 106 + k, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                check(r, to[k], seed_of(src, 3 + k), 0, "free dir %d: %zu after realloc", dir,
                      to[k]);
                free(r);
            }
        }
    }
}

/* Halo exchange with MPI_Sendrecv around the ring, the received halos used by the
 * computation right after; every rank simulates the whole ring to know what it
 * must receive. */
static void step(const uint32_t *l, const uint32_t *me, const uint32_t *r, uint32_t *outv,
                 size_t n, int it)
{
    for (size_t i = 0; i < n; i++)
        outv[i] = me[i] * 3U + (l[i] ^ (r[(i + 1) % n] >> 1)) + (uint32_t)it;
}

static void case_sendrecv(void)
{
    static const size_t lens[] = {MiB / 4, 200}; /* uint32 elements: 1 MiB, 800 B */
    const int iters = 20;
    for (int m = 0; m < 2; m++) {
        size_t n = lens[m];
        uint32_t *u = xmalloc(3 * n * sizeof(uint32_t)); /* [left halo | own | right halo] */
        uint32_t *L = u, *I = u + n, *R = u + 2 * n;
        uint32_t *sim = xmalloc((size_t)size * n * sizeof(uint32_t));
        uint32_t *nxt = xmalloc((size_t)size * n * sizeof(uint32_t));
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < n; i++)
                sim[(size_t)r * n + i] = mix(seed_of(r, m) + (uint32_t)i);
        memcpy(I, sim + (size_t)rank * n, n * sizeof(uint32_t));
        int first_bad = -1, bad_meta = 0;
        for (int it = 0; it < iters; it++) {
            MPI_Status st1, st2;
            MPI_Sendrecv(I, (int)n, MPI_UNSIGNED, right, 110, L, (int)n, MPI_UNSIGNED, left, 110,
                         MPI_COMM_WORLD, &st1);
            MPI_Sendrecv(I, (int)n, MPI_UNSIGNED, left, 111, R, (int)n, MPI_UNSIGNED, right, 111,
                         MPI_COMM_WORLD, &st2);
            bad_meta += st1.MPI_SOURCE != left || st2.MPI_SOURCE != right ||
                        count_of(&st1, MPI_UNSIGNED) != (int)n;
            /* the computation, reading the halos and writing the buffer just sent */
            step(L, I, R, I, n, it);
            for (int r = 0; r < size; r++)
                step(sim + (size_t)((r - 1 + size) % size) * n, sim + (size_t)r * n,
                     sim + (size_t)((r + 1) % size) * n, nxt + (size_t)r * n, n, it);
            uint32_t *t = sim;
            sim = nxt;
            nxt = t;
            if (first_bad < 0 && memcmp(I, sim + (size_t)rank * n, n * sizeof(uint32_t)))
                first_bad = it;
        }
        result(first_bad < 0 && !bad_meta,
               "sendrecv %zu bytes: %d iterations, first wrong iteration %d, sum %016llx",
               n * sizeof(uint32_t), iters, first_bad,
               (unsigned long long)fnv(FNV0, I, n * sizeof(uint32_t)));
        free(u);
        free(sim);
        free(nxt);
    }
}

/* The program's own nonblocking requests beside converted calls on the same
 * pages (one side X does the mixing, its peer plain sends and receives; then the
 * other way):
 *   1. X's MPI_Irecv pending, a blocking send from the other half of its pages
 *      (must not make pages MPI writes read-only);
 *   2. X's MPI_Irecv pending, a blocking receive into other bytes of its pages
 *      (must not make them inaccessible);
 *   3. X's MPI_Isend pending, a blocking receive into other bytes of its pages;
 *   4. a blocking receive (in flight), then X's MPI_Irecv into the same bytes:
 *      the second message must be what stays;
 *   5. persistent requests started three times, a blocking receive elsewhere;
 *   6. three MPI_Irecv completed by MPI_Waitany and MPI_Testsome, then a blocking
 *      receive into their buffer (converted again);
 *   7. an MPI_Iallreduce pending around a blocking MPI_Sendrecv;
 *   8. an MPI_Isend freed with MPI_Request_free, then a receive into its pages. */
static void case_own(void)
{
    const size_t n = MiB, gap = 100;
    for (int dir = 0; dir < 2; dir++) {
        int x = sends_in(dir);  /* this rank mixes */
        int src = x ? peer : rank; /* the plain side's data */
        unsigned char *R = xmalloc(4 * MiB + 4 * gap);
        MPI_Request q[3];
        fill(R, 4 * MiB + 4 * gap, seed_of(rank, 40), 0);
        /* 1 */
        if (x) {
            MPI_Irecv(R, (int)(n + gap), MPI_BYTE, peer, 90, MPI_COMM_WORLD, &q[0]);
            fill(R + n + gap, n, seed_of(rank, 41), 0);
            MPI_Send(R + n + gap, (int)n, MPI_BYTE, peer, 91, MPI_COMM_WORLD);
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            check(R, n + gap, seed_of(src, 42), 0, "own dir %d: Irecv beside a send", dir);
        } else {
            MPI_Recv(R, (int)n, MPI_BYTE, peer, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(R, n, seed_of(peer, 41), 0, "own dir %d: send beside an Irecv", dir);
            fill(R, n + gap, seed_of(rank, 42), 0);
            MPI_Send(R, (int)(n + gap), MPI_BYTE, peer, 90, MPI_COMM_WORLD);
        }
        /* 2 */
        if (x) {
            MPI_Irecv(R, (int)(n + gap), MPI_BYTE, peer, 92, MPI_COMM_WORLD, &q[0]);
            MPI_Recv(R + n + 2 * gap, (int)n, MPI_BYTE, peer, 93, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(R + n + 2 * gap, n, seed_of(src, 44), 0, "own dir %d: recv beside an Irecv", dir);
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            check(R, n + gap, seed_of(src, 43), 0, "own dir %d: Irecv beside a recv", dir);
        } else {
            fill(R, n + gap, seed_of(rank, 43), 0);
            MPI_Send(R, (int)(n + gap), MPI_BYTE, peer, 92, MPI_COMM_WORLD);
            fill(R, n, seed_of(rank, 44), 0);
            MPI_Send(R, (int)n, MPI_BYTE, peer, 93, MPI_COMM_WORLD);
        }
        /* 3 */
        if (x) {
            fill(R, n + gap, seed_of(rank, 45), 0);
            MPI_Isend(R, (int)(n + gap), MPI_BYTE, peer, 94, MPI_COMM_WORLD, &q[0]);
            MPI_Recv(R + n + 2 * gap, (int)n, MPI_BYTE, peer, 95, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            check(R + n + 2 * gap, n, seed_of(src, 46), 0, "own dir %d: recv beside an Isend", dir);
        } else {
            MPI_Recv(R, (int)(n + gap), MPI_BYTE, peer, 94, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(R, n + gap, seed_of(peer, 45), 0, "own dir %d: Isend beside a recv", dir);
            fill(R, n, seed_of(rank, 46), 0);
            MPI_Send(R, (int)n, MPI_BYTE, peer, 95, MPI_COMM_WORLD);
        }
        /* 4 */
        if (x) {
            MPI_Recv(R, (int)n, MPI_BYTE, peer, 96, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Irecv(R, (int)n, MPI_BYTE, peer, 97, MPI_COMM_WORLD, &q[0]);
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
            check(R, n, seed_of(src, 48), 0, "own dir %d: Irecv after a recv, same bytes", dir);
        } else {
            fill(R, n, seed_of(rank, 47), 0);
            MPI_Send(R, (int)n, MPI_BYTE, peer, 96, MPI_COMM_WORLD);
            fill(R, n, seed_of(rank, 48), 0);
            MPI_Send(R, (int)n, MPI_BYTE, peer, 97, MPI_COMM_WORLD);
        }
        /* 5 */
        if (x) {
            MPI_Recv_init(R, (int)n, MPI_BYTE, peer, 98, MPI_COMM_WORLD, &q[0]);
            MPI_Send_init(R + 2 * MiB, (int)n, MPI_BYTE, peer, 99, MPI_COMM_WORLD, &q[1]);
        }
        for (int it = 0; it < 3; it++) {
            if (x) {
                fill(R + 2 * MiB, n, seed_of(rank, 50 + it), 0);
                MPI_Startall(2, q);
                MPI_Recv(R + 3 * MiB + gap, (int)n, MPI_BYTE, peer, 100, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                MPI_Status sts[3];
                MPI_Waitall(2, q, sts);
                check(R, n, seed_of(src, 53 + it), 0, "own dir %d: persistent recv %d", dir, it);
                check(R + 3 * MiB + gap, n, seed_of(src, 56 + it), 0,
                      "own dir %d: recv beside persistent requests %d", dir, it);
            } else {
                fill(R, n, seed_of(rank, 53 + it), 0);
                MPI_Send(R, (int)n, MPI_BYTE, peer, 98, MPI_COMM_WORLD);
                MPI_Recv(R, (int)n, MPI_BYTE, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(R, n, seed_of(peer, 50 + it), 0, "own dir %d: persistent send %d", dir, it);
                fill(R, n, seed_of(rank, 56 + it), 0);
                MPI_Send(R, (int)n, MPI_BYTE, peer, 100, MPI_COMM_WORLD);
            }
        }
        if (x) {
            MPI_Request_free(&q[0]);
            MPI_Request_free(&q[1]);
        }
        /* 6 */
        if (x) {
            for (int i = 0; i < 3; i++)
                MPI_Irecv(R + (size_t)i * MiB, (int)n, MPI_BYTE, peer, 101 + i, MPI_COMM_WORLD, &q[i]);
            int idx, outn, got = 0, ids[3];
            MPI_Waitany(3, q, &idx, MPI_STATUS_IGNORE);
            got++;
            while (got < 3) {
                MPI_Status sts[3];
                MPI_Testsome(3, q, &outn, ids, sts);
                got += outn > 0 ? outn : 0;
            }
            for (int i = 0; i < 3; i++)
                check(R + (size_t)i * MiB, n, seed_of(src, 60 + i), 0, "own dir %d: Irecv %d of 3", dir,
                      i);
            MPI_Recv(R + gap, (int)n, MPI_BYTE, peer, 104, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(R + gap, n, seed_of(src, 63), 0, "own dir %d: recv after Waitany/Testsome", dir);
        } else {
            for (int i = 0; i < 4; i++) {
                fill(R, n, seed_of(rank, 60 + i), 0);
                MPI_Send(R, (int)n, MPI_BYTE, peer, 101 + i, MPI_COMM_WORLD);
            }
        }
        /* 7 (both sides) */
        int in[4] = { rank, 2 * rank, 3, dir }, sum[4];
        MPI_Request coll;
        MPI_Iallreduce(in, sum, 4, MPI_INT, MPI_SUM, pair, &coll);
        fill(R, n, seed_of(rank, 64), 0);
        MPI_Sendrecv(R, (int)n, MPI_BYTE, peer, 105, R + 2 * MiB + gap, (int)n, MPI_BYTE, peer, 105,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&coll, MPI_STATUS_IGNORE);
        check(R + 2 * MiB + gap, n, seed_of(peer, 64), 0, "own dir %d: Sendrecv beside Iallreduce",
              dir);
        result(sum[0] == rank + peer && sum[2] == 6, "own dir %d: Iallreduce %d %d %d %d", dir,
               sum[0], sum[1], sum[2], sum[3]);
        free(R);
    }
    /* 8: a send freed while in flight; its pages stay off limits to conversions. */
    for (int dir = 0; dir < 2; dir++) {
        unsigned char *F = xmalloc(2 * MiB);
        fill(F, 2 * MiB, seed_of(rank, 70 + dir), 0);
        if (sends_in(dir)) {
            MPI_Request fr;
            MPI_Isend(F, (int)MiB, MPI_BYTE, peer, 107, MPI_COMM_WORLD, &fr);
            MPI_Request_free(&fr);
            MPI_Recv(F + MiB + gap, (int)(MiB - 2 * gap), MPI_BYTE, peer, 108, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            check(F + MiB + gap, MiB - 2 * gap, seed_of(peer, 72 + dir), 0,
                  "own dir %d: recv beside a freed Isend", dir);
        } else {
            MPI_Recv(F, (int)MiB, MPI_BYTE, peer, 107, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(F, MiB, seed_of(peer, 70 + dir), 0, "own dir %d: a freed Isend arrives", dir);
            fill(F, MiB, seed_of(rank, 72 + dir), 0);
            MPI_Send(F, (int)(MiB - 2 * gap), MPI_BYTE, peer, 108, MPI_COMM_WORLD);
        }
        MPI_Barrier(pair);
        free(F);
    }
}

/* Small requests of the program's own (fewer than 512 elements: not driven,
 * kept in requests.c's log while the program has one thread) beside a blocking
 * receive into other bytes of their page, which must then run blocking
 * (passthrough_why.own_nonblocking), one side X mixing, its peer plain:
 *   1. X's 100-byte MPI_Irecv pending;
 *   2. X's 100-byte MPI_Isend pending;
 *   3. X's 100-byte MPI_Irecv pending after an MPI_Test that found it pending
 *      (its peer sends it only once X sent word after the test: the log's
 *      round that empties the log at once must leave it there);
 *   4. the same after an MPI_Testall of it;
 *   5. X's 100-byte MPI_Irecv pending when X starts a thread (the log moves to
 *      the table, where the receive must find it).
 * Not in "all": the thread changes how the later cases run. */
static void *idle_thread(void *arg)
{
    return arg;
}

static void case_ownsmall(void)
{
    const size_t n = MiB, small = 100, at = 200;
    /* First, a receive each: a communicator's first use is never converted. */
    for (int dir = 0; dir < 2; dir++) {
        unsigned char *W = xmalloc(n);
        fill(W, n, seed_of(rank, 109), 0);
        if (sends_in(dir))
            MPI_Send(W, (int)n, MPI_BYTE, peer, 109, MPI_COMM_WORLD);
        else
            MPI_Recv(W, (int)n, MPI_BYTE, peer, 109, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(W, n, seed_of(sends_in(dir) ? rank : peer, 109), 0, "ownsmall dir %d: first", dir);
        free(W);
    }
    for (int dir = 0; dir < 2; dir++) {
        int x = sends_in(dir);
        int src = x ? peer : rank;
        unsigned char *R = xmalloc(2 * MiB);
        fill(R, 2 * MiB, seed_of(rank, 110), 0);
        for (int step = 1; step <= 5; step++) {
            int tag = 110 + 2 * step, late = step == 3 || step == 4;
            if (x) {
                MPI_Request q;
                if (step == 2) {
                    fill(R, small, seed_of(rank, tag), 0);
                    MPI_Isend(R, (int)small, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q);
                } else {
                    MPI_Irecv(R, (int)small, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &q);
                }
                if (late) {
                    int flag = 1;
                    if (step == 3)
                        MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
                    else
                        MPI_Testall(1, &q, &flag, MPI_STATUSES_IGNORE);
                    result(!flag, "ownsmall dir %d step %d: Irecv pending after its test", dir,
                           step);
                    int word = step;
                    MPI_Send(&word, 1, MPI_INT, peer, tag + 50, MPI_COMM_WORLD);
                }
                if (step == 5 && dir == 0) {
                    pthread_t t;
                    if (pthread_create(&t, NULL, idle_thread, NULL) == 0)
                        pthread_join(t, NULL);
                }
                MPI_Recv(R + at, (int)n, MPI_BYTE, peer, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check(R + at, n, seed_of(src, tag + 1), 0, "ownsmall dir %d step %d: recv", dir, step);
                MPI_Wait(&q, MPI_STATUS_IGNORE);
                if (step != 2)
                    check(R, small, seed_of(src, tag), 0, "ownsmall dir %d step %d: Irecv", dir, step);
            } else {
                unsigned char *S = xmalloc(n);
                if (step == 2) {
                    MPI_Recv(S, (int)small, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    check(S, small, seed_of(peer, tag), 0, "ownsmall dir %d step %d: Isend", dir, step);
                } else {
                    if (late) { /* (X's test is over) */
                        int word = 0;
                        MPI_Recv(&word, 1, MPI_INT, peer, tag + 50, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE);
                    }
                    fill(S, small, seed_of(rank, tag), 0);
                    MPI_Send(S, (int)small, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
                }
                fill(S, n, seed_of(rank, tag + 1), 0);
                MPI_Send(S, (int)n, MPI_BYTE, peer, tag + 1, MPI_COMM_WORLD);
                free(S);
            }
        }
        MPI_Barrier(pair);
        free(R);
    }
}

/* Collectives and MPI-IO on memory that converted operations own (the wrappers
 * of tools/gen_mpi_wrappers.py's BUFS: what owns the same bytes finishes first,
 * pool memory goes to MPI on its runtime view, other memory waits for what owns
 * its pages).  In each direction the mixing rank X
 *   A. receives 4 MiB + 512 B (converted: its pages inaccessible) and at once runs
 *      MPI_Allreduce, MPI_Bcast, MPI_Gather, MPI_Alltoall and MPI_Reduce
 *      (MPI_IN_PLACE at X) on the bytes after it, on the receive's last page;
 *   B. sends 4 MiB + 512 B (protected: read-only) and then runs MPI_Bcast and
 *      MPI_Allreduce into the bytes after it, then writes the send buffer again;
 *   C. receives, then gathers into the first bytes of that receive (the gather's
 *      data must win: the program's order);
 *   D. receives, then MPI_File_write_at of those bytes (the message must be in
 *      the file) and MPI_File_read_at of the file into the bytes after them;
 *   E. receives, then the v-collectives on the bytes after the message
 *      (MPI_Allgatherv, MPI_Gatherv, MPI_Alltoallv with displacements in reverse
 *      order, MPI_Reduce_scatter), after an MPI_Scatterv from the first bytes of
 *      the message (MPI reads them: the message first; the root's scatter need
 *      not wait for the other rank).  Arrays significant only at the root are
 *      NULL elsewhere;
 *   F. the same on an intercommunicator between the two (X's group is the
 *      root's, MPI_ROOT): MPI_Scatterv from the receive's bytes, MPI_Gatherv
 *      and MPI_Allgatherv.
 * The other rank sends or receives first and then joins the collectives; in C,
 * D, E and F it sends 20 ms late, so that X's call comes before the message. */
static void case_coll(void)
{
    const size_t n = 4 * MiB + 512;
    for (int dir = 0; dir < 2; dir++) {
        int x = sends_in(dir), src = x ? peer : rank, root_x = dir, root_o = 1 - dir;
        unsigned char *B = xmalloc(n + 64 * KiB);
        int *c = (int *)(B + n); /* the collectives' bytes, on the last page of B's message */
        int in[4], red[4], bc[8], ga[8], a2a_in[8], a2a[8];
        for (int i = 0; i < 4; i++)
            in[i] = rank * 10 + i + dir;
        /* A */
        fill(B, n + 64 * KiB, seed_of(rank, 110), 0);
        if (x)
            MPI_Recv(B, (int)n, MPI_BYTE, peer, 110, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Send(B, (int)n, MPI_BYTE, peer, 110, MPI_COMM_WORLD);
        memcpy(c, in, sizeof(in));
        MPI_Allreduce(c, c + 4, 4, MPI_INT, MPI_SUM, pair);
        if (!x)
            for (int i = 0; i < 8; i++)
                c[8 + i] = 1000 * rank + i;
        MPI_Bcast(c + 8, 8, MPI_INT, root_o, pair);
        MPI_Gather(c, 4, MPI_INT, c + 16, 4, MPI_INT, root_x, pair);
        for (int i = 0; i < 8; i++)
            c[24 + i] = 100 * rank + i;
        MPI_Alltoall(c + 24, 4, MPI_INT, c + 32, 4, MPI_INT, pair);
        MPI_Reduce(x ? MPI_IN_PLACE : c, x ? c : NULL, 4, MPI_INT, MPI_MAX, root_x, pair);
        memcpy(red, c + 4, sizeof(red));
        memcpy(bc, c + 8, sizeof(bc));
        memcpy(ga, c + 16, sizeof(ga));
        memcpy(a2a_in, c + 24, sizeof(a2a_in));
        memcpy(a2a, c + 32, sizeof(a2a));
        int ok = 1, pin = peer * 10 + dir;
        for (int i = 0; i < 4; i++)
            ok &= red[i] == in[i] + pin + i && a2a[i] == 100 * (rank & ~1) + 4 * (rank & 1) + i &&
                  a2a[4 + i] == 100 * (rank | 1) + 4 * (rank & 1) + i;
        for (int i = 0; i < 8; i++)
            ok &= bc[i] == 1000 * (x ? peer : rank) + i && a2a_in[i] == 100 * rank + i;
        if (x)
            for (int i = 0; i < 4; i++)
                ok &= ga[4 * root_x + i] == in[i] && ga[4 * root_o + i] == pin + i &&
                      c[i] == (in[i] > pin + i ? in[i] : pin + i);
        result(ok, "coll dir %d: collectives beside a receive: %d %d %d %d", dir, red[0], bc[7],
               x ? ga[7] : 0, a2a[7]);
        if (x)
            check(B, n, seed_of(src, 110), 0, "coll dir %d: the receive beside them", dir);
        /* B */
        fill(B, n, seed_of(rank, 111), 0);
        if (x)
            MPI_Send(B, (int)n, MPI_BYTE, peer, 111, MPI_COMM_WORLD);
        else
            MPI_Recv(B, (int)n, MPI_BYTE, peer, 111, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Bcast(c, 4, MPI_INT, root_o, pair); /* (X: into bytes beside its send) */
        MPI_Allreduce(in, c + 4, 4, MPI_INT, MPI_SUM, pair);
        ok = 1;
        for (int i = 0; i < 4; i++)
            ok &= c[4 + i] == in[i] + pin + i;
        if (x) {
            fill(B, n, seed_of(rank, 112), 0); /* the send's bytes written again */
            ok &= differ(B, n, seed_of(rank, 112), 0, &(size_t){ 0 }) == 0;
        } else {
            check(B, n, seed_of(peer, 111), 0, "coll dir %d: a send beside collectives", dir);
        }
        result(ok, "coll dir %d: collectives beside a send: %d %d", dir, c[0], c[7]);
        /* C */
        fill(B, n, seed_of(rank, 113), 0);
        if (x) {
            MPI_Recv(B, (int)n, MPI_BYTE, peer, 113, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Gather(in, 4, MPI_INT, B, 4, MPI_INT, root_x, pair);
            ok = 1;
            for (int i = 0; i < 4; i++)
                ok &= ((int *)B)[4 * root_x + i] == in[i] && ((int *)B)[4 * root_o + i] == pin + i;
            result(ok, "coll dir %d: a gather into a receive's bytes", dir);
            check(B + 32, n - 32, seed_of(src, 113), 32, "coll dir %d: the rest of that receive",
                  dir);
        } else {
            usleep(20000); /* late: X's gather comes before the message */
            MPI_Send(B, (int)n, MPI_BYTE, peer, 113, MPI_COMM_WORLD);
            MPI_Gather(in, 4, MPI_INT, NULL, 0, MPI_INT, root_x, pair);
        }
        /* D */
        fill(B, n + 64 * KiB, seed_of(rank, 114), 0);
        if (x) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/coll-%d-%d.bin", outdir, rank, dir);
            MPI_File fh;
            MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
            MPI_Recv(B, (int)n, MPI_BYTE, peer, 114, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_File_write_at(fh, 0, B, (int)n, MPI_BYTE, MPI_STATUS_IGNORE);
            MPI_File_read_at(fh, 0, B + n, (int)(32 * KiB), MPI_BYTE, MPI_STATUS_IGNORE);
            MPI_File_close(&fh);
            check(B, n, seed_of(src, 114), 0, "coll dir %d: MPI_File_write_at of a receive", dir);
            check(B + n, 32 * KiB, seed_of(src, 114), 0, "coll dir %d: read back beside it", dir);
            unlink(path);
        } else {
            usleep(20000); /* late: X writes the file before the message comes */
            MPI_Send(B, (int)n, MPI_BYTE, peer, 114, MPI_COMM_WORLD);
        }
        /* E */
        fill(B, n + 64 * KiB, seed_of(rank, 115), 0);
        int sender = x ? peer : rank, me = rank & 1, w0 = rank & ~1, *v = c + 64;
        int cnt[2] = { 3, 5 }, dsp[2] = { 5, 0 }, four[2] = { 4, 4 }, at[2] = { 0, 4 };
        int scnt[2] = { 2, 3 }, sdsp[2] = { 4, 0 }, rdsp[2] = { 3, 0 };
        int rcnt[2] = { scnt[me], scnt[me] }, expect[4];
        /* (Written before the receive: a touch of its last page would wait for it.) */
        for (int i = 0; i < 8; i++)
            v[i] = v[32 + i] = 10 * rank + i;
        for (int i = 0; i < 5; i++)
            v[48 + i] = 100 * rank + i;
        MPI_Barrier(pair); /* (X's file calls above take longer than the 20 ms) */
        if (x) {
            MPI_Recv(B, (int)n, MPI_BYTE, peer, 115, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            usleep(20000);
            MPI_Send(B, (int)n, MPI_BYTE, peer, 115, MPI_COMM_WORLD);
        }
        MPI_Scatterv(x ? (void *)B : NULL, x ? four : NULL, x ? at : NULL, MPI_INT, v + 24, 4,
                     MPI_INT, root_x, pair);
        MPI_Allgatherv(v, cnt[me], MPI_INT, v + 8, cnt, dsp, MPI_INT, pair);
        MPI_Gatherv(v, cnt[me], MPI_INT, v + 16, x ? cnt : NULL, x ? dsp : NULL, MPI_INT, root_x,
                    pair);
        MPI_Alltoallv(v + 32, scnt, sdsp, MPI_INT, v + 40, rcnt, rdsp, MPI_INT, pair);
        MPI_Reduce_scatter(v + 48, v + 56, scnt, MPI_INT, MPI_SUM, pair);
        fill(expect, sizeof(expect), seed_of(sender, 115), (size_t)(16 * me));
        ok = 1;
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < cnt[j]; i++) {
                ok &= v[8 + dsp[j] + i] == 10 * (w0 + j) + i;
                if (x)
                    ok &= v[16 + dsp[j] + i] == 10 * (w0 + j) + i;
            }
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < rcnt[j]; i++)
                ok &= v[40 + rdsp[j] + i] == 10 * (w0 + j) + sdsp[me] + i;
        for (int i = 0; i < 4; i++)
            ok &= v[24 + i] == expect[i];
        for (int i = 0; i < scnt[me]; i++)
            ok &= v[56 + i] == 100 * (2 * w0 + 1) + 2 * (me ? scnt[0] + i : i);
        result(ok, "coll dir %d: v-collectives beside a receive: %d %d %d %d", dir, v[8], v[24],
               v[40], v[56]);
        if (x)
            check(B, n, seed_of(src, 115), 0, "coll dir %d: the receive beside them", dir);
        /* F */
        MPI_Comm inter;
        int one[1] = { 4 }, none[1] = { 0 }, two[1] = { 2 };
        MPI_Intercomm_create(MPI_COMM_SELF, 0, pair, 1 - me, 116, &inter);
        fill(B, n + 64 * KiB, seed_of(rank, 116), 0);
        for (int i = 0; i < 4; i++)
            v[64 + i] = 20 * rank + i;
        /* (learns the intercommunicator: its first call makes everything finish) */
        MPI_Allgatherv(v + 64, 2, MPI_INT, v + 72, two, none, MPI_INT, inter);
        MPI_Barrier(pair);
        if (x) {
            MPI_Recv(B, (int)n, MPI_BYTE, peer, 116, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Scatterv(B, one, none, MPI_INT, NULL, 0, MPI_INT, MPI_ROOT, inter);
            MPI_Gatherv(NULL, 0, MPI_INT, v + 68, one, none, MPI_INT, MPI_ROOT, inter);
        } else {
            usleep(20000);
            MPI_Send(B, (int)n, MPI_BYTE, peer, 116, MPI_COMM_WORLD);
            MPI_Scatterv(NULL, NULL, NULL, MPI_INT, v + 68, 4, MPI_INT, 0, inter);
            MPI_Gatherv(v + 64, 4, MPI_INT, NULL, NULL, NULL, MPI_INT, 0, inter);
        }
        MPI_Allgatherv(v + 64, 2, MPI_INT, v + 72, two, none, MPI_INT, inter);
        MPI_Comm_free(&inter);
        fill(expect, sizeof(expect), seed_of(sender, 116), 0);
        ok = 1;
        for (int i = 0; i < 4; i++)
            ok &= v[68 + i] == (x ? 20 * peer + i : expect[i]) &&
                  (i >= 2 || v[72 + i] == 20 * peer + i);
        result(ok, "coll dir %d: v-collectives on an intercommunicator: %d %d", dir, v[68], v[72]);
        if (x)
            check(B, n, seed_of(src, 116), 0, "coll dir %d: the receive beside them", dir);
        free(B);
    }
}

/* A halo exchange whose pattern changes (chains: protect/chains.c learns the
 * sequence of calls, then protects all of its pages at its first request).  A
 * grid of 32 rows of 6 KiB in one allocation, each rank's neighbours in a ring:
 *   A. 15 iterations: send up and receive down, send down and receive up, then
 *      every row computed from its neighbours (rows share pages: a receive covers
 *      half of its pages);
 *   B. 15 iterations: the first exchange as before, then the first row written
 *      (on a page of the second's receive: a touch of the chain's pages before
 *      its last request, which must not wait for requests not made yet), then the
 *      second exchange with another tag (a request the chain does not expect);
 *   C. 15 iterations: a third exchange of a middle row, to a row of its own. */
enum { W = 1536, ROWS = 32 };

/* One call site for every exchange of case_chains: the compiler would otherwise
 * copy the loop per phase, and a call site of its own per phase makes each
 * phase a new chain rather than a change of the learned one. */
static __attribute__((noinline)) void chain_exchange(uint32_t *s, int to, uint32_t *r, int from,
                                                     int tag)
{
    MPI_Sendrecv(s, W, MPI_UNSIGNED, to, tag, r, W, MPI_UNSIGNED, from, tag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

static void case_chains(void)
{
    uint32_t *g = xmalloc((size_t)(ROWS + 3) * W * sizeof(uint32_t));
    uint32_t *tmp = xmalloc((size_t)ROWS * W * sizeof(uint32_t));
#define ROW(r) (g + (size_t)(r) * W)
    for (size_t i = 0; i < (size_t)(ROWS + 3) * W; i++)
        g[i] = mix(seed_of(rank, 0) + (uint32_t)i);
    for (int it = 0; it < 45; it++) {
        int phase = it / 15;
        /* The same call sites in every phase: only the arguments change. */
        int tag2 = phase == 1 ? 125 : 123;
        chain_exchange(ROW(1), left, ROW(ROWS + 1), right, 122);
        if (phase == 1)
            ROW(1)[it] ^= (uint32_t)it; /* on the page of row 0, received next */
        chain_exchange(ROW(ROWS), right, ROW(0), left, tag2);
        if (phase == 2)
            chain_exchange(ROW(ROWS / 2), right, ROW(ROWS + 2), left, 124);
        for (int r = 1; r <= ROWS; r++)
            for (int j = 0; j < W; j++)
                tmp[(size_t)(r - 1) * W + j] = mix(ROW(r - 1)[j] + 3u * ROW(r)[j] + ROW(r + 1)[j] +
                                                   (phase == 2 ? ROW(ROWS + 2)[j] : 0u));
        memcpy(ROW(1), tmp, (size_t)ROWS * W * sizeof(uint32_t));
        if (it % 15 == 14)
            result(1, "chains phase %d: grid sum %016llx", phase,
                   (unsigned long long)fnv(FNV0, g, (size_t)(ROWS + 3) * W * sizeof(uint32_t)));
    }
#undef ROW
    free(g);
    free(tmp);
}

static const struct {
    const char *name;
    void (*run)(void);
    int needs_peer;
    int alone; /* only when named, not in "all" */
} cases[] = {
    {"overwrite", case_overwrite, 1}, {"readafter", case_readafter, 1},
    {"order", case_order, 1},         {"wildcard", case_wildcard, 1},
    {"memkinds", case_memkinds, 1},   {"syscalls", case_syscalls, 1},
    {"overlapping", case_overlapping, 1}, {"replace", case_replace, 0},
    {"modes", case_modes, 1},         {"zero", case_zero, 1},
    {"free", case_free, 1},           {"sendrecv", case_sendrecv, 0},
    {"own", case_own, 1},             {"coll", case_coll, 1},
    {"chains", case_chains, 0},       {"ownsmall", case_ownsmall, 1, 1},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: p2p OUTDIR CASE|all\n");
        MPI_Finalize();
        return 2;
    }
    outdir = argv[1];
    const char *which = argv[2];
    int found = strcmp(which, "all") == 0;
    for (int c = 0; c < NCASES; c++)
        found |= strcmp(which, cases[c].name) == 0;
    if (!found) {
        if (rank == 0)
            fprintf(stderr, "p2p: unknown case %s\n", which);
        MPI_Finalize();
        return 2;
    }
    peer = (rank ^ 1) < size ? rank ^ 1 : -1;
    left = (rank - 1 + size) % size;
    right = (rank + 1) % size;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);

    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", outdir, rank);
    out = fopen(path, "w");
    if (!out) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fprintf(out, "rank %d of %d, peer %d, case %s\n", rank, size, peer, which);
    where_write(outdir, rank, size);
    for (int c = 0; c < NCASES; c++) {
        if (strcmp(which, cases[c].name) != 0 && (strcmp(which, "all") != 0 || cases[c].alone))
            continue;
        case_id = c;
        MPI_Barrier(MPI_COMM_WORLD);
        if (cases[c].needs_peer && peer < 0)
            fprintf(out, "%s: no peer, idle\n", cases[c].name);
        else
            cases[c].run();
        fflush(out);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fprintf(out, "%ld checks, %ld mismatches\n", checks, mismatches);
    fclose(out);
    MPI_Comm_free(&pair);
    MPI_Finalize();
    return mismatches != 0; /* the data were wrong: fail whatever the comparison says */
}
