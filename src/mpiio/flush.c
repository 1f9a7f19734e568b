/* flush.c — flushes of MPI-IO write-behind (docs/mpiio.md, "MPI's consistency
 * rules"): a rank's local flush in its three forms (its pieces written; painted
 * at their owners, for news; written with every rank's the owners hold, for a
 * look), the collective flush (the ranks' agreement: whether each may write
 * its own, and whether the file is quiet; the owners' round is owner.c's),
 * and news in both directions: what this rank
 * holds of files that are news goes out before an MPI call that may tell
 * another process, and a call that may tell this one ends what it knew was in
 * the file (mio_seen). */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* News (mpi_wrap.h: UNBLOCK_MPIIO_NEWS) in both directions.  mio_out: writes
 * of files that are news were taken since the last news flush (mio_take); the
 * next call that may tell another process flushes them.  heard: calls that may
 * tell this process of another's writes, counted while `armed` (some file was
 * seen, mio_seen, since the last one).  The fast paths' flag is set while
 * either is. */
int mio_out;
static uint32_t heard;
static int armed;
/* Every call that may tell this process of another's writes, armed or not,
 * counted after the flush made before it (stage.c: an owner asked ahead about
 * a block holds until one; what the call itself hears comes after that
 * flush). */
static uint32_t heard_any;
static void heard_after(void)
{
    __atomic_add_fetch(&heard_any, 1, __ATOMIC_SEQ_CST);
}

uint32_t mio_heard_any(void)
{
    return __atomic_load_n(&heard_any, __ATOMIC_SEQ_CST);
}

static void news_flag(void)
{
    __atomic_store_n(&unblock_mpiio_news, 0, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&mio_out, __ATOMIC_SEQ_CST) || __atomic_load_n(&armed, __ATOMIC_SEQ_CST))
        __atomic_store_n(&unblock_mpiio_news, 1, __ATOMIC_RELAXED);
}

static void news_heard(void)
{
    if (__atomic_load_n(&armed, __ATOMIC_RELAXED)) {
        __atomic_store_n(&armed, 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&heard, 1, __ATOMIC_SEQ_CST);
    }
}

int mio_seen(const mio_file_t *f)
{
    /* (UNBLOCK_COMM=0: MPI's calls pass by without a look, none is heard; a
     * quiet file: no rank holds a byte of it, every write is MPI's own) */
    return f->quiet || (f->seen && unblock_opt.comm &&
                        f->seen_heard == __atomic_load_n(&heard, __ATOMIC_SEQ_CST));
}

/* f seen as of news heard count h (read before the owners were asked). */
static void seen_at(mio_file_t *f, uint32_t h)
{
    f->seen = 1;
    f->seen_heard = h;
    __atomic_store_n(&armed, 1, __ATOMIC_SEQ_CST);
    news_flag();
}

void mio_see_others(mio_file_t *f)
{
    mio_flush_how(f, NULL, MIO_FL_OTHERS);
}

/* This rank's buffered writes of f reach the file (written by it or by their
 * owners, who answered), or as `how` says (mpiio.h: MIO_FL_*). */
void mio_flush_how(mio_file_t *f, unblock_counter_t *why, int how)
{
    int others = how == MIO_FL_OTHERS; /* (SEE, this rank's stage 1 kept) */
    if (others)
        how = MIO_FL_SEE;
    if (!mio_news_owners(f) || (how == MIO_FL_SEE && mio_seen(f))) {
        if (others)
            return;
        how = MIO_FL_OWN;
    }
    uint32_t h = __atomic_load_n(&heard, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&mio_lock);
    /* (images holding only other ranks' pieces are not this rank's writes; records
     * still queued for an owner need no look of their own: their owner's sent[]
     * mark stays until a FLUSH or COLL goes after them, and messages arrive in
     * order.  Counting them kept every read of a rank a flush while MPICH held an
     * isend open long after its owner had the records: 330 flushes, and 16,000
     * block writes, in HDF5's read-back) */
    int any = f->list != NULL || how == MIO_FL_SEE ||
              (how == MIO_FL_OWN && mio_write_images_of(f, f->rank, 0)) ||
              (how == MIO_FL_RECEIPT && mio_write_kept(f, 0));
    if (how == MIO_FL_OWN)
        any = any || f->nsent != 0;
    else if (f->two_stage && f->sent)
        for (int r = 0; r < f->size && !any; r++)
            any = f->sent[r] == 1;
    if (!any) {
        if (how == MIO_FL_OWN)
            f->pending_hi = 0;
        pthread_mutex_unlock(&mio_lock);
        return;
    }
    if (why)
        unblock_counter_add(why, 1);
    if (!others)
        mio_flush_stage1(f, 0);
    if (how == MIO_FL_OWN)
        mio_write_images_of(f, f->rank, 1);
    else if (how == MIO_FL_SEE) /* (this rank's blocks: any rank's pieces of them) */
        mio_write_images(f, 0);
    else if (how == MIO_FL_RECEIPT) /* (its kept blocks: their owners ask nobody) */
        mio_write_kept(f, 1);
    pthread_mutex_unlock(&mio_lock);
    if (f->two_stage)
        mio_flush_owners(f, how);
    if (how == MIO_FL_SEE) {
        unblock_counter_add(&mio_stats.flush_see, 1);
        seen_at(f, h);
    }
    if (how != MIO_FL_RECEIPT && !others)
        f->pending_hi = 0; /* (only this thread takes writes) */
}

