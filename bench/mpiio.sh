#!/bin/sh
# mpiio.sh BUILD [REPS] — MPI-IO write-behind against plain independent writes, the
# hand-written file view and the collective form (docs/performance.md#mpi-io-write-behind).
#
# For each MPI built, at 2 and 4 ranks, on the local disk (BUILD/bench-mpiio) and on
# bench/slowfs (200 us + 110 MB/s per write request; skipped where FUSE cannot be
# mounted): bench/smallw (8-byte writes, each rank its own segment and interleaved
# cells; independent plain, independent under unblock, one MPI_File_write_all
# through a file view; each rank's segment also from Fortran, bench/smallw_f08)
# and bench/btio (independent plain and under unblock,
# collective, posix), and at 2 ranks bench/ncpattern (PnetCDF's two handles,
# independent and collective data, plain and under unblock).  Each line: the median of REPS runs (default 3) of the time
# from open to the end of close (max over ranks), and the ratio to plain
# independent.  Every variant of a line writes the same bytes (checksums compared).
# MPIS="mpich" runs one MPI only.  MPICH's ranks are bound (-bind-to core): unbound,
# 4 ranks on 2 cores spin in MPI's waits and every form that communicates is
# bimodal (btio collective 0.07-0.84 s).
# On slowfs also each rank's segment of 4 MiB (as `ior -t 8 -b 4m`), under unblock
# against the file view (plain independent would take minutes there).
set -u
B=$1
REPS=${2:-3}
U=$B/bin/unblock
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

launch() { # impl np
    case $1 in
    openmpi) echo "mpirun.openmpi --oversubscribe -np $2" ;;
    *) echo "mpirun.mpich -bind-to core -np $2" ;; # (unbound: bimodal, docs/performance.md)
    esac
}

# median of REPS runs of CMD... (prints "seconds checksum"); KEY: the time to read
median() {
    key=$1 dir=$2
    shift 2
    ts="" sum=""
    for r in $(seq "$REPS"); do
        rm -f "$dir"/*.dat "$dir"/btio.out
        out=$(timeout 600 "$@" 2>/dev/null) || { echo "fail -"; return; }
        ts="$ts $(echo "$out" | awk -v k="$key" '$1 == k { print $2 }')"
        sum=$(echo "$out" | awk '$1 == "checksum" { print $2 }')
    done
    echo "$(echo $ts | tr ' ' '\n' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }') $sum"
}

row() { # title dir base-time cmd... ; prints "| title | t | ratio |"
    title=$1 dir=$2 base=$3 key=$4
    shift 4
    set -- $(median "$key" "$dir" "$@")
    t=$1 sum=$2
    ratio=$(awk -v b="$base" -v t="$t" 'BEGIN { if (t > 0 && b > 0) printf "%.2f", b / t; else print "-" }')
    echo "| $title | $t | $ratio | $sum |"
    last=$t
}

suite() { # impl np dir label smallw-b btio-args ncpattern-args
    impl=$1 np=$2 dir=$3 label=$4 sb=$5 bt=$6 nca=$7
    L=$(launch "$impl" "$np")
    sw=$B/bench/$impl/smallw
    bt_=$B/bench/$impl/btio
    echo
    echo "### $impl, $np ranks, $label (s from open to end of close, median of $REPS; speed-up over plain independent)"
    echo
    echo "| run | s | speed-up | checksum |"
    echo "|---|---|---|---|"
    for p in segment interleaved; do
        row "smallw $p, independent" "$dir" 0 time.total $L "$sw" "$dir" --pattern $p --b "$sb"
        base=$last
        row "smallw $p, independent, unblock" "$dir" "$base" time.total \
            $L "$U" "$sw" "$dir" --pattern $p --b "$sb"
        row "smallw $p, file view + write_all" "$dir" "$base" time.total \
            $L "$sw" "$dir" --pattern $p --how view --b "$sb"
    done
    swf=$B/bench/$impl/smallw_f08
    if [ -x "$swf" ]; then # the same segment from Fortran (use mpi_f08), 8-byte doubles
        row "smallw_f08 segment, independent" "$dir" 0 time.total $L "$swf" "$dir" --b "$sb"
        base=$last
        row "smallw_f08 segment, independent, unblock" "$dir" "$base" time.total \
            $L "$U" "$swf" "$dir" --b "$sb"
        row "smallw_f08 segment, file view + write_all" "$dir" "$base" time.total \
            $L "$swf" "$dir" --how view --b "$sb"
    fi
    if [ -n "${big:-}" ]; then # (plain independent would take minutes here)
        row "smallw segment $((big >> 20)) MiB, file view + write_all (the base of this pair)" \
            "$dir" 0 time.total $L "$sw" "$dir" --pattern segment --how view --b "$big"
        base=$last
        row "smallw segment $((big >> 20)) MiB, independent, unblock" "$dir" "$base" time.total \
            $L "$U" "$sw" "$dir" --pattern segment --b "$big"
    fi
    row "btio independent" "$dir" 0 time.write $L "$bt_" "$dir" $bt --compute-ms 0 --mode independent
    base=$last
    row "btio independent, unblock" "$dir" "$base" time.write \
        $L "$U" "$bt_" "$dir" $bt --compute-ms 0 --mode independent
    row "btio collective" "$dir" "$base" time.write $L "$bt_" "$dir" $bt --compute-ms 0 --mode collective
    row "btio posix" "$dir" "$base" time.write $L "$bt_" "$dir" $bt --compute-ms 0 --mode posix
    nc=$B/bench/$impl/ncpattern # (PnetCDF's two handles: a quiet file's collective calls;
    [ "$np" -le 2 ] || return 0 # at 4 ranks on 2 cores plain MPICH's take minutes)
    for m in indep coll; do
        row "ncpattern $m" "$dir" 0 time.total $L "$nc" "$dir" $nca --mode $m
        base=$last
        row "ncpattern $m, unblock" "$dir" "$base" time.total $L "$U" "$nc" "$dir" $nca --mode $m
    done
}

local_dir=$B/bench-mpiio
mkdir -p "$local_dir"
for impl in ${MPIS:-openmpi mpich}; do
    [ -x "$B/bench/$impl/smallw" ] || continue
    for np in 2 4; do
        suite "$impl" "$np" "$local_dir" "local disk" $((4 << 20)) "--n 64 --steps 5" \
            "--files 16 --vars 24"
    done
done
rm -rf "$local_dir"

fs=$B/bench/serial/slowfs
[ -x "$fs" ] || { echo "(no slowfs: fuse3 missing)"; exit 0; }
back=$(mktemp -d) mnt=$(mktemp -d)
"$fs" "$back" "$mnt" >/dev/null 2>&1 &
pid=$!
i=0
while [ "$(stat -f -c %t "$mnt")" != 65735546 ]; do
    i=$((i + 1))
    [ $i -le 25 ] && kill -0 $pid 2>/dev/null || { echo "(cannot mount slowfs)"; exit 0; }
    sleep 0.2
done
export UNBLOCK_IO_FS=fuse # (the POSIX write-behind on FUSE, for btio's posix mode)
big=$((4 << 20)) # each rank's segment as ior -t 8 -b 4m writes it: unblock against the view
for impl in ${MPIS:-openmpi mpich}; do
    [ -x "$B/bench/$impl/smallw" ] || continue
    for np in 2 4; do
        suite "$impl" "$np" "$mnt" "bench/slowfs" $((64 << 10)) "--n 32 --steps 3" \
            "--files 2 --vars 8"
    done
done
fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt"
kill $pid 2>/dev/null
rm -rf "$back" "$mnt"
