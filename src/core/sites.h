/* sites.h — call sites and the predictor that decides, per site and message
 * size, whether a blocking call runs in the background or as the original call
 * (sites.c).
 *
 * A site is the return address into the program plus the intercepted function;
 * its calls are told apart by size class (under 4 KiB, then factors of 4 up to
 * 16 MiB and more), since one call site in a loop over sizes behaves differently
 * at each.  For each class the runtime keeps what the original call cost when it
 * ran blocking and what a converted call cost the program: its time in the call
 * (issuing, copying, protecting) plus every wait it caused later (a fault on its
 * pages, a call that had to finish it, the unprotect).  A class whose converted
 * calls do not cost clearly less than its blocking ones runs as the original
 * call; every UNBLOCK_PREDICT_RECHECK calls it tries the other way once, so a
 * change of behaviour is noticed.  The same costs make the per-site report.
 *
 * The functions take a handle: site index * UNBLOCK_SITE_CLASSES + size class. */
#ifndef UNBLOCK_SITES_H
#define UNBLOCK_SITES_H

#include "core/core.h"
#include "core/counts.h"

#include <stdint.h>

#define UNBLOCK_SITES_MAX 256
#define UNBLOCK_SITE_CLASSES 8

enum { UNBLOCK_SITE_EXPLORE = 0, UNBLOCK_SITE_CONVERT, UNBLOCK_SITE_PASS, UNBLOCK_SITE_EXCLUDED,
       UNBLOCK_SITE_SEEN /* (profile seeds only: called before, never decided) */ };

typedef struct {
    uint32_t decision;       /* UNBLOCK_SITE_* */
    uint32_t seed;           /* the decision the program's profile had (0: none):
                              * taken from the first call, without exploring */
    uint32_t known;          /* the profile knew the class (decided or not) */
    uint64_t calls;
    /* Costs in ns, halved with their counts every 64 samples (recent calls weigh
     * more): blocking calls, and converted calls (time in the call + waits later). */
    uint64_t pass_ns, pass_n, conv_ns, conv_n;
    /* What converted operations took from start to completion: about what the
     * original call would have waited, measured without running it. */
    uint64_t est_ns, est_n;
    uint64_t converted, conv_total_ns; /* never halved: for the report */
    /* The next call that tries the other way, and the distance to the one after:
     * UNBLOCK_PREDICT_RECHECK, doubled (up to 64 times) by each recheck that
     * leaves the decision as it was, and back to it when the decision changes
     * or when a recheck made at the longest distance cost less than the
     * class's way costs on average (the other way may have become the cheaper:
     * the next rechecks come soon, and their samples move its mean). */
    uint64_t next_check;
    uint32_t check_every, checked_decision;
    uint8_t rechecking;      /* the last call was a recheck, not yet weighed ... */
    uint64_t recheck_ns;     /* ... and what it cost: in the call, and the waits it
                              * caused until the class's next timed call */
    /* Time hidden: per converted call, the class's blocking mean at that call less
     * what the call cost, and less the waits it caused later (signed: negative
     * when converting cost more).  Calls converted before the class first ran
     * blocking are credited then, at the mean that first blocking call gives.
     * For the report and the timeline. */
    int64_t hidden_ns;
    /* What the program waited in all timed calls (every site) from one call of
     * the class to its next, by the way the first one ran (0: the original call,
     * 1: converted), halved with their counts as the means are.  A conversion
     * can move a wait instead of hiding it: a send to a late peer returns at
     * once, and the program waits that much longer in its next receive.  Its own
     * cost cannot show that; the period's can. */
    uint64_t period_ns[2], period_n[2];
    uint64_t period_mark;    /* the waits' total at the class's last call */
    uint64_t period_umark;   /* ... and the count of calls not run their class's way
                              * (exploring, rechecks) after it */
    uint8_t period_last;     /* how that call ran: 0 or 1 */
    uint32_t quick_left;     /* steady, running the original call, or refused for
                              * a reason that holds (unblock_site_refused): how
                              * many of its next calls may take
                              * unblock_site_pass_quick before the full path must
                              * time one or recheck (0: none) */
    uint8_t quick_why;       /* ... counted as this reason (UNBLOCK_PASS_*) */
    uint64_t quick;          /* calls that took it since the class's last timed call */
    uint8_t copies;          /* unblock_site_copies: its converted sends are copies */
} unblock_site_class_t;

typedef struct {
    uintptr_t pc;            /* 0: free */
    unsigned fn;             /* the intercepted function (its id in the wrapper table) */
    const char *fn_name;     /* ... and its name (a string of that table) */
    uint32_t excluded;       /* UNBLOCK_EXCLUDE names it */
    uint64_t passed, bytes, faults; /* (converted calls: the classes' sum) */
    uint64_t pass_total_ns;       /* for the report */
    unblock_site_class_t cls[UNBLOCK_SITE_CLASSES];
    /* Sends above UNBLOCK_COPY_MAX made read-only, and the faults on them: a site
     * whose buffers are written again at once copies instead. */
    uint64_t protected_sends, protected_faults;
    int lock;
} unblock_site_t;

