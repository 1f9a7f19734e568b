#!/usr/bin/env python3
"""The program's profile (docs/profile.md): what one run learns, the next uses.

    profile.py IMPL UNBLOCK HALO OVERLAP PYTHON RING_PY [MPIIO]

Each step fails with a message when the profile does not do what it should:
 1. halo (2 ranks, small borders: nothing worth the completion thread): the
    first run has no profile and asks for MPI_THREAD_MULTIPLE; it writes a
    profile saying the thread is not needed; the second run uses it (both
    ranks: rank 0's copy is broadcast), keeps MPI_THREAD_MULTIPLE, which the
    thread gate makes cost nothing (src/comm/gate.c), and its output is byte for
    byte that of the program without unblock; a third run without the gate
    (UNBLOCK_THREAD_GATE=0) runs at the program's own level;
 2. overlap pioman (large sends the completion thread moves while the program
    computes): the second run keeps MPI_THREAD_MULTIPLE, the profile saying why;
 3. a changed executable makes the profile stale; a corrupt one is ignored with
    one line on stderr and rewritten;
 4. --no-profile reads and writes none; `unblock profile show` and `clear`;
 5. mpi4py: the key is the interpreter and the script;
 6. MPI-IO write-behind (the mpiio test program, 3 ranks, a fresh directory):
    its I/O thread needs MPI_THREAD_MULTIPLE, which nothing else in that program
    asks for; the profile says the thread was needed for it, and the second run
    keeps two stages on every rank;
 7. the program's own requests: a 64 KiB ping-pong of MPI_Irecv, MPI_Isend and
    MPI_Waitall (bench/pingpong --nonblocking, waited for at once: its sites
    stop being driven, comm.own.undriven) leaves a profile saying the thread
    is not needed; tests/programs/ownprog.c (a receive the program computes
    behind, driven and waited for late) one saying it is.  Its exchanges of
    which 10 in 100 wait 2 ms before MPI_Waitall (a program descheduled there:
    a loaded machine) leave a profile saying not needed, though those are a
    third of the requests driven (the sampled ones find the stalls); with 60
    in 100, needed; every exchange waiting 300 us: needed with a spare core,
    not needed without one (each poll would take the program's core);
 8. following the program's own requests (requests.h, UNBLOCK_OWN_ARMED):
    tests/programs/selfown.c and selfown.F90 (mpif.h; 8-byte requests of each
    rank to itself, nothing converted) leave "own not-needed"; their second
    run follows none (the report's profile.own, comm.own.untracked 1 a rank,
    fewer requests logged than started) and prints what the first printed.
    own.F90 (large blocking calls after its requests, converted) leaves
    "own needed"; that profile changed by hand to "not-needed", the run
    refuses those conversions (own_nonblocking), writes the same files as
    the program without unblock, and puts "needed" back, so that the next
    run converts them again;
 9. a first run's trial of following (a trial of 101, ended on each rank:
    nothing converted): selfown.c, nothing after its rounds, leaves "own
    not-needed" and its next run follows none from its start;
    tests/programs/owntrial.c, whose large receives after its rounds are
    then refused, leaves "own needed", and its next run follows all its
    requests (no trial) and converts the receive into a block of its own.
"""
import filecmp
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

IMPL, UNBLOCK, HALO, OVERLAP, PYTHON, RING = sys.argv[1:7]
MPIIO = sys.argv[7] if len(sys.argv) > 7 else None
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
ENV.pop('UNBLOCK_PROFILE', None)
failures = []


def launch(np):
    if IMPL == 'openmpi':
        return ['mpirun.openmpi', '--oversubscribe', '-np', str(np)]
    return ['mpirun.mpich', '-np', str(np)]


def run(args, stats=None, profile=None, extra=(), np=2, plain=False):
    env = dict(ENV)
    if profile is not None:
        env['UNBLOCK_PROFILE'] = profile
    if stats:
        env['UNBLOCK_STATS'] = stats
    cmd = launch(np) + ([] if plain else [UNBLOCK] + list(extra)) + list(args)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    if r.returncode != 0:
        sys.exit('FAIL: %s exited %d\n%s%s' % (' '.join(cmd), r.returncode, r.stdout,
                                               r.stderr[-3000:]))
    return r


