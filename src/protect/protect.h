/* protect.h — in-flight operations and the pages they own.
 *
 * An operation (a converted MPI send or receive, a piece of a background file
 * read, a large file write from the program's pages) owns a byte range of the
 * program's memory until it is finished.  Sends and file writes own their pages
 * read-only, receives and file reads own them inaccessible.  The table of
 * operations is the page table: with at most UNBLOCK_OPS_MAX operations in flight,
 * "which operations own page P, in what mode" is a scan of a compact array of page
 * ranges (tens of nanoseconds), and the protection a page needs is derived from
 * its owners, never stored separately, so it cannot go stale.
 *
 * Life of an operation (all transitions under the table lock):
 *   FREE --claim--> CLAIMED --activate (pages protected)--> ACTIVE
 *   ACTIVE <--> TESTING (one thread tests the request; the state is the lock)
 *   TESTING --the transfer completed--> DONE --finish--> FREE
 *   a chain: FREE --claim--> CLAIMED --begin--> CHAINED --closed, and its last
 *            member finished--> FREE
 * "finish" copies a receive's data out of the runtime buffer and restores the
 * pages' protection from the remaining owners.  A receive into a runtime buffer is
 * finished only in a thread of the program (a fault, or the next intercepted
 * call), never by a runtime thread while the program could read half-copied data.
 * Multiview operations (whose data MPI wrote through the runtime view) and copied
 * sends are finished by the thread that sees them complete, usually the
 * completion thread: the pages open without waiting for a fault.
 *
 * Rules (docs/protection.md): the table lock is never held while touching memory
 * an operation may own, except the copy-out of `finish`, which first makes exactly
 * the pages it writes accessible; the fault handler only waits (futex) and
 * finishes, it never calls MPI, malloc or stdio. */
#ifndef UNBLOCK_PROTECT_H
#define UNBLOCK_PROTECT_H

#include "core/core.h"
#include "protect/ranges.h"

#include <stddef.h>
#include <stdint.h>

#define UNBLOCK_OPS_MAX 64
#define UNBLOCK_OP_INLINE 4096 /* small copies live in the slot itself */
#define UNBLOCK_CHAIN_RUNS 8   /* page runs of one chain */

typedef enum {
    UNBLOCK_OP_FREE = 0,
    UNBLOCK_OP_CLAIMED, /* being started by the thread that claimed it */
    UNBLOCK_OP_ACTIVE,  /* in flight: the engine (or the owner thread) completes it */
    UNBLOCK_OP_TESTING, /* in flight, one thread is testing its request right now */
    UNBLOCK_OP_DONE,    /* transfer complete; waiting to be finished */
    UNBLOCK_OP_CHAINED  /* a chain: its pages protected for its members in flight
                           (no request of its own: the engine never tests it) */
} unblock_op_state_t;

typedef enum {
    UNBLOCK_OP_SEND_COPY, /* a send from a runtime copy: owns no pages */
    UNBLOCK_OP_SEND_PROT, /* a send from the program's pages, made read-only */
    UNBLOCK_OP_RECV,      /* a receive into a runtime buffer, or (multiview) straight
                             into the runtime view; pages inaccessible */
    UNBLOCK_OP_CHAIN      /* a learned chain: owns the pages of its members (which
                             own none) from its first request until all are done */
} unblock_op_kind_t;

