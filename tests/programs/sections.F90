! sections.F90 — the converted calls from Fortran, one source for the three
! bindings: mpif.h (default), "use mpi" (-DUSE_MPI_MODULE) and "use mpi_f08"
! (-DUSE_MPI_F08).  In pairs of ranks, both ways: 2 MiB contiguous arrays sent and
! received with MPI_STATUS_IGNORE (the received array read at once from its end,
! the sent one overwritten at once); non-contiguous array sections (every other
! element, one row of a 2 x n array), which mpif.h and "use mpi" pass as packed
! temporaries and MPICH's mpi_f08 as a descriptor; MPI_SENDRECV of both kinds and
! MPI_SENDRECV_REPLACE of a section.  Each rank writes OUTDIR/rank-<r>.txt with
! the weighted sum and ok/MISMATCH per check.
#include "binding.h"
program sections
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
#elif defined(USE_MPI_MODULE)
  use mpi
  implicit none
#else
  implicit none
  include 'mpif.h'
#endif
  integer, parameter :: n = 262144
  integer :: ierr, rank, nprocs, peer, dir
  integer :: nbad = 0 ! checks that found a mismatch
  real(8), allocatable :: a(:), b(:), c(:, :)
  character(len=512) :: outdir, path

  call MPI_Init(IERR_ONLY)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERR)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs IERR)
  call get_command_argument(1, outdir)
  peer = ieor(rank, 1)
  if (peer >= nprocs) peer = -1
  allocate (a(n), b(n), c(2, n))
  write (path, '(A,A,I0,A)') trim(outdir), '/rank-', rank, '.txt'
  open (unit=10, file=trim(path), status='replace', action='write')
  write (10, '(A,I0,A,I0,A,I0)') 'rank ', rank, ' of ', nprocs, ', peer ', peer
  if (peer < 0) then
    write (10, '(A)') 'no peer, idle'
  else
    do dir = 0, 1
      if (mod(rank, 2) == dir) then
        call fill(a, n, rank, 10 * dir)
        call MPI_Send(a, n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD IERR)
        a = -1d0
        call fill(c(1, :), n, rank, 10 * dir + 1)
        call MPI_Send(c(1, :), n, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD IERR)
        c = -2d0
      else
        b = 0d0
        call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
        call check('contiguous recv', dir, b(n:1:-1), n, peer, 10 * dir, .true.)
        c = 0d0
        call MPI_Recv(c(2, :), n, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, &
                      MPI_STATUS_IGNORE IERR)
        call check('section recv', dir, c(2, :), n, peer, 10 * dir + 1, .false.)
        call check('other row untouched', dir, c(1, :) + 1d0, n, peer, -1, .false.)
      end if
    end do
    ! Both at once: contiguous, then sections, then a section replaced.
    call fill(a, n, rank, 20)
    call MPI_Sendrecv(a, n, MPI_DOUBLE_PRECISION, peer, 3, b, n, MPI_DOUBLE_PRECISION, peer, 3, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
    call check('sendrecv', 0, b, n, peer, 20, .false.)
    call fill(c(1, :), n, rank, 21)
    call MPI_Sendrecv(c(1, :), n, MPI_DOUBLE_PRECISION, peer, 4, c(2, :), n, &
                      MPI_DOUBLE_PRECISION, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
    call check('sendrecv sections', 0, c(2, :), n, peer, 21, .false.)
    call fill(a(1:n:2), n / 2, rank, 22)
    call MPI_Sendrecv_replace(a(1:n:2), n / 2, MPI_DOUBLE_PRECISION, peer, 5, peer, 5, &
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
    call check('sendrecv_replace section', 0, a(1:n:2), n / 2, peer, 22, .false.)
  end if
  call MPI_Barrier(MPI_COMM_WORLD IERR)
  close (10)
  deallocate (a, b, c)
  call MPI_Finalize(IERR_ONLY)
  if (nbad > 0) stop 1

contains

  ! Element i of message msg from rank src (msg -1: the value -1 everywhere).
  real(8) function val(src, msg, i)
    integer, intent(in) :: src, msg, i
    if (msg < 0) then
      val = 1d0
    else
      val = dble(mod(i * 37 + src * 101 + msg * 7919, 100003)) * 0.125d0
    end if
  end function val

  subroutine fill(x, m, src, msg)
    integer, intent(in) :: m, src, msg
    real(8), intent(out) :: x(m)
    integer :: i
    do i = 1, m
      x(i) = val(src, msg, i)
    end do
  end subroutine fill

  ! Compares x (reversed: x(i) is element m+1-i) with message msg of rank src.
  subroutine check(what, k, x, m, src, msg, reversed)
    character(len=*), intent(in) :: what
    integer, intent(in) :: k, m, src, msg
    real(8), intent(in) :: x(m)
    logical, intent(in) :: reversed
    integer :: i, j, bad
    real(8) :: s
    bad = 0
    s = 0d0
    do i = 1, m
      j = i
      if (reversed) j = m + 1 - i
      if (x(i) /= val(src, msg, j)) bad = bad + 1
      s = s + x(i) * dble(mod(j, 7))
    end do
    if (bad == 0) then
      write (10, '(A,1X,I0,A,I0,A)') what, k, ': ', nint(8d0 * s, 8), ' ok'
    else
      write (10, '(A,1X,I0,A,I0,A,I0,A)') what, k, ': ', nint(8d0 * s, 8), ' MISMATCH (', bad, ')'
      nbad = nbad + 1
    end if
  end subroutine check

end program sections
