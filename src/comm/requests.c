/* requests.c — the program's own nonblocking requests (see requests.h).
 *
 * A small table under a spin lock, and beside it the log of a program with one
 * thread (below): the program's calls record a request in a few stores; spans
 * are computed only when a conversion asks whether its pages are
 * free, and a datatype freed since the request started (its handle may name
 * another type by then) makes that request's span "everything". */
#define _GNU_SOURCE
#include "comm/requests.h"
#include "progress/progress.h"
#include "comm/datatype.h"
#include "comm/mpi_wrap.h"
#include "protect/protect.h"
#include "core/profile.h" /* unblock_profile_chose_own */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OWN_MAX 256

typedef unblock_own_t own_t; /* (requests.h: the log's entries are read inline) */

static own_t table[OWN_MAX];
static unsigned hw;        /* entries [0, hw) may be used */

/* The log: while the program has one thread (program_threads 0) and the table
 * is empty, its small requests (not driven, not persistent, one buffer, no
 * view) are kept here, by that thread alone, without the lock: a start, its
 * completion and a conversion's question are all made on that thread, and the
 * completion thread never looks at requests it does not drive.  Before that
 * thread starts another (core.h: before_first_thread) the log moves into the
 * table.  In the order started; a completion takes its entry out by moving the
 * last one there.  An 8-byte MPI_Irecv, MPI_Isend and MPI_Waitall to itself
 * took 89 ns with the table under its lock, 57 plain (Open MPI). */
own_t unblock_own_log[UNBLOCK_OWN_LOG_MAX];
unsigned unblock_own_log_n; /* entries [0, unblock_own_log_n) are pending */
static uint32_t live;      /* entries active: 0 makes every check free */
uint32_t unblock_own_entries; /* the table's entries used: 0 makes the completion calls free */
int unblock_own_untracked_seen; /* a request we cannot follow was started: conservative */
static int lock_word;
/* The completion thread drives the program's pending requests with
 * MPI_Request_get_status (which neither completes nor frees them).  It must not
 * do so while a thread of the program completes or frees requests (the handle may
 * be gone at any moment): a program thread announces itself in `completing` and
 * waits out a round of the engine's in `polling` (Dekker, sequentially consistent). */
static uint32_t completing, polling;
uint32_t unblock_own_fortran_seen; /* a completion call from Fortran was seen: no more driving */
/* A driven request younger than this is polled every UNBLOCK_OWN_POLL_US: an
 * MPICH rendezvous moves one step per progress call (16 MiB: 50 ms with the
 * back-off to 1 ms, 7 ms at 100 us); older ones (a receive posted long before
 * its sender comes) only at the back-off's pace. */
#define OWN_FRESH_NS 20000000ull
/* Entries the completion thread may drive: active, not detached, not seen complete
 * (under the lock; read without it). */
uint32_t unblock_own_pollable;

/* Under the lock: whether e counts in `unblock_own_pollable`. */
static int counts(const own_t *e)
{
    return e->used && e->active && !e->detached && !e->complete && e->drive;
}

/* Whether a request's buffer is worth driving (requests.h:
 * unblock_own_too_small; a type the size cache does not know by its span). */
static inline int worth_driving(const void *buf, long long count, MPI_Datatype type,
                                int everything)
{
    if (everything)
        return 0;
    int small = unblock_own_too_small(count, type);
    if (small >= 0)
        return !small;
    uintptr_t lo, hi;
    return unblock_dt_span(buf, count, type, 1, &lo, &hi) &&
           hi - lo >= unblock_opt.own_progress;
}

