/* engine.c — the completion thread and its polling policy (progress.h).
 *
 * Owns: the thread, its stop flag, the count of threads waiting for an operation,
 * and the linger wish.  Calls: the source the comm module gave it (poll, busy),
 * the page table's counters and futexes (protect/), the options and counters
 * (core/), and the real pthread_create (interpose/).  Never calls MPI itself.
 *
 * Idle, the thread lingers UNBLOCK_LINGER_MS (sleeping 0.5 ms at a time where it
 * has a core the ranks do not use, else in one sleep; woken by the next operation
 * started) so that a program sending message after message
 * does not pay a thread wake-up for each, unless the last operation was a passing
 * site's recheck (linger_wanted); then it sleeps on the futex until an operation
 * is started.  With work and nobody waiting it tests every UNBLOCK_POLL_US,
 * doubling to 1 ms, or staying at UNBLOCK_POLL_US where it has a core the ranks do
 * not use; with a thread waiting it polls, yielding the core between rounds.  The
 * program's own large pending requests count as work too (the source's busy).
 * With a gate (progress.h) it also waits, frozen, while the gate is SHUT, and asks
 * for a freeze each time it finds nothing to do (before its linger). */
#define _GNU_SOURCE
#include "progress/progress.h"
#include "core/log.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static int engine_running;
static pthread_t engine;
static uint32_t engine_stop;
static uint32_t waiters; /* threads waiting for an op: the engine polls */
static const unblock_progress_source_t *source;
static int linger_wanted = 1;
uint32_t unblock_engine_gate; /* UNBLOCK_GATE_OPEN without a gate */
static const unblock_progress_gate_t *gate;
static int gate_pins, gate_lock;

int unblock_spare_core_of(int cpus, long online, long local)
{
    /* Bound (fewer CPUs than online): the CPUs are this process's own; else
     * they are shared by the ranks of the node. */
    return cpus < online ? cpus > 1 : cpus > (local > 0 ? local : 1);
}

static int spare_cpus; /* what the decision saw: CPUs in the affinity mask */

int unblock_spare_core(void)
{
    static int known = -1;
    int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (v >= 0)
        return v;
    cpu_set_t set;
    int cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
    /* The ranks on this node, as mpirun, Hydra or srun said (core/job.h). */
    int local = unblock_g.job.local_size;
    v = unblock_spare_core_of(cpus, sysconf(_SC_NPROCESSORS_ONLN), local > 0 ? local : 1);
    __atomic_store_n(&spare_cpus, cpus, __ATOMIC_RELAXED);
    __atomic_store_n(&known, v, __ATOMIC_RELAXED);
    return v;
}

int unblock_spare_core_cpus(void)
{
    return __atomic_load_n(&spare_cpus, __ATOMIC_RELAXED);
}

void unblock_progress_linger(int wanted)
{
    if (__atomic_load_n(&linger_wanted, __ATOMIC_RELAXED) != wanted)
        __atomic_store_n(&linger_wanted, wanted, __ATOMIC_RELAXED);
}

int unblock_progress_running(void)
{
    return engine_running;
}

int unblock_progress_waiters(void)
{
    return (int)__atomic_load_n(&waiters, __ATOMIC_SEQ_CST);
}

