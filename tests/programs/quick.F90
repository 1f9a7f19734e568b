! quick.F90 — 2 ranks exchange from mpif.h, at sites the predictor runs as the
! original call once explored: N rounds of a 4 KiB MPI_SEND and MPI_RECV (the
! quick path of both), then N MPI_SENDRECV of 8 KiB, every other one with a
! status whose source and tag are checked; then N rounds of a 64-byte
! MPI_SEND and MPI_RECV and a 64-byte MPI_SENDRECV (the small path; on MPICH
! the front calls MPI's C function), every other receive with a status whose
! source, tag (and count) are checked, and every ierror; then N rounds of
! small MPI_SENDRECVs as a halo's edges and mixed codes make them (one half
! to or from MPI_PROC_NULL, its status checked; a send and a receive of
! different types); then 10 rounds of 64 bytes sent from and received into
! MPI_BOTTOM, by MPI_SEND and MPI_RECV and by MPI_SENDRECV.  Rank 0 prints the count of wrong rounds and
! a checksum of everything received (the same with and without unblock); a
! rank exits non-zero when a round's data, status or ierror is wrong.
! usage: quick N (2 ranks)
program quick
  implicit none
  include 'mpif.h'
  integer :: ierr, me, np, other, i, n, bad, cnt, st(MPI_STATUS_SIZE), absa, absb, to, from
  integer :: ia(4), ib(4)
  real :: ra(4), rb(4)
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  character(len=32) :: arg
  double precision :: a(1024), b(1024), sum, mine(2), all(2)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  if (np /= 2) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  other = 1 - me
  bad = 0
  sum = 0
  do i = 1, n
    if (me == 0) then
      a(1:512) = i
      call MPI_Send(a, 512, MPI_DOUBLE_PRECISION, other, 7, MPI_COMM_WORLD, ierr)
      call MPI_Recv(b, 512, MPI_DOUBLE_PRECISION, other, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (b(1) /= i + 1 .or. b(512) /= i + 1) bad = bad + 1
    else
      call MPI_Recv(b, 512, MPI_DOUBLE_PRECISION, other, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      a(1:512) = b(1:512) + 1
      call MPI_Send(a, 512, MPI_DOUBLE_PRECISION, other, 8, MPI_COMM_WORLD, ierr)
    end if
    sum = sum + b(1) + b(512)
  end do
  do i = 1, n
    a = i * 10 + me
    if (mod(i, 2) == 0) then
      call MPI_Sendrecv(a, 1024, MPI_DOUBLE_PRECISION, other, 9, b, 1024, MPI_DOUBLE_PRECISION, &
                        other, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Sendrecv(a, 1024, MPI_DOUBLE_PRECISION, other, 9, b, 1024, MPI_DOUBLE_PRECISION, &
                        other, 9, MPI_COMM_WORLD, st, ierr)
      if (st(MPI_SOURCE) /= other .or. st(MPI_TAG) /= 9) bad = bad + 1
    end if
    if (b(1) /= i * 10 + other .or. b(1024) /= i * 10 + other) bad = bad + 1
    sum = sum + b(1) + b(1024)
  end do
  do i = 1, n
    if (me == 0) then
      a(1:8) = i
      call MPI_Send(a, 8, MPI_DOUBLE_PRECISION, other, 10, MPI_COMM_WORLD, ierr)
      if (ierr /= MPI_SUCCESS) bad = bad + 1
      if (mod(i, 2) == 0) then
        call MPI_Recv(b, 8, MPI_DOUBLE_PRECISION, other, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      else
        st(MPI_SOURCE) = -7
        st(MPI_TAG) = -7
        call MPI_Recv(b, 8, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
        call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt, ierr)
        if (st(MPI_SOURCE) /= other .or. st(MPI_TAG) /= 11 .or. cnt /= 8) bad = bad + 1
      end if
      if (ierr /= MPI_SUCCESS) bad = bad + 1
    else
      call MPI_Recv(b, 8, MPI_DOUBLE_PRECISION, other, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (ierr /= MPI_SUCCESS) bad = bad + 1
      a(1:8) = b(1:8) + 1
      call MPI_Send(a, 8, MPI_DOUBLE_PRECISION, other, 11, MPI_COMM_WORLD, ierr)
      if (ierr /= MPI_SUCCESS) bad = bad + 1
    end if
    if (b(1) /= i + 1 - me .or. b(8) /= i + 1 - me) bad = bad + 1
    sum = sum + b(1) + b(8)
    a(1:8) = i * 100 + me
    if (mod(i, 2) == 0) then
      call MPI_Sendrecv(a, 8, MPI_DOUBLE_PRECISION, other, 12, b, 8, MPI_DOUBLE_PRECISION, &
                        other, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      st(MPI_SOURCE) = -7
      st(MPI_TAG) = -7
      call MPI_Sendrecv(a, 8, MPI_DOUBLE_PRECISION, other, 12, b, 8, MPI_DOUBLE_PRECISION, &
                        MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      if (st(MPI_SOURCE) /= other .or. st(MPI_TAG) /= 12) bad = bad + 1
    end if
    if (ierr /= MPI_SUCCESS) bad = bad + 1
    if (b(1) /= i * 100 + other .or. b(8) /= i * 100 + other) bad = bad + 1
    sum = sum + b(1) + b(8)
  end do
  ! a shift from rank 0 to rank 1: the other halves to and from MPI_PROC_NULL
  do i = 1, n
    a(1:8) = i * 3 + me
    b(1:8) = -1
    to = MPI_PROC_NULL
    from = MPI_PROC_NULL
    if (me == 0) to = other
    if (me == 1) from = other
    st(MPI_SOURCE) = -7
    st(MPI_TAG) = -7
    call MPI_Sendrecv(a, 8, MPI_DOUBLE_PRECISION, to, 15, b, 8, MPI_DOUBLE_PRECISION, &
                      from, 15, MPI_COMM_WORLD, st, ierr)
    if (ierr /= MPI_SUCCESS) bad = bad + 1
    call MPI_Get_count(st, MPI_DOUBLE_PRECISION, cnt, ierr)
    if (me == 1) then
      if (st(MPI_SOURCE) /= other .or. st(MPI_TAG) /= 15 .or. cnt /= 8) bad = bad + 1
      if (b(1) /= i * 3 .or. b(8) /= i * 3) bad = bad + 1
    else
      if (st(MPI_SOURCE) /= MPI_PROC_NULL .or. st(MPI_TAG) /= MPI_ANY_TAG .or. cnt /= 0) &
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
                        other, 17, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (rb(1) /= real(i * 7 + other) .or. rb(4) /= real(i * 7 + other)) bad = bad + 1
      sum = sum + rb(1)
    else
      call MPI_Sendrecv(ra, 4, MPI_REAL, other, 17, ib, 4, MPI_INTEGER, &
                        other, 16, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      if (ib(1) /= i * 5 + other .or. ib(4) /= i * 5 + other) bad = bad + 1
      sum = sum + ib(1)
    end if
    if (ierr /= MPI_SUCCESS) bad = bad + 1
  end do
  ! 64 bytes sent from and received into MPI_BOTTOM (types of absolute
  ! addresses): no front may take the sentinel's own address for the data
  call MPI_Get_address(a, addr(1), ierr)
  call MPI_Type_create_hindexed(1, (/ 8 /), addr, MPI_DOUBLE_PRECISION, absa, ierr)
  call MPI_Type_commit(absa, ierr)
  call MPI_Get_address(b, addr(1), ierr)
  call MPI_Type_create_hindexed(1, (/ 8 /), addr, MPI_DOUBLE_PRECISION, absb, ierr)
  call MPI_Type_commit(absb, ierr)
  do i = 1, 10
    a(1:8) = i * 1000 + me
    b(1:8) = -1
    ! (the compiler sees no use of a and b in these calls: they are handed
    ! to MPI before and after, as MPI-3's MPI_F_SYNC_REG would; that one
    ! crashed from MPICH's mpif.h here)
    call MPI_Get_address(a, addr(1), ierr)
    call MPI_Get_address(b, addr(1), ierr)
    if (me == 0) then
      call MPI_Send(MPI_BOTTOM, 1, absa, other, 13, MPI_COMM_WORLD, ierr)
      call MPI_Recv(MPI_BOTTOM, 1, absb, other, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Recv(MPI_BOTTOM, 1, absb, other, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      call MPI_Send(MPI_BOTTOM, 1, absa, other, 14, MPI_COMM_WORLD, ierr)
    end if
    call MPI_Get_address(b, addr(1), ierr)
    if (b(1) /= i * 1000 + other .or. b(8) /= i * 1000 + other) bad = bad + 1
    sum = sum + b(1) + b(8)
    a(1:8) = i * 2000 + me
    b(1:8) = -1
    call MPI_Get_address(a, addr(1), ierr)
    call MPI_Get_address(b, addr(1), ierr)
    call MPI_Sendrecv(MPI_BOTTOM, 1, absa, other, 18, MPI_BOTTOM, 1, absb, &
                      other, 18, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Get_address(b, addr(1), ierr)
    if (ierr /= MPI_SUCCESS) bad = bad + 1
    if (b(1) /= i * 2000 + other .or. b(8) /= i * 2000 + other) bad = bad + 1
    sum = sum + b(1) + b(8)
  end do
  call MPI_Type_free(absa, ierr)
  call MPI_Type_free(absb, ierr)
  ! (one line, from rank 0: two ranks' lines would come in either order)
  mine(1) = bad
  mine(2) = sum
  call MPI_Reduce(mine, all, 2, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (me == 0) print '(a,i0,a,f0.1)', 'wrong ', nint(all(1)), ' sum ', all(2)
  call MPI_Finalize(ierr)
  if (bad /= 0) stop 1
end program quick
