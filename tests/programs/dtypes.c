/* dtypes.c — blocking sends and receives with derived datatypes, in the situations
 * that break a runtime which flattens them and completes the calls later: columns
 * of one grid in flight at once (their extents interleave, their bytes do not),
 * vectors with large blocks, indexed types whose blocks are not in address order
 * (also one whose blocks fill their extent, which looks contiguous),
 * structs with gaps, MPI_BOTTOM with absolute addresses, subarrays in C and
 * Fortran order, darray, resized types with count > 1, a sent type received as
 * another with the same signature, a short message, MPI_Probe then MPI_Recv,
 * MPI_Sendrecv_replace, a received buffer used at once by a collective, and a
 * type freed (and its handle reused by a new type) while a message with it is in
 * flight.
 *
 * Ranks work in pairs (0,1), (2,3), ...; a last odd rank idles.  Every buffer is
 * filled with a pattern that depends on the rank, the case and the buffer, and
 * each received buffer is checked, whole (the bytes between the type's own must
 * not change), against what MPI_Pack and MPI_Unpack compute locally from the
 * peer's pattern.  Each rank writes OUTDIR/rank-<r>.txt with a checksum and "ok"
 * or "MISMATCH" per check; the transparency harness compares the files of the
 * runs with and without unblock byte for byte.
 *
 * usage: dtypes OUTDIR CASE   (CASE: one of the names in `cases`, or all) */
#include <mpi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, peer;
static MPI_Comm pair; /* this rank and its peer (an idle rank alone) */
static FILE *out;
static int case_id;
static long checks, mismatches;

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* The pattern of buffer `idx` of rank `r` in the running case. */
static void fill(void *p, size_t n, int r, int idx)
{
    uint32_t seed = mix(0x9e3779b9U * (uint32_t)(case_id + 1) ^ mix((uint32_t)r * 977U + (uint32_t)idx));
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = (unsigned char)(mix(seed + (uint32_t)(i >> 2)) >> (8 * (i & 3)));
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        MPI_Abort(MPI_COMM_WORLD, 2);
    return p;
}

/* One result line: what, the checksum of the buffer, ok or MISMATCH against `expect`. */
static void check(const void *got, const void *expect, size_t n, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)got)[i] != ((const unsigned char *)expect)[i] && !bad++)
            first = i;
    fprintf(out, "%s: sum %016llx %s\n", what, (unsigned long long)fnv(got, n),
            bad ? "MISMATCH" : "ok");
    checks++;
    if (bad) {
        mismatches++;
        fprintf(stderr, "dtypes rank %d: MISMATCH in %s: %zu of %zu bytes, first at %zu\n", rank,
                what, bad, n, first);
    }
}

/* What a buffer of `rlen` bytes holding pattern (rank, ridx) contains after
 * receiving `rcount` of `rtype` (at offset `roff`) from a message of `scount` of
 * `stype` that the peer sent from its pattern (peer, sidx) of `slen` bytes (at
 * `soff`): computed by MPI_Pack and MPI_Unpack. */
static void *expected(size_t rlen, int ridx, size_t roff, int rcount, MPI_Datatype rtype,
                      size_t slen, int sidx, size_t soff, int scount, MPI_Datatype stype)
{
    unsigned char *exp = xmalloc(rlen), *src = xmalloc(slen);
    fill(exp, rlen, rank, ridx);
    fill(src, slen, peer, sidx);
    int psize = 0, pos = 0;
    MPI_Pack_size(scount, stype, MPI_COMM_WORLD, &psize);
    char *packed = xmalloc((size_t)psize + 1);
    MPI_Pack(src + soff, scount, stype, packed, psize, &pos, MPI_COMM_WORLD);
    int n = pos;
    pos = 0;
    MPI_Unpack(packed, n, &pos, exp + roff, rcount, rtype, MPI_COMM_WORLD);
    free(src);
    free(packed);
    return exp;
}

