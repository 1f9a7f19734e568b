! mpiiosyncerr.F90 — the error of a write that fails only in MPI_FILE_SYNC's
! flush, from Fortran (mpif.h): each rank writes B bytes to a file of its own
! (MPI_COMM_SELF) in 1 KiB MPI_FILE_WRITE_AT calls, then MPI_FILE_SYNC and
! MPI_FILE_CLOSE, and writes DIR/result-RANK.txt: the call that returned the
! first error ("write", "sync", "close", or "none") and its class.  On a file
! system too small for the ranks' bytes (tests/integration/mpiio_enospc.sh, case syncerr)
! MPI fails in a write, or says nothing (OMPIO); under unblock, with blocks
! larger than B, nothing is written before the sync, whose flush fails there.
! usage: mpiiosyncerr OUTDIR FSDIR B
program mpiiosyncerr
  implicit none
  include 'mpif.h'
  integer :: fh, status(MPI_STATUS_SIZE), ierr, e, rank, i, n, cls
  integer(kind=MPI_OFFSET_KIND) :: off
  integer(kind=8) :: b
  character(len=4096) :: outdir, fsdir, path
  character(len=32) :: arg, where
  character(len=1024) :: buf
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, outdir)
  call get_command_argument(2, fsdir)
  call get_command_argument(3, arg)
  read (arg, *) b
  write (path, '(A,A,I0,A)') trim(fsdir), '/syncerr-', rank, '.dat'
  call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE + MPI_MODE_WRONLY, &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) stop 2
  where = 'none'
  cls = 0
  buf = repeat('x', 1024)
  n = int(b / 1024)
  do i = 0, n - 1
    off = int(i, MPI_OFFSET_KIND) * 1024
    call MPI_File_write_at(fh, off, buf, 1024, MPI_BYTE, status, e)
    if (e /= MPI_SUCCESS .and. where == 'none') then
      where = 'write'
      call MPI_Error_class(e, cls, ierr)
    end if
  end do
  call MPI_File_sync(fh, e)
  if (e /= MPI_SUCCESS .and. where == 'none') then
    where = 'sync'
    call MPI_Error_class(e, cls, ierr)
  end if
  call MPI_File_close(fh, e)
  if (e /= MPI_SUCCESS .and. where == 'none') then
    where = 'close'
    call MPI_Error_class(e, cls, ierr)
  end if
  write (path, '(A,A,I0,A)') trim(outdir), '/result-', rank, '.txt'
  open (unit=10, file=path, status='replace', action='write')
  write (10, '(A,A,I0)') trim(where), ' ', cls
  close (10)
  call MPI_Finalize(ierr)
end program mpiiosyncerr
