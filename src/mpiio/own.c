/* own.c — what a rank gets back of its own buffered writes without writing them
 * (docs/mpiio.md): the continuation of its last MPI_File_write_at (the C
 * wrapper's cursor, unblock_mpiio_cur, and its first call, unblock_mpiio_cont),
 * its reads served from its buffers, and MPI_File_get_size counting them.
 * file.c calls these from mio_hook. */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "fileio/fileio.h"
#include "fileio/writebehind.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* The continuation path: each thread's memo of its last taken MPI_File_write_at
 * (a contiguous type of lower bound 0, through the byte view, inside one stage-1
 * block).  The next one of the same handle and type at the byte where it ended,
 * short of `limit` (the block's end and the reserved range's), is appended to
 * the block's last record under mio_lock and nothing else: no view, no type
 * lookup, no reservation call.  It holds while the handle's file, the file's
 * stage-1 blocks (s1_gen) and every reservation (unblock_wb_resv_shrinks) stay.
 * Where the program asked for less than MPI_THREAD_MULTIPLE, the wrapper's
 * cursor serves instead, without the lock (below): its MPI calls never overlap,
 * and stage 1 is only ever changed inside them (the I/O thread reads its sizes,
 * for statistics and the bound, and touches only stage 2). */
/* What a memo (this one, the strided one below) holds while it stays: the
 * reservations' shrinks, unblock_mpiio_gen (mpi_wrap.h) and the files.  rgen is
 * read before the reserved range the memo's limit comes from. */
typedef struct {
    uint32_t rgen, egen, gen;
} memo_gens_t;

static memo_gens_t gens_now(uint32_t rgen)
{
    return (memo_gens_t){ rgen, __atomic_load_n(&unblock_mpiio_gen, __ATOMIC_ACQUIRE),
                          __atomic_load_n(&mio_files_gen, __ATOMIC_ACQUIRE) };
}

/* Whether a memo taken at g still holds (and no trace wants every write). */
static int gens_hold(const memo_gens_t *g)
{
    return g->rgen == __atomic_load_n(&unblock_wb_resv_shrinks, __ATOMIC_ACQUIRE) &&
           g->egen == __atomic_load_n(&unblock_mpiio_gen, __ATOMIC_ACQUIRE) &&
           g->gen == __atomic_load_n(&mio_files_gen, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&unblock_trace_on, __ATOMIC_RELAXED);
}

static UNBLOCK_TLS struct {
    MPI_File fh;
    MPI_Datatype type;
    mio_file_t *f;
    mio_pblock_t *b;
    int64_t tsize, end, limit;
    memo_gens_t gens;
    unsigned s1_gen;
    MPI_File seen_fh; /* the last write_at the general path took: its handle, end */
    int64_t seen_end;
} cont;

/* ---- the wrapper's cursor (mpi_wrap.h: unblock_mpiio_cur) ---- */

#define CUR_ROOM_MAX ((uint64_t)64 << 10) /* (the statistics and stage 1's sizes lag no more) */

/* What the cursor took, laid into its record, the file's sizes and the
 * statistics (the program's thread, where its calls never overlap).  Under
 * mio_lock, once per run of the cursor: a fatal signal's drain on another
 * thread of the program, which holds the lock, reads the record and the
 * cursor before or after, never between (between, the record's length had
 * grown and its block's size not yet, and the drain wrote neither: a
 * FUNNELED program whose main thread wrote through the cursor lost up to 64
 * KiB in 3 of 96 runs, *.signals.end-mpiio-funneled). */
static void strided_settle(unblock_mpiio_cur_t *c, uint64_t t);

