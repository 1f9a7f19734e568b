#!/usr/bin/env python3
"""The transparency harness: runs a program without and with unblock and compares.

    transparency.py --unblock PATH --launch {openmpi,mpich,srun,serial} [--np N] [--tcp]
                    [--srun-mpi PLUGIN] [--srun-arg ARG ...] [--sbatch [--sbatch-arg ARG ...]]
                    [--cluster SCRIPT --cluster-name NAME] [--where VIA]
                    [--expect KEY=V | KEY>V | KEY<V ...] [--expect-total KEY>V ...]
                    [--expect-report TEXT ...] [--compare-stdout] [--compare-with CMD ...]
                    [--no-stats] [--unblock-arg ARG ...] -- PROGRAM ARGS...

Under Slurm (SLURM_CONF set, e.g. by scripts/slurm-local run): --launch srun runs
`srun -n N --mpi=PLUGIN`; --sbatch puts the launch (srun, or mpirun inside the
allocation) in a job script given to `sbatch --wait -n N`, whose output file
stands for the run's stdout and stderr.

With --cluster, the ranks run on the two nodes of scripts/cluster's cluster NAME
(which must be up), N/2 on each, through its `mpirun` subcommand.

Every `{out}` in ARGS becomes the run's output directory (a fresh one per run).
Passes when
  * both runs exit 0 (each bounded by --timeout), and neither says MISMATCH (on
    stdout, stderr or in any file it wrote: the word test programs print for
    wrong data),
  * the two output directories hold the same files with the same bytes
    (per-rank results and every file the program wrote),
  * with --compare-stdout, both runs printed the same standard output,
  * every --compare-with CMD (a command line, {plain} and {unblock} standing for
    the two output directories, e.g. a format's own diff tool) exits 0,
  * the run under unblock printed nothing of unblock's own on stderr,
  * with stats: one unblock-*.json per process (N ranks, or 1), each satisfying
    every --expect (KEY is a dotted path such as comm.functions.MPI_Send), their
    sum satisfying every --expect-total, and `unblock report` reads them (its
    text holding every --expect-report TEXT),
  * with --where VIA: the job was one of N ranks, each once: the program wrote
    where-<r>.txt (tests/programs/where.h) for r = 0..N-1 and no other, each
    "rank r of N on HOST via VIA" (printed: the host of every rank).
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

TCP = ['--mca', 'pml', 'ob1', '--mca', 'btl', 'tcp,self', '--mca', 'btl_tcp_if_include', 'lo']


def launcher(kind, np, tcp, a=None):
    if a is not None and a.cluster:
        if np % 2:
            sys.exit('FAIL: --cluster needs an even --np (half the ranks on each node)')
        return [a.cluster, '--name', a.cluster_name, 'mpirun', kind, '--per-node', str(np // 2)]
    if kind == 'openmpi':
        cmd = ['mpirun.openmpi', '--oversubscribe', '-np', str(np)]
        if a is not None and a.sbatch and os.geteuid() == 0:
            cmd.append('--allow-run-as-root')  # the job may not get our environment
        return cmd + (TCP if tcp else [])
    if kind == 'mpich':
        return ['mpirun.mpich', '-np', str(np)]
    if kind == 'srun':
        # -Q: no "job queued" notes; a rank that fails ends the step, never a hang.
        return ['srun', '-Q', '--kill-on-bad-exit=1', '-n', str(np),
                '--mpi=' + (a.srun_mpi if a else 'none')] + (a.srun_arg if a else [])
    return []


def run_sbatch(cmd, env, timeout, a, work, mode):
    """Runs cmd as the one line of a job script through `sbatch --wait`; returns a
    CompletedProcess whose stdout and stderr are both the job's output file."""
    script = os.path.join(work, mode + '.job')
    output = os.path.join(work, mode + '.job.out')
    with open(script, 'w') as f:
        f.write('#!/bin/sh\n# the %s run of a transparency test\nexec %s\n' % (
            mode, ' '.join(shlex.quote(x) for x in cmd)))
    os.chmod(script, 0o755)
    p = run(['sbatch', '--wait', '--quiet', '-n', str(a.np), '-t', '10', '-o', output]
            + a.sbatch_arg + [script], env, timeout)
    try:
        with open(output, 'rb') as f:
            out = f.read()
    except OSError:
        out = b''
    return subprocess.CompletedProcess(p.args, p.returncode, out + p.stdout, out + p.stderr)


