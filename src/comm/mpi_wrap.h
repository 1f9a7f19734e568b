/* mpi_wrap.h — what the generated MPI wrappers (tools/gen_mpi_wrappers.py) need.
 *
 * Built once per MPI implementation: UNBLOCK_MPI_SONAMES and
 * UNBLOCK_MPI_FORTRAN_SONAMES name that implementation's libraries, for the lookup
 * that mpi4py's RTLD_LOCAL loading needs (see interpose.h). */
#ifndef UNBLOCK_MPI_WRAP_H
#define UNBLOCK_MPI_WRAP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "core/options.h"
#include "core/stats.h"
#include "comm/comm.h"
#include "interpose/interpose.h"
#include "fileio/writebehind.h"
#include "protect/protect.h"
#include "comm/requests.h"

/* What the runtime does at a call (generated table unblock_mpi_fn_kind): the kinds
 * from OWN_ASYNC on act even with nothing in flight. */
enum {
    UNBLOCK_MPI_KIND_PLAIN,       /* no buffer: finish what is done, nothing else */
    UNBLOCK_MPI_KIND_CONVERT,     /* handled by convert.c */
    UNBLOCK_MPI_KIND_DATA,        /* takes a buffer not checked yet: complete all first */
    UNBLOCK_MPI_KIND_BUFS,        /* takes buffers its wrapper describes and orders
                                     (unblock_conv_buffers; Fortran too) */
    UNBLOCK_MPI_KIND_OWN_TRACKED, /* starts a request of the program that requests.c
                                     follows (C binding; from Fortran: OWN_ASYNC) */
    UNBLOCK_MPI_KIND_OWN_FOLLOWED, /* the same, from Fortran too (fortran_own.c) */
    UNBLOCK_MPI_KIND_OWN_ASYNC,   /* the program's own request, not followed */
    UNBLOCK_MPI_KIND_FINALIZE,
    UNBLOCK_MPI_KIND_FORGET_COMM  /* communicator handles may be reused */
};
extern UNBLOCK_HIDDEN const unsigned char unblock_mpi_fn_kind[];
void unblock_conv_at_call(unsigned kind, unsigned id);
/* Whether a call may tell another process that this one's earlier writes are
 * done (generated table, bit 1): every call that sends, starts a receive (a
 * synchronous send completes when it matches), or is collective; not the
 * calls that only look, wait or test (an operation started before a write
 * cannot tell of it), make types or error handlers, nor the calls on files,
 * whose news src/mpiio/ sees in its hook.  Bit 2: whether it may tell this
 * process of another's writes: those, and the calls that wait, test or look
 * (MPI_Wait completes a receive started before). */
#define UNBLOCK_NEWS_TELLS 1
#define UNBLOCK_NEWS_HEARS 2
/* Bit 4: the call reads a file or its size (MPI_File_read*, iread*, get_size,
 * seek): the message receives in flight complete first (their senders may
 * have written it before they sent; a converted receive returned at once). */
#define UNBLOCK_NEWS_LOOKS 4
extern UNBLOCK_HIDDEN const unsigned char unblock_mpi_fn_news[];

/* On the pass-through path too (UNBLOCK_COMM=0): blocks of merged writes reach
 * their files before an MPI call could tell another process to read them, and
 * read-ahead is dropped (the call may bring news that a file changed). */
static inline void unblock_mpi_skip_hook(void)
{
    if (unblock_unlikely(__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED) |
                         __atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED) |
                         __atomic_load_n(&unblock_sc_unsettled, __ATOMIC_RELAXED)) &&
        unblock_tls.mpi_depth == 0)
        unblock_wb_news();
}

/* convert.c: the converted calls.  Each returns the call's result, having run the
 * real call itself when it could not convert. */
int unblock_conv_send(int mode, const void *buf, int count, MPI_Datatype type, int dest, int tag,
                      MPI_Comm comm, int (*real)(const void *, int, MPI_Datatype, int, int,
                                                 MPI_Comm));
