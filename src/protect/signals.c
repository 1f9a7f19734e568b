/* signals.c — the SIGSEGV handler, and keeping the program's own handlers working.
 *
 * Our handler is installed at start-up, before main, on an alternate stack.  It
 * takes only faults on pages an in-flight operation owns (SEGV_ACCERR there): it
 * waits for those operations, finishes them and returns, so the access is retried.
 * Every other fault goes to the handler the program (or gfortran's runtime,
 * Python's faulthandler, UCX, Open MPI) installed, which we keep as "previous":
 * sigaction, signal, sigset, bsd_signal, sysv_signal and __sysv_signal are
 * interposed for SIGSEGV so a later handler is recorded instead of replacing ours,
 * and a query reports it back as installed.  With no previous handler the default
 * action is restored and the access retried, so the process dies of SIGSEGV as it
 * would have.  A SIGSEGV that was sent (kill, raise) is never ours: it gets the
 * program's disposition, handler, ignored or default (sent again, to die of it).
 * As bdwgc does, a fault on a page whose owner finished a moment earlier is
 * retried once before it is treated as not ours.
 * The program's handlers of the other signals that are not faults go through a
 * trampoline that holds them while the thread holds a descriptor lock of
 * fileio's (below: hold_signal). */
#define _GNU_SOURCE
#include "core/core.h"
#include "core/module.h"
#include "core/log.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"
#include "protect/protect.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define ALT_STACK_SIZE (64 * 1024)

static struct sigaction prev;  /* what the program believes is installed */
int unblock_signals_tick;      /* progress/tick.c's signal, masked in the program's handlers */
static int installed;
static int sig_lock;
static UNBLOCK_TLS uintptr_t retried_addr; /* a fault retried as possibly stale ... */
static UNBLOCK_TLS uint64_t retried_gen;    /* ... the protection changes then ... */
static UNBLOCK_TLS unsigned retried_n;      /* ... and how often in a row */
static UNBLOCK_TLS void *alt_stack;
/* A thread's signals held (below: hold_signal), in order. */
#define HELD_MAX 16
typedef struct {
    int n;
    int sig[HELD_MAX];
    siginfo_t info[HELD_MAX];
} held_t;

UNBLOCK_REAL_DECL(int, sigaction, (int, const struct sigaction *, struct sigaction *));

static void slock(void)
{
    while (__atomic_exchange_n(&sig_lock, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
}

static void sunlock(void)
{
    __atomic_store_n(&sig_lock, 0, __ATOMIC_RELEASE);
}

/* Whether the signal was sent (kill, raise, sigqueue, tgkill: si_code <= 0)
 * rather than raised by the kernel for a fault. */
static inline int sent(const siginfo_t *si)
{
    return si->si_code <= 0;
}

uintptr_t unblock_signal_context_pc(const void *uc)
{
    const ucontext_t *u = uc;
#if defined(__x86_64__)
    return (uintptr_t)u->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uintptr_t)u->uc_mcontext.pc;
#else
    (void)u;
    return 0; /* unknown: never the program's */
#endif
}

/* Hands a signal that is not ours to the previous handler, as the kernel would
 * have: a fault, or a SIGSEGV somebody sent. */
static void chain(int sig, siginfo_t *si, void *uc)
{
    slock();
    struct sigaction p = prev;
    if (p.sa_flags & SA_RESETHAND) {
        memset(&prev, 0, sizeof(prev));
        prev.sa_handler = SIG_DFL;
    }
    sunlock();
    if (!(p.sa_flags & SA_SIGINFO) && p.sa_handler == SIG_IGN && sent(si))
        return; /* ignored, as the kernel would have: only a fault cannot be */
    if (!(p.sa_flags & SA_SIGINFO) && (p.sa_handler == SIG_DFL || p.sa_handler == SIG_IGN)) {
        /* Default action: restore it and return; the access faults again and the
         * kernel ends the process (a core dump where enabled), as without us.  A
         * sent signal does not come again by itself: it is sent again, to this
         * thread, and arrives as soon as the handler returns (SA_NODEFER: it is
         * not blocked here).  Written data still in write-behind blocks goes to
         * its files first. */
        unblock_modules_fatal_drain();
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        UNBLOCK_REAL(sigaction)(sig, &dfl, NULL);
        installed = 0;
        if (sent(si))
            syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), sig);
        return;
    }
    /* The kernel would block the handler's mask (and the signal itself unless
     * SA_NODEFER) while it runs; if it longjmps out, the mask stays as it set. */
    sigset_t mask = p.sa_mask, old;
    if (!(p.sa_flags & SA_NODEFER))
        sigaddset(&mask, sig);
    if (unblock_signals_tick) /* no tick inside the program's handler (tick.c) */
        sigaddset(&mask, unblock_signals_tick);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, &old, _NSIG / 8);
    if (p.sa_flags & SA_SIGINFO)
        p.sa_sigaction(sig, si, uc);
    else
        p.sa_handler(sig);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    if (si->si_code == SEGV_ACCERR) {
        uintptr_t addr = (uintptr_t)si->si_addr;
        /* No tick polls in here; without a completion thread, whether this
         * handler may call MPI depends on where the fault is (tick.c). */
        unblock_tls.in_signal++;
        uintptr_t fault_pc = unblock_tls.fault_pc;
        unblock_tls.fault_pc = unblock_signal_context_pc(uc);
        int mine = unblock_protect_on_fault(addr);
        unblock_tls.fault_pc = fault_pc;
        unblock_tls.in_signal--;
        if (mine) {
            retried_addr = 0;
            errno = saved;
            return;
        }
        /* An owner may have opened the page just now (the completion thread
         * finishes operations while the program runs): retry once, and again
         * only if protection changed since (a retry that succeeded leaves
         * retried_addr set, so the address alone would call a later, equally
         * benign race at the same place a crash).  At most 4 in a row at one
         * address, so a fault that is not ours reaches its handler. */
        uint64_t gen = __atomic_load_n(&unblock_protect_generation, __ATOMIC_ACQUIRE);
        if (retried_addr != addr || (retried_gen != gen && retried_n < 4)) {
            retried_n = retried_addr == addr ? retried_n + 1 : 1;
            retried_addr = addr;
            retried_gen = gen;
            errno = saved;
            return;
        }
    }
    if (unblock_tls.copy_env && !sent(si)) {
        /* Inside unblock_copy_from_program: the program's buffer is bad. */
        retried_addr = 0;
        siglongjmp(*(sigjmp_buf *)unblock_tls.copy_env, 1);
    }
    retried_addr = 0;
    chain(sig, si, uc);
    errno = saved;
}

