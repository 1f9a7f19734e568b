/* tick.c — progress from the program's own thread, without a completion thread
 * (progress.h: unblock_tick_*).
 *
 * At the program's thread level (MPI_THREAD_SINGLE or FUNNELED) no other thread
 * may call MPI, so what is in flight moves only when the program's thread calls
 * MPI.  The tick lets it move while the program computes: a POSIX timer
 * (timer_create, CLOCK_MONOTONIC, SIGEV_THREAD_ID to the thread that called
 * MPI_Init, a real-time signal: never SIGALRM or an itimer, which programs and
 * profilers own) fires every UNBLOCK_TICK_US while operations are in flight and
 * is disarmed when none is.  Its handler runs the same source as the completion
 * thread (the comm module's poll: MPI_Test on each active operation, the
 * program's own large requests), but only where calling MPI is safe, the
 * design's rule for the fault handler: the interrupted instruction is in the
 * program's own code (the executable's text, not libc, the loader, libmpi or
 * unblock), and the thread is outside every MPI call and every handler of ours.
 * Otherwise it only counts the tick as deferred; the program's next MPI call
 * polls anyway (unblock_conv_at_call).
 *
 * What the signal must not change:
 * - errno: saved and restored;
 * - system calls: SA_RESTART restarts most, but not the sleeping ones (nanosleep,
 *   clock_nanosleep, poll, select, epoll_wait, sem_timedwait, pause, ...).  Their
 *   wrappers below block the tick signal for the call, so the program never sees
 *   an EINTR or a short sleep it would not see without unblock; the tick waits.
 * - the program's signal handlers: signals.c adds the tick signal to the mask of
 *   every handler the program installs with sigaction or signal, so a tick never
 *   interrupts a handler of the program (which may itself have interrupted libc).
 * Runtime threads block every signal (unblock_runtime_thread); the timer targets
 * one thread anyway.
 *
 * Limits: a program that blocks the signal (sigprocmask with a full set) gets no
 * tick, only progress at its MPI calls and faults; one that waits for every
 * signal (sigwaitinfo or signalfd on a full set) may receive the tick signal.
 * Calls not wrapped here that a signal interrupts even with SA_RESTART (System V
 * msgrcv/semop, socket calls with a timeout set by setsockopt) could return
 * EINTR while a tick is armed.  Only the executable's own text counts as the
 * program's: code of the program in a shared library defers its ticks. */
#define _GNU_SOURCE
#include "progress/progress.h"
#include "core/log.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"

#include <errno.h>
#include <link.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int tick_live;               /* the timer exists */
static int tick_armed;              /* ... and runs */
static timer_t tick_timer;
static pid_t tick_tid;              /* the thread it targets (MPI_Init's) */
static const unblock_progress_source_t *tick_source;
static UNBLOCK_TLS int in_tick;     /* this thread runs the tick's poll */
static uint64_t tick_poll_end;      /* when the last poll ended (the timer's thread) */

/* ---- the program's own code ---- */

#define TEXT_MAX 8
static struct { uintptr_t lo, hi; } text[TEXT_MAX];
static int ntext;

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    /* The first object is the executable (its name is empty). */
    for (int i = 0; i < info->dlpi_phnum && ntext < TEXT_MAX; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            text[ntext].lo = info->dlpi_addr + ph->p_vaddr;
            text[ntext].hi = text[ntext].lo + ph->p_memsz;
            ntext++;
        }
    }
    return 1; /* only the first */
}

int unblock_tick_program_pc(uintptr_t pc)
{
    for (int i = 0; i < ntext; i++)
        if (pc - text[i].lo < text[i].hi - text[i].lo)
            return 1;
    return 0;
}

int unblock_tick_may_drive(uintptr_t pc)
{
    return tick_live && (pid_t)syscall(SYS_gettid) == tick_tid && unblock_tls.mpi_depth == 0 &&
           !unblock_tls.runtime && unblock_tls.copy_env == NULL && unblock_tls.in_signal == 0 &&
           !in_tick && unblock_tick_program_pc(pc);
}

int unblock_tick_fault_may_drive(void)
{
    return tick_live && (pid_t)syscall(SYS_gettid) == tick_tid && unblock_tls.mpi_depth == 0 &&
           !unblock_tls.runtime && unblock_tls.copy_env == NULL && unblock_tls.in_signal == 1 &&
           !in_tick && unblock_tick_program_pc(unblock_tls.fault_pc);
}

