#!/usr/bin/env python3
"""sor2d's variants (sync, hand, overlap, and sync with --imbalance) must compute
bit-identical grids: the same grid.bin and the same checksum.  This is what makes
them comparable in the benchmarks.

usage: sor2d_variants.py {openmpi,mpich} NP SOR2D [sor2d options]"""
import os
import subprocess
import sys
import tempfile

impl, np, sor2d, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
env = {k: v for k, v in env.items() if not k.startswith('UNBLOCK_')}
launch = (['mpirun.openmpi', '--oversubscribe'] if impl == 'openmpi' else ['mpirun.mpich'])
results = {}
with tempfile.TemporaryDirectory() as work:
    for name, opts in [('sync', ['--variant', 'sync']), ('hand', ['--variant', 'hand']),
                       ('overlap', ['--variant', 'overlap']),
                       ('imbalance', ['--variant', 'sync', '--imbalance'])]:
        out = os.path.join(work, name)
        os.mkdir(out)
        p = subprocess.run(launch + ['-np', np, sor2d, out] + extra + opts, env=env,
                           capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            sys.exit('FAIL: %s exited %d\n%s' % (name, p.returncode, p.stderr[-3000:]))
        lines = dict(l.split(None, 1) for l in p.stdout.splitlines() if ' ' in l)
        for key in ('checksum', 'time.read', 'time.comm', 'time.comp', 'time.write', 'time.total'):
            if key not in lines:
                sys.exit('FAIL: %s printed no %s' % (name, key))
        with open(os.path.join(out, 'grid.bin'), 'rb') as f:
            grid = f.read()
        results[name] = (lines['checksum'], grid)
    ref = results['sync']
    if len(ref[1]) == 0:
        sys.exit('FAIL: empty grid.bin')
    for name, (checksum, grid) in results.items():
        if checksum != ref[0] or grid != ref[1]:
            sys.exit('FAIL: %s differs from sync (checksum %s vs %s)' % (name, checksum, ref[0]))
print('PASS: 4 variants, checksum %s, grid of %d bytes identical' % (ref[0].strip(), len(ref[1])))
