#!/usr/bin/env python3
"""The launcher and the library's behaviour towards the user: help, version,
options and their errors, MPI detection, LD_PRELOAD and UCX settings, the report,
UNBLOCK_DISABLE.  usage: test_launcher.py BUILD_DIR "openmpi;mpich" """
import json
import os
import re
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(sys.argv[1])
MPIS = [m for m in sys.argv[2].split(';') if m]
UNBLOCK = os.path.join(BUILD, 'bin', 'unblock')
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILEIO = os.path.join(BUILD, 'tests', 'serial', 'fileio')
PYTHONS = {'openmpi': '/usr/bin/python3', 'mpich': '/opt/unblock/venv-mpich/bin/python'}

passed = failed = 0


def env(**kw):
    e = {k: v for k, v in os.environ.items() if not (k.startswith('UNBLOCK_') and k != 'UNBLOCK_PROFILE')}
    e.pop('LD_PRELOAD', None)
    e.pop('UCX_ERROR_SIGNALS', None)
    for k in ('OMPI_COMM_WORLD_SIZE', 'OMPI_UNIVERSE_SIZE', 'PMI_FD', 'PMI_PORT',
              'HYDRA_CONTROL_FD', 'MPI_LOCALNRANKS', 'SLURM_STEP_ID', 'SLURM_STEPID',
              'SLURM_MPI_TYPE'):
        e.pop(k, None)
    e.update(kw)
    return e


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=120,
                          env=kw.pop('env', env()), **kw)


