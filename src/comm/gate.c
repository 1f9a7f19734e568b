/* gate.c — MPI's thread safety only while a runtime thread calls MPI (the
 * engine's gate, progress.h).
 *
 * The completion thread needs MPI_THREAD_MULTIPLE, so unblock asks MPI_Init for
 * it.  The MPI library then takes its locks and atomic operations on every call
 * (docs/performance.md, "The thread gate, counts per thread"): on Open MPI a
 * small-message ping-pong pays 50-80 % on shared memory, on MPICH 5-15 %.  Both
 * decide it at each call from one flag that MPI_Init sets for the level:
 *   - Open MPI 4 and 5: libopen-pal's `opal_uses_threads` (a one-byte bool, an
 *     exported symbol), set for every level above MPI_THREAD_SINGLE;
 *   - MPICH (3.x and 4.x): `MPIR_ThreadInfo.isThreaded` (an int), set only for
 *     MPI_THREAD_MULTIPLE.  libmpich does not export MPIR_ThreadInfo; its address
 *     is the RIP-relative operand through which the exported PMPI_Query_thread
 *     reads the level provided, and it is taken only if, after MPI_Init at
 *     MPI_THREAD_MULTIPLE, what lies there is that struct as MPICH lays it out:
 *     the level provided (3) at +0, the thread that called MPI_Init at +8,
 *     isThreaded (1) at +16, all inside the library's writable data.
 * A program that asked for a level without the flag (Open MPI: SINGLE; MPICH:
 * SINGLE, FUNNELED, SERIALIZED) runs, plain, with it clear.  Under unblock the
 * completion thread calls MPI only while operations it drives are in flight, so
 * the flag is cleared again after MPI_Init and set only while the engine may call
 * MPI: before the first operation is handed to it (the thaw, convert.c and
 * requests.c), cleared once it finds nothing to do, at the program's next MPI call
 * (the freeze, unblock_conv_at_call).  Both run in the program's thread
 * between its MPI calls, when no thread is inside MPI, so every lock MPI takes is
 * released under the setting it was taken with.  What the library chose at
 * MPI_Init from the level (Open MPI's thread-safe components, MPICH's UCX worker
 * in its thread-safe mode, the level MPI_Query_thread would report) stays as for
 * MULTIPLE.
 *
 * MPI-IO write-behind's I/O thread pins the gate open while it runs.  Where the
 * flag is not found as expected nothing changes but the report: the level stays
 * MULTIPLE with its cost.  The report says whether the gate ran
 * ("comm.engine.gate") and how often it opened and closed.
 * Owns: the flag's address.  Calls: progress/ (the gate), lifecycle.c (conv_fast,
 * the request for the next call to take the full path). */
#define _GNU_SOURCE
#include "comm/convert_internal.h"
#include "core/log.h"
#include "progress/progress.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

static volatile void *flag; /* the library's flag (above); NULL: no gate */
static int flag_is_int;     /* MPICH's int, else Open MPI's bool */
static int gate_why;        /* what conv_gate_state reports */
static const char *const whys[] = { "off", "on", "unsupported-mpi", "program-level",
                                    "option-off", "no-flag", "no-thread" };
enum { WHY_OFF, WHY_ON, WHY_MPI, WHY_LEVEL, WHY_OPTION, WHY_FLAG, WHY_THREAD };
uint32_t conv_gate_asked; /* the engine asked for a freeze (lifecycle.c's at_call) */

static void gate_set(int on)
{
    if (flag_is_int)
        __atomic_store_n((volatile int *)flag, on ? 1 : 0, __ATOMIC_SEQ_CST);
    else
        __atomic_store_n((volatile bool *)flag, on ? true : false, __ATOMIC_SEQ_CST);
}

static void gate_ask(void)
{
    __atomic_store_n(&conv_gate_asked, 1, __ATOMIC_SEQ_CST);
    conv_fast_hold(); /* the program's next MPI call takes the full path */
}

static const unblock_progress_gate_t gate = { .set = gate_set, .ask = gate_ask };

#if defined(OPEN_MPI) && defined(OMPI_MAJOR_VERSION) && (OMPI_MAJOR_VERSION == 4 || OMPI_MAJOR_VERSION == 5)
#define GATE_OMPI 1
#else
#define GATE_OMPI 0
#endif
#if !defined(OPEN_MPI) && defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 30300000 && \
    defined(__x86_64__)
#define GATE_MPICH 1
#else
#define GATE_MPICH 0
#endif

/* Open MPI's flag, where it is what this file expects: a one-byte object. */
static volatile void *find_ompi_flag(void)
{
    void *p = unblock_dlsym_data("opal_uses_threads",
                                 "libopen-pal.so.40:libopen-pal.so.80:libopen-pal.so");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (p == NULL || dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) == 0 || sym == NULL ||
        sym->st_size != sizeof(bool))
        return NULL;
    return (volatile void *)p;
}

/* ---- MPICH: MPIR_ThreadInfo through PMPI_Query_thread's code ---- */

