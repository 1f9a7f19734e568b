/* test_sites.c — the per-call-site predictor (src/core/sites.c): each size class
 * of a new site runs its first 3 calls converted and 2 blocking, then keeps the
 * cheaper way,
 * tries the other way every UNBLOCK_PREDICT_RECHECK calls, follows a change of
 * costs, leaves UNBLOCK_EXCLUDE'd sites alone, and copies large sends of a site
 * whose protected sends are written again while in flight (weighing the copies
 * afresh against the original call), and counts a wait
 * inside a converted call for another site's operation once; a site its
 * program's profile decided takes that decision from its first call.  And the timeline:
 * phases whose width doubles as the run grows, waits spread over the phases they
 * span, exact sums under concurrent adds, and the sites' hidden time in it. */
#define _GNU_SOURCE
#include "core/options.h"
#include "core/profile.h"
#include "core/profile_file.h"
#include "core/sites.h"
#include "test.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

/* One call of a site whose blocking calls cost `blocking` ns and whose converted
 * calls cost `in_call` ns in the call plus `later` ns of waits afterwards (their
 * operations take `blocking` ns to complete, what the original call would have
 * waited).  Returns whether it was converted. */
static uint64_t fake_clock; /* ns: the calls follow each other */

static int call(int site, uint64_t blocking, uint64_t in_call, uint64_t later)
{
    uint64_t t = fake_clock;
    if (unblock_site_convert(site)) {
        unblock_site_converted(site, t, t + in_call, 4096);
        unblock_site_waited(site, t + in_call, t + in_call + later, 0);
        unblock_site_estimated(site, blocking);
        fake_clock = t + in_call + later;
        return 1;
    }
    unblock_site_passed(site, t, t + blocking);
    fake_clock = t + blocking;
    return 0;
}

static void test_explore_then_convert(void)
{
    int s = unblock_site_of(0x1000, 1, "MPI_Send", 8192);
    ASSERT(s >= 0);
    ASSERT_EQ(unblock_site_of(0x1000, 1, "MPI_Send", 8192), s); /* found again */
    ASSERT(unblock_site_of(0x1000, 2, "MPI_Recv", 8192) != s);  /* another function */
    int seen[5], converted = 0;
    for (int i = 0; i < 5; i++)
        converted += seen[i] = call(s, 50000, 2000, 1000);
    ASSERT_EQ(seen[0] + seen[1] + seen[2], 3); /* converted first */
    ASSERT_EQ(seen[3] + seen[4], 0);           /* then 2 blocking, measured */
    for (int i = 0; i < 100; i++)
        converted += call(s, 50000, 2000, 1000);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_CONVERT);
    /* One call in 64 goes the other way (call 64 of the site). */
    ASSERT_EQ(converted, 102);
}

static void test_size_classes(void)
{
    /* One call site, two sizes that behave differently: each class decides. */
    int small = unblock_site_of(0x8000, 1, "MPI_Send", 8192);
    int large = unblock_site_of(0x8000, 1, "MPI_Send", 16 << 20);
    ASSERT(small != large);
    ASSERT_EQ(small / UNBLOCK_SITE_CLASSES, large / UNBLOCK_SITE_CLASSES); /* one site */
    ASSERT_EQ(unblock_site_of(0x8000, 1, "MPI_Send", 12000), small);     /* 4-16 KiB */
    for (int i = 0; i < 100; i++) {
        call(small, 50000, 2000, 0);
        call(large, 4000000, 3000000, 8000000);
    }
    ASSERT_EQ(unblock_site_decision(small), UNBLOCK_SITE_CONVERT);
    ASSERT_EQ(unblock_site_decision(large), UNBLOCK_SITE_PASS);
    ASSERT_EQ(unblock_site_summary(&unblock_sites[small / UNBLOCK_SITE_CLASSES]), -1); /* mixed */
}

static void test_costly_site_passes(void)
{
    int s = unblock_site_of(0x2000, 1, "MPI_Send", 8192);
    int converted = 0;
    /* Converting costs less in the call but more counting the waits it causes. */
    for (int i = 0; i < 200; i++)
        converted += call(s, 10000, 3000, 9000);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_PASS);
    ASSERT(converted >= 3 && converted <= 7); /* exploring, then the rechecks */
}