def test(fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print('ok   ' + fn.__name__)
    except AssertionError as e:
        failed += 1
        print('FAIL %s: %s' % (fn.__name__, e))
    return fn


def option_names():
    text = open(os.path.join(SRC, 'src', 'core', 'options.def')).read()
    return re.findall(r'^UNBLOCK_OPTION\(\w+, (\w+),', text, re.M)


@test
def help_lists_every_option_and_docs_agree():
    r = run([UNBLOCK, '--help'])
    assert r.returncode == 0, r.stderr
    docs = open(os.path.join(SRC, 'docs', 'options.md')).read()
    names = option_names()
    assert len(names) >= 9, names
    for n in names:
        assert 'UNBLOCK_' + n in r.stdout, n + ' missing from --help'
        assert '--' + n.lower() + '=' in r.stdout, n
        assert 'UNBLOCK_' + n in docs, n + ' missing from docs/options.md'


@test
def version():
    r = run([UNBLOCK, '--version'])
    assert r.returncode == 0 and r.stdout.startswith('unblock 0.'), r.stdout


@test
def unknown_option_is_an_error():
    r = run([UNBLOCK, '--no-such-thing', '/bin/true'])
    assert r.returncode == 2 and 'unknown option' in r.stderr, r.stderr


@test
def missing_program_is_reported_like_a_shell():
    r = run([UNBLOCK, '/nonexistent/program'])
    assert r.returncode == 127 and 'cannot run' in r.stderr, (r.returncode, r.stderr)


@test
def bad_environment_value_gives_one_line_and_the_program_runs():
    with tempfile.TemporaryDirectory() as d:
        plain = run([FILEIO, d])
        r = run([UNBLOCK, FILEIO, d], env=env(UNBLOCK_COMM='maybe'))
        assert r.returncode == 0
        assert r.stdout == plain.stdout
        lines = r.stderr.splitlines()
        assert lines == ["unblock: UNBLOCK_COMM='maybe' is not valid (0|1); using the default 1"], lines


@test
def bad_flag_value_gives_one_line_and_the_default():
    with tempfile.TemporaryDirectory() as d:
        r = run([UNBLOCK, '--log=loud', FILEIO, d])
        assert r.returncode == 0
        assert r.stderr.splitlines() == [
            "unblock: --log=loud is not valid (error|warn|info|debug); using the default warn"], r.stderr


@test
def flags_become_environment_and_preload_is_kept():
    other = '/lib/x86_64-linux-gnu/libm.so.6'
    r = run([UNBLOCK, '--stats=/tmp/x', '--verify', '--no-io', '--', '/usr/bin/printenv'],
            env=env(LD_PRELOAD=other))
    assert r.returncode == 0, r.stderr
    vars_ = dict(l.split('=', 1) for l in r.stdout.splitlines() if '=' in l)
    assert vars_['UNBLOCK_STATS'] == '/tmp/x'
    assert vars_['UNBLOCK_VERIFY'] == '1'
    assert vars_['UNBLOCK_IO'] == '0'
    pre = vars_['LD_PRELOAD'].split(':')
    assert pre[0].endswith('.so') and '/libunblock-' in pre[0] and pre[1] == other, pre
    assert os.path.isabs(pre[0]) and os.path.exists(pre[0])
    assert 'SEGV' not in vars_['UCX_ERROR_SIGNALS'], vars_['UCX_ERROR_SIGNALS']


@test
def user_ucx_error_signals_lose_only_segv():
    r = run([UNBLOCK, '/usr/bin/printenv', 'UCX_ERROR_SIGNALS'],
            env=env(UCX_ERROR_SIGNALS='SIGILL,SIGSEGV,SIGBUS'))
    assert r.stdout.strip() == 'SIGILL,SIGBUS', r.stdout


@test
def serial_program_gets_the_serial_library():
    r = run([UNBLOCK, FILEIO, '/tmp'], env=env(UNBLOCK_LOG='info'))
    assert 'uses serial' in r.stderr, r.stderr


@test
def detection_of_each_mpi():
    for impl in MPIS:
        halo = os.path.join(BUILD, 'tests', impl, 'halo')
        r = run([UNBLOCK, '/bin/true'], env=env(UNBLOCK_LOG='info', UNBLOCK_MPI=impl))
        assert r.returncode == 0
        with tempfile.TemporaryDirectory() as d:
            r = run([UNBLOCK, halo, d, '1', '16'], env=env(UNBLOCK_LOG='info'))
            assert r.returncode == 0, r.stderr
            assert 'uses %s (libraries of the program)' % impl in r.stderr, r.stderr
        dl = os.path.join(BUILD, 'tests', impl, 'dlopen_mpi')
        with tempfile.TemporaryDirectory() as d:
            r = run([UNBLOCK, dl, d], env=env(UNBLOCK_LOG='info'))
            assert 'uses %s' % impl in r.stderr, r.stderr
        py = PYTHONS[impl]
        r = run([UNBLOCK, py, '-c', 'pass'], env=env(UNBLOCK_LOG='info'))
        assert 'uses %s (mpi4py of this python)' % impl in r.stderr, r.stderr


@test
def a_shell_script_learns_its_place_from_the_launcher():
    """Rule 4 and the job's place (core/job.c): a shell script started by srun
    (Slurm's variables, its --mpi plugin), by mpirun inside a Slurm allocation
    (whose ranks also carry the batch step's SLURM_*: mpirun's win), or by a
    batch script alone (no step: no launcher)."""
    slurm = dict(SLURM_STEP_ID='0', SLURM_PROCID='1', SLURM_LOCALID='1', SLURM_NODEID='0',
                 SLURM_STEP_NUM_TASKS='2', SLURM_STEP_TASKS_PER_NODE='2')
    cases = [
        ('openmpi', dict(slurm, SLURM_MPI_TYPE='pmix', PMIX_RANK='1'),
         'rank 1 of 2, local rank 1 of 2 (slurm --mpi=pmix)'),
        ('mpich', dict(slurm, SLURM_MPI_TYPE='pmi2', PMI_FD='9', PMI_RANK='1', PMI_SIZE='2'),
         'rank 1 of 2, local rank 1 of 2 (slurm --mpi=pmi2)'),
        ('openmpi', dict(slurm, SLURM_PROCID='0', SLURM_LOCALID='0', SLURM_STEP_TASKS_PER_NODE='1',
                         OMPI_COMM_WORLD_SIZE='4', OMPI_COMM_WORLD_RANK='3',
                         OMPI_COMM_WORLD_LOCAL_RANK='1', OMPI_COMM_WORLD_LOCAL_SIZE='2'),
         'rank 3 of 4, local rank 1 of 2 (openmpi)'),
        ('mpich', dict(slurm, SLURM_PROCID='0', SLURM_STEP_TASKS_PER_NODE='1', PMI_FD='6',
                       PMI_RANK='2', PMI_SIZE='4', MPI_LOCALRANKID='0', MPI_LOCALNRANKS='2'),
         'rank 2 of 4, local rank 0 of 2 (hydra)'),
    ]
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, 'job.sh')
        with open(script, 'w') as f:
            f.write('#!/bin/sh\ntrue\n')
        os.chmod(script, 0o755)
        for impl, extra, place in cases:
            if impl not in MPIS:
                continue
            r = run([UNBLOCK, script], env=env(UNBLOCK_LOG='info', **extra))
            assert r.returncode == 0, r.stderr
            assert 'uses %s (environment of the MPI launcher)' % impl in r.stderr, (extra, r.stderr)
            assert 'unblock: ' + place in r.stderr, (place, r.stderr)
        # A batch script's shell: SLURM_PROCID and friends, but no step.
        r = run([UNBLOCK, script], env=env(UNBLOCK_LOG='info', SLURM_JOB_ID='7', SLURM_PROCID='0',
                                           SLURM_LOCALID='0', SLURM_NTASKS='2'))
        assert 'no clue: default' in r.stderr and 'local rank' not in r.stderr, r.stderr