int unblock_conv_recv(void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Comm comm, MPI_Status *status,
                      int (*real)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *));
int unblock_conv_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                          void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                          MPI_Comm comm, MPI_Status *status, int replace,
                          int (*real)(const void *, int, MPI_Datatype, int, int, void *, int,
                                      MPI_Datatype, int, int, MPI_Comm, MPI_Status *),
                          int (*real_replace)(void *, int, MPI_Datatype, int, int, int, int,
                                              MPI_Comm, MPI_Status *));
/* Fortran handles to C ones (Open MPI's converters are functions in libmpi). */
MPI_Comm unblock_comm_f2c(MPI_Fint f);
MPI_Datatype unblock_type_f2c(MPI_Fint f);

/* fortran.c: the Fortran entry points of the converted calls; `a` holds the
 * call's arguments, `descriptor` says the buffers are gfortran descriptors
 * (MPICH's mpi_f08), `real` is the real Fortran function. */
void unblock_fortran_send(int mode, void **a, int descriptor, void (*real)());
void unblock_fortran_recv(void **a, int descriptor, void (*real)());
void unblock_fortran_sendrecv(void **a, int descriptor, void (*real)());
void unblock_fortran_sendrecv_replace(void **a, int descriptor, void (*real)());
/* The Fortran entry points of the other calls with buffers (BUFS in
 * tools/gen_mpi_wrappers.py): each buffer's argument positions (group: the
 * communicator's when the count is per process; displs, root: a v-collective's;
 * -1: none) and flags (UNBLOCK_FBUF_ARRAY: the count is an array,
 * UNBLOCK_FBUF_MINE: only this process's block).  Before the real call,
 * unblock_fortran_buffers describes them to unblock_conv_buffers and moves the
 * arguments in `a` that go to MPI on the runtime view (`large`: MPI_Count counts,
 * the _f08ts_large_ forms); after it, unblock_fortran_buffers_done with the
 * ierror argument (NULL when left out). */
#define UNBLOCK_FBUFS_MAX 2
#define UNBLOCK_FDESC_WORDS(rank) (5 + 3 * (rank)) /* a gfortran descriptor's words */
enum { UNBLOCK_FBUF_ARRAY = 1, UNBLOCK_FBUF_MINE = 2 };
typedef struct {
    signed char buf, count, type, writes, group, displs, root, flags;
} unblock_fbuf_t;
typedef struct {
    unblock_own_buf_t b[UNBLOCK_FBUFS_MAX];
    MPI_Comm comm[UNBLOCK_FBUFS_MAX];
    int64_t desc[UNBLOCK_FBUFS_MAX][UNBLOCK_FDESC_WORDS(15)]; /* moved copies of descriptors */
    int n;
} unblock_fbufs_t;
void unblock_fortran_buffers(unblock_fbufs_t *f, void **a, const unblock_fbuf_t *s, int n,
                             int descriptor, int large);
void unblock_fortran_buffers_done(const unblock_fbufs_t *f, const void *ierr);
/* The description and ordering unblock_fortran_buffers makes when something
 * is in flight or there is a pool, made always: the program's own requests from
 * Fortran (OWN_FOLLOWED) are logged with it, after the real call, by
 * unblock_fortran_own_after (fortran_own.c) with the request and ierror
 * arguments (ierror NULL when left out). */
void unblock_fortran_describe(unblock_fbufs_t *f, void **a, const unblock_fbuf_t *s, int n,
                              int descriptor, int large);
void unblock_fortran_own_after(const unblock_fbufs_t *f, const void *req, const void *ierr);
void unblock_fortran_own_logged(const void *buf, const void *count, const void *type, int writes,
                                const void *req);
/* A Fortran completion call's requests (n handles at reqs: MPI_Fint, or
 * mpi_f08's type(MPI_Request), the same int): saved before the real call while
 * requests are followed (requests.h: unblock_own_tracking), and after it those
 * MPI turned into MPI_REQUEST_NULL taken as completed (unblock_own_done), or
 * with `freed` (MPI_REQUEST_FREE) as freed (unblock_own_freed). */
