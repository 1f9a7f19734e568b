/* datatype.h — what the runtime knows about the program's datatypes.
 *
 * A converted call needs the bytes its datatype touches: contiguous types (one
 * run of bytes, whatever the order of their typemap) are copied as a memory image
 * and sent with their own type; any other type is flattened (protect/ranges.h)
 * and sent packed (MPI_PACKED, gathered in typemap order) or received packed and
 * scattered.  Handles are never kept past the program's own life of the type:
 *   - predefined types are learnt after a call with them succeeded (which also
 *     proves the handle valid);
 *   - derived types are known only when the program committed (or duplicated) them
 *     through a wrapper, are flattened at their first converted use, and are
 *     forgotten when the program frees them, so a reused handle never meets a stale
 *     entry.  Types MPI creates and frees inside itself (MPICH's mpi_f08 layer) are
 *     never seen, hence never cached: calls with them run as the original call. */
#ifndef UNBLOCK_DATATYPE_H
#define UNBLOCK_DATATYPE_H

#include <mpi.h>

#include "protect/ranges.h"

typedef struct {
    int contiguous;       /* `count` instances are the bytes [lb, lb + size * count) */
    MPI_Aint lb, size;    /* true lower bound; bytes per instance */
    unblock_flat_t *flat; /* not contiguous: the flattened type, held for the caller
                             (unblock_flat_release), or NULL: not convertible */
    int packed_ok;        /* a flat type may be sent as MPI_PACKED (else only as a
                             copy of its memory image, with its own type) */
} unblock_dt_t;

/* 1: `t` is known, *out filled (a flat type comes with a reference the caller
 * releases or hands to an operation); 0: not known yet (the call runs as the
 * original call, then unblock_dt_learn). */
int unblock_dt_lookup(MPI_Datatype t, unblock_dt_t *out);

/* After a call with `t` succeeded: a predefined type is remembered; a derived type
 * the program did not commit through us is remembered as not convertible. */
void unblock_dt_learn(MPI_Datatype t);

/* The wrappers of MPI_Type_commit, MPI_Type_dup and MPI_Type_free (C), and of the
 * Fortran MPI_TYPE_FREE (its handle converted with MPI_Type_f2c). */
int unblock_dt_commit(MPI_Datatype *t, int (*real)(MPI_Datatype *));
int unblock_dt_dup(MPI_Datatype t, MPI_Datatype *newtype, int (*real)(MPI_Datatype, MPI_Datatype *));
int unblock_dt_free(MPI_Datatype *t, int (*real)(MPI_Datatype *));
void unblock_dt_forget_fortran(const void *fint_handle);

/* The bytes `count` instances of `t` at `buf` may touch, [*lo, *hi); 0 if `t` is
 * not known.  With `may_learn` (the handle is known valid: a call with it
 * succeeded), a type not known yet is learnt first. */
int unblock_dt_span(const void *buf, long long count, MPI_Datatype t, int may_learn,
                    uintptr_t *lo, uintptr_t *hi);

/* The same for instances [first, first + count) (a block of a v-collective,
 * `first` its displacement, which may be negative). */
int unblock_dt_span_at(const void *buf, long long first, long long count, MPI_Datatype t,
                       int may_learn, uintptr_t *lo, uintptr_t *hi);

/* Bumped by every MPI_Type_free: a handle recorded before may name another type. */
extern uint64_t unblock_dt_generation;

/* Whether gathering a flattened type gives MPI_Pack's own bytes (checked once,
 * after MPI_Init): if not, non-contiguous types are never converted. */
int unblock_dt_pack_matches(void);

#endif
