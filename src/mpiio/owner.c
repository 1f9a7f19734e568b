/* owner.c — stage 2 of MPI-IO write-behind: block owners and the I/O thread
 * (docs/mpiio.md).
 *
 * Block b of a file belongs to rank b mod size of the file's communicator.  A
 * rank's stage-1 records of a block it does not own are queued for the I/O
 * thread, which sends them to the owner on the file's private communicator (the
 * duplicate made at open) and receives the records of the blocks this rank owns,
 * painting them into their images (stage.c).  A flush sends a FLUSH message to
 * every owner this rank sent records to since its last flush; the owner (its
 * I/O thread) writes its images and answers with the MPI error class of any
 * write that failed, or 0.  Messages from one rank arrive in the order they were
 * sent, so the FLUSH comes after the records it covers.
 *
 * A collective flush (sync, close, collective calls, MPI_Finalize: every rank of
 * the file is in it) would write each block in pieces that way, since the first
 * FLUSH an owner saw would write what had come so far.  There, every rank sends
 * its records and then a COLL message to every other rank; an owner writes its
 * images once it has the COLL of every other rank and its own program is in the
 * flush too (so every record of the file has come), and then answers each rank.
 * The answers are also the barrier: when a rank has them all, every byte buffered
 * anywhere before the call is in the file.
 *
 * The thread itself (its life, its loop, its sleeps, its pin of MPI's thread
 * safety) is thread.c's; its rounds here are mio_owner_round and
 * mio_coll_ready. */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "core/log.h"
#include "core/options.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T_OWNER 0x5b10
#define T_ACK 0x5b11
#define T_SIZE 0x5b12
/* What a message to an owner says: records of a block; write the blocks holding
 * the sender's records and answer (a local flush); every rank's marker of a
 * collective flush; answer once the sender's records are painted, writing
 * nothing (news, mio_flush_how: MIO_FL_RECEIPT); write every image and
 * answer (MIO_FL_SEE); answer where the highest byte held ends
 * (mio_owners_size); write what is held of one block and answer (the sender
 * writes the whole block itself next: asks.c). */
enum { K_PIECES = 1, K_FLUSH = 2, K_COLL = 3, K_NEWS = 4, K_WRITE = 5, K_SIZE = 6, K_BLOCK = 7 };

/* Every message to an owner ends with this header (a flush's and the
 * collective's are the header alone): a block's records are sent from its
 * stage-1 buffer as they lie, the header written after them, without a copy
 * where the buffer has the room. */
typedef struct {
    int32_t kind, pieces;
    int64_t block;
} msg_hdr_t;

typedef struct out {
    mio_file_t *f;
    int dest, started, pending; /* pending: req is live */
    char *buf;
    size_t len, data;
    size_t cap; /* buf is a stage-1 buffer of cap bytes (mio_buf_put); 0: malloc's */
    MPI_Request req;
    struct out *next;
} out_t;

static out_t *outq;
static pthread_cond_t drained, acked;

void mio_owner_init(const pthread_condattr_t *monotonic)
{
    pthread_cond_init(&acked, monotonic);
    pthread_cond_init(&drained, NULL);
}

int mio_queue_busy(void)
{
    return outq != NULL;
}

void mio_owner_forked(void)
{
    outq = NULL;
}
int mio_queued_for(const mio_file_t *f)
{
    for (const out_t *o = outq; o; o = o->next)
        if (o->f == f)
            return 1;
    return 0;
}

static void enqueue(out_t *o)
{
    out_t **p = &outq;
    while (*p)
        p = &(*p)->next;
    *p = o;
    o->f->queued += o->data;
    mio_thread_poke();
}

/* Under mio_lock: b's records queued for its owner.  1, or 0 if memory is short.
 * The message takes b's buffer where it has room for the header after the
 * records (b is freed next): before, every block sent was copied whole into a
 * message of its own first. */
