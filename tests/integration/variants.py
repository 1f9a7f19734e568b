#!/usr/bin/env python3
"""The variants of a benchmark program must compute the same result, which is what
makes them comparable in the benchmarks:
  sor2d (sync, hand, overlap, sync with --imbalance, sync with --read direct): the
  same grid.bin and checksum;
  btio (independent, collective, posix): the same output file (its checksum).

usage: variants.py {sor2d,btio} {openmpi,mpich} NP PROGRAM [program options]"""
import os
import subprocess
import sys
import tempfile

kind, impl, np, prog, extra = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
VARIANTS = {
    'sor2d': ([('sync', ['--variant', 'sync']), ('hand', ['--variant', 'hand']),
               ('overlap', ['--variant', 'overlap']),
               ('imbalance', ['--variant', 'sync', '--imbalance']),
               ('direct', ['--variant', 'sync', '--read', 'direct'])],
              ('time.read', 'time.comm', 'time.comp', 'time.write', 'time.total',
               'model.io', 'model.dist', 'model.rows'), 'grid.bin'),
    'btio': ([(m, ['--mode', m]) for m in ('independent', 'collective', 'posix')],
             ('time.write', 'time.comp', 'time.total', 'bw.mbs'), None),
}
variants, keys, outfile = VARIANTS[kind]
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
env = {k: v for k, v in env.items() if not (k.startswith('UNBLOCK_') and k != 'UNBLOCK_PROFILE')}
launch = (['mpirun.openmpi', '--oversubscribe'] if impl == 'openmpi' else ['mpirun.mpich'])
results = {}
with tempfile.TemporaryDirectory() as work:
    for name, opts in variants:
        out = os.path.join(work, name)
        os.mkdir(out)
        p = subprocess.run(launch + ['-np', np, prog, out] + extra + opts, env=env,
                           capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
        if p.returncode != 0:
            sys.exit('FAIL: %s exited %d\n%s' % (name, p.returncode, p.stderr[-3000:]))
        lines = dict(l.split(None, 1) for l in p.stdout.splitlines() if ' ' in l)
        for key in ('checksum',) + keys:
            if key not in lines:
                sys.exit('FAIL: %s printed no %s' % (name, key))
        data = b''
        if outfile:
            with open(os.path.join(out, outfile), 'rb') as f:
                data = f.read()
            if not data:
                sys.exit('FAIL: %s wrote an empty %s' % (name, outfile))
        results[name] = (lines['checksum'].strip(), data)
    ref_name = variants[0][0]
    ref = results[ref_name]
    for name, (checksum, data) in results.items():
        if checksum != ref[0] or data != ref[1]:
            sys.exit('FAIL: %s differs from %s (checksum %s vs %s)' % (name, ref_name, checksum,
                                                                      ref[0]))
print('PASS: %d variants of %s, checksum %s, identical' % (len(results), kind, ref[0]))
