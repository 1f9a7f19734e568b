# p2p.cmake — the transparency tests of the blocking point-to-point calls that
# unblock completes behind page protection (tests/programs/p2p.c, p2p.F90) and of a
# program with its own SIGSEGV handler (tests/programs/own_segv.c), under every MPI
# built.  Included from tests/CMakeLists.txt, after unblock_mpi_program and
# unblock_transparency_test are defined:  include(${CMAKE_CURRENT_SOURCE_DIR}/p2p.cmake)
#
# Tests: <impl>.p2p.<case>.np2 (one per case), <impl>.p2p.all.np4,
#        <impl>.own_segv.<variant>.np2, <impl>.p2p-fortran.np2 and .np4.
# Each rank writes OUTDIR/rank-<r>.txt with "ok"/"MISMATCH" per check; the harness
# compares the plain run's files with the run under unblock byte for byte.  The
# --expect lines hold on every rank: each case runs in both directions of a pair.
# These tests check the mechanism, so the predictor is off (UNBLOCK_PREDICT=0:
# every eligible call is converted); <impl>.p2p.all.predict.np4 runs with it on.

# Calls per rank of each p2p case (both directions: every rank sends and receives).
set(UNBLOCK_P2P_EXPECT_overwrite    comm.functions.MPI_Send=10 comm.functions.MPI_Recv=10)
set(UNBLOCK_P2P_EXPECT_readafter    comm.functions.MPI_Send=6 comm.functions.MPI_Recv=6)
set(UNBLOCK_P2P_EXPECT_order        comm.functions.MPI_Send=200 comm.functions.MPI_Recv=200)
set(UNBLOCK_P2P_EXPECT_wildcard     comm.functions.MPI_Send=5 comm.functions.MPI_Recv=5)
set(UNBLOCK_P2P_EXPECT_memkinds     comm.functions.MPI_Send=10 comm.functions.MPI_Recv=10)
set(UNBLOCK_P2P_EXPECT_syscalls     comm.functions.MPI_Send=2 comm.functions.MPI_Recv=2)
set(UNBLOCK_P2P_EXPECT_overlapping  comm.functions.MPI_Send=4 comm.functions.MPI_Recv=4)
set(UNBLOCK_P2P_EXPECT_replace      comm.functions.MPI_Sendrecv_replace=7)
set(UNBLOCK_P2P_EXPECT_modes        comm.functions.MPI_Ssend=4 comm.functions.MPI_Bsend=2
                                    comm.functions.MPI_Rsend=2 comm.functions.MPI_Recv=6
                                    comm.functions.MPI_Irecv=2)
set(UNBLOCK_P2P_EXPECT_zero         comm.functions.MPI_Send=2 comm.functions.MPI_Recv=2
                                    comm.functions.MPI_Sendrecv=2)
set(UNBLOCK_P2P_EXPECT_free         comm.functions.MPI_Send=8 comm.functions.MPI_Recv=8)
set(UNBLOCK_P2P_EXPECT_sendrecv     comm.functions.MPI_Sendrecv=80)
set(UNBLOCK_P2P_EXPECT_own          comm.functions.MPI_Send=18 comm.functions.MPI_Recv=14
                                    comm.functions.MPI_Isend=2 comm.functions.MPI_Irecv=6
                                    comm.own.tracked>10 comm.own.untracked=0
                                    comm.passthrough_why.own_nonblocking>2 comm.received>5)
# ownsmall: each rank mixes in one direction, 5 receives refused beside its small
# requests (its peer's none).
set(UNBLOCK_P2P_EXPECT_ownsmall     comm.functions.MPI_Send=12 comm.functions.MPI_Recv=9
                                    comm.functions.MPI_Isend=1 comm.functions.MPI_Irecv=4
                                    comm.functions.MPI_Test=1 comm.functions.MPI_Testall=1
                                    comm.own.tracked=5 comm.own.untracked=0
                                    comm.passthrough_why.own_nonblocking=5)
