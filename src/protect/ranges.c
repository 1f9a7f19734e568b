/* ranges.c — byte ranges of flattened datatypes: building, overlap, gather and
 * scatter.  See ranges.h. */
#include "protect/ranges.h"

#include <stdlib.h>
#include <string.h>

static int by_offset(const void *a, const void *b)
{
    const unblock_range_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

unblock_flat_t *unblock_flat_new(const unblock_range_t *r, uint32_t n, int64_t extent)
{
    unblock_flat_t *f = malloc(sizeof(*f) + 2 * (size_t)(n ? n : 1) * sizeof(unblock_range_t));
    if (f == NULL)
        return NULL;
    memset(f, 0, sizeof(*f));
    f->refs = 1;
    f->extent = extent;
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (r[i].len <= 0)
            continue;
        f->size += r[i].len;
        if (m && f->r[m - 1].off + f->r[m - 1].len == r[i].off)
            f->r[m - 1].len += r[i].len;
        else
            f->r[m++] = r[i];
    }
    f->n = m;
    /* The sorted copy: by address, overlapping and touching ranges merged. */
    unblock_range_t *s = f->r + m;
    memcpy(s, f->r, m * sizeof(*s));
    qsort(s, m, sizeof(*s), by_offset);
    uint32_t k = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (k && s[k - 1].off + s[k - 1].len >= s[i].off) {
            int64_t end = s[i].off + s[i].len;
            if (end > s[k - 1].off + s[k - 1].len)
                s[k - 1].len = end - s[k - 1].off;
        } else {
            s[k++] = s[i];
        }
    }
    f->nsorted = k;
    if (k) {
        f->lo = s[0].off;
        f->hi = s[k - 1].off + s[k - 1].len;
    }
    f->interleaved = extent < f->hi - f->lo || extent <= 0;
    return f;
}

/* Flat types whose last reference went, waiting to be freed (a lock-free stack
 * through `next`: releases may happen in the fault handler). */
static unblock_flat_t *graveyard;