void unblock_protect_thread_init(void)
{
    stack_t cur;
    if (alt_stack || syscall(SYS_sigaltstack, NULL, &cur) != 0 || !(cur.ss_flags & SS_DISABLE))
        return;
    void *s = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (s == MAP_FAILED)
        return;
    stack_t ss = { .ss_sp = s, .ss_size = ALT_STACK_SIZE, .ss_flags = 0 };
    if (syscall(SYS_sigaltstack, &ss, NULL) != 0) {
        munmap(s, ALT_STACK_SIZE);
        return;
    }
    alt_stack = s;
}

/* Called when a thread we started an alternate stack for ends (threads.c). */
void unblock_protect_thread_fini(void)
{
    held_t *h = unblock_tls.sig_held;
    if (h != NULL && unblock_tls.wb_locks == 0) { /* (nothing is held outside a lock) */
        unblock_tls.sig_held = NULL;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        munmap(h, sizeof(held_t));
    }
    stack_t cur;
    if (!alt_stack || syscall(SYS_sigaltstack, NULL, &cur) != 0 || (cur.ss_flags & SS_ONSTACK))
        return; /* (a handler on it calls pthread_exit: the stack stays) */
    stack_t ss = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
    syscall(SYS_sigaltstack, &ss, NULL);
    munmap(alt_stack, ALT_STACK_SIZE);
    alt_stack = NULL;
}

int unblock_copy_from_program(void *dst, const void *src, size_t n)
{
    sigjmp_buf env;
    /* No mask to save: the handler runs with SA_NODEFER, so a jump out of it
     * leaves the signal mask as it was. */
    if (sigsetjmp(env, 0)) {
        unblock_tls.copy_env = NULL;
        return EFAULT;
    }
    unblock_tls.copy_env = &env;
    memcpy(dst, src, n);
    __asm__ volatile("" ::: "memory"); /* the copy happens inside the window */
    unblock_tls.copy_env = NULL;
    return 0;
}

int unblock_protect_init(void)
{
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
        return __atomic_load_n(&installed, __ATOMIC_ACQUIRE);
    unblock_page_size = (size_t)sysconf(_SC_PAGESIZE);
    unblock_protect_hook_memory(); /* freed memory first waits for its owners */
    if (unblock_opt.protect == UNBLOCK_PROTECT_UFFD)
        unblock_warn("UNBLOCK_PROTECT=uffd is not implemented yet; using mprotect");
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    slock();
    if (UNBLOCK_REAL(sigaction)(SIGSEGV, &sa, &prev) == 0)
        installed = 1;
    sunlock();
    unblock_protect_thread_init();
    return installed;
}

