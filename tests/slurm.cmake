# slurm.cmake — jobs started by Slurm (srun, sbatch) on a one-node cluster that
# each test starts for itself and stops (scripts/slurm-local run), under every MPI
# built.  Included from tests/CMakeLists.txt after p2p.cmake (the p2p program):
#   include(${CMAKE_CURRENT_SOURCE_DIR}/slurm.cmake)
#
# Each test is a transparency test (the same job without and with unblock, files
# identical byte for byte) of p2p.c's `overwrite` case with the predictor off
# (--predict=0, a launcher flag: every send converted, then overwritten at once),
# and proves a real parallel job: --where checks that p2p wrote where-<r>.txt for
# ranks 0..N-1, each "rank r of N ... via LAUNCHER", and prints each rank's host.
# unblock must have engaged: converted calls in every rank's statistics (faults
# depend on timing: a send may be over before the program touches its buffer), and its reading of the job (job.*: launcher, ranks on the node).
# Where Slurm cannot start (packages missing, not root, a daemon that does not
# come up), slurm-local prints why and exits 77: CTest reports the test skipped.
#
# Tests: <impl>.slurm.srun.np2, .sbatch-srun.np2, .sbatch-mpirun.np2,
#        openmpi.slurm.export-none.np2, .cpu-bind-cores.np2, .cpu-bind-none.np2,
#        .overcommit.np4, mpich.slurm.export-list.np2, slurm.local.cleanup.

set(SLURM_LOCAL ${CMAKE_SOURCE_DIR}/scripts/slurm-local)
# srun's plugin for each MPI (docs/launcher.md, "Slurm"): Debian's Open MPI 4.1
# starts only through PMIx; Debian's MPICH 4.0 has a PMI-1 client, which Slurm's
# pmi2 plugin also serves (under --mpi=pmix its ranks are singletons).
set(UNBLOCK_SRUN_MPI_openmpi pmix)
set(UNBLOCK_SRUN_MPI_mpich pmi2)
set(UNBLOCK_MPIRUN_VIA_openmpi "mpirun (Open MPI)")
set(UNBLOCK_MPIRUN_VIA_mpich "mpiexec (Hydra)")
set(UNBLOCK_JOB_LAUNCHER_openmpi openmpi)
set(UNBLOCK_JOB_LAUNCHER_mpich hydra)
# What every job's statistics must show: unblock converted the sends and the
# program touched their buffers at once.
set(UNBLOCK_SLURM_ENGAGED --expect comm.functions.MPI_Send=10 --expect comm.async>5
    --expect comm.bytes>1000000 --expect mpi_abi_ok=True)

