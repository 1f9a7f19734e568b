/* wb.c — the file calls write-behind must keep exact: every case writes its files
 * in OUTDIR and what each call returned to OUTDIR/result.txt, so the transparency
 * harness compares both, byte for byte, with and without unblock.
 *
 * usage: wb OUTDIR [CASE]   (CASE: all (default), or one of the names below)
 *        wb OUTDIR killed HOW [large]  (writes, then dies: HOW is sigterm, sigint,
 *                               abort or segv; large: 16 MiB of large writes last)
 *        wb OUTDIR enospc DIR  (fills the filesystem of DIR: a small tmpfs)
 *        wb OUTDIR twofs DIR   (writes in OUTDIR and DIR, another filesystem) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <mqueue.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/eventfd.h>
#include <sys/pidfd.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <utime.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "records.h"

static const char *dir;
static FILE *out;
static void fill(char *b, size_t n, unsigned seed);
static void write_mib(int fd, const char *b, size_t n, long *bad);
static void report_file(const char *what, const char *name);

static void path(char *p, size_t n, const char *name)
{
    snprintf(p, n, "%s/%s", dir, name);
}

static int open_file(const char *name, int flags)
{
    return open_in(dir, name, flags);
}

/* 8-byte records, then read back through the same descriptor. */
static void case_small(void)
{
    int fd = open_file("small.dat", O_RDWR | O_CREAT | O_TRUNC);
    long bad = write_records(fd, 0, 200000);
    struct stat st;
    fstat(fd, &st);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    char head[17] = { 0 };
    ssize_t got = pread(fd, head, 16, 8 * 1000);
    fprintf(out, "small: bad writes %ld, size %lld, offset %lld, pread %zd '%.7s'\n", bad,
            (long long)st.st_size, (long long)pos, got, head);
    fprintf(out, "small: close %d\n", close(fd));
}

/* Records written to a file, then another process told through a pipe
 * ("vecnews": writev twice, then vmsplice; the answers read by readv), a socket ("sendnews":
 * send, sendto, sendmsg and sendmmsg in turn, the answers read by recv,
 * recvfrom, recvmsg and recvmmsg) or an unbuffered stdio stream on a pipe
 * ("printnews": fprintf, fputs, fputc and dprintf, whose bytes glibc hands to
 * the kernel itself), a signal ("signews": kill, sigqueue, killpg, pidfd_send_signal) or a message
 * queue ("queuenews": System V's msgsnd, then POSIX's mq_send), an eventfd
 * ("eventnews": eventfd_write, which glibc makes without write()), a semaphore
 * shared between the processes ("semnews": sem_open's, then sem_init's in
 * shared memory, each posted with sem_post) or a name in the
 * directory ("namenews": NAME_CALLS below, each making, changing or taking away
 * a name the child waits for): it must find every record written before.  (The
 * child uses raw system calls: it checks what reached the file.) */
enum { BY_PIPE, BY_SOCKET, BY_STDIO, BY_SIGNAL, BY_QUEUE, BY_NAME, BY_SEM, BY_EVENT };
static int news_event = -1;
static sem_t *news_sem[2];
/* namenews: the call of each round, and whether the name "n<round>" appears
 * (1), goes (0) or, for the times, gets mtime 1000 + round (2). */
static const struct { const char *call; int shows; } name_calls[] = {
    { "rename", 1 }, { "renameat", 1 }, { "renameat2", 1 }, { "link", 1 }, { "linkat", 1 },
    { "symlink", 1 }, { "symlinkat", 1 }, { "mkdir", 1 }, { "mkdirat", 1 }, { "mkfifo", 1 },
    { "mkfifoat", 1 }, { "mknod", 1 }, { "mknodat", 1 }, { "unlink", 0 }, { "unlinkat", 0 },
    { "remove", 0 }, { "rmdir", 0 }, { "utime", 2 }, { "utimes", 2 }, { "lutimes", 2 },
    { "utimensat", 2 }, { "futimens", 2 }, { "futimes", 2 },
};
#define NAME_CALLS ((int)(sizeof(name_calls) / sizeof(name_calls[0])))
/* Before the fork: what each round's call acts on ("o<round>", a file or, for
 * rmdir, a directory; the times' rounds act on "n<round>"), the directory and
 * the descriptors of futimens and futimes open (an open is news itself). */
static int name_dir = -1, name_fd[NAME_CALLS];
static void name_setup(void)
{
    name_dir = open(dir, O_RDONLY | O_DIRECTORY);
    char p[4096], n[32];
    for (int r = 0; r < NAME_CALLS; r++) {
        snprintf(n, sizeof(n), "%c%d", name_calls[r].shows == 2 ? 'n' : 'o', r);
        path(p, sizeof(p), n);
        if (strcmp(name_calls[r].call, "rmdir") == 0 ? mkdir(p, 0755) : close(open(p, O_CREAT | O_WRONLY, 0644)))
            exit(2);
        name_fd[r] = strncmp(name_calls[r].call, "fut", 3) ? -1 : open(p, O_WRONLY);
    }
}
static ssize_t tell_name(int round)
{
    char o[4096], n[4096], on[32], nn[32];
    snprintf(on, sizeof(on), "o%d", round);
    snprintf(nn, sizeof(nn), "n%d", round);
    path(o, sizeof(o), on);
    path(n, sizeof(n), nn);
    const char *c = name_calls[round].call;
    struct timeval tv[2] = { { 1000 + round, 0 }, { 1000 + round, 0 } };
    struct timespec ts[2] = { { 1000 + round, 0 }, { 1000 + round, 0 } };
    struct utimbuf ub = { 1000 + round, 1000 + round };
    int d = name_dir, r = -1;
    if (!strcmp(c, "rename")) r = rename(o, n);
    else if (!strcmp(c, "renameat")) r = renameat(d, on, d, nn);
    else if (!strcmp(c, "renameat2")) r = renameat2(d, on, d, nn, RENAME_NOREPLACE);
    else if (!strcmp(c, "link")) r = link(o, n);
    else if (!strcmp(c, "linkat")) r = linkat(d, on, d, nn, 0);
    else if (!strcmp(c, "symlink")) r = symlink(on, n);
    else if (!strcmp(c, "symlinkat")) r = symlinkat(on, d, nn);
    else if (!strcmp(c, "mkdir")) r = mkdir(n, 0755);
    else if (!strcmp(c, "mkdirat")) r = mkdirat(d, nn, 0755);
    else if (!strcmp(c, "mkfifo")) r = mkfifo(n, 0644);
    else if (!strcmp(c, "mkfifoat")) r = mkfifoat(d, nn, 0644);
    else if (!strcmp(c, "mknod")) r = mknod(n, S_IFREG | 0644, 0);
    else if (!strcmp(c, "mknodat")) r = mknodat(d, nn, S_IFREG | 0644, 0);
    else if (!strcmp(c, "unlink")) r = unlink(o);
    else if (!strcmp(c, "unlinkat")) r = unlinkat(d, on, 0);
    else if (!strcmp(c, "remove") || !strcmp(c, "rmdir")) r = *c == 'r' && c[1] == 'e' ? remove(o) : rmdir(o);
    else if (!strcmp(c, "utime")) r = utime(n, &ub);
    else if (!strcmp(c, "utimes")) r = utimes(n, tv);
    else if (!strcmp(c, "lutimes")) r = lutimes(n, tv);
    else if (!strcmp(c, "utimensat")) r = utimensat(d, nn, ts, 0);
    else
        r = !strcmp(c, "futimens") ? futimens(name_fd[round], ts) : futimes(name_fd[round], tv);
    return r == 0 ? 1 : -1;
}
/* The child: until round's name shows (or goes, or has its time), 10 s at most. */
static int heard_name(int round)
{
    char p[4096], nm[32];
    snprintf(nm, sizeof(nm), "%c%d", name_calls[round].shows == 0 ? 'o' : 'n', round);
    path(p, sizeof(p), nm);
    for (int i = 0; i < 10000; i++) {
        struct stat st;
        int there = syscall(SYS_lstat, p, &st) == 0;
        if (name_calls[round].shows == 2 ? there && st.st_mtime == 1000 + round
                                         : there == name_calls[round].shows)
            return 1;
        struct timespec ms = { 0, 1000000 };
        syscall(SYS_nanosleep, &ms, NULL);
    }
    return 0;
}
static pid_t news_child;
static int news_msq = -1;
static mqd_t news_mq = (mqd_t)-1;
static ssize_t tell(int how, int fd, FILE *f, int round)
{
    struct { long type; char c; } m1 = { 1, 'v' };
    if (how == BY_SIGNAL && round == 3) { /* (the child leads a group of its own) */
        int pfd = pidfd_open(news_child, 0);
        int r = pfd < 0 ? -1 : pidfd_send_signal(pfd, SIGUSR1, NULL, 0);
        if (pfd >= 0)
            close(pfd);
        return r;
    }
    if (how == BY_SIGNAL)
        return round == 0 ? kill(news_child, SIGUSR1)
               : round == 1 ? sigqueue(news_child, SIGUSR1, (union sigval){ .sival_int = 1 })
                            : killpg(news_child, SIGUSR1);
    if (how == BY_QUEUE)
        return round == 0 ? msgsnd(news_msq, &m1, 1, 0) : mq_send(news_mq, "v", 1, 0);
    if (how == BY_NAME)
        return tell_name(round);
    if (how == BY_SEM)
        return sem_post(news_sem[round]) == 0 ? 1 : -1;
    if (how == BY_EVENT)
        return eventfd_write(news_event, 1) == 0 ? 1 : -1;
    char tag[2] = { 'v', 'n' };
    struct iovec iov[2] = { { tag, 1 }, { tag + 1, 0 } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
    struct mmsghdr mm = { .msg_hdr = m };
    if (how == BY_PIPE)
        return round == 2 ? vmsplice(fd, iov, 1, 0) : writev(fd, iov, 2);
    if (how == BY_STDIO) {
        static char small[16];
        static FILE *g;
        switch (round) {
        case 0: return fprintf(f, "%c", tag[0]);
        case 1: return fputs("v", f) >= 0 ? 1 : -1;
        case 2: return fputc('v', f) == 'v' ? 1 : -1;
        case 3: return dprintf(fd, "v");
        default: /* fully buffered, 16 bytes: 32 of them reach the kernel in the call */
            if ((g = fdopen(dup(fd), "w")) == NULL || setvbuf(g, small, _IOFBF, sizeof small))
                return -1;
            ssize_t k = fputs("vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv", g) >= 0 ? 32 : -1;
            fclose(g);
            return k;
        }
    }
    switch (round) {
    case 0: return send(fd, tag, 1, 0);
    case 1: return sendto(fd, tag, 1, 0, NULL, 0);
    case 2: return sendmsg(fd, &m, 0);
    default: return sendmmsg(fd, &mm, 1, 0) == 1 ? (ssize_t)mm.msg_len : -1;
    }
}
static ssize_t hear(int sock, int fd, int round, long *seen)
{
    struct iovec iov[1] = { { seen, sizeof *seen } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 1 };
    struct mmsghdr mm = { .msg_hdr = m };
    if (!sock)
        return readv(fd, iov, 1);
    switch (round) {
    case 0: return recv(fd, seen, sizeof *seen, MSG_WAITALL);
    case 1: return recvfrom(fd, seen, sizeof *seen, MSG_WAITALL, NULL, NULL);
    case 2: return recvmsg(fd, &m, MSG_WAITALL);
    default: return recvmmsg(fd, &mm, 1, MSG_WAITALL, NULL) == 1 ? (ssize_t)mm.msg_len : -1;
    }
}
static void channel_news(const char *name, int how)
{
    int p[2], q[2], sock = how == BY_SOCKET;
    int rounds = how == BY_QUEUE || how == BY_SEM || how == BY_EVENT ? 2 : how == BY_PIPE ? 3 : how == BY_STDIO ? 5
               : how == BY_NAME ? NAME_CALLS : 4;
    if (sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) != 0 ||
                   socketpair(AF_UNIX, SOCK_STREAM, 0, q) != 0
             : pipe(p) != 0 || pipe(q) != 0)
        exit(2);
    char file[64], mqname[64];
    snprintf(file, sizeof(file), "%s.dat", name);
    snprintf(mqname, sizeof(mqname), "/unblock-wb-%d", (int)getpid());
    sigset_t usr1, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    if (how == BY_SIGNAL) /* (blocked before the fork: the child waits for it) */
        sigprocmask(SIG_BLOCK, &usr1, &old);
    if (how == BY_QUEUE) {
        struct mq_attr a = { .mq_maxmsg = 4, .mq_msgsize = 8 };
        news_msq = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
        news_mq = mq_open(mqname, O_CREAT | O_RDWR, 0600, &a);
        if (news_msq < 0 || news_mq == (mqd_t)-1)
            exit(2);
    }
    if (how == BY_NAME)
        name_setup();
    if (how == BY_EVENT && (news_event = eventfd(0, 0)) < 0)
        exit(2);
    if (how == BY_SEM) {
        news_sem[0] = sem_open(mqname, O_CREAT | O_EXCL, 0600, 0);
        news_sem[1] = mmap(NULL, sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (news_sem[0] == SEM_FAILED || news_sem[1] == MAP_FAILED || sem_init(news_sem[1], 1, 0) != 0)
            exit(2);
    }
    fflush(out);
    pid_t pid = fork();
    if (pid == 0) {
        char dp[4096], x;
        path(dp, sizeof(dp), file);
        for (int round = 0; round < rounds; round++) {
            struct { long type; char c[8]; } m;
            long ok;
            if (how == BY_SIGNAL)
                ok = syscall(SYS_rt_sigtimedwait, &usr1, NULL, NULL, 8) == SIGUSR1;
            else if (how == BY_QUEUE)
                ok = round == 0 ? syscall(SYS_msgrcv, news_msq, &m, 8, 0, 0) == 1
                                : syscall(SYS_mq_timedreceive, news_mq, m.c, 8, NULL, NULL) == 1;
            else if (how == BY_NAME)
                ok = heard_name(round);
            else if (how == BY_SEM)
                ok = sem_wait(news_sem[round]) == 0;
            else if (how == BY_EVENT)
                ok = syscall(SYS_read, news_event, m.c, 8) == 8;
            else
                ok = syscall(SYS_read, sock ? p[1] : p[0], &x, 1) == 1;
            if (!ok)
                _exit(1);
            struct stat st;
            long size = syscall(SYS_stat, dp, &st) == 0 ? (long)st.st_size : -1;
            syscall(SYS_write, sock ? q[0] : q[1], &size, sizeof size);
        }
        _exit(0);
    }
    news_child = pid;
    if (how == BY_SIGNAL) {
        setpgid(pid, pid); /* (killpg's round: the child alone in its group) */
        sigprocmask(SIG_SETMASK, &old, NULL);
    }
    /* (opened after the fork: a descriptor the child shares is not merged) */
    int fd = open_file(file, O_WRONLY | O_CREAT | O_TRUNC);
    int tfd = p[sock ? 0 : 1];
    FILE *f = NULL;
    if (how == BY_STDIO) { /* unbuffered: each call's bytes go to the kernel in it */
        tfd = dup(p[1]);
        f = fdopen(tfd, "w");
        if (f == NULL || setvbuf(f, NULL, _IONBF, 0) != 0)
            exit(2);
    }
    long bad = 0;
    for (int round = 0; round < rounds; round++) {
        bad += write_records(fd, round * 5000, (round + 1) * 5000);
        ssize_t w = tell(how, tfd, f, round);
        long seen = 0;
        ssize_t r = hear(sock, sock ? q[1] : q[0], round, &seen);
        fprintf(out, "%s: round %d: told %zd, heard %zd, the child saw %ld bytes\n", name, round,
                w, r, seen);
    }
    waitpid(pid, NULL, 0);
    fprintf(out, "%s: bad writes %ld, close %d\n", name, bad, close(fd));
    if (f != NULL)
        fclose(f);
    if (how == BY_QUEUE) {
        msgctl(news_msq, IPC_RMID, NULL);
        mq_close(news_mq);
        mq_unlink(mqname);
    }
    if (how == BY_EVENT)
        close(news_event);
    if (how == BY_SEM) {
        sem_close(news_sem[0]);
        sem_unlink(mqname);
        sem_destroy(news_sem[1]);
        munmap(news_sem[1], sizeof(sem_t));
    }
    close(p[0]), close(p[1]), close(q[0]), close(q[1]);
}
static void case_vecnews(void)
{
    channel_news("vecnews", BY_PIPE);
}
static void case_sendnews(void)
{
    channel_news("sendnews", BY_SOCKET);
}
static void case_printnews(void)
{
    channel_news("printnews", BY_STDIO);
}
static void case_signews(void)
{
    channel_news("signews", BY_SIGNAL);
}
static void case_queuenews(void)
{
    channel_news("queuenews", BY_QUEUE);
}
static void case_eventnews(void)
{
    channel_news("eventnews", BY_EVENT);
}
static void case_semnews(void)
{
    channel_news("semnews", BY_SEM);
}
static void case_namenews(void)
{
    channel_news("namenews", BY_NAME);
    /* (the names go: a FIFO or a directory is no file to compare) */
    char p[4096], n[32];
    close(name_dir);
    for (int r = 0; r < NAME_CALLS; r++)
        if (name_fd[r] >= 0)
            close(name_fd[r]);
    for (int r = 0; r < NAME_CALLS; r++)
        for (int k = 0; k < 2; k++) {
            snprintf(n, sizeof(n), "%c%d", "on"[k], r);
            path(p, sizeof(p), n);
            if (unlink(p) != 0)
                rmdir(p);
        }
}

/* A signal handler that writes (to a descriptor unblock does not follow) and
 * sends a signal, as a handler that reports progress or forwards a signal does,
 * while the program's loop makes small writes that are merged: the handler's
 * calls may come while the loop is inside unblock with a descriptor's lock
 * held.  They must neither wait for that lock (the process would hang) nor
 * lose a byte.  A timer raises the signal every 50 us. */
static int sig_fd = -1;
static volatile sig_atomic_t sig_seen;
static void on_alarm(int sig)
{
    int e = errno;
    sig_seen++;
    if (write(sig_fd, "s", 1) != 1)
        _exit(3);
    kill(getpid(), SIGURG); /* (ignored by default) */
    errno = e;
}
static void case_sigwrite(void)
{
    sig_fd = open("/dev/null", O_WRONLY);
    struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 50 }, { 0, 50 } };
    setitimer(ITIMER_REAL, &it, NULL);
    int fd = open_file("sigwrite.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    for (int round = 0; round < 4; round++)
        bad += write_records(fd, round * 50000, (round + 1) * 50000);
    struct itimerval off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &off, NULL);
    fprintf(out, "sigwrite: bad writes %ld, signals %s, close %d\n", bad,
            sig_seen > 10 ? "many" : "few", close(fd));
    close(sig_fd);
    report_file("sigwrite", "sigwrite.dat");
}

