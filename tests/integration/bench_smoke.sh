#!/bin/bash
# bench_smoke.sh fileio BENCH_DIR | overlap BENCH_DIR MPI | plot SRC_DIR SAMPLE — the
# benchmarks run small, so that they keep working (their figures are checked by
# the PASS_REGULAR_EXPRESSION of the test, never timed here).
set -euo pipefail
. "$(dirname "$0")/launch.sh"
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
case $1 in
fileio)
    "$2/serial/fileio" "$d" writes
    "$2/serial/fileio" "$d" checkpoint --mib 4
    "$2/serial/fileio" "$d" reads --mib 8
    "$2/serial/fileio" "$d" closed --calls 5
    ;;
overlap)
    mpi_launcher "$3" 2
    read -ra run <<<"$run"
    "${run[@]}" "$2/$3/overlap" pioman --max 16384 --compute-ms 5
    "${run[@]}" "$2/$3/overlap" late --compute-ms 5
    "${run[@]}" "$2/$3/pingpong" --nonblocking --max 64
    "${run[@]}" "$2/$3/passthrough" 2000
    # (built where the MPI has a Fortran compiler: the test expects its keys then)
    if [ -x "$2/$3/pingpong_mpifh" ]; then "${run[@]}" "$2/$3/pingpong_mpifh"; fi
    ;;
plot)
    /usr/bin/python3 "$2/bench/plot.py" "$3" "$d"
    for f in pioman.png sor-phases.png sor-speedup.png; do
        [ -s "$d/$f" ] || { echo "FAIL: no $f"; exit 1; }
    done
    /usr/bin/python3 "$2/bench/model.py" "$3" | grep -F '| 1024 | mpich | 2 |' >/dev/null ||
        { echo "FAIL: the model has no 1024 MPICH row"; exit 1; }
    ;;
*)
    echo "usage: bench_smoke.sh fileio|overlap|plot ..."
    exit 2
    ;;
esac
