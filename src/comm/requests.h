/* requests.h — the program's own nonblocking requests, checked against ours.
 *
 * A request the program starts itself (MPI_Isend, MPI_Irecv, MPI_Imrecv,
 * persistent requests once started, nonblocking collectives, MPI-IO's nonblocking
 * calls) keeps its buffer in MPI's hands until the program completes it.  So:
 *   - before it starts, converted operations on its memory finish first (MPI must
 *     not meet inaccessible or read-only pages, and the program's order holds);
 *   - while it is pending, a converted receive never makes its pages inaccessible
 *     (the receive runs blocking) and a converted send never makes read-only the
 *     pages MPI may be writing for it (the send is copied instead).
 * Requests are recorded with their buffer (the span is computed only when a
 * conversion asks) and forgotten when a wait or test call completes them.
 * From Fortran too (fortran_own.c), by their Fortran handles
 * (unblock_own_fkey).  A request the runtime cannot follow (a persistent or
 * collective one started from Fortran, a split collective, more than 256 at
 * once) makes every later receive run blocking and every send be copied, for
 * the rest of the run: the behaviour before this tracking existed. */
#ifndef UNBLOCK_REQUESTS_H
#define UNBLOCK_REQUESTS_H

#include <mpi.h>
#include <stdint.h>

#include "comm/datatype.h" /* unblock_dt_generation */
#include "core/core.h"
#include "core/counts.h"
#include "core/options.h" /* unblock_opt.own_progress */

/* One buffer of a call: `writes` when MPI writes it (a receive), `everything`
 * when the call's buffers are not described (a nonblocking collective).  Set by
 * unblock_conv_buffers: `view`, what to add to `buf` before handing it to MPI
 * (multiview: the pool's runtime view, else 0), and `unknown` (its datatype or
 * group was not known yet: learnt once the call succeeds).  `group`, when not
 * NULL: `count` is per process of that communicator's group (the remote
 * group of an intercommunicator), whose size is taken from what the runtime has
 * learnt, never asked of MPI before the call (an invalid handle gets MPI's own
 * error from the call itself). */
typedef struct {
    const void *buf;
    long long count;
    MPI_Datatype type;
    int writes, everything;
    const MPI_Comm *group; /* count is per process of its (remote) group, or NULL */
    intptr_t view;
    int unknown;
    /* The v-collectives (`vec`): `counts` (with `group`) is an array, one count
     * per process, and `displs` their displacements in instances of `type` (NULL: the
     * blocks follow each other; `mine`: only this process's block, at `buf`);
     * `wide`: MPI_Count counts and MPI_Aint displacements (the _c forms).  With
     * `at_root`, the buffer means something only at `root` (elsewhere its arrays
     * may be anything, and it is skipped). */
    const void *counts, *displs;
    int vec, wide, mine, at_root, root;
} unblock_own_buf_t;

/* Before MPI reads or writes the described buffers (a blocking collective, an
 * MPI-IO call, another send mode, a request of the program's own): what owns
 * their bytes finishes first.  A buffer all in the pool is handed to MPI on the
 * runtime view, whose pages are never protected, so only operations on the same
 * bytes finish (in the program's order); others wait for what owns their pages;
 * a buffer of a datatype not known yet makes everything finish.  MPI_IN_PLACE and
 * empty buffers are skipped.  After the call, unblock_conv_buffers_done learns
 * the datatypes the call proved valid. */
void unblock_conv_buffers(unblock_own_buf_t *b, int n);
void unblock_conv_buffers_done(const unblock_own_buf_t *b, int n, int rc);

/* After a nonblocking or persistent-init call of the program (C binding), whose
 * buffers went through unblock_conv_buffers first.  `pc`: the program's call
 * site (whether its requests are worth driving is learned per site). */
void unblock_own_after(const unblock_own_buf_t *b, int n, int rc, const MPI_Request *req,
                       int persistent, uintptr_t pc);

/* The same for a call of one buffer that took the generated wrappers' own fast
 * path (nothing in flight, no pool: no unblock_conv_buffers was needed). */
void unblock_own_logged(const void *buf, long long count, MPI_Datatype type, int writes, int rc,
                        const MPI_Request *req, uintptr_t pc);

