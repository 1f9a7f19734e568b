#!/bin/sh
# MPI-IO write-behind on a file that MPI's I/O layer reaches and the kernel does
# not (MPICH's ROMIO "testfs:" driver, which stores nothing; PVFS2 and DAOS are
# the real ones): no two stages there, since owners could then write only
# through MPI, from the I/O thread, and ROMIO's lock is global (docs/mpiio.md).
# The mpiio program's nofd case: rank 0 writes into a block rank 1 would own and
# reads, while rank 1 opens another file collectively; with two stages that hung.
# Checks that the run ends, that the writes were taken, in one stage.
#
# usage: mpiio_nofd.sh UNBLOCK PROGRAM   (MPICH's mpiio test program)
set -u
unblock=$1 prog=$2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
timeout -k 10 120 mpirun.mpich -np 2 "$prog" "$d" nofd >/dev/null 2>&1 ||
    fail "the plain run failed"
grep -q 'nofd: done' "$d/result-0.txt" || fail "the plain run did not end its case"
rm -f "$d"/result-*.txt
timeout -k 10 120 mpirun.mpich -np 2 "$unblock" --no-profile --stats="$d" "$prog" "$d" nofd \
    >/dev/null 2>&1 || fail "the run under unblock failed or hung (exit $?)"
for r in 0 1; do
    grep -q 'nofd: done' "$d/result-$r.txt" || fail "rank $r did not end its case"
    grep -q '"mode": "one-stage"' "$d/unblock-$r.json" || fail "rank $r: not one stage"
done
grep -q '"writes": 2000,' "$d/unblock-0.json" || fail "rank 0's writes were not taken"
echo "ok: no POSIX path, one stage, 2000 writes taken, no hang"