def check_where(files, np, via, mode):
    """The job had np ranks, each once, started the way `via` says."""
    names = sorted(n for n in files if re.fullmatch(r'where-\d+\.txt', n))
    want = ['where-%d.txt' % r for r in range(np)]
    if names != sorted(want):
        sys.exit('FAIL: the %s run: rank files %s, expected %s (a job of singletons, or '
                 'ranks missing?)' % (mode, names, sorted(want)))
    hosts = []
    for r in range(np):
        line = files['where-%d.txt' % r].decode(errors='replace').strip()
        m = re.fullmatch(r'rank (\d+) of (\d+) on (\S+) via (.+)', line)
        if not m or int(m.group(1)) != r or int(m.group(2)) != np or m.group(4) != via:
            sys.exit('FAIL: the %s run: where-%d.txt says %r, expected "rank %d of %d on '
                     'HOST via %s"' % (mode, r, line, r, np, via))
        hosts.append(m.group(3))
    return ', '.join('rank %d on %s' % (r, h) for r, h in enumerate(hosts))


def run(cmd, env, timeout, may_retry=False):
    """The finished process; None when it timed out and may be run again.  With
    may_retry the command runs under timeout(1), whose SIGTERM lets mpirun end the
    ranks it started (a SIGKILL would leave them behind)."""
    if may_retry:
        cmd = ['timeout', '-k', '10', str(timeout)] + cmd
    try:
        p = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=timeout + 30 if may_retry else timeout)
        if not (may_retry and p.returncode == 124):
            return p
    except subprocess.TimeoutExpired:
        pass
    if may_retry:
        return None
    sys.exit('FAIL: timed out after %ds: %s' % (timeout, ' '.join(cmd)))


def tree(d):
    out = {}
    for root, _, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            with open(p, 'rb') as fh:
                out[os.path.relpath(p, d)] = fh.read()
    return out


def lookup(doc, key):
    for part in key.split('.'):
        if not isinstance(doc, dict) or part not in doc:
            return 0
        doc = doc[part]
    return doc


def nest(key, value):
    """{"a": {"b": value}} for key "a.b"."""
    doc = value
    for part in reversed(key.split('.')):
        doc = {part: doc}
    return doc


def check_expect(doc, exp, name):
    for op in ('>=', '<=', '>', '<', '='):
        if op in exp:
            key, want = exp.split(op, 1)
            break
    else:
        sys.exit('FAIL: bad --expect %s' % exp)
    got = lookup(doc, key)
    if isinstance(got, bool):
        want = want.lower() in ('true', '1')
    elif isinstance(got, (int, float, str)):
        want = type(got)(want)
    ok = {'=': got == want, '>': got > want, '>=': got >= want, '<': got < want,
          '<=': got <= want}[op]
    if not ok:
        sys.exit('FAIL: %s: %s is %r, expected %s%s' % (name, key, got, op, want))