void mio_flush_local(mio_file_t *f, unblock_counter_t *why)
{
    mio_flush_how(f, why, MIO_FL_SEE);
}

/* The files pick chooses, one at a time, the lock let go while each is flushed
 * and the file held: its close waits (open.c: mio_let_go).  Where the list
 * changed meanwhile, from its start again, past the files this pass flushed
 * (marked with its number). */
int mio_flush_picked(mio_file_t *f, int (*pick)(const mio_file_t *g, const mio_file_t *f),
                     unblock_counter_t *why, int how)
{
    static unsigned passes;
    int picked = 0;
    pthread_mutex_lock(&mio_lock);
    unsigned pass = ++passes;
    mio_file_t *g = mio_files;
    while (g) {
        if (g->pick_pass == pass || !pick(g, f)) {
            g = g->next;
            continue;
        }
        g->pick_pass = pass;
        picked++;
        __atomic_add_fetch(&g->held, 1, __ATOMIC_RELAXED);
        uint32_t gen = mio_files_gen;
        pthread_mutex_unlock(&mio_lock);
        mio_flush_how(g, why, how);
        pthread_mutex_lock(&mio_lock);
        mio_file_t *next = gen == mio_files_gen ? g->next : mio_files;
        __atomic_sub_fetch(&g->held, 1, __ATOMIC_RELEASE);
        g = next;
    }
    pthread_mutex_unlock(&mio_lock);
    return picked;
}

/* News (mpi_wrap.h: UNBLOCK_MPIIO_NEWS): the files of one rank in a job of
 * several that hold writes.  Without unblock those writes are in the file when
 * the call returns, and another rank may read them after a message alone
 * (PnetCDF 1.15's intra-node aggregation in independent mode: each rank writes
 * through its own MPI_COMM_SELF handle, the node's aggregator reads; 4 of its
 * tests read back wrong before).  MPI promises that only after MPI_File_sync,
 * a barrier and MPI_File_sync; a file of several ranks is held to that (its
 * writes may wait at their block's owner, docs/mpiio.md) where it was opened
 * MPI_MODE_WRONLY; one opened MPI_MODE_RDWR is news too (UNBLOCK_MPIIO_VISIBLE=
 * auto: HDF5 writes fill values from rank 0, then a barrier, then the data of
 * other ranks; its tests read other ranks' writes after a barrier): then the
 * call waits for the owners' answers. */
static int news_file(const mio_file_t *g, const mio_file_t *f)
{
    (void)f; /* (what a file holds: mio_flush_local looks, under the lock) */
    return g->news;
}

void mio_news_flush(void)
{
    /* (cleared first: a write taken from now on sets it again, mio_take) */
    __atomic_store_n(&mio_out, 0, __ATOMIC_SEQ_CST);
    news_flag();
    mio_flush_picked(NULL, news_file, &mio_stats.flush_news, MIO_FL_RECEIPT);
}

/* The hook's UNBLOCK_MPIIO_NEWS: MPI function `id` is about to run while
 * unblock_mpiio_news is set. */
void mio_news_call(unsigned id)
{
    unsigned k = unblock_mpi_fn_news[id];
    if (k & UNBLOCK_NEWS_HEARS)
        news_heard();
    if ((k & UNBLOCK_NEWS_TELLS) && __atomic_load_n(&mio_out, __ATOMIC_RELAXED))
        mio_news_flush();
    else
        news_flag();
    if (k & UNBLOCK_NEWS_HEARS)
        heard_after();
}

