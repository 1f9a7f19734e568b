/* fileio.h — shared by the POSIX, stdio and process wrappers. */
#ifndef UNBLOCK_FILEIO_H
#define UNBLOCK_FILEIO_H

#include "core/core.h"
#include "core/counts.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"
#include "fileio/writebehind.h"
#include "protect/protect.h"

#include <errno.h>
#include <stddef.h>
#include <sys/uio.h>

enum {
#define UNBLOCK_IO_FN(name, cat) UNBLOCK_IO_ID_##name,
#include "fileio/posix_functions.h"
#undef UNBLOCK_IO_FN
    UNBLOCK_IO_ID_COUNT_
};

/* The table of intercepted file and process functions (posix_functions.h). */
typedef enum { UNBLOCK_IO_CAT_DATA, UNBLOCK_IO_CAT_META, UNBLOCK_IO_CAT_STDIO,
               UNBLOCK_IO_CAT_PROCESS } unblock_io_cat_t;
extern UNBLOCK_HIDDEN const unsigned unblock_io_fn_count;
extern UNBLOCK_HIDDEN const char *const unblock_io_fn_names[];
extern UNBLOCK_HIDDEN const unsigned char unblock_io_fn_cat[];
/* Calls of each function: slot UNBLOCK_COUNT_IO + id of the per-thread counts
 * (core/counts.h). */
static inline uint64_t unblock_io_fn_get(unsigned id)
{
    return unblock_count_get(UNBLOCK_COUNT_IO + id);
}

/* True when a file call may be handled by the runtime: the process is accelerated,
 * file acceleration is on, and the call does not come from inside MPI (ROMIO and
 * OMPIO do their own read-modify-write under their own locks). */
static inline int unblock_io_active(void)
{
    return unblock_g.active && unblock_opt.io && unblock_tls.mpi_depth == 0;
}

/* Counts one call of `id` if the runtime handles file calls here. */
static inline int unblock_io_enter(unsigned id)
{
    if (!unblock_io_active())
        return 0;
    unblock_count(UNBLOCK_COUNT_IO + id);
    return 1;
}
/* The same at the start of a full path, which the fast paths leave to while the
 * sidecar has not been seen to let go of a descriptor (unblock_sc_unsettled):
 * it is looked at here, without waiting, so that they come back once it has. */
static inline int unblock_io_enter_full(unsigned id)
{
    if (unblock_unlikely(__atomic_load_n(&unblock_sc_unsettled, __ATOMIC_RELAXED)))
        unblock_wb_sidecar_poll();
    return unblock_io_enter(id);
}

/* Defines the wrapper of `name` that runs `before` (which counts the call) and
 * forwards it: it returns what the real call returned and leaves errno as the
 * real call left it. */
#define UNBLOCK_PASS_WITH(ret, name, params, args, before) \
    UNBLOCK_REAL_DECL(ret, name, params); \
    UNBLOCK_EXPORT ret UNBLOCK_WRAP(name) params \
    { \
        before; \
        return UNBLOCK_REAL(name) args; \
    }
