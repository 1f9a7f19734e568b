/* mpi_wrap.h — what the generated MPI wrappers (tools/gen_mpi_wrappers.py) need.
 *
 * Built once per MPI implementation: UNBLOCK_MPI_SONAMES and
 * UNBLOCK_MPI_FORTRAN_SONAMES name that implementation's libraries, for the lookup
 * that mpi4py's RTLD_LOCAL loading needs (see interpose.h). */
#ifndef UNBLOCK_MPI_WRAP_H
#define UNBLOCK_MPI_WRAP_H

#include <mpi.h>
#include <stddef.h>

#include "core/core.h"
#include "core/options.h"
#include "core/stats.h"
#include "interpose/interpose.h"

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
#define UNBLOCK_FORTRAN_DECL(type, sym, params) extern void __real_##sym params __attribute__((weak))
#define UNBLOCK_FORTRAN_REAL(type, sym) (__real_##sym)
#else
#define UNBLOCK_MPI_DECL(name, params) static real_##name##_t real_##name
#define UNBLOCK_MPI_REAL(name) \
    ({ \
        real_##name##_t real_ = real_##name; \
        if (unblock_unlikely(real_ == NULL)) \
            real_ = real_##name = (real_##name##_t)unblock_mpi_resolve(#name); \
        real_; \
    })
#define UNBLOCK_FORTRAN_DECL(type, sym, params) static type freal_##sym
#define UNBLOCK_FORTRAN_REAL(type, sym) \
    ({ \
        type real_ = freal_##sym; \
        if (unblock_unlikely(real_ == NULL)) \
            real_ = freal_##sym = (type)unblock_mpi_resolve_fortran(#sym); \
        real_; \
    })
#endif

/* True when the wrapper must only forward: the runtime is off for this process,
 * or this thread is already inside an MPI call (MPI calling itself, or MPICH's
 * Fortran layer calling C MPI_x after our Fortran wrapper counted the call). */
#define UNBLOCK_MPI_SKIP() (unblock_tls.mpi_depth > 0 || !unblock_g.active || !unblock_opt.comm)

static inline void unblock_mpi_enter(unsigned id, unsigned binding)
{
    unblock_tls.mpi_depth++;
    unblock_counter_add(&unblock_mpi_fn_calls[id][binding], 1);
}

static inline void unblock_mpi_leave(void)
{
    unblock_tls.mpi_depth--;
}

/* After any successful MPI_Init/MPI_Init_thread (C or Fortran), also with
 * UNBLOCK_COMM=0: checks that the MPI library loaded has the ABI this library was
 * built for, and records the rank (which names the statistics file). */
void unblock_comm_after_init(void);

#endif
