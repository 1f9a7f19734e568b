/* mpisigend.c — an MPI program that ends on a signal in the middle of its small
 * writes (sigend.c's case in an MPI process, where unblock runs its completion
 * thread, its tick and MPI's own threads beside the program).
 *
 * Each rank writes 8-byte records "%07d\n" to DIR/mpisigend.RANK.dat, one write()
 * each (unblock merges them), counts in a page of DIR/mpisigend.RANK.count the
 * records whose write() returned, and every 256 records exchanges an int with its
 * partner (rank ^ 1, itself when alone) by MPI_Sendrecv, so that a signal also
 * comes while the rank waits inside MPI.  Then:
 *   handler: a POSIX timer sends SIGALRM to the writing thread once, 5-20 ms
 *     on; its handler notes that it ran, writes "SIGNAL!\n", fsyncs and calls
 *     _exit(0);
 *   term: a POSIX timer sends SIGTERM to the process (any thread may take it,
 *     as a batch system's), 10-40 ms on, with no handler: the rank dies of it
 *     (unblock drains its blocks first).
 *   mpiio-multiple: MPI_THREAD_MULTIPLE; a second thread, which blocks SIGTERM,
 *     writes the records with MPI_File_write_at (8 bytes at 8 * i) to the file
 *     opened on MPI_COMM_SELF, while the main thread waits; the timer's SIGTERM
 *     is taken by a thread that is not writing (unblock drains there while the
 *     writer goes on);
 *   mpiio-funneled: MPI_THREAD_FUNNELED; the main thread writes the same way,
 *     with SIGTERM blocked, and a second thread of the program takes the signal;
 *   mpiio-exit: as mpiio-multiple, but no signal: the main thread calls exit(0)
 *     10-40 ms on, without MPI_Finalize (unblock's exit drain runs while the
 *     writer goes on).
 * A rank whose partner died waits in MPI_Sendrecv until the launcher ends it
 * (Open MPI: SIGTERM, which unblock drains too; MPICH's launcher kills the other
 * ranks at once, which no drain survives: run MPICH with one rank).
 *
 * Without unblock each record is in the file when its write() returns.  So the
 * check: each file holds records 0..k-1 in order, k the count or one more (the
 * write the signal came after), then the handler's line if that rank's handler
 * ran (not when the launcher ended the rank inside its handler), and nothing else.
 *
 * usage: mpisigend DIR MODE                    (under mpirun: one round; MODE:
 *                                              handler, term, mpiio-multiple,
 *                                              mpiio-funneled, mpiio-exit)
 *        mpisigend DIR check NRANKS           (plainly, after it: prints one line,
 *                                              exits 1 if a file is wrong) */
#define _GNU_SOURCE
#include <mpi.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "records.h"

#define MAX_RECORDS 20000000

/* The shared page: [0] records whose write() returned, [1] the handler ran. */
static volatile long *shared;
static int fd = -1;

static void on_alarm(int sig)
{
    (void)sig;
    shared[1] = 1;
    if (write(fd, "SIGNAL!\n", 8) != 8 || fsync(fd) != 0)
        _exit(3);
    _exit(0);
}

/* This rank's shared page (records.h). */
static volatile long *rank_page(const char *dir, int rank, int create)
{
    char name[64];
    snprintf(name, sizeof(name), "mpisigend.%d.count", rank);
    return shared_page(dir, name, create);
}

/* ---- the MPI-IO cases ---- */

static MPI_File mfh;

static void block_term(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
}

static void *mpiio_records(void *arg)
{
    (void)arg;
    block_term();
    char r[9];
    for (long i = 0; i < MAX_RECORDS; i++) {
        record(r, (int)i);
        if (MPI_File_write_at(mfh, (MPI_Offset)i * 8, r, 8, MPI_CHAR, MPI_STATUS_IGNORE) !=
            MPI_SUCCESS)
            _exit(4);
        shared[0] = i + 1;
    }
    _exit(5); /* (no signal came) */
}

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
}

/* 0-15, from the process id: each rank's signal comes at its own time. */
static long jitter(void)
{
    return (long)(getpid() % 16);
}

