! own.F90 — the program's own requests from Fortran, one program for the three
! bindings (binding.h): mpif.h (default), "use mpi" (-DUSE_MPI_MODULE) and
! "use mpi_f08" (-DUSE_MPI_F08).  Rank 0 first sends a large block to every
! rank with MPI_Send (a call unblock may convert); then ROUNDS rounds of a ring
! exchange with the program's own MPI_Irecv and MPI_Isend of 8 and 4096
! doubles, completed in turn by MPI_Waitall (every other time with statuses),
! by MPI_Wait each, and by MPI_Test until done, the data checked every round
! and the receives' statuses where asked for; then 3 rounds of 8 doubles sent
! from and received into MPI_BOTTOM (types of absolute addresses), which
! MPICH's binding maps to the C one.  Last, two rounds of the program's own
! requests on two large blocks (completed by MPI_Waitall, then by MPI_Waitany
! twice), then large blocking MPI_Send/MPI_Recv into the
! block received before (rank 0 to every rank, then back, four times each):
! unblock may convert those receives only if it saw every earlier request of
! the program's complete (requests.c follows Fortran's by their handles).
! Each rank writes OUTDIR/rank-<r>.txt; a wrong value ends the run with exit
! code 1.
! usage: own OUTDIR [ROUNDS]
#include "binding.h"
#if defined(USE_MPI_F08)
#define SRC(s) s%MPI_SOURCE
#define TAG(s) s%MPI_TAG
#define SRCS(a, k) a(k)%MPI_SOURCE
#define TAGS(a, k) a(k)%MPI_TAG
#else
#define SRC(s) s(MPI_SOURCE)
#define TAG(s) s(MPI_TAG)
#define SRCS(a, k) a(MPI_SOURCE, k)
#define TAGS(a, k) a(MPI_TAG, k)
#endif
program own
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
  type(MPI_Request) :: req(4)
  type(MPI_Status) :: status, sts(4)
  type(MPI_Datatype) :: absa, absb
#elif defined(USE_MPI_MODULE)
  use mpi
  implicit none
  integer :: req(4), status(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4), absa, absb
#else
  implicit none
  include 'mpif.h'
  integer :: req(4), status(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4), absa, absb
