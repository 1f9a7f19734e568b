/* counts.h — counts of calls kept per thread, so counting one costs a plain add.
 *
 * Every intercepted MPI and file call is counted by function (the report's
 * "functions" tables).  A relaxed atomic add is exact from any thread but is a
 * locked instruction: about 4.4 ns here, which a small message's fast path pays
 * twice per half round trip (0.1 µs on Open MPI's shared memory: 5-9 %).  So
 * each thread counts into a slab of its own, with a plain load and store (only
 * that thread writes it); a reader adds up every slab.  A thread's slab is made
 * at its first count (mmap: also from a signal handler) and put on a list that
 * is never shortened; when the thread ends its slab is marked free, and the
 * next new thread takes it over, counts and all, so the sums stay exact and a
 * program that starts thread after thread does not grow.  (On x86-64 a count
 * is one add to memory, core.h: unblock_counter_bump.  Elsewhere one loss
 * remains: a signal handler that makes a counted call between the load and
 * the store of the call it interrupted, in the same slot, loses one of the two
 * counts.)
 *
 * Slots: the file functions (fileio.h's ids), then the MPI functions' calls and
 * their fast-path calls (comm.h's ids × bindings), then the few counters of the
 * report that a call of a kind bumps every time (the program's own requests
 * followed, the calls of the sites' quick path by reason).  Owns: the slabs.
 * Calls: nothing of the runtime. */
#ifndef UNBLOCK_COUNTS_H
#define UNBLOCK_COUNTS_H

#include "core/core.h"
#include "core/stats.h"

enum {
    UNBLOCK_COUNT_IO = 0,                        /* + fileio's function id */
    UNBLOCK_COUNT_IO_MAX = 224,
    UNBLOCK_COUNT_MPI = UNBLOCK_COUNT_IO_MAX,    /* + id * bindings + binding */
    UNBLOCK_COUNT_MPI_MAX = 384,                 /* MPI functions at most */
    UNBLOCK_COUNT_MPI_FAST = UNBLOCK_COUNT_MPI + UNBLOCK_COUNT_MPI_MAX * UNBLOCK_BINDING_COUNT,
    /* Counters of the report bumped on every call of a kind: */
    UNBLOCK_COUNT_OWN_TRACKED = UNBLOCK_COUNT_MPI_FAST + UNBLOCK_COUNT_MPI_MAX * UNBLOCK_BINDING_COUNT,
    UNBLOCK_COUNT_PASS, /* + a reason (stats.h): calls of the quick path (sites.h) */
    UNBLOCK_COUNT_SLOTS = UNBLOCK_COUNT_PASS + UNBLOCK_PASS_COUNT
};

/* This thread's slab is unblock_tls.count_slab (core.h; NULL until its first count). */
unblock_counter_t *unblock_count_slab_new(void);

/* One more call in slot `i`, from the calling thread.  Always inlined: the
 * wrappers' fast paths call it, and GCC's own choice in the generated file
 * changed with the file's size (a call there cost the taken MPI-IO write 13
 * instructions, 21 -> 34, twice: openmpi.fastpath.instructions). */
__attribute__((always_inline)) static inline void unblock_count(unsigned i)
{
    unblock_counter_t *s = unblock_tls.count_slab;
    if (unblock_unlikely(s == NULL))
        s = unblock_count_slab_new();
    unblock_counter_bump(&s[i]);
}

/* One more call in slot `i` of the calling thread's slab `s` (unblock_tls.count_slab,
 * not NULL), for a path that calls nothing: it reads the slab itself and leaves
 * its first count to a path that may make it. */
__attribute__((always_inline)) static inline void unblock_count_in(unblock_counter_t *s, unsigned i)
{
    unblock_counter_bump(&s[i]);
}

/* Slot `i` summed over every thread that counted (the report, the profile). */
uint64_t unblock_count_get(unsigned i);

#endif
