! selfquick.F90 — selfquick.c through the mpif.h binding: N blocking sends of
! 4 KiB to itself, each received at once into a static array, both at sites
! that take the quick path (the send's passes once explored; the receive is
! refused for its memory, static data never protected).  Open MPI's self
! transport sends 4 KiB by rendezvous, which a blocking send to itself never
! ends: its eager limit is raised before MPI_Init.  usage: selfquick N
program selfquick
  use iso_c_binding, only: c_int, c_char, c_null_char
  implicit none
  include 'mpif.h'
  interface
    integer(c_int) function setenv(name, value, overwrite) bind(C, name='setenv')
      import :: c_int, c_char
      character(kind=c_char), dimension(*) :: name, value
      integer(c_int), value :: overwrite
    end function setenv
  end interface
  integer :: ierr, me, n, i, rc
  character(len=32) :: arg
  double precision :: a(512), b(512), total, want
  rc = setenv('OMPI_MCA_btl_self_eager_limit' // c_null_char, '65536' // c_null_char, 0_c_int)
  call MPI_Init(ierr)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  total = 0
  a = 0
  do i = 0, n - 1
    a(1) = i
    a(512) = 2 * i
    call MPI_Send(a, 512, MPI_DOUBLE_PRECISION, me, 7, MPI_COMM_WORLD, ierr)
    call MPI_Recv(b, 512, MPI_DOUBLE_PRECISION, me, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    total = total + b(1) + b(512)
  end do
  want = 3 * dble(n) * dble(n - 1) / 2
  if (total == want) then
    print '(a,i0,a)', 'ok: ', n, ' round trips'
  else
    print '(a)', 'MISMATCH'
  end if
  call MPI_Finalize(ierr)
  if (total /= want) stop 1
end program selfquick
