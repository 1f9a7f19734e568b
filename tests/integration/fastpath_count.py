#!/usr/bin/env python3
"""The instructions a send and a receive that unblock leaves to MPI cost on their
way to MPI, counted by callgrind (docs/performance.md, "The fast path").

    fastpath_count.py LIB PROG:BOUND[:CALLS] [PROG:BOUND[:CALLS] ...]

Each PROG (tests/programs/selfsend.c or .F90: N blocking sends of 8 bytes to
itself, each received at once, CALLS 2 per round trip, the default;
selfsendrecv.c: N MPI_Sendrecv of 8 KiB, at a site the predictor runs as the
original call, CALLS 1; selfrefused.c: N rounds of a 4 KiB MPI_Isend to
itself, an MPI_Recv of it into a block never protected (its site refused for its
memory) and the MPI_Wait, CALLS 3; mpiiowrites.c: N 8-byte MPI_File_write_at that MPI-IO
write-behind takes, CALLS 1; mpiiostrided.c: N at every other cell and N between,
CALLS 2; filecalls.c: N rounds of an 8-byte pwrite, an lseek and
an 8-byte read that unblock leaves to the kernel, CALLS 3) runs twice under
valgrind --tool=callgrind with LIB preloaded, for N1 and N2 rounds, in a
temporary directory; the instructions executed inside LIB (every function of
it, exclusive counts) differ by what N2 - N1 rounds cost there, CALLS calls
each.  Fails when that is more than the program's BOUND instructions per call,
or when a program's data were wrong.  Exits 77 (skipped) without valgrind.  MPI
programs: Open MPI only (MPICH's ch4:ucx spins in MPI_Init for minutes under
valgrind).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

N1, N2 = 400, 1400


def lib_instructions(lib, prog, n, tmp):
    out = os.path.join(tmp, 'cg.%s.%d' % (os.path.basename(prog), n))
    env = dict(os.environ, LD_PRELOAD=lib, OMPI_ALLOW_RUN_AS_ROOT='1',
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    env.pop('UNBLOCK_STATS', None)
    r = subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out,
                        prog, str(n)], env=env, capture_output=True, text=True, timeout=600,
                       cwd=tmp)
    if r.returncode != 0 or 'ok' not in r.stdout:
        sys.exit('FAIL: %s %d: exit %d\n%s%s' % (prog, n, r.returncode, r.stdout, r.stderr[-2000:]))
    ann = subprocess.run(['callgrind_annotate', '--inclusive=no', '--threshold=100', out],
                         capture_output=True, text=True, check=True).stdout
    name = os.path.basename(lib)
    total = 0
    for line in ann.splitlines():
        m = re.match(r'\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+\S.*\[(.*)\]\s*$', line)
        if m and os.path.basename(m.group(2)) == name:
            total += int(m.group(1).replace(',', ''))
    return total


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    lib = os.path.realpath(sys.argv[1])
    progs = []
    for p in sys.argv[2:]:
        parts = p.split(':')
        progs.append((parts[0], int(parts[1]), int(parts[2]) if len(parts) > 2 else 2))
    if not shutil.which('valgrind') or not shutil.which('callgrind_annotate'):
        print('skipped: valgrind is not installed')
        return 77
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for prog, bound, calls in progs:
            a = lib_instructions(lib, prog, N1, tmp)
            b = lib_instructions(lib, prog, N2, tmp)
            per_call = (b - a) / (float(calls) * (N2 - N1))
            verdict = 'ok' if per_call <= bound else 'FAIL'
            failed += verdict != 'ok'
            print('%s: %s: %.1f instructions of unblock per call (bound %d)'
                  % (verdict, os.path.basename(prog), per_call, bound))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
