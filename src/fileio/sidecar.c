/* sidecar.c — write-behind that survives a kill -9: shared buffers and a sidecar.
 *
 * Issue: a plain program's write() puts its bytes in the page cache, where a
 * SIGKILL (the OOM killer, a batch system's last resort) cannot take them; a
 * merged block or a queued copy in our memory dies with the process.  So at the
 * first descriptor that buffers writes, the workers' buffers move to shared
 * memory (one memfd: the journal, then an arena of 64 KiB chunks, sidecar.h)
 * and a small process is started, tools/unblock-sidecar.c, which holds a
 * duplicate of every descriptor that buffers.  The journal says which arena bytes
 * are written by the program and not yet given to the kernel; when the program
 * is gone, the sidecar writes them, in order, and exits.  After a clean exit the
 * journal is empty.
 *
 * The sidecar is started with clone(CLONE_VM | CLONE_VFORK) and no exit signal,
 * then exec: it costs no copy of the program's memory, keeps none of its pages,
 * holds none of its other descriptors (a pipe's reader still sees its end), and
 * the program's wait() never sees it (only __WCLONE/__WALL waits do).  Where it
 * cannot start (no helper next to the library, no clone, no memfd: seccomp,
 * RLIMIT_NPROC, RLIMIT_AS, RLIMIT_FSIZE) one line says so and write-behind goes
 * on without it; the report says which (io.sidecar, io.sidecar_failed).
 *
 * Not covered (docs/reliability.md): large writes queued from the program's own
 * pages (protected.c: they are the program's memory), and buffers that were
 * taken before the sidecar started (io.sidecar_unsafe counts those blocks).
 * Owns: the shared memory and its arena, the sidecar process and its socket.
 * Calls: fdtable.c (the descriptor's entry), worker.c (the spare buffers in a
 * fork child). */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h" /* and sidecar.h */

#include <dlfcn.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define SC_CHUNK (64u << 10)
#define SC_MAX_BITS (1u << 18) /* chunks: 16 GiB of address space at most */

sc_journal_t *unblock_sc_journal; /* NULL: no sidecar (yet) */
char *unblock_sc_base;
uint64_t unblock_sc_size;

static int sc_state;  /* 0: not tried; 1: running; -1: off */
static int sc_sock = -1;
static pid_t sc_pid;
static int sc_lock;   /* the socket (a message and its answer) */
static uint32_t sc_drops;  /* DROPs sent (sidecar.h) ... */
static uint32_t sc_synced; /* ... of which a SYNC's answer says they are done */
/* A close waits for the sidecar to let go of the file from the first lock or
 * lease the program takes on an open file description (flock, an OFD lock,
 * F_SETLEASE: they outlive the program's close while a duplicate is open), and
 * from its first chmod (the file may be executed next, by anyone). */
static int sc_must_wait;
static int arena_lock;
static uint64_t bits[SC_MAX_BITS / 64];
static uint64_t warm[SC_MAX_BITS / 64]; /* free chunks whose memory is kept */
static uint32_t nchunks, hint;
static uint64_t warm_bytes;
/* Free chunks keep their memory up to this much: a fresh page of shared memory
 * costs more than the copy into it (64 MiB of 1 MiB copies: 78-108 ms into
 * fresh pages, 3-13 ms into kept ones, on the machine of docs/performance.md),
 * and the next checkpoint needs as much as the last.  Past it, freed chunks give
 * their memory back at once (MADV_REMOVE). */
#define SC_WARM_MAX ((uint64_t)64 << 20)

/* ---- the arena: chunks of the shared memory, first fit from a hint ---- */

static int chunks_free(uint32_t at, uint32_t n)
{
    for (uint32_t i = at; i < at + n; i++)
        if (bits[i / 64] & (1ull << (i % 64)))
            return 0;
    return 1;
}

static void chunks_mark(uint32_t at, uint32_t n, int used)
{
    for (uint32_t i = at; i < at + n; i++) {
        uint64_t m = 1ull << (i % 64);
        if (used) {
            bits[i / 64] |= m;
            if (warm[i / 64] & m) { /* its kept memory is in use again */
                warm[i / 64] &= ~m;
                warm_bytes -= SC_CHUNK;
            }
        } else {
            bits[i / 64] &= ~m;
        }
    }
}

