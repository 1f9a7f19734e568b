#!/bin/sh
# An MPI program ended by a signal (or exit()) in the middle of its merged small
# writes or MPI-IO writes (tests/programs/mpisigend.c), ROUNDS times under
# unblock: after each run every rank's file must hold every record whose write
# returned, then its handler's line if it ran, and nothing else; a run that has
# not ended in 60 s is a hang.  (The plain program needs no run: each of its
# records is in the file when its write returns.)  The launcher's exit status is
# not looked at: ranks end by signals, _exit or exit, without MPI_Finalize.
#
# usage: mpi_sigend.sh UNBLOCK LAUNCHER PROGRAM NP MODE ROUNDS
#        (MODE: handler, term, mpiio-multiple, mpiio-funneled, mpiio-exit)
set -u
unblock=$1 launch=$2 prog=$3 np=$4 mode=$5 rounds=$6
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
. "$(dirname "$0")/launch.sh"
mpi_launcher "$launch" "$np"
wrong=0 hung=0
i=0
while [ $i -lt "$rounds" ]; do
    rm -f "$d"/mpisigend.*
    timeout -k 10 60 $run "$unblock" --no-profile "$prog" "$d" "$mode" >"$d/out" 2>&1
    if [ $? -eq 124 ]; then
        echo "round $i: no end in 60 s"
        hung=$((hung + 1))
    elif ! "$prog" "$d" check "$np" >"$d/check"; then
        echo "round $i:"; cat "$d/check"
        wrong=$((wrong + 1))
    fi
    i=$((i + 1))
done
echo "mpisigend $mode (ranks: $np): $rounds rounds, $wrong with a file wrong, $hung hung"
[ $wrong -eq 0 ] && [ $hung -eq 0 ]
