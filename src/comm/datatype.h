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
#include <stdint.h>

#include "core/core.h" /* UNBLOCK_HIDDEN */
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

/* 1 if `t` was seen (learned, or committed through us), convertible or not. */
int unblock_dt_known(MPI_Datatype t);

/* After a call with `t` succeeded: a predefined type is remembered; a derived type
 * the program did not commit through us is remembered as not convertible. */
void unblock_dt_learn(MPI_Datatype t);

/* The wrappers of MPI_Type_commit, MPI_Type_dup and MPI_Type_free (C), and of the
 * Fortran MPI_TYPE_COMMIT and MPI_TYPE_FREE (their handles converted with
 * MPI_Type_f2c). */
int unblock_dt_commit(MPI_Datatype *t, int (*real)(MPI_Datatype *));
int unblock_dt_dup(MPI_Datatype t, MPI_Datatype *newtype, int (*real)(MPI_Datatype, MPI_Datatype *));
int unblock_dt_free(MPI_Datatype *t, int (*real)(MPI_Datatype *));
void unblock_dt_forget_fortran(const void *fint_handle);
void unblock_dt_commit_fortran(const void *fint_handle);

/* The bytes `count` instances of `t` at `buf` may touch, [*lo, *hi); 0 if `t` is
 * not known.  With `may_learn` (the handle is known valid: a call with it
 * succeeded), a type not known yet is learnt first. */
int unblock_dt_span(const void *buf, long long count, MPI_Datatype t, int may_learn,
                    uintptr_t *lo, uintptr_t *hi);

/* The same for instances [first, first + count) (a block of a v-collective,
 * `first` its displacement, which may be negative). */
int unblock_dt_span_at(const void *buf, long long first, long long count, MPI_Datatype t,
                       int may_learn, uintptr_t *lo, uintptr_t *hi);

/* ---- the fast path's sizes ----
 * Contiguous types with no lower-bound offset, as the cache last described them:
 * a call that will not be converted (under UNBLOCK_SEND_MIN/RECV_MIN) learns its
 * bytes from here in a few loads, no lock (convert.c: conv_small).  An entry is
 * {handle, generation << 32 | size}; the writer (under the cache's lock) clears
 * the second word, stores the handle, then the second word, so a reader that sees
 * the same second word before and after the handle saw one entry whole.  A
 * generation other than the cache's (a type was freed since) is a miss. */
#define UNBLOCK_DT_SIZES 64
typedef struct {
    uintptr_t handle;
    uint64_t gen_size;
} unblock_dt_size_t;
extern UNBLOCK_HIDDEN unblock_dt_size_t unblock_dt_sizes[UNBLOCK_DT_SIZES];
extern UNBLOCK_HIDDEN uint32_t unblock_dt_cache_gen;

static inline unsigned unblock_dt_size_slot(MPI_Datatype t)
{
    return (unsigned)(((uint64_t)(uintptr_t)t * 0x9E3779B97F4A7C15ull) >> 58);
}

/* The size entry e holds for `key`, or 0 (another key, torn by a writer, or of
 * an older generation).  Each value compared as soon as it is read: few live at
 * once, so that the wrappers' front needs no register saved (fastpath.h). */
static inline uint32_t unblock_dt_entry_size(const unblock_dt_size_t *e, uintptr_t key)
{
    uint64_t a = __atomic_load_n(&e->gen_size, __ATOMIC_ACQUIRE);
    if (__atomic_load_n(&e->handle, __ATOMIC_ACQUIRE) != key ||
        __atomic_load_n(&e->gen_size, __ATOMIC_ACQUIRE) != a ||
        (a >> 32) != __atomic_load_n(&unblock_dt_cache_gen, __ATOMIC_ACQUIRE))
        return 0;
    return (uint32_t)a;
}

/* Bytes per instance of `t`, or 0 when not known that way. */
static inline uint32_t unblock_dt_size_fast(MPI_Datatype t)
{
    return unblock_dt_entry_size(&unblock_dt_sizes[unblock_dt_size_slot(t)], (uintptr_t)t);
}

/* The same keyed by a Fortran handle: the Fortran wrappers' fast path
 * (fortran.c), which otherwise converts the handle through MPI at every call
 * (Open MPI's MPI_Type_f2c: 64 instructions).  Its key is the handle plus one
 * (0: empty), its writer unblock_dt_note_fortran, under the cache's lock. */
extern UNBLOCK_HIDDEN unblock_dt_size_t unblock_dt_fsizes[UNBLOCK_DT_SIZES];

static inline uintptr_t unblock_dt_fkey(MPI_Fint f)
{
    return (uintptr_t)(uint32_t)f + 1;
}

static inline unblock_dt_size_t *unblock_dt_fentry(MPI_Fint f)
{
    return &unblock_dt_fsizes[((uint64_t)unblock_dt_fkey(f) * 0x9E3779B97F4A7C15ull) >> 58];
}

static inline uint32_t unblock_dt_size_fortran(MPI_Fint f)
{
    return unblock_dt_entry_size(unblock_dt_fentry(f), unblock_dt_fkey(f));
}

/* The Fortran handle f names t: its entry above takes t's, if t has one now. */
void unblock_dt_note_fortran(MPI_Fint f, MPI_Datatype t);

/* Bumped by every MPI_Type_free: a handle recorded before may name another type. */
extern UNBLOCK_HIDDEN uint64_t unblock_dt_generation;

/* Whether gathering a flattened type gives MPI_Pack's own bytes (checked once,
 * after MPI_Init): if not, non-contiguous types are never converted. */
int unblock_dt_pack_matches(void);

#endif
