#!/usr/bin/env python3
"""The papers' Figure 3: sor2d's read+distribute phase (rank 0 reads the input
file with one read() and sends every rank its block) with and without unblock,
cold page cache, on the local disk and on bench/slowfs with --slow-reads (an
NFS-like filesystem: 200 us per request, 110 MB/s), 2 ranks bound to cores.

For each filesystem, transport and size the runs alternate plain / unblock RUNS
times; the table gives the medians of time.read (the phase, maximum over ranks),
of rank 0's read() call (model.io) and of the distribution after it
(model.dist), and the speedup of the phase (median of per-round ratios).

usage: read_scatter.py BUILD_DIR [--runs 3] [--sizes 1024,2048]
Needs root to drop the page cache (otherwise says so and measures warm) and FUSE
for the slowfs rows (skipped where it cannot be mounted).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import compare  # bench/compare.py: runs a command, returns its "KEY VALUE" lines
import sor_exchange  # bench/sor_exchange.py: the transports' launch commands

LAUNCH = {'shm': sor_exchange.TRANSPORTS[0][2], 'tcp': sor_exchange.TRANSPORTS[1][2]}
KEYS = ('time.read', 'model.io', 'model.dist')


def drop_caches():
    try:
        os.sync()
        with open('/proc/sys/vm/drop_caches', 'w') as f:
            f.write('3\n')
        return True
    except OSError:
        return False


def run(build, d, n, transport, unblock):
    cmd = '%s %s%s %s --n %d --iters 1' % (
        LAUNCH[transport],
        os.path.join(build, 'bin', 'unblock') + ' --io_fs=fuse ' if unblock else '',
        os.path.join(build, 'bench', 'openmpi', 'sor2d'), d, n)
    out = compare.run(cmd, 600)
    if any(k not in out for k in KEYS):
        sys.exit('sor2d printed no read phase: ' + cmd)
    return {k: out[k] for k in KEYS}


def mount_slowfs(build):
    back, mnt = tempfile.mkdtemp(), tempfile.mkdtemp()
    p = subprocess.Popen([os.path.join(build, 'bench', 'serial', 'slowfs'), back, mnt,
                          '--slow-reads'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(25):
        if os.path.ismount(mnt):
            return p, mnt, back
        time.sleep(0.2)
    p.kill()
    shutil.rmtree(back, ignore_errors=True)
    shutil.rmtree(mnt, ignore_errors=True)
    return None, None, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--sizes', default='1024,2048')
    a = ap.parse_args()
    os.environ.setdefault('OMPI_ALLOW_RUN_AS_ROOT', '1')
    os.environ.setdefault('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')
    cold = drop_caches()
    if not cold:
        print('cannot drop the page cache (not root): warm-cache figures')
    local = tempfile.mkdtemp(dir=a.build)  # the build's disk, not a tmpfs /tmp
    fss = [('local disk', local, None)]
    proc, mnt, back = mount_slowfs(a.build)
    if mnt:
        fss.append(('slowfs', mnt, proc))
    else:
        print('slowfs cannot be mounted here: local disk only')
    print('| filesystem | transport | n | plain phase (ms) | unblock phase (ms) | '
          'rank 0 read() plain / unblock (ms) | distribution plain / unblock (ms) | speedup |')
    print('|---|---|---|---|---|---|---|---|')
    try:
        for name, d, _ in fss:
            for transport in ('shm', 'tcp'):
                for n in [int(x) for x in a.sizes.split(',')]:
                    dn = os.path.join(d, str(n))  # sor2d's input file is per size
                    os.makedirs(dn, exist_ok=True)
                    run(a.build, dn, n, transport, False)  # writes the input file
                    res = {False: [], True: []}
                    for _ in range(a.runs):
                        for ub in (False, True):
                            drop_caches()
                            res[ub].append(run(a.build, dn, n, transport, ub))
                    med = {ub: {k: statistics.median(r[k] for r in res[ub]) * 1e3
                                for k in res[ub][0]} for ub in res}
                    sp = statistics.median(p['time.read'] / u['time.read']
                                           for p, u in zip(res[False], res[True]))
                    print('| %s | %s | %d | %.1f | %.1f | %.1f / %.1f | %.1f / %.1f | %.2f |' % (
                        name, transport, n, med[False]['time.read'], med[True]['time.read'],
                        med[False]['model.io'], med[True]['model.io'], med[False]['model.dist'],
                        med[True]['model.dist'], sp), flush=True)
    finally:
        shutil.rmtree(local, ignore_errors=True)
        if mnt:
            subprocess.run(['fusermount3', '-u', mnt], stderr=subprocess.DEVNULL)
            proc.wait()
            shutil.rmtree(back, ignore_errors=True)
            shutil.rmtree(mnt, ignore_errors=True)


if __name__ == '__main__':
    main()
