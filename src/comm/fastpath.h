/* fastpath.h — the MPI wrappers' fast path: a call unblock will not convert
 * reaches MPI after a few loads and compares.
 *
 * A blocking send or receive whose message is under UNBLOCK_SEND_MIN/RECV_MIN
 * bytes is never converted (start_send/start_recv refuse it as small).  When its
 * datatype's size is published (datatype.h: unblock_dt_size_fast), nothing is in
 * flight (no operation to order it after, no merged write to flush, no
 * read-ahead to drop: what unblock_mpi_enter would do at the call) and its buffer
 * lies outside the multiview pool (nothing to translate), the generated wrapper
 * calls MPI at once: no lock, no clock read, no site lookup, no table that grows
 * with sites or requests.  One plain add to the thread's own counts counts it
 * (comm.h: unblock_mpi_count_slot's fast slot, core/counts.h; the report adds it
 * to the function's calls and to passthrough_why.small), and MPI's function is
 * the wrapper's last call, a jump (tools/gen_mpi_wrappers.py; with the
 * multiview pool the call returns to the wrapper, which tells the chain timing
 * the program runs on).  The instruction count of this path, from the
 * program's call to MPI's entry, is kept under a bound by a test
 * (tests/integration/fastpath_count.py).  Everything else takes the full path
 * (convert.c). */
#ifndef UNBLOCK_FASTPATH_H
#define UNBLOCK_FASTPATH_H

#include "comm/datatype.h"
#include "core/sites.h"
#include "core/stats.h"
#include "comm/mpi_wrap.h"
#include "memory/memory.h"

void unblock_chain_returned(void);

/* The runtime converts, and no operation is in flight for a call to be ordered
 * after (what convert.c and fortran.c check before their own fast path). */
static inline int unblock_conv_idle(void)
{
    return conv_fast && __atomic_load_n(&unblock_ops_inflight, __ATOMIC_RELAXED) == 0;
}

/* Outside MPI's own calls, the busy words 0 and the bits `bits` of core.h's
 * unblock_front_off 0 (the process active, conv_fast set, and with
 * UNBLOCK_FRONT_POOL no pool), in one OR: as tests of their own the state,
 * conv_fast and the pool were 6 instructions of every front. */
static inline int unblock_mpi_clear(uint64_t bits)
{
    return unblock_likely(unblock_tls.mpi_depth == 0 &&
                          (__atomic_load_n(&unblock_busy.w[0], __ATOMIC_RELAXED) |
                           __atomic_load_n(&unblock_busy.w[1], __ATOMIC_RELAXED) |
                           (__atomic_load_n(&unblock_front_off, __ATOMIC_RELAXED) & bits)) == 0);
}

/* The same, and nothing at this call for unblock_mpi_enter to do (no merged
 * write, read-ahead buffer or unsettled sidecar: core.h, unblock_busy). */
static inline int unblock_mpi_fast_ok(void)
{
    return unblock_mpi_clear(~(uint64_t)UNBLOCK_FRONT_POOL);
}

/* The generated wrappers' front (tools/gen_mpi_wrappers.py): unblock_mpi_fast_ok,
 * and no multiview pool (a call returning from MPI tells the chain timing: the
 * front calls MPI as a jump).  Its other checks (the thread's counts exist, MPI's function is resolved) are the
 * wrapper's own: the front calls nothing but MPI, so that it saves no register
 * (the first call of a thread and of a function take the slow part, which
 * makes both). */
static inline int unblock_mpi_front_ok(void)
{
    return unblock_mpi_clear(~(uint64_t)0);
}

/* count instances of `size` bytes (0: not known) make fewer than min bytes. */
static inline int unblock_small_sized(uint32_t size, int count, size_t min)
{
    return size != 0 && count > 0 && (size_t)count * size < min;
}

/* buf lies outside the multiview pool (nothing to translate). */
static inline int unblock_outside_pool(const void *buf)
{
    return (uintptr_t)buf - unblock_pool_base >= unblock_pool_size;
}

/* The bytes of one half of a call the fast paths may take (0: not this way):
 * a datatype with a published size, a positive count, a buffer outside the
 * pool (nothing to translate). */
static inline size_t unblock_fast_bytes(const void *buf, int count, MPI_Datatype type)
{
    uint32_t size = unblock_dt_size_fast(type);
    if (size == 0 || count <= 0)
        return 0;
    size_t b = (size_t)size * (size_t)count;
    return unblock_outside_pool(buf) ? b : 0;
}

