#!/usr/bin/env python3
"""The papers' Figure 3: sor2d's read+distribute phase (rank 0 reads the input
file with one read() and sends every rank its block) with and without unblock,
cold page cache, on the local disk and on bench/slowfs with --slow-reads (an
NFS-like filesystem: 200 us per request, 110 MB/s), 2 ranks bound to cores, over
Open MPI shared memory, TCP on loopback, and TCP on loopback shaped to 1 Gbit/s
("gige": a token bucket on lo standing in for the papers' gigabit Ethernet; needs
root and tc, taken off again at the end, and skipped where it cannot be set).

For each filesystem, transport and size the runs alternate plain / unblock RUNS
times; the table gives the medians of time.read (the phase, maximum over ranks),
of rank 0's read() call (model.io) and of the distribution after it
(model.dist), and the speedup of the phase (median of per-round ratios).

usage: read_scatter.py BUILD_DIR [--runs 3] [--sizes 1024,2048] [--transports shm,tcp,gige]
                       [--warm]    (--warm: the page cache is not dropped)
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

os.environ.setdefault('UNBLOCK_PROFILE', 'off')  # results must not depend on earlier runs

LAUNCH = {'shm': sor_exchange.TRANSPORTS[0][2], 'tcp': sor_exchange.TRANSPORTS[1][2],
          'gige': sor_exchange.TRANSPORTS[1][2]}
# A token bucket on the loopback device: 1 Gbit/s, with a burst above lo's 64 KiB
# MTU (a smaller one drops every full-size segment and TCP times out).
SHAPE = ['tc', 'qdisc', 'add', 'dev', 'lo', 'root', 'tbf', 'rate', '1gbit', 'burst', '1mb',
         'latency', '50ms']
UNSHAPE = ['tc', 'qdisc', 'del', 'dev', 'lo', 'root']


def shape(on):
    """Puts the 1 Gbit/s bucket on lo (True if it is there now) or takes it off."""
    try:
        if not on:
            subprocess.run(UNSHAPE, stderr=subprocess.DEVNULL, check=False)
            return False
        shown = subprocess.run(['tc', 'qdisc', 'show', 'dev', 'lo'], capture_output=True,
                               text=True, check=False).stdout
        if 'tbf' in shown or 'netem' in shown:
            return False  # someone else's shaping: leave it alone
        return subprocess.run(SHAPE, stderr=subprocess.DEVNULL, check=False).returncode == 0
    except OSError:
        return False


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


def rows(a, name, d, transport, cold):
    """One table row per size: RUNS rounds of plain then unblock."""
    for n in [int(x) for x in a.sizes.split(',')]:
        dn = os.path.join(d, str(n))  # sor2d's input file is per size
        os.makedirs(dn, exist_ok=True)
        run(a.build, dn, n, transport, False)  # writes the input file
        res = {False: [], True: []}
        for _ in range(a.runs):
            for ub in (False, True):
                if cold:
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--sizes', default='1024,2048')
    ap.add_argument('--transports', default='shm,tcp,gige')
    ap.add_argument('--warm', action='store_true')
    a = ap.parse_args()
    os.environ.setdefault('OMPI_ALLOW_RUN_AS_ROOT', '1')
    os.environ.setdefault('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')
    cold = not a.warm and drop_caches()
    if not cold:
        print('warm page cache' if a.warm else
              'cannot drop the page cache (not root): warm-cache figures')
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
            for transport in a.transports.split(','):
                if transport == 'gige' and not shape(True):
                    print('| %s | gige | lo cannot be shaped here (needs root, tc and no '
                          'other qdisc on lo) | | | | | |' % name, flush=True)
                    continue
                try:
                    rows(a, name, d, transport, cold)
                finally:
                    if transport == 'gige':
                        shape(False)
    finally:
        shutil.rmtree(local, ignore_errors=True)
        if mnt:
            subprocess.run(['fusermount3', '-u', mnt], stderr=subprocess.DEVNULL)
            proc.wait()
            shutil.rmtree(back, ignore_errors=True)
            shutil.rmtree(mnt, ignore_errors=True)


if __name__ == '__main__':
    main()
