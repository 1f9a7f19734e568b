/* mpi_none.c — the MPI side of libunblock-serial.so, for programs that do not use
 * MPI (and for the unit tests): empty function tables, so the report has no MPI
 * functions and nothing refers to an MPI library. */
#include "comm/comm.h"
#include "core/options.h"
#include "protect/protect.h"

const char unblock_mpi_impl[] = "none";
const unsigned unblock_mpi_fn_count = 0;
const char *const unblock_mpi_fn_names[1] = { "" };
const unsigned char unblock_mpi_fn_carries_data[1] = { 0 };

/* No MPI: nothing is ever converted.  Large reads may still run in the
 * background (fileio), which needs the fault handler and large allocations in
 * blocks of their own, as in MPI programs. */
void unblock_comm_init(void)
{
    if (unblock_opt.io && unblock_opt.read_min > 0 && unblock_protect_init())
        unblock_g.protect_ready = 1;
}

void unblock_comm_quiesce_all(void)
{
}

const char *unblock_comm_gate_state(void)
{
    return "no MPI";
}

const char *unblock_fortran_front_kind(void)
{
    return "none";
}
