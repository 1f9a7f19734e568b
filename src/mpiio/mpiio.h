/* mpiio.h — MPI-IO write-behind, shared by the files of src/mpiio/
 * (docs/mpiio.md):
 *   file.c    the hook the generated wrappers call (comm/mpi_wrap.h): which files
 *             are followed, the calls that take writes, and the consistency points
 *             that flush first; errors kept for the next call
 *   flush.c   the local and collective flushes, and news told and heard
 *   stage.c   stage-1 pieces per file block, block images (bytes and a bitmap of
 *             the bytes written) and writing their runs through the rank's own
 *             handle
 *   overlay.c a rank's reads of its own buffered writes: the bytes it holds in a
 *             range, through an index of a block's records where they are many
 *   owner.c   stage 2: pieces sent to each block's owner, the owners' caches
 *             and their eviction, collective flushes
 *   thread.c  the I/O thread: its life, its loop and sleeps, its pin of MPI's
 *             thread safety, idle stage 1 noticed
 *   report.c  the module's table: drains at exit, on fatal signals, statistics
 *
 * One lock (mio_lock) guards every file's buffers; it is never held across a
 * call that may wait for another process. */
#ifndef UNBLOCK_MPIIO_H
#define UNBLOCK_MPIIO_H

#include "comm/datatype.h"
#include "comm/mpi_wrap.h"
#include "core/core.h"
#include "core/options.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* The real MPI functions and handles write-behind uses (resolved at first open). */
typedef struct {
    int (*open)(MPI_Comm, const char *, int, MPI_Info, MPI_File *);
    int (*close)(MPI_File *);
    int (*write_at)(MPI_File, MPI_Offset, const void *, int, MPI_Datatype, MPI_Status *);
    int (*sync)(MPI_File);
    int (*set_eh)(MPI_File, MPI_Errhandler);
    int (*call_eh)(MPI_File, int);
    int (*get_position)(MPI_File, MPI_Offset *);
    int (*seek)(MPI_File, MPI_Offset, int);
    int (*set_view)(MPI_File, MPI_Offset, MPI_Datatype, MPI_Datatype, const char *, MPI_Info);
    int (*set_atomicity)(MPI_File, int);
    int (*get_info)(MPI_File, MPI_Info *);
    int (*get_amode)(MPI_File, int *);
    int (*info_get)(MPI_Info, const char *, int, char *, int *);
    int (*info_set)(MPI_Info, const char *, const char *);
    int (*info_create)(MPI_Info *);
    int (*info_dup)(MPI_Info, MPI_Info *);
    int (*info_free)(MPI_Info *);
    int (*comm_dup)(MPI_Comm, MPI_Comm *);
    int (*comm_free)(MPI_Comm *);
    int (*comm_rank)(MPI_Comm, int *);
    int (*comm_size)(MPI_Comm, int *);
    int (*comm_test_inter)(MPI_Comm, int *);
    int (*barrier)(MPI_Comm);
    int (*allreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);
    int (*iallreduce)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *);
    int (*type_size)(MPI_Datatype, int *);
    int (*error_class)(int, int *);
    int (*set_elements)(MPI_Status *, MPI_Datatype, MPI_Count);
    int (*set_cancelled)(MPI_Status *, int);
    int (*grequest_start)(MPI_Grequest_query_function *, MPI_Grequest_free_function *,
                          MPI_Grequest_cancel_function *, void *, MPI_Request *);
    int (*grequest_complete)(MPI_Request);
    int (*finalized)(int *);
    int (*initialized)(int *);
    int (*isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
    int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
    int (*irecv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*testall)(int, MPI_Request *, int *, MPI_Status *);
    int (*waitall)(int, MPI_Request *, MPI_Status *);
    int (*test)(MPI_Request *, int *, MPI_Status *);
    int (*improbe)(int, int, MPI_Comm, int *, MPI_Message *, MPI_Status *);
    int (*mrecv)(void *, int, MPI_Datatype, MPI_Message *, MPI_Status *);
    int (*get_count)(const MPI_Status *, MPI_Datatype, int *);
    MPI_File (*file_f2c)(MPI_Fint);
    MPI_Fint (*file_c2f)(MPI_File);
    MPI_Info (*info_f2c)(MPI_Fint);
    MPI_Fint (*request_c2f)(MPI_Request);
    int (*status_c2f)(const MPI_Status *, MPI_Fint *);
    MPI_Comm self, world;
    MPI_Datatype byte, integer, int64;
    MPI_Info info_null;
    MPI_Errhandler errors_return;
    MPI_Op max;
} mio_mpi_t;
extern UNBLOCK_HIDDEN mio_mpi_t mio_mpi;

/* Stage 1: one file block's pieces in program order, as records
 * {uint32 offset in the block, uint32 length, bytes}; a piece that continues the
 * last one grows it. */
