! ownopaque.F90 — a request from Fortran (mpif.h) that unblock cannot follow:
! an MPI_IBCAST (a nonblocking collective's buffers are not followed from
! Fortran), pending while rank 1 receives a large block from rank 0 with
! MPI_RECV.  The run is untracked from that start on, so the receive runs
! blocking (comm.passthrough_why.own_nonblocking), with the program's requests
! followed or not (UNBLOCK_OWN_FOLLOW=no, as a profile that found following
! bought nothing: src/comm/requests.h, UNBLOCK_OWN_ARMED).  Each rank writes
! OUTDIR/rank-<r>.txt; a wrong value ends the run with exit code 1.
! usage: ownopaque OUTDIR
program ownopaque
  implicit none
  include 'mpif.h'
  integer, parameter :: big = 131072
  integer :: ierr, rank, req, i, bad
  double precision, allocatable :: block(:)
  double precision :: small(8), total
  character(len=512) :: outdir, path

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, outdir)
  allocate(block(big))
  bad = 0
  block = 0d0
  small = dble(rank)
  if (rank == 0) small = 42d0
  call MPI_IBCAST(small, 8, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, req, ierr)
  if (rank == 0) then
    do i = 1, big
      block(i) = dble(mod(i * 7, 101))
    end do
    call MPI_SEND(block, big, MPI_DOUBLE_PRECISION, 1, 3, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call MPI_RECV(block, big, MPI_DOUBLE_PRECISION, 0, 3, MPI_COMM_WORLD, &
                  MPI_STATUS_IGNORE, ierr)
    do i = 1, big
      if (block(i) /= dble(mod(i * 7, 101))) bad = bad + 1
    end do
  end if
  call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
  do i = 1, 8
    if (small(i) /= 42d0) bad = bad + 1
  end do
  total = sum(block) + sum(small)
  write (path, '(a,a,i0,a)') trim(outdir), '/rank-', rank, '.txt'
  open (unit=10, file=path, status='replace')
  write (10, '(a,i0,a,f20.3,a,i0)') 'rank ', rank, ' total ', total, ' bad ', bad
  close (10)
  call MPI_FINALIZE(ierr)
  if (bad /= 0) stop 1
end program ownopaque