/* One half of a call: under `min` bytes with a published size, outside the pool.
 * (unblock_fast_bytes(...) < min, written out: as a call of it the small-message
 * path took 35.5 instructions instead of 33.5, openmpi.fastpath.instructions.) */
static inline int unblock_small(const void *buf, int count, MPI_Datatype type, size_t min)
{
    uint32_t size = unblock_dt_size_fast(type);
    return unblock_small_sized(size, count, min) && unblock_outside_pool(buf);
}

/* The same in the front, where there is no pool (unblock_mpi_front_ok); the
 * threshold read last (an argument's value is read before the call, and kept in
 * a register saved for it). */
static inline int unblock_front_small(const void *buf, int count, MPI_Datatype type,
                                      const unsigned long long *min)
{
    uint32_t size = unblock_dt_size_fast(type);
    /* (written out: through unblock_small_sized the threshold's load comes before
     * the size's tests, one instruction more, openmpi.fastpath.instructions) */
    return size != 0 && count > 0 && (size_t)count * size < *min;
}

/* The bytes of a call's one buffer as the front reckons them (0: a size not
 * published, or no positive count); the front has no pool, so no range to
 * test.  A call that is not small hands them to the wrapper's second front
 * and slow part (core.h: unblock_tls.call_bytes), whose quick paths then need
 * neither the datatype's size nor the front's tests again: a 4 KiB send or receive at a
 * site that passes looked its datatype up twice, and tested the busy words
 * twice (tools/gen_mpi_wrappers.py: `front`, `quick_front`). */
static inline size_t unblock_front_bytes(int count, MPI_Datatype type)
{
    uint32_t size = unblock_dt_size_fast(type);
    return size != 0 && count > 0 ? (size_t)count * size : 0;
}

/* Such bytes under the threshold *min: the front's small call. */
static inline int unblock_front_small_bytes(size_t bytes, const unsigned long long *min)
{
    return bytes != 0 && bytes < *min;
}

/* Each half moves nothing (count 0, MPI_PROC_NULL) or is small.  Both halves
 * empty too: the edges of a halo exchange, half of its calls with 2 ranks
 * (MPI still checks the arguments and fills the status). */
static inline int unblock_small_sendrecv_in(const void *sbuf, int scount, MPI_Datatype stype,
                                            int dest, const void *rbuf, int rcount,
                                            MPI_Datatype rtype, int source, int front)
{
    int snone = scount == 0 || dest == MPI_PROC_NULL, rnone = rcount == 0 || source == MPI_PROC_NULL;
    if (front && !snone && !rnone && stype == rtype) {
        /* both halves of one type (a halo's usual call): its size once */
        uint32_t size = unblock_dt_size_fast(stype);
        return unblock_small_sized(size, scount, unblock_opt.send_min) &&
               unblock_small_sized(size, rcount, unblock_opt.recv_min);
    }
    return (snone || (front ? unblock_front_small(sbuf, scount, stype, &unblock_opt.send_min)
                            : unblock_small(sbuf, scount, stype, unblock_opt.send_min))) &&
           (rnone || (front ? unblock_front_small(rbuf, rcount, rtype, &unblock_opt.recv_min)
                            : unblock_small(rbuf, rcount, rtype, unblock_opt.recv_min)));
}
static inline int unblock_small_sendrecv(const void *sbuf, int scount, MPI_Datatype stype,
                                         int dest, const void *rbuf, int rcount,
                                         MPI_Datatype rtype, int source)
{
    return unblock_small_sendrecv_in(sbuf, scount, stype, dest, rbuf, rcount, rtype, source, 0);
}
/* The same in the front. */
static inline int unblock_front_small_sendrecv(const void *sbuf, int scount, MPI_Datatype stype,
                                               int dest, const void *rbuf, int rcount,
                                               MPI_Datatype rtype, int source)
{
    return unblock_small_sendrecv_in(sbuf, scount, stype, dest, rbuf, rcount, rtype, source, 1);
}

/* The same for the Fortran entry points (fortran.c): arguments by address,
 * datatypes as Fortran handles, MPI_BOTTOM and MPI_IN_PLACE never small.
 * The Fortran library's sentinels (MPI_BOTTOM, MPI_IN_PLACE...), their
 * granules once looked up. */