/* cap bytes of shared memory, or NULL (no sidecar, or the arena is full). */
char *sc_alloc(size_t cap)
{
    if (!__atomic_load_n(&unblock_sc_journal, __ATOMIC_ACQUIRE) || cap == 0)
        return NULL;
    uint32_t n = (uint32_t)((cap + SC_CHUNK - 1) / SC_CHUNK);
    char *b = NULL;
    unblock_spin_lock(&arena_lock);
    for (uint32_t tries = 0, i = hint; tries < nchunks && n <= nchunks; tries++, i++) {
        if (i + n > nchunks)
            i = 0;
        if ((bits[i / 64] & (1ull << (i % 64))) == 0 && chunks_free(i, n)) {
            chunks_mark(i, n, 1);
            hint = i + n;
            b = unblock_sc_base + SC_ARENA_START + (uint64_t)i * SC_CHUNK;
            break;
        }
    }
    unblock_spin_unlock(&arena_lock);
    return b;
}

/* Whether b is of the arena; if so its chunks are free again and their memory
 * given back. */
int sc_free(char *b, size_t cap)
{
    if (!sc_in_arena(b))
        return 0;
    uint32_t i = (uint32_t)((uint64_t)(b - unblock_sc_base - SC_ARENA_START) / SC_CHUNK);
    uint32_t n = (uint32_t)((cap + SC_CHUNK - 1) / SC_CHUNK);
    unblock_spin_lock(&arena_lock);
    int keep = warm_bytes + (uint64_t)n * SC_CHUNK <= SC_WARM_MAX;
    if (keep) {
        for (uint32_t k = i; k < i + n; k++)
            warm[k / 64] |= 1ull << (k % 64);
        warm_bytes += (uint64_t)n * SC_CHUNK;
    }
    unblock_spin_unlock(&arena_lock);
    if (!keep) /* before the chunks are free: nobody else uses them yet */
        syscall(SYS_madvise, b, (size_t)n * SC_CHUNK, MADV_REMOVE);
    unblock_spin_lock(&arena_lock);
    chunks_mark(i, n, 0);
    if (i < hint)
        hint = i;
    unblock_spin_unlock(&arena_lock);
    return 1;
}

/* ---- starting it ---- */

typedef struct {
    int sock, mem, quiet;
    const char *path;
    char *const *argv;
} sc_spawn_t;

/* The clone child (the program's memory, its own descriptor table): only system
 * calls until exec.  Its own process group: a signal the program sends to its
 * group (kill(0, ...)), or a terminal's, is not the sidecar's (SIGUSR1's
 * default action ended it: serial.writebehind.groupsig).  It starts with every
 * signal blocked (sc_start), so none runs a handler of the program's here, in
 * its memory; the sidecar unblocks them once it has set its own. */
static int sc_child(void *arg)
{
    sc_spawn_t *a = arg;
    syscall(SYS_setpgid, 0, 0);
    if (syscall(SYS_dup3, a->sock, SC_SOCK_FD, 0) < 0 || syscall(SYS_dup3, a->mem, SC_MEM_FD, 0) < 0)
        syscall(SYS_exit, 126);
    syscall(SYS_close_range, SC_MEM_FD + 1, ~0u, 0);
    int nul = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
    if (nul >= 0) {
        syscall(SYS_dup3, nul, 0, 0);
        syscall(SYS_dup3, nul, 1, 0);
        if (a->quiet)
            syscall(SYS_dup3, nul, 2, 0);
        syscall(SYS_close, nul);
    }
    static char *const envp[] = { NULL };
    syscall(SYS_execve, a->path, a->argv, envp);
    syscall(SYS_exit, 127);
    return 127;
}

/* fd moved to a number of ours (dup_high; the program's numbers stay its own). */
static int high(int fd)
{
    if (fd < 0)
        return -1;
    int h = dup_high(fd);
    syscall(SYS_close, fd);
    return h;
}

static void sc_off(const char *why)
{
    if (__atomic_exchange_n(&sc_state, -1, __ATOMIC_ACQ_REL) == -1 || !why)
        return;
    unblock_counter_add(&unblock_stats.io_sidecar_failed, 1);
    unblock_warn("write-behind without its sidecar (%s): a kill -9 would lose the "
                     "writes still in memory",
                     why);
}

