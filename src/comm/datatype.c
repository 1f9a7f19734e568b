/* datatype.c — the program's datatypes: which are known, and their flattening.
 *
 * See datatype.h for what is cached and when it is forgotten.  A derived type is
 * flattened from its own constructor (MPI_Type_get_envelope/get_contents, down to
 * predefined types), in typemap order, once, at its first converted use.  Types
 * whose constructor is not handled here (darray, and anything newer) are
 * flattened by asking MPI_Pack where each byte comes from.  Every flattening is
 * checked against MPI's own size and bounds of the type; one that disagrees is
 * not used (the calls run as the original ones). */
#define _GNU_SOURCE
#include "comm/datatype.h"
#include "comm/mpi_wrap.h"
#include "core/log.h"

#include <stdlib.h>
#include <string.h>

#define RANGES_MAX (1u << 20)    /* ranges of one instance, once merged */
#define WORK_MAX (1ull << 24)     /* ranges placed while flattening one type */
#define PROBE_MAX ((MPI_Aint)64 << 20) /* bytes a type may span to be probed */

typedef int (*envelope_t)(MPI_Datatype, int *, int *, int *, int *);
typedef int (*contents_t)(MPI_Datatype, int, int, int, int *, MPI_Aint *, MPI_Datatype *);
typedef int (*extent_t)(MPI_Datatype, MPI_Aint *, MPI_Aint *);
typedef int (*size_t_t)(MPI_Datatype, int *);
typedef int (*tfree_t)(MPI_Datatype *);
typedef int (*pack_t)(const void *, int, MPI_Datatype, void *, int, int *, MPI_Comm);
typedef int (*struct_t)(int, const int[], const MPI_Aint[], const MPI_Datatype[], MPI_Datatype *);
typedef int (*resized_t)(MPI_Datatype, MPI_Aint, MPI_Aint, MPI_Datatype *);

static struct {
    int ready;
    envelope_t envelope;
    contents_t contents;
    extent_t extent, true_extent;
    size_t_t size;
    tfree_t type_free, commit;
    pack_t pack;
    struct_t create_struct;
    resized_t resized;
    MPI_Comm world;
    MPI_Datatype chr, integer, dbl;
} mpi;

static void resolve(void)
{
    if (mpi.ready)
        return;
    mpi.envelope = (envelope_t)UNBLOCK_PMPI(MPI_Type_get_envelope);
    mpi.contents = (contents_t)UNBLOCK_PMPI(MPI_Type_get_contents);
    mpi.extent = (extent_t)UNBLOCK_PMPI(MPI_Type_get_extent);
    mpi.true_extent = (extent_t)UNBLOCK_PMPI(MPI_Type_get_true_extent);
    mpi.size = (size_t_t)UNBLOCK_PMPI(MPI_Type_size);
    mpi.type_free = (tfree_t)UNBLOCK_PMPI(MPI_Type_free);
    mpi.commit = (tfree_t)UNBLOCK_PMPI(MPI_Type_commit);
    mpi.pack = (pack_t)UNBLOCK_PMPI(MPI_Pack);
    mpi.create_struct = (struct_t)UNBLOCK_PMPI(MPI_Type_create_struct);
    mpi.resized = (resized_t)UNBLOCK_PMPI(MPI_Type_create_resized);
    mpi.world = UNBLOCK_MPI_HANDLE(MPI_Comm, "ompi_mpi_comm_world", MPI_COMM_WORLD);
    mpi.chr = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_char", MPI_CHAR);
    mpi.integer = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_int", MPI_INT);
    mpi.dbl = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_double", MPI_DOUBLE);
    __atomic_store_n(&mpi.ready, 1, __ATOMIC_RELEASE);
}

/* ---- flattening ---- */

typedef struct {
    unblock_range_t *r;
    uint32_t n, cap;
    uint64_t work;
    int failed;
    int leaves;        /* predefined types met: 0, 1 (leaf) or 2 (several kinds) */
    MPI_Datatype leaf;
} rlist_t;

