/* fortran.c — the Fortran entry points of the converted calls (MPI_SEND,
 * MPI_RSEND, MPI_RECV, MPI_SENDRECV, MPI_SENDRECV_REPLACE).
 *
 * mpif.h and `use mpi` (both MPIs) and Open MPI's `use mpi_f08` pass the buffer's
 * address (a compiler temporary for a non-contiguous section, copied in and out
 * around the call) and every other argument by reference; MPICH's `use mpi_f08`
 * passes gfortran's array descriptor.  A call is handed to the C conversion
 * (convert.c) with its handles converted (MPI_Comm_f2c, MPI_Type_f2c), unless:
 *   - its buffer is one of the Fortran library's own sentinels (MPI_BOTTOM,
 *     MPI_IN_PLACE: addresses of its common blocks, which mean something else);
 *   - its status is not MPI_STATUS_IGNORE (it must be filled when the call returns);
 *   - an MPICH descriptor describes a non-contiguous section (MPICH makes a type of
 *     its own for it, inside MPI, which we never see).
 * Whenever the call does not convert, the real Fortran entry point runs with the
 * program's own arguments, exactly as without unblock.
 *
 * The other calls with buffers (collectives, MPI-IO, other send modes: BUFS in
 * tools/gen_mpi_wrappers.py) describe them from Fortran as from C
 * (unblock_fortran_buffers): a buffer in the pool goes to the real Fortran entry
 * point on the runtime view (a moved address, or a copy of the descriptor with a
 * moved base).  MPI_IN_PLACE is skipped; MPI_BOTTOM (absolute addresses) and a
 * non-contiguous MPICH descriptor make everything in flight finish first, unmoved.
 * The program's own requests from Fortran are described the same way, then
 * followed (fortran_own.c). */
#define _GNU_SOURCE
#include "comm/fastpath.h"
#include "comm/mpi_wrap.h"
#include "core/log.h"
#include "memory/memory.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

/* ---- handles and sentinels ---- */

MPI_Comm unblock_comm_f2c(MPI_Fint f)
{
#if defined(OPEN_MPI) && !defined(UNBLOCK_LINK_WRAP)
    typedef MPI_Comm (*f2c_t)(MPI_Fint);
    static f2c_t f2c;
    if (f2c == NULL)
        f2c = (f2c_t)UNBLOCK_PMPI(MPI_Comm_f2c);
    return f2c(f);
#else
    return PMPI_Comm_f2c(f);
#endif
}

MPI_Datatype unblock_type_f2c(MPI_Fint f)
{
#if defined(OPEN_MPI) && !defined(UNBLOCK_LINK_WRAP)
    typedef MPI_Datatype (*f2c_t)(MPI_Fint);
    static f2c_t f2c;
    if (f2c == NULL)
        f2c = (f2c_t)UNBLOCK_PMPI(MPI_Type_f2c);
    return f2c(f);
#else
    return PMPI_Type_f2c(f);
#endif
}

/* The Fortran libraries' special addresses: common blocks holding MPI_BOTTOM,
 * MPI_IN_PLACE and MPI_STATUS_IGNORE (a program that uses them defines them
 * itself, so they are looked up in the global scope). */
static const char *const sentinel_names[] = {
    "mpi_fortran_bottom",  "mpi_fortran_bottom_",  "mpi_fortran_bottom__",  "MPI_FORTRAN_BOTTOM",
    "mpi_fortran_in_place", "mpi_fortran_in_place_", "mpi_fortran_in_place__",
    "MPI_FORTRAN_IN_PLACE", "mpipriv1_", "mpipriv2_", "mpiprivc_", "MPIR_F08_MPI_BOTTOM",
    "MPIR_F08_MPI_IN_PLACE",
};
#define NSENTINELS (sizeof(sentinel_names) / sizeof(sentinel_names[0]))
static struct {
    uintptr_t lo, hi;
} sentinels[NSENTINELS];
static uintptr_t in_place[NSENTINELS]; /* the MPI_IN_PLACE among them */
/* (fastpath.h: unblock_fortran_ignores_status reads them too) */
UNBLOCK_HIDDEN void *unblock_fortran_status_ignore, *unblock_fortran_status_ignore_f08;
UNBLOCK_HIDDEN void *unblock_fortran_statuses_ignore_f08; /* (MPICH's mpi_f08) */
#define status_ignore unblock_fortran_status_ignore
#define status_ignore_f08 unblock_fortran_status_ignore_f08
/* The 4 KiB granules that hold them, as a table indexed by address bits
 * (fastpath.h: unblock_fortran_beyond_sentinels, one load), and whether they
 * were looked up.  They lie in the program's data (mpif.h's common blocks)
 * and in MPI's Fortran libraries (the mpi_f08 ones): one span from the lowest
 * to the highest held the heap and every mapping between, whose buffers then
 * took the slow part's exact test instead of the front (an 8-byte MPI_SEND
 * and MPI_RECV from an allocated array on MPICH cost 20 ns more than plain,
 * 2 ns from the stack); two spans cost 7 instructions more a test.  A buffer
 * whose granule shares an entry with a sentinel's (a few in 4096) takes that
 * exact test, and is right either way. */
