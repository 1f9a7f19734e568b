! pingpong_mpifh.F90 — pingpong.c's blocking ping-pong from Fortran (mpif.h), 2
! ranks, and the same exchange as one MPI_SENDRECV a round, at 8 B, 4 KiB and
! 16 KiB: the Fortran wrappers' fast path (8 B) and quick path of a passing
! site (4 KiB and more).  Prints "send.BYTES US" (half a round trip) and
! "sendrecv.BYTES US" (one call), each the second of two batches; first
! "self.8 US", an 8-byte MPI_SEND and MPI_RECV of each rank to itself (no
! wait for the other rank: what the calls cost, before any call was converted),
! "selfsendrecv.8 US", an 8-byte MPI_SENDRECV to itself, and "selfown.8 US",
! the program's own 8-byte MPI_IRECV, MPI_ISEND and MPI_WAITALL to itself,
! each the best of three batches of 100,000; "allreduce.8 US", an 8-byte
! MPI_ALLREDUCE of both ranks, the best of three batches of 20,000.
! Built with -DF08 (bench/pingpong_f08), the same from `use mpi_f08`: on MPICH
! its calls are the descriptor forms (mpi_send_f08ts_), on Open MPI the plain
! ones (mpi_send_f08_).
#ifdef F08
#define NAME 'pingpong_f08'
#define REQUEST type(MPI_Request)
program pingpong_f08
  use mpi_f08
  implicit none
#else
#define NAME 'pingpong_mpifh'
#define REQUEST integer
program pingpong_mpifh
  implicit none
  include 'mpif.h'
#endif
  integer, parameter :: nsizes = 3
  integer :: sizes(nsizes) = (/ 1, 512, 2048 /)
  integer :: ierr, me, np, other, i, k, s, n, iters
  double precision, allocatable :: a(:), b(:)
  double precision :: t0, t, best
  REQUEST :: req(2)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  if (np /= 2) then
    if (me == 0) print '(a)', NAME // ': run with 2 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  other = 1 - me
  allocate(a(maxval(sizes)), b(maxval(sizes)))
  a = 1
  b = 0
  best = 1d30
  do k = 1, 3
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, 100000
      call MPI_Send(a, 1, MPI_DOUBLE_PRECISION, me, 9, MPI_COMM_WORLD, ierr)
      call MPI_Recv(b, 1, MPI_DOUBLE_PRECISION, me, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end do
    best = min(best, (MPI_Wtime() - t0) / 100000 * 1d6)
  end do
  if (me == 0) print '(a,f10.4)', 'self.8 ', best
  best = 1d30
  do k = 1, 3
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, 100000
      call MPI_Sendrecv(a, 1, MPI_DOUBLE_PRECISION, me, 9, b, 1, MPI_DOUBLE_PRECISION, &
                        me, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    end do
    best = min(best, (MPI_Wtime() - t0) / 100000 * 1d6)
  end do
  if (me == 0) print '(a,f10.4)', 'selfsendrecv.8 ', best
  best = 1d30
  do k = 1, 3
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, 100000
      call MPI_Irecv(b, 1, MPI_DOUBLE_PRECISION, me, 9, MPI_COMM_WORLD, req(1), ierr)
      call MPI_Isend(a, 1, MPI_DOUBLE_PRECISION, me, 9, MPI_COMM_WORLD, req(2), ierr)
      call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    end do
    best = min(best, (MPI_Wtime() - t0) / 100000 * 1d6)
  end do
  if (me == 0) print '(a,f10.4)', 'selfown.8 ', best
  best = 1d30
  do k = 1, 3
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, 20000
      call MPI_Allreduce(a, b, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    end do
    best = min(best, (MPI_Wtime() - t0) / 20000 * 1d6)
  end do
  if (me == 0) print '(a,f10.4)', 'allreduce.8 ', best
  if (b(1) /= 2) then
    print '(a)', NAME // ': wrong sum'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  do s = 1, nsizes
    n = sizes(s)
    iters = 20000
    if (n > 512) iters = 5000
    do k = 1, 2
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
      do i = 1, iters
        if (me == 0) then
          call MPI_Send(a, n, MPI_DOUBLE_PRECISION, other, 7, MPI_COMM_WORLD, ierr)
          call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, other, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        else
          call MPI_Recv(b, n, MPI_DOUBLE_PRECISION, other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
          call MPI_Send(a, n, MPI_DOUBLE_PRECISION, other, 8, MPI_COMM_WORLD, ierr)
        end if
      end do
      t = (MPI_Wtime() - t0) / iters * 1d6 / 2
    end do
    if (me == 0) print '(a,i0,1x,f10.4)', 'send.', 8 * n, t
    do k = 1, 2
      call MPI_Barrier(MPI_COMM_WORLD, ierr)
      t0 = MPI_Wtime()
      do i = 1, iters
        call MPI_Sendrecv(a, n, MPI_DOUBLE_PRECISION, other, 7, b, n, MPI_DOUBLE_PRECISION, &
                          other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      end do
      t = (MPI_Wtime() - t0) / iters * 1d6
    end do
    if (me == 0) print '(a,i0,1x,f10.4)', 'sendrecv.', 8 * n, t
  end do
  if (b(1) /= 1) then
    print '(a)', NAME // ': wrong data'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_Finalize(ierr)
#ifdef F08
end program pingpong_f08
#else
end program pingpong_mpifh
#endif
