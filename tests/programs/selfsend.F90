! selfsend.F90 — selfsend.c through the mpif.h binding: N blocking sends of one
! double precision value to itself, each received at once.  usage: selfsend N
program selfsend
  implicit none
  include 'mpif.h'
  integer :: ierr, me, n, i, st(MPI_STATUS_SIZE)
  character(len=32) :: arg
  double precision :: x, y, total, want
  call MPI_Init(ierr)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  total = 0
  do i = 0, n - 1
    x = i
    call MPI_Send(x, 1, MPI_DOUBLE_PRECISION, me, 7, MPI_COMM_WORLD, ierr)
    call MPI_Recv(y, 1, MPI_DOUBLE_PRECISION, me, 7, MPI_COMM_WORLD, st, ierr)
    total = total + y
  end do
  want = dble(n) * dble(n - 1) / 2
  if (total == want) then
    print '(a,i0,a)', 'ok: ', n, ' round trips'
  else
    print '(a)', 'MISMATCH'
  end if
  call MPI_Finalize(ierr)
  if (total /= want) stop 1
end program selfsend
