/* stats.h — the counters every part bumps, and the per-process JSON report.
 *
 * Per-function call counts live with the wrappers (generated MPI table, fileio
 * table); totals such as comm.calls are derived from them when the file is written,
 * so the hot path bumps exactly one counter. */
#ifndef UNBLOCK_STATS_H
#define UNBLOCK_STATS_H

#include "core/core.h"

enum { UNBLOCK_BINDING_C, UNBLOCK_BINDING_F77, UNBLOCK_BINDING_F08, UNBLOCK_BINDING_COUNT };

/* Why a blocking call that could have been converted ran as the original call. */
#define UNBLOCK_PASS_REASONS(X) \
    X(status, "the program asked for a status") \
    X(errhandler, "the communicator's errors return to the program") \
    X(datatype, "a datatype that cannot be flattened, or that the program did not commit through MPI_Type_commit") \
    X(first_use, "the first call with this communicator and datatype") \
    X(memory, "memory that is never protected (small block, stack, static, shared)") \
    X(small, "a send smaller than UNBLOCK_SEND_MIN (MPI's eager protocol returns at once)") \
    X(shared_page, "a receive smaller than UNBLOCK_RECV_MIN or than 3/4 of the pages it would protect") \
    X(no_thread, "no MPI_THREAD_MULTIPLE: only copied sends are converted") \
    X(limits, "caps on operations in flight or copy bytes reached") \
    X(own_nonblocking, "the program has its own nonblocking requests") \
    X(predicted, "the call site's converted calls cost more than its blocking ones") \
    X(excluded, "UNBLOCK_EXCLUDE names the function or the call site") \
    X(other, "MPI_Finalize was called, or protection was refused")
enum {
#define UNBLOCK_X(name, doc) UNBLOCK_PASS_##name,
    UNBLOCK_PASS_REASONS(UNBLOCK_X)
#undef UNBLOCK_X
    UNBLOCK_PASS_COUNT
};