extern UNBLOCK_HIDDEN unblock_site_t unblock_sites[UNBLOCK_SITES_MAX];

/* The handle of a call from `pc` to function `fn` moving `bytes` (the site is
 * created on first use; -1 when the table is full, and then the call is decided
 * as without a predictor).  `fn`: an MPI function's index, or, for a file call,
 * UNBLOCK_SITE_FILE_FN + its index in the file table; `fn_name` must stay valid
 * for the whole run (the report names the site's function with it). */
#define UNBLOCK_SITE_FILE_FN 0x10000u
int unblock_site_of(uintptr_t pc, unsigned fn, const char *fn_name, size_t bytes);

/* Whether this call should be converted (1) or run as the original call (0;
 * unblock_site_decision then says why). */
int unblock_site_convert(int site);
uint32_t unblock_site_decision(int site);

/* The site's decision for the report: its classes' if they agree, else -1. */
int unblock_site_summary(const unblock_site_t *s);

/* The site's converted calls and what they cost, summed over its classes. */
void unblock_site_converted_totals(const unblock_site_t *s, uint64_t *calls, uint64_t *ns);

/* Accounting, each with the clock readings (unblock_now_ns) the caller took
 * around what it timed, so that the timeline below costs no clock read of its
 * own: a call that ran blocking from t0 to t1; a converted call that spent t0..t1
 * in the call (bytes moved); the program waiting t0..t1 for a converted operation
 * of the site (a fault adds the kernel's part, FAULT_NS, before t0). */
void unblock_site_passed(int site, uint64_t t0, uint64_t t1);
void unblock_site_converted(int site, uint64_t t0, uint64_t t1, uint64_t bytes);
void unblock_site_waited(int site, uint64_t t0, uint64_t t1, int fault);
/* A converted operation of the site took ns from start to completion. */
void unblock_site_estimated(int site, uint64_t ns);

/* A send of the site was made read-only / faulted (the program wrote its buffer
 * while in flight). */
void unblock_site_protected(int site, int fault);

/* 1 when the site's protected sends are mostly written again while in flight
 * (a fault each): copying them costs less than waiting for the receiver. */
int unblock_site_prefers_copy(int site);
/* The site's class copies its converted sends from now on (it preferred copies):
 * what its converted calls cost so far, protected sends that waited at their
 * faults, is forgotten, and the class explores the converted way again, so that
 * the copies are weighed against the original call, not those waits. */
void unblock_site_copies(int site);

/* Names a site for people: "symbol+0xoff (object)" or "object+0xoff". */
void unblock_site_name(const unblock_site_t *s, char *out, unsigned len);

/* The common path of a call whose class runs the original call, steadily (decided,
 * no recheck due), or whose last call was refused for a reason that holds from
 * call to call (unblock_site_refused): the site's handle when the call may go to
 * MPI at once, -1 when it takes the full path.  Such calls are counted (as
 * "predicted", or the refusal's reason: comm.passthrough_why, per thread,
 * core/counts.h), not timed: one in UNBLOCK_SITE_SAMPLE goes the full path,
 * timed, and its time counts for the calls it stands for (the class's totals and
 * the timeline; its mean is of the timed calls); that call also looks again at
 * what refused it.  No lock, no clock: the thread's memo of its last 4 classes
 * (unblock_site_memo below), the class's count of calls left before the full
 * path (quick_left, which the full path sets), three adds without a lock prefix
 * (two threads at one class at once may lose a count).  Until 2026-12-02 each
 * call found the class's index through the memo, its size class by a count of
 * leading zeros, and tested the sample's modulo, the recheck's call and a flag:
 * 63 instructions of a 4 KiB ping-pong's call against 39. */
#define UNBLOCK_SITE_SAMPLE 32
int unblock_site_pass_quick(uintptr_t pc, unsigned fn, size_t bytes);

/* The thread's last classes, for the quick path: a loop calls the same few
 * sites again and again (a ping-pong alternates a send's and a receive's; with
 * one entry each call missed, and the probe cost 25 instructions per call).
 * Each way holds a site's class and the bytes it spans (lo, and span: 0 in a
 * way never filled, which so never matches), so that a call that finds its way
 * needs neither the size class nor the handle's arithmetic.  Filled by
 * unblock_site_pass_quick (sites.c), the way that held another class of the
 * site, else in turn. */
#define UNBLOCK_SITE_MEMO_WAYS 4
typedef struct {
    struct {
        uintptr_t pc;
        size_t lo, span;
        unblock_site_class_t *c;
        unblock_site_t *s;
        unsigned fn;
        int h;
    } w[UNBLOCK_SITE_MEMO_WAYS];
    unsigned next;
} unblock_site_memo_t;
extern UNBLOCK_HIDDEN UNBLOCK_TLS unblock_site_memo_t unblock_site_memo;

