#!/usr/bin/python3
"""The papers' performance model for the read-and-distribute phase of sor2d.

Natvig & Elster (runtime sends, receives and file I/O, section IV): rank 0 reads
the input file (T_io) and sends every rank its block (T_comm).  Plain, the phase
takes T = T_io + T_comm (eq. 1).  When the sends of the first blocks start while
later parts are still being read, only the communication of the last row of
ranks is left after the read: T = T_io + T_comm / rows, which is eq. 3 for a row
distribution (rows = p) and eq. 4 for a square 2D one (rows = sqrt(p)).  The
paper assumes communication is faster than the file (true on its cluster, where
the bound was 9/7); here the file is often in the page cache, so the model is
used in its general, pipelined form over `rows` stages, which reduces to eq. 3/4
when T_io >= T_comm:

    T_overlap = T_io/rows + (rows-1)/rows * max(T_io, T_comm) + T_comm/rows

sor2d prints model.io, model.dist and model.rows; this reads a run's
results.jsonl and prints, per size and MPI, the measured phase and the bound.

usage: model.py RESULTS.jsonl   (markdown on standard output)"""
import json
import re
import sys


def bound(t_io, t_comm, rows):
    """(plain, best overlapped) read+distribute time under the model."""
    rows = max(1, int(rows))
    plain = t_io + t_comm
    over = t_io / rows + (rows - 1) / rows * max(t_io, t_comm) + t_comm / rows
    return plain, over


def rows_of(cases):
    """Yields (n, impl, case, {key: median of the reference variant})."""
    for c in cases:
        m = re.match(r'sor2d (\d+)x\d+.*, (\w+)$', c['title'])
        if not m:
            continue
        ref = c['labels'][0]
        med = {r['key']: r['values'][ref]['median'] for r in c['rows'] if ref in r['values']}
        if 'model.io' in med and 'model.dist' in med:
            yield int(m.group(1)), m.group(2), c, med


def main():
    with open(sys.argv[1]) as f:
        cases = [json.loads(l) for l in f if l.strip()]
    print('| n | MPI | rows of ranks | T_io (s) | T_comm (s) | read phase, measured (s) '
          '| model plain (s) | model overlapped (s) | speedup bound |')
    print('|---|---|---|---|---|---|---|---|---|')
    for n, impl, _, med in sorted(rows_of(cases), key=lambda x: (x[1], x[0])):
        plain, over = bound(med['model.io'], med['model.dist'], med.get('model.rows', 1))
        print('| %d | %s | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.2f |' % (
            n, impl, med.get('model.rows', 1), med['model.io'], med['model.dist'],
            med.get('time.read', float('nan')), plain, over, plain / over if over else 1))


if __name__ == '__main__':
    main()
