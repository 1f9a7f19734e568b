! quick_f08.f90 — calls from use mpi_f08 (on MPICH its descriptor forms, whose
! fast and quick paths call MPI's C function as MPICH's binding does): 2
! ranks, N rounds of a 4 KiB MPI_Send and MPI_Recv and N MPI_Sendrecv of 8 KiB
! (every other one with a status whose source, tag and count are checked, and
! ierror), at sites the predictor runs as the original call once explored
! (the quick path); then N rounds of a 64-byte MPI_Send and MPI_Recv (every
! other receive with a status whose source, tag and count are checked, every
! other call with ierror), a 64-byte MPI_Sendrecv (a status every other
! round), a shift from rank 0 to rank 1 (the other halves to and from
! MPI_PROC_NULL, the empty receive's status checked), a send-receive with
! halves of INTEGER and REAL; then 10 rounds from and into MPI_BOTTOM.  Rank 0
! prints the count of wrong rounds and a checksum (the same with and without
! unblock); a rank exits non-zero when a round's data, status or ierror is
! wrong.
! usage: quick_f08 N (2 ranks)
program quick_f08
  use mpi_f08
  implicit none
  integer :: ierr, me, np, other, i, n, bad, cnt, to, from
  integer :: ia(4), ib(4)
  real :: ra(4), rb(4)
  type(MPI_Status) :: st
  type(MPI_Datatype) :: absa, absb
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  character(len=32) :: arg
  double precision :: a(8), b(8), c(1024), d(1024), sum, mine(2), all(2)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  call MPI_Comm_size(MPI_COMM_WORLD, np)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  if (np /= 2) call MPI_Abort(MPI_COMM_WORLD, 2)
  other = 1 - me
  bad = 0
  sum = 0
  do i = 1, n
    if (me == 0) then
      c(1:512) = i
      call MPI_Send(c, 512, MPI_DOUBLE_PRECISION, other, 7, MPI_COMM_WORLD)
      call MPI_Recv(d, 512, MPI_DOUBLE_PRECISION, other, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      if (d(1) /= i + 1 .or. d(512) /= i + 1) bad = bad + 1
    else
      call MPI_Recv(d, 512, MPI_DOUBLE_PRECISION, other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      c(1:512) = d(1:512) + 1
      call MPI_Send(c, 512, MPI_DOUBLE_PRECISION, other, 8, MPI_COMM_WORLD)
    end if
    sum = sum + d(1) + d(512)
  end do
  do i = 1, n
    c = i * 10 + me
    if (mod(i, 2) == 0) then
      call MPI_Sendrecv(c, 1024, MPI_DOUBLE_PRECISION, other, 9, d, 1024, MPI_DOUBLE_PRECISION, &
                        other, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    else
      st%MPI_SOURCE = -7
      st%MPI_TAG = -7
      ierr = -1
      call MPI_Sendrecv(c, 1024, MPI_DOUBLE_PRECISION, other, 9, d, 1024, MPI_DOUBLE_PRECISION, &
                        MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      if (ierr /= MPI_SUCCESS) bad = bad + 1
      call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
      if (st%MPI_SOURCE /= other .or. st%MPI_TAG /= 9 .or. cnt /= 1024) bad = bad + 1
    end if
    if (d(1) /= i * 10 + other .or. d(1024) /= i * 10 + other) bad = bad + 1
    sum = sum + d(1) + d(1024)
  end do
  do i = 1, n
    if (me == 0) then
      a = i
      if (mod(i, 2) == 0) then
        call MPI_Send(a, 8, MPI_DOUBLE_PRECISION, other, 10, MPI_COMM_WORLD)
        call MPI_Recv(b, 8, MPI_DOUBLE_PRECISION, other, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      else
        ierr = -1
        call MPI_Send(a, 8, MPI_DOUBLE_PRECISION, other, 10, MPI_COMM_WORLD, ierr)
        if (ierr /= MPI_SUCCESS) bad = bad + 1
        st%MPI_SOURCE = -7
        st%MPI_TAG = -7
        ierr = -1
        call MPI_Recv(b, 8, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
        if (ierr /= MPI_SUCCESS) bad = bad + 1
        call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
        if (st%MPI_SOURCE /= other .or. st%MPI_TAG /= 11 .or. cnt /= 8) bad = bad + 1
      end if
    else
      call MPI_Recv(b, 8, MPI_DOUBLE_PRECISION, other, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      a = b + 1
      call MPI_Send(a, 8, MPI_DOUBLE_PRECISION, other, 11, MPI_COMM_WORLD)
    end if
    if (b(1) /= i + 1 - me .or. b(8) /= i + 1 - me) bad = bad + 1
    sum = sum + b(1) + b(8)
    a = i * 100 + me
    if (mod(i, 2) == 0) then
      call MPI_Sendrecv(a, 8, MPI_DOUBLE_PRECISION, other, 12, b, 8, MPI_DOUBLE_PRECISION, &
                        other, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    else
      st%MPI_SOURCE = -7
      st%MPI_TAG = -7
      ierr = -1
      call MPI_Sendrecv(a, 8, MPI_DOUBLE_PRECISION, other, 12, b, 8, MPI_DOUBLE_PRECISION, &
                        MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      if (ierr /= MPI_SUCCESS) bad = bad + 1
      call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
      if (st%MPI_SOURCE /= other .or. st%MPI_TAG /= 12 .or. cnt /= 8) bad = bad + 1
    end if
    if (b(1) /= i * 100 + other .or. b(8) /= i * 100 + other) bad = bad + 1
    sum = sum + b(1) + b(8)
    ! a shift from rank 0 to rank 1: the other halves to and from MPI_PROC_NULL
    a = i * 3 + me
    b = -1
    to = MPI_PROC_NULL
    from = MPI_PROC_NULL
    if (me == 0) to = other
    if (me == 1) from = other
    st%MPI_SOURCE = -7
    st%MPI_TAG = -7
    call MPI_Sendrecv(a, 8, MPI_DOUBLE_PRECISION, to, 15, b, 8, MPI_DOUBLE_PRECISION, &
                      from, 15, MPI_COMM_WORLD, st)
    call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt)
    if (me == 1) then
      if (st%MPI_SOURCE /= other .or. st%MPI_TAG /= 15 .or. cnt /= 8) bad = bad + 1
      if (b(1) /= i * 3 .or. b(8) /= i * 3) bad = bad + 1
    else
      if (st%MPI_SOURCE /= MPI_PROC_NULL .or. st%MPI_TAG /= MPI_ANY_TAG .or. cnt /= 0) &
        bad = bad + 1
      if (b(1) /= -1) bad = bad + 1
    end if
    sum = sum + b(1) + b(8)
    ! one half of INTEGER, the other of REAL
    ia = i * 5 + me
    ra = real(i * 7 + me)
    ib = -1
    rb = -1
    if (me == 0) then
      call MPI_Sendrecv(ia, 4, MPI_INTEGER, other, 16, rb, 4, MPI_REAL, &
                        other, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      if (rb(1) /= real(i * 7 + other) .or. rb(4) /= real(i * 7 + other)) bad = bad + 1
      sum = sum + rb(1)
    else
      call MPI_Sendrecv(ra, 4, MPI_REAL, other, 17, ib, 4, MPI_INTEGER, &
                        other, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
      if (ib(1) /= i * 5 + other .or. ib(4) /= i * 5 + other) bad = bad + 1
      sum = sum + ib(1)
    end if
  end do
  ! 64 bytes sent from and received into MPI_BOTTOM (types of absolute addresses)
  call MPI_Get_address(a, addr(1))
  call MPI_Type_create_hindexed(1, (/ 8 /), addr, MPI_DOUBLE_PRECISION, absa)
  call MPI_Type_commit(absa)
  call MPI_Get_address(b, addr(1))
  call MPI_Type_create_hindexed(1, (/ 8 /), addr, MPI_DOUBLE_PRECISION, absb)
  call MPI_Type_commit(absb)
  do i = 1, 10
    a = i * 1000 + me
    b = -1
    call MPI_Get_address(a, addr(1))
    call MPI_Get_address(b, addr(1))
    call MPI_Sendrecv(MPI_BOTTOM, 1, absa, other, 18, MPI_BOTTOM, 1, absb, &
                      other, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Get_address(b, addr(1))
    if (b(1) /= i * 1000 + other .or. b(8) /= i * 1000 + other) bad = bad + 1
    sum = sum + b(1) + b(8)
  end do
  call MPI_Type_free(absa)
  call MPI_Type_free(absb)
  mine(1) = bad
  mine(2) = sum
  call MPI_Reduce(mine, all, 2, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD)
  if (me == 0) print '(a,i0,a,f0.1)', 'wrong ', nint(all(1)), ' sum ', all(2)
  call MPI_Finalize()
  if (bad /= 0) stop 1
end program quick_f08
