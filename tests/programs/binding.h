! binding.h — for the Fortran test programs built for three bindings: mpif.h
! (default), "use mpi" (-DUSE_MPI_MODULE) and "use mpi_f08" (-DUSE_MPI_F08, where
! ierror is left out).  Calls end with IERR (", ierr" or nothing); a call whose
! only argument is ierror takes IERR_ONLY.
#ifdef USE_MPI_F08
#define IERR
#define IERR_ONLY
#else
#define IERR , ierr
#define IERR_ONLY ierr
#endif