/* Driving pays only where the program does something else before it waits:
 * a request it waits for at once (a ping-pong of 64 KiB: MPI_Irecv, MPI_Isend,
 * MPI_Waitall) is moved by its own wait, and the completion thread's wake-up
 * and polls on its core cost it 5 % (Open MPI shm, 7 runs: 1.054 of plain
 * driven, 0.998 not).  A driven request is waited "at once" when the program's
 * completion call began within UNBLOCK_OWN_POLL_US of its start (before the
 * thread's first poll; that the thread saw it complete meanwhile, while the
 * program waited, says nothing); without a spare core (the thread's polls
 * take the program's core, engine.c: unblock_spare_core), within
 * AT_ONCE_SHARED times that: a transpose whose own block's copy (150 us) lies
 * between its 2 MiB requests' start and its wait had each driven, every poll
 * on the copy's core, and its profile kept the thread (Open MPI shm, 2 ranks
 * bound: 1.05 of plain, first run and profiled; never driven 0.97; now the
 * profiled run 1.005); and a site starts there as one waited for at once,
 * sampled every AT_ONCE_SHARED times AT_ONCE_SAMPLE_NS (drive_gate: the first
 * run's 8 driven requests a site and its samples were the first run's 1.05;
 * 1.022 -> 0.998 of plain in one set of 15, never driven 0.975).  After
 * AT_ONCE_RUN such requests in a row, a
 * new one is driven only if none was for AT_ONCE_SAMPLE_NS (one in 16 kept the
 * gate of Open MPI's thread safety opening and closing every 100 us, gate.c);
 * such a sample finds a program that computes again, and a late wait starts
 * driving every request again.  Per call site of the start (a program whose
 * quick exchanges come before an MPI_Irecv it computes behind keeps that one
 * driven), in a small table whose slots a new site takes over.  Persistent
 * requests are always driven.  (Relaxed: a decision, never a safety matter.)
 *
 * Each site also counts its large requests and those waited for late, for the
 * profile's question (unblock_own_late_helped).  Late is measured in time, and
 * a program descheduled between its start and its wait looks late too: on a
 * loaded machine (a CI run, other programs on its cores) a 64 KiB ping-pong
 * found 1,152 of its 4,312 driven requests late, each such one driving 8 more,
 * but that is 4 % of its 32,000; a site that computes behind its requests has
 * most of them late. */
#define AT_ONCE_RUN 8
#define AT_ONCE_SHARED 10
#define AT_ONCE_SAMPLE_NS 10000000ull

/* How much longer "at once" and the samples' distance are here: 1 with a
 * spare core, AT_ONCE_SHARED without one. */
static inline uint64_t at_once_scale(void)
{
    return unblock_spare_core() ? 1 : AT_ONCE_SHARED;
}
#define DRIVE_SITES 64
static struct {
    uintptr_t pc;
    uint32_t at_once;     /* its driven requests in a row waited for at once */
    uint64_t next_sample; /* when one of its requests is driven again */
    uint64_t driveable;   /* its requests large enough to drive (persistent: each init) */
    uint64_t late;        /* ... driven and waited for late */
} drive_site[DRIVE_SITES];
static UNBLOCK_TLS uint64_t t_enter; /* this thread's completion call began (announced) */

static unsigned drive_slot(uintptr_t pc)
{
    return (unsigned)(((uint64_t)pc * 0x9E3779B97F4A7C15ull) >> 58);
}

static inline void site_count(uint64_t *c)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static int drive_gate(int persistent, uintptr_t pc)
{
    unsigned k = drive_slot(pc);
    if (__atomic_load_n(&drive_site[k].pc, __ATOMIC_RELAXED) != pc) { /* new here */
        /* Without a spare core a site starts as one waited for at once: its
         * first request is driven as a sample, and only one waited for late
         * makes it drive every request (PIOMan's receiver, its first one). */
        uint64_t scale = at_once_scale();
        __atomic_store_n(&drive_site[k].at_once, scale > 1 ? AT_ONCE_RUN : 0, __ATOMIC_RELAXED);
        __atomic_store_n(&drive_site[k].next_sample,
                         scale > 1 ? unblock_now_ns() + AT_ONCE_SAMPLE_NS * scale : 0,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&drive_site[k].driveable, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&drive_site[k].late, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&drive_site[k].pc, pc, __ATOMIC_RELAXED);
        return 1;
    }
    site_count(&drive_site[k].driveable);
    if (persistent)
        return 1;
    if (__atomic_load_n(&drive_site[k].at_once, __ATOMIC_RELAXED) < AT_ONCE_RUN)
        return 1;
    uint64_t now = unblock_now_ns();
    if (now >= __atomic_load_n(&drive_site[k].next_sample, __ATOMIC_RELAXED)) {
        __atomic_store_n(&drive_site[k].next_sample,
                         now + AT_ONCE_SAMPLE_NS * at_once_scale(),
                         __ATOMIC_RELAXED);
        return 1;
    }
    unblock_counter_add(&unblock_stats.comm_own_undriven, 1);
    return 0;
}

