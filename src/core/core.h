/* core.h — what every part of the runtime shares: process state, per-thread state,
 * counters and the helper macros.  Internal: nothing here is exported. */
#ifndef UNBLOCK_CORE_H
#define UNBLOCK_CORE_H

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <unblock.h> /* UNBLOCK_VERSION (generated: include/unblock.h.in) */

#include "core/job.h"

/* Symbols the program must see (wrappers); everything else is hidden by
 * -fvisibility=hidden. */
#define UNBLOCK_EXPORT __attribute__((visibility("default")))
/* On every declaration of a variable of the runtime (all are hidden, by
 * -fvisibility=hidden): without it, a file that only declares one reads it
 * through the GOT, a lea and a load, as if another object could define it. */
#define UNBLOCK_HIDDEN __attribute__((visibility("hidden")))
#define UNBLOCK_TLS __thread __attribute__((tls_model("initial-exec")))
#define unblock_likely(x) __builtin_expect(!!(x), 1)
#define unblock_unlikely(x) __builtin_expect(!!(x), 0)

typedef uint64_t unblock_counter_t;

/* Counters are bumped from any thread; relaxed atomics are exact and cost one
 * locked add, which the pass-through budget (15 ns) allows. */
static inline void unblock_counter_add(unblock_counter_t *c, uint64_t n)
{
    __atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* n more (or one: _bump), without the lock prefix: for a counter only one
 * thread adds to (core/counts.h's slabs, MPI-IO's cursor), or where two threads
 * adding at the same instant may lose one (sites.c's quick path).  Readers on
 * other threads see whole values. */
static inline void unblock_counter_bump_by(unblock_counter_t *c, uint64_t n)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

__attribute__((always_inline)) static inline void unblock_counter_bump(unblock_counter_t *c)
{
    /* (not through _by: that extra level kept GCC from inlining unblock_count
     * in the MPI wrappers, 11 instructions a call.)  On x86-64 one add to
     * memory, without the lock prefix: GCC makes a load, an add and a store of
     * the atomic form, two instructions more of every counted call; and a
     * signal handler's count can no longer fall between them (counts.h). */
#if defined(__x86_64__)
    __asm__("addq $1, %0" : "+m"(*c));
#else
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
#endif
}

/* A spin lock for short critical sections (a table scan, a few stores); after
 * 200 spins it yields, so a holder preempted on a shared core gets to run.
 * Async-signal-safe: the fault handler takes the table lock. */
static inline void unblock_spin_lock(int *word)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(word, __ATOMIC_RELAXED)) {
            if (++spins < 200)
                __builtin_ia32_pause();
            else
                sched_yield();
        }
    }
}

static inline void unblock_spin_unlock(int *word)
{
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);
}

