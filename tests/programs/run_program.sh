#!/bin/sh
# run_program.sh — a job script that starts the real program, as users write them.
# Records whether an MPI library was loaded into this shell (it must not be).
# usage: run_program.sh OUTDIR PROGRAM ARGS...
out=$1
shift
grep -c -E 'libmpi|libmpich' /proc/$$/maps > "$out/shell-mpi-$$.txt"
mv "$out/shell-mpi-$$.txt" "$out/shell-mpi-${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}.txt"
exec "$@"
