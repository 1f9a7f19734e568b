/* precount.h — the fast path's counting (fastpath.h), inlined into the wrappers
 * of posix.c: on a descriptor still counting (mode WCOUNT or RCOUNT, and the
 * sampled writes of a QUIET one: unblock_fio_quiet_write), before the
 * real call, what the full path's hooks would note after it (merge.c:
 * unblock_wb_wrote and unblock_wb_pwrote, readahead.c: unblock_wb_read_done and
 * unblock_wb_pread_done, fdtable.c: unblock_wb_moved), noted as if the call will
 * move all n bytes, so that the real call is the wrapper's last (a tail call:
 * code after a system call costs a mispredicted return here, 7-9 ns,
 * docs/performance.md).  0, with nothing noted, when the call would start
 * merging or read-ahead, or the descriptor's state changed meanwhile: the full
 * path takes it.  A call that fails or moves fewer bytes blurs the counts only:
 * merging and read-ahead take the kernel's offset when they start, and a failed
 * call never starts them.  No lock: fastpath.h says why that is safe.
 *
 * Inline, not functions of merge.c, readahead.c and fdtable.c: as calls, an
 * lseek and a write on a counting descriptor took 105 instructions of unblock
 * between them, 36 of them the calls' own (docs/performance.md, "The fast
 * path's counting inlined"). */
#ifndef UNBLOCK_FILEIO_PRECOUNT_H
#define UNBLOCK_FILEIO_PRECOUNT_H

#include "fileio/fileio_internal.h"

/* write: the write that would be the third in sequence takes the full path,
 * which starts merging (writes under UNBLOCK_WB_TIMED: nothing to time). */
static inline int unblock_fio_precount_write(int fd, unsigned mode, size_t n)
{
    wb_fd_t *w = &unblock_fio_fds[fd];
    if (mode == UNBLOCK_FIO_RCOUNT) /* read-only: the kernel refuses it, nothing to note */
        return w->state == WB_RCOUNTING;
    if (w->state != WB_COUNTING || w->seq + 1u >= wb_run_length(w))
        return 0;
    unsigned calm = w->seq ? 0 : w->calm + 1u;
    if (calm >= WB_QUIET_AFTER) /* (the full path makes it quiet) */
        return 0;
    w->calm = (uint16_t)calm;
    if (n > 0)
        note_write(w, w->off, n, 0);
    w->off += (off_t)n;
    w->seq++;
    return 1;
}

static inline int unblock_fio_precount_pwrite(int fd, unsigned mode, size_t n, off_t off)
{
    wb_fd_t *w = &unblock_fio_fds[fd];
    if (mode == UNBLOCK_FIO_RCOUNT)
        return w->state == WB_RCOUNTING;
    if (w->state != WB_COUNTING)
        return 0;
    if (n == 0 || off < 0) /* nothing written: nothing noted */
        return 1;
    int continues = off == w->last_end;
    if (continues ? w->seq + 1u >= wb_run_length(w) : w->calm + 1u >= WB_QUIET_AFTER)
        return 0;
    note_write(w, off, n, 0);
    w->seq = continues ? w->seq + 1 : 0;
    w->calm = continues ? 0 : w->calm + 1;
    return 1;
}

/* write or pwrite of n bytes on a quiet descriptor (mode QUIET): counted, and
 * the one in WB_QUIET_SAMPLE takes the full path (0), the sample that counts
 * the next few one by one (fileio_internal.h: WB_QUIET_AFTER).  No offset
 * followed: that sample reads the kernel's. */
static inline int unblock_fio_quiet_write(int fd, size_t n)
{
    wb_fd_t *w = &unblock_fio_fds[fd];
    if (quiet_sample(w, n)) /* (n is under UNBLOCK_WB_TIMED here: the count alone) */
        return 0;
    quiet_count(w, n);
    return 1;
}

/* lseek: only where the new offset is known beforehand (from the start, or from
 * the current one); else the full path.  One that leaves the offset where it
 * is keeps the run (fdtable.c: unblock_wb_moved). */
static inline int unblock_fio_precount_seek(int fd, off_t off, int whence)
{
    wb_fd_t *w = &unblock_fio_fds[fd];
    if (w->state != WB_COUNTING && w->state != WB_RCOUNTING)
        return 0;
    off_t to;
    if (whence == SEEK_SET && off >= 0)
        to = off;
    else if (whence == SEEK_CUR && w->off + off >= 0)
        to = w->off + off;
    else
        return 0;
    if (to != w->off) {
        w->off = to;
        w->seq = 0;
        w->rbytes = 0;
    }
    return 1;
}

/* The length of a run of reads that starts read-ahead (readahead.c:
 * ra_run_locked): 3, doubled by each buffer dropped before it paid. */
static inline unsigned ra_run_length(const wb_fd_t *w)
{
    unsigned shift = (w->strikes < 6 ? w->strikes : 6) + (w->unleased < 8 ? w->unleased : 8);
    return 3u << shift;
}

/* read (RCOUNT; reads under UNBLOCK_READ_MIN): a read that would start
 * read-ahead takes the full path. */
static inline int unblock_fio_precount_read(int fd, size_t n)
{
    wb_fd_t *w = &unblock_fio_fds[fd];
    if (w->state != WB_RCOUNTING)
        return 0;
    if (n == 0 || n > unblock_opt.io_block / 4) {
        w->seq = 0;
    } else {
        if (w->seq + 1u >= ra_run_length(w))
            return 0;
        w->seq++;
    }
    w->off += (off_t)n;
    w->rbytes += n;
    return 1;
}

static inline int unblock_fio_precount_pread(int fd, unsigned mode, size_t n, off_t off)
{
    wb_fd_t *w = &unblock_fio_fds[fd];
    if (mode == UNBLOCK_FIO_WCOUNT) /* pread_done notes nothing there */
        return w->state == WB_COUNTING;
    if (w->state != WB_RCOUNTING)
        return 0;
    if (off < 0)
        return 1;
    int continues = off == w->plast;
    if (n == 0 || n > unblock_opt.io_block / 4 || !continues) {
        w->seq = 0;
    } else {
        if (w->seq + 1u >= ra_run_length(w))
            return 0;
        w->seq++;
    }
    w->plast = off + (off_t)n;
    w->rbytes += n;
    return 1;
}

/* A read on a descriptor open for writing too (WCOUNT), after the call: its
 * offset moves by what was read (a short read is usual there, at the end). */
static inline void unblock_fio_counted_read(int fd, ssize_t r)
{
    wb_fd_t *w = &unblock_fio_fds[fd];
    if (r > 0 && w->state == WB_COUNTING) {
        w->off += r;
        w->seq = 0;
    }
}

#endif
