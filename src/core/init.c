/* init.c — start-up and shut-down of the runtime in every process it lands in.
 *
 * The constructor reads the options and decides what this process is (see
 * docs/architecture.md, "Which processes are accelerated"):
 *   - UNBLOCK_DISABLE=1: nothing at all, every wrapper only forwards;
 *   - a shell or launcher (sh, env, timeout, mpirun, ...) on the way to the
 *     program: pass-through, and its children are programs in their own right;
 *   - a process the program started (system, popen, spawn, fork+exec): pass-through
 *     and no stats, unless UNBLOCK_CHILDREN=1;
 *   - otherwise the program itself.
 * The environment variable UNBLOCK_OWNER carries the pid of the program from parent
 * to child; the launcher sets it to its own pid, which the program inherits by exec. */
#define _GNU_SOURCE
#include "core/core.h"
#include "core/log.h"
#include "core/module.h"
#include "core/options.h"
#include "core/sites.h"
#include "core/stats.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

unblock_global_t unblock_g = { .rank = -1 };
unblock_busy_t unblock_busy;
uint64_t unblock_front_off = UNBLOCK_FRONT_INACTIVE | UNBLOCK_FRONT_MPI;
unblock_outside_look_t unblock_outside_look;
uint64_t unblock_own_fds[UNBLOCK_OWN_FDS / 64];

static int *own_holders[UNBLOCK_OWN_FDS];

void unblock_own_close(int fd)
{
    if ((unsigned)fd < UNBLOCK_OWN_FDS) {
        __atomic_store_n(&own_holders[fd], NULL, __ATOMIC_RELEASE);
        __atomic_and_fetch(&unblock_own_fds[fd / 64], ~(1ull << (fd % 64)), __ATOMIC_RELEASE);
    }
    syscall(SYS_close, fd);
}

void unblock_own_hold(int fd, int *holder)
{
    if ((unsigned)fd < UNBLOCK_OWN_FDS)
        __atomic_store_n(&own_holders[fd], holder, __ATOMIC_RELEASE);
}

/* The duplicate is numbered high as dup_high numbers them (fileio_internal.h),
 * the holder takes the new number, then the old one is closed.  A thread of
 * the runtime that read the old number just before may still make one call on
 * it, on what the program put there meanwhile: a race the program would need
 * to call dup2 onto that very number at that moment to lose. */
int unblock_own_move(int fd)
{
    if ((unsigned)fd >= UNBLOCK_OWN_FDS)
        return -1;
    int *holder = __atomic_exchange_n(&own_holders[fd], NULL, __ATOMIC_ACQ_REL);
    int to = holder ? (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, UNBLOCK_OWN_FD_LOW) : -1;
    if (to < 0) {
        if (holder)
            __atomic_store_n(&own_holders[fd], holder, __ATOMIC_RELEASE);
        unblock_warn("the program's dup2 onto descriptor %d replaces one of unblock's own%s",
                     fd, holder ? " (no other number free)" : "");
        return -1;
    }
    unblock_own_fd(to);
    unblock_own_hold(to, holder);
    __atomic_store_n(holder, to, __ATOMIC_RELEASE);
    unblock_own_close(fd);
    return 0;
}
UNBLOCK_TLS unblock_tls_t unblock_tls;

static const char *const transparent_exes[] = {
    "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "csh", "tcsh", "fish", "busybox",
    "env", "time", "timeout", "nice", "nohup", "taskset", "numactl", "stdbuf", "chrt",
    "setsid", "ionice", "unblock",
    "mpirun", "mpiexec", "orterun", "orted", "prterun", "prted", "prte",
    "mpirun.openmpi", "mpiexec.openmpi", "mpirun.mpich", "mpiexec.mpich", "mpiexec.hydra",
    "hydra_pmi_proxy", "hydra_nameserver", "srun", "slurmstepd",
};

static int is_transparent(const char *exe)
{
    for (unsigned i = 0; i < sizeof(transparent_exes) / sizeof(transparent_exes[0]); i++)
        if (strcmp(exe, transparent_exes[i]) == 0)
            return 1;
    return 0;
}

static void read_exe_name(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0) {
        strcpy(unblock_g.exe, "?");
        return;
    }
    path[n] = '\0';
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(unblock_g.exe, sizeof(unblock_g.exe), "%.63s", base);
}

