! mpiiowrites.f90 — mpiiowrites.c from Fortran (`use mpi_f08`): N independent
! MPI_File_write_at of one 8-byte integer, each continuing the last, into
! mpiiowrites.dat in DIR (default: the current directory), then the file read
! back and checked: what a write MPI-IO write-behind takes from Fortran costs
! (tests/integration/fastpath_count.py counts its instructions), and that a
! predefined type first seen from Fortran is taken (*.mpiio-fortran-learn.np1).
! usage: mpiiowrites_f08 N [DIR]   (prints "ok" when the file holds what was written)
program mpiiowrites_f08
    use mpi_f08
    implicit none
    integer :: n, i, bad
    integer(8) :: v
    integer(8), allocatable :: back(:)
    character(len=32) :: arg
    character(len=4096) :: dir
    type(MPI_File) :: fh

    call MPI_Init()
    n = 1000
    if (command_argument_count() > 0) then
        call get_command_argument(1, arg)
        read (arg, *) n
    end if
    dir = '.'
    if (command_argument_count() > 1) call get_command_argument(2, dir)
    call MPI_File_open(MPI_COMM_SELF, trim(dir) // '/mpiiowrites.dat', &
                       ior(MPI_MODE_CREATE, MPI_MODE_RDWR), MPI_INFO_NULL, fh)
    do i = 0, n - 1
        v = 3_8 * i + 1
        call MPI_File_write_at(fh, int(i, MPI_OFFSET_KIND) * 8, v, 1, MPI_INTEGER8, &
                               MPI_STATUS_IGNORE)
    end do
    allocate (back(n))
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, n, MPI_INTEGER8, MPI_STATUS_IGNORE)
    bad = 0
    do i = 0, n - 1
        if (back(i + 1) /= 3_8 * i + 1) bad = bad + 1
    end do
    call MPI_File_close(fh)
    if (bad == 0) then
        print '(a,i0,a)', 'ok: ', n, ' writes, 0 wrong'
    else
        print '(a,i0,a,i0,a)', 'MISMATCH: ', n, ' writes, ', bad, ' wrong'
    end if
    deallocate (back)
    call MPI_Finalize()
    if (bad /= 0) stop 1
end program mpiiowrites_f08