/* A class that steadily runs the original call takes the quick path: S-1 calls
 * of S counted and not timed, the S-th timed for all S; a recheck still comes
 * through the full path; a new site, a converting class and an unknown size
 * class do not take it. */
static void test_quick_pass(void)
{
    int s = unblock_site_of(0x2400, 1, "MPI_Send", 8192);
    ASSERT_EQ(unblock_site_pass_quick(0x2400, 1, 8192), -1); /* exploring */
    for (int i = 0; i < 20; i++)
        call(s, 10000, 3000, 9000);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_PASS);
    ASSERT_EQ(unblock_site_pass_quick(0x2480, 1, 8192), -1); /* no such site */
    ASSERT_EQ(unblock_site_pass_quick(0x2400, 1, 1 << 20), -1); /* another class */
    unblock_site_t *site = &unblock_sites[s / UNBLOCK_SITE_CLASSES];
    uint64_t passed = site->passed, total = site->pass_total_ns;
    int quick = 0, full = 0, rechecks = 0;
    for (int i = 0; i < 400; i++) {
        if (unblock_site_pass_quick(0x2400, 1, 8192) == s) {
            quick++;
            continue;
        }
        full++;
        rechecks += call(s, 10000, 3000, 9000); /* a recheck converts */
    }
    /* S-1 of S (UNBLOCK_SITE_SAMPLE), less the rechecks (a handful: they back
     * off), which the full path takes, with its timed calls. */
    enum { S = UNBLOCK_SITE_SAMPLE, QUICK = 400 * (S - 1) / S };
    ASSERT(quick >= QUICK - 48 && quick <= QUICK + 1);
    ASSERT(full >= 400 / S && full <= 400 / S + 48);
    ASSERT(rechecks >= 1);
    ASSERT_EQ(site->passed - passed, (uint64_t)(quick + full - rechecks));
    /* The timed calls stand for the quick ones: about 10 us each, 400 calls. */
    uint64_t per = (site->pass_total_ns - total) / (uint64_t)(quick + full - rechecks);
    ASSERT(per >= 8000 && per <= 12000);
    /* A converting class never takes it. */
    int c = unblock_site_of(0x2500, 1, "MPI_Send", 8192);
    for (int i = 0; i < 20; i++)
        call(c, 50000, 2000, 1000);
    ASSERT_EQ(unblock_site_pass_quick(0x2500, 1, 8192), -1);
}

static void test_rechecks_back_off(void)
{
    /* A site that keeps passing tries converting 64, 128, 256, ... calls after
     * its decision, up to every 4096 calls: 6 rechecks in 5000 calls, not 78;
     * 9 in 20,000 (at most 16 times 64 apart, as until 2026-12-02: 22). */
    int s = unblock_site_of(0x2800, 1, "MPI_Send", 8192);
    int converted = 0;
    for (int i = 0; i < 5000; i++)
        converted += call(s, 10000, 3000, 9000);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_PASS);
    ASSERT(converted >= 3 + 5 && converted <= 3 + 6);
    for (int i = 5000; i < 20000; i++)
        converted += call(s, 10000, 3000, 9000);
    ASSERT(converted >= 3 + 8 && converted <= 3 + 10);
    /* Converting becomes cheap: the next recheck sees it (its call cost less
     * than passing does), the ones after it come 64, 128, ... calls on again,
     * and the decision changes within a few of them. */
    int last = 0, changed = -1;
    for (int i = 0; i < 8000; i++) {
        last = call(s, 10000, 1000, 0);
        if (changed < 0 && unblock_site_decision(s) == UNBLOCK_SITE_CONVERT)
            changed = i;
    }
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_CONVERT);
    ASSERT_EQ(last, 1);
    /* (the first recheck at most 4096 calls on, then 64, 128, 256, 512 on:
     * with the distance kept long, the change took 4096 calls a recheck) */
    ASSERT(changed >= 0 && changed < 4096 + 1024);
}

/* A call of a site that always runs blocking (never explores), `ns` long. */
static void blocking(int site, uint64_t ns)
{
    unblock_site_passed(site, fake_clock, fake_clock + ns);
    fake_clock += ns;
}