@test
def a_wrong_mpi_choice_is_refused_not_crashed():
    """--mpi naming the other MPI than the program's: the launcher runs the program
    without unblock (one line says why), and the wrong library preloaded by hand
    stops in MPI_Init with a clear line instead of crashing later."""
    for impl in MPIS:
        other = [m for m in ('openmpi', 'mpich') if m != impl][0]
        if other not in MPIS:
            continue
        halo = os.path.join(BUILD, 'tests', impl, 'halo')
        with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as p:
            plain = run([halo, p, '2', '64'])
            assert plain.returncode == 0, plain.stderr
            r = run([UNBLOCK, '--mpi=' + other, '--stats=' + d + '/stats', halo, d, '2', '64'])
            assert r.returncode == 0, r.stderr
            assert 'running it without unblock' in r.stderr, r.stderr
            assert r.stdout == plain.stdout, (r.stdout, plain.stdout)
            assert not os.path.exists(d + '/stats'), 'unblock was preloaded'
            lib = os.path.join(BUILD, 'lib', 'libunblock-%s.so' % other)
            r = run([halo, d, '2', '64'], env=env(LD_PRELOAD=lib))
            assert r.returncode == 1, (r.returncode, r.stderr)
            assert 'cannot pass through this library: stopping' in r.stderr, r.stderr
        py = PYTHONS[impl]
        r = run([UNBLOCK, '--mpi=' + other, py, '-c', 'print(1)'])
        assert r.returncode == 0 and r.stdout == '1\n', (r.returncode, r.stdout, r.stderr)
        assert 'running it without unblock' in r.stderr, r.stderr


@test
def python_script_is_detected_through_its_shebang():
    with tempfile.TemporaryDirectory() as d:
        script = os.path.join(d, 'job.py')
        with open(script, 'w') as f:
            f.write('#!/usr/bin/env python3\nprint("hello")\n')
        os.chmod(script, 0o755)
        r = run([UNBLOCK, script], env=env(UNBLOCK_LOG='info', PATH='/usr/bin:/bin'))
        assert r.stdout == 'hello\n', r.stdout
        assert "mpi4py of the script's python" in r.stderr, r.stderr