#define UNBLOCK_FORTRAN_GRANULES 4096
extern UNBLOCK_HIDDEN uint8_t unblock_fortran_sentinel_granules[UNBLOCK_FORTRAN_GRANULES];
extern UNBLOCK_HIDDEN int unblock_fortran_sentinels_ready;

/* buf's 4 KiB granule shares no entry of fortran.c's table with a sentinel's
 * (one load: most buffers; the others take the exact test). */
static inline int unblock_fortran_beyond_sentinels(const void *buf)
{
    return !unblock_fortran_sentinel_granules[((uintptr_t)buf >> 12) &
                                              (UNBLOCK_FORTRAN_GRANULES - 1)];
}

/* Whether the MPI's Fortran bindings call the C binding's public MPI_x, which
 * the C wrappers intercept (MPICH: libmpichfort calls MPI_Send), or PMPI_x
 * (Open MPI: libmpi_mpifh calls PMPI_Send; both seen with objdump on Debian
 * 12's libraries).  With the public one, a Fortran wrapper's path to MPI must
 * raise mpi_depth so that the C call inside passes through; with PMPI_x its
 * front may jump to MPI, as the C wrappers' fronts do. */
#ifdef OPEN_MPI
#define UNBLOCK_FORTRAN_CALLS_C 0
#else
#define UNBLOCK_FORTRAN_CALLS_C 1
#endif

#if UNBLOCK_FORTRAN_CALLS_C
/* Whether a Fortran wrapper's front may make the call as MPICH's Fortran
 * binding makes it, calling MPI's C function itself (fortran.c: 1 yes, -1
 * no, 0 not known yet; unblock_fortran_bytes asks), the sentinels looked up. */
extern UNBLOCK_HIDDEN int unblock_fortran_direct;
/* The same for the fast paths of MPICH's mpi_f08 descriptor forms (fortran.c). */
extern UNBLOCK_HIDDEN int unblock_fortran_direct08;
void unblock_fortran_check_direct(void);
/* Whether `flag` (one of the two) says yes, asking first while it is not
 * known: for the paths that no call of fortran.c reached before (a program's
 * own requests and their completion calls from mpif.h, which no send or
 * receive need precede). */
int unblock_fortran_direct_asked(int *flag);
#define UNBLOCK_FORTRAN_FRONT_READY unblock_fortran_direct
#else
#define UNBLOCK_FORTRAN_FRONT_READY unblock_fortran_sentinels_ready
#endif

/* The bytes of a Fortran send or receive for the Fortran wrappers' front (no
 * pool: unblock_mpi_front_ok), from the size cache by Fortran handle alone and
 * a buffer outside every sentinel's span, calling nothing; 0 for the rest of
 * the wrapper, which asks MPI when the cache does not know the handle (or,
 * on MPICH, until the front may call MPI's C function). */
static inline size_t unblock_fortran_front_bytes(const void *buf, const void *count,
                                                 const void *type)
{
    MPI_Fint n = *(const MPI_Fint *)count;
    uint32_t size = unblock_dt_size_fortran(*(const MPI_Fint *)type);
    if (size == 0 || n <= 0 || __atomic_load_n(&UNBLOCK_FORTRAN_FRONT_READY, __ATOMIC_ACQUIRE) <= 0 ||
        !unblock_fortran_beyond_sentinels(buf))
        return 0;
    return (size_t)n * size;
}

/* The same for a Fortran MPI_SENDRECV's front: each half with something to
 * move under its threshold, its handle's size known to the cache (one lookup
 * when both halves have one type, a halo's usual call), and both buffers
 * outside every sentinel's granules (a half with nothing to move too: its
 * buffer goes to MPI as it is).  A call found not small that way sets *bytes
 * to its larger half's, for the rest of the wrapper (its quick path).  Before,
 * the wrapper's own fast path spilled its 13 arguments and called fortran.c
 * for this: an 8-byte MPI_SENDRECV from mpif.h cost 250 instructions of
 * unblock on Open MPI. */