UNBLOCK_HIDDEN uint8_t unblock_fortran_sentinel_granules[UNBLOCK_FORTRAN_GRANULES];
UNBLOCK_HIDDEN int unblock_fortran_sentinels_ready;
#define sentinels_ready unblock_fortran_sentinels_ready

/* mpi_f08's MPI_STATUS(ES)_IGNORE: the object MPICH's binding compares a
 * status argument's address with (its name as the binding refers to it: in a
 * program of mpi_f08 the program's copy of it), else what the C library's
 * pointer to it holds (Open MPI). */
static void *f08_ignore(const char *object, const char *pointer)
{
    void *obj = dlsym(RTLD_DEFAULT, object);
    if (obj != NULL)
        return obj;
    void **p = dlsym(RTLD_DEFAULT, pointer);
    return p ? *p : NULL;
}

static void find_sentinels(void)
{
    for (unsigned i = 0; i < NSENTINELS; i++) {
        void *p = dlsym(RTLD_DEFAULT, sentinel_names[i]);
        Dl_info info;
        const ElfW(Sym) *sym = NULL;
        if (p == NULL)
            continue;
        size_t size = 0;
        if (dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) && sym)
            size = sym->st_size;
        sentinels[i].lo = (uintptr_t)p;
        sentinels[i].hi = (uintptr_t)p + (size > 64 ? size : 64);
        for (uintptr_t g = sentinels[i].lo >> 12; g <= (sentinels[i].hi - 1) >> 12; g++)
            unblock_fortran_sentinel_granules[g & (UNBLOCK_FORTRAN_GRANULES - 1)] = 1;
        /* MPICH's mpif.h: COMMON /MPIPRIV1/ MPI_BOTTOM, MPI_IN_PLACE, ... */
        if (strcmp(sentinel_names[i], "mpipriv1_") == 0)
            in_place[i] = (uintptr_t)p + sizeof(MPI_Fint);
        else if (strcasestr(sentinel_names[i], "in_place"))
            in_place[i] = (uintptr_t)p;
    }
    MPI_Fint **ign = dlsym(RTLD_DEFAULT, "MPI_F_STATUS_IGNORE");
    status_ignore = ign ? (void *)*ign : NULL;
    status_ignore_f08 = f08_ignore("MPIR_F08_MPI_STATUS_IGNORE_OBJ", "MPI_F08_STATUS_IGNORE");
    unblock_fortran_statuses_ignore_f08 =
        f08_ignore("MPIR_F08_MPI_STATUSES_IGNORE_OBJ", "MPI_F08_STATUSES_IGNORE");
    for (unsigned i = 0; i < NSENTINELS; i++)
        if (sentinels[i].hi != 0)
            unblock_debug("Fortran sentinel %s at %p", sentinel_names[i], (void *)sentinels[i].lo);
    __atomic_store_n(&sentinels_ready, 1, __ATOMIC_RELEASE);
}

static inline void sentinels_looked_up(void)
{
    if (!__atomic_load_n(&sentinels_ready, __ATOMIC_ACQUIRE))
        find_sentinels();
}

static inline int is_sentinel(const void *buf)
{
    sentinels_looked_up();
    if (unblock_fortran_beyond_sentinels(buf))
        return 0; /* outside all of them: most buffers, one compare */
    for (unsigned i = 0; i < NSENTINELS; i++)
        if ((uintptr_t)buf >= sentinels[i].lo && (uintptr_t)buf < sentinels[i].hi)
            return 1;
    return 0;
}

#if UNBLOCK_FORTRAN_CALLS_C
/* Whether the Fortran wrappers' fronts may call MPI's C function themselves,
 * as MPICH's Fortran binding calls it (fastpath.h: unblock_fortran_direct): 1
 * yes, -1 no, 0 not yet known.  MPICH's binding of MPI_SEND is, seen with
 * objdump in Debian 12's libmpichfort: its own start-up once (mpirinitf_,
 * while MPIR_F_NeedInit), MPI_BOTTOM mapped, MPI_STATUS_IGNORE mapped, the
 * handles and the status passed as they are (MPI_Comm_f2c and MPI_Type_f2c
 * are casts, a Fortran status is an MPI_Status), then the public MPI_Send,
 * ierror its result; MPI_RECV and MPI_SENDRECV the same.  A wrapper's path
 * straight to MPI that does the same for buffers that are no sentinels skips
 * that binding and our C wrapper behind it (at depth 1).  Yes
 * once the binding started (MPIR_F_NeedInit 0: MPI_F_STATUS_IGNORE set) and
 * the Fortran functions the fronts stand for are MPICH's own: a tool loaded
 * between unblock and MPICH that wraps one of them keeps its calls. */
UNBLOCK_HIDDEN int unblock_fortran_direct;
/* MPICH's MPI_ISEND and MPI_IRECV map the Fortran MPI_BOTTOM (the address in
 * its MPIR_F_MPI_BOTTOM) to the C one, MPI_WAITALL its MPI_STATUSES_IGNORE
 * (fastpath.h: unblock_fortran_c_buf, unblock_fortran_c_statuses). */
