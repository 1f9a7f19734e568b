! smallw_f08.f90 — bench/smallw.c's pattern from Fortran (`use mpi_f08`): each
! rank writes B bytes of doubles, one MPI_File_write_at of one double each,
! against the same doubles written with a file view and one MPI_File_write_all.
!
!   --pattern segment      each rank writes its own segment of B bytes
!   --pattern interleaved  double i belongs to rank i mod np
!   --how independent      one MPI_File_write_at per double (status ignored)
!   --how view             a file view and one MPI_File_write_all
!
! The time counted is from MPI_File_open to the end of MPI_File_close (maximum
! over the ranks); rank 0 prints "time.total S", "time.calls S" (the writes
! alone), "time.open S", "time.close S", "bw.mbs" and the file's "bytes" and
! "checksum" (read back as a stream), so that every way can be checked to write
! the same bytes.
!
! usage: smallw_f08 OUTDIR [--pattern P] [--how H] [--b BYTES]
program smallw_f08
    use mpi_f08
    implicit none
    integer :: rank, np, i, nargs, u, ios
    integer(kind=MPI_OFFSET_KIND) :: off, disp
    integer(8) :: b, n, k, h, nbytes
    character(len=4096) :: dir, arg, val, path
    character(len=16) :: pattern, how
    double precision, allocatable :: a(:)
    double precision :: t0, t1, t2, t3, mine(4), maxt(4)
    type(MPI_File) :: fh
    type(MPI_Datatype) :: ft
    logical :: inter, view
    character(len=1) :: c

    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, np)
    nargs = command_argument_count()
    if (nargs < 1) then
        if (rank == 0) print '(a)', 'usage: smallw_f08 OUTDIR [--pattern segment|interleaved] ' // &
                                    '[--how independent|view] [--b BYTES]'
        call MPI_Abort(MPI_COMM_WORLD, 2)
    end if
    call get_command_argument(1, dir)
    pattern = 'segment'
    how = 'independent'
    b = 4194304
    do i = 2, nargs - 1, 2
        call get_command_argument(i, arg)
        call get_command_argument(i + 1, val)
        select case (trim(arg))
        case ('--pattern')
            pattern = val
        case ('--how')
            how = val
        case ('--b')
            read (val, *) b
        end select
    end do
    inter = trim(pattern) == 'interleaved'
    view = trim(how) == 'view'
    n = b / 8 ! doubles per rank
    allocate (a(n))
    do k = 1, n
        a(k) = dble(rank) * 1.0d9 + dble(k)
    end do
    path = trim(dir) // '/smallw_f08.dat'

    call MPI_Barrier(MPI_COMM_WORLD)
    t0 = MPI_Wtime()
    call MPI_File_open(MPI_COMM_WORLD, trim(path), ior(MPI_MODE_CREATE, MPI_MODE_WRONLY), &
                       MPI_INFO_NULL, fh)
    t1 = MPI_Wtime()
    if (view) then
        if (inter) then
            call MPI_Type_vector(int(n), 1, np, MPI_DOUBLE_PRECISION, ft)
            disp = int(rank, MPI_OFFSET_KIND) * 8
        else
            call MPI_Type_contiguous(int(n), MPI_DOUBLE_PRECISION, ft)
            disp = int(rank, MPI_OFFSET_KIND) * b
        end if
        call MPI_Type_commit(ft)
        call MPI_File_set_view(fh, disp, MPI_DOUBLE_PRECISION, ft, 'native', MPI_INFO_NULL)
        call MPI_File_write_all(fh, a, int(n), MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE)
        call MPI_Type_free(ft)
    else
        do k = 1, n
            if (inter) then
                off = ((k - 1) * np + rank) * 8
            else
                off = int(rank, MPI_OFFSET_KIND) * b + (k - 1) * 8
            end if
            call MPI_File_write_at(fh, off, a(k), 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE)
        end do
    end if
    t2 = MPI_Wtime()
    call MPI_File_close(fh)
    t3 = MPI_Wtime()
    mine = [t3 - t0, t2 - t1, t1 - t0, t3 - t2]
    call MPI_Reduce(mine, maxt, 4, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD)
    if (rank == 0) then
        ! an order-dependent sum of the file's bytes (no overflow: h < 2^31)
        h = 0
        nbytes = 0
        open (newunit=u, file=trim(path), access='stream', form='unformatted', &
              status='old', action='read', iostat=ios)
        if (ios == 0) then
            do
                read (u, iostat=ios) c
                if (ios /= 0) exit
                h = mod(h * 31 + ichar(c), 2147483647_8)
                nbytes = nbytes + 1
            end do
            close (u)
        end if
        print '(a,i0)', 'bytes ', nbytes
        print '(a,i0)', 'checksum ', h
        call put('time.total', maxt(1))
        call put('time.calls', maxt(2))
        call put('time.open', maxt(3))
        call put('time.close', maxt(4))
        call put('bw.mbs', dble(nbytes) / 1.0d6 / maxt(1))
    end if
    deallocate (a)
    call MPI_Finalize()
contains
    ! "KEY VALUE", as bench/smallw.c prints it (0.001234, not .001234)
    subroutine put(key, x)
        character(len=*), intent(in) :: key
        double precision, intent(in) :: x
        character(len=32) :: v
        write (v, '(f20.6)') x
        print '(a,1x,a)', key, trim(adjustl(v))
    end subroutine put
end program smallw_f08
