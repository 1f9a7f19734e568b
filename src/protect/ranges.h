/* ranges.h — the bytes a message occupies in the program's memory.
 *
 * A datatype that is not contiguous (a column of a grid, a struct with gaps, a
 * subarray) is flattened once (src/comm/datatype.c) into the byte ranges of one
 * instance, in the order the message carries them (the typemap's order, adjacent
 * ranges merged), relative to the buffer.  `count` instances at `base` occupy those
 * ranges shifted by i * extent.  The same bytes sorted by address answer "do two
 * messages share a byte" in one merge-like pass.
 *
 * Nothing here knows MPI, and everything but unblock_flat_new is
 * async-signal-safe: the fault handler scatters a received message through it. */
#ifndef UNBLOCK_RANGES_H
#define UNBLOCK_RANGES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t off, len;
} unblock_range_t;

typedef struct unblock_flat {
    uint32_t refs;      /* the datatype cache's reference, and one per operation */
    uint32_t n;         /* ranges of one instance in message order: r[0, n) */
    uint32_t nsorted;   /* the same bytes by address, merged: r[n, n + nsorted) */
    int interleaved;    /* instances interleave (extent < hi - lo): overlap tests
                           then use the whole span, which is conservative */
    int64_t size;       /* bytes of one instance */
    int64_t extent;     /* distance from one instance to the next */
    int64_t lo, hi;     /* one instance's bytes lie in [lo, hi) */
    struct unblock_flat *next; /* owner's list (datatype.c) */
    unblock_range_t r[];
} unblock_flat_t;

/* A message's bytes: `count` instances of `flat` at `base`; with `flat` NULL, the
 * contiguous bytes [base, base + count). */
typedef struct {
    uintptr_t base;
    const unblock_flat_t *flat;
    size_t count;
} unblock_bytes_t;

/* A flat type from the ranges of one instance in message order (merged where one
 * ends where the next starts; zero-length ranges dropped).  malloc'd, refs = 1.
 * NULL if memory is short. */
unblock_flat_t *unblock_flat_new(const unblock_range_t *r, uint32_t n, int64_t extent);

/* References: an operation holds one while it is in flight.  The last release
 * (possibly in the fault handler) only queues the memory; unblock_flat_reap, in
 * a normal context, frees what was queued. */
void unblock_flat_hold(unblock_flat_t *f);
void unblock_flat_release(unblock_flat_t *f);
void unblock_flat_reap(void);

/* The bytes of the message, first to last. */
size_t unblock_bytes_size(const unblock_bytes_t *b);

/* The smallest [lo, hi) holding every byte of the message (empty: lo == hi). */
void unblock_bytes_span(const unblock_bytes_t *b, uintptr_t *lo, uintptr_t *hi);

/* Whether two messages share at least one byte (conservative for interleaving
 * instances: their whole span counts). */
int unblock_bytes_overlap(const unblock_bytes_t *a, const unblock_bytes_t *b);

/* Copies the message's bytes, in message order, to `dst` (MPI_Pack's native
 * format).  Returns the bytes copied. */
size_t unblock_bytes_gather(const unblock_bytes_t *b, void *dst);

/* Copies the first `n` bytes of `src` into the message's bytes, in message order
 * (a short message fills only what arrived, as MPI does). */
void unblock_bytes_scatter(const unblock_bytes_t *b, const void *src, size_t n);

/* The same with `put` writing each piece (0, or -1 to stop); returns the first
 * failure, else 0. */
typedef int (*unblock_put_fn)(uintptr_t to, const char *from, size_t n);
int unblock_bytes_scatter_by(const unblock_bytes_t *b, const void *src, size_t n,
                             unblock_put_fn put);

#endif
