#!/bin/bash
# sidecar_fallback.sh UNBLOCK WB — where the write-behind sidecar cannot start
# (UNBLOCK_TEST_NO_SIDECAR=1: as if no process could be made), write-behind goes
# on without it: the same files and output as plain, one line that says so, and
# io.sidecar_failed=1, io.sidecar=0 in the report.  And where it runs, a clean
# exit leaves it nothing to write and it is gone soon after the program; under
# a file size limit it starts all the same, with less shared memory.
set -euo pipefail
unblock=$1 wb=$2
a=$(mktemp -d) b=$(mktemp -d) c=$(mktemp -d)
trap 'rm -rf "$a" "$b" "$c"' EXIT
"$wb" "$a" small
UNBLOCK_TEST_NO_SIDECAR=1 "$unblock" --stats="$b/st" "$wb" "$b" small 2>"$b/err"
cat "$b/err"
cmp "$a/small.dat" "$b/small.dat" || { echo "FAIL: small.dat differs without the sidecar"; exit 1; }
cmp "$a/result.txt" "$b/result.txt" || { echo "FAIL: result.txt differs"; exit 1; }
[ "$(grep -c 'without its sidecar' "$b/err")" = 1 ] ||
    { echo "FAIL: not exactly one line saying the sidecar could not start"; exit 1; }
grep -q '"sidecar": 0,' "$b"/st/*.json && grep -q '"sidecar_failed": 1,' "$b"/st/*.json ||
    { echo "FAIL: the report does not say the sidecar failed"; exit 1; }
# With it: nothing on stderr, io.sidecar=1, and no sidecar left behind.
"$unblock" --stats="$c/st" "$wb" "$c" small 2>"$c/err"
[ ! -s "$c/err" ] || { cat "$c/err"; echo "FAIL: unblock printed something unasked"; exit 1; }
cmp "$a/small.dat" "$c/small.dat" || { echo "FAIL: small.dat differs with the sidecar"; exit 1; }
grep -q '"sidecar": 1,' "$c"/st/*.json || { echo "FAIL: the sidecar did not run"; exit 1; }
for _ in $(seq 100); do
    left=$(for p in /proc/[0-9]*; do
        [ "$(cat "$p/comm" 2>/dev/null)" = unblock-sidecar ] &&
            ls -l "$p/fd" 2>/dev/null | grep -q "$c/small.dat" && echo "$p"; done || true)
    [ -z "$left" ] && break
    sleep 0.05
done
[ -z "$left" ] || { echo "FAIL: a sidecar still holds the file 5 s after the program: $left"; exit 1; }
# A file size limit the program lives under (20 MiB): the shared memory stays
# below it (growing it past would raise SIGXFSZ in the program).
d=$(mktemp -d)
trap 'rm -rf "$a" "$b" "$c" "$d"' EXIT
ed=0
(ulimit -f 20480 && exec "$unblock" --stats="$d/st" "$wb" "$d" small) 2>"$d/err" || ed=$?
cat "$d/err"
[ "$ed" = 0 ] || { echo "FAIL: under a 20 MiB RLIMIT_FSIZE unblock exited $ed"; exit 1; }
cmp "$a/small.dat" "$d/small.dat" || { echo "FAIL: small.dat differs under the limit"; exit 1; }
grep -q '"sidecar": 1,' "$d"/st/*.json || { echo "FAIL: no sidecar under a 20 MiB limit"; exit 1; }
echo "ok"
