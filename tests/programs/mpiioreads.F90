! mpiioreads.F90 — mpiioreads.c through a Fortran binding (binding.h: mpif.h by
! default, "use mpi_f08" with -DUSE_MPI_F08, ierror left out): a file of N
! 8-byte integers written at once and closed, opened again read-only, then N
! independent MPI_FILE_READ_AT of one, each continuing the last, every one
! checked: what a read that unblock leaves to MPI costs from Fortran
! (tests/integration/fastpath_count.py counts its instructions).
! usage: mpiioreads N [DIR]   (the file in DIR, default the current directory;
! prints "ok" when every value read is what was written; stops with 1 otherwise)
#include "binding.h"
program mpiioreads
#if defined(USE_MPI_F08)
  use mpi_f08
  implicit none
  type(MPI_File) :: fh
  type(MPI_Status) :: status
#else
  implicit none
  include 'mpif.h'
  integer :: fh, status(MPI_STATUS_SIZE)
#endif
  integer :: ierr, n, i, bad
  character(len=32) :: arg
  character(len=4096) :: dir, path
  integer(kind=8) :: v
  integer(kind=8), allocatable :: all(:)
  integer(kind=MPI_OFFSET_KIND) :: off
  call MPI_Init(IERR_ONLY)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  dir = '.'
  if (command_argument_count() > 1) call get_command_argument(2, dir)
  path = trim(dir) // '/mpiioreads_f.dat'
  allocate (all(n))
  do i = 1, n
    all(i) = int(i, 8) * 5 + 3
  end do
  call MPI_File_delete(path, MPI_INFO_NULL, ierr)
  call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE + MPI_MODE_WRONLY, &
                     MPI_INFO_NULL, fh IERR)
  off = 0
  call MPI_File_write_at(fh, off, all, n, MPI_INTEGER8, status IERR)
  call MPI_File_close(fh IERR)
  call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &
                     fh IERR)
  bad = 0
  do i = 1, n
    v = -1
    off = int(i - 1, MPI_OFFSET_KIND) * 8
    call MPI_File_read_at(fh, off, v, 1, MPI_INTEGER8, status IERR)
    if (v /= int(i, 8) * 5 + 3) bad = bad + 1
  end do
  call MPI_File_close(fh IERR)
  if (bad == 0) then
    print '(a,i0,a)', 'ok: ', n, ' reads, 0 wrong'
  else
    print '(a,i0,a,i0,a)', 'MISMATCH: ', n, ' reads, ', bad, ' wrong'
  end if
  deallocate (all)
  call MPI_Finalize(IERR_ONLY)
  if (bad /= 0) stop 1
end program mpiioreads
