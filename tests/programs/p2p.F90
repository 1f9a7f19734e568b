! p2p.F90 — the blocking point-to-point calls from Fortran through mpif.h, built
! with the compiler's default flags: MPI_SEND of a 1 MiB allocatable real(8) array
! overwritten right after the call, MPI_RECV into an allocatable array read right
! after (last element first), MPI_SENDRECV around a ring and MPI_SENDRECV_REPLACE
! (1 MiB and 800 B).  Ranks pair up (0,1), (2,3), ... for the sends (a last odd
! rank idles); the ring uses every rank.  Each rank writes OUTDIR/rank-<r>.txt: per
! check the sum of the data received and "ok" or "MISMATCH" (the transparency
! harness compares these byte for byte).
! usage: p2p OUTDIR
program p2p
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 131072, small = 100, iters = 10
  integer :: ierr, rank, nprocs, peer, left, right, dir, it, cnt
  integer :: nbad = 0 ! lines that say MISMATCH (line.inc)
  integer :: status(MPI_STATUS_SIZE)
  real(8), allocatable :: a(:), b(:), c(:)
  real(8) :: last, first
  character(len=512) :: outdir, path

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, outdir)
  if (len_trim(outdir) == 0) outdir = '.'
  peer = ieor(rank, 1)
  if (peer >= nprocs) peer = -1
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  allocate (a(n), b(n), c(small))

  write (path, '(A,A,I0,A)') trim(outdir), '/rank-', rank, '.txt'
  open (unit=10, file=trim(path), status='replace', action='write')
  write (10, '(A,I0,A,I0,A,I0)') 'rank ', rank, ' of ', nprocs, ', peer ', peer

  ! MPI_SEND then overwrite; MPI_RECV then read at once
  if (peer >= 0) then
    do dir = 0, 1
      if (mod(rank, 2) == dir) then
        call fill(a, n, rank, 2 * dir)
        call MPI_SEND(a, n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, ierr)
        call fill(a, n, rank, 2 * dir + 1)
        call MPI_SEND(a, n, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, ierr)
        a = -1d0
      else
        b = 0d0
        call MPI_RECV(b, n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, status, ierr)
        last = b(n)
        first = b(1)
        call line('recv first, last element', dir, last == val(peer, 2 * dir, n) .and. &
                  first == val(peer, 2 * dir, 1), nint(8d0 * last, 8))
        call check('recv first', dir, b, n, peer, 2 * dir)
        call MPI_RECV(b, n, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, status, ierr)
        call MPI_GET_COUNT(status, MPI_DOUBLE_PRECISION, cnt, ierr)
        call line('recv second, count', dir, cnt == n, int(cnt, 8))
        call check('recv second', dir, b, n, peer, 2 * dir + 1)
      end if
    end do
  else
    write (10, '(A)') 'send/recv: no peer, idle'
  end if

  ! MPI_SENDRECV around the ring, the received data used at once
  do it = 1, iters
    call fill(a, n, rank, 10 + it)
    call MPI_SENDRECV(a, n, MPI_DOUBLE_PRECISION, right, 3, b, n, MPI_DOUBLE_PRECISION, &
                      left, 3, MPI_COMM_WORLD, status, ierr)
    a = 0.5d0 * b
    b = 2d0 * a
    call MPI_GET_COUNT(status, MPI_DOUBLE_PRECISION, cnt, ierr)
    if (cnt /= n .or. status(MPI_SOURCE) /= left) call line('sendrecv status', it, .false., &
                                                            int(cnt, 8))
    call check('sendrecv iteration', it, b, n, left, 10 + it)
  end do

  ! MPI_SENDRECV_REPLACE, 1 MiB and 800 B
  call fill(a, n, rank, 50)
  call MPI_SENDRECV_REPLACE(a, n, MPI_DOUBLE_PRECISION, right, 4, left, 4, MPI_COMM_WORLD, &
                            status, ierr)
  call check('sendrecv_replace 1 MiB', 0, a, n, left, 50)
  call fill(c, small, rank, 51)
  call MPI_SENDRECV_REPLACE(c, small, MPI_DOUBLE_PRECISION, left, 5, right, 5, MPI_COMM_WORLD, &
                            status, ierr)
  call check('sendrecv_replace 800 B', 0, c, small, right, 51)

  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  close (10)
  deallocate (a, b, c)
  call MPI_FINALIZE(ierr)
  if (nbad > 0) stop 1

contains

  ! Element i of message msg from rank src: a multiple of 1/8, exact in real(8).
  real(8) function val(src, msg, i)
    integer, intent(in) :: src, msg, i
    val = dble(mod(i * 37 + src * 101 + msg * 7919, 100003)) * 0.125d0
  end function val

  subroutine fill(x, m, src, msg)
    integer, intent(in) :: m, src, msg
    real(8), intent(out) :: x(m)
    integer :: i
    do i = 1, m
      x(i) = val(src, msg, i)
    end do
  end subroutine fill

#include "line.inc"

  ! Compares x with message msg of rank src; writes 8 times the weighted sum.
  subroutine check(what, k, x, m, src, msg)
    character(len=*), intent(in) :: what
    integer, intent(in) :: k, m, src, msg
    real(8), intent(in) :: x(m)
    integer :: i, bad
    real(8) :: s
    bad = 0
    s = 0d0
    do i = 1, m
      if (x(i) /= val(src, msg, i)) bad = bad + 1
      s = s + x(i) * dble(mod(i, 7))
    end do
    call line(what, k, bad == 0, nint(8d0 * s, 8))
  end subroutine check

end program p2p
