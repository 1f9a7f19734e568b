#!/usr/bin/env python3
"""The Spack recipe (packaging/spack/package.py), checked without Spack.

    spack_recipe.py SOURCE_DIR BUILD_DIR

Spack is not on PyPI and cannot be fetched here, so the recipe is imported
against a stand-in for the part of Spack's package API it uses (the directives
record what they are given; CMakePackage.define and define_from_variant format
as Spack documents them), in both of Spack's layouts: 1.x, whose CMakePackage
lives in spack_repo.builtin.build_systems.cmake, and earlier ones, where
spack.package exports it.  Then:
  * the declared dependencies agree with the build: mpi, CMake at least the
    cmake_minimum_required of CMakeLists.txt, Python at least its
    find_package(Python3 X.Y), the version is the project's;
  * every variant turns into an option() that CMakeLists.txt declares;
  * cmake_args for Open MPI and for MPICH name that MPI's compiler wrappers, and
    an MPI of another family is refused with InstallError;
  * those arguments, with the compiler wrappers under Spack's names (mpicc,
    mpif90 in a bin/ of their own), configure the real build with only that
    MPI's library; for MPICH it is built and installed as Spack would (the
    variants at their defaults), and the recipe's own test method and its run
    environment are tried on the installed tree.
What stays unchecked: concretization, fetching, and Spack's own build driver.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types

SRC, BUILD = (os.path.abspath(a) for a in sys.argv[1:3])
RECIPE = os.path.join(SRC, 'packaging', 'spack', 'package.py')
passed = 0


def fail(why):
    sys.exit('FAIL: ' + why)


def ok(what):
    global passed
    passed += 1
    print('ok   ' + what)


# ---- the stand-in for Spack's package API ----

class InstallError(Exception):
    pass


class Prefix(str):
    """Spack's Prefix: attribute access joins path components."""
    def __getattr__(self, name):
        return Prefix(os.path.join(self, name))


class Recorder:
    """Directive calls made while a class body runs, kept for the class."""
    pending = []


def record(name, args, kw):
    Recorder.pending.append((name, args, kw))


# The directives the recipe may use, with Spack's signatures (spack/directives.py),
# so that a misspelt keyword fails here as it would in Spack.
def version(ver, checksum=None, *, preferred=None, deprecated=None, url=None, sha256=None,
            git=None, branch=None, tag=None, commit=None, submodules=None):
    if not isinstance(ver, (str, int)):
        raise TypeError('version must be a string or int')
    record('version', (ver,), {k: v for k, v in dict(
        checksum=checksum, preferred=preferred, deprecated=deprecated, url=url, sha256=sha256,
        git=git, branch=branch, tag=tag, commit=commit, submodules=submodules).items() if v})


def variant(name, default=None, description='', values=None, multi=None, validator=None,
            when=None, sticky=False):
    record('variant', (name,), dict(default=default, description=description, when=when))


def depends_on(spec, when=None, type=('build', 'link'), patches=None):
    if spec.split('@')[0] in ('c', 'cxx', 'fortran'):
        assert type == 'build', 'languages must be of \'build\' type'
    record('depends_on', (spec,), dict(when=when, type=type))


def requires(*requirement_specs, policy='one_of', when=None, msg=None):
    if policy not in ('one_of', 'any_of'):
        raise ValueError('requires: policy must be one_of or any_of')
    record('requires', requirement_specs, dict(policy=policy, when=when, msg=msg))


def conflicts(conflict_spec, when=None, msg=None):
    record('conflicts', (conflict_spec,), dict(when=when, msg=msg))


def maintainers(*names):
    record('maintainers', names, {})


def license(license_identifier, checked_by=None, when=None):
    record('license', (license_identifier,), dict(when=when))


class CMakePackage:
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls.directives = list(Recorder.pending)
        Recorder.pending.clear()

    def __init__(self, spec, prefix):
        self.spec, self.prefix = spec, Prefix(prefix)

    # As Spack formats them (CMakeBuilder.define / define_from_variant).
    @staticmethod
    def define(name, value):
        if isinstance(value, bool):
            return '-D%s:BOOL=%s' % (name, 'ON' if value else 'OFF')
        if isinstance(value, (list, tuple)):
            value = ';'.join(str(v) for v in value)
        return '-D%s:STRING=%s' % (name, value)

    def define_from_variant(self, name, variant):
        return self.define(name, self.spec.variants[variant].value)


class Variant:
    def __init__(self, value):
        self.value = value


class Spec:
    def __init__(self, mpi, variants):
        self.mpi, self.variants = mpi, {k: Variant(v) for k, v in variants.items()}

    def __getitem__(self, name):
        if name != 'mpi':
            raise KeyError(name)
        return self.mpi