/* A child's predefined types count as the parent's. */
static void leaves_of(rlist_t *out, const rlist_t *child)
{
    if (child->leaves == 0 || out->leaves == 2)
        return;
    if (child->leaves == 2 || (out->leaves == 1 && out->leaf != child->leaf))
        out->leaves = 2;
    else {
        out->leaves = 1;
        out->leaf = child->leaf;
    }
}

static void add(rlist_t *l, int64_t off, int64_t len)
{
    if (l->failed || len <= 0)
        return;
    if (++l->work > WORK_MAX) {
        l->failed = 1;
        return;
    }
    if (l->n && l->r[l->n - 1].off + l->r[l->n - 1].len == off) {
        l->r[l->n - 1].len += len;
        return;
    }
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 16;
        unblock_range_t *r = cap <= RANGES_MAX ? realloc(l->r, cap * sizeof(*r)) : NULL;
        if (r == NULL) {
            l->failed = 1;
            return;
        }
        l->r = r;
        l->cap = cap;
    }
    l->r[l->n++] = (unblock_range_t){ off, len };
}

/* One instance of `child` placed at `shift`. */
static void put(rlist_t *out, const rlist_t *child, int64_t shift)
{
    leaves_of(out, child);
    for (uint32_t i = 0; i < child->n && !out->failed; i++)
        add(out, child->r[i].off + shift, child->r[i].len);
}

/* `count` instances of `child` (extent `ext`) one after another from `shift`:
 * a block of a constructor.  One range where the child is dense (one range
 * filling its extent from 0: a predefined type, or a type of them without
 * holes), so that the work is per block, not per element (a subarray of 16 Mi
 * doubles took 16 Mi puts, and was given up at WORK_MAX; PnetCDF sets a view
 * of such a type for each put: put, add and flatten were 3.5 % of
 * tst_multi_redefine's samples). */
static void put_block(rlist_t *out, const rlist_t *child, int64_t shift, int64_t count,
                      int64_t ext)
{
    if (count <= 0)
        return;
    if (child->n == 1 && child->r[0].off == 0 && child->r[0].len == ext) {
        leaves_of(out, child);
        add(out, shift, count * ext);
        return;
    }
    for (int64_t j = 0; j < count && !out->failed; j++)
        put(out, child, shift + j * ext);
}

