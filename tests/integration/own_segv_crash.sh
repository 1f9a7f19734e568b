#!/bin/bash
# own_segv_crash.sh UNBLOCK OWN_SEGV — a fault nobody handles ends the process with
# SIGSEGV, with and without unblock (a singleton run: the shell sees 128 + 11).
set -euo pipefail
unblock=$1 prog=$2
ulimit -c 0
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
a=0 b=0
"$prog" "$d" crash 2>/dev/null || a=$?
"$unblock" "$prog" "$d" crash 2>/dev/null || b=$?
echo "plain $a unblock $b"
[ "$a" = 139 ] && [ "$b" = 139 ]