static void cur_settle(void)
{
    unblock_mpiio_cur_t *c = &unblock_mpiio_cur;
    uint64_t t = __atomic_load_n(&c->taken, __ATOMIC_ACQUIRE);
    if (t == 0)
        return;
    pthread_mutex_lock(&mio_lock);
    if (c->stride != 0) {
        strided_settle(c, t);
        pthread_mutex_unlock(&mio_lock);
        return;
    }
    mio_record_grew(c->file, c->block, c->end, (size_t)t);
    unblock_counter_bump_by(&mio_stats.writes, c->calls); /* (one writer: no locked add) */
    unblock_counter_bump_by(&mio_stats.bytes, t);
    unblock_counter_bump_by(&mio_stats.cursor_writes, c->calls);
    c->calls = 0;
    c->base = c->dst;
    c->base_off = c->end;
    /* (the record holds them now; a fatal drain in between, on this thread,
     * writes them twice, the same bytes at the same place) */
    __atomic_store_n(&c->taken, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mio_lock);
}

/* Where the last cursor ended (a write there still continues it). */
static MPI_File cur_seen_fh;
static MPI_Offset cur_seen_end;

void mio_cur_drop(void)
{
    unblock_mpiio_cur_t *c = &unblock_mpiio_cur;
    if (c->room == 0 && c->fh == NULL && c->taken == 0)
        return;
    cur_settle();
    cur_seen_fh = c->stride ? NULL : c->fh; /* (strided: end is the next cell's) */
    cur_seen_end = c->end;
    c->room = 0;
    c->stride = 0;
    c->fh = NULL;
    c->file = c->block = NULL;
}

/* The cursor after a taken write that ended at file byte `end`, inside b's last
 * record, short of `limit`: the room that record has without a check. */
static void cur_fill(mio_file_t *f, mio_pblock_t *b, MPI_Datatype type, int64_t tsize, int64_t end,
                     int64_t limit, uint32_t rgen)
{
    unblock_mpiio_cur_t *c = &unblock_mpiio_cur;
    mio_cur_drop();
    int64_t in = end - b->block * f->block;
    if (b->used == 0 || in != (int64_t)b->last_end || f->err || !mio_takes(f))
        return;
    int64_t room = limit - end, r;
    if ((r = (int64_t)(b->cap - b->used)) < room)
        room = r;
    if ((r = f->block - 1 - (int64_t)b->bytes) < room) /* (a full block: the general path) */
        room = r;
    if ((r = (int64_t)(unblock_opt.mpiio_cache / 2) - (int64_t)(f->s1_bytes + f->queued)) < room)
        room = r; /* (queued only shrinks outside the program's calls) */
    if (room > (int64_t)CUR_ROOM_MAX)
        room = (int64_t)CUR_ROOM_MAX;
    if (room <= 0)
        return;
    c->type = type;
    c->end = c->base_off = end;
    c->dst = c->base = b->buf + b->used;
    c->tsize = (uint64_t)tsize;
    c->taken = c->calls = 0;
    c->fvalid = 0; /* (file.c: fortran_cont) */
    c->rgen = rgen;
    c->egen = __atomic_load_n(&unblock_mpiio_gen, __ATOMIC_ACQUIRE);
    c->file = f;
    c->block = b;
    c->room = (uint64_t)room;
    c->fh = f->fh;
}

/* The fatal drain: the bytes the cursor took and no record holds yet (strided:
 * records from base on, each at its place in the block). */
void mio_cur_fatal_write(mio_file_t *f)
{
    unblock_mpiio_cur_t *c = &unblock_mpiio_cur;
    uint64_t t = __atomic_load_n(&c->taken, __ATOMIC_ACQUIRE);
    if (c->file != f || t == 0 || f->fd < 0)
        return;
    if (c->stride == 0)
        (void)!pwrite(f->fd, c->base, (size_t)t, (off_t)c->base_off);
    else /* (t / plen records of 8 + plen bytes each, complete before t moved) */
        mio_write_records_fd(f->fd, c->base_off, c->base, t / c->plen * (8 + c->plen));
}