#endif
  integer, parameter :: big = 131072, n = 4096
  integer :: ierr, rank, nprocs, left, right, it, i, k, rounds, bad, cnt
  logical :: done
  double precision, allocatable :: block(:), block2(:)
  double precision :: sa(8), ra(8), sb(n), rb(n), total
  character(len=512) :: outdir, path, arg
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)

  call MPI_Init(IERR_ONLY)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERR)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs IERR)
  call get_command_argument(1, outdir)
  rounds = 30
  if (command_argument_count() > 1) then
    call get_command_argument(2, arg)
    read (arg, *) rounds
  end if
  allocate(block(big), block2(big))
  bad = 0
  if (rank == 0) then
    do k = 1, nprocs - 1
      do i = 1, big
        block(i) = dble(mod(i * 13 + k, 97))
      end do
      call MPI_Send(block, big, MPI_DOUBLE_PRECISION, k, 5, MPI_COMM_WORLD IERR)
    end do
  else
    call MPI_Recv(block, big, MPI_DOUBLE_PRECISION, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
    do i = 1, big
      if (block(i) /= dble(mod(i * 13 + rank, 97))) bad = bad + 1
    end do
  end if
  left = mod(rank + nprocs - 1, nprocs)
  right = mod(rank + 1, nprocs)
  total = 0
  do it = 1, rounds
    do i = 1, 8
      sa(i) = dble(rank * 1000 + it * 10 + i)
    end do
    do i = 1, n
      sb(i) = dble(mod(rank * 7 + it * 3 + i, 1009))
    end do
    ra = -1
    rb = -1
    call MPI_Irecv(ra, 8, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, req(1) IERR)
    call MPI_Irecv(rb, n, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, req(2) IERR)
    call MPI_Isend(sa, 8, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, req(3) IERR)
    call MPI_Isend(sb, n, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, req(4) IERR)
    select case (mod(it, 3))
    case (0)
      if (mod(it, 6) == 0) then
        do k = 1, 2
          SRCS(sts, k) = -7
          TAGS(sts, k) = -7
        end do
        call MPI_Waitall(4, req, sts IERR)
        do k = 1, 2
          if (SRCS(sts, k) /= left .or. TAGS(sts, k) /= k) bad = bad + 1
        end do
      else
        call MPI_Waitall(4, req, MPI_STATUSES_IGNORE IERR)
      end if
    case (1)
      do k = 1, 4
        SRC(status) = -7
        TAG(status) = -7
        call MPI_Wait(req(k), status IERR)
        if (k <= 2) then
          call MPI_Get_count(status, MPI_DOUBLE_PRECISION, cnt IERR)
          if (SRC(status) /= left .or. TAG(status) /= k .or. cnt /= merge(8, n, k == 1)) &
            bad = bad + 1
        end if
      end do
    case default
      do k = 1, 4
        done = .false.
        do while (.not. done)
          call MPI_Test(req(k), done, MPI_STATUS_IGNORE IERR)
        end do
      end do
    end select
    do i = 1, 8
      if (ra(i) /= dble(left * 1000 + it * 10 + i)) bad = bad + 1
    end do
    do i = 1, n
      if (rb(i) /= dble(mod(left * 7 + it * 3 + i, 1009))) bad = bad + 1
    end do
    total = total + sum(ra) + sum(rb)
  end do
  call MPI_Get_address(sa, addr(1) IERR)
  call MPI_Type_create_hindexed(1, (/ 8 /), addr, MPI_DOUBLE_PRECISION, absa IERR)
  call MPI_Type_commit(absa IERR)
  call MPI_Get_address(ra, addr(1) IERR)
  call MPI_Type_create_hindexed(1, (/ 8 /), addr, MPI_DOUBLE_PRECISION, absb IERR)
  call MPI_Type_commit(absb IERR)
  do it = 1, 3
    do i = 1, 8
      sa(i) = dble(rank * 100 + it * 10 + i)
    end do
    ra = -1
    call MPI_Irecv(MPI_BOTTOM, 1, absb, left, 4, MPI_COMM_WORLD, req(1) IERR)
    call MPI_Isend(MPI_BOTTOM, 1, absa, right, 4, MPI_COMM_WORLD, req(2) IERR)
    call MPI_Waitall(2, req, MPI_STATUSES_IGNORE IERR)
    call MPI_Get_address(ra, addr(1) IERR)
    do i = 1, 8
      if (ra(i) /= dble(left * 100 + it * 10 + i)) bad = bad + 1
    end do
    total = total + sum(ra)
  end do
  call MPI_Type_free(absa IERR)
  call MPI_Type_free(absb IERR)
  do i = 1, big
    block2(i) = dble(mod(i * 7 + rank, 89))
    block(i) = -1
  end do
  call MPI_Irecv(block, big, MPI_DOUBLE_PRECISION, left, 6, MPI_COMM_WORLD, req(1) IERR)
  call MPI_Isend(block2, big, MPI_DOUBLE_PRECISION, right, 6, MPI_COMM_WORLD, req(2) IERR)
  call MPI_Waitall(2, req, MPI_STATUSES_IGNORE IERR)
  do i = 1, big
    if (block(i) /= dble(mod(i * 7 + left, 89))) bad = bad + 1
  end do
  block = -1
  call MPI_Irecv(block, big, MPI_DOUBLE_PRECISION, left, 8, MPI_COMM_WORLD, req(1) IERR)
  call MPI_Isend(block2, big, MPI_DOUBLE_PRECISION, right, 8, MPI_COMM_WORLD, req(2) IERR)
  do k = 1, 2
    call MPI_Waitany(2, req, i, MPI_STATUS_IGNORE IERR)
  end do
  do i = 1, big
    if (block(i) /= dble(mod(i * 7 + left, 89))) bad = bad + 1
  end do
  do it = 1, 8
    if ((rank == 0) .eqv. (it <= 4)) then
      do i = 1, big
        block2(i) = dble(mod(i * 5 + it * 11 + rank, 83))
      end do
      do k = 0, nprocs - 1
        if (k /= rank .and. (rank == 0 .or. k == 0)) &
          call MPI_Send(block2, big, MPI_DOUBLE_PRECISION, k, 7, MPI_COMM_WORLD IERR)
      end do
    else
      do k = 0, nprocs - 1
        if (k /= rank .and. (rank == 0 .or. k == 0)) then
          call MPI_Recv(block, big, MPI_DOUBLE_PRECISION, k, 7, MPI_COMM_WORLD, &
                        MPI_STATUS_IGNORE IERR)
          do i = 1, big
            if (block(i) /= dble(mod(i * 5 + it * 11 + k, 83))) bad = bad + 1
          end do
          total = total + block(big)
        end if
      end do
    end if
  end do
  write (path, '(a,a,i0,a)') trim(outdir), '/rank-', rank, '.txt'
  open (unit=10, file=path, status='replace', action='write')
  write (10, '(a,i0,a,i0)') 'rank ', rank, ' rounds ', rounds
  write (10, '(a,f20.1)') 'total ', total
  write (10, '(a,i0)') 'wrong ', bad
  close (10)
  call MPI_Finalize(IERR_ONLY)
  if (bad /= 0) then
    print '(a,i0,a,i0)', 'own: rank ', rank, ' wrong values: ', bad
    stop 1
  end if
end program own