static int is_named(int combiner)
{
    return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
           combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

static int flatten(MPI_Datatype t, rlist_t *out, int depth);

/* Where each byte of one instance comes from, asked of MPI_Pack: pass k writes
 * byte k of every offset into the buffer and reads it back from the packed
 * stream.  For constructors not handled below (darray). */
static int probe(MPI_Datatype t, rlist_t *out)
{
    MPI_Aint tlb, text;
    int size = 0, pos;
    if (mpi.true_extent(t, &tlb, &text) != MPI_SUCCESS || mpi.size(t, &size) != MPI_SUCCESS ||
        size <= 0 || text <= 0 || text > PROBE_MAX)
        return -1;
    unsigned char *buf = malloc((size_t)text), *packed = malloc((size_t)size);
    uint32_t *where = calloc((size_t)size, sizeof(uint32_t));
    int rc = buf && packed && where ? 0 : -1;
    for (int k = 0; rc == 0 && k < 4 && (k == 0 || (text >> (8 * k)) > 0); k++) {
        for (MPI_Aint o = 0; o < text; o++)
            buf[o] = (unsigned char)(o >> (8 * k));
        pos = 0;
        if (mpi.pack(buf - tlb, 1, t, packed, size, &pos, mpi.world) != MPI_SUCCESS || pos != size)
            rc = -1;
        for (int i = 0; rc == 0 && i < size; i++)
            where[i] |= (uint32_t)packed[i] << (8 * k);
    }
    for (int i = 0; rc == 0 && i < size; i++)
        add(out, tlb + (int64_t)where[i], 1);
    out->leaves = 2; /* unknown: as if mixed */
    free(buf);
    free(packed);
    free(where);
    return rc;
}

/* The ranges of one instance of a type built by `combiner` from these contents. */
static int construct(int combiner, const int *in, const MPI_Aint *ad, const MPI_Datatype *ty,
                     int nd, rlist_t *out, int depth)
{
    if (combiner == MPI_COMBINER_DUP || combiner == MPI_COMBINER_RESIZED)
        return flatten(ty[0], out, depth + 1);
    if (combiner == MPI_COMBINER_STRUCT) {
        for (int i = 0; i < in[0] && !out->failed; i++) {
            rlist_t child = { 0 };
            MPI_Aint lb, ext;
            if (flatten(ty[i], &child, depth + 1) != 0 ||
                mpi.extent(ty[i], &lb, &ext) != MPI_SUCCESS) {
                free(child.r);
                return -1;
            }
            put_block(out, &child, ad[i], in[1 + i], ext);
            free(child.r);
        }
        return out->failed ? -1 : 0;
    }
    if (nd < 1)
        return -1;
    rlist_t child = { 0 };
    MPI_Aint lb, e;
    if (flatten(ty[0], &child, depth + 1) != 0 || mpi.extent(ty[0], &lb, &e) != MPI_SUCCESS) {
        free(child.r);
        return -1;
    }
    int64_t ext = e;
    int rc = 0;
    switch (combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        put_block(out, &child, 0, in[0], ext);
        break;
    case MPI_COMBINER_VECTOR:
        for (int i = 0; i < in[0]; i++)
            put_block(out, &child, (int64_t)i * in[2] * ext, in[1], ext);
        break;
    case MPI_COMBINER_HVECTOR:
        for (int i = 0; i < in[0]; i++)
            put_block(out, &child, (int64_t)i * ad[0], in[1], ext);
        break;
    case MPI_COMBINER_INDEXED:
        for (int i = 0; i < in[0]; i++)
            put_block(out, &child, (int64_t)in[1 + in[0] + i] * ext, in[1 + i], ext);
        break;
    case MPI_COMBINER_HINDEXED:
        for (int i = 0; i < in[0]; i++)
            put_block(out, &child, ad[i], in[1 + i], ext);
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (int i = 0; i < in[0]; i++)
            put_block(out, &child, (int64_t)in[2 + i] * ext, in[1], ext);
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (int i = 0; i < in[0]; i++)
            put_block(out, &child, ad[i], in[1], ext);
        break;
    case MPI_COMBINER_SUBARRAY: {
        /* Elements in array order (the last dimension fastest in C order, the
         * first in Fortran order), each at its place in the whole array. */
        int n = in[0];
        const int *sizes = in + 1, *subs = in + 1 + n, *starts = in + 1 + 2 * n;
        int c_order = in[1 + 3 * n] == MPI_ORDER_C;
        int64_t stride[32], idx[32] = { 0 }, total = 1;
        if (n < 1 || n > 32) {
            rc = -1;
            break;
        }
        for (int d = 0; d < n; d++) {
            int64_t s = 1;
            for (int k = c_order ? d + 1 : 0; k < (c_order ? n : d); k++)
                s *= sizes[k];
            stride[d] = s * ext;
            total *= subs[d];
        }
        /* a row (the fastest dimension's run) a block */
        int fast = c_order ? n - 1 : 0;
        for (int64_t k = 0; k < total && !out->failed; k += subs[fast]) {
            int64_t off = 0;
            for (int d = 0; d < n; d++)
                off += (starts[d] + idx[d]) * stride[d];
            put_block(out, &child, off, subs[fast], ext);
            for (int i = 1; i < n; i++) { /* the next row's index, fastest first */
                int d = c_order ? n - 1 - i : i;
                if (++idx[d] < subs[d])
                    break;
                idx[d] = 0;
            }
        }
        break;
    }
    default:
        rc = -1;
    }
    free(child.r);
    return rc || out->failed ? -1 : 0;
}

static int flatten(MPI_Datatype t, rlist_t *out, int depth)
{
    int ni, na, nd, combiner;
    if (depth > 32 || mpi.envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return -1;
    if (is_named(combiner)) {
        /* A predefined type: its bytes must be dense (MPI_SHORT_INT is not). */
        MPI_Aint tlb, text;
        int size = 0;
        if (mpi.true_extent(t, &tlb, &text) != MPI_SUCCESS || mpi.size(t, &size) != MPI_SUCCESS ||
            (MPI_Aint)size != text)
            return -1;
        rlist_t me = { .leaves = 1, .leaf = t };
        leaves_of(out, &me);
        add(out, tlb, size);
        return out->failed ? -1 : 0;
    }
    if (combiner != MPI_COMBINER_DUP && combiner != MPI_COMBINER_CONTIGUOUS &&
        combiner != MPI_COMBINER_VECTOR && combiner != MPI_COMBINER_HVECTOR &&
        combiner != MPI_COMBINER_INDEXED && combiner != MPI_COMBINER_HINDEXED &&
        combiner != MPI_COMBINER_INDEXED_BLOCK && combiner != MPI_COMBINER_HINDEXED_BLOCK &&
        combiner != MPI_COMBINER_STRUCT && combiner != MPI_COMBINER_SUBARRAY &&
        combiner != MPI_COMBINER_RESIZED)
        return probe(t, out);
    int *in = malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *ad = malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1));
    int rc = -1;
    if (in && ad && ty && mpi.contents(t, ni, na, nd, in, ad, ty) == MPI_SUCCESS) {
        rc = construct(combiner, in, ad, ty, nd, out, depth);
        /* get_contents hands out new references to derived types. */
        for (int i = 0; i < nd; i++) {
            int a, b, c, comb;
            if (mpi.envelope(ty[i], &a, &b, &c, &comb) == MPI_SUCCESS && !is_named(comb))
                mpi.type_free(&ty[i]);
        }
    }
    free(in);
    free(ad);
    free(ty);
    return rc;
}

