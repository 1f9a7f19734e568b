/* fastpath.h — the file wrappers' fast path: a read, write, lseek, pread or pwrite
 * that unblock will not merge, queue or serve from read-ahead reaches the kernel
 * after a few loads and compares (the file analogue of src/comm/fastpath.h).
 *
 * The test is two parts, both plain loads:
 *   - nothing in the process asks a call to look around first: no block holds
 *     bytes and no job is queued or read in the background (unblock_wb_dirty), no
 *     read-ahead buffer lives (unblock_ra_live: a read of a pipe would drop it),
 *     no operation has pages protected (a buffer to check), no sidecar waits to
 *     be settled (the four in two loads: core.h, unblock_busy), and the call is
 *     the program's (not MPI's own, with file calls on);
 *   - the descriptor's byte in a flat table (unblock_fio_fast) says what the call
 *     needs besides the kernel: PASS nothing (not followed: a pipe, a file opened
 *     elsewhere, one no longer followed); WCOUNT or RCOUNT, a followed descriptor
 *     still counting its writes or reads toward merging or read-ahead, a few plain
 *     stores before the call (unblock_fio_precount_*, precount.h: a call that would
 *     start merging or read-ahead takes the full path); QUIET, a followed
 *     descriptor whose last 64 writes continued none the one before
 *     (fileio_internal.h: WB_QUIET_AFTER): its calls pass as PASS's do, a
 *     write adding to its `writes` and `bytes`, and one write in 256 takes
 *     the full path, which counts the next few one by one (a run among them
 *     starts merging); SLOW anything else (merging, reading ahead, a
 *     background write's error to return, traced).
 * Writes also need no space reserved anywhere (unblock_wb_reserving).  No lock,
 * no clock read; no function call before the kernel's but a counting
 * descriptor's precount, and the kernel's is a tail call.  Sizes that would be
 * timed or read in the background (writes of UNBLOCK_WB_TIMED, reads of
 * UNBLOCK_READ_MIN or more) take the full path.  The byte is kept by the
 * descriptor's lock holders (fileio_internal.h: wunlock) and set to SLOW by a
 * worker that leaves an error; the counting itself is unlocked (two threads
 * writing one descriptor at once may blur its counts; merging and read-ahead,
 * once started, take the kernel's offset, not the counted one).  The
 * instructions of this path are kept under a bound by a test
 * (tests/integration/fastpath_count.py, test serial.fastpath.instructions;
 * docs/performance.md). */
#ifndef UNBLOCK_FILEIO_FASTPATH_H
#define UNBLOCK_FILEIO_FASTPATH_H

#include "core/core.h"
#include "core/options.h"
#include "protect/protect.h"
#include "fileio/writebehind.h"

#include <stddef.h>
#include <sys/types.h>

#define UNBLOCK_FIO_FDS 4096 /* descriptors followed (fileio_internal.h: WB_FDS) */
enum {
    UNBLOCK_FIO_PASS = 0,
    UNBLOCK_FIO_WCOUNT,
    UNBLOCK_FIO_RCOUNT,
    UNBLOCK_FIO_QUIET,
    UNBLOCK_FIO_SLOW
};
extern UNBLOCK_HIDDEN uint8_t unblock_fio_fast[UNBLOCK_FIO_FDS];

/* Nothing in the process for a file call to do first (see above). */
static inline int unblock_fio_idle(void)
{
    return unblock_g.active && unblock_opt.io && unblock_tls.mpi_depth == 0 &&
           !unblock_busy_any(); /* (and no sidecar to settle: core.h) */
}

/* Descriptors holding space reserved ahead of merged writes: while any does, a
 * write that fails for want of space is made again after it is given back (the
 * full path's unblock_wb_space_short), so writes take the full path. */
extern UNBLOCK_HIDDEN uint32_t unblock_wb_reserving;

/* Whether a call on fd may take the fast path; *mode: what it must note. */
static inline int unblock_fio_fast_ok(int fd, unsigned *mode)
{
    if ((unsigned)fd >= UNBLOCK_FIO_FDS)
        return 0;
    *mode = unblock_fio_fast[fd];
    return *mode < UNBLOCK_FIO_SLOW && unblock_fio_idle();
}

/* A read of n bytes that is neither read in the background nor large. */
static inline int unblock_fio_small_read(size_t n)
{
    return n < unblock_opt.read_min || unblock_opt.read_min == 0;
}

/* A fast path calls nothing but the kernel's function, so that it saves no
 * register: that function not yet looked up (interpose.h), or the thread's
 * counts not yet made (core/counts.h), and the call takes the full path,
 * which does both (before any precount: the full path notes the call itself). */
#define UNBLOCK_FIO_READY(name, f, c) \
    UNBLOCK_REAL_KNOWN((f) = UNBLOCK_REAL_IF_KNOWN(name)) && (c = unblock_tls.count_slab) != NULL

/* On a counting descriptor, the counting before the call (unblock_fio_precount_*)
 * and after a read (unblock_fio_counted_read): precount.h, inlined into posix.c. */

#endif
