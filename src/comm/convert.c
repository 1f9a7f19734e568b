/* convert.c — blocking point-to-point calls started as nonblocking ones.
 *
 * MPI_Send, MPI_Rsend, MPI_Recv, MPI_Sendrecv and MPI_Sendrecv_replace, with any
 * datatype that can be flattened (datatype.c), return at once: a send from a
 * runtime copy (up to UNBLOCK_COPY_MAX bytes) or from the program's pages made
 * read-only; a receive into a runtime buffer, or straight into the pool's runtime
 * view (multiview), while the program's pages are inaccessible (protect/).
 * Requests are started in program order, so MPI's matching order is unchanged.
 *
 * What runs as the original blocking call, and why (docs/protection.md; the
 * reasons are UNBLOCK_PASS_REASONS in core/stats.h):
 *   - a status the program wants (MPI_Recv's must be filled when it returns);
 *   - a communicator whose error handler is not MPI_ERRORS_ARE_FATAL (its error
 *     must come back from this call), and the first call with a communicator and a
 *     datatype (which also validates both before we ever query them);
 *   - MPI_Ssend (its completion says the receive has started: programs use it to
 *     synchronise) and MPI_Bsend (already buffered by MPI: nothing to gain);
 *   - memory that is never protected (memory.h), receives without a completion
 *     thread, a call site the predictor keeps blocking (core/sites.h).
 * Other calls that take buffers (collectives, MPI-IO, the program's own requests)
 * are ordered against what is in flight by the bytes they name
 * (unblock_conv_buffers).
 *
 * Operations are completed by the completion thread (src/progress/), whose
 * source here tests ACTIVE operations with PMPI_Test (MPI_THREAD_MULTIPLE, which
 * MPI_Init asks for on the program's behalf; the program is told the level it
 * asked for); without it, only copied sends are converted and a wait calls
 * PMPI_Wait itself. */
#define _GNU_SOURCE
#include "comm/convert_internal.h"
#include "comm/fastpath.h"
#include "core/log.h"
#include "core/sites.h"
#include "fileio/writebehind.h"
#include "progress/progress.h"
#include "memory/memory.h"
#include "protect/protect.h"

#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { CALL_SEND, CALL_RSEND };

/* ---- what we learned about communicators and datatypes ---- */



#define CACHE 16
static comm_info_t comms[CACHE];
static unsigned comm_next;
static int cache_lock;
/* Each thread's last hit, valid while comm_gen has not moved (every change of
 * the cache moves it): the common case, one communicator call after call, reads
 * two words instead of taking the lock (the lock and the scan were 3 % of the
 * samples of an 8-byte ping-pong under unblock; its half round trip went from
 * 0.324 to 0.318-0.324 us). */
static uint32_t comm_gen = 1;
static __thread comm_info_t comm_last;
static __thread uint32_t comm_last_gen;

int conv_comm_lookup(MPI_Comm c, comm_info_t *out)
{
    uint32_t gen = __atomic_load_n(&comm_gen, __ATOMIC_ACQUIRE);
    if (comm_last_gen == gen && comm_last.comm == c) {
        *out = comm_last;
        return 1;
    }
    int found = 0;
    unblock_spin_lock(&cache_lock);
    gen = __atomic_load_n(&comm_gen, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < CACHE; i++)
        if (comms[i].valid && comms[i].comm == c) {
            *out = comms[i];
            found = 1;
            break;
        }
    unblock_spin_unlock(&cache_lock);
    if (found) {
        comm_last = *out;
        comm_last_gen = gen;
    }
    return found;
}

