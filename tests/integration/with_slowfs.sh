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
fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt"
wait $pid 2>/dev/null
rm -rf "$back" "$mnt"
exit $rc
