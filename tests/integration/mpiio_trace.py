#!/usr/bin/env python3
"""UNBLOCK_TRACE with MPI-IO write-behind: the program's own MPI_File_write* calls
are in the trace, at their places in the file (docs/mpiio.md, "The I/O trace").

    mpiio_trace.py IMPL UNBLOCK MPIIO_PROGRAM

tests/programs/mpiio.c at 2 ranks writes cells8.dat as interleaved 8-byte cells
through independent writes: the ranks' traces together must cover every byte of
it exactly once, each rank its own cells, in runs the trace format allows."""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

IMPL, UNBLOCK, PROG = sys.argv[1:4]


def main():
    tmp = tempfile.mkdtemp(prefix='unblock-mpiio-trace-')
    try:
        out, tr = os.path.join(tmp, 'out'), os.path.join(tmp, 'trace')
        os.makedirs(out)
        launch = (['mpirun.openmpi', '--oversubscribe', '-np', '2'] if IMPL == 'openmpi'
                  else ['mpirun.mpich', '-np', '2'])
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
        r = subprocess.run(launch + [UNBLOCK, '--no-profile', '--trace=' + tr, PROG, out],
                           env=env, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            sys.exit('FAIL: the run exited %d\n%s' % (r.returncode, r.stderr[-2000:]))
        target = os.path.realpath(os.path.join(out, 'cells8.dat'))
        size = os.path.getsize(target)
        covered = bytearray(size)
        files = sorted(glob.glob(os.path.join(tr, 'trace.*.txt')))
        if len(files) != 2:
            sys.exit('FAIL: %d trace files, not one per rank' % len(files))
        for path in files:
            ids = {}
            lines = open(path).read().splitlines()
            if not lines or lines[0] != '# unblock trace 1':
                sys.exit('FAIL: %s: no header' % path)
            for line in lines[1:]:
                f = line.split(' ', 2)
                if f[0] == 'F':
                    ids[f[1]] = f[2]
                    continue
                kind, fid, off, length, calls = line.split()
                if fid not in ids:
                    sys.exit('FAIL: %s: file %s used before its F line' % (path, fid))
                if ids[fid] != target or kind != 'W':
                    continue
                off, length = int(off), int(length)
                if int(calls) < 1 or off + length > size:
                    sys.exit('FAIL: %s: a run past the end or of no call: %s' % (path, line))
                for b in range(off, off + length):
                    covered[b] += 1
        bad = [i for i, c in enumerate(covered) if c != 1]
        if bad:
            sys.exit('FAIL: %d bytes of %d traced %s times, first at %d'
                     % (len(bad), size, covered[bad[0]], bad[0]))
        print('ok: %d bytes of cells8.dat traced once each, from 2 ranks' % size)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