typedef struct {
    MPI_Fint n, *keys, small[16];
} unblock_freqs_t;
void unblock_fortran_reqs_save(unblock_freqs_t *r, MPI_Fint n, const void *reqs);
void unblock_fortran_reqs_done(unblock_freqs_t *r, const void *reqs, int freed);
/* MPI_INIT asks for MPI_THREAD_MULTIPLE through `init_thread` (the MPI_INIT_THREAD
 * entry point of the same binding); MPI_INIT_THREAD for it; MPI_QUERY_THREAD says
 * what the program asked for. */
void unblock_fortran_init(void **a, const char *init_thread, void (*real)());
void unblock_fortran_init_thread(void **a, void (*real)());
void unblock_fortran_query_thread(void **a, void (*real)());

int unblock_conv_init(int *argc, char ***argv, int required, int *provided, int is_thread,
                      int (*real_init)(int *, char ***),
                      int (*real_init_thread)(int *, char ***, int, int *));
int unblock_conv_query_thread(int *provided, int (*real)(int *));
/* The thread level the program asked for (what it is told), -1 if not known yet. */
int unblock_conv_want_multiple(int required);
void unblock_conv_program_level(int level);
int unblock_conv_program_level_get(void);
/* After MPI_Init, once the ABI is known to match. */
void unblock_conv_after_init(void);

/* Completes every converted operation in flight (progressing them first). */
void unblock_conv_quiesce(void);

/* The real MPI (or Fortran MPI) function: resolved at first use; a program that
 * calls an MPI function its MPI library lacks cannot be run, so that is fatal. */
void *unblock_mpi_resolve(const char *name);
void *unblock_mpi_resolve_fortran(const char *name);

#ifdef UNBLOCK_LINK_WRAP
/* Link-time variant: __real_X is the original (ld --wrap).  The Fortran ones are
 * weak: a program without Fortran links no Fortran MPI library, and each MPI has
 * only some of the f08 names. */
#define UNBLOCK_MPI_DECL(name, params) extern int __real_##name params
#define UNBLOCK_MPI_REAL(name) (__real_##name)
#define UNBLOCK_MPI_REAL_IF_KNOWN(name) (__real_##name)
#define UNBLOCK_MPI_KNOWN(real) ((void)(real), 1)
#define UNBLOCK_FORTRAN_DECL(type, sym, params) extern void __real_##sym params __attribute__((weak))
#define UNBLOCK_FORTRAN_REAL(type, sym) (__real_##sym)
#define UNBLOCK_FORTRAN_REAL_IF_KNOWN(sym) (__real_##sym)
#else
#define UNBLOCK_MPI_DECL(name, params) static real_##name##_t real_##name
/* MPI's function as resolved so far (NULL before its first call: the caller
 * takes the way that resolves it), for a path that calls nothing else. */
#define UNBLOCK_MPI_REAL_IF_KNOWN(name) (real_##name)
#define UNBLOCK_MPI_KNOWN(real) ((real) != NULL)
#define UNBLOCK_MPI_REAL(name) \
    ({ \
        real_##name##_t real_ = real_##name; \
        if (unblock_unlikely(real_ == NULL)) \
            real_ = real_##name = (real_##name##_t)unblock_mpi_resolve(#name); \
        real_; \
    })
#define UNBLOCK_FORTRAN_DECL(type, sym, params) static type freal_##sym
/* (as UNBLOCK_MPI_REAL_IF_KNOWN) */
#define UNBLOCK_FORTRAN_REAL_IF_KNOWN(sym) (freal_##sym)
#define UNBLOCK_FORTRAN_REAL(type, sym) \
    ({ \
        type real_ = freal_##sym; \
        if (unblock_unlikely(real_ == NULL)) \
            real_ = freal_##sym = (type)unblock_mpi_resolve_fortran(#sym); \
        real_; \
    })
#endif