/* CLOCK_MONOTONIC in ns (the vDSO: about 20 ns here; async-signal-safe). */
static inline uint64_t unblock_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t unblock_counter_get(const unblock_counter_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* What this process is to unblock (decided once, in the constructor). */
typedef enum {
    UNBLOCK_ROLE_UNSET = 0,
    UNBLOCK_ROLE_PROGRAM,     /* the program the user named: accelerated, writes stats */
    UNBLOCK_ROLE_TRANSPARENT, /* a shell or launcher on the way to it: pass-through */
    UNBLOCK_ROLE_CHILD,       /* started by the program: pass-through unless CHILDREN=1 */
    UNBLOCK_ROLE_DISABLED     /* UNBLOCK_DISABLE=1 */
} unblock_role_t;

typedef struct {
    /* Nonzero when wrappers may do their own work; zero means every wrapper only
     * forwards to the real function. */
    int active;
    unblock_role_t role;
    pid_t pid;        /* getpid() at start or after fork */
    int rank;         /* MPI_COMM_WORLD rank once MPI is initialised, else -1 */
    int size;         /* MPI_COMM_WORLD size, else 0 */
    int mpi_abi_ok;   /* the loaded MPI library has the ABI this library was built for */
    int mpi_thread_provided;
    int protect_ready; /* the SIGSEGV handler is installed: operations may protect */
    int program_threads; /* threads the program started (not MPI's): with any, a
                            receive's data are written before its pages open */
    /* Called by the only thread of the program just before it starts another
     * (the first time program_threads leaves 0): what that thread kept for
     * itself alone goes where every thread sees it (comm: requests.c's log). */
    void (*before_first_thread)(void);
    char exe[64];     /* basename of the executable, for the report */
    unblock_job_t job; /* its place in the job, as its launcher says (read at start) */
} unblock_global_t;

extern UNBLOCK_HIDDEN unblock_global_t unblock_g;

/* What every fast path looks at first, in 16 bytes: five counts and flags of
 * other modules, each kept there by atomic operations on its own field
 * (protect.h: unblock_ops_inflight, operations in flight; fileio/writebehind.h:
 * unblock_wb_dirty, descriptors with bytes waiting and jobs queued,
 * unblock_ra_live, read-ahead buffers, unblock_sc_unsettled, the sidecar not yet
 * settled; comm/mpi_wrap.h: unblock_mpiio_news, MPI-IO writes held back that
 * the next MPI call that may tell another process writes first).  A fast path reads them all with two loads (unblock_busy_any): as
 * four variables they took four address computations and four loads in each
 * MPI and file wrapper's fast path (docs/performance.md). */
typedef union {
    struct {
        uint32_t ops_inflight, wb_dirty, ra_live;
        uint16_t sc_unsettled, mpiio_news;
    } n;
    uint64_t w[2];
} __attribute__((aligned(16))) unblock_busy_t;
extern UNBLOCK_HIDDEN unblock_busy_t unblock_busy;

/* Set by a module while it holds writes that the program's own POSIX calls and
 * the processes it starts would find in the file without unblock (MPI-IO
 * write-behind, while a file it follows is open: ROMIO and OMPIO write in the
 * call).  fileio calls it outside MPI: `all` 1 before a process starts (every
 * file), 0 after an open or stat found the file (dev, ino), and before a call
 * on a descriptor of a file it was found to follow (fileio/fdtable.c:
 * unblock_wb_outside).  It returns UNBLOCK_LOOK_WROTE where it wrote something
 * (the stat is then made again), and with `all` 0 UNBLOCK_LOOK_FOLLOWED or
 * UNBLOCK_LOOK_GONE where it knows whether it follows the file (0: it could
 * not look, from this thread or here). */
enum { UNBLOCK_LOOK_WROTE = 1, UNBLOCK_LOOK_FOLLOWED = 2, UNBLOCK_LOOK_GONE = 4 };
typedef int (*unblock_outside_look_t)(int all, uint64_t dev, uint64_t ino);
extern UNBLOCK_HIDDEN unblock_outside_look_t unblock_outside_look;

/* Descriptors the runtime opened for itself (a lease, the trace's file, the
 * sidecar's socket and memory, a background read's duplicate, MPI-IO's
 * descriptor beside MPI, the multiview pool's memory): the program never opened
 * them, so its close, close_range and closefrom pass them by, as calls on numbers
 * it does not have (fileio/posix.c).  Numbers below UNBLOCK_OWN_FDS only. */
#define UNBLOCK_OWN_FDS 4096
/* The lowest number a duplicate of the runtime's takes (fileio_internal.h:
 * dup_high; unblock_own_move): high, but inside the kernel's first table. */
#define UNBLOCK_OWN_FD_LOW 56
extern UNBLOCK_HIDDEN uint64_t unblock_own_fds[UNBLOCK_OWN_FDS / 64];

/* fd (if not negative) is the runtime's from now on; returns it. */
static inline int unblock_own_fd(int fd)
{
    if ((unsigned)fd < UNBLOCK_OWN_FDS)
        __atomic_or_fetch(&unblock_own_fds[fd / 64], 1ull << (fd % 64), __ATOMIC_RELEASE);
    return fd;
}

static inline int unblock_fd_is_own(int fd)
{
    return (unsigned)fd < UNBLOCK_OWN_FDS &&
           (__atomic_load_n(&unblock_own_fds[fd / 64], __ATOMIC_ACQUIRE) >> (fd % 64) & 1);
}

/* Closes a descriptor of the runtime's (no longer its own first: its number may
 * be the program's next). */
void unblock_own_close(int fd);

/* Where the runtime keeps own descriptor fd's number (a variable it reads
 * before each use), so that the number can move: the program's dup2 or dup3
 * onto it (it may pick any number, and the kernel would replace the runtime's
 * file there) first moves the runtime's descriptor to another number and
 * stores that in *holder (unblock_own_move, from fileio/posix.c).  A descriptor
 * without a holder cannot move. */
void unblock_own_hold(int fd, int *holder);
/* 0 when fd, an own descriptor with a holder, now lives at another number
 * (fd closed: it is the program's to take); -1 when it could not move (no
 * holder, or no number free): the program's call then replaces it. */
int unblock_own_move(int fd);

/* Why the MPI wrappers' fronts (comm/fastpath.h: unblock_mpi_front_ok) may
 * not go to MPI at once, besides the busy words and the thread's depth: one
 * word, 0 when they may, tested in the same OR as the busy words, where three
 * tests of three words were.  Each bit is kept by the layer that owns its
 * state, beside that state (set before a path closes, cleared after it opens:
 * a front that read 0 raced the change as it would have raced the state; a
 * fork child's, set after unblock_g.active, has one thread). */
enum {
    UNBLOCK_FRONT_INACTIVE = 1, /* unblock_g.active is 0 (core/init.c) */
    UNBLOCK_FRONT_POOL = 2,     /* the multiview pool exists (memory/pool.c) */
    UNBLOCK_FRONT_MPI = 4       /* comm's conv_fast is 0 (comm/lifecycle.c) */
};
extern UNBLOCK_HIDDEN uint64_t unblock_front_off;
static inline void unblock_front_set(uint64_t bit, int off)
{
    if (off)
        __atomic_or_fetch(&unblock_front_off, bit, __ATOMIC_SEQ_CST);
    else
        __atomic_and_fetch(&unblock_front_off, ~bit, __ATOMIC_SEQ_CST);
}

/* Whether any of them is nonzero (each half read whole: x86-64). */
static inline int unblock_busy_any(void)
{
    return (__atomic_load_n(&unblock_busy.w[0], __ATOMIC_RELAXED) |
            __atomic_load_n(&unblock_busy.w[1], __ATOMIC_RELAXED)) != 0;
}

/* Per-thread state.  `mpi_depth` > 0 while the thread is inside an MPI call we
 * intercepted: MPI's own POSIX calls (ROMIO/OMPIO read-modify-write) and its
 * internal MPI calls then pass through untouched, and a Fortran call that MPICH
 * routes through C MPI_x is counted once. */
typedef struct {
    int mpi_depth;
    unblock_counter_t *count_slab; /* counts.h: this thread's slab of counts (NULL until its
                                      first; here, not a variable of its own, so that a
                                      wrapper finds it and mpi_depth by one TLS offset) */
    int resolving; /* inside dlsym: a wrapper re-entered from there must not recurse */
    int runtime;   /* a runtime thread (the completion thread): must never wait on a fault */
    void *copy_env; /* a sigjmp_buf while copying from a program's buffer (signals.c) */
    uintptr_t call_pc; /* the program's call site of the MPI call being converted */
    uintptr_t call_site; /* ... as a generated wrapper hands it to its slow part */
    size_t call_bytes; /* ... with the bytes of the call's one buffer as its front
                          reckoned them (0: not reckoned; fastpath.h:
                          unblock_front_bytes) */
    unsigned call_fn;  /* ... and which function it is */
    int in_signal;     /* inside our SIGSEGV handler (signals.c): no tick polls there */
    uintptr_t fault_pc; /* ... the faulting instruction (progress/tick.c decides from it
                           whether the handler may call MPI) */
    int wb_locks;      /* fileio's descriptor locks this thread holds (fileio_internal.h:
                          a signal handler's file call in the middle of one of ours) */
    int wb_replaying;  /* ... and the writes such a handler made on a descriptor whose */
    void *wb_deferred; /* lock this thread held, made when it lets go (drain.c) */
    int sig_pending;   /* signals held while wb_locks was not 0 (protect/signals.c) ... */
    void *sig_held;    /* ... kept here, sent again by unblock_signals_release ... */
    int sig_releasing; /* ... whose handlers run now (their news is no strike: drain.c) */
    unsigned mpi_fsyncs; /* fsync and fdatasync calls made inside MPI calls on this
                            thread (fileio/posix.c; mpiio/file.c: whether MPI's
                            MPI_File_sync synced the file itself) */
    int received;      /* this thread converted a receive (comm/convert.c) ... */
    int program;       /* ... or is the program's: its main thread, or one it started
                          outside MPI (protect/threads.c).  Their file reads wait for
                          the receives in flight (protect.h:
                          unblock_protect_receives_done); never an MPI library's
                          own thread's (UCX's reads its sockets) */
} unblock_tls_t;

extern UNBLOCK_HIDDEN UNBLOCK_TLS unblock_tls_t unblock_tls;

/* The signals whose handlers were held while this thread held a descriptor lock
 * (protect/signals.c), sent again with their siginfo: fileio calls it when the
 * thread lets go of its last lock with sig_pending set. */
void unblock_signals_release(void);

/* The calling thread is one of the runtime's own (a file worker, the MPI-IO
 * thread): its calls pass through the wrappers, it never waits on a fault, and
 * the program's asynchronous signals go to the program's threads (init.c). */
void unblock_runtime_thread(void);
/* Starts a runtime thread by `create` (the real pthread_create) with the
 * program's asynchronous signals blocked from its first instruction (the
 * creator's mask is blocked around the call, then put back).  Before, a signal
 * for the process could come to the new thread before it blocked them, and
 * the program's handler ran on a runtime thread: a handler writing to a file
 * whose lock the starting thread held waited for it, while that thread waited
 * for the new one to run (serial.writebehind.sigsame, 2 runs in 6). */
int unblock_runtime_thread_create(int (*create)(pthread_t *, const pthread_attr_t *,
                                                void *(*)(void *), void *),
                                  pthread_t *t, const pthread_attr_t *attr,
                                  void *(*fn)(void *), void *arg);

/* Writes the statistics file if UNBLOCK_STATS is set and this process owns one.
 * Safe to call more than once (only the first call writes) and from _exit. */
void unblock_core_flush_at_exit(void);
/* The core's own part of a fork child (init.c; module.c calls it after the
 * modules' fork_child hooks). */
void unblock_core_fork_child(void);

#endif
