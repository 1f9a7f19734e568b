/* sigend.c — a program that ends on a signal in the middle of its small writes,
 * ROUNDS times, each in a child: the file must hold every record whose write()
 * returned (and, where a handler writes a last line, that line after them).
 *
 *   handler: the child's SIGALRM handler (an interval timer, 50 us, from the
 *     third millisecond) writes "SIGNAL!\n" to the file, fsyncs it and calls
 *     _exit(0): the log's last line of a program stopped by its batch system.
 *   oneshot: the same handler installed one-shot (SA_RESETHAND): by sigaction
 *     in even rounds, by sysv_signal in odd ones.  unblock holds it too now.
 *   term: the child has no handler; the parent sends SIGTERM 10-40 ms after
 *     its first record, and
 *     the child dies of it (unblock drains its blocks first, drain.c: on_fatal).
 *   thread: the same, but a second thread of the child writes, with SIGTERM
 *     blocked, so that the main thread (in pause()) takes the signal and drains
 *     while the writing thread goes on: its writes after the drain began must be
 *     in the file too (before, those merged into blocks the drain had passed
 *     were lost: 3 of 20 programs short by up to 37,000 records).
 *   exit: a second thread writes, and the main thread calls exit(0) 10-40 ms
 *     after the start; no signal.  The writer's records are in the file until
 *     the process ends (before, those merged after unblock's exit flush were
 *     lost: 18 of 20 programs short).
 *   exec: the same, but the main thread execs /bin/true instead of exit(0)
 *     (before: 20 of 20 programs short).
 *
 * Each child is exec'd, a program of its own.
 * The signal often comes while unblock's wrapper of the interrupted write holds
 * the descriptor's lock.  Before, the handler's fsync waited for that lock for
 * ever, and the SIGTERM drain passed the locked descriptor by: its block was
 * lost.  Each child counts the records whose write returned in shared memory;
 * the file must hold records 0..k-1 in order with k that count or one more (the
 * write the signal came after), then the handler's line, and nothing else.
 * usage: sigend DIR handler|oneshot|term|thread|exit|exec   (prints one line, also into DIR/result.txt;
 * exits 1 if a file was wrong, 2 if a child hung or died otherwise) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

#include "records.h"

#define ROUNDS 40
#define MAX_RECORDS 20000000

static volatile long *done; /* shared: records whose write() returned */
static int fd = -1;

static void on_alarm(int sig)
{
    (void)sig;
    if (write(fd, "SIGNAL!\n", 8) != 8 || fsync(fd) != 0)
        _exit(3);
    _exit(0);
}

static void write_all(void)
{
    char r[9];
    for (long i = 0; i < MAX_RECORDS; i++) {
        record(r, (int)i);
        if (write(fd, r, 8) != 8)
            _exit(4);
        *done = i + 1;
    }
    _exit(5); /* (no signal came) */
}

static void *writer(void *arg)
{
    write_all();
    return arg;
}

/* A program of its own (exec'd: a fork child's descriptors differ), which the
 * signal ends. */