/* The completion thread (the policy is described at the top of this file). */
static void *engine_main(void *arg)
{
    (void)arg;
    unblock_tls.mpi_depth = 1; /* its POSIX calls are the runtime's */
    unblock_tls.runtime = 1;
    const long poll = (long)unblock_opt.poll_us * 1000L, linger = (long)unblock_opt.linger_ms * 1000000L;
    const int own = unblock_opt.own_progress > 0;
    const long own_poll = (long)unblock_opt.own_poll_us * 1000L;
    long backoff = poll, linger_until = 0;
    const int spare = unblock_spare_core();
    while (!__atomic_load_n(&engine_stop, __ATOMIC_ACQUIRE)) {
        uint32_t g = gate ? __atomic_load_n(&unblock_engine_gate, __ATOMIC_SEQ_CST)
                          : UNBLOCK_GATE_OPEN;
        if (g == UNBLOCK_GATE_SHUT) {
            /* Frozen: no MPI until a thaw (or MPI_Finalize's stop) wakes it. */
            unblock_futex_wait(&unblock_engine_gate, UNBLOCK_GATE_SHUT, 0);
            continue;
        }
        if (__atomic_load_n(&unblock_ops_active, __ATOMIC_SEQ_CST) == 0 &&
            !(own && source->busy())) {
            if (g == UNBLOCK_GATE_OPEN && gate) {
                /* Nothing to do: from here until it finds work, no MPI, so the
                 * program's next MPI call may freeze it (the linger too: a
                 * program whose conversions were all at its start must not pay
                 * for the thread's safety for UNBLOCK_LINGER_MS more). */
                __atomic_store_n(&unblock_engine_gate, UNBLOCK_GATE_ASKED, __ATOMIC_SEQ_CST);
                gate->ask();
            }
            long t = (long)unblock_now_ns();
            if (linger_until == 0)
                linger_until = t + (__atomic_load_n(&linger_wanted, __ATOMIC_RELAXED) ? linger : 0);
            if (t < linger_until) {
                /* Woken by the next operation started (a receive the program
                 * touches at once would otherwise wait out the 0.5 ms).  In
                 * slices of 0.5 ms that notice the program's own requests;
                 * without a spare core in one sleep: each slice's wake-up took
                 * the program's core (sor2d 256^2 with a checkpoint every 100
                 * iterations: its computing 1.10x plain after each converted
                 * gather, 1.02x without the linger). */
                __atomic_store_n(&unblock_engine_sleeping, 1, __ATOMIC_SEQ_CST);
                if (__atomic_load_n(&unblock_ops_active, __ATOMIC_SEQ_CST) == 0 &&
                    !(own && source->busy()))
                    unblock_futex_wait(&unblock_ops_active, 0,
                                       spare ? 500000L : linger_until - t);
                __atomic_store_n(&unblock_engine_sleeping, 0, __ATOMIC_SEQ_CST);
                continue;
            }
            __atomic_store_n(&unblock_engine_sleeping, 1, __ATOMIC_SEQ_CST);
            __atomic_store_n(&unblock_engine_deep, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&unblock_ops_active, __ATOMIC_SEQ_CST) == 0 &&
                !(own && source->busy()) && !__atomic_load_n(&engine_stop, __ATOMIC_ACQUIRE))
                unblock_futex_wait(&unblock_ops_active, 0, own ? 100000000L : 0);
            __atomic_store_n(&unblock_engine_deep, 0, __ATOMIC_SEQ_CST);
            __atomic_store_n(&unblock_engine_sleeping, 0, __ATOMIC_SEQ_CST);
            backoff = poll;
            continue;
        }
        if (g == UNBLOCK_GATE_ASKED) {
            /* Work came (a thaw has made the gate OPEN already, before publishing
             * it): not frozen meanwhile, open again; frozen, the loop's top waits. */
            uint32_t asked = UNBLOCK_GATE_ASKED;
            if (!__atomic_compare_exchange_n(&unblock_engine_gate, &asked, UNBLOCK_GATE_OPEN, 0,
                                             __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
                asked == UNBLOCK_GATE_SHUT)
                continue;
        }
        linger_until = 0;
        uint64_t t0 = unblock_now_ns();
        int fresh = 0, done = source->poll(&fresh);
        unblock_counter_add(&unblock_stats.engine_ns, unblock_now_ns() - t0);
        unblock_counter_add(&unblock_stats.engine_tests, 1);
        if (done) {
            unblock_counter_add(&unblock_stats.engine_completed, (uint64_t)done);
            backoff = poll;
        } else if (__atomic_load_n(&waiters, __ATOMIC_ACQUIRE) == 0) {
            /* Nobody waits: sleep a little (a spinning thread makes every
             * protection change dearer), waking early if someone starts waiting. */
            unblock_futex_wait(&waiters, 0, backoff);
            /* With a core of its own (PIOMan's rule) it keeps polling at the first
             * pause: it takes nothing from the program. */
            long cap = spare ? poll : fresh ? own_poll : 1000000L;
            backoff = backoff * 2 < cap ? backoff * 2 : cap;
        } else {
            /* Someone waits: poll again at once, but let the threads that share
             * this core run first (the peer's or the program's, whose progress
             * the transfer may need: with more threads than cores, a poll that
             * never yields starved them for minutes). */
            syscall(SYS_sched_yield);
        }
    }
    return NULL;
}

void unblock_progress_wait(unblock_op_t *op)
{
    __atomic_add_fetch(&waiters, 1, __ATOMIC_SEQ_CST);
    unblock_futex_wake(&waiters);
    for (;;) {
        uint32_t s = __atomic_load_n(&op->state, __ATOMIC_SEQ_CST);
        if (s != UNBLOCK_OP_ACTIVE && s != UNBLOCK_OP_TESTING && s != UNBLOCK_OP_CHAINED)
            break;
        unblock_futex_wait(&op->state, s, 0);
    }
    __atomic_sub_fetch(&waiters, 1, __ATOMIC_SEQ_CST);
}

/* ---- the gate (progress.h) ---- */

void unblock_progress_gate(const unblock_progress_gate_t *g)
{
    gate = g;
    __atomic_store_n(&unblock_engine_gate, UNBLOCK_GATE_SHUT, __ATOMIC_SEQ_CST);
}