typedef struct mio_pblock {
    int64_t block;
    char *buf;
    size_t used, cap;
    size_t last;         /* offset of the last record */
    uint32_t last_end;   /* where it ends in the block */
    size_t bytes;        /* bytes of data */
    size_t nrec;         /* records */
    int big;             /* its buffer took the room to the block's end (stage.c) */
    /* reads served from the buffers: the records sorted by offset (built when a
     * read meets more than MIO_SERVE_LINEAR of them; good while `used` stays) */
    struct mio_recix *ix;
    size_t ix_used;
    uint32_t ix_maxlen;
    int ix_builds;
    struct mio_pblock *next, *hnext;
} mio_pblock_t;

/* A block's image: its bytes and which were written (stage 2, and the one-stage
 * write of a block's pieces). */
typedef struct mio_image {
    int64_t block;
    char *data;          /* the block's bytes: in mem (at its start, or past the
                            header of a stage-1 record it took over) */
    char *mem;
    size_t mem_cap;
    uint64_t *bits;
    uint32_t lo, hi;     /* the written bytes lie in [lo, hi) */
    size_t dirty;        /* bytes written */
    int remote;          /* holds pieces of another rank */
    int writing;         /* 1: full, being written by the I/O thread without
                            mio_lock; 2: its writer waits for such an older one of
                            its block.  Nothing is painted into either (a newer
                            image takes the pieces), nobody else writes them */
    int retry;           /* the I/O thread's write of it failed: the program's
                            thread writes it again (mio_settle) */
    uint64_t seq;        /* the file's images in the order they were made */
    unsigned char *from; /* which ranks' pieces it holds (a bit per rank) */
    struct mio_image *next;
} mio_image_t;

/* What a file's view makes of offsets (default: bytes from 0). */
typedef struct {
    int plain;           /* displacement 0, etype and filetype bytes */
    int64_t disp, esize; /* displacement, bytes per etype */
    unblock_flat_t *flat; /* the filetype's bytes (NULL: contiguous of ftsize) */
    int64_t ftsize, ftextent;
} mio_view_t;

#define MIO_HASH 256
#define MIO_ASKS 8 /* owners asked ahead at once, a file (stage.c: ask_ahead) */

