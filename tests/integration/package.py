#!/usr/bin/env python3
"""The installed forms of unblock (docs/install.md), each run from where it was put.

    package.py deb        BUILD "openmpi;mpich"   the Debian package of `make package`
    package.py lintian    BUILD                   the same package, checked by lintian
    package.py relocated  BUILD "openmpi;mpich"   `make install` with DESTDIR, then moved
    package.py modulefile BUILD                   `module load unblock` (Lmod or
                                                  Environment Modules), tree moved

Every tree is run from a fresh temporary folder, never installed into the system:
the package is unpacked with `dpkg-deb -x`.  An MPI program (tests/IMPL/p2p) runs
through the tree's launcher under each MPI in the transparency harness (same
files as plain, conversions and faults in the statistics), the library the launcher preloads
and the sidecar it starts are the tree's own (their paths, from /proc/PID/maps and
the sidecar's log line), and a static program linked with the tree's link-time
variant finds the tree's sidecar.  Exits 77 (skipped) with the reason when a
tool it needs is missing.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


def skip(why):
    print('SKIPPED: ' + why)
    sys.exit(SKIP)


def fail(why):
    sys.exit('FAIL: ' + why)


def run(cmd, timeout=120, check=True, **kw):
    """Runs cmd (a list), bounded; returns the CompletedProcess (text)."""
    env = kw.pop('env', None)
    if env is None:
        env = {k: v for k, v in os.environ.items()
               if not (k.startswith('UNBLOCK_') and k != 'UNBLOCK_PROFILE') and k != 'LD_PRELOAD'}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, env=env, **kw)
    except subprocess.TimeoutExpired:
        fail('timed out after %ds: %s' % (timeout, ' '.join(cmd)))
    if check and p.returncode != 0:
        sys.stderr.write(p.stdout[-3000:] + p.stderr[-3000:])
        fail('exit %d: %s' % (p.returncode, ' '.join(cmd)))
    return p


def project_version(build):
    with open(os.path.join(build, 'CMakeCache.txt')) as f:
        m = re.search(r'^CMAKE_PROJECT_VERSION:STATIC=(\S+)$', f.read(), re.M)
    if not m:
        fail('no CMAKE_PROJECT_VERSION in the build\'s cache')
    return m.group(1)


# ---- the checks every tree gets ----

def check_tree(root, build, mpis, what):
    """root: the tree's prefix (bin/unblock, lib/unblock/...)."""
    launcher = os.path.join(root, 'bin', 'unblock')
    libdir = os.path.realpath(os.path.join(root, 'lib', 'unblock'))
    for f in ['libunblock-serial.so', 'unblock-sidecar', 'libunblock-serial-wrap.a',
              'unblock-serial.wrap'] + ['libunblock-%s.so' % m for m in mpis] + \
             ['libunblock-%s-wrap.a' % m for m in mpis] + ['unblock-%s.wrap' % m for m in mpis]:
        if not os.path.isfile(os.path.join(libdir, f)):
            fail('%s: no lib/unblock/%s' % (what, f))
    v = run([launcher, '--version']).stdout
    if 'libraries: ' + ','.join(mpis) not in v:
        fail('%s: unblock --version says %r, expected the libraries %s' % (what, v, mpis))

    for impl in mpis:
        # Outputs as plain, conversions and faults counted (the transparency
        # harness; the predictor off so that every eligible call is converted).
        p = run([sys.executable, os.path.join(HERE, 'transparency.py'), '--unblock', launcher,
                 '--launch', impl, '--np', '2', '--env', 'UNBLOCK_PREDICT=0',
                 '--expect', 'mpi=' + impl, '--expect', 'mpi_abi_ok=True',
                 '--expect', 'comm.functions.MPI_Send=10', '--expect-total', 'comm.async>0',
                 '--expect-total', 'comm.faults>0', '--workdir', tempfile.gettempdir(), '--',
                 os.path.join(build, 'tests', impl, 'p2p'), '{out}', 'overwrite'],
                timeout=300, check=False)
        if p.returncode != 0:
            fail('%s, %s: %s%s' % (what, impl, p.stdout, p.stderr))
        print('ok   %s: %s p2p overwrite on 2 ranks, same files as plain, sends converted '
              'and faults taken (%s)' % (what, impl, p.stdout.strip()))
        # The library preloaded is the tree's (a program that shows its own maps).
        maps = run([launcher, '--mpi=' + impl, 'cat', '/proc/self/maps']).stdout
        loaded = set(re.findall(r'(/\S*libunblock-\S+\.so)', maps))
        want = os.path.join(libdir, 'libunblock-%s.so' % impl)
        if loaded != {want}:
            fail('%s: --mpi=%s preloads %s, expected %s' % (what, impl, sorted(loaded), want))
    print('ok   %s: the launcher preloads the tree\'s libraries' % what)
    check_sidecar([launcher, '--log=info'], os.path.join(build, 'tests', 'serial', 'wb'),
                  libdir, what + ', preloaded')