/* Whether the ranges of a flattened instance follow each other in memory. */
static int in_memory_order(const rlist_t *l)
{
    int64_t end = 0;
    int started = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (l->r[i].len <= 0)
            continue;
        if (started && l->r[i].off != end)
            return 0;
        end = l->r[i].off + l->r[i].len;
        started = 1;
    }
    return 1;
}

/* What a converted call needs of `t` (the handle is known valid). */
static void describe(MPI_Datatype t, unblock_dt_t *d)
{
    MPI_Aint tlb, text, lb, ext;
    int size = 0;
    memset(d, 0, sizeof(*d));
    if (mpi.true_extent(t, &tlb, &text) != MPI_SUCCESS || mpi.extent(t, &lb, &ext) != MPI_SUCCESS ||
        mpi.size(t, &size) != MPI_SUCCESS || size <= 0)
        return;
    d->lb = tlb;
    d->size = size;
    rlist_t l = { 0 };
    int flat = 1; /* flatten's result: 0 flattened, -1 not, 1 not asked yet */
    if (text == size && ext == size) {
        /* Dense, but a derived type may visit its bytes out of memory order (an
         * hindexed type whose blocks go backwards: PnetCDF's transposed varm
         * writes).  MPI-IO write-behind takes a write's bytes in typemap order,
         * so such a type is flattened below: as contiguous, PnetCDF 1.15's
         * test_bput wrote its columns as rows. */
        int ni, na, nd, comb;
        if (mpi.envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS && is_named(comb)) {
            d->contiguous = 1;
            return;
        }
        flat = flatten(t, &l, 0);
        if (flat == 0 && in_memory_order(&l)) {
            d->contiguous = 1;
            free(l.r);
            return;
        }
    }
    if (!unblock_dt_pack_matches()) {
        free(l.r);
        return;
    }
    if (flat > 0)
        flat = flatten(t, &l, 0);
    if (flat == 0) {
        unblock_flat_t *f = unblock_flat_new(l.r, l.n, ext);
        /* Checked against MPI's own view of the type. */
        if (f && f->size == size && f->lo == tlb && f->hi == tlb + text) {
            unblock_debug("datatype %#lx: %u ranges, %d bytes in [%ld, %ld), extent %ld",
                          (unsigned long)(uintptr_t)t, f->n, size, (long)tlb, (long)(tlb + text),
                          (long)ext);
            d->flat = f;
            /* MPICH 4.0 cannot receive a byte stream into a type of several
             * predefined types once the message is pipelined (a chunk boundary
             * inside an element: "Message truncated"), so there only types of
             * one predefined type are sent packed. */
#if defined(OPEN_MPI)
            d->packed_ok = 1;
#else
            d->packed_ok = l.leaves == 1;
#endif
            unblock_counter_add(&unblock_stats.comm_types_flattened, 1);
        } else {
            unblock_debug("datatype %#lx: flattening disagrees with MPI (size %ld of %d, "
                          "bounds [%ld, %ld) of [%ld, %ld)); its calls run unconverted",
                          (unsigned long)(uintptr_t)t, f ? (long)f->size : -1L, size,
                          f ? (long)f->lo : 0L, f ? (long)f->hi : 0L, (long)tlb,
                          (long)(tlb + text));
            free(f);
        }
    }
    free(l.r);
}

