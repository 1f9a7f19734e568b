! selfsendrecv.F90 — selfsendrecv.c through the mpif.h binding: N blocking
! MPI_Sendrecv of 8 KiB with itself, at a site the predictor runs as the
! original call once explored (the quick path of tests/integration/
! fastpath_count.py, CALLS 1).  Built with -DSMALL (selfsendrecv_small_mpifh):
! 8 bytes each way, under the thresholds (the small path).
! usage: selfsendrecv N
program selfsendrecv
  implicit none
  include 'mpif.h'
  integer :: ierr, me, n, i
  character(len=32) :: arg
  double precision :: a(1024), b(1024), total, want
  call MPI_Init(ierr)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  total = 0
  a = 0
  do i = 0, n - 1
    a(1) = i
    a(1024) = 2 * i
#ifdef SMALL
    call MPI_Sendrecv(a, 1, MPI_DOUBLE_PRECISION, me, 7, b, 1, MPI_DOUBLE_PRECISION, &
                      me, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    total = total + 3 * b(1)
#else
    call MPI_Sendrecv(a, 1024, MPI_DOUBLE_PRECISION, me, 7, b, 1024, MPI_DOUBLE_PRECISION, &
                      me, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    total = total + b(1) + b(1024)
#endif
  end do
  want = 3 * dble(n) * dble(n - 1) / 2
  if (total == want) then
    print '(a,i0,a)', 'ok: ', n, ' calls'
  else
    print '(a)', 'MISMATCH'
  end if
  call MPI_Finalize(ierr)
  if (total /= want) stop 1
end program selfsendrecv