typedef struct mio_file {
    MPI_File fh;         /* the program's handle */
    MPI_File self;       /* this rank's own handle on the same file (MPI_COMM_SELF),
                            where the kernel cannot open it (fd < 0) */
    int has_self;
    char *name;          /* as the program named it, and its access mode */
    int amode;
    MPI_Comm comm;       /* a duplicate of the file's communicator (stage 2) */
    int rank, size;
    int follow;          /* writes are taken (native view, not atomic) */
    int two_stage;
    int solo;            /* a file of one rank (MPI_COMM_SELF: PnetCDF's handle for
                            independent data): its blocks are all its own, and the
                            I/O thread writes them calling no MPI function */
    int news;            /* solo in a job of several (or, as UNBLOCK_MPIIO_VISIBLE
                            says, any file of such a job): what this rank holds
                            back goes to the file before an MPI call that may tell
                            another process (mpi_wrap.h: UNBLOCK_MPIIO_NEWS;
                            mio_news_flush) */
    int held;            /* flushes of it from another call (mio_flush_picked):
                            its close waits for them */
    unsigned pick_pass;  /* the last of those passes that flushed it */
    int retry;           /* its images whose write failed on the I/O thread, for
                            the program's thread (f->err is MIO_ERR_RETRY) */
    int64_t block;       /* logical block size */
    mio_view_t view;
    /* stage 1 */
    mio_pblock_t *hash[MIO_HASH];
    mio_pblock_t *list;
    size_t s1_bytes;
    int s1_big;          /* blocks with big set */
    /* stage 2: the blocks this rank owns */
    mio_image_t *images;
    uint64_t image_seq;  /* images made so far (their seq) */
    size_t s2_bytes;
    size_t queued;       /* bytes handed to the I/O thread, not sent yet */
    unsigned char *sent; /* owners sent pieces since the last flush, one per rank */
    int nsent;           /* of them, those not 0 (mio_sent_mark) */
    /* Owners asked ahead to write what they hold of a whole block of theirs
     * that this rank wrote (stage.c: ask_ahead), their answers in flight. */
    struct {
        int64_t block;
        int owner, cls;
        uint32_t heard; /* mio_heard_any when asked */
        MPI_Request req;
    } asks[MIO_ASKS];
    int nasks;
    int flushing;        /* the program's thread waits for owners */
    /* Stage 1 sent while the program computes (thread.c: note_idle): set by the
     * I/O thread when stage 1 has not moved for MIO_IDLE_NS while the thread
     * that writes ran at least half that time; the program's next call on the
     * file sends it (mio_ship).  Never for a file this rank reads back. */
    int ship, read_back;
    int64_t pass_at;     /* the block stage 1 took last (stage.c: passed blocks) */
    uint64_t idle_sig, idle_since, idle_cpu; /* the I/O thread's last look */
    pthread_t writer;    /* the thread of the last write taken, its CPU clock */
    clockid_t writer_clock; /* and its depth in MPI calls (unblock_tls.mpi_depth) */
    const int *writer_depth;
    int has_writer;
    MPI_Request *ack_req; /* ... for their answers (ack_n of them, all in: ack_done), */
    int ack_n, ack_done;  /*     which the I/O thread tests (owner.c: wait_answers) */
    int coll_count;      /* owner: ranks whose collective flush arrived */
    int coll_arrived;    /* this rank's program is in the same collective flush */
    unsigned coll_gen;   /* collective flushes this rank's owner side finished */
    /* errors: the first MPI error class of a write done later, for the next call */
    int err;
    int *owed;           /* owner: the class to tell each rank at its next flush */
    int fd;              /* a descriptor of the file (reservations, the I/O thread's
                            writes, the fatal-signal drain), or -1 */
    int fd_dirty;        /* written through fd since MPI_File_sync's last fsync of it
                            (either thread: atomic) */
    int noreserve;       /* no space reserved: its file system has no fallocate,
                            or processes outside its communicator may write it */
    int resv_ahead;      /* past its first block: 4 blocks reserved ahead (stage.c) */
    int cut_at_close;    /* every rank of the file reserves (agreed at open): the
                            space reserved past its end goes back at close */
    char path[256];      /* as the program named it (truncated) */
    dev_t dev;           /* the file, where fd >= 0 (fstat at open) */
    ino_t ino;
    int sib;             /* another followed handle of this process has the same file
                            (PnetCDF 1.15: one on MPI_COMM_SELF for independent
                            data, one on the file's communicator): every call on
                            either writes the other's buffered writes first, and
                            no memo or cursor takes its writes (mio_siblings) */
    int64_t written_hi;  /* highest byte written + 1 (the fatal drain writes no further) */
    unsigned s1_gen;     /* stage-1 blocks freed, views and atomicity set: the count
                            (what the continuation path's memos check) */
    int seen;            /* mio_seen: every rank's writes told of were written ... */
    uint32_t seen_heard; /* ... when news heard was this (file.c: heard) */
    int64_t pending_hi;  /* this rank's taken bytes not known written: the highest + 1
                            (MPI_File_get_size answers at least this; 0 after a flush) */
    /* Quiet (flush.c: flush_direct, flush_quiet): no rank took a write of
     * the file at its last UNBLOCK_MPIIO_QUIET collective flushes, so none holds a
     * byte of it.  Its writes are not taken, and its collective flushes make no
     * reduction but every MIO_QUIET_CHECK-th, which asks how many writes each
     * rank passed meanwhile: where one passed as many as the collective calls
     * between, its writes are taken again.  Decided by the reductions'
     * answers, the same on every rank. */
    int took;            /* a write taken since the last collective flush */
    int quiet, quiet_run; /* quiet; collective flushes in a row at which no rank took one */
    unsigned quiet_calls; /* collective flushes while quiet */
    int64_t passed;      /* while quiet: writes not taken since the last check */
    int mpi_pinned;      /* the I/O thread may call MPI for it (thread.c: pinned_mpi,
                            which keeps MPI's thread safety on); not while quiet */
    struct mio_file *next;
} mio_file_t;

/* sent[r] = v, nsent kept (under mio_lock, the program's thread). */
static inline void mio_sent_mark(mio_file_t *f, int r, unsigned char v)
{
    f->nsent += (v != 0) - (f->sent[r] != 0);
    f->sent[r] = v;
}

/* Whether f's writes are taken: its view and atomicity allow it and it is not
 * quiet. */
static inline int mio_takes(const mio_file_t *f)
{
    return f->follow > 0 && !f->quiet;
}

/* Whether a and b are handles of the same file (the descriptors beside them:
 * the same device and inode). */
static inline int mio_same_file(const mio_file_t *a, const mio_file_t *b)
{
    return a->fd >= 0 && b->fd >= 0 && a->dev == b->dev && a->ino == b->ino;
}

/* Pickers for mio_flush_picked: the handles of key's file (key NULL: every
 * file).  mio_file_followed (under mio_lock): whether a followed handle has
 * key's file (key: a mio_file_t with fd, dev and ino set). */
int mio_pick_same_file(const mio_file_t *g, const mio_file_t *key);
int mio_file_followed(const mio_file_t *key);

/* A file of several ranks whose news (f->news) leaves this rank's records at
 * their owners, painted but not written (MIO_FL_RECEIPT): any rank's read, a
 * write that is not taken and a size first have the owners of its blocks
 * write them (MIO_FL_SEE; docs/mpiio.md). */