typedef struct unblock_op {
    uint32_t state;          /* unblock_op_state_t; also the futex word waiters sleep on */
    uint32_t kind;           /* unblock_op_kind_t */
    int peer;                /* rank the message goes to or comes from (caps per peer) */
    int index;               /* slot number */
    int site;                /* the call site that started it (core/sites.h), or -1 */
    uintptr_t call_pc;       /* the program's call that started it: its return address */
    unsigned call_fn;        /* ... and its function (comm: the wrapper table's id); a
                                fatal error of the operation names them */
    uint64_t t_issue, t_done; /* when it started and completed (ns): what the
                                 original call would have waited, about */
    uint64_t seq;            /* issue order */
    unblock_bytes_t bytes;   /* the program's bytes (a receive scatters into them) */
    unblock_flat_t *flat;    /* the flattened datatype bytes refers to (a reference), or NULL */
    uintptr_t pstart, pend;  /* the pages owned [pstart, pend) (empty for copies) */
    intptr_t view;           /* multiview: MPI works on bytes + view, the runtime's view
                                of pool memory (memory.h); 0: the program's pages */
    int chain;               /* a member: the slot of its chain, else -1 */
    uint32_t pending;        /* a chain: members linked and not yet finished */
    int closed;              /* a chain: no more members will join */
    int chain_recv;          /* a chain: it has a receive (pages inaccessible, not read-only) */
    unsigned nruns;          /* a chain: its pages, as runs inside [pstart, pend) */
    uintptr_t runs[UNBLOCK_CHAIN_RUNS][2];
    int owning;              /* the pages are protected on this op's behalf */
    size_t got;              /* receive: bytes that arrived (set when DONE) */
    char *rtbuf;             /* runtime buffer: the send copy or the receive target */
    char *map;               /* the slot's own mapping for large buffers (kept for reuse) */
    size_t mapcap;
    size_t copybytes;        /* bytes this op counts against the copy budget */
    uint64_t checksum;       /* UNBLOCK_VERIFY: of the send buffer at issue */
    int error;               /* MPI error code of the completed transfer (a file
                                read: the errno of the failed read) */
    int file;                /* a background file read (fileio): an I/O worker reads
                                into rtbuf or the runtime view; MPI never sees it.
                                2: under a read lease (no other process can open
                                the file for writing until it is read).
                                UNBLOCK_OP_FILE_WRITE: a write from the program's
                                pages, made read-only (kind SEND_PROT) */
    uint32_t urgent;         /* a file read the program waits for (served first) */
    void *io;                /* a background file write: its job (fileio) */
    unsigned char mpi[64] __attribute__((aligned(16))); /* the engine's request storage
                                                           (comm: the request, its communicator) */
    char inline_buf[UNBLOCK_OP_INLINE] __attribute__((aligned(64)));
} unblock_op_t;

extern UNBLOCK_HIDDEN unblock_op_t unblock_ops[UNBLOCK_OPS_MAX];

/* Operations claimed and not yet finished; 0 means the fast paths do nothing. */
#define unblock_ops_inflight (unblock_busy.n.ops_inflight) /* core.h: unblock_busy */
/* Operations ACTIVE (the engine's work); a futex word the engine sleeps on. */
extern UNBLOCK_HIDDEN uint32_t unblock_ops_active;
/* Nonzero while the completion thread sleeps until work arrives (then starting
 * an operation wakes it; otherwise it finds the work itself). */
extern UNBLOCK_HIDDEN uint32_t unblock_engine_sleeping;
/* ... and does so with no time limit (not lingering): only a start wakes it. */
extern UNBLOCK_HIDDEN uint32_t unblock_engine_deep;


/* Futex helpers (timeout_ns 0: no timeout). */
void unblock_futex_wait(uint32_t *word, uint32_t val, long timeout_ns);
void unblock_futex_wake(uint32_t *word);

/* How a thread gets an ACTIVE operation to DONE: the comm module installs these.
 * `wait_done` is called from normal context and from the fault handler; with a
 * completion thread it only sleeps on the futex (the engine completes), without
 * one it may call MPI itself (never from the handler: the handler then relies on
 * `can_wait_in_handler` being 0, and no page is ever protected in that mode). */
typedef struct {
    void (*wait_done)(unblock_op_t *op, int in_handler);
    int (*driven)(void); /* 1 while a completion thread completes them (a thread
                            that never called MPI may wait then, and only then) */
} unblock_protect_engine_t;

/* File reads the program waits for (op->urgent set): the I/O workers serve those
 * first (fileio/worker.c). */
extern UNBLOCK_HIDDEN uint32_t unblock_io_urgent;

/* op->file of a background file write from the program's own pages. */
#define UNBLOCK_OP_FILE_WRITE 3

/* A background file write (op->file UNBLOCK_OP_FILE_WRITE, started as `seq`)
 * whose pages the caller is about to write or release: fileio's hook.  With
 * `copy`, what the worker has not written yet is copied to a runtime buffer
 * (within the copy bound) and the op is done at once; otherwise, or past the
 * bound, it waits for the worker.  Returns when the op is no longer ACTIVE (or
 * the slot holds another op).  Async-signal-safe: the fault handler calls it. */
extern UNBLOCK_HIDDEN void (*unblock_io_write_release)(unblock_op_t *op, uint64_t seq, int copy);

/* Grows an ACTIVE file write `op` (started as `seq`) to `len` bytes from its base:
 * the new pages are made read-only too (the caller checked they are eligible).
 * 0, or -1 (the op is no longer active, or the protection was refused). */
int unblock_op_extend(unblock_op_t *op, uint64_t seq, size_t len);