/* A one-shot POSIX timer: ev's signal, ms milliseconds on. */
static void signal_in(struct sigevent *ev, long ms)
{
    struct itimerspec when = { { 0, 0 }, { 0, ms * 1000000L } };
    timer_t t;
    if (timer_create(CLOCK_MONOTONIC, ev, &t) != 0 || timer_settime(t, 0, &when, NULL) != 0) {
        perror("timer");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* SIGTERM to the process, as a batch system's (any thread may take it), 10-40
 * ms on. */
static void term_soon(void)
{
    struct sigevent ev = { .sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGTERM };
    signal_in(&ev, 10 + 2 * jitter());
}

static int run_mpiio(const char *dir, const char *mode)
{
    int multiple = strcmp(mode, "mpiio-funneled") != 0;
    int want = multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_FUNNELED, got;
    MPI_Init_thread(NULL, NULL, want, &got);
    if (got < want) {
        fprintf(stderr, "mpisigend: thread level %d, not %d\n", got, want);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    shared = rank_page(dir, rank, 1);
    char name[4096];
    snprintf(name, sizeof(name), "%s/mpisigend.%d.dat", dir, rank);
    if (MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                      &mfh) != MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Barrier(MPI_COMM_WORLD);
    pthread_t t;
    if (pthread_create(&t, NULL, multiple ? mpiio_records : idle, NULL) != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (strcmp(mode, "mpiio-exit") == 0) {
        struct timespec ts = { 0, (10 + 2 * jitter()) * 1000000L };
        nanosleep(&ts, NULL);
        exit(0);
    }
    term_soon();
    if (multiple)
        pthread_join(t, NULL);
    else
        mpiio_records(NULL);
    return 5;
}

static int run(const char *dir, const char *mode)
{
    if (strncmp(mode, "mpiio-", 6) == 0)
        return run_mpiio(dir, mode);
    MPI_Init(NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int partner = size == 1 ? 0 : (rank ^ 1) < size ? rank ^ 1 : rank;
    shared = rank_page(dir, rank, 1);
    char name[64];
    snprintf(name, sizeof(name), "mpisigend.%d.dat", rank);
    fd = open_in(dir, name, O_WRONLY | O_CREAT | O_TRUNC);
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "handler") == 0) {
        /* (To this thread, once: MPI's own threads need not block SIGALRM, and
         * a second signal there would run the handler again beside the first.) */
        struct sigaction sa = { .sa_handler = on_alarm };
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGALRM };
        ev._sigev_un._tid = gettid();
        signal_in(&ev, 5 + jitter());
    } else {
        term_soon();
    }
    char r[9];
    for (long i = 0; i < MAX_RECORDS; i++) {
        record(r, (int)i);
        if (write(fd, r, 8) != 8)
            _exit(4);
        shared[0] = i + 1;
        if (i % 256 == 255) {
            int out = (int)i, in = 0;
            MPI_Sendrecv(&out, 1, MPI_INT, partner, 0, &in, 1, MPI_INT, partner, 0,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 5; /* (no signal came) */
}

/* NULL if rank's file is right, else what is wrong. */
static const char *check_rank(const char *dir, int rank, long *n_out)
{
    volatile long *s = rank_page(dir, rank, 0);
    long n = s[0];
    int ran = s[1] != 0;
    *n_out = n;
    char name[64];
    snprintf(name, sizeof(name), "mpisigend.%d.dat", rank);
    return check_ended(dir, name, n, ran ? 2 : 0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && (strcmp(argv[2], "handler") == 0 || strcmp(argv[2], "term") == 0 ||
                      strcmp(argv[2], "mpiio-multiple") == 0 ||
                      strcmp(argv[2], "mpiio-funneled") == 0 ||
                      strcmp(argv[2], "mpiio-exit") == 0))
        return run(argv[1], argv[2]);
    if (argc != 4 || strcmp(argv[2], "check") != 0)
        return 2;
    int np = atoi(argv[3]), wrong = 0;
    for (int rank = 0; rank < np; rank++) {
        long n = 0;
        const char *bad = check_rank(argv[1], rank, &n);
        if (bad) {
            printf("rank %d: the file (%ld records written) %s\n", rank, n, bad);
            wrong = 1;
        } else {
            printf("rank %d: %ld records, right\n", rank, n);
        }
    }
    return wrong;
}