static inline int mio_news_owners(const mio_file_t *f)
{
    /* (not where this process has another handle of the file, f->sib: a write
     * through that one, a file of one rank, goes to the file without asking
     * f's owners for older bytes they hold) */
    return f->news && f->two_stage && f->size > 1 && !f->sib;
}

/* How a local flush leaves this rank's records (mio_flush_how): written, by it
 * and their owners (OWN); painted at their owners, which answer at once and
 * write later (RECEIPT: the news of a file of several ranks, so that owners
 * still merge every rank's pieces); or written with every other rank's that
 * any owner holds (SEE: what another rank told of after its RECEIPT is in the
 * file; made once after news is heard, file.c: mio_seen); or that, this rank's
 * stage-1 records kept (OTHERS: mio_see_others). */
enum { MIO_FL_OWN, MIO_FL_RECEIPT, MIO_FL_SEE, MIO_FL_OTHERS };

/* UNBLOCK_MPIIO_VISIBLE (the option's indexes): which files are news (file.c:
 * mio_news_flush): those opened MPI_MODE_RDWR, none but those of one rank, all. */
enum { MIO_VISIBLE_AUTO, MIO_VISIBLE_SYNC, MIO_VISIBLE_MESSAGES };

extern UNBLOCK_HIDDEN pthread_mutex_t mio_lock;
extern UNBLOCK_HIDDEN mio_file_t *mio_files;    /* followed files, in the order they were opened */
/* Set (under mio_lock) when the process ends: by the exit's drain and a fatal
 * signal's.  From then on nothing is taken (mio_take returns -1, the
 * continuation path and the cursor's memos end): the program's other threads,
 * which go on until the process ends, write in their calls through MPI, as
 * without unblock, instead of into buffers no drain will look at again. */
extern UNBLOCK_HIDDEN int mio_ending;

/* Counters (docs/stats.md, "mpiio"). */
typedef struct {
    unblock_counter_t files, writes, bytes, passthrough, pieces_sent, bytes_sent,
        pieces_received, blocks_written, blocks_written_remote, blocks_written_full, blocks_kept,
        blocks_kept_asked,
        write_calls, evictions,
        flush_local, flush_collective, flush_bound, flush_idle, flush_close, flush_finalize,
        flush_exit, flush_news, flush_see, flush_outside,
        blocks_retried, errors_deferred, errors_returned, errors_unconsumed, peak_buffered, iwrites,
        thread_started, thread_wakeups, thread_sleeps, nonblocking_completed, split_completed,
        sizes_answered, reads_served, cursor_writes, flushes_direct, blocks_passed, strided_writes,
        sync_fsyncs, flushes_quiet;
} mio_stats_t;
extern UNBLOCK_HIDDEN mio_stats_t mio_stats;
extern UNBLOCK_HIDDEN int mio_mode; /* 0: not used yet, 1: one stage, 2: two stages */

/* open.c: the buffered writes of this rank through f's siblings (other handles
 * of the same file in this process) are written (a local flush of each). */
void mio_siblings_flush(mio_file_t *f, int how);
/* open.c: the handles MPI_File_open gave that are not followed (read-only or
 * sequential, on an intercommunicator, refused) of a file the kernel names: a
 * call on one first writes what this rank buffered of that file through
 * followed handles (mio_plain_look: how as mio_siblings_flush's; returns
 * whether any followed handle has the file; where none does and `front` is
 * MIO_PLAIN_C or MIO_PLAIN_F, the handle becomes the wrappers' plain handle,
 * mpi_wrap.h: unblock_mpiio_plain, with ffh from Fortran).  mio_plain_forget
 * at its close (a handle followed now, too: MPI may give a closed handle's
 * value again). */
enum { MIO_PLAIN_NONE, MIO_PLAIN_C, MIO_PLAIN_F };
void mio_plain_note(MPI_File fh, const char *name);
void mio_plain_forget(MPI_File fh);
int mio_plain_look(MPI_File fh, int how, int front, MPI_Fint ffh);
/* flush.c: a local flush of every followed file that pick(g, f) chooses, counted
 * in why; each is held meanwhile (another thread's close of it waits).  Returns
 * how many it chose. */
int mio_flush_picked(mio_file_t *f, int (*pick)(const mio_file_t *g, const mio_file_t *f),
                     unblock_counter_t *why, int how);
/* What this rank holds back of the files that are news (f->news) written,
 * before a call that may tell another process (mpi_wrap.h: UNBLOCK_MPIIO_NEWS). */
void mio_news_flush(void);
/* Set (before unblock_mpiio_news) when a write of a file that is news is taken:
 * the next call that may tell another process flushes it. */
extern UNBLOCK_HIDDEN int mio_out;
/* The last file that is news closed, or a fork child: nothing to tell or hear. */
void mio_news_none(void);
/* flush.c, from the hook: MPI function `id` is about to run while
 * unblock_mpiio_news is set (mpi_wrap.h: UNBLOCK_MPIIO_NEWS); before call op on
 * f (NULL: a file not followed); before an MPI_File_open on comm. */
