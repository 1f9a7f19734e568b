#!/bin/sh
# mpiio_quiet_mixed.sh UNBLOCK LAUNCHER PROGRAM — mpiio.c's `quiet` case on 3
# ranks given different UNBLOCK_MPIIO_QUIET (0, 8 and the default 4): the ranks
# must agree on when the file goes quiet (the smallest, 4, carried by the
# collective flush's reduction; 0 counts as never), or one makes a reduction
# the others do not and the run hangs.  Checked: no hang, every cell right, and
# 18 quiet collective flushes on every rank (as with 4 everywhere).
set -u
unblock=$1 launch=$2 prog=$3
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/launch.sh"
mpi_launcher "$launch" 1
u="$unblock --no-profile --stats=$d"
timeout -k 10 60 $run env UNBLOCK_MPIIO_QUIET=0 $u "$prog" "$d" quiet \
    : -np 1 env UNBLOCK_MPIIO_QUIET=8 $u "$prog" "$d" quiet \
    : -np 1 $u "$prog" "$d" quiet >"$d/out" 2>&1
rc=$?
[ $rc -eq 124 ] && fail "the run hung (the ranks decided apart)"
[ $rc -eq 0 ] || { cat "$d/out"; fail "the run failed ($rc)"; }
for r in 0 1 2; do
    grep -q "quiet: 0 cells" "$d/result-$r.txt" || fail "rank $r: cells read back wrong"
    grep -q '"flushes_quiet": 18,' "$d/unblock-$r.json" ||
        fail "rank $r: $(grep '"flushes_quiet"' "$d/unblock-$r.json")"
done
echo "ok"