class EnvironmentModifications:
    def __init__(self):
        self.set_to = {}

    def set(self, name, value):
        self.set_to[name] = str(value)


class Executable:
    def __init__(self, path):
        self.path = path

    def __call__(self, *args, output=None, error=None):
        p = subprocess.run([self.path] + list(args), capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            raise InstallError('%s exited %d' % (self.path, p.returncode))
        return p.stdout + (p.stderr if error is str else '') if output is str else None


def which(path):
    return Executable(path) if os.access(path, os.X_OK) else None


def stand_in(layout):
    """Installs fake spack modules in sys.modules for the given layout."""
    for name in [m for m in sys.modules if m == 'spack' or m.startswith(('spack.', 'spack_repo'))]:
        del sys.modules[name]
    package = types.ModuleType('spack.package')
    for fn in (version, variant, depends_on, requires, conflicts, maintainers, license):
        setattr(package, fn.__name__, fn)
    for obj in (InstallError, Prefix, EnvironmentModifications, Executable, which):
        setattr(package, obj.__name__, obj)
    sys.modules['spack'] = types.ModuleType('spack')
    sys.modules['spack.package'] = package
    if layout == '1.x':
        for name in ('spack_repo', 'spack_repo.builtin', 'spack_repo.builtin.build_systems'):
            sys.modules[name] = types.ModuleType(name)
        cmake = types.ModuleType('spack_repo.builtin.build_systems.cmake')
        cmake.CMakePackage = CMakePackage
        sys.modules['spack_repo.builtin.build_systems.cmake'] = cmake
    else:
        package.CMakePackage = CMakePackage


def load_recipe(layout):
    stand_in(layout)
    spec = importlib.util.spec_from_file_location('unblock_recipe_' + layout.replace('.', '_'),
                                                  RECIPE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not issubclass(mod.Unblock, CMakePackage):
        fail('Unblock is not a CMakePackage (%s layout)' % layout)
    return mod.Unblock


# ---- checks ----

def cmakelists():
    with open(os.path.join(SRC, 'CMakeLists.txt')) as f:
        return f.read()


def version_tuple(v):
    return tuple(int(x) for x in v.split('.'))


def check_declarations(cls):
    text = cmakelists()
    calls = cls.directives
    deps = {a[0]: kw for n, a, kw in calls if n == 'depends_on'}
    if 'mpi' not in deps or deps['mpi'].get('when'):
        fail('no unconditional depends_on("mpi")')
    want_cmake = re.search(r'cmake_minimum_required\(VERSION ([\d.]+)\)', text).group(1)
    want_python = re.search(r'find_package\(Python3 ([\d.]+)', text).group(1)
    got = {}
    for d in deps:
        m = re.match(r'^(cmake|python)@([\d.]+):$', d)
        if m:
            got[m.group(1)] = m.group(2)
            if deps[d].get('type') != 'build':
                fail('%s is not a build dependency' % d)
    if got.get('cmake') is None or version_tuple(got['cmake']) < version_tuple(want_cmake):
        fail('CMake dependency %s, CMakeLists.txt needs %s' % (got.get('cmake'), want_cmake))
    if got.get('python') is None or version_tuple(got['python']) < version_tuple(want_python):
        fail('Python dependency %s, CMakeLists.txt needs %s' % (got.get('python'), want_python))
    project = re.search(r'project\(unblock VERSION ([\d.]+)', text).group(1)
    versions = [a[0] for n, a, kw in calls if n == 'version']
    if project not in versions:
        fail('recipe versions %s lack the project\'s %s' % (versions, project))
    ok('depends on mpi, cmake@%s:, python@%s: (CMakeLists.txt: %s, %s); version %s' % (
        got['cmake'], got['python'], want_cmake, want_python, project))
    required = [(set(a), kw.get('policy')) for n, a, kw in calls if n == 'requires']
    families = {'^' + name for name in cls.MPI_FAMILY}
    if (families, 'one_of') not in required:
        fail('no requires(%s, policy="one_of") matching MPI_FAMILY (%s)' % (
            sorted(families), required))
    variants = {a[0]: kw for n, a, kw in calls if n == 'variant'}
    options = set(re.findall(r'^option\((\w+)', text, re.M))
    return variants, options


def check_args(cls, variants, options, family, mpicc, mpifc, prefix):
    values = {v: kw.get('default') for v, kw in variants.items()}
    mpi = types.SimpleNamespace(name=family, mpicc=mpicc, mpifc=mpifc, prefix='/spack/mpi')
    pkg = cls(Spec(mpi, values), prefix)
    args = pkg.cmake_args()
    want = ['-DUNBLOCK_MPIS:STRING=' + family, '-DUNBLOCK_%s_MPICC:STRING=%s' % (family, mpicc),
            '-DUNBLOCK_%s_MPIF90:STRING=%s' % (family, mpifc)]
    for w in want:
        if w not in args:
            fail('%s: cmake_args %s lack %s' % (family, args, w))
    for v, default in values.items():
        flags = [a for a in args if a.endswith(':BOOL=%s' % ('ON' if default else 'OFF'))]
        names = {re.match(r'-D(\w+):', a).group(1) for a in flags}
        if not names & options:
            fail('variant %s gives no option of CMakeLists.txt (%s)' % (v, sorted(options)))
    # Each variant, flipped, flips its option.
    for v in values:
        flipped = dict(values, **{v: not values[v]})
        other = cls(Spec(mpi, flipped), prefix).cmake_args()
        if sorted(set(other) - set(args)) == []:
            fail('variant %s changes nothing in cmake_args' % v)
    return pkg, args


def configure(args, family, where, build=False):
    cmd = ['cmake', '-S', SRC, '-B', where, '-DCMAKE_BUILD_TYPE=Release',
           '-DCMAKE_INSTALL_PREFIX=' + os.path.join(where, 'prefix')] + args
    if shutil.which('ninja'):
        cmd += ['-G', 'Ninja']
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail('%s: cmake with the recipe\'s arguments failed:\n%s%s' % (family, p.stdout, p.stderr))
    targets = subprocess.run(['cmake', '--build', where, '--target', 'help'], capture_output=True,
                             text=True, timeout=60).stdout
    have = set(re.findall(r'\bunblock-(openmpi|mpich)\b', targets))
    if have != {family}:
        fail('%s: the build has the libraries of %s, expected only %s' % (family, have, family))
    if os.path.exists(os.path.join(where, 'tests')):
        fail('%s: tests configured with the tests variant off' % family)
    ok('%s: the recipe\'s arguments configure the build with only the %s library, no tests' % (
        family, family))
    if not build:
        return
    for step in (['cmake', '--build', where, '-j', '2'], ['cmake', '--install', where]):
        p = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            fail('%s: %s failed:\n%s%s' % (family, ' '.join(step), p.stdout[-3000:], p.stderr))


def main():
    cls = None
    for layout in ('1.x', '0.x'):
        cls = load_recipe(layout)
        ok('the recipe imports as a CMakePackage with Spack %s\'s layout' % layout)
    variants, options = check_declarations(cls)
    for v, kw in variants.items():
        if kw.get('default') is not False:
            fail('variant %s is on by default: a package install needs neither tests nor '
                 'benchmarks' % v)
    ok('variants %s, off by default' % sorted(variants))

    with tempfile.TemporaryDirectory(dir=BUILD) as t:
        for family, cc, fc in (('openmpi', 'mpicc.openmpi', 'mpif90.openmpi'),
                               ('mpich', 'mpicc.mpich', 'mpif90.mpich')):
            if not shutil.which(cc):
                print('SKIPPED: %s not installed: %s not built' % (family, family))
                continue
            # Spack's MPI has plain wrapper names in its own bin/.
            bindir = os.path.join(t, family + '-mpi', 'bin')
            os.makedirs(bindir)
            os.symlink(shutil.which(cc), os.path.join(bindir, 'mpicc'))
            os.symlink(shutil.which(fc) or '/nonexistent', os.path.join(bindir, 'mpif90'))
            where = os.path.join(t, family)
            pkg, args = check_args(cls, variants, options, family, os.path.join(bindir, 'mpicc'),
                                   os.path.join(bindir, 'mpif90'), os.path.join(where, 'prefix'))
            ok('%s: cmake_args %s; each variant sets an option of CMakeLists.txt' % (
                family, ' '.join(args)))
            built = family == 'mpich'
            configure(args, family, where, build=built)
            if built:
                env = EnvironmentModifications()
                pkg.setup_run_environment(env)
                libdir = env.set_to.get('UNBLOCK_LIBDIR')
                if not libdir or not os.path.isfile(os.path.join(libdir, 'unblock-sidecar')):
                    fail('setup_run_environment sets UNBLOCK_LIBDIR=%s, which has no sidecar' %
                         libdir)
                pkg.test_launcher()
                ok('%s: built and installed as Spack would; the recipe\'s test_launcher passes '
                   'and UNBLOCK_LIBDIR is the installed library folder' % family)
        mpi = types.SimpleNamespace(name='intel-oneapi-mpi', mpicc='mpicc', mpifc='mpifc')
        try:
            cls(Spec(mpi, {v: False for v in variants}), t).cmake_args()
            fail('an MPI of neither family was accepted')
        except InstallError as e:
            ok('another MPI is refused: %s' % e)
    print('PASS: %d checks' % passed)


if __name__ == '__main__':
    main()