void mio_news_call(unsigned id);
void mio_news_at(int op, mio_file_t *f);
void mio_news_at_open(MPI_Comm comm);

/* stage.c */
/* Under mio_lock: 0; -1 no memory; -2 no room in the file (the call must run as
 * MPI's own, which gives its error) */
int mio_take(mio_file_t *f, int64_t off, const char *p, int64_t n);
/* Under mio_lock: the stage-1 block of `block` (NULL if none). */
mio_pblock_t *mio_pblock_of(mio_file_t *f, int64_t block);
void mio_note_peak(mio_file_t *f);
/* f's first error of a write done later, kept for its next call (the wrapper's
 * cursor ends with it); 1 if it was the first.  Under mio_lock. */
int mio_keep_error(mio_file_t *f, int cls);
/* f->err while images of a solo file whose write failed on the I/O thread wait
 * for the program's thread (image_write): no class yet, MPI's own call will
 * give it.  Not an MPI error code (those are >= 0). */
#define MIO_ERR_RETRY (-1)
void mio_settle(mio_file_t *f);
/* Stage-1 records, under mio_lock or from the program's serialized calls.  n
 * bytes more at the end of b's last record (its data is there already): the
 * record's, the block's and the file's sizes. */
static inline void mio_record_extend(mio_file_t *f, mio_pblock_t *b, size_t n)
{
    uint32_t len;
    memcpy(&len, b->buf + b->last + 4, 4);
    len += (uint32_t)n;
    memcpy(b->buf + b->last + 4, &len, 4);
    b->used += n;
    b->last_end += (uint32_t)n;
    b->bytes += n;
    f->s1_bytes += n;
}

/* A record of its own: n bytes from p at offset `in` of b's block, in b's buffer
 * (room for 8 + n there), and the sizes. */
static inline void mio_record_add(mio_file_t *f, mio_pblock_t *b, uint32_t in, const char *p,
                                  uint32_t n)
{
    char *d = b->buf + b->used;
    memcpy(d, &in, 4);
    memcpy(d + 4, &n, 4);
    memcpy(d + 8, p, n);
    b->last = b->used;
    b->nrec++;
    b->used += 8 + (size_t)n;
    b->last_end = in + n;
    b->bytes += n;
    f->s1_bytes += n;
}

/* The I/O thread sleeps with nothing to watch (thread.c: deep_ns,
 * UNBLOCK_MPIIO_SLEEP_MS); a write taken wakes it, so that its stage 1 is
 * watched for idleness (note_idle): one relaxed load where it is awake. */
extern UNBLOCK_HIDDEN uint32_t mio_thread_deep;
void mio_thread_undeep(void);
static inline void mio_thread_watch(void)
{
    if (unblock_unlikely(__atomic_load_n(&mio_thread_deep, __ATOMIC_RELAXED)))
        mio_thread_undeep();
}

/* n bytes taken that end at file byte end: the file's highest bytes written and
 * pending, and the peak statistic, noted each 64 KiB. */
static inline void mio_note_written(mio_file_t *f, int64_t end, size_t n)
{
    f->took = 1;
    mio_thread_watch();
    if (end > f->written_hi)
        f->written_hi = end;
    if (end > f->pending_hi)
        f->pending_hi = end;
    if ((f->s1_bytes - n) >> 16 != f->s1_bytes >> 16)
        mio_note_peak(f);
}

/* Both, for a record grown to end at file byte end (the continuation path, the
 * wrapper's cursor's settle). */
static inline void mio_record_grew(mio_file_t *f, mio_pblock_t *b, int64_t end, size_t n)
{
    mio_record_extend(f, b, n);
    mio_note_written(f, end, n);
}

/* Under mio_lock (or with the program's MPI calls serialized), the continuation
 * path (own.c): n bytes at file byte off appended to b's last record, which they
 * continue, inside the block, the room b has, and stage 1's bound.  1 if taken, 0
 * if the general path must take them (it also grows b).  Inline, for the cost of
 * an 8-byte write (docs/mpiio.md); the peak statistic is noted each 64 KiB. */
static inline int mio_take_cont(mio_file_t *f, mio_pblock_t *b, int64_t off, const char *p,
                                int64_t n)
{
    int64_t in = off - b->block * f->block;
    if (b->used == 0 || in != (int64_t)b->last_end || in + n > f->block ||
        b->used + (size_t)n > b->cap || b->bytes + (size_t)n >= (size_t)f->block ||
        f->s1_bytes + f->queued + (size_t)n > (size_t)unblock_opt.mpiio_cache / 2)
        return 0;
    char *d = b->buf + b->used;
    if (n == 8) /* (the common small write: no call to memcpy) */
        memcpy(d, p, 8);
    else
        memcpy(d, p, (size_t)n);
    mio_record_grew(f, b, off + n, (size_t)n);
    return 1;
}