static unblock_role_t decide_role(void)
{
    char mine[32];
    snprintf(mine, sizeof(mine), "%d", (int)unblock_g.pid);
    const char *owner = getenv("UNBLOCK_OWNER");
    if (owner != NULL && *owner != '\0' && strcmp(owner, mine) != 0)
        return UNBLOCK_ROLE_CHILD;
    if (is_transparent(unblock_g.exe)) {
        /* Our children are not "children of the program": each becomes one. */
        unsetenv("UNBLOCK_OWNER");
        return UNBLOCK_ROLE_TRANSPARENT;
    }
    setenv("UNBLOCK_OWNER", mine, 1);
    return UNBLOCK_ROLE_PROGRAM;
}

void unblock_core_fork_child(void)
{
    /* A forked copy of the program is not the program: it must not write the
     * program's stats or act on its in-flight operations. */
    unblock_g.pid = (pid_t)syscall(SYS_getpid);
    if (unblock_g.role == UNBLOCK_ROLE_PROGRAM) {
        unblock_g.role = UNBLOCK_ROLE_CHILD;
        unblock_g.active = unblock_opt.children;
        unblock_front_set(UNBLOCK_FRONT_INACTIVE, !unblock_g.active);
        unblock_g.rank = -1;
    }
}

static const char *env_get(const char *name)
{
    return getenv(name);
}

static void log_bad_option(const char *line)
{
    unblock_log_raw(line);
}

__attribute__((constructor(101))) static void unblock_init(void)
{
    unblock_g.pid = (pid_t)syscall(SYS_getpid);
    unblock_tls.program = 1; /* (the main thread: core.h) */
    unblock_timeline_start(unblock_now_ns()); /* the phases count from here */
    unblock_options_load(&unblock_opt, log_bad_option);
    read_exe_name();
    unblock_job_from_env(&unblock_g.job, env_get);
    if (unblock_opt.disable) {
        unblock_g.role = UNBLOCK_ROLE_DISABLED;
        return;
    }
    unblock_g.role = decide_role();
    /* A shell the program starts stays pass-through even with UNBLOCK_CHILDREN=1:
     * only the programs it runs are of interest. */
    unblock_g.active = unblock_g.role == UNBLOCK_ROLE_PROGRAM ||
                       (unblock_g.role == UNBLOCK_ROLE_CHILD && unblock_opt.children &&
                        !is_transparent(unblock_g.exe));
    unblock_front_set(UNBLOCK_FRONT_INACTIVE, !unblock_g.active);
    unblock_modules_atfork();
    if (unblock_g.role == UNBLOCK_ROLE_PROGRAM)
        unblock_modules_init();
    unblock_debug("loaded into %s as %s", unblock_g.exe,
                  unblock_g.role == UNBLOCK_ROLE_PROGRAM ? "the program"
                  : unblock_g.role == UNBLOCK_ROLE_CHILD ? "a child of the program"
                                                         : "a launcher (pass-through)");
}

void unblock_core_flush_at_exit(void)
{
    static int done;
    if (!unblock_g.active || __atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return;
    /* A vfork child shares our memory but is not us. */
    if ((pid_t)syscall(SYS_getpid) != unblock_g.pid) {
        done = 0;
        return;
    }
    if (unblock_opt.stats[0] == '\0')
        return;
    int saved = errno;
    char path[4096];
    if (syscall(SYS_mkdirat, AT_FDCWD, unblock_opt.stats, 0755) != 0 && errno != EEXIST)
        unblock_warn("cannot create the stats directory %s: %m", unblock_opt.stats);
    unblock_stats_path(unblock_opt.stats, path, sizeof(path));
    if (unblock_stats_write(path) != 0)
        unblock_warn("cannot write %s: %m", path);
    errno = saved;
}

__attribute__((destructor(101))) static void unblock_fini(void)
{
    if (unblock_g.active) {
        unblock_modules_quiesce();
        unblock_modules_exit_drain();
    }
    unblock_core_flush_at_exit();
}

/* The signals a runtime thread blocks: all but the synchronous ones of its own
 * faults (the protection's SIGSEGV and SIGBUS). */
static void runtime_signals(sigset_t *s)
{
    sigfillset(s);
    sigdelset(s, SIGSEGV);
    sigdelset(s, SIGBUS);
}

int unblock_runtime_thread_create(int (*create)(pthread_t *, const pthread_attr_t *,
                                                void *(*)(void *), void *),
                                  pthread_t *t, const pthread_attr_t *attr,
                                  void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    runtime_signals(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int r = create(t, attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r;
}

void unblock_runtime_thread(void)
{
    unblock_tls.mpi_depth = 1;
    unblock_tls.runtime = 1;
    sigset_t all;
    runtime_signals(&all); /* (already, where unblock_runtime_thread_create started it) */
    pthread_sigmask(SIG_BLOCK, &all, NULL);
}