int unblock_tick_mine(void)
{
    return tick_live && (pid_t)syscall(SYS_gettid) == tick_tid;
}

/* ---- the timer ---- */

static void set_timer(long ns)
{
    struct itimerspec its = { { ns / 1000000000L, ns % 1000000000L },
                              { ns / 1000000000L, ns % 1000000000L } };
    syscall(SYS_timer_settime, tick_timer, 0, &its, NULL);
}

int unblock_tick_armed(void)
{
    return __atomic_load_n(&tick_armed, __ATOMIC_RELAXED);
}

void unblock_tick_arm(void)
{
    if (!__atomic_load_n(&tick_live, __ATOMIC_ACQUIRE) || __atomic_load_n(&tick_armed, __ATOMIC_RELAXED))
        return;
    if (__atomic_load_n(&unblock_ops_active, __ATOMIC_SEQ_CST) == 0 && !tick_source->busy())
        return;
    __atomic_store_n(&tick_armed, 1, __ATOMIC_RELAXED);
    set_timer((long)unblock_opt.tick_us * 1000L);
    unblock_counter_add(&unblock_stats.tick_armed, 1);
}

/* Disarmed when nothing is left to drive (the handler's and the calls' check). */
static void disarm_if_idle(void)
{
    if (__atomic_load_n(&tick_armed, __ATOMIC_RELAXED) &&
        __atomic_load_n(&unblock_ops_active, __ATOMIC_SEQ_CST) == 0 && !tick_source->busy()) {
        set_timer(0);
        __atomic_store_n(&tick_armed, 0, __ATOMIC_RELAXED);
    }
}

int unblock_tick_poll(void)
{
    if (!tick_live || in_tick)
        return 0;
    in_tick = 1;
    int fresh = 0, done = tick_source->poll(&fresh);
    in_tick = 0;
    if (done)
        unblock_ops_reap();
    disarm_if_idle();
    return done;
}

/* The last poll ended less than half a period ago: the program has not run
 * since.  A poll that took longer than the period (170-500 us each, MPICH
 * moving a 4 MiB message, against a period of 250) found the next tick
 * pending at its end, delivered at once at the same instruction of the
 * program: polls back to back, the program stopped for milliseconds (9 in a
 * row at one instruction in 1 run of 20 of *.tick.libc.np2, which then saw 9
 * polls where it allows 2).  Such a tick is deferred: the program runs at
 * least half a period between two polls. */
static int just_polled(void)
{
    return unblock_now_ns() - tick_poll_end < (uint64_t)unblock_opt.tick_us * 500u;
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    int saved = errno;
    if (si->si_code == SI_TIMER && tick_live) {
        if (__atomic_load_n(&unblock_ops_active, __ATOMIC_SEQ_CST) == 0 && !tick_source->busy())
            disarm_if_idle(); /* done meanwhile (an MPI call completed it) */
        else if (unblock_tick_may_drive(unblock_signal_context_pc(uc)) && !just_polled()) {
            unblock_counter_add(&unblock_stats.tick_polls, 1);
            unblock_tls.mpi_depth++; /* MPI's own POSIX calls pass through */
            in_tick = 1;
            int fresh = 0, done = tick_source->poll(&fresh);
            if (done) {
                unblock_counter_add(&unblock_stats.tick_completed, (uint64_t)done);
                unblock_ops_reap();
            }
            in_tick = 0;
            unblock_tls.mpi_depth--;
            tick_poll_end = unblock_now_ns();
            disarm_if_idle();
        } else {
            unblock_counter_add(&unblock_stats.tick_deferred, 1);
        }
    }
    errno = saved;
}

UNBLOCK_REAL_DECL(int, sigaction, (int, const struct sigaction *, struct sigaction *));

/* A real-time signal nobody handles: from SIGRTMIN+7 up (glibc keeps the first two
 * below SIGRTMIN; UCX and Open MPI use none of these by default). */
