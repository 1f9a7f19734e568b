#!/usr/bin/env python3
"""sor2d's sync variant under unblock: the communication phase per size,
decomposition and transport, and how many calls were converted.

For each transport (Open MPI shared memory, Open MPI TCP over loopback, MPICH; 2
ranks bound to cores), each process grid (2x1: row exchanges, contiguous; 1x2:
column exchanges, an MPI_Type_vector) and each size, three commands run
round-robin RUNS times: plain, unblock (defaults: predictor on), and unblock
with every eligible call converted (--no-predict --recv_cover=0).  The table gives
the median communication and total times of plain, the median per-round ratios
of the other two to plain (below 1: faster), and, from one more run of each
unblock command with statistics, the blocking calls converted and passed through
(summed over ranks) with the main reasons.

usage: sor_exchange.py BUILD_DIR [--runs 3] [--sizes 256,512,1024,2048] [--iters N]
"""
import argparse
import glob
import json
import os
import statistics
import tempfile

import compare  # bench/compare.py

os.environ.setdefault('UNBLOCK_PROFILE', 'off')  # results must not depend on earlier runs

TCP = '--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo'
TRANSPORTS = [
    ('Open MPI shm', 'openmpi', 'mpirun.openmpi -np 2 --bind-to core'),
    ('Open MPI TCP', 'openmpi', 'mpirun.openmpi -np 2 --bind-to core ' + TCP),
    ('MPICH', 'mpich', 'mpirun.mpich -np 2 -bind-to core'),
]


def run(cmd):
    return compare.run(cmd, 600)  # the "KEY VALUE" lines it printed


def cases(build, sizes, iters):
    """(transport, launch command, grid, n, work directory, sor2d command) for each
    transport whose sor2d is built, each grid and each size of `sizes` (comma
    separated); the work directory lives until the next case."""
    for name, impl, launch in TRANSPORTS:
        sor = os.path.join(build, 'bench', impl, 'sor2d')
        if not os.access(sor, os.X_OK):
            continue
        for dims in ('2x1', '1x2'):
            for n in [int(x) for x in sizes.split(',')]:
                with tempfile.TemporaryDirectory() as d:
                    yield name, launch, dims, n, d, '%s %s --n %d --iters %d --k %d --dims %s' % (
                        sor, d, n, iters, iters, dims)


def rounds(cmds, runs):
    """Runs the commands round-robin `runs` times: {name: [results, ...]}."""
    res = {k: [] for k in cmds}
    for _ in range(runs):
        for k, c in cmds.items():
            res[k].append(run(c))
    return res


def run_with_stats(cmd, unblock, stats_dir):
    """Runs an unblock command once more, writing statistics to stats_dir."""
    run(cmd.replace(unblock, '%s --stats=%s' % (unblock, stats_dir), 1))


def counts(stats_dir):
    conv = passed = 0
    why = {}
    for f in glob.glob(os.path.join(stats_dir, 'unblock-*.json')):
        c = json.load(open(f))['comm']
        conv += c['async']
        for k, v in c['passthrough_why'].items():
            passed += v
            why[k] = why.get(k, 0) + v
    top = ', '.join('%s %d' % kv for kv in sorted(why.items(), key=lambda kv: -kv[1]) if kv[1])
    return conv, passed, top


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--sizes', default='256,512,1024,2048')
    ap.add_argument('--iters', type=int, default=100)
    a = ap.parse_args()
    os.environ.setdefault('OMPI_ALLOW_RUN_AS_ROOT', '1')
    os.environ.setdefault('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')
    u = os.path.join(a.build, 'bin', 'unblock')
    print('| transport | grid | n | plain comm (ms) | plain total (ms) | unblock comm, total | '
          'all converted comm, total | converted / passed (unblock) | converted / passed '
          '(all) |')
    print('|---|---|---|---|---|---|---|---|---|')
    for name, launch, dims, n, d, prog in cases(a.build, a.sizes, a.iters):
        cmds = {'plain': '%s %s' % (launch, prog),
                'unblock': '%s %s %s' % (launch, u, prog),
                'all': '%s %s --no-predict --recv_cover=0 %s' % (launch, u, prog)}
        res = rounds(cmds, a.runs)

        def med(k, key):
            return statistics.median(r[key] for r in res[k])

        def ratio(k, key):
            return statistics.median(r[key] / p[key] for r, p in zip(res[k], res['plain']))
        cnt = {}
        for k in ('unblock', 'all'):
            st = os.path.join(d, 'stats-' + k)
            run_with_stats(cmds[k], u, st)
            cnt[k] = counts(st)
        print('| %s | %s | %d | %.2f | %.2f | %.2f, %.2f | %.2f, %.2f | %d / %d (%s) | '
              '%d / %d (%s) |' % (
                  name, dims, n, 1e3 * med('plain', 'time.comm'),
                  1e3 * med('plain', 'time.total'), ratio('unblock', 'time.comm'),
                  ratio('unblock', 'time.total'), ratio('all', 'time.comm'),
                  ratio('all', 'time.total'), cnt['unblock'][0], cnt['unblock'][1],
                  cnt['unblock'][2], cnt['all'][0], cnt['all'][1], cnt['all'][2]),
              flush=True)


if __name__ == '__main__':
    main()