def check_sidecar(prefix, program, libdir, what, env=None, plain=None):
    """Runs `prefix program OUT small` (write-behind with its sidecar) and plain;
    the files must agree and the sidecar started must be libdir's."""
    with tempfile.TemporaryDirectory() as t:
        a, b = os.path.join(t, 'plain'), os.path.join(t, 'unblock')
        os.mkdir(a)
        os.mkdir(b)
        run([plain or program, a, 'small'])
        p = run(prefix + [program, b, 'small'], env=env)
        for f in sorted(os.listdir(a)):
            with open(os.path.join(a, f), 'rb') as x, open(os.path.join(b, f), 'rb') as y:
                if x.read() != y.read():
                    fail('%s: %s differs from the plain run' % (what, f))
        if sorted(os.listdir(a)) != sorted(os.listdir(b)):
            fail('%s: files %s, plain %s' % (what, os.listdir(b), os.listdir(a)))
        m = re.findall(r'write-behind sidecar (\S+) started', p.stderr)
        want = os.path.join(libdir, 'unblock-sidecar')
        if m != [want]:
            fail('%s: sidecars started %s, expected %s\n%s' % (what, m, want, p.stderr))
    print('ok   %s: same files as plain, the sidecar is the tree\'s' % what)


def link_static(root, out_dir):
    """wb.c linked statically with the tree's link-time variant, and plain."""
    cc = shutil.which('cc') or shutil.which('gcc')
    libdir = os.path.join(root, 'lib', 'unblock')
    src = os.path.join(SRC, 'tests', 'programs', 'wb.c')
    linked, plain = os.path.join(out_dir, 'wb_static'), os.path.join(out_dir, 'wb_static_plain')
    run([cc, '-static', '-O2', '-o', plain, src])
    run([cc, '-static', '-O2', '-o', linked, src, '@' + os.path.join(libdir, 'unblock-serial.wrap'),
         '-Wl,--whole-archive', os.path.join(libdir, 'libunblock-serial-wrap.a'),
         '-Wl,--no-whole-archive', '-ldl', '-lpthread'])
    return linked, plain


# ---- the forms ----

def deb_build(build, out):
    for tool in ('cpack', 'dpkg-deb'):
        if not shutil.which(tool):
            skip('no %s here' % tool)
    run(['cpack', '-G', 'DEB', '--config', os.path.join(build, 'CPackConfig.cmake'), '-B', out],
        timeout=300)
    debs = [f for f in os.listdir(out) if f.endswith('.deb')]
    if len(debs) != 1:
        fail('cpack made %s, expected one .deb' % debs)
    return os.path.join(out, debs[0])


def mpi_package(build, impl):
    """The Debian package that owns the MPI library the test program loads."""
    ldd = run(['ldd', os.path.join(build, 'tests', impl, 'halo')]).stdout
    m = re.search(r'lib(?:mpi|mpich)\.so\.\d+ => (\S+)', ldd)
    if not m:
        fail('ldd finds no MPI library in tests/%s/halo' % impl)
    owner = run(['dpkg-query', '-S', os.path.realpath(m.group(1))]).stdout
    return owner.split(':')[0]