void unblock_flat_hold(unblock_flat_t *f)
{
    __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

void unblock_flat_release(unblock_flat_t *f)
{
    if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    f->next = __atomic_load_n(&graveyard, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&graveyard, &f->next, f, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
        ;
}

void unblock_flat_reap(void)
{
    if (__atomic_load_n(&graveyard, __ATOMIC_RELAXED) == NULL)
        return;
    unblock_flat_t *f = __atomic_exchange_n(&graveyard, NULL, __ATOMIC_ACQUIRE);
    while (f) {
        unblock_flat_t *next = f->next;
        free(f);
        f = next;
    }
}

size_t unblock_bytes_size(const unblock_bytes_t *b)
{
    return b->flat ? (size_t)b->flat->size * b->count : b->count;
}

static inline uintptr_t at(uintptr_t base, int64_t off)
{
    return (uintptr_t)((intptr_t)base + (intptr_t)off);
}

void unblock_bytes_span(const unblock_bytes_t *b, uintptr_t *lo, uintptr_t *hi)
{
    const unblock_flat_t *f = b->flat;
    if (f == NULL) {
        *lo = b->base;
        *hi = b->base + b->count;
        return;
    }
    if (b->count == 0 || f->nsorted == 0) {
        *lo = *hi = b->base;
        return;
    }
    int64_t last = (int64_t)(b->count - 1) * f->extent;
    int64_t l = f->lo + (last < 0 ? last : 0), h = f->hi + (last > 0 ? last : 0);
    *lo = at(b->base, l);
    *hi = at(b->base, h);
}

/* Walks a message's bytes in increasing address order, from the first range that
 * ends after `from`: one range per step.  Interleaving instances give one range,
 * the whole span. */
typedef struct {
    const unblock_bytes_t *b;
    size_t inst;
    uint32_t j;
    int done;
    uintptr_t lo, hi; /* the current range */
} walk_t;

static void walk_load(walk_t *w)
{
    const unblock_flat_t *f = w->b->flat;
    if (w->inst >= w->b->count) {
        w->done = 1;
        return;
    }
    uintptr_t base = at(w->b->base, (int64_t)w->inst * f->extent);
    const unblock_range_t *s = &f->r[f->n + w->j];
    w->lo = at(base, s->off);
    w->hi = w->lo + (uintptr_t)s->len;
}

static void walk_start(walk_t *w, const unblock_bytes_t *b, uintptr_t from)
{
    w->b = b;
    w->inst = 0;
    w->j = 0;
    w->done = 0;
    const unblock_flat_t *f = b->flat;
    if (f == NULL || f->interleaved || f->nsorted == 0) {
        unblock_bytes_span(b, &w->lo, &w->hi);
        w->done = w->lo == w->hi;
        w->inst = b->count; /* one step only */
        return;
    }
    /* Skip the instances that end before `from`. */
    intptr_t d = (intptr_t)from - (intptr_t)at(b->base, f->hi);
    if (d >= 0)
        w->inst = (size_t)(d / f->extent) + 1;
    walk_load(w);
}

static void walk_next(walk_t *w)
{
    const unblock_flat_t *f = w->b->flat;
    if (f == NULL || f->interleaved || f->nsorted == 0) {
        w->done = 1;
        return;
    }
    if (++w->j == f->nsorted) {
        w->j = 0;
        w->inst++;
    }
    walk_load(w);
}

int unblock_bytes_overlap(const unblock_bytes_t *a, const unblock_bytes_t *b)
{
    uintptr_t alo, ahi, blo, bhi;
    unblock_bytes_span(a, &alo, &ahi);
    unblock_bytes_span(b, &blo, &bhi);
    if (!(alo < bhi && blo < ahi))
        return 0;
    uintptr_t from = alo > blo ? alo : blo, to = ahi < bhi ? ahi : bhi;
    walk_t x, y;
    walk_start(&x, a, from);
    walk_start(&y, b, from);
    while (!x.done && !y.done && x.lo < to && y.lo < to) {
        if (x.hi <= y.lo)
            walk_next(&x);
        else if (y.hi <= x.lo)
            walk_next(&y);
        else
            return 1;
    }
    return 0;
}

size_t unblock_bytes_gather(const unblock_bytes_t *b, void *dst)
{
    const unblock_flat_t *f = b->flat;
    char *d = dst;
    if (f == NULL) {
        memcpy(d, (const void *)b->base, b->count);
        return b->count;
    }
    for (size_t i = 0; i < b->count; i++) {
        uintptr_t base = at(b->base, (int64_t)i * f->extent);
        for (uint32_t j = 0; j < f->n; j++) {
            memcpy(d, (const void *)at(base, f->r[j].off), (size_t)f->r[j].len);
            d += f->r[j].len;
        }
    }
    return (size_t)(d - (char *)dst);
}

int unblock_bytes_scatter_by(const unblock_bytes_t *b, const void *src, size_t n,
                             unblock_put_fn put)
{
    const unblock_flat_t *f = b->flat;
    const char *s = src;
    if (f == NULL)
        return put(b->base, s, n < b->count ? n : b->count);
    for (size_t i = 0; i < b->count && n; i++) {
        uintptr_t base = at(b->base, (int64_t)i * f->extent);
        for (uint32_t j = 0; j < f->n && n; j++) {
            size_t len = (size_t)f->r[j].len < n ? (size_t)f->r[j].len : n;
            if (put(at(base, f->r[j].off), s, len) != 0)
                return -1;
            s += len;
            n -= len;
        }
    }
    return 0;
}

static int put_memcpy(uintptr_t to, const char *from, size_t n)
{
    memcpy((void *)to, from, n);
    return 0;
}

void unblock_bytes_scatter(const unblock_bytes_t *b, const void *src, size_t n)
{
    unblock_bytes_scatter_by(b, src, n, put_memcpy);
}