static void test_moved_wait(void)
{
    /* A send that returns at once converted makes the receive after it wait
     * longer (its peer was late): 2 + 30 us converted against 25 + 3 us
     * blocking.  Its own costs say convert; the periods it starts say pass. */
    int send = unblock_site_of(0xa000, 1, "MPI_Sendrecv", 8192);
    int recv = unblock_site_of(0xa100, 2, "MPI_Recv", 8192);
    for (int i = 0; i < 1000; i++)
        blocking(recv, call(send, 25000, 2000, 0) ? 30000 : 3000);
    ASSERT_EQ(unblock_site_decision(send), UNBLOCK_SITE_PASS);
    /* The receive waits only a little longer: 2 + 10 against 25 + 3, a gain. */
    send = unblock_site_of(0xa200, 1, "MPI_Sendrecv", 8192);
    recv = unblock_site_of(0xa300, 2, "MPI_Recv", 8192);
    for (int i = 0; i < 1000; i++)
        blocking(recv, call(send, 25000, 2000, 0) ? 10000 : 3000);
    ASSERT_EQ(unblock_site_decision(send), UNBLOCK_SITE_CONVERT);
}

static void test_wait_inside_another_call(void)
{
    /* sor2d's row exchange: a receive (site a) returns at once converted; the send
     * after it (site b) has its buffer on a page of that receive, so b's converted
     * call waits 40 us inside itself for a's operation.  That wait is a's (a
     * blocking b would have waited for it too, before its clock starts); counted
     * in b's call as well, b would seem to cost 42 us converted against 5 us. */
    int a = unblock_site_of(0xb000, 7, "MPI_Sendrecv", 16384);
    int b = unblock_site_of(0xb100, 7, "MPI_Sendrecv", 16384);
    for (int i = 0; i < 200; i++) {
        uint64_t t = fake_clock, w = 0;
        if (unblock_site_convert(a)) {
            unblock_site_converted(a, t, t + 2000, 16384);
            unblock_site_estimated(a, 45000);
            t += 2000;
            w = 40000;
        } else {
            unblock_site_passed(a, t, t + 45000);
            t += 45000;
        }
        if (unblock_site_convert(b)) {
            if (w)
                unblock_site_waited(a, t + 1000, t + 1000 + w, 0);
            unblock_site_converted(b, t, t + 2000 + w, 16384);
            unblock_site_estimated(b, 5000);
            t += 2000 + w;
        } else {
            if (w)
                unblock_site_waited(a, t, t + w, 0);
            unblock_site_passed(b, t + w, t + w + 5000);
            t += w + 5000;
        }
        fake_clock = t;
    }
    ASSERT_EQ(unblock_site_decision(a), UNBLOCK_SITE_CONVERT);
    ASSERT_EQ(unblock_site_decision(b), UNBLOCK_SITE_CONVERT);
    uint64_t calls, ns;
    unblock_site_converted_totals(&unblock_sites[b / UNBLOCK_SITE_CLASSES], &calls, &ns);
    ASSERT(calls > 100);
    ASSERT_EQ(ns, calls * 2000); /* its own 2 us each, nothing of a's */
}

static void test_margin(void)
{
    /* 1% cheaper is within the 2% margin: not worth converting. */
    int s = unblock_site_of(0x3000, 1, "MPI_Send", 8192);
    for (int i = 0; i < 100; i++)
        call(s, 10000, 9900, 0);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_PASS);
}

static void test_change_is_followed(void)
{
    int s = unblock_site_of(0x4000, 1, "MPI_Send", 8192);
    for (int i = 0; i < 200; i++)
        call(s, 50000, 2000, 0);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_CONVERT);
    /* The receiver now waits for us: conversions start costing a lot later. */
    int last = 1;
    for (int i = 0; i < 2000; i++)
        last = call(s, 50000, 2000, 200000);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_PASS);
    (void)last;
}

static void test_off_and_excluded(void)
{
    unblock_opt.predict = 0;
    int s = unblock_site_of(0x5000, 1, "MPI_Send", 8192);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(unblock_site_convert(s), 1); /* no exploring: every call converts */
    unblock_opt.predict = 1;
    unblock_opt.exclude = "MPI_Bsend,MPI_Sendrecv";
    s = unblock_site_of(0x6000, 7, "MPI_Sendrecv", 8192);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_EXCLUDED);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(unblock_site_convert(s), 0);
    ASSERT_EQ(unblock_site_decision(unblock_site_of(0x6000, 1, "MPI_Send", 8192)),
              UNBLOCK_SITE_EXPLORE);
    unblock_opt.exclude = "";
}

