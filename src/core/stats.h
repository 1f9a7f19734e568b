/* stats.h — the counters every part bumps, and the per-process JSON report.
 *
 * Per-function call counts live with the wrappers (generated MPI table, fileio
 * table); totals such as comm.calls are derived from them when the file is written,
 * so the hot path bumps exactly one counter. */
#ifndef UNBLOCK_STATS_H
#define UNBLOCK_STATS_H

#include "core/core.h"

enum { UNBLOCK_BINDING_C, UNBLOCK_BINDING_F77, UNBLOCK_BINDING_F08, UNBLOCK_BINDING_COUNT };

typedef struct {
    unblock_counter_t comm_async;        /* blocking calls that ran in the background */
    unblock_counter_t comm_faults;       /* faults on pages owned by a message */
    unblock_counter_t protect_calls;     /* protection changes (mprotect/uffd ioctls) */
    unblock_counter_t io_async;          /* file calls completed in the background */
    unblock_counter_t io_merged;         /* small writes merged into a block */
    unblock_counter_t io_readahead_hits; /* reads served from read-ahead */
    unblock_counter_t io_errors_deferred;/* background errors returned by a later call */
} unblock_stats_t;

extern unblock_stats_t unblock_stats;

/* Tables of the intercepted functions.  The MPI one is generated per MPI library
 * (src/comm/mpi_functions.txt); the file one is src/fileio/posix_functions.h. */
extern const unsigned unblock_mpi_fn_count;
extern const char *const unblock_mpi_fn_names[];
extern const unsigned char unblock_mpi_fn_carries_data[];
extern unblock_counter_t unblock_mpi_fn_calls[][UNBLOCK_BINDING_COUNT];

typedef enum { UNBLOCK_IO_CAT_DATA, UNBLOCK_IO_CAT_META, UNBLOCK_IO_CAT_STDIO,
               UNBLOCK_IO_CAT_PROCESS } unblock_io_cat_t;
extern const unsigned unblock_io_fn_count;
extern const char *const unblock_io_fn_names[];
extern const unsigned char unblock_io_fn_cat[];
extern unblock_counter_t unblock_io_fn_calls[];

/* Writes the report to `path` (through a temporary name and rename, so a reader
 * never sees half a file).  Returns 0, or -1 with errno set. */
int unblock_stats_write(const char *path);

/* The file name for this process inside `dir`: unblock-<rank>.json after MPI_Init,
 * unblock-<pid>.json otherwise. */
void unblock_stats_path(const char *dir, char *out, unsigned outlen);

#endif