/* PMPI_x where a binding of MPI's calls it and a wrapper makes that call in the
 * binding's stead (MPICH's mpi_f08 completion calls: mpi_functions.toml,
 * fortran_pmpi_c08), resolved at its first call (into preal_x, which the
 * generated wrappers declare). */
#ifdef UNBLOCK_LINK_WRAP
#define UNBLOCK_PMPI_REAL(name) (P##name)
#define UNBLOCK_PMPI_REAL_IF_KNOWN(name) (P##name)
#else
/* (as UNBLOCK_MPI_REAL_IF_KNOWN) */
#define UNBLOCK_PMPI_REAL_IF_KNOWN(name) (preal_##name)
#define UNBLOCK_PMPI_REAL(name) \
    ({ \
        real_##name##_t p_ = preal_##name; \
        if (unblock_unlikely(p_ == NULL)) \
            p_ = preal_##name = (real_##name##_t)unblock_mpi_resolve("P" #name); \
        p_; \
    })
#endif

/* A PMPI function the runtime calls for itself (queries, never transfers), and a
 * predefined handle: Open MPI's are addresses of objects inside libmpi, looked up
 * like functions, because this library never links libmpi. */
#ifdef UNBLOCK_LINK_WRAP
#define UNBLOCK_PMPI(name) ((void *)P##name)
#define UNBLOCK_MPI_HANDLE(type, ompi_sym, macro) (macro)
#else
#define UNBLOCK_PMPI(name) unblock_mpi_resolve("P" #name)
#if defined(OPEN_MPI)
#define UNBLOCK_MPI_HANDLE(type, ompi_sym, macro) \
    ((type)unblock_dlsym_data(ompi_sym, UNBLOCK_MPI_SONAMES))
#else
#define UNBLOCK_MPI_HANDLE(type, ompi_sym, macro) (macro)
#endif
#endif

/* True when the wrapper must only forward: the runtime is off for this process,
 * or this thread is already inside an MPI call (MPI calling itself, or MPICH's
 * Fortran layer calling C MPI_x after our Fortran wrapper counted the call). */
#define UNBLOCK_MPI_SKIP() (unblock_tls.mpi_depth > 0 || !unblock_g.active || !unblock_opt.comm)

extern UNBLOCK_HIDDEN int conv_fast; /* lifecycle.c: 0 before MPI_Init, after MPI_Finalize, and while held
                        (conv_fast_hold: the thread gate's freeze waits for this call) */

static inline void unblock_mpi_enter(unsigned id, unsigned binding)
{
    unsigned kind = unblock_mpi_fn_kind[id];
    /* A request not followed (from Fortran, all but OWN_FOLLOWED's) marks the run untracked
     * and has what is in flight finish first (unblock_conv_at_call); once
     * marked, with nothing in flight (unblock_busy_any) nothing is left to
     * do.  Each 8-byte MPI_IRECV and MPI_ISEND of mpif.h made the whole call
     * before: 122.3 instructions of unblock a call with MPI_WAITALL (Open MPI),
     * against 81.0 for C's, which it logs. */
    int acts = kind >= UNBLOCK_MPI_KIND_OWN_ASYNC;
    if (kind == UNBLOCK_MPI_KIND_OWN_TRACKED && binding != UNBLOCK_BINDING_C) {
        kind = UNBLOCK_MPI_KIND_OWN_ASYNC;
        acts = !unblock_own_unfollowed(); /* (an armed run too: UNBLOCK_OWN_ARMED) */
    }
    if (unblock_unlikely(acts || !__atomic_load_n(&conv_fast, __ATOMIC_RELAXED) ||
                         unblock_busy_any()))
        unblock_conv_at_call(kind, id);
    unblock_tls.mpi_depth++;
    unblock_count(unblock_mpi_count_slot(id, binding, 0));
}

static inline void unblock_mpi_leave(void)
{
    unblock_tls.mpi_depth--;
}