static void child(const char *dir, const char *name, const char *mode)
{
    done = shared_page(dir, "sigend.count", 0); /* (the parent made it) */
    fd = open_in(dir, name, O_WRONLY | O_CREAT | O_TRUNC);
    int round = 0;
    sscanf(name, "sigend-%*[a-z]-%d", &round);
    if (strcmp(mode, "handler") == 0 || strcmp(mode, "oneshot") == 0) {
        struct sigaction sa = { .sa_handler = on_alarm };
        sigemptyset(&sa.sa_mask);
        if (strcmp(mode, "oneshot") == 0)
            sa.sa_flags = SA_RESETHAND;
        if (strcmp(mode, "oneshot") == 0 && round % 2 == 1)
            sysv_signal(SIGALRM, on_alarm);
        else
            sigaction(SIGALRM, &sa, NULL);
        /* (One signal for a one-shot handler: sysv_signal's has SA_NODEFER, and a
         * second would end the child during the handler, with or without unblock.) */
        struct itimerval it = { { 0, strcmp(mode, "oneshot") == 0 ? 0 : 50 },
                                { 0, 5000 + 1000 * (getpid() % 16) } };
        setitimer(ITIMER_REAL, &it, NULL);
    }
    int ends = strcmp(mode, "exit") == 0 || strcmp(mode, "exec") == 0;
    if (strcmp(mode, "thread") == 0 || ends) {
        sigset_t term, old;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &term, &old); /* (the writer starts with it blocked) */
        pthread_t t;
        if (pthread_create(&t, NULL, writer, NULL) != 0)
            _exit(6);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (ends) {
            while (*done == 0) /* (from its first record on) */
                sched_yield();
            struct timespec t = { 0, (10 + round % 16 * 2) * 1000000L };
            nanosleep(&t, NULL);
            if (strcmp(mode, "exec") == 0) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(7);
            }
            exit(0);
        }
        for (;;)
            pause();
    }
    write_all();
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "child") == 0)
        child(argv[2], argv[3], argv[4]);
    if (argc < 3)
        return 2;
    const char *dir = argv[1], *mode = argv[2];
    int handler = strcmp(mode, "handler") == 0 || strcmp(mode, "oneshot") == 0;
    done = shared_page(dir, "sigend.count", 1);
    int wrong = 0, hung = 0, other = 0;
    const char *what = NULL;
    for (int round = 0; round < ROUNDS; round++) {
        char name[64];
        snprintf(name, sizeof(name), "sigend-%s-%d.dat", mode, round);
        *done = 0;
        pid_t pid = fork();
        if (pid < 0)
            return 2;
        if (pid == 0) {
            execl("/proc/self/exe", argv[0], "child", dir, name, mode, (char *)NULL);
            _exit(6);
        }
        int ends = strcmp(mode, "exit") == 0 || strcmp(mode, "exec") == 0;
        if (!handler && !ends) {
            /* From its first record on (a child started late on a loaded machine
             * was once ended before it had opened its file), 10-40 ms later. */
            struct timespec ms = { 0, 1000000L };
            for (int w = 0; w < 5000 && *done == 0; w++) /* (5 s at most) */
                nanosleep(&ms, NULL);
            struct timespec t = { 0, (10 + round % 16 * 2) * 1000000L };
            nanosleep(&t, NULL);
            kill(pid, SIGTERM);
        }
        int status = 0;
        long waited = 0;
        while (waitpid(pid, &status, WNOHANG) == 0) {
            struct timespec t = { 0, 1000000 };
            nanosleep(&t, NULL);
            if (++waited == 5000) { /* 5 s: hung */
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                hung++;
                break;
            }
        }
        if (waited == 5000)
            continue;
        int as_meant = handler || ends
                           ? WIFEXITED(status) && WEXITSTATUS(status) == 0
                               : WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM;
        if (!as_meant) {
            fprintf(stderr, "sigend %s round %d: the child ended otherwise (status 0x%x)\n",
                    mode, round, status);
            other++;
            continue;
        }
        const char *bad = check_ended(dir, name, *done, handler);
        if (bad) {
            fprintf(stderr, "sigend %s round %d: the file (%ld records written) %s\n", mode,
                    round, *done, bad);
            wrong++;
            what = bad;
        }
        char p[4096];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        unlink(p);
    }
    char p[4096];
    snprintf(p, sizeof(p), "%s/sigend.count", dir);
    unlink(p);
    char line[512];
    snprintf(line, sizeof(line), "sigend %s: %d rounds, %d files wrong%s%s, %d hung, %d ended otherwise\n",
             mode, ROUNDS, wrong, what ? ": " : "", what ? what : "", hung, other);
    fputs(line, stdout);
    int res = open_in(dir, "result.txt", O_WRONLY | O_CREAT | O_TRUNC); /* (compared) */
    if (write(res, line, strlen(line)) < 0 || close(res) != 0)
        return 2;
    return hung || other ? 2 : wrong ? 1 : 0;
}
