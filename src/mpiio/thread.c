/* thread.c — MPI-IO write-behind's I/O thread: its life (started at the first
 * file of two stages, parked between files, ended after LINGER_S without
 * one or at MPI_Finalize), its loop, when it sleeps, whether it may call MPI
 * (the pin of MPI's thread safety: comm/gate.c), and the idle stage 1 it
 * notices (docs/mpiio.md).  What it does in each round for the owners'
 * messages is owner.c's (mio_owner_round, mio_coll_ready).
 *
 * It never spins: after something happened it looks again in 50 us, then waits
 * twice as long each time nothing did, up to 2 ms, on a condition variable the
 * program's thread signals when it queues records or waits for owners (a
 * thread calling MPI_Iprobe in a loop would take a core from ranks that share
 * two cores among four); with nothing to watch it sleeps (deep_ns). */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "core/log.h"
#include "core/options.h"
#include "core/profile.h"
#include "interpose/interpose.h"
#include "progress/progress.h"
#include "protect/protect.h" /* (unblock_futex_wait, unblock_futex_wake) */

#include <errno.h>
#include <stdint.h>
#include <time.h>

#define POLL_MIN_NS 50000L
#define POLL_MAX_NS 2000000L
/* Stage 1 unchanged this long while the thread that writes it ran at least half
 * of it (the program computes between bursts of writes, as BT-IO between its
 * steps): its pieces go to their owners at the program's next call on the file,
 * so that blocks fill and are written while it goes on.  The program's CPU
 * time outside MPI calls, not the clock alone: a rank descheduled on a loaded
 * machine, asleep, or waiting in a collective call for such a rank is not
 * computing (a first form on the clock alone shipped there, and then HDF5's
 * reads of a rank's own writes were no longer served).  Each look that finds
 * the thread inside an MPI call starts the window again. */
#define MIO_IDLE_NS 5000000ull
/* With nothing to watch (no file it calls MPI for, nothing queued or being
 * flushed, no byte held in any file's stages) the thread sleeps this long, or
 * until a poke: an attach, a pin (pin_set), a write taken into an empty
 * stage 1 (mio_note_written: mio_thread_deep), a message queued or a flush.
 * It polled at up to POLL_MAX_NS all the while: 490 wake-ups a rank in a
 * ping-pong of 0.3 s with a quiet file open (bench/pingpong --file), each on
 * the rank's own core (Open MPI shm, 16-256 B: 1.03-1.12 of plain; 0.97-1.03
 * without them, docs/performance.md).  The bound is only for a write whose
 * look at mio_thread_deep came before the thread set it (no fence on that
 * path): its stage 1 is looked at that much later.  A wake that comes before
 * the thread sleeps is not lost (a futex on mio_thread_deep, not the condition
 * variable: the wake takes no lock). */
static long deep_ns(void) /* (UNBLOCK_MPIIO_SLEEP_MS: 100 by default, 1 to 1 h) */
{
    return (long)unblock_opt.mpiio_sleep_ms * 1000000L;
}

static pthread_t thr;
static int thr_running, thr_stop, attached, thr_joinable;
static int attached_mpi; /* of them, files of several ranks (not solo) */
static int pinned_mpi;   /* of those, files the thread calls MPI for (not quiet:
                            mio_thread_mpi); MPI's thread safety pinned while any */
static pthread_cond_t wake;
static int conds_ready;
/* 1 while the thread sleeps for deep_ns() (mpiio.h); the futex word it sleeps
 * on, without mio_lock: a wake needs no lock (the program's thread may hold
 * mio_lock where it takes a write) and is not lost if it comes before the
 * thread sleeps. */
uint32_t mio_thread_deep;

/* Wakes the thread from its deep sleep (once per sleep). */
void mio_thread_undeep(void)
{
    if (__atomic_exchange_n(&mio_thread_deep, 0, __ATOMIC_ACQ_REL))
        unblock_futex_wake(&mio_thread_deep);
}

