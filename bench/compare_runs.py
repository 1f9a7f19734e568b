#!/usr/bin/env python3
"""compare_runs.py — two runs of bench/run (before and after a change), case by case.

    bench/compare_runs.py BEFORE/results.jsonl AFTER/results.jsonl [--markdown]

For every (title, key) both runs measured, the unblock/plain ratio of each run
(the median of its per-round ratios, with its interquartile range) and whether the
change made it worse: after > before by more than the larger of 3 % and the
before run's spread (its upper quartile), the rule of `bench/run`'s users.  A
ratio of another label than "unblock" (MPI-progress) is left out: it does not
measure unblock.  Exits 0 always: it reports, it does not judge speed.
"""
import argparse
import json


def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            case = json.loads(line)
            for row in case['rows']:
                u = row['values'].get('unblock')
                if u and 'ratio' in u:
                    out[(case['title'], row['key'])] = u
    return out


def worse(b, a):
    """Whether after (a) is worse than before (b) beyond the noise."""
    hi = b.get('ratio_iqr', [b['ratio'], b['ratio']])[1]
    return a['ratio'] > max(b['ratio'] * 1.03, hi)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('before')
    ap.add_argument('after')
    ap.add_argument('--markdown', action='store_true')
    a = ap.parse_args()
    before, after = load(a.before), load(a.after)
    both = [k for k in before if k in after]
    print('| case | key | before ratio (IQR) | after ratio (IQR) | after/before | worse beyond noise |')
    print('|---|---|---|---|---|---|')
    n_worse = 0
    for k in both:
        b, x = before[k], after[k]
        w = worse(b, x)
        n_worse += w
        fmt = lambda v: '%.3f (%.2f-%.2f)' % (v['ratio'], *v.get('ratio_iqr', [v['ratio']] * 2))
        print('| %s | %s | %s | %s | %.3f | %s |' % (k[0], k[1], fmt(b), fmt(x),
                                                     x['ratio'] / b['ratio'] if b['ratio'] else 0,
                                                     '**yes**' if w else 'no'))
    print()
    print('%d cases in both runs, %d worse beyond the noise' % (len(both), n_worse))


if __name__ == '__main__':
    main()