/* request.c: a generalized request already complete, its status counting n
 * bytes, in *req (MPI's error code). */
int mio_request_done(MPI_Count n, MPI_Request *req);
/* Open MPI, while the I/O thread runs: the nonblocking file call `id` (C
 * arguments a; f its file, or NULL if not followed) made as its blocking form,
 * its request complete, or a split collective's _begin made as the blocking
 * form, what it moved kept for mio_split_end.  1 if made (*rc its result), 0 if
 * the call is MPI's. */
int mio_nb_as_blocking(mio_file_t *f, unsigned id, int large, void **a, int *rc);
/* Whether function `id` is one of those calls (Open MPI only), in *at whether it
 * takes an offset, in *split whether it is a split collective's _begin. */
int mio_nb_call(unsigned id, int *at, int *split);
/* A split collective's _end on fh: 1 if its _begin was made blocking (*st, unless
 * MPI_STATUS_IGNORE, counts what it moved; *rc its result), 0 if MPI's own. */
int mio_split_end(MPI_File fh, MPI_Status *st, int *rc);

/* view.c: the file view a taken write goes through. */
void mio_view_reset(mio_view_t *v);
/* The view the program set: 1 if followed (native, a known filetype). */
int mio_view_set(mio_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype ft,
                 const char *datarep);
/* Takes n bytes of the view's data stream from byte s on (mio_take's result). */
int mio_take_view(mio_file_t *f, int64_t s, const char *p, int64_t n);
/* The path as the file system knows it (ROMIO's "ufs:" style prefixes dropped). */
const char *mio_plain_path(const char *name);
void mio_pblock_free(mio_file_t *f, mio_pblock_t *b);
/* bufs.c: large buffers (stage-1 records grown past 64 KiB, images) kept for the
 * next block.  A buffer of at least min bytes (*cap: how many; MIO_BUF_GROW: the
 * largest kept, else the smallest that fits), NULL when memory is short; one given back
 * (kept or freed); the ones kept freed (the last file's close).  Those of
 * more than 512 KiB are mappings of their own (huge pages): given back only
 * here, never to free() or realloc(). */
#define MIO_BUF_MIN ((size_t)64 << 10) /* (smaller ones are not kept) */
#define MIO_BUF_GROW 1  /* (the largest kept: a stage-1 buffer, which grows on) */
#define MIO_BUF_SMALL 2 /* (a fresh one of 4 KiB pages: a file's first image,
                           which may hold a few KiB) */
char *mio_buf_get(size_t min, size_t *cap, int flags);
void mio_buf_put(char *p, size_t cap);
void mio_buf_release(void);
/* Under mio_lock: whether a read of [lo, hi) may be served from the buffers at a
 * small cost (mio_overlay): its blocks' records walked (at most MIO_SERVE_LINEAR
 * each) or found through their index (built at most MIO_SERVE_BUILDS times per
 * block: a block written between reads makes it stale). */
#define MIO_SERVE_LINEAR 256
#define MIO_SERVE_BUILDS 4
int mio_overlay_cheap(mio_file_t *f, int64_t lo, int64_t hi);
/* Under mio_lock: the bytes of file range [lo, hi) this rank holds (its images,
 * then its stage-1 records, in the order written) copied to dst (dst[0] is byte
 * lo; NULL: nothing copied); returns where the last of them ends (lo if none),
 * or -1 if memory for an index was short (nothing copied then). */
int64_t mio_overlay(mio_file_t *f, int64_t lo, int64_t hi, char *dst);
mio_image_t *mio_image_get(mio_file_t *f, int64_t block);
/* The oldest image of f (of one block, block >= 0) made after image number seq
 * (0: the oldest), or NULL; images of a block go to the file in that order
 * (a newer one holds later bytes).  Async-signal-safe. */
mio_image_t *mio_image_after(const mio_file_t *f, int64_t block, uint64_t seq);
/* The next run of written bytes of im at or after *s below hi: [*s, *e); 0 if
 * none.  Async-signal-safe. */
int mio_next_run(const mio_image_t *im, uint32_t *s, uint32_t *e, uint32_t hi);
void mio_paint(mio_file_t *f, mio_image_t *im, const char *rec, size_t used, int from);
int mio_image_write(mio_file_t *f, mio_image_t *im); /* then frees it */
int mio_flush_stage1(mio_file_t *f, int bound_only);  /* under mio_lock */
/* Under mio_lock: every image written (over_bound 0: those the I/O thread writes
 * waited for), or the fullest one; the count. */
int mio_write_images(mio_file_t *f, int over_bound);
/* The I/O thread, under mio_lock: f's images painted full written at once, the
 * lock let go during each write; the count. */
int mio_write_full(mio_file_t *f);
/* Under mio_lock: the images holding pieces of rank r written (a flush for r
 * needs no others); the count.  With write 0 only counted. */
