/* lifecycle.c — the conversion's life around the program's MPI calls.
 *
 * Owns: the real MPI functions the runtime calls itself and Open MPI's predefined
 * handles (conv_mpi, resolved once MPI is initialised), whether conversion is
 * ready or over (conv_ready, conv_finalized), the thread level the program asked
 * for, and the completion thread's source (progress.h): a round tests every
 * ACTIVE operation with PMPI_Test, and the program's own large requests; the
 * error handler those tests install for a moment, which reports a fatal error as
 * the program's call that started the operation.
 * What every intercepted MPI call does first (unblock_conv_at_call: news for
 * write-behind, progress, MPI_Finalize's quiesce), start-up and quiesce (the
 * comm module's hooks, report.c), and MPI_Init's thread level.
 * Calls: convert.c (the communicators learned), progress/, protect/, fileio's
 * news. */
#define _GNU_SOURCE
#include "comm/convert_internal.h"
#include "core/log.h"
#include "core/profile.h"
#include "core/sites.h"
#include "fileio/writebehind.h"
#include "memory/memory.h"
#include "progress/progress.h"
#include "protect/protect.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

conv_mpi_t conv_mpi;

/* The transfers themselves go to the next MPI_X (a PMPI tool preloaded behind us
 * sees the nonblocking calls we make); the queries go straight to PMPI_X. */