/* After a call with `c` and `t` succeeded (so both are valid handles). */
void conv_learn(MPI_Comm c, MPI_Datatype t)
{
    comm_info_t ci;
    if (!conv_comm_lookup(c, &ci)) {
        MPI_Errhandler eh;
        int inter = 0, size = 0, flag = 0;
        int *ub = NULL;
        ci = (comm_info_t){ .comm = c, .valid = 1, .tag_ub = 32767 };
        if (conv_mpi.get_errhandler(c, &eh) == MPI_SUCCESS) {
            /* Ours: inherited from a communicator whose converted operation was
             * being tested when this one was made from it (conv_test_op): it
             * was MPI_ERRORS_ARE_FATAL, and is so again. */
            int ours = conv_mpi.have_ours && eh == conv_mpi.ours;
            ci.fatal = eh == conv_mpi.fatal || ours;
            conv_mpi.errhandler_free(&eh);
            if (ours)
                conv_mpi.set_errhandler(c, conv_mpi.fatal);
        }
        conv_mpi.test_inter(c, &inter);
        (inter ? conv_mpi.remote_size : conv_mpi.comm_size)(c, &size);
        ci.size = size;
        ci.inter = inter;
        conv_mpi.comm_rank(c, &ci.rank);
        if (conv_mpi.get_attr(conv_mpi.world, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag && ub)
            ci.tag_ub = *ub;
        unblock_spin_lock(&cache_lock);
        __atomic_add_fetch(&comm_gen, 1, __ATOMIC_RELEASE);
        comms[comm_next++ % CACHE] = ci;
        unblock_spin_unlock(&cache_lock);
    }
    unblock_dt_learn(t);
}

void conv_forget_comms(void)
{
    conv_window_lock(); /* no test of ours has its handler on one of them now */
    unblock_spin_lock(&cache_lock);
    __atomic_add_fetch(&comm_gen, 1, __ATOMIC_RELEASE);
    memset(comms, 0, sizeof(comms));
    unblock_spin_unlock(&cache_lock);
    conv_window_unlock();
}


/* ---- deciding and starting ---- */

static void pass(int reason)
{
    unblock_counter_add(&unblock_stats.comm_pass[reason], 1);
}

/* Refused for a reason the site's next calls will most likely share (the
 * memory, no completion thread): they take the quick path (sites.h).  Without
 * the thread, the profile also learns that the site wanted it. */
static void refused(const call_info_t *ci, int reason)
{
    pass(reason);
    if (reason == UNBLOCK_PASS_no_thread)
        unblock_site_no_thread(ci->site);
    if (!ci->partial)
        unblock_site_refused(ci->site, (unsigned)reason);
}


static void call_done(call_info_t *ci)
{
    unblock_chain_returned(); /* the program runs on: its time counts from here */
    if (unblock_tick_running())
        unblock_tick_arm(); /* what was converted moves while the program computes */
    if (ci->ti.flat) {
        unblock_flat_release(ci->ti.flat);
        ci->ti.flat = NULL;
    }
}

/* The bytes `count` instances of the call's datatype occupy at `buf`. */
unblock_bytes_t conv_bytes_of(const void *buf, int count, const unblock_dt_t *ti)
{
    if (ti->flat)
        return (unblock_bytes_t){ (uintptr_t)buf, ti->flat, (size_t)count };
    return (unblock_bytes_t){ (uintptr_t)buf + (uintptr_t)ti->lb, NULL,
                              (size_t)ti->size * (size_t)count };
}

/* Whether a call on (comm, type) may be converted at all; counts the reason if not. */
static int convertible(MPI_Comm comm, MPI_Datatype type, call_info_t *ci)
{
    ci->site = -1;
    memset(&ci->ti, 0, sizeof(ci->ti));
    if (!conv_ready || conv_finalized || !unblock_g.mpi_abi_ok) {
        pass(UNBLOCK_PASS_other);
        return 0;
    }
    /* Both looked up: a known datatype gives the blocking call its bytes even on
     * a communicator seen for the first time (before_blocking). */
    int known_comm = conv_comm_lookup(comm, &ci->ci), known_type = unblock_dt_lookup(type, &ci->ti);
    if (!known_comm || !known_type) {
        pass(UNBLOCK_PASS_first_use);
        return -1; /* run it, then learn */
    }
    if (!ci->ci.fatal) {
        pass(UNBLOCK_PASS_errhandler);
        return 0;
    }
    if (!ci->ti.contiguous && !ci->ti.flat) {
        pass(UNBLOCK_PASS_datatype);
        return 0;
    }
    return 1;
}

/* Whether the message's bytes are somewhere a copy can reach: not in the page at
 * address 0 (MPI_BOTTOM with relative displacements, a NULL buffer: the original
 * call gives the program MPI's own answer), and packed, within an int count. */
static int addressable(const void *buf, int count, const call_info_t *ci)
{
    unblock_bytes_t b = conv_bytes_of(buf, count, &ci->ti);
    uintptr_t lo, hi;
    unblock_bytes_span(&b, &lo, &hi);
    if (lo >= unblock_page_size && hi > lo && (!ci->ti.flat || unblock_bytes_size(&b) <= INT_MAX))
        return 1;
    pass(UNBLOCK_PASS_memory);
    return 0;
}

static int valid_rank(const comm_info_t *c, int r, int any)
{
    return r == MPI_PROC_NULL ? 0 : (r >= 0 && r < c->size) || (any && r == MPI_ANY_SOURCE);
}

static int valid_tag(const comm_info_t *c, int t, int any)
{
    return (t >= 0 && t <= c->tag_ub) || (any && t == MPI_ANY_TAG);
}

/* The predictor's verdict on a call that could be converted: 1 to try, 0 to run
 * the original call (the reason is counted).  Calls under the size thresholds
 * are left to start_send/start_recv to refuse, untimed.  *site is the call site
 * when the call is timed (both ways), else -1. */
static int predicted(size_t len, size_t min, int *site)
{
    *site = -1;
    if (len < min)
        return 1;
    unsigned fn = unblock_tls.call_fn;
    *site = unblock_site_of(unblock_tls.call_pc, fn,
                            fn < unblock_mpi_fn_count ? unblock_mpi_fn_names[fn] : "?", len);
    if (unblock_site_convert(*site)) {
        /* A recheck of a site that passes: the completion thread need not stay
         * awake after it (its wake-ups would fall on the program's cores). */
        uint32_t d = unblock_site_decision(*site);
        unblock_progress_linger(d != UNBLOCK_SITE_PASS);
        return 1;
    }
    pass(unblock_site_decision(*site) == UNBLOCK_SITE_EXCLUDED ? UNBLOCK_PASS_excluded
                                                               : UNBLOCK_PASS_predicted);
    return 0;
}

/* Claims a slot, completing the oldest op in flight (to that peer if the per-peer
 * cap is the problem) once if none is free. */
static unblock_op_t *claim(unblock_op_kind_t kind, int peer)
{
    if (kind == UNBLOCK_OP_RECV)
        unblock_tls.received = 1;
    unblock_op_t *op = unblock_op_claim(kind, peer);
    if (op)
        return op;
    unblock_op_t *oldest = NULL;
    for (int i = 0; i < UNBLOCK_OPS_MAX; i++) {
        unblock_op_t *o = &unblock_ops[i];
        uint32_t s = __atomic_load_n(&o->state, __ATOMIC_ACQUIRE);
        if ((s == UNBLOCK_OP_ACTIVE || s == UNBLOCK_OP_TESTING || s == UNBLOCK_OP_DONE) &&
            (oldest == NULL || o->seq < oldest->seq))
            oldest = o;
    }
    if (oldest)
        unblock_op_complete(oldest, 0);
    return unblock_op_claim(kind, peer);
}

/* While this thread still owns the request and no page is protected for it (right
 * after the nonblocking call, or after the protection was refused): if it is
 * complete (with `wait`: once it is), finish it here: a receive's data is copied
 * in, the slot freed, the completion thread never involved.  1 if it was. */
static int finish_here(unblock_op_t *op, int wait)
{
    int flag = 1;
    MPI_Status st;
    if (conv_test_op(op, &flag, &st, wait) != MPI_SUCCESS && !wait)
        return 0;
    if (!flag)
        return 0;
    if (op->kind == UNBLOCK_OP_RECV && op->rtbuf) {
        int n = 0;
        if (conv_mpi.get_count(&st, conv_mpi.byte, &n) == MPI_SUCCESS && n > 0)
            unblock_bytes_scatter(&op->bytes, op->rtbuf, (size_t)n);
    }
    if (!wait)
        unblock_counter_add(&unblock_stats.comm_immediate, 1);
    op->t_done = unblock_now_ns();
    unblock_op_release(op);
    return 1;
}

/* Multiview: the distance from the program's view of [lo, hi) to the runtime's,
 * where MPI and our copies work, when all of it is pool memory; else 0. */
static intptr_t view_of(uintptr_t lo, uintptr_t hi)
{
    return unblock_pool_has(lo, hi) ? unblock_pool_delta : 0;
}

/* A converted call on pool memory as a step of a chain (protect/chains.c): its
 * call site and arguments, and the datatype generation (a freed handle may name
 * another type by now). */
static uint64_t step_key(int recv, const void *buf, int count, MPI_Datatype type, int peer,
                         int tag, MPI_Comm comm)
{
    const uint64_t v[] = { unblock_tls.call_pc, 2u * unblock_tls.call_fn + (unsigned)recv,
                           (uintptr_t)buf, (uint64_t)count, (uint64_t)(uintptr_t)type,
                           (uint64_t)peer, (uint64_t)tag, (uint64_t)(uintptr_t)comm,
                           unblock_dt_generation };
    uint64_t h = 1469598103934665603ull;
    for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        h = (h ^ v[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

/* A chain step's op: linked to the chain that protects its pages already, or, if
 * it cannot be (the chain was closed meanwhile), on its own.  A step whose op
 * owns no pages (a copied send), or that did not become an op, only closes the
 * chain when it was its last. */
static void chain_join(int chain, uint64_t cseq, int last, unblock_op_t *op)
{
    if (chain < 0)
        return;
    if (op == NULL || op->pend <= op->pstart || !unblock_chain_link(chain, cseq, op, last)) {
        if (last)
            unblock_chain_close(chain, cseq);
    }
}

/* Records the program's call that started the op and its communicator (named
 * if the op fails fatally: conv_test_op). */
static void op_call(unblock_op_t *op, MPI_Comm comm, const call_info_t *ci)
{
    op->site = ci->site;
    op->call_pc = unblock_tls.call_pc;
    op->call_fn = unblock_tls.call_fn;
    OPCOMM(op) = comm;
}

/* Records what the op occupies (and holds its flat type). */
static void op_bytes(unblock_op_t *op, const unblock_bytes_t *b, const call_info_t *ci)
{
    op->bytes = *b;
    if (ci->ti.flat) {
        op->flat = ci->ti.flat;
        unblock_flat_hold(op->flat);
    }
}

/* Starts the send part.  Returns 1 if started, 0 if it must run blocking.  A
 * non-contiguous datatype is sent packed (MPI_PACKED, gathered in typemap order:
 * any receive type with the same signature matches it), or where that is not
 * safe (datatype.h: packed_ok) from a copy of its memory image with its own type,
 * or, when large and dense in protectable pages, with its own type from the
 * program's read-only pages. */
static int start_send(int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                      MPI_Comm comm, const call_info_t *ci, int must_copy)
{
    if ((size_t)ci->ti.size * (size_t)count < unblock_opt.send_min && !must_copy) {
        pass(UNBLOCK_PASS_small); /* (before the bytes are laid out: most sends) */
        return 0;
    }
    unblock_bytes_t bytes = conv_bytes_of(buf, count, &ci->ti);
    size_t len = unblock_bytes_size(&bytes);
    uintptr_t lo, hi;
    unblock_bytes_span(&bytes, &lo, &hi);
    isend_t isend = mode == CALL_RSEND ? conv_mpi.irsend : conv_mpi.isend;
    uintptr_t ps = 0, pe = 0;
    unblock_op_t *op;
    /* Above COPY_MAX a send is protected, unless its site's protected sends are
     * mostly written again at once (waiting for the receiver at each fault), or
     * its bytes are sparse in their pages (a column of a grid would stop the
     * program on every row): then it is copied, within half the copy budget. */
    int eligible = unblock_protect_eligible((const void *)lo, hi - lo, &ps, &pe);
    int sparse = ci->ti.flat && (!eligible || 4 * len < 3 * (pe - ps));
    int copy_anyway = len > unblock_opt.copy_max && len <= unblock_opt.copy_budget / 2 &&
                      (sparse || unblock_site_prefers_copy(ci->site));
    /* Pages MPI may be writing for a receive of the program's own are never made
     * read-only: such a send is copied. */
    int own = eligible && unblock_own_blocks(ps, pe, 1);
    /* A type that cannot go packed is copied whole, gaps included: only where the
     * gaps are few. */
    int image = ci->ti.flat && !ci->ti.packed_ok;
    size_t copylen = image ? hi - lo : len;
    if (image && copylen > 2 * len) {
        pass(UNBLOCK_PASS_datatype);
        return 0;
    }
    /* Receives in flight on these bytes finish first, and in single view those on
     * these pages (the copy, or MPI, reads them); multiview reads the runtime view. */
    intptr_t view = view_of(lo, hi);
    unblock_protect_order(0, view, &bytes, 0, 0);
    int copy = len <= unblock_opt.copy_max || must_copy || copy_anyway || !conv_background() ||
               own || !eligible || sparse;
    int chain = -1, last = 0;
    uint64_t cseq = 0;
    if (view && eligible && unblock_progress_running())
        chain = unblock_chain_step(step_key(0, buf, count, type, dest, tag, comm), 0,
                                   copy ? 0 : ps, copy ? 0 : pe, &last, &cseq);
    if (copy) {
        chain_join(chain, cseq, last, NULL);
        if ((len > unblock_opt.copy_max && !must_copy && !copy_anyway) ||
            !unblock_copy_budget_take(copylen)) {
            if (!conv_background()) {
                refused(ci, UNBLOCK_PASS_no_thread);
            } else if (own) {
                pass(UNBLOCK_PASS_own_nonblocking);
            } else if (len > unblock_opt.copy_max) {
                refused(ci, UNBLOCK_PASS_memory);
            } else {
                pass(UNBLOCK_PASS_limits);
            }
            return 0;
        }
        op = claim(UNBLOCK_OP_SEND_COPY, dest);
        char *rt = op ? unblock_op_buffer(op, copylen) : NULL;
        if (rt == NULL) {
            if (op)
                unblock_op_release(op);
            unblock_copy_budget_give(copylen);
            pass(UNBLOCK_PASS_limits);
            return 0;
        }
        op->copybytes = copylen;
        if (copy_anyway && !sparse) /* (copied because its site prefers it) */
            unblock_site_copies(ci->site);
        op_call(op, comm, ci);
        op->t_issue = unblock_now_ns();
        int rc;
        if (image) {
            /* The gaps may hold anything, even unmapped pages (MPI_BOTTOM). */
            if (unblock_copy_from_program(rt, (const void *)(lo + view), copylen) != 0) {
                unblock_op_release(op);
                pass(UNBLOCK_PASS_memory);
                return 0;
            }
            op_bytes(op, &bytes, ci);
            rc = isend(rt - (lo - (uintptr_t)buf), count, type, dest, tag, comm, REQ(op));
        } else {
            unblock_bytes_t from = bytes;
            from.base += view;
            unblock_bytes_gather(&from, rt);
            op_bytes(op, &bytes, ci);
            rc = ci->ti.flat ? isend(rt, (int)len, conv_mpi.packed, dest, tag, comm, REQ(op))
                             : isend(rt - ci->ti.lb, count, type, dest, tag, comm, REQ(op));
        }
        if (rc != MPI_SUCCESS) {
            unblock_op_release(op);
            return 0;
        }
        unblock_counter_add(&unblock_stats.comm_copied, 1);
    } else {
        op = claim(UNBLOCK_OP_SEND_PROT, dest);
        if (op == NULL) {
            chain_join(chain, cseq, last, NULL);
            pass(UNBLOCK_PASS_limits);
            return 0;
        }
        op_bytes(op, &bytes, ci);
        op->pstart = ps;
        op->pend = pe;
        op->view = view;
        chain_join(chain, cseq, last, op);
        op_call(op, comm, ci);
        op->t_issue = unblock_now_ns();
        if (unblock_opt.verify)
            op->checksum = unblock_checksum((const void *)(lo + view), hi - lo);
        if (isend((const char *)buf + view, count, type, dest, tag, comm, REQ(op)) !=
            MPI_SUCCESS) {
            unblock_op_release(op);
            return 0;
        }
        unblock_counter_add(&unblock_stats.comm_protected, 1);
        unblock_site_protected(ci->site, 0);
    }
    if (view)
        unblock_counter_add(&unblock_stats.comm_multiview, 1);
    unblock_counter_add(&unblock_stats.comm_bytes, len);
    if (ci->ti.flat)
        unblock_counter_add(&unblock_stats.comm_derived, 1);
    if (finish_here(op, 0)) /* an eager message is usually gone already */
        return 1;
    unblock_progress_thaw(); /* the engine may call MPI from here on (gate.c) */
    if (unblock_op_activate(op) != 0)
        finish_here(op, 1); /* protection refused (ENOMEM): complete it now */
    return 1;
}

/* Starts the receive part: multiview, straight into the runtime view with the
 * program's datatype; else into a runtime buffer (packed for a non-contiguous
 * datatype, scattered when finished).  Returns 1 if started, else 0. */
static int start_recv(void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Comm comm, const call_info_t *ci)
{
    unblock_bytes_t bytes = conv_bytes_of(buf, count, &ci->ti);
    size_t len = unblock_bytes_size(&bytes);
    uintptr_t lo, hi, ps, pe;
    unblock_bytes_span(&bytes, &lo, &hi);
    if (!conv_background()) {
        refused(ci, UNBLOCK_PASS_no_thread);
        return 0;
    }
    if (!unblock_protect_eligible((const void *)lo, hi - lo, &ps, &pe)) {
        refused(ci, UNBLOCK_PASS_memory);
        return 0;
    }
    /* A step of a learned chain whose pages are protected already is converted
     * whatever it shares its pages with: the chain pays one protection for all. */
    intptr_t view = view_of(lo, hi);
    int chain = -1, last = 0;
    uint64_t cseq = 0;
    if (view)
        chain = unblock_chain_step(step_key(1, buf, count, type, source, tag, comm), 1, ps, pe,
                                   &last, &cseq);
    /* A receive that covers less than UNBLOCK_RECV_COVER (3/4) of the pages it
     * would make inaccessible (a row or a column of a grid, a few variables)
     * stops the program at its next touch of the neighbouring data: a fault and
     * two protection changes for nothing (the full benchmark run: sor2d 512^2,
     * 4 KiB rows on two pages each, 4x slower with them converted). */
    if (chain < 0 &&
        (len < unblock_opt.recv_min || 100 * len < unblock_opt.recv_cover * (pe - ps))) {
        pass(UNBLOCK_PASS_shared_page);
        return 0;
    }
    /* MPI reads or writes these pages for a request of the program's own: they
     * cannot become inaccessible, and we cannot wait for that request. */
    if (unblock_own_blocks(ps, pe, 0)) {
        chain_join(chain, cseq, last, NULL);
        pass(UNBLOCK_PASS_own_nonblocking);
        return 0;
    }
    /* Operations on the same bytes finish first (their order is the program's),
     * and so do single-view protected sends on these pages (MPI still reads them). */
    unblock_protect_order(1, view, &bytes, ps, pe);
    unblock_op_t *op = claim(UNBLOCK_OP_RECV, source);
    char *rt = op && !view ? unblock_op_buffer(op, len) : NULL;
    if (op == NULL || (rt == NULL && !view)) {
        if (op)
            unblock_op_release(op);
        chain_join(chain, cseq, last, NULL);
        pass(UNBLOCK_PASS_limits);
        return 0;
    }
    op->rtbuf = rt;
    op->view = view;
    op_call(op, comm, ci);
    op->t_issue = unblock_now_ns();
    op_bytes(op, &bytes, ci);
    op->pstart = ps;
    op->pend = pe;
    chain_join(chain, cseq, last, op);
    int rc = view ? conv_mpi.irecv((char *)buf + view, count, type, source, tag, comm, REQ(op))
           : ci->ti.flat ? conv_mpi.irecv(rt, (int)len, conv_mpi.packed, source, tag, comm, REQ(op))
                         : conv_mpi.irecv(rt - ci->ti.lb, count, type, source, tag, comm, REQ(op));
    if (rc != MPI_SUCCESS) {
        unblock_op_release(op);
        return 0;
    }
    unblock_counter_add(&unblock_stats.comm_received, 1);
    unblock_counter_add(&unblock_stats.comm_bytes, len);
    if (view)
        unblock_counter_add(&unblock_stats.comm_multiview, 1);
    if (ci->ti.flat)
        unblock_counter_add(&unblock_stats.comm_derived, 1);
    if (finish_here(op, 0)) /* the message had arrived: no protection needed */
        return 1;
    unblock_progress_thaw(); /* the engine may call MPI from here on (gate.c) */
    if (unblock_op_activate(op) != 0)
        finish_here(op, 1); /* protection refused (ENOMEM): complete it now */
    return 1;
}

/* ---- the converted calls (called by the generated wrappers; -1: run the real
 * call, which the wrapper then does) ---- */

/* MPI reads (`write`: writes) bytes b, spanning [lo, hi), from now on: what owns
 * them finishes first, and the distance to add to their address for MPI.  On the
 * pool's runtime view (multiview, when `movable`) only operations on the same
 * bytes finish; elsewhere the owners of their pages. */
intptr_t conv_order_for_mpi(const unblock_bytes_t *b, uintptr_t lo, uintptr_t hi, int write,
                              int inflight, int movable)
{
    intptr_t view = movable ? view_of(lo, hi) : 0;
    if (view) {
        unblock_counter_add(&unblock_stats.comm_viewed, 1);
        if (inflight)
            unblock_protect_order(write, view, b, 0, 0);
    } else if (inflight) {
        unblock_protect_sync_range((const void *)lo, hi - lo, write);
    }
    return view;
}

/* Before a call runs blocking on a buffer (`write`: MPI writes it): returns the
 * buffer to hand MPI.  Multiview (all its bytes in the pool): the runtime view,
 * where no page is ever protected, so only operations on the same bytes finish
 * first.  Otherwise what owns its pages finishes first (the exact range when the
 * datatype is known, else everything). */
static void *before_blocking(const void *buf, int count, int ok, const call_info_t *ci, int write)
{
    int inflight = __atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) != 0;
    if (count <= 0)
        return (void *)buf;
    if (ok > 0 || (ok == -1 && ci->ti.size > 0 && (ci->ti.contiguous || ci->ti.flat))) {
        /* (A first use with a known datatype: only what owns its bytes waits.) */
        unblock_bytes_t b = conv_bytes_of(buf, count, &ci->ti);
        uintptr_t lo, hi;
        unblock_bytes_span(&b, &lo, &hi);
        return (char *)buf + conv_order_for_mpi(&b, lo, hi, write, inflight, 1);
    } else if (inflight) {
        unblock_conv_quiesce();
    }
    return (void *)buf;
}


/* The fast path: a call that will not be converted, because its message is
 * under `min` bytes (UNBLOCK_SEND_MIN, RECV_MIN), with a type whose size the
 * datatype cache has published (datatype.h), no operation in flight (nothing
 * to order it after) and a buffer outside the multiview pool (nothing to
 * translate): it goes to MPI after a few loads and compares, no lock, no clock,
 * no site.  Only the reason is counted.  What it skips, the slow path would not
 * have done for such a call (start_send/start_recv refuse it as small); a
 * communicator first used here is learnt at its first larger message. */
static inline int conv_small(const void *buf, int count, MPI_Datatype type, size_t min)
{
    if (!unblock_conv_idle() || !unblock_small(buf, count, type, min))
        return 0;
    pass(UNBLOCK_PASS_small);
    return 1;
}

/* A call whose site runs the original call, steadily, with nothing in flight
 * and its buffer outside the pool: to MPI without the checks that only a
 * conversion needs (sites.h: unblock_site_pass_quick; one call in
 * UNBLOCK_SITE_SAMPLE still takes the full path, timed, and rechecks come as
 * they would).  `bytes`: the call's size as the full path reckons it. */
static inline int conv_pass_quick(size_t bytes)
{
    return unblock_site_pass_quick(unblock_tls.call_pc, unblock_tls.call_fn, bytes) >= 0;
}

int unblock_conv_send(int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                      MPI_Comm comm, int (*real)(const void *, int, MPI_Datatype, int, int,
                                                 MPI_Comm))
{
    size_t q;
    if (conv_small(buf, count, type, unblock_opt.send_min) ||
        (unblock_conv_idle() && dest != MPI_PROC_NULL &&
         (q = unblock_fast_bytes(buf, count, type)) != 0 && conv_pass_quick(q))) {
        int rc = real(buf, count, type, dest, tag, comm);
        unblock_chain_returned();
        return rc;
    }
    call_info_t ci = { 0 };
    int ok = -3, site = -1;
    if (count > 0 && dest != MPI_PROC_NULL) {
        ok = convertible(comm, type, &ci);
        if (ok > 0 && !addressable(buf, count, &ci))
            ok = 0;
        if (ok > 0 && valid_rank(&ci.ci, dest, 0) && valid_tag(&ci.ci, tag, 0)) {
            size_t len = (size_t)ci.ti.size * (size_t)count;
            if (predicted(len, unblock_opt.send_min, &site)) {
                ci.site = site;
                uint64_t t0 = site >= 0 ? unblock_now_ns() : 0;
                if (start_send(mode, buf, count, type, dest, tag, comm, &ci, 0)) {
                    if (site >= 0)
                        unblock_site_converted(site, t0, unblock_now_ns(), len);
                    unblock_counter_add(&unblock_stats.comm_async, 1);
                    call_done(&ci);
                    return MPI_SUCCESS;
                }
            }
        }
        buf = before_blocking(buf, count, ok, &ci, 0);
    }
    uint64_t t0 = site >= 0 ? unblock_now_ns() : 0;
    int rc = real(buf, count, type, dest, tag, comm);
    if (site >= 0)
        unblock_site_passed(site, t0, unblock_now_ns());
    if (rc == MPI_SUCCESS && ok == -1)
        conv_learn(comm, type);
    call_done(&ci);
    return rc;
}

int unblock_conv_recv(void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Comm comm, MPI_Status *status,
                      int (*real)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *))
{
    size_t q;
    if (conv_small(buf, count, type, unblock_opt.recv_min) ||
        (unblock_conv_idle() && source != MPI_PROC_NULL && status == MPI_STATUS_IGNORE &&
         (q = unblock_fast_bytes(buf, count, type)) != 0 && conv_pass_quick(q))) {
        int rc = real(buf, count, type, source, tag, comm, status);
        unblock_chain_returned();
        return rc;
    }
    call_info_t ci = { 0 };
    int ok = -3, site = -1;
    if (count > 0 && source != MPI_PROC_NULL) {
        ok = convertible(comm, type, &ci);
        if (ok > 0 && !addressable(buf, count, &ci))
            ok = 0;
        if (ok > 0 && status != MPI_STATUS_IGNORE) {
            pass(UNBLOCK_PASS_status);
            ok = 0;
        } else if (ok > 0 && valid_rank(&ci.ci, source, 1) && valid_tag(&ci.ci, tag, 1)) {
            size_t len = (size_t)ci.ti.size * (size_t)count;
            if (predicted(len, unblock_opt.recv_min, &site)) {
                ci.site = site;
                uint64_t t0 = site >= 0 ? unblock_now_ns() : 0;
                if (start_recv(buf, count, type, source, tag, comm, &ci)) {
                    if (site >= 0)
                        unblock_site_converted(site, t0, unblock_now_ns(), len);
                    unblock_counter_add(&unblock_stats.comm_async, 1);
                    call_done(&ci);
                    return MPI_SUCCESS;
                }
            }
        }
        /* MPI (or the kernel, for a single-copy transfer) writes these bytes. */
        buf = before_blocking(buf, count, ok, &ci, 1);
    }
    uint64_t t0 = site >= 0 ? unblock_now_ns() : 0;
    int rc = real(buf, count, type, source, tag, comm, status);
    if (site >= 0)
        unblock_site_passed(site, t0, unblock_now_ns());
    if (rc == MPI_SUCCESS && ok == -1)
        conv_learn(comm, type);
    call_done(&ci);
    return rc;
}

static int sendrecv_done(call_info_t *sci, call_info_t *rci, int replace, int rc)
{
    call_done(sci);
    if (!replace)
        call_done(rci);
    return rc;
}

int unblock_conv_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                          void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                          MPI_Comm comm, MPI_Status *status, int replace,
                          int (*real)(const void *, int, MPI_Datatype, int, int, void *, int,
                                      MPI_Datatype, int, int, MPI_Comm, MPI_Status *),
                          int (*real_replace)(void *, int, MPI_Datatype, int, int, int, int,
                                              MPI_Comm, MPI_Status *))
{
    /* The fast path (conv_small): each half small or empty. */
    int rnone = rcount == 0 || source == MPI_PROC_NULL;
    /* The quick path of a passing site (fastpath.h), else the small one. */
    int quick = unblock_conv_idle() &&
                unblock_quick_sendrecv(unblock_tls.call_pc, unblock_tls.call_fn, sbuf, scount, stype,
                                       dest, replace ? sbuf : rbuf, rcount, rtype, source, status);
    if (quick)
        pass(UNBLOCK_PASS_predicted);
    if (quick || (unblock_conv_idle() &&
                  unblock_small_sendrecv(sbuf, scount, stype, dest, rbuf, rcount, rtype, source))) {
        if (!quick)
            pass(UNBLOCK_PASS_small);
        int rc = replace ? real_replace(rnone ? (void *)sbuf : rbuf, rcount, rtype, dest, stag, source,
                                        rtag, comm, status)
                         : real(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                                comm, status);
        unblock_chain_returned();
        return rc;
    }
    call_info_t sci = { 0 }, rci = { 0 };
    int sok = convertible(comm, stype, &sci);
    int rok = replace ? sok : convertible(comm, rtype, &rci);
    if (replace)
        rci = sci; /* one reference to its flat type, released once */
    int send_ok = sok > 0 && scount > 0 && dest != MPI_PROC_NULL &&
                  valid_rank(&sci.ci, dest, 0) && valid_tag(&sci.ci, stag, 0) &&
                  addressable(sbuf, scount, &sci);
    int recv_ok = rok > 0 && rcount > 0 && source != MPI_PROC_NULL &&
                  valid_rank(&rci.ci, source, 1) && valid_tag(&rci.ci, rtag, 1) &&
                  addressable(rbuf, rcount, &rci);
    if (recv_ok && status != MPI_STATUS_IGNORE) {
        pass(UNBLOCK_PASS_status);
        recv_ok = 0;
    }
    /* Split only when both halves are known good: the send half starts first (as
     * MPI would), then the receive half, converted or blocking.  A half with
     * nothing to transfer (MPI_PROC_NULL, count 0: the edges of a halo exchange)
     * needs no conversion. */
    int send_none = scount == 0 || dest == MPI_PROC_NULL;
    int recv_none = rcount == 0 || source == MPI_PROC_NULL;
    /* One site for the call; its converted cost is the whole call's (a receive
     * half that runs blocking included) plus the later waits of both halves. */
    int site = -1;
    size_t len = 0;
    if (sok > 0 && rok > 0 && (send_ok || recv_ok)) {
        size_t slen = send_ok ? (size_t)sci.ti.size * (size_t)scount : 0;
        size_t rlen = recv_ok ? (size_t)rci.ti.size * (size_t)rcount : 0;
        len = slen > rlen ? slen : rlen;
        if (!predicted(len, slen >= rlen ? unblock_opt.send_min : unblock_opt.recv_min, &site))
            send_ok = recv_ok = 0;
        sci.site = rci.site = site;
    }
    uint64_t t0 = site >= 0 ? unblock_now_ns() : 0;
    if (sok > 0 && rok > 0 && send_none && !recv_none && recv_ok &&
        start_recv(rbuf, rcount, rtype, source, rtag, comm, &rci)) {
        if (site >= 0)
            unblock_site_converted(site, t0, unblock_now_ns(), len);
        unblock_counter_add(&unblock_stats.comm_async, 1);
        return sendrecv_done(&sci, &rci, replace, MPI_SUCCESS);
    }
    if (sok > 0 && rok > 0 && !send_none && send_ok &&
        start_send(CALL_SEND, sbuf, scount, stype, dest, stag, comm, &sci, replace)) {
        unblock_counter_add(&unblock_stats.comm_async, 1);
        int rc = MPI_SUCCESS;
        rci.partial = 1;
        if (!recv_ok || !start_recv(rbuf, rcount, rtype, source, rtag, comm, &rci)) {
            /* The receive half runs blocking (while the send proceeds). */
            if (!recv_none)
                rbuf = before_blocking(rbuf, rcount, rok > 0 ? 1 : 0, &rci, 1);
            unblock_tls.mpi_depth++;
            rc = conv_mpi.recv(rbuf, rcount, rtype, source, rtag, comm, status);
            unblock_tls.mpi_depth--;
        }
        if (site >= 0)
            unblock_site_converted(site, t0, unblock_now_ns(), len);
        return sendrecv_done(&sci, &rci, replace, rc);
    }
    /* Blocking, as the program wrote it: first finish whatever owns its buffers
     * (nothing to do for the halves that transfer nothing). */
    if (!send_none)
        sbuf = before_blocking(sbuf, scount, sok > 0 ? 1 : 0, &sci, 0);
    if (!recv_none)
        rbuf = before_blocking(rbuf, rcount, rok > 0 ? 1 : 0, &rci, 1);
    t0 = site >= 0 ? unblock_now_ns() : 0;
    if (replace && recv_none)
        rbuf = (void *)sbuf; /* one buffer: as moved for its send half */
    int rc = replace ? real_replace(rbuf, rcount, rtype, dest, stag, source, rtag, comm, status)
                     : real(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
                            comm, status);
    if (site >= 0)
        unblock_site_passed(site, t0, unblock_now_ns());
    if (rc == MPI_SUCCESS && (sok == -1 || rok == -1)) {
        conv_learn(comm, stype);
        if (!replace)
            conv_learn(comm, rtype);
    }
    return sendrecv_done(&sci, &rci, replace, rc);
}

