/* progress.h — the progress engine: a thread that completes operations in flight
 * while the program computes (the PIOMan paper's rule: poll while someone waits or
 * a core is free, back off and sleep otherwise).
 *
 * The engine knows no MPI: the comm module hands it a source, whose `poll` tests
 * what is in flight (MPI_Test on each active operation, the program's own requests)
 * and whose `busy` says whether there is work besides the ACTIVE operations of
 * the page table (protect.h), which the engine watches itself. */
#ifndef UNBLOCK_PROGRESS_H
#define UNBLOCK_PROGRESS_H

#include "protect/protect.h"

typedef struct {
    /* One round of tests; returns how many operations completed, and sets *fresh
     * when a request of the program's own was seen for the first time. */
    int (*poll)(int *fresh);
    /* Work besides ACTIVE operations (the program's own pending requests). */
    int (*busy)(void);
} unblock_progress_source_t;

/* Starts the completion thread for `src` (kept by pointer); 1 if it runs. */
int unblock_progress_start(const unblock_progress_source_t *src);
/* Stops and joins it (MPI_Finalize); nothing if it does not run. */
void unblock_progress_stop(void);
/* Whether the completion thread runs. */
int unblock_progress_running(void);

/* Sleeps until `op` is no longer in flight, the completion thread polling
 * meanwhile.  Only while it runs; callable from the fault handler. */
void unblock_progress_wait(unblock_op_t *op);
/* Nonzero while a thread waits in unblock_progress_wait (a source that gives an
 * operation back ACTIVE then wakes its waiters). */
int unblock_progress_waiters(void);

/* Whether the last converted call was one of a site that converts or explores
 * (1), or a recheck of one that passes (0): only the first makes the idle engine
 * linger for the next operation. */
void unblock_progress_linger(int wanted);

/* ---- the gate: MPI's thread safety only while the engine may call MPI ----
 * Where the MPI library's thread safety can be switched while it runs
 * (comm/gate.c: Open MPI, for a program at MPI_THREAD_SINGLE that unblock runs at
 * MPI_THREAD_MULTIPLE), the engine starts frozen: it calls no MPI and sleeps until
 * thawed.  Thaw and freeze run in the program's thread between its MPI calls, when
 * no thread is inside MPI: the thaw turns thread safety on before the engine may
 * call MPI (before an operation it drives is published); once the engine sleeps
 * with nothing to do it asks for a freeze, which the program's next MPI call makes
 * (thread safety off, the engine held off MPI until the next thaw). */
typedef struct {
    void (*set)(int on); /* MPI's thread safety on or off; no thread is in MPI */
    void (*ask)(void);   /* the engine sleeps deeply: freeze at the next MPI call */
} unblock_progress_gate_t;

/* Installs `g` (kept by pointer) before unblock_progress_start: the engine starts
 * frozen, and the caller has just turned thread safety off. */
void unblock_progress_gate(const unblock_progress_gate_t *g);
/* The gate's state: OPEN, the engine may call MPI (always, without a gate);
 * ASKED, it sleeps with nothing to do and asked for a freeze (it makes the gate
 * OPEN again before it calls MPI); SHUT, frozen (thread safety off). */
enum { UNBLOCK_GATE_OPEN, UNBLOCK_GATE_ASKED, UNBLOCK_GATE_SHUT };
extern UNBLOCK_HIDDEN uint32_t unblock_engine_gate;
void unblock_progress_thaw_slow(void);
/* Before work the engine must do is published (an operation made ACTIVE, a
 * request of the program's own to drive): from the program's thread, outside
 * MPI.  One load where there is no gate or the engine already runs. */
static inline void unblock_progress_thaw(void)
{
    if (unblock_unlikely(__atomic_load_n(&unblock_engine_gate, __ATOMIC_ACQUIRE) ==
                         UNBLOCK_GATE_SHUT))
        unblock_progress_thaw_slow();
}
/* After the gate's ask, from the program's thread outside MPI: freezes the engine
 * if it still sleeps with nothing to do and nothing pins the gate open; 1 if so. */
int unblock_progress_freeze(void);
/* Another runtime thread calls MPI (MPI-IO write-behind's I/O thread): +1 thaws
 * and keeps the gate open until the matching -1.  From the program's thread,
 * outside MPI. */
void unblock_progress_pin(int delta);

/* ---- the tick (tick.c): progress from the program's own thread ----
 * Without the completion thread: a timer signal to the thread that called
 * MPI_Init runs `src`'s poll every UNBLOCK_TICK_US while operations are in flight,
 * where the signal interrupted the program's own code outside every MPI call. */

/* Creates the timer for `src` in the calling thread (MPI_Init's); 1 if it exists
 * (UNBLOCK_TICK_US 0, no free real-time signal or no timer: 0). */
int unblock_tick_start(const unblock_progress_source_t *src);
/* Deletes it (MPI_Finalize). */
void unblock_tick_stop(void);
/* Whether the timer exists. */
int unblock_tick_running(void);
/* Starts the timer if work is in flight and it is not running: after a
 * conversion and after the program starts a request of its own. */
void unblock_tick_arm(void);
/* Whether it runs now. */
int unblock_tick_armed(void);
/* One round of the source's poll from normal context (an MPI call of the
 * program); disarms the timer when nothing is left.  Completed count. */
int unblock_tick_poll(void);
/* Whether `pc` lies in the executable's own text. */
int unblock_tick_program_pc(uintptr_t pc);
/* Whether a handler running in this thread, interrupting instruction `pc`, may call
 * MPI: the tick exists and targets this thread, which is outside every MPI call,
 * runtime work and handler of ours, and `pc` is the program's own. */
int unblock_tick_may_drive(uintptr_t pc);
/* The same for our SIGSEGV handler (signals.c set unblock_tls.fault_pc). */
int unblock_tick_fault_may_drive(void);
/* Whether the tick exists and targets the calling thread. */
int unblock_tick_mine(void);

/* Whether this process's runtime threads have a core the program's ranks do not
 * use: its affinity mask against the ranks of the node (unblock_g.job.local_size:
 * OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS or Slurm's tasks on this node);
 * bound ranks count their own CPUs.  Decided once, when the thread starts. */
int unblock_spare_core(void);
/* The CPUs in the affinity mask that decision saw; 0 before it was made. */
int unblock_spare_core_cpus(void);
/* The rule: `cpus` in the affinity mask, `online` on the machine, `local` ranks. */
int unblock_spare_core_of(int cpus, long online, long local);

#endif
