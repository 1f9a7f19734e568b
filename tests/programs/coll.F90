! coll.F90 — collectives and MPI-IO from Fortran beside a receive in flight, for
! the three bindings: mpif.h (default), "use mpi" (-DUSE_MPI_MODULE) and
! "use mpi_f08" (-DUSE_MPI_F08).  Two ranks; in each direction the receiver X
! takes 4 MiB + 512 B into the front of an allocatable array b (converted: it
! returns before the message, which the other rank sends 20 ms late), then:
!   A. MPI_ALLREDUCE, MPI_BCAST, MPI_GATHER, MPI_ALLREDUCE with MPI_IN_PLACE and
!      an MPI_BCAST to MPI_BOTTOM (absolute address) on the elements after the
!      message, on its last page (with -DLARGE_COUNT, MPICH's mpi_f08, also an
!      MPI_BCAST with an MPI_COUNT_KIND count: the _f08ts_large_ entry point),
!      then MPI_ALLGATHERV (displacements in reverse order) and
!      MPI_REDUCE_SCATTER;
!   C. MPI_GATHER into the first elements of a receive (the gather's data must
!      win: the program's order);
!   D. MPI_FILE_WRITE_AT of a receive, MPI_FILE_READ_AT of the file after it.
! With UNBLOCK_POOL=1, b is in the pool and these calls reach MPI on the runtime
! view (comm.viewed).  Each rank writes OUTDIR/rank-<r>.txt.
! usage: coll OUTDIR
#include "binding.h"
program coll
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
  type(MPI_Datatype) :: abs4
  type(MPI_File) :: fh
#elif defined(USE_MPI_MODULE)
  use mpi
  implicit none
  integer :: abs4, fh
#else
  implicit none
  include 'mpif.h'
  integer :: abs4, fh
#endif
  integer, parameter :: m = 1048576 + 128, extra = 16384
  integer :: ierr, rank, nprocs, peer, dir, i, root_x, root_o, k, r
  integer :: nbad = 0 ! lines that say MISMATCH (line.inc)
  integer :: in(4), pin(4), dummy(1), bl(1), vcnt(2), vdsp(2), rcnt(2), off
  integer(kind=MPI_ADDRESS_KIND) :: addr(1)
  integer(kind=MPI_OFFSET_KIND) :: zero
#ifdef LARGE_COUNT
  integer(kind=MPI_COUNT_KIND) :: eight = 8
#endif
  integer, allocatable :: b(:)
  logical :: x, ok
  character(len=512) :: outdir, path, fpath

  call MPI_Init(IERR_ONLY)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERR)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs IERR)
  call get_command_argument(1, outdir)
  if (len_trim(outdir) == 0) outdir = '.'
  peer = 1 - rank
  zero = 0
  write (path, '(A,A,I0,A)') trim(outdir), '/rank-', rank, '.txt'
  open (unit=10, file=trim(path), status='replace', action='write')
  write (10, '(A,I0,A,I0)') 'rank ', rank, ' of ', nprocs
  if (nprocs /= 2) then
    write (10, '(A)') 'needs 2 ranks'
    close (10)
    call MPI_Finalize(IERR_ONLY)
    stop
  end if
  allocate (b(m + extra))

  do dir = 0, 1
    x = rank == dir
    root_x = dir
    root_o = 1 - dir
    do i = 1, 4
      in(i) = rank * 10 + i + dir
      pin(i) = peer * 10 + i + dir
    end do

    ! A: collectives on the elements after a receive in flight (their inputs
    ! written before it: a touch of its last page would wait for it)
    call fill(b, m + extra, rank, 110)
    b(m + 1:m + 4) = in
    b(m + 25:m + 28) = in
    if (.not. x) then
      do i = 1, 8
        b(m + 8 + i) = 1000 * rank + i
      end do
      b(m + 33:m + 36) = 7 * rank + in
#ifdef LARGE_COUNT
      b(m + 41:m + 48) = 3 * rank + in(1)
#endif
    end if
    call MPI_Get_address(b(m + 33), addr(1) IERR)
    bl(1) = 4
    call MPI_Type_create_hindexed(1, bl, addr, MPI_INTEGER, abs4 IERR)
    call MPI_Type_commit(abs4 IERR)
    call exchange(110)
    call MPI_Allreduce(b(m + 1:m + 4), b(m + 5:m + 8), 4, MPI_INTEGER, MPI_SUM, &
                       MPI_COMM_WORLD IERR)
    call MPI_Bcast(b(m + 9:m + 16), 8, MPI_INTEGER, root_o, MPI_COMM_WORLD IERR)
    call MPI_Gather(b(m + 1:m + 4), 4, MPI_INTEGER, b(m + 17:m + 24), 4, MPI_INTEGER, &
                    root_x, MPI_COMM_WORLD IERR)
    call MPI_Allreduce(MPI_IN_PLACE, b(m + 25:m + 28), 4, MPI_INTEGER, MPI_MAX, &
                       MPI_COMM_WORLD IERR)
    call MPI_Bcast(MPI_BOTTOM, 1, abs4, root_o, MPI_COMM_WORLD IERR)
    call MPI_Type_free(abs4 IERR)
#ifdef LARGE_COUNT
    call MPI_Bcast(b(m + 41:m + 48), eight, MPI_INTEGER, root_o, MPI_COMM_WORLD IERR)
#else
    b(m + 41:m + 48) = 3 * root_o + merge(pin(1), in(1), x)