int mio_send_block(mio_file_t *f, mio_pblock_t *b)
{
    out_t *o = calloc(1, sizeof *o);
    if (o == NULL)
        return 0;
    int pieces = 0;
    for (size_t i = 0; i + 8 <= b->used; pieces++) {
        uint32_t len;
        memcpy(&len, b->buf + i + 4, 4);
        i += 8 + (size_t)len;
    }
    msg_hdr_t h = { K_PIECES, pieces, b->block };
    char *buf;
    if (b->cap - b->used >= sizeof h) {
        buf = b->buf;
        o->cap = b->cap;
        b->buf = NULL;
        b->cap = 0;
    } else if ((buf = malloc(b->used + sizeof h)) != NULL) {
        memcpy(buf, b->buf, b->used);
    } else {
        free(o);
        return 0;
    }
    memcpy(buf + b->used, &h, sizeof h);
    o->f = f;
    o->dest = (int)(b->block % f->size);
    o->buf = buf;
    o->len = b->used + sizeof h;
    o->data = b->bytes;
    mio_sent_mark(f, o->dest, 1);
    unblock_counter_add(&mio_stats.pieces_sent, (uint64_t)pieces);
    unblock_counter_add(&mio_stats.bytes_sent, b->bytes);
    enqueue(o);
    mio_note_peak(f);
    return 1;
}

void mio_wait_queue(mio_file_t *f, size_t limit)
{
    while (mio_thread_up() && f->queued > limit)
        pthread_cond_wait(&drained, &mio_lock);
}

void mio_wait_writes(mio_file_t *f, const mio_image_t *im)
{
    for (;;) {
        mio_image_t *o = f->images;
        while (o && !(o->writing && !(o->retry && unblock_tls.runtime) &&
                      (im == NULL || (o->block == im->block && o->seq < im->seq))))
            o = o->next;
        if (o == NULL)
            return;
        if (o->retry) { /* (its write failed on the I/O thread: written here,
                           stage.c; the I/O thread does not wait for it) */
            mio_image_write(f, o);
            continue;
        }
        pthread_cond_wait(&drained, &mio_lock);
    }
}

void mio_writes_done(void)
{
    pthread_cond_broadcast(&drained);
}

/* The program's thread tests the requests itself first, for up to
 * UNBLOCK_MPIIO_SPIN_US (0: once), yielding the core between tests: where
 * every rank is already in the call, as in a collective flush where none holds
 * a byte, the reduction ends within a few tests, and the hand-over to the I/O
 * thread cost a wake-up of each thread and the thread's next look (PnetCDF's
 * tst_multi_redefine, 4 ranks on 2 cores, makes 40,000 such flushes a rank:
 * 35.7 s against plain's 8.5, and 14.1 s with this).  Bounded, and yielding:
 * a rank that came first does not keep the core from one still writing (btio
 * at 4 ranks unchanged). */
static int wait_briefly(int n, MPI_Request *req)
{
    long spin = (long)unblock_opt.mpiio_spin_us * 1000L;
    int done = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (mio_mpi.testall(n, req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS || done)
            return done;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >= spin)
            return 0;
        sched_yield();
    }
}

/* Not under mio_lock: until the n requests req are complete, the program's
 * thread, after its brief tests, sleeps on a condition variable; the I/O
 * thread, which looks every 50 us while a flush waits, tests them and wakes it
 * (before, the program's thread tested them between pauses of 20 us doubling
 * to 200-400 us, and an owner's 1.4 ms write on a slow file system was seen
 * 0.4 ms late; a blocking MPI call polls inside MPI, and with four ranks on two
 * cores the ranks waiting there took the CPU their owners' I/O threads needed:
 * btio at 4 ranks ran 7 times slower).  Every 5 ms without news it tests them
 * itself. */
void mio_wait_requests(mio_file_t *f, int n, MPI_Request *req)
{
    if (wait_briefly(n, req))
        return;
    if (!f->mpi_pinned) { /* (a quiet file: the I/O thread calls no MPI for it) */
        mio_mpi.waitall(n, req, MPI_STATUSES_IGNORE);
        return;
    }
    pthread_mutex_lock(&mio_lock);
    f->ack_req = req;
    f->ack_n = n;
    f->ack_done = 0;
    f->flushing++; /* (the I/O thread looks often) */
    mio_thread_poke();
    while (!f->ack_done) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        mio_ts_add(&ts, 5000000L);
        if (pthread_cond_timedwait(&acked, &mio_lock, &ts) == ETIMEDOUT && !f->ack_done)
            mio_mpi.testall(n, req, &f->ack_done, MPI_STATUSES_IGNORE);
    }
    f->ack_n = 0;
    f->flushing--;
    pthread_mutex_unlock(&mio_lock);
}

/* The answers of the ranks marked in `want` (not under mio_lock), waited for as
 * wait_requests does.  The first error class any owner sent is kept for the
 * program. */