/* MPI-IO write-behind (src/mpiio/, a layer above this one) installs this hook at
 * start-up; the generated wrappers of the calls the spec marks `mpiio` call it
 * after unblock_mpi_enter.  `op` says what the call is to write-behind, `id` which
 * function it is (unblock_mpi_fn_names[id]), `large` that it is the MPI_Count form, `a` holds the addresses of the C arguments in
 * order, `real` is the real function.  It returns 1 when it handled the call
 * (*rc is the call's result), 0 to let the wrapper go on to MPI.  The other
 * Fortran entry points call it with a NULL `a` (UNBLOCK_MPIIO_FORTRAN: flush what
 * is buffered; FINALIZE and ABORT: as from C) and always go on. */
enum {
    UNBLOCK_MPIIO_OPEN, UNBLOCK_MPIIO_CLOSE, UNBLOCK_MPIIO_WRITE, UNBLOCK_MPIIO_WRITE_AT,
    UNBLOCK_MPIIO_IWRITE, UNBLOCK_MPIIO_IWRITE_AT, UNBLOCK_MPIIO_LOCAL,
    UNBLOCK_MPIIO_COLLECTIVE, UNBLOCK_MPIIO_SEEK, UNBLOCK_MPIIO_SET_VIEW,
    UNBLOCK_MPIIO_SET_ATOMICITY, UNBLOCK_MPIIO_SYNC, UNBLOCK_MPIIO_FINALIZE,
    UNBLOCK_MPIIO_ABORT, UNBLOCK_MPIIO_FORTRAN, UNBLOCK_MPIIO_SPLIT_END,
    UNBLOCK_MPIIO_GET_SIZE, UNBLOCK_MPIIO_READ_AT, UNBLOCK_MPIIO_READ, UNBLOCK_MPIIO_NEWS
};
/* UNBLOCK_MPIIO_NEWS: a call that may tell another process of this one's
 * writes, or this one of another's (unblock_mpi_fn_news), is about to run while
 * unblock_mpiio_news is set (`a` NULL, `id` the call): the writes held back of
 * files of one rank (MPI_COMM_SELF, in a job of several), and of others as
 * UNBLOCK_MPIIO_VISIBLE says, go to the file first; news heard ends what this
 * rank knew of other ranks' writes (src/mpiio/file.c).  ROMIO and OMPIO write
 * in the call, and PnetCDF 1.15's intra-node aggregation reads what other
 * ranks wrote through their own MPI_COMM_SELF handles after messages alone. */
#define unblock_mpiio_news (unblock_busy.n.mpiio_news) /* core.h: unblock_busy */
/* Or'ed into `op` by the Fortran entry points (mpif.h, `use mpi` and `use
 * mpi_f08`) of the calls on a file: `a` then holds the Fortran arguments
 * (addresses; the hidden string lengths last), and a[-1] the address of ierror
 * again (where it is in the list depends on the call), `real` is the Fortran
 * function, and a call the hook handles has its ierror set by the hook.  F08: an
 * mpi_f08 form, whose ierror may be left out (a NULL address); FDESC: MPICH's
 * mpi_f08 form that passes the buffer as gfortran's array descriptor. */
#define UNBLOCK_MPIIO_F77 0x100
#define UNBLOCK_MPIIO_F08 0x200
#define UNBLOCK_MPIIO_FDESC 0x400
int unblock_fortran_sentinel(const void *buf);
const void *unblock_fortran_contiguous(const void *arg, int descriptor);
int unblock_fortran_status_ignored(const void *status);
typedef int (*unblock_mpiio_hook_t)(int op, unsigned id, int large, void **a, void (*real)(void),
                                    int *rc);
extern UNBLOCK_HIDDEN unblock_mpiio_hook_t unblock_mpiio_hook;
/* And the continuation path of MPI_File_write_at (src/mpiio/file.c): the C
 * wrapper tries it first, when unblock_mpi_fast_ok says nothing waits for an MPI
 * call (unblock_mpi_enter would do nothing); 1 if it took the write (*rc the
 * call's result), 0 to go on as any call. */
typedef int (*unblock_mpiio_cont_t)(MPI_File, MPI_Offset, const void *, int, MPI_Datatype,
                                    MPI_Status *, int *);
