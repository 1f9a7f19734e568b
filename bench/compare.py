#!/usr/bin/env python3
"""Runs commands in turn, several times, and compares what they print.

Each command prints lines "KEY VALUE" (a benchmark's result per size, per phase or
per call).  The commands run round-robin so that a change in the machine's load
hits all of them, each round in another order (A B C, B C A, C A B, ...): this
machine is bimodal, and a state that outlasts one run favoured the command that
always ran in the same place (2026-11-29: the program's own requests with a
profile, always third, 1.10-1.35 of plain over two whole targets runs; second in
the order, 1.00-1.13, and the first run, now third, 0.65-0.89).  For every KEY the table gives, per command, the
median and the min-max over the runs; for each command after the first (the
reference), the median of the per-round ratios to the reference with their
interquartile range, and the ratio of the best (smallest) values.  On a shared VM
noise only adds time and whole runs are often bimodal, so the best-of-runs ratio
is the steadier estimate of an overhead.

    compare.py --runs 5 --cmd "plain::CMD" --cmd "unblock::CMD" [--cmd ...]
               [--title TEXT] [--markdown] [--json FILE]
    compare.py --runs 5 --a CMD --b CMD [--label-a A --label-b B]   (two commands)

--retry-timeouts N runs again, up to N times, a command that exits 124 (its own
timeout(1) ran out: MPICH over UCX's TCP hangs in MPI_Finalize now and then, see
docs/cluster.md); the table's title says how many runs were repeated.
The commands run with UNBLOCK_PROFILE=off unless the environment sets it, so a
program's profile (docs/profile.md) does not make a result depend on the order of
the runs; a benchmark of profiles sets its own.
--done-key KEY: a run that printed KEY (its last result) and has not ended 3 s
later is ended with SIGTERM and its results kept (MPICH over UCX's TCP, again:
all the figures are out, the hang is in MPI_Finalize); the title counts them.
"""
import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time


os.environ.setdefault("UNBLOCK_PROFILE", "off")


