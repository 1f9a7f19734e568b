/* fortran_init.c — the thread level from Fortran: MPI_INIT asks for
 * MPI_THREAD_MULTIPLE too (through the same binding's MPI_INIT_THREAD, when the
 * completion thread is wanted), MPI_INIT_THREAD asks for it in the program's
 * stead and tells the program the level it asked for, and MPI_QUERY_THREAD says
 * that level (lifecycle.c does the same for C). */
#define _GNU_SOURCE
#include "comm/mpi_wrap.h"
#include "interpose/interpose.h"

typedef void (*fn_t)();

void unblock_fortran_init(void **a, const char *init_thread, fn_t real)
{
    unblock_wb_mpi_started(); /* (its start-up hidden in MPI_Init's) */
#ifndef UNBLOCK_LINK_WRAP
    fn_t it = unblock_conv_want_multiple(MPI_THREAD_SINGLE)
                  ? (fn_t)unblock_dlsym_next_or_in(init_thread, UNBLOCK_MPI_FORTRAN_SONAMES)
                  : NULL;
    if (it) {
        MPI_Fint required = MPI_THREAD_MULTIPLE, provided = 0;
        unblock_conv_program_level(MPI_THREAD_SINGLE); /* known to MPI_Init's after-init hook */
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
    unblock_wb_mpi_started();
    if (!unblock_conv_want_multiple((int)*(MPI_Fint *)a[0])) {
        real(a[0], a[1], a[2]);
        return;
    }
    MPI_Fint asked = *(MPI_Fint *)a[0], multiple = MPI_THREAD_MULTIPLE, got = 0;
    unblock_conv_program_level((int)asked); /* known to MPI_Init's after-init hook */
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
