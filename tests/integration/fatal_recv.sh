#!/bin/bash
# fatal_recv.sh UNBLOCK FATALRECV IMPL MODE SOURCE — a truncated receive, errors
# fatal (tests/programs/fatalrecv.c), run without and with unblock on 2 ranks:
#   - both runs die, with the same non-zero exit status;
#   - without unblock, rank 1 never gets past its MPI_Recv;
#   - with unblock, stderr names the program's call: "unblock: rank 1: MPI_Recv at
#     SITE failed: ...", SITE is in the program, and (where addr2line reads the
#     program's debug information) SITE is the line of the truncated MPI_Recv in
#     SOURCE.
# Open MPI runs without its single-copy mechanism (CMA): Open MPI 4.1's
# single-copy get writes a truncated message whole, past the receive's count, which
# here lands beyond unblock's runtime buffer (a crash half the time) and in a plain
# run in the program's buffer, 2 MiB for that reason.
set -uo pipefail
unblock=$1 prog=$2 impl=$3 mode=$4 src=$5
. "$(dirname "$0")/launch.sh"
mpi_launcher "$impl" 2
read -ra launch <<<"$run"
[ "$impl" != openmpi ] || launch+=(--mca btl_vader_single_copy_mechanism none)
ulimit -c 0
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
# run NAME CMD...: its exit status.  Open MPI 4.1's mpirun itself sometimes
# crashes after a rank's MPI_Abort (SIGSEGV in PMIx_server_finalize, with or
# without unblock: about one run in 20 under load), and, more rarely, hangs
# there instead (the ranks gone, mpirun never exits: seen once in a CI run).
# Such a run is made again, up to 3 times, and said so: a crash that names
# PMIx/orte finalize, or a run killed by the time limit (after the abort was
# reported, or before anything was: once in a full run under load, its output
# lost; a run that hangs every time still fails).  Each run is bounded
# (SIGTERM at 40 s, SIGKILL 5 s later), so the test's worst case (2 runs x 3
# tries) stays under its 300 s limit.
run() {
    local name=$1 st
    shift
    for try in 1 2 3; do
        st=0
        timeout -k 5 40 "${launch[@]}" "$@" >"$d/$name.out" 2>"$d/$name.err" || st=$?
        if [ "$st" = 139 ] && grep -q "PMIx_server_finalize\|orte_finalize" "$d/$name.err"; then
            echo "($name run $try: mpirun crashed after the abort; again)" >&2
            continue
        fi
        if [ "$st" = 124 ] || [ "$st" = 137 ]; then
            if grep -q "MPI_ABORT was invoked\|MPI_ERRORS_ARE_FATAL\|Errors are fatal" "$d/$name.err"; then
                echo "($name run $try: the abort was reported but mpirun did not exit; again)" >&2
            else
                # Seen once in a full run under load (46 s), output lost: a run
                # that hangs every time still fails after the third.
                echo "($name run $try: no end in 40 s, nothing reported; again)" >&2
                sed 's/^/  | /' "$d/$name.err" >&2
            fi
            continue
        fi
        break
    done
    echo "$st"
}
a=$(run plain "$prog" "$d" "$mode")
b=$(run unblock "$unblock" "$prog" "$d" "$mode")
echo "exit status: plain $a, unblock $b"
echo "--- unblock stdout"; cat "$d/unblock.out"
echo "--- unblock stderr"; cat "$d/unblock.err"
fail=0
if [ "$a" = 0 ] || [ "$a" = 124 ] || [ "$a" = 137 ]; then echo "FAIL: the plain run did not die of the error ($a)"; fail=1; fi
if [ "$b" != "$a" ]; then echo "FAIL: exit status $b under unblock, $a without"; fail=1; fi
if grep -q "MPI_Recv returned" "$d/plain.out"; then
    echo "FAIL: without unblock, MPI_Recv returned"; fail=1
fi
line=$(grep -m1 '^unblock: rank 1: MPI_Recv at .* failed: ' "$d/unblock.err")
if [ -z "$line" ]; then
    echo "FAIL: unblock did not name the program's MPI_Recv"; exit 1
fi
site=$(sed -E 's/^unblock: rank 1: MPI_Recv at ([^ ]+) .*/\1/' <<<"$line")
name=$(basename "$prog")
case $site in
"$name"+0x*) ;;
*) echo "FAIL: the site $site is not in $name"; fail=1 ;;
esac
if grep -q "ERR_TRUNCATE\|truncated" <<<"$(grep -A1 '^unblock: rank 1: MPI_Recv at' "$d/unblock.err")"; then :; else
    echo "FAIL: the error is not named"; fail=1
fi
# The site is a return address: the call is the instruction before it.
if [ "$fail" = 0 ] && command -v addr2line >/dev/null; then
    off=$((${site#"$name"+} - 1))
    where=$(addr2line -e "$prog" "$(printf '%#x' "$off")")
    want=$(grep -n '/\* truncated \*/' "$src" | cut -d: -f1)
    echo "site $site: $where (the truncated MPI_Recv is line $want)"
    case $where in
    \?*) echo "(no debug information: the line is not checked)" ;;
    *:"$want" | *:"$want "*) ;;
    *) echo "FAIL: the site is not the program's MPI_Recv"; fail=1 ;;
    esac
fi
exit $fail
