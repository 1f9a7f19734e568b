/* overlay.c — a rank's reads of its own buffered writes (docs/mpiio.md,
 * own.c: mio_read_served): the bytes of a file range this rank holds, laid
 * over what MPI read, from its images and then its stage-1 records in program
 * order, so a later write of the same bytes wins.  A block of many records is
 * read through an index of them sorted by offset (HDF5 reading back what a rank
 * wrote met thousands a block), built again after writes to it only a few
 * times (mio_overlay_cheap).  Under mio_lock. */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"

#include <stdlib.h>
#include <string.h>

/* The index of a stage-1 block's records, sorted by offset in the block. */
typedef struct mio_recix {
    uint32_t off, len;
    size_t pos; /* where the record is in the block's buffer (program order) */
} mio_recix_t;

static int recix_cmp(const void *x, const void *y)
{
    const mio_recix_t *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

static int pos_cmp(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return a < b ? -1 : a > b;
}

static int recix_build(mio_pblock_t *b)
{
    mio_recix_t *ix = realloc(b->ix, (b->nrec ? b->nrec : 1) * sizeof *ix);
    if (ix == NULL)
        return -1;
    b->ix = ix;
    size_t n = 0;
    uint32_t maxlen = 0;
    for (size_t i = 0; i + 8 <= b->used && n < b->nrec; n++) {
        memcpy(&ix[n].off, b->buf + i, 4);
        memcpy(&ix[n].len, b->buf + i + 4, 4);
        ix[n].pos = i;
        if (ix[n].len > maxlen)
            maxlen = ix[n].len;
        i += 8 + (size_t)ix[n].len;
    }
    qsort(ix, n, sizeof *ix, recix_cmp);
    b->ix_used = b->used;
    b->ix_maxlen = maxlen;
    b->ix_builds++;
    return 0;
}

int mio_overlay_cheap(mio_file_t *f, int64_t lo, int64_t hi)
{
    for (int64_t blk = lo / f->block; blk <= (hi - 1) / f->block; blk++) {
        mio_pblock_t *b = mio_pblock_of(f, blk);
        if (b && b->nrec > MIO_SERVE_LINEAR && b->ix_used != b->used &&
            b->ix_builds >= MIO_SERVE_BUILDS)
            return 0;
    }
    return 1;
}

/* The records of b meeting [s, e) (offsets in the block), in program order: their
 * positions in *out (malloc'ed), their count, or -1 if memory was short. */
static long recix_find(mio_pblock_t *b, uint32_t s, uint32_t e, size_t **out)
{
    if (b->ix_used != b->used && recix_build(b))
        return -1;
    size_t n = b->nrec, first = 0, hi = n;
    uint32_t from = s > b->ix_maxlen ? s - b->ix_maxlen : 0;
    while (first < hi) { /* the first record starting at or after `from` */
        size_t mid = (first + hi) / 2;
        if (b->ix[mid].off < from)
            first = mid + 1;
        else
            hi = mid;
    }
    size_t k = 0, cap = 16;
    size_t *pos = malloc(cap * sizeof *pos);
    if (pos == NULL)
        return -1;
    for (size_t i = first; i < n && b->ix[i].off < e; i++) {
        if (b->ix[i].off + b->ix[i].len <= s)
            continue;
        if (k == cap) {
            size_t *p = realloc(pos, 2 * cap * sizeof *pos);
            if (p == NULL) {
                free(pos);
                return -1;
            }
            pos = p, cap *= 2;
        }
        pos[k++] = b->ix[i].pos;
    }
    qsort(pos, k, sizeof *pos, pos_cmp);
    *out = pos;
    return (long)k;
}

/* One record of b (at buffer position i) laid over [lo, hi) of the file. */
static int64_t overlay_record(const mio_pblock_t *b, int64_t base, size_t i, int64_t lo,
                              int64_t hi, char *dst, int64_t end)
{
    uint32_t off, len;
    memcpy(&off, b->buf + i, 4);
    memcpy(&len, b->buf + i + 4, 4);
    int64_t s = base + off, e = s + len;
    if (s < lo)
        s = lo;
    if (e > hi)
        e = hi;
    if (s < e) {
        if (dst)
            memcpy(dst + (s - lo), b->buf + i + 8 + (s - base - off), (size_t)(e - s));
        if (e > end)
            end = e;
    }
    return end;
}

int64_t mio_overlay(mio_file_t *f, int64_t lo, int64_t hi, char *dst)
{
    int64_t end = lo;
    for (int64_t blk = lo / f->block; blk <= (hi - 1) / f->block; blk++) {
        int64_t base = blk * f->block;
        /* the block's images first, oldest first (one being written, then the
         * newer one), then its stage-1 records in order */
        for (mio_image_t *im = mio_image_after(f, blk, 0); im;
             im = mio_image_after(f, blk, im->seq)) {
            uint32_t s = lo > base + im->lo ? (uint32_t)(lo - base) : im->lo, e;
            uint32_t top = hi < base + im->hi ? (uint32_t)(hi - base) : im->hi;
            while (s < top && mio_next_run(im, &s, &e, top)) {
                if (dst)
                    memcpy(dst + (base + s - lo), im->data + s, e - s);
                if (base + e > end)
                    end = base + e;
                s = e;
            }
        }
        mio_pblock_t *b = mio_pblock_of(f, blk);
        if (b == NULL)
            continue;
        if (b->nrec <= MIO_SERVE_LINEAR) {
            for (size_t i = 0; i + 8 <= b->used;) {
                uint32_t len;
                memcpy(&len, b->buf + i + 4, 4);
                end = overlay_record(b, base, i, lo, hi, dst, end);
                i += 8 + (size_t)len;
            }
            continue;
        }
        size_t *pos = NULL;
        uint32_t s = lo > base ? (uint32_t)(lo - base) : 0;
        uint32_t e = hi < base + f->block ? (uint32_t)(hi - base) : (uint32_t)f->block;
        long k = recix_find(b, s, e, &pos);
        if (k < 0)
            return -1;
        for (long j = 0; j < k; j++)
            end = overlay_record(b, base, pos[j], lo, hi, dst, end);
        free(pos);
    }
    return end;
}