/* The quick path at class c of site s, of handle h: h, or -1 for the full
 * path.  Calls nothing, so that a path that inlines it saves no register
 * (always inline: GCC's own choice changed with the generated file's size, a
 * call of it cost the 4 KiB quick path 23 instructions); the
 * caller hands the thread's slab of counts (unblock_tls.count_slab, not NULL:
 * the thread's first count goes the full path, which makes it). */
__attribute__((always_inline)) static inline int
unblock_site_pass_in(unblock_counter_t *counts, unblock_site_t *s, unblock_site_class_t *c, int h)
{
    uint32_t left = __atomic_load_n(&c->quick_left, __ATOMIC_RELAXED);
    if (left == 0)
        return -1; /* not quick, or timed, or a recheck: the full path */
    /* Stores and adds without the lock prefix (core.h: unblock_counter_bump):
     * two threads passing one class at the same instant may lose one, or
     * store a count the full path had just set again (a few more calls quick,
     * or fewer, before the next timed one); they count calls for the report
     * and space the samples and rechecks, nothing that needs every one (three
     * locked adds cost a 4 KiB ping-pong's call about 15 ns here). */
    __atomic_store_n(&c->quick_left, left - 1, __ATOMIC_RELAXED);
    unblock_counter_bump(&c->calls);
    unblock_counter_bump(&c->quick);
    unblock_counter_bump(&s->passed);
    unblock_count_in(counts, UNBLOCK_COUNT_PASS + __atomic_load_n(&c->quick_why, __ATOMIC_RELAXED));
    return h;
}

/* unblock_site_pass_quick as far as the memo goes, with the thread's slab of
 * counts (not NULL): its result when the memo holds the call's class, else
 * UNBLOCK_SITE_MEMO_MISS.  Calls nothing: the generated wrappers try it
 * before their slow part (tools/gen_mpi_wrappers.py, `quick_front`). */
#define UNBLOCK_SITE_MEMO_MISS (-2)
__attribute__((always_inline)) static inline int
unblock_site_pass_memo(unblock_counter_t *counts, uintptr_t pc, unsigned fn, size_t bytes)
{
    unblock_site_memo_t *m = &unblock_site_memo;
#pragma GCC unroll 4
    for (unsigned w = 0; w < UNBLOCK_SITE_MEMO_WAYS; w++)
        if (m->w[w].pc == pc && m->w[w].fn == fn && bytes - m->w[w].lo < m->w[w].span)
            return unblock_site_pass_in(counts, m->w[w].s, m->w[w].c, m->w[w].h);
    return UNBLOCK_SITE_MEMO_MISS;
}

/* The call the class would have converted was refused for `why`, a reason its
 * next calls will most likely share (memory that is never protected: a small
 * block, the stack; no completion thread at the program's level): they take the
 * quick path until the next sampled call, which decides again. */
void unblock_site_refused(int h, unsigned why);

/* A call the site's class would have converted, refused because no completion
 * thread runs (the program's own thread level): counted when the class has no
 * decision from the profile, so the next run asks for the thread again. */
void unblock_site_no_thread(int site);
uint64_t unblock_sites_wanted_thread(void);

/* What converted calls hid in all, in ns: each class's positive hidden time, and
 * for a class that never ran blocking, its operations' own times less what its
 * converted calls cost. */
uint64_t unblock_sites_gain_ns(void);

/* The timeline: the run from the library's start cut into UNBLOCK_TIMELINE_BUCKETS
 * phases of equal width (1 ms, doubled, adjacent pairs merged, whenever the run
 * outgrows them), with per phase the time the program waited in timed calls
 * (exposed) and the time conversions hid (the sites' hidden_ns), in ns.  The
 * accounting above feeds it; memory is fixed and the whole run is covered. */
#define UNBLOCK_TIMELINE_BUCKETS 64
#define UNBLOCK_TIMELINE_WIDTH0_NS 1000000ull

/* Empties the timeline and starts it at `t0` (unblock_now_ns; the constructor). */
void unblock_timeline_start(uint64_t t0);

/* Adds `exposed_ns` of waiting that ended at `t1` (spread over the phases it
 * spans, back from t1) and `hidden_ns` at t1.  Lock-free; any thread, also the
 * fault handler. */
void unblock_timeline_add(uint64_t t1, uint64_t exposed_ns, int64_t hidden_ns);

/* The timeline up to `now`, at the width that holds it in UNBLOCK_TIMELINE_BUCKETS
 * phases: the phase width in *width_ns, per phase the hidden and exposed ns.
 * Returns the number of phases filled in (the one holding `now` is the last). */
unsigned unblock_timeline_read(uint64_t now, uint64_t *width_ns,
                               int64_t hidden[UNBLOCK_TIMELINE_BUCKETS],
                               uint64_t exposed[UNBLOCK_TIMELINE_BUCKETS]);

#endif