int mio_write_images_of(mio_file_t *f, int r, int write);
void mio_note_error(mio_file_t *f, int rc);
/* Records rec[0, used) of the block at base, by pwrite (async-signal-safe). */
void mio_write_records_fd(int fd, int64_t base, const char *rec, size_t used);
size_t mio_cache_half(void);

/* ns (under a second) added to ts: a deadline of the timed waits on
 * CLOCK_MONOTONIC conditions (owner.c, thread.c). */
static inline void mio_ts_add(struct timespec *ts, long ns)
{
    ts->tv_nsec += ns;
    if (ts->tv_nsec >= 1000000000L)
        ts->tv_sec++, ts->tv_nsec -= 1000000000L;
}

/* owner.c: the owners' messages.  The I/O thread's round (mio_lock held): 1
 * if it did something; an owner's side of a collective flush once every rank
 * is in it; records queued for owners; the conditions it signals (made with
 * the thread's, CLOCK_MONOTONIC where timed); a fork child's empty queue. */
int mio_owner_round(void);
int mio_coll_ready(mio_file_t *f);
int mio_queue_busy(void);
void mio_owner_init(const pthread_condattr_t *monotonic);
void mio_owner_forked(void);

/* thread.c: the I/O thread */
int mio_thread_up(void); /* it runs (mio_lock held) */
int mio_two_stage_possible(void);
/* 1 while the I/O thread runs with a file of several ranks open (quiet or not). */
int mio_thread_running(void);
int mio_thread_attach(mio_file_t *f); /* 1 if the thread runs */
void mio_thread_detach(mio_file_t *f);
/* f's I/O thread calls MPI for it (1) or not (0, a quiet file: no rank sends it
 * a message, and MPI's thread safety may go off for it); not under mio_lock. */
void mio_thread_mpi(mio_file_t *f, int on);
/* The thread ended and joined (MPI_Finalize: it lingers after the last close). */
void mio_thread_stop(void);
/* A fork child: the parent's thread is not its own. */
void mio_thread_forked(void);
int mio_send_block(mio_file_t *f, mio_pblock_t *b); /* under mio_lock: queued to its owner */
/* Not under mio_lock: the owners told what mio_flush_how's `how` asks of them,
 * their answers waited for; the count. */
int mio_flush_owners(mio_file_t *f, int how);
int mio_flush_collective(mio_file_t *f);             /* not under mio_lock */
/* Not under mio_lock, a file of mio_news_owners: where the highest byte that
 * any rank's images of f hold ends (every other rank asked; 0: none), or -1
 * if a message could not be made. */
int64_t mio_owners_size(mio_file_t *f);
/* asks.c, under mio_lock, a file of mio_news_owners: the owner of `block` asked
 * to write what it holds of it, its answer received in the background (f->asks);
 * 1, or 0 where no more can be in flight or memory is short.  mio_ask_finish:
 * ask i's answer waited for (the lock let go meanwhile), and it is dropped;
 * mio_asks_finish: all of them. */
int mio_ask_post(mio_file_t *f, int owner, int64_t block);
int mio_ask_of(const mio_file_t *f, int64_t block); /* (the index, or -1) */
void mio_ask_finish(mio_file_t *f, int i);
int mio_ask_answered(mio_file_t *f, int i); /* (under mio_lock: tested, not waited for) */
void mio_asks_finish(mio_file_t *f);
/* flush.c: calls that may have told this process of another's writes, so far. */
uint32_t mio_heard_any(void);
/* owner.c: a message asking the owner of `block` to write what it holds of it
 * queued, and the receive of its answer posted into *cls and *req (under
 * mio_lock); 1, or 0 if memory is short.  mio_wait_requests: until the n
 * requests are complete, the thread sleeps while the I/O thread tests them
 * (not under mio_lock). */
int mio_send_ask(mio_file_t *f, int owner, int64_t block, int *cls, MPI_Request *req);
void mio_wait_requests(mio_file_t *f, int n, MPI_Request *req);
/* Under mio_lock: this rank's images of blocks it does not own (kept blocks),
 * written and waited for where `write`; their count. */
int mio_write_kept(mio_file_t *f, int write);
/* Under mio_lock: whether a message of f waits in the I/O thread's queue. */
int mio_queued_for(const mio_file_t *f);
/* Under mio_lock: this rank writes what it holds itself, sending nothing
 * (images, then stage 1 as in one stage). */
void mio_write_held(mio_file_t *f);
void mio_thread_poke(void);
/* The program's thread, at a call on f after the I/O thread saw its stage 1 idle
 * (f->ship): the pieces go to their owners now, nobody waits (not under mio_lock). */
void mio_ship(mio_file_t *f);
void mio_fatal_drain_queue(void); /* async-signal-safe */
void mio_wait_queue(mio_file_t *f, size_t limit); /* under mio_lock */
/* Under mio_lock: until the images of f being written (mio_write_full) are in
 * the file: those of im's block older than im, or (im NULL) all. */