/* The same with a handler that writes to the very descriptor the loop's writes
 * are merged on (a marker record at its offset; the first time also 8 bytes by
 * pwrite at a fixed place past the loop's end, which forces the block out: more
 * would stop the merging), every 50 us: the handler often comes
 * while the loop holds that descriptor's lock.  Before, the process hung
 * there.  The file must hold the loop's records in order with one marker
 * between them for each signal, then the pwrite's bytes.  (The count of
 * signals differs from run to run: the file is checked here, then removed.) */
#define SAME_RECORDS 400000
#define SAME_FAR (8L * (SAME_RECORDS + 100000))
static int same_fd = -1;
static volatile sig_atomic_t same_seen;
static void on_same(int sig)
{
    (void)sig;
    int e = errno;
    if (write(same_fd, "SIGNAL!\n", 8) != 8 ||
        (same_seen == 0 && pwrite(same_fd, "PWRITE!\n", 8, SAME_FAR) != 8))
        _exit(3);
    same_seen++;
    errno = e;
}
static const char *sigsame_check(int fd, long seen)
{
    char buf[8];
    struct stat st;
    long rec, marks, end = scan_records(fd, SAME_RECORDS, 0, &rec, &marks);
    if (end < 0 || fstat(fd, &st) != 0 || (rec < SAME_RECORDS && end + 8 > (long)st.st_size))
        return "ends early";
    if (rec < SAME_RECORDS)
        return "holds a record out of place";
    /* (markers after the last record, then zeros to the pwrite's place) */
    if (end + 8 > (long)st.st_size)
        return "ends before the pwrite's bytes";
    if (marks != seen)
        return "holds another count of markers than signals";
    if (seen > 0 && (pread(fd, buf, 8, SAME_FAR) != 8 || memcmp(buf, "PWRITE!\n", 8) != 0))
        return "lacks the pwrite's bytes";
    return NULL;
}
/* The same handler installed by the raw system call, as a runtime that does
 * its own (or one installed before unblock was loaded): unblock cannot hold
 * such a signal, so the writes it makes in the middle of ours are kept and
 * made after (drain.c: wb_defer).  x86-64's kernel sigaction, with a restorer
 * of our own. */
/* The kernel's struct sigaction (x86-64's, with SA_RESTORER's restorer). */
typedef struct {
    void *handler;
    unsigned long flags;
    void *restorer;
    unsigned long mask;
} kernel_sigaction_t;
#define KERNEL_SA_RESTORER 0x04000000ul
#if defined(__x86_64__)
void sigsame_restore_rt(void);
__asm__(".text\n.type sigsame_restore_rt,@function\nsigsame_restore_rt:\n"
        "\tmov $15, %rax\n\tsyscall\n");
static int install_raw(int sig, void (*fn)(int))
{
    kernel_sigaction_t k = { (void *)fn, SA_RESTART | KERNEL_SA_RESTORER,
                             (void *)sigsame_restore_rt, 0 };
    return (int)syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof(k.mask));
}
#else
static int install_raw(int sig, void (*fn)(int))
{
    struct sigaction sa = { .sa_handler = fn, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}
#endif
static int same_raw;
static void case_sigsame(void)
{
    same_fd = open_file("sigsame.dat", O_RDWR | O_CREAT | O_TRUNC);
    struct sigaction sa = { .sa_handler = on_same, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    if (same_raw ? install_raw(SIGALRM, on_same) != 0 : sigaction(SIGALRM, &sa, NULL) != 0)
        exit(2);
    struct itimerval it = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
    setitimer(ITIMER_REAL, &it, NULL);
    long bad = write_records(same_fd, 0, SAME_RECORDS);
    setitimer(ITIMER_REAL, &off, NULL);
    long seen = same_seen;
    const char *wrong = sigsame_check(same_fd, seen);
    fprintf(out, "sigsame: bad writes %ld, signals %s, the file %s%s, close %d\n", bad,
            seen > 10 ? "many" : "few", wrong ? "MISMATCH: " : "holds every record and marker",
            wrong ? wrong : "", close(same_fd));
    char p[4096];
    path(p, sizeof(p), "sigsame.dat");
    unlink(p);
}

/* The same on a thread of the program's, which then ends (the main thread
 * blocks SIGALRM meanwhile, so the thread takes them): its held signals' page
 * goes with it (signals.c: unblock_protect_thread_fini). */
static void *sigsame_thread(void *arg)
{
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL); /* (blocked by its creator) */
    case_sigsame();
    return arg;
}
static void case_sigsame_thread(void)
{
    sigset_t alrm, old;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, &old);
    pthread_t t;
    if (pthread_create(&t, NULL, sigsame_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
        exit(2);
    signal(SIGALRM, SIG_IGN); /* (one may be pending for the process: its file is closed) */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
/* A handler read back two ways: sigaction returns the program's own (flags
 * too); the raw system call returns what is installed (with unblock, its
 * trampoline), and installing that again through sigaction keeps the
 * program's handler (before, the trampoline called itself for ever). */
static volatile sig_atomic_t usr2_seen;
static void on_usr2(int sig)
{
    (void)sig;
    usr2_seen++;
}
static void case_sigreinstall(void)
{
    struct sigaction sa = { .sa_handler = on_usr2, .sa_flags = SA_RESTART }, q;
    sigemptyset(&sa.sa_mask);
    int ok = sigaction(SIGUSR2, &sa, NULL) == 0 && sigaction(SIGUSR2, NULL, &q) == 0 &&
             q.sa_handler == on_usr2 && (q.sa_flags & (SA_SIGINFO | SA_RESTART)) == SA_RESTART;
    kernel_sigaction_t k;
    ok = ok && syscall(SYS_rt_sigaction, SIGUSR2, NULL, &k, sizeof(k.mask)) == 0;
    struct sigaction again = { .sa_flags = (int)(k.flags & ~KERNEL_SA_RESTORER) };
    again.sa_sigaction = (void (*)(int, siginfo_t *, void *))k.handler;
    sigemptyset(&again.sa_mask);
    ok = ok && sigaction(SIGUSR2, &again, NULL) == 0;
    raise(SIGUSR2);
    raise(SIGUSR2);
    fprintf(out, "sigreinstall: query %s, handler ran %d times\n", ok ? "ok" : "MISMATCH",
            (int)usr2_seen);
    signal(SIGUSR2, SIG_DFL);
}

/* One-shot handlers (sigaction's SA_RESETHAND, sysv_signal), which unblock
 * now calls through its trampoline and resets itself (signals.c): the first
 * signal runs the handler and leaves the default action (SIGWINCH's: ignored);
 * a query shows the program's flags; a System V handler that installs itself
 * again runs every time (the reset comes before it, never after); sigset's
 * handler stays.  The output must equal the kernel's own. */
static volatile sig_atomic_t winch_seen;
static void on_winch(int sig)
{
    (void)sig;
    winch_seen++;
}
static void on_winch_again(int sig)
{
    sysv_signal(sig, on_winch_again);
    winch_seen++;
}
static int winch_raised(int times)
{
    winch_seen = 0;
    for (int i = 0; i < times; i++)
        raise(SIGWINCH);
    return (int)winch_seen;
}
static void case_sigoneshot(void)
{
    struct sigaction sa = { .sa_handler = on_winch, .sa_flags = SA_RESETHAND | SA_RESTART }, q;
    sigemptyset(&sa.sa_mask);
    int query = sigaction(SIGWINCH, &sa, NULL) == 0 && sigaction(SIGWINCH, NULL, &q) == 0 &&
                q.sa_handler == on_winch &&
                (q.sa_flags & (SA_RESETHAND | SA_RESTART | SA_SIGINFO)) == (SA_RESETHAND | SA_RESTART);
    int ran = winch_raised(3);
    int reset = sigaction(SIGWINCH, NULL, &q) == 0 && q.sa_handler == SIG_DFL &&
                !(q.sa_flags & SA_SIGINFO);
    sysv_signal(SIGWINCH, on_winch);
    int sysv = winch_raised(2);
    sysv_signal(SIGWINCH, on_winch_again);
    int again = winch_raised(3);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    sigset(SIGWINCH, on_winch); /* (what some old programs still call) */
#pragma GCC diagnostic pop
    int kept = sigaction(SIGWINCH, NULL, &q) == 0 && q.sa_handler == on_winch &&
               !(q.sa_flags & SA_RESETHAND);
    int set = winch_raised(2);
    signal(SIGWINCH, SIG_DFL);
    fprintf(out, "sigoneshot: query %s, sigaction's ran %d and %s, sysv_signal's ran %d, "
                 "again %d, sigset's ran %d and %s\n",
            query ? "ok" : "MISMATCH", ran, reset ? "reset" : "NOT RESET", sysv, again, set,
            kept ? "stayed" : "DID NOT STAY");
}

/* Threads of the program's that end by pthread_exit, not by returning: each
 * had an alternate signal stack of unblock's (64 KiB, signals.c), which now goes
 * with it (threads.c: a cleanup handler).  Before, 256 of them left 16 MiB
 * mapped. */
static void *exit_thread(void *arg)
{
    pthread_exit(arg);
}
static long vm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmSize: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}
static void case_threadexit(void)
{
    long before = 0;
    for (int i = 0; i < 257; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, exit_thread, NULL) != 0 || pthread_join(t, NULL) != 0)
            exit(2);
        if (i == 0)
            before = vm_kib(); /* (after one: glibc keeps a thread's stack for the next) */
    }
    long grew = vm_kib() - before;
    fprintf(out, "threadexit: the threads' memory %s\n",
            before > 0 && grew < 4096 ? "was returned" : "WAS KEPT");
}