def run_until(cmd, timeout, done_key, ended):
    """Runs cmd; once it printed a line starting with done_key, gives it 3 s to
    end, then ends it with SIGTERM (counted in ended) and keeps what it printed."""
    proc = subprocess.Popen(shlex.split(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    out, err, seen = [], [], []

    def read(stream, into, watch):
        for line in stream:
            into.append(line)
            if watch and line.split()[:1] == [done_key]:
                seen.append(time.monotonic())

    readers = [threading.Thread(target=read, args=(proc.stdout, out, True)),
               threading.Thread(target=read, args=(proc.stderr, err, False))]
    for t in readers:
        t.start()
    start, ours = time.monotonic(), False
    while proc.poll() is None:
        now = time.monotonic()
        if (seen and now - seen[0] > 3) or now - start > timeout:
            ours = True
            if seen:
                ended.append(cmd)
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            break
        time.sleep(0.05)
    for t in readers:
        t.join()
    code = proc.returncode
    if ours:
        code = 0 if seen else 124   # ended after its results, or timed out before them
    return subprocess.CompletedProcess(cmd, code, ''.join(out), ''.join(err))


def run(cmd, timeout, retries=0, repeated=None, done_key=None, ended=None):
    for _ in range(retries + 1):
        if done_key:
            p = run_until(cmd, timeout, done_key, ended)
        else:
            p = subprocess.run(shlex.split(cmd), capture_output=True, text=True,
                               timeout=timeout, stdin=subprocess.DEVNULL)
        if p.returncode != 124 or repeated is None:
            break
        repeated.append(cmd)
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


def quartiles(xs):
    if len(xs) < 2:
        return xs[0], xs[0]
    q = statistics.quantiles(xs, n=4)
    return q[0], q[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--cmd', action='append', default=[], help='LABEL::COMMAND')
    ap.add_argument('--a')
    ap.add_argument('--b')
    ap.add_argument('--label-a', default='A')
    ap.add_argument('--label-b', default='B')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--timeout', type=int, default=600)
    ap.add_argument('--title', default='')
    ap.add_argument('--markdown', action='store_true')
    ap.add_argument('--json', help='append the results, as one JSON object, to this file')
    ap.add_argument('--retry-timeouts', type=int, default=0,
                    help='run a command that exits 124 (timeout(1)) again, up to N times')
    ap.add_argument('--done-key', default=None,
                    help='end a run 3 s after it printed this key, keeping its results')
    a = ap.parse_args()
    cmds = [tuple(c.split('::', 1)) for c in a.cmd]
    if a.a and a.b:
        cmds = [(a.label_a, a.a), (a.label_b, a.b)] + cmds
    if len(cmds) < 2 or any(len(c) != 2 for c in cmds):
        sys.exit('compare.py: give at least two commands (--cmd LABEL::CMD)')
    res = [[] for _ in cmds]
    repeated, ended = [], []
    for r in range(a.runs):
        got = [None] * len(cmds)
        for j in range(len(cmds)):
            i = (j + r) % len(cmds)  # (each round in another order)
            got[i] = run(cmds[i][1], a.timeout, a.retry_timeouts, repeated, a.done_key, ended)
        for i in range(len(cmds)):
            res[i].append(got[i])
    keys = list(res[0][0].keys())

    rows = []
    for k in keys:
        row = {'key': k, 'values': {}}
        ref = [r.get(k) for r in res[0]]
        for i, (label, _) in enumerate(cmds):
            vals = [r[k] for r in res[i] if k in r]
            if not vals:
                continue
            entry = {'median': statistics.median(vals), 'min': min(vals), 'max': max(vals)}
            if i > 0:
                pairs = sorted(r[k] / b for r, b in zip(res[i], ref) if k in r and b)
                if pairs:
                    entry['ratio'] = statistics.median(pairs)
                    entry['ratio_iqr'] = quartiles(pairs)
                    entry['best_ratio'] = min(vals) / min(x for x in ref if x is not None) \
                        if min(x for x in ref if x is not None) else float('nan')
            row['values'][label] = entry
        rows.append(row)

    labels = [c[0] for c in cmds]
    if a.title:
        notes = (['%d runs timed out and were repeated' % len(repeated)] if repeated else []) + \
            (['%d runs ended after their results, hung in MPI_Finalize' % len(ended)]
             if ended else [])
        print(('### ' if a.markdown else '') + a.title +
              (' (%s)' % '; '.join(notes) if notes else ''))
    if a.markdown:
        head = ['key'] + ['%s median (min-max)' % labels[0]]
        for l in labels[1:]:
            head += ['%s median (min-max)' % l, '%s ratio (IQR)' % l, '%s best ratio' % l]
        print('\n| ' + ' | '.join(head) + ' |')
        print('|' + '---|' * len(head))
    for row in rows:
        cells = [row['key']]
        for i, l in enumerate(labels):
            e = row['values'].get(l)
            if e is None:
                cells += ['-'] * (1 if i == 0 else 3)
                continue
            cells.append('%.3f (%.3f-%.3f)' % (e['median'], e['min'], e['max']))
            if i > 0:
                if 'ratio' in e:
                    cells.append('%.3f (%.2f-%.2f)' % (e['ratio'], *e['ratio_iqr']))
                    cells.append('%.3f' % e['best_ratio'])
                else:
                    cells += ['-', '-']
        print(('| ' + ' | '.join(cells) + ' |') if a.markdown else '  '.join(cells))
    print()
    if a.json:
        with open(a.json, 'a') as f:
            f.write(json.dumps({'title': a.title, 'labels': labels, 'runs': a.runs,
                                'repeated': len(repeated), 'ended_after_results': len(ended),
                                'commands': [c[1] for c in cmds], 'rows': rows}) + '\n')


if __name__ == '__main__':
    main()