UNBLOCK_HIDDEN void *unblock_fortran_c_bottom, *unblock_fortran_c_statuses_ignore;
/* The same for the fast paths of MPICH's mpi_f08 descriptor forms
 * (mpi_send_f08ts_...), whose binding converts the descriptor and, for a
 * contiguous buffer, calls the public MPI_Send with its base (MPICH's
 * MPIR_Send_cdesc, objdump of Debian 12's libmpichfort), ierror (optional)
 * its result; the direct paths of the program's own MPI_ISEND and MPI_IRECV
 * the same (MPIR_Isend_cdesc), and of MPI_WAIT and MPI_WAITALL, whose binding
 * calls PMPI_Wait(all) (its MPI_STATUS(ES)_IGNORE mapped; MPI_WAITALL's
 * requests copied to a malloc'd array and back, which the C call skips).  It
 * needs no start-up of the mpif.h binding (a program of mpi_f08 alone never
 * runs it), only its MPI_STATUS(ES)_IGNORE. */
UNBLOCK_HIDDEN int unblock_fortran_direct08;
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint) &&
                   sizeof(MPI_Fint) == sizeof(int),
               "a Fortran status and integer are not the C ones");

#ifndef UNBLOCK_LINK_WRAP
static const char *const direct_names[] = {
    "mpi_send",  "mpi_send_",  "mpi_send__",  "MPI_SEND",
    "mpi_rsend", "mpi_rsend_", "mpi_rsend__", "MPI_RSEND",
    "mpi_recv",  "mpi_recv_",  "mpi_recv__",  "MPI_RECV",
    "mpi_sendrecv", "mpi_sendrecv_", "mpi_sendrecv__", "MPI_SENDRECV",
    "mpi_isend", "mpi_isend_", "mpi_isend__", "MPI_ISEND",
    "mpi_irecv", "mpi_irecv_", "mpi_irecv__", "MPI_IRECV",
    "mpi_wait", "mpi_wait_", "mpi_wait__", "MPI_WAIT",
    "mpi_waitall", "mpi_waitall_", "mpi_waitall__", "MPI_WAITALL",
    "mpi_test", "mpi_test_", "mpi_test__", "MPI_TEST",
};
static const char *const direct08_names[] = {
    "mpi_send_f08ts_", "mpi_rsend_f08ts_", "mpi_recv_f08ts_", "mpi_sendrecv_f08ts_",
    "mpi_isend_f08ts_", "mpi_irecv_f08ts_", "mpi_wait_f08_", "mpi_waitall_f08_",
};

/* Whether the next definitions of these names are those of the library at
 * `home` (none: as good). */
static int next_are_home(const char *const *names, unsigned n, const Dl_info *home)
{
    Dl_info info;
    for (unsigned i = 0; i < n; i++) {
        void *p = unblock_dlsym_next(names[i]);
        if (p != NULL && !(dladdr(p, &info) && info.dli_fbase == home->dli_fbase))
            return 0;
    }
    return 1;
}
#endif

void unblock_fortran_check_direct(void)
{
#ifdef UNBLOCK_LINK_WRAP
    __atomic_store_n(&unblock_fortran_direct, -1, __ATOMIC_RELEASE);
    __atomic_store_n(&unblock_fortran_direct08, -1, __ATOMIC_RELEASE);
#else
    static int *need_init;
    Dl_info home;
    if (need_init == NULL &&
        (need_init = dlsym(RTLD_DEFAULT, "MPIR_F_NeedInit")) == NULL) {
        __atomic_store_n(&unblock_fortran_direct, -1, __ATOMIC_RELEASE);
        __atomic_store_n(&unblock_fortran_direct08, -1, __ATOMIC_RELEASE);
        return;
    }
    sentinels_looked_up();
    if (__atomic_load_n(&unblock_fortran_direct08, __ATOMIC_RELAXED) == 0) {
        int ok = status_ignore_f08 != NULL && unblock_fortran_statuses_ignore_f08 != NULL &&
                 dladdr(need_init, &home) &&
                 next_are_home(direct08_names, sizeof(direct08_names) / sizeof(direct08_names[0]),
                               &home);
        __atomic_store_n(&unblock_fortran_direct08, ok ? 1 : -1, __ATOMIC_RELEASE);
        unblock_debug("mpi_f08's descriptor forms: %s", ok ? "MPI's C function" : "the binding");
    }
    if (__atomic_load_n(need_init, __ATOMIC_RELAXED) != 0)
        return; /* the binding has not started yet: asked again later */
    MPI_Fint **ign = dlsym(RTLD_DEFAULT, "MPI_F_STATUS_IGNORE");
    MPI_Fint **igns = dlsym(RTLD_DEFAULT, "MPI_F_STATUSES_IGNORE");
    void **bottom = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_BOTTOM");
    int ok = ign != NULL && *ign != NULL && igns != NULL && *igns != NULL && bottom != NULL &&
             *bottom != NULL && dladdr(need_init, &home) &&
             next_are_home(direct_names, sizeof(direct_names) / sizeof(direct_names[0]), &home);
    if (ok) { /* (set in the binding's start-up: read again) */
        status_ignore = (void *)*ign;
        unblock_fortran_c_statuses_ignore = (void *)*igns;
        unblock_fortran_c_bottom = *bottom;
    }
    __atomic_store_n(&unblock_fortran_direct, ok ? 1 : -1, __ATOMIC_RELEASE);
#endif
}
#endif