/* Whether call `op` on f (NULL: a file not followed) may tell another process of
 * this one's writes: a call of the file's ranks together, where they are more
 * than one. */
static int news_call(int op, const mio_file_t *f)
{
    switch (op) {
    case UNBLOCK_MPIIO_COLLECTIVE:
    case UNBLOCK_MPIIO_SYNC:
    case UNBLOCK_MPIIO_SET_VIEW:
    case UNBLOCK_MPIIO_SET_ATOMICITY:
    case UNBLOCK_MPIIO_CLOSE:
        return f == NULL || f->size > 1;
    default:
        return 0;
    }
}

/* The news of both: before call op on f, and before an open on comm. */
static int news_other(const mio_file_t *g, const mio_file_t *f)
{
    return g->news && g != f;
}
static void news_at(int op, mio_file_t *f)
{
    news_heard();
    if (!__atomic_load_n(&mio_out, __ATOMIC_RELAXED)) {
        news_flag();
        return;
    }
    if (f && f->news && f->two_stage && op != UNBLOCK_MPIIO_SET_VIEW) {
        /* A call that flushes f on every rank next (mio_flush_all_ranks): only
         * the other files now (f's records at owners first made the
         * collective flush an owners' round where each rank could have
         * written its few runs itself, flush_direct).  mio_out stays: f
         * may still hold writes if the call ends early (an error kept). */
        news_flag();
        mio_flush_picked(f, news_other, &mio_stats.flush_news, MIO_FL_RECEIPT);
        return;
    }
    mio_news_flush();
}
void mio_news_at(int op, mio_file_t *f)
{
    if (!unblock_unlikely(__atomic_load_n(&unblock_mpiio_news, __ATOMIC_RELAXED)) ||
        !news_call(op, f))
        return;
    news_at(op, f);
    heard_after();
}
void mio_news_at_open(MPI_Comm comm)
{
    if (unblock_unlikely(__atomic_load_n(&unblock_mpiio_news, __ATOMIC_RELAXED))) {
        int n = 1; /* (news held: a file followed, MPI's functions resolved) */
        mio_mpi.comm_size(comm, &n);
        if (n > 1) {
            news_heard();
            if (__atomic_load_n(&mio_out, __ATOMIC_RELAXED))
                mio_news_flush();
            else
                news_flag();
            heard_after();
        }
    }
}

/* The last file that is news closed, or a fork child: nothing to tell or hear. */
void mio_news_none(void)
{
    __atomic_store_n(&mio_out, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&armed, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&unblock_mpiio_news, 0, __ATOMIC_RELAXED);
}

/* A few runs a rank writes itself at a collective flush rather than the owners'
 * round (its messages, each waiting for an I/O thread's next look, cost 200-270
 * µs a close of two ranks holding 1 KiB each: 2-3.4x plain's open-write-close);
 * more would be as many small writes to another rank's blocks, which is what
 * owners are for. */
#define DIRECT_RUNS 64

/* A file's writes stop being taken after UNBLOCK_MPIIO_QUIET collective
 * flushes in a row at which no rank had taken one since the last (f->quiet;
 * the smallest any rank was given, carried by the reduction, so that all
 * decide alike; 0 on every rank: never); while quiet, every MIO_QUIET_CHECK-th
 * collective flush asks how many passed: where some rank passed at least as
 * many as the collective calls between (one a call), they are taken again.
 * A write now and then (PnetCDF's header from rank 0 between the collective
 * calls that move its variables) is not worth the reductions of the 4
 * collective calls it would take to go quiet again: bench/ncpattern 1.17-1.21x
 * plain when any write brought them back. */
#define MIO_QUIET_CHECK 16

/* Collective: where no rank sent pieces since the last flush, none is owed an
 * error, and each holds few runs of others' blocks, every rank writes its own
 * (no owners' round); 1 if so, 0 (the owners' round is needed: nothing done).
 * Not under mio_lock. */
