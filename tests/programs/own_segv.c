/* own_segv.c — a program with its own SIGSEGV handler, installed after MPI_Init,
 * beside a runtime that takes SIGSEGV for itself (page protection of the buffers of
 * pending sends and receives).  The program's handler must run for the program's
 * own faults, with the right si_addr, and for nothing else; a query of the
 * disposition must report what the program installed.  Pairs (0,1), (2,3), ...
 * exchange 1 MiB buffers with MPI_Send/MPI_Recv/MPI_Sendrecv and fault on purpose
 * right after the calls (a read of a PROT_NONE page, a write to a read-only page):
 * the handler records the fault and leaves with siglongjmp.  Each rank writes
 * OUTDIR/rank-<r>.txt (whether the handler ran and saw the right address, the
 * queries, checksums of the data received); the transparency harness compares
 * these byte for byte.
 *
 * usage: own_segv OUTDIR [sigaction|signal|sysv|default]
 *   sigaction  the handler installed with sigaction(SA_SIGINFO) (the default)
 *   signal     installed with signal() (no si_addr to check)
 *   sysv       installed with sysv_signal() (one-shot: it installs itself again)
 *   default    also queries the disposition before and after MPI_Init, and after
 *              setting SIG_DFL and SIG_IGN, then installs it as with sigaction */
#define _GNU_SOURCE
#include <mpi.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MiB ((size_t)1024 * 1024)
#define NFAULTS 8

static sigjmp_buf jump;
static volatile sig_atomic_t calls, last_sig, last_code;
static void *volatile last_addr;
static FILE *out;
static int rank, size, peer, use_signal, use_sysv;
static long bad_lines, addr_bad;

static void on_segv_info(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    calls++;
    last_sig = sig;
    last_code = si->si_code;
    last_addr = si->si_addr;
    siglongjmp(jump, 1);
}

static void on_segv_plain(int sig)
{
    if (use_sysv) /* System V semantics: the handler was reset to the default */
        sysv_signal(SIGSEGV, on_segv_plain);
    calls++;
    last_sig = sig;
    last_code = 0;
    last_addr = NULL;
    siglongjmp(jump, 1);
}