/* ---- the cache: handle -> what we know ---- */

enum { KNOWN = 1, /* committed by the program, not flattened yet */ READY };

typedef struct entry {
    MPI_Datatype type;
    int state;
    unblock_dt_t info;
    struct entry *next;
} entry_t;

#define BUCKETS 256
static entry_t *buckets[BUCKETS];
static int lock_word;
/* Each thread's last lookup of a type with no flat form (the predefined ones and
 * contiguous ones), valid while cache_gen has not moved: store and forget move
 * it.  Most calls of a program name the type of the call before; the lock and
 * the search were the largest share of unblock's own time in an 8-byte
 * ping-pong. */
uint32_t unblock_dt_cache_gen = 1;
#define cache_gen unblock_dt_cache_gen
unblock_dt_size_t unblock_dt_sizes[UNBLOCK_DT_SIZES];

/* (locked) e holds key at v (generation << 32 | size): the second word cleared,
 * the key, then the second word, as unblock_dt_entry_size reads them. */
static void entry_store(unblock_dt_size_t *e, uintptr_t key, uint64_t v)
{
    __atomic_store_n(&e->gen_size, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&e->handle, key, __ATOMIC_RELEASE);
    __atomic_store_n(&e->gen_size, v, __ATOMIC_RELEASE);
}

/* (locked) A contiguous type described: the fast path may take its size. */
static void note_size(MPI_Datatype t, const unblock_dt_t *d, uint32_t gen)
{
    if (!d->contiguous || d->flat || d->lb != 0 || d->size <= 0 || d->size > (MPI_Aint)UINT32_MAX)
        return;
    unblock_dt_size_t *e = &unblock_dt_sizes[unblock_dt_size_slot(t)];
    uint64_t v = (uint64_t)gen << 32 | (uint64_t)d->size;
    if (__atomic_load_n(&e->handle, __ATOMIC_RELAXED) == (uintptr_t)t &&
        __atomic_load_n(&e->gen_size, __ATOMIC_RELAXED) == v)
        return;
    entry_store(e, (uintptr_t)t, v);
}
static __thread MPI_Datatype last_type;
static __thread unblock_dt_t last_info;
static __thread uint32_t last_gen;

static void lock(void)
{
    unblock_spin_lock(&lock_word);
}

static void unlock(void)
{
    unblock_spin_unlock(&lock_word);
}

unblock_dt_size_t unblock_dt_fsizes[UNBLOCK_DT_SIZES];

void unblock_dt_note_fortran(MPI_Fint f, MPI_Datatype t)
{
    lock();
    const unblock_dt_size_t *c = &unblock_dt_sizes[unblock_dt_size_slot(t)];
    uint64_t v = __atomic_load_n(&c->gen_size, __ATOMIC_RELAXED);
    if (__atomic_load_n(&c->handle, __ATOMIC_RELAXED) == (uintptr_t)t &&
        (v >> 32) == __atomic_load_n(&cache_gen, __ATOMIC_RELAXED) && (uint32_t)v != 0)
        entry_store(unblock_dt_fentry(f), unblock_dt_fkey(f), v);
    unlock();
}

static unsigned bucket_of(MPI_Datatype t)
{
    uint64_t h = (uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 56) % BUCKETS;
}

/* Under the lock. */
static entry_t **find(MPI_Datatype t)
{
    entry_t **p = &buckets[bucket_of(t)];
    while (*p && (*p)->type != t)
        p = &(*p)->next;
    return p;
}

static void drop(entry_t *e)
{
    if (e->info.flat)
        unblock_flat_release(e->info.flat);
    free(e);
}