__attribute__((always_inline)) static inline int
unblock_fortran_front_small_sendrecv(const void *sbuf, const void *scount, const void *stype,
                                     const void *dest, const void *rbuf, const void *rcount,
                                     const void *rtype, const void *source, size_t *bytes)
{
    MPI_Fint sn = *(const MPI_Fint *)scount, rn = *(const MPI_Fint *)rcount;
    MPI_Fint st = *(const MPI_Fint *)stype, rt = *(const MPI_Fint *)rtype;
    int snone = sn == 0 || *(const MPI_Fint *)dest == MPI_PROC_NULL;
    int rnone = rn == 0 || *(const MPI_Fint *)source == MPI_PROC_NULL;
    uint32_t ss = snone ? 0 : unblock_dt_size_fortran(st);
    uint32_t rs = rnone ? 0 : !snone && rt == st ? ss : unblock_dt_size_fortran(rt);
    if ((!snone && (ss == 0 || sn < 0)) || (!rnone && (rs == 0 || rn < 0)) ||
        __atomic_load_n(&UNBLOCK_FORTRAN_FRONT_READY, __ATOMIC_ACQUIRE) <= 0 ||
        !unblock_fortran_beyond_sentinels(sbuf) || !unblock_fortran_beyond_sentinels(rbuf))
        return 0;
    size_t sq = snone ? 0 : (size_t)sn * ss, rq = rnone ? 0 : (size_t)rn * rs;
    if ((snone || sq < unblock_opt.send_min) && (rnone || rq < unblock_opt.recv_min))
        return 1;
    *bytes = sq > rq ? sq : rq;
    return 0;
}

/* A Fortran status argument that is MPI_STATUS_IGNORE, the sentinels looked
 * up (unblock_fortran_front_bytes returned bytes; fortran.c's ignores_status
 * looks them up first). */
extern UNBLOCK_HIDDEN void *unblock_fortran_status_ignore, *unblock_fortran_status_ignore_f08;
static inline int unblock_fortran_ignores_status(const void *status)
{
    return status != NULL && (status == unblock_fortran_status_ignore ||
                              status == unblock_fortran_status_ignore_f08);
}

/* A Fortran status as MPICH's Fortran binding hands it to the C function
 * (UNBLOCK_FORTRAN_CALLS_C, its front making the call; the sentinels looked
 * up): MPI_STATUS_IGNORE mapped, any other the C status itself. */
static inline MPI_Status *unblock_fortran_c_status(void *status)
{
    return status == unblock_fortran_status_ignore ? MPI_STATUS_IGNORE : (MPI_Status *)status;
}

/* ... a buffer and an array of statuses as MPICH's binding of MPI_ISEND,
 * MPI_IRECV and MPI_WAITALL hands them on (fortran.c looked the Fortran
 * MPI_BOTTOM and MPI_STATUSES_IGNORE up before unblock_fortran_direct). */
extern UNBLOCK_HIDDEN void *unblock_fortran_c_bottom, *unblock_fortran_c_statuses_ignore;
static inline void *unblock_fortran_c_buf(void *buf)
{
    return buf == unblock_fortran_c_bottom ? MPI_BOTTOM : buf;
}
static inline MPI_Status *unblock_fortran_c_statuses(void *statuses)
{
    return statuses == unblock_fortran_c_statuses_ignore ? MPI_STATUSES_IGNORE
                                                         : (MPI_Status *)statuses;
}

/* MPI_TEST as MPICH's binding of mpif.h makes it (objdump of Debian 12's
 * libmpichfort): the C flag given to the program's LOGICAL as 1 or 0, and
 * only when the call succeeded. */
static inline int unblock_fortran_c_test(int (*real)(MPI_Request *, int *, MPI_Status *),
                                         void *request, void *flag, void *status)
{
    int f;
    int rc = real((MPI_Request *)request, &f, unblock_fortran_c_status(status));
    if (rc == MPI_SUCCESS)
        *(MPI_Fint *)flag = f != 0;
    return rc;
}

/* The same for MPICH's mpi_f08 (the descriptor forms): its MPI_STATUS_IGNORE
 * mapped, any other status the C one (TYPE(MPI_Status) is bind(C), laid out as
 * MPI_Status). */
static inline MPI_Status *unblock_fortran_c_status08(void *status)
{
    return status == unblock_fortran_status_ignore_f08 ? MPI_STATUS_IGNORE : (MPI_Status *)status;
}
extern UNBLOCK_HIDDEN void *unblock_fortran_statuses_ignore_f08;
static inline MPI_Status *unblock_fortran_c_statuses08(void *statuses)
{
    return statuses == unblock_fortran_statuses_ignore_f08 ? MPI_STATUSES_IGNORE
                                                           : (MPI_Status *)statuses;
}

