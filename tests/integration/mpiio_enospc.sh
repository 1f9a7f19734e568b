#!/bin/sh
# MPI-IO write-behind on a full file system: a 2 MiB tmpfs, 2 ranks writing
# 4 MiB each in 64 KiB MPI_File_write_at calls, each to a file of its own
# opened on MPI_COMM_SELF (as PnetCDF's handle for independent data).  The
# error class each rank sees (the first of the writes, sync and close) must be
# the one it sees without unblock.  No space is reserved ahead for a file of
# one rank in a job of several; its full blocks are written by the I/O thread
# (two stages), and a block whose write fails there is written again through
# MPI by the program's next call on the file, which returns MPI's answer.
# CASE enospc-late sleeps 5 ms after each write, so that the I/O thread
# certainly writes (and fails) first: mpiio.blocks_retried > 0 on some rank.
# CASE enospc-open: rank 0 writes 2.5 MiB, ignores what its calls return and
# leaves the file open at MPI_Finalize, whose flush fails: the error nobody
# consumed must be printed (one line on stderr, mpiio.errors_unconsumed > 0;
# under Open MPI, whose OMPIO prints a failed write and returns success, plain
# or not, the line printed may be OMPIO's own).
# CASE syncerr (PROGRAM: tests/programs/mpiiosyncerr.F90): a write that fails
# only in MPI_File_sync's own flush, from Fortran: 2 ranks each write 3 MiB to
# a file of their own in 1 KiB calls, then sync and close.  Plain MPI fails in
# a write (ROMIO) or says nothing (OMPIO, which returns success for a failed
# write).  Under unblock, in blocks of 4 MiB (nothing written before the
# sync), the sync's flush fails: the sync must return the class plain
# returned; before, from Fortran, its sync gave MPI's answer alone and the
# error came at the close.  Each rank's class must be plain's, and where plain
# said one, unblock's must come no later than the sync.
# CASE unlinked (PROGRAM: the C mpiio test program): the same in 64 KiB calls
# from C, each rank's file removed by a raw unlink system call (as another
# process would) after its writes and before its sync, still open: MPI's
# answer is asked through the descriptor's /proc link.  Before, the rank's own
# MPI handle could not be opened by the name, and errno's class came back
# (MPICH "sync 36" against plain's "write 32"; Open MPI "sync 41" against
# "none"), as in the syncerr case 1 run in 3 on a busy host when a rank
# removed another's file at its end.
# CASE replaced: the same, a directory of the same name made after the unlink:
# the name leads to another file, which MPI cannot open (the descriptor's
# device and inode are compared, not the name's existence).
# Needs root to mount (else skipped, 77).
#
# usage: mpiio_enospc.sh UNBLOCK LAUNCHER PROGRAM [CASE]
#        (LAUNCHER: openmpi | mpich; CASE: enospc (default) | enospc-late |
#        enospc-open | syncerr | unlinked | replaced)
set -u
unblock=$1 launch=$2 prog=$3 case=${4:-enospc}
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
. "$(dirname "$0")/launch.sh"
mpi_launcher "$launch" 2
if [ "$case" = syncerr ] || [ "$case" = unlinked ] || [ "$case" = replaced ]; then
    if [ "$case" = syncerr ]; then
        args="$m 3145728"
    else
        args="$case $m"
    fi
    timeout -k 10 120 $run "$prog" "$a" $args >/dev/null 2>&1 || fail "the plain run failed"
    rm -rf "$m"/*
    timeout -k 10 120 $run "$unblock" --stats="$b" --mpiio_block=4M "$prog" "$b" $args \
        >/dev/null 2>&1 || fail "the run under unblock failed"
    for r in 0 1; do
        p=$(cat "$a/result-$r.txt") u=$(cat "$b/result-$r.txt")
        echo "rank $r: plain: $p; unblock: $u"
        [ "${p#* }" = "${u#* }" ] || fail "rank $r saw another error class"
        case "$p:$u" in
        none*:* | *:write* | *:sync*) ;;
        *) fail "rank $r: the error came at '${u% *}', after the sync" ;;
        esac
        grep -q '"writes": [1-9]' "$b/unblock-$r.json" || fail "rank $r: no write taken"
    done
    echo "ok"
    exit 0
fi
# (Open MPI's OMPIO prints a line per failed write on stderr: not compared.)
timeout -k 10 120 $run "$prog" "$a" "$case" "$m" >/dev/null 2>&1 || fail "the plain run failed"
if [ "$case" = enospc-open ]; then
    rm -f "$m"/*
    timeout -k 10 120 $run "$unblock" --stats="$b" "$prog" "$b" "$case" "$m" >/dev/null \
        2>"$b/stderr" || fail "the run under unblock failed"
    cmp "$a/result-0.txt" "$b/result-0.txt" || fail "rank 0's output differs"
    if [ "$launch" = openmpi ]; then
        # OMPIO prints a failed write and returns success, plain or not: the
        # last block, written through it at MPI_Finalize, leaves no error to
        # keep, and OMPIO's own line must still reach the user.
        grep -E 'MPI-IO write-behind: a background write failed|No space left on device' \
            "$b/stderr" || fail "nothing said of the failed write"
        echo "ok: the failed write was said (Open MPI: by OMPIO, which returns success)"
        exit 0
    fi
    grep -q '"errors_unconsumed": [1-9]' "$b/unblock-0.json" ||
        fail "no error counted as never seen (mpiio.errors_unconsumed)"
    grep 'MPI-IO write-behind: a background write failed' "$b/stderr" ||
        fail "the error nobody saw was not printed"
    echo "ok: the error nobody saw was printed"
    exit 0
fi
timeout -k 10 120 $run "$unblock" --stats="$b" "$prog" "$b" "$case" "$m" >/dev/null 2>&1 ||
    fail "the run under unblock failed"
cat "$a"/result-*.txt
for r in 0 1; do
    cmp "$a/result-$r.txt" "$b/result-$r.txt" || fail "rank $r saw another error class"
done
for r in 0 1; do
    grep -q '"mode": "two-stage"' "$b/unblock-$r.json" ||
        fail "rank $r: the writes were not taken in two stages"
done
if [ "$case" = enospc-late ]; then
    cat "$b"/unblock-[01].json | grep -q '"blocks_retried": [1-9]' ||
        fail "no block failed on the I/O thread and was written again"
fi
[ -z "$(ls -A "$m")" ] || fail "files left on the file system"
echo "ok: $(cat "$b/result-0.txt")"