static void case_sigsame_raw(void)
{
    same_raw = 1;
    case_sigsame();
    same_raw = 0;
}

/* A program that signals its own process group (kill(0, SIGUSR1), as one that
 * tells its helpers) while its writes are merged: the crash-safety sidecar is
 * not in that group, so it is not ended by it (before, SIGUSR1's default action
 * ended it, and a warning said write-behind went on without it).  The case
 * makes the program a group leader first: the group is then the program alone
 * without unblock. */
static volatile sig_atomic_t usr1_seen;
static void on_usr1(int sig)
{
    (void)sig;
    usr1_seen++;
}
static void case_groupsig(void)
{
    if (setpgid(0, 0) != 0)
        exit(2);
    struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    int fd = open_file("groupsig.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    for (int round = 0; round < 4; round++) {
        bad += write_records(fd, round * 5000, (round + 1) * 5000);
        bad += kill(0, SIGUSR1) != 0;
    }
    bad += write_records(fd, 20000, 25000);
    fprintf(out, "groupsig: bad calls %ld, signals seen %d, close %d\n", bad, (int)usr1_seen,
            close(fd));
    report_file("groupsig", "groupsig.dat");
}

/* Small writes merged, then the descriptor closed by close_range (and another
 * by closefrom): its bytes must reach its file, not the file a later open gets
 * the same number for.  (closefrom also closes the runtime's own descriptors,
 * numbered high: docs/fileio.md.) */
static void case_closerange(void)
{
    int a = open_file("closerange-a.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = write_records(a, 0, 20000);
    int r = close_range((unsigned)a, (unsigned)a, 0);
    int b = open_file("closerange-b.dat", O_WRONLY | O_CREAT | O_TRUNC); /* a's number */
    bad += write_records(b, 0, 3);
    int c = open_file("closerange-c.dat", O_WRONLY | O_CREAT | O_TRUNC); /* the highest */
    bad += write_records(c, 0, 20000);
    int closed = 0; /* a daemon's loop: none of these numbers is the program's */
    for (int x = c + 1; x < 1024; x++)
        closed += close(x) == 0;
    closefrom(c);
    int c3 = open_file("closerange-d.dat", O_WRONLY | O_CREAT | O_TRUNC); /* c's number */
    bad += write_records(c3, 0, 3);
    fprintf(out, "closerange: bad writes %ld, close_range %d, same number %d %d, closes %d %d, "
            "closed by the loop %d\n", bad, r, a == b, c == c3, close(b), close(c3), closed);
    report_file("closerange a", "closerange-a.dat");
    report_file("closerange b", "closerange-b.dat");
    report_file("closerange c", "closerange-c.dat");
    report_file("closerange d", "closerange-d.dat");
}

/* Small writes to a file, each followed by a character to a fully buffered
 * stdio log (and a line every 1,000): the log's characters reach the kernel
 * only when its buffer fills, so they are no news until then, and the file's
 * writes keep being merged (docs/fileio.md). */
/* 20000 records, each with one write() and followed by beside(i, arg): how
 * many of those calls failed. */
static long records_beside(int fd, int (*beside)(int i, void *arg), void *arg)
{
    long bad = 0;
    char r[9];
    for (int i = 0; i < 20000; i++) {
        record(r, i);
        bad += write(fd, r, 8) != 8;
        bad += beside(i, arg) != 0;
    }
    return bad;
}
static int log_char(int i, void *log)
{
    fputc('.', log);
    if (i % 1000 == 999)
        fprintf(log, " %d\n", i);
    return 0;
}
static int post_wait(int i, void *s)
{
    (void)i;
    return sem_post(s) != 0 || sem_wait(s) != 0;
}
static void case_printlog(void)
{
    int fd = open_file("printlog.dat", O_WRONLY | O_CREAT | O_TRUNC);
    char lp[4096];
    path(lp, sizeof(lp), "printlog.log");
    FILE *log = fopen(lp, "w");
    if (log == NULL)
        exit(2);
    long bad = records_beside(fd, log_char, log);
    fprintf(out, "printlog: bad writes %ld, closes %d %d\n", bad, close(fd), fclose(log));
    report_file("printlog", "printlog.dat");
    report_file("printlog log", "printlog.log");
}

/* Each small write followed by a post and a wait of a semaphore private to the
 * process (as a thread pool's): no news, so the writes stay merged. */
static void case_sempriv(void)
{
    int fd = open_file("sempriv.dat", O_WRONLY | O_CREAT | O_TRUNC);
    sem_t s;
    if (sem_init(&s, 0, 0) != 0)
        exit(2);
    long bad = records_beside(fd, post_wait, &s);
    sem_destroy(&s);
    fprintf(out, "sempriv: bad calls %ld, close %d\n", bad, close(fd));
    report_file("sempriv", "sempriv.dat");
}

/* Each write to a file followed by one to a log opened O_APPEND (never merged,
 * so each is news that the file was written): its blocks are forced out before
 * they pay, and it stops merging (io.merge_stops); then runs of 100 writes per
 * log line, which merging pays for again; then lseek and rewrites in between. */
static void case_news(void)
{
    int fd = open_file("news.dat", O_RDWR | O_CREAT | O_TRUNC);
    int log = open_file("news.log", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND);
    char r[9];
    long bad = 0;
    for (int i = 0; i < 20000; i++) {
        record(r, i);
        bad += write(fd, r, 8) != 8;
        bad += write(log, "n", 1) != 1;
        if (i % 1000 == 999) {
            off_t back = lseek(fd, -800, SEEK_CUR); /* a rewrite of 100 records */
            for (int k = 0; k < 100; k++)
                bad += write(fd, "REWRITE!", 8) != 8;
            fprintf(out, "news: lseek back %lld\n", (long long)back);
        }
    }
    for (int i = 0; i < 20000; i++) {
        record(r, i);
        bad += write(fd, r, 8) != 8;
        if (i % 100 == 99)
            bad += write(log, "m", 1) != 1;
    }
    struct stat st;
    fstat(fd, &st);
    fprintf(out, "news: bad writes %ld, size %lld, offset %lld\n", bad, (long long)st.st_size,
            (long long)lseek(fd, 0, SEEK_CUR));
    fprintf(out, "news: close %d %d\n", close(fd), close(log));
}

/* pwrite patches into what was just written, then more sequential writes. */
static void case_patch(void)
{
    int fd = open_file("patch.dat", O_WRONLY | O_CREAT | O_TRUNC);
    char r[9];
    for (int i = 0; i < 5000; i++) {
        record(r, i);
        write(fd, r, 8);
        if (i % 1000 == 999) {
            ssize_t p = pwrite(fd, "PATCHED", 7, (off_t)(i - 500) * 8);
            fprintf(out, "patch: pwrite %zd at record %d\n", p, i - 500);
        }
    }
    ssize_t past = pwrite(fd, "END", 3, 5000 * 8 + 100); /* a hole, then data */
    for (int i = 0; i < 100; i++)
        write(fd, "abcdefgh", 8);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    fprintf(out, "patch: past end %zd, offset %lld, close %d\n", past, (long long)pos,
            close(fd));
}

/* Two descriptors sharing one offset. */
static void case_dup(void)
{
    int fd = open_file("dup.dat", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < 10; i++)
        write(fd, "aaaaaaaa", 8);
    int fd2 = dup(fd);
    for (int i = 0; i < 1000; i++) {
        write(i % 2 ? fd : fd2, i % 2 ? "odd....\n" : "even...\n", 8);
    }
    fprintf(out, "dup: offsets %lld %lld\n", (long long)lseek(fd, 0, SEEK_CUR),
            (long long)lseek(fd2, 0, SEEK_CUR));
    close(fd2);
    close(fd);
}

/* Read-ahead: 8-byte reads of a file, with what could make a read-ahead buffer
 * stale or the kernel's offset wrong in between: the end of the file and the
 * file growing past it, a write and a truncation through another descriptor, a
 * writer in another process that tells us through a pipe, dup, fork (the child
 * reads on from the shared offset), lseek, a bad buffer, /proc. */
static unsigned long sum_reads(int fd, long n, long *got)
{
    unsigned long s = 0;
    char b[8];
    *got = 0;
    for (long i = 0; i < n; i++) {
        ssize_t r = read(fd, b, sizeof(b));
        if (r <= 0)
            break;
        *got += r;
        for (ssize_t k = 0; k < r; k++)
            s = s * 31 + (unsigned char)b[k];
    }
    return s;
}

/* Rows of `len` bytes read one pread each from `off` on: the checksum of `rows`
 * of them, the bytes got (a short row ends it). */
static unsigned long sum_preads(int fd, off_t off, size_t len, long rows, long *got)
{
    unsigned long s = 0;
    char b[4096];
    *got = 0;
    for (long i = 0; i < rows; i++) {
        ssize_t r = pread(fd, b, len, off + *got);
        for (ssize_t k = 0; k < r; k++)
            s = s * 31 + (unsigned char)b[k];
        if (r > 0)
            *got += r;
        if (r < (ssize_t)len)
            break;
    }
    return s;
}

/* Rows read one pread each, in turn (a grid read row by row): served from the
 * read-ahead buffer, never stale. */
static void case_preads(void)
{
    int w = open_file("preads.dat", O_RDWR | O_CREAT | O_TRUNC);
    write_records(w, 0, 40000); /* 320 000 bytes */
    fsync(w);
    close(w); /* unblock reads ahead only while nothing has the file open for writing */
    int fd = open_file("preads.dat", O_RDONLY);
    long got, got2;
    unsigned long s1 = sum_preads(fd, 0, 4096, 20, &got);
    /* Changed through another descriptor: the next row reads the new bytes. */
    w = open_file("preads.dat", O_RDWR);
    pwrite(w, "CHANGED!", 8, got + 16);
    unsigned long s2 = sum_preads(fd, got, 4096, 2, &got2);
    fprintf(out, "preads: 20 rows %ld bytes sum %lu; after a pwrite elsewhere %ld bytes sum %lu, "
            "offset %lld\n", got, s1, got2, s2, (long long)lseek(fd, 0, SEEK_CUR));
    /* read() between them: its offset is its own; then rows up to the end and
     * past it, then the file grows. */
    char b8[8];
    ssize_t r8 = read(fd, b8, 8);
    unsigned long s3 = sum_preads(fd, 22 * 4096, 4096, 1000, &got);
    char row[4096];
    ssize_t past = pread(fd, row, 4096, 22 * 4096 + got);
    lseek(w, 0, SEEK_END);
    write(w, "grown..!", 8);
    ssize_t grown = pread(fd, row, 4096, 22 * 4096 + got);
    fprintf(out, "preads: read() %zd '%.7s', to the end %ld bytes sum %lu, past it %zd, after "
            "growing %zd '%.8s', offset %lld\n", r8, b8, got, s3, past, grown,
            grown > 0 ? row : "", (long long)lseek(fd, 0, SEEK_CUR));
    /* Truncated through the other descriptor while reading rows. */
    sum_preads(fd, 4096, 4096, 5, &got);
    ftruncate(w, 6 * 4096 + 100);
    unsigned long s4 = sum_preads(fd, 6 * 4096, 4096, 5, &got);
    fprintf(out, "preads: after truncation %ld bytes sum %lu\n", got, s4);
    /* Another process writes the next row; it tells us through a pipe. */
    ftruncate(w, 0);
    write_records(w, 0, 40000);
    fsync(w);
    close(w);
    int p[2], go[2];
    if (pipe(p) != 0 || pipe(go) != 0)
        exit(2);
    fflush(out);
    pid_t pid = fork();
    if (pid == 0) {
        char x;
        syscall(SYS_read, go[0], &x, 1);
        int c = open_file("preads.dat", O_WRONLY);
        syscall(SYS_pwrite64, c, "PROCESS!", 8, 10 * 4096 + 8);
        syscall(SYS_write, p[1], "x", 1);
        _exit(0);
    }
    int fr = open_file("preads.dat", O_RDONLY);
    sum_preads(fr, 0, 4096, 10, &got); /* reading ahead from here on */
    write(go[1], "g", 1);
    char x;
    read(p[0], &x, 1); /* the news arrives through a pipe */
    unsigned long s5 = sum_preads(fr, 10 * 4096, 4096, 1, &got);
    waitpid(pid, NULL, 0);
    ssize_t bad = pread(fr, (void *)(uintptr_t)4096, 4096, 11 * 4096);
    int be = errno;
    fprintf(out, "preads: told through a pipe: %ld bytes sum %lu; bad buffer %zd (%s)\n", got, s5,
            bad, strerror(be));
    close(fr);
    close(fd);
}

/* Read-ahead and news unblock cannot see: another process rewrites the next
 * records and tells the program by a signal, or through shared memory (no call
 * at all); or it had the file open for writing before the reads began.  The
 * next reads must return the new bytes, and the writer's open must not wait for
 * a lease (lease-break-time is 45 s here). */
static void case_stale(void)
{
    static const char *how[] = { "a signal", "shared memory", "a writer open before" };
    int w = open_file("stale.dat", O_WRONLY | O_CREAT | O_TRUNC);
    write_records(w, 0, 40000);
    fsync(w);
    close(w);
    char p[4096];
    path(p, sizeof(p), "stale.dat");
    volatile uint32_t *flag = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                                   -1, 0);
    if (flag == MAP_FAILED)
        exit(2);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    for (int m = 0; m < 3; m++) {
        flag[0] = flag[1] = flag[2] = 0; /* opened, go, done */
        fflush(out);
        pid_t pid = fork(); /* before the open: a fork stops following descriptors */
        if (pid == 0) {
            int c = -1;
            if (m == 2) {
                c = (int)syscall(SYS_openat, AT_FDCWD, p, O_WRONLY);
                __atomic_store_n(&flag[0], 1, __ATOMIC_SEQ_CST);
            }
            while (!__atomic_load_n(&flag[1], __ATOMIC_SEQ_CST))
                syscall(SYS_sched_yield);
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            if (c < 0)
                c = (int)syscall(SYS_openat, AT_FDCWD, p, O_WRONLY);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            char r[9];
            for (int i = 100; i < 200; i++) {
                snprintf(r, sizeof(r), "NEW%04d\n", i);
                syscall(SYS_pwrite64, c, r, 8, (off_t)i * 8);
            }
            syscall(SYS_close, c);
            flag[3] = t1.tv_sec - t0.tv_sec > 5; /* the open waited for a lease */
            if (m == 0)
                syscall(SYS_kill, getppid(), SIGUSR1);
            else
                __atomic_store_n(&flag[2], 1, __ATOMIC_SEQ_CST);
            syscall(SYS_exit_group, 0);
        }
        if (m == 2)
            while (!__atomic_load_n(&flag[0], __ATOMIC_SEQ_CST))
                sched_yield();
        int fd = open_file("stale.dat", O_RDONLY);
        long got, fresh = 0;
        sum_reads(fd, 100, &got); /* read ahead from here on, if it may */
        __atomic_store_n(&flag[1], 1, __ATOMIC_SEQ_CST);
        if (m == 0) {
            int sig;
            sigwait(&usr1, &sig);
        } else {
            while (!__atomic_load_n(&flag[2], __ATOMIC_SEQ_CST))
                sched_yield();
        }
        char b[8];
        for (int i = 0; i < 100; i++)
            if (read(fd, b, 8) == 8 && memcmp(b, "NEW", 3) == 0)
                fresh++;
        waitpid(pid, NULL, 0);
        fprintf(out, "stale: told by %s: %ld of 100 records new, the writer's open %s\n", how[m],
                fresh, flag[3] ? "waited for a lease" : "did not wait");
        if (fresh != 100)
            fprintf(out, "MISMATCH: stale records read after %s\n", how[m]);
        close(fd);
    }
    sigprocmask(SIG_UNBLOCK, &usr1, NULL);
    munmap((void *)flag, 4096);
}

