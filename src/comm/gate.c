/* gate.c — MPI's thread safety only while a runtime thread calls MPI (the
 * engine's gate, progress.h).
 *
 * The completion thread needs MPI_THREAD_MULTIPLE, so unblock asks MPI_Init for
 * it.  Open MPI then takes its locks and atomic operations on every call, which
 * costs a small-message ping-pong 50-80 % on shared memory (docs/performance.md,
 * "The thread gate, counts per thread"); it does so whenever libopen-pal's
 * `opal_uses_threads` is set, which MPI_Init sets for every level above
 * MPI_THREAD_SINGLE.  A program that asked for MPI_THREAD_SINGLE runs, plain,
 * with it clear.  Under unblock the completion thread calls MPI only while
 * operations it drives are in flight, so the flag is cleared again after
 * MPI_Init and set only while the engine may call MPI: before the first
 * operation is handed to it (the thaw, convert.c and requests.c), cleared once
 * it finds nothing to do, at the program's next MPI call (the freeze,
 * unblock_conv_at_call).  Both run in the program's thread
 * between its MPI calls, when no thread is inside MPI, so every lock MPI takes is
 * released under the setting it was taken with.  What Open MPI chose at MPI_Init
 * from the level (its components' thread-safe forms) stays as for MULTIPLE.
 *
 * Where: Open MPI 4 and 5 (the flag, a one-byte bool, found set after MPI_Init),
 * the program's own level MPI_THREAD_SINGLE, UNBLOCK_THREAD_GATE=1.  MPI-IO
 * write-behind's I/O thread pins the gate open while it runs.  Elsewhere nothing
 * changes (MPICH's levels cost a small message 10-20 ns here, and its switch,
 * MPIR_ThreadInfo, is not exported).  The report says whether the gate ran
 * ("comm.engine.gate") and how often it opened and closed.
 * Owns: the flag's address.  Calls: progress/ (the gate), lifecycle.c (conv_fast,
 * the request for the next call to take the full path). */
#define _GNU_SOURCE
#include "comm/convert_internal.h"
#include "core/log.h"
#include "progress/progress.h"

#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>

static volatile bool *uses_threads; /* libopen-pal's opal_uses_threads; NULL: no gate */
static int gate_why;                /* what conv_gate_state reports */
static const char *const whys[] = { "off", "on", "not-openmpi", "program-level",
                                    "option-off", "no-flag", "no-thread" };
enum { WHY_OFF, WHY_ON, WHY_NOT_OMPI, WHY_LEVEL, WHY_OPTION, WHY_FLAG, WHY_THREAD };
uint32_t conv_gate_asked; /* the engine asked for a freeze (lifecycle.c's at_call) */

static void gate_set(int on)
{
    __atomic_store_n(uses_threads, on ? true : false, __ATOMIC_SEQ_CST);
}

static void gate_ask(void)
{
    __atomic_store_n(&conv_gate_asked, 1, __ATOMIC_SEQ_CST);
    conv_fast_hold(); /* the program's next MPI call takes the full path */
}

static const unblock_progress_gate_t gate = { .set = gate_set, .ask = gate_ask };

#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && (OMPI_MAJOR_VERSION == 4 || OMPI_MAJOR_VERSION == 5)
#define GATE_POSSIBLE 1
#else
#define GATE_POSSIBLE 0
#endif

/* The flag, where it is what this file expects: a one-byte object. */
static volatile bool *find_flag(void)
{
    void *p = unblock_dlsym_data("opal_uses_threads",
                                 "libopen-pal.so.40:libopen-pal.so.80:libopen-pal.so");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (p == NULL || dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) == 0 || sym == NULL ||
        sym->st_size != sizeof(bool))
        return NULL;
    return (volatile bool *)p;
}

int conv_gate_possible(int required)
{
    return GATE_POSSIBLE && unblock_opt.thread_gate && required == MPI_THREAD_SINGLE &&
           find_flag() != NULL;
}

int conv_gate_after_init(int program_level)
{
    if (!GATE_POSSIBLE) {
        gate_why = WHY_NOT_OMPI;
        return 0;
    }
    if (!unblock_opt.thread_gate) {
        gate_why = WHY_OPTION;
        return 0;
    }
    if (program_level != MPI_THREAD_SINGLE || unblock_g.mpi_thread_provided < MPI_THREAD_MULTIPLE) {
        gate_why = unblock_g.mpi_thread_provided < MPI_THREAD_MULTIPLE ? WHY_THREAD : WHY_LEVEL;
        return 0;
    }
    volatile bool *flag = find_flag();
    if (flag == NULL || !*flag) {
        gate_why = WHY_FLAG;
        unblock_info("thread gate: opal_uses_threads not found as expected; MPI keeps its "
                     "thread safety on");
        return 0;
    }
    uses_threads = flag;
    gate_set(0); /* in MPI_Init's wrapper: no thread is inside MPI */
    unblock_progress_gate(&gate);
    gate_why = WHY_ON;
    return 1;
}

void conv_gate_freeze(void)
{
    __atomic_store_n(&conv_gate_asked, 0, __ATOMIC_SEQ_CST);
    unblock_progress_freeze();
    conv_fast_release();
}

const char *unblock_comm_gate_state(void)
{
    return whys[gate_why];
}