/* Under the lock: driven entry e is done. */
static void note_driven(const own_t *e)
{
    uint64_t t = t_enter;
    int late = t == 0 || t < e->t_start ||
               t - e->t_start >= (uint64_t)unblock_opt.own_poll_us * 1000u * at_once_scale();
    if (late) /* (driving could help it: the profile's question, core/profile.c) */
        unblock_counter_add(&unblock_stats.comm_own_late, 1);
    unsigned k = drive_slot(e->pc);
    if (__atomic_load_n(&drive_site[k].pc, __ATOMIC_RELAXED) != e->pc)
        return; /* (its slot went to another site) */
    if (late)
        site_count(&drive_site[k].late);
    uint32_t n = __atomic_load_n(&drive_site[k].at_once, __ATOMIC_RELAXED);
    __atomic_store_n(&drive_site[k].at_once, late ? 0 : n < AT_ONCE_RUN ? n + 1 : n,
                     __ATOMIC_RELAXED);
}

uint64_t unblock_own_late_helped(void)
{
    uint64_t sum = 0;
    for (unsigned k = 0; k < DRIVE_SITES; k++) {
        uint64_t late = __atomic_load_n(&drive_site[k].late, __ATOMIC_RELAXED);
        if (late && late * 4 >= __atomic_load_n(&drive_site[k].driveable, __ATOMIC_RELAXED))
            sum += late;
    }
    return sum;
}

/* After new pollable entries: a completion thread asleep with no time limit
 * starts driving them.  One that lingers (it looks every 0.5 ms) is not woken:
 * a wake-up per message, on the program's core, cost a 64 KiB ping-pong 5 %. */
static void wake_engine(void)
{
    unblock_progress_thaw(); /* the engine may call MPI from here on (gate.c) */
    if (__atomic_load_n(&unblock_engine_deep, __ATOMIC_SEQ_CST))
        unblock_futex_wake(&unblock_ops_active);
}

static void lock(void)
{
    unblock_spin_lock(&lock_word);
}

static void unlock(void)
{
    unblock_spin_unlock(&lock_word);
}

void unblock_own_untracked(void)
{
    if (__atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED) != UNBLOCK_OWN_UNTRACKED) {
        __atomic_store_n(&unblock_own_untracked_seen, UNBLOCK_OWN_UNTRACKED, __ATOMIC_RELAXED);
        unblock_counter_add(&unblock_stats.comm_own_untracked, 1);
    }
}

void unblock_own_arm(void)
{
    int zero = 0;
    __atomic_compare_exchange_n(&unblock_own_untracked_seen, &zero, UNBLOCK_OWN_ARMED, 0,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* A conversion asked about the program's requests' memory after one had
 * started (unblock_own_blocks): following them mattered, or would have. */
static int mattered;

/* The trial (requests.h: unblock_own_trial_start).  Only a run that has
 * converted nothing yet ends following: one that converts is where following
 * may buy something later (its first receives into an own request's block may
 * come after many small requests); one that converts nothing is where its
 * cost is all there is (a round of an 8-byte MPI_Irecv, MPI_Isend and
 * MPI_Waitall to itself: 84 instructions of unblock a call followed, 42 not,
 * Open MPI).  A conversion refused afterwards for it makes the profile say
 * "needed", as in an armed run. */
uint64_t unblock_own_trial_left = UINT64_MAX;
static uint64_t trial_n;

void unblock_own_trial_start(uint64_t n)
{
    if (n == 0)
        return;
    trial_n = n;
    unblock_own_trial_left = n;
}

void unblock_own_trial_end(void)
{
    unblock_own_trial_left = UINT64_MAX; /* (once) */
    const char *why_not;
    if (__atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED) != 0 ||
        unblock_counter_get(&unblock_stats.comm_async) ||
        unblock_own_profile_word(&why_not) != 1) /* (what the profile would say) */
        return;
    unblock_own_arm();
    unblock_counter_add(&unblock_stats.comm_own_trial, trial_n);
    char why[128];
    snprintf(why, sizeof(why), "the trial: nothing converted, no conversion asked about the "
             "memory of the first %llu", (unsigned long long)trial_n);
    unblock_profile_chose_own(0, why);
}

int unblock_own_profile_word(const char **why)
{
    static char text[160];
    int untracked = __atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED) ==
                    UNBLOCK_OWN_UNTRACKED;
    uint64_t tracked = unblock_count_get(UNBLOCK_COUNT_OWN_TRACKED);
    uint64_t driveable = unblock_counter_get(&unblock_stats.comm_own_driveable);
    *why = "";
    if (!untracked && tracked == 0)
        return 0;
    if (__atomic_load_n(&mattered, __ATOMIC_RELAXED)) {
        *why = "conversions asked about their memory";
        return 2;
    }
    if (driveable) {
        snprintf(text, sizeof(text), "%llu large enough to drive", (unsigned long long)driveable);
        *why = text;
        return 2;
    }
    *why = "no conversion asked about their memory, none large enough to drive";
    return 1;
}