#if UNBLOCK_FORTRAN_CALLS_C
int unblock_fortran_direct_asked(int *flag)
{
    if (__atomic_load_n(flag, __ATOMIC_RELAXED) == 0)
        unblock_fortran_check_direct();
    return __atomic_load_n(flag, __ATOMIC_ACQUIRE) > 0;
}
#endif

/* What the Fortran wrappers of MPI_SEND, MPI_RSEND, MPI_RECV and
 * MPI_SENDRECV call on their paths straight to MPI (fronts, fast and quick
 * paths; the report's comm.fortran_front): "binding", MPI's Fortran function
 * (Open MPI, whose binding calls PMPI_x; MPICH when a tool wraps its Fortran
 * functions, or linked with -Wl,--wrap); "mpi_c", MPI's C function as MPICH's
 * binding calls it; "none" yet (MPICH before its binding started). */
const char *unblock_fortran_front_kind(void)
{
#if UNBLOCK_FORTRAN_CALLS_C
    int d = __atomic_load_n(&unblock_fortran_direct, __ATOMIC_ACQUIRE);
    return d > 0 ? "mpi_c" : d < 0 ? "binding" : "none";
#else
    return "binding";
#endif
}

static int is_in_place(const void *buf)
{
    for (unsigned i = 0; i < NSENTINELS; i++)
        if (in_place[i] != 0 && (uintptr_t)buf == in_place[i])
            return 1;
    return 0;
}

static int ignores_status(const void *status)
{
    sentinels_looked_up();
    return unblock_fortran_ignores_status(status);
}

/* For MPI-IO write-behind (src/mpiio/): a Fortran buffer argument that is one of
 * the library's sentinels (MPI_BOTTOM, MPI_IN_PLACE), a status argument that is
 * MPI_STATUS_IGNORE. */
int unblock_fortran_sentinel(const void *buf)
{
    return is_sentinel(buf);
}

int unblock_fortran_status_ignored(const void *status)
{
    return ignores_status(status);
}

static void pass(int reason)
{
    unblock_counter_add(&unblock_stats.comm_pass[reason], 1);
}

/* What a buffer argument is: an address, or (MPICH's mpi_f08) gfortran's
 * descriptor (base, offset, dtype, span, then stride, lbound, ubound per
 * dimension), of which only a contiguous one is used. */
enum { FBUF_ADDRESS, FBUF_SENTINEL, FBUF_NONCONTIGUOUS, FBUF_EMPTY };

static int classify(const void *arg, int descriptor, const void **base, int *rank_out)
{
    *base = arg;
    *rank_out = 0;
    if (descriptor) {
        const int64_t *d = arg;
        int64_t elem = d[2], span = d[4];
        int rank = ((const signed char *)&d[3])[4];
        *base = (const void *)d[0];
        if (rank < 0 || rank > 15 || span != elem)
            return FBUF_NONCONTIGUOUS;
        *rank_out = rank;
        int64_t expect = 1;
        for (int k = 0; k < rank; k++) {
            int64_t stride = d[5 + 3 * k], lb = d[6 + 3 * k], ub = d[7 + 3 * k];
            if (ub < lb)
                return FBUF_EMPTY;
            if (stride != expect)
                return FBUF_NONCONTIGUOUS; /* MPICH makes a type of its own for it */
            expect *= ub - lb + 1;
        }
    }
    return is_sentinel(*base) ? FBUF_SENTINEL : FBUF_ADDRESS;
}

/* The buffer a converted call passes.  NULL: do not convert (the reason is
 * counted; an empty section is left to MPI to say what it makes of it). */
static const void *buffer_of(const void *arg, int descriptor)
{
    const void *base;
    int rank;
    switch (classify(arg, descriptor, &base, &rank)) {
    case FBUF_ADDRESS:
        return base;
    case FBUF_SENTINEL:
        pass(UNBLOCK_PASS_memory);
        return NULL;
    case FBUF_NONCONTIGUOUS:
        pass(UNBLOCK_PASS_datatype);
        return NULL;
    default:
        return NULL;
    }
}

/* For MPI-IO write-behind: the address of a contiguous buffer, given as an
 * address or (descriptor: MPICH's mpi_f08) as gfortran's descriptor; NULL for a
 * sentinel, a non-contiguous section or an empty one. */
const void *unblock_fortran_contiguous(const void *arg, int descriptor)
{
    const void *base;
    int rank;
    return classify(arg, descriptor, &base, &rank) == FBUF_ADDRESS ? base : NULL;
}

/* ---- the other calls with buffers ---- */

