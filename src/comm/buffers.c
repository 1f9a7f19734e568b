/* buffers.c — the buffers of the calls that are not converted (collectives,
 * MPI-IO, Bsend/Ssend/Mrecv, the program's own requests), ordered against what is
 * in flight by the bytes they name: on the pool's runtime view after only the
 * operations on the same bytes (multiview), else after the owners of their pages.
 * The v collectives are described by counts and displacements (a buffer's span
 * runs from the lowest displacement to the end of the highest block).
 * Owns: nothing.  Calls: convert.c (communicators, bytes, the order for MPI). */
#define _GNU_SOURCE
#include "comm/convert_internal.h"
#include "core/log.h"
#include "core/sites.h"
#include "fileio/writebehind.h"
#include "memory/memory.h"
#include "progress/progress.h"
#include "protect/protect.h"

#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Process i's count in a v-collective's array (int, or MPI_Count: `wide`). */
static long long v_count(const unblock_own_buf_t *b, int i)
{
    return b->wide ? (long long)((const MPI_Count *)b->counts)[i] : ((const int *)b->counts)[i];
}

/* The instances [*first, *first + *count) a v-collective's buffer spans (its
 * group known, with `ci`); 0: not this process's to describe (its root is
 * elsewhere), -1: cannot be described (an intercommunicator's sums, NULL arrays:
 * the call says what it makes of them). */
static int v_span(const unblock_own_buf_t *b, const comm_info_t *ci, long long *first,
                  long long *count)
{
    if (b->at_root && (ci->inter ? b->root != MPI_ROOT : b->root != ci->rank))
        return 0;
    if (b->counts == NULL || (b->displs == NULL && ci->inter))
        return -1;
    long long lo = 0, hi = 0;
    if (b->mine) {
        hi = v_count(b, ci->rank);
    } else {
        int any = 0;
        for (int i = 0; i < ci->size; i++) {
            long long c = v_count(b, i);
            if (c <= 0)
                continue;
            if (b->displs == NULL) { /* blocks one after the other */
                hi += c;
                continue;
            }
            long long d = b->wide ? (long long)((const MPI_Aint *)b->displs)[i]
                                  : ((const int *)b->displs)[i];
            lo = any && lo < d ? lo : d;
            hi = any && hi > d + c ? hi : d + c;
            any = 1;
        }
    }
    *first = lo;
    *count = hi - lo;
    return 1;
}

void unblock_conv_buffers(unblock_own_buf_t *b, int n)
{
    int inflight = __atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) != 0;
    for (int i = 0; i < n; i++)
        b[i].view = 0, b[i].unknown = 0;
    if (!inflight && unblock_pool_size == 0) /* the common case: nothing to do */
        return;
    for (int i = 0; i < n; i++) {
        int v = b[i].vec;
        if (b[i].buf == MPI_IN_PLACE || (!b[i].everything && !v && b[i].count <= 0))
            continue;
        long long first = 0, count = b[i].count;
        comm_info_t ci;
        int known = !b[i].everything;
        if (known && b[i].group) {
            known = conv_comm_lookup(*b[i].group, &ci);
            if (known && v) {
                int r = v_span(&b[i], &ci, &first, &count);
                if (r == 0)
                    continue;
                known = r > 0;
            } else {
                count *= known ? ci.size : 0;
            }
        }
        uintptr_t lo, hi;
        /* (The call has not proven its handles valid yet: nothing is learnt.) */
        if (!known || !unblock_dt_span_at(b[i].buf, first, count, b[i].type, 0, &lo, &hi)) {
            b[i].unknown = !b[i].everything;
            if (inflight)
                unblock_conv_quiesce();
            inflight = 0;
            continue;
        }
        if (hi > lo) {
            /* MPI_BOTTOM with absolute displacements is never moved. */
            unblock_bytes_t bytes = { lo, NULL, hi - lo };
            b[i].view = conv_order_for_mpi(&bytes, lo, hi, b[i].writes, inflight,
                                      (uintptr_t)b[i].buf >= unblock_page_size);
        }
    }
}

void unblock_conv_buffers_done(const unblock_own_buf_t *b, int n, int rc)
{
    if (rc != MPI_SUCCESS)
        return;
    for (int i = 0; i < n; i++)
        if (b[i].unknown) {
            if (b[i].group)
                conv_learn(*b[i].group, b[i].type);
            else
                unblock_dt_learn(b[i].type);
        }
}

