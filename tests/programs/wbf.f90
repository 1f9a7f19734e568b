! wbf.f90 — Fortran output through libgfortran (which calls write()): formatted,
! unformatted sequential and stream files written with many small statements, then
! read back.  Files in OUTDIR, sums on stdout: the transparency harness compares
! both with and without unblock.   usage: wbf OUTDIR
program wbf
  implicit none
  character(len=4096) :: dir
  integer, parameter :: n = 20000
  integer :: i, j, ios
  integer(8) :: isum
  real(8) :: x, xsum

  call get_command_argument(1, dir)
  if (len_trim(dir) == 0) then
    write (0, '(a)') 'usage: wbf OUTDIR'
    stop 2
  end if

  open (10, file=trim(dir)//'/formatted.txt', status='replace', action='readwrite')
  do i = 1, n
    write (10, '(i8,1x,f14.4)') i, i * 0.5d0
  end do
  rewind (10)
  isum = 0
  xsum = 0
  do i = 1, n
    read (10, *) j, x
    isum = isum + j
    xsum = xsum + x
  end do
  close (10)
  print '(a,i0,1x,f0.2)', 'formatted: ', isum, xsum

  open (11, file=trim(dir)//'/unformatted.bin', form='unformatted', status='replace')
  do i = 1, n
    write (11) i, dble(i) / 3
  end do
  rewind (11)
  isum = 0
  xsum = 0
  do i = 1, n
    read (11) j, x
    isum = isum + j
    xsum = xsum + x
  end do
  close (11)
  print '(a,i0,1x,f0.4)', 'unformatted: ', isum, xsum

  open (12, file=trim(dir)//'/stream.bin', access='stream', form='unformatted', &
        status='replace')
  do i = 1, n
    write (12) i
  end do
  flush (12)
  isum = 0
  do i = 1, n
    read (12, pos=(i - 1) * 4 + 1, iostat=ios) j
    if (ios /= 0) exit
    isum = isum + j
  end do
  close (12)
  print '(a,i0)', 'stream: ', isum
end program wbf