void unblock_fortran_describe(unblock_fbufs_t *f, void **a, const unblock_fbuf_t *s, int n,
                              int descriptor, int large)
{
    int rank[UNBLOCK_FBUFS_MAX] = { 0 };
    f->n = n;
    for (int i = 0; i < n; i++) {
        unblock_own_buf_t *b = &f->b[i];
        const void *base;
        memset(b, 0, sizeof(*b));
        int how = classify(a[s[i].buf], descriptor, &base, &rank[i]);
        if (how == FBUF_SENTINEL && is_in_place(base)) {
            b->buf = MPI_IN_PLACE; /* the other buffer holds the data */
            continue;
        }
        if (how != FBUF_ADDRESS) { /* MPI_BOTTOM, a section MPI packs itself */
            b->everything = b->writes = 1;
            continue;
        }
        b->buf = base;
        if (s[i].flags & UNBLOCK_FBUF_ARRAY) { /* (MPI_Fint is int: the C arrays' type) */
            b->vec = 1;
            b->counts = a[s[i].count];
            b->displs = s[i].displs >= 0 ? a[s[i].displs] : NULL;
            b->mine = (s[i].flags & UNBLOCK_FBUF_MINE) != 0;
            b->wide = large;
        } else {
            b->count = large ? (long long)*(const int64_t *)a[s[i].count]
                             : (long long)*(const MPI_Fint *)a[s[i].count];
        }
        if (s[i].root >= 0) {
            b->at_root = 1;
            b->root = (int)*(const MPI_Fint *)a[s[i].root];
        }
        b->type = unblock_type_f2c(*(const MPI_Fint *)a[s[i].type]);
        b->writes = s[i].writes;
        if (s[i].group >= 0) {
            f->comm[i] = unblock_comm_f2c(*(const MPI_Fint *)a[s[i].group]);
            b->group = &f->comm[i];
        }
    }
    unblock_conv_buffers(f->b, n);
    for (int i = 0; i < n; i++) {
        if (f->b[i].view == 0)
            continue;
        if (descriptor) {
            memcpy(f->desc[i], a[s[i].buf], UNBLOCK_FDESC_WORDS(rank[i]) * sizeof(int64_t));
            f->desc[i][0] += f->b[i].view;
            a[s[i].buf] = f->desc[i];
        } else {
            a[s[i].buf] = (char *)a[s[i].buf] + f->b[i].view;
        }
    }
}

void unblock_fortran_buffers(unblock_fbufs_t *f, void **a, const unblock_fbuf_t *s, int n,
                             int descriptor, int large)
{
    f->n = 0;
    if (__atomic_load_n(&unblock_ops_inflight, __ATOMIC_ACQUIRE) == 0 && unblock_pool_size == 0)
        return; /* the common case (as unblock_conv_buffers): nothing to order or move */
    unblock_fortran_describe(f, a, s, n, descriptor, large);
}

void unblock_fortran_buffers_done(const unblock_fbufs_t *f, const void *ierr)
{
    /* (ierror left out in mpi_f08: nothing is learnt.) */
    unblock_conv_buffers_done(f->b, f->n, ierr ? (int)*(const MPI_Fint *)ierr : MPI_ERR_OTHER);
}

/* ---- running the real Fortran entry point instead ---- */

typedef void (*fn_t)();

/* The call being converted, for the fallbacks below, which the C conversion calls
 * with C arguments when it runs the call blocking. */
typedef struct {
    fn_t real;
    void **a;
    int nargs;
    MPI_Fint *ierr;
} fcall_t;
static UNBLOCK_TLS fcall_t *current;

static int run_real(void)
{
    fcall_t *c = current;
    void **a = c->a;
    MPI_Fint local = MPI_SUCCESS, *ierr = c->ierr ? c->ierr : &local;
    switch (c->nargs) {
    case 7:
        c->real(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
        break;
    case 8:
        c->real(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
        break;
    case 10:
        c->real(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
        break;
    case 13:
        c->real(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12]);
        break;
    }
    return (int)*ierr;
}

static int fallback_send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c)
{
    (void)b, (void)n, (void)t, (void)d, (void)tag, (void)c;
    return run_real();
}

static int fallback_recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c,
                         MPI_Status *st)
{
    (void)b, (void)n, (void)t, (void)s, (void)tag, (void)c, (void)st;
    return run_real();
}

static int fallback_sendrecv(const void *sb, int sn, MPI_Datatype st, int d, int stag, void *rb,
                             int rn, MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Status *sts)
{
    (void)sb, (void)sn, (void)st, (void)d, (void)stag, (void)rb, (void)rn, (void)rt, (void)s;
    (void)rtag, (void)c, (void)sts;
    return run_real();
}

static int fallback_replace(void *b, int n, MPI_Datatype t, int d, int stag, int s, int rtag,
                            MPI_Comm c, MPI_Status *st)
{
    (void)b, (void)n, (void)t, (void)d, (void)stag, (void)s, (void)rtag, (void)c, (void)st;
    return run_real();
}

static void set_ierr(MPI_Fint *ierr, int rc)
{
    if (ierr)
        *ierr = (MPI_Fint)rc;
}

#define I(k) (*(MPI_Fint *)a[k])

/* The bytes of an instance of the type of Fortran handle f, as the fast paths
 * know it (0: not that way): from the Fortran handle's own entry, else through
 * MPI's conversion, noted for the next call. */
static inline uint32_t fortran_type_size(MPI_Fint f)
{
    uint32_t size = unblock_dt_size_fortran(f);
    if (unblock_likely(size != 0))
        return size;
    MPI_Datatype t = unblock_type_f2c(f);
    size = unblock_dt_size_fast(t);
    if (size != 0)
        unblock_dt_note_fortran(f, t);
    return size;
}