/* The base address of a gfortran array descriptor (MPICH's mpi_f08 forms), one
 * that unblock_fortran_desc_small found contiguous and no sentinel, or one of
 * a half that moves nothing. */
static inline void *unblock_fortran_desc_base(const void *desc)
{
    return *(void *const *)desc;
}

/* Whether MPICH's binding passes a descriptor's buffer to MPI's C function as
 * its base (MPIR_Isend_cdesc for a contiguous one; the Fortran MPI_BOTTOM it
 * maps, and our paths leave that to it): a scalar or one dimension of stride
 * 1, not empty, its base beyond the sentinels' granules, in a few loads; the
 * rest asks fortran.c (unblock_fortran_contiguous).  The sentinels looked up
 * (unblock_fortran_direct08 > 0). */
static inline int unblock_fortran_desc_plain(const void *desc)
{
    const int64_t *d = desc;
    int rank = ((const signed char *)&d[3])[4];
    if (d[4] == d[2] && (rank == 0 || (rank == 1 && d[5] == 1 && d[7] >= d[6])) &&
        unblock_fortran_beyond_sentinels((const void *)d[0]))
        return 1;
    return unblock_fortran_contiguous(desc, 1) != NULL;
}

/* The direct paths of the program's own requests from Fortran (OWN_FOLLOWED,
 * tools/gen_mpi_wrappers.py: fortran_direct_when): once the run is untracked,
 * nothing is followed; before, a call whose buffer is an address beyond the
 * sentinels (looked up: the slow part's first call does) goes to MPI, then into
 * the log (unblock_own_flog), unless its ierror says it failed (left out, as
 * mpi_f08 allows, the request is taken as started: if it was not, its entry
 * only keeps its buffer off limits to conversions, as the slow part does
 * too).  MPI_BOTTOM takes the wrapper's slow part (fortran_own.c: described
 * by unblock_fortran_describe).  The descriptor forms' buffer is tested by
 * their own condition (unblock_fortran_desc_plain). */
static inline int unblock_own_fdirect(const void *buf)
{
    return __atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED) ||
           (__atomic_load_n(&unblock_fortran_sentinels_ready, __ATOMIC_ACQUIRE) > 0 &&
            unblock_fortran_beyond_sentinels(buf));
}
/* The same for the descriptor forms' buffer: where the binding calls MPI's C
 * function (MPICH) their front tests it already (fortran_desc_c_when); else
 * (no such form in Open MPI 4.1) here. */
#if UNBLOCK_FORTRAN_CALLS_C
#define unblock_own_fdirect_desc(desc) 1
#else
#define unblock_own_fdirect_desc(desc) unblock_fortran_desc_plain(desc)
#endif
__attribute__((always_inline)) static inline void
unblock_own_flog(const void *buf, const void *count, const void *type, int writes, const void *req,
                 const void *ierr)
{
    int u = __atomic_load_n(&unblock_own_untracked_seen, __ATOMIC_RELAXED);
    if (unblock_unlikely(u != 0)) {
        if (u == UNBLOCK_OWN_ARMED)
            unblock_own_untracked(); /* (a slow part's start: the fronts see it before) */
        return;
    }
    if (ierr != NULL && *(const MPI_Fint *)ierr != MPI_SUCCESS)
        return;
    if (unblock_likely(unblock_own_log_fits()))
        unblock_own_log_put(unblock_own_fkey(*(const MPI_Fint *)req), buf,
                            *(const MPI_Fint *)count, unblock_own_ftype(*(const MPI_Fint *)type),
                            writes, 0, __atomic_load_n(&unblock_dt_generation, __ATOMIC_ACQUIRE),
                            UNBLOCK_OWN_FTYPE);
    else
        unblock_fortran_own_logged(buf, count, type, writes, req);
}

/* ... the bytes of a Fortran send or receive both paths reckon with, and its
 * quick path (unblock_quick, below; fortran.c). */
size_t unblock_fortran_bytes(const void *buf, const void *count, const void *type);
int unblock_fortran_quick_at(uintptr_t pc, unsigned id, size_t bytes, const void *status);
/* The same for the descriptor forms (MPICH's mpi_f08), from their arguments. */
int unblock_fortran_desc_quick_at(uintptr_t pc, unsigned id, const void *buf, const void *count,
                                  const void *type, const void *status);