extern UNBLOCK_HIDDEN unblock_mpiio_cont_t unblock_mpiio_cont;

/* The cursor of that path where the program's MPI calls never overlap (it asked
 * for less than MPI_THREAD_MULTIPLE): src/mpiio/own.c fills it after a taken
 * write_at, with the stage-1 record that write ended and the bytes that record
 * may still take (`room`, 0: none) without a check of the file's state: the
 * block's end, the record buffer's room, the reservation and stage 1's bound.
 * The C wrapper then copies a write that continues it (same handle and type, at
 * `end`, status ignored) to `dst` and returns: no call, no lock.  Strided (after
 * writes of one size at one distance, interleaved cells), each write at `end`
 * is a record of its own and `end` moves by the stride.  What it took
 * is counted in `taken` and `calls`, and laid into the record and the
 * statistics (settled) at the next MPI-IO call that is not such a write, at the
 * exit drain, and by the fatal drain, which writes those bytes itself.  It
 * holds while no reservation shrinks (unblock_wb_resv_shrinks) and the I/O
 * thread moves nothing (unblock_mpiio_gen: a background write failed, or
 * stage 1 sat idle and goes to its owners at the next call; a type was freed,
 * whose handle a new type of another size may get); every other change
 * to stage 1 is made inside an MPI-IO call, which settles and drops it first.  Global, not
 * per thread: the calls it serves never overlap. */
typedef struct {
    MPI_File fh;
    MPI_Datatype type;
    MPI_Offset end;  /* the file byte the next write must start at */
    uint64_t room;   /* the bytes it may still take */
    char *dst;       /* where they go */
    uint64_t tsize;  /* the type's size (< 2^31: count times it cannot overflow) */
    uint64_t taken;  /* bytes taken since the last settle ... */
    uint64_t calls;  /* ... in that many writes */
    uint32_t rgen, egen;
    void *file;      /* src/mpiio's file and stage-1 block */
    void *block;
    char *base;      /* dst and end at the last settle (the fatal drain; strided:
                        base_off is the block's first byte in the file) */
    MPI_Offset base_off;
    /* Strided (stride != 0: interleaved cells, src/mpiio/own.c): each write of
     * plen bytes at `end` is a record of its own, {in, plen, bytes} at dst, and
     * the next is due stride bytes on; room counts records, not bytes. */
    MPI_Offset stride;
    uint64_t plen;
    uint32_t in;     /* end's offset in its block */
    /* From Fortran: the handles of fh and type and the status sentinel of the
     * last Fortran write the cursor took (src/mpiio/file.c: fortran_cont sets
     * them; each fill clears fvalid), so the Fortran wrapper compares integers
     * instead of converting them */
    MPI_Fint ffh, ftype;
    const void *fstatus;
    int fvalid;
} unblock_mpiio_cur_t;
extern UNBLOCK_HIDDEN unblock_mpiio_cur_t unblock_mpiio_cur;
extern UNBLOCK_HIDDEN uint32_t unblock_mpiio_gen; /* moves when the cursor must end (above) */

/* The strided cursor's write of n bytes (unblock_mpiio_cur_take). */
__attribute__((always_inline)) static inline int unblock_mpiio_cur_take_strided(unblock_mpiio_cur_t *c, const void *buf,
                                                 uint64_t n)
{
    if (unblock_unlikely(n != c->plen || c->room == 0 ||
                         c->rgen != __atomic_load_n(&unblock_wb_resv_shrinks, __ATOMIC_ACQUIRE) ||
                         c->egen != __atomic_load_n(&unblock_mpiio_gen, __ATOMIC_ACQUIRE)))
        return 0;
    uint32_t h[2] = { c->in, (uint32_t)n };
    memcpy(c->dst, h, 8);
    if (n == 8)
        memcpy(c->dst + 8, buf, 8);
    else
        memcpy(c->dst + 8, buf, n);
    c->dst += 8 + n;
    c->end += c->stride;
    c->in += (uint32_t)c->stride;
    c->room--;
    c->calls++;
    __atomic_store_n(&c->taken, c->taken + n, __ATOMIC_RELEASE);
    return 1;
}