set(UNBLOCK_P2P_EXPECT_coll         comm.functions.MPI_Send=6 comm.functions.MPI_Recv=6
                                    comm.functions.MPI_Allreduce=4 comm.functions.MPI_Bcast=4
                                    comm.functions.MPI_Gather=4 comm.functions.MPI_Alltoall=2
                                    comm.functions.MPI_Reduce=2 comm.functions.MPI_File_write_at=1
                                    comm.functions.MPI_File_read_at=1 comm.functions.MPI_Gatherv=4
                                    comm.functions.MPI_Scatterv=4 comm.functions.MPI_Allgatherv=6
                                    comm.functions.MPI_Alltoallv=2
                                    comm.functions.MPI_Reduce_scatter=2 comm.received>1)
set(UNBLOCK_P2P_EXPECT_chains       comm.functions.MPI_Sendrecv=105)
set(UNBLOCK_P2P_EXPECT_all          comm.functions.MPI_Send=271 comm.functions.MPI_Recv=273
                                    comm.functions.MPI_Sendrecv=189
                                    comm.functions.MPI_Sendrecv_replace=7
                                    comm.functions.MPI_Rsend=2)
set(UNBLOCK_P2P_CASES overwrite readafter order wildcard memkinds syscalls overlapping replace
    modes zero free sendrecv own coll chains ownsmall)

foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  unblock_mpi_program(${impl} p2p ${UNBLOCK_${impl}_MPICC} p2p.c)
  unblock_mpi_program(${impl} own_segv ${UNBLOCK_${impl}_MPICC} own_segv.c)
  unblock_mpi_program(${impl} p2p_mpifh ${UNBLOCK_${impl}_MPIF90} p2p.F90)
  set(bin ${TESTBIN}/${impl})

  foreach(case IN LISTS UNBLOCK_P2P_CASES)
    set(expects "")
    foreach(e IN LISTS UNBLOCK_P2P_EXPECT_${case})
      list(APPEND expects --expect ${e})
    endforeach()
    unblock_transparency_test(${impl}.p2p.${case}.np2 --launch ${impl} --np 2 ${expects}
      --env UNBLOCK_PREDICT=0 -- ${bin}/p2p {out} ${case})
  endforeach()
  # The own case with the program's requests not followed (UNBLOCK_OWN_FOLLOW=no:
  # each rank untracked from its first request, every later receive refused
  # for it: 11 and 16 where following refuses 4 and 5; the output the same).
  unblock_transparency_test(${impl}.p2p.own.follow-no.np2 --launch ${impl} --np 2
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_OWN_FOLLOW=no --expect comm.own.untracked=1
    --expect comm.passthrough_why.own_nonblocking>8 -- ${bin}/p2p {out} own)
  set(expects "")
  foreach(e IN LISTS UNBLOCK_P2P_EXPECT_all)
    list(APPEND expects --expect ${e})
  endforeach()
  unblock_transparency_test(${impl}.p2p.all.np4 --launch ${impl} --np 4 ${expects}
    --env UNBLOCK_PREDICT=0 --expect comm.async>200 --expect comm.copied>100 --expect comm.received>5
    --expect comm.multiview=0 --expect comm.viewed=0 --expect protect.large_blocks>50
    --expect comm.faults>0
    --expect comm.progress=thread -- ${bin}/p2p {out} all)
  # The same in multiview (the double-mapped pool: MPI works on its second view).
  unblock_transparency_test(${impl}.p2p.all.multiview.np4 --launch ${impl} --np 4 ${expects}
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_POOL=1 --expect comm.async>200 --expect comm.copied>100
    --expect comm.received>5 --expect comm.multiview>100 --expect comm.viewed>20
    --expect memory.pool=true --expect comm.faults>0 -- ${bin}/p2p {out} all)
  # Collectives and MPI-IO beside converted operations in multiview: on the
  # runtime view, after what owns the same bytes (the single-view run is
  # ${impl}.p2p.coll.np2 above).
  unblock_transparency_test(${impl}.p2p.coll.multiview.np2 --launch ${impl} --np 2
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_POOL=1 --expect comm.viewed>15 --expect comm.received>1
    -- ${bin}/p2p {out} coll)
  # The same with the predictor on: each size class of each call site runs its
  # first 3 calls converted, then the cheaper way; the results must not change.
  unblock_transparency_test(${impl}.p2p.all.predict.np4 --launch ${impl} --np 4 ${expects}
    --expect comm.async>10 -- ${bin}/p2p {out} all)
  # Chains: the exchange pattern is learned, protected ahead, then changes twice
  # (a touch between two requests and a request not expected, a third exchange):
  # the output must not change, and the first changed iteration misses.  (How
  # many more miss depends on timing.)  With chains off, the same output.
  unblock_transparency_test(${impl}.p2p.chains.learned.np2 --launch ${impl} --np 2
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_POOL=1 --expect protect.chains.learned>1
    --expect protect.chains.hits>10 --expect protect.chains.misses>0
    --expect comm.multiview>50 -- ${bin}/p2p {out} chains)
  unblock_transparency_test(${impl}.p2p.chains.off.np3 --launch ${impl} --np 3
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_POOL=1 --env UNBLOCK_CHAIN_LEARN=0 --expect protect.chains.started=0
    -- ${bin}/p2p {out} chains)
  # UNBLOCK_EXCLUDE by function name.
  unblock_transparency_test(${impl}.p2p.order.exclude.np2 --launch ${impl} --np 2
    --env UNBLOCK_EXCLUDE=MPI_Send --env UNBLOCK_PREDICT=0
    --expect comm.passthrough_why.excluded>0 --expect comm.copied=0 --expect comm.protected=0
    -- ${bin}/p2p {out} order)
  # Large sends protect their pages instead of copying; every protected buffer is
  # checksummed at issue and at completion (UNBLOCK_VERIFY).
  unblock_transparency_test(${impl}.p2p.all.protect.np4 --launch ${impl} --np 4 ${expects}
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_COPY_MAX=16K --env UNBLOCK_VERIFY=1
    --expect comm.protected>20
    --expect protect.verify_failures=0 --expect protect.calls>50 -- ${bin}/p2p {out} all)
  unblock_transparency_test(${impl}.p2p.all.protect.multiview.np4 --launch ${impl} --np 4 ${expects}
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_COPY_MAX=16K --env UNBLOCK_VERIFY=1 --env UNBLOCK_POOL=1
    --expect comm.protected>20 --expect comm.multiview>20
    --expect protect.verify_failures=0 --expect protect.calls>50 -- ${bin}/p2p {out} all)
  # File calls on buffers a receive still owns must wait for it even with file
  # acceleration off (otherwise the kernel would answer EFAULT).
  unblock_transparency_test(${impl}.p2p.syscalls.io-off.np2 --launch ${impl} --np 2
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_IO=0 --env UNBLOCK_COPY_MAX=16K
    --expect comm.received>0
    --expect comm.protected>0 -- ${bin}/p2p {out} syscalls)
  # Without the completion thread (the program's thread level): copied sends only,
  # the tick driving them.
  unblock_transparency_test(${impl}.p2p.all.nothread.np4 --launch ${impl} --np 4 ${expects}
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_THREAD=program --expect comm.copied>100
    --expect comm.received=0 --expect comm.protected=0 --expect protect.calls=0
    --expect comm.progress=tick --expect comm.thread_level=0 -- ${bin}/p2p {out} all)
  # ... and with UNBLOCK_TICK_CONVERT receives and protected sends too (progress/tick.c).
  unblock_transparency_test(${impl}.p2p.all.tick.np4 --launch ${impl} --np 4 ${expects}
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_THREAD=program --env UNBLOCK_TICK_CONVERT=1
    --env UNBLOCK_COPY_MAX=16K --env UNBLOCK_VERIFY=1
    --expect comm.async>100 --expect comm.received>20 --expect comm.protected>20
    --expect protect.verify_failures=0 --expect comm.progress=tick --expect comm.thread_level=0
    -- ${bin}/p2p {out} all)

  # The program's own SIGSEGV handler (sigaction, signal(), and the queries).  The
  # launcher keeps UCX's handler off SIGSEGV (UCX_ERROR_SIGNALS, tools/unblock.c);
  # the plain run gets the same setting, so the handlers the MPI's libraries install
  # themselves (MPICH: libucs's, from a constructor) are the same in both runs.
  foreach(variant sigaction signal sysv default)
    unblock_transparency_test(${impl}.own_segv.${variant}.np2 --launch ${impl} --np 2
      --env UCX_ERROR_SIGNALS=SIGILL,SIGBUS,SIGFPE --env UNBLOCK_PREDICT=0
      --expect comm.functions.MPI_Send=2 --expect comm.functions.MPI_Recv=2
      --expect comm.functions.MPI_Sendrecv=1 --expect comm.async>0
      -- ${bin}/own_segv {out} ${variant})
  endforeach()

  # A fault nobody handles ends the process with SIGSEGV, with and without unblock
  # (a singleton run: the shell sees 128 + 11).
  add_test(NAME ${impl}.own_segv.crash COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/integration/own_segv_crash.sh
    $<TARGET_FILE:unblock> ${bin}/own_segv)
  set_tests_properties(${impl}.own_segv.crash PROPERTIES TIMEOUT 60
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")

  # A receive truncated with errors fatal: without unblock the process dies inside
  # MPI_Recv; with it the call has returned, and unblock must name it (its site
  # checked against the source line with addr2line, hence -g) and end the process
  # with the same exit status.  late: the message comes after the call returned;
  # early: it had arrived before the call.
  unblock_mpi_program(${impl} fatalrecv ${UNBLOCK_${impl}_MPICC} fatalrecv.c -g)
  foreach(mode late early)
    add_test(NAME ${impl}.fatalrecv.${mode}.np2 COMMAND ${INTEGRATION}/fatal_recv.sh
      $<TARGET_FILE:unblock> ${bin}/fatalrecv ${impl} ${mode} ${PROGRAMS}/fatalrecv.c)
    set_tests_properties(${impl}.fatalrecv.${mode}.np2 PROPERTIES TIMEOUT 300
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()

  # A receive that tells a file was written: rank 0 writes a number, sends 1
  # MiB; rank 1 receives, then reads the number (pread, read, fread,
  # MPI_File_read_at).  Every receive converted (UNBLOCK_PREDICT=0): a read
  # first waits for the receives in flight (before, 4-5 of 200 rounds read the
  # older number through POSIX and 9-132 through MPI-IO, Open MPI).
  unblock_mpi_program(${impl} recvfile ${UNBLOCK_${impl}_MPICC} recvfile.c -pthread)
  unblock_transparency_test(${impl}.recvfile.np2 --launch ${impl} --np 2
    --env UNBLOCK_PREDICT=0 --expect comm.async>100 -- ${bin}/recvfile {out})

  # Fortran through mpif.h, default compiler flags.
  foreach(np 2 4)
    unblock_transparency_test(${impl}.p2p-fortran.np${np} --launch ${impl} --np ${np}
      --expect comm.functions.MPI_Send=2 --expect comm.functions.MPI_Recv=2
      --expect comm.functions.MPI_Sendrecv=10 --expect comm.functions.MPI_Sendrecv_replace=2
      --expect comm.by_binding.f77>10 --expect comm.by_binding.c=0
      -- ${bin}/p2p_mpifh {out})
  endforeach()
endforeach()

# Derived datatypes (tests/programs/dtypes.c): flattened, sent packed or from
# protected pages, received packed and scattered; each received buffer is also
# checked against MPI_Pack/MPI_Unpack computed locally.  With UNBLOCK_RECV_COVER=0
# sparse receives (columns) are converted too, and with UNBLOCK_COPY_MAX=16K dense
# ones are sent from read-only pages (UNBLOCK_VERIFY checks they did not change).
# MPICH 4.0 mis-receives a byte stream into a type of several predefined types
# (docs/protection.md): there the sends of a sparse vector of structs (2 per rank)
# and of a struct of absolute addresses in three arrays (1) run unconverted.
set(UNBLOCK_DTYPES_PASSED_openmpi comm.passthrough_why.datatype=0)
set(UNBLOCK_DTYPES_PASSED_mpich comm.passthrough_why.datatype<=3)
foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  unblock_mpi_program(${impl} dtypes ${UNBLOCK_${impl}_MPICC} dtypes.c)
  set(bin ${TESTBIN}/${impl})
  unblock_transparency_test(${impl}.dtypes.np2 --launch ${impl} --np 2 --env UNBLOCK_PREDICT=0
    --expect comm.derived>40 --expect comm.types_flattened>10
    --expect ${UNBLOCK_DTYPES_PASSED_${impl}} -- ${bin}/dtypes {out} all)
  unblock_transparency_test(${impl}.dtypes.sparse.np2 --launch ${impl} --np 2
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_RECV_COVER=0 --env UNBLOCK_COPY_MAX=16K
    --env UNBLOCK_VERIFY=1 --expect comm.derived>40 --expect comm.protected>5
    --expect comm.passthrough_why.shared_page=0 --expect protect.verify_failures=0
    -- ${bin}/dtypes {out} all)
  unblock_transparency_test(${impl}.dtypes.np3 --launch ${impl} --np 3 --env UNBLOCK_PREDICT=0
    --env UNBLOCK_RECV_COVER=0 --expect-total comm.derived>80 -- ${bin}/dtypes {out} all)
endforeach()

# The program's own MPI_Irecv, pending while the program makes no MPI call, is
# driven by the completion thread (tests/programs/ownprog.c): a blocking send to
# it returns without the receiver's MPI_Wait.  Off, nothing drives it.
foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  unblock_mpi_program(${impl} ownprog ${UNBLOCK_${impl}_MPICC} ownprog.c)
  unblock_transparency_test(${impl}.own-progress.np2 --launch ${impl} --np 2
    --env UNBLOCK_SEND_MIN=1G --expect-total comm.own.progressed>0
    -- ${TESTBIN}/${impl}/ownprog {out})
  unblock_transparency_test(${impl}.own-progress.off.np2 --launch ${impl} --np 2
    --env UNBLOCK_SEND_MIN=1G --env UNBLOCK_OWN_PROGRESS=0 --expect-total comm.own.progressed=0
    -- ${TESTBIN}/${impl}/ownprog {out})
  # 200 exchanges of 64 KiB waited for at once first: no longer driven
  # (comm.own.undriven), while the receive behind which rank 1 waits, at
  # another call site, still is.
  unblock_transparency_test(${impl}.own-progress.quick.np2 --launch ${impl} --np 2
    --env UNBLOCK_SEND_MIN=1G --expect-total comm.own.progressed>0
    --expect-total comm.own.undriven>100
    -- ${TESTBIN}/${impl}/ownprog {out} 200)
endforeach()

# The thread gate (src/comm/gate.c, tests/programs/gate.c): a program at
# MPI_THREAD_SINGLE sees its MPI's thread flag (Open MPI's opal_uses_threads,
# MPICH's MPIR_ThreadInfo.isThreaded, which the program finds its own way) clear
# after MPI_Init, set while a converted receive is in flight, clear again after a
# quiet spell and a few small messages (plain: clear throughout); with
# UNBLOCK_THREAD_GATE=0 set throughout.  The crash-safety sidecar starts at
# MPI_Init (io.sidecar 1 though nothing is buffered; 0 with UNBLOCK_IO_CRASHSAFE=0).
foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  unblock_mpi_program(${impl} gate ${UNBLOCK_${impl}_MPICC} gate.c)
  unblock_transparency_test(${impl}.gate.np2 --launch ${impl} --np 2
    --expect io.sidecar=1 --expect comm.engine.gate=on --expect comm.thread_level=3
    --expect-total comm.engine.thaws>4
    --expect-total comm.engine.freezes>4 -- ${TESTBIN}/${impl}/gate {out})
  unblock_transparency_test(${impl}.gate.off.np2 --launch ${impl} --np 2
    --env UNBLOCK_THREAD_GATE=0 --env UNBLOCK_IO_CRASHSAFE=0 --expect io.sidecar=0
    --expect comm.engine.gate=option-off
    --expect comm.engine.thaws=0 -- ${TESTBIN}/${impl}/gate {out})
endforeach()

# The tick at the program's thread level (tests/programs/tick.c, src/progress/tick.c):
# rank 1's own 4 MiB receive arms it.  Sleeping calls see no EINTR and sleep their
# whole time (the program exits 1 otherwise); ticks that land in libc (memcpy)
# never poll, ticks in the program's own loop do.  (The libc phase leaves the
# program's code a few nanoseconds between its 5 ms copies, and a tick landing
# there polls, as it should: about one run in ten had one, so at most 2 of more
# than 100.)
foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  unblock_mpi_program(${impl} tick ${UNBLOCK_${impl}_MPICC} tick.c)
  set(tick --launch ${impl} --np 2 --env UNBLOCK_THREAD=program --env UNBLOCK_SEND_MIN=1G)
  unblock_transparency_test(${impl}.tick.sleep.np2 ${tick} --expect comm.progress=tick
    --expect-total comm.tick.armed>0 -- ${TESTBIN}/${impl}/tick sleep {out})
  unblock_transparency_test(${impl}.tick.libc.np2 ${tick} --expect comm.tick.polls<=2
    --expect-total comm.tick.deferred>100 -- ${TESTBIN}/${impl}/tick libc {out})
  unblock_transparency_test(${impl}.tick.own.np2 ${tick} --expect-total comm.tick.polls>0
    --expect-total comm.own.progressed>0 -- ${TESTBIN}/${impl}/tick own {out})
endforeach()

# A program that calls MPI from 4 threads (MPI_THREAD_MULTIPLE): each thread's own
# exchanges, then threads reading the buffers other threads received (a fault on a
# page another thread's operation owns) and writing over buffers other threads sent.
# Multiview: MPI receives through the runtime view, the pages open once it is done
# (whether a reader still faults depends on timing: not asserted).
# Single view (.single): the data are written through /proc/self/mem before the
# pages open (a receive that completes in its call needs no copy in place, so
# how many are depends on timing: at least one over both ranks; it was >1 per
# rank, which failed about once in 50 loaded runs).
foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  unblock_mpi_program(${impl} threads ${UNBLOCK_${impl}_MPICC} threads.c -pthread)
  set(bin ${TESTBIN}/${impl})
  unblock_transparency_test(${impl}.threads.np2 --launch ${impl} --np 2 --env UNBLOCK_PREDICT=0
    --env UNBLOCK_POOL=1 --expect comm.received>10 --expect comm.multiview>20
    --expect protect.copied_in_place=0 -- ${bin}/threads {out})
  unblock_transparency_test(${impl}.threads.single.np2 --launch ${impl} --np 2
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_POOL=0 --expect comm.received>10
    --expect comm.multiview=0 --expect-total protect.copied_in_place>0
    -- ${bin}/threads {out})
  unblock_transparency_test(${impl}.threads.protect.np2 --launch ${impl} --np 2
    --env UNBLOCK_PREDICT=0 --env UNBLOCK_COPY_MAX=16K --env UNBLOCK_VERIFY=1
    --expect comm.protected>2 --expect protect.verify_failures=0 -- ${bin}/threads {out})
endforeach()

# The malloc family on the double-mapped pool (tests/programs/alloc.c): before
# main, alignment, realloc, calloc of reused memory, threads, fork (the pool is
# copied for the child), 1 GiB, foreign pointers; and the same in single view.
foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  unblock_mpi_program(${impl} alloc ${UNBLOCK_${impl}_MPICC} alloc.c -pthread)
  set(bin ${TESTBIN}/${impl})
  unblock_transparency_test(${impl}.alloc.np2 --launch ${impl} --np 2 --env UNBLOCK_POOL=1
    --env UNBLOCK_POOL_LARGEST=0
    --expect memory.pool=true --expect memory.pool_peak>1000000000 --expect memory.fork_copies=1
    --expect memory.pool_in_use<1000000 --expect memory.outside_pool=0 -- ${bin}/alloc {out})
  unblock_transparency_test(${impl}.alloc.small-pool.np1 --launch ${impl} --np 1
    --env UNBLOCK_POOL=1 --env UNBLOCK_POOL_MAX=256M --env UNBLOCK_POOL_LARGEST=0 --expect memory.pool=true
    --expect memory.pool_reserved=268435456 --expect memory.outside_pool>0 -- ${bin}/alloc {out})
  # Blocks over UNBLOCK_POOL_LARGEST (16 MiB by default) stay plain mappings.
  unblock_transparency_test(${impl}.alloc.largest.np1 --launch ${impl} --np 1 --env UNBLOCK_POOL=1
    --expect memory.pool=true --expect memory.outside_pool>0 --expect memory.pool_peak<100000000
    -- ${bin}/alloc {out})
  unblock_transparency_test(${impl}.alloc.single.np1 --launch ${impl} --np 1 --env UNBLOCK_POOL=0
    --expect memory.pool=false --expect protect.large_blocks>1000 --expect protect.large_reused>10
    -- ${bin}/alloc {out})
  # Freed blocks unmapped at once: calloc of memory just freed dirty still gives zeros.
  unblock_transparency_test(${impl}.alloc.nokeep.np1 --launch ${impl} --np 1 --env UNBLOCK_ALLOC_KEEP=0
    --expect protect.large_reused=0 --expect memory.kept=0 -- ${bin}/alloc {out})
endforeach()

# The converted calls from Fortran with all three bindings (tests/programs/sections.F90):
# contiguous arrays and non-contiguous sections, MPI_STATUS_IGNORE.  mpif.h and
# "use mpi" pass sections as packed temporaries (converted too); MPICH's mpi_f08
# passes a descriptor, whose non-contiguous sections run as the original call.
foreach(impl IN LISTS UNBLOCK_BUILT_MPIS)
  set(bin ${TESTBIN}/${impl})
  foreach(b mpifh usempi f08)
    set(def "")
    if(b STREQUAL "usempi")
      set(def -DUSE_MPI_MODULE)
    elseif(b STREQUAL "f08")
      set(def -DUSE_MPI_F08)
    endif()
    unblock_mpi_program(${impl} sections_${b} ${UNBLOCK_${impl}_MPIF90} sections.F90 ${def})
    set(expects --expect comm.async>=6 --expect comm.passthrough_why.datatype=0)
    if(impl STREQUAL "mpich" AND b STREQUAL "f08")
      set(expects --expect comm.async>=1 --expect comm.passthrough_why.datatype>=3)
    endif()
    unblock_transparency_test(${impl}.sections-${b}.np2 --launch ${impl} --np 2
      --env UNBLOCK_PREDICT=0 ${expects} --expect comm.by_binding.c=0
      -- ${bin}/sections_${b} {out})
    # Collectives and MPI-IO from Fortran beside a receive in flight
    # (tests/programs/coll.F90): in multiview on the runtime view, as from C.
    # (mpif.h declares no interfaces: MPI_IN_PLACE and arrays in one call need
    # gfortran's -fallow-argument-mismatch, as such programs do.)
    # MPICH's mpi_f08 has the large-count forms (MPI_Bcast_c from Fortran).
    set(cdef ${def})
    set(cexpect "")
    if(b STREQUAL "mpifh")
      set(cdef -fallow-argument-mismatch)
    elseif(impl STREQUAL "mpich" AND b STREQUAL "f08")
      set(cdef ${def} -DLARGE_COUNT)
      set(cexpect --expect comm.functions.MPI_Bcast_c=2)
    endif()
    unblock_mpi_program(${impl} coll_${b} ${UNBLOCK_${impl}_MPIF90} coll.F90 ${cdef})
    unblock_transparency_test(${impl}.coll-${b}.np2 --launch ${impl} --np 2
      --env UNBLOCK_PREDICT=0 --expect comm.received>=2 --expect comm.viewed=0 ${cexpect}
      --expect comm.by_binding.c=0 -- ${bin}/coll_${b} {out})
    unblock_transparency_test(${impl}.coll-${b}.multiview.np2 --launch ${impl} --np 2
      --env UNBLOCK_PREDICT=0 --env UNBLOCK_POOL=1 --expect comm.received>=2
      --expect comm.viewed>=20 --expect comm.by_binding.c=0 ${cexpect} -- ${bin}/coll_${b} {out})
  endforeach()
endforeach()