/* Under the lock: a free entry, or NULL. */
static own_t *slot(void)
{
    for (unsigned i = 0; i < hw; i++)
        if (!table[i].used)
            return &table[i];
    return hw < OWN_MAX ? &table[hw++] : NULL;
}

/* Requests with handle h are done: out of the log.  1 if one was there.
 * Every entry with the handle goes: one left by a request completed where we
 * could not see it (MPI hands the handle out again) is not taken out when the
 * new request is logged, only here (before, each start scanned the log for it
 * too: 50 of the 468 instructions of unblock in a round of 8-byte MPI_Irecv,
 * MPI_Isend and MPI_Waitall to itself).  Meanwhile it only makes the answers
 * about pending memory more careful. */
static inline int log_done(MPI_Request h)
{
    int hit = 0;
    for (unsigned i = unblock_own_log_n; i-- > 0;)
        if (unblock_own_log[i].req == h) {
            if (i != --unblock_own_log_n) /* (the newest, most often: no copy onto itself) */
                unblock_own_log[i] = unblock_own_log[unblock_own_log_n];
            hit = 1;
        }
    return hit;
}

/* The log into the table (the table's path is taken, or another thread is
 * about to exist); entries that find no slot make the tracking conservative. */
void unblock_own_log_flush(void)
{
    if (__atomic_load_n(&unblock_own_log_n, __ATOMIC_ACQUIRE) == 0)
        return;
    lock();
    for (unsigned i = 0; i < unblock_own_log_n; i++) {
        own_t *e = slot();
        if (e == NULL) {
            unblock_own_untracked();
            break;
        }
        *e = unblock_own_log[i];
        e->used = 1, e->active = 1, e->persistent = 0, e->detached = 0, e->complete = 0;
        e->drive = 0, e->viewed = 0, e->t_start = 0;
        live++;
        unblock_own_entries++;
    }
    __atomic_store_n(&unblock_own_log_n, 0, __ATOMIC_RELEASE);
    unlock();
}

/* (The table's path out of line: its buffer's description on the stack is no
 * cost of the log's path, 16 instructions of a frame per call before.) */
static __attribute__((noinline)) void logged_in_table(const void *buf, long long count,
                                                      MPI_Datatype type, int writes, int rc,
                                                      const MPI_Request *req, uintptr_t pc)
{
    unblock_own_buf_t b = { .buf = buf, .count = count, .type = type, .writes = writes };
    unblock_own_after(&b, 1, rc, req, 0, pc);
}

void unblock_own_logged(const void *buf, long long count, MPI_Datatype type, int writes, int rc,
                        const MPI_Request *req, uintptr_t pc)
{
    if (rc != MPI_SUCCESS || req == NULL)
        return;
    if (!worth_driving(buf, count, type, 0) && unblock_own_log_fits()) {
        unblock_own_log_put(*req, buf, count, type, writes, 0,
                __atomic_load_n(&unblock_dt_generation, __ATOMIC_ACQUIRE), 0);
        return;
    }
    logged_in_table(buf, count, type, writes, rc, req, pc);
}

/* A started request (its key `h`) into the log or the table; `may_drive`: its
 * key is a C handle the completion thread may poll (not a Fortran one). */
