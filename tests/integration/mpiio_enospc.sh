#!/bin/sh
# MPI-IO write-behind on a full file system: a 2 MiB tmpfs, 2 ranks writing
# 4 MiB each in 64 KiB MPI_File_write_at calls.  The error class each rank sees
# (the first of the writes, sync and close) must be the one it sees without
# unblock; space is reserved ahead as the POSIX write-behind does, so the call
# that runs out is made as MPI's own.  Needs root to mount (else skipped, 77).
#
# usage: mpiio_enospc.sh UNBLOCK LAUNCHER PROGRAM   (LAUNCHER: openmpi | mpich)
set -u
unblock=$1 launch=$2 prog=$3
m=$(mktemp -d) a=$(mktemp -d) b=$(mktemp -d)
cleanup() {
    umount "$m" 2>/dev/null
    rm -rf "$m" "$a" "$b"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
if ! mount -t tmpfs -o size=2m none "$m" 2>/dev/null; then
    echo "skipped: cannot mount a tmpfs here"
    exit 77
fi
case $launch in
openmpi) run="mpirun.openmpi --oversubscribe --allow-run-as-root -np 2" ;;
*) run="mpirun.mpich -np 2" ;;
esac
# (Open MPI's OMPIO prints a line per failed write on stderr: not compared.)
timeout -k 10 120 $run "$prog" "$a" enospc "$m" >/dev/null 2>&1 || fail "the plain run failed"
timeout -k 10 120 $run "$unblock" --stats="$b" "$prog" "$b" enospc "$m" >/dev/null 2>&1 ||
    fail "the run under unblock failed"
cat "$a"/result-*.txt
for r in 0 1; do
    cmp "$a/result-$r.txt" "$b/result-$r.txt" || fail "rank $r saw another error class"
done
grep -q '"mode": "one-stage"' "$b/unblock-0.json" || fail "the writes were not taken"
[ -z "$(ls -A "$m")" ] || fail "files left on the file system"
echo "ok: $(cat "$b/result-0.txt")"