static void case_reads(void)
{
    int w = open_file("reads.dat", O_RDWR | O_CREAT | O_TRUNC);
    write_records(w, 0, 20000);
    fsync(w);
    close(w); /* unblock reads ahead only while nothing has the file open for writing */
    int fd = open_file("reads.dat", O_RDONLY);
    long got;
    long got1;
    unsigned long s1 = sum_reads(fd, 10000, &got1);
    /* Changed through another descriptor: the rest reads the new bytes. */
    w = open_file("reads.dat", O_RDWR);
    pwrite(w, "CHANGED!", 8, 10001 * 8);
    unsigned long s2 = sum_reads(fd, 5, &got);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    fprintf(out, "reads: first %ld bytes sum %lu; after a pwrite elsewhere %ld bytes sum %lu, "
            "offset %lld\n", got1, s1, got, s2, (long long)pos);
    /* Up to the end, past it, then the file grows. */
    unsigned long s3 = sum_reads(fd, 20000, &got);
    char tail[8];
    ssize_t eof = read(fd, tail, 8);
    lseek(w, 0, SEEK_END);
    write(w, "grown..!", 8);
    ssize_t grown = read(fd, tail, 8);
    fprintf(out, "reads: to the end %ld bytes sum %lu, then %zd, after growing %zd '%.8s'\n", got,
            s3, eof, grown, grown > 0 ? tail : "");
    /* Truncated through the other descriptor while reading. */
    lseek(fd, 100, SEEK_SET);
    sum_reads(fd, 10, &got);
    ftruncate(w, 200);
    unsigned long s4 = sum_reads(fd, 100, &got);
    fprintf(out, "reads: after truncation to 200 %ld bytes sum %lu\n", got, s4);
    /* Another process writes; it tells us through a pipe, then through a socket
     * (the news read by recv). */
    close(w);
    pid_t pid;
    for (int sock = 0; sock < 2; sock++) {
        w = open_file("reads.dat", O_WRONLY | O_TRUNC);
        write_records(w, 0, 4000);
        fsync(w);
        close(w);
        int p[2], go[2];
        if ((sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p)) != 0 || pipe(go) != 0)
            exit(2);
        fflush(out);
        pid = fork(); /* before the reads: fork itself drops read-ahead */
        if (pid == 0) {
            char x;
            syscall(SYS_read, go[0], &x, 1);
            int c = open_file("reads.dat", O_WRONLY);
            syscall(SYS_pwrite64, c, "PROCESS!", 8, 10 * 8); /* the next record read */
            syscall(SYS_write, p[1], "x", 1);
            _exit(0);
        }
        int fr = open_file("reads.dat", O_RDONLY); /* fd is shared with the child now */
        sum_reads(fr, 10, &got); /* read ahead from here on */
        write(go[1], "g", 1);
        char x;
        if (sock)
            recv(p[0], &x, 1, 0); /* the news arrives */
        else
            read(p[0], &x, 1);
        char b[8];
        ssize_t rr = read(fr, b, 8);
        close(fr);
        waitpid(pid, NULL, 0);
        fprintf(out, "reads: told through a %s: %zd '%.8s'\n", sock ? "socket" : "pipe", rr, b);
        close(p[0]), close(p[1]), close(go[0]), close(go[1]);
    }
    /* dup, then fork: the kernel's offset is where the program is. */
    sum_reads(fd, 100, &got);
    int d = dup(fd);
    off_t dpos = lseek(d, 0, SEEK_CUR);
    sum_reads(fd, 100, &got);
    fflush(out);
    pid = fork();
    if (pid == 0) {
        char c8[8];
        ssize_t k = read(fd, c8, 8);
        fprintf(out, "reads: child reads %zd '%.7s' at %lld\n", k, c8,
                (long long)lseek(fd, 0, SEEK_CUR) - 8);
        fflush(out);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    ssize_t bad = read(fd, (void *)(uintptr_t)4096, 8);
    int be = errno;
    fprintf(out, "reads: dup at %lld, bad buffer %zd (%s), offset %lld\n", (long long)dpos, bad,
            strerror(be), (long long)lseek(fd, 0, SEEK_CUR));
    close(d);
    close(fd);
    /* /proc: never read ahead (its files change under every read). */
    int pf = open("/proc/self/stat", O_RDONLY);
    long pgot = 0;
    char pb[8];
    while (read(pf, pb, 8) > 0)
        pgot++;
    close(pf);
    fprintf(out, "reads: /proc/self/stat read in %s\n", pgot > 3 ? "several reads" : "?");
}

/* A second descriptor of the same file, opened before the writes: fstat,
 * lseek(SEEK_END), read and pread through it see the merged writes of the first. */
static void case_twofd(void)
{
    int a = open_file("twofd.dat", O_WRONLY | O_CREAT | O_TRUNC);
    int b = open_file("twofd.dat", O_RDONLY);
    char buf[8192];
    write_records(a, 0, 1000);
    struct stat st;
    fstat(b, &st);
    off_t end = lseek(b, 0, SEEK_END);
    lseek(b, 0, SEEK_SET);
    ssize_t got = read(b, buf, sizeof(buf));
    write_records(a, 1000, 1500);
    char last[9] = { 0 };
    ssize_t p = pread(b, last, 8, 1499 * 8);
    fprintf(out, "twofd: size %lld, end %lld, read %zd, pread %zd '%.7s', close %d %d\n",
            (long long)st.st_size, (long long)end, got, p, last, close(a), close(b));
}

/* The kernel copies from a file with writes still merged: sendfile with and without
 * an offset, copy_file_range and splice (into a pipe) see every byte. */
static void case_copy(void)
{
    int fd = open_file("copy.src", O_RDWR | O_CREAT | O_TRUNC);
    write_records(fd, 0, 3000);
    int a = open_file("copy.sendfile", O_WRONLY | O_CREAT | O_TRUNC);
    off_t o = 0;
    ssize_t s1 = sendfile(a, fd, &o, 3000 * 8);
    for (int i = 0; i < 1000; i++) /* the source's own offset has not moved */
        write(fd, "more....", 8);
    lseek(fd, 8 * 100, SEEK_SET);
    ssize_t s2 = sendfile(a, fd, NULL, 800); /* moves the source's offset */
    off_t after = lseek(fd, 0, SEEK_CUR);
    int b = open_file("copy.cfr", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < 10; i++)
        write(b, "header..", 8);
    loff_t in = 0;
    ssize_t c = copy_file_range(fd, &in, b, NULL, 4000 * 8, 0);
    for (int i = 0; i < 10; i++)
        write(b, "trailer.", 8);
    int p[2];
    ssize_t sp = -2, rd = -2;
    char tail[64] = { 0 };
    if (pipe(p) == 0) {
        loff_t so = 3999 * 8;
        sp = splice(fd, &so, p[1], NULL, 8, 0);
        rd = read(p[0], tail, sizeof(tail) - 1);
        close(p[0]);
        close(p[1]);
    }
    fprintf(out, "copy: sendfile %zd (offset %lld) %zd, source at %lld, copy_file_range %zd, "
            "splice %zd read %zd '%s', close %d %d %d\n", s1, (long long)o, s2, (long long)after,
            c, sp, rd, tail, close(a), close(b), close(fd));
}

/* A child writes through the descriptor it inherited, between the parent's writes. */
static void case_fork(void)
{
    int fd = open_file("fork.dat", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < 100; i++)
        write(fd, "parent1\n", 8);
    fflush(out);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 100; i++)
            write(fd, "child..\n", 8);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 100; i++)
        write(fd, "parent2\n", 8);
    fprintf(out, "fork: child status %d, offset %lld\n", status,
            (long long)lseek(fd, 0, SEEK_CUR));
    close(fd);
}

/* ftruncate below what was written, then reads come up short. */
static void case_truncate(void)
{
    int fd = open_file("trunc.dat", O_RDWR | O_CREAT | O_TRUNC);
    write_records(fd, 0, 1000);
    int t = ftruncate(fd, 500);
    off_t pos = lseek(fd, 0, SEEK_SET);
    static char buf[8192];
    ssize_t got = read(fd, buf, sizeof(buf));
    ssize_t more = read(fd, buf, sizeof(buf));
    for (int i = 0; i < 10; i++)
        write(fd, "tail....", 8); /* at 500: after the short read */
    fprintf(out, "truncate: %d, seek %lld, read %zd then %zd, offset %lld\n", t, (long long)pos,
            got, more, (long long)lseek(fd, 0, SEEK_CUR));
    close(fd);
}

