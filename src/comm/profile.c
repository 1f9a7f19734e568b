/* profile.c — the program's profile across its ranks (core/profile.h).
 *
 * Every rank read its own copy before MPI_Init, to choose the thread level it
 * asks for (lifecycle.c).  Right after MPI_Init rank 0's copy is broadcast, so
 * every rank seeds its call sites from the same profile (and, where it says
 * following the program's own requests bought nothing, arms requests.h's
 * UNBLOCK_OWN_ARMED); at MPI_Finalize the ranks say whether any needed the
 * completion thread or that following, and rank 0 writes the profile.  Both
 * collectives run on MPI_COMM_WORLD with the real functions, when no
 * collective of the program can be in progress (inside MPI_Init and at the
 * start of MPI_Finalize), and on every rank alike: whether they run depends
 * only on options the launcher gives every rank. */
#define _GNU_SOURCE
#include "comm/convert_internal.h"
#include "core/log.h"
#include "core/profile.h"

#include <string.h>

typedef int (*bcast_t)(void *, int, MPI_Datatype, int, MPI_Comm);
typedef int (*allreduce_t)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

static int shared; /* the ranks run the profile's collectives */

/* What MPI_THREAD_MULTIPLE costs a call, measured here (docs/performance.md,
 * "The thread level"): a blocking ping-pong of 8 B to 2 KiB, 2 ranks bound,
 * with the completion thread's level against the program's own: Open MPI 4.1
 * shared memory 60-140 ns per call, MPICH 4.0 (ch4:ucx) 10-20 ns. */
#if defined(OPEN_MPI)
#define THREAD_CALL_NS 100
#else
#define THREAD_CALL_NS 20
#endif

static int active(void)
{
    return unblock_g.active && unblock_g.mpi_abi_ok && unblock_opt.comm &&
           !(unblock_opt.profile && strcmp(unblock_opt.profile, "off") == 0);
}

/* Rank 0's profile to every rank (they seed their sites from it). */
static void share(void)
{
    bcast_t bcast = (bcast_t)UNBLOCK_PMPI(MPI_Bcast);
    MPI_Datatype mint = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_int", MPI_INT);
    MPI_Datatype mchar = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_char", MPI_CHAR);
    const char *text = NULL;
    int len = (int)unblock_profile_text(&text);
    if (bcast(&len, 1, mint, 0, conv_mpi.world) != MPI_SUCCESS)
        return;
    static char got[65536];
    if (len < 0 || (size_t)len >= sizeof(got))
        return;
    if (len > 0 && bcast(unblock_g.rank == 0 ? (void *)text : got, len, mchar, 0,
                         conv_mpi.world) != MPI_SUCCESS)
        return;
    if (unblock_g.rank != 0)
        unblock_profile_adopt(got, (size_t)len);
}

void conv_profile_after_init(void)
{
    if (active()) {
        shared = 1;
        if (unblock_g.size > 1)
            share();
    }
    /* Following the program's own requests bought nothing last run, or the
     * user said so (requests.h: UNBLOCK_OWN_ARMED). */
    if (unblock_opt.own_follow == UNBLOCK_OWN_FOLLOW_NO) {
        unblock_own_arm();
        unblock_profile_chose_own(0, "UNBLOCK_OWN_FOLLOW=no");
    } else if (unblock_opt.own_follow == UNBLOCK_OWN_FOLLOW_AUTO) {
        int needed = unblock_profile_own_needed();
        if (needed == 0) {
            unblock_own_arm();
            unblock_profile_chose_own(0, NULL);
        } else if (needed < 0) { /* (no profile says: a trial, UNBLOCK_OWN_TRIAL) */
            unblock_own_trial_start(unblock_opt.own_trial);
        }
    }
}

void conv_profile_finalize(void)
{
    if (!shared)
        return;
    shared = 0;
    uint64_t calls = 0;
    for (unsigned i = 0; i < unblock_mpi_fn_count; i++)
        for (unsigned b = 0; b < UNBLOCK_BINDING_COUNT; b++)
            calls += unblock_mpi_fn_get(i, b, 0) + unblock_mpi_fn_get(i, b, 1);
    int threaded = unblock_counter_get(&unblock_stats.engine_started) != 0;
    const char *why = unblock_profile_thread_reason(threaded, calls, THREAD_CALL_NS,
                                                    unblock_own_late_helped());
    const char *own_why;
    int own = unblock_own_profile_word(&own_why);
    /* [0] the thread, [1] following own requests (0 none started, 1 not
     * needed, 2 needed): the most any rank says */
    int mine[2] = { why != NULL, own }, any[2] = { mine[0], mine[1] };
    if (unblock_g.size > 1) {
        /* Every rank's answer, though only rank 0 writes the profile: with a
         * reduction to rank 0, a rank that arrived early sent its part and went
         * on into MPI_Finalize while rank 0 was still at the program's last
         * work, and MPICH 4.0 over UCX's TCP then hung in rank 0's
         * MPI_Finalize (a message received after its sender began finalizing:
         * a plain program that does that hangs too).  With an all-reduction
         * no rank leaves before every rank has reached it, so none begins
         * finalizing while another is still at its own work. */
        allreduce_t allreduce = (allreduce_t)UNBLOCK_PMPI(MPI_Allreduce);
        MPI_Datatype mint = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_int", MPI_INT);
        MPI_Op max = UNBLOCK_MPI_HANDLE(MPI_Op, "ompi_mpi_op_max", MPI_MAX);
        if (allreduce(mine, any, 2, mint, max, conv_mpi.world) != MPI_SUCCESS)
            return;
    }
    if (unblock_g.rank == 0 || unblock_g.size <= 1)
        unblock_profile_save(any[0], mine[0] ? why : any[0] ? "another rank needed it" : "",
                             any[1] - 1, any[1] == mine[1] ? own_why : "another rank's");
}
