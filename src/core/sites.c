/* sites.c — call sites and the predictor (sites.h).
 *
 * Paper: Natvig & Elster, section IV, and its reference to context-sensitive
 * prediction: an optimisation must never make the program slower.  What is
 * compared is what the program itself experiences, per site and size class:
 *   - blocking: the time the original call took, or, without running it, the
 *     time a converted operation took from start to completion (what the
 *     original call would have waited);
 *   - converted: the time the call took (issue, copy, protection) plus every
 *     later wait for its operations (a fault on their pages, with the kernel's
 *     cost of delivering it; a call that had to finish them first; the
 *     unprotect).
 * Each size class of a new site runs its first 3 eligible calls converted and
 * the next 2 blocking; from then on it converts while the converted mean is below
 * (1 - UNBLOCK_PREDICT_MARGIN%) of the blocking mean, and every
 * UNBLOCK_PREDICT_RECHECK calls it makes one call the other way to keep both means
 * current.  The means weigh recent calls more (counts and sums are halved every 64
 * samples).
 *
 * The same measurements, placed in time, make the timeline at the end of this
 * file: per phase of the run, what the program waited and what conversions hid. */
#define _GNU_SOURCE
#include "core/sites.h"
#include "core/core.h"
#include "core/counts.h"
#include "core/log.h"
#include "core/options.h"
#include "core/profile.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

unblock_site_t unblock_sites[UNBLOCK_SITES_MAX];
static int create_lock;

/* What a fault costs besides what the handler measures itself: the kernel's
 * delivery of SIGSEGV and the return, 5.6 us measured on this machine
 * (docs/performance.md, bench/protect_cost). */
#define FAULT_NS 5600
#define EXPLORE_CALLS 3
#define EXPLORE_BLOCKING 2
/* The longest distance between two rechecks, in UNBLOCK_PREDICT_RECHECK calls.
 * Each recheck costs a call the worse way: a 4 KiB send converted at a site
 * that passes cost 13.9 us against 2.5 blocking (Open MPI shm; it wakes the
 * completion thread and opens the thread gate for a few calls), and at 16 the
 * rechecks made 1.4 % of a 4 KiB ping-pong's time (docs/performance.md).  A
 * change of costs is still seen about as soon: a recheck made at this distance
 * whose call cost less than the class's way brings the next one back to
 * UNBLOCK_PREDICT_RECHECK calls (unblock_site_convert). */
#define RECHECK_BACKOFF_MAX 64u

static void slock(int *l)
{
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
}