/* ---- strided writes: a record each (interleaved cells) ----
 *
 * A rank writing every np-th cell makes a new stage-1 record with each write,
 * which went through unblock_mpi_enter, the hook, the view and the type's
 * lookup: about 75 ns a write.  Where the program's MPI calls never overlap
 * (as for the cursor), after two writes of the same size at the same distance
 * the next at that distance, in the same block, is appended as a record here,
 * from the C wrapper's first call (unblock_mpiio_cont), without a lock: stage
 * 1 changes only inside the program's calls.  It holds while the file's
 * stage-1 blocks (s1_gen), every reservation (unblock_wb_resv_shrinks), the
 * files (mio_files_gen) and unblock_mpiio_gen stay. */
static struct {
    MPI_File fh;
    MPI_Datatype type;
    mio_file_t *f;
    mio_pblock_t *b;
    int64_t n, stride, next, limit, tsize;
    memo_gens_t gens;
    unsigned s1_gen;
    MPI_File seen_fh; /* the last write the general path took: its handle, */
    int64_t seen_pos, seen_stride; /* where, and how far from the one before */
} strided;

/* How far a memo may take writes in `block` from byte `at`: the block's end, or
 * the end of the reserved range holding `at` (the cursor's, the memos'). */
static int64_t take_limit(mio_file_t *f, int64_t block, int64_t at)
{
    int64_t limit = (block + 1) * f->block;
    if (f->fd >= 0 && !f->noreserve) {
        int64_t to = (int64_t)unblock_wb_reserved_to(f->fd, (off_t)at);
        if (to < limit)
            limit = to;
    }
    return limit;
}

static void strided_fill(mio_file_t *f, MPI_Datatype type, int64_t tsize, int64_t pos, int64_t n)
{
    int64_t stride = strided.seen_fh == f->fh ? pos - strided.seen_pos : 0;
    int again = stride > n && stride == strided.seen_stride;
    strided.fh = NULL;
    strided.seen_fh = f->fh;
    strided.seen_pos = pos;
    strided.seen_stride = stride;
    int64_t block = pos / f->block, next = pos + stride;
    if (!again || next / f->block != block || (pos + n - 1) / f->block != block)
        return;
    uint32_t rgen = __atomic_load_n(&unblock_wb_resv_shrinks, __ATOMIC_ACQUIRE); /* (first) */
    int64_t limit = take_limit(f, block, pos);
    /* (the write made a record of its own: not the end of a run the cursor
     * took, whose refills a run apart look strided too) */
    mio_pblock_t *b = mio_pblock_of(f, block);
    uint32_t len = 0;
    if (b == NULL || next + n > limit || b->used < 8 ||
        b->last_end != (uint32_t)(pos + n - block * f->block) ||
        (memcpy(&len, b->buf + b->last + 4, 4), len != (uint32_t)n))
        return;
    strided.gens = gens_now(rgen);
    strided.s1_gen = f->s1_gen;
    strided.f = f;
    strided.b = b;
    strided.type = type;
    strided.tsize = tsize;
    strided.n = n;
    strided.stride = stride;
    strided.next = next;
    strided.limit = limit;
    strided.fh = f->fh;
}

/* The wrapper's cursor, strided, after a write the memo took: the records the
 * block may still take at the memo's distance without a check (the same
 * bounds as strided_take's, counted in records), so that the next writes are
 * the generated wrapper's copy (unblock_mpiio_cur_take_strided): 180
 * instructions a write through the memo, callgrind, Open MPI. */