extern UNBLOCK_HIDDEN unblock_protect_engine_t unblock_protect_engine;

/* The system page size (set at start-up). */
extern UNBLOCK_HIDDEN size_t unblock_page_size;

/* Installs the SIGSEGV handler and this thread's alternate stack (start-up, or
 * when write-behind first copies a program's buffer).  Only the first call does
 * anything; returns 1 if the handler is installed. */
int unblock_protect_init(void);

/* memcpy from a buffer the program passed: EFAULT instead of a crash when the
 * buffer is not readable (the kernel's answer to the same buffer), else 0.  The
 * handler must be installed (unblock_protect_init). */
int unblock_copy_from_program(void *dst, const void *src, size_t n);

/* Gives the calling thread an alternate signal stack if it has none, so the fault
 * handler never runs on the stack that faulted. */
void unblock_protect_thread_init(void);
/* ... and takes it back when the thread ends (threads.c). */
void unblock_protect_thread_fini(void);

/* The tick's signal (progress/tick.c sets it, else 0): signals.c adds it to the
 * mask of every handler the program installs, and unblock_signals_mask_tick to
 * those installed so far, so that a tick never interrupts one. */
extern UNBLOCK_HIDDEN int unblock_signals_tick;
void unblock_signals_mask_tick(void);
/* The interrupted instruction of a signal handler's ucontext (0 where unknown). */
uintptr_t unblock_signal_context_pc(const void *uc);

/* Claims a free slot for an operation of `kind` with `peer`.  Returns NULL when the
 * caps do not allow one more (the caller then finishes older ones or runs the call
 * blocking).  The slot is CLAIMED: only the caller touches it until activated. */
unblock_op_t *unblock_op_claim(unblock_op_kind_t kind, int peer);

/* Reserves `n` bytes of the per-process copy budget; 0 if it would be exceeded.
 * The op gives them back when it is finished (set op->copybytes). */
int unblock_copy_budget_take(size_t n);
void unblock_copy_budget_give(size_t n);

/* A runtime buffer of `len` bytes for `op` (inline, or the slot's own mapping).
 * NULL if memory is short. */
char *unblock_op_buffer(unblock_op_t *op, size_t len);

/* Protects the op's pages (its pstart/pend, 0-length for copies) as its kind needs
 * and makes it ACTIVE.  Returns 0, or -1 if the protection could not be applied
 * (ENOMEM: too many mappings): the op is then released and the caller runs the
 * call blocking. */
int unblock_op_activate(unblock_op_t *op);

/* Releases a CLAIMED op that was never activated. */
void unblock_op_release(unblock_op_t *op);

/* The engine: the transfer of `op` completed (or failed with `error`); receives
 * record `got` first.  Wakes every thread waiting for it, and finishes the op
 * here when nothing needs copying into the program's pages.  Never from the
 * fault handler, except for a file write (fileio's release hook: finishing it
 * only opens its pages). */
void unblock_op_mark_done(unblock_op_t *op, int error);

/* Waits for `op` to be DONE and finishes it (copy-out, protection restored, slot
 * freed).  Safe to call for an op another thread finishes at the same time. */
void unblock_op_complete(unblock_op_t *op, int in_handler);

/* Finishes every op that is already DONE (cheap when none is), in this thread. */
void unblock_ops_reap(void);

/* Completes every op whose bytes overlap [addr, addr+len); with `write` the caller
 * is about to write there (so read-only owners must finish too), otherwise only to
 * read (sends may stay).  Also completes ops that share a page with the range when
 * the caller's access would fault.  For calls that hand memory to the kernel. */
void unblock_protect_sync_range(const void *addr, size_t len, int write)
    __attribute__((access(none, 1))); /* only the address is used, never the bytes */

/* Before a new operation starts on `bytes` (a receive: with the pages [pstart,
 * pend) it will make inaccessible), completes the operations in flight it must not
 * run beside: byte-level order, and pages a receive makes unreadable (see
 * match_order in protect.c).  Operations that share pages but no byte run
 * together.  `view`: the new operation reads or writes the runtime view of the
 * pool (multiview), where no page is ever protected. */
void unblock_protect_order(int recv, intptr_t view, const unblock_bytes_t *bytes,
                           uintptr_t pstart, uintptr_t pend);

/* Completes every op that owns bytes or pages of [addr, addr+len): before memory is
 * freed, unmapped, remapped or re-protected by the program. */