static int pick_signal(void)
{
    for (int s = SIGRTMIN + 7; s <= SIGRTMAX - 2; s++) {
        struct sigaction cur;
        if (UNBLOCK_REAL(sigaction)(s, NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
            cur.sa_handler == SIG_DFL)
            return s;
    }
    return 0;
}

int unblock_tick_start(const unblock_progress_source_t *src)
{
    if (tick_live || unblock_opt.tick_us == 0)
        return tick_live;
    int s = pick_signal();
    if (s == 0) {
        unblock_warn("no free real-time signal for the tick; progress only at MPI calls");
        return 0;
    }
    tick_source = src;
    tick_tid = (pid_t)syscall(SYS_gettid);
    ntext = 0;
    dl_iterate_phdr(find_text, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_tick;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGSEGV); /* a fault of ours waits for it: not inside one */
    if (UNBLOCK_REAL(sigaction)(s, &sa, NULL) != 0)
        return 0;
    struct sigevent sev;
    memset(&sev, 0, sizeof(sev));
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = s;
    sev._sigev_un._tid = tick_tid;
    if (syscall(SYS_timer_create, CLOCK_MONOTONIC, &sev, &tick_timer) != 0) {
        unblock_warn("cannot create the tick's timer (%m); progress only at MPI calls");
        return 0;
    }
    unblock_signals_tick = s;
    /* The tick never interrupts the program inside a handler of its own. */
    unblock_signals_mask_tick();
    __atomic_store_n(&tick_live, 1, __ATOMIC_RELEASE);
    unblock_counter_add(&unblock_stats.tick_started, 1);
    return 1;
}

void unblock_tick_stop(void)
{
    if (!tick_live)
        return;
    __atomic_store_n(&tick_live, 0, __ATOMIC_RELEASE);
    syscall(SYS_timer_delete, tick_timer);
    tick_armed = 0;
}

int unblock_tick_running(void)
{
    return __atomic_load_n(&tick_live, __ATOMIC_ACQUIRE);
}

/* ---- sleeping calls: the tick waits until they return ---- */

/* Blocks the tick signal in this thread for one call while the timer runs.
 * Only the thread the timer targets arms it (its MPI calls), and a tick that
 * fired outside such a call was delivered at once: so with the timer stopped
 * when the call starts, no tick can come during it.  (Holding whenever a tick
 * existed cost two rt_sigprocmask calls around each epoll_wait of UCX's TCP
 * progress: MPICH's own-request ping-pong over TCP at the program's level,
 * 1.10-1.12x plain, against 1.00-1.04 at MPI_THREAD_MULTIPLE.) */
typedef struct {
    int on;
    sigset_t old;
} hold_t;

static inline int hold_needed(void)
{
    return __atomic_load_n(&tick_live, __ATOMIC_RELAXED) &&
           __atomic_load_n(&tick_armed, __ATOMIC_SEQ_CST);
}

static inline void hold(hold_t *h)
{
    h->on = hold_needed();
    if (!h->on)
        return;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, unblock_signals_tick);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &s, &h->old, _NSIG / 8);
}

static inline void release(hold_t *h)
{
    if (h->on) {
        int saved = errno;
        syscall(SYS_rt_sigprocmask, SIG_SETMASK, &h->old, NULL, _NSIG / 8);
        errno = saved;
    }
}

/* A call's own mask with the tick signal added (pselect, ppoll, sigsuspend...). */
static const sigset_t *with_tick(const sigset_t *m, sigset_t *out)
{
    if (m == NULL || !__atomic_load_n(&tick_live, __ATOMIC_RELAXED))
        return m;
    *out = *m;
    sigaddset(out, unblock_signals_tick);
    return out;
}

#define HELD(ret, call) \
    ({                  \
        hold_t h_;      \
        hold(&h_);      \
        ret r_ = (call); \
        release(&h_);   \
        r_;             \
    })

/* The wrapper's whole body: with nothing to hold (no timer armed: always at
 * MPI_THREAD_MULTIPLE, and at the program's level while nothing is in flight)
 * the real call is the wrapper's last, a tail call.  Code after a system call
 * costs a mispredicted return here (7-9 ns, docs/performance.md), and Open
 * MPI's TCP progress polls six times a message: its ping-pong paid 1-2 %. */
#define HELD_RETURN(ret, call)          \
    do {                                \
        if (unblock_likely(!hold_needed())) \
            return call;                \
        return HELD(ret, call);         \
    } while (0)

