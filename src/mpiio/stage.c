/* stage.c — the buffers of MPI-IO write-behind (docs/mpiio.md).
 *
 * Stage 1 keeps, per file block, the pieces this rank wrote in program order
 * (records: offset in the block, length, bytes; a piece that continues the last
 * one grows it, so a rank writing its own segment 8 bytes at a time holds one
 * record per block).  Leaving stage 1, a block's records go to its owner
 * (owner.c) or, in one-stage mode or when this rank owns the block, are painted
 * into the block's image: its bytes and a bitmap of the bytes written, in the
 * order they came, so a later write of the same bytes wins.  An image is written
 * as its runs of written bytes, each one MPI_File_write_at on the rank's own
 * handle: holes are never filled, the file never grows past the last byte the
 * program wrote. */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "core/log.h"
#include "core/options.h"
#include "fileio/writebehind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

mio_stats_t mio_stats;

size_t mio_cache_half(void)
{
    size_t c = (size_t)unblock_opt.mpiio_cache;
    return c / 2;
}

static void counter_max(unblock_counter_t *c, uint64_t v)
{
    uint64_t old = __atomic_load_n(c, __ATOMIC_RELAXED);
    while (v > old && !__atomic_compare_exchange_n(c, &old, v, 0, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
        ;
}

/* The buffered bytes of this rank (every file), for the peak. */
void mio_note_peak(mio_file_t *f)
{
    (void)f;
    uint64_t sum = 0;
    for (mio_file_t *g = mio_files; g; g = g->next)
        sum += g->s1_bytes + g->s2_bytes + g->queued;
    counter_max(&mio_stats.peak_buffered, sum);
}

void mio_note_error(mio_file_t *f, int rc)
{
    int cls = MPI_ERR_IO;
    if (unblock_tls.runtime) /* (the I/O thread: write_run gave a class, and for a
                                solo file it calls no MPI function) */
        cls = rc;
    else if (mio_mpi.error_class(rc, &cls) != MPI_SUCCESS)
        cls = MPI_ERR_IO;
    if (mio_keep_error(f, cls))
        unblock_counter_add(&mio_stats.errors_deferred, 1);
}

int mio_keep_error(mio_file_t *f, int cls)
{
    if (f->err > 0) /* (MIO_ERR_RETRY gives way to the class) */
        return 0;
    f->err = cls;
    __atomic_add_fetch(&unblock_mpiio_gen, 1, __ATOMIC_RELEASE); /* (the cursor) */
    return 1;
}

/* ---- stage 1 ---- */

static mio_pblock_t *pblock_get(mio_file_t *f, int64_t block)
{
    unsigned h = (unsigned)((uint64_t)block * 0x9E3779B97F4A7C15ull >> 56) % MIO_HASH;
    for (mio_pblock_t *b = f->hash[h]; b; b = b->hnext)
        if (b->block == block)
            return b;
    mio_pblock_t *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->block = block;
    b->hnext = f->hash[h];
    f->hash[h] = b;
    b->next = f->list;
    f->list = b;
    return b;
}

mio_pblock_t *mio_pblock_of(mio_file_t *f, int64_t block)
{
    unsigned h = (unsigned)((uint64_t)block * 0x9E3779B97F4A7C15ull >> 56) % MIO_HASH;
    mio_pblock_t *b = f->hash[h];
    while (b && b->block != block)
        b = b->hnext;
    return b;
}

void mio_pblock_free(mio_file_t *f, mio_pblock_t *b)
{
    f->s1_gen++;
    unsigned h = (unsigned)((uint64_t)b->block * 0x9E3779B97F4A7C15ull >> 56) % MIO_HASH;
    for (mio_pblock_t **p = &f->hash[h]; *p; p = &(*p)->hnext)
        if (*p == b) {
            *p = b->hnext;
            break;
        }
    for (mio_pblock_t **p = &f->list; *p; p = &(*p)->next)
        if (*p == b) {
            *p = b->next;
            break;
        }
    f->s1_bytes -= b->bytes;
    f->s1_big -= b->big;
    mio_buf_put(b->buf, b->cap);
    free(b->ix);
    free(b);
}

/* Room for `more` bytes in b's buffer: it doubles, but a block's only record,
 * once past MIO_FULL_MIN, takes at once the room it needs to reach the block's
 * end (`full`): a rank writing its segment doubled it five times to 1 MiB,
 * each time into fresh memory and with a copy (2 MiB of page faults for the
 * first 1 MiB; 8-byte writes of 4 MiB a rank, time in the calls: 4.3 -> 3.5
 * ms).  At most MIO_S1_BIG such buffers in a file at once: a rank writing 64
 * KiB runs into many blocks would hold 1 MiB for each. */
#define MIO_S1_BIG 2
/* (256 KiB, not 64: that room is huge pages, bufs.c, all zeroed at the first
 * touch; a rank writing 64 KiB to a file paid 2 MiB of them, 0.15 ms) */
#define MIO_FULL_MIN ((size_t)256 << 10)
static int reserve(mio_file_t *f, mio_pblock_t *b, size_t more, size_t full)
{
    if (b->used + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->used + more)
        cap *= 2;
    if (cap >= MIO_FULL_MIN && full > cap && !b->big && f->s1_big < MIO_S1_BIG) {
        cap = full;
        b->big = 1;
        f->s1_big++;
    } else if (cap >= MIO_BUF_MIN && cap < MIO_FULL_MIN && full > cap) {
        /* (on the way: MIO_FULL_MIN at once, from malloc, its pages touched
         * as it fills; by doubling, a rank writing 64 KiB copied 64 KiB more
         * into fresh pages, 3-5 % of such a file's open-to-close) */
        cap = full < MIO_FULL_MIN ? full : MIO_FULL_MIN;
    }
    if (cap >= MIO_BUF_MIN) { /* (a warm buffer if one is kept) */
        size_t got;
        char *n = mio_buf_get(cap, &got, MIO_BUF_GROW);
        if (n == NULL)
            return -1;
        if (b->used)
            memcpy(n, b->buf, b->used);
        mio_buf_put(b->buf, b->cap);
        b->buf = n;
        b->cap = got;
        return 0;
    }
    char *n = realloc(b->buf, cap);
    if (n == NULL)
        return -1;
    b->buf = n;
    b->cap = cap;
    return 0;
}

/* Appends bytes [off, off + n) of one block (n within the block). */
static int append(mio_file_t *f, mio_pblock_t *b, uint32_t off, const char *p, uint32_t n)
{
    if (b->used > 0 && off == b->last_end) {
        if (reserve(f, b, n, b->nrec == 1 ? b->used + (f->block - b->last_end) : 0))
            return -1;
        memcpy(b->buf + b->used, p, n);
        mio_record_extend(f, b, n);
    } else {
        if (reserve(f, b, 8 + (size_t)n, 0))
            return -1;
        mio_record_add(f, b, off, p, n);
    }
    return 0;
}

/* Takes bytes [off, off + n) of the file from p.  0, or -1 when memory is short
 * (what was taken stays; the caller flushes and writes the rest itself), or -2
 * when the file system has no room for them: space is reserved ahead as the
 * POSIX write-behind does (src/fileio/), so that ENOSPC or EDQUOT come from
 * MPI's own call, made at once. */
int mio_take(mio_file_t *f, int64_t off, const char *p, int64_t n)
{
    if (unblock_unlikely(mio_ending))
        return -1; /* (the caller flushes, then makes the call as the program did) */
    if (f->news) { /* (the next call that may tell another process writes it first) */
        __atomic_store_n(&mio_out, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&unblock_mpiio_news, 1, __ATOMIC_RELAXED);
    }
    /* Once past its first block, a file in two stages reserves at least 4 blocks
     * ahead: its blocks are written while the program goes on, and a fallocate
     * of each reservation step waited behind them every few blocks.  Not from
     * the start: a file opened for a few KiB (a checkpoint per step) reserved 4
     * MiB and gave them back at close, each time. */
    if (unblock_unlikely(off + n > f->block && !f->resv_ahead) && f->fd >= 0 && !f->noreserve &&
        f->two_stage) {
        f->resv_ahead = 1;
        unblock_wb_reserve_ahead(f->fd, (off_t)(4 * f->block));
    }
    /* (the thread that writes: its CPU time tells the I/O thread when stage 1
     * sits idle because the program computes, thread.c: note_idle) */
    if (unblock_unlikely(!f->has_writer || !pthread_equal(f->writer, pthread_self()))) {
        f->writer = pthread_self();
        f->writer_depth = &unblock_tls.mpi_depth;
        f->has_writer = pthread_getcpuclockid(f->writer, &f->writer_clock) == 0;
    }
    if (f->fd >= 0 && !f->noreserve && !unblock_wb_reserve(f->fd, (off_t)off, (off_t)(off + n))) {
        if (errno == ENOSPC || errno == EDQUOT || errno == EFBIG)
            return -2;
        f->noreserve = 1; /* (no fallocate there: errors come later, through the file) */
    }
    while (n > 0) {
        int64_t block = off / f->block, in = off % f->block;
        int64_t len = f->block - in < n ? f->block - in : n;
        if (f->s1_bytes + f->queued + (size_t)len > mio_cache_half()) {
            /* Past stage 1's half of the cache: the fullest blocks leave, and
             * what waits to be sent must shrink first (owner.c) */
            unblock_counter_add(&mio_stats.flush_bound, 1);
            mio_flush_stage1(f, 1);
            mio_wait_queue(f, mio_cache_half() / 2);
        }
        mio_pblock_t *b = pblock_get(f, block);
        if (b == NULL || append(f, b, (uint32_t)in, p, (uint32_t)len))
            return -1;
        if (off + len > f->written_hi)
            f->written_hi = off + len;
        if (off + len > f->pending_hi)
            f->pending_hi = off + len;
        f->took = 1;
        off += len, p += len, n -= len;
        if (f->two_stage && b->bytes >= (size_t)f->block) /* a full block goes at once */
            mio_flush_stage1(f, 2);
        if (f->two_stage && block != f->pass_at) { /* (into another block) */
            int on = block > f->pass_at;
            f->pass_at = block;
            if (on && !f->read_back && f->list != NULL && f->list->next != NULL)
                mio_flush_stage1(f, 3);
        }
    }
    mio_note_peak(f);
    mio_thread_watch(); /* (its stage 1 is watched again: thread.c, deep_ns) */
    return 0;
}

/* ---- images ---- */

/* A new image of `block`, its bytes in mem (a buffer of cap bytes from
 * mio_buf_get; NULL: one is taken) at data. */
static mio_image_t *image_new(mio_file_t *f, int64_t block, char *mem, size_t cap, char *data)
{
    /* Over the owner's half of the cache: the fullest blocks go first. */
    while (f->images && f->s2_bytes + (size_t)f->block > mio_cache_half())
        if (mio_write_images(f, 1) <= 0)
            break;
    mio_image_t *im = calloc(1, sizeof *im);
    if (im == NULL)
        return NULL;
    if (mem == NULL)
        data = mem = mio_buf_get((size_t)f->block, &cap, f->image_seq ? 0 : MIO_BUF_SMALL);
    im->mem = mem;
    im->mem_cap = cap;
    im->data = data;
    im->bits = calloc((size_t)(f->block + 63) / 64, 8);
    im->from = calloc((size_t)(f->size + 7) / 8, 1);
    if (im->mem == NULL || im->bits == NULL || im->from == NULL) {
        mio_buf_put(im->mem, im->mem_cap);
        free(im->bits);
        free(im->from);
        free(im);
        return NULL;
    }
    im->block = block;
    im->seq = ++f->image_seq;
    im->lo = (uint32_t)f->block;
    im->hi = 0;
    im->next = f->images;
    f->images = im;
    f->s2_bytes += (size_t)f->block;
    mio_note_peak(f);
    return im;
}

/* The image of `block` that takes pieces (none being written), or NULL. */
static mio_image_t *image_taking(mio_file_t *f, int64_t block)
{
    for (mio_image_t *im = f->images; im; im = im->next)
        if (im->block == block && !im->writing)
            return im;
    return NULL;
}

mio_image_t *mio_image_get(mio_file_t *f, int64_t block)
{
    mio_image_t *im = image_taking(f, block);
    return im ? im : image_new(f, block, NULL, 0, NULL);
}

/* The bits set in x, inline: __builtin_popcountll is a call into libgcc where
 * the CPU's instruction is not assumed, and the call made set_bits save six
 * registers for every 8-byte piece painted. */
static inline size_t pop64(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (size_t)((x * 0x0101010101010101ull) >> 56);
}

static void set_bits_loop(mio_image_t *im, uint32_t s, uint32_t e)
{
    /* A partial first word, then whole words (a long piece: a word's 64 bytes
     * written the first time in a few instructions), then a partial last one. */
    if (s % 64) {
        uint32_t b = s % 64, n = 64 - b < e - s ? 64 - b : e - s;
        uint64_t mask = ((n == 64 ? ~0ull : (1ull << n) - 1)) << b, old = im->bits[s / 64];
        im->bits[s / 64] = old | mask;
        im->dirty += (old & mask) == 0 ? n : pop64(mask & ~old);
        s += n;
    }
    uint64_t *w = &im->bits[s / 64];
    uint32_t whole = (e - s) / 64;
    size_t added = 0;
    for (uint32_t i = 0; i < whole; i++) {
        uint64_t old = w[i];
        w[i] = ~0ull;
        added += old == 0 ? 64 : 64 - pop64(old);
    }
    im->dirty += added;
    s += whole * 64;
    if (s < e) {
        uint64_t mask = (1ull << (e - s)) - 1, old = im->bits[s / 64];
        im->bits[s / 64] = old | mask;
        im->dirty += (old & mask) == 0 ? e - s : pop64(mask & ~old);
    }
}

/* Bytes [s, e) of the image written.  A piece inside one word of the bitmap
 * written the first time (a cell) is a few instructions, no loop. */
static inline void set_bits(mio_image_t *im, uint32_t s, uint32_t e)
{
    uint32_t b = s % 64, n = e - s;
    if (n - 1 < 64 - b) { /* (0 < n <= 64 - b) */
        uint64_t mask = (n == 64 ? ~0ull : ((1ull << n) - 1)) << b;
        uint64_t *w = &im->bits[s / 64], old = *w;
        if ((old & mask) == 0) {
            *w = old | mask;
            im->dirty += n;
            return;
        }
    }
    set_bits_loop(im, s, e);
}

/* The records rec[0, used) of the image's block, in the order they came, from
 * rank `from`. */
void mio_paint(mio_file_t *f, mio_image_t *im, const char *rec, size_t used, int from)
{
    size_t i = 0;
    while (i + 8 <= used) {
        uint32_t off, len;
        memcpy(&off, rec + i, 4);
        memcpy(&len, rec + i + 4, 4);
        if (len == 8) /* (a cell: no call to memcpy) */
            memcpy(im->data + off, rec + i + 8, 8);
        else
            memcpy(im->data + off, rec + i + 8, len);
        set_bits(im, off, off + len);
        if (off < im->lo)
            im->lo = off;
        if (off + len > im->hi)
            im->hi = off + len;
        i += 8 + (size_t)len;
    }
    im->remote |= from != f->rank;
    im->from[from / 8] |= (unsigned char)(1u << (from % 8));
}

int mio_next_run(const mio_image_t *im, uint32_t *s, uint32_t *e, uint32_t hi)
{
    uint32_t i = *s;
    while (i < hi) {
        if (i % 256 == 0 && hi - i >= 256) { /* (four unwritten words at once) */
            const uint64_t *q = &im->bits[i / 64];
            if ((q[0] | q[1] | q[2] | q[3]) == 0) {
                i += 256;
                continue;
            }
        }
        uint64_t w = im->bits[i / 64] >> (i % 64);
        if (w == 0) {
            i = (i / 64 + 1) * 64;
            continue;
        }
        i += (uint32_t)__builtin_ctzll(w);
        break;
    }
    if (i >= hi)
        return 0;
    uint32_t j = i;
    while (j < hi) {
        if (j % 256 == 0 && hi - j >= 256) { /* (four whole words at once) */
            const uint64_t *q = &im->bits[j / 64];
            if ((q[0] & q[1] & q[2] & q[3]) == ~0ull) {
                j += 256;
                continue;
            }
        }
        uint64_t w = ~im->bits[j / 64] >> (j % 64);
        if (j % 64 && w == 0) { /* (the shifted-in zeros read as written) */
            j = (j / 64 + 1) * 64;
            continue;
        }
        if (w == 0) {
            j += 64;
            continue;
        }
        j += (uint32_t)__builtin_ctzll(w);
        break;
    }
    *s = i;
    *e = j < hi ? j : hi;
    return 1;
}

mio_image_t *mio_image_after(const mio_file_t *f, int64_t block, uint64_t seq)
{
    mio_image_t *im = NULL;
    for (mio_image_t *o = f->images; o; o = o->next)
        if ((block < 0 || o->block == block) && o->seq > seq && (im == NULL || o->seq < im->seq))
            im = o;
    return im;
}

static void image_unlink(mio_file_t *f, mio_image_t *im)
{
    for (mio_image_t **p = &f->images; *p; p = &(*p)->next)
        if (*p == im) {
            *p = im->next;
            break;
        }
    f->s2_bytes -= (size_t)f->block;
    mio_buf_put(im->mem, im->mem_cap);
    free(im->bits);
    free(im->from);
    free(im);
}

/* One run of a block, through the descriptor opened beside MPI where there is
 * one (from either thread: MPICH's ROMIO holds one lock for every MPI-IO call of
 * the process, also while a collective one waits for other ranks, and those may
 * wait for the I/O thread's write; and a second MPI handle of the file cost each
 * rank an open and a close, 3 ms each through OMPIO on a FUSE file system), else
 * through the rank's own MPI handle (a file in one stage, docs/mpiio.md).
 * Returns 0 or an MPI error code (a class, for the descriptor: as ROMIO maps
 * errno). */
static int write_run(mio_file_t *f, int64_t off, const char *p, int64_t n)
{
    if (f->fd >= 0) {
        __atomic_store_n(&f->fd_dirty, 1, __ATOMIC_RELEASE);
        if (unblock_unlikely(mio_test_fail_rank >= 0) && f->rank == mio_test_fail_rank &&
            f->size > 1)
            return MPI_ERR_IO; /* (the test hook: on either thread, not tried again) */
        while (n > 0) {
            ssize_t w = pwrite(f->fd, p, (size_t)n, (off_t)off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break;
            p += w, off += w, n -= w;
        }
        if (n == 0)
            return MPI_SUCCESS;
        /* Failed: on the program's thread, the rest written through MPI, whose
         * answer is the one the program would have had (ROMIO says MPI_ERR_IO of
         * a full disk, OMPIO nothing); on the I/O thread (no MPI-IO call there),
         * errno's class. */
        int e = errno;
        if (unblock_tls.runtime || !mio_self_open(f, mio_mpi.info_null))
            return e == ENOSPC ? MPI_ERR_NO_SPACE : e == EDQUOT ? MPI_ERR_QUOTA : MPI_ERR_IO;
    }
    MPI_Status st;
    return mio_mpi.write_at(f->self, off, p, (int)n, mio_mpi.byte, &st);
}

/* Writes the image's runs through the rank's own handle, then frees it; the I/O
 * thread lets mio_lock go meanwhile (`unlocked`: the image is marked writing, so
 * nothing is painted into it, and those who must see it in the file wait for
 * it).  Returns 0 or the MPI error of the first write that failed (kept for the
 * program). */
static int image_write(mio_file_t *f, mio_image_t *im, int unlocked)
{
    int first = 0;
    uint32_t s = im->lo, e;
    int64_t base = im->block * f->block;
    if (unlocked) {
        im->writing = 1;
        pthread_mutex_unlock(&mio_lock);
        if (unblock_unlikely(mio_test_write_ms))
            mio_test_pause();
    } else {
        /* An older image of the block may be in the I/O thread's write: this
         * one's bytes are later, so they go after it (a rewrite flushed at once
         * by a read landed under the old bytes: *.mpiio-whole.np3).  Claimed
         * meanwhile, so that nobody paints into it or writes it. */
        if (im->retry) { /* (its class comes from this write now) */
            im->retry = 0;
            unblock_counter_add(&mio_stats.blocks_retried, 1);
            if (--f->retry == 0 && f->err == MIO_ERR_RETRY)
                f->err = 0;
        }
        im->writing = 2;
        mio_wait_writes(f, im);
    }
    while (mio_next_run(im, &s, &e, im->hi)) {
        int rc = write_run(f, base + s, im->data + s, (int64_t)(e - s));
        unblock_counter_add(&mio_stats.write_calls, 1);
        if (rc != MPI_SUCCESS && first == 0)
            first = rc;
        s = e;
    }
    if (unlocked)
        pthread_mutex_lock(&mio_lock);
    if (first && unlocked && f->solo) {
        /* A solo file's block failed on the I/O thread (a full file system,
         * where no space was reserved ahead: a file of one rank in a job of
         * several, PnetCDF's handle for independent data): the program's
         * thread writes it again, at its next call on the file, through MPI,
         * whose answer is the one the program would have had (OMPIO's may be
         * none).  Kept whole, written by nobody else meanwhile and painted by
         * nobody (a newer image takes the pieces); the I/O thread writes no
         * more of the file (mio_write_full), so no newer image of its block
         * goes first. */
        im->writing = 3;
        im->retry = 1;
        f->retry++;
        if (f->err == 0) {
            f->err = MIO_ERR_RETRY;
            __atomic_add_fetch(&unblock_mpiio_gen, 1, __ATOMIC_RELEASE); /* (the cursor) */
        }
        mio_writes_done();
        return first;
    }
    if (first) {
        mio_note_error(f, first);
        if (im->remote && f->owed) /* other ranks' bytes: they hear of it */
            for (int r = 0; r < f->size; r++)
                if (r != f->rank && f->owed[r] == 0)
                    f->owed[r] = f->err;
    }
    unblock_counter_add(&mio_stats.blocks_written, 1);
    if (im->remote)
        unblock_counter_add(&mio_stats.blocks_written_remote, 1);
    image_unlink(f, im);
    mio_writes_done(); /* (someone may wait for it) */
    return first;
}

int mio_image_write(mio_file_t *f, mio_image_t *im)
{
    return image_write(f, im, 0);
}

/* The program's thread (mio_lock held): the images whose write failed on the
 * I/O thread written again, oldest first; f->err is then MPI's answer or 0. */
void mio_settle(mio_file_t *f)
{
    while (f->retry > 0) {
        mio_image_t *im = f->images;
        while (im && !im->retry)
            im = im->next;
        if (im == NULL) {
            f->retry = 0;
            if (f->err == MIO_ERR_RETRY)
                f->err = 0;
            break;
        }
        image_write(f, im, 0); /* (older ones of its block first: mio_wait_writes) */
    }
}

/* A full image has nothing more to gather: written now, while the program goes
 * on (a rank's own segment of 4 MiB in 1 MiB blocks was written whole at close
 * before, after the program's last call; on bench/slowfs that close took 90 ms
 * of the run's 108).  A later write of its bytes starts a newer image, written
 * after it. */
int mio_write_full(mio_file_t *f)
{
    int n = 0;
    for (;;) {
        mio_image_t *im = f->retry ? NULL : f->images;
        while (im && (im->writing || im->dirty < (size_t)f->block))
            im = im->next;
        if (im == NULL)
            return n;
        unblock_counter_add(&mio_stats.blocks_written_full, 1);
        image_write(f, im, 1);
        n++;
    }
}

/* Writes this rank's images: all of them, or (over_bound) the fullest one.
 * Returns how many were written. */
int mio_write_images(mio_file_t *f, int over_bound)
{
    int n = 0;
    if (over_bound) {
        mio_image_t *best = NULL;
        for (mio_image_t *im = f->images; im; im = im->next)
            if (!im->writing && (best == NULL || im->dirty > best->dirty))
                best = im;
        if (best) {
            unblock_counter_add(&mio_stats.evictions, 1);
            mio_image_write(f, best);
            n++;
        }
        return n;
    }
    for (;;) {
        mio_image_t *im = f->images;
        while (im && im->writing)
            im = im->next;
        if (im == NULL)
            break;
        mio_image_write(f, im);
        n++;
    }
    mio_wait_writes(f, NULL);
    return n;
}

/* The images pick chooses (r: its argument), counted, and written and waited
 * for where `write`. */
static int images_picked(mio_file_t *f, int (*pick)(const mio_file_t *, const mio_image_t *, int),
                         int r, int write)
{
    int n = 0;
    for (mio_image_t *im = f->images; im; im = im ? im->next : f->images) {
        if (!pick(f, im, r))
            continue;
        n++;
        if (write && !im->writing) {
            /* (it may wait for an older image, which the I/O thread then
             * frees: the list again from its start) */
            mio_image_write(f, im);
            im = NULL;
        }
    }
    if (write && n)
        mio_wait_writes(f, NULL);
    return n;
}

static int holds_pieces_of(const mio_file_t *f, const mio_image_t *im, int r)
{
    (void)f;
    return (im->from[r / 8] & (1u << (r % 8))) != 0;
}

int mio_write_images_of(mio_file_t *f, int r, int write)
{
    return images_picked(f, holds_pieces_of, r, write);
}

/* A single record is written as it is; more are painted into the block's image. */
static void write_own(mio_file_t *f, mio_pblock_t *b)
{
    uint32_t off, len;
    memcpy(&off, b->buf, 4);
    memcpy(&len, b->buf + 4, 4);
    if (!f->two_stage && 8 + (size_t)len == b->used) {
        int rc = write_run(f, b->block * f->block + off, b->buf + 8, (int64_t)len);
        unblock_counter_add(&mio_stats.write_calls, 1);
        unblock_counter_add(&mio_stats.blocks_written, 1);
        if (rc != MPI_SUCCESS)
            mio_note_error(f, rc);
        return;
    }
    /* One record of the whole block (a rank's own segment): the image takes over
     * its buffer, no copy, where no image of the block takes pieces */
    mio_image_t *im = NULL;
    int whole = 8 + (size_t)len == b->used && off == 0 && len == (uint32_t)f->block;
    if (whole && image_taking(f, b->block) == NULL &&
        (im = image_new(f, b->block, b->buf, b->cap, b->buf + 8)) != NULL) {
        b->buf = NULL;
        b->cap = b->used = 0;
        f->s1_big -= b->big;
        b->big = 0;
        memset(im->bits, 0xff, (size_t)f->block / 64 * 8);
        set_bits(im, (uint32_t)(f->block / 64 * 64), (uint32_t)f->block);
        im->dirty = (size_t)f->block;
        im->lo = 0;
        im->hi = (uint32_t)f->block;
        im->from[f->rank / 8] |= (unsigned char)(1u << (f->rank % 8));
    } else if ((im = mio_image_get(f, b->block)) != NULL) {
        mio_paint(f, im, b->buf, b->used, f->rank);
    } else { /* no memory for an image: the records one by one */
        size_t i = 0;
        while (i + 8 <= b->used) {
            memcpy(&off, b->buf + i, 4);
            memcpy(&len, b->buf + i + 4, 4);
            int rc = write_run(f, b->block * f->block + off, b->buf + i + 8, (int64_t)len);
            if (rc != MPI_SUCCESS)
                mio_note_error(f, rc);
            i += 8 + (size_t)len;
        }
        return;
    }
    if (!f->two_stage)
        mio_image_write(f, im);
    else if (im->dirty == (size_t)f->block)
        mio_thread_poke(); /* (it writes a full image at once: mio_write_full) */
}

/* Whether b's records, in the order written, cover its whole block (a rank's
 * own segment, a block at a time): then no other rank's bytes can be in it
 * unless the program wrote the same bytes from two ranks without a sync
 * between, which MPI leaves undefined. */
static int covers_block(const mio_file_t *f, const mio_pblock_t *b)
{
    if (b->bytes < (size_t)f->block)
        return 0;
    uint32_t to = 0;
    for (size_t i = 0; i + 8 <= b->used;) {
        uint32_t off, len;
        memcpy(&off, b->buf + i, 4);
        memcpy(&len, b->buf + i + 4, 4);
        if (off > to)
            return 0;
        if (off + len > to)
            to = off + len;
        i += 8 + (size_t)len;
    }
    return to >= (uint32_t)f->block;
}

static int kept(const mio_file_t *f, const mio_image_t *im, int r)
{
    (void)r;
    return im->block % f->size != f->rank;
}

int mio_write_kept(mio_file_t *f, int write)
{
    return images_picked(f, kept, 0, write);
}

void mio_write_held(mio_file_t *f)
{
    int two = f->two_stage;
    f->two_stage = 0; /* stage 1 written by this rank */
    mio_write_images(f, 0);
    mio_flush_stage1(f, 0);
    f->two_stage = two;
}

/* Stage-1 blocks the rank's writes have passed by two blocks go to their owners
 * once they hold MIO_PASS_MIN bytes or a quarter of the block (bound_only 3,
 * from mio_take): a rank
 * writing its part of each block in file order (BT-IO, interleaved cells) kept
 * every block in stage 1 until close, 26 MB a rank in btio --n 64 --steps 5,
 * all of it fresh memory (12,000 page faults a rank, about as long as the
 * writes took) and all of it sent, painted and written inside MPI_File_close.
 * Sent as the rank goes on, the buffers come back warm and the owners write
 * while the program still writes.  At least 64 KiB: a rank that visits every
 * block on each pass (a column at a time) sends each block seldom. */
#define MIO_PASS_MIN ((size_t)64 << 10)

/* A full block that will be kept in a file of mio_news_owners: its owner is
 * asked now, and the block stays in stage 1 until the answer is in (seen at
 * the next full block) or it leaves by another way (passed, over the bound, a
 * flush): the program does not wait for it.  Asked and answered at the keep,
 * the segment pattern ran 1.10x slower than where nothing is asked (the
 * owner's I/O thread may be asleep for up to 2 ms).  1 if b stays. */
static int ask_ahead(mio_file_t *f, const mio_pblock_t *b)
{
    int owner = (int)(b->block % f->size);
    if (!f->two_stage || owner == f->rank || !mio_news_owners(f))
        return 0;
    int i = mio_ask_of(f, b->block);
    if (i >= 0)
        return !mio_ask_answered(f, i);
    return covers_block(f, b) && mio_ask_post(f, owner, b->block);
}

/* Moves stage-1 blocks out: every one (bound_only 0), the fullest ones until
 * under a quarter of the cache (1), only full ones (2), or those passed (3).  One-stage: written
 * by this rank; two stages: to their owners (this rank's own blocks painted into
 * its images).  Returns 0 or -1 when a queue could not take a block. */
int mio_flush_stage1(mio_file_t *f, int bound_only)
{
    int rc = 0;
    for (;;) {
        mio_pblock_t *b = NULL;
        if (bound_only == 1) {
            if (f->s1_bytes <= mio_cache_half() / 2)
                break;
            for (mio_pblock_t *c = f->list; c; c = c->next)
                if (b == NULL || c->bytes > b->bytes)
                    b = c;
        } else if (bound_only == 2) {
            for (mio_pblock_t *c = f->list; c; c = c->next)
                if (c->bytes >= (size_t)f->block && !ask_ahead(f, c)) {
                    b = c;
                    break;
                }
        } else if (bound_only == 3) {
            for (mio_pblock_t *c = f->list; c; c = c->next)
                if (c->block + 2 <= f->pass_at &&
                    c->bytes >= (MIO_PASS_MIN < (size_t)f->block / 4 ? MIO_PASS_MIN
                                                                     : (size_t)f->block / 4)) {
                    b = c;
                    unblock_counter_add(&mio_stats.blocks_passed, 1);
                    break;
                }
        } else {
            b = f->list;
        }
        if (b == NULL) {
            if (bound_only == 0)
                mio_asks_finish(f); /* (blocks that left stage 1 otherwise) */
            break;
        }
        int owner = (int)(b->block % f->size);
        /* A block this rank wrote whole is written by it (its I/O thread), not
         * sent: its owner would gather nothing more, and the copy and the
         * message are saved; unless pieces of this rank sent to that owner
         * since the last flush may be older bytes of it (they must not land
         * after these).  Where the file's news leaves records at owners, the
         * owner may hold older bytes of it from any rank: it writes them
         * first, asked and answered (what it gathers of the block later is no
         * older than this rank's block: a rank told of these bytes is told
         * after the news flush, which writes this rank's kept blocks first,
         * mio_write_kept); the request goes after this rank's pieces in
         * flight to it, so those need not wait.  Before, no block was kept
         * there: each went to its owner, and the segment pattern ran 1.22x
         * (Open MPI) and 1.30x (MPICH) slower with UNBLOCK_MPIIO_VISIBLE=messages. */
        int news = mio_news_owners(f);
        int keep = f->two_stage && owner != f->rank && (news || f->sent[owner] == 0) &&
                   covers_block(f, b);
        int ask = news ? mio_ask_of(f, b->block) : -1;
        int fresh = ask >= 0 && f->asks[ask].heard == mio_heard_any();
        if (ask >= 0 && keep && fresh && bound_only != 0 && !mio_ask_answered(f, ask)) {
            /* Not waited for while the program writes: the block goes to its
             * owner after the ask, whose answer is taken later; the ask serves
             * no later block (this one's bytes are at the owner now). */
            keep = 0;
            f->asks[ask].block = -1;
        } else if (ask >= 0) {
            mio_ask_finish(f, ask);
        }
        if (keep && news && !fresh) { /* (news heard since: older bytes may have come) */
            if (f->nasks == MIO_ASKS)
                mio_asks_finish(f);
            keep = mio_ask_post(f, owner, b->block);
            if (keep) /* (asked, and answered now) */
                mio_ask_finish(f, f->nasks - 1);
        }
        if (keep)
            unblock_counter_add(&mio_stats.blocks_kept, 1);
        if (f->two_stage && owner != f->rank && !keep) {
            /* This rank's image of a block it kept whole before holds older
             * bytes than these: in the file first (the owner may write these
             * before this rank's I/O thread came to it). */
            for (mio_image_t *im = f->images; im; im = im ? im->next : f->images)
                if (im->block == b->block) {
                    if (!im->writing)
                        mio_image_write(f, im);
                    mio_wait_writes(f, NULL);
                    im = NULL; /* (the list changed: from its start again) */
                }
            if (!mio_send_block(f, b)) { /* (no memory for the message) */
                write_own(f, b);
                rc = -1;
            }
        } else {
            write_own(f, b);
        }
        mio_pblock_free(f, b);
    }
    return rc;
}
