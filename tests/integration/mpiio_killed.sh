#!/bin/sh
# MPI-IO write-behind and SIGTERM: every rank writes 20000 interleaved 40-byte
# cells, meets the others at a barrier, pauses 0.3 s and sends itself SIGTERM.
# Without unblock the cells are in the file (each call wrote them); with it,
# each rank's fatal drain writes what it holds (its own pieces, the blocks it
# owns, what waits to be sent): the file must be the same, and both runs end by
# the signal.  (MPICH's launcher ends the other ranks with SIGKILL as soon as
# one dies, which no drain survives: there one rank; docs/mpiio.md.)  CASE
# aborted ends in MPI_Abort(MPI_COMM_WORLD, 3) instead, which drains first;
# exitnow in _exit(0), quickexit in quick_exit(0) and exec in an exec of
# /bin/true, without MPI_Finalize
# (Open MPI's launcher then exits 1, MPICH's 0: the same with and without
# unblock; the pause matters here too: a rank's pieces still on their way to
# an owner that ended first are lost, docs/mpiio.md).
#
# usage: mpiio_killed.sh UNBLOCK LAUNCHER PROGRAM NP STAGES [CASE]
set -u
unblock=$1 launch=$2 prog=$3 np=$4 stages=$5 case=${6:-killed}
a=$(mktemp -d) b=$(mktemp -d)
trap 'rm -rf "$a" "$b"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/launch.sh"
mpi_launcher "$launch" "$np"
timeout -k 10 120 $run "$prog" "$a" "$case" >/dev/null 2>&1
ra=$?
timeout -k 10 120 $run "$unblock" --mpiio_stages="$stages" "$prog" "$b" "$case" >/dev/null 2>&1
rb=$?
[ $ra -ne 124 ] || fail "the plain run did not end in time"
case $case in
killed|aborted) [ $ra -ne 0 ] || fail "the plain run did not end by the signal or abort" ;;
esac
# MPICH's launcher reports an MPI_Abort's code, or now and then 1 (its own,
# with or without unblock: 3 of 20 runs of the test before this was allowed,
# one of them plain): either is the abort's, in both runs.
# Its status after a rank's _exit(0) without MPI_Finalize is 0, or now and then
# 1 (2 of 30 plain runs).
same_end() {
    [ "$1" -eq "$2" ] && return 0
    [ "$launch" = openmpi ] && return 1
    case $case in
    aborted) ok="1 3" ;;
    exitnow|quickexit|exec) ok="0 1" ;;
    *) return 1 ;;
    esac
    case " $ok " in *" $1 "*) ;; *) return 1 ;; esac
    case " $ok " in *" $2 "*) ;; *) return 1 ;; esac
}
same_end $rb $ra || fail "exit status $rb under unblock, $ra without"
[ -s "$a/$case.dat" ] || fail "the plain run wrote nothing"
cmp "$a/$case.dat" "$b/$case.dat" || fail "the file differs"
echo "ok: $(wc -c <"$b/$case.dat") bytes, exit status $ra plain, $rb under unblock"
