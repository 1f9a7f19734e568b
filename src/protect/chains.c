/* chains.c — learning chains of requests, and protecting them ahead.
 *
 * A halo exchange is the same few calls every iteration.  Each converted call on
 * pool memory is a step, named by a key: the call site (return address and
 * function), which half of the call, and its arguments (buffer, count, datatype
 * and the datatype generation, peer, tag, communicator).  The steps between two
 * returns of the same first key are one period; when a period has been the same
 * UNBLOCK_CHAIN_LEARN times in a row (3), it is a learned chain.  The next time
 * its first key comes, the first request protects the pages of every request of
 * the chain at once (protect.c: a chain op, one protection change per run of
 * pages, runs closer than UNBLOCK_CHAIN_GAP pages merged); the requests that
 * follow and match change no protection, and the pages open once, when the last
 * one is done (or at the one fault that waits for them all).
 *
 * A request that does not match the chain closes it (a miss: the chain is
 * learned again); so does a fault before the chain is complete, which waits only
 * for the requests issued so far.  Chains are learned only in programs that do
 * not start threads of their own (the steps of several threads would interleave).
 * All of this runs in the program's one thread; the chain op itself is kept under
 * the table lock in protect.c. */
#define _GNU_SOURCE
#include "protect/protect.h"
#include "memory/memory.h"
#include "core/options.h"
#include "core/stats.h"

#include <string.h>

#define STEPS 16   /* steps of one chain */
#define CHAINS 8   /* learned chains kept */

typedef struct {
    uint64_t key;
    int recv;
    uintptr_t ps, pe;
} step_t;

typedef struct {
    step_t s[STEPS];
    unsigned n;
    unsigned seen; /* periods in a row with exactly these steps */
} chain_t;

static step_t rec[STEPS];  /* the period being recorded */
static unsigned nrec;
static chain_t learned[CHAINS];
static unsigned next_victim;

uint32_t unblock_chain_boundary;
static uint64_t returned_ns; /* when the last converted call returned */
#define PHASE_GAP_NS 50000  /* more time in the program than this ends a phase */

void unblock_chain_returned(void)
{
    /* Steps exist only with the pool: no clock read on every call without it. */
    if (unblock_pool_base != 0 && unblock_opt.chain_learn != 0)
        returned_ns = unblock_now_ns();
}

static int inst = -1;      /* the chain in flight: its op's slot ... */
static uint64_t inst_seq;  /* ... and sequence number */
static chain_t *inst_chain;
static unsigned inst_pos;  /* steps of it issued */

static chain_t *find(uint64_t first)
{
    for (unsigned i = 0; i < CHAINS; i++)
        if (learned[i].n && learned[i].s[0].key == first)
            return &learned[i];
    return NULL;
}

/* A period ended: does it repeat the chain it starts? */
static void end_period(void)
{
    if (nrec == 0)
        return;
    chain_t *c = find(rec[0].key);
    int same = c && c->n == nrec;
    for (unsigned i = 0; same && i < nrec; i++)
        same = c->s[i].key == rec[i].key && c->s[i].ps == rec[i].ps && c->s[i].pe == rec[i].pe;
    if (same) {
        if (++c->seen == unblock_opt.chain_learn)
            unblock_counter_add(&unblock_stats.chain_learned, 1);
    } else {
        if (c == NULL)
            c = &learned[next_victim++ % CHAINS];
        memcpy(c->s, rec, nrec * sizeof(step_t));
        c->n = nrec;
        c->seen = 1;
    }
    nrec = 0;
}

/* The chain's pages as sorted runs, neighbours closer than the gap merged.
 * Returns the number of runs, 0 if they do not fit. */