void mio_wait_writes(mio_file_t *f, const mio_image_t *im);
void mio_writes_done(void); /* the I/O thread, under mio_lock: wakes that wait */

/* file.c */
extern UNBLOCK_HIDDEN uint32_t mio_files_gen; /* moves (under mio_lock) whenever mio_files changes */
/* This rank's buffered writes of f reach the file (not under mio_lock); for a
 * file of mio_news_owners, every rank's told of (MIO_FL_SEE). */
void mio_flush_local(mio_file_t *f, unblock_counter_t *why);
/* The local flush `how` (MIO_FL_*).  Not under mio_lock.  A file not of
 * mio_news_owners takes OWN, and SEE takes OWN where mio_seen. */
void mio_flush_how(mio_file_t *f, unblock_counter_t *why, int how);
/* core.h's unblock_outside_look while a file is followed (flush.c). */
int mio_outside_look(int all, uint64_t dev, uint64_t ino);
/* Not under mio_lock, a file of mio_news_owners: every other rank's writes
 * that any rank told this one of are written (each owner asked to write all
 * it holds, this rank's own images written); this rank's stage-1 records
 * stay.  f is seen from then on, until news is heard. */
void mio_see_others(mio_file_t *f);
/* Whether every write other ranks told this one of is in f's file: since its
 * last MIO_FL_SEE or collective flush no MPI call that may tell of one ran
 * (unblock_mpi_fn_news: UNBLOCK_NEWS_HEARS).  Then reads and sizes need not
 * ask the owners. */
int mio_seen(const mio_file_t *f);
/* Every rank's buffered writes of f are in the file (collective over its ranks). */
void mio_flush_all_ranks(mio_file_t *f, unblock_counter_t *why);
void mio_resolve(void); /* the MPI functions and handles in mio_mpi, once */
void mio_install(void);
/* Test hook UNBLOCK_TEST_MPIIO_WRITE_MS: the I/O thread pauses this long in each
 * full image's write, before writing (later writes of its block come meanwhile),
 * and a rank holding images at a direct flush under news before writing them. */
extern UNBLOCK_HIDDEN long mio_test_write_ms;
void mio_test_pause(void); /* sleeps mio_test_write_ms */
/* Test hook UNBLOCK_TEST_MPIIO_FAIL_RANK: every write of a file of several ranks
 * through the descriptor on this rank (of the file's communicator) fails, as
 * MPI_ERR_IO, on either thread (-1: none). */
extern UNBLOCK_HIDDEN int mio_test_fail_rank;

/* open.c */
/* MPI_File_open (C arguments a, real the MPI's; `follow` 0 once MPI_Finalize
 * began): the file followed where it can be.  Returns 1 (*rc: MPI's result). */
int mio_open(void **a, void (*real)(void), int *rc, int follow);
/* This rank's own MPI handle of f, where the kernel cannot open the file or a
 * write through the descriptor failed: 1 if open. */
int mio_self_open(mio_file_t *f, MPI_Info info);
/* f's end (every rank at once): everything written, the space reserved past its
 * end cut, f freed.  Returns the error kept for the program. */
int mio_let_go(mio_file_t *f, unblock_counter_t *why);

/* own.c: a rank's own buffered writes without writing them */
/* After a write_at the general path took (n bytes at file byte pos, a contiguous
 * type of tsize bytes): the thread's memo for the next one. */
void mio_cont_fill(mio_file_t *f, MPI_Datatype type, int64_t tsize, int64_t pos, int64_t n);
/* MPI_File_write_at continuing the memo's write: 1 if taken (unblock_mpiio_cont_t). */
int mio_cont_take(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
                  MPI_Status *st, int *rc);
/* The wrapper's cursor (mpi_wrap.h): what it took laid into stage 1, and it
 * dropped (before any other MPI-IO work on the program's thread). */
void mio_cur_drop(void);
/* The fatal drain: the bytes of f the cursor took that no record holds yet. */
void mio_cur_fatal_write(mio_file_t *f);
/* MPI_File_read_at (`at`) or MPI_File_read from the buffers: 1 if served (*rc). */
int mio_read_served(mio_file_t *f, int at, void **a, void (*real)(void), int *rc);
/* Before MPI's MPI_File_get_size (not under mio_lock): where the bytes other
 * ranks told of and their owners hold end (mio_owners_size; 0 where the file
 * is seen or not of mio_news_owners). */
int64_t mio_size_held(mio_file_t *f);
/* MPI_File_get_size's result raised to this rank's buffered end, or to `held`
 * (mio_size_held) if further. */
void mio_answer_size(mio_file_t *f, MPI_Offset *size, int64_t held);
void mio_drain_all(int why);
void mio_report_unconsumed(void);

#endif