static void strided_cur_fill(mio_file_t *f, mio_pblock_t *b)
{
    unblock_mpiio_cur_t *c = &unblock_mpiio_cur;
    int64_t n = strided.n, next = strided.next, limit = strided.limit;
    if (c->room || c->fh || next + n > limit)
        return;
    int64_t room = (limit - n - next) / strided.stride + 1, r;
    if ((r = (int64_t)(b->cap - b->used) / (8 + n)) < room)
        room = r;
    if ((r = (f->block - 1 - (int64_t)b->bytes) / n) < room) /* (a full block: the general path) */
        room = r;
    if ((r = ((int64_t)(unblock_opt.mpiio_cache / 2) - (int64_t)(f->s1_bytes + f->queued)) / n) <
        room)
        room = r;
    if ((r = (int64_t)CUR_ROOM_MAX / n) < room)
        room = r;
    if (room <= 0)
        return;
    c->type = strided.type;
    c->end = next;
    c->dst = c->base = b->buf + b->used;
    c->base_off = b->block * f->block;
    c->in = (uint32_t)(next - c->base_off);
    c->tsize = (uint64_t)strided.tsize;
    c->stride = strided.stride;
    c->plen = (uint64_t)n;
    c->taken = c->calls = 0;
    c->fvalid = 0; /* (file.c: fortran_cont) */
    c->rgen = strided.gens.rgen;
    c->egen = strided.gens.egen;
    c->file = f;
    c->block = b;
    c->room = (uint64_t)room;
    c->fh = f->fh;
}

/* What the strided cursor took (t bytes in c->calls records, at dst already):
 * the block's and the file's sizes, the statistics, and the memo's place. */
static void strided_settle(unblock_mpiio_cur_t *c, uint64_t t)
{
    mio_file_t *f = c->file;
    mio_pblock_t *b = c->block;
    uint64_t k = c->calls, rec = 8 + c->plen;
    b->used += k * rec;
    b->nrec += k;
    b->last = b->used - rec;
    b->last_end = c->in - (uint32_t)c->stride + (uint32_t)c->plen;
    b->bytes += t;
    f->s1_bytes += t;
    mio_note_written(f, c->end - c->stride + (int64_t)c->plen, (size_t)t);
    unblock_counter_bump_by(&mio_stats.writes, k);
    unblock_counter_bump_by(&mio_stats.bytes, t);
    unblock_counter_bump_by(&mio_stats.strided_writes, k);
    strided.seen_pos = c->end - c->stride;
    strided.next = c->end;
    c->calls = 0;
    c->base = c->dst;
    __atomic_store_n(&c->taken, 0, __ATOMIC_RELEASE);
}

/* 1 if taken: n bytes at off, a record of their own in the memo's block. */
static int strided_take(MPI_File fh, MPI_Offset off, const void *buf, int count,
                        MPI_Datatype type)
{
    /* The cursor's bytes lie in the block's last record: laid in first (its
     * record would no longer be the last); its place in the buffer moves.  A
     * strided cursor's records are whole: settled, the memo goes on from them. */
    if (unblock_mpiio_cur.stride != 0)
        mio_cur_drop();
    else if (unblock_mpiio_cur.taken)
        return 0;
    if (strided.fh != fh || off != strided.next || type != strided.type || fh == NULL)
        return 0;
    int64_t n = (int64_t)count * strided.tsize;
    mio_file_t *f = strided.f;
    mio_pblock_t *b = strided.b;
    if (n != strided.n || off + n > strided.limit || f->s1_gen != strided.s1_gen ||
        !gens_hold(&strided.gens) || f->err || !mio_takes(f) ||
        __atomic_load_n(&f->ship, __ATOMIC_RELAXED) ||
        b->used + 8 + (size_t)n > b->cap || b->bytes + (size_t)n >= (size_t)f->block ||
        f->s1_bytes + f->queued + (size_t)n > (size_t)unblock_opt.mpiio_cache / 2)
        return 0;
    if (unblock_mpiio_cur.room)
        mio_cur_drop();
    mio_record_add(f, b, (uint32_t)(off - b->block * f->block), buf, (uint32_t)n);
    mio_note_written(f, off + n, (size_t)n);
    unblock_counter_bump_by(&mio_stats.writes, 1); /* (one writer: no locked add) */
    unblock_counter_bump_by(&mio_stats.bytes, (uint64_t)n);
    unblock_counter_bump_by(&mio_stats.strided_writes, 1);
    strided.seen_pos = off;
    strided.next = off + strided.stride;
    strided_cur_fill(f, b);
    return 1;
}

/* After a write_at taken by the general path (n bytes at file byte pos, of a
 * contiguous type of tsize bytes): the memo for the next one, once two writes
 * in a row continue each other (writes that never do, such as interleaved
 * cells, pay no lock here), and the strided memo above. */