/* The bytes of count instances of the type of Fortran handle `type` at buf,
 * its size known, a positive count, outside the pool; else 0. */
static inline size_t fortran_sized_bytes(const void *buf, MPI_Fint count, MPI_Fint type)
{
    uint32_t size = fortran_type_size(type);
    if (size == 0 || count <= 0 || !unblock_outside_pool(buf))
        return 0;
    return (size_t)count * size;
}

/* A half of a Fortran call (buffer arg, `count` of a type of `size` bytes)
 * under `min` bytes (fastpath.h's unblock_small), outside the pool, the
 * threshold tested before the buffer (in unblock_fortran_bytes' order an 8 KiB
 * MPI_SENDRECV from mpif.h tested its buffers in vain at its small check: 13
 * instructions): with a plain address, the address (its sentinels are the
 * caller's); given as gfortran's descriptor (MPICH's mpi_f08), a contiguous
 * one at an address that is no sentinel.  Until 2026-12-02 a descriptor was
 * never small: every small MPI_Send of mpi_f08 on MPICH took the conversion's
 * full path, the predictor's included (an 8-byte send and receive of a rank
 * to itself 1.64x plain, a send-receive 1.70x). */
static inline int half_small(const void *arg, int descriptor, uint32_t size, MPI_Fint count,
                             size_t min)
{
    if (!unblock_small_sized(size, count, min))
        return 0;
    if (!descriptor)
        return unblock_outside_pool(arg);
    const void *base;
    int rank;
    return classify(arg, 1, &base, &rank) == FBUF_ADDRESS && unblock_outside_pool(base);
}

/* A send or receive's buffer under `min` bytes (half_small), a plain address
 * no sentinel either (MPI_BOTTOM keeps the full path, which counts it as such:
 * passthrough_why.memory). */
static int fortran_small_arg(const void *arg, int descriptor, MPI_Fint count, MPI_Fint type,
                             size_t min)
{
    return half_small(arg, descriptor, fortran_type_size(type), count, min) &&
           (descriptor || !is_sentinel(arg));
}

/* A send-receive whose halves each move nothing or are small (half_small).
 * Both halves of one type (a halo's usual call) ask its size once (an 8-byte
 * MPI_SENDRECV from mpif.h through this test, before the wrapper's front took
 * it: 205 -> 192 instructions of unblock on Open MPI).  Thresholds first,
 * then the buffers; with plain addresses a half with nothing to move still
 * has its buffer tested for a sentinel: the direct call passes it as it is. */
static inline int small_sendrecv_in(const void *sbuf, const void *scount, const void *stype,
                                    const void *dest, const void *rbuf, const void *rcount,
                                    const void *rtype, const void *source, int descriptor)
{
    MPI_Fint sn = *(const MPI_Fint *)scount, rn = *(const MPI_Fint *)rcount;
    MPI_Fint st = *(const MPI_Fint *)stype, rt = *(const MPI_Fint *)rtype;
    int snone = sn == 0 || *(const MPI_Fint *)dest == MPI_PROC_NULL;
    int rnone = rn == 0 || *(const MPI_Fint *)source == MPI_PROC_NULL;
    uint32_t ss = snone ? 0 : fortran_type_size(st);
    uint32_t rs = rnone ? 0 : !snone && rt == st ? ss : fortran_type_size(rt);
    return (snone || half_small(sbuf, descriptor, ss, sn, unblock_opt.send_min)) &&
           (rnone || half_small(rbuf, descriptor, rs, rn, unblock_opt.recv_min)) &&
           (descriptor || (!is_sentinel(sbuf) && !is_sentinel(rbuf)));
}

/* Until it is known whether the fronts may call MPI's C function (MPICH),
 * asked on the paths behind them. */
static inline void ask_direct(void)
{
#if UNBLOCK_FORTRAN_CALLS_C
    if (unblock_unlikely(__atomic_load_n(&unblock_fortran_direct, __ATOMIC_RELAXED) == 0))
        unblock_fortran_check_direct();
#endif
}

/* The same for the descriptor forms' fast paths. */
static inline void ask_direct08(void)
{
#if UNBLOCK_FORTRAN_CALLS_C
    if (unblock_unlikely(__atomic_load_n(&unblock_fortran_direct08, __ATOMIC_RELAXED) == 0))
        unblock_fortran_check_direct();
#endif
}

/* The fast path (fastpath.h) of a Fortran call: a message under `min` bytes
 * goes to MPI at once. */
static int fortran_small(void **a, int descriptor, size_t min)
{
    return unblock_conv_idle() && fortran_small_arg(a[0], descriptor, I(1), I(2), min);
}

/* The same for the descriptor forms' wrappers (mpi_functions.toml:
 * fortran_desc_fast), before their full path: a send or receive... */
int unblock_fortran_desc_small(const void *buf, const void *count, const void *type, size_t min)
{
    ask_direct08();
    return unblock_conv_idle() &&
           fortran_small_arg(buf, 1, *(const MPI_Fint *)count, *(const MPI_Fint *)type, min);
}