/* stdio and POSIX on one file: the bytes land in the program's order. */
static void case_stdio(void)
{
    int fd = open_file("mixed.dat", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < 1000; i++)
        write(fd, "posix...", 8);
    char p[4096];
    path(p, sizeof(p), "mixed.dat");
    FILE *f = fopen(p, "r+");
    fseek(f, 8 * 500, SEEK_SET);
    fputs("STDIO WAS HERE\n", f);
    fclose(f);
    for (int i = 0; i < 10; i++)
        write(fd, "posix2..", 8);
    struct stat st;
    stat(p, &st);
    fprintf(out, "stdio: size %lld\n", (long long)st.st_size);
    close(fd);
}

/* The file size limit: EFBIG must come from the write that crosses it. */
static void case_efbig(void)
{
    struct rlimit old, rl;
    getrlimit(RLIMIT_FSIZE, &old);
    rl = old;
    rl.rlim_cur = 100004; /* not a multiple of 8: the last write is short */
    setrlimit(RLIMIT_FSIZE, &rl);
    signal(SIGXFSZ, SIG_IGN);
    int fd = open_file("efbig.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long total = 0;
    int i;
    ssize_t r = 0;
    for (i = 0; i < 20000; i++) {
        r = write(fd, "12345678", 8);
        if (r != 8)
            break;
        total += r;
    }
    int e = errno;
    ssize_t r2 = write(fd, "12345678", 8);
    int e2 = errno;
    fprintf(out, "efbig: write %d returned %zd (%s), then %zd (%s), total %ld\n", i, r,
            r < 0 ? strerror(e) : "-", r2, r2 < 0 ? strerror(e2) : "-", total);
    close(fd);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
}

/* The file size limit lowered after the writes: what was written under the old
 * limit is in the file whole (not killed by a late background write's SIGXFSZ,
 * which stays at its default here); and once lowered, the write that crosses it
 * fails itself, even inside space reserved before. */
static void case_limit(void)
{
    struct rlimit old, rl;
    getrlimit(RLIMIT_FSIZE, &old);
    char p[4096];
    int fd = open_file("limit.dat", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < 12500; i++) /* 100,000 bytes */
        write(fd, "12345678", 8);
    rl = old;
    rl.rlim_cur = 50000;
    setrlimit(RLIMIT_FSIZE, &rl);
    int rc = close(fd);
    struct stat st;
    path(p, sizeof(p), "limit.dat");
    stat(p, &st);
    fprintf(out, "limit: close %d, size %lld\n", rc, (long long)st.st_size);
    setrlimit(RLIMIT_FSIZE, &old);
    fd = open_file("limit2.dat", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < 1250; i++) /* 10,000 bytes, with space reserved ahead */
        write(fd, "12345678", 8);
    rl.rlim_cur = 20004;
    setrlimit(RLIMIT_FSIZE, &rl);
    signal(SIGXFSZ, SIG_IGN);
    int i;
    ssize_t r = 0;
    for (i = 0; i < 5000; i++)
        if ((r = write(fd, "12345678", 8)) != 8)
            break;
    int e = errno;
    fprintf(out, "limit: lowered to 20004, write %d returned %zd (%s)\n", i, r,
            r < 0 ? strerror(e) : "-");
    close(fd);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
}

/* Nothing happens after the writes (no call, no exit): within 50 ms (the timer)
 * the data is in the file for a reader that bypasses every wrapper (raw system
 * calls: as another process would see it). */
static void case_timer(void)
{
    int fd = open_file("timer.dat", O_WRONLY | O_CREAT | O_TRUNC);
    write_records(fd, 0, 1000);
    struct timespec ts = { 0, 300 * 1000000L };
    nanosleep(&ts, NULL);
    char p[4096];
    path(p, sizeof(p), "timer.dat");
    int rfd = (int)syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
    static char buf[16384];
    long got = syscall(SYS_pread64, rfd, buf, sizeof(buf), 0);
    syscall(SYS_close, rfd);
    fprintf(out, "timer: %ld bytes visible 300 ms after the last write\n", got);
    close(fd);
}

/* The threads of this process, from /proc/self/status, read with raw system
 * calls (a path call through the wrappers is news: it would flush the blocks
 * whose timer the idle case watches). */
static int threads_now(void)
{
    static char buf[4096];
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY);
    long got = fd >= 0 ? syscall(SYS_read, fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        syscall(SYS_close, fd);
    buf[got > 0 ? got : 0] = 0;
    const char *t = strstr(buf, "Threads:");
    return t ? atoi(t + 8) : -1;
}

/* Bytes of the file at p visible to a reader that bypasses every wrapper. */
static long visible(const char *p, char *buf, size_t cap)
{
    int rfd = (int)syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
    long got = syscall(SYS_pread64, rfd, buf, cap, 0);
    syscall(SYS_close, rfd);
    return got;
}

/* Polls every 10 ms, 10 s at most (a loaded machine delays the worker's timer
 * and its end; nothing here is a time limit), until `want` bytes of p are
 * visible and then until the process has one thread: what it saw last. */
static void settle(const char *p, long want, long *got, int *threads)
{
    static char buf[81920];
    struct timespec ts = { 0, 10 * 1000000L };
    int i = 0;
    while ((*got = visible(p, buf, sizeof(buf))) < want && i++ < 1000)
        nanosleep(&ts, NULL);
    while ((*threads = threads_now()) != 1 && i++ < 1000)
        nanosleep(&ts, NULL);
}

/* A worker that ends when idle (UNBLOCK_IO_IDLE_MS) and starts again: merged
 * writes, then nothing (the worker's timer writes the block, then the worker
 * ends: one thread left, as without unblock), more merged writes (it starts
 * again: they reach the file through the new worker's timer, no call of ours
 * between), then the file read back in small reads (read-ahead: a lease tied to
 * a new worker's thread), and one thread again. */
/* Transfers at explicit positions that follow one another, IOR's POSIX
 * pattern (an lseek to where the last one ended, then an 8-byte write or
 * read): merged and read ahead, each seek answered as the kernel would (the
 * offset asked for, SEEK_CUR 0 among them), among seeks that move: back by
 * SEEK_CUR to write a record again, to the end (the size), back to rewrite
 * one, then on where the run left off. */
static void case_seeks(void)
{
    int fd = open_file("seeks.dat", O_RDWR | O_CREAT | O_TRUNC);
    char r[9];
    long bad = 0;
    for (int i = 0; i < 20000; i++) {
        bad += lseek(fd, (off_t)i * 8, SEEK_SET) != (off_t)i * 8;
        record(r, i);
        bad += write(fd, r, 8) != 8;
        if (i % 5000 == 4999) {
            off_t cur = lseek(fd, 0, SEEK_CUR);
            off_t back = lseek(fd, -8, SEEK_CUR);
            bad += write(fd, r, 8) != 8;
            off_t end = lseek(fd, 0, SEEK_END);
            off_t at = lseek(fd, 80, SEEK_SET);
            bad += write(fd, "REWRITE\n", 8) != 8;
            fprintf(out, "seeks: after %d writes at %lld, back to %lld, the end at %lld, "
                    "rewrote at %lld\n", i + 1, (long long)cur, (long long)back,
                    (long long)end, (long long)at);
        }
        if (i == 7777) {
            /* After a seek in place: a read at the end, a large write. */
            off_t here = lseek(fd, (off_t)(i + 1) * 8, SEEK_SET);
            ssize_t eof = read(fd, r, 8);
            static char big[1 << 16];
            memset(big, 'L', sizeof(big));
            lseek(fd, (off_t)(i + 1) * 8, SEEK_SET);
            ssize_t w = write(fd, big, sizeof(big));
            off_t after = lseek(fd, 0, SEEK_CUR);
            lseek(fd, (off_t)(i + 1) * 8, SEEK_SET);
            fprintf(out, "seeks: at %lld read %zd, wrote %zd to %lld\n", (long long)here, eof,
                    w, (long long)after);
        }
        if (i == 19990) {
            /* The kernel's own offset, as a child that shares it sees it
             * (fork ends write-behind on the descriptor: the last writes). */
            lseek(fd, (off_t)(i + 1) * 8, SEEK_SET);
            fflush(out);
            pid_t pid = fork();
            if (pid == 0) {
                fprintf(out, "seeks: the child sees the offset at %lld\n",
                        (long long)syscall(SYS_lseek, fd, 0, SEEK_CUR));
                fflush(out);
                _exit(0);
            }
            int status;
            waitpid(pid, &status, 0);
            fprintf(out, "seeks: child status %d\n", status);
        }
    }
    fsync(fd);
    close(fd);
    fd = open_file("seeks.dat", O_RDONLY);
    unsigned long sum = 0;
    long got = 0;
    for (int i = 0; i < 20001; i++) {
        bad += lseek(fd, (off_t)i * 8, SEEK_SET) != (off_t)i * 8;
        ssize_t n = read(fd, r, 8);
        for (ssize_t k = 0; k < n; k++)
            sum = sum * 31 + (unsigned char)r[k];
        got += n > 0 ? n : 0;
        if (i % 5000 == 4999)
            fprintf(out, "seeks: after %d reads at %lld\n", i + 1,
                    (long long)lseek(fd, 0, SEEK_CUR));
    }
    fprintf(out, "seeks: read %ld bytes, sum %lu; %ld calls answered wrong\n", got, sum, bad);
    close(fd);
}

/* The bytes of a file of case_quiet, read back in 64 KiB reads, hashed on
 * from sum. */
static unsigned long quiet_sum(const char *name, unsigned long sum, long *got)
{
    static char all[1 << 16];
    int fd = open_file(name, O_RDONLY);
    ssize_t n;
    *got = 0;
    while ((n = read(fd, all, sizeof(all))) > 0) {
        for (ssize_t k = 0; k < n; k++)
            sum = sum * 31 + (unsigned char)all[k];
        *got += n;
    }
    close(fd);
    return sum;
}

/* Transfers at scattered positions, then in sequence (src/fileio/fastpath.h:
 * a quiet descriptor's writes are sampled, not counted one by one): 2,000
 * lseek+writes and 2,000 pwrites of 8 bytes at scattered places make the
 * descriptor quiet; then 20,000 8-byte writes in sequence from one lseek are
 * merged all the same (a sample sees them continue each other), the offset
 * after them the kernel's; then scattered writes again (a SEEK_CUR among
 * them), and the file read back whole; then scattered writes to another file
 * while a third is read ahead (below). */
static void case_quiet(void)
{
    int fd = open_file("quiet.dat", O_RDWR | O_CREAT | O_TRUNC);
    const long slots = 1 << 17; /* 1 MiB of 8-byte records */
    char r[9];
    long bad = ftruncate(fd, slots * 8) != 0;
    for (int i = 0; i < 2000; i++) {
        off_t at = (off_t)((i * 7919L) % slots) * 8;
        record(r, i);
        bad += lseek(fd, at, SEEK_SET) != at || write(fd, r, 8) != 8;
        bad += pwrite(fd, r, 8, (off_t)((i * 4099L) % slots) * 8) != 8;
    }
    bad += lseek(fd, 4096 * 8, SEEK_SET) != 4096 * 8;
    for (int i = 0; i < 20000; i++) {
        record(r, i);
        bad += write(fd, r, 8) != 8;
    }
    fprintf(out, "quiet: after the run at %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    for (int i = 0; i < 2000; i++) {
        off_t at = (off_t)((i * 5381L) % slots) * 8;
        record(r, i);
        bad += lseek(fd, at, SEEK_SET) != at || write(fd, r, 8) != 8;
        if (i % 500 == 499)
            fprintf(out, "quiet: back 16 to %lld\n", (long long)lseek(fd, -16, SEEK_CUR));
    }
    fprintf(out, "quiet: ends at %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    close(fd);
    long got;
    unsigned long sum = quiet_sum("quiet.dat", 0, &got);
    fprintf(out, "quiet: read %ld bytes, sum %lu; %ld calls answered wrong\n", got, sum, bad);
    /* Quiet while every file call takes the full path: another file read in
     * 8-byte reads in between (its read-ahead buffer lives meanwhile).  Those
     * writes are counted as the fast path counts them, the one in 256 a
     * sample (each of them a sample: a system call more every 9 writes). */
    int src = open_file("quiet.src", O_WRONLY | O_CREAT | O_TRUNC);
    bad = write_records(src, 0, 8000);
    bad += fsync(src) != 0 || close(src) != 0;
    src = open_file("quiet.src", O_RDONLY);
    fd = open_file("quiet2.dat", O_RDWR | O_CREAT | O_TRUNC);
    bad += ftruncate(fd, slots * 8) != 0;
    sum = 0;
    for (int i = 0; i < 8000; i++) {
        off_t at = (off_t)((i * 7919L) % slots) * 8;
        bad += read(src, r, 8) != 8;
        for (int k = 0; k < 8; k++)
            sum = sum * 31 + (unsigned char)r[k];
        bad += lseek(fd, at, SEEK_SET) != at || write(fd, r, 8) != 8;
    }
    close(src);
    close(fd);
    sum = quiet_sum("quiet2.dat", sum, &got);
    fprintf(out, "quiet: beside reads, read %ld bytes, sum %lu; %ld calls answered wrong\n", got,
            sum, bad);
}

static void case_idle(void)
{
    int fd = open_file("idle.dat", O_WRONLY | O_CREAT | O_TRUNC);
    char p[4096];
    path(p, sizeof(p), "idle.dat");
    for (int round = 0; round < 2; round++) {
        long bad = write_records(fd, round * 5000, (round + 1) * 5000), got;
        int threads;
        settle(p, (round + 1) * 40000L, &got, &threads);
        fprintf(out, "idle: round %d: bad writes %ld, %ld bytes visible without a call, "
                     "threads %d\n", round, bad, got, threads);
    }
    fprintf(out, "idle: close %d\n", close(fd));
    fd = open_file("idle.dat", O_RDONLY);
    char r[9], want[9];
    long wrong = 0, reads = 0, got;
    for (int i = 0; i < 10000; i++, reads++) {
        record(want, i);
        if (read(fd, r, 8) != 8 || memcmp(r, want, 8) != 0)
            wrong++;
    }
    close(fd);
    int threads;
    settle(p, 80000, &got, &threads);
    fprintf(out, "idle: %ld reads, %ld wrong; threads after them %d\n", reads, wrong, threads);
}

/* Another process writes the file while ours closes it (each rank writing its
 * part of a shared file): space reserved ahead is given back by cutting the file
 * to its size, which must never drop the other process's bytes.  The child
 * writes [64K, 128K) 100 ms after the token, while the parent's close gives
 * back (UNBLOCK_TEST_GIVEBACK_MS=500 holds it between reading the size and
 * cutting); with `hold` the child keeps the file open across that. */
static void case_giveback_(int hold)
{
    int pfd[2];
    char p[4096];
    path(p, sizeof(p), "giveback.dat");
    if (pipe(pfd) != 0)
        exit(2);
    pid_t c = fork();
    if (c == 0) {
        char t;
        if (syscall(SYS_read, pfd[0], &t, 1) != 1)
            _exit(2);
        struct timespec ts = { 0, 100 * 1000000L }, ts2 = { 0, 800 * 1000000L };
        syscall(SYS_nanosleep, &ts, NULL);
        int fd = (int)syscall(SYS_openat, AT_FDCWD, p, O_WRONLY);
        static char buf[65536];
        memset(buf, 'B', sizeof(buf));
        long w = syscall(SYS_pwrite64, fd, buf, sizeof(buf), 65536);
        if (hold)
            syscall(SYS_nanosleep, &ts2, NULL);
        syscall(SYS_close, fd);
        _exit(w == (long)sizeof(buf) ? 0 : 1);
    }
    int fd = open_file("giveback.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = write_records(fd, 0, 8192); /* 64 KiB, merged, space reserved ahead */
    syscall(SYS_write, pfd[1], "x", 1);
    int rc = close(fd);
    int st = 0;
    waitpid(c, &st, 0);
    struct stat sb;
    stat(p, &sb);
    fprintf(out, "giveback%s: bad writes %ld, close %d, child %d, size %lld\n",
            hold ? "-open" : "", bad, rc, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
            (long long)sb.st_size);
}

/* A file written a few hundred bytes (a log line, a checkpoint's header) while
 * it stays open: space is reserved ahead of merged writes, but a range's first
 * reservation is its pages, so the file holds no more blocks than without us
 * (before: 1 MiB allocated past its end until close).  Printed while open. */
static void case_firstpage(void)
{
    int fd = open_file("firstpage.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = write_records(fd, 0, 400); /* 3200 bytes, merged */
    struct stat sb;
    int st = fstat(fd, &sb);
    fprintf(out, "firstpage: bad writes %ld, size while open %lld, blocks while open: %s\n",
            bad, st == 0 ? (long long)sb.st_size : -1LL,
            st == 0 && (long long)sb.st_blocks * 512 <= 65536 ? "few" : "many");
    close(fd);
    report_file("firstpage", "firstpage.dat");
}

static void case_giveback(void)
{
    case_giveback_(0);
}

static void case_giveback_open(void)
{
    case_giveback_(1);
}

/* ---- locks: news to other processes ----
 * The lock-file pattern: take a lock on another file, write the data, let the
 * lock go.  Another process that takes the lock next and reads must see every
 * byte (before, a lock on a lock file flushed nothing, and it read 24 bytes of
 * 8000: the 3 writes made before merging started).  flock, fcntl's F_SETLKW
 * and lockf. */
static int lock_how(int fd, const char *how, int take)
{
    if (strcmp(how, "flock") == 0)
        return flock(fd, take ? LOCK_EX : LOCK_UN);
    if (strcmp(how, "lockf") == 0)
        return lockf(fd, take ? F_LOCK : F_ULOCK, 0);
    struct flock l = { .l_type = (short)(take ? F_WRLCK : F_UNLCK), .l_whence = SEEK_SET };
    return fcntl(fd, take ? F_SETLKW : F_SETLK, &l);
}

static void case_locknews(void)
{
    static const char *const hows[] = { "flock", "fcntl", "lockf" };
    for (int k = 0; k < 3; k++) {
        const char *how = hows[k];
        char lockp[4096], datap[4096];
        path(lockp, sizeof(lockp), "locknews.lock");
        path(datap, sizeof(datap), "locknews.dat");
        int lfd = open(lockp, O_RDWR | O_CREAT, 0644);
        unlink(datap);
        if (lfd < 0 || lock_how(lfd, how, 1) != 0) {
            fprintf(out, "locknews %s: cannot lock (%s)\n", how, strerror(errno));
            continue;
        }
        fflush(out);
        pid_t pid = fork();
        if (pid == 0) { /* waits for the lock, then reads what the parent wrote */
            int mine = open(lockp, O_RDWR);
            if (mine < 0 || lock_how(mine, how, 1) != 0)
                _exit(3);
            int fd = open(datap, O_RDONLY);
            static char b[16384];
            ssize_t got = fd < 0 ? -1 : read(fd, b, sizeof(b));
            int whole = got == 8000;
            for (int i = 0; whole && i < 1000; i++) {
                char r[9];
                record(r, i);
                whole = memcmp(b + 8 * i, r, 8) == 0;
            }
            _exit(whole ? 0 : 1);
        }
        int fd = open_file("locknews.dat", O_WRONLY | O_CREAT | O_TRUNC);
        long bad = write_records(fd, 0, 1000);
        int un = lock_how(lfd, how, 0);
        int status = 0;
        waitpid(pid, &status, 0); /* the child reads now, while the file stays open */
        fprintf(out, "locknews %s: bad writes %ld, unlock %d, the other process read %s\n", how,
                bad, un,
                WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "every byte"
                : WIFEXITED(status) && WEXITSTATUS(status) == 1 ? "a short or wrong file"
                                                                : "nothing (no lock)");
        close(fd);
        close(lfd);
    }
}

/* ---- the crash-safety sidecar lets go where it can be seen ----
 * (Run with UNBLOCK_TEST_SIDECAR_MSG_MS: the sidecar takes its time over each
 * message.)  A helper process, started before any of these files is opened,
 * does what another process on the node could: execute a file the program has
 * just written and closed, take a flock on it.  Each must work as without
 * unblock, although the sidecar lets go of most files after close returns. */
static int helper_cmd[2], helper_ans[2];

/* Runs the script at p in a child (made executable there first with
 * `make_exec`): its exit status, 100 when exec met ETXTBSY (a writer holds it). */
static int run_script(const char *p, int make_exec)
{
    pid_t c = fork();
    if (c == 0) {
        if (make_exec && chmod(p, 0755) != 0)
            _exit(102);
        char *argv[] = { (char *)p, NULL }, *envp[] = { NULL };
        execve(p, argv, envp);
        _exit(errno == ETXTBSY ? 100 : 101);
    }
    int st = 0;
    waitpid(c, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 200;
}

static void helper_loop(void)
{
    char c[4200];
    ssize_t n;
    while ((n = read(helper_cmd[0], c, sizeof(c) - 1)) > 0) {
        c[n] = 0;
        int ans;
        if (c[0] == 'x') { /* execute c+1 */
            ans = run_script(c + 1, 0);
        } else { /* take a flock on c+1 at once */
            int fd = open(c + 1, O_RDONLY);
            ans = fd < 0 ? -2 : flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
            if (fd >= 0)
                close(fd);
        }
        if (write(helper_ans[1], &ans, sizeof(ans)) != sizeof(ans))
            _exit(1);
    }
    _exit(0);
}

static int helper_do(char what, const char *name)
{
    char c[4200];
    c[0] = what;
    path(c + 1, sizeof(c) - 1, name);
    int ans = -1;
    if (write(helper_cmd[1], c, strlen(c)) < 0 || read(helper_ans[0], &ans, sizeof(ans)) < 0)
        return -1;
    return ans;
}

/* A script written in small writes, closed. */
static void write_script(const char *name, mode_t mode, int code)
{
    char p[4096];
    path(p, sizeof(p), name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
    write(fd, "#!/bin/sh\n", 10);
    for (int i = 0; i < 200; i++)
        write(fd, "# a line\n", 9);
    char e[16];
    snprintf(e, sizeof(e), "exit %d\n", code);
    write(fd, e, strlen(e));
    close(fd);
}

static void case_letgo(void)
{
    if (pipe(helper_cmd) != 0 || pipe(helper_ans) != 0)
        exit(2);
    fflush(out);
    pid_t h = fork();
    if (h == 0) {
        close(helper_cmd[1]);
        close(helper_ans[0]);
        helper_loop();
    }
    close(helper_cmd[0]);
    close(helper_ans[1]);
    /* 1. A plain file, closed: nothing waits for the sidecar. */
    int fd = open_file("letgo-a.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = write_records(fd, 0, 1000);
    close(fd);
    /* 2. The same file again: the reservation ahead is given back under a
     *    lease, which waits until the sidecar no longer holds the first open
     *    (else the lease is refused and the blocks stay: io.reserve_kept). */
    fd = open_file("letgo-a.dat", O_WRONLY);
    lseek(fd, 8000, SEEK_SET);
    bad += write_records(fd, 1000, 2000);
    close(fd);
    fprintf(out, "letgo: bad writes %ld\n", bad);
    report_file("letgo", "letgo-a.dat");
    /* 3. A script created executable, run by the other process at once. */
    write_script("letgo-x.sh", 0755, 7);
    fprintf(out, "letgo: the script created executable exits %d\n", helper_do('x', "letgo-x.sh"));
    /* 3b. A script written with mode 0644 and closed; a child forked at once
     *     makes it executable and runs it (the fork waited for the sidecar). */
    write_script("letgo-f.sh", 0644, 9);
    char pf[4096];
    path(pf, sizeof(pf), "letgo-f.sh");
    fflush(out);
    fprintf(out, "letgo: a child made the script executable, it exits %d\n", run_script(pf, 1));
    /* 4. A script made executable after its close (chmod), run at once. */
    write_script("letgo-c.sh", 0644, 8);
    char p[4096];
    path(p, sizeof(p), "letgo-c.sh");
    int ch = chmod(p, 0755);
    fprintf(out, "letgo: chmod %d, the script exits %d\n", ch, helper_do('x', "letgo-c.sh"));
    /* 5. A file written under its own flock and closed: the other process
     *    takes the lock at once. */
    fd = open_file("letgo-l.dat", O_WRONLY | O_CREAT | O_TRUNC);
    int fl = flock(fd, LOCK_EX);
    bad = write_records(fd, 0, 1000);
    close(fd);
    fprintf(out, "letgo: flock %d, bad writes %ld, the other's flock after close: %d\n", fl, bad,
            helper_do('l', "letgo-l.dat"));
    close(helper_cmd[1]);
    close(helper_ans[0]);
    int st;
    waitpid(h, &st, 0);
}

/* A file rewritten in place (opened without O_TRUNC, as sor2d's checkpoint):
 * its blocks are there, so nothing is reserved ahead (io.reserved=0; before, a
 * block past its end was reserved and given back at close).  `sparse`: the
 * file is a hole at first (ftruncate), so the rewrite needs space: reserved. */
static void case_inplace_(int sparse)
{
    const char *name = sparse ? "inplace-sparse.dat" : "inplace.dat";
    int fd = open_file(name, O_WRONLY | O_CREAT | O_TRUNC);
    static char big[65536];
    memset(big, 'x', sizeof(big));
    int made = sparse ? ftruncate(fd, sizeof(big)) : (int)write(fd, big, sizeof(big));
    close(fd);
    fd = open_file(name, O_WRONLY);
    long bad = write_records(fd, 0, 4096); /* the first half, 8 bytes a write */
    off_t pos = lseek(fd, 0, SEEK_CUR);
    fprintf(out, "inplace%s: made %d, bad writes %ld, offset %lld, close %d\n",
            sparse ? "-sparse" : "", made, bad, (long long)pos, close(fd));
    report_file(sparse ? "inplace-sparse" : "inplace", name);
}

static void case_inplace(void)
{
    case_inplace_(0);
}

static void case_inplace_sparse(void)
{
    case_inplace_(1);
}

/* A full filesystem: ENOSPC must come from the write that meets it. */
static void case_enospc(const char *fulldir)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/enospc.dat", fulldir);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    long n = 0;
    ssize_t r = 0;
    while ((r = write(fd, "12345678", 8)) == 8)
        n++;
    int e = errno;
    ssize_t r2 = write(fd, "12345678", 8);
    int e2 = errno;
    fprintf(out, "enospc: %ld writes, then %zd (%s), then %zd (%s); close %d\n", n, r,
            r < 0 ? strerror(e) : "-", r2, r2 < 0 ? strerror(e2) : "-", close(fd));
    unlink(p);
}

/* A nearly full filesystem shared with others: 200 KB written to one file (kept
 * open), then as much as fits to a second, then to a third by another process:
 * each gets what it would without unblock (the first file's writes must not hold
 * space it has not written). */
static long fill_file(const char *p, long limit)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    long n = 0;
    while (n < limit && write(fd, "12345678", 8) == 8)
        n += 8;
    close(fd);
    return n;
}

static void case_share(const char *fulldir)
{
    char a[4096], b[4096], c[4096];
    snprintf(a, sizeof(a), "%s/a.dat", fulldir);
    snprintf(b, sizeof(b), "%s/b.dat", fulldir);
    snprintf(c, sizeof(c), "%s/c.dat", fulldir);
    int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    long na = 0;
    while (na < 200000 && write(fd, "12345678", 8) == 8)
        na += 8;
    long nb = fill_file(b, 600000); /* this process, another file */
    long nc = -1;
    pid_t pid = fork();
    if (pid == 0) /* another process (pass-through: a child of the program) */
        _exit(fill_file(c, 100000) == 100000 ? 0 : 1);
    int status;
    waitpid(pid, &status, 0);
    nc = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 100000 : 0;
    fprintf(out, "share: a %ld, b %ld, c %s; close a %d\n", na, nb, nc ? "whole" : "short",
            close(fd));
    unlink(a);
    unlink(b);
    unlink(c);
}

/* Space taken after this process began buffering a file: 8 KB to a (kept
 * open), then the filesystem is filled but for 1.5 MiB, then 1 MiB to b.
 * Without unblock b fits; with it a's reservation ahead must not be what b
 * lacks.  The filler is this process's fallocate (the first write to b meets
 * ENOSPC, the reservations are given back and it is made again) or, with
 * `child`, a child process (the fork gives the reservations back). */
static void case_spacegone(const char *fulldir, int child)
{
    char a[4096], b[4096], f[4096];
    snprintf(a, sizeof(a), "%s/a.dat", fulldir);
    snprintf(b, sizeof(b), "%s/b.dat", fulldir);
    snprintf(f, sizeof(f), "%s/fill.dat", fulldir);
    struct statvfs sv;
    if (statvfs(fulldir, &sv) != 0) {
        fprintf(out, "spacegone: statvfs: %s\n", strerror(errno));
        return;
    }
    long long fill = (long long)sv.f_bavail * (long long)sv.f_frsize - (3 << 19);
    int fd = open(a, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    long na = 0;
    while (na < 8000 && write(fd, "12345678", 8) == 8)
        na += 8;
    if (!child) {
        int ff = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = fallocate(ff, 0, 0, (off_t)fill);
        close(ff);
        long nb = fill_file(b, 1 << 20);
        fprintf(out, "spacegone: a %ld, fill %s, b %ld; close a %d\n", na, e ? "short" : "whole",
                nb, close(fd));
        unlink(a);
        unlink(b);
        unlink(f);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) { /* another process: 64 KiB writes */
        static char chunk[65536];
        int ff = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        long long n = 0;
        while (n < fill) {
            size_t k = fill - n < (long long)sizeof(chunk) ? (size_t)(fill - n) : sizeof(chunk);
            ssize_t w = write(ff, chunk, k);
            if (w <= 0)
                break;
            n += w;
        }
        _exit(n == fill ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    long nb = fill_file(b, 1 << 20);
    fprintf(out, "spacegone: a %ld, fill %s, b %ld; close a %d\n", na,
            WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "whole" : "short", nb, close(fd));
    unlink(a);
    unlink(b);
    unlink(f);
}

/* Rows written with one pwrite each at consecutive offsets (how sor2d writes its
 * grid), with write() calls at the descriptor's own offset in between, a pwrite
 * that does not continue, a bad buffer, and a read of the result. */
static void case_rows(void)
{
    int fd = open_file("rows.dat", O_RDWR | O_CREAT | O_TRUNC);
    char row[100];
    long bad = 0;
    for (int i = 0; i < 20000; i++) {
        memset(row, 'a' + i % 26, sizeof(row));
        if (pwrite(fd, row, sizeof(row), (off_t)i * (off_t)sizeof(row)) != (ssize_t)sizeof(row))
            bad++;
        if (i % 5000 == 4999)
            write(fd, "HEAD", 4); /* at offset 0, 4, 8, ...: over the first row */
    }
    ssize_t hole = pwrite(fd, "far", 3, 10 << 20);
    ssize_t e = pwrite(fd, (const void *)(uintptr_t)4096, 10, 20000 * 100);
    int ee = errno;
    char got[16] = { 0 };
    ssize_t rd = pread(fd, got, 12, 0);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    fprintf(out, "rows: bad %ld, hole %zd, bad buffer %zd (%s), read %zd '%s', offset %lld, "
            "close %d\n", bad, hole, e, strerror(ee), rd, got, (long long)pos, close(fd));
}

/* A bad buffer gets EFAULT from write, small or large, as without unblock. */
static void case_badbuf(void)
{
    int fd = open_file("badbuf.dat", O_WRONLY | O_CREAT | O_TRUNC);
    for (int i = 0; i < 10; i++)
        write(fd, "before..", 8);
    const void *bad = (const void *)(uintptr_t)4096; /* never mapped */
    ssize_t r1 = write(fd, bad, 8);
    int e1 = errno;
    ssize_t r2 = write(fd, bad, 300000);
    int e2 = errno;
    for (int i = 0; i < 10; i++)
        write(fd, "after...", 8);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    fprintf(out, "badbuf: %zd (%s) %zd (%s), offset %lld, close %d\n", r1, strerror(e1), r2,
            strerror(e2), (long long)pos, close(fd));
}

/* A flush that fails.  Plain, every call succeeds; under unblock with
 * UNBLOCK_TEST_FAIL_WRITE=1 (docs/testing.md) the first block's write fails with
 * EIO, and the error must come back once: from the fsync, not the second one.
 * With `keep`, the descriptor is left open: the error is printed at exit. */
static void case_eio_(int keep)
{
    int fd = open_file("eio.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = write_records(fd, 0, 1000);
    if (keep) {
        fprintf(out, "eio: bad writes %ld, left open\n", bad);
        return;
    }
    int s1 = fsync(fd), e1 = errno;
    int s2 = fsync(fd);
    for (int i = 0; i < 100; i++)
        write(fd, "after...", 8);
    fprintf(out, "eio: bad writes %ld, fsync %d (%s), fsync %d, close %d\n", bad, s1,
            s1 ? strerror(e1) : "-", s2, close(fd));
}

static void case_eio(void)
{
    case_eio_(0);
}

static void case_eio_exit(void)
{
    case_eio_(1);
}

/* Two files on two filesystems written in turns (each has its own worker). */
static void case_twofs(const char *other)
{
    char p[4096];
    snprintf(p, sizeof(p), "%s/unblock-wb-twofs.%d", other, (int)getpid());
    int a = open_file("twofs.dat", O_WRONLY | O_CREAT | O_TRUNC);
    int b = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (b < 0) {
        perror(p);
        exit(2);
    }
    char r[9];
    for (int i = 0; i < 100000; i++) {
        record(r, i);
        write(a, r, 8);
        write(b, r, 8);
    }
    unsigned long sum = 0;
    char buf[4096];
    ssize_t n;
    lseek(b, 0, SEEK_SET);
    while ((n = read(b, buf, sizeof(buf))) > 0)
        for (ssize_t i = 0; i < n; i++)
            sum = sum * 31 + (unsigned char)buf[i];
    fprintf(out, "twofs: other file sum %lu, close %d %d\n", sum, close(a), close(b));
    unlink(p);
}

/* Killed while writing: what was written before the signal is in the file.  How:
 * sigterm, sigint, abort, or segv (a store through a null pointer).  With
 * `large`, 16 MiB follow in 1 MiB writes from a malloc'd buffer (protected under
 * unblock with UNBLOCK_IO_QUEUE_NS=0), half of it rewritten at once. */
static void case_killed(const char *how, int large)
{
    int fd = open_file("killed.dat", O_WRONLY | O_CREAT | O_TRUNC);
    write_records(fd, 0, 30000);
    if (large) {
        size_t n = 16u << 20;
        char *b = malloc(n);
        long bad = 0;
        fill(b, n, 60);
        write_mib(fd, b, n, &bad);
        memset(b, 'k', n / 2);
    }
    if (strcmp(how, "abort") == 0)
        abort();
    if (strcmp(how, "segv") == 0)
        *(volatile int *)(uintptr_t)(getpid() < 0) = 1;
    kill(getpid(), strcmp(how, "sigint") == 0 ? SIGINT : SIGTERM);
    pause();
}

/* ---- large writes from the program's pages (protected, not copied) ----
 * Run with UNBLOCK_IO_QUEUE_NS=0 so that large writes are queued even on a fast
 * local disk: each case writes a large malloc'd buffer in 1 MiB calls, then does
 * what could let the worker read bytes the program changed after the write. */
#define PROT_MIB 16

static void fill(char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = ((uint64_t)seed << 40) ^ (i * 0x9E3779B97F4A7C15ull);
        memcpy(b + i, &v, n - i < 8 ? n - i : 8);
    }
}

/* The whole buffer, then the buffer again at its end, in 1 MiB write()s. */
static void write_mib(int fd, const char *b, size_t n, long *bad)
{
    for (size_t o = 0; o < n; o += 1u << 20) {
        size_t k = n - o < (1u << 20) ? n - o : (1u << 20);
        if (write(fd, b + o, k) != (ssize_t)k)
            ++*bad;
    }
}

/* What a file holds, read back through a new descriptor: its size and a sum. */
static void report_file(const char *what, const char *name)
{
    int fd = open_file(name, O_RDONLY);
    static char b[1 << 16];
    unsigned long sum = 0;
    long total = 0;
    ssize_t r;
    while ((r = read(fd, b, sizeof(b))) > 0) {
        for (ssize_t i = 0; i < r; i++)
            sum = sum * 31 + (unsigned char)b[i];
        total += r;
    }
    close(fd);
    fprintf(out, "%s: %s holds %ld bytes, sum %lu\n", what, name, total, sum);
}

/* Rewritten at once, from the start (the stores soon overtake the piece the
 * worker is writing), read into (a read() into the pages), then written again. */
static void case_prot_rewrite(void)
{
    size_t n = (size_t)PROT_MIB << 20;
    char *b = malloc(n);
    fill(b, n, 1);
    int fd = open_file("prot-rewrite.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    write_mib(fd, b, n, &bad);
    for (size_t i = 0; i < n; i += 256)
        b[i] ^= 0x5A;
    int src = open_file("prot-rewrite.dat", O_RDONLY); /* the file so far, read back */
    ssize_t got = read(src, b + n / 2, 1u << 20);
    close(src);
    write_mib(fd, b, n, &bad);
    off_t pos = lseek(fd, 0, SEEK_CUR);
    fprintf(out, "prot-rewrite: bad writes %ld, read %zd, offset %lld, close %d\n", bad, got,
            (long long)pos, close(fd));
    report_file("prot-rewrite", "prot-rewrite.dat");
    free(b);
}

/* Rewritten only after fsync; then once more with no fsync before close. */
static void case_prot_fsync(void)
{
    size_t n = (size_t)PROT_MIB << 20;
    char *b = malloc(n);
    fill(b, n, 2);
    int fd = open_file("prot-fsync.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    write_mib(fd, b, n, &bad);
    int s = fsync(fd);
    fill(b, n, 3);
    write_mib(fd, b, n, &bad);
    int c = close(fd);
    fill(b, n, 4); /* after close: the file is complete already */
    fprintf(out, "prot-fsync: bad writes %ld, fsync %d, close %d\n", bad, s, c);
    report_file("prot-fsync", "prot-fsync.dat");
    free(b);
}

/* Freed right after the write; the next allocation of that size (the same pages,
 * kept for reuse) gets other bytes at once. */
static void case_prot_free(void)
{
    size_t n = (size_t)PROT_MIB << 20;
    int fd = open_file("prot-free.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    for (unsigned round = 0; round < 3; round++) {
        char *b = malloc(n);
        fill(b, n, 10 + round);
        write_mib(fd, b, n, &bad);
        free(b);
        char *c = malloc(n);
        memset(c, 0xEE, n);
        free(c);
    }
    fprintf(out, "prot-free: bad writes %ld, close %d\n", bad, close(fd));
    report_file("prot-free", "prot-free.dat");
}

/* Memory that is never protected: the stack, static data, a small allocation
 * (copied), and a large allocation written at an offset inside its first page. */
static char static_buf[3 << 19];
static void case_prot_copy(void)
{
    int fd = open_file("prot-copy.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    char stack_buf[600000];
    fill(stack_buf, sizeof(stack_buf), 20);
    fill(static_buf, sizeof(static_buf), 21);
    for (int i = 0; i < 4; i++) {
        if (write(fd, stack_buf, sizeof(stack_buf)) != (ssize_t)sizeof(stack_buf))
            bad++;
        memset(stack_buf, 'a' + i, 1000);
        if (write(fd, static_buf, sizeof(static_buf)) != (ssize_t)sizeof(static_buf))
            bad++;
        memset(static_buf, 'A' + i, sizeof(static_buf));
    }
    size_t n = 4u << 20;
    char *b = malloc(n + 100);
    fill(b, n + 100, 22);
    write_mib(fd, b + 100, n, &bad); /* not page aligned */
    memset(b, 'z', n + 100);
    fprintf(out, "prot-copy: bad writes %ld, close %d\n", bad, close(fd));
    report_file("prot-copy", "prot-copy.dat");
    free(b);
}

/* One buffer written to two files in turn, then rewritten. */
static void case_prot_twice(void)
{
    size_t n = (size_t)PROT_MIB << 20;
    char *b = malloc(n);
    fill(b, n, 30);
    int f1 = open_file("prot-twice.1", O_WRONLY | O_CREAT | O_TRUNC);
    int f2 = open_file("prot-twice.2", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    write_mib(f1, b, n, &bad);
    write_mib(f2, b, n, &bad);
    fill(b, n, 31);
    write_mib(f1, b, n / 2, &bad);
    fprintf(out, "prot-twice: bad writes %ld, close %d %d\n", bad, close(f1), close(f2));
    report_file("prot-twice", "prot-twice.1");
    report_file("prot-twice", "prot-twice.2");
    free(b);
}

/* fork while a protected write is in flight: the child writes its copy of the
 * buffer and a file of its own; the parent rewrites its buffer afterwards. */
static void case_prot_fork(void)
{
    size_t n = (size_t)PROT_MIB << 20;
    char *b = malloc(n);
    fill(b, n, 40);
    int fd = open_file("prot-fork.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    write_mib(fd, b, n, &bad);
    fflush(out);
    pid_t pid = fork();
    if (pid == 0) {
        fill(b, n, 41);
        int c = open_file("prot-fork.child", O_WRONLY | O_CREAT | O_TRUNC);
        long cbad = 0;
        write_mib(c, b, n, &cbad);
        close(c);
        _exit(cbad != 0);
    }
    fill(b, n, 42);
    int status;
    waitpid(pid, &status, 0);
    write_mib(fd, b, n / 4, &bad);
    fprintf(out, "prot-fork: bad writes %ld, child status %d, close %d\n", bad, status, close(fd));
    report_file("prot-fork", "prot-fork.dat");
    report_file("prot-fork", "prot-fork.child");
    free(b);
}

/* A background write that fails (UNBLOCK_TEST_FAIL_WRITE=N under unblock): the
 * error comes back once, from the next call on the descriptor (a write, fsync or
 * close: which one depends on when the worker meets it), as for copied writes. */
static void case_prot_eio(void)
{
    size_t n = 8u << 20;
    char *b = malloc(n);
    fill(b, n, 50);
    int fd = open_file("prot-eio.dat", O_WRONLY | O_CREAT | O_TRUNC);
    int failed = 0, eio = 0;
    for (int round = 0; round < 2; round++) {
        for (size_t o = 0; o < n; o += 1u << 20)
            if (write(fd, b + o, 1u << 20) < 0)
                failed++, eio += errno == EIO;
        memset(b, 'a' + round, n); /* at once: the pages are still the worker's */
    }
    if (fsync(fd) != 0)
        failed++, eio += errno == EIO;
    if (fsync(fd) != 0)
        failed++, eio += errno == EIO;
    if (close(fd) != 0)
        failed++, eio += errno == EIO;
    fprintf(out, "prot-eio: calls failed %d, with EIO %d\n", failed, eio);
    free(b);
}

/* writev: large ones of three buffers (copied and queued like a large write),
 * small ones between them, pwritev over earlier bytes and past the end, one with
 * a bad buffer (the kernel's answer); the file read back at the end. */
static void case_writev(void)
{
    const size_t seg = 200u << 10;
    char *a = malloc(seg), *c = malloc(seg), small[64];
    static char s[200u << 10];
    fill(a, seg, 80);
    fill(s, seg, 81);
    fill(c, seg, 82);
    memset(small, 'v', sizeof(small));
    int fd = open_file("writev.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = write_records(fd, 0, 100); /* buffering from here on */
    struct iovec big[3] = { { a, seg }, { s, seg }, { c, seg } };
    struct iovec little[2] = { { small, 10 }, { small + 10, 54 } };
    for (int i = 0; i < 4; i++) {
        if (writev(fd, big, 3) != (ssize_t)(3 * seg))
            bad++;
        fill(a, seg, 90 + (unsigned)i); /* the buffers change at once */
        if (writev(fd, little, 2) != 64)
            bad++;
    }
    /* pwritev over earlier bytes, then past the end: the offset stays. */
    fill(c, seg, 85);
    if (pwritev(fd, big, 3, 1000) != (ssize_t)(3 * seg))
        bad++;
    if (pwritev(fd, big, 2, (off_t)2600000) != (ssize_t)(2 * seg))
        bad++;
    struct iovec broken[2] = { { a, seg }, { (void *)(uintptr_t)4096, seg } };
    errno = 0;
    ssize_t r = writev(fd, broken, 2);
    int be = errno;
    off_t pos = lseek(fd, 0, SEEK_CUR);
    fprintf(out, "writev: bad writes %ld, broken %zd (%s), offset %lld, close %d\n", bad, r,
            r < 0 ? strerror(be) : "-", (long long)pos, close(fd));
    report_file("writev", "writev.dat");
    free(a);
    free(c);
}

/* Large pwrites out of order (a chunked layout), from one buffer filled again
 * before each, and one over two earlier ones: queued at their own offsets, in
 * program order; the descriptor's offset stays where write() left it. */
static void case_prot_pwrite(void)
{
    const size_t chunk = 1u << 20;
    size_t n = (size_t)PROT_MIB << 20;
    char *b = malloc(n);
    fill(b, n, 50);
    int fd = open_file("prot-pwrite.dat", O_WRONLY | O_CREAT | O_TRUNC);
    long bad = 0;
    write_mib(fd, b, 4 * chunk, &bad);
    static const int order[] = { 5, 1, 7, 3, 0, 6, 2, 4 };
    for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        fill(b, 2 * chunk, 60 + (unsigned)i);
        if (pwrite(fd, b, 2 * chunk, (off_t)order[i] * (off_t)chunk) != (ssize_t)(2 * chunk))
            bad++;
    }
    fill(b, n, 70);
    if (pwrite(fd, b + 4096, 3 * chunk, (off_t)(5 * chunk / 2)) != (ssize_t)(3 * chunk))
        bad++;
    off_t pos = lseek(fd, 0, SEEK_CUR);
    fill(b, n, 71);
    fprintf(out, "prot-pwrite: bad writes %ld, offset %lld, close %d\n", bad, (long long)pos,
            close(fd));
    report_file("prot-pwrite", "prot-pwrite.dat");
    free(b);
}

static void case_prot(void)
{
    case_prot_pwrite();
    case_prot_rewrite();
    case_prot_fsync();
    case_prot_free();
    case_prot_copy();
    case_prot_twice();
    case_prot_fork();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: wb OUTDIR [small|news|patch|dup|twofd|copy|fork|truncate|stdio|efbig|limit|timer|"
                        "rows|reads|badbuf|locknews|letgo|inplace|inplace-sparse|seeks|quiet|eio|eio-exit|idle|giveback|giveback-open|prot|prot-rewrite|prot-fsync|prot-free|"
                        "prot-copy|prot-twice|prot-fork|prot-eio|prot-pwrite|all] | "
                        "wb OUTDIR killed sigterm|sigint|abort|segv | "
                        "wb OUTDIR enospc|share FULLDIR | wb OUTDIR twofs OTHERDIR\n");
        return 2;
    }
    dir = argv[1];
    const char *c = argc > 2 ? argv[2] : "all";
    if (strcmp(c, "killed") == 0 && argc > 3) {
        case_killed(argv[3], argc > 4 && strcmp(argv[4], "large") == 0);
        return 3;
    }
    char p[4096];
    path(p, sizeof(p), "result.txt");
    out = fopen(p, "w");
    if (!out)
        return 2;
    if (strcmp(c, "enospc") == 0 && argc > 3) {
        case_enospc(argv[3]);
        fclose(out);
        return 0;
    }
    if (strcmp(c, "release") == 0 && argc > 4) {
        /* 100,000 bytes in small writes to ARG/r.dat (close-on-exec), then exit
         * without closing it, or exec ARG2 (a command that outlives us). */
        char p[4096];
        snprintf(p, sizeof(p), "%s/r.dat", argv[3]);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        for (int i = 0; i < 12500; i++)
            if (write(fd, "12345678", 8) != 8)
                return 1;
        fclose(out);
        if (strcmp(argv[4], "exit") == 0)
            return 0;
        execl("/bin/sh", "sh", "-c", argv[4], (char *)NULL);
        return 1;
    }
    if (strcmp(c, "share") == 0 && argc > 3) {
        case_share(argv[3]);
        fclose(out);
        return 0;
    }
    if (strncmp(c, "spacegone", 9) == 0 && argc > 3) {
        case_spacegone(argv[3], strcmp(c, "spacegone-fork") == 0);
        fclose(out);
        return 0;
    }
    if (strcmp(c, "twofs") == 0 && argc > 3) {
        case_twofs(argv[3]);
        fclose(out);
        return 0;
    }
    struct {
        const char *name;
        void (*fn)(void);
    } cases[] = { { "small", case_small }, { "news", case_news }, { "vecnews", case_vecnews },
                  { "sendnews", case_sendnews },
                  { "printnews", case_printnews },
                  { "signews", case_signews }, { "queuenews", case_queuenews },
                  { "namenews", case_namenews }, { "semnews", case_semnews },
                  { "eventnews", case_eventnews },
                  { "sempriv", case_sempriv },
                  { "sigsame", case_sigsame },
                  { "sigsame-raw", case_sigsame_raw }, /* not in "all" */
                  { "sigsame-thread", case_sigsame_thread }, /* not in "all" */
                  { "sigreinstall", case_sigreinstall },
                  { "sigoneshot", case_sigoneshot }, { "threadexit", case_threadexit },
                  { "groupsig", case_groupsig }, /* not in "all": it leaves the group */
                  { "sigwrite", case_sigwrite }, { "closerange", case_closerange }, { "printlog", case_printlog }, { "patch", case_patch }, { "dup", case_dup },
                  { "copy", case_copy }, { "twofd", case_twofd },
                  { "fork", case_fork }, { "truncate", case_truncate }, { "stdio", case_stdio },
                  { "efbig", case_efbig }, { "limit", case_limit }, { "timer", case_timer }, { "eio", case_eio }, { "rows", case_rows },
                  { "reads", case_reads }, { "preads", case_preads }, { "stale", case_stale }, { "writev", case_writev },
                  { "badbuf", case_badbuf }, { "locknews", case_locknews },
                  { "inplace", case_inplace }, { "inplace-sparse", case_inplace_sparse }, { "seeks", case_seeks },
                  { "quiet", case_quiet },
                  { "letgo", case_letgo }, /* not in "all": with UNBLOCK_TEST_SIDECAR_MSG_MS */
                  { "eio-exit", case_eio_exit },
                  { "idle", case_idle }, /* not in "all": it waits for the worker to end */
                  /* not in "all": with UNBLOCK_TEST_GIVEBACK_MS only */
                  { "giveback", case_giveback }, { "giveback-open", case_giveback_open },
                  { "firstpage", case_firstpage }, /* not in "all": its own statistics */
                  /* not in "all": "prot" runs them (with UNBLOCK_IO_QUEUE_NS=0) */
                  { "prot", case_prot }, { "prot-rewrite", case_prot_rewrite },
                  { "prot-fsync", case_prot_fsync }, { "prot-free", case_prot_free },
                  { "prot-copy", case_prot_copy }, { "prot-twice", case_prot_twice },
                  { "prot-fork", case_prot_fork }, { "prot-eio", case_prot_eio },
                  { "prot-pwrite", case_prot_pwrite } };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if ((strcmp(c, "all") == 0 && strcmp(cases[i].name, "eio-exit") != 0 &&
             strcmp(cases[i].name, "idle") != 0 && strncmp(cases[i].name, "giveback", 8) != 0 &&
             strcmp(cases[i].name, "letgo") != 0 && strcmp(cases[i].name, "groupsig") != 0 &&
             strncmp(cases[i].name, "sigsame-", 8) != 0 &&
             strncmp(cases[i].name, "prot", 4) != 0) ||
            strcmp(c, cases[i].name) == 0)
            cases[i].fn();
    fclose(out);
    return 0;
}
