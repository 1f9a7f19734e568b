! selfown.F90 — selfown.c through the mpif.h binding: N rounds of the
! program's own 8-byte MPI_IRECV and MPI_ISEND to itself and their
! MPI_WAITALL.  usage: selfown N
program selfown
  implicit none
  include 'mpif.h'
  integer :: ierr, me, n, i, bad, req(2)
  character(len=32) :: arg
  integer(kind=8) :: out, in
  call MPI_Init(ierr)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  bad = 0
  in = -1
  do i = 0, n - 1
    out = int(i, 8) * 7 + 1
    call MPI_Irecv(in, 1, MPI_INTEGER8, me, 3, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Isend(out, 1, MPI_INTEGER8, me, 3, MPI_COMM_WORLD, req(2), ierr)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    if (in /= out) bad = bad + 1
  end do
  if (bad == 0) then
    print '(a)', 'ok'
  else
    print '(a,i0)', 'wrong: ', bad
  end if
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 1
end program selfown