static void sunlock(int *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

void unblock_site_name(const unblock_site_t *s, char *out, unsigned len)
{
    Dl_info di;
    if (dladdr((void *)s->pc, &di) && di.dli_fname) {
        const char *obj = strrchr(di.dli_fname, '/');
        obj = obj ? obj + 1 : di.dli_fname;
        if (di.dli_sname && di.dli_saddr)
            snprintf(out, len, "%s+%#lx (%s)", di.dli_sname,
                     (unsigned long)(s->pc - (uintptr_t)di.dli_saddr), obj);
        else
            snprintf(out, len, "%s+%#lx", *obj ? obj : "?",
                     (unsigned long)(s->pc - (uintptr_t)di.dli_fbase));
        return;
    }
    snprintf(out, len, "%#lx", (unsigned long)s->pc);
}

/* UNBLOCK_EXCLUDE: a comma-separated list of MPI function names (MPI_Sendrecv),
 * symbols of the caller (what dladdr finds: exported functions, or any with
 * -rdynamic), or sites as the report names them ("object+0xoff"). */
static int excluded(const unblock_site_t *s, const char *fn_name)
{
    const char *p = unblock_opt.exclude;
    if (p == NULL || *p == '\0')
        return 0;
    char name[256] = "", sym[256] = "";
    unblock_site_name(s, name, sizeof(name));
    Dl_info di;
    if (dladdr((void *)s->pc, &di) && di.dli_sname)
        snprintf(sym, sizeof(sym), "%s", di.dli_sname);
    char *paren = strstr(name, " (");
    if (paren)
        *paren = '\0'; /* "sym+0xoff" */
    while (*p) {
        size_t n = strcspn(p, ",");
        if ((n == strlen(fn_name) && strncmp(p, fn_name, n) == 0) ||
            (sym[0] && n == strlen(sym) && strncmp(p, sym, n) == 0) ||
            (n == strlen(name) && strncmp(p, name, n) == 0))
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* Size class: under 4 KiB, then one per factor of 4 (4-16 KiB, ... 4-16 MiB),
 * then 16 MiB and more. */
static unsigned size_class(size_t bytes)
{
    if (bytes < 4096)
        return 0;
    unsigned log2 = 63u - (unsigned)__builtin_clzll((unsigned long long)bytes);
    unsigned c = (log2 - 12) / 2 + 1;
    return c < UNBLOCK_SITE_CLASSES ? c : UNBLOCK_SITE_CLASSES - 1;
}

static inline unblock_site_t *site_of_handle(int h)
{
    return &unblock_sites[h / UNBLOCK_SITE_CLASSES];
}

static inline unblock_site_class_t *class_of_handle(int h)
{
    return &unblock_sites[h / UNBLOCK_SITE_CLASSES].cls[h % UNBLOCK_SITE_CLASSES];
}

static unsigned site_hash(uintptr_t pc, unsigned fn)
{
    return (unsigned)(((pc >> 3) ^ (pc >> 17) ^ (fn * 0x9e3779b1u)) % UNBLOCK_SITES_MAX);
}

/* The site of (pc, fn), or -1: probing from its hash to the first free slot. */
static int find(uintptr_t pc, unsigned fn)
{
    unsigned h = site_hash(pc, fn);
    for (unsigned i = 0; i < UNBLOCK_SITES_MAX; i++) {
        unsigned k = (h + i) % UNBLOCK_SITES_MAX;
        uintptr_t cur = __atomic_load_n(&unblock_sites[k].pc, __ATOMIC_ACQUIRE);
        if (cur == pc && unblock_sites[k].fn == fn)
            return (int)k;
        if (cur == 0)
            return -1;
    }
    return -1;
}

static int lookup(uintptr_t pc, unsigned fn, const char *fn_name)
{
    int found = find(pc, fn);
    if (found >= 0)
        return found;
    /* Not there: create it, under the lock, looking again (another thread may
     * have created it meanwhile). */
    slock(&create_lock);
    unsigned h = site_hash(pc, fn);
    for (unsigned i = 0; i < UNBLOCK_SITES_MAX; i++) {
        unsigned k = (h + i) % UNBLOCK_SITES_MAX;
        uintptr_t cur = __atomic_load_n(&unblock_sites[k].pc, __ATOMIC_ACQUIRE);
        if (cur == pc && unblock_sites[k].fn == fn) {
            sunlock(&create_lock);
            return (int)k;
        }
        if (cur != 0)
            continue;
        unblock_site_t *s = &unblock_sites[k];
        s->fn = fn;
        s->fn_name = fn_name;
        s->pc = pc; /* for excluded(); published below */
        s->excluded = (uint32_t)excluded(s, fn_name);
        uint32_t seed[UNBLOCK_SITE_CLASSES];
        unblock_profile_seed(pc, fn_name, seed);
        for (int c = 0; c < UNBLOCK_SITE_CLASSES; c++) {
            int decided = seed[c] == UNBLOCK_SITE_CONVERT || seed[c] == UNBLOCK_SITE_PASS;
            s->cls[c].seed = s->excluded || !decided ? 0 : seed[c];
            s->cls[c].known = seed[c] != 0;
            s->cls[c].decision = s->excluded ? UNBLOCK_SITE_EXCLUDED
                               : decided     ? seed[c] : UNBLOCK_SITE_EXPLORE;
        }
        __atomic_store_n(&s->pc, pc, __ATOMIC_RELEASE);
        sunlock(&create_lock);
        return (int)k;
    }
    sunlock(&create_lock);
    return -1; /* full */
}

int unblock_site_of(uintptr_t pc, unsigned fn, const char *fn_name, size_t bytes)
{
    if (pc == 0)
        return -1;
    int k = lookup(pc, fn, fn_name);
    return k < 0 ? -1 : k * UNBLOCK_SITE_CLASSES + (int)size_class(bytes);
}

UNBLOCK_TLS unblock_site_memo_t unblock_site_memo;

/* The calls after this one of class c that may take the quick path: up to
 * the next one the full path must time (every UNBLOCK_SITE_SAMPLE-th call of
 * the class) or recheck (c->next_check).  Under the site's lock, by the full
 * path. */
static void quick_open(unblock_site_class_t *c)
{
    uint64_t calls = __atomic_load_n(&c->calls, __ATOMIC_RELAXED);
    uint64_t stop = (calls / UNBLOCK_SITE_SAMPLE + 1) * UNBLOCK_SITE_SAMPLE;
    if (unblock_opt.predict_recheck && c->next_check < stop)
        stop = c->next_check;
    __atomic_store_n(&c->quick_left, stop > calls + 1 ? (uint32_t)(stop - calls - 1) : 0,
                     __ATOMIC_RELAXED);
}

/* A call the memo does not hold: its site looked up, and its class remembered,
 * in the way that held another class of the site, else in turn. */
static __attribute__((noinline)) int pass_quick_find(uintptr_t pc, unsigned fn, size_t bytes)
{
    int k = pc == 0 ? -1 : find(pc, fn);
    if (k < 0)
        return -1; /* a new site: the full path creates it */
    unblock_site_memo_t *m = &unblock_site_memo;
    unsigned cl = size_class(bytes), w;
    for (w = 0; w < UNBLOCK_SITE_MEMO_WAYS; w++)
        if (m->w[w].pc == pc && m->w[w].fn == fn)
            break;
    if (w == UNBLOCK_SITE_MEMO_WAYS)
        w = m->next++ % UNBLOCK_SITE_MEMO_WAYS;
    /* Class 0 is under 4 KiB, class k > 0 from 4 KiB << 2(k-1) to 4 KiB << 2k,
     * the last one has no end (size_class). */
    size_t lo = cl == 0 ? 0 : (size_t)4096 << (2 * (cl - 1));
    size_t span = cl == 0 ? 4096 : cl == UNBLOCK_SITE_CLASSES - 1 ? (size_t)0 - lo : 3 * lo;
    m->w[w].pc = pc, m->w[w].fn = fn, m->w[w].lo = lo, m->w[w].span = span;
    m->w[w].s = &unblock_sites[k], m->w[w].c = &unblock_sites[k].cls[cl];
    m->w[w].h = k * UNBLOCK_SITE_CLASSES + (int)cl;
    return unblock_site_pass_in(unblock_tls.count_slab, m->w[w].s, m->w[w].c, m->w[w].h);
}

int unblock_site_pass_quick(uintptr_t pc, unsigned fn, size_t bytes)
{
    unblock_counter_t *counts = unblock_tls.count_slab;
    if (counts == NULL)
        return -1; /* the thread's first count: the full path makes its slab */
    int h = unblock_site_pass_memo(counts, pc, fn, bytes);
    return h != UNBLOCK_SITE_MEMO_MISS ? h : pass_quick_find(pc, fn, bytes);
}

void unblock_site_refused(int h, unsigned why)
{
    if (h < 0 || !unblock_opt.predict)
        return;
    unblock_site_t *s = site_of_handle(h);
    unblock_site_class_t *c = class_of_handle(h);
    slock(&s->lock);
    __atomic_store_n(&c->quick_why, (uint8_t)why, __ATOMIC_RELAXED);
    if (c->check_every == 0)
        c->next_check = UINT64_MAX; /* exploring: no recheck is due (set when steady) */
    quick_open(c);
    sunlock(&s->lock);
}

static void add(uint64_t *sum, uint64_t *n, uint64_t ns, int count)
{
    *sum += ns;
    if (count && ++*n >= 64) {
        *sum /= 2;
        *n /= 2;
    }
}

/* Everything the program waited in timed calls so far (the timeline's exposed
 * time): the classes' periods are differences of it.  A period in which another
 * class explored or rechecked (unsteady_calls moved) says nothing about this
 * one's choice and is left out. */
static uint64_t exposed_total, unsteady_calls;

/* The blocking cost: calls that ran blocking, and the start-to-completion times
 * of converted operations (what the original call would have waited) together. */
static void decide(unblock_site_class_t *c)
{
    /* Real blocking calls when there are some (the estimate runs high by the
     * completion thread's polling delay), else the estimates. */
    uint64_t bn = c->pass_n ? c->pass_n : c->est_n, bns = c->pass_n ? c->pass_ns : c->est_ns;
    if (c->conv_n < EXPLORE_CALLS || bn == 0) {
        c->decision = UNBLOCK_SITE_EXPLORE;
        return;
    }
    /* conv_ns/conv_n < bns/bn * (100 - margin)/100, without division */
    unsigned __int128 conv = (unsigned __int128)c->conv_ns * bn * 100;
    unsigned __int128 pass = (unsigned __int128)bns * c->conv_n *
                             (100 - (unblock_opt.predict_margin < 100 ? unblock_opt.predict_margin : 99));
    c->decision = conv < pass ? UNBLOCK_SITE_CONVERT : UNBLOCK_SITE_PASS;
    /* ... and only while the periods it starts cost less converted too, by the
     * margin of its own blocking cost, once there are 2 of each: a wait moved to
     * the next call is not a gain. */
    if (c->decision == UNBLOCK_SITE_CONVERT && c->period_n[0] >= 2 && c->period_n[1] >= 2 &&
        (double)c->period_ns[1] / (double)c->period_n[1] +
                (double)unblock_opt.predict_margin / 100 * (double)bns / (double)bn >=
            (double)c->period_ns[0] / (double)c->period_n[0])
        c->decision = UNBLOCK_SITE_PASS;
}

int unblock_site_convert(int h)
{
    if (h < 0)
        return 1;
    unblock_site_t *s = site_of_handle(h);
    unblock_site_class_t *c = class_of_handle(h);
    if (s->excluded)
        return 0;
    if (!unblock_opt.predict)
        return 1;
    slock(&s->lock);
    uint64_t calls = __atomic_add_fetch(&c->calls, 1, __ATOMIC_RELAXED);
    int conv;
    if (c->rechecking) {
        /* The last recheck, made at the longest distance, against the mean of
         * the way the class runs (by the decision's margin): cheaper, and the
         * next one comes soon, the ones after it doubling again.  Only from
         * the longest distance: a conversion whose call costs little but whose
         * periods cost more (a wait moved to the next call) keeps the decision
         * and would bring every recheck back to the shortest (under valgrind's
         * clock an 8 KiB MPI_Sendrecv to itself did: one every 64 calls); so
         * it makes 7 in 8,128 calls, about the old 1 in 1,024. */
        c->rechecking = 0;
        uint32_t base = (uint32_t)unblock_opt.predict_recheck;
        uint64_t n = c->decision == UNBLOCK_SITE_PASS ? c->pass_n : c->conv_n;
        uint64_t ns = c->decision == UNBLOCK_SITE_PASS ? c->pass_ns : c->conv_ns;
        uint64_t margin = unblock_opt.predict_margin < 100 ? unblock_opt.predict_margin : 99;
        if (base && c->check_every >= base * RECHECK_BACKOFF_MAX && n &&
            (unsigned __int128)c->recheck_ns * n * 100 < (unsigned __int128)ns * (100 - margin)) {
            c->check_every = base;
            c->next_check = calls - 1 + base;
        }
    }
    uint64_t waited = __atomic_load_n(&exposed_total, __ATOMIC_RELAXED);
    uint64_t unsteady = __atomic_load_n(&unsteady_calls, __ATOMIC_RELAXED);
    /* (A period that spans calls of the quick path is not one period.) */
    if (calls > 1 && unsteady == c->period_umark && __atomic_load_n(&c->quick, __ATOMIC_RELAXED) == 0)
        add(&c->period_ns[c->period_last], &c->period_n[c->period_last], waited - c->period_mark, 1);
    c->period_mark = waited;
    int steady = 0;
    /* Converted first: what unblock is for; then 2 calls blocking, to measure
     * what the estimates (the converted operations' own times) can only
     * approach; the rechecks keep both current.  A class the profile decided
     * takes that decision at once, until its rechecks have measured both ways. */
    int measured = c->conv_n >= EXPLORE_CALLS && c->pass_n >= EXPLORE_BLOCKING;
    if (!c->seed && c->conv_n < EXPLORE_CALLS) {
        conv = 1;
    } else if (!c->seed && c->pass_n < EXPLORE_BLOCKING) {
        conv = 0;
    } else {
        if (measured)
            decide(c);
        else
            c->decision = c->seed;
        conv = c->decision == UNBLOCK_SITE_CONVERT;
        steady = 1;
        uint32_t base = (uint32_t)unblock_opt.predict_recheck;
        if (c->check_every == 0 || c->decision != c->checked_decision) {
            /* the first decision, or a changed one: look again soon */
            c->check_every = base;
            c->checked_decision = c->decision;
            c->next_check = calls + base;
        }
        if (base && calls >= c->next_check) {
            /* A recheck costs a call the worse way: each one that changes
             * nothing makes the next come twice as late. */
            conv = !conv;
            steady = 0;
            if (c->check_every < base * RECHECK_BACKOFF_MAX)
                c->check_every *= 2;
            c->next_check = calls + c->check_every;
            c->rechecking = 1;
            c->recheck_ns = 0;
        }
    }
    c->period_last = (uint8_t)conv;
    c->quick_why = UNBLOCK_PASS_predicted;
    if (steady && !conv && c->decision == UNBLOCK_SITE_PASS)
        quick_open(c);
    else
        __atomic_store_n(&c->quick_left, 0, __ATOMIC_RELAXED);
    if (!steady)
        unsteady = __atomic_add_fetch(&unsteady_calls, 1, __ATOMIC_RELAXED);
    c->period_umark = unsteady;
    sunlock(&s->lock);
    return conv;
}

static uint64_t wanted_thread;

void unblock_site_no_thread(int h)
{
    if (h >= 0 && !class_of_handle(h)->known)
        __atomic_add_fetch(&wanted_thread, 1, __ATOMIC_RELAXED);
}

uint64_t unblock_sites_gain_ns(void)
{
    uint64_t gain = 0;
    for (unsigned k = 0; k < UNBLOCK_SITES_MAX; k++) {
        unblock_site_t *s = &unblock_sites[k];
        if (__atomic_load_n(&s->pc, __ATOMIC_ACQUIRE) == 0)
            continue;
        slock(&s->lock);
        for (int c = 0; c < UNBLOCK_SITE_CLASSES; c++) {
            const unblock_site_class_t *x = &s->cls[c];
            if (x->hidden_ns > 0)
                gain += (uint64_t)x->hidden_ns;
            else if (x->pass_n == 0 && x->est_n && x->conv_n) {
                uint64_t est = x->est_ns / x->est_n, conv = x->conv_ns / x->conv_n;
                if (est > conv)
                    gain += (est - conv) * x->converted;
            }
        }
        sunlock(&s->lock);
    }
    return gain;
}

uint64_t unblock_sites_wanted_thread(void)
{
    return __atomic_load_n(&wanted_thread, __ATOMIC_RELAXED);
}

uint32_t unblock_site_decision(int h)
{
    return h < 0 ? UNBLOCK_SITE_EXPLORE : class_of_handle(h)->decision;
}

int unblock_site_summary(const unblock_site_t *s)
{
    if (s->excluded)
        return UNBLOCK_SITE_EXCLUDED;
    int d = -2;
    for (int c = 0; c < UNBLOCK_SITE_CLASSES; c++) {
        if (s->cls[c].calls == 0)
            continue;
        if (d == -2)
            d = (int)s->cls[c].decision;
        else if (d != (int)s->cls[c].decision)
            return -1;
    }
    return d == -2 ? UNBLOCK_SITE_EXPLORE : d;
}

void unblock_site_converted_totals(const unblock_site_t *s, uint64_t *calls, uint64_t *ns)
{
    *calls = *ns = 0;
    for (int c = 0; c < UNBLOCK_SITE_CLASSES; c++) {
        *calls += s->cls[c].converted;
        *ns += s->cls[c].conv_total_ns;
    }
}

/* The blocking mean of a class that has one (pass_n > 0), under the site lock. */
static inline int64_t blocking_mean(const unblock_site_class_t *c)
{
    return (int64_t)(c->pass_ns / c->pass_n);
}

void unblock_site_passed(int h, uint64_t t0, uint64_t t1)
{
    if (h < 0)
        return;
    unblock_site_t *s = site_of_handle(h);
    unblock_site_class_t *c = class_of_handle(h);
    uint64_t ns = t1 - t0;
    int64_t hidden = 0;
    /* This call stands for the quick ones since the last timed one too. */
    uint64_t weight = 1 + __atomic_exchange_n(&c->quick, 0, __ATOMIC_RELAXED);
    slock(&s->lock);
    __atomic_add_fetch(&s->passed, 1, __ATOMIC_RELAXED);
    s->pass_total_ns += ns * weight;
    if (c->rechecking)
        c->recheck_ns += ns;
    int first = c->pass_n == 0;
    add(&c->pass_ns, &c->pass_n, ns, 1);
    if (first && c->converted) {
        /* The calls converted while there was no blocking mean yet (the first 3
         * of a class, exploring): credited now, at the first one. */
        hidden = (int64_t)c->converted * blocking_mean(c) - (int64_t)c->conv_total_ns;
        c->hidden_ns += hidden;
    }
    sunlock(&s->lock);
    unblock_timeline_add(t1, ns * weight, hidden);
}

/* The last waits this thread reported (start, length).  A converted call can
 * wait inside itself for an operation of another site, when its buffer shares a
 * page with one in flight: that wait is the other site's, reported as such, and
 * must not count a second time in this call (nor twice in the timeline).  A
 * blocking call starts its clock after such waits (before_blocking), so leaving
 * them out of converted calls compares the two alike. */
#define RECENT_WAITS 8
static UNBLOCK_TLS struct {
    uint64_t t0, ns;
} recent_waits[RECENT_WAITS];
static UNBLOCK_TLS unsigned recent_next;

static uint64_t waited_within(uint64_t t0, uint64_t t1)
{
    uint64_t in = 0;
    for (unsigned i = 0; i < RECENT_WAITS; i++)
        if (recent_waits[i].ns && recent_waits[i].t0 >= t0 &&
            recent_waits[i].t0 + recent_waits[i].ns <= t1)
            in += recent_waits[i].ns;
    return in;
}

void unblock_site_converted(int h, uint64_t t0, uint64_t t1, uint64_t bytes)
{
    if (h < 0)
        return;
    unblock_site_t *s = site_of_handle(h);
    unblock_site_class_t *c = class_of_handle(h);
    uint64_t in = waited_within(t0, t1);
    uint64_t ns = t1 - t0 > in ? t1 - t0 - in : 0;
    int64_t hidden = 0;
    slock(&s->lock);
    s->bytes += bytes;
    c->converted++;
    c->conv_total_ns += ns;
    if (c->rechecking)
        c->recheck_ns += ns;
    add(&c->conv_ns, &c->conv_n, ns, 1);
    if (c->pass_n) {
        hidden = blocking_mean(c) - (int64_t)ns;
        c->hidden_ns += hidden;
    }
    sunlock(&s->lock);
    unblock_timeline_add(t1, ns, hidden);
}

void unblock_site_estimated(int h, uint64_t ns)
{
    if (h < 0 || h >= UNBLOCK_SITES_MAX * UNBLOCK_SITE_CLASSES)
        return;
    unblock_site_t *s = site_of_handle(h);
    unblock_site_class_t *c = class_of_handle(h);
    slock(&s->lock);
    add(&c->est_ns, &c->est_n, ns, 1);
    sunlock(&s->lock);
}

void unblock_site_protected(int h, int fault)
{
    if (h < 0 || h >= UNBLOCK_SITES_MAX * UNBLOCK_SITE_CLASSES)
        return;
    unblock_site_t *s = site_of_handle(h);
    __atomic_add_fetch(fault ? &s->protected_faults : &s->protected_sends, 1, __ATOMIC_RELAXED);
}

int unblock_site_prefers_copy(int h)
{
    if (h < 0)
        return 0;
    const unblock_site_t *s = site_of_handle(h);
    uint64_t sends = __atomic_load_n(&s->protected_sends, __ATOMIC_RELAXED);
    return sends >= 2 && 2 * __atomic_load_n(&s->protected_faults, __ATOMIC_RELAXED) >= sends;
}

void unblock_site_copies(int h)
{
    if (h < 0 || h >= UNBLOCK_SITES_MAX * UNBLOCK_SITE_CLASSES)
        return;
    unblock_site_t *s = site_of_handle(h);
    unblock_site_class_t *c = class_of_handle(h);
    if (__atomic_load_n(&c->copies, __ATOMIC_RELAXED))
        return;
    slock(&s->lock);
    if (!c->copies) {
        c->copies = 1;
        c->conv_ns = c->conv_n = 0;
        c->period_ns[1] = c->period_n[1] = 0;
        c->seed = 0;        /* (a profile's decision was made of the same waits) */
        c->check_every = 0; /* decided afresh once explored */
    }
    sunlock(&s->lock);
}

/* Called from the fault handler too: the lock is only ever held for a few
 * instructions, and never by a thread that could be interrupted by our own fault
 * while holding it (no memory an operation owns is touched under it). */
void unblock_site_waited(int h, uint64_t t0, uint64_t t1, int fault)
{
    if (h < 0 || h >= UNBLOCK_SITES_MAX * UNBLOCK_SITE_CLASSES)
        return;
    unblock_site_t *s = site_of_handle(h);
    unblock_site_class_t *c = class_of_handle(h);
    uint64_t ns = t1 - t0;
    int64_t hidden = 0;
    if (ns) {
        unsigned i = recent_next++ % RECENT_WAITS;
        recent_waits[i].t0 = t0;
        recent_waits[i].ns = ns;
    }
    if (fault)
        ns += FAULT_NS;
    slock(&s->lock);
    s->faults += (unsigned)fault;
    c->conv_total_ns += ns;
    if (c->rechecking)
        c->recheck_ns += ns;
    add(&c->conv_ns, &c->conv_n, ns, 0);
    if (c->pass_n) { /* (without a mean yet: in the credit of the first blocking call) */
        hidden = -(int64_t)ns;
        c->hidden_ns += hidden;
    }
    sunlock(&s->lock);
    unblock_timeline_add(t1, ns, hidden);
}

/* ---- the timeline ----
 *
 * What the reader gets (unblock_timeline_read) is UNBLOCK_TIMELINE_BUCKETS buckets
 * of equal width from the start, the width doubled and adjacent pairs merged
 * whenever the run outgrows them.  Merging in place while other threads add would
 * take a lock on every add: an add that chose its bucket just before a merge would
 * land in a bucket that now means another interval.  So each width keeps the
 * buckets that only it has, and the reader does the merging: width 1 ms (level 0)
 * has all 64 buckets, 0-64 ms; width 2^k ms (level k >= 1) has its buckets 32-63,
 * 2^(k+5)-2^(k+6) ms, since its first 32 are level k-1's merged in pairs.  An add
 * goes to the finest width whose buckets reach its time: a division by a constant
 * (a multiply), a count of leading zeros, relaxed atomic adds, nothing shared
 * besides the bucket.  32 levels reach 2^37 ms (4 years; later times land in the
 * last bucket) in 1056 buckets, 17 KiB. */
#define TL_N UNBLOCK_TIMELINE_BUCKETS
#define TL_HALF (TL_N / 2)
#define TL_LOG2N 6 /* log2(TL_N) */
#define TL_LEVELS 32
#define TL_SLOTS (TL_N + (TL_LEVELS - 1) * TL_HALF)
_Static_assert(1 << TL_LOG2N == TL_N, "TL_LOG2N");

typedef struct {
    uint64_t exposed;
    int64_t hidden;
} tl_bucket_t;

static tl_bucket_t tl[TL_SLOTS];
static uint64_t tl_t0;

void unblock_timeline_start(uint64_t t0)
{
    for (unsigned s = 0; s < TL_SLOTS; s++) /* (reading leaves untouched pages unmapped) */
        if (tl[s].exposed || tl[s].hidden)
            tl[s].exposed = 0, tl[s].hidden = 0;
    tl_t0 = t0;
}

/* The slot of the bucket holding time t (ns since the start), and that bucket's
 * end (ns since the start). */
static unsigned tl_slot(uint64_t t, uint64_t *end)
{
    uint64_t q = t / UNBLOCK_TIMELINE_WIDTH0_NS;
    if (q < TL_N) {
        *end = (q + 1) * UNBLOCK_TIMELINE_WIDTH0_NS;
        return (unsigned)q;
    }
    unsigned level = (unsigned)(64 - __builtin_clzll(q)) - TL_LOG2N; /* q >> level in [32, 64) */
    if (level >= TL_LEVELS) {
        *end = UINT64_MAX;
        return TL_SLOTS - 1;
    }
    uint64_t i = q >> level;
    *end = ((i + 1) << level) * UNBLOCK_TIMELINE_WIDTH0_NS;
    return TL_N + (level - 1) * TL_HALF + (unsigned)(i - TL_HALF);
}

static void tl_slot_place(unsigned slot, unsigned *level, unsigned *index)
{
    if (slot < TL_N) {
        *level = 0;
        *index = slot;
    } else {
        *level = 1 + (slot - TL_N) / TL_HALF;
        *index = TL_HALF + (slot - TL_N) % TL_HALF;
    }
}

void unblock_timeline_add(uint64_t t1, uint64_t exposed_ns, int64_t hidden_ns)
{
    if (exposed_ns == 0 && hidden_ns == 0)
        return;
    if (exposed_ns)
        __atomic_fetch_add(&exposed_total, exposed_ns, __ATOMIC_RELAXED);
    uint64_t b = t1 > tl_t0 ? t1 - tl_t0 : 0;
    uint64_t a = b > exposed_ns ? b - exposed_ns : 0;
    uint64_t left = exposed_ns; /* (more than b - a when the wait began before the start) */
    for (;;) {
        uint64_t end;
        tl_bucket_t *k = &tl[tl_slot(a, &end)];
        if (end >= b) { /* the last bucket: the rest, and the hidden time */
            if (left)
                __atomic_fetch_add(&k->exposed, left, __ATOMIC_RELAXED);
            if (hidden_ns)
                __atomic_fetch_add(&k->hidden, hidden_ns, __ATOMIC_RELAXED);
            return;
        }
        __atomic_fetch_add(&k->exposed, end - a, __ATOMIC_RELAXED);
        left -= end - a;
        a = end;
    }
}

unsigned unblock_timeline_read(uint64_t now, uint64_t *width_ns, int64_t hidden[TL_N],
                               uint64_t exposed[TL_N])
{
    uint64_t end;
    unsigned last = tl_slot(now > tl_t0 ? now - tl_t0 : 0, &end);
    /* (an add stamped after `now`, by a thread still running, extends it) */
    for (unsigned s = TL_SLOTS - 1; s > last; s--)
        if (__atomic_load_n(&tl[s].exposed, __ATOMIC_RELAXED) ||
            __atomic_load_n(&tl[s].hidden, __ATOMIC_RELAXED)) {
            last = s;
            break;
        }
    unsigned top, n;
    tl_slot_place(last, &top, &n);
    for (unsigned level = 0; level <= top; level++) {
        unsigned from = 0, slot = 0;
        if (level > 0) { /* the width doubles: merge adjacent pairs */
            for (unsigned i = 0; i < TL_HALF; i++) {
                hidden[i] = hidden[2 * i] + hidden[2 * i + 1];
                exposed[i] = exposed[2 * i] + exposed[2 * i + 1];
            }
            from = TL_HALF;
            slot = TL_N + (level - 1) * TL_HALF;
        }
        for (unsigned i = from; i < TL_N; i++, slot++) {
            hidden[i] = __atomic_load_n(&tl[slot].hidden, __ATOMIC_RELAXED);
            exposed[i] = __atomic_load_n(&tl[slot].exposed, __ATOMIC_RELAXED);
        }
    }
    *width_ns = UNBLOCK_TIMELINE_WIDTH0_NS << top;
    return n + 1;
}
