#!/bin/bash
# writebehind.sh CASE UNBLOCK WB [ARG] — the write-behind tests that compare more
# than a transparency run can (exit statuses, files of two runs, error messages,
# statistics), each run of tests/programs/wb.c with and without unblock:
#   killed HOW STATUS      killed while writing (sigterm, sigint, abort, segv): the
#                          same exit status, the same file
#   killed-protected HOW STATUS   ... with protected large writes in flight
#   threads-killed SIG N WBTHREADS   4 threads writing, the process killed by SIG
#                          (term, hup, int) N times: every file a prefix, the exit
#                          status the plain run's
#   eio                    an injected EIO returned once by the next fsync
#   eio-exit               ... left unconsumed: printed at exit
#   protect-eio            ... on a protected large write
#   twofs                  two filesystems, two workers (skipped: /dev/shm not another)
#   enospc                 a full 2 MiB tmpfs (skipped: cannot mount)
#   share                  a 1 MiB tmpfs shared by three files, one of another
#                          process: no file loses space to another's reservation
#   release                the sidecar lets go of the program's files at exit and exec
#   quota                  share, under a 1 MiB user quota on a 64 MiB tmpfs (needs
#                          tmpfs quotas: Linux 6.6 and CONFIG_TMPFS_QUOTA)
#   spacegone[-fork]       a 32 MiB tmpfs filled (by a fallocate, or a child) after a
#                          file began buffering: the reservation ahead is given back
#                          (on ENOSPC, or at the fork), the next file fits
#   slowfs                 the cases on the FUSE filesystem ($SLOWFS_DIR, with_slowfs.sh)
# Exits 0 when the case holds, 77 when it cannot run here (CTest: skipped), 1 else.
set -euo pipefail
case_=$1 unblock=$2 wb=$3
shift 3
ulimit -c 0
a=$(mktemp -d) b=$(mktemp -d) m=""
cleanup() {
    [ -n "$m" ] && { umount "$m" 2>/dev/null || true; rm -rf "$m"; }
    rm -rf "$a" "$b"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# stat KEY PATTERN: the run's statistics hold "KEY": PATTERN
stat_has() { grep -q "\"$1\": $2" "$b"/st/*.json || fail "statistics: $1 is not $2"; }
status() { "$@" >&2 && echo 0 || echo $?; }

case $case_ in
killed | killed-protected)
    how=$1 want=$2 env=() large=()
    # protected: without the sidecar, which would copy them instead
    if [ "$case_" = killed-protected ]; then
        env=(UNBLOCK_IO_QUEUE_NS=0 UNBLOCK_IO_CRASHSAFE=0) large=(large)
    fi
    ea=$(status "$wb" "$a" killed "$how" "${large[@]}")
    eb=$(status env "${env[@]}" "$unblock" "$wb" "$b" killed "$how" "${large[@]}")
    ls -l "$a" "$b"
    echo "exit $ea $eb"
    [ "$ea" = "$want" ] && [ "$eb" = "$want" ] || fail "exit statuses $ea, $eb; expected $want"
    cmp "$a/killed.dat" "$b/killed.dat" || fail "the files differ"
    ;;
threads-killed)
    sig=$1 runs=$2 prog=$3
    want=$(status "$prog" "$a" "$sig")
    for i in $(seq "$runs"); do
        rm -f "$b"/t*.dat
        got=$(status "$unblock" "$prog" "$b" "$sig")
        [ "$got" = "$want" ] || fail "run $i: exit status $got, without unblock $want"
        "$prog" "$b" check || fail "run $i: a file is not a prefix of what was written"
    done
    ;;
eio)
    UNBLOCK_TEST_FAIL_WRITE=1 "$unblock" --stats="$b/st" "$wb" "$b" eio
    cat "$b/result.txt"
    grep -q 'fsync -1 (Input/output error), fsync 0, close 0' "$b/result.txt" ||
        fail "fsync did not return the error once"
    stat_has errors_deferred 1
    stat_has errors_returned 1
    ;;
eio-exit)
    UNBLOCK_TEST_FAIL_WRITE=1 "$unblock" --stats="$b/st" "$wb" "$b" eio-exit 2>"$b/err" ||
        fail "exit status $?"
    cat "$b/err"
    grep -q 'never saw it: Input/output error' "$b/err" || fail "the error was not printed at exit"
    stat_has errors_returned 0
    ;;
protect-eio)
    "$wb" "$a" prot-eio
    UNBLOCK_IO_QUEUE_NS=0 UNBLOCK_IO_CRASHSAFE=0 UNBLOCK_TEST_FAIL_WRITE=2 "$unblock" \
        --stats="$b/st" "$wb" "$b" prot-eio
    cat "$a/result.txt" "$b/result.txt"
    grep -q 'calls failed 0, with EIO 0' "$a/result.txt" || fail "the plain run failed"
    grep -q 'calls failed 1, with EIO 1' "$b/result.txt" || fail "the EIO was not returned once"
    stat_has errors_deferred 1
    stat_has errors_returned 1
    stat_has protected_writes '[1-9]'
    ;;
twofs)
    if [ "$(stat -c %d "$a")" = "$(stat -c %d /dev/shm 2>/dev/null)" ]; then
        echo "skipped: /dev/shm is on the same filesystem as $a"
        exit 77
    fi
    "$wb" "$a" twofs /dev/shm
    # (no worker ends while idle here: a starved run may leave one idle 10 ms,
    # and its restart would count a third start)
    UNBLOCK_IO_IDLE_MS=60000 "$unblock" --stats="$b/st" "$wb" "$b" twofs /dev/shm
    cmp "$a/result.txt" "$b/result.txt" || fail "results differ"
    cmp "$a/twofs.dat" "$b/twofs.dat" || fail "files differ"
    stat_has workers 2
    ;;
enospc | share | spacegone | spacegone-fork)
    m=$(mktemp -d)
    size=2m
    [ "$case_" = share ] && size=1m
    case $case_ in spacegone*) size=32m ;; esac
    if ! mount -t tmpfs -o size=$size none "$m" 2>/dev/null; then
        echo "skipped: cannot mount a tmpfs here"
        rmdir "$m"
        m=""
        exit 77
    fi
    "$wb" "$a" "$case_" "$m"
    "$unblock" --stats="$b/st" "$wb" "$b" "$case_" "$m"
    cat "$a/result.txt" "$b/result.txt"
    cmp "$a/result.txt" "$b/result.txt" || fail "results differ"
    if [ "$case_" = enospc ]; then
        grep -q 'No space left' "$a/result.txt" || fail "the plain run met no ENOSPC"
    fi
    case $case_ in spacegone*)
        grep -q 'fill whole, b 1048576' "$a/result.txt" || fail "the plain run did not fit" ;;
    esac
    [ "$case_" != spacegone ] || stat_has space_retries '[1-9]'
    [ "$case_" != spacegone-fork ] || stat_has space_retries 0
    stat_has merged '[1-9]'
    ;;
release)
    # Nothing of the program's stays open after it: a filesystem it wrote to
    # unmounts right after it exits, or while a command it exec'd runs, even
    # where the sidecar would be slow to see the end (a loaded machine).
    export UNBLOCK_TEST_SIDECAR_DELAY_MS=2000
    for how in exit exec; do
        m=$(mktemp -d)
        if ! mount -t tmpfs -o size=4m none "$m" 2>/dev/null; then
            echo "skipped: cannot mount a tmpfs here"
            rmdir "$m"
            m=""
            exit 77
        fi
        if [ $how = exit ]; then
            "$unblock" --stats="$b/st" "$wb" "$b" release "$m" exit
        else
            "$unblock" --stats="$b/st" "$wb" "$b" release "$m" "echo > $b/exec.started; sleep 3" &
            pid=$!
            for _ in $(seq 100); do [ -e "$b/exec.started" ] && break; sleep 0.05; done
        fi
        size=$(stat -c %s "$m/r.dat")
        [ "$size" = 100000 ] || fail "$how: r.dat holds $size bytes, not 100000"
        umount "$m" || fail "$how: the filesystem is still busy after the program ($(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c "$m") descriptors on it)"
        rmdir "$m"
        m=""
        [ $how = exit ] || kill $pid 2>/dev/null
        stat_has sidecar 1
    done
    ;;
quota)
    # The share case under a user quota of 1 MiB on a 64 MiB tmpfs, run as an
    # unprivileged user (root is not held to quotas): free space is plenty, the
    # quota is not, and only quotactl tells.
    m=$(mktemp -d)
    if ! mount -t tmpfs -o size=64m,usrquota,usrquota_block_hardlimit=1m none "$m" 2>/dev/null; then
        echo "skipped: cannot mount a tmpfs with a user quota here (a kernel before 6.6," \
            "or without CONFIG_TMPFS_QUOTA, or no CAP_SYS_ADMIN)"
        rmdir "$m"
        m=""
        exit 77
    fi
    user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chmod 1777 "$m"
    chmod 777 "$a" "$b"
    if ! "${user[@]}" true 2>/dev/null; then
        echo "skipped: cannot run as an unprivileged user here (setpriv)"
        exit 77
    fi
    "${user[@]}" "$wb" "$a" share "$m"
    "${user[@]}" "$unblock" --stats="$b/st" "$wb" "$b" share "$m"
    cat "$a/result.txt" "$b/result.txt"
    grep -q 'a 200000, b 600000, c whole' "$a/result.txt" || fail "the plain run did not fit"
    cmp "$a/result.txt" "$b/result.txt" || fail "results differ"
    stat_has merged '[1-9]'
    ;;
slowfs)
    : "${SLOWFS_DIR:?run under with_slowfs.sh}"
    # prot-*: large writes from the program's pages, which the sidecar would
    # copy instead (crash safety); safe-rewrite: that copy
    for c in patch rows dup copy fork truncate stdio timer badbuf eio prot-rewrite prot-free \
        prot-fork safe-rewrite; do
        mkdir "$SLOWFS_DIR/a-$c" "$SLOWFS_DIR/b-$c"
        case=${c/safe-/prot-} safe=1
        [ "$case" = "$c" ] && [ "${c#prot-}" != "$c" ] && safe=0
        "$wb" "$SLOWFS_DIR/a-$c" "$case"
        UNBLOCK_IO_CRASHSAFE=$safe UNBLOCK_IO_FS=fuse "$unblock" --stats="$b/st-$c" "$wb" \
            "$SLOWFS_DIR/b-$c" "$case"
        for f in "$SLOWFS_DIR/a-$c"/*; do
            cmp "$f" "$SLOWFS_DIR/b-$c/${f##*/}" || fail "$c: ${f##*/} differs"
        done
    done
    stat_has_in() { grep -q "\"$2\": $3" "$b/st-$1"/*.json || fail "$1: $2 is not $3"; }
    stat_has_in safe-rewrite protected_writes 0
    stat_has_in safe-rewrite sidecar 1
    stat_has_in safe-rewrite sidecar_unsafe 0
    cat "$SLOWFS_DIR"/b-*/result.txt
    grep -q '"merged": [1-9][0-9][0-9][0-9]' "$b"/st-rows/*.json || fail "rows: too few merged"
    grep -q '"protected_writes": [1-9]' "$b"/st-prot-rewrite/*.json ||
        fail "prot-rewrite: no protected write"
    ;;
*)
    fail "unknown case $case_"
    ;;
esac
echo "ok: $case_"
