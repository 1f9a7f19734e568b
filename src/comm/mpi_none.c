/* mpi_none.c — the MPI side of libunblock-serial.so, for programs that do not use
 * MPI (and for the unit tests): empty function tables, so the report has no MPI
 * functions and nothing refers to an MPI library. */
#include "core/stats.h"

const char unblock_mpi_impl[] = "none";
const unsigned unblock_mpi_fn_count = 0;
const char *const unblock_mpi_fn_names[1] = { "" };
const unsigned char unblock_mpi_fn_carries_data[1] = { 0 };
unblock_counter_t unblock_mpi_fn_calls[1][UNBLOCK_BINDING_COUNT];

/* No MPI: nothing is ever converted, so nothing is ever in flight. */
void unblock_comm_init(void)
{
}

void unblock_comm_quiesce_all(void)
{
}