static void test_prefers_copy(void)
{
    int s = unblock_site_of(0x7000, 1, "MPI_Send", 8192);
    ASSERT_EQ(unblock_site_prefers_copy(s), 0);
    unblock_site_protected(s, 0);
    unblock_site_protected(s, 1); /* one send, written again in flight */
    ASSERT_EQ(unblock_site_prefers_copy(s), 0); /* one is not a habit */
    unblock_site_protected(s, 0);
    unblock_site_protected(s, 1);
    ASSERT_EQ(unblock_site_prefers_copy(s), 1);
    for (int i = 0; i < 4; i++)
        unblock_site_protected(s, 0); /* then left alone: 2 faults in 6 */
    ASSERT_EQ(unblock_site_prefers_copy(s), 0);
    ASSERT_EQ(unblock_site_prefers_copy(-1), 0);
}

/* A class whose protected sends waited at their faults longer than its
 * blocking calls took runs blocking; once its sends are copies
 * (unblock_site_copies), those waits are forgotten and it explores the
 * converted way again: copies that cost less than the original call are kept
 * (a 16 MiB send written again at once: 9-13 ms at each fault, 9-13 ms blocking,
 * 2 ms copied on MPICH here; it stayed blocking). */
static void test_copies_explored_again(void)
{
    int s = unblock_site_of(0x7800, 1, "MPI_Send", 16 << 20);
    for (int i = 0; i < 20; i++) /* protected: 0.5 ms in the call, 20 ms at the fault */
        call(s, 10000000, 500000, 20000000);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_PASS);
    unblock_site_copies(s);
    int seen[3];
    for (int i = 0; i < 3; i++) /* copies: 2 ms in the call, nothing later */
        seen[i] = call(s, 10000000, 2000000, 0);
    ASSERT_EQ(seen[0] + seen[1] + seen[2], 3); /* converted again first */
    int converted = 0;
    for (int i = 0; i < 40; i++)
        converted += call(s, 10000000, 2000000, 0);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_CONVERT);
    ASSERT(converted >= 39);
    unblock_site_copies(s); /* once: later calls forget nothing */
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_CONVERT);
    ASSERT_EQ(call(s, 10000000, 2000000, 0), 1);
    unblock_site_copies(-1);
}

/* Threads that meet a new site at once all get the one entry, and the creation
 * lock is free afterwards: a thread that found the entry another had just
 * created once kept the lock, and the next new site hung every thread (the
 * threads test hung about once in 15 runs). */
enum { RACERS = 4, RACE_ROUNDS = 100 };
static pthread_barrier_t race_barrier;
static int race_got[RACE_ROUNDS][RACERS];

static void *racer(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int r = 0; r < RACE_ROUNDS; r++) {
        pthread_barrier_wait(&race_barrier);
        race_got[r][t] = unblock_site_of(0x40000 + (uintptr_t)r * 64, 1, "MPI_Send", 8192);
    }
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_threads_create_sites: hung (creation lock kept)\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(1);
}

static void test_threads_create_sites(void)
{
    signal(SIGALRM, on_alarm);
    alarm(20);
    pthread_barrier_init(&race_barrier, NULL, RACERS);
    pthread_t th[RACERS];
    for (int t = 0; t < RACERS; t++)
        pthread_create(&th[t], NULL, racer, (void *)(intptr_t)t);
    for (int t = 0; t < RACERS; t++)
        pthread_join(th[t], NULL);
    for (int r = 0; r < RACE_ROUNDS; r++) {
        ASSERT(race_got[r][0] >= 0);
        for (int t = 1; t < RACERS; t++)
            ASSERT_EQ(race_got[r][t], race_got[r][0]);
    }
    ASSERT(unblock_site_of(0x7f000, 1, "MPI_Send", 8192) >= 0); /* the lock is free */
    alarm(0);
    pthread_barrier_destroy(&race_barrier);
}

/* ---- the timeline ---- */
#define MS 1000000ull
#define T0 (1000000 * MS) /* any start: times are counted from it */

