#!/usr/bin/env python3
"""UNBLOCK_TRACE=DIR: the trace each process writes, checked line by line.

    trace_check.py UNBLOCK PROG

PROG (tests/programs/tracecalls.c) makes known reads and writes and logs each
one that moved bytes ("pid op path offset length", and "pid fork" where it
forks).  From that log this script builds the trace the format promises
(docs/fileio.md, "The I/O trace"): per process a file trace.<pid>.txt, first line
"# unblock trace 1", "F id path" before a file's first run, ids given in order of
first use and kept by a fork child, one open run per file (calls of one kind,
each starting where the previous ended) written when a call on that file breaks
it, and every open run, in id order, at fork and at exit.  The files written
must equal it exactly.  Also: with the variable unset nothing is written, and a
directory that cannot be made gets one line on stderr while the program runs on.
"""
import os
import subprocess
import sys
import tempfile


def expected(log):
    """The trace text of every process, from the program's log."""
    procs = {}   # pid -> [ids, declared, pending, lines]
    order = []

    def proc(pid, parent=None):
        if pid not in procs:
            ids = dict(procs[parent][0]) if parent else {}
            procs[pid] = [ids, set(), {}, ['# unblock trace 1']]
            order.append(pid)
        return procs[pid]

    def flush(p):
        for i in sorted(p[2]):
            op, off, ln, calls = p[2][i]
            p[3].append('%s %d %d %d %d' % (op, i, off, ln, calls))
        p[2].clear()

    first = None
    forked_from = None
    for line in log.splitlines():
        f = line.split()
        if len(f) == 2 and f[1] == 'fork':
            forked_from = f[0]
            flush(proc(f[0]))
            continue
        if len(f) != 5:
            continue
        pid, op, path, off, ln = f[0], f[1], f[2], int(f[3]), int(f[4])
        if first is None:
            first = pid
        p = proc(pid, None if pid == first else forked_from)
        ids, declared, pending, lines = p
        if path not in ids:
            ids[path] = len(ids)
        i = ids[path]
        if i not in declared:
            declared.add(i)
            lines.append('F %d %s' % (i, path))
        run = pending.get(i)
        if run and run[0] == op and off == run[1] + run[2]:
            pending[i] = (op, run[1], run[2] + ln, run[3] + 1)
        else:
            if run:
                lines.append('%s %d %d %d %d' % (run[0], i, run[1], run[2], run[3]))
            pending[i] = (op, off, ln, 1)
    for pid in order:
        flush(procs[pid])
    return {pid: '\n'.join(procs[pid][3]) + '\n' for pid in order}


def run(unblock, prog, work, env):
    r = subprocess.run([unblock, prog, work], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or not r.stdout.endswith('done\n'):
        sys.exit('FAIL: %s exited %d\n%s%s' % (prog, r.returncode, r.stdout, r.stderr))
    return r


def main():
    unblock, prog = sys.argv[1], sys.argv[2]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = os.path.realpath(tmp)
        work, traces = os.path.join(tmp, 'work'), os.path.join(tmp, 'traces')
        os.mkdir(work)
        env = dict(os.environ, UNBLOCK_TRACE=traces, UNBLOCK_CHILDREN='1')
        env.pop('UNBLOCK_STATS', None)
        r = run(unblock, prog, work, env)
        want = expected(r.stdout)
        got = {}
        for name in sorted(os.listdir(traces)):
            got[name[len('trace.'):-len('.txt')]] = open(os.path.join(traces, name)).read()
        if set(got) != set(want):
            print('FAIL: trace files of processes %s, expected %s' % (sorted(got), sorted(want)))
            failed += 1
        for pid in sorted(want):
            if got.get(pid) == want[pid]:
                print('ok: trace.%s.txt, %d lines' % (pid, want[pid].count('\n')))
            else:
                failed += 1
                print('FAIL: trace.%s.txt\n--- expected\n%s--- written\n%s' %
                      (pid, want[pid], got.get(pid, '(none)\n')))

        # Unset: nothing written anywhere.
        env.pop('UNBLOCK_TRACE')
        quiet = os.path.join(tmp, 'quiet')
        os.mkdir(quiet)
        run(unblock, prog, quiet, env)
        extra = [n for n in os.listdir(quiet) if n.startswith('trace.')]
        if extra:
            failed += 1
            print('FAIL: UNBLOCK_TRACE unset, yet %s' % extra)
        else:
            print('ok: no trace when UNBLOCK_TRACE is unset')

        # A directory that cannot be made: one line, and the program runs.
        blocker = os.path.join(tmp, 'file')
        open(blocker, 'w').close()
        env['UNBLOCK_TRACE'] = os.path.join(blocker, 'sub')
        r = run(unblock, prog, quiet, env)
        lines = [l for l in r.stderr.splitlines() if 'UNBLOCK_TRACE' in l]
        if len(lines) != 1:
            failed += 1
            print('FAIL: a bad directory gave %d lines: %r' % (len(lines), r.stderr))
        else:
            print('ok: a bad directory: %s' % lines[0])
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
