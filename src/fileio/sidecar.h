/* sidecar.h — what the program and its write-behind sidecar share: the layout of
 * the shared memory and the messages on their socket.  Included by sidecar.c
 * (the program's side) and tools/unblock-sidecar.c (the sidecar process), and by
 * nothing else.
 *
 * The shared memory is one memfd: the journal at offset 0, then the arena the
 * workers' buffers come from (merged blocks and copied large writes).  The
 * journal says, at every moment, which bytes of the arena the program has
 * written but the kernel has not yet been given: each descriptor's block
 * (blocks[fd]) and each queued write job (jobs[i], in the order of `seq`).  The
 * program updates it with plain stores (a length is stored after the bytes it
 * covers); the sidecar reads it only once the program is gone, so it sees every
 * store.  An entry names only bytes whose buffer nobody else may take: a job's
 * seq is cleared before its buffer is given back, and a queued block's length
 * after its job's entry is made and before the worker can see the job (named
 * twice for a moment, never by nobody; merge.c: enqueue).  Replaying it is
 * idempotent: the same bytes at the same offsets, and nothing newer can stand
 * there (write-behind writes a descriptor's data in order, and a write the
 * program makes itself waits for what is queued before it). */
#ifndef UNBLOCK_SIDECAR_H
#define UNBLOCK_SIDECAR_H

#include <stdint.h>

#define SC_MAGIC 0x32637362756e6275ull /* "ubnubsc2" */
#define SC_FDS 4096  /* WB_FDS */
#define SC_JOBS 512  /* WB_JOBS */

/* len bytes at arena offset `off` (from the memfd's start) belong at file
 * offset `pos`; len 0: nothing. */
typedef struct {
    uint64_t off;
    int64_t pos;
    uint64_t len;
} sc_extent_t;

typedef struct {
    uint64_t seq;   /* order of queueing (0: free) */
    int32_t fd;     /* the program's descriptor */
    uint32_t pad;
    sc_extent_t x;
} sc_job_t;

typedef struct {
    uint64_t magic;
    uint64_t size;  /* of the whole memfd */
    uint64_t seq;   /* the last job's seq */
    /* DROPs the sidecar has carried out (the only word it writes, in the
     * header's page, which it maps writable): the program compares it with the
     * number it sent to know, without a message, that they are all done. */
    uint32_t dropped;
    uint32_t pad;
    sc_job_t jobs[SC_JOBS];
    sc_extent_t blocks[SC_FDS];
} sc_journal_t;

/* The arena starts here (after the journal, 2 MiB aligned). */
#define SC_ARENA_START (2u << 20)

/* Messages (SOCK_SEQPACKET), carried out in their order.  FOLLOW carries the
 * descriptor (SCM_RIGHTS): the sidecar keeps a duplicate under the program's
 * number.  FORGET: it closes it, and answers ACK (the program's close waits for
 * that where a file the sidecar still held open could be seen: executed, leased,
 * its flock or OFD lock not released).  DROP: the same without an answer; it
 * counts it in the journal's `dropped`.  SYNC: it answers ACK (every message
 * before it is done).  QUIT (the program exits or execs, everything written): it
 * closes every duplicate, answers ACK and ends without writing anything, so that
 * nothing of the program's stays open after it (an unmount right after the job
 * would fail). */
enum { SC_FOLLOW = 1, SC_FORGET = 2, SC_ACK = 3, SC_QUIT = 4, SC_DROP = 5, SC_SYNC = 6 };
typedef struct {
    uint32_t type;
    int32_t fd;
} sc_msg_t;

/* The sidecar's descriptors when it starts (the program's side places them). */
#define SC_SOCK_FD 3
#define SC_MEM_FD 4

#endif