/* A request of the program's, as requests.c follows it. */
typedef struct {
    MPI_Request req;
    const void *buf;
    long long count;
    MPI_Datatype type;
    uint64_t gen;             /* unblock_dt_generation when it started */
    uintptr_t lo, hi;         /* its span, once known */
    unsigned char used, active, writes, everything, persistent, detached, span_known;
    unsigned char viewed;     /* MPI has its buffer on the pool's runtime view */
    unsigned char complete;   /* the completion thread saw it complete (not yet waited) */
    unsigned char drive;      /* large enough for the completion thread to drive it */
    unsigned char ftype;      /* `type` is a Fortran handle (UNBLOCK_OWN_FTYPE) */
    uint64_t t_start;         /* when it started (driven ones: how fast to poll) */
    uintptr_t pc;             /* the program's call that started it (driven ones) */
} unblock_own_t;

/* The log of the program's small requests (requests.c says when it is used),
 * here so that the generated wrappers append to it inline: a call of
 * unblock_own_logged, its seventh argument on the stack, and its checks again
 * were about 30 instructions of each start. */
#define UNBLOCK_OWN_LOG_MAX 32
extern UNBLOCK_HIDDEN unblock_own_t unblock_own_log[UNBLOCK_OWN_LOG_MAX];
extern UNBLOCK_HIDDEN unsigned unblock_own_log_n;
extern UNBLOCK_HIDDEN uint32_t unblock_own_entries;

/* A first run's trial of following (UNBLOCK_OWN_TRIAL; requests.c,
 * unblock_own_trial_start): the log's requests left before it ends, which
 * unblock_own_trial_end decides; out of a trial, more than a run ever starts
 * (a subtraction from memory and a jump of every start logged). */
extern UNBLOCK_HIDDEN uint64_t unblock_own_trial_left;
void unblock_own_trial_end(void);

/* Whether the program has requests followed, in the log or the table: when
 * not, a completion call is MPI's alone (the generated wrappers test this
 * and call the completion functions below only when it holds). */
static inline int unblock_own_tracking(void)
{
    return (__atomic_load_n(&unblock_own_entries, __ATOMIC_ACQUIRE) |
            __atomic_load_n(&unblock_own_log_n, __ATOMIC_ACQUIRE)) != 0;
}

/* Whether the log may take a request: one program thread, an empty table,
 * room.  (Its buffer must also be too small to drive: requests.c,
 * worth_driving.) */
__attribute__((always_inline)) static inline int unblock_own_log_fits(void)
{
    return unblock_own_log_n < UNBLOCK_OWN_LOG_MAX &&
           __atomic_load_n(&unblock_own_entries, __ATOMIC_RELAXED) == 0 &&
           __atomic_load_n(&unblock_g.program_threads, __ATOMIC_SEQ_CST) == 0;
}

/* Appends a request to the log (the caller checked that it fits); `ftype`:
 * `type` is a Fortran handle (UNBLOCK_OWN_FTYPE). */
__attribute__((always_inline)) static inline void unblock_own_log_put(MPI_Request h, const void *buf, long long count,
                                       MPI_Datatype type, int writes, int everything,
                                       uint64_t gen, int ftype)
{
    unsigned n = unblock_own_log_n;
    unblock_own_t *e = &unblock_own_log[n];
    e->req = h, e->buf = buf, e->count = count, e->type = type, e->gen = gen;
    e->writes = (unsigned char)writes, e->everything = (unsigned char)everything;
    e->span_known = 0, e->ftype = (unsigned char)ftype;
    __atomic_store_n(&unblock_own_log_n, n + 1, __ATOMIC_RELEASE);
    unblock_count(UNBLOCK_COUNT_OWN_TRACKED);
    if (unblock_unlikely(--unblock_own_trial_left == 0)) /* (the log's thread alone) */
        unblock_own_trial_end();
}

/* Whether a request of `count` elements of `type` is too small for the
 * completion thread to drive (fewer bytes than UNBLOCK_OWN_PROGRESS: smaller
 * messages go eagerly, and waking the thread for them only takes the program's
 * core): 1 too small, 0 not, -1 when the size cache does not know the type
 * (requests.c, worth_driving, then measures its span).  Fewer than 512
 * elements count as small without asking. */