void unblock_protect_release_range(const void *addr, size_t len);
/* Installs memory.h's release hook (unblock_protect_init). */
void unblock_protect_hook_memory(void);

/* inplace.c: the first op->got bytes of a receive written into its
 * inaccessible pages through /proc/self/mem (under the table lock;
 * async-signal-safe); 0 if done, -1 if the caller must copy the usual way. */
int unblock_copy_in_place(unblock_op_t *op);

/* Completes everything in flight (MPI_Finalize, exit, fork, exec). */
void unblock_protect_quiesce(void);
/* Completes the message receives in flight (not files' background reads): the
 * program is about to read a file, which the sender of such a receive may
 * have written before it sent.  Without unblock the blocking receive returned
 * only once the message came, so the read saw that write; a converted one
 * returns at once (fileio.h: UNBLOCK_SYNC_BUF of a read; MPI-IO's reads).
 * Only on a thread of the program's or one that converted a receive
 * (unblock_tls.program, .received), and on one that converted none only while
 * the completion thread completes them (unblock_protect_engine_t.driven). */
void unblock_protect_receives_done(void);

/* Waits until the background file reads in flight have read their data (not
 * finished: the pages stay protected until used).  News may leave the process:
 * what they read must be the file as it was at the read.  Without `all`, reads
 * under a read lease (op->file 2) are left to run. */
void unblock_protect_files_read(int all);

/* Whether [addr, addr+len) may be protected at all: it must lie in memory whose
 * pages belong to one allocation of the program (src/memory), never a stack,
 * shared mapping, MPI or libc memory.  Sets the page range to protect. */
int unblock_protect_eligible(const void *addr, size_t len, uintptr_t *pstart, uintptr_t *pend);

/* Counts protection changes: a fault on a page no operation owns any more is
 * retried once per change (another thread may have opened it just now). */
extern UNBLOCK_HIDDEN uint64_t unblock_protect_generation;

/* The fault handler's part: if a page of `addr` is owned, waits for its owners and
 * finishes them, and returns 1 (the access can be retried); else 0. */
int unblock_protect_on_fault(uintptr_t addr);

/* ---- chains (learned in chains.c, kept here) ----
 * A chain op protects the runs of pages of a learned sequence of requests at its
 * first request (one protection change per run); the requests that follow link
 * to it and change no protection; when it is closed (its last request joined, a
 * request did not match, or someone waits for it) and its members are done, its
 * pages open at once.  A fault on its pages closes it and waits for the members
 * issued so far, never for requests not made yet. */

/* Starts a chain of `runs` (sorted, disjoint page runs), inaccessible with `recv`,
 * else read-only; they are protected when its first member is activated (members
 * that complete at once need no protection).  Returns its slot, or -1 (no slot). */
int unblock_chain_begin(const uintptr_t (*runs)[2], unsigned nruns, int recv);

/* Links a CLAIMED op to chain `slot` (started as `seq`) if the chain is still open
 * and its pages cover the op's [pstart, pend): the op then owns no pages.  With
 * `last`, the chain closes after it.  1 if linked. */
int unblock_chain_link(int slot, uint64_t seq, unblock_op_t *op, int last);

/* Closes chain `slot` (started as `seq`): it finishes once its members are. */
void unblock_chain_close(int slot, uint64_t seq);

/* Whether chain `slot` (started as `seq`) is still open to new members. */
int unblock_chain_open(int slot, uint64_t seq);

/* The sequence number a slot's op started with (to name a chain later). */
static inline uint64_t unblock_op_seq(int slot)
{
    return unblock_ops[slot].seq;
}

/* Learning (chains.c): each converted call on pool memory is a step, named by its
 * call site and arguments.  Returns the chain slot whose protection covers this
 * step (link the op with unblock_chain_link, `*last` saying whether it is the
 * chain's last), or -1.  `ps`/`pe`: the pages the step's op would own (empty for
 * a copied send). */
int unblock_chain_step(uint64_t key, int recv, uintptr_t ps, uintptr_t pe, int *last,
                       uint64_t *seq);

/* Set by a fault of the program on an operation's pages: the next step starts a
 * new period. */
extern UNBLOCK_HIDDEN uint32_t unblock_chain_boundary;

/* A converted call returned to the program: a step that comes more than 50 µs
 * later starts a new period (the program computed in between). */
void unblock_chain_returned(void);

/* UNBLOCK_VERIFY's checksum of a byte range. */
uint64_t unblock_checksum(const void *p, size_t len);

#endif
