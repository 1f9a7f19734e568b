#!/bin/bash
# bgread_fail.sh UNBLOCK RD — a background read that fails after read() returned
# (UNBLOCK_TEST_FAIL_READ=1): the thread that uses the data gets SIGBUS (exit 135)
# and one line names the read; the plain run exits 0.
set -euo pipefail
unblock=$1 rd=$2
ulimit -c 0
a=$(mktemp -d) b=$(mktemp -d)
trap 'rm -rf "$a" "$b"' EXIT
ea=0 eb=0
"$rd" "$a" fail || ea=$?
UNBLOCK_TEST_FAIL_READ=1 UNBLOCK_READ_FAST_NS=0 "$unblock" --stats="$b/st" "$rd" "$b" fail \
    2>"$b/err" || eb=$?
cat "$b/err"
echo "exit $ea $eb"
[ "$ea" = 0 ] && [ "$eb" = 135 ] || { echo "FAIL: exit statuses $ea $eb, expected 0 135"; exit 1; }
grep -q 'background read into .* failed after read() returned (Input/output error)' "$b/err" ||
    { echo "FAIL: the failed read was not reported"; exit 1; }