/* ... and a send-receive (small_sendrecv_in). */
int unblock_fortran_desc_small_sendrecv(const void *sbuf, const void *scount, const void *stype,
                                        const void *dest, const void *rbuf, const void *rcount,
                                        const void *rtype, const void *source)
{
    ask_direct08();
    return unblock_conv_idle() &&
           small_sendrecv_in(sbuf, scount, stype, dest, rbuf, rcount, rtype, source, 1);
}

/* The bytes of a half given as a descriptor (contiguous, no sentinel, of a
 * known size, a positive count, outside the pool), else 0. */
static size_t desc_bytes(const void *arg, MPI_Fint count, MPI_Fint type)
{
    const void *base;
    int rank;
    if (classify(arg, 1, &base, &rank) != FBUF_ADDRESS)
        return 0;
    return fortran_sized_bytes(base, count, type);
}

/* The descriptor forms' quick path (mpi_functions.toml: fortran_desc_quick),
 * as the plain forms' (unblock_fortran_quick_at): a send or receive... */
int unblock_fortran_desc_quick_at(uintptr_t pc, unsigned id, const void *buf, const void *count,
                                  const void *type, const void *status)
{
    size_t bytes = desc_bytes(buf, *(const MPI_Fint *)count, *(const MPI_Fint *)type);
    return bytes != 0 && unblock_fortran_quick_at(pc, id, bytes, status);
}

/* ... and a send-receive, each half moving nothing or of known bytes, the
 * larger half's the call's (unblock_fortran_quick_sendrecv).  Until
 * 2026-12-02 a 4 KiB call from MPICH's mpi_f08 at a passing site took the full
 * path at every call. */
int unblock_fortran_desc_quick_sendrecv(uintptr_t pc, unsigned id, const void *sbuf,
                                        const void *scount, const void *stype, const void *dest,
                                        const void *rbuf, const void *rcount, const void *rtype,
                                        const void *source, const void *status)
{
    MPI_Fint sn = *(const MPI_Fint *)scount, rn = *(const MPI_Fint *)rcount;
    int snone = sn == 0 || *(const MPI_Fint *)dest == MPI_PROC_NULL;
    int rnone = rn == 0 || *(const MPI_Fint *)source == MPI_PROC_NULL;
    size_t sq = snone ? 0 : desc_bytes(sbuf, sn, *(const MPI_Fint *)stype);
    size_t rq = rnone ? 0 : desc_bytes(rbuf, rn, *(const MPI_Fint *)rtype);
    if ((snone && rnone) || (!snone && sq == 0) || (!rnone && rq == 0))
        return 0;
    return unblock_fortran_quick_sendrecv(pc, id, sbuf, scount, stype, dest, rbuf, rcount, rtype,
                                          source, status, sq > rq ? sq : rq);
}

/* The bytes of a Fortran send or receive as the generated wrappers' fast and
 * quick paths reckon them (mpi_functions.toml's fortran_bytes): a known size,
 * a positive count, a buffer outside the pool and not a sentinel; else 0.
 * Under the threshold the call takes the fast path (as fortran_small_arg),
 * above it may take the quick path (unblock_fortran_quick_at), both from one
 * lookup of the type's size. */
size_t unblock_fortran_bytes(const void *buf, const void *count, const void *type)
{
    size_t bytes = fortran_sized_bytes(buf, *(const MPI_Fint *)count, *(const MPI_Fint *)type);
    ask_direct();
    return bytes != 0 && !is_sentinel(buf) ? bytes : 0;
}

/* The quick path of such a call of `bytes` (not 0), as the C wrappers'
 * unblock_quick: at a class the predictor runs as the original call, counted.
 * `status`: the receive's (a status the program wants passes at once, as the
 * full path passes it for its status), NULL for a send.  Until 2026-12-02 a
 * call above the threshold took the full path every time, through MPI's handle
 * conversions: a 4 KiB MPI_SEND and MPI_RECV from mpif.h at passing sites cost
 * 546.8 instructions of unblock a call, against 137 from C. */
int unblock_fortran_quick_at(uintptr_t pc, unsigned id, size_t bytes, const void *status)
{
    if (status != NULL && !ignores_status(status))
        return unblock_quick_status();
    return unblock_site_pass_quick(pc, id, bytes) >= 0;
}

/* The same for a send-receive (fastpath.h's unblock_quick_sendrecv, whose
 * size is its larger half): both halves of a known size, outside the pool,
 * neither buffer a sentinel.  A status the program wants passes at once, as
 * the full path passes it (unblock_fortran_sendrecv).  An 8 KiB MPI_SENDRECV
 * from mpif.h at a passing site took the full path at every call.  `bytes`,
 * when not 0: the larger half's, as the wrapper's front reckoned them
 * (fastpath.h: unblock_fortran_front_small_sendrecv). */
