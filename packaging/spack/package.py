# A Spack recipe for unblock (docs/install.md says how to use it).
#
# unblock builds one preload library per MPI ABI family, against the MPI Spack
# gives it: Open MPI, or MPICH.  The wrappers are generated from that MPI's
# mpi.h at build time (tools/gen_mpi_wrappers.py), and the library finds the MPI
# in the program that loads it, so the MPI is a dependency of the build only in
# the sense Spack's "mpi" means: the one the programs will use.
#
# There is no release archive yet: the version below is built from a checkout
# with `spack develop` (docs/install.md).  Checked without Spack by
# tests/integration/spack_recipe.py (against a stand-in for Spack's directives,
# then a real CMake build with the arguments this recipe gives).
from spack.package import *  # noqa: F401,F403

try:  # Spack 1.0 and later keep the build systems in the builtin repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # earlier releases export them from spack.package
    pass


class Unblock(CMakePackage):
    """Makes the blocking MPI calls and blocking file I/O of unmodified MPI
    programs asynchronous, behind page protection: mpirun -np 4 unblock ./app.
    A launcher and preloaded libraries, for the MPI it is built with and for
    programs without MPI, and a link-time variant for static programs."""

    version("0.1.0")

    variant("tests", default=False, description="Build the test programs (ctest)")
    variant("bench", default=False, description="Build the benchmarks")

    depends_on("c", type="build")
    depends_on("fortran", type="build", when="+tests")
    depends_on("cmake@3.18:", type="build")
    depends_on("python@3.11:", type="build")  # tomllib, for the wrapper generator
    depends_on("mpi")

    # The two ABI families the wrappers know (src/comm/mpi_functions.toml).
    requires("^openmpi", "^mpich", policy="one_of",
             msg="unblock builds against Open MPI or MPICH")

    MPI_FAMILY = {"openmpi": "openmpi", "mpich": "mpich"}

    def mpi_family(self):
        mpi = self.spec["mpi"]
        family = self.MPI_FAMILY.get(mpi.name)
        if family is None:
            raise InstallError("unblock builds against Open MPI or MPICH, not " + mpi.name)
        return family

    def cmake_args(self):
        mpi = self.spec["mpi"]
        family = self.mpi_family()
        # Only this MPI's library; its compiler wrappers by Spack's names (the
        # build's default looks for Debian's mpicc.openmpi and mpicc.mpich).
        return [
            self.define("UNBLOCK_MPIS", family),
            self.define("UNBLOCK_%s_MPICC" % family, mpi.mpicc),
            self.define("UNBLOCK_%s_MPIF90" % family, mpi.mpifc),
            self.define_from_variant("UNBLOCK_BUILD_TESTS", "tests"),
            self.define_from_variant("UNBLOCK_BUILD_BENCH", "bench"),
        ]

    def setup_run_environment(self, env):
        # PATH is Spack's; the folder of the libraries is for programs linked with
        # the link-time variant, which find the sidecar there.
        env.set("UNBLOCK_LIBDIR", self.prefix.lib.unblock)

    def test_launcher(self):
        """the launcher runs and has the library of the MPI it was built with"""
        unblock = which(self.prefix.bin.unblock)
        out = unblock("--version", output=str, error=str)
        family = self.mpi_family()
        assert "(libraries: %s)" % family in out, out