static void wait_answers(mio_file_t *f, const unsigned char *want)
{
    int n = 0;
    for (int r = 0; r < f->size; r++)
        n += want[r] != 0;
    if (n == 0)
        return;
    int *cls = calloc((size_t)n, sizeof(int));
    MPI_Request *req = calloc((size_t)n, sizeof(MPI_Request));
    if (cls == NULL || req == NULL) { /* (then blocking receives) */
        free(cls);
        free(req);
        for (int r = 0; r < f->size; r++)
            if (want[r]) {
                int c = 0;
                mio_mpi.recv(&c, 1, mio_mpi.integer, r, T_ACK, f->comm, MPI_STATUS_IGNORE);
                if (c)
                    mio_keep_error(f, c);
            }
        return;
    }
    for (int r = 0, k = 0; r < f->size; r++)
        if (want[r]) {
            mio_mpi.irecv(&cls[k], 1, mio_mpi.integer, r, T_ACK, f->comm, &req[k]);
            k++;
        }
    mio_wait_requests(f, n, req);
    for (int k = 0; k < n; k++)
        if (cls[k]) {
            pthread_mutex_lock(&mio_lock);
            if (mio_keep_error(f, cls[k]))
                unblock_counter_add(&mio_stats.errors_deferred, 1);
            pthread_mutex_unlock(&mio_lock);
        }
    free(cls);
    free(req);
}

/* Under mio_lock: a message of kind k (its header alone, about `block`) queued
 * for rank r; 0 if memory is short. */
static int send_kind(mio_file_t *f, int r, int k, int64_t block)
{
    out_t *o = calloc(1, sizeof *o);
    msg_hdr_t *h = malloc(sizeof *h);
    if (o == NULL || h == NULL) {
        free(o);
        free(h);
        return 0;
    }
    *h = (msg_hdr_t){ k, 0, block };
    o->f = f;
    o->dest = r;
    o->buf = (char *)h;
    o->len = sizeof *h;
    enqueue(o);
    return 1;
}

/* Not under mio_lock: each owner told what `how` asks (mio_flush_how), and
 * their answers.  f->sent[r] is 1 while records went to r since its last
 * answer, 2 while r answered that it holds them unwritten (MIO_FL_RECEIPT),
 * 0 once they are written.  The number of owners asked. */
int mio_flush_owners(mio_file_t *f, int how)
{
    unsigned char *want = calloc((size_t)f->size, 1);
    if (want == NULL)
        return -1;
    int n = 0;
    pthread_mutex_lock(&mio_lock);
    f->flushing++;
    for (int r = 0; r < f->size; r++) {
        if (r == f->rank)
            continue;
        int k = 0;
        if (how == MIO_FL_SEE)
            k = K_WRITE;
        else if (how == MIO_FL_OWN ? f->sent[r] != 0 : f->sent[r] == 1)
            k = how == MIO_FL_OWN ? K_FLUSH : K_NEWS;
        if (k == 0)
            continue;
        if (!send_kind(f, r, k, 0))
            continue; /* (this owner writes at close) */
        want[r] = 1;
        n++;
        mio_sent_mark(f, r, k == K_NEWS ? 2 : 0);
    }
    pthread_mutex_unlock(&mio_lock);
    wait_answers(f, want);
    pthread_mutex_lock(&mio_lock);
    f->flushing--;
    pthread_mutex_unlock(&mio_lock);
    free(want);
    return n;
}

int mio_send_ask(mio_file_t *f, int owner, int64_t block, int *cls, MPI_Request *req)
{
    if (!send_kind(f, owner, K_BLOCK, block))
        return 0;
    /* (its answer comes before those of this rank's later requests to that
     * owner, and this receive is posted before theirs: MPI matches in order) */
    if (mio_mpi.irecv(cls, 1, mio_mpi.integer, owner, T_ACK, f->comm, req) != MPI_SUCCESS) {
        unblock_error("MPI-IO write-behind: a receive for an owner's answer failed");
        abort();
    }
    return 1;
}

/* Under mio_lock: where the highest byte f's images hold ends in the file (0:
 * none). */
static int64_t images_end(const mio_file_t *f)
{
    int64_t end = 0;
    for (const mio_image_t *im = f->images; im; im = im->next)
        if (im->dirty && im->block * f->block + im->hi > end)
            end = im->block * f->block + im->hi;
    return end;
}