static inline int unblock_own_too_small(long long count, MPI_Datatype type)
{
    if (count < 512 || unblock_opt.own_progress == 0)
        return 1;
    uint32_t size = unblock_dt_size_fast(type);
    if (size == 0)
        return -1;
    return (unsigned long long)count * size < unblock_opt.own_progress;
}

/* The generated wrappers' path after a started request of one buffer (rc
 * MPI_SUCCESS): 1 when the log took it, as unblock_own_logged would have (a
 * request too small to drive); 0: call unblock_own_logged.  The size is asked
 * here too: the program's own 512 B-2 KiB requests took that call, 16 ns a
 * round trip more than 8-byte ones (Open MPI shm).  Always inline: GCC's own
 * choice, once the size was asked, was a call, which every size paid (MPICH
 * 128 B: 1.03 -> 1.07x plain). */
__attribute__((always_inline)) static inline int
unblock_own_log_take(const void *buf, long long count, MPI_Datatype type, int writes,
                     const MPI_Request *req)
{
    if (unblock_unlikely(!unblock_own_log_fits()))
        return 0;
    if (unblock_unlikely(count >= 512) && unblock_own_too_small(count, type) != 1)
        return 0;
    unblock_own_log_put(*req, buf, count, type, writes, 0,
                        __atomic_load_n(&unblock_dt_generation, __ATOMIC_ACQUIRE), 0);
    return 1;
}

/* A request started from Fortran, as the log and the table know it: by its
 * Fortran handle.  MPICH's is its C handle (an int both ways).  Open MPI's is an
 * index into its own table, kept as it is (MPI_Request_f2c would look it up,
 * under a lock with MPI_THREAD_MULTIPLE, at every start): a small integer no C
 * handle (an address) ever equals, so a request started in one language and
 * completed in the other is not seen complete, which only leaves its memory
 * off limits to conversions (as a request not followed would, but for the
 * rest of the run).  Such keys are never driven (requests.c: `may_drive`). */
static inline MPI_Request unblock_own_fkey(MPI_Fint f)
{
#if defined(OPEN_MPI)
    return (MPI_Request)(uintptr_t)(uint32_t)f;
#else
    return (MPI_Request)f;
#endif
}

/* A Fortran datatype handle as a log entry keeps it from a Fortran wrapper's
 * front: MPICH's is its C handle; Open MPI's converted only when a conversion
 * asks for the request's span (requests.c: overlaps; MPI_Type_f2c takes a lock
 * under MPI_THREAD_MULTIPLE).  UNBLOCK_OWN_FTYPE: the entry's `ftype`. */
#if defined(OPEN_MPI)
#define UNBLOCK_OWN_FTYPE 1
#define unblock_own_ftype(f) ((MPI_Datatype)(uintptr_t)(uint32_t)(f))
#else
#define UNBLOCK_OWN_FTYPE 0
#define unblock_own_ftype(f) ((MPI_Datatype)(f))
#endif

/* MPI_REQUEST_NULL as the Fortran bindings give it: MPICH's handles are the
 * same ints in both languages; Open MPI's is index 0 of its table
 * (MPI_Request_c2f(MPI_REQUEST_NULL), 4.1 and 5). */
#if defined(OPEN_MPI)
#define UNBLOCK_OWN_FNULL 0
#else
#define UNBLOCK_OWN_FNULL ((MPI_Fint)MPI_REQUEST_NULL)
#endif

/* After a nonblocking call of the program's from Fortran that succeeded (its
 * buffers through unblock_conv_buffers first): into the log or the table under
 * `key` (unblock_own_fkey), never driven. */
void unblock_own_fortran_after(const unblock_own_buf_t *b, int n, MPI_Request key);

/* Requests with the n keys `keys` completed (a Fortran completion call's, seen
 * by their handles turned MPI_REQUEST_NULL: fortran.c). */
void unblock_own_done(int n, const MPI_Request *keys);

/* Whether the log holds exactly the requests r[0, n), in the order started:
 * the usual round (MPI_Irecv, MPI_Isend, MPI_Waitall of the two), whose
 * completion then empties the log without saving the handles or walking the log
 * once per handle (requests.c's done_list: 106 of the 150 instructions of
 * unblock in a round of selfown.c's three calls).  A handle MPI_REQUEST_NULL, a
 * request not logged or one logged earlier and never seen complete (a stale
 * entry) makes it 0, and the careful path runs.  (The table is empty whenever
 * the log holds anything: the log takes requests only then, and the table's
 * path moves the log into it first; checked all the same, since a table entry
 * of one of these handles left behind would keep being driven.) */
