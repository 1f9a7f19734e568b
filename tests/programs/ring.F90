! ring.F90 — one Fortran program for the three bindings: mpif.h (default),
! "use mpi" (-DUSE_MPI_MODULE) and "use mpi_f08" (-DUSE_MPI_F08: derived-type
! handles, ierror left out, a strided section that MPICH passes as an array
! descriptor).  Rank 0 sends a block to every rank, neighbours exchange with
! MPI_Sendrecv (including a strided array section, which the compiler may pass
! as a packed temporary), then a reduction.  Each rank writes OUTDIR/rank-<r>.txt.
#include "binding.h"
program ring
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
  type(MPI_Status) :: status
#elif defined(USE_MPI_MODULE)
  use mpi
  implicit none
  integer :: status(MPI_STATUS_SIZE)
#else
  implicit none
  include 'mpif.h'
  integer :: status(MPI_STATUS_SIZE)
#endif
  integer, parameter :: n = 1000, iters = 10
  integer :: ierr, rank, nprocs, left, right, it, i, r
  double precision :: a(n), halo(2), total, grid(4, n)
  character(len=512) :: outdir, path

  call MPI_Init(IERR_ONLY)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERR)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs IERR)
  call get_command_argument(1, outdir)
  if (rank == 0) then
    do r = 1, nprocs - 1
      do i = 1, n
        a(i) = dble(mod(i * 37 + r, 101))
      end do
      call MPI_Send(a, n, MPI_DOUBLE_PRECISION, r, 7, MPI_COMM_WORLD IERR)
    end do
    do i = 1, n
      a(i) = dble(mod(i * 37, 101))
    end do
  else
    call MPI_Recv(a, n, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD, status IERR)
  end if
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  do it = 1, iters
    call MPI_Sendrecv(a(n), 1, MPI_DOUBLE_PRECISION, right, 1, halo(1), 1, &
                      MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, status IERR)
    call MPI_Sendrecv(a(1), 1, MPI_DOUBLE_PRECISION, left, 2, halo(2), 1, &
                      MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
    a(1) = 0.5d0 * (a(1) + halo(1))
    a(n) = 0.5d0 * (a(n) + halo(2))
    do i = 2, n - 1
      a(i) = 0.25d0 * a(i - 1) + 0.5d0 * a(i) + 0.25d0 * a(i + 1)
    end do
  end do
  grid = 0
  grid(2, :) = a
  call MPI_Sendrecv_replace(grid(2, 1:n:2), n / 2, MPI_DOUBLE_PRECISION, right, 3, left, 3, &
                            MPI_COMM_WORLD, status IERR)
  call MPI_Allreduce(sum(a) + sum(grid), total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, &
                     MPI_COMM_WORLD IERR)
  write (path, '(A,A,I0,A)') trim(outdir), '/rank-', rank, '.txt'
  open (unit=10, file=trim(path), status='replace', action='write')
  write (10, '(A,I0,A,I0)') 'rank ', rank, ' of ', nprocs
  write (10, '(A,ES24.16)') 'total ', total
  write (10, '(A,2ES24.16)') 'ends ', a(1), a(n)
  close (10)
  call MPI_Finalize(IERR_ONLY)
end program ring