def prof(stats, rank=0, part='profile'):
    with open(os.path.join(stats, 'unblock-%d.json' % rank)) as f:
        return json.load(f)[part]


def check(what, ok, detail=''):
    print('%s: %s%s' % ('ok' if ok else 'FAIL', what, (' (%s)' % (detail,)) if detail else ''))
    if not ok:
        failures.append(what)


def profiles(d):
    return sorted(glob.glob(os.path.join(d, '*.profile')))


def only_profile(d):
    """The profiles in d, and the text of the one there ('' unless exactly one)."""
    files = profiles(d)
    return files, open(files[0]).read() if len(files) == 1 else ''


def main():
    tmp = tempfile.mkdtemp(prefix='unblock-profile-')
    try:
        d = os.path.join(tmp, 'profiles')  # made by the first run
        # 1. halo: nothing needs the thread
        os.makedirs(os.path.join(tmp, 'plain'))
        run([HALO, os.path.join(tmp, 'plain'), '40', '4096'], plain=True)
        for i in (1, 2):
            out, st = os.path.join(tmp, 'h%d' % i), os.path.join(tmp, 'hs%d' % i)
            os.makedirs(out)
            run([HALO, out, '40', '4096'], stats=st, profile=d)
        p1, p2 = prof(os.path.join(tmp, 'hs1')), prof(os.path.join(tmp, 'hs2'))
        check('first run: no profile, MPI_THREAD_MULTIPLE',
              p1['state'] == 'new' and p1['thread'] == 'multiple', p1)
        files, text = only_profile(d)
        check('one profile written, the thread not needed', 'thread not-needed' in text, files)
        # The thread gate makes MPI_THREAD_MULTIPLE cost this program nothing, so
        # it keeps the thread (src/comm/gate.c); without the gate, its own level.
        check('second run: the profile used, the thread kept (the gate)',
              p2['state'] == 'used' and p2['thread'] == 'multiple' and
              'gate' in p2['why'] and p2['runs'] == 1, p2)
        out, st = os.path.join(tmp, 'h3'), os.path.join(tmp, 'hs3')
        os.makedirs(out)
        run([HALO, out, '40', '4096'], stats=st, profile=d, extra=['--thread_gate=0'])
        p3 = prof(st)
        check('without the gate: the profile used, the program\'s level',
              p3['state'] == 'used' and p3['thread'] == 'program' and
              'nothing needed' in p3['why'], p3)
        q = prof(os.path.join(tmp, 'hs2'), 1)
        check('rank 1 uses the same profile', q['state'] == 'used', q)
        same = all(filecmp.cmp(os.path.join(tmp, 'plain', 'rank-%d.txt' % r),
                               os.path.join(tmp, 'h2', 'rank-%d.txt' % r), shallow=False)
                   for r in (0, 1))
        check('output identical to the program\'s without unblock', same)

        # 2. overlap: the thread pays
        for i in (1, 2):
            run([OVERLAP, 'pioman', '--max', '4194304'], stats=os.path.join(tmp, 'os%d' % i),
                profile=d)
        o2 = prof(os.path.join(tmp, 'os2'))
        # (The gate decides the level first; the profile must still say why the
        # thread was needed.)
        over = [f for f in profiles(d) if os.path.basename(f).startswith('overlap-')]
        text = open(over[0]).read() if len(over) == 1 else ''
        check('a program whose conversions pay keeps the thread',
              o2['state'] == 'used' and o2['thread'] == 'multiple' and
              'gate' in o2['why'] and
              re.search(r'^thread needed .*conversions hid', text, re.M) is not None,
              (o2, text[:300]))

        # 3. changed and corrupt profiles
        bindir = os.path.join(tmp, 'bin')
        os.makedirs(bindir)
        copy = os.path.join(bindir, 'halo')
        shutil.copy2(HALO, copy)
        run([copy, os.path.join(tmp, 'h1'), '4', '64'], stats=os.path.join(tmp, 'c1'), profile=d)
        with open(copy, 'ab') as f:
            f.write(b'\0' * 8)  # (past the ELF file's sections: it still runs)
        run([copy, os.path.join(tmp, 'h1'), '4', '64'], stats=os.path.join(tmp, 'c2'), profile=d)
        c2 = prof(os.path.join(tmp, 'c2'))
        check('a changed executable: the profile is stale', c2['state'] == 'stale', c2)
        mine = [f for f in profiles(d) if os.path.basename(f).startswith('halo-') and
                bindir in open(f).read()]
        check('the stale profile was replaced', len(mine) == 1 and
              'thread ' in open(mine[0]).read() if mine else False, mine)
        if mine:
            with open(mine[0], 'w') as f:
                f.write('unblock-profile 1\nkey nonsense\nthread maybe\n')
            r = run([copy, os.path.join(tmp, 'h1'), '4', '64'], stats=os.path.join(tmp, 'c3'),
                    profile=d)
            c3 = prof(os.path.join(tmp, 'c3'))
            lines = [l for l in r.stderr.splitlines() if 'is ignored' in l]
            check('a corrupt profile is ignored with one line per rank',
                  c3['state'] == 'ignored' and 1 <= len(lines) <= 2, (c3, lines))
            check('... and rewritten', 'unblock-profile 1\nkey ' + copy in open(mine[0]).read())

        # 4. --no-profile; show and clear
        before = {f: os.path.getmtime(f) for f in profiles(d)}
        run([HALO, os.path.join(tmp, 'h1'), '4', '64'], stats=os.path.join(tmp, 'n1'), profile=d,
            extra=['--no-profile'])
        n1 = prof(os.path.join(tmp, 'n1'))
        after = {f: os.path.getmtime(f) for f in profiles(d)}
        check('--no-profile: none read, none written', n1['state'] == 'off' and before == after,
              n1)
        env = dict(ENV, UNBLOCK_PROFILE=d)
        show = subprocess.run([UNBLOCK, 'profile', 'show', HALO], env=env, capture_output=True,
                              text=True, timeout=60)
        check('unblock profile show PROGRAM', show.returncode == 0 and 'state:   current' in
              show.stdout and 'thread not-needed' in show.stdout and OVERLAP not in show.stdout,
              show.stdout + show.stderr)
        n_before = len(profiles(d))
        clear = subprocess.run([UNBLOCK, 'profile', 'clear', HALO], env=env, capture_output=True,
                               text=True, timeout=60)
        check('unblock profile clear PROGRAM deletes its profile only',
              clear.returncode == 0 and len(profiles(d)) == n_before - 1 and
              not any(HALO in open(f).read() for f in profiles(d)), clear.stdout + clear.stderr)

        # 5. mpi4py: the script is part of the key
        if shutil.which(PYTHON) or os.path.exists(PYTHON):
            for i in (1, 2):
                out = os.path.join(tmp, 'r%d' % i)
                os.makedirs(out)
                run([PYTHON, RING, out], stats=os.path.join(tmp, 'rs%d' % i), profile=d)
            r2 = prof(os.path.join(tmp, 'rs2'))
            check('mpi4py: the profile of the script is used', r2['state'] == 'used' and
                  'ring.py' in os.path.basename(r2['file']), r2)

        # 6. MPI-IO write-behind keeps its two stages through the profile
        if MPIIO:
            d6 = os.path.join(tmp, 'profiles-mpiio')
            for i in (1, 2):
                out = os.path.join(tmp, 'm%d' % i)
                os.makedirs(out)
                run([MPIIO, out, 'cells8'], stats=os.path.join(tmp, 'ms%d' % i), profile=d6,
                    np=3)
            m1 = [prof(os.path.join(tmp, 'ms1'), r, 'mpiio') for r in range(3)]
            check('mpiio, first run: two stages on every rank',
                  all(m.get('mode') == 'two-stage' for m in m1), [m.get('mode') for m in m1])
            files, text = only_profile(d6)
            check('mpiio: the profile says the I/O thread was needed',
                  re.search(r'^thread needed .*MPI-IO', text, re.M) is not None, text or files)
            p2 = [prof(os.path.join(tmp, 'ms2'), r) for r in range(3)]
            check('mpiio, second run: the profile used, MPI_THREAD_MULTIPLE',
                  all(p['state'] == 'used' and p['thread'] == 'multiple' for p in p2), p2[0])
            m2 = [prof(os.path.join(tmp, 'ms2'), r, 'mpiio') for r in range(3)]
            check('mpiio, second run: still two stages on every rank',
                  all(m.get('mode') == 'two-stage' for m in m2), [m.get('mode') for m in m2])

        # 7. own requests: needed where driven requests were waited for late
        pingpong = os.path.join(os.path.dirname(OVERLAP), 'pingpong')
        ownprog = os.path.join(os.path.dirname(MPIIO), 'ownprog') if MPIIO else None
        if os.path.exists(pingpong) and ownprog and os.path.exists(ownprog):
            d7 = os.path.join(tmp, 'profiles-own')
            run([pingpong, '--nonblocking', '--max', '65536'], stats=os.path.join(tmp, 'ps1'),
                profile=d7)
            own1 = prof(os.path.join(tmp, 'ps1'), 0, 'comm')['own']
            files, text = only_profile(d7)
            check('own requests waited for at once: not driven, thread not needed',
                  own1['undriven'] > 0 and re.search(r'^thread not-needed', text, re.M)
                  is not None, (own1, text))
            out = os.path.join(tmp, 'o1')
            os.makedirs(out)
            d7b = os.path.join(tmp, 'profiles-ownprog')
            run([ownprog, out], stats=os.path.join(tmp, 'os1'), profile=d7b,
                extra=['--send_min=1G'])
            own2 = prof(os.path.join(tmp, 'os1'), 1, 'comm')['own']
            files, text = only_profile(d7b)
            check('an own request waited for late: driven, thread needed',
                  own2['late'] > 0 and re.search(r'^thread needed', text, re.M) is not None,
                  (own2, text))
            for stall, need in (('10', 'not-needed'), ('60', 'needed')):
                out = os.path.join(tmp, 'ostall' + stall)
                os.makedirs(out)
                d7c = os.path.join(tmp, 'profiles-stall' + stall)
                run([ownprog, out, '2000', stall], stats=out + '.stats', profile=d7c)
                own3 = prof(out + '.stats', 0, 'comm')['own']
                files, text = only_profile(d7c)
                check('%s of 100 exchanges waited for 2 ms late: thread %s' % (stall, need),
                      own3['late'] > 0 and re.search(r'^thread %s' % need, text, re.M)
                      is not None, (own3, text))
            # Every exchange 300 us before its wait (a little work): late with
            # a spare core (the thread's polls take no core of the program's),
            # at once without one (requests.c: AT_ONCE_SHARED), so needed or
            # not as the run's comm.engine.spare_core says
            out = os.path.join(tmp, 'ostall300us')
            os.makedirs(out)
            d7d = os.path.join(tmp, 'profiles-stall300us')
            run([ownprog, out, '2000', '100', '300'], stats=out + '.stats', profile=d7d)
            c = prof(out + '.stats', 0, 'comm')
            spare = c['engine']['spare_core']
            files, text = only_profile(d7d)
            need = 'needed' if spare else 'not-needed'
            check('every exchange 300 us before its wait, spare core %d: thread %s' % (spare, need),
                  re.search(r'^thread %s' % need, text, re.M) is not None and
                  (c['own']['late'] > 1000) == bool(spare), (c['own'], text))
        # 8. following the program's own requests: not needed, needed
        bindir = os.path.dirname(MPIIO) if MPIIO else None
        for prog in ('selfown', 'selfown_mpifh'):
            exe = os.path.join(bindir, prog) if bindir else ''
            if not os.path.exists(exe):
                continue
            d8 = os.path.join(tmp, 'profiles-' + prog)
            outs = [run([exe, '200'], stats=os.path.join(tmp, '%s%d' % (prog, i)),
                        profile=d8).stdout for i in (1, 2)]
            files, text = only_profile(d8)
            check('%s: the profile says following its requests was not needed' % prog,
                  re.search(r'^own not-needed', text, re.M) is not None, text)
            for r in (0, 1):
                p2 = prof(os.path.join(tmp, '%s2' % prog), r)
                own2 = prof(os.path.join(tmp, '%s2' % prog), r, 'comm')['own']
                check('%s, second run, rank %d: none followed' % (prog, r),
                      p2['own'] == 'not-followed' and own2['untracked'] == 1 and
                      own2['tracked'] < 10, (p2, own2))
            check('%s: the second run prints what the first did' % prog,
                  outs[0] == outs[1] and outs[0].count('ok') == 2, outs)
        ownf = os.path.join(bindir, 'own_mpifh') if bindir else ''
        if os.path.exists(ownf):
            d8 = os.path.join(tmp, 'profiles-ownf')
            plain_out = os.path.join(tmp, 'ownf-plain')
            os.makedirs(plain_out)
            run([ownf, plain_out, '30'], plain=True)

            def own_run(i):
                out = os.path.join(tmp, 'ownf%d' % i)
                os.makedirs(out)
                run([ownf, out, '30'], stats=out + '.stats', profile=d8)
                same = all(filecmp.cmp(os.path.join(plain_out, 'rank-%d.txt' % r),
                                       os.path.join(out, 'rank-%d.txt' % r), shallow=False)
                           for r in (0, 1))
                refused = sum(prof(out + '.stats', r, 'comm')['passthrough_why']['own_nonblocking']
                              for r in (0, 1))
                return same, refused, only_profile(d8)[1]

            same, refused, text = own_run(1)
            check('own.F90: the profile says following was needed, none refused',
                  same and refused == 0 and re.search(r'^own needed', text, re.M) is not None,
                  (same, refused, text))
            with open(only_profile(d8)[0][0], 'w') as f:
                f.write(re.sub(r'^own needed.*$', 'own not-needed (changed by hand)', text,
                               flags=re.M))
            same, refused, text = own_run(2)
            check('own.F90 told not-needed: conversions refused, the same files, needed again',
                  same and refused > 0 and re.search(r'^own needed', text, re.M) is not None,
                  (same, refused, text))
            same, refused, text = own_run(3)
            check('own.F90 after: none refused', same and refused == 0, (same, refused))
        # 9. a first run's trial of following (UNBLOCK_OWN_TRIAL=101): selfown
        # (nothing after its rounds) ends it, its profile says not needed, and
        # the next run follows none from its start; owntrial's idle run ends it
        # too, then refuses a receive it would have converted, so its profile
        # says needed, and the next run follows all its requests (no trial)
        # and converts that receive
        for prog, args, need in (('selfown', ['400'], 'not-needed'),
                                 ('owntrial', [None, '300', 'idle'], 'needed')):
            exe = os.path.join(bindir, prog) if bindir else ''
            if not os.path.exists(exe):
                continue
            d9 = os.path.join(tmp, 'profiles-trial-' + prog)
            for i in (1, 2):
                out = os.path.join(tmp, 'trial-%s%d' % (prog, i))
                os.makedirs(out)
                run([exe] + [a if a is not None else out for a in args],
                    stats=out + '.stats', profile=d9, extra=['--own_trial=101'])
                own = [prof(out + '.stats', r, 'comm') for r in (0, 1)]
                p = prof(out + '.stats', 1)
                if i == 1:
                    text = only_profile(d9)[1]
                    check('%s, a trial of 101: ended on each rank, the profile says %s' % (
                          prog, need), all(c['own']['trial'] == 101 for c in own) and
                          re.search(r'^own %s' % need, text, re.M) is not None, (own, text))
                elif need == 'not-needed':
                    check('%s, second run: none followed, no trial' % prog,
                          p['own'] == 'not-followed' and p['own_why'].startswith('the profile')
                          and all(c['own']['trial'] == 0 and c['own']['tracked'] < 10
                                  for c in own), (p, own))
                else:
                    check('%s, second run: all followed, no trial, the receive converted' % prog,
                          p['own'] == 'followed' and
                          all(c['own']['trial'] == 0 and c['own']['untracked'] == 0
                              for c in own) and own[1]['own']['tracked'] > 300 and
                          own[1]['received'] >= 1, (p, own))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        sys.exit('FAIL: %d checks failed: %s' % (len(failures), '; '.join(failures)))
    print('all checks passed')


if __name__ == '__main__':
    main()