static inline int unblock_own_log_is(int n, const MPI_Request *r)
{
    if (__atomic_load_n(&unblock_own_log_n, __ATOMIC_RELAXED) != (unsigned)n ||
        __atomic_load_n(&unblock_own_entries, __ATOMIC_RELAXED) != 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (unblock_own_log[i].req != r[i])
            return 0;
    return 1;
}

/* After the completion of the n requests unblock_own_log_is found: out of the
 * log.  Only if the log still holds n (a generalized request's callback, run inside the call,
 * may have started requests of its own: then nothing goes, which only makes the
 * answers about pending memory more careful until their handles complete). */
static inline void unblock_own_log_done_all(int n)
{
    if (__atomic_load_n(&unblock_own_log_n, __ATOMIC_RELAXED) == (unsigned)n)
        __atomic_store_n(&unblock_own_log_n, 0, __ATOMIC_RELEASE);
}

/* Entries of the table the completion thread may drive (requests.c). */
extern UNBLOCK_HIDDEN uint32_t unblock_own_pollable;

/* The requests the program's only thread kept in its log go into the table,
 * where every thread sees them (core.h: before_first_thread). */
void unblock_own_log_flush(void);

/* A call the runtime cannot follow: conservative for the rest of the run
 * (unblock_own_untracked_seen UNBLOCK_OWN_UNTRACKED from then on). */
void unblock_own_untracked(void);
extern UNBLOCK_HIDDEN int unblock_own_untracked_seen;
#define UNBLOCK_OWN_UNTRACKED 1
/* ... or armed (unblock_own_arm, comm/profile.c): the program's profile says
 * its last run started requests of its own but no conversion asked about
 * their memory after the first and none was large enough to drive, so
 * following them bought nothing (an 8-byte MPI_Irecv, MPI_Isend and
 * MPI_Waitall to itself: 84 instructions of unblock a call followed, 42 not,
 * Open MPI), or UNBLOCK_OWN_FOLLOW=no.  The first request started then makes
 * the run untracked, and the wrappers' fronts go to MPI at once from then on
 * (unblock_own_unfollowed).  A conversion refused for it in this run makes
 * the profile say "needed" for the next (unblock_own_profile_word). */
#define UNBLOCK_OWN_ARMED 2
void unblock_own_arm(void);
/* A run with no profile that says following is needed (comm/profile.c) follows
 * the first `n` requests the log takes, then ends following as an armed run's
 * if by then nothing was converted, no conversion asked about their memory and
 * none was large enough to drive: what a run's profile would have said "not
 * needed" for, from the run's start instead of from its next run's. */
void unblock_own_trial_start(uint64_t n);

/* Whether a request of the program's just starting is left unfollowed: the
 * run is untracked.  The fronts then go to MPI at once, a tail call (nothing
 * to log after it).  An armed run is followed there (Fortran's: made
 * untracked by unblock_own_flog after MPI's call) or made untracked before it
 * (C's, unblock_own_unfollowed_small), and goes on as an untracked run's.
 * C's only when too small to drive (unblock_own_too_small: a larger one may
 * be worth driving, which the slow path decides, untracked too); Fortran's
 * keys are never driven. */
__attribute__((always_inline)) static inline int unblock_own_unfollowed(void)
{
    return unblock_unlikely(__atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED) ==
                            UNBLOCK_OWN_UNTRACKED);
}
/* C's: 1 when a request of `count` elements of `type` goes to MPI at once:
 * the run is untracked and the request too small to drive (its size asked of
 * the cache only from 512 elements: until 2026-12-03 every such request took
 * the followed path, logged for nothing, and an untracked 1 KiB ping-pong of
 * its own requests cost what a followed one did).  An armed run becomes
 * untracked here (one test while followed). */
