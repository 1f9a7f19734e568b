#!/usr/bin/env python3
"""The papers' Figure 2 with sor2d: speedup of the communication phase against
problem size for the original program, page protection in single view,
multiview, multiview with learned chains, and the hand-optimised variant.

For each transport (Open MPI shared memory, Open MPI TCP over loopback, MPICH; 2
ranks bound to cores), each process grid (2x1: row exchanges; 1x2: column
exchanges, an MPI_Type_vector) and each size, the commands run round-robin RUNS
times:

  plain    sor2d --variant sync
  single   unblock --no-pool --chain_learn=0   (single view, the default)
  multi    unblock --pool --chain_learn=0      (multiview)
  chains   unblock --pool                      (multiview + chains)
  hand     sor2d --variant hand                (Isend/Irecv, compute, Waitall)

Every unblock variant converts every eligible call (--no-predict
--recv_cover=0) and keeps every block in the pool (--pool_largest=0), so what is
compared is the mechanism, not the predictor's choice.  The table gives plain's median communication time, each variant's
speedup of the communication phase and of the total (median of per-round
plain/variant ratios: above 1 is faster), and, from one more run with
statistics, protection calls per communication phase (rank 0; sor2d exchanges
twice per iteration).  With --plot FILE it also draws the communication
speedups against n (one panel per transport and grid).

usage: multiview.py BUILD_DIR [--runs 3] [--sizes 256,512,1024,2048] [--iters N]
                    [--plot FILE]
       multiview.py --from TABLE --plot FILE   (draw a table printed before)
"""
import argparse
import json
import os
import statistics

import sor_exchange  # bench/sor_exchange.py: the cases and how they run

os.environ.setdefault('UNBLOCK_PROFILE', 'off')  # results must not depend on earlier runs

# Every eligible call converted, and every block in the pool (the default leaves
# blocks over 16 MiB outside it, single view).
CONVERT_ALL = '--no-predict --recv_cover=0 --pool_largest=0'
VARIANTS = [
    ('single', '--no-pool --chain_learn=0'),
    ('multi', '--pool --chain_learn=0'),
    ('chains', '--pool'),
]


def protect_calls(stats_dir, phases):
    st = json.load(open(os.path.join(stats_dir, 'unblock-0.json')))
    return st['protect']['calls'] / phases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build', nargs='?')
    ap.add_argument('--from', dest='table')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--sizes', default='256,512,1024,2048')
    ap.add_argument('--iters', type=int, default=50)
    ap.add_argument('--plot')
    a = ap.parse_args()
    names = [v for v, _ in VARIANTS] + ['hand']
    if a.table:
        plot(read_table(a.table, names), a.plot)
        return
    os.environ.setdefault('OMPI_ALLOW_RUN_AS_ROOT', '1')
    os.environ.setdefault('OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1')
    u = os.path.join(a.build, 'bin', 'unblock')
    print('| transport | grid | n | plain comm (ms) | ' +
          ' | '.join('%s comm, total' % v for v in names) +
          ' | protection calls per phase (single, multi, chains) |')
    print('|---|---|---|---|' + '---|' * len(names) + '---|')
    curves = {}
    for tname, launch, dims, n, d, prog in sor_exchange.cases(a.build, a.sizes, a.iters):
        cmds = {'plain': '%s %s' % (launch, prog),
                'hand': '%s %s --variant hand' % (launch, prog)}
        for v, flags in VARIANTS:
            cmds[v] = '%s %s %s %s %s' % (launch, u, CONVERT_ALL, flags, prog)
        res = sor_exchange.rounds(cmds, a.runs)
        calls = []
        for v, _ in VARIANTS:
            st = os.path.join(d, 'stats-' + v)
            sor_exchange.run_with_stats(cmds[v], u, st)
            calls.append(protect_calls(st, 2 * a.iters))

        def speedup(k, key):
            return statistics.median(p[key] / r[key] for r, p in zip(res[k], res['plain']))
        plain_comm = statistics.median(r['time.comm'] for r in res['plain'])
        row = ['%.2f, %.2f' % (speedup(k, 'time.comm'), speedup(k, 'time.total'))
               for k in names]
        print('| %s | %s | %d | %.2f | %s | %s |' % (
            tname, dims, n, 1e3 * plain_comm, ' | '.join(row),
            ', '.join('%.1f' % c for c in calls)), flush=True)
        for k in names:
            curves.setdefault((tname, dims), {}).setdefault(k, []).append(
                (n, speedup(k, 'time.comm')))
    if a.plot:
        plot(curves, a.plot)


def read_table(path, names):
    """The communication speedups of a table this script printed."""
    curves = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) != 5 + len(names) or not cells[2].isdigit():
            continue
        for k, cell in zip(names, cells[4:4 + len(names)]):
            curves.setdefault((cells[0], cells[1]), {}).setdefault(k, []).append(
                (int(cells[2]), float(cell.split(',')[0])))
    return curves


def plot(curves, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    keys = sorted(curves)
    cols = 2
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.5 * cols, 3 * rows), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        for k, pts in curves[key].items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o', label=k)
        ax.axhline(1.0, color='grey', lw=0.8)
        ax.set_xscale('log', base=2)
        ax.set_yscale('log')
        ax.set_title('%s, grid %s' % key, fontsize=9)
        ax.set_xlabel('n')
        ax.set_ylabel('comm. speedup vs plain')
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=80)


if __name__ == '__main__':
    main()