function(unblock_slurm_test name)
  add_test(NAME ${name} COMMAND ${SLURM_LOCAL} run -- ${TRANSPARENCY} ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
endfunction()

foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  set(p2p ${TESTBIN}/${impl}/p2p)
  set(plugin ${UNBLOCK_SRUN_MPI_${impl}})
  set(srun --launch srun --srun-mpi ${plugin} --where "srun --mpi=${plugin}")
  # srun -n 2 unblock ./p2p: unblock reads rank, size and the ranks on the node
  # from Slurm's variables.
  unblock_slurm_test(${impl}.slurm.srun.np2 ${srun} --np 2 --unblock-arg=--predict=0
    ${UNBLOCK_SLURM_ENGAGED} --expect job.launcher=slurm --expect job.size=2
    --expect job.local_size=2 --expect job.slurm_mpi=${plugin} -- ${p2p} {out} overwrite)
  # A job script whose one step is srun.
  unblock_slurm_test(${impl}.slurm.sbatch-srun.np2 ${srun} --sbatch --np 2
    --unblock-arg=--predict=0 ${UNBLOCK_SLURM_ENGAGED} --expect job.launcher=slurm
    -- ${p2p} {out} overwrite)
  # A job script that runs mpirun inside its allocation (Open MPI reads the
  # allocation and starts its daemons with srun; so does Hydra): the ranks carry
  # the batch step's SLURM_* too, and mpirun's variables must win.
  unblock_slurm_test(${impl}.slurm.sbatch-mpirun.np2 --launch ${impl} --sbatch --np 2
    --where "${UNBLOCK_MPIRUN_VIA_${impl}}" --unblock-arg=--predict=0 ${UNBLOCK_SLURM_ENGAGED}
    --expect job.launcher=${UNBLOCK_JOB_LAUNCHER_${impl}} --expect job.local_size=2
    -- ${p2p} {out} overwrite)
endforeach()

if("openmpi" IN_LIST UNBLOCK_BUILT_MPIS)
  set(srun --launch srun --srun-mpi pmix --where "srun --mpi=pmix")
  set(p2p ${TESTBIN}/openmpi/p2p)
  # --export=NONE: the ranks get none of the submitting shell's variables; the
  # launcher's flags (--stats, --predict=0, --copy_max=16K: large sends from the
  # program's pages made read-only, not copied) still reach the program, because
  # the launcher runs in the task and sets them there.  (The same options as
  # variables of the submitting shell would not: comm.protected 0, tried.)
  unblock_slurm_test(openmpi.slurm.export-none.np2 ${srun} --np 2 --srun-arg=--export=NONE
    --unblock-arg=--predict=0 --unblock-arg=--copy_max=16K ${UNBLOCK_SLURM_ENGAGED}
    --expect comm.protected>0 -- ${p2p} {out} overwrite)
  # Each rank bound to one CPU (Slurm's task/affinity): the completion thread
  # shares it, so it has no spare core and backs off (docs/launcher.md).
  unblock_slurm_test(openmpi.slurm.cpu-bind-cores.np2 ${srun} --np 2
    --srun-arg=--cpu-bind=cores --unblock-arg=--predict=0 ${UNBLOCK_SLURM_ENGAGED}
    --expect comm.engine.cpus=1 --expect comm.engine.spare_core=0 -- ${p2p} {out} overwrite)
  # Unbound, two ranks on a two-CPU node: no spare core either, which only
  # Slurm's tasks-per-node tells (without it a rank would count 1 rank on 2 CPUs).
  unblock_slurm_test(openmpi.slurm.cpu-bind-none.np2 ${srun} --np 2
    --srun-arg=--cpu-bind=none --unblock-arg=--predict=0 ${UNBLOCK_SLURM_ENGAGED}
    --expect job.local_size=2 --expect comm.engine.spare_core=0 -- ${p2p} {out} overwrite)
  # 4 ranks on the node's CPUs (2 here): --overcommit.
  unblock_slurm_test(openmpi.slurm.overcommit.np4 ${srun} --np 4 --srun-arg=--overcommit
    --unblock-arg=--predict=0 ${UNBLOCK_SLURM_ENGAGED} --expect job.size=4
    --expect job.local_size=4 -- ${p2p} {out} overwrite)
endif()

if("mpich" IN_LIST UNBLOCK_BUILT_MPIS)
  # --export with an explicit list: only the two UNBLOCK_* named (and SLURM_*)
  # reach the task; options set in the environment then work as the flags do
  # (comm.protected: UNBLOCK_COPY_MAX=16K arrived).
  unblock_slurm_test(mpich.slurm.export-list.np2 --launch srun --srun-mpi pmi2
    --where "srun --mpi=pmi2" --np 2 --srun-arg=--export=UNBLOCK_PREDICT,UNBLOCK_COPY_MAX
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_COPY_MAX=16K ${UNBLOCK_SLURM_ENGAGED}
    --expect comm.protected>0 -- ${TESTBIN}/mpich/p2p {out} overwrite)
endif()

# slurm-local itself: COMMAND's exit status comes back, and a job step and a
# batch job still running when COMMAND ends are cancelled and every process of
# the cluster is gone afterwards.
add_test(NAME slurm.local.cleanup COMMAND ${INTEGRATION}/slurm_local.sh ${SLURM_LOCAL})
set_tests_properties(slurm.local.cleanup PROPERTIES TIMEOUT 120 SKIP_RETURN_CODE 77)
