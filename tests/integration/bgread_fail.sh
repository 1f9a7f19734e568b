#!/bin/bash
# bgread_fail.sh UNBLOCK RD — a background read that fails after read() returned
# (UNBLOCK_TEST_FAIL_READ=1): the thread that uses the data gets SIGBUS (exit 135)
# and one line names the read; the plain run exits 0.
#
# The read goes to the background only where the page cache does not hold the
# file (rd.c drops it with POSIX_FADV_DONTNEED after writing it); on a loaded
# machine it now and then still held all of it (io.reads_cached 1,
# io.reads_background 0: 5 of 30 runs beside two busy loops, the library before
# and after 2026-12-03 alike), and nothing was read in the background to fail.
# Such a run is made again, up to 5 times; a run that read in the background
# must end as above, and one of them must.
set -euo pipefail
unblock=$1 rd=$2
ulimit -c 0
a=$(mktemp -d) b=$(mktemp -d)
trap 'rm -rf "$a" "$b"' EXIT
ea=0
"$rd" "$a" fail || ea=$?
[ "$ea" = 0 ] || { echo "FAIL: the plain run exited $ea"; exit 1; }
for attempt in 1 2 3 4 5; do
    rm -rf "$b"/*
    eb=0
    UNBLOCK_TEST_FAIL_READ=1 UNBLOCK_READ_FAST_NS=0 "$unblock" --stats="$b/st" "$rd" "$b" fail \
        2>"$b/err" || eb=$?
    cat "$b/err"
    bg=$(python3 -c 'import json,glob,sys
f=glob.glob(sys.argv[1] + "/*.json")
print(json.load(open(f[0]))["io"]["reads_background"] if f else "none")' "$b/st")
    echo "attempt $attempt: exit $ea $eb, reads in the background: $bg"
    if [ "$bg" = 0 ] && [ "$eb" = 0 ]; then
        echo "note: the page cache held the file: nothing was read in the background"
        continue
    fi
    [ "$eb" = 135 ] || { echo "FAIL: exit status $eb, expected 135"; exit 1; }
    grep -q 'background read into .* failed after read() returned (Input/output error)' "$b/err" ||
        { echo "FAIL: the failed read was not reported"; exit 1; }
    exit 0
done
echo "FAIL: 5 runs and none read in the background"
exit 1