__attribute__((always_inline)) static inline int unblock_own_unfollowed_small(long long count,
                                                                              MPI_Datatype type)
{
    int u = __atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED);
    if (unblock_likely(u == 0))
        return 0;
    if (u == UNBLOCK_OWN_ARMED)
        unblock_own_untracked();
    return count < 512 || unblock_own_too_small(count, type) == 1;
}

/* What this run says of following the program's own requests, for its
 * profile (comm/profile.c): 0 it started none; 1 not needed (none large
 * enough to drive, no conversion asked about their memory after the first
 * started); 2 needed, `*why` saying why. */
int unblock_own_profile_word(const char **why);

/* 1 if a pending request of the program has memory in [lo, hi) (with
 * `writes_only`, only requests MPI writes into), or if one cannot be followed. */
int unblock_own_blocks(uintptr_t lo, uintptr_t hi, int writes_only);

/* The completion thread: whether the program has requests pending that it may
 * drive, and one round of driving them (MPI_Request_get_status on each, which
 * neither completes nor frees them; never while a program thread completes or
 * frees requests).  Returns how many it found complete; *fresh: one still pending
 * started less than 20 ms ago (poll it at UNBLOCK_OWN_POLL_US). */
int unblock_own_live(void);
int unblock_own_progress(int (*get_status)(MPI_Request, int *, MPI_Status *), int *fresh);

/* The program's own requests driven and waited for late (where driving can
 * help), counted at the call sites where they are a quarter or more of the
 * requests large enough to drive; else 0 (the profile's question). */
uint64_t unblock_own_late_helped(void);

/* A Fortran wrapper of a completion call (a request started in C is not seen
 * completing there on Open MPI, whose Fortran handles are no C handles, and
 * the driving needs the announcement of requests.c's COMPLETE, which a
 * Fortran completion call does not make): the driving stops for the rest of the run
 * (unblock_own_fortran_seen 1 from then on: the call has nothing left to do). */
void unblock_own_fortran_completes(void);
extern UNBLOCK_HIDDEN uint32_t unblock_own_fortran_seen;

/* Whether a Fortran completion call has nothing to do but MPI's call (the
 * spec's fortran_before_done of the completion calls):
 * unblock_own_fortran_completes has nothing left to do, and no request is
 * followed whose completion it must see (fortran_own.c:
 * unblock_fortran_reqs_save). */
static inline int unblock_own_fortran_done(void)
{
    return __atomic_load_n(&unblock_own_fortran_seen, __ATOMIC_RELAXED) != 0 &&
           !unblock_own_tracking();
}

extern UNBLOCK_HIDDEN unsigned unblock_own_fround_n; /* the round fround_ok found, or 0 */

/* A Fortran completion call of the n requests at `reqs` (Fortran handles;
 * mpi_f08's type(MPI_Request) the same int) straight to MPI: once
 * unblock_own_fortran_completes has nothing left to do, when no request is
 * followed, or when the log holds exactly these, in the order started (the
 * usual round: MPI_IRECV, MPI_ISEND, MPI_WAITALL), which
 * unblock_own_fround_after then takes out of the log where MPI turned their
 * handles into MPI_REQUEST_NULL (the table is empty whenever the log holds
 * anything: requests.h, unblock_own_log_is).  Else the wrapper's slow part
 * (fortran_own.c: unblock_fortran_reqs_save). */
__attribute__((always_inline)) static inline int unblock_own_fround_ok(MPI_Fint n, const void *reqs)
{
    if (!__atomic_load_n(&unblock_own_fortran_seen, __ATOMIC_RELAXED))
        return 0;
    if (!unblock_own_tracking())
        return 1;
    const MPI_Fint *f = reqs;
    if (n <= 0 || __atomic_load_n(&unblock_own_log_n, __ATOMIC_RELAXED) != (unsigned)n ||
        __atomic_load_n(&unblock_own_entries, __ATOMIC_RELAXED) != 0)
        return 0;
    for (MPI_Fint i = 0; i < n; i++)
        if (unblock_own_log[i].req != unblock_own_fkey(f[i]))
            return 0;
    unblock_own_fround_n = (unsigned)n; /* (the log's thread alone: the round's) */
    return 1;
}
void unblock_own_log_done_where(int n, const MPI_Fint *now);
__attribute__((always_inline)) static inline void unblock_own_fround_after(MPI_Fint n, const void *reqs)
{
    unsigned m = unblock_own_fround_n;
    if (unblock_likely(m == 0))
        return; /* (no round: no request was followed when the call began) */
    unblock_own_fround_n = 0;
    if (__atomic_load_n(&unblock_own_log_n, __ATOMIC_RELAXED) != m || (unsigned)n != m)
        return; /* (requests started inside the call: nothing goes, as C's round) */
    const MPI_Fint *f = reqs;
    int all = 1;
    for (MPI_Fint i = 0; i < n; i++)
        all &= f[i] == UNBLOCK_OWN_FNULL;
    if (unblock_likely(all))
        __atomic_store_n(&unblock_own_log_n, 0, __ATOMIC_RELEASE);
    else
        unblock_own_log_done_where((int)n, f);
}