/* Starts the sidecar once; 1 if it runs. */
static int sc_start(void)
{
    if (!unblock_opt.io_crashsafe)
        return 0;
    /* Beside the library (preloaded: wherever the tree was moved); else in the
     * folder the launcher or the modulefile names (the link-time variant, whose
     * "library" is the program); else where the build, the installation or the
     * package put it (cmake/UnblockInstallDirs.cmake). */
    Dl_info di;
    char path[4096];
    const char *slash, *dirs = UNBLOCK_SIDECAR_DIRS, *named = getenv("UNBLOCK_LIBDIR");
    int found = dladdr((void *)sc_start, &di) && di.dli_fname &&
                (slash = strrchr(di.dli_fname, '/')) &&
                snprintf(path, sizeof(path), "%.*s/unblock-sidecar", (int)(slash - di.dli_fname),
                         di.dli_fname) < (int)sizeof(path) &&
                syscall(SYS_access, path, X_OK) == 0;
    if (!found && named && *named)
        found = snprintf(path, sizeof(path), "%s/unblock-sidecar", named) < (int)sizeof(path) &&
                syscall(SYS_access, path, X_OK) == 0;
    while (!found && *dirs) {
        size_t n = strcspn(dirs, ":");
        found = snprintf(path, sizeof(path), "%.*s/unblock-sidecar", (int)n, dirs) <
                    (int)sizeof(path) &&
                syscall(SYS_access, path, X_OK) == 0;
        dirs += n + (dirs[n] == ':');
    }
    if (!found) {
        sc_off("unblock-sidecar not found beside the library, in UNBLOCK_LIBDIR or the "
               "install folders");
        return 0;
    }
    int mem = high((int)syscall(SYS_memfd_create, "unblock-writebehind", MFD_CLOEXEC));
    uint64_t size = 0;
    char *base = MAP_FAILED;
    /* As much address space as allowed, up to 16 GiB (none of it used until
     * written), and never past RLIMIT_FSIZE: growing the memfd there would
     * raise SIGXFSZ in the program. */
    struct rlimit fl;
    uint64_t most = (uint64_t)SC_CHUNK * SC_MAX_BITS + SC_ARENA_START;
    if (syscall(SYS_getrlimit, RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY &&
        fl.rlim_cur < most)
        most = fl.rlim_cur;
    for (uint64_t want = most; mem >= 0 && base == MAP_FAILED && want >= (8u << 20); want /= 4) {
        if (syscall(SYS_ftruncate, mem, want) != 0)
            continue;
        base = (char *)syscall(SYS_mmap, NULL, want, PROT_READ | PROT_WRITE,
                               MAP_SHARED | MAP_NORESERVE, mem, 0);
        size = want;
    }
    int sv[2] = { -1, -1 };
    if (base == MAP_FAILED ||
        syscall(SYS_socketpair, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        if (mem >= 0)
            unblock_own_close(mem);
        if (base != MAP_FAILED)
            syscall(SYS_munmap, base, size);
        sc_off(most < (8u << 20) ? "RLIMIT_FSIZE is below its shared memory's 8 MiB"
                                 : "no shared memory or socket");
        return 0;
    }
    int mine = high(sv[0]), theirs = high(sv[1]);
    char a_size[24], a_pid[16], a_verbose[4];
    snprintf(a_size, sizeof(a_size), "%llu", (unsigned long long)size);
    snprintf(a_pid, sizeof(a_pid), "%d", (int)getpid());
    snprintf(a_verbose, sizeof(a_verbose), "%d", unblock_opt.log >= UNBLOCK_LOG_INFO);
    /* The test hook UNBLOCK_TEST_SIDECAR_DELAY_MS (its environment is empty). */
    /* ... and UNBLOCK_TEST_SIDECAR_MSG_MS (slow to carry out each message). */
    const char *delay = getenv("UNBLOCK_TEST_SIDECAR_DELAY_MS"),
               *slow = getenv("UNBLOCK_TEST_SIDECAR_MSG_MS");
    char *argv[] = { path, a_size, a_pid, a_verbose,
                     (char *)(delay ? delay : slow ? "0" : NULL), (char *)slow, NULL };
    sc_spawn_t a = { theirs, mem, unblock_opt.log < UNBLOCK_LOG_INFO, path, argv };
    size_t stack_len = 64u << 10;
    char *stack = (char *)syscall(SYS_mmap, NULL, stack_len, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    int e = errno;
    /* Test hook: a process cannot be started here (seccomp, RLIMIT_NPROC). */
    const char *no = getenv("UNBLOCK_TEST_NO_SIDECAR");
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* (the child starts with them blocked) */
    pid_t pid = stack == MAP_FAILED || mine < 0 || theirs < 0 || (no && *no == '1')
                    ? -1
                    : clone(sc_child, stack + stack_len, CLONE_VM | CLONE_VFORK, &a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    if (stack != MAP_FAILED)
        syscall(SYS_munmap, stack, stack_len);
    unblock_own_close(theirs);
    unblock_own_close(mem); /* the mapping and the sidecar keep it */
    if (pid <= 0) {
        unblock_own_close(mine);
        syscall(SYS_munmap, base, size);
        sc_off("cannot start a process");
        return 0;
    }
    sc_journal_t *j = (sc_journal_t *)base;
    j->magic = SC_MAGIC;
    j->size = size;
    nchunks = (uint32_t)((size - SC_ARENA_START) / SC_CHUNK);
    sc_sock = mine;
    unblock_own_hold(sc_sock, &sc_sock);
    sc_pid = pid;
    unblock_sc_base = base;
    unblock_sc_size = size;
    __atomic_store_n(&unblock_sc_journal, j, __ATOMIC_RELEASE);
    __atomic_store_n(&sc_state, 1, __ATOMIC_RELEASE);
    unblock_counter_add(&unblock_stats.io_sidecar, 1);
    unblock_info("write-behind sidecar %s started (pid %d)", path, (int)pid);
    return 1;
}

/* MPI_Init is about to run in the program (and again when it has returned: a
 * second call does nothing): with crash safety the sidecar starts now, its
 * start-up (a process's exec, about a millisecond here) hidden in MPI_Init's
 * own wait for the other processes, rather than at the first buffered write,
 * whose first close then waited for it to be running (a checkpoint of sor2d
 * 256^2 at 200 iterations: 1.17x plain with the sidecar started there, 1.07x
 * without it).  Started after MPI_Init, its exec and the new process's start
 * ran beside the program's first calls: 2 ranks opening a file on
 * bench/slowfs took 7 ms there against 3 ms without a sidecar.  And the first
 * block's memory is made ready (worker.c: buffers_warm_one). */
void unblock_wb_mpi_started(void)
{
    if (!unblock_g.active || !unblock_opt.io)
        return;
    if (unblock_opt.io_crashsafe)
        sc_running();
    buffers_warm_one();
}

/* Whether the sidecar runs (starting it the first time). */
int sc_running(void)
{
    int s = __atomic_load_n(&sc_state, __ATOMIC_ACQUIRE);
    if (s)
        return s > 0;
    unblock_spin_lock(&sc_lock);
    if (__atomic_load_n(&sc_state, __ATOMIC_ACQUIRE) == 0 && !sc_start())
        __atomic_store_n(&sc_state, -1, __ATOMIC_RELEASE);
    unblock_spin_unlock(&sc_lock);
    return __atomic_load_n(&sc_state, __ATOMIC_ACQUIRE) > 0;
}

/* The sidecar ended before the program (sc_lock held): write-behind goes on
 * without it; the zombie is reaped. */
static void sc_lost(void)
{
    sc_off("it ended");
    syscall(SYS_wait4, sc_pid, NULL, WNOHANG | __WCLONE, NULL);
}

/* ---- descriptors ---- */

static int sc_send(int type, int fd, int pass)
{
    sc_msg_t m = { (uint32_t)type, fd };
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof(ctl));
    struct iovec iov = { &m, sizeof(m) };
    struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (pass) {
        h.msg_control = ctl;
        h.msg_controllen = sizeof(ctl);
        struct cmsghdr *c = CMSG_FIRSTHDR(&h);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t r;
    do
        r = syscall(SYS_sendmsg, sc_sock, &h, MSG_NOSIGNAL);
    while (r < 0 && errno == EINTR);
    return r == (ssize_t)sizeof(m) ? 0 : -1;
}

/* fd buffers writes from now on (locked): the sidecar keeps a duplicate. */
void sc_follow(int fd, wb_fd_t *w)
{
    if (w->sc || !sc_running())
        return;
    int e = errno;
    unblock_spin_lock(&sc_lock);
    if (__atomic_load_n(&sc_state, __ATOMIC_ACQUIRE) > 0) {
        if (sc_send(SC_FOLLOW, fd, 1) == 0) {
            w->sc = 1;
            unblock_counter_add(&unblock_stats.io_sidecar_files, 1);
        } else {
            sc_lost();
        }
    }
    unblock_spin_unlock(&sc_lock);
    errno = e;
}

/* A message that the sidecar answers, and its answer (sc_lock held); no answer:
 * it is gone (sc_lost). */
static void sc_ask(int type, int fd)
{
    sc_msg_t ack;
    ssize_t r = sc_send(type, fd, 0);
    if (r == 0) {
        do
            r = syscall(SYS_recvfrom, sc_sock, &ack, sizeof(ack), 0, NULL, NULL);
        while (r < 0 && errno == EINTR);
    }
    if (r != (ssize_t)sizeof(ack))
        sc_lost();
}

/* fd is no longer followed (locked; its data is in the file): the sidecar
 * closes its duplicate.  Where someone could see that it is still open, before
 * this returns: a file whose mode had an execute bit (exec fails with ETXTBSY
 * while a writer holds it), one opened where no wrapper saw it, or any once the
 * program has taken a flock, an OFD lock or a lease, or changed a mode
 * (sc_must_wait).  Else it is told without waiting for its answer (a round trip
 * to another process: 40-70 us here, more than a small checkpoint's writes
 * take), and what would see it waits first: a process started, a chmod, a lease
 * of ours (sc_settle); exit and exec wait for its end (sc_quit). */
void sc_forget(int fd, wb_fd_t *w)
{
    /* Its buffer is given back next; the block is empty, unless the number was
     * closed where we did not see it (its bytes then go nowhere). */
    sc_block_gone(fd);
    if (!w->sc)
        return;
    w->sc = 0;
    int wait = !w->known || w->exec || __atomic_load_n(&sc_must_wait, __ATOMIC_RELAXED);
    int e = errno;
    unblock_spin_lock(&sc_lock);
    if (__atomic_load_n(&sc_state, __ATOMIC_ACQUIRE) > 0) {
        if (wait) {
            sc_ask(SC_FORGET, fd);
        } else if (sc_send(SC_DROP, fd, 0) == 0) {
            __atomic_store_n(&sc_drops, sc_drops + 1, __ATOMIC_RELEASE);
            __atomic_store_n(&unblock_sc_unsettled, 1, __ATOMIC_RELAXED);
            unblock_counter_add(&unblock_stats.io_sidecar_drops, 1);
        } else {
            sc_lost();
        }
    }
    unblock_spin_unlock(&sc_lock);
    errno = e;
}

/* Every descriptor forgotten so far is closed in the sidecar when this returns:
 * a load and a compare when it has done them (the journal's count), else a
 * SYNC and its answer. */
/* (unblock_sc_unsettled: core.h, unblock_busy) */

/* The flag cleared, then whether every DROP sent so far is done (no sidecar,
 * a SYNC answered since, or the journal's count): a load and a compare. */
static int sc_let_go(void)
{
    sc_journal_t *j = __atomic_load_n(&unblock_sc_journal, __ATOMIC_ACQUIRE);
    /* (cleared first: a DROP sent from now on sets it again) */
    __atomic_store_n(&unblock_sc_unsettled, 0, __ATOMIC_SEQ_CST);
    uint32_t sent = __atomic_load_n(&sc_drops, __ATOMIC_ACQUIRE);
    return !j || sent == __atomic_load_n(&sc_synced, __ATOMIC_RELAXED) ||
           sent == __atomic_load_n(&j->dropped, __ATOMIC_ACQUIRE);
}

void sc_settle(void)
{
    if (sc_let_go())
        return;
    sc_journal_t *j = __atomic_load_n(&unblock_sc_journal, __ATOMIC_ACQUIRE);
    int e = errno;
    unblock_spin_lock(&sc_lock);
    uint32_t sent = sc_drops;
    if (j && __atomic_load_n(&sc_state, __ATOMIC_ACQUIRE) > 0 && sent != sc_synced &&
        sent != __atomic_load_n(&j->dropped, __ATOMIC_ACQUIRE)) {
        sc_ask(SC_SYNC, -1);
        unblock_counter_add(&unblock_stats.io_sidecar_settles, 1);
    }
    __atomic_store_n(&sc_synced, sent, __ATOMIC_RELAXED);
    unblock_spin_unlock(&sc_lock);
    errno = e;
}

/* The program takes a lock or lease on an open file description, or changes a
 * file's mode: closes wait for the sidecar from now on, and what it holds is
 * let go first. */
void unblock_wb_sidecar_must_wait(void)
{
    if (!__atomic_load_n(&sc_must_wait, __ATOMIC_RELAXED))
        __atomic_store_n(&sc_must_wait, 1, __ATOMIC_RELAXED);
    sc_settle();
}

void unblock_wb_sidecar_settle(void)
{
    sc_settle();
}

/* The flag cleared if the sidecar has let go of every descriptor forgotten so
 * far (the journal's count), never a round trip: a file call's full path, so
 * that the fast paths come back once it has.  Before, only the next MPI call or
 * process start cleared it: a serial program whose try of merging ended (a
 * DROP) took the full path at every file call from then on, 25 ns each (a data
 * file written beside an O_APPEND log: 1.05x plain, against 1.02 without the
 * sidecar). */
void unblock_wb_sidecar_poll(void)
{
    if (!sc_let_go())
        __atomic_store_n(&unblock_sc_unsettled, 1, __ATOMIC_RELAXED);
}

/* The program exits, or execs, with everything written (unblock_wb_at_exit,
 * the exec wrappers): the sidecar closes its duplicates and ends before this
 * returns, so no file of the program's stays open after it.  Only the process
 * that started it (not a vfork child, which shares our memory).  Write-behind
 * goes on without it: after exit's flush only destructors write. */
void sc_quit(void)
{
    if (__atomic_load_n(&sc_state, __ATOMIC_ACQUIRE) <= 0 ||
        syscall(SYS_getpid) != unblock_g.pid)
        return;
    int e = errno;
    unblock_spin_lock(&sc_lock);
    if (__atomic_load_n(&sc_state, __ATOMIC_ACQUIRE) > 0) {
        __atomic_store_n(&sc_state, -1, __ATOMIC_RELEASE);
        sc_ask(SC_QUIT, -1); /* after every DROP before it (off already: no warning) */
        unblock_own_close(sc_sock);
        sc_sock = -1;
        int st;
        while (syscall(SYS_wait4, sc_pid, &st, __WCLONE, NULL) < 0 && errno == EINTR)
            ;
        for (int fd = 0; fd < fd_end(); fd++)
            slot(fd)->sc = 0;
    }
    unblock_spin_unlock(&sc_lock);
    errno = e;
}

/* ---- the journal's jobs ---- */

void sc_job_queued(int i, int fd, const char *buf, size_t len, off_t off)
{
    sc_journal_t *j = __atomic_load_n(&unblock_sc_journal, __ATOMIC_ACQUIRE);
    if (!j || !sc_in_arena(buf))
        return;
    sc_job_t *x = &j->jobs[i];
    x->fd = fd;
    x->x = (sc_extent_t){ (uint64_t)(buf - unblock_sc_base), off, len };
    __atomic_store_n(&x->seq, __atomic_add_fetch(&j->seq, 1, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
}

void sc_job_written(int i)
{
    sc_journal_t *j = __atomic_load_n(&unblock_sc_journal, __ATOMIC_ACQUIRE);
    if (j)
        __atomic_store_n(&j->jobs[i].seq, 0, __ATOMIC_RELEASE);
}

/* A fork child: the shared memory and the sidecar are the parent's.  The child
 * buffers in memory of its own from now on (everything was written and every
 * descriptor forgotten before the fork). */
void unblock_wb_forked_child(void)
{
    if (__atomic_load_n(&sc_state, __ATOMIC_ACQUIRE) <= 0)
        return;
    __atomic_store_n(&unblock_sc_journal, NULL, __ATOMIC_RELEASE);
    __atomic_store_n(&sc_state, -1, __ATOMIC_RELEASE);
    unblock_own_close(sc_sock);
    sc_sock = -1;
    buffers_forked_child();
    for (int fd = 0; fd < fd_end(); fd++)
        slot(fd)->sc = 0;
}