UNBLOCK_REAL_DECL(int, nanosleep, (const struct timespec *, struct timespec *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(nanosleep)(const struct timespec *req, struct timespec *rem)
{
    HELD_RETURN(int, UNBLOCK_REAL(nanosleep)(req, rem));
}

UNBLOCK_REAL_DECL(int, clock_nanosleep, (clockid_t, int, const struct timespec *, struct timespec *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(clock_nanosleep)(clockid_t c, int flags, const struct timespec *req,
                                                 struct timespec *rem)
{
    HELD_RETURN(int, UNBLOCK_REAL(clock_nanosleep)(c, flags, req, rem));
}

UNBLOCK_REAL_DECL(int, usleep, (useconds_t));
UNBLOCK_EXPORT int UNBLOCK_WRAP(usleep)(useconds_t us)
{
    HELD_RETURN(int, UNBLOCK_REAL(usleep)(us));
}

UNBLOCK_REAL_DECL(unsigned, sleep, (unsigned));
UNBLOCK_EXPORT unsigned UNBLOCK_WRAP(sleep)(unsigned s)
{
    HELD_RETURN(unsigned, UNBLOCK_REAL(sleep)(s));
}

UNBLOCK_REAL_DECL(int, poll, (struct pollfd *, nfds_t, int));
UNBLOCK_EXPORT int UNBLOCK_WRAP(poll)(struct pollfd *fds, nfds_t n, int ms)
{
    HELD_RETURN(int, UNBLOCK_REAL(poll)(fds, n, ms));
}

UNBLOCK_REAL_DECL(int, ppoll, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(ppoll)(struct pollfd *fds, nfds_t n, const struct timespec *t,
                                       const sigset_t *m)
{
    sigset_t s;
    return HELD(int, UNBLOCK_REAL(ppoll)(fds, n, t, with_tick(m, &s)));
}

UNBLOCK_REAL_DECL(int, select, (int, fd_set *, fd_set *, fd_set *, struct timeval *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(select)(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
    HELD_RETURN(int, UNBLOCK_REAL(select)(n, r, w, e, t));
}

UNBLOCK_REAL_DECL(int, pselect, (int, fd_set *, fd_set *, fd_set *, const struct timespec *,
                                 const sigset_t *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(pselect)(int n, fd_set *r, fd_set *w, fd_set *e,
                                         const struct timespec *t, const sigset_t *m)
{
    sigset_t s;
    return HELD(int, UNBLOCK_REAL(pselect)(n, r, w, e, t, with_tick(m, &s)));
}

UNBLOCK_REAL_DECL(int, epoll_wait, (int, struct epoll_event *, int, int));
UNBLOCK_EXPORT int UNBLOCK_WRAP(epoll_wait)(int fd, struct epoll_event *ev, int n, int ms)
{
    HELD_RETURN(int, UNBLOCK_REAL(epoll_wait)(fd, ev, n, ms));
}

UNBLOCK_REAL_DECL(int, epoll_pwait, (int, struct epoll_event *, int, int, const sigset_t *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(epoll_pwait)(int fd, struct epoll_event *ev, int n, int ms,
                                             const sigset_t *m)
{
    sigset_t s;
    return HELD(int, UNBLOCK_REAL(epoll_pwait)(fd, ev, n, ms, with_tick(m, &s)));
}

UNBLOCK_REAL_DECL(int, sem_timedwait, (sem_t *, const struct timespec *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(sem_timedwait)(sem_t *sem, const struct timespec *t)
{
    HELD_RETURN(int, UNBLOCK_REAL(sem_timedwait)(sem, t));
}

UNBLOCK_REAL_DECL(int, sem_wait, (sem_t *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(sem_wait)(sem_t *sem)
{
    HELD_RETURN(int, UNBLOCK_REAL(sem_wait)(sem));
}

UNBLOCK_REAL_DECL(int, pause, (void));
UNBLOCK_EXPORT int UNBLOCK_WRAP(pause)(void)
{
    HELD_RETURN(int, UNBLOCK_REAL(pause)());
}

UNBLOCK_REAL_DECL(int, sigsuspend, (const sigset_t *));
UNBLOCK_EXPORT int UNBLOCK_WRAP(sigsuspend)(const sigset_t *m)
{
    sigset_t s;
    return HELD(int, UNBLOCK_REAL(sigsuspend)(with_tick(m, &s)));
}
