#!/usr/bin/env python3
"""A kill -9 at random points of a write-heavy program loses nothing it wrote.

    killpoints.py UNBLOCK KILLPOINTS WORKDIR [--points N] [--seed S]

Runs tests/programs/killpoints.c (small writes, then a checkpoint of 1 MiB
writes, queued as copies) under unblock, kills it with SIGKILL after a random
delay, waits until no process holds the file open (the sidecar writes what the
program left, then exits), and checks the file: at least every byte the program
had handed to write() (its shared progress counter), each the program's pattern,
so a prefix of what it wrote, never a hole.  The same check runs on the plain
program at a few points (the invariant is the kernel's own), and once more
under unblock with the sidecar off (UNBLOCK_IO_CRASHSAFE=0), where it must
find a loss: the test can see one.  N kill points under unblock in all (100
by default).  Exits 1 on a violation.
"""
import argparse
import os
import random
import signal
import subprocess
import sys
import time


def holders(path):
    """Processes that have path open."""
    found = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir('/proc/%s/fd' % pid):
                try:
                    if os.readlink('/proc/%s/fd/%s' % (pid, fd)) == path:
                        found.append(int(pid))
                        break
                except OSError:
                    pass
        except OSError:
            pass
    return found


def one(prog, cmd, env, data, progress, delay):
    for f in (data, progress):
        if os.path.exists(f):
            os.unlink(f)
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    _, err = p.communicate(timeout=60)
    t0 = time.time()
    while holders(data):
        if time.time() - t0 > 30:
            sys.exit('FAIL: %s is still open 30 s after the kill' % data)
        time.sleep(0.01)
    try:
        with open(progress, 'rb') as f:
            handed = int.from_bytes(f.read(8), 'little')
    except OSError:
        handed = 0
    size, bad = subprocess.run([prog, '--check', data], capture_output=True, text=True,
                               check=True).stdout.split()
    return handed, int(size), None if int(bad) < 0 else int(bad), err.decode(errors='replace')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('unblock')
    ap.add_argument('prog')
    ap.add_argument('workdir')
    ap.add_argument('--points', type=int, default=100)
    ap.add_argument('--seed', type=int, default=27)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    os.makedirs(a.workdir, exist_ok=True)
    data = os.path.realpath(os.path.join(a.workdir, 'data.bin'))
    progress = os.path.join(a.workdir, 'progress')
    base = dict(os.environ)
    base.pop('UNBLOCK_STATS', None)
    modes = [
        # mode, delay range (s), extra environment, whether a kill with the
        # sidecar off must lose data (small writes: a merged block is in memory
        # almost always; a checkpoint's copies only while the worker lags)
        ('small', 0.15, {}, True),
        ('checkpoint', 0.25, {'UNBLOCK_IO_QUEUE_NS': '0', 'UNBLOCK_IO_PROTECT_MIN': '0'}, False),
        # ... from a large allocation: without the sidecar queued from the
        # program's own pages (protected writes), with it copied to shared memory
        ('checkpoint', 0.25, {'UNBLOCK_IO_QUEUE_NS': '0'}, False),
    ]
    failures = 0
    counts = {}
    for mode, span, extra, must_lose in modes:
        runs = [('unblock', -(-a.points // len(modes))), ('plain', 5), ('unsafe', 8)]
        for kind, n in runs:
            env = dict(base, **extra)
            cmd = [a.prog, data, progress, mode]
            if kind != 'plain':
                cmd = [a.unblock] + cmd
            if kind == 'unsafe':
                env['UNBLOCK_IO_CRASHSAFE'] = '0'
            lost = 0
            for _ in range(n):
                delay = rnd.uniform(0.005, span)
                handed, size, bad, err = one(a.prog, cmd, env, data, progress, delay)
                if kind == 'unsafe':
                    lost += size < handed
                    continue
                if size < handed or bad is not None:
                    failures += 1
                    print('FAIL: %s %s killed after %.3f s: handed %d bytes to write(), the '
                          'file has %d%s' % (kind, mode, delay, handed, size,
                                             ', first wrong byte at %d' % bad
                                             if bad is not None else ''))
                    if err:
                        print(err[-500:])
                counts[kind] = counts.get(kind, 0) + 1
            if kind == 'unsafe':
                print('%s: with the sidecar off, %d of %d kills lost data' % (mode, lost, n))
                if lost == 0 and must_lose:
                    print('FAIL: %s: no kill lost anything with the sidecar off: the test '
                          'cannot tell' % mode)
                    failures += 1
    print('kill points: %d under unblock, %d plain; %d violations'
          % (counts.get('unblock', 0), counts.get('plain', 0), failures))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