/* ... that only counts it. */
#define UNBLOCK_PASS(ret, name, params, args) \
    UNBLOCK_PASS_WITH(ret, name, params, args, unblock_io_enter(UNBLOCK_IO_ID_##name))


/* Operations are in flight and this call is the program's (not MPI's own): its
 * buffers must be checked whatever UNBLOCK_IO says. */
static inline int unblock_io_touches_inflight(void)
{
    return __atomic_load_n(&unblock_ops_inflight, __ATOMIC_RELAXED) && unblock_g.active &&
           unblock_tls.mpi_depth == 0;
}

/* ---- UNBLOCK_TRACE (trace.c; docs/fileio.md, "The I/O trace") ---- */
extern UNBLOCK_HIDDEN int unblock_trace_on;
/* Records one read ('R') or write ('W') of `length` bytes at `offset` of a file,
 * named by its descriptor (the program's) or, with -1, by its path (absolute,
 * or relative to the working directory): for callers outside the POSIX
 * wrappers, such as the MPI-IO module (the program's MPI-IO calls, whose own
 * POSIX calls run inside MPI and are not traced).  A no-op when tracing is off;
 * errno is left alone; any thread. */
void unblock_trace_io(int fd_or_minus1, const char *path_or_NULL, char op, long long offset,
                      long long length);
/* The POSIX wrappers: after a call on fd that moved r bytes (nothing when r <= 0)
 * at pos, or at the descriptor's offset when pos < 0. */
void unblock_trace_call(int fd, char op, long long pos, ssize_t r);
/* fd is closed (or replaced): its number is looked at again at its next use. */
void unblock_trace_forget(int fd);
/* Every open run, and the buffer, to the trace file (exit, fork, exec). */
void unblock_trace_flush(void);
/* Whether this call is the program's and tracing is on. */
static inline int unblock_trace_wanted(void)
{
    return unblock_unlikely(__atomic_load_n(&unblock_trace_on, __ATOMIC_RELAXED)) &&
           unblock_g.active && unblock_tls.mpi_depth == 0;
}
#define UNBLOCK_TRACE_AFTER(fd, op, pos, r) \
    if (unblock_trace_wanted()) \
        unblock_trace_call((fd), (op), (pos), (r))

/* Before a process is copied, replaced, started or ended: nothing may stay in
 * flight (no page protected, no block unwritten).  Never in a vfork child, which
 * shares our memory. */
void unblock_process_quiesce(void);
/* Before a process starts beside this one (process.c). */
void unblock_process_starts(void);

/* The general wrapper: `always` runs first whatever UNBLOCK_IO says (completing
 * in-flight operations on the call's buffers); `when_io` runs when file calls are
 * the runtime's (it may set e_ to an error an earlier background write met, which
 * this call then returns with -1); `after` runs after the real call with its
 * result in r_, errno preserved around it. */
/* Calls that take space in a file and, when they fail, did nothing: made again
 * after ENOSPC or EDQUOT if unblock gave back space it held (drain.c:
 * unblock_wb_space_short).  Never fsync and the like: their error is reported
 * once, and a second call would hide it.  A constant for each wrapper. */
static inline int unblock_io_allocates(int id)
{
    return id == UNBLOCK_IO_ID_pwrite || id == UNBLOCK_IO_ID_pwrite64 ||
           id == UNBLOCK_IO_ID_writev || id == UNBLOCK_IO_ID_pwritev ||
           id == UNBLOCK_IO_ID_pwritev64 || id == UNBLOCK_IO_ID_pwritev2 ||
           id == UNBLOCK_IO_ID_pwritev64v2 || id == UNBLOCK_IO_ID_fallocate ||
           id == UNBLOCK_IO_ID_fallocate64 || id == UNBLOCK_IO_ID_sendfile ||
           id == UNBLOCK_IO_ID_sendfile64 || id == UNBLOCK_IO_ID_copy_file_range ||
           id == UNBLOCK_IO_ID_splice;
}

#define UNBLOCK_IO_CALL(ret, name, params, args, always, when_io, after) \
    UNBLOCK_REAL_DECL(ret, name, params); \
    UNBLOCK_EXPORT ret UNBLOCK_WRAP(name) params \
    { \
        UNBLOCK_IO_BODY(ret, name, args, always, when_io, after) \
    }
/* The same with a fast path (fileio/fastpath.h): `fast` runs first and returns
 * when it takes the call; the rest is a function of its own, so that the fast
 * path keeps no frame.  `traced` runs after it, with its result in r_ (the
 * trace: UNBLOCK_TRACE_AFTER; descriptors it follows never take the fast path).
 * MPI's own call (inside an MPI call: OMPIO's pread of each MPI_File_read_at)
 * goes from there to the kernel: the rest would do nothing else (no count, no
 * trace, no buffer checked, no look from outside, no merging or read-ahead:
 * each asks for the program's call; only the sidecar's look, which the
 * program's next call makes).  Through all of it, 44 instructions of unblock
 * each 8-byte MPI_File_read_at of Open MPI; the same test in the fast path
 * made it save a register (filecalls 69.7 -> 71.0 instructions a call), and
 * in the full path's body it came after the body's six registers saved: so a
 * function of its own before the body, which it reaches by a jump. */
#define UNBLOCK_IO_CALL_FAST(ret, name, params, args, fast, traced, always, when_io, after) \
    UNBLOCK_REAL_DECL(ret, name, params); \
    static __attribute__((noinline)) ret unblock_body_##name params \
    { \
        UNBLOCK_IO_BODY(ret, name, args, always, when_io, after) \
    } \
    static __attribute__((noinline)) ret unblock_full_##name params \
    { \
        unblock_real_##name##_t f_; /* (MPI's own: below; unresolved, the body) */ \
        if (unblock_unlikely(unblock_tls.mpi_depth > 0) && \
            UNBLOCK_REAL_KNOWN(f_ = UNBLOCK_REAL_IF_KNOWN(name))) \
            return f_ args; \
        return unblock_body_##name args; \
    } \
    UNBLOCK_IO_TRACED(ret, name, params, args, traced) \
    UNBLOCK_EXPORT ret UNBLOCK_WRAP(name) params \
    { \
        fast; \
        UNBLOCK_IO_TAIL(name, args); \
    }
/* A wrapper's full path as a tail call (no frame for the fast path to keep:
 * the trace's look came after the call and made it a call, a frame or up to
 * four registers saved on every call), and, while tracing (set once at the start), through
 * unblock_traced_<name>: the full path, then `traced` with its result in r_. */
#define UNBLOCK_IO_TRACED(ret, name, params, args, traced) \
    static __attribute__((noinline)) ret unblock_traced_##name params \
    { \
        ret r_ = unblock_full_##name args; \
        traced; \
        return r_; \
    }
#define UNBLOCK_IO_TAIL(name, args) \
    if (unblock_unlikely(__atomic_load_n(&unblock_trace_on, __ATOMIC_RELAXED))) \
        return unblock_traced_##name args; \
    return unblock_full_##name args
#define UNBLOCK_IO_BODY(ret, name, args, always, when_io, after) \
    int io_ = unblock_io_enter_full(UNBLOCK_IO_ID_##name), e_ = 0; \
    always; \
    if (io_) { \
        when_io; \
        if (e_) { \
            errno = e_; \
            return (ret)-1; \
        } \
    } \
    ret r_ = UNBLOCK_REAL(name) args; \
    if (unblock_io_allocates(UNBLOCK_IO_ID_##name) && unblock_unlikely(r_ == (ret)-1) && io_ && \
        unblock_wb_space_short(errno)) \
        r_ = UNBLOCK_REAL(name) args; \
    if (io_) { \
        int saved_ = errno; \
        after; \
        errno = saved_; \
    } \
    return r_;
/* A call that looks at a file's name or size (stat, open, ...): it waits for
 * the message receives in flight, as a read does (below). */
#define UNBLOCK_SYNC_LOOK \
    if (unblock_unlikely(unblock_io_touches_inflight())) \
        unblock_protect_receives_done()
/* A read (kernel_writes: the kernel writes the buffer) also waits for the
 * message receives in flight: their sender may have written what it reads
 * before it sent (protect.h: unblock_protect_receives_done). */
#define UNBLOCK_SYNC_BUF(buf, len, kernel_writes) \
    if (unblock_unlikely(unblock_io_touches_inflight())) { \
        if (kernel_writes) \
            unblock_protect_receives_done(); \
        unblock_protect_sync_range((buf), (len), (kernel_writes)); \
    }
#define UNBLOCK_SYNC_IOV(kernel_writes) \
    if (unblock_unlikely(unblock_io_touches_inflight())) { \
        if (kernel_writes) \
            unblock_protect_receives_done(); \
        unblock_io_sync_iov(iov, cnt, (kernel_writes)); \
    }

/* The same for a vector of buffers. */
void unblock_io_sync_iov(const struct iovec *iov, int cnt, int kernel_writes);
/* posix.c: what a mapping of fd needs first where no wrapper saw it
 * (memory.h: unblock_memory_map_hook, set at the module's start). */
int unblock_io_map_unseen(int fd);

/* Like UNBLOCK_PASS, completing everything in flight first (and then `then`). */
#define UNBLOCK_PASS_QUIESCE_THEN(ret, name, params, args, then) \
    UNBLOCK_REAL_DECL(ret, name, params); \
    UNBLOCK_EXPORT ret UNBLOCK_WRAP(name) params \
    { \
        unblock_io_enter(UNBLOCK_IO_ID_##name); \
        unblock_process_starts(); \
        unblock_process_quiesce(); \
        then; \
        return UNBLOCK_REAL(name) args; \
    }
#define UNBLOCK_PASS_QUIESCE(ret, name, params, args) \
    UNBLOCK_PASS_QUIESCE_THEN(ret, name, params, args, )

#endif