int64_t mio_owners_size(mio_file_t *f)
{
    int n = f->size - 1, k = 0;
    int64_t *end = calloc((size_t)n + 1, sizeof *end);
    MPI_Request *req = calloc((size_t)n + 1, sizeof *req);
    if (end == NULL || req == NULL) {
        free(end);
        free(req);
        return -1;
    }
    pthread_mutex_lock(&mio_lock);
    int64_t hi = images_end(f);
    for (int r = 0; r < f->size; r++) {
        if (r == f->rank)
            continue;
        if (!send_kind(f, r, K_SIZE, 0)) {
            hi = -1;
            break;
        }
        mio_mpi.irecv(&end[k], 1, mio_mpi.int64, r, T_SIZE, f->comm, &req[k]);
        k++;
    }
    pthread_mutex_unlock(&mio_lock);
    if (k)
        mio_wait_requests(f, k, req);
    for (int i = 0; i < k && hi >= 0; i++)
        if (end[i] > hi)
            hi = end[i];
    free(end);
    free(req);
    return hi;
}

/* Not under mio_lock (the program's thread, every rank of f at once). */
int mio_flush_collective(mio_file_t *f)
{
    pthread_mutex_lock(&mio_lock);
    mio_flush_stage1(f, 0); /* records to owners, this rank's own into its images */
    for (int r = 0; r < f->size; r++) {
        if (r == f->rank)
            continue;
        if (!send_kind(f, r, K_COLL, 0)) { /* (cannot go on without it) */
            unblock_error("MPI-IO write-behind: no memory for a flush message");
            abort();
        }
        mio_sent_mark(f, r, 0);
    }
    f->flushing++;
    f->coll_arrived = 1;
    unsigned gen = f->coll_gen;
    mio_thread_poke();
    pthread_mutex_unlock(&mio_lock);
    unsigned char *want = calloc((size_t)f->size, 1);
    if (want == NULL) {
        unblock_error("MPI-IO write-behind: no memory for a flush");
        abort();
    }
    for (int r = 0; r < f->size; r++)
        want[r] = r != f->rank;
    wait_answers(f, want);
    free(want);
    pthread_mutex_lock(&mio_lock);
    /* Every other rank answered; this rank's own side (its images written, its
     * answers sent) may still be under way: the others wait for it. */
    while (f->coll_gen == gen)
        pthread_cond_wait(&drained, &mio_lock);
    f->flushing--;
    pthread_mutex_unlock(&mio_lock);
    return 0;
}

/* The owner's side of a collective flush, once every rank is in it. */
int mio_coll_ready(mio_file_t *f)
{
    if (!f->coll_arrived || f->coll_count < f->size - 1)
        return 0;
    mio_write_images(f, 0);
    for (int r = 0; r < f->size; r++) {
        if (r == f->rank)
            continue;
        int cls = f->owed ? f->owed[r] : 0;
        if (f->owed)
            f->owed[r] = 0;
        mio_mpi.send(&cls, 1, mio_mpi.integer, r, T_ACK, f->comm);
    }
    f->coll_arrived = 0;
    f->coll_count = 0;
    f->coll_gen++;
    pthread_cond_broadcast(&drained);
    return 1;
}

/* A fatal signal: records still queued for their owners are written here, by
 * this rank, through the file's descriptor (async-signal-safe: pwrite only). */
void mio_fatal_drain_queue(void)
{
    for (out_t *o = outq; o; o = o->next) {
        msg_hdr_t h;
        if (o->len < sizeof h || o->f->fd < 0)
            continue;
        memcpy(&h, o->buf + o->len - sizeof h, sizeof h);
        if (h.kind == K_PIECES)
            mio_write_records_fd(o->f->fd, h.block * o->f->block, o->buf, o->len - sizeof h);
    }
}

/* ---- the thread's rounds (thread.c; mio_lock held) ---- */

static int progress_sends(void)
{
    int did = 0;
    for (out_t *o = outq; o; o = o->next)
        if (!o->started) {
            if (mio_mpi.isend(o->buf, (int)o->len, mio_mpi.byte, o->dest, T_OWNER, o->f->comm,
                              &o->req) != MPI_SUCCESS) {
                /* (cannot happen with a valid communicator; the records are lost
                 * to the owner: said as an I/O error) */
                mio_keep_error(o->f, MPI_ERR_IO);
            } else {
                o->pending = 1;
            }
            o->started = 1;
            did = 1;
        }
    for (out_t **p = &outq; *p;) {
        out_t *o = *p;
        int done = 1;
        if (!o->started)
            done = 0;
        else if (o->pending)
            mio_mpi.test(&o->req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            p = &o->next;
            continue;
        }
        *p = o->next;
        o->f->queued -= o->data;
        if (o->cap)
            mio_buf_put(o->buf, o->cap);
        else
            free(o->buf);
        free(o);
        did = 1;
    }
    if (did)
        pthread_cond_broadcast(&drained);
    return did;
}