/* Wakes the thread from its polls, its park and its deep sleep. */
static void wake_thread(void)
{
    mio_thread_undeep();
    if (conds_ready)
        pthread_cond_signal(&wake);
}

/* Under mio_lock: nothing for the thread to watch but pokes (deep_ns). */
static int nothing_to_watch(void)
{
    if (pinned_mpi > 0 || mio_queue_busy())
        return 0;
    for (mio_file_t *f = mio_files; f; f = f->next)
        if (f->flushing > 0 || (f->two_stage && (__atomic_load_n(&f->s1_bytes, __ATOMIC_RELAXED) |
                                                  f->s2_bytes | f->queued)))
            return 0;
    return 1;
}

/* The one place that decides whether stage 2 can run (a file of more than one
 * rank): a second thread calling MPI needs MPI_THREAD_MULTIPLE, as the level
 * MPI_Init provided (src/comm/ records it; UNBLOCK_THREAD and the program's
 * profile decide what is asked for).  The profile records that this run wanted
 * the I/O thread, so the next run asks for that level even where this one did
 * not get it.  UNBLOCK_MPIIO_STAGES=1 asks for one stage. */
int mio_two_stage_possible(void)
{
    if (unblock_opt.mpiio_stages == 1)
        return 0;
    unblock_profile_need("MPI-IO write-behind's I/O thread (two stages)");
    return unblock_g.mpi_thread_provided >= MPI_THREAD_MULTIPLE;
}

void mio_thread_poke(void)
{
    wake_thread();
}