/* The wrappers of the calls that start or complete requests, called only
 * while unblock_own_tracking() (tools/gen_mpi_wrappers.py: complete_call). */
int unblock_own_start(MPI_Request *r, int (*real)(MPI_Request *));
int unblock_own_startall(int n, MPI_Request r[], int (*real)(int, MPI_Request *));
int unblock_own_wait(MPI_Request *r, MPI_Status *st, int (*real)(MPI_Request *, MPI_Status *));
int unblock_own_test(MPI_Request *r, int *flag, MPI_Status *st,
                     int (*real)(MPI_Request *, int *, MPI_Status *));
int unblock_own_waitall(int n, MPI_Request r[], MPI_Status st[],
                        int (*real)(int, MPI_Request *, MPI_Status *));
int unblock_own_testall(int n, MPI_Request r[], int *flag, MPI_Status st[],
                        int (*real)(int, MPI_Request *, int *, MPI_Status *));
int unblock_own_waitany(int n, MPI_Request r[], int *idx, MPI_Status *st,
                        int (*real)(int, MPI_Request *, int *, MPI_Status *));
int unblock_own_testany(int n, MPI_Request r[], int *idx, int *flag, MPI_Status *st,
                        int (*real)(int, MPI_Request *, int *, int *, MPI_Status *));
int unblock_own_waitsome(int n, MPI_Request r[], int *out, int idx[], MPI_Status st[],
                         int (*real)(int, MPI_Request *, int *, int *, MPI_Status *));
int unblock_own_testsome(int n, MPI_Request r[], int *out, int idx[], MPI_Status st[],
                         int (*real)(int, MPI_Request *, int *, int *, MPI_Status *));
int unblock_own_request_free(MPI_Request *r, int (*real)(MPI_Request *));
/* The request with key h freed (a Fortran MPI_REQUEST_FREE's, fortran.c): one
 * still pending goes on in MPI, its memory off limits for the rest of the run. */
void unblock_own_freed(MPI_Request h);

/* MPI_Wait and MPI_Waitall of the requests the log holds (unblock_own_log_is)
 * with nothing for the completion thread to drive: the log's round inline in
 * the generated wrapper (requests.c's LOGGED_ROUND without its announcement,
 * which only a pollable entry needs); else requests.c's call.  As a call of
 * unblock_own_wait the round took 15 more instructions a wait, its frame and
 * the registers it saved (openmpi.fastpath.instructions). */
static inline int unblock_own_round_inline(int n, const MPI_Request *r)
{
    return n > 0 && unblock_own_log_is(n, r) &&
           __atomic_load_n(&unblock_own_pollable, __ATOMIC_SEQ_CST) == 0;
}
static inline int unblock_own_wait_inline(MPI_Request *r, MPI_Status *st,
                                          int (*real)(MPI_Request *, MPI_Status *))
{
    if (unblock_own_round_inline(1, r)) {
        int rc = real(r, st);
        if (rc == MPI_SUCCESS)
            unblock_own_log_done_all(1);
        return rc;
    }
    return unblock_own_wait(r, st, real);
}
static inline int unblock_own_waitall_inline(int n, MPI_Request r[], MPI_Status st[],
                                             int (*real)(int, MPI_Request *, MPI_Status *))
{
    if (unblock_own_round_inline(n, r)) {
        int rc = real(n, r, st);
        if (rc == MPI_SUCCESS)
            unblock_own_log_done_all(n);
        return rc;
    }
    return unblock_own_waitall(n, r, st, real);
}

#endif
