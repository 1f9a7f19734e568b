#!/bin/sh
# A background write that failed on one rank of a shared file, then collective
# calls: every rank must get through them, and the error must reach the
# program.  2 ranks, a file on MPI_COMM_WORLD in 64 KiB blocks; under the test
# hook UNBLOCK_TEST_MPIIO_FAIL_RANK=0 every write of rank 0 through its
# descriptor fails (MPI_ERR_IO).  Rank 0 flushes its own writes (a seek to the
# end), asks the size until no error comes back, writes its first cell again
# and flushes again: the error of that block (it owns it) is kept, alone on
# rank 0, when the collective write comes.  Before, that call returned the
# error at once without running, and rank 1 waited in it for ever (both MPIs,
# 3 runs of 3 each).  Now the collective call runs and the error comes at
# rank 0's next call.  Checked: no hang; rank 0's first error MPI_ERR_IO no
# later than the first call after its first flush, the size (or one of the
# first writes, where the I/O thread's write failed while they were made);
# from Fortran too (before, from Fortran only a write, the sync and the close
# returned a kept error: it came at the rewrite); every rank says where its
# first error came; plain runs say none.
#
# With CALL (C only), the first collective call after the error is kept is
# set_view or set_atomicity, which the same rule lets run (before a rank left
# it at once, the other waited).
#
# usage: mpiio_failcoll.sh UNBLOCK LAUNCHER PROGRAM [c|fortran] [CALL]
#        (PROGRAM: the C mpiio test program, or with `fortran` mpiiosyncerr)
set -u
unblock=$1 launch=$2 prog=$3 lang=${4:-c} call=${5:-}
a=$(mktemp -d) b=$(mktemp -d)
trap 'rm -rf "$a" "$b"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/launch.sh"
mpi_launcher "$launch" 2
if [ "$lang" = fortran ]; then
    pa="$a $a 0 failcoll" ua="$b $b 0 failcoll"
else
    pa="$a failcoll $call" ua="$b failcoll $call"
fi
timeout -k 10 60 $run "$prog" $pa >/dev/null 2>&1 || fail "the plain run failed"
UNBLOCK_TEST_MPIIO_FAIL_RANK=0 timeout -k 10 60 $run "$unblock" --no-profile --stats="$b" \
    --mpiio_block=64K "$prog" $ua >/dev/null 2>&1
rc=$?
[ $rc -eq 124 ] && fail "the run under unblock hung (a rank waited in a collective call)"
[ $rc -eq 0 ] || fail "the run under unblock failed ($rc)"
for r in 0 1; do
    p=$(grep failcoll "$a/result-$r.txt") u=$(grep failcoll "$b/result-$r.txt")
    echo "rank $r: plain: $p; unblock: $u"
    [ "$p" = "failcoll: none none" ] || fail "rank $r: the plain run saw an error"
    [ -n "$u" ] || fail "rank $r said nothing"
done
case $(grep failcoll "$b/result-0.txt") in
"failcoll: write MPI_ERR_IO" | "failcoll: seek MPI_ERR_IO" | "failcoll: get_size MPI_ERR_IO") ;;
*) fail "rank 0: the kept error did not come at its first call after the flush" ;;
esac
grep -q '"errors_returned": [1-9]' "$b/unblock-0.json" || fail "rank 0: no error returned"
echo "ok"
