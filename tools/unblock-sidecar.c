/* unblock-sidecar — finishes a program's write-behind if the program is killed.
 *
 * Started by the runtime (src/fileio/sidecar.c) at a program's first buffered
 * write, with its socket on descriptor 3 and the shared memory (journal and
 * arena, src/fileio/sidecar.h) on descriptor 4.  While the program lives it only
 * keeps a duplicate of each descriptor the program buffers writes for (FOLLOW,
 * FORGET, DROP).  When the program is gone (its pidfd, or the socket's end),
 * whatever the journal still holds, the program had written but the kernel had
 * not been given: it writes that, queued jobs in their order and then each
 * descriptor's block, and exits.  After a clean exit the journal is empty and
 * it writes nothing.  A kill -9 (the OOM killer, a batch system's last resort)
 * then loses nothing the program had handed to write(), as without unblock.
 *
 * usage (by the runtime only): unblock-sidecar SIZE PID VERBOSE [DELAY_MS [MSG_MS]]
 *   DELAY_MS: the test hook UNBLOCK_TEST_SIDECAR_DELAY_MS (late to see the end)
 *   MSG_MS: the test hook UNBLOCK_TEST_SIDECAR_MSG_MS (slow to carry out each
 *   message) */
#define _GNU_SOURCE
#include "fileio/sidecar.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fds[SC_FDS];
static int verbose;
static uint32_t *dropped; /* the journal's count of DROPs done (sidecar.h) */
static int msg_delay_ms;  /* test hook: UNBLOCK_TEST_SIDECAR_MSG_MS */

/* One message: 1, 0 at the socket's end (or an error), -1 at QUIT (every
 * duplicate closed and the ACK sent). */
static int take_message(int sock, int wait)
{
    sc_msg_t m;
    char ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = { &m, sizeof(m) };
    struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                        .msg_controllen = sizeof(ctl) };
    ssize_t r;
    do
        r = recvmsg(sock, &h, MSG_CMSG_CLOEXEC | (wait ? 0 : MSG_DONTWAIT));
    while (r < 0 && errno == EINTR);
    if (r != (ssize_t)sizeof(m))
        return 0;
    if (msg_delay_ms > 0) /* slow to carry it out, as on a loaded machine */
        usleep((useconds_t)msg_delay_ms * 1000);
    int got = -1;
    struct cmsghdr *c = CMSG_FIRSTHDR(&h);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        memcpy(&got, CMSG_DATA(c), sizeof(int));
    if (m.type == SC_QUIT) {
        if (got >= 0)
            close(got);
        for (int i = 0; i < SC_FDS; i++)
            if (fds[i] >= 0) {
                close(fds[i]);
                fds[i] = -1;
            }
        sc_msg_t ack = { SC_ACK, -1 };
        send(sock, &ack, sizeof(ack), MSG_NOSIGNAL);
        return -1;
    }
    if (m.type == SC_SYNC) {
        if (got >= 0)
            close(got);
        sc_msg_t ack = { SC_ACK, -1 };
        send(sock, &ack, sizeof(ack), MSG_NOSIGNAL);
        return 1;
    }
    if (m.fd < 0 || m.fd >= SC_FDS) {
        if (got >= 0)
            close(got);
        return 1;
    }
    if (fds[m.fd] >= 0) {
        close(fds[m.fd]);
        fds[m.fd] = -1;
    }
    if (m.type == SC_FOLLOW) {
        fds[m.fd] = got;
    } else {
        if (got >= 0)
            close(got);
        if (m.type == SC_FORGET) {
            sc_msg_t ack = { SC_ACK, m.fd };
            send(sock, &ack, sizeof(ack), MSG_NOSIGNAL);
        } else if (m.type == SC_DROP && dropped) {
            __atomic_add_fetch(dropped, 1, __ATOMIC_RELEASE);
        }
    }
    return 1;
}

static int put(int fd, const char *p, uint64_t n, int64_t pos)
{
    while (n > 0) {
        ssize_t r = pwrite(fd, p, n, pos);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        p += r;
        n -= (uint64_t)r;
        pos += r;
    }
    return 0;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = (*(sc_job_t *const *)a)->seq, y = (*(sc_job_t *const *)b)->seq;
    return x < y ? -1 : x > y;
}