#ifdef UNBLOCK_LINK_WRAP
#define NEXT(name) ((void *)__real_##name)
extern int __real_MPI_Isend(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
extern int __real_MPI_Irsend(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
extern int __real_MPI_Irecv(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
extern int __real_MPI_Recv(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
#else
#define NEXT(name) unblock_mpi_resolve(#name)
#endif

static void resolve_all(void)
{
    conv_mpi.isend = (isend_t)NEXT(MPI_Isend);
    conv_mpi.irsend = (isend_t)NEXT(MPI_Irsend);
    conv_mpi.irecv = (irecv_t)NEXT(MPI_Irecv);
    conv_mpi.recv = (recv_t)NEXT(MPI_Recv);
    conv_mpi.test = (test_t)UNBLOCK_PMPI(MPI_Test);
    conv_mpi.wait = (wait_t)UNBLOCK_PMPI(MPI_Wait);
    conv_mpi.get_status = (getstatus_t)UNBLOCK_PMPI(MPI_Request_get_status);
    conv_mpi.get_count = (getcount_t)UNBLOCK_PMPI(MPI_Get_count);
    conv_mpi.get_errhandler = (geteh_t)UNBLOCK_PMPI(MPI_Comm_get_errhandler);
    conv_mpi.errhandler_free = (ehfree_t)UNBLOCK_PMPI(MPI_Errhandler_free);
    conv_mpi.comm_size = (commsize_t)UNBLOCK_PMPI(MPI_Comm_size);
    conv_mpi.remote_size = (commsize_t)UNBLOCK_PMPI(MPI_Comm_remote_size);
    conv_mpi.comm_rank = (commsize_t)UNBLOCK_PMPI(MPI_Comm_rank);
    conv_mpi.test_inter = (commtest_t)UNBLOCK_PMPI(MPI_Comm_test_inter);
    conv_mpi.get_attr = (attr_t)UNBLOCK_PMPI(MPI_Comm_get_attr);
    conv_mpi.set_errhandler = (seteh_t)UNBLOCK_PMPI(MPI_Comm_set_errhandler);
    conv_mpi.abort = (calleh_t)UNBLOCK_PMPI(MPI_Abort);
    conv_mpi.error_string = (errstr_t)UNBLOCK_PMPI(MPI_Error_string);
    conv_mpi.fatal = UNBLOCK_MPI_HANDLE(MPI_Errhandler, "ompi_mpi_errors_are_fatal", MPI_ERRORS_ARE_FATAL);
    conv_mpi.byte = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_byte", MPI_BYTE);
    conv_mpi.packed = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_packed", MPI_PACKED);
    conv_mpi.world = UNBLOCK_MPI_HANDLE(MPI_Comm, "ompi_mpi_comm_world", MPI_COMM_WORLD);
}


/* ---- state ---- */

int conv_ready;
int conv_finalized;
int conv_fast; /* fastpath.h: ready, not finalized, converting (UNBLOCK_COMM), the ABI checked */
static int program_level = -1; /* the thread level the program asked for */

/* ---- a fatal error of a converted operation ----
 *
 * Converted calls run only on communicators whose error handler is
 * MPI_ERRORS_ARE_FATAL.  Without unblock, MPI would end the process inside the
 * program's call; converted, the error comes from a test of ours after the call
 * returned, and MPI's message would name that MPI_Test.  So while a converted
 * operation is tested, its communicator carries an error handler of ours (a
 * window, one per round of tests on one communicator): an error of that test
 * comes back to us and is reported as the program's call (its name and site, and
 * how long ago it returned); then MPI_Abort ends the process as
 * MPI_ERRORS_ARE_FATAL would have (the same exit status).
 *
 * A window holds window_lock, and so does conv_forget_comms, which runs before
 * the program changes a communicator's handler or frees it: such a communicator
 * is no longer known after that, so it gets no window.  Within
 * a window, the program's own calls on the communicator see our handler: an error
 * of theirs ends the process with MPI_Abort too (its error string printed, not
 * MPI's usual message), and a communicator made from it inherits ours, which
 * conv_learn puts back to MPI_ERRORS_ARE_FATAL at its first use. */

static int window_lock;
static UNBLOCK_TLS const unblock_op_t *window_op; /* the op this thread tests in a window */

typedef struct {
    MPI_Comm comm;
    int open, locked;
} window_t;

/* MPI_Abort after a line on stderr: first a moment for the launcher to pass the
 * line on (mpirun and Hydra forward a rank's stderr through a pipe, and the abort
 * kills the job, the forwarders' unread pipes with it: the line was lost in about
 * one run of 20 under load). */
static void abort_after_line(MPI_Comm c, int code)
{
    struct timespec ts = { 0, 200 * 1000000L };
    while (syscall(SYS_nanosleep, &ts, &ts) != 0 && errno == EINTR)
        ;
    conv_mpi.abort(c, code);
}

static void on_error(MPI_Comm *comm, int *code, ...)
{
    const unblock_op_t *op = window_op;
    if (op != NULL && *comm == OPCOMM(op))
        return; /* the test returns *code to conv_test_in */
    /* The program's own call, while our handler was there: fatal, as it was. */
    char err[MPI_MAX_ERROR_STRING + 1] = "", line[MPI_MAX_ERROR_STRING + 64];
    int len = 0;
    if (conv_mpi.error_string(*code, err, &len) != MPI_SUCCESS || len <= 0)
        snprintf(err, sizeof(err), "MPI error %d", *code);
    snprintf(line, sizeof(line), "unblock: rank %d: %s\n", unblock_g.rank, err);
    unblock_log_raw(line);
    abort_after_line(*comm, *code);
}

static void window_close(window_t *w)
{
    if (w->open) {
        conv_mpi.set_errhandler(w->comm, conv_mpi.fatal);
        w->open = 0;
    }
    if (w->locked) {
        unblock_spin_unlock(&window_lock);
        w->locked = 0;
    }
}

/* Our handler on op's communicator, if its errors are fatal. */
static void window_open(window_t *w, const unblock_op_t *op)
{
    MPI_Comm c = OPCOMM(op);
    if (!conv_mpi.have_ours || (w->open && w->comm == c))
        return;
    if (w->open) {
        conv_mpi.set_errhandler(w->comm, conv_mpi.fatal);
        w->open = 0;
    }
    if (!w->locked) {
        unblock_spin_lock(&window_lock);
        w->locked = 1;
    }
    comm_info_t ci;
    if (conv_comm_lookup(c, &ci) && ci.fatal &&
        conv_mpi.set_errhandler(c, conv_mpi.ours) == MPI_SUCCESS) {
        w->comm = c;
        w->open = 1;
    }
}

void conv_window_lock(void)
{
    unblock_spin_lock(&window_lock);
}

void conv_window_unlock(void)
{
    unblock_spin_unlock(&window_lock);
}

/* The program's call that started `op` failed with `code`, errors fatal: says
 * so, then ends the process with MPI_Abort(comm, code), as MPI_ERRORS_ARE_FATAL
 * does (the same exit status on both MPIs; MPICH's MPI_Comm_call_errhandler
 * would leave with exit(), whose destructors would wait for this very op). */
static void report_fatal(const unblock_op_t *op, MPI_Comm c, int code)
{
    char err[MPI_MAX_ERROR_STRING + 1] = "", site[256], line[2048];
    int len = 0;
    if (conv_mpi.error_string(code, err, &len) != MPI_SUCCESS || len <= 0)
        snprintf(err, sizeof(err), "MPI error %d", code);
    unblock_site_t s;
    memset(&s, 0, sizeof(s));
    s.pc = op->call_pc;
    unblock_site_name(&s, site, sizeof(site));
    const char *fn = op->call_fn < unblock_mpi_fn_count ? unblock_mpi_fn_names[op->call_fn] : "?";
    uint64_t now = unblock_now_ns();
    double ms = op->t_issue && now > op->t_issue ? (double)(now - op->t_issue) / 1e6 : 0.0;
    snprintf(line, sizeof(line),
             "unblock: rank %d: %s at %s failed: %s\n"
             "unblock: rank %d: that call ran in the background and had returned to the program "
             "%.3f ms before; without unblock the process would have stopped inside it.  "
             "Errors are fatal: unblock calls MPI_Abort.\n",
             unblock_g.rank, fn, site, err, unblock_g.rank, ms);
    unblock_log_raw(line);
    abort_after_line(c, code);
}

/* One test of `op` within window `w`.  Inside MPI for the thread's own POSIX
 * calls (MPI's, which pass through): a program's thread tests from
 * unblock_conv_at_call before its call counts as inside MPI, and UCX's TCP
 * transport reads its sockets in MPI_Test; taken as the program's reads, they
 * waited for the receives in flight, this one among them (a hang of
 * mpich.cluster.two-nodes). */
static int conv_test_in(unblock_op_t *op, int *flag, MPI_Status *st, window_t *w)
{
    window_open(w, op);
    window_op = op;
    unblock_tls.mpi_depth++;
    int rc = conv_mpi.test(REQ(op), flag, st);
    unblock_tls.mpi_depth--;
    window_op = NULL;
    if (rc != MPI_SUCCESS && w->open) {
        MPI_Comm c = w->comm;
        window_close(w);
        report_fatal(op, c, rc);
    }
    return rc;
}

int conv_test_op(unblock_op_t *op, int *flag, MPI_Status *st, int wait)
{
    window_t w = { 0 };
    int rc;
    do {
        /* (MPI_Wait, as tests: a window never lasts longer than one) */
        *flag = 0;
        rc = conv_test_in(op, flag, st, &w);
        window_close(&w);
    } while (wait && rc == MPI_SUCCESS && !*flag);
    if (wait)
        *flag = 1; /* an error completes the request too, as MPI_Wait's would */
    return rc;
}

/* ---- completing operations (the completion thread's source, progress.h) ---- */

static void complete_in_engine(unblock_op_t *op, MPI_Status *st, int rc)
{
    if (op->kind == UNBLOCK_OP_RECV) {
        int n = 0;
        if (rc == MPI_SUCCESS && conv_mpi.get_count(st, conv_mpi.byte, &n) == MPI_SUCCESS && n > 0)
            op->got = (size_t)n;
    }
    unblock_op_mark_done(op, rc);
}

/* Tests one operation if no other thread is testing it (the state word is the
 * lock: ACTIVE -> TESTING -> ACTIVE or DONE), so the completion thread and the
 * program's threads can all make progress without sharing a request.  1 if it
 * completed. */
static int test_op(unblock_op_t *op, window_t *w)
{
    uint32_t expect = UNBLOCK_OP_ACTIVE;
    if (!__atomic_compare_exchange_n(&op->state, &expect, UNBLOCK_OP_TESTING, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    int flag = 0;
    MPI_Status st;
    int rc = conv_test_in(op, &flag, &st, w);
    if (flag || rc != MPI_SUCCESS) {
        complete_in_engine(op, &st, rc);
        return 1;
    }
    __atomic_store_n(&op->state, UNBLOCK_OP_ACTIVE, __ATOMIC_SEQ_CST);
    if (unblock_progress_waiters())
        unblock_futex_wake(&op->state);
    return 0;
}

/* Tests every active operation; returns how many completed. */
int conv_progress_all(void)
{
    int progressed = 0;
    if (__atomic_load_n(&unblock_ops_active, __ATOMIC_ACQUIRE) == 0)
        return 0;
    window_t w = { 0 };
    for (int i = 0; i < UNBLOCK_OPS_MAX; i++)
        if (__atomic_load_n(&unblock_ops[i].state, __ATOMIC_ACQUIRE) == UNBLOCK_OP_ACTIVE &&
            !unblock_ops[i].file) /* a file read: its I/O worker completes it */
            progressed += test_op(&unblock_ops[i], &w);
    window_close(&w);
    return progressed;
}

/* The completion thread's source (progress.h): a round tests every active
 * operation, and the program's own requests where they are followed. */
static int engine_poll(int *fresh)
{
    int done = conv_progress_all();
    if (unblock_opt.own_progress > 0) /* the program's own requests move too */
        done += unblock_own_progress(conv_mpi.get_status, fresh);
    return done;
}

static const unblock_progress_source_t engine_source = {
    .poll = engine_poll,
    .busy = unblock_own_live,
};

void conv_wait_done(unblock_op_t *op, int in_handler)
{
    if (unblock_progress_running()) {
        unblock_progress_wait(op);
        return;
    }
    /* No engine: copied sends (they own no pages: never the handler), or with the
     * tick (UNBLOCK_TICK_CONVERT) receives and protected sends too, whose fault
     * handler calls MPI here: the design's rule allows it where the faulting
     * instruction is the program's own (tick.c); elsewhere (libc) it is the risk
     * that keeps UNBLOCK_TICK_CONVERT off by default, counted. */
    if (in_handler) {
        if (unblock_tick_fault_may_drive())
            unblock_counter_add(&unblock_stats.tick_fault_waits, 1);
        else
            unblock_counter_add(&unblock_stats.tick_fault_unsafe, 1);
    }
    uint32_t expect = UNBLOCK_OP_ACTIVE;
    while (!__atomic_compare_exchange_n(&op->state, &expect, UNBLOCK_OP_TESTING, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (expect != UNBLOCK_OP_TESTING)
            return; /* done by another thread */
        expect = UNBLOCK_OP_ACTIVE;
        syscall(SYS_sched_yield);
    }
    MPI_Status st;
    int flag = 0;
    unblock_tls.mpi_depth++;
    int rc = conv_test_op(op, &flag, &st, 1);
    unblock_tls.mpi_depth--;
    complete_in_engine(op, &st, rc);
}

/* ---- start-up, shut-down and the calls around conversions ---- */

void unblock_comm_init(void)
{
    unblock_protect_engine.wait_done = conv_wait_done;
    unblock_protect_engine.driven = unblock_progress_running;
    unblock_protect_init();
    unblock_g.protect_ready = 1;
}

static int conv_fast_value(void)
{
    return conv_ready && unblock_opt.comm && unblock_g.mpi_abi_ok && !conv_finalized;
}

/* conv_fast and its bit of the fronts' word (core.h: unblock_front_off), which
 * the generated wrappers' fronts test instead: the bit set before conv_fast
 * goes to 0, cleared after it goes to 1. */
static void conv_fast_set(int v)
{
    if (!v)
        unblock_front_set(UNBLOCK_FRONT_MPI, 1);
    __atomic_store_n(&conv_fast, v, __ATOMIC_SEQ_CST);
    if (v)
        unblock_front_set(UNBLOCK_FRONT_MPI, 0);
}

/* From unblock_comm_after_init, once the ABI is known to match. */
void unblock_conv_after_init(void)
{
    resolve_all();
    MPI_Comm_errhandler_function *fn = on_error;
    conv_mpi.have_ours = ((int (*)(MPI_Comm_errhandler_function *, MPI_Errhandler *))UNBLOCK_PMPI(
                              MPI_Comm_create_errhandler))(fn, &conv_mpi.ours) == MPI_SUCCESS;
    /* The predefined datatypes are known from the start: a blocking call on a
     * communicator seen for the first time then knows its bytes, and waits only
     * for what owns them (before_blocking), not for every operation in flight. */
#define NAMED(sym, c) UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_" #sym, c)
    const MPI_Datatype named[] = {
        NAMED(char, MPI_CHAR), NAMED(signed_char, MPI_SIGNED_CHAR),
        NAMED(unsigned_char, MPI_UNSIGNED_CHAR), NAMED(short, MPI_SHORT),
        NAMED(unsigned_short, MPI_UNSIGNED_SHORT), NAMED(int, MPI_INT),
        NAMED(unsigned, MPI_UNSIGNED), NAMED(long, MPI_LONG),
        NAMED(unsigned_long, MPI_UNSIGNED_LONG), NAMED(long_long_int, MPI_LONG_LONG),
        NAMED(unsigned_long_long, MPI_UNSIGNED_LONG_LONG), NAMED(float, MPI_FLOAT),
        NAMED(double, MPI_DOUBLE), NAMED(long_double, MPI_LONG_DOUBLE),
        NAMED(int8_t, MPI_INT8_T), NAMED(int16_t, MPI_INT16_T), NAMED(int32_t, MPI_INT32_T),
        NAMED(int64_t, MPI_INT64_T), NAMED(uint8_t, MPI_UINT8_T), NAMED(uint16_t, MPI_UINT16_T),
        NAMED(uint32_t, MPI_UINT32_T), NAMED(uint64_t, MPI_UINT64_T), NAMED(c_bool, MPI_C_BOOL),
        NAMED(c_float_complex, MPI_C_FLOAT_COMPLEX),
        NAMED(c_double_complex, MPI_C_DOUBLE_COMPLEX), NAMED(integer, MPI_INTEGER),
        NAMED(real, MPI_REAL), NAMED(dblprec, MPI_DOUBLE_PRECISION), NAMED(cplex, MPI_COMPLEX),
        NAMED(dblcplex, MPI_DOUBLE_COMPLEX), NAMED(logical, MPI_LOGICAL),
        NAMED(character, MPI_CHARACTER),
    };
    const MPI_Datatype none = NAMED(datatype_null, MPI_DATATYPE_NULL);
#undef NAMED
    for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
        if (named[i] != (MPI_Datatype)0 && named[i] != none)
            unblock_dt_learn(named[i]);
    __atomic_store_n(&unblock_g.before_first_thread, unblock_own_log_flush, __ATOMIC_RELEASE);
    conv_ready = 1;
    conv_fast_set(conv_fast_value());
    conv_profile_after_init();
    unblock_wb_mpi_started();
    unblock_memory_ucm_attach(); /* (libucm is loaded by now, where MPI uses UCX) */
    if (program_level < 0)
        program_level = unblock_g.mpi_thread_provided;
    if (unblock_g.mpi_thread_provided >= MPI_THREAD_MULTIPLE && unblock_opt.comm) {
        conv_gate_after_init(program_level);
        unblock_progress_start(&engine_source);
    }
    else if (unblock_opt.comm && unblock_g.mpi_thread_provided <= MPI_THREAD_FUNNELED)
        unblock_tick_start(&engine_source); /* this thread called MPI_Init */
}

void conv_fast_hold(void)
{
    conv_fast_set(0);
}

void conv_fast_release(void)
{
    conv_fast_set(conv_fast_value());
}

int conv_background(void)
{
    if (unblock_progress_running())
        return 1;
    /* The tick: this thread is the one it drives, the program has no other. */
    return unblock_opt.tick_convert && unblock_tick_mine() &&
           __atomic_load_n(&unblock_g.program_threads, __ATOMIC_RELAXED) == 0;
}

void unblock_conv_quiesce(void)
{
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) == 0)
        return;
    conv_progress_all(); /* the program is in MPI anyway */
    unblock_protect_quiesce();
}

/* Every intercepted MPI call on the program's behalf (kind: what the generated
 * table says function `id` is). */
void unblock_conv_at_call(unsigned kind, unsigned id)
{
    /* A message may tell another process to read what this one wrote, or this
     * one that a file it reads ahead has changed. */
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED) |
        __atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED) |
        __atomic_load_n(&unblock_sc_unsettled, __ATOMIC_RELAXED))
        unblock_wb_news();
    /* ... and MPI-IO's writes held back (mpi_wrap.h: UNBLOCK_MPIIO_NEWS),
     * written inside this call, as its own MPI calls; or news of other ranks'
     * writes this call may bring */
    if (unblock_unlikely(unblock_mpi_fn_news[id] & UNBLOCK_NEWS_LOOKS))
        unblock_protect_receives_done(); /* (mpi_wrap.h) */
    if (unblock_unlikely(__atomic_load_n(&unblock_mpiio_news, __ATOMIC_RELAXED)) &&
        (unblock_mpi_fn_news[id] & (UNBLOCK_NEWS_TELLS | UNBLOCK_NEWS_HEARS)) &&
        unblock_mpiio_hook != NULL) {
        int rc;
        unblock_tls.mpi_depth++;
        unblock_mpiio_hook(UNBLOCK_MPIIO_NEWS, id, 0, NULL, NULL, &rc);
        unblock_tls.mpi_depth--;
    }
    if (!conv_ready) {
        if (kind == UNBLOCK_MPI_KIND_FINALIZE)
            conv_finalized = 1, conv_fast_set(0);
        return;
    }
    /* The engine sleeps with nothing to do: MPI's thread safety off (gate.c);
     * here no thread is inside MPI. */
    if (unblock_unlikely(__atomic_load_n(&conv_gate_asked, __ATOMIC_RELAXED)) && !conv_finalized)
        conv_gate_freeze();
    switch (kind) {
    case UNBLOCK_MPI_KIND_CONVERT:
    case UNBLOCK_MPI_KIND_PLAIN:
    case UNBLOCK_MPI_KIND_BUFS:        /* the wrapper orders its buffers */
    case UNBLOCK_MPI_KIND_OWN_TRACKED: /* requests.c orders it against ours */
    case UNBLOCK_MPI_KIND_OWN_FOLLOWED:
        if (unblock_tick_armed() && unblock_tick_mine())
            unblock_tick_poll(); /* the tick's round: the program's own requests too */
        else
            conv_progress_all(); /* the program is in MPI anyway */
        unblock_ops_reap();
        break;
    case UNBLOCK_MPI_KIND_OWN_ASYNC:
        unblock_own_untracked();
        unblock_conv_quiesce();
        break;
    case UNBLOCK_MPI_KIND_FINALIZE:
        unblock_conv_quiesce();
        conv_profile_finalize();
        conv_fast_set(0);
        unblock_progress_stop();
        unblock_tick_stop();
        conv_finalized = 1;
        break;
    case UNBLOCK_MPI_KIND_FORGET_COMM:
        conv_forget_comms();
        break;
    default: /* a call that takes a buffer we do not check yet */
        unblock_conv_quiesce();
        break;
    }
}

void unblock_comm_quiesce_all(void)
{
    if (!conv_ready || conv_finalized)
        return;
    unblock_conv_quiesce();
}


/* ---- thread level ---- */

/* Whether MPI_Init asks MPI for MPI_THREAD_MULTIPLE (the completion thread's
 * level) instead of the program's `required` level: UNBLOCK_THREAD, and under
 * `auto` the program's profile (core/profile.h): the program's own level when
 * its last run needed no completion thread, since on Open MPI every level above
 * MPI_THREAD_SINGLE costs small messages 20-50 % (docs/performance.md) -- unless
 * the thread gate (gate.c) takes that cost away for this program. */
int unblock_conv_want_multiple(int required)
{
    static int decided = -1;
    if (decided >= 0)
        return decided;
    if (!unblock_g.active) {
        decided = 0;
        return 0;
    }
    int need = unblock_profile_load(unblock_mpi_impl) ? unblock_profile_needs_thread() : -1;
    const char *level = "multiple", *why;
    static char because[240];
    if (unblock_opt.thread == UNBLOCK_THREAD_MULTIPLE) {
        why = "UNBLOCK_THREAD=multiple";
    } else if (unblock_opt.thread == UNBLOCK_THREAD_PROGRAM) {
        level = "program", why = "UNBLOCK_THREAD=program";
    } else if (required >= MPI_THREAD_MULTIPLE) {
        why = "the program asked for MPI_THREAD_MULTIPLE";
    } else if (conv_gate_possible(required)) {
        why = "the thread gate: MPI's thread safety only while the thread calls MPI";
    } else if (need == 0) {
        level = "program", why = "the profile: nothing needed the completion thread";
    } else if (need == 1) {
        snprintf(because, sizeof(because), "the profile: %s", unblock_profile_last_why());
        why = because;
    } else {
        why = "no profile yet";
    }
    unblock_profile_chose(level, why);
    decided = strcmp(level, "multiple") == 0;
    return decided;
}

int unblock_conv_init(int *argc, char ***argv, int required, int *provided, int is_thread,
                      int (*real_init)(int *, char ***),
                      int (*real_init_thread)(int *, char ***, int, int *))
{
    unblock_wb_mpi_started(); /* (its start-up hidden in MPI_Init's) */
    /* Known before MPI_Init returns (its after-init hook decides the gate). */
    program_level = is_thread ? required : MPI_THREAD_SINGLE;
    if (!unblock_conv_want_multiple(is_thread ? required : MPI_THREAD_SINGLE)) {
        int rc = is_thread ? real_init_thread(argc, argv, required, provided) : real_init(argc, argv);
        program_level = is_thread ? (rc == MPI_SUCCESS ? *provided : -1) : MPI_THREAD_SINGLE;
        return rc;
    }
    if (real_init_thread == NULL) {
#ifdef UNBLOCK_LINK_WRAP
        extern int __real_MPI_Init_thread(int *, char ***, int, int *);
        real_init_thread = __real_MPI_Init_thread;
#else
        /* The next MPI_Init_thread (a PMPI tool behind us still sees an init). */
        real_init_thread = (initthread_t)unblock_mpi_resolve("MPI_Init_thread");
#endif
    }
    int got = 0;
    int rc = real_init_thread(argc, argv, MPI_THREAD_MULTIPLE, &got);
    if (rc != MPI_SUCCESS)
        return rc;
    /* What the program would have been told: the level it asked for when MPI can
     * give it (both MPIs here grant any level asked for). */
    program_level = required <= got ? required : got;
    if (is_thread)
        *provided = program_level;
    return rc;
}

void unblock_conv_program_level(int level)
{
    program_level = level;
}

int unblock_conv_program_level_get(void)
{
    return program_level;
}

int unblock_conv_query_thread(int *provided, int (*real)(int *))
{
    int rc = real(provided);
    if (rc == MPI_SUCCESS && program_level >= 0 && *provided > program_level)
        *provided = program_level;
    return rc;
}