/* ---- the program's handlers held while this thread holds a descriptor lock ----
 * A handler of the program's may make file calls (write, fsync, close, _exit:
 * all async-signal-safe).  One that comes while the code it interrupted holds a
 * descriptor lock of fileio's (a merged write half done) would wait for that
 * lock for ever, or leave with the block half done (its _exit, or our SIGTERM
 * drain, passed the locked descriptor by, and the block was lost).  So every
 * handler the program installs for a signal that is not a fault is called
 * through held_trampoline: while the thread holds such a lock (unblock_tls.
 * wb_locks) the signal is kept, with its siginfo, and sent again to the thread
 * (rt_tgsigqueueinfo, the same siginfo) when the thread lets go of its last lock
 * (unblock_signals_release), where the handler runs as if the signal had come
 * just after our call.  A one-shot handler (SA_RESETHAND: sysv_signal's, or
 * sigaction's) goes through the trampoline too, installed without the flag:
 * the trampoline does the reset itself when it calls the handler (so a held
 * one is reset when it runs, and one that comes twice while held runs once, as
 * a standard signal pending twice is one).  Handlers installed by the raw
 * system call or before unblock was loaded keep fileio's kept writes
 * (drain.c, wb_defer). */
static void *held_fn[_NSIG]; /* the program's handler of a trampolined signal, or NULL */
static int held_flags[_NSIG]; /* ... and its flags */

static int holdable(int sig)
{
    switch (sig) {
    case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP: case SIGSYS:
    case SIGKILL: case SIGSTOP:
        return 0; /* (faults run at once: the instruction cannot go on) */
    default:
        return sig > 0 && sig < _NSIG && sig != unblock_signals_tick;
    }
}

/* Keeps signal sig with its siginfo until this thread lets go of its last
 * descriptor lock: 1, or 0 when it cannot (the handler then runs now). */
static int hold_signal(int sig, const siginfo_t *si)
{
    held_t *h = unblock_tls.sig_held;
    if (h == NULL) { /* (a handler may not allocate: memory of the thread's own) */
        void *m = (void *)syscall(SYS_mmap, NULL, sizeof(held_t), PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return 0;
        h = m;
        unblock_tls.sig_held = h;
    }
    int n = h->n;
    if (sig < SIGRTMIN)
        for (int i = 0; i < n; i++)
            if (h->sig[i] == sig)
                return 1; /* a standard signal pending twice is one, as in the kernel */
    if (n == HELD_MAX)
        return 0; /* (the caller runs it now: a flood of real-time signals) */
    h->info[n] = *si;
    h->sig[n] = sig;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    h->n = n + 1;
    unblock_tls.sig_pending = 1;
    unblock_counter_add(&unblock_stats.io_signals_held, 1);
    return 1;
}

void unblock_signals_release(void)
{
    held_t *h = unblock_tls.sig_held;
    unblock_tls.sig_pending = 0;
    if (h == NULL)
        return;
    int e = errno;
    pid_t pid = (pid_t)syscall(SYS_getpid), tid = (pid_t)syscall(SYS_gettid);
    /* Taken one at a time from the front: a handler run by one of these may
     * make calls that hold more (appended behind). */
    while (h->n > 0) {
        int sig = h->sig[0];
        siginfo_t info = h->info[0];
        for (int i = 1; i < h->n; i++)
            h->sig[i - 1] = h->sig[i], h->info[i - 1] = h->info[i];
        h->n--;
        unblock_tls.sig_releasing = 1;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &info); /* (delivered on return) */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        unblock_tls.sig_releasing = 0;
    }
    errno = e;
}

static void held_trampoline(int sig, siginfo_t *si, void *uc)
{
    if (unblock_unlikely(__atomic_load_n(&unblock_tls.wb_locks, __ATOMIC_RELAXED) != 0) &&
        hold_signal(sig, si))
        return;
    int flags = __atomic_load_n(&held_flags[sig], __ATOMIC_ACQUIRE);
    void *fn;
    if (unblock_unlikely(flags & SA_RESETHAND)) {
        /* One-shot: the first delivery takes the handler and resets the
         * disposition, before the handler runs (one that installs itself
         * again, the System V way, must not be undone by us). */
        fn = __atomic_exchange_n(&held_fn[sig], NULL, __ATOMIC_ACQ_REL);
        if (fn == NULL) {
            /* Another thread took it and is resetting: once that is done,
             * this one gets the default action, as the kernel would give it. */
            syscall(SYS_rt_tgsigqueueinfo, (pid_t)syscall(SYS_getpid),
                    (pid_t)syscall(SYS_gettid), sig, si);
            return;
        }
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        UNBLOCK_REAL(sigaction)(sig, &dfl, NULL);
    } else {
        fn = __atomic_load_n(&held_fn[sig], __ATOMIC_ACQUIRE);
    }
    if (fn == NULL || fn == (void *)SIG_DFL || fn == (void *)SIG_IGN)
        return; /* (changed meanwhile: the real disposition is the new one) */
    if (flags & SA_SIGINFO)
        ((void (*)(int, siginfo_t *, void *))fn)(sig, si, uc);
    else
        ((void (*)(int))fn)(sig);
}