static uint64_t ns_of(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The I/O thread (mio_lock held): files whose stage 1 has not moved for
 * MIO_IDLE_NS while their writer computed are marked, and the program's next
 * call on them ships it (stage 1 is changed only by the program's thread:
 * without a lock below MPI_THREAD_MULTIPLE, own.c).  The memos and the
 * wrapper's cursor are ended, so that the next write goes through mio_hook. */
static void note_idle(uint64_t now)
{
    for (mio_file_t *f = mio_files; f; f = f->next) {
        if (!f->two_stage || f->ship || f->read_back || !f->has_writer)
            continue;
        uint64_t s1 = __atomic_load_n(&f->s1_bytes, __ATOMIC_RELAXED);
        uint64_t sig = s1 * 31u + (uint64_t)__atomic_load_n(&f->pending_hi, __ATOMIC_RELAXED) +
                       __atomic_load_n(&unblock_mpiio_cur.taken, __ATOMIC_RELAXED) * 7u;
        /* (0: the thread is gone; not read while nothing is buffered) */
        uint64_t cpu = s1 ? ns_of(f->writer_clock) : 0;
        /* (inside an MPI call the program waits, as for a rank descheduled:
         * the window starts again) */
        int in_mpi = cpu != 0 && __atomic_load_n(f->writer_depth, __ATOMIC_RELAXED) > 0;
        if (sig != f->idle_sig || s1 == 0 || cpu == 0 || f->idle_cpu == 0 || in_mpi) {
            f->idle_sig = sig;
            f->idle_since = now;
            f->idle_cpu = cpu;
        } else if (now - f->idle_since >= MIO_IDLE_NS && cpu >= f->idle_cpu + MIO_IDLE_NS / 2) {
            unblock_debug("MPI-IO write-behind: %s idle, to the owners at the next call",
                          f->path);
            __atomic_store_n(&f->ship, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&mio_files_gen, 1, __ATOMIC_RELEASE);
            __atomic_add_fetch(&unblock_mpiio_gen, 1, __ATOMIC_RELEASE);
        }
    }
}

void mio_ship(mio_file_t *f)
{
    pthread_mutex_lock(&mio_lock);
    if (f->ship) {
        f->ship = 0;
        if (f->list) {
            unblock_counter_add(&mio_stats.flush_idle, 1);
            mio_flush_stage1(f, 0);
            mio_thread_poke();
        }
    }
    pthread_mutex_unlock(&mio_lock);
}

/* After the last file's close the thread waits this long, calling no MPI
 * function and waking for nothing, for another file before it ends: a file
 * opened, written a little and closed at every step paid its start and end (a
 * clone, a join: about 50 µs a round here). */
#define LINGER_S 1

static void *io_main(void *arg)
{
    (void)arg;
    unblock_runtime_thread(); /* (its calls, and MPI's inside them, are the runtime's) */
    long pause = POLL_MIN_NS;
    pthread_mutex_lock(&mio_lock);
    while (!thr_stop) {
        if (attached == 0) { /* (parked: MPI's thread safety is not pinned for it) */
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            ts.tv_sec += LINGER_S;
            int rc = 0;
            while (attached == 0 && !thr_stop && rc != ETIMEDOUT)
                rc = pthread_cond_timedwait(&wake, &mio_lock, &ts);
            if (attached == 0)
                break;
            pause = POLL_MIN_NS;
            continue;
        }
        int did = 0;
        if (pinned_mpi > 0) { /* (MPI calls: not for solo or quiet files alone) */
            did |= mio_owner_round();
        }
        for (mio_file_t *f = mio_files; f; f = f->next)
            if (f->two_stage)
                did |= (f->mpi_pinned && mio_coll_ready(f)) | (mio_write_full(f) > 0);
        int busy = mio_queue_busy();
        for (mio_file_t *f = mio_files; f && !busy; f = f->next)
            busy = f->flushing > 0;
        if (did || busy)
            pause = POLL_MIN_NS;
        struct timespec ts;
        if (!did && !busy && nothing_to_watch()) {
            __atomic_store_n(&mio_thread_deep, 1, __ATOMIC_SEQ_CST);
            /* (a write that took its bytes before it saw the flag: seen here) */
            if (nothing_to_watch()) {
                unblock_counter_add(&mio_stats.thread_sleeps, 1);
                pthread_mutex_unlock(&mio_lock);
                uint64_t now = ns_of(CLOCK_MONOTONIC), end = now + (uint64_t)deep_ns();
                while (__atomic_load_n(&mio_thread_deep, __ATOMIC_ACQUIRE) && now < end) {
                    unblock_futex_wait(&mio_thread_deep, 1, (long)(end - now));
                    now = ns_of(CLOCK_MONOTONIC);
                }
                pthread_mutex_lock(&mio_lock);
            }
            __atomic_store_n(&mio_thread_deep, 0, __ATOMIC_RELAXED);
            pause = POLL_MIN_NS;
            unblock_counter_add(&mio_stats.thread_wakeups, 1);
            continue;
        }
        clock_gettime(CLOCK_MONOTONIC, &ts);
        note_idle((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
        mio_ts_add(&ts, pause);
        int rc = pthread_cond_timedwait(&wake, &mio_lock, &ts);
        if (rc == ETIMEDOUT && !did && !busy && pause < POLL_MAX_NS)
            pause *= 2;
        else if (rc == 0)
            pause = POLL_MIN_NS;
        unblock_counter_add(&mio_stats.thread_wakeups, 1);
    }
    __atomic_store_n(&thr_running, 0, __ATOMIC_RELEASE); /* (joined by the next start) */
    pthread_mutex_unlock(&mio_lock);
    return NULL;
}

UNBLOCK_REAL_DECL(int, pthread_create,
                  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));

int mio_thread_up(void)
{
    return thr_running;
}

/* (with a file of several ranks attached, quiet or not: OMPIO's nonblocking
 * calls are made blocking while one is open, request.c, since a quiet file may
 * take writes again, and the thread call MPI, while such a request is out) */
int mio_thread_running(void)
{
    return __atomic_load_n(&thr_running, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&attached_mpi, __ATOMIC_ACQUIRE) > 0;
}

/* Under mio_lock: f among the files the thread calls MPI for (on) or not;
 * MPI's thread safety is pinned while any is (comm/gate.c). */
static void pin_set(mio_file_t *f, int on)
{
    if (f->mpi_pinned == on)
        return;
    f->mpi_pinned = on;
    if (on ? ++pinned_mpi == 1 : --pinned_mpi == 0)
        unblock_progress_pin(on ? 1 : -1);
    if (on) /* (other ranks may send it pieces: the thread polls again) */
        mio_thread_undeep();
}

int mio_thread_attach(mio_file_t *f)
{
    pthread_mutex_lock(&mio_lock);
    if (!conds_ready) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&wake, &ca);
        mio_owner_init(&ca);
        conds_ready = 1;
    }
    /* It calls MPI while a file of several ranks is attached: MPI's thread
     * safety stays on (comm/gate.c; here, in MPI_File_open's hook, no thread is
     * inside MPI).  Not for a solo file: no MPI call is made for it. */
    attached++;
    if (!f->solo) {
        __atomic_add_fetch(&attached_mpi, 1, __ATOMIC_RELEASE);
        pin_set(f, 1);
    }
    if (thr_running) {
        wake_thread(); /* (parked: back to work) */
    } else {
        if (thr_joinable) { /* (it ended after its linger: it holds no lock now) */
            pthread_join(thr, NULL);
            thr_joinable = 0;
        }
        thr_stop = 0;
        unblock_real_pthread_create_t create = UNBLOCK_REAL(pthread_create);
        if (unblock_runtime_thread_create(create, &thr, NULL, io_main, NULL) == 0) {
            pthread_setname_np(thr, "unblock-mpiio");
            thr_joinable = 1;
            __atomic_store_n(&thr_running, 1, __ATOMIC_RELEASE);
            unblock_counter_add(&mio_stats.thread_started, 1);
        } else {
            unblock_warn("MPI-IO write-behind: cannot start the I/O thread; one stage");
        }
    }
    int running = thr_running;
    if (!running) {
        attached--;
        if (!f->solo)
            __atomic_sub_fetch(&attached_mpi, 1, __ATOMIC_RELEASE);
        pin_set(f, 0);
    }
    pthread_mutex_unlock(&mio_lock);
    return running;
}