/* What the journal still holds goes to the files: jobs in their order, then
 * the blocks (each descriptor's block holds writes after its jobs). */
static void replay(const char *mem, uint64_t size)
{
    const sc_journal_t *j = (const sc_journal_t *)mem;
    if (j->magic != SC_MAGIC)
        return;
    static const sc_job_t *live[SC_JOBS];
    int n = 0, failed = 0, files = 0;
    uint64_t bytes = 0;
    for (int i = 0; i < SC_JOBS; i++)
        if (j->jobs[i].seq && j->jobs[i].x.len)
            live[n++] = &j->jobs[i];
    qsort(live, (size_t)n, sizeof(live[0]), by_seq);
    for (int i = 0; i < n; i++) {
        const sc_job_t *b = live[i];
        if (b->fd < 0 || b->fd >= SC_FDS || fds[b->fd] < 0 || b->x.off < SC_ARENA_START ||
            b->x.off + b->x.len > size || put(fds[b->fd], mem + b->x.off, b->x.len, b->x.pos)) {
            failed++;
            continue;
        }
        bytes += b->x.len;
    }
    for (int fd = 0; fd < SC_FDS; fd++) {
        const sc_extent_t *x = &j->blocks[fd];
        if (!x->len)
            continue;
        if (fds[fd] < 0 || x->off < SC_ARENA_START || x->off + x->len > size ||
            put(fds[fd], mem + x->off, x->len, x->pos)) {
            failed++;
            continue;
        }
        bytes += x->len;
        files++;
    }
    if (verbose && (n || files || failed))
        fprintf(stderr, "unblock: the program ended without writing out; its sidecar wrote "
                        "%llu bytes (%d queued writes, %d blocks)%s\n",
                (unsigned long long)bytes, n, files, failed ? ", some could not be" : "");
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    uint64_t size = strtoull(argv[1], NULL, 10);
    pid_t parent = (pid_t)atol(argv[2]);
    verbose = atoi(argv[3]);
    prctl(PR_SET_NAME, "unblock-sidecar");
    /* It ends when the program does: the terminal's and the job's signals are
     * the program's (a SIGTERM makes the program write out itself). */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    /* (started with every signal blocked, in its own process group: sidecar.c) */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int i = 0; i < SC_FDS; i++)
        fds[i] = -1;
    const char *mem = mmap(NULL, size, PROT_READ, MAP_SHARED | MAP_NORESERVE, SC_MEM_FD, 0);
    if (mem == MAP_FAILED)
        return 1;
    /* The header's page, writable: the count of DROPs done.  Without it the
     * program never sees them done and asks with SYNC instead. */
    char *head = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, SC_MEM_FD, 0);
    if (head != MAP_FAILED)
        dropped = (uint32_t *)(head + offsetof(sc_journal_t, dropped));
    if (argc > 5)
        msg_delay_ms = atoi(argv[5]);
    int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
    /* The program may already be gone (then its socket has ended too). */
    for (;;) {
        struct pollfd p[2] = { { SC_SOCK_FD, POLLIN, 0 }, { pidfd, POLLIN, 0 } };
        int r = poll(p, pidfd >= 0 ? 2 : 1, -1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        if (p[0].revents & POLLIN) {
            int t = take_message(SC_SOCK_FD, 0);
            if (t < 0)
                return 0; /* the program wrote everything and goes on without us */
            if (t == 0)
                break;
            continue;
        }
        if (p[0].revents & (POLLHUP | POLLERR))
            break;
        if (pidfd >= 0 && p[1].revents)
            break;
    }
    /* The test hook UNBLOCK_TEST_SIDECAR_DELAY_MS: late to see the end, as on
     * a loaded machine (serial.writebehind.release). */
    if (argc > 4 && atoi(argv[4]) > 0)
        usleep((useconds_t)atoi(argv[4]) * 1000);
    /* Messages sent before the end still count. */
    int t;
    while ((t = take_message(SC_SOCK_FD, 0)) > 0)
        ;
    if (t < 0)
        return 0;
    replay(mem, size);
    return 0;
}