/* The action to install for the program's act (NULL: a query): its handler
 * through the trampoline where it may be held (into *out), else act itself. */
static const struct sigaction *held_install(int sig, const struct sigaction *act,
                                            struct sigaction *out)
{
    if (act == NULL || !holdable(sig))
        return act;
    void *fn = (act->sa_flags & SA_SIGINFO) ? (void *)act->sa_sigaction : (void *)act->sa_handler;
    if (fn == (void *)held_trampoline) /* (read back by the raw system call): as it is */
        return act;
    if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN) {
        __atomic_store_n(&held_fn[sig], NULL, __ATOMIC_RELEASE);
        return act;
    }
    __atomic_store_n(&held_fn[sig], fn, __ATOMIC_RELEASE);
    __atomic_store_n(&held_flags[sig], act->sa_flags, __ATOMIC_RELEASE);
    if (out != act)
        *out = *act;
    out->sa_sigaction = held_trampoline;
    out->sa_flags = (out->sa_flags | SA_SIGINFO) & ~SA_RESETHAND; /* (the trampoline resets) */
    return out;
}

/* What the program sees of an action read back: its own handler, not ours. */
static void held_shown(int sig, struct sigaction *old, void *was_fn, int was_flags)
{
    if (old == NULL || !(old->sa_flags & SA_SIGINFO) || old->sa_sigaction != held_trampoline)
        return;
    old->sa_flags = was_flags;
    if (was_flags & SA_SIGINFO)
        old->sa_sigaction = (void (*)(int, siginfo_t *, void *))was_fn;
    else
        old->sa_handler = (sighandler_t)was_fn;
    (void)sig;
}

/* ---- the program's view of SIGSEGV ---- */

static inline int ours(int sig)
{
    return sig == SIGSEGV && __atomic_load_n(&installed, __ATOMIC_ACQUIRE);
}

/* A handler of the program's, with the tick signal added to its mask (tick.c:
 * a tick never interrupts it). */
static const struct sigaction *tick_masked(int sig, const struct sigaction *act,
                                           struct sigaction *out)
{
    int t = unblock_signals_tick;
    if (act == NULL || t == 0 || sig == t ||
        (!(act->sa_flags & SA_SIGINFO) && (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN)))
        return act;
    *out = *act;
    sigaddset(&out->sa_mask, t);
    return out;
}

void unblock_signals_mask_tick(void)
{
    int t = unblock_signals_tick;
    for (int s = 1; s < _NSIG && t; s++) {
        struct sigaction cur, m;
        if (s == SIGKILL || s == SIGSTOP || s == t || ours(s) ||
            UNBLOCK_REAL(sigaction)(s, NULL, &cur) != 0)
            continue;
        if (tick_masked(s, &cur, &m) == &m)
            UNBLOCK_REAL(sigaction)(s, &m, NULL);
    }
}

UNBLOCK_EXPORT int UNBLOCK_WRAP(sigaction)(int sig, const struct sigaction *act,
                                           struct sigaction *old)
{
    if (!ours(sig)) {
        struct sigaction m;
        int valid = sig > 0 && sig < _NSIG;
        void *was_fn = valid ? __atomic_load_n(&held_fn[sig], __ATOMIC_ACQUIRE) : NULL;
        int was_flags = valid ? __atomic_load_n(&held_flags[sig], __ATOMIC_RELAXED) : 0;
        const struct sigaction *a = held_install(sig, tick_masked(sig, act, &m), &m);
        int rc = UNBLOCK_REAL(sigaction)(sig, a, old);
        if (rc != 0 && valid && act != NULL) { /* (refused: as it was) */
            __atomic_store_n(&held_flags[sig], was_flags, __ATOMIC_RELAXED);
            __atomic_store_n(&held_fn[sig], was_fn, __ATOMIC_RELEASE);
        }
        if (rc == 0 && valid)
            held_shown(sig, old, was_fn, was_flags);
        if (rc == 0 && old && unblock_signals_tick && sig != unblock_signals_tick)
            sigdelset(&old->sa_mask, unblock_signals_tick); /* as the program set it */
        return rc;
    }
    slock();
    if (old)
        *old = prev;
    if (act)
        prev = *act;
    sunlock();
    return 0;
}