static void after(const unblock_own_buf_t *b, int n, MPI_Request h, int persistent, uintptr_t pc,
                  int may_drive)
{
    if (__atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED) == UNBLOCK_OWN_ARMED)
        unblock_own_untracked(); /* (then followed as an untracked run's: driven if worth it) */
    uint64_t gen = __atomic_load_n(&unblock_dt_generation, __ATOMIC_ACQUIRE);
    int drive[8] = { 0 };
    for (int i = 0; i < n && i < 8 && may_drive; i++)
        /* (outside the lock: it may learn a type) */
        if (worth_driving(b[i].buf, b[i].count, b[i].type, b[i].everything)) {
            unblock_counter_add(&unblock_stats.comm_own_driveable, 1);
            drive[i] = drive_gate(persistent, pc);
        }
    if (n == 1 && !persistent && b[0].view == 0 && !drive[0] && unblock_own_log_fits()) {
        unblock_own_log_put(h, b[0].buf, b[0].count, b[0].type, b[0].writes,
                            b[0].everything, gen, 0);
        return;
    }
    unblock_own_log_flush(); /* (the table's path: a request with the log's handle is new) */
    lock();
    /* A handle MPI hands out again belongs to a new request: an entry left with it
     * was completed where we could not see it. */
    for (unsigned i = 0; i < hw; i++)
        if (table[i].used && !table[i].detached && table[i].req == h) {
            if (counts(&table[i]))
                __atomic_sub_fetch(&unblock_own_pollable, 1, __ATOMIC_SEQ_CST);
            if (table[i].active)
                live--;
            table[i].used = 0;
            unblock_own_entries--;
        }
    for (int i = 0; i < n; i++) {
        own_t *e = slot();
        if (e == NULL) {
            unlock();
            unblock_own_untracked();
            return;
        }
        *e = (own_t){ .req = h, .buf = b[i].buf, .count = b[i].count, .type = b[i].type,
                      .gen = gen, .used = 1, .active = !persistent, .writes = (unsigned char)b[i].writes,
                      .everything = (unsigned char)b[i].everything,
                      .persistent = (unsigned char)persistent, .drive = (unsigned char)drive[i],
                      .viewed = b[i].view != 0,
                      .t_start = drive[i] ? unblock_now_ns() : 0, .pc = pc };
        if (e->active)
            live++;
        if (counts(e))
            __atomic_add_fetch(&unblock_own_pollable, 1, __ATOMIC_SEQ_CST);
        unblock_own_entries++;
    }
    unlock();
    if (drive[0] | drive[1]) {
        wake_engine();
        unblock_tick_arm(); /* (without the completion thread) */
    }
    unblock_count(UNBLOCK_COUNT_OWN_TRACKED);
}

void unblock_own_after(const unblock_own_buf_t *b, int n, int rc, const MPI_Request *req,
                       int persistent, uintptr_t pc)
{
    if (rc != MPI_SUCCESS || req == NULL)
        return;
    after(b, n, *req, persistent, pc, 1);
}

void unblock_own_fortran_after(const unblock_own_buf_t *b, int n, MPI_Request key)
{
    after(b, n, key, 0, 0, 0);
}

/* Whether pending entry e has memory in [lo, hi) (its span computed at the first
 * question: the type's handle still names the type it started with only if no
 * type was freed since). */
static int overlaps(own_t *e, uintptr_t lo, uintptr_t hi, int writes_only, uint64_t gen)
{
    /* MPI works on the runtime view of a viewed request's buffer, whose pages
     * are never protected: the program's pages may be. */
    if (e->viewed || (writes_only && !e->writes))
        return 0;
    if (!e->span_known && !e->everything) {
        /* (a Fortran handle from a Fortran wrapper's front: requests.h) */
        MPI_Datatype t = e->ftype ? unblock_type_f2c((MPI_Fint)(uintptr_t)e->type) : e->type;
        if (e->gen == gen && unblock_dt_span(e->buf, e->count, t, 1, &e->lo, &e->hi))
            e->span_known = 1;
        else
            e->everything = 1;
    }
    return e->everything || (e->lo < hi && lo < e->hi);
}

int unblock_own_blocks(uintptr_t lo, uintptr_t hi, int writes_only)
{
    if (__atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED) == UNBLOCK_OWN_UNTRACKED) {
        __atomic_store_n(&mattered, 1, __ATOMIC_RELAXED);
        return 1;
    }
    /* (once a request was followed: the profile's question) */
    if (!__atomic_load_n(&mattered, __ATOMIC_RELAXED) &&
        (__atomic_load_n(&unblock_own_log_n, __ATOMIC_RELAXED) ||
         __atomic_load_n(&unblock_own_entries, __ATOMIC_RELAXED) ||
         unblock_count_get(UNBLOCK_COUNT_OWN_TRACKED)))
        __atomic_store_n(&mattered, 1, __ATOMIC_RELAXED);
    uint64_t gen = __atomic_load_n(&unblock_dt_generation, __ATOMIC_ACQUIRE);
    /* The log is this thread's (the program's only one) when it holds anything. */
    for (unsigned i = 0; i < __atomic_load_n(&unblock_own_log_n, __ATOMIC_ACQUIRE); i++)
        if (overlaps(&unblock_own_log[i], lo, hi, writes_only, gen))
            return 1;
    if (__atomic_load_n(&live, __ATOMIC_ACQUIRE) == 0)
        return 0;
    int hit = 0;
    lock();
    for (unsigned i = 0; i < hw && !hit; i++)
        if (table[i].used && table[i].active)
            hit = overlaps(&table[i], lo, hi, writes_only, gen);
    unlock();
    return hit;
}

