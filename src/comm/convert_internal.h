/* convert_internal.h — what the files of the conversion share (comm/):
 *   convert.c    which blocking point-to-point calls are converted, and starting
 *                them (the decisions; the communicators and datatypes learned)
 *   lifecycle.c  the real MPI functions, start-up and MPI_Finalize, the calls
 *                around conversions, the completion thread's source, thread levels
 *   buffers.c    the buffers of other calls (collectives, MPI-IO, the program's own
 *                requests) ordered against what is in flight
 * Only these three include it. */
#ifndef UNBLOCK_CONVERT_INTERNAL_H
#define UNBLOCK_CONVERT_INTERNAL_H

#include "comm/datatype.h"
#include "comm/mpi_wrap.h"
#include "comm/requests.h"

typedef int (*isend_t)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*irecv_t)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*recv_t)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
typedef int (*test_t)(MPI_Request *, int *, MPI_Status *);
typedef int (*wait_t)(MPI_Request *, MPI_Status *);
typedef int (*getstatus_t)(MPI_Request, int *, MPI_Status *);
typedef int (*getcount_t)(const MPI_Status *, MPI_Datatype, int *);
typedef int (*initthread_t)(int *, char ***, int, int *);
typedef int (*geteh_t)(MPI_Comm, MPI_Errhandler *);
typedef int (*ehfree_t)(MPI_Errhandler *);
typedef int (*commsize_t)(MPI_Comm, int *);
typedef int (*commtest_t)(MPI_Comm, int *);
typedef int (*attr_t)(MPI_Comm, int, void *, int *);
typedef int (*seteh_t)(MPI_Comm, MPI_Errhandler);
typedef int (*calleh_t)(MPI_Comm, int);
typedef int (*errstr_t)(int, char *, int *);


/* The real MPI functions and predefined handles (lifecycle.c resolves them). */
typedef struct {
    isend_t isend, irsend;
    irecv_t irecv;
    recv_t recv;
    test_t test;
    wait_t wait;
    getstatus_t get_status;
    getcount_t get_count;
    geteh_t get_errhandler;
    ehfree_t errhandler_free;
    commsize_t comm_size, remote_size, comm_rank;
    commtest_t test_inter;
    attr_t get_attr;
    seteh_t set_errhandler;
    calleh_t abort;
    errstr_t error_string;
    MPI_Errhandler fatal;
    MPI_Errhandler ours; /* installed while a converted operation is tested (see
                            conv_test_op); `have_ours` once it exists */
    int have_ours;
    MPI_Datatype byte, packed;
    MPI_Comm world;
} conv_mpi_t;

extern UNBLOCK_HIDDEN conv_mpi_t conv_mpi;

#define REQ(op) ((MPI_Request *)(void *)(op)->mpi)
/* The communicator of the call that started the op, after its request. */
#define OPCOMM(op) (*(MPI_Comm *)(void *)((op)->mpi + 32))
_Static_assert(sizeof(MPI_Request) <= 32 && sizeof(MPI_Comm) <= 32, "op->mpi holds both");

typedef struct {
    MPI_Comm comm;
    int fatal, size, tag_ub, valid;
    int rank, inter; /* size: of the remote group of an intercommunicator */
} comm_info_t;

typedef struct {
    comm_info_t ci;
    unblock_dt_t ti; /* its flat type is a reference this call holds (call_done) */
    int site;        /* the call site (core/sites.h), or -1 */
    int partial;     /* a half whose refusal leaves the other converted (the receive
                        of a send-receive whose send started): not the site's */
} call_info_t;

/* lifecycle.c */
extern UNBLOCK_HIDDEN int conv_ready;         /* after MPI_Init with the ABI checked */
extern UNBLOCK_HIDDEN int conv_finalized;
int conv_progress_all(void);  /* tests every active operation (the program is in MPI) */
void conv_wait_done(unblock_op_t *op, int in_handler);
/* Whether receives and protected sends may convert: the completion thread runs,
 * or the tick drives this thread's operations (UNBLOCK_TICK_CONVERT, lifecycle.c). */
int conv_background(void);
/* MPI_Test (`wait`: MPI_Wait) of a converted operation.  On a communicator whose
 * errors are fatal, an error is reported as the program's own call that started
 * the op (its name and site) before MPI's fatal handler ends the process. */
int conv_test_op(unblock_op_t *op, int *flag, MPI_Status *st, int wait);
/* Held while a test has our error handler on a communicator (and while the
 * communicators learned are forgotten). */
void conv_window_lock(void);
void conv_window_unlock(void);

/* convert.c */
int conv_comm_lookup(MPI_Comm c, comm_info_t *out);
void conv_learn(MPI_Comm c, MPI_Datatype t);
void conv_forget_comms(void);
unblock_bytes_t conv_bytes_of(const void *buf, int count, const unblock_dt_t *ti);
intptr_t conv_order_for_mpi(const unblock_bytes_t *b, uintptr_t lo, uintptr_t hi, int write,
                            int inflight, int movable);

/* lifecycle.c: the fast path held off (every MPI call takes the full path, whose
 * unblock_conv_at_call sees why) and let go again. */
void conv_fast_hold(void);
void conv_fast_release(void);

/* gate.c: MPI's thread safety only while a runtime thread calls MPI (progress.h's
 * gate).  After MPI_Init, before the engine starts: 1 if the gate is installed. */
int conv_gate_after_init(int program_level);
/* Before MPI_Init: whether the gate will run for a program asking for `required`
 * (then MPI_THREAD_MULTIPLE costs it nothing while nothing is converted). */
int conv_gate_possible(int required);
extern UNBLOCK_HIDDEN uint32_t conv_gate_asked;
/* From unblock_conv_at_call when conv_gate_asked: the freeze, then the fast path back. */
void conv_gate_freeze(void);

/* profile.c: rank 0's profile to every rank after MPI_Init; written at MPI_Finalize. */
void conv_profile_after_init(void);
void conv_profile_finalize(void);

#endif
