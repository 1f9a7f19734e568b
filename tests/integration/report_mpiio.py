#!/usr/bin/env python3
"""The MPI-IO section of `unblock report` (docs/stats.md, "mpiio"): the mpiio test
program's default cases at 3 ranks under unblock with statistics; each rank's row
and the totals of the table, the flushes by cause and the calls answered
otherwise than by MPI are checked against the statistics files.

  report_mpiio.py UNBLOCK {openmpi,mpich} MPIIO_PROGRAM"""
import glob
import json
import os
import subprocess
import sys
import tempfile

UNBLOCK, MPI, PROG = sys.argv[1:4]
COLUMNS = ['writes', 'bytes', 'pieces_sent', 'pieces_received', 'blocks_written',
           'blocks_written_remote', 'blocks_kept', 'blocks_written_full', 'evictions',
           'peak_buffered', 'errors_deferred']
CAUSES = ['local', 'collective', 'bound', 'idle', 'close', 'finalize', 'exit', 'news', 'see']


def fail(msg):
    sys.exit('FAIL: ' + msg)


with tempfile.TemporaryDirectory() as tmp:
    out, st = os.path.join(tmp, 'out'), os.path.join(tmp, 'stats')
    os.mkdir(out)
    launch = (['mpirun.openmpi', '--oversubscribe', '--allow-run-as-root'] if MPI == 'openmpi'
              else ['mpirun.mpich'])
    r = subprocess.run(launch + ['-np', '3', UNBLOCK, '--no-profile', '--stats=' + st, PROG, out],
                       capture_output=True, text=True, timeout=240)
    if r.returncode != 0:
        fail('the run exited %d: %s' % (r.returncode, r.stderr[-2000:]))
    docs = []
    for path in sorted(glob.glob(os.path.join(st, 'unblock-*.json'))):
        with open(path) as f:
            docs.append(json.load(f))
    if len(docs) != 3:
        fail('%d statistics files, not 3' % len(docs))
    r = subprocess.run([UNBLOCK, 'report', '--text', st], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        fail('unblock report exited %d: %s' % (r.returncode, r.stderr))
    lines = r.stdout.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith('MPI-IO write-behind (')]
    if len(at) != 1:
        fail('no MPI-IO section in the report:\n' + r.stdout)
    sec = lines[at[0]:]
    if 'two-stage' not in sec[0]:
        fail('the heading does not say two-stage: ' + sec[0])
    rows = {l.split()[0]: l.split()[1:] for l in sec[2:7] if l.strip()}
    for d in docs:
        rank = str(d['rank'])
        m = d['mpiio']
        want = [str(m[c]) for c in COLUMNS]
        if rows.get(rank) != want:
            fail('rank %s: the report says %s, its file %s' % (rank, rows.get(rank), want))
    total = [str(sum(d['mpiio'][c] for d in docs)) for c in COLUMNS]
    if rows.get('total') != total:
        fail('totals: the report says %s, the files %s' % (rows.get('total'), total))
    flush = [l for l in sec if l.strip().startswith('flushes (all ranks), by cause:')]
    want = ', '.join('%s %d' % (c, sum(d['mpiio']['flushes'][c] for d in docs)) for c in CAUSES)
    if len(flush) != 1 or not flush[0].strip().endswith(want):
        fail('flushes: the report says %s, the files %s' % (flush, want))
    sizes = sum(d['mpiio']['sizes_answered'] for d in docs)
    if sizes == 0:
        fail('no MPI_File_get_size answered without a flush in the files')
    if 'MPI_File_get_size answered without a flush: %d' % sizes not in r.stdout:
        fail('the report does not say %d get_size calls were answered' % sizes)
    print('ok: %s rows, totals, %s, %d get_size calls answered' % (MPI, want, sizes))