/* Under gate_lock: thread safety on, then the engine let go.  An engine that
 * asked for a freeze (ASKED: thread safety still on) is told it will not come:
 * else the program's next MPI call could freeze it with this work in flight. */
static void thaw_locked(void)
{
    uint32_t asked = UNBLOCK_GATE_ASKED;
    if (__atomic_compare_exchange_n(&unblock_engine_gate, &asked, UNBLOCK_GATE_OPEN, 0,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) ||
        asked != UNBLOCK_GATE_SHUT)
        return;
    gate->set(1);
    __atomic_store_n(&unblock_engine_gate, UNBLOCK_GATE_OPEN, __ATOMIC_SEQ_CST);
    unblock_futex_wake(&unblock_engine_gate);
    unblock_counter_add(&unblock_stats.engine_thaws, 1);
}

void unblock_progress_thaw_slow(void)
{
    if (!gate)
        return;
    unblock_spin_lock(&gate_lock);
    thaw_locked();
    unblock_spin_unlock(&gate_lock);
}

int unblock_progress_freeze(void)
{
    if (!gate)
        return 0;
    int frozen = 0;
    unblock_spin_lock(&gate_lock);
    uint32_t asked = UNBLOCK_GATE_ASKED;
    /* The engine, between its ask and its next CAS, calls no MPI; the CAS keeps it
     * from reopening until a thaw.  Never with work for it: an operation made
     * ACTIVE or a request of the program's to drive (both published by this
     * thread, the only one of the program that calls MPI at MPI_THREAD_SINGLE,
     * so none appears between this test and the CAS). */
    if (gate_pins == 0 && __atomic_load_n(&unblock_ops_active, __ATOMIC_SEQ_CST) == 0 &&
        !(unblock_opt.own_progress > 0 && source != NULL && source->busy()) &&
        __atomic_compare_exchange_n(&unblock_engine_gate, &asked, UNBLOCK_GATE_SHUT, 0,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        gate->set(0);
        unblock_counter_add(&unblock_stats.engine_freezes, 1);
        frozen = 1;
    }
    unblock_spin_unlock(&gate_lock);
    return frozen;
}

void unblock_progress_pin(int delta)
{
    if (!gate)
        return;
    unblock_spin_lock(&gate_lock);
    gate_pins += delta;
    if (delta > 0) {
        thaw_locked();
    } else if (gate_pins == 0) {
        uint32_t g = __atomic_load_n(&unblock_engine_gate, __ATOMIC_SEQ_CST);
        if (g == UNBLOCK_GATE_ASKED)
            gate->ask(); /* a freeze refused for the pin: the next MPI call tries again */
        else if (g == UNBLOCK_GATE_OPEN && __atomic_load_n(&unblock_engine_sleeping,
                                                           __ATOMIC_SEQ_CST))
            /* The pin's thaw opened it while the engine slept with nothing to
             * do: woken, it asks again (only it knows it is outside MPI).
             * Before, the gate stayed open after the first MPI-IO file of several
             * ranks closed until the engine next had work. */
            unblock_futex_wake(&unblock_ops_active);
    }
    unblock_spin_unlock(&gate_lock);
}

UNBLOCK_REAL_DECL(int, pthread_create,
                  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));

int unblock_progress_start(const unblock_progress_source_t *src)
{
    if (engine_running)
        return 1;
    source = src;
    unblock_real_pthread_create_t real_create = UNBLOCK_REAL(pthread_create);
    __atomic_store_n(&engine_stop, 0, __ATOMIC_RELEASE);
    if (unblock_runtime_thread_create(real_create, &engine, NULL, engine_main, NULL) == 0) {
        pthread_setname_np(engine, "unblock-engine");
        engine_running = 1;
        unblock_counter_add(&unblock_stats.engine_started, 1);
    } else {
        unblock_warn("cannot start the completion thread; receives run blocking");
    }
    return engine_running;
}

void unblock_progress_stop(void)
{
    if (!engine_running)
        return;
    __atomic_store_n(&engine_stop, 1, __ATOMIC_RELEASE);
    /* The engine may sleep on unblock_ops_active == 0 or back off on `waiters`:
     * bump the first (so its futex value no longer matches) and wake both. */
    __atomic_add_fetch(&unblock_ops_active, 1, __ATOMIC_ACQ_REL);
    unblock_futex_wake(&unblock_ops_active);
    unblock_futex_wake(&waiters);
    unblock_futex_wake(&unblock_engine_gate); /* frozen: it sees the stop */
    pthread_join(engine, NULL);
    __atomic_sub_fetch(&unblock_ops_active, 1, __ATOMIC_ACQ_REL);
    engine_running = 0;
}