/* Sets the entry of `t` (replacing any). */
static void store(MPI_Datatype t, int state, const unblock_dt_t *info)
{
    entry_t *e = malloc(sizeof(*e)), *old;
    if (e == NULL)
        return;
    e->type = t;
    e->state = state;
    memset(&e->info, 0, sizeof(e->info));
    if (info)
        e->info = *info;
    lock();
    __atomic_add_fetch(&cache_gen, 1, __ATOMIC_RELEASE);
    entry_t **p = find(t);
    old = *p;
    e->next = old ? old->next : NULL;
    *p = e;
    unlock();
    if (old)
        drop(old);
}

uint64_t unblock_dt_generation;

static void forget(MPI_Datatype t)
{
    __atomic_add_fetch(&unblock_dt_generation, 1, __ATOMIC_RELEASE);
    lock();
    __atomic_add_fetch(&cache_gen, 1, __ATOMIC_RELEASE);
    entry_t **p = find(t), *e = *p;
    if (e)
        *p = e->next;
    unlock();
    if (e)
        drop(e);
    unblock_flat_reap();
}

int unblock_dt_known(MPI_Datatype t)
{
    lock();
    int known = *find(t) != NULL;
    unlock();
    return known;
}

int unblock_dt_lookup(MPI_Datatype t, unblock_dt_t *out)
{
    uint32_t gen = __atomic_load_n(&cache_gen, __ATOMIC_ACQUIRE);
    if (last_gen == gen && last_type == t) {
        *out = last_info;
        return 1;
    }
    lock();
    gen = __atomic_load_n(&cache_gen, __ATOMIC_RELAXED);
    entry_t *e = *find(t);
    int state = e ? e->state : 0;
    if (state == READY) {
        *out = e->info;
        if (out->flat)
            unblock_flat_hold(out->flat);
        else
            last_type = t, last_info = *out, last_gen = gen;
        note_size(t, out, gen);
    }
    unlock();
    if (state != KNOWN)
        return state == READY;
    /* First converted use of a type the program committed: flatten it now (MPI
     * calls, outside the lock). */
    resolve();
    unblock_dt_t d;
    describe(t, &d);
    lock();
    e = *find(t);
    if (e && e->state == KNOWN) {
        e->info = d;
        e->state = READY;
    } else { /* another thread flattened it first, or it was freed meanwhile */
        if (d.flat)
            unblock_flat_release(d.flat);
        if (e && e->state == READY)
            d = e->info;
        else
            memset(&d, 0, sizeof(d));
    }
    if (d.flat)
        unblock_flat_hold(d.flat);
    unlock();
    *out = d;
    return 1;
}