static void serve(mio_file_t *f, const char *m, int len, int from)
{
    msg_hdr_t h;
    if (len < (int)sizeof h)
        return;
    memcpy(&h, m + len - sizeof h, sizeof h);
    if (h.kind == K_PIECES) {
        unblock_counter_add(&mio_stats.pieces_received, (uint64_t)h.pieces);
        mio_image_t *im = mio_image_get(f, h.block);
        if (im == NULL) { /* no memory for the block: said as the program's error */
            mio_keep_error(f, MPI_ERR_NO_MEM);
            return;
        }
        mio_paint(f, im, m, (size_t)len - sizeof h, from);
        return;
    }
    if (h.kind == K_SIZE) {
        int64_t end = images_end(f);
        mio_mpi.send(&end, 1, mio_mpi.int64, from, T_SIZE, f->comm);
        return;
    }
    if (h.kind == K_COLL) {
        f->coll_count++;
        mio_coll_ready(f);
        return;
    }
    if (h.kind == K_BLOCK) {
        /* (every image of the block, and those being written, in the file) */
        for (mio_image_t *im = f->images; im; im = im ? im->next : f->images)
            if (im->block == h.block && !im->writing) {
                mio_image_write(f, im);
                im = NULL; /* (the list changed) */
            }
        for (mio_image_t *im = f->images; im; im = im->next)
            if (im->block == h.block && im->writing) {
                mio_wait_writes(f, NULL);
                break;
            }
        int cls = f->owed ? f->owed[from] : 0;
        if (f->owed)
            f->owed[from] = 0;
        mio_mpi.send(&cls, 1, mio_mpi.integer, from, T_ACK, f->comm);
        return;
    }
    if (h.kind == K_FLUSH || h.kind == K_NEWS || h.kind == K_WRITE) {
        /* K_FLUSH: only the blocks holding that rank's pieces: the others' wait
         * for more (an owner whose images are written at every flush of every
         * rank writes its blocks piece by piece while the ranks still write).
         * K_NEWS: nothing written (the pieces are painted: a later write of
         * their bytes by any rank comes after them).  K_WRITE: every image,
         * whoever wrote it (a read, or a write not taken, of another rank). */
        if (h.kind == K_FLUSH)
            mio_write_images_of(f, from, 1);
        else if (h.kind == K_WRITE)
            mio_write_images(f, 0);
        /* (a failed write also stays with the owner's program: f->err) */
        int cls = f->owed ? f->owed[from] : 0;
        if (f->owed)
            f->owed[from] = 0;
        mio_mpi.send(&cls, 1, mio_mpi.integer, from, T_ACK, f->comm);
    }
}

/* The answers a flush of this rank waits for (wait_answers). */
static int progress_answers(void)
{
    int did = 0;
    for (mio_file_t *f = mio_files; f; f = f->next)
        if (f->ack_n && !f->ack_done) {
            mio_mpi.testall(f->ack_n, f->ack_req, &f->ack_done, MPI_STATUSES_IGNORE);
            if (f->ack_done) {
                pthread_cond_broadcast(&acked);
                did = 1;
            }
        }
    return did;
}

static int progress_receives(void)
{
    int did = 0;
    for (mio_file_t *f = mio_files; f; f = f->next) {
        if (!f->mpi_pinned) /* (solo, or quiet: no rank sends it a message) */
            continue;
        for (;;) {
            int flag = 0;
            MPI_Message msg;
            MPI_Status st;
            if (mio_mpi.improbe(MPI_ANY_SOURCE, T_OWNER, f->comm, &flag, &msg, &st) !=
                    MPI_SUCCESS ||
                !flag)
                break;
            int n = 0;
            mio_mpi.get_count(&st, mio_mpi.byte, &n);
            size_t cap;
            /* (a kept buffer, else huge pages past 512 KiB: bufs.c) */
            char *m = mio_buf_get(n > 0 ? (size_t)n : 1, &cap, 0);
            if (m == NULL) {
                unblock_error("MPI-IO write-behind: no memory for a message of %d bytes", n);
                abort();
            }
            mio_mpi.mrecv(m, n, mio_mpi.byte, &msg, &st);
            serve(f, m, n, st.MPI_SOURCE);
            mio_buf_put(m, cap);
            did = 1;
        }
    }
    return did;
}

int mio_owner_round(void)
{
    int did = progress_sends();
    did |= progress_receives();
    did |= progress_answers();
    return did;
}
