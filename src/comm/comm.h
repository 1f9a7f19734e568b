/* comm.h — what the comm module shares between its MPI build (libunblock-<mpi>.so:
 * convert.c and the generated wrappers) and its MPI-free build (mpi_none.c, in
 * libunblock-serial.so and the unit tests); no mpi.h here. */
#ifndef UNBLOCK_COMM_H
#define UNBLOCK_COMM_H

#include "core/counts.h"
#include "core/stats.h"

/* Name of the MPI implementation this library was built for ("openmpi", "mpich"),
 * or "none" for the MPI-free build. */
extern UNBLOCK_HIDDEN const char unblock_mpi_impl[];

/* The table of intercepted MPI functions, generated per MPI library
 * (src/comm/mpi_functions.toml); empty in the MPI-free build. */
extern UNBLOCK_HIDDEN const unsigned unblock_mpi_fn_count;
extern UNBLOCK_HIDDEN const char *const unblock_mpi_fn_names[];
extern UNBLOCK_HIDDEN const unsigned char unblock_mpi_fn_carries_data[];

/* Each function's calls by binding, counted per thread (core/counts.h); `fast`:
 * the calls the wrappers' fast path sent to MPI at once (fastpath.h), passed as
 * small and not among the others. */
static inline unsigned unblock_mpi_count_slot(unsigned id, unsigned binding, int fast)
{
    return (fast ? UNBLOCK_COUNT_MPI_FAST : UNBLOCK_COUNT_MPI) + id * UNBLOCK_BINDING_COUNT + binding;
}
static inline uint64_t unblock_mpi_fn_get(unsigned id, unsigned binding, int fast)
{
    return unblock_count_get(unblock_mpi_count_slot(id, binding, fast));
}

/* Start-up in the program's process (the fault handler; module.c), and completing
 * every operation in flight (exit, fork, exec): convert.c, or mpi_none.c. */
void unblock_comm_init(void);
void unblock_comm_quiesce_all(void);
/* Whether the thread gate runs ("on"), or why not (gate.c; the report). */
const char *unblock_comm_gate_state(void);
/* What the Fortran wrappers' fronts call (fortran.c; the report). */
const char *unblock_fortran_front_kind(void);

#endif