def fileio_with_stats(d, *flags):
    """Runs the fileio test program under unblock with FLAGS and --stats=D/stats;
    returns the run and the statistics files read ({} if none was written)."""
    stats = os.path.join(d, 'stats')
    out = os.path.join(d, 'out')
    os.mkdir(out)
    r = run([UNBLOCK] + list(flags) + ['--stats=' + stats, FILEIO, out])
    docs = {f: json.load(open(os.path.join(stats, f)))
            for f in (os.listdir(stats) if os.path.isdir(stats) else [])}
    return r, docs


@test
def disable_does_nothing_at_all():
    with tempfile.TemporaryDirectory() as d:
        r, docs = fileio_with_stats(d, '--disable')
        assert r.returncode == 0 and r.stderr == '', r.stderr
        assert docs == {}, 'stats written although disabled'


@test
def io_off_counts_no_file_calls():
    with tempfile.TemporaryDirectory() as d:
        r, docs = fileio_with_stats(d, '--io=0')
        assert r.returncode == 0, r.stderr
        assert len(docs) == 1, docs.keys()
        doc = list(docs.values())[0]
        assert doc['io']['calls'] == 0, doc['io']


@test
def shell_is_transparent_and_loads_no_mpi():
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, 'stats')
        r = run([UNBLOCK, '--stats=' + stats, '/bin/sh', '-c',
                 'grep -c -E "libmpi|libmpich" /proc/$$/maps; %s %s >/dev/null' % (FILEIO, d)],
                env=env(UNBLOCK_MPI=MPIS[0] if MPIS else 'auto'))
        assert r.stdout.splitlines()[0] == '0', r.stdout
        # The programs the shell runs report (fileio, grep); the shell does not.
        exes = sorted(json.load(open(os.path.join(stats, f)))['exe'] for f in os.listdir(stats))
        assert exes == ['fileio', 'grep'], exes


@test
def report_prints_a_table_and_rejects_garbage():
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, 'stats')
        fileio_with_stats(d)
        r = run([UNBLOCK, 'report', '--text', stats])
        assert r.returncode == 0, r.stderr
        assert 'rank' in r.stdout and 'total' in r.stdout and 'File calls' in r.stdout, r.stdout
        assert re.search(r'^\s+write\s+1\d\d\d\s*$', r.stdout, re.M), r.stdout
        with open(os.path.join(stats, 'unblock-9.json'), 'w') as f:
            f.write('{"comm": [1, 2')
        r = run([UNBLOCK, 'report', '--text', stats])
        assert r.returncode == 1 and 'not a statistics file' in r.stderr, r.stderr
        r = run([UNBLOCK, 'report', os.path.join(d, 'none')])
        assert r.returncode == 1


@test
def report_sums_call_sites_over_ranks():
    site = ('{"site": "app+0x10", "function": "MPI_Sendrecv", "decision": "%s", "calls": %d, '
            '"converted": %d, "passed": %d, "bytes": 0, "faults": 1, "blocking_us": 1.0, '
            '"converted_us": 1.0, "blocking_ms": 2.5, "converted_ms": 0.5, "hidden_ms": %s}')
    with tempfile.TemporaryDirectory() as d:
        for rank, (dec, hidden) in enumerate([('convert', '4.0'), ('pass', '-1.0')]):
            with open(os.path.join(d, 'unblock-%d.json' % rank), 'w') as f:
                f.write('{"mpi": "openmpi", "rank": %d, "pid": %d, "exe": "app", '
                        '"sites": [%s, %s]}' % (rank, 100 + rank, site % (dec, 10, 6, 4, hidden),
                                                site.replace('0x10', '0x20') % ('pass', 1, 0, 1, '0')))
        r = run([UNBLOCK, 'report', '--text', d])
        assert r.returncode == 0, r.stderr
        line = [l for l in r.stdout.splitlines() if 'app+0x10' in l]
        assert len(line) == 1, r.stdout
        f = line[0].split()
        # calls, converted, passed, faults, blocking, converted, hidden, decision
        assert f[2:] == ['20', '12', '8', '2', '5.000', '1.000', '3.000', 'mixed'], f
        assert r.stdout.index('app+0x10') < r.stdout.index('app+0x20'), r.stdout