/* Requests with handle `h` completed (a persistent one becomes inactive). */
static void done(MPI_Request h)
{
    for (unsigned i = 0; i < hw; i++) {
        own_t *e = &table[i];
        if (!e->used || e->detached || e->req != h)
            continue;
        if (e->drive && e->active && !e->persistent)
            note_driven(e);
        if (counts(e))
            __atomic_sub_fetch(&unblock_own_pollable, 1, __ATOMIC_SEQ_CST);
        if (e->active)
            live--;
        e->active = 0;
        e->complete = 0;
        if (!e->persistent) {
            e->used = 0;
            unblock_own_entries--;
        }
    }
}

/* The completion call `call` of the n requests r when the log holds exactly
 * them (requests.h: unblock_own_log_is); `all_done`: the condition that they
 * all completed. */
#define LOGGED_ROUND(n, r, call, all_done)         \
    if (unblock_own_log_is((n), (r))) {            \
        int rc = COMPLETE(call);                   \
        if (rc == MPI_SUCCESS && (all_done))       \
            unblock_own_log_done_all(n);           \
        return rc;                                 \
    }

static void done_list(int n, const MPI_Request *saved, const int *idx)
{
    int rest = n;
    if (__atomic_load_n(&unblock_own_log_n, __ATOMIC_ACQUIRE))
        for (int i = n; i-- > 0;) /* the newest first: each is the log's last, no move */
            rest -= log_done(saved[idx ? idx[i] : i]);
    if (rest == 0 || __atomic_load_n(&unblock_own_entries, __ATOMIC_ACQUIRE) == 0)
        return;
    lock();
    for (int i = 0; i < n; i++)
        done(saved[idx ? idx[i] : i]);
    unlock();
}

void unblock_own_done(int n, const MPI_Request *keys)
{
    if (n > 0)
        done_list(n, keys, NULL);
}

unsigned unblock_own_fround_n;

/* After a Fortran completion call of the n requests the log holds, in order
 * (requests.h: unblock_own_fround_ok): those whose handles MPI turned into
 * MPI_REQUEST_NULL out, the others kept in order. */
void unblock_own_log_done_where(int n, const MPI_Fint *now)
{
    unsigned k = 0;
    for (int i = 0; i < n; i++)
        if (now[i] != UNBLOCK_OWN_FNULL)
            unblock_own_log[k++] = unblock_own_log[i];
    __atomic_store_n(&unblock_own_log_n, k, __ATOMIC_RELEASE);
}

/* The handles before the call (MPI sets completed ones to MPI_REQUEST_NULL). */
#define SAVE(n, r)                                                                      \
    MPI_Request small_[16], *saved = (n) <= 16 ? small_ : malloc(sizeof(MPI_Request) * (size_t)(n)); \
    if (saved && (n) > 0)                                                               \
        memcpy(saved, (r), sizeof(MPI_Request) * (size_t)(n))
#define UNSAVE()              \
    if (saved != small_)      \
        free(saved)

static void completion_begin(void)
{
    __atomic_add_fetch(&completing, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&polling, __ATOMIC_SEQ_CST))
        __builtin_ia32_pause();
}

static void completion_end(void)
{
    __atomic_sub_fetch(&completing, 1, __ATOMIC_SEQ_CST);
}

/* Announced only while some entry is pollable: the engine calls MPI only on the
 * handles of pollable entries, each still counted in `unblock_own_pollable`
 * until it is marked complete or done, and a request becomes pollable only
 * when it starts, which no other thread may do to a request this call
 * completes.  So with `unblock_own_pollable` 0 no handle this call may free is
 * in a round of the engine's (two locked instructions fewer per completion
 * call: the program's own small requests, most of them, never announce).  The
 * test inline, the announcement out of line. */
static __attribute__((noinline)) int completion_announced(void)
{
    t_enter = unblock_now_ns(); /* (for note_driven: driven requests are pending) */
    completion_begin();
    return 1;
}
static inline int completion_announce(void)
{
    if (__atomic_load_n(&unblock_own_pollable, __ATOMIC_SEQ_CST) == 0)
        return 0;
    return completion_announced();
}

/* The real completion call, announced where it must be (see `completing`). */
#define COMPLETE(call)                          \
    ({                                          \
        int announced_ = completion_announce(); \
        int rc_ = (call);                       \
        if (announced_)                         \
            completion_end();                   \
        rc_;                                    \
    })

int unblock_own_live(void)
{
    return __atomic_load_n(&unblock_own_pollable, __ATOMIC_SEQ_CST) != 0 &&
           !__atomic_load_n(&unblock_own_fortran_seen, __ATOMIC_RELAXED);
}