static int64_t tl_hidden[UNBLOCK_TIMELINE_BUCKETS];
static uint64_t tl_exposed[UNBLOCK_TIMELINE_BUCKETS], tl_width;

static unsigned tl_read(uint64_t now)
{
    memset(tl_hidden, 0x55, sizeof(tl_hidden)); /* every phase returned is written */
    memset(tl_exposed, 0x55, sizeof(tl_exposed));
    return unblock_timeline_read(now, &tl_width, tl_hidden, tl_exposed);
}

static void test_timeline_width_doubles(void)
{
    unblock_timeline_start(T0);
    ASSERT_EQ(tl_read(T0), 1); /* the phase holding `now`, empty */
    ASSERT_EQ(tl_exposed[0], 0);
    /* 1 us waited and q ns hidden in the middle of every ms q. */
    for (uint64_t q = 0; q <= 40; q++)
        unblock_timeline_add(T0 + q * MS + MS / 2, 1000, (int64_t)q);
    ASSERT_EQ(tl_read(T0 + 40 * MS + MS / 2), 41);
    ASSERT_EQ(tl_width, MS);
    for (unsigned i = 0; i <= 40; i++) {
        ASSERT_EQ(tl_exposed[i], 1000);
        ASSERT_EQ(tl_hidden[i], i);
    }
    /* Past 64 ms: 2 ms phases, adjacent pairs merged; past 128 ms: 4 ms. */
    for (uint64_t q = 41; q <= 100; q++)
        unblock_timeline_add(T0 + q * MS + MS / 2, 1000, (int64_t)q);
    ASSERT_EQ(tl_read(T0 + 100 * MS + MS / 2), 51);
    ASSERT_EQ(tl_width, 2 * MS);
    for (unsigned i = 0; i < 50; i++) {
        ASSERT_EQ(tl_exposed[i], 2000);
        ASSERT_EQ(tl_hidden[i], 4 * i + 1);
    }
    ASSERT_EQ(tl_exposed[50], 1000);
    for (uint64_t q = 101; q <= 199; q++)
        unblock_timeline_add(T0 + q * MS + MS / 2, 1000, (int64_t)q);
    ASSERT_EQ(tl_read(T0 + 199 * MS + MS / 2), 50);
    ASSERT_EQ(tl_width, 4 * MS);
    uint64_t exposed = 0;
    for (unsigned i = 0; i < 50; i++) {
        ASSERT_EQ(tl_exposed[i], 4000);
        ASSERT_EQ(tl_hidden[i], 16 * i + 6); /* 4i + 4i+1 + 4i+2 + 4i+3 */
        exposed += tl_exposed[i];
    }
    ASSERT_EQ(exposed, 200 * 1000);
    /* Read early, the later adds are there all the same (the phases extend). */
    ASSERT_EQ(tl_read(T0 + 10 * MS), 50);
    /* The far future lands in the last phase of the widest width, 2^31 ms. */
    unblock_timeline_add(T0 + (MS << 40), 7, 0);
    ASSERT_EQ(tl_read(T0 + (MS << 40)), UNBLOCK_TIMELINE_BUCKETS);
    ASSERT_EQ(tl_width, MS << 31);
    ASSERT_EQ(tl_exposed[UNBLOCK_TIMELINE_BUCKETS - 1], 7);
    ASSERT_EQ(tl_exposed[0], 200 * 1000); /* 0-2^31 ms: everything before */
}

static void test_timeline_spans(void)
{
    unblock_timeline_start(T0);
    /* A 10 ms wait that ended at 70.5 ms: 60.5-64 ms in 1 ms phases, then 2 ms
     * phases; read as 2 ms phases. */
    unblock_timeline_add(T0 + 70 * MS + MS / 2, 10 * MS, 5);
    ASSERT_EQ(tl_read(T0 + 71 * MS), 36);
    ASSERT_EQ(tl_width, 2 * MS);
    ASSERT_EQ(tl_exposed[29], 0);
    ASSERT_EQ(tl_exposed[30], 3 * MS / 2); /* 60.5-62 */
    ASSERT_EQ(tl_exposed[31], 2 * MS);
    ASSERT_EQ(tl_exposed[34], 2 * MS);     /* 68-70 */
    ASSERT_EQ(tl_exposed[35], MS / 2);     /* 70-70.5, and the hidden time at its end */
    ASSERT_EQ(tl_hidden[35], 5);
    ASSERT_EQ(tl_hidden[34], 0);
    /* Before the start (a wait begun before, a time before): the first phase. */
    unblock_timeline_start(T0);
    unblock_timeline_add(T0 + MS / 2, 2 * MS, 0);
    unblock_timeline_add(T0 - 5, 100, -3);
    ASSERT_EQ(tl_read(T0 + MS / 2), 1);
    ASSERT_EQ(tl_exposed[0], 2 * MS + 100);
    ASSERT_EQ(tl_hidden[0], -3);
}