#endif
    ok = all(b(m + 41:m + 48) == 3 * root_o + merge(pin(1), in(1), x))
    vcnt = (/ 2, 3 /)
    vdsp = (/ 3, 0 /)
    call MPI_Allgatherv(b(m + 1:m + 4), vcnt(rank + 1), MPI_INTEGER, b(m + 49:m + 53), vcnt, &
                        vdsp, MPI_INTEGER, MPI_COMM_WORLD IERR)
    rcnt = (/ 1, 3 /)
    call MPI_Reduce_scatter(b(m + 1:m + 4), b(m + 54:m + 56), rcnt, MPI_INTEGER, MPI_SUM, &
                            MPI_COMM_WORLD IERR)
    off = merge(0, 1, rank == 0)
    do i = 1, rcnt(rank + 1)
      ok = ok .and. b(m + 53 + i) == in(off + i) + pin(off + i)
    end do
    do r = 0, 1
      do i = 1, vcnt(r + 1)
        ok = ok .and. b(m + 48 + vdsp(r + 1) + i) == r * 10 + i + dir
      end do
    end do
    do i = 1, 4
      ok = ok .and. b(m + 4 + i) == in(i) + pin(i) .and. &
           b(m + 24 + i) == max(in(i), pin(i))
      if (x) then
        ok = ok .and. b(m + 16 + 4 * root_x + i) == in(i) .and. &
             b(m + 16 + 4 * root_o + i) == pin(i) .and. b(m + 32 + i) == 7 * peer + pin(i)
      else
        ok = ok .and. b(m + 32 + i) == 7 * rank + in(i)
      end if
    end do
    do i = 1, 8
      if (x) then
        ok = ok .and. b(m + 8 + i) == 1000 * peer + i
      else
        ok = ok .and. b(m + 8 + i) == 1000 * rank + i
      end if
    end do
    call line('A: collectives beside a receive', dir, ok, int(sum(b(m + 1:m + 56)), 8))
    if (x) call check('A: the receive beside them', dir, b, 1, m, peer, 110)

    ! C: a gather into the first elements of a receive
    call fill(b, m + extra, rank, 113)
    call exchange(113)
    if (x) then
      call MPI_Gather(in, 4, MPI_INTEGER, b, 4, MPI_INTEGER, root_x, MPI_COMM_WORLD IERR)
      ok = .true.
      do i = 1, 4
        ok = ok .and. b(4 * root_x + i) == in(i) .and. b(4 * root_o + i) == pin(i)
      end do
      call line('C: a gather into a receive', dir, ok, int(sum(b(1:8)), 8))
      call check('C: the rest of that receive', dir, b, 9, m, peer, 113)
    else
      call MPI_Gather(in, 4, MPI_INTEGER, dummy, 0, MPI_INTEGER, root_x, MPI_COMM_WORLD IERR)
    end if

    ! D: MPI-IO of a receive and beside it
    call fill(b, m + extra, rank, 114)
    if (x) then
      write (fpath, '(A,A,I0,A,I0,A)') trim(outdir), '/coll-', rank, '-', dir, '.bin'
      call MPI_File_open(MPI_COMM_SELF, trim(fpath), MPI_MODE_CREATE + MPI_MODE_RDWR, &
                         MPI_INFO_NULL, fh IERR)
    end if
    call exchange(114)
    if (x) then
      call MPI_File_write_at(fh, zero, b, m, MPI_INTEGER, MPI_STATUS_IGNORE IERR)
      call MPI_File_read_at(fh, zero, b(m + 1:m + 8192), 8192, MPI_INTEGER, &
                            MPI_STATUS_IGNORE IERR)
      call MPI_File_close(fh IERR)
      call MPI_File_delete(trim(fpath), MPI_INFO_NULL IERR)
      call check('D: MPI_FILE_WRITE_AT of a receive', dir, b, 1, m, peer, 114)
      ok = .true.
      do k = 1, 8192
        ok = ok .and. b(m + k) == b(k)
      end do
      call line('D: read back beside it', dir, ok, int(sum(b(m + 1:m + 8192)), 8))
    end if
    call MPI_Barrier(MPI_COMM_WORLD IERR)
  end do

  close (10)
  deallocate (b)
  call MPI_Finalize(IERR_ONLY)
  if (nbad > 0) stop 1

contains

  ! X receives b(1:m) (converted: MPI_STATUS_IGNORE); the other rank sends 20 ms late.
  ! (X must not touch the last page of b until its next MPI call.)
  subroutine exchange(tag)
    integer, intent(in) :: tag
    double precision :: t0
    call MPI_Barrier(MPI_COMM_WORLD IERR) ! (X's checks before take longer than 20 ms)
    if (x) then
      call MPI_Recv(b, m, MPI_INTEGER, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE IERR)
    else
      t0 = MPI_Wtime()
      do while (MPI_Wtime() - t0 < 0.02d0)
      end do
      call MPI_Send(b, m, MPI_INTEGER, peer, tag, MPI_COMM_WORLD IERR)
    end if
  end subroutine exchange

  integer function val(src, msg, i)
    integer, intent(in) :: src, msg, i
    val = mod(i * 37 + src * 101 + msg * 7919, 100003)
  end function val

  subroutine fill(y, n, src, msg)
    integer, intent(in) :: n, src, msg
    integer, intent(out) :: y(n)
    integer :: j
    do j = 1, n
      y(j) = val(src, msg, j)
    end do
  end subroutine fill

#include "line.inc"

  ! Compares y(lo:hi) with message msg of rank src; writes the weighted sum.
  subroutine check(what, d, y, lo, hi, src, msg)
    character(len=*), intent(in) :: what
    integer, intent(in) :: d, lo, hi, src, msg
    integer, intent(in) :: y(:)
    integer :: j, bad
    integer(8) :: s
    bad = 0
    s = 0
    do j = lo, hi
      if (y(j) /= val(src, msg, j)) bad = bad + 1
      s = s + int(y(j), 8) * mod(j, 7)
    end do
    call line(what, d, bad == 0, s)
  end subroutine check

end program coll