int unblock_fortran_desc_quick_sendrecv(uintptr_t pc, unsigned id, const void *sbuf,
                                        const void *scount, const void *stype, const void *dest,
                                        const void *rbuf, const void *rcount, const void *rtype,
                                        const void *source, const void *status);
int unblock_fortran_quick_sendrecv(uintptr_t pc, unsigned id, const void *sbuf,
                                   const void *scount, const void *stype, const void *dest,
                                   const void *rbuf, const void *rcount, const void *rtype,
                                   const void *source, const void *status, size_t bytes);
int unblock_fortran_small_sendrecv(const void *sbuf, const void *scount, const void *stype,
                                   const void *dest, const void *rbuf, const void *rcount,
                                   const void *rtype, const void *source);
/* The descriptor forms' (MPICH's mpi_f08, gfortran's descriptors): a contiguous
 * buffer, no sentinel, under the threshold (fortran.c). */
int unblock_fortran_desc_small(const void *buf, const void *count, const void *type, size_t min);
int unblock_fortran_desc_small_sendrecv(const void *sbuf, const void *scount, const void *stype,
                                        const void *dest, const void *rbuf, const void *rcount,
                                        const void *rtype, const void *source);

/* ---- the quick path of a site that runs the original call ---- */

/* A send or a receive above the thresholds at a class the predictor runs as the
 * original call, steadily (sites.h: unblock_site_pass_quick). */
static inline int unblock_quick(uintptr_t pc, unsigned id, const void *buf, int count,
                                MPI_Datatype type)
{
    size_t q = unblock_fast_bytes(buf, count, type);
    return q && unblock_site_pass_quick(pc, id, q) >= 0;
}

/* A receive with a status is never converted (convert.c refuses it for its
 * status: the status must be filled when the call returns): to MPI at once,
 * counted as the full path counts it, its reason "status".  (The full path
 * may name an earlier reason, a datatype or communicator it cannot use; and
 * it learns the call's communicator and datatype, which the next call that
 * can be converted learns instead.) */
static inline int unblock_quick_status(void)
{
    unblock_count(UNBLOCK_COUNT_PASS + UNBLOCK_PASS_status);
    return 1;
}

/* The same with the thread's slab of counts in hand (not NULL), calling nothing. */
static inline int unblock_quick_status_in(unblock_counter_t *counts)
{
    unblock_count_in(counts, UNBLOCK_COUNT_PASS + UNBLOCK_PASS_status);
    return 1;
}

/* The same for a send-receive: each half that moves data sized and outside the
 * pool (the full path's size is then its larger half).  With a status, the
 * receive half is never converted: the send half alone decides (the full
 * path's size is the send half's), and with no send half the call passes at
 * once for its status. */
static inline int unblock_quick_sendrecv(uintptr_t pc, unsigned id, const void *sbuf, int scount,
                                         MPI_Datatype stype, int dest, const void *rbuf,
                                         int rcount, MPI_Datatype rtype, int source,
                                         const MPI_Status *status)
{
    int snone = scount == 0 || dest == MPI_PROC_NULL, rnone = rcount == 0 || source == MPI_PROC_NULL;
    if (snone && rnone)
        return 0;
    if (status != MPI_STATUS_IGNORE) {
        if (snone)
            return unblock_quick_status();
        rnone = 1;
    }
    size_t sq = snone ? 0 : unblock_fast_bytes(sbuf, scount, stype);
    size_t rq = rnone ? 0 : unblock_fast_bytes(rbuf, rcount, rtype);
    return (snone || sq) && (rnone || rq) && unblock_site_pass_quick(pc, id, sq > rq ? sq : rq) >= 0;
}

/* Counted as a call the predictor passed (what the full path counts for it). */
static inline void unblock_mpi_quick_count(unsigned id, unsigned binding)
{
    unblock_count(unblock_mpi_count_slot(id, binding, 0)); /* (its reason: sites.c) */
}

/* Counted, and the chain timing (multiview only) told the program runs on.
 * Always inline: GCC's own choice changed with the generated file's size (a
 * call of it cost the small path from mpif.h 3.5 instructions, 124.0 ->
 * 127.5, once the Fortran send-receive had its quick path). */
__attribute__((always_inline)) static inline void unblock_mpi_fast_done(unsigned id,
                                                                      unsigned binding)
{
    unblock_count(unblock_mpi_count_slot(id, binding, 1));
    if (unblock_unlikely(unblock_pool_base != 0))
        unblock_chain_returned();
}

#endif