/* Threads adding at once over a growing run: every ns is counted. */
enum { TL_THREADS = 4, TL_ADDS = 200000 };

static void *tl_adder(void *arg)
{
    uint64_t t = (uint64_t)(intptr_t)arg;
    for (uint64_t i = 0; i < TL_ADDS; i++) /* 0 .. 1.6 s, across phase boundaries */
        unblock_timeline_add(T0 + i * 8000 + t * 1000, 3000 + t, -(int64_t)t);
    return NULL;
}

static void test_timeline_threads(void)
{
    unblock_timeline_start(T0);
    pthread_t th[TL_THREADS];
    for (int t = 0; t < TL_THREADS; t++)
        pthread_create(&th[t], NULL, tl_adder, (void *)(intptr_t)t);
    for (int t = 0; t < TL_THREADS; t++)
        pthread_join(th[t], NULL);
    unsigned n = tl_read(T0 + TL_ADDS * 8000ull);
    ASSERT_EQ(tl_width, 32 * MS); /* 1.6 s in 64 phases: 2^5 ms */
    uint64_t exposed = 0;
    int64_t hidden = 0;
    for (unsigned i = 0; i < n; i++) {
        exposed += tl_exposed[i];
        hidden += tl_hidden[i];
    }
    ASSERT_EQ(exposed, (uint64_t)TL_ADDS * (3000 * TL_THREADS + 0 + 1 + 2 + 3));
    ASSERT_EQ(hidden, -(int64_t)TL_ADDS * (0 + 1 + 2 + 3));
}

/* The sites feed the timeline: what they report is what it holds. */
static void test_timeline_of_sites(void)
{
    unblock_timeline_start(0);
    fake_clock = 0;
    int s = unblock_site_of(0x9000, 1, "MPI_Send", 8192);
    for (int i = 0; i < 5; i++)
        call(s, 50000, 2000, 1000);
    unblock_site_class_t *c = &unblock_sites[s / UNBLOCK_SITE_CLASSES].cls[s % UNBLOCK_SITE_CLASSES];
    /* 3 converted, then 2 blocking: the first blocking call credits the three at
     * its mean, 3 x 50 us - their 3 x 3 us. */
    ASSERT_EQ(c->hidden_ns, 3 * 50000 - 3 * 3000);
    call(s, 50000, 2000, 1000); /* converted: 50 us - 2 us in the call - 1 us later */
    ASSERT_EQ(c->hidden_ns, 3 * 50000 - 3 * 3000 + 47000);
    ASSERT_EQ(fake_clock, 4 * 3000 + 2 * 50000);
    tl_read(fake_clock);
    ASSERT_EQ(tl_width, MS);
    ASSERT_EQ(tl_hidden[0], c->hidden_ns);
    ASSERT_EQ(tl_exposed[0], 2 * 50000 + 4 * 3000); /* blocking + converted: all waited */
}

static void test_table_full(void)
{
    int full = 0;
    for (uintptr_t pc = 0x100000; pc < 0x100000 + 2 * UNBLOCK_SITES_MAX; pc++)
        if (unblock_site_of(pc, 1, "MPI_Send", 8192) < 0)
            full++;
    ASSERT(full > 0);
    ASSERT_EQ(unblock_site_convert(-1), 1); /* decided as without a predictor */
    ASSERT_EQ(unblock_site_of(0, 1, "MPI_Send", 8192), -1);
}

/* A site the program's profile decided takes that decision from its first call
 * (no exploring) and still rechecks the other way; a class the profile saw but
 * never decided explores as a new one; a profile of another program seeds
 * nothing.  The site's pc is inside this program, where dladdr finds it. */
