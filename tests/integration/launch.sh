# launch.sh — sourced (POSIX sh) by the integration scripts that start MPI jobs
# themselves.
#
# mpi_launcher IMPL NP: sets `run` to the launcher of IMPL (openmpi or mpich) for
# NP ranks, words to be split: `$run PROGRAM ARGS` (none has a space).  Open MPI
# may run more ranks than cores and as root (the CI runs as root; the tests'
# environment says so too, this keeps a script run by hand alike).  An unknown
# family is an error, not a silent MPICH run.
mpi_launcher() {
    case $1 in
    openmpi) run="mpirun.openmpi --oversubscribe --allow-run-as-root -np $2" ;;
    mpich) run="mpirun.mpich -np $2" ;;
    *) echo "unknown MPI family '$1' (openmpi or mpich)" >&2; exit 2 ;;
    esac
}