/* After the file's last flush (every rank): its queue empties; after the last
 * file the thread parks (LINGER_S), calling no MPI function. */
void mio_thread_detach(mio_file_t *f)
{
    pthread_mutex_lock(&mio_lock);
    mio_wait_queue(f, 0);
    if (!f->solo)
        __atomic_sub_fetch(&attached_mpi, 1, __ATOMIC_RELEASE);
    pin_set(f, 0);
    if (--attached == 0)
        wake_thread();
    pthread_mutex_unlock(&mio_lock);
}

/* A quiet file (flush.c) lets go of MPI's thread safety: with every file of
 * several ranks quiet, the I/O thread calls no MPI function, and the program's
 * MPI calls run without the locks MULTIPLE costs (a simulation that keeps its
 * output file open while it communicates; PnetCDF's handle on the file's
 * communicator is quiet nearly always).  Called by the program's thread in a
 * collective call's hook, where no thread is inside MPI for f: no rank sends f
 * a message while it is quiet (none holds a byte); a file whose last messages
 * are still queued, or asks unanswered, lets go at a later call.  f is
 * attached (two stages, several ranks: mio_flush_all_ranks), so the thread
 * runs; it looks at its next wake-up (a write taken pokes it, mio_send_block). */
void mio_thread_mpi(mio_file_t *f, int on)
{
    pthread_mutex_lock(&mio_lock);
    if (on || (!mio_queued_for(f) && f->nasks == 0))
        pin_set(f, on);
    pthread_mutex_unlock(&mio_lock);
}

void mio_thread_stop(void)
{
    pthread_mutex_lock(&mio_lock);
    int join = thr_joinable;
    thr_stop = 1;
    wake_thread();
    thr_joinable = 0;
    pthread_mutex_unlock(&mio_lock);
    if (join)
        pthread_join(thr, NULL);
}

void mio_thread_forked(void)
{
    thr_running = thr_joinable = attached = attached_mpi = pinned_mpi = mio_thread_deep = 0;
    mio_owner_forked();
}
