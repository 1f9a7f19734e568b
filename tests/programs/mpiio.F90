! mpiio.F90 — MPI-IO writes from Fortran, one program for the three bindings:
! mpif.h (default), "use mpi" (-DUSE_MPI_MODULE), "use mpi_f08" (-DUSE_MPI_F08).
! Each rank writes interleaved 40-byte cells (5 doubles) with MPI_File_write_at,
! MPI_File_write (individual pointer) and MPI_File_iwrite_at + MPI_Wait, checks the
! counts, reads its own first cell back (with MPI_File_iread_at, with the split
! collectives MPI_File_write_at_all_begin/_end and read_at_all_begin/_end, then
! after closing), and closes; every 50th cell goes from a
! strided section with MPI_STATUS_IGNORE (MPICH's mpi_f08 passes it as a descriptor
! that MPICH makes a type for: not taken, but the same bytes).  Then each rank
! writes its own segment of segment.dat one double at a time (write_at, status
! ignored: the wrapper's cursor takes them from Fortran too), every 512th read
! back at once through a read-only handle of its own.  Last, its block of
! 16 rows of a 2-D array through a subarray view set from Fortran, one double a
! call (even columns with MPI_File_seek and MPI_File_write, odd ones with
! MPI_File_write_at in the view's etypes), atomic mode on for columns 20 and 21
! (set from Fortran too).  Rank r writes OUTDIR/result-<r>.txt.  The files are
! compared byte for byte by the harness.
#include "binding.h"
program mpiio
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
  type(MPI_Status) :: status
  type(MPI_File) :: fh, fr
  type(MPI_Request) :: req
  type(MPI_Datatype) :: ftype
#elif defined(USE_MPI_MODULE)
  use mpi
  implicit none
  integer :: status(MPI_STATUS_SIZE), fh, fr, req, ftype
#else
  implicit none
  include 'mpif.h'
  integer :: status(MPI_STATUS_SIZE), fh, fr, req, ftype
#endif
  integer, parameter :: ncells = 20000, nseg = 8192
  integer :: ierr, rank, nprocs, i, j, got, bad, k
  integer :: gsizes(2), lsizes(2), starts(2)
  integer(kind=MPI_OFFSET_KIND) :: off
  double precision :: cell(5), back(5), wide(9), one(1)
  character(len=512) :: outdir, path

  call MPI_Init(IERR_ONLY)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank IERR)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs IERR)
  call get_command_argument(1, outdir)
  path = trim(outdir) // '/fortran.dat'
  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh IERR)
  bad = 0
  do i = rank, ncells - 1, nprocs
    cell = (/ (dble(i * 5 + got), got = 1, 5) /)
    off = int(i, MPI_OFFSET_KIND) * 40
    k = mod(i / nprocs, 3)
    if (mod(i / nprocs, 50) == 49) k = 3
    select case (k)
    case (0)
      call MPI_File_write_at(fh, off, cell, 5, MPI_DOUBLE_PRECISION, status IERR)
      call MPI_Get_count(status, MPI_DOUBLE_PRECISION, got IERR)
    case (1)
      call MPI_File_seek(fh, off, MPI_SEEK_SET IERR)
      call MPI_File_write(fh, cell, 40, MPI_BYTE, status IERR)
      call MPI_Get_count(status, MPI_BYTE, got IERR)
      got = got / 8
    case (3)
      wide = 0
      wide(1:9:2) = cell
      call MPI_File_write_at(fh, off, wide(1:9:2), 5, MPI_DOUBLE_PRECISION, &
                             MPI_STATUS_IGNORE IERR)
      got = 5
    case default
      call MPI_File_iwrite_at(fh, off, cell, 5, MPI_DOUBLE_PRECISION, req IERR)
      call MPI_Wait(req, status IERR)
      call MPI_Get_count(status, MPI_DOUBLE_PRECISION, got IERR)
    end select
    if (got /= 5) bad = bad + 1
  end do
  ! the size counts this rank's last cell at once
  call MPI_File_get_size(fh, off IERR)
  i = rank + ((ncells - 1 - rank) / nprocs) * nprocs
  if (off < int(i + 1, MPI_OFFSET_KIND) * 40) bad = bad + 1
  ! this rank's first cell, read back 20 times through MPI's own nonblocking read
  off = int(rank, MPI_OFFSET_KIND) * 40
  do i = 1, 20
    back = 0
    call MPI_File_iread_at(fh, off, back, 5, MPI_DOUBLE_PRECISION, req IERR)
    call MPI_Wait(req, status IERR)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, got IERR)
    if (got /= 5 .or. back(1) /= dble(rank * 5 + 1)) bad = bad + 1
  end do
  ! and 8 times rewritten and read back with split collectives
  cell = (/ (dble(rank * 5 + got), got = 1, 5) /)
  do i = 1, 8
    call MPI_File_write_at_all_begin(fh, off, cell, 5, MPI_DOUBLE_PRECISION IERR)
    call MPI_File_write_at_all_end(fh, cell, status IERR)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, got IERR)
    if (got /= 5) bad = bad + 1
    back = 0
    call MPI_File_read_at_all_begin(fh, off, back, 5, MPI_DOUBLE_PRECISION IERR)
    call MPI_File_read_at_all_end(fh, back, status IERR)
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, got IERR)
    if (got /= 5 .or. back(1) /= dble(rank * 5 + 1)) bad = bad + 1
  end do
  call MPI_File_close(fh IERR)
  ! read back this rank's first cell
  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, fh IERR)
  off = int(rank, MPI_OFFSET_KIND) * 40
  call MPI_File_read_at(fh, off, back, 5, MPI_DOUBLE_PRECISION, status IERR)
  call MPI_File_close(fh IERR)
  if (back(1) /= dble(rank * 5 + 1)) print *, 'MISMATCH: rank', rank, 'read', back(1)
  ! each rank's own segment, one double at a time
  path = trim(outdir) // '/segment.dat'
  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_WRONLY, &
                     MPI_INFO_NULL, fh IERR)
  ! (and every 512th double read back at once through a read-only handle of
  ! the rank's own, not followed: it sees the rank's writes through fh)
  call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, fr IERR)
  do i = 0, nseg - 1
    one(1) = dble(rank * nseg + i)
    off = (int(rank, MPI_OFFSET_KIND) * nseg + i) * 8
    call MPI_File_write_at(fh, off, one, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE IERR)
    if (mod(i, 512) == 511) then
      back(1) = -1
      call MPI_File_read_at(fr, off, back, 1, MPI_DOUBLE_PRECISION, status IERR)
      if (back(1) /= one(1)) then
        print *, 'MISMATCH: rank', rank, 'read', back(1), 'through a read-only handle'
        bad = bad + 1
      end if
    end if
  end do
  call MPI_File_close(fr IERR)
  call MPI_File_close(fh IERR)
  ! rows 16*rank .. 16*rank+15 of a (16*nprocs) x 64 array, through a view
  path = trim(outdir) // '/view.dat'
  gsizes = (/ 16 * nprocs, 64 /)
  lsizes = (/ 16, 64 /)
  starts = (/ 16 * rank, 0 /)
  call MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_FORTRAN, &
                                MPI_DOUBLE_PRECISION, ftype IERR)
  call MPI_Type_commit(ftype IERR)
  call MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE + MPI_MODE_WRONLY, &
                     MPI_INFO_NULL, fh IERR)
  off = 0
  call MPI_File_set_view(fh, off, MPI_DOUBLE_PRECISION, ftype, 'native', MPI_INFO_NULL IERR)
  do j = 0, 63
    if (j == 20) call MPI_File_set_atomicity(fh, .true. IERR)
    if (j == 22) call MPI_File_set_atomicity(fh, .false. IERR)
    if (mod(j, 2) == 0) then
      off = int(j * 16, MPI_OFFSET_KIND)
      call MPI_File_seek(fh, off, MPI_SEEK_SET IERR)
    end if
    do i = 0, 15
      one(1) = dble(16 * rank + i + j * 16 * nprocs)
      if (mod(j, 2) == 0) then
        call MPI_File_write(fh, one, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE IERR)
      else
        off = int(j * 16 + i, MPI_OFFSET_KIND)
        call MPI_File_write_at(fh, off, one, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE IERR)
      end if
    end do
  end do
  call MPI_File_close(fh IERR)
  call MPI_Type_free(ftype IERR)
  if (bad /= 0) print *, 'MISMATCH: rank', rank, 'counts', bad
  write (path, '(a, "/result-", i0, ".txt")') trim(outdir), rank
  open (10, file=path)
  write (10, '(a, i0, a)') 'fortran: ', (ncells - rank + nprocs - 1) / nprocs, ' cells'
  close (10)
  call MPI_Finalize(IERR_ONLY)
end program mpiio