def deb(build, mpis):
    with tempfile.TemporaryDirectory() as t:
        path = deb_build(build, os.path.join(t, 'out'))
        arch = run(['dpkg', '--print-architecture']).stdout.strip()
        version = project_version(build) + '-1'
        if os.path.basename(path) != 'unblock_%s_%s.deb' % (version, arch):
            fail('package file named %s' % os.path.basename(path))
        fields = {}
        for line in run(['dpkg-deb', '-f', path]).stdout.splitlines():
            if line and not line[0].isspace() and ':' in line:
                k, v = line.split(':', 1)
                fields[k] = v.strip()
        want = {'Package': 'unblock', 'Version': version, 'Architecture': arch}
        for k, v in want.items():
            if fields.get(k) != v:
                fail('control field %s is %r, expected %r' % (k, fields.get(k), v))
        # libc only: an MPI is the program's dependency, not ours (docs/install.md).
        depends = fields.get('Depends', '')
        if not re.match(r'^libc6 \(>= [\d.]+\)$', depends):
            fail('Depends is %r, expected libc6 alone' % depends)
        enhances = {p.strip() for p in fields.get('Enhances', '').split(',') if p.strip()}
        owners = {mpi_package(build, impl) for impl in mpis}
        if enhances != owners:
            fail('Enhances is %s, expected the MPI libraries\' packages %s' % (enhances, owners))
        for k in ('Maintainer', 'Description', 'Section', 'Priority', 'Installed-Size'):
            if not fields.get(k):
                fail('no %s field' % k)
        print('ok   control: %s' % ', '.join('%s: %s' % kv for kv in sorted(fields.items())
                                           if kv[0] != 'Description'))
        listing = run(['dpkg-deb', '-c', path]).stdout
        names = {l.split()[-1].lstrip('.') for l in listing.splitlines()}
        for f in ['/usr/bin/unblock', '/usr/include/unblock.h',
                  '/usr/share/modulefiles/unblock/' + project_version(build),
                  '/usr/share/lmod/modulefiles/unblock/%s.lua' % project_version(build),
                  '/usr/share/doc/unblock/copyright', '/usr/share/doc/unblock/changelog.Debian.gz']:
            if f not in names:
                fail('the package has no %s' % f)
        outside = sorted(n for n in names if not n.startswith('/usr/'))
        if [n for n in outside if n not in ('/', '')]:
            fail('files outside /usr: %s' % outside)
        root = os.path.join(t, 'root')
        run(['dpkg-deb', '-x', path, root])
        check_tree(os.path.join(root, 'usr'), build, mpis, 'package')


def lintian(build):
    if not shutil.which('lintian'):
        skip('lintian is not installed (scripts/bootstrap installs it)')
    with tempfile.TemporaryDirectory() as t:
        path = deb_build(build, t)
        p = run(['lintian', '--tag-display-limit', '0', path], timeout=300, check=False)
        tags = [l for l in p.stdout.splitlines() if re.match(r'^[EWIX]: ', l)]
        print('\n'.join(tags) or 'no tags')
        errors = [l for l in tags if l.startswith('E: ')]
        if errors or p.returncode != 0:
            fail('lintian: %d error(s), exit %d %s' % (len(errors), p.returncode, p.stderr))
        print('ok   lintian: no errors (%d warnings)' % sum(l.startswith('W: ') for l in tags))


def install(build, prefix, destdir=None):
    env = {k: v for k, v in os.environ.items() if k != 'DESTDIR'}
    if destdir:
        env['DESTDIR'] = destdir
    run(['cmake', '--install', build, '--prefix', prefix], env=env, timeout=300)


def relocated(build, mpis):
    with tempfile.TemporaryDirectory() as t:
        # DESTDIR staging lays the tree out under the prefix, nothing elsewhere.
        stage = os.path.join(t, 'stage')
        install(build, '/opt/unblock', stage)
        if os.listdir(stage) != ['opt'] or os.listdir(os.path.join(stage, 'opt')) != ['unblock']:
            fail('DESTDIR install wrote outside its prefix: %s' % os.listdir(stage))
        direct = os.path.join(t, 'direct')
        install(build, direct)
        def files(d):
            return sorted(os.path.relpath(os.path.join(r, f), d)
                          for r, _, fs in os.walk(d) for f in fs)
        if files(direct) != files(os.path.join(stage, 'opt', 'unblock')):
            fail('DESTDIR and --prefix installs differ')
        # Moved somewhere no build or install knows of, and started through a link.
        moved = os.path.join(t, 'elsewhere', 'deeper', 'unblock')
        os.makedirs(os.path.dirname(moved))
        shutil.move(os.path.join(stage, 'opt', 'unblock'), moved)
        check_tree(moved, build, mpis, 'moved tree')
        links = os.path.join(t, 'links')
        os.mkdir(links)
        os.symlink(os.path.join(moved, 'bin', 'unblock'), os.path.join(links, 'unblock'))
        libdir = os.path.realpath(os.path.join(moved, 'lib', 'unblock'))
        check_sidecar([os.path.join(links, 'unblock'), '--log=info'],
                      os.path.join(build, 'tests', 'serial', 'wb'), libdir,
                      'moved tree, launcher through a link')
        # The link-time variant: its "library" is the program, the launcher tells
        # where the sidecar is (UNBLOCK_LIBDIR); the build's folder, compiled in
        # as the last resort, must not be the one used.
        linked, plain = link_static(moved, t)
        check_sidecar([os.path.join(moved, 'bin', 'unblock'), '--log=info'], linked, libdir,
                      'moved tree, static program with the link-time variant', plain=plain)