static void seed_target(void) {}

static void test_profile_seeds(void)
{
    char dir[] = "/tmp/unblock-test-sites-XXXXXX";
    ASSERT(mkdtemp(dir) != NULL);
    unblock_opt.profile = dir;
    ASSERT_EQ(unblock_profile_load("openmpi"), 0); /* none yet */
    char exe[PATH_MAX], stamp[96], text[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    ASSERT(n > 0);
    exe[n] = '\0';
    ASSERT_EQ(unblock_profile_stamp(exe, stamp, sizeof(stamp)), 0);
    uintptr_t pc = (uintptr_t)seed_target + 4;
    Dl_info di;
    ASSERT(dladdr((void *)pc, &di) && di.dli_fbase);
    const char *obj = strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname;
    unsigned long off = (unsigned long)(pc - (uintptr_t)di.dli_fbase);
    for (int foreign = 1; foreign >= 0; foreign--) {
        int len = snprintf(text, sizeof(text),
                           "unblock-profile 1\nkey %s%s\t\nstamp %s\nmpi openmpi\nversion %s\n"
                           "runs 2\nthread not-needed\nsite %s+%#lx MPI_Send .P......\n"
                           "site %s+%#lx MPI_Recv .E......\nend\n",
                           foreign ? "/elsewhere" : "", exe, stamp, UNBLOCK_VERSION, obj, off,
                           obj, off);
        unblock_profile_adopt(text, (size_t)len);
        ASSERT_EQ(unblock_profile_needs_thread(), foreign ? -1 : 0);
    }
    int s = unblock_site_of(pc, 1, "MPI_Send", 8192);
    ASSERT_EQ(unblock_site_decision(s), UNBLOCK_SITE_PASS);
    int converted = 0;
    for (int i = 0; i < 64; i++)
        converted += call(s, 50000, 2000, 1000);
    ASSERT_EQ(converted, 0); /* no exploring conversions: the profile's decision */
    ASSERT_EQ(call(s, 50000, 2000, 1000), 1); /* 64 calls after the first: the recheck */
    /* Its sends turned to copies: the profile's decision was made of the waits
     * of protected sends, and the converted way is explored again. */
    unblock_site_copies(s);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(call(s, 50000, 2000, 1000), 1);
    int s2 = unblock_site_of(pc, 1, "MPI_Send", 100); /* class 0: not in the profile */
    ASSERT_EQ(unblock_site_decision(s2), UNBLOCK_SITE_EXPLORE);
    int r = unblock_site_of(pc, 2, "MPI_Recv", 8192);
    ASSERT_EQ(unblock_site_decision(r), UNBLOCK_SITE_EXPLORE); /* seen, never decided */
    ASSERT_EQ(call(r, 50000, 2000, 1000), 1);                   /* explores */
    /* The thread is wanted for a new class refused without it, not a known one. */
    uint64_t w = unblock_sites_wanted_thread();
    unblock_site_no_thread(r);
    ASSERT_EQ(unblock_sites_wanted_thread(), w);
    unblock_site_no_thread(s2);
    ASSERT_EQ(unblock_sites_wanted_thread(), w + 1);
    unblock_opt.profile = NULL;
    rmdir(dir);
}

int main(void)
{
    unblock_options_load(&unblock_opt, NULL);
    RUN_TEST(test_explore_then_convert);
    RUN_TEST(test_size_classes);
    RUN_TEST(test_costly_site_passes);
    RUN_TEST(test_quick_pass);
    RUN_TEST(test_rechecks_back_off);
    RUN_TEST(test_moved_wait);
    RUN_TEST(test_wait_inside_another_call);
    RUN_TEST(test_margin);
    RUN_TEST(test_change_is_followed);
    RUN_TEST(test_off_and_excluded);
    RUN_TEST(test_prefers_copy);
    RUN_TEST(test_copies_explored_again);
    RUN_TEST(test_threads_create_sites);
    RUN_TEST(test_timeline_width_doubles);
    RUN_TEST(test_timeline_spans);
    RUN_TEST(test_timeline_threads);
    RUN_TEST(test_timeline_of_sites);
    RUN_TEST(test_profile_seeds);
    RUN_TEST(test_table_full);
    return TEST_SUMMARY();
}