typedef struct {
    unblock_counter_t comm_async;        /* blocking calls that ran in the background */
    unblock_counter_t comm_copied;       /* ... of which sends from a runtime copy */
    unblock_counter_t comm_protected;    /* ... sends whose pages were made read-only */
    unblock_counter_t comm_received;     /* ... receives (a runtime buffer or view) */
    unblock_counter_t comm_multiview;    /* ... sends and receives on the runtime view */
    unblock_counter_t comm_viewed;       /* buffers of other calls handed to MPI on the
                                            runtime view (blocking, collective, MPI-IO,
                                            the program's own requests) */
    unblock_counter_t comm_bytes;        /* bytes of converted operations */
    unblock_counter_t comm_immediate;    /* ... complete right after they started */
    unblock_counter_t comm_derived;      /* ... with a non-contiguous datatype (packed) */
    unblock_counter_t comm_types_flattened; /* derived datatypes flattened */
    unblock_counter_t comm_own_untracked;/* 1 once one could not be followed (conservative) */
    unblock_counter_t comm_pass[UNBLOCK_PASS_COUNT]; /* convertible calls that were not */
    unblock_counter_t comm_faults;       /* faults on pages owned by a message */
    unblock_counter_t engine_started;    /* 1 once the completion thread runs */
    unblock_counter_t engine_completed;  /* operations the completion thread completed */
    unblock_counter_t engine_tests;      /* its rounds of tests */
    unblock_counter_t engine_ns;         /* ... and the time they took */
    unblock_counter_t engine_thaws;      /* the gate (comm/gate.c): MPI's thread safety on */
    unblock_counter_t engine_freezes;    /* ... and off again */
    unblock_counter_t tick_started;      /* 1 once the tick's timer exists (progress/tick.c) */
    unblock_counter_t tick_armed;        /* times it was armed (operations in flight) */
    unblock_counter_t tick_polls;        /* ticks that polled: the program's own code ran */
    unblock_counter_t tick_deferred;     /* ticks that did not: inside libc, MPI, unblock */
    unblock_counter_t tick_completed;    /* operations the ticks completed */
    unblock_counter_t tick_fault_waits;  /* faults in the program's code that called MPI */
    unblock_counter_t tick_fault_unsafe; /* ... elsewhere (libc: UNBLOCK_TICK_CONVERT's risk) */
    unblock_counter_t protect_calls;     /* protection changes (mprotect/uffd ioctls) */
    unblock_counter_t protect_enomem;    /* protection refused: completed at once */
    unblock_counter_t verify_failures;   /* UNBLOCK_VERIFY: writes that slipped past */
    unblock_counter_t protect_copied_in_place; /* receives written through /proc/self/mem */
    unblock_counter_t protect_finished_early; /* ops finished by the thread that saw them
                                                 complete (no fault, no later call) */
    unblock_counter_t large_blocks;      /* allocations given pages of their own */
    unblock_counter_t large_bytes;       /* ... bytes asked for */
    unblock_counter_t large_overhead;    /* ... bytes of page rounding */
    unblock_counter_t large_reused;      /* ... served by a freed block kept mapped */
    unblock_counter_t chain_learned;     /* chains learned (seen UNBLOCK_CHAIN_LEARN times) */
    unblock_counter_t chain_started;     /* chains protected ahead by their first request */
    unblock_counter_t chain_hits;        /* ... whose every request came as learned */
    unblock_counter_t chain_misses;      /* ... closed early: another request, or a touch */
    unblock_counter_t pool_reserved;     /* bytes of address space of each pool view */
    unblock_counter_t pool_peak;         /* most bytes of pool blocks in use at once */
    unblock_counter_t pool_outside;      /* large blocks mapped outside the pool (full, or
                                            larger than UNBLOCK_POOL_LARGEST) */
    unblock_counter_t pool_fork_copies;  /* forks that copied the pool for the child */
    unblock_counter_t pool_fork_bytes;   /* ... bytes of pool they spanned */
    unblock_counter_t io_async;          /* file calls completed in the background */
    unblock_counter_t io_merged;         /* small writes merged into a block */
    unblock_counter_t io_direct;         /* ... made in the call: merging did not pay */
    unblock_counter_t io_readahead_hits; /* reads served from read-ahead */
    unblock_counter_t io_readahead_fills;/* ... and the preads that filled it */
    unblock_counter_t io_readahead_broken;/* ... buffers dropped: another process opened
                                            the file for writing (the lease broke) */
    unblock_counter_t io_readahead_unleased;/* runs of reads not read ahead: no read
                                            lease (the file open for writing somewhere) */
    unblock_counter_t io_errors_deferred;/* background write errors (returned later) */
    unblock_counter_t io_errors_returned;/* ... of which a later call returned */
    unblock_counter_t io_flushes;        /* merged blocks written to their file */
    unblock_counter_t io_flushed_bytes;  /* bytes written from blocks and queued writes */
    unblock_counter_t io_workers;        /* write-behind threads started (one per filesystem;
                                            again after one ended idle) */
    unblock_counter_t io_worker_ends;    /* workers that ended idle (UNBLOCK_IO_IDLE_MS) */
    unblock_counter_t io_sidecar;        /* 1: the crash-safety sidecar ran */
    unblock_counter_t io_sidecar_files;  /* ... descriptors it held a duplicate of */
    unblock_counter_t io_sidecar_failed; /* 1: it could not start (one line said why) */
    unblock_counter_t io_sidecar_unsafe; /* blocks not in its shared memory (taken before) */
    unblock_counter_t io_sidecar_waits;  /* large writes that waited for room in the copy
                                            budget rather than be queued unseen */
    unblock_counter_t io_sidecar_drops;  /* descriptors it let go of while the program
                                            went on (no round trip at close) */
    unblock_counter_t io_sidecar_settles; /* waits for it to have let go (a process
                                             started, a chmod, a lease) */
    unblock_counter_t io_warmed;         /* bytes of a block's memory made ready at
                                            MPI_Init (worker.c: buffers_warm_one) */
    unblock_counter_t io_reserved;       /* fallocates ahead of buffered data (none
                                            where a file is rewritten in place) */
    unblock_counter_t io_reserve_kept;   /* reservations past the end left allocated: the
                                            file was open elsewhere (no write lease) */
    unblock_counter_t io_space_retries; /* calls retried after giving back reservations (ENOSPC) */
    unblock_counter_t io_waits;          /* program calls that waited for a worker's queue */
    unblock_counter_t io_merge_stops;    /* descriptors back to counting: blocks forced out
                                            before they held 16 writes (drain.c) */
    unblock_counter_t io_quiet;          /* descriptors gone quiet: writes sampled (fdtable.c) */
    unblock_counter_t io_quiet_samples;  /* quiet descriptors' writes sampled: the next few
                                            counted one by one */
    unblock_counter_t io_handler_kept;   /* writes a signal handler made in the middle of
                                            one of ours on that descriptor, made after it */
    unblock_counter_t io_signals_held;   /* signals whose handler waited until this thread
                                            let go of a descriptor lock (signals.c) */
    unblock_counter_t comm_own_progressed;/* the program's requests the completion thread
                                            drove to completion */
    unblock_counter_t comm_own_driveable;/* ... started large enough to be driven */
    unblock_counter_t comm_own_undriven; /* ... of them not driven: the program waited
                                            for such requests at once (requests.c) */
    unblock_counter_t comm_own_late;     /* driven requests the program waited for late
                                            (where driving can help) */
    unblock_counter_t comm_own_trial;    /* requests followed before a first run's trial
                                            ended following them (requests.c), or 0 */
    unblock_counter_t io_reads_cached;   /* large reads answered at once from the page cache */
    unblock_counter_t io_reads_background;/* large reads that returned while a worker reads */
    unblock_counter_t io_read_chunks;    /* ... in pieces of about UNBLOCK_IO_BLOCK */
    unblock_counter_t io_read_faults;    /* pieces the program waited for (served first) */
    unblock_counter_t io_read_reorders;  /* pieces read before others queued ahead of them */
    unblock_counter_t io_read_errors;    /* background reads that failed after the call */
    unblock_counter_t io_read_leases;    /* read leases taken (news need not wait for them) */
    unblock_counter_t io_protected_writes;/* large writes queued from the program's pages,
                                            made read-only, instead of a copy */
    unblock_counter_t io_protected_bytes; /* ... their bytes */
    unblock_counter_t io_write_faults;   /* ... whose pages the program wrote (or freed)
                                            first: the rest was copied out */
    unblock_counter_t io_write_waits;    /* ... and past the copy budget: it waited */
} unblock_stats_t;

extern UNBLOCK_HIDDEN unblock_stats_t unblock_stats;

/* Writes the report to `path` (through a temporary name and rename, so a reader
 * never sees half a file).  Returns 0, or -1 with errno set. */
int unblock_stats_write(const char *path);

/* The file name for this process inside `dir`: unblock-<rank>.json after MPI_Init,
 * unblock-<pid>.json otherwise. */
void unblock_stats_path(const char *dir, char *out, unsigned outlen);

#endif
