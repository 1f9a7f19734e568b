! mpiiosyncerr.F90 — the error of a write that fails only in MPI_FILE_SYNC's
! flush, from Fortran (mpif.h): each rank writes B bytes to a file of its own
! (MPI_COMM_SELF) in 1 KiB MPI_FILE_WRITE_AT calls, then MPI_FILE_SYNC and
! MPI_FILE_CLOSE, and writes DIR/result-RANK.txt: the call that returned the
! first error ("write", "sync", "close", or "none") and its class.  On a file
! system too small for the ranks' bytes (tests/integration/mpiio_enospc.sh, case syncerr)
! MPI fails in a write, or says nothing (OMPIO); under unblock, with blocks
! larger than B, nothing is written before the sync, whose flush fails there.
! MODE failcoll (B unused): the C program mpiio.c's case failcoll from
! Fortran, on FSDIR/failcoll.dat opened on MPI_COMM_WORLD: each rank writes
! 32 cells of 4 KiB, interleaved; rank 0 seeks to the end, asks the size until
! it returns no error, writes its first cell again and seeks again; then a
! collective write, the size and the close (tests/integration/mpiio_failcoll.sh:
! every write of rank 0 fails under a test hook).
! usage: mpiiosyncerr OUTDIR FSDIR B [MODE]
program mpiiosyncerr
  implicit none
  include 'mpif.h'
  integer :: fh, status(MPI_STATUS_SIZE), ierr, e, rank, i, n, cls, np
  integer(kind=MPI_OFFSET_KIND) :: off, size
  integer(kind=8) :: b
  character(len=4096) :: outdir, fsdir, path
  character(len=32) :: arg, where, mode
  character(len=1024) :: buf
  character(len=4096) :: cell
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, np, ierr)
  call get_command_argument(1, outdir)
  call get_command_argument(2, fsdir)
  call get_command_argument(3, arg)
  call get_command_argument(4, mode)
  read (arg, *) b
  where = 'none'
  cls = 0
  if (mode == 'failcoll') then
    call MPI_File_open(MPI_COMM_WORLD, trim(fsdir) // '/failcoll.dat', &
                       MPI_MODE_CREATE + MPI_MODE_RDWR, MPI_INFO_NULL, fh, ierr)
    if (ierr /= MPI_SUCCESS) stop 2
    do i = rank, 32 * np - 1, np
      cell = repeat(achar(97 + mod(i, 26)), 4096)
      off = int(i, MPI_OFFSET_KIND) * 4096
      call MPI_File_write_at(fh, off, cell, 4096, MPI_BYTE, status, e)
      call note(e, 'write')
    end do
    if (rank == 0) then
      call MPI_File_seek(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_END, e)
      call note(e, 'seek')
      do i = 1, 4
        call MPI_File_get_size(fh, size, e)
        call note(e, 'get_size')
        if (e == MPI_SUCCESS) exit
      end do
      cell = repeat('a', 4096)
      call MPI_File_write_at(fh, 0_MPI_OFFSET_KIND, cell, 4096, MPI_BYTE, status, e)
      call note(e, 'rewrite')
      call MPI_File_seek(fh, 0_MPI_OFFSET_KIND, MPI_SEEK_END, e)
      call note(e, 'seek')
    end if
    off = int(32 * np + rank, MPI_OFFSET_KIND) * 8
    call MPI_File_write_at_all(fh, off, cell, 8, MPI_BYTE, status, e)
    call note(e, 'write_at_all')
    call MPI_File_get_size(fh, size, e)
    call note(e, 'get_size')
    call MPI_File_close(fh, e)
    call note(e, 'close')
    write (path, '(A,A,I0,A)') trim(outdir), '/result-', rank, '.txt'
    open (unit=10, file=path, status='replace', action='write')
    if (cls == MPI_ERR_IO) then
      write (10, '(A,A,A,A)') 'failcoll: ', trim(where), ' ', 'MPI_ERR_IO'
    else if (cls /= 0) then
      write (10, '(A,A,A,A)') 'failcoll: ', trim(where), ' ', 'other'
    else
      write (10, '(A,A,A,A)') 'failcoll: ', trim(where), ' ', 'none'
    end if
    close (10)
    call MPI_Finalize(ierr)
    stop
  end if
  write (path, '(A,A,I0,A)') trim(fsdir), '/syncerr-', rank, '.dat'
  call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE + MPI_MODE_WRONLY, &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) stop 2
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
contains
  subroutine note(e, what)
    integer, intent(in) :: e
    character(len=*), intent(in) :: what
    integer :: ie
    if (e /= MPI_SUCCESS .and. where == 'none') then
      where = what
      call MPI_Error_class(e, cls, ie)
    end if
  end subroutine note
end program mpiiosyncerr
