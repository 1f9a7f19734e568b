/* fileio.h — shared by the POSIX, stdio and process wrappers. */
#ifndef UNBLOCK_FILEIO_H
#define UNBLOCK_FILEIO_H

#include "core/core.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"

enum {
#define UNBLOCK_IO_FN(name, cat) UNBLOCK_IO_ID_##name,
#include "fileio/posix_functions.h"
#undef UNBLOCK_IO_FN
    UNBLOCK_IO_ID_COUNT_
};

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
    unblock_counter_add(&unblock_io_fn_calls[id], 1);
    return 1;
}

/* Defines the wrapper of `name` that counts the call and forwards it: it returns
 * what the real call returned and leaves errno as the real call left it. */
#define UNBLOCK_PASS(ret, name, params, args) \
    UNBLOCK_REAL_DECL(ret, name, params); \
    UNBLOCK_EXPORT ret UNBLOCK_WRAP(name) params \
    { \
        unblock_io_enter(UNBLOCK_IO_ID_##name); \
        return UNBLOCK_REAL(name) args; \
    }

#endif
