! selfown.F90 — selfown.c through a Fortran binding (binding.h: mpif.h by
! default, "use mpi_f08" with -DUSE_MPI_F08, ierror left out): N rounds of the
! program's own 8-byte MPI_IRECV and MPI_ISEND to itself and their
! MPI_WAITALL.  usage: selfown N
#include "binding.h"
program selfown
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
  type(MPI_Request) :: req(2)
#else
  implicit none
  include 'mpif.h'
  integer :: req(2)
#endif
  integer :: ierr, me, n, i, bad
  character(len=32) :: arg
  integer(kind=8) :: out, in
  call MPI_Init(IERR_ONLY)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, me IERR)
  bad = 0
  in = -1
  do i = 0, n - 1
    out = int(i, 8) * 7 + 1
    call MPI_Irecv(in, 1, MPI_INTEGER8, me, 3, MPI_COMM_WORLD, req(1) IERR)
    call MPI_Isend(out, 1, MPI_INTEGER8, me, 3, MPI_COMM_WORLD, req(2) IERR)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE IERR)
    if (in /= out) bad = bad + 1
  end do
  if (bad == 0) then
    print '(a)', 'ok'
  else
    print '(a,i0)', 'wrong: ', bad
  end if
  call MPI_Finalize(IERR_ONLY)
  if (bad /= 0) stop 1
end program selfown