/* One message each way between the pair: this rank sends `scount` of `stype` from
 * its buffer (pattern index 0, offset soff) and receives `rcount` of `rtype` into
 * another (pattern index 1, offset roff), with MPI_Send/MPI_Recv (the even rank
 * sends first) or MPI_Sendrecv.  The send buffer is overwritten as soon as the call
 * returns and the received one read at once (last byte first). */
static void exchange(const char *what, int use_sendrecv, size_t slen, size_t soff, int scount,
                     MPI_Datatype stype, MPI_Datatype peer_stype, size_t rlen, size_t roff,
                     int rcount, MPI_Datatype rtype)
{
    unsigned char *s = xmalloc(slen), *r = xmalloc(rlen);
    fill(s, slen, rank, 0);
    fill(r, rlen, rank, 1);
    if (use_sendrecv) {
        MPI_Sendrecv(s + soff, scount, stype, peer, 7, r + roff, rcount, rtype, peer, 7,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank & 1) {
        MPI_Recv(r + roff, rcount, rtype, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        volatile unsigned char last = r[rlen - 1];
        (void)last;
        MPI_Send(s + soff, scount, stype, peer, 7, MPI_COMM_WORLD);
    } else {
        MPI_Send(s + soff, scount, stype, peer, 7, MPI_COMM_WORLD);
        memset(s, 0x5a, slen); /* the send must not see this */
        MPI_Recv(r + roff, rcount, rtype, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    memset(s, 0xa5, slen);
    void *exp = expected(rlen, 1, roff, rcount, rtype, slen, 0, soff, scount, peer_stype);
    check(r, exp, rlen, "%s%s", what, use_sendrecv ? " sendrecv" : "");
    free(exp);
    free(s);
    free(r);
}

/* Both ways: with MPI_Send/MPI_Recv, then with MPI_Sendrecv; the peer sends with a
 * type of its own (darray), or with the same. */
static void exchange2p(const char *what, size_t slen, size_t soff, int scount, MPI_Datatype stype,
                       MPI_Datatype peer_stype, size_t rlen, size_t roff, int rcount,
                       MPI_Datatype rtype)
{
    exchange(what, 0, slen, soff, scount, stype, peer_stype, rlen, roff, rcount, rtype);
    exchange(what, 1, slen, soff, scount, stype, peer_stype, rlen, roff, rcount, rtype);
}

static void exchange2(const char *what, size_t slen, size_t soff, int scount, MPI_Datatype stype,
                      size_t rlen, size_t roff, int rcount, MPI_Datatype rtype)
{
    exchange2p(what, slen, soff, scount, stype, stype, rlen, roff, rcount, rtype);
}

/* ---- the cases ---- */

enum { ROWS = 700, COLS = 610 };

/* Ghost columns of a grid: columns 1 and COLS-2 go to the peer, whose columns 1
 * and COLS-2 arrive in columns 0 and COLS-1, all four in flight at once (the
 * even rank sends both before receiving; the odd one receives both first). */
static void case_columns(void)
{
    MPI_Datatype col;
    MPI_Type_vector(ROWS, 1, COLS, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    for (int round = 0; round < 3; round++) {
        double *g = xmalloc(sizeof(double) * ROWS * COLS), *e = xmalloc(sizeof(double) * ROWS * COLS);
        double *theirs = xmalloc(sizeof(double) * ROWS * COLS);
        fill(g, sizeof(double) * ROWS * COLS, rank, round);
        fill(theirs, sizeof(double) * ROWS * COLS, peer, round);
        if (round == 2) { /* a halo exchange */
            MPI_Sendrecv(&g[1], 1, col, peer, 1, &g[0], 1, col, peer, 1, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            MPI_Sendrecv(&g[COLS - 2], 1, col, peer, 2, &g[COLS - 1], 1, col, peer, 2,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank & 1) {
            MPI_Recv(&g[0], 1, col, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&g[COLS - 1], 1, col, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&g[1], 1, col, peer, 1, MPI_COMM_WORLD);
            MPI_Send(&g[COLS - 2], 1, col, peer, 2, MPI_COMM_WORLD);
        } else {
            MPI_Send(&g[1], 1, col, peer, 1, MPI_COMM_WORLD);
            MPI_Send(&g[COLS - 2], 1, col, peer, 2, MPI_COMM_WORLD);
            MPI_Recv(&g[0], 1, col, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&g[COLS - 1], 1, col, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        /* The interior, computed at once (round 1: bottom to top). */
        double sum = 0;
        for (int k = 0; k < ROWS; k++) {
            int i = round == 1 ? ROWS - 1 - k : k;
            for (int j = 1; j < COLS - 1; j++)
                sum += g[i * COLS + j] * 1e-300;
        }
        fill(e, sizeof(double) * ROWS * COLS, rank, round);
        for (int i = 0; i < ROWS; i++) {
            e[i * COLS] = theirs[i * COLS + 1];
            e[i * COLS + COLS - 1] = theirs[i * COLS + COLS - 2];
        }
        check(g, e, sizeof(double) * ROWS * COLS, "columns round %d (interior sum %s)", round,
              sum == sum ? "finite" : "nan");
        free(g);
        free(e);
        free(theirs);
    }
    MPI_Type_free(&col);
}

static void case_vector(void)
{
    /* Large blocks, small gaps: dense enough to protect in place. */
    MPI_Datatype blocks, strided;
    MPI_Type_vector(8, 4096, 4608, MPI_DOUBLE, &blocks);
    MPI_Type_commit(&blocks);
    size_t len = sizeof(double) * 8 * 4608;
    exchange2("vector blocks", len, 0, 1, blocks, len, 0, 1, blocks);
    /* Sent as a vector, received contiguous, and the other way. */
    exchange2("vector to contiguous", len, 0, 1, blocks, len, 64, 8 * 4096, MPI_DOUBLE);
    exchange2("contiguous to vector", len, 16, 8 * 4096, MPI_DOUBLE, len, 0, 1, blocks);
    /* Small blocks, count > 1 (instances follow at the extent). */
    MPI_Type_vector(100, 3, 7, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    size_t slen = 4 * 7 * 100 * 60;
    exchange2("vector count 60", slen, 12, 60, strided, slen, 0, 60, strided);
    MPI_Type_free(&blocks);
    MPI_Type_free(&strided);
}

static void case_indexed(void)
{
    /* Blocks out of address order: the message order is the typemap's. */
    int bl[5] = { 3000, 1, 5000, 17, 4096 };
    int disp[5] = { 20000, 0, 5, 12000, 30000 };
    MPI_Datatype ix, hix, ib, perm;
    MPI_Type_indexed(5, bl, disp, MPI_DOUBLE, &ix);
    MPI_Type_commit(&ix);
    size_t len = sizeof(double) * 40000;
    exchange2("indexed", len, 0, 1, ix, len, 0, 1, ix);
    exchange2("indexed to contiguous", len, 0, 1, ix, len, 8, 3000 + 1 + 5000 + 17 + 4096,
              MPI_DOUBLE);
    MPI_Aint hd[3] = { 800, 0, 160000 };
    int hbl[3] = { 10000, 50, 20000 };
    MPI_Type_create_hindexed(3, hbl, hd, MPI_INT, &hix);
    MPI_Type_commit(&hix);
    exchange2("hindexed", 400000, 0, 1, hix, 400000, 0, 1, hix);
    /* Dense and out of address order (size, extent and true extent alike: its
     * bytes are one range, but the message is in typemap order). */
    MPI_Aint pd[4] = { 3 * 80000, 80000, 0, 2 * 80000 };
    int pbl[4] = { 10000, 10000, 10000, 10000 };
    MPI_Type_create_hindexed(4, pbl, pd, MPI_DOUBLE, &perm);
    MPI_Type_commit(&perm);
    exchange2("dense permuted", 320000, 0, 1, perm, 320000, 0, 1, perm);
    exchange2("dense permuted to contiguous", 320000, 0, 1, perm, 320000, 0, 40000, MPI_DOUBLE);
    MPI_Type_free(&perm);
    int bd[4] = { 9000, 0, 3000, 6000 };
    MPI_Type_create_indexed_block(4, 2500, bd, MPI_FLOAT, &ib);
    MPI_Type_commit(&ib);
    exchange2("indexed_block", 50000, 0, 1, ib, 50000, 0, 1, ib);
    MPI_Type_free(&ix);
    MPI_Type_free(&hix);
    MPI_Type_free(&ib);
}

struct rec {
    int id;
    double v[3];
    char tag[5];
};

static void case_struct(void)
{
    /* {int, double[3], char[5]}: gaps after the int and after the chars. */
    int bl[3] = { 1, 3, 5 };
    MPI_Aint d[3] = { offsetof(struct rec, id), offsetof(struct rec, v), offsetof(struct rec, tag) };
    MPI_Datatype t[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR }, st, rs, nested;
    MPI_Type_create_struct(3, bl, d, t, &st);
    MPI_Type_create_resized(st, 0, sizeof(struct rec), &rs);
    MPI_Type_commit(&rs);
    size_t n = 6000, len = n * sizeof(struct rec);
    exchange2("struct count 6000", len, 0, (int)n, rs, len, 0, (int)n, rs);
    /* A vector of structs (every other record), nested. */
    MPI_Type_vector(3000, 1, 2, rs, &nested);
    MPI_Type_commit(&nested);
    exchange2("vector of struct", len, sizeof(struct rec), 1, nested, len, 0, 1, nested);
    MPI_Type_free(&nested);
    MPI_Type_free(&st);
    MPI_Type_free(&rs);
}

/* MPI_BOTTOM with a struct of absolute addresses: three separate arrays. */
static void case_bottom(void)
{
    enum { N = 40000 };
    double *a = xmalloc(N * sizeof(double)), *ra = xmalloc(N * sizeof(double));
    int *b = xmalloc(N * sizeof(int)), *rb = xmalloc(N * sizeof(int));
    char *c = xmalloc(N), *rc = xmalloc(N);
    double *ea = xmalloc(N * sizeof(double));
    int *eb = xmalloc(N * sizeof(int));
    char *ec = xmalloc(N);
    fill(a, N * sizeof(double), rank, 0);
    fill(b, N * sizeof(int), rank, 1);
    fill(c, N, rank, 2);
    fill(ra, N * sizeof(double), rank, 3);
    fill(rb, N * sizeof(int), rank, 4);
    fill(rc, N, rank, 5);
    int bl[3] = { N, N / 2, N };
    MPI_Aint d[3], rd[3];
    MPI_Get_address(a, &d[0]);
    MPI_Get_address(b, &d[1]);
    MPI_Get_address(c, &d[2]);
    MPI_Get_address(ra, &rd[0]);
    MPI_Get_address(rb + 10, &rd[1]);
    MPI_Get_address(rc, &rd[2]);
    MPI_Datatype t[3] = { MPI_DOUBLE, MPI_INT, MPI_CHAR }, st, rt;
    MPI_Type_create_struct(3, bl, d, t, &st);
    MPI_Type_commit(&st);
    MPI_Type_create_struct(3, bl, rd, t, &rt);
    MPI_Type_commit(&rt);
    if (rank & 1) {
        MPI_Recv(MPI_BOTTOM, 1, rt, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(MPI_BOTTOM, 1, st, peer, 3, MPI_COMM_WORLD);
    } else {
        MPI_Send(MPI_BOTTOM, 1, st, peer, 3, MPI_COMM_WORLD);
        a[0] = -1;
        c[N - 1] = 'x';
        MPI_Recv(MPI_BOTTOM, 1, rt, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* Expected: the peer's arrays in ours (rb from element 10 on, half of it). */
    fill(ea, N * sizeof(double), peer, 0);
    fill(eb, N * sizeof(int), rank, 4);
    int *pb = xmalloc(N * sizeof(int));
    fill(pb, N * sizeof(int), peer, 1);
    memcpy(eb + 10, pb, (N / 2) * sizeof(int));
    fill(ec, N, peer, 2);
    check(ra, ea, N * sizeof(double), "MPI_BOTTOM doubles");
    check(rb, eb, N * sizeof(int), "MPI_BOTTOM ints");
    check(rc, ec, N, "MPI_BOTTOM chars");
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    free(a), free(b), free(c), free(ra), free(rb), free(rc), free(ea), free(eb), free(ec), free(pb);
}

static void case_subarray(void)
{
    int sizes[3] = { 40, 50, 60 }, subs[3] = { 20, 30, 40 }, starts[3] = { 5, 10, 15 };
    MPI_Datatype c3, f2;
    MPI_Type_create_subarray(3, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &c3);
    MPI_Type_commit(&c3);
    size_t len = sizeof(double) * 40 * 50 * 60;
    exchange2("subarray C 3d", len, 0, 1, c3, len, 0, 1, c3);
    exchange2("subarray to contiguous", len, 0, 1, c3, len, 0, 20 * 30 * 40, MPI_DOUBLE);
    int fs[2] = { 300, 200 }, fsub[2] = { 250, 120 }, fst[2] = { 20, 40 };
    MPI_Type_create_subarray(2, fs, fsub, fst, MPI_ORDER_FORTRAN, MPI_FLOAT, &f2);
    MPI_Type_commit(&f2);
    exchange2("subarray Fortran 2d", 300 * 200 * 4, 0, 1, f2, 300 * 200 * 4, 0, 1, f2);
    MPI_Type_free(&c3);
    MPI_Type_free(&f2);
}

static void case_darray(void)
{
    /* A 256x96 array over the pair: rows in blocks, columns cyclic by 4. */
    int gs[2] = { 256, 96 }, dist[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC };
    int darg[2] = { MPI_DISTRIBUTE_DFLT_DARG, 4 }, ps[2] = { 2, 1 };
    MPI_Datatype da, theirs;
    MPI_Type_create_darray(2, rank & 1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_DOUBLE, &da);
    MPI_Type_commit(&da);
    MPI_Type_create_darray(2, peer & 1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_DOUBLE, &theirs);
    MPI_Type_commit(&theirs);
    size_t len = sizeof(double) * 256 * 96;
    exchange2p("darray", len, 0, 1, da, theirs, len, 0, 1, da);
    exchange2p("darray to contiguous", len, 0, 1, da, theirs, len, 0, 128 * 96, MPI_DOUBLE);
    MPI_Type_free(&da);
    MPI_Type_free(&theirs);
}

/* Checks `got` (n doubles, this rank's pattern idx before the receive) after
 * `blocks` blocks of `bl` doubles arrived: block i from the peer's pattern idx at
 * double i * src_stride, to double i * dst_stride. */
static void check_blocks(const double *got, int n, int idx, int blocks, int bl, int src_stride,
                         int dst_stride, const char *what)
{
    size_t len = sizeof(double) * (size_t)n;
    double *src = xmalloc(len), *e = xmalloc(len);
    fill(src, len, peer, idx);
    fill(e, len, rank, idx);
    for (int i = 0; i < blocks; i++)
        memcpy(&e[(size_t)i * dst_stride], &src[(size_t)i * src_stride], (size_t)bl * sizeof(double));
    check(got, e, len, "%s", what);
    free(src);
    free(e);
}

/* A type freed while a message with it is in flight, and its handle reused at once
 * by a type of another layout (most MPIs hand the same handle out again). */
static void case_freereuse(void)
{
    enum { N = 60000 };
    size_t len = sizeof(double) * N;
    for (int dir = 0; dir < 2; dir++) {
        double *a = xmalloc(len), *b = xmalloc(len);
        fill(a, len, rank, 10 + dir);
        fill(b, len, rank, 20 + dir);
        if ((rank & 1) == dir) { /* the side that uses and frees the types */
            MPI_Datatype t1, t2;
            MPI_Type_vector(N / 4, 2, 4, MPI_DOUBLE, &t1);
            MPI_Type_commit(&t1);
            if (dir == 0)
                MPI_Send(a, 1, t1, peer, 4, MPI_COMM_WORLD);
            else
                MPI_Recv(a, 1, t1, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Datatype old = t1;
            MPI_Type_free(&t1);
            MPI_Type_vector(N / 8, 5, 8, MPI_DOUBLE, &t2);
            MPI_Type_commit(&t2);
            fprintf(stderr, "dtypes rank %d: freed handle %s\n", rank,
                    memcmp(&old, &t2, sizeof(old)) == 0 ? "reused" : "not reused");
            if (dir == 0)
                MPI_Send(b, 1, t2, peer, 4, MPI_COMM_WORLD);
            else
                MPI_Recv(b, 1, t2, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Type_free(&t2);
            if (dir == 1) { /* the first with 2 doubles in 4, the second 5 in 8 */
                check_blocks(a, N, 10 + dir, N / 4, 2, 2, 4, "freed type, receive in flight");
                check_blocks(b, N, 20 + dir, N / 8, 5, 5, 8, "reused handle, receive");
            }
        } else { /* contiguous on this side */
            if (dir == 0) {
                MPI_Recv(a, N / 2, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Recv(b, N / 8 * 5, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                check_blocks(a, N, 10 + dir, N / 4, 2, 4, 2, "freed type, send in flight");
                check_blocks(b, N, 20 + dir, N / 8, 5, 8, 5, "reused handle, send");
            } else {
                MPI_Send(a, N / 2, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD);
                MPI_Send(b, N / 8 * 5, MPI_DOUBLE, peer, 4, MPI_COMM_WORLD);
            }
        }
        free(a), free(b);
    }
}

/* MPI_Probe, MPI_Get_count, then MPI_Recv of that many; and a short message. */
static void case_probe(void)
{
    MPI_Datatype v;
    MPI_Type_vector(5000, 4, 6, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    size_t len = sizeof(double) * 30000;
    double *s = xmalloc(len), *r = xmalloc(len);
    fill(s, len, rank, 0);
    fill(r, len, rank, 1);
    int n = 3000 + 1000 * (rank & 1); /* doubles this rank sends (short of a whole vector) */
    if (rank & 1) {
        MPI_Status st;
        int got = -1;
        MPI_Probe(peer, 5, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        fprintf(out, "probe: %d doubles\n", got);
        MPI_Recv(r, 1, v, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(s, n, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD);
    } else {
        MPI_Send(s, n, MPI_DOUBLE, peer, 5, MPI_COMM_WORLD);
        MPI_Recv(r, 1, v, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* The peer sent n' doubles, which fill the first n' elements of the vector. */
    int theirs = 3000 + 1000 * (peer & 1);
    MPI_Datatype part; /* the first `theirs` doubles of the vector */
    MPI_Type_vector(theirs / 4, 4, 6, MPI_DOUBLE, &part);
    MPI_Type_commit(&part);
    void *exp = expected(len, 1, 0, 1, part, len, 0, 0, theirs, MPI_DOUBLE);
    MPI_Type_free(&part);
    check(r, exp, len, "short message into a vector");
    free(exp);
    free(s);
    free(r);
    MPI_Type_free(&v);
}

static void case_replace(void)
{
    MPI_Datatype v;
    MPI_Type_vector(2000, 16, 24, MPI_INT, &v);
    MPI_Type_commit(&v);
    size_t len = sizeof(int) * 24 * 2000;
    int *b = xmalloc(len);
    fill(b, len, rank, 0);
    MPI_Sendrecv_replace(b, 1, v, peer, 6, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    void *exp = expected(len, 0, 0, 1, v, len, 0, 0, 1, v);
    check(b, exp, len, "Sendrecv_replace vector");
    free(exp);
    free(b);
    MPI_Type_free(&v);
}

/* A received buffer handed at once to a collective, and a collective's result
 * sent at once. */
static void case_collective(void)
{
    MPI_Datatype v;
    MPI_Type_vector(4096, 8, 9, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    size_t n = 9 * 4096, len = sizeof(double) * n;
    double *s = xmalloc(len), *r = xmalloc(len), *sum = xmalloc(len);
    for (size_t i = 0; i < n; i++) {
        s[i] = (double)(rank * 100000 + (int)i);
        r[i] = -1.0;
    }
    if (rank & 1) {
        MPI_Recv(r, 1, v, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(s, 1, v, peer, 8, MPI_COMM_WORLD);
    } else {
        MPI_Send(s, 1, v, peer, 8, MPI_COMM_WORLD);
        MPI_Recv(r, 1, v, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Allreduce(r, sum, (int)n, MPI_DOUBLE, MPI_SUM, pair);
    fprintf(out, "allreduce of received vectors: sum %016llx\n", (unsigned long long)fnv(sum, len));
    for (size_t i = 0; i < n; i++) /* the gaps keep their values: make them the sum's */
        r[i] = i % 9 == 8 ? sum[i] : -3.0;
    MPI_Sendrecv(sum, 1, v, peer, 9, r, 1, v, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(r, sum, len, "collective result exchanged"); /* both ranks hold the same sum */
    free(s), free(r), free(sum);
    MPI_Type_free(&v);
}

static const struct {
    const char *name;
    void (*run)(void);
} cases[] = {
    { "columns", case_columns },     { "vector", case_vector },       { "indexed", case_indexed },
    { "struct", case_struct },       { "bottom", case_bottom },       { "subarray", case_subarray },
    { "darray", case_darray },       { "freereuse", case_freereuse }, { "probe", case_probe },
    { "replace", case_replace },     { "collective", case_collective },
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0)
            fprintf(stderr, "usage: dtypes OUTDIR CASE|all\n");
        MPI_Finalize();
        return 2;
    }
    const char *which = argv[2];
    int found = strcmp(which, "all") == 0;
    for (int c = 0; c < NCASES; c++)
        found |= strcmp(which, cases[c].name) == 0;
    if (!found) {
        if (rank == 0)
            fprintf(stderr, "dtypes: unknown case %s\n", which);
        MPI_Finalize();
        return 2;
    }
    peer = (rank ^ 1) < size ? rank ^ 1 : -1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argv[1], rank);
    out = fopen(path, "w");
    if (!out)
        MPI_Abort(MPI_COMM_WORLD, 2);
    fprintf(out, "rank %d of %d, peer %d, case %s\n", rank, size, peer, which);
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    for (int c = 0; c < NCASES; c++) {
        if (strcmp(which, "all") != 0 && strcmp(which, cases[c].name) != 0)
            continue;
        case_id = c;
        MPI_Barrier(MPI_COMM_WORLD);
        if (peer < 0)
            fprintf(out, "%s: no peer, idle\n", cases[c].name);
        else
            cases[c].run();
        fflush(out);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    fprintf(out, "%ld checks, %ld mismatches\n", checks, mismatches);
    fclose(out);
    MPI_Comm_free(&pair);
    MPI_Finalize();
    return mismatches ? 1 : 0;
}