static unsigned runs_of(const chain_t *c, uintptr_t (*runs)[2], int *recv)
{
    unsigned n = 0;
    uintptr_t r[STEPS][2];
    *recv = 0;
    for (unsigned i = 0; i < c->n; i++) {
        *recv |= c->s[i].recv;
        if (c->s[i].pe <= c->s[i].ps)
            continue;
        /* insertion by start */
        unsigned j = n++;
        for (; j > 0 && r[j - 1][0] > c->s[i].ps; j--) {
            r[j][0] = r[j - 1][0];
            r[j][1] = r[j - 1][1];
        }
        r[j][0] = c->s[i].ps;
        r[j][1] = c->s[i].pe;
    }
    uintptr_t gap = (uintptr_t)unblock_opt.chain_gap * unblock_page_size;
    unsigned m = 0;
    for (unsigned i = 0; i < n; i++) {
        if (m && r[i][0] <= runs[m - 1][1] + gap) {
            if (r[i][1] > runs[m - 1][1])
                runs[m - 1][1] = r[i][1];
            continue;
        }
        if (m == UNBLOCK_CHAIN_RUNS)
            return 0;
        runs[m][0] = r[i][0];
        runs[m][1] = r[i][1];
        m++;
    }
    return m;
}

int unblock_chain_step(uint64_t key, int recv, uintptr_t ps, uintptr_t pe, int *last,
                       uint64_t *seq)
{
    *last = 0;
    if (unblock_opt.chain_learn == 0 ||
        __atomic_load_n(&unblock_g.program_threads, __ATOMIC_RELAXED) > 0)
        return -1;
    /* The chain in flight: the next step it expects? */
    int covered = -1;
    if (inst >= 0) {
        if (unblock_chain_open(inst, inst_seq) && inst_pos < inst_chain->n &&
            inst_chain->s[inst_pos].key == key) {
            covered = inst;
            *seq = inst_seq;
            *last = ++inst_pos == inst_chain->n;
            if (*last)
                unblock_counter_add(&unblock_stats.chain_hits, 1);
        } else {
            if (inst_pos < inst_chain->n) {
                /* Closed early (a fault, a wait) or another request came. */
                unblock_chain_close(inst, inst_seq);
                unblock_counter_add(&unblock_stats.chain_misses, 1);
                inst_chain->seen = 0;
            }
            inst = -1;
        }
    }
    /* Recording: the first key coming back ends a period, and so do a fault
     * since the last step (the program touched its data) and time spent in the
     * program since the last call (it computed): the last two keep periods
     * aligned with the program's phases, wherever the recording started. */
    int phase_ended = __atomic_load_n(&unblock_chain_boundary, __ATOMIC_RELAXED) ||
                      (returned_ns && unblock_now_ns() - returned_ns > PHASE_GAP_NS);
    /* The program's time runs again only once this call returns: the receive
     * half of a Sendrecv, stepped after its send half, must not count the time
     * before the call a second time (the period would start at it). */
    returned_ns = 0;
    if (nrec && (key == rec[0].key || phase_ended))
        end_period();
    __atomic_store_n(&unblock_chain_boundary, 0, __ATOMIC_RELAXED);
    if (nrec == STEPS)
        nrec = 0; /* no repeating pattern this short: start again */
    rec[nrec++] = (step_t){ key, recv, ps, pe };
    if (covered >= 0 || inst >= 0 || nrec != 1)
        return covered;
    /* A period starts: protect its learned chain ahead. */
    chain_t *c = find(key);
    if (c == NULL || c->seen < unblock_opt.chain_learn || c->n < 2)
        return -1;
    uintptr_t runs[UNBLOCK_CHAIN_RUNS][2];
    int any_recv;
    unsigned nruns = runs_of(c, runs, &any_recv);
    int slot = nruns ? unblock_chain_begin((const uintptr_t(*)[2])runs, nruns, any_recv) : -1;
    if (slot < 0)
        return -1;
    inst = slot;
    inst_seq = unblock_op_seq(slot);
    inst_chain = c;
    inst_pos = 1;
    *seq = inst_seq;
    unblock_counter_add(&unblock_stats.chain_started, 1);
    return slot;
}
