#!/bin/sh
# slurm_local.sh — scripts/slurm-local leaves nothing behind.
#
#   slurm_local.sh PATH-TO-slurm-local
#
# 1. `slurm-local run -- sh -c 'exit 3'` exits 3 (the command's status).
# 2. A command that leaves an srun step and a batch job running (each a `sleep`
#    of 10 minutes) and returns: once slurm-local has returned, no process on the
#    machine mentions the cluster's directory (daemons by their arguments,
#    slurmstepd and the tasks by SLURM_CONF in their environment), the
#    directory is gone, and the jobs had been seen running first.
# Exit 77 (skipped) where slurm-local says Slurm cannot start here.
set -u
local_=$1
note=$(mktemp)
trap 'rm -f "$note"' EXIT

timeout 60 "$local_" run -- sh -c 'exit 3'
rc=$?
[ $rc = 77 ] && exit 77
if [ $rc != 3 ]; then
    echo "FAIL: slurm-local run -- sh -c 'exit 3' exited $rc"
    exit 1
fi

# The command records the cluster's directory, starts the two jobs and waits
# until both run (at most 30 s), then returns without waiting for them.
timeout 90 "$local_" run -- sh -c '
    dirname "$SLURM_CONF" > "$1"
    srun -Q -n 1 sleep 600 &
    sbatch -Q -n 1 -o /dev/null --wrap "sleep 600"
    i=0
    while [ $i -lt 300 ]; do
        [ "$(squeue -h -t R -o %i | wc -l)" = 2 ] && { echo running >> "$1"; exit 0; }
        sleep 0.1
        i=$((i + 1))
    done
    echo "the jobs did not start" >&2
    exit 1' sh "$note"
rc=$?
[ $rc = 77 ] && exit 77
dir=$(head -1 "$note")
if [ $rc != 0 ] || ! grep -q running "$note"; then
    echo "FAIL: the jobs did not run (slurm-local exited $rc)"
    exit 1
fi
case $dir in
    /*/slurm-local.*) ;;
    *) echo "FAIL: no cluster directory recorded ($dir)"; exit 1 ;;
esac
if [ -e "$dir" ]; then
    echo "FAIL: $dir is still there"
    exit 1
fi
left=""
for p in /proc/[0-9]*; do
    [ "$p" = /proc/$$ ] && continue
    if grep -qsF "$dir" "$p/cmdline" "$p/environ"; then
        left="$left $(basename "$p"):$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null | cut -c1-60)"
    fi
done
if [ -n "$left" ]; then
    echo "FAIL: processes of the cluster still running:$left"
    exit 1
fi
echo "PASS: exit status passed on; jobs cancelled, daemons stopped, nothing of $dir left"