void unblock_dt_learn(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    if (unblock_dt_known(t))
        return;
    resolve();
    if (mpi.envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return;
    unblock_dt_t d = { 0 };
    if (is_named(combiner))
        describe(t, &d);
    store(t, READY, &d); /* a derived type we did not see committed: never converted */
}

int unblock_dt_span(const void *buf, long long count, MPI_Datatype t, int may_learn,
                    uintptr_t *lo, uintptr_t *hi)
{
    return unblock_dt_span_at(buf, 0, count, t, may_learn, lo, hi);
}

int unblock_dt_span_at(const void *buf, long long first, long long count, MPI_Datatype t,
                       int may_learn, uintptr_t *lo, uintptr_t *hi)
{
    unblock_dt_t d;
    if (count <= 0) {
        *lo = *hi = 0;
        return 1;
    }
    if (!unblock_dt_lookup(t, &d)) {
        if (!may_learn)
            return 0;
        unblock_dt_learn(t); /* a predefined type, met first in a nonblocking call */
        if (!unblock_dt_lookup(t, &d))
            return 0;
    }
    /* (A contiguous type's extent is its size.) */
    buf = (const char *)buf + first * (d.flat ? d.flat->extent : (long long)d.size);
    if (d.flat) {
        unblock_bytes_t b = { (uintptr_t)buf, d.flat, (size_t)count };
        unblock_bytes_span(&b, lo, hi);
        unblock_flat_release(d.flat);
        return 1;
    }
    if (!d.contiguous)
        return 0;
    *lo = (uintptr_t)buf + (uintptr_t)d.lb;
    *hi = *lo + (uintptr_t)d.size * (uintptr_t)count;
    return 1;
}

int unblock_dt_commit(MPI_Datatype *t, int (*real)(MPI_Datatype *))
{
    int rc = real(t);
    if (rc == MPI_SUCCESS)
        store(*t, KNOWN, NULL);
    return rc;
}

int unblock_dt_dup(MPI_Datatype t, MPI_Datatype *newtype,
                   int (*real)(MPI_Datatype, MPI_Datatype *))
{
    int rc = real(t, newtype);
    if (rc == MPI_SUCCESS)
        store(*newtype, KNOWN, NULL);
    return rc;
}

/* A type going away: what we know of it, and MPI-IO write-behind's cursor and
 * memos, which know types by handle and size (a new type may get the freed
 * one's handle, at another size: the cursor took its writes at the old size,
 * tests *.mpiio-typereuse.np2). */
static void gone(MPI_Datatype t)
{
    forget(t);
    __atomic_add_fetch(&unblock_mpiio_gen, 1, __ATOMIC_RELEASE);
}

int unblock_dt_free(MPI_Datatype *t, int (*real)(MPI_Datatype *))
{
    gone(*t); /* before the handle can be handed out again */
    return real(t);
}

/* A type committed from Fortran (before the call: the handle is the same after
 * it): known as committed, flattened at its first converted use, as from C.
 * Before, such a type was "not seen committed" and never converted: a view set
 * from Fortran with it was not followed (tests/programs/mpiio.F90). */
void unblock_dt_commit_fortran(const void *fint_handle)
{
    if (fint_handle == NULL)
        return;
    store(unblock_type_f2c(*(const MPI_Fint *)fint_handle), KNOWN, NULL);
}

void unblock_dt_forget_fortran(const void *fint_handle)
{
    if (fint_handle == NULL)
        return;
    gone(unblock_type_f2c(*(const MPI_Fint *)fint_handle));
}

/* ---- MPI_Pack's format ---- */

int unblock_dt_pack_matches(void)
{
    static int answer = -1; /* -1: not checked yet */
    int a = __atomic_load_n(&answer, __ATOMIC_ACQUIRE);
    if (a >= 0)
        return a;
    resolve();
    /* Two instances of {char[2] at 1, int at 8, double[2] at 24}, extent 48. */
    int bl[3] = { 2, 1, 2 };
    MPI_Aint disp[3] = { 1, 8, 24 };
    MPI_Datatype types[3] = { mpi.chr, mpi.integer, mpi.dbl }, s, t;
    int made_s = 0, made_t = 0; /* (Open MPI's MPI_DATATYPE_NULL is a libmpi symbol) */
    unsigned char mem[96], packed[64], mine[64];
    for (int i = 0; i < 96; i++)
        mem[i] = (unsigned char)(i * 7 + 3);
    int pos = 0, ok = 0;
    if ((made_s = mpi.create_struct(3, bl, disp, types, &s) == MPI_SUCCESS) &&
        (made_t = mpi.resized(s, 0, 48, &t) == MPI_SUCCESS) && mpi.commit(&t) == MPI_SUCCESS &&
        mpi.pack(mem, 2, t, packed, sizeof(packed), &pos, mpi.world) == MPI_SUCCESS &&
        pos == 2 * 22) {
        rlist_t l = { 0 };
        if (flatten(t, &l, 0) == 0) {
            unblock_flat_t *f = unblock_flat_new(l.r, l.n, 48);
            unblock_bytes_t b = { (uintptr_t)mem, f, 2 };
            ok = f && unblock_bytes_gather(&b, mine) == (size_t)pos && memcmp(mine, packed, pos) == 0;
            free(f);
        }
        free(l.r);
    }
    if (made_t)
        mpi.type_free(&t);
    if (made_s)
        mpi.type_free(&s);
    if (!ok)
        unblock_info("MPI_Pack's format is not the bytes in typemap order here: calls with "
                     "non-contiguous datatypes run unconverted");
    __atomic_store_n(&answer, ok, __ATOMIC_RELEASE);
    return ok;
}