void mio_cont_fill(mio_file_t *f, MPI_Datatype type, int64_t tsize, int64_t pos, int64_t n)
{
    if (__atomic_load_n(&mio_ending, __ATOMIC_ACQUIRE) || f->sib) /* (no memo: nothing is */
        return; /* taken; or each write first writes what other handles of the file hold) */
    /* (the strided memo is one for the process: only where calls never overlap) */
    int level = unblock_conv_program_level_get();
    if (level >= 0 && level < MPI_THREAD_MULTIPLE) {
        if (f->view.plain && tsize > 0 && tsize <= INT32_MAX && n > 0 &&
            !__atomic_load_n(&unblock_trace_on, __ATOMIC_RELAXED))
            strided_fill(f, type, tsize, pos, n);
        else
            strided.fh = NULL;
    }
    cont.fh = NULL;
    int run = (cont.seen_fh == f->fh && cont.seen_end == pos) ||
              (cur_seen_fh == f->fh && cur_seen_end == pos);
    cont.seen_fh = f->fh;
    cont.seen_end = pos + n;
    if (!run || !f->view.plain || tsize <= 0 || tsize > INT32_MAX || n <= 0 ||
        __atomic_load_n(&unblock_trace_on, __ATOMIC_RELAXED))
        return;
    int64_t end = pos + n, block = (end - 1) / f->block;
    if (pos / f->block != block)
        return;
    uint32_t rgen = __atomic_load_n(&unblock_wb_resv_shrinks, __ATOMIC_ACQUIRE);
    int64_t limit = take_limit(f, block, end - 1);
    pthread_mutex_lock(&mio_lock);
    cont.b = mio_ending ? NULL : mio_pblock_of(f, block);
    cont.s1_gen = f->s1_gen;
    if (mio_ending)
        strided.fh = NULL;
    pthread_mutex_unlock(&mio_lock);
    if (cont.b == NULL) /* (a full block went to its owner at once; the process ends) */
        return;
    if (level >= 0 && level < MPI_THREAD_MULTIPLE) { /* (calls never overlap: the cursor) */
        cur_fill(f, cont.b, type, tsize, end, limit, rgen);
        return;
    }
    cont.f = f;
    cont.type = type;
    cont.tsize = tsize;
    cont.end = end;
    cont.limit = limit;
    cont.gens = gens_now(rgen);
    cont.fh = f->fh;
}

/* MPI_File_write_at continuing the cursor's or the memo's write: 1 if taken
 * (*rc its result).  Called by the C wrapper (unblock_mpiio_cont) where its
 * cursor did not take the write, and by mio_hook.  No division: count times the
 * type's size cannot overflow (an int times less than 2^31). */
int mio_cont_take(MPI_File fh, MPI_Offset off, const void *buf, int count, MPI_Datatype type,
                  MPI_Status *st, int *rc)
{
    int64_t n;
    if (unblock_mpiio_cur_take(fh, off, buf, count, type)) {
        n = (int64_t)count * (int64_t)unblock_mpiio_cur.tsize;
    } else if (strided_take(fh, off, buf, count, type)) {
        n = strided.n;
    } else {
        if (cont.fh != fh || off != cont.end || type != cont.type || fh == NULL)
            return 0;
        n = (int64_t)count * cont.tsize;
        if (count <= 0 || n > cont.limit - off || !gens_hold(&cont.gens))
            return 0;
        mio_file_t *f = cont.f;
        pthread_mutex_lock(&mio_lock);
        int ok = f->s1_gen == cont.s1_gen && f->err == 0 && mio_takes(f) && !mio_ending &&
                 mio_take_cont(f, cont.b, off, buf, n);
        pthread_mutex_unlock(&mio_lock);
        if (!ok) {
            cont.fh = NULL;
            return 0;
        }
        unblock_counter_add(&mio_stats.writes, 1);
        unblock_counter_add(&mio_stats.bytes, (uint64_t)n);
        cont.end = cont.seen_end = off + n;
    }
    if (st != MPI_STATUS_IGNORE) {
        mio_mpi.set_elements(st, mio_mpi.byte, (MPI_Count)n);
        mio_mpi.set_cancelled(st, 0);
    }
    *rc = MPI_SUCCESS;
    return 1;
}