void unblock_own_fortran_completes(void)
{
    if (__atomic_load_n(&unblock_own_fortran_seen, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&unblock_own_fortran_seen, 1, __ATOMIC_SEQ_CST);
    completion_begin(); /* waits out a round that may have started before */
    completion_end();
}

int unblock_own_progress(int (*get_status)(MPI_Request, int *, MPI_Status *), int *fresh)
{
    enum { AT_ONCE = 32 };
    MPI_Request h[AT_ONCE];
    unsigned at[AT_ONCE];
    int n = 0, complete = 0;
    *fresh = 0;
    if (__atomic_load_n(&unblock_own_pollable, __ATOMIC_SEQ_CST) == 0)
        return 0;
    uint64_t young = unblock_now_ns() - OWN_FRESH_NS;
    __atomic_store_n(&polling, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&completing, __ATOMIC_SEQ_CST) == 0 &&
        !__atomic_load_n(&unblock_own_fortran_seen, __ATOMIC_SEQ_CST)) {
        lock();
        for (unsigned i = 0; i < hw && n < AT_ONCE; i++)
            if (counts(&table[i])) {
                at[n] = i;
                h[n++] = table[i].req;
                *fresh |= table[i].t_start > young;
            }
        unlock();
        for (int i = 0; i < n; i++) {
            int flag = 0;
            if (get_status(h[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag)
                continue;
            lock();
            own_t *e = &table[at[i]];
            if (counts(e) && e->req == h[i]) {
                e->complete = 1;
                __atomic_sub_fetch(&unblock_own_pollable, 1, __ATOMIC_SEQ_CST);
                complete++;
            }
            unlock();
        }
    }
    __atomic_store_n(&polling, 0, __ATOMIC_SEQ_CST);
    if (complete)
        unblock_counter_add(&unblock_stats.comm_own_progressed, (uint64_t)complete);
    return complete;
}

int unblock_own_wait(MPI_Request *r, MPI_Status *st, int (*real)(MPI_Request *, MPI_Status *))
{
    LOGGED_ROUND(1, r, real(r, st), 1)
    MPI_Request h = *r;
    int rc = COMPLETE(real(r, st));
    if (rc == MPI_SUCCESS)
        done_list(1, &h, NULL);
    return rc;
}

int unblock_own_test(MPI_Request *r, int *flag, MPI_Status *st,
                     int (*real)(MPI_Request *, int *, MPI_Status *))
{
    LOGGED_ROUND(1, r, real(r, flag, st), *flag)
    MPI_Request h = *r;
    int rc = COMPLETE(real(r, flag, st));
    if (rc == MPI_SUCCESS && *flag)
        done_list(1, &h, NULL);
    return rc;
}

/* (The careful paths of MPI_Waitall and MPI_Testall out of line: their saved
 * handles' frame is not set up for the logged round.) */
static __attribute__((noinline)) int waitall_careful(int n, MPI_Request r[], MPI_Status st[],
                                                     int (*real)(int, MPI_Request *, MPI_Status *))
{
    SAVE(n, r);
    int rc = COMPLETE(real(n, r, st));
    if (rc == MPI_SUCCESS && saved)
        done_list(n, saved, NULL);
    UNSAVE();
    return rc;
}

int unblock_own_waitall(int n, MPI_Request r[], MPI_Status st[],
                        int (*real)(int, MPI_Request *, MPI_Status *))
{
    if (n <= 0)
        return real(n, r, st);
    LOGGED_ROUND(n, r, real(n, r, st), 1)
    return waitall_careful(n, r, st, real);
}

static __attribute__((noinline)) int testall_careful(int n, MPI_Request r[], int *flag,
                                                     MPI_Status st[],
                                                     int (*real)(int, MPI_Request *, int *,
                                                                 MPI_Status *))
{
    SAVE(n, r);
    int rc = COMPLETE(real(n, r, flag, st));
    if (rc == MPI_SUCCESS && *flag && saved)
        done_list(n, saved, NULL);
    UNSAVE();
    return rc;
}

int unblock_own_testall(int n, MPI_Request r[], int *flag, MPI_Status st[],
                        int (*real)(int, MPI_Request *, int *, MPI_Status *))
{
    if (n <= 0)
        return real(n, r, flag, st);
    LOGGED_ROUND(n, r, real(n, r, flag, st), *flag)
    return testall_careful(n, r, flag, st, real);
}

int unblock_own_waitany(int n, MPI_Request r[], int *idx, MPI_Status *st,
                        int (*real)(int, MPI_Request *, int *, MPI_Status *))
{
    if (n <= 0)
        return real(n, r, idx, st);
    SAVE(n, r);
    int rc = COMPLETE(real(n, r, idx, st));
    if (rc == MPI_SUCCESS && *idx != MPI_UNDEFINED && saved)
        done_list(1, saved, idx);
    UNSAVE();
    return rc;
}

int unblock_own_testany(int n, MPI_Request r[], int *idx, int *flag, MPI_Status *st,
                        int (*real)(int, MPI_Request *, int *, int *, MPI_Status *))
{
    if (n <= 0)
        return real(n, r, idx, flag, st);
    SAVE(n, r);
    int rc = COMPLETE(real(n, r, idx, flag, st));
    if (rc == MPI_SUCCESS && *flag && *idx != MPI_UNDEFINED && saved)
        done_list(1, saved, idx);
    UNSAVE();
    return rc;
}

static int some(int n, MPI_Request r[], int *out, int idx[], MPI_Status st[],
                int (*real)(int, MPI_Request *, int *, int *, MPI_Status *))
{
    if (n <= 0)
        return real(n, r, out, idx, st);
    SAVE(n, r);
    int rc = COMPLETE(real(n, r, out, idx, st));
    if (rc == MPI_SUCCESS && *out != MPI_UNDEFINED && *out > 0 && saved)
        done_list(*out, saved, idx);
    UNSAVE();
    return rc;
}

int unblock_own_waitsome(int n, MPI_Request r[], int *out, int idx[], MPI_Status st[],
                         int (*real)(int, MPI_Request *, int *, int *, MPI_Status *))
{
    return some(n, r, out, idx, st, real);
}

int unblock_own_testsome(int n, MPI_Request r[], int *out, int idx[], MPI_Status st[],
                         int (*real)(int, MPI_Request *, int *, int *, MPI_Status *))
{
    return some(n, r, out, idx, st, real);
}

/* A started persistent request: its operations on the same memory finish first,
 * then it counts as pending until completed. */
static void starting(MPI_Request h)
{
    unblock_own_buf_t b[4];
    int n = 0;
    lock();
    for (unsigned i = 0; i < hw && n < 4; i++)
        if (table[i].used && !table[i].detached && table[i].req == h)
            b[n++] = (unblock_own_buf_t){ .buf = table[i].buf, .count = table[i].count,
                                          .type = table[i].type, .writes = table[i].writes,
                                          .everything = table[i].everything };
    unlock();
    unblock_conv_buffers(b, n);
}

static void started(MPI_Request h)
{
    int driven = 0;
    lock();
    for (unsigned i = 0; i < hw; i++) {
        own_t *e = &table[i];
        if (e->used && !e->detached && e->req == h && !e->active) {
            e->active = 1;
            e->span_known = 0;
            e->complete = 0;
            e->t_start = e->drive ? unblock_now_ns() : 0;
            live++;
            if (counts(e)) {
                __atomic_add_fetch(&unblock_own_pollable, 1, __ATOMIC_SEQ_CST);
                driven = 1;
            }
        }
    }
    unlock();
    if (driven)
        wake_engine();
}

int unblock_own_start(MPI_Request *r, int (*real)(MPI_Request *))
{
    starting(*r);
    int rc = real(r);
    if (rc == MPI_SUCCESS)
        started(*r);
    return rc;
}

int unblock_own_startall(int n, MPI_Request r[], int (*real)(int, MPI_Request *))
{
    if (n <= 0)
        return real(n, r);
    for (int i = 0; i < n; i++)
        starting(r[i]);
    int rc = real(n, r);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++)
            started(r[i]);
    return rc;
}

/* Freed while active, a request goes on in MPI and we can no longer see it end:
 * its memory stays off limits (detached); an inactive persistent one is gone. */
int unblock_own_request_free(MPI_Request *r, int (*real)(MPI_Request *))
{
    MPI_Request h = *r;
    int rc = COMPLETE(real(r));
    if (rc == MPI_SUCCESS)
        unblock_own_freed(h);
    return rc;
}

void unblock_own_freed(MPI_Request h)
{
    unblock_own_log_flush(); /* (freed while pending: its entry stays, detached, in the table) */
    lock();
    for (unsigned i = 0; i < hw; i++) {
        own_t *e = &table[i];
        if (!e->used || e->detached || e->req != h)
            continue;
        if (e->active) {
            if (counts(e))
                __atomic_sub_fetch(&unblock_own_pollable, 1, __ATOMIC_SEQ_CST);
            e->detached = 1;
        } else {
            e->used = 0;
            unblock_own_entries--;
        }
    }
    unlock();
}