/* 1 if the cursor took the write (its result MPI_SUCCESS, the status ignored). */
__attribute__((always_inline)) static inline int unblock_mpiio_cur_take(MPI_File fh, MPI_Offset off, const void *buf, int count,
                                         MPI_Datatype type)
{
    unblock_mpiio_cur_t *c = &unblock_mpiio_cur;
    if (fh != c->fh || off != c->end || type != c->type)
        return 0;
    /* (count <= 0: n - 1 wraps past any room) */
    uint64_t n = (uint64_t)((int64_t)count * (int64_t)c->tsize);
    if (c->stride != 0)
        return unblock_mpiio_cur_take_strided(c, buf, n);
    if (unblock_unlikely(n - 1 >= c->room ||
                         c->rgen != __atomic_load_n(&unblock_wb_resv_shrinks, __ATOMIC_ACQUIRE) ||
                         c->egen != __atomic_load_n(&unblock_mpiio_gen, __ATOMIC_ACQUIRE)))
        return 0;
    if (n == 8) /* (the common small write: no call to memcpy) */
        memcpy(c->dst, buf, 8);
    else
        memcpy(c->dst, buf, n);
    c->dst += n;
    c->end += (MPI_Offset)n;
    c->room -= n;
    c->calls++;
    __atomic_store_n(&c->taken, c->taken + n, __ATOMIC_RELEASE);
    return 1;
}

/* A handle write-behind does not follow (opened read-only, say) and whose file
 * no followed handle has: its independent reads (MPI_File_read_at and
 * MPI_File_read, C and Fortran) go to MPI from the wrappers' fronts, with
 * nothing in flight and no pool (unblock_mpi_front_ok), inside the runtime's
 * depth (MPI's own allocations and file calls stay MPI's) and counted: no
 * hook, no check of the buffer.  src/mpiio/ sets it, under its lock, after a
 * read on the handle found no followed handle of its file (open.c:
 * mio_plain_look; from Fortran also the handle's integer, fvalid), and clears
 * it when a file is followed or the handle closed.  Before, an 8-byte
 * MPI_File_read_at on a file opened again read-only (IOR's read phase) cost
 * 493 instructions of unblock (docs/performance.md). */
typedef struct {
    MPI_File fh;
    MPI_Fint ffh;
    int fvalid;
} unblock_mpiio_plain_t;
extern UNBLOCK_HIDDEN unblock_mpiio_plain_t unblock_mpiio_plain;

/* The same from a Fortran wrapper of MPI_File_write_at (fh, offset, buf, count,
 * datatype, status: pointers; desc: buf is gfortran's descriptor, MPICH's
 * mpi_f08): 1 if taken (the caller sets ierror, and has checked, as the C
 * wrapper does, that it is outside MPI's own calls with nothing in flight).  A write from Fortran took 40 ns on Open MPI's mpi_f08
 * through the hook (the handles converted, the status classified), 21
 * instructions' worth from C. */
__attribute__((always_inline)) static inline int unblock_mpiio_fcur_take(const void *fh, const void *off, const void *buf,
                                          const void *count, const void *type,
                                          const void *status, int desc)
{
    unblock_mpiio_cur_t *c = &unblock_mpiio_cur;
    if (!c->fvalid || status != c->fstatus || *(const MPI_Fint *)fh != c->ffh ||
        *(const MPI_Fint *)type != c->ftype)
        return 0;
    if (desc && (buf = unblock_fortran_contiguous(buf, 1)) == NULL)
        return 0;
    return unblock_mpiio_cur_take(c->fh, *(const MPI_Offset *)off, buf, *(const MPI_Fint *)count,
                                  c->type);
}

/* After any successful MPI_Init/MPI_Init_thread (C or Fortran), also with
 * UNBLOCK_COMM=0: checks that the MPI library loaded has the ABI this library was
 * built for, and records the rank (which names the statistics file). */
void unblock_comm_after_init(void);

#endif
