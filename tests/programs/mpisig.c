/* mpisig.c — signal handlers in the middle of merged writes, in an MPI program
 * (the serial programs' case, wb.c's sigsame, with MPI's own threads about).
 *
 * Each rank writes RECORDS 8-byte records to a file of its own, one write()
 * each, in ROUNDS rounds separated by an MPI_Allreduce (so the writes merge
 * between MPI calls, as a program's log between its steps).  While it writes,
 * a timer sends SIGALRM to the main thread 50 us after the last one was
 * handled (timer_create with SIGEV_THREAD_ID: never to one of MPI's threads;
 * the handler arms it again, so handlers never nest); the handler writes a
 * marker "SIGNAL!\n" to the same descriptor (async-signal-safe).  The
 * signal often comes while unblock's wrapper of the interrupted write holds
 * the descriptor's lock: the handler must be held until the write is done
 * (signals.c), never wait for that lock for ever, nor cut a block in two.
 * The timer is stopped around each MPI call, so MPI's calls see no more
 * signals than without unblock.  The handler is installed as the mode says:
 *   handler: sigaction (SA_RESTART)
 *   oneshot: sysv_signal, installed again by the handler itself (a one-shot
 *            handler of System V's kind, which unblock resets itself)
 *
 * Each rank checks its file: every record in order, one marker between them
 * for each signal its handler counted.  Rank 0 prints one line per rank
 * (the count of signals as "many" or "few", which differs from run to run)
 * into DIR/result.txt; MISMATCH and exit 1 if a file is wrong.
 * usage: mpirun -np N mpisig DIR handler|oneshot */
#define _GNU_SOURCE
#include <errno.h>
#include <mpi.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "records.h"

#define ROUNDS 8
#define PER_ROUND 40000
#define RECORDS (ROUNDS * PER_ROUND)

static int fd = -1;
static volatile sig_atomic_t seen, armed;
static int oneshot;
static timer_t tid;

static void arm(long us) /* (0: off; timer_settime is async-signal-safe) */
{
    struct itimerspec it = { { 0, 0 }, { 0, us * 1000 } };
    timer_settime(tid, 0, &it, NULL);
}

static void on_alarm(int sig)
{
    int e = errno;
    if (oneshot)
        sysv_signal(sig, on_alarm); /* (before the next one: the timer is not armed) */
    if (write(fd, "SIGNAL!\n", 8) != 8)
        _exit(3);
    seen++;
    if (armed)
        arm(50);
    errno = e;
}

static void timer(int on)
{
    armed = on;
    arm(on ? 50 : 0);
}

/* NULL if the file holds the records in order with `marks` markers among them
 * (and after the last), else what is wrong. */
static const char *check(int f, long marks)
{
    long rec, found, end = scan_records(f, RECORDS, 0, &rec, &found);
    struct stat st;
    if (end < 0 || fstat(f, &st) != 0)
        return "cannot be read";
    if (end != (long)st.st_size)
        return end + 8 > (long)st.st_size ? "ends in the middle of a record"
                                          : "holds a record out of place";
    if (rec != RECORDS)
        return "lacks records";
    if (found != marks)
        return "holds another count of markers than signals";
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3 || (strcmp(argv[2], "handler") != 0 && strcmp(argv[2], "oneshot") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: mpisig DIR handler|oneshot\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *dir = argv[1];
    oneshot = strcmp(argv[2], "oneshot") == 0;
    char name[64];
    snprintf(name, sizeof(name), "mpisig-%d.dat", rank);
    fd = open_in(dir, name, O_RDWR | O_CREAT | O_TRUNC);
    if (oneshot) {
        sysv_signal(SIGALRM, on_alarm);
    } else {
        struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
    }
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGALRM;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_MONOTONIC, &sev, &tid) != 0) {
        perror("timer_create");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        timer(1);
        bad += write_records(fd, round * PER_ROUND, (round + 1) * PER_ROUND);
        timer(0);
        long all = 0;
        MPI_Allreduce(&bad, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    signal(SIGALRM, SIG_IGN); /* (one may still be pending) */
    const char *wrong = bad ? "had short writes" : check(fd, (long)seen);
    char line[256];
    snprintf(line, sizeof(line), "rank %d: signals %s, the file %s%s\n", rank,
             seen > 10 ? "many" : "few", wrong ? "MISMATCH: " : "holds every record and marker",
             wrong ? wrong : "");
    if (close(fd) != 0)
        snprintf(line, sizeof(line), "rank %d: MISMATCH: close failed\n", rank);
    snprintf(name, sizeof(name), "mpisig-%d.dat", rank);
    char p[4096];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    unlink(p); /* (its size differs from run to run: checked here) */
    char all[64][256];
    memset(all, 0, sizeof(all));
    MPI_Gather(line, 256, MPI_CHAR, all, 256, MPI_CHAR, 0, MPI_COMM_WORLD);
    int failed = wrong != NULL, any = 0;
    MPI_Reduce(&failed, &any, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int res = open_in(dir, "result.txt", O_WRONLY | O_CREAT | O_TRUNC);
        for (int r = 0; r < size && r < 64; r++) {
            fputs(all[r], stdout);
            if (write(res, all[r], strlen(all[r])) < 0)
                any = 1;
        }
        close(res);
    }
    MPI_Bcast(&any, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return any ? 1 : 0;
}
