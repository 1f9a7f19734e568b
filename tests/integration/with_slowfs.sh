#!/bin/sh
# with_slowfs.sh SLOWFS LATENCY_US CMD... — runs CMD with $SLOWFS_DIR set to a fresh
# mount of bench/slowfs (the NFS-like FUSE filesystem), then unmounts it.  Exits
# 77 (skipped) where FUSE cannot be mounted (no /dev/fuse, no privilege, no
# slowfs built), and with CMD's status otherwise.
set -u
fs=$1 lat=$2
shift 2
[ -x "$fs" ] || { echo "slowfs is not built (no fuse3)"; exit 77; }
back=$(mktemp -d) mnt=$(mktemp -d)
"$fs" "$back" "$mnt" --latency-us "$lat" >/dev/null 2>&1 &
pid=$!
i=0
while [ "$(stat -f -c %t "$mnt")" != 65735546 ]; do
    i=$((i + 1))
    if [ $i -gt 25 ] || ! kill -0 $pid 2>/dev/null; then
        echo "cannot mount a FUSE filesystem here"
        kill $pid 2>/dev/null
        rm -rf "$back" "$mnt"
        exit 77
    fi
    sleep 0.2
done
SLOWFS_DIR=$mnt "$@"
rc=$?
# Nothing may hold the filesystem after the command; if something does, say so
# and fail, never wait for it (a lazy unmount, then the daemon is stopped).
i=0
until fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null; do
    i=$((i + 1))
    if [ $i -gt 50 ]; then
        echo "FAIL: the slow filesystem is still busy 10 s after the command:"
        ls -l /proc/[0-9]*/fd 2>/dev/null | grep -F "$mnt" | head -5
        fusermount3 -uz "$mnt" 2>/dev/null || umount -l "$mnt"
        kill $pid 2>/dev/null
        rc=1
        break
    fi
    sleep 0.2
done
wait $pid 2>/dev/null
rm -rf "$back" "$mnt"
exit $rc
