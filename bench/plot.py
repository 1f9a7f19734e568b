#!/usr/bin/python3
"""Plots of a benchmark run (bench/run), in the style of the papers' figures.

Reads BUILD/bench/results.jsonl and writes PNGs next to it:
  pioman.png       MPI_Send time against message size (log-log), one panel per
                   transport, one line per way of running (PIOMan's figure)
  sor-phases.png   SOR phase times per variant and problem size, relative to the
                   sync variant without unblock (bars, one panel per size)
  sor-speedup.png  the same as lines against problem size, one panel per phase, with
                   the performance model's bound for the read phase (bench/model.py;
                   Natvig & Elster's Figures 2-4)

usage: plot.py RESULTS.jsonl OUTDIR   (Debian's python3-matplotlib)"""
import json
import os
import sys

import matplotlib
matplotlib.use('Agg')
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def pioman(cases, out):
    cases = [c for c in cases if c['title'].startswith('send time')]
    if not cases:
        return
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 4), squeeze=False)
    for ax, c in zip(axes[0], cases):
        for label in c['labels']:
            xs, ys = [], []
            for row in c['rows']:
                v = row['values'].get(label)
                if v:
                    xs.append(int(row['key'].split('.')[1]))
                    ys.append(v['median'])
            ax.plot(xs, ys, marker='o', label=label)
        ax.set_xscale('log', base=2)
        ax.set_yscale('log')
        ax.set_xlabel('message size (bytes)')
        ax.set_ylabel('MPI_Send + buffer write (µs)')
        ax.set_title(c['title'].split('—')[-1].strip())
        ax.axhline(50000, color='grey', linestyle=':', linewidth=1)
        ax.set_ylim(10, 2e5)  # the same scale on every panel
        ax.grid(True, which='both', alpha=0.3)
        ax.legend()
    fig.suptitle('PIOMan test: sender time while the receiver computes 50 ms (median)')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'pioman.png'), dpi=100)
    plt.close(fig)


def sor(cases, out):
    cases = [c for c in cases if c['title'].startswith('sor2d')]
    if not cases:
        return
    phases = ['time.read', 'time.comm', 'time.comp', 'time.write', 'time.total']
    fig, axes = plt.subplots(1, len(cases), figsize=(4.5 * len(cases), 4), squeeze=False)
    for ax, c in zip(axes[0], cases):
        ref = {r['key']: r['values'][c['labels'][0]]['median'] for r in c['rows']}
        width = 0.8 / len(c['labels'])
        for i, label in enumerate(c['labels']):
            speed = []
            for p in phases:
                row = next((r for r in c['rows'] if r['key'] == p), None)
                v = row['values'].get(label) if row else None
                speed.append(ref[p] / v['median'] if v and v['median'] else 0)
            ax.bar([j + i * width for j in range(len(phases))], speed, width, label=label)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(phases))])
        ax.set_xticklabels([p.split('.')[1] for p in phases])
        ax.axhline(1.0, color='grey', linewidth=1)
        ax.set_ylabel('speedup over sync (median)')
        ax.set_title(c['title'].replace('sor2d ', ''), fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle('Red-Black SOR: speedup per phase against the synchronous code')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'sor-phases.png'), dpi=100)
    plt.close(fig)


def sor_speedup(cases, out):
    found = list(model.rows_of(cases))
    if not found:
        return
    phases = ['time.read', 'time.comm', 'time.write', 'time.total']
    fig, axes = plt.subplots(1, len(phases), figsize=(4.2 * len(phases), 4), squeeze=False)
    lines = {}  # (impl, label) -> {phase: [(n, speedup)]}
    bounds = {}  # impl -> [(n, model speedup bound)]
    for n, impl, c, med in found:
        ref = c['labels'][0]
        for label in c['labels'][1:]:
            for p in phases:
                row = next((r for r in c['rows'] if r['key'] == p), None)
                v = row['values'].get(label) if row else None
                if v and v['median'] and row['values'][ref]['median']:
                    lines.setdefault((impl, label), {}).setdefault(p, []).append(
                        (n, row['values'][ref]['median'] / v['median']))
        plain, over = model.bound(med['model.io'], med['model.dist'], med.get('model.rows', 1))
        bounds.setdefault(impl, []).append((n, plain / over if over else 1))
    for ax, p in zip(axes[0], phases):
        for (impl, label), per in sorted(lines.items()):
            pts = sorted(per.get(p, []))
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker='o',
                        label='%s, %s' % (label, impl))
        if p == 'time.read':
            for impl, pts in sorted(bounds.items()):
                pts = sorted(pts)
                ax.plot([x for x, _ in pts], [y for _, y in pts], linestyle='--',
                        label='model bound, %s' % impl)
        ax.set_xscale('log', base=2)
        ax.axhline(1.0, color='grey', linewidth=1)
        ax.set_xlabel('problem size n (n x n grid)')
        ax.set_ylabel('speedup over sync, plain (median)')
        ax.set_title(p.split('.')[1])
        ax.grid(True, which='both', alpha=0.3)
        ax.legend(fontsize=6)
    fig.suptitle('Red-Black SOR: speedup per phase against problem size')
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'sor-speedup.png'), dpi=100)
    plt.close(fig)


def main():
    cases = load(sys.argv[1])
    out = sys.argv[2]
    pioman(cases, out)
    sor(cases, out)
    sor_speedup(cases, out)


if __name__ == '__main__':
    main()