#define MPICH_CANDIDATES 4
typedef struct {
    const unsigned char *code;        /* PMPI_Query_thread */
    uintptr_t code_end;               /* the end of the segment that holds it */
    uintptr_t lo[8], hi[8];           /* the writable segments of its object */
    int nseg;
    uintptr_t cand[MPICH_CANDIDATES]; /* RIP-relative operands, in order */
    int ncand;
} mpich_scan_t;

static int writable_segments(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    mpich_scan_t *m = data;
    uintptr_t pc = (uintptr_t)m->code;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && pc >= lo && pc < lo + ph->p_memsz) {
            holds = 1;
            m->code_end = lo + ph->p_filesz;
        }
    }
    if (!holds)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && m->nseg < 8; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            m->lo[m->nseg] = info->dlpi_addr + ph->p_vaddr;
            m->hi[m->nseg++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    return 1;
}

static int in_writable(const mpich_scan_t *m, uintptr_t a, size_t n)
{
    for (int i = 0; i < m->nseg; i++)
        if (a >= m->lo[i] && a + n <= m->hi[i])
            return 1;
    return 0;
}

/* The RIP-relative operands of PMPI_Query_thread's first instructions that lie in
 * its object's writable data: `lea d(%rip),%r` (48/4c 8d /r) and `mov d(%rip),%r32`
 * (8b /r, optionally REX), the forms GCC and Clang emit for a hidden global.  A
 * byte pattern that is not an instruction only adds a candidate, which the check
 * after MPI_Init refuses. */
static int mpich_scan(mpich_scan_t *m)
{
    memset(m, 0, sizeof(*m));
    m->code = unblock_dlsym_data("PMPI_Query_thread", UNBLOCK_MPI_SONAMES);
    if (m->code == NULL || dl_iterate_phdr(writable_segments, m) == 0 || m->nseg == 0)
        return 0;
    for (int i = 0; i < 64 && m->ncand < MPICH_CANDIDATES; i++) {
        const unsigned char *c = m->code + i;
        if ((uintptr_t)c + 7 > m->code_end)
            break;
        int len = 0;
        if ((c[0] == 0x48 || c[0] == 0x4c) && c[1] == 0x8d && (c[2] & 0xc7) == 0x05)
            len = 3;
        else if (c[0] == 0x8b && (c[1] & 0xc7) == 0x05)
            len = 2;
        else if ((c[0] & 0xf0) == 0x40 && c[1] == 0x8b && (c[2] & 0xc7) == 0x05)
            len = 3;
        if (len == 0)
            continue;
        int32_t d;
        memcpy(&d, c + len, sizeof(d));
        uintptr_t t = (uintptr_t)(c + len + 4) + (uintptr_t)(intptr_t)d;
        if (in_writable(m, t, 24))
            m->cand[m->ncand++] = t;
    }
    return m->ncand > 0;
}

/* After MPI_Init at MPI_THREAD_MULTIPLE, in the thread that called it: the
 * candidate that holds MPIR_ThreadInfo as MPICH lays it out. */
static volatile void *find_mpich_flag(void)
{
    mpich_scan_t m;
    if (!mpich_scan(&m))
        return NULL;
    for (int i = 0; i < m.ncand; i++) {
        const unsigned char *t = (const unsigned char *)m.cand[i];
        int provided, threaded;
        pthread_t main_thread;
        memcpy(&provided, t, sizeof(int));
        memcpy(&main_thread, t + 8, sizeof(main_thread));
        memcpy(&threaded, t + 16, sizeof(int));
        if (provided == MPI_THREAD_MULTIPLE && threaded == 1 &&
            pthread_equal(main_thread, pthread_self()))
            return (volatile void *)(t + 16);
    }
    return NULL;
}

int conv_gate_possible(int required)
{
    if (!unblock_opt.thread_gate)
        return 0;
    if (GATE_OMPI)
        return required == MPI_THREAD_SINGLE && find_ompi_flag() != NULL;
    mpich_scan_t m;
    return GATE_MPICH && required < MPI_THREAD_MULTIPLE && mpich_scan(&m);
}

int conv_gate_after_init(int program_level)
{
    if (!GATE_OMPI && !GATE_MPICH) {
        gate_why = WHY_MPI;
        return 0;
    }
    if (!unblock_opt.thread_gate) {
        gate_why = WHY_OPTION;
        return 0;
    }
    int flagged = GATE_OMPI ? program_level != MPI_THREAD_SINGLE
                            : program_level >= MPI_THREAD_MULTIPLE;
    if (flagged || unblock_g.mpi_thread_provided < MPI_THREAD_MULTIPLE) {
        gate_why = unblock_g.mpi_thread_provided < MPI_THREAD_MULTIPLE ? WHY_THREAD : WHY_LEVEL;
        return 0;
    }
    volatile void *f = GATE_OMPI ? find_ompi_flag() : find_mpich_flag();
    if (f == NULL || (GATE_OMPI ? !*(volatile bool *)f : !*(volatile int *)f)) {
        gate_why = WHY_FLAG;
        unblock_info("thread gate: %s not found as expected; MPI keeps its thread safety on",
                     GATE_OMPI ? "opal_uses_threads" : "MPIR_ThreadInfo");
        return 0;
    }
    flag = f;
    flag_is_int = !GATE_OMPI;
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
