#!/usr/bin/env python3
"""Runs two commands alternately, several times, and compares what they print.

Each command prints lines "KEY VALUE" (a benchmark's result per size or per call).
For every KEY the medians over --runs runs of A and of B are printed, the median
of the per-pair ratios B/A (runs alternate A B A B ..., so a change in the
machine's load hits both members of a pair) with its interquartile range, B-A,
and the ratio of the best (smallest) values of B and A.  On a shared VM the noise
only adds time, and whole runs are often bimodal (the same command lands in a fast
or a slow mode), so the best-of-runs ratio is the steadier estimate of an overhead.

    compare.py --runs 5 --a "CMD" --b "CMD" [--label-a plain --label-b unblock]
               [--title TEXT] [--markdown]
"""
import argparse
import shlex
import statistics
import subprocess
import sys


def run(cmd, timeout):
    p = subprocess.run(shlex.split(cmd), capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        sys.exit('command failed (%d): %s\n%s' % (p.returncode, cmd, p.stderr[-2000:]))
    out = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2:
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--a', required=True)
    ap.add_argument('--b', required=True)
    ap.add_argument('--label-a', default='A')
    ap.add_argument('--label-b', default='B')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--timeout', type=int, default=600)
    ap.add_argument('--title', default='')
    ap.add_argument('--markdown', action='store_true')
    a = ap.parse_args()
    res = {'a': [], 'b': []}
    for _ in range(a.runs):
        res['a'].append(run(a.a, a.timeout))
        res['b'].append(run(a.b, a.timeout))
    keys = list(res['a'][0].keys())
    if a.title:
        print(('### ' if a.markdown else '') + a.title)
    if a.markdown:
        print('\n| key | %s | %s | ratio | ratio IQR | difference | best-of-runs ratio |'
              % (a.label_a, a.label_b))
        print('|---|---|---|---|---|---|---|')
    else:
        print('%-12s %12s %12s %8s %15s %10s %8s' % ('key', a.label_a, a.label_b, 'ratio',
                                                     'ratio IQR', 'diff', 'best'))
    for k in keys:
        va = statistics.median(r[k] for r in res['a'] if k in r)
        vb = statistics.median(r[k] for r in res['b'] if k in r)
        pairs = sorted(rb[k] / ra[k] for ra, rb in zip(res['a'], res['b'])
                       if k in ra and k in rb and ra[k])
        ratio = statistics.median(pairs) if pairs else float('nan')
        q = statistics.quantiles(pairs, n=4) if len(pairs) >= 2 else [ratio, ratio, ratio]
        iqr = '%.3f-%.3f' % (q[0], q[2])
        best_a = min(r[k] for r in res['a'] if k in r)
        best_b = min(r[k] for r in res['b'] if k in r)
        best = best_b / best_a if best_a else float('nan')
        if a.markdown:
            print('| %s | %.3f | %.3f | %.3f | %s | %+.3f | %.3f |'
                  % (k, va, vb, ratio, iqr, vb - va, best))
        else:
            print('%-12s %12.3f %12.3f %8.3f %15s %+10.3f %8.3f'
                  % (k, va, vb, ratio, iqr, vb - va, best))
    print()


if __name__ == '__main__':
    main()