static int flush_direct(mio_file_t *f)
{
    pthread_mutex_lock(&mio_lock);
    int64_t mine = 0, images = 0;
    for (int r = 0; r < f->size && mine == 0; r++)
        if (r != f->rank && (f->sent[r] || (f->owed && f->owed[r])))
            mine = INT64_MAX;
    if (mine == 0 && mio_queued_for(f))
        mine = INT64_MAX;
    /* (a file whose news left records at their owners: the images of a rank
     * may hold older bytes of blocks other ranks hold newer ones of in stage
     * 1, never the reverse, since a rank's news sends its stage 1 and writes
     * its kept blocks: every rank's images are written first, then stage 1) */
    images = mio_news_owners(f) && f->images;
    /* (a whole block whose owner was asked ahead is written by this rank as
     * one run, after every rank's images: stage.c, ask_ahead) */
    for (mio_pblock_t *b = f->list; b && mine != INT64_MAX; b = b->next)
        if (b->block % f->size != f->rank)
            mine += mio_ask_of(f, b->block) >= 0 ? 1 : (int64_t)b->nrec;
    int64_t took = f->took;
    f->took = 0;
    pthread_mutex_unlock(&mio_lock);
    /* (the option's 0, never, counted as the largest: the smallest wins) */
    int64_t after = unblock_opt.mpiio_quiet ? (int64_t)unblock_opt.mpiio_quiet : INT64_MAX;
    /* (a nonblocking reduction, waited for without polling inside MPI: ranks
     * that reach the flush first must not take the CPU of those still writing,
     * wait_requests) */
    int64_t in[4] = { mine, images, took, -after }, all[4] = { INT64_MAX, 1, 1, -1 };
    MPI_Request req;
    if (mio_mpi.iallreduce(in, all, 4, mio_mpi.int64, mio_mpi.max, f->comm, &req) != MPI_SUCCESS)
        return 0;
    mio_wait_requests(f, 1, &req);
    /* No rank took a write of f since the last collective flush, which wrote
     * every one: none holds a byte.  After the agreed count of such in a row
     * (every rank counts the same answers), f is quiet.  A write another
     * thread of the program took since this rank's count is written below or
     * by the owners' round, and none is taken from now on. */
    f->quiet_run = all[2] ? 0 : f->quiet_run + 1;
    if (f->quiet_run >= -all[3]) {
        pthread_mutex_lock(&mio_lock);
        f->quiet = 1;
        f->quiet_calls = 0;
        f->passed = 0;
        f->s1_gen++; /* (the continuation path's memos take no more; the
                        wrapper's cursor was dropped at this call's start) */
        pthread_mutex_unlock(&mio_lock);
    }
    if (all[0] > DIRECT_RUNS)
        return 0;
    if (all[1]) { /* (every rank's images in the file before any stage 1) */
        pthread_mutex_lock(&mio_lock);
        if (unblock_unlikely(mio_test_write_ms) && f->images) {
            /* (the test hook: images written late, so that a stage 1 written
             * before the second reduction would be overwritten; waw-close) */
            pthread_mutex_unlock(&mio_lock);
            mio_test_pause();
            pthread_mutex_lock(&mio_lock);
        }
        mio_write_images(f, 0);
        pthread_mutex_unlock(&mio_lock);
        if (mio_mpi.iallreduce(in, all, 2, mio_mpi.int64, mio_mpi.max, f->comm, &req) ==
            MPI_SUCCESS) /* (it cannot fail where the first did not) */
            mio_wait_requests(f, 1, &req);
    }
    pthread_mutex_lock(&mio_lock);
    mio_write_held(f);
    pthread_mutex_unlock(&mio_lock);
    unblock_counter_add(&mio_stats.flushes_direct, 1);
    return 1;
}

/* A collective flush of a quiet file (f->quiet): nothing to write; every
 * MIO_QUIET_CHECK-th asks the ranks how many writes passed (not under mio_lock). */
static void flush_quiet(mio_file_t *f)
{
    unblock_counter_add(&mio_stats.flushes_quiet, 1);
    if (unblock_unlikely(f->took)) { /* (cannot be: a write taken as another thread
                                        made f quiet; written by this rank) */
        pthread_mutex_lock(&mio_lock);
        f->took = 0;
        mio_write_held(f);
        pthread_mutex_unlock(&mio_lock);
    }
    if (++f->quiet_calls % MIO_QUIET_CHECK != 0)
        return;
    int64_t in = f->passed, all = INT64_MAX; /* (a reduction that fails: taken again) */
    MPI_Request req;
    if (mio_mpi.iallreduce(&in, &all, 1, mio_mpi.int64, mio_mpi.max, f->comm, &req) ==
        MPI_SUCCESS)
        mio_wait_requests(f, 1, &req);
    f->passed = 0;
    if (all >= MIO_QUIET_CHECK) {
        pthread_mutex_lock(&mio_lock);
        f->quiet = 0;
        f->quiet_run = 0;
        f->took = 0;
        pthread_mutex_unlock(&mio_lock);
    }
}