int unblock_fortran_quick_sendrecv(uintptr_t pc, unsigned id, const void *sbuf,
                                   const void *scount, const void *stype, const void *dest,
                                   const void *rbuf, const void *rcount, const void *rtype,
                                   const void *source, const void *status, size_t bytes)
{
    if (bytes != 0) /* the front's: sizes known, no buffer a sentinel */
        return ignores_status(status) ? unblock_site_pass_quick(pc, id, bytes) >= 0
                                      : unblock_quick_status();
    MPI_Fint sn = *(const MPI_Fint *)scount, rn = *(const MPI_Fint *)rcount;
    int snone = sn == 0 || *(const MPI_Fint *)dest == MPI_PROC_NULL;
    int rnone = rn == 0 || *(const MPI_Fint *)source == MPI_PROC_NULL;
    if ((snone && rnone) || is_sentinel(sbuf) || is_sentinel(rbuf))
        return 0;
    if (!ignores_status(status))
        return unblock_quick_status();
    /* (the sentinels tested above) */
    size_t sq = snone ? 0 : fortran_sized_bytes(sbuf, sn, *(const MPI_Fint *)stype);
    size_t rq = rnone ? 0 : fortran_sized_bytes(rbuf, rn, *(const MPI_Fint *)rtype);
    return (snone || sq) && (rnone || rq) && unblock_site_pass_quick(pc, id, sq > rq ? sq : rq) >= 0;
}

int unblock_fortran_small_sendrecv(const void *sbuf, const void *scount, const void *stype,
                                   const void *dest, const void *rbuf, const void *rcount,
                                   const void *rtype, const void *source)
{
    ask_direct();
    return small_sendrecv_in(sbuf, scount, stype, dest, rbuf, rcount, rtype, source, 0);
}

void unblock_fortran_send(int mode, void **a, int descriptor, fn_t real)
{
    fcall_t c = { real, a, 7, a[6] };
    fcall_t *outer = current;
    current = &c;
    if (fortran_small(a, descriptor, unblock_opt.send_min)) {
        pass(UNBLOCK_PASS_small);
        run_real();
        current = outer;
        return;
    }
    const void *buf = buffer_of(a[0], descriptor);
    if (buf == NULL) {
        run_real();
    } else {
        int rc = unblock_conv_send(mode, buf, I(1), unblock_type_f2c(I(2)), I(3), I(4), unblock_comm_f2c(I(5)),
                                   fallback_send);
        set_ierr(c.ierr, rc);
    }
    current = outer;
}

void unblock_fortran_recv(void **a, int descriptor, fn_t real)
{
    fcall_t c = { real, a, 8, a[7] };
    fcall_t *outer = current;
    current = &c;
    if (fortran_small(a, descriptor, unblock_opt.recv_min)) {
        pass(UNBLOCK_PASS_small);
        run_real();
        current = outer;
        return;
    }
    void *buf = (void *)buffer_of(a[0], descriptor);
    if (buf == NULL) {
        run_real();
    } else {
        /* A status the program wants is filled by the real call. */
        if (!ignores_status(a[6])) {
            pass(UNBLOCK_PASS_status);
            run_real();
        } else {
            set_ierr(c.ierr, unblock_conv_recv(buf, I(1), unblock_type_f2c(I(2)), I(3), I(4),
                                               unblock_comm_f2c(I(5)), MPI_STATUS_IGNORE, fallback_recv));
        }
    }
    current = outer;
}

void unblock_fortran_sendrecv(void **a, int descriptor, fn_t real)
{
    fcall_t c = { real, a, 13, a[12] };
    fcall_t *outer = current;
    current = &c;
    if (descriptor && unblock_fortran_desc_small_sendrecv(a[0], a[1], a[2], a[3], a[5], a[6], a[7],
                                                          a[8])) {
        /* (the plain forms' small calls took their wrapper's fast path; the
         * descriptor forms' too, but while anything was in flight) */
        pass(UNBLOCK_PASS_small);
        run_real();
        current = outer;
        return;
    }
    const void *sbuf = buffer_of(a[0], descriptor);
    void *rbuf = (void *)buffer_of(a[5], descriptor);
    if (sbuf == NULL || rbuf == NULL) {
        run_real();
    } else if (!ignores_status(a[11])) {
        pass(UNBLOCK_PASS_status);
        run_real();
    } else {
        set_ierr(c.ierr, unblock_conv_sendrecv(sbuf, I(1), unblock_type_f2c(I(2)), I(3), I(4), rbuf, I(6),
                                               unblock_type_f2c(I(7)), I(8), I(9), unblock_comm_f2c(I(10)),
                                               MPI_STATUS_IGNORE, 0, fallback_sendrecv, NULL));
    }
    current = outer;
}

void unblock_fortran_sendrecv_replace(void **a, int descriptor, fn_t real)
{
    fcall_t c = { real, a, 10, a[9] };
    void *buf = (void *)buffer_of(a[0], descriptor);
    fcall_t *outer = current;
    current = &c;
    if (buf == NULL) {
        run_real();
    } else if (!ignores_status(a[8])) {
        pass(UNBLOCK_PASS_status);
        run_real();
    } else {
        set_ierr(c.ierr, unblock_conv_sendrecv(buf, I(1), unblock_type_f2c(I(2)), I(3), I(4), buf, I(1),
                                               unblock_type_f2c(I(2)), I(5), I(6), unblock_comm_f2c(I(7)),
                                               MPI_STATUS_IGNORE, 1, NULL, fallback_replace));
    }
    current = outer;
}