def mismatch_in(run_out):
    """Where a run's output says MISMATCH (the word test programs print for wrong
    data): 'stdout', 'stderr' or a file's name; None when nowhere."""
    files, stdout, stderr = run_out
    if b'MISMATCH' in stdout:
        return 'stdout'
    if b'MISMATCH' in stderr:
        return 'stderr'
    for name in sorted(files):
        if b'MISMATCH' in files[name]:
            return name
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--unblock', required=True)
    ap.add_argument('--launch', default='serial', choices=['openmpi', 'mpich', 'srun', 'serial'])
    ap.add_argument('--srun-mpi', default='none', help='srun --mpi=PLUGIN (with --launch srun)')
    ap.add_argument('--srun-arg', action='append', default=[], help='more srun arguments')
    ap.add_argument('--sbatch', action='store_true',
                    help='launch from a job script run by sbatch -n NP --wait')
    ap.add_argument('--sbatch-arg', action='append', default=[], help='more sbatch arguments')
    ap.add_argument('--where', default=None,
                    help='check where-<r>.txt: NP ranks, each once, started via VIA')
    ap.add_argument('--np', type=int, default=1)
    ap.add_argument('--tcp', action='store_true')
    ap.add_argument('--cluster', default=None,
                    help='scripts/cluster: run the ranks on its two nodes (openmpi or mpich)')
    ap.add_argument('--cluster-name', default='ubn')
    ap.add_argument('--retry-timeouts', type=int, default=0,
                    help='run a run that timed out again, up to N times, saying so (MPICH over '
                         'UCX\'s TCP hangs in MPI_Finalize now and then: docs/cluster.md)')
    ap.add_argument('--timeout', type=int, default=120)
    ap.add_argument('--expect', action='append', default=[])
    ap.add_argument('--expect-total', action='append', default=[],
                    help='like --expect, on the sum over all processes\' statistics')
    ap.add_argument('--expect-report', action='append', default=[],
                    help='text the report (`unblock report --text`) must contain')
    ap.add_argument('--compare-stdout', action='store_true')
    ap.add_argument('--compare-with', action='append', default=[],
                    help='a command comparing the outputs ({plain}, {unblock}: the two '
                         'output directories) that must exit 0')
    ap.add_argument('--no-stats', action='store_true')
    ap.add_argument('--stats-files', type=int, default=None)
    ap.add_argument('--stats-exe', default=None,
                    help='check --expect only on the files of this executable, which must '
                         'number --np')
    ap.add_argument('--unblock-arg', action='append', default=[])
    ap.add_argument('--workdir', default=None)
    ap.add_argument('--linked', action='store_true',
                    help='the program has unblock linked in (link-time variant): run it '
                         'directly, with UNBLOCK_STATS in the environment')
    ap.add_argument('--env', action='append', default=[],
                    help='KEY=VALUE for both runs ({out} is replaced as in ARGS)')
    ap.add_argument('--require-file', action='append', default=[],
                    help='a file both runs must have written, NAME=TEXT to also require '
                         'its exact content')
    ap.add_argument('--plain', default=None,
                    help='the program to run without unblock, if not PROGRAM itself')
    ap.add_argument('program', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    prog = a.program[1:] if a.program and a.program[0] == '--' else a.program
    if not prog:
        sys.exit('FAIL: no program')

    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    for k in [k for k in env if k.startswith('UNBLOCK_') and k != 'UNBLOCK_PROFILE']:
        del env[k]
    work = tempfile.mkdtemp(prefix='unblock-t-', dir=a.workdir)
    try:
        outs = {}
        for mode in ('plain', 'unblock'):
            out = os.path.join(work, mode)
            os.mkdir(out)
            args = [x.replace('{out}', out) for x in prog]
            cmd = launcher(a.launch, a.np, a.tcp, a)
            run_env = dict(env)
            for kv in a.env:
                k, v = kv.split('=', 1)
                run_env[k] = v.replace('{out}', out)
            if mode == 'plain' and a.plain:
                args[0] = a.plain
            if mode == 'unblock' and a.linked:
                if not a.no_stats:
                    run_env['UNBLOCK_STATS'] = os.path.join(work, 'stats')
            elif mode == 'unblock':
                cmd = cmd + [a.unblock] + a.unblock_arg
                if 'UNBLOCK_PROFILE' in env:  # (tests run without profiles: also
                    # on ranks that do not get mpirun's environment)
                    cmd += ['--profile=' + env['UNBLOCK_PROFILE']]
                if not a.no_stats:
                    cmd += ['--stats=' + os.path.join(work, 'stats')]
            for attempt in range(a.retry_timeouts + 1):
                if a.sbatch:
                    p = run_sbatch(cmd + args, run_env, a.timeout, a, work, mode)
                    break
                p = run(cmd + args, run_env, a.timeout, attempt < a.retry_timeouts)
                if p is not None:
                    break
                print('timed out after %ds, running again (%d of %d): %s' % (
                    a.timeout, attempt + 1, a.retry_timeouts, ' '.join(cmd + args)))
                shutil.rmtree(out)
                os.mkdir(out)
                shutil.rmtree(os.path.join(work, 'stats'), ignore_errors=True)
            if p.returncode != 0:
                sys.stderr.write(p.stdout.decode(errors='replace')[-4000:])
                sys.stderr.write(p.stderr.decode(errors='replace')[-4000:])
                sys.exit('FAIL: %s run exited %d: %s' % (mode, p.returncode, ' '.join(cmd + args)))
            outs[mode] = (tree(out), p.stdout, p.stderr)
            bad = mismatch_in(outs[mode])
            if bad:
                sys.exit('FAIL: the %s run says MISMATCH in %s: a test program found wrong data' % (
                    mode, bad))

        plain, unb = outs['plain'][0], outs['unblock'][0]
        where = ''
        if a.where:
            where = check_where(plain, a.np, a.where, 'plain')
            check_where(unb, a.np, a.where, 'unblock')
        if not plain and not a.compare_stdout:
            sys.exit('FAIL: the program wrote no output files: nothing to compare')
        for req in a.require_file:
            name, _, text = req.partition('=')
            if name not in plain:
                sys.exit('FAIL: the program did not write %s' % name)
            if text and plain[name].decode(errors='replace').strip() != text:
                sys.exit('FAIL: %s holds %r, expected %r' % (name, plain[name], text))
        if sorted(plain) != sorted(unb):
            sys.exit('FAIL: different files: without %s, with %s' % (sorted(plain), sorted(unb)))
        for f in plain:
            if plain[f] != unb[f]:
                sys.exit('FAIL: %s differs with unblock' % f)
        for line in a.compare_with:
            cmd = [x.replace('{plain}', os.path.join(work, 'plain'))
                   .replace('{unblock}', os.path.join(work, 'unblock')) for x in shlex.split(line)]
            p = run(cmd, env, a.timeout)
            if p.returncode != 0:
                sys.exit('FAIL: %s exited %d:\n%s%s' % (
                    ' '.join(cmd), p.returncode, p.stdout.decode(errors='replace')[-4000:],
                    p.stderr.decode(errors='replace')[-4000:]))
        if a.compare_stdout and outs['plain'][1] != outs['unblock'][1]:
            sys.exit('FAIL: standard output differs:\n--- without\n%s\n--- with\n%s' % (
                outs['plain'][1].decode(errors='replace'), outs['unblock'][1].decode(errors='replace')))
        ours = [l for l in outs['unblock'][2].decode(errors='replace').splitlines()
                if l.startswith('unblock')]
        if ours:
            sys.exit('FAIL: unblock printed on stderr without being asked:\n' + '\n'.join(ours))

        if not a.no_stats:
            files = sorted(glob.glob(os.path.join(work, 'stats', 'unblock-*.json')))
            want = a.stats_files if a.stats_files is not None else a.np
            if len(files) != want:
                sys.exit('FAIL: %d statistics files, expected %d' % (len(files), want))
            docs = []
            for f in files:
                with open(f) as fh:
                    docs.append((os.path.basename(f), json.load(fh)))
            if a.stats_exe:
                docs = [(f, d) for f, d in docs if d.get('exe') == a.stats_exe]
                if len(docs) != a.np:
                    sys.exit('FAIL: %d statistics files of %s, expected %d' % (
                        len(docs), a.stats_exe, a.np))
            for f, doc in docs:
                for exp in a.expect:
                    check_expect(doc, exp, f)
            for exp in a.expect_total:
                key = re.split('>=|<=|>|<|=', exp, 1)[0]
                total = sum(lookup(doc, key) for _, doc in docs)
                check_expect(nest(key, total), exp, 'all processes')
            r = subprocess.run([a.unblock, 'report', '--text', os.path.join(work, 'stats')],
                               capture_output=True, timeout=30)
            if r.returncode != 0 or b'total' not in r.stdout:
                sys.exit('FAIL: unblock report: %s' % r.stderr.decode(errors='replace'))
            for text in a.expect_report:
                if text not in r.stdout.decode(errors='replace'):
                    sys.exit('FAIL: unblock report says no %r:\n%s' % (
                        text, r.stdout.decode(errors='replace')))
        print('PASS: %d file(s) identical%s%s%s' % (
            len(plain), ''.join(', %s exits 0' % shlex.split(c)[0] for c in a.compare_with),
            '' if a.no_stats else ', statistics as expected',
            '; the job: ' + where + ' via ' + a.where if where else ''))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