/* Every rank's buffered writes of f are in the file (collective over f's ranks:
 * owner.c's collective flush, which is also a barrier). */
void mio_flush_all_ranks(mio_file_t *f, unblock_counter_t *why)
{
    if (!f->two_stage) {
        mio_flush_local(f, why);
        return;
    }
    unblock_counter_add(why, 1);
    uint32_t h = __atomic_load_n(&heard, __ATOMIC_SEQ_CST);
    if (f->quiet) /* (no rank holds a byte of it) */
        flush_quiet(f);
    else if (!flush_direct(f))
        mio_flush_collective(f);
    /* (quiet now, or no longer: after the round; a file of one rank has no pin) */
    if (!f->solo && f->quiet == f->mpi_pinned)
        mio_thread_mpi(f, !f->quiet);
    f->pending_hi = 0;
    if (mio_news_owners(f)) /* (every rank's writes are in the file) */
        seen_at(f, h);
}

int mio_pick_same_file(const mio_file_t *g, const mio_file_t *key)
{
    return key == NULL || mio_same_file(g, key);
}

int mio_file_followed(const mio_file_t *key)
{
    for (const mio_file_t *g = mio_files; g; g = g->next)
        if (mio_same_file(g, key))
            return 1;
    return 0;
}

/* Whether the file dev, ino is followed (no flush: this thread may not). */
static int outside_follows(const mio_file_t *key)
{
    pthread_mutex_lock(&mio_lock);
    int found = mio_file_followed(key);
    pthread_mutex_unlock(&mio_lock);
    return found ? UNBLOCK_LOOK_FOLLOWED : UNBLOCK_LOOK_GONE;
}

/* A look from outside MPI-IO (core.h: unblock_outside_look): the program's own
 * open or stat of a file followed here (all 0: the file dev, ino), or a process
 * it starts (all 1: every file).  Without unblock the bytes written through
 * MPI-IO are in the file when the write returns (ROMIO and OMPIO write in the
 * call): this rank's go there first, a local flush.  Before, a rank's pread of
 * its own 1000 cells through a descriptor it opened after writing them read
 * none, and rank 0's system("wc -c") counted 0 bytes of 16,000.  Only where
 * this thread may call MPI now: a thread of the program's where it asked for
 * MPI_THREAD_MULTIPLE and got it; below, the thread that called MPI_Init, at
 * SINGLE or FUNNELED (at SERIALIZED another thread may be inside an MPI call
 * that changes stage 1 without a lock, own.c).  Other ranks' writes are theirs to
 * make visible (MPI_File_sync), as without unblock. */
int mio_outside_look(int all, uint64_t dev, uint64_t ino)
{
    /* (nor from a signal handler that came in the middle of one of fileio's
     * calls, whose descriptor lock a reservation here would wait for) */
    if (unblock_tls.mpi_depth > 0 || unblock_tls.runtime || !unblock_tls.program || mio_ending ||
        unblock_tls.wb_locks > 0 || unblock_tls.in_signal)
        return 0;
    /* (the level the program may call MPI at: what it asked for, where MPI
     * gave that much; below MPI_THREAD_MULTIPLE the wrapper's cursor serves
     * the thread that calls MPI, own.c, and it is dropped into stage 1 here) */
    int level = unblock_g.mpi_thread_provided, asked = unblock_conv_program_level_get();
    if (asked >= 0 && asked < level)
        level = asked;
    mio_file_t key = { .fd = 0, .dev = (dev_t)dev, .ino = (ino_t)ino }; /* (what pick reads) */
    if (level == MPI_THREAD_SERIALIZED ||
        (level < MPI_THREAD_MULTIPLE && (pid_t)syscall(SYS_gettid) != unblock_g.pid))
        return all ? 0 : outside_follows(&key);
    uint64_t before = unblock_counter_get(&mio_stats.flush_outside);
    unblock_tls.mpi_depth++; /* (its MPI and POSIX calls are MPI-IO's own) */
    mio_cur_drop();
    int picked = mio_flush_picked(all ? NULL : &key, mio_pick_same_file, &mio_stats.flush_outside,
                                  MIO_FL_OWN);
    unblock_tls.mpi_depth--;
    return (unblock_counter_get(&mio_stats.flush_outside) != before ? UNBLOCK_LOOK_WROTE : 0) |
           (all ? 0 : picked ? UNBLOCK_LOOK_FOLLOWED : UNBLOCK_LOOK_GONE);
}