/* MPI_File_read_at (`at`) or MPI_File_read (C arguments a, the int forms): a
 * rank reads its own writes
 * from its buffers where all of them are still here (none sent to an owner since
 * the last flush): MPI's read of the file, then the bytes this rank holds in the
 * range laid over it (mio_overlay; a hole up to them, or up to the end of what
 * this rank wrote past the range, reads as zeros, and the count reaches there,
 * as the file would once written).  Under mio_lock, so
 * that no block is written between the two.  Through the byte view and a
 * contiguous type only; 0 otherwise (the caller flushes this rank's pieces and
 * MPI reads).  A flush here wrote every block holding this rank's pieces, in
 * pieces, and the others' around them later: HDF5 reading back what a rank
 * wrote made 16,386 block writes on one rank (a block's records are found
 * through an index by offset, mio_overlay). */
int mio_read_served(mio_file_t *f, int at, void **a, void (*real)(void), int *rc)
{
    typedef int (*read_at_t)(MPI_File, MPI_Offset, void *, int, MPI_Datatype, MPI_Status *);
    typedef int (*read_t)(MPI_File, void *, int, MPI_Datatype, MPI_Status *);
    typedef int (*elements_t)(const MPI_Status *, MPI_Datatype, MPI_Count *);
    static elements_t elements;
    static read_at_t read_at;
    MPI_Offset off = at ? *(MPI_Offset *)a[1] : -1;
    char *buf = *(char **)a[at + 1];
    int count = *(int *)a[at + 2];
    MPI_Datatype type = *(MPI_Datatype *)a[at + 3];
    MPI_Status *stp = *(MPI_Status **)a[at + 4];
    unblock_dt_t d;
    f->read_back = 1; /* (its stage 1 is never shipped idle: thread.c, note_idle) */
    if (f->list == NULL && f->nsent == 0 && __atomic_load_n(&f->images, __ATOMIC_ACQUIRE) == NULL &&
        !(mio_news_owners(f) && !mio_seen(f))) {
        /* Nothing of the file held here (the hook put the cursor's bytes in
         * stage 1; the program's thread alone changes it and nsent; no image,
         * which would hold this rank's pieces of its own blocks, shipped from
         * stage 1 by this thread), no news
         * of other ranks' writes to see: MPI reads it as the program asked,
         * as a flush that found nothing would have it (a handle opened
         * MPI_MODE_RDWR, as HDF5 opens one, read before this rank wrote: 664
         * instructions of unblock an 8-byte read, mpiioreads_rdwr, now 400). */
        *rc = at ? ((read_at_t)real)(f->fh, off, buf, count, type, stp)
                 : ((read_t)real)(f->fh, buf, count, type, stp);
        return 1;
    }
    if (!f->view.plain || f->follow <= 0 || count <= 0)
        return 0;
    /* (MPI_File_read: at the individual pointer, which MPI's read moves on) */
    if (!at && mio_mpi.get_position(f->fh, &off) != MPI_SUCCESS)
        return 0;
    if (off < 0 || !unblock_dt_lookup(type, &d))
        return 0;
    int ok = d.contiguous && d.flat == NULL && d.lb == 0 && d.size > 0 &&
             (int64_t)count <= (INT64_MAX - off) / (int64_t)d.size;
    if (d.flat)
        unblock_flat_release(d.flat);
    if (elements == NULL)
        elements = (elements_t)UNBLOCK_PMPI(MPI_Get_elements_x);
    if (read_at == NULL)
        read_at = (read_at_t)UNBLOCK_PMPI(MPI_File_read_at);
    if (!ok || elements == NULL || read_at == NULL)
        return 0;
    int64_t n = (int64_t)count * (int64_t)d.size;
    /* A file whose news leaves records at their owners, where other ranks may
     * have told of writes since it was last seen: the owners write what they
     * hold first (once: until news is heard again, reads are served as
     * before; this rank's own records stay, laid over MPI's read). */
    if (mio_news_owners(f) && !mio_seen(f))
        mio_see_others(f);
    pthread_mutex_lock(&mio_lock);
    /* (a block of many records is read through an index of them, built again
     * after writes to it only a few times: else a flush costs less; this
     * rank's pieces in the images of its own blocks, shipped there when its
     * stage 1 was idle or full, are not laid over: the flush writes them.  A
     * file of one rank, idle between steps, read its writes back from MPI
     * without them: 16 of 1,228 cells wrong in mpiio.c's steps at 1 rank) */
    int sent = !mio_overlay_cheap(f, off, off + n) || f->nsent != 0 ||
               mio_write_images_of(f, f->rank, 0) != 0;
    if (sent) {
        pthread_mutex_unlock(&mio_lock);
        return 0;
    }
    /* (the file's end as this rank sees it: its buffered writes past the end on
     * disk count, those outside the range too) */
    int64_t end = mio_overlay(f, off, off + n, NULL);
    if (end < 0) { /* (no memory for an index) */
        pthread_mutex_unlock(&mio_lock);
        return 0;
    }
    int64_t seen = f->pending_hi < off + n ? f->pending_hi : off + n;
    if (seen > end)
        end = seen;
    MPI_Status st;
    *rc = at ? ((read_at_t)real)(f->fh, off, buf, count, type, &st)
             : ((read_t)real)(f->fh, buf, count, type, &st);
    MPI_Count got = 0;
    if (*rc == MPI_SUCCESS && end > off) {
        elements(&st, mio_mpi.byte, &got);
        if (end - off > got) {
            memset(buf + got, 0, (size_t)(end - off - got));
            got = end - off;
            /* (MPI moved the individual pointer by what it read: ROMIO stops
             * at the end of the file on disk) */
            if (!at)
                mio_mpi.seek(f->fh, off + got, MPI_SEEK_SET);
        }
        if (mio_overlay(f, off, off + n, buf) < 0) { /* (no memory: flushed, read again) */
            pthread_mutex_unlock(&mio_lock);
            mio_flush_local(f, &mio_stats.flush_local);
            *rc = read_at(f->fh, off, buf, count, type, stp);
            return 1;
        }
        mio_mpi.set_elements(&st, mio_mpi.byte, got);
        unblock_counter_add(&mio_stats.reads_served, 1);
    }
    pthread_mutex_unlock(&mio_lock);
    if (stp != MPI_STATUS_IGNORE)
        *stp = st;
    return 1;
}

/* MPI_File_get_size (`size` its result): a rank must see its own writes, so the
 * size counts the end of this rank's buffered ones; other ranks' are theirs to
 * show after a sync, as without unblock.  No flush: HDF5 asks at every flush and
 * close on rank 0 alone, and a flush there wrote every block twice (rank 0's
 * pieces, then the others' around them).  A file whose news leaves records at
 * owners (mio_news_owners) also counts what other ranks told of: the end of
 * the owners' images (held), asked without writing them. */
int64_t mio_size_held(mio_file_t *f)
{
    if (!mio_news_owners(f) || mio_seen(f))
        return 0;
    int64_t held = mio_owners_size(f);
    if (held < 0) { /* (no memory for the messages: every rank's written) */
        mio_flush_local(f, &mio_stats.flush_local);
        held = 0;
    }
    return held;
}

void mio_answer_size(mio_file_t *f, MPI_Offset *size, int64_t held)
{
    int64_t hi = f->pending_hi > held ? f->pending_hi : held;
    if (hi > 0)
        unblock_counter_add(&mio_stats.sizes_answered, 1);
    if (hi > *size)
        *size = hi;
}

