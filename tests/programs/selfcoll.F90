! selfcoll.F90 — selfcoll.c through the mpif.h binding: N rounds of an 8-byte
! MPI_ALLREDUCE, an 8-byte MPI_BCAST and an MPI_BARRIER.  usage: selfcoll N
program selfcoll
  implicit none
  include 'mpif.h'
  integer :: ierr, nproc, n, i
  character(len=32) :: arg
  double precision :: x, y, total, want
  call MPI_Init(ierr)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  total = 0
  do i = 0, n - 1
    x = i
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    call MPI_Bcast(y, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    total = total + y
  end do
  want = dble(nproc) * dble(n) * dble(n - 1) / 2
  if (total == want) then
    print '(a,i0,a)', 'ok: ', n, ' rounds'
  else
    print '(a)', 'MISMATCH'
  end if
  call MPI_Finalize(ierr)
  if (total /= want) stop 1
end program selfcoll
