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
 * program's own arguments, exactly as without unblock. */
#define _GNU_SOURCE
#include "comm/mpi_wrap.h"

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
static void *status_ignore, *status_ignore_f08;
static int sentinels_ready;

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
    }
    MPI_Fint **ign = dlsym(RTLD_DEFAULT, "MPI_F_STATUS_IGNORE");
    status_ignore = ign ? (void *)*ign : NULL;
    void **ign08 = dlsym(RTLD_DEFAULT, "MPI_F08_STATUS_IGNORE");
    status_ignore_f08 = ign08 ? *ign08 : NULL;
    __atomic_store_n(&sentinels_ready, 1, __ATOMIC_RELEASE);
}

static int is_sentinel(const void *buf)
{
    if (!__atomic_load_n(&sentinels_ready, __ATOMIC_ACQUIRE))
        find_sentinels();
    for (unsigned i = 0; i < NSENTINELS; i++)
        if ((uintptr_t)buf >= sentinels[i].lo && (uintptr_t)buf < sentinels[i].hi)
            return 1;
    return 0;
}

static int ignores_status(const void *status)
{
    if (!__atomic_load_n(&sentinels_ready, __ATOMIC_ACQUIRE))
        find_sentinels();
    return status != NULL && (status == status_ignore || status == status_ignore_f08);
}

static void pass(int reason)
{
    unblock_counter_add(&unblock_stats.comm_pass[reason], 1);
}

/* The buffer a call passes: an address, or (MPICH's mpi_f08) gfortran's
 * descriptor, of which only a contiguous one is used.  NULL: do not convert (the
 * reason is counted). */
static const void *buffer_of(const void *arg, int descriptor)
{
    if (!descriptor) {
        if (!is_sentinel(arg))
            return arg;
        pass(UNBLOCK_PASS_memory);
        return NULL;
    }
    const int64_t *d = arg;
    void *base = (void *)d[0];
    int64_t elem = d[2], span = d[4];
    int rank = ((const signed char *)&d[3])[4];
    if (rank < 0 || rank > 15 || span != elem) {
        pass(UNBLOCK_PASS_datatype);
        return NULL;
    }
    int64_t expect = 1;
    for (int k = 0; k < rank; k++) {
        int64_t stride = d[5 + 3 * k], lb = d[6 + 3 * k], ub = d[7 + 3 * k];
        if (ub < lb)
            return NULL; /* empty: let MPI say what it makes of it */
        if (stride != expect) {
            pass(UNBLOCK_PASS_datatype); /* MPICH makes a type of its own for it */
            return NULL;
        }
        expect *= ub - lb + 1;
    }
    if (!is_sentinel(base))
        return base;
    pass(UNBLOCK_PASS_memory);
    return NULL;
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

void unblock_fortran_send(int mode, void **a, int descriptor, fn_t real)
{
    fcall_t c = { real, a, 7, a[6] };
    const void *buf = buffer_of(a[0], descriptor);
    fcall_t *outer = current;
    current = &c;
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
    void *buf = (void *)buffer_of(a[0], descriptor);
    fcall_t *outer = current;
    current = &c;
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
    const void *sbuf = buffer_of(a[0], descriptor);
    void *rbuf = (void *)buffer_of(a[5], descriptor);
    fcall_t *outer = current;
    current = &c;
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

/* ---- the thread level: Fortran MPI_INIT asks for MPI_THREAD_MULTIPLE too ---- */

void unblock_fortran_init(void **a, const char *init_thread, fn_t real)
{
#ifndef UNBLOCK_LINK_WRAP
    fn_t it = unblock_opt.thread == 0 /* multiple */ && unblock_g.active
                  ? (fn_t)unblock_dlsym_next_or_in(init_thread, UNBLOCK_MPI_FORTRAN_SONAMES)
                  : NULL;
    if (it) {
        MPI_Fint required = MPI_THREAD_MULTIPLE, provided = 0;
        it(&required, &provided, a[0]);
        if (a[0] == NULL || *(MPI_Fint *)a[0] == MPI_SUCCESS)
            unblock_conv_program_level(MPI_THREAD_SINGLE);
        return;
    }
#else
    (void)init_thread;
#endif
    real(a[0]);
}

void unblock_fortran_init_thread(void **a, fn_t real)
{
    if (unblock_opt.thread != 0 || !unblock_g.active) {
        real(a[0], a[1], a[2]);
        return;
    }
    MPI_Fint asked = *(MPI_Fint *)a[0], multiple = MPI_THREAD_MULTIPLE, got = 0;
    real(&multiple, &got, a[2]);
    if (a[2] == NULL || *(MPI_Fint *)a[2] == MPI_SUCCESS) {
        /* What the program would have been told: the level it asked for. */
        int level = asked <= got ? (int)asked : (int)got;
        unblock_conv_program_level(level);
        *(MPI_Fint *)a[1] = (MPI_Fint)level;
    }
}

void unblock_fortran_query_thread(void **a, fn_t real)
{
    real(a[0], a[1]);
    int level = unblock_conv_program_level_get();
    if ((a[1] == NULL || *(MPI_Fint *)a[1] == MPI_SUCCESS) && level >= 0 &&
        *(MPI_Fint *)a[0] > level)
        *(MPI_Fint *)a[0] = (MPI_Fint)level;
}