/* signal(), bsd_signal(), sigset(), __sysv_signal(): the same, with the flags each
 * one implies (glibc: BSD semantics for signal, one-shot for System V). */
static sighandler_t set_simple(int sig, sighandler_t h, int flags)
{
    slock();
    sighandler_t old = (prev.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)prev.sa_sigaction
                                                    : prev.sa_handler;
    memset(&prev, 0, sizeof(prev));
    prev.sa_handler = h;
    prev.sa_flags = flags;
    sigemptyset(&prev.sa_mask);
    sunlock();
    return old;
}

UNBLOCK_REAL_DECL(sighandler_t, signal, (int, sighandler_t));
/* signal(), bsd_signal() and the System V forms for another signal once the
 * tick exists or where the handler may be held: what glibc does (the flags
 * each implies), through our sigaction, so that the tick is masked in the
 * handler and the handler goes through the trampoline. */
static sighandler_t simple_masked(int sig, sighandler_t h, int flags)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = h;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (UNBLOCK_WRAP(sigaction)(sig, &sa, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction : old.sa_handler;
}

UNBLOCK_EXPORT sighandler_t UNBLOCK_WRAP(signal)(int sig, sighandler_t h)
{
    if (!ours(sig) && (unblock_signals_tick || holdable(sig)) && h != SIG_ERR)
        return simple_masked(sig, h, SA_RESTART);
    if (!ours(sig))
        return UNBLOCK_REAL(signal)(sig, h);
    if (h == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    return set_simple(sig, h, SA_RESTART);
}

UNBLOCK_REAL_DECL(sighandler_t, bsd_signal, (int, sighandler_t));
UNBLOCK_EXPORT sighandler_t UNBLOCK_WRAP(bsd_signal)(int sig, sighandler_t h)
{
    if (!ours(sig) && (unblock_signals_tick || holdable(sig)) && h != SIG_ERR)
        return simple_masked(sig, h, SA_RESTART);
    if (!ours(sig))
        return UNBLOCK_REAL(bsd_signal)(sig, h);
    return set_simple(sig, h, SA_RESTART);
}

static int simple_routed(int sig, sighandler_t h)
{
    return !ours(sig) && (unblock_signals_tick || holdable(sig)) && h != SIG_ERR &&
           h != SIG_HOLD;
}

UNBLOCK_REAL_DECL(sighandler_t, __sysv_signal, (int, sighandler_t));
UNBLOCK_EXPORT sighandler_t UNBLOCK_WRAP(__sysv_signal)(int sig, sighandler_t h)
{
    if (simple_routed(sig, h))
        return simple_masked(sig, h, SA_RESETHAND | SA_NODEFER);
    if (!ours(sig))
        return UNBLOCK_REAL(__sysv_signal)(sig, h);
    return set_simple(sig, h, SA_RESETHAND | SA_NODEFER);
}

/* The public name of __sysv_signal (a weak alias in glibc: a program that calls
 * it binds to this name, not to the one above). */
UNBLOCK_REAL_DECL(sighandler_t, sysv_signal, (int, sighandler_t));
UNBLOCK_EXPORT sighandler_t UNBLOCK_WRAP(sysv_signal)(int sig, sighandler_t h)
{
    if (simple_routed(sig, h))
        return simple_masked(sig, h, SA_RESETHAND | SA_NODEFER);
    if (!ours(sig))
        return UNBLOCK_REAL(sysv_signal)(sig, h);
    return set_simple(sig, h, SA_RESETHAND | SA_NODEFER);
}

UNBLOCK_REAL_DECL(sighandler_t, sigset, (int, sighandler_t));
UNBLOCK_EXPORT sighandler_t UNBLOCK_WRAP(sigset)(int sig, sighandler_t h)
{
    if (simple_routed(sig, h)) { /* (glibc's: no flags, then the signal unblocked) */
        sighandler_t old = simple_masked(sig, h, 0);
        sigset_t one, was;
        sigemptyset(&one);
        sigaddset(&one, sig);
        if (old == SIG_ERR || sigprocmask(SIG_UNBLOCK, &one, &was) != 0)
            return SIG_ERR;
        return sigismember(&was, sig) ? SIG_HOLD : old;
    }
    if (!ours(sig) || h == SIG_HOLD)
        return UNBLOCK_REAL(sigset)(sig, h);
    return set_simple(sig, h, 0);
}