@test
def report_puts_timelines_on_one_axis():
    # Rank 0 in 1 ms phases, rank 1 in 2 ms phases (its run was longer): summed in
    # 2 ms phases, 0-4 ms: exposed 1+2+4 and 3+0, hidden 0.5+0 and 0-1.
    tl = ('"timeline": {"bucket_ms": %s, "buckets": %d, "hidden_ms": [%s], '
          '"exposed_ms": [%s]}')
    with tempfile.TemporaryDirectory() as d:
        for rank, t in enumerate([tl % ('1.000', 3, '0, 0.5, 0', '1, 2, 3'),
                                  tl % ('2.000', 2, '0, -1', '4, 0')]):
            with open(os.path.join(d, 'unblock-%d.json' % rank), 'w') as f:
                f.write('{"mpi": "openmpi", "rank": %d, "pid": %d, "exe": "app", "sites": [], '
                        '%s}' % (rank, 100 + rank, t))
        r = run([UNBLOCK, 'report', '--text', d])
        assert r.returncode == 0, r.stderr
        assert 'Phases (2 of 2 ms' in r.stdout and 'exposed 10.000 ms, hidden -0.500 ms' in r.stdout, r.stdout
        assert not os.path.exists(os.path.join(d, 'unblock-report.html'))
        # The page and the picture need matplotlib (Debian's, for the python that
        # runs the report): tests/integration/report_text.py and report_browser.py.
        other = os.path.join(d, 'other.png')
        r = run([UNBLOCK, 'report', '--text', '--png=' + other, d])
        assert r.returncode == 0 and open(other, 'rb').read(8) == b'\x89PNG\r\n\x1a\n', r.stderr
        assert 'wrote ' + other in r.stdout, r.stdout
        for opt in (['--text', '--png'], ['--html']):
            r = run([UNBLOCK, 'report'] + opt + [os.path.join(d, 'no', 'such', 'dir', 'x'), d])
            assert r.returncode == 1 and 'cannot write' in r.stderr, (opt, r.returncode, r.stderr)
        for bad in ([], ['--png'], ['--png', other], [d, d], ['--bogus', d], ['--html'],
                    ['--text', '--html', other, d]):
            r = run([UNBLOCK, 'report'] + bad)
            assert r.returncode == 2 and 'usage: unblock report' in r.stderr, (bad, r.stderr)


@test
def stats_without_mpi_finalize():
    for impl in MPIS:
        halo = os.path.join(BUILD, 'tests', impl, 'halo')
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, 'stats')
            r = run([UNBLOCK, '--stats=' + stats, halo, d, '2', '64', 'nofinalize'])
            assert os.listdir(stats) == ['unblock-0.json'], (impl, r.stderr)
            doc = json.load(open(os.path.join(stats, 'unblock-0.json')))
            assert doc['comm']['functions'].get('MPI_Finalize', 0) == 0, doc['comm']
            assert doc['comm']['functions']['MPI_Sendrecv'] == 4, doc['comm']


@test
def comm_off_counts_no_mpi_calls_but_knows_the_rank():
    for impl in MPIS:
        halo = os.path.join(BUILD, 'tests', impl, 'halo')
        with tempfile.TemporaryDirectory() as d:
            stats = os.path.join(d, 'stats')
            r = run([UNBLOCK, '--comm=0', '--stats=' + stats, halo, d, '2', '64'])
            assert r.returncode == 0, r.stderr
            assert os.listdir(stats) == ['unblock-0.json'], os.listdir(stats)
            doc = json.load(open(os.path.join(stats, 'unblock-0.json')))
            assert doc['comm']['calls'] == 0 and doc['comm']['functions'] == {}, doc['comm']
            assert doc['io']['calls'] > 0, doc['io']


print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