MODULE_SYSTEMS = [
    # name, shell init, modulefile kinds it reads
    ('Lmod', '/usr/share/lmod/lmod/init/bash', ('tcl', 'lua')),
    ('Environment Modules', '/usr/share/modules/init/bash', ('tcl',)),
]


def modulefile(build):
    systems = [s for s in MODULE_SYSTEMS if os.path.isfile(s[1])]
    if not systems:
        skip('neither Lmod nor Environment Modules is installed (scripts/bootstrap installs Lmod)')
    version = project_version(build)
    with tempfile.TemporaryDirectory() as t:
        first = os.path.join(t, 'first')
        install(build, first)
        moved = os.path.join(t, 'moved', 'unblock')
        os.makedirs(os.path.dirname(moved))
        shutil.move(first, moved)
        real = os.path.realpath(moved)
        libdir = os.path.join(real, 'lib', 'unblock')
        files = {'tcl': os.path.join(moved, 'share', 'modulefiles', 'unblock', version),
                 'lua': os.path.join(moved, 'share', 'lmod', 'modulefiles', 'unblock',
                                     version + '.lua')}
        linked, plain = link_static(moved, t)
        for name, init, kinds in systems:
            for kind in kinds:
                # A site's module folder that links to the installed file.
                site = os.path.join(t, 'site-%s-%s' % (name.split()[0], kind), 'unblock')
                os.makedirs(site)
                os.symlink(files[kind], os.path.join(site, os.path.basename(files[kind])))
                script = '''
                    source "%s" >/dev/null 2>&1 || exit 90
                    module use "%s"
                    module load unblock || exit 91
                    echo "unblock=$(command -v unblock)"
                    echo "libdir=$UNBLOCK_LIBDIR"
                    echo "cpath=$CPATH"
                    unblock --version
                    unblock --log=info "%s" "$1" small 2>&1
                    "%s" "$2" small 2>&1
                    module unload unblock
                    case ":$PATH:" in *":$3:"*) echo "still on PATH";; *) echo "unloaded";; esac
                    echo "after=${UNBLOCK_LIBDIR-unset}"
                ''' % (init, os.path.dirname(site), os.path.join(build, 'tests', 'serial', 'wb'),
                       linked)
                what = '%s, %s modulefile' % (name, kind)
                with tempfile.TemporaryDirectory() as o:
                    a, b = os.path.join(o, 'a'), os.path.join(o, 'b')
                    os.mkdir(a)
                    os.mkdir(b)
                    env = {k: v for k, v in os.environ.items()
                           if not k.startswith(('UNBLOCK_', 'LMOD', 'MODULE', '__LMOD', '_LMFILES_',
                                                'LOADEDMODULES'))}
                    env['UNBLOCK_LOG'] = 'info' # for the static program's sidecar line
                    p = run(['bash', '--norc', '--noprofile', '-c', script, 'x', a, b,
                             os.path.join(real, 'bin')], env=env, check=False)
                    out = p.stdout + p.stderr
                    if p.returncode != 0:
                        fail('%s: exit %d\n%s' % (what, p.returncode, out))
                    expect = ['unblock=' + os.path.join(real, 'bin', 'unblock'),
                              'libdir=' + libdir, 'unloaded', 'after=unset']
                    for e in expect:
                        if e not in out.splitlines():
                            fail('%s: no line %r in\n%s' % (what, e, out))
                    if os.path.join(real, 'include') not in out.split('cpath=')[1].split('\n')[0]:
                        fail('%s: CPATH lacks the include folder\n%s' % (what, out))
                    sidecars = re.findall(r'write-behind sidecar (\S+) started', out)
                    if sidecars != [os.path.join(libdir, 'unblock-sidecar')] * 2:
                        fail('%s: sidecars %s, expected the tree\'s twice\n%s' % (
                            what, sidecars, out))
                print('ok   %s: module load puts the moved tree\'s launcher on PATH and '
                      'UNBLOCK_LIBDIR, its sidecar serves the launcher and a static program '
                      'linked with the variant; unload restores PATH' % what)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    what, build = sys.argv[1], os.path.abspath(sys.argv[2])
    mpis = [m for m in (sys.argv[3] if len(sys.argv) > 3 else '').split(';') if m]
    {'deb': lambda: deb(build, mpis), 'lintian': lambda: lintian(build),
     'relocated': lambda: relocated(build, mpis),
     'modulefile': lambda: modulefile(build)}[what]()
    print('PASS')


if __name__ == '__main__':
    main()