static void line(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(int ok, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(out, "%s %s\n", msg, ok ? "ok" : "MISMATCH");
    if (!ok) {
        bad_lines++;
        fprintf(stderr, "own_segv rank %d: MISMATCH: %s\n", rank, msg);
    }
}

static const char *kind(const struct sigaction *sa)
{
    if (!(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL)
        return "default";
    if (!(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_IGN)
        return "ignore";
    if ((sa->sa_flags & SA_SIGINFO) ? sa->sa_sigaction == on_segv_info
                                    : sa->sa_handler == on_segv_plain)
        return "ours";
    return "another handler";
}

static void query(const char *when, const char *want)
{
    struct sigaction q;
    memset(&q, 0, sizeof(q));
    sigaction(SIGSEGV, NULL, &q);
    if (want)
        line(strcmp(kind(&q), want) == 0, "query %s: %s", when, kind(&q));
    else /* whatever MPI installed: the same with and without the runtime */
        fprintf(out, "query %s: %s\n", when, kind(&q));
}

static void install(void)
{
    if (use_signal) {
        void (*prev)(int) = use_sysv ? sysv_signal(SIGSEGV, on_segv_plain)
                                     : signal(SIGSEGV, on_segv_plain);
        fprintf(out, "signal() returned the previous handler: %s\n",
                prev == SIG_DFL ? "default" : prev == SIG_IGN ? "ignore" : "a handler");
        struct sigaction q;
        sigaction(SIGSEGV, NULL, &q);
        line(!(q.sa_flags & SA_SIGINFO) && q.sa_handler == on_segv_plain, "query matches: %s",
             !(q.sa_flags & SA_SIGINFO) && q.sa_handler == on_segv_plain ? "yes" : "no");
        return;
    }
    struct sigaction sa, q;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv_info;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    memset(&q, 0, sizeof(q));
    sigaction(SIGSEGV, NULL, &q);
    int ok = (q.sa_flags & SA_SIGINFO) && q.sa_sigaction == on_segv_info;
    line(ok, "query matches: %s", ok ? "yes" : "no");
}

static char *page_none, *page_ro;
static int nfaults;

/* One fault on purpose: a read of the PROT_NONE page or a write to the read-only
 * one, at offset off. */
static void fault(const char *after, int write, size_t off)
{
    char *addr = (write ? page_ro : page_none) + off;
    int before = calls;
    nfaults++;
    if (sigsetjmp(jump, 1) == 0) {
        if (write)
            *(volatile char *)addr = 1;
        else
            (void)*(volatile char *)addr;
        line(0, "fault %d after %s: no fault", nfaults, after);
        return;
    }
    int ran = calls == before + 1 && last_sig == SIGSEGV;
    int addr_ok = use_signal || last_addr == addr;
    int code_ok = use_signal || last_code == SEGV_ACCERR;
    addr_bad += !addr_ok;
    line(ran && addr_ok && code_ok, "fault %d after %s (%s): handler ran: %s, addr matches: %s%s",
         nfaults, after, write ? "write" : "read", ran ? "yes" : "no",
         use_signal ? "n/a" : addr_ok ? "yes" : "no",
         use_signal ? "" : code_ok ? ", code ACCERR" : ", code other");
}

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static void fill(uint32_t *p, size_t n, int src, int msg)
{
    for (size_t i = 0; i < n; i++)
        p[i] = mix((uint32_t)src * 1000003U + (uint32_t)msg * 7919U + (uint32_t)i);
}

/* Checks and writes the checksum of n received words. */
static void received(const char *what, const uint32_t *p, size_t n, int src, int msg)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += p[i] != mix((uint32_t)src * 1000003U + (uint32_t)msg * 7919U + (uint32_t)i);
        h = (h ^ p[i]) * 0x100000001b3ULL;
    }
    line(bad == 0, "%s: sum %016llx, %zu wrong", what, (unsigned long long)h, bad);
}

int main(int argc, char **argv)
{
    const char *outdir = argc > 1 ? argv[1] : ".";
    const char *variant = argc > 2 ? argv[2] : "sigaction";
    if (strcmp(variant, "crash") == 0) {
        /* No handler at all: the fault must end the process with SIGSEGV, as it
         * would without unblock (the test checks the exit status). */
        MPI_Init(&argc, &argv);
        signal(SIGSEGV, SIG_DFL); /* Open MPI installs its own at MPI_Init */
        char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        fprintf(stderr, "own_segv: faulting on purpose\n");
        p[0] = 1;
        fprintf(stderr, "own_segv: survived a fault on a PROT_NONE page\n");
        return 3;
    }
    use_sysv = strcmp(variant, "sysv") == 0;
    use_signal = strcmp(variant, "signal") == 0 || use_sysv;
    int dflt = strcmp(variant, "default") == 0;
    if (!use_signal && !dflt && strcmp(variant, "sigaction") != 0) {
        fprintf(stderr, "usage: own_segv OUTDIR [sigaction|signal|sysv|default|crash]\n");
        return 2;
    }
    struct sigaction before;
    sigaction(SIGSEGV, NULL, &before);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = (rank ^ 1) < size ? rank ^ 1 : -1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", outdir, rank);
    out = fopen(path, "w");
    if (!out) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fprintf(out, "rank %d of %d, peer %d, variant %s\n", rank, size, peer, variant);

    if (dflt) {
        /* whatever the MPI's libraries installed (MPICH with UCX: libucs's handler,
         * from a constructor; Open MPI: libopen-pal's, from MPI_Init) */
        fprintf(out, "query before MPI_Init: %s\n", kind(&before));
        query("after MPI_Init", NULL);
        install();
        struct sigaction sa, old;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        sigaction(SIGSEGV, &sa, &old);
        line(strcmp(kind(&old), "ours") == 0, "sigaction(SIG_DFL) returned the old one: %s",
             kind(&old));
        query("after SIG_DFL", "default");
        sa.sa_handler = SIG_IGN;
        sigaction(SIGSEGV, &sa, &old);
        line(strcmp(kind(&old), "default") == 0, "sigaction(SIG_IGN) returned the old one: %s",
             kind(&old));
        query("after SIG_IGN", "ignore");
        void (*prev)(int) = signal(SIGSEGV, on_segv_plain);
        line(prev == SIG_IGN, "signal() returned the old one: %s",
             prev == SIG_IGN ? "ignore" : "something else");
        query("after signal()", "ours");
    }
    install();

    long pg = sysconf(_SC_PAGESIZE);
    page_none = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    page_ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page_none == MAP_FAILED || page_ro == MAP_FAILED) {
        perror("mmap");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    fault("MPI_Init", 0, 0);
    size_t n = MiB / sizeof(uint32_t);
    uint32_t *a = malloc(MiB), *b = malloc(MiB);
    if (peer >= 0) {
        for (int dir = 0; dir < 2; dir++) {
            if ((rank & 1) == dir) {
                fill(a, n, rank, dir);
                MPI_Send(a, (int)n, MPI_UNSIGNED, peer, 1, MPI_COMM_WORLD);
                fault("MPI_Send", 0, 123);
                fill(a, n, rank, 10 + dir); /* overwrite the buffer just sent */
                MPI_Send(a, (int)n, MPI_UNSIGNED, peer, 2, MPI_COMM_WORLD);
                memset(a, 0, MiB);
            } else {
                MPI_Recv(b, (int)n, MPI_UNSIGNED, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                fault("MPI_Recv", 1, 0);
                received("MPI_Recv first", b, n, peer, dir);
                MPI_Recv(b, (int)n, MPI_UNSIGNED, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                received("MPI_Recv second", b, n, peer, 10 + dir);
            }
        }
        fill(a, n, rank, 20);
        MPI_Sendrecv(a, (int)n, MPI_UNSIGNED, peer, 3, b, (int)n, MPI_UNSIGNED, peer, 3,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fault("MPI_Sendrecv", 1, (size_t)pg - 1);
        received("MPI_Sendrecv", b, n, peer, 20);
        fill(a, n, rank, 21);
    }
    fault("the exchanges", 0, (size_t)pg - 8);
    MPI_Barrier(MPI_COMM_WORLD);
    line(calls == nfaults, "handler calls: %d for %d faults", (int)calls, nfaults);
    if (use_signal)
        fprintf(out, "handler ran: %s, addr matches: n/a\n", calls == nfaults ? "yes" : "no");
    else
        fprintf(out, "handler ran: %s, addr matches: %s\n", calls == nfaults ? "yes" : "no",
                addr_bad == 0 ? "yes" : "no");
    fclose(out);
    free(a);
    free(b);
    MPI_Finalize();
    return bad_lines != 0 || (!use_signal && addr_bad != 0);
}
