/* test_flatten.c — datatype flattening (src/comm/datatype.c), against MPI itself:
 * for derived types committed through the wrapper, the flattened bytes gathered in
 * typemap order are MPI_Pack's bytes, and their span is the type's true extent.
 * Linked with the link-time variant of the library (its internal functions are
 * reachable from a static link), run as an MPI singleton (no mpirun). */
#include "comm/datatype.h"
#include "test.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BUF (1 << 16)
static unsigned char buf[BUF], packed[BUF], gathered[BUF];

/* count instances of t at buf+64: flattened gather equals MPI_Pack; span is right. */
static void check(const char *what, MPI_Datatype t, int count)
{
    unblock_dt_t dt;
    ASSERT(unblock_dt_lookup(t, &dt));
    ASSERT(dt.contiguous || dt.flat != NULL);
    int pos = 0;
    MPI_Pack(buf + 64, count, t, packed, BUF, &pos, MPI_COMM_WORLD);
    unsigned char *base = buf + 64;
    if (dt.flat) {
        unblock_bytes_t b = { (uintptr_t)base, dt.flat, (size_t)count };
        size_t n = unblock_bytes_gather(&b, gathered);
        ASSERT_EQ(n, pos);
        ASSERT_EQ(unblock_bytes_size(&b), pos);
        if (memcmp(gathered, packed, (size_t)pos) != 0) {
            fprintf(stderr, "%s: gathered bytes differ from MPI_Pack's\n", what);
            ASSERT(0);
        }
        unblock_flat_release(dt.flat);
    }
    MPI_Aint tlb, textent, lb, extent;
    MPI_Type_get_true_extent(t, &tlb, &textent);
    MPI_Type_get_extent(t, &lb, &extent);
    uintptr_t lo, hi;
    ASSERT(unblock_dt_span(base, count, t, 0, &lo, &hi));
    ASSERT_EQ(lo, (uintptr_t)base + tlb);
    ASSERT_EQ(hi, (uintptr_t)base + tlb + (count - 1) * extent + textent);
}

static void test_derived_types(void)
{
    for (int i = 0; i < BUF; i++)
        buf[i] = (unsigned char)(i * 31 + 7);
    MPI_Datatype vec, idx, st, res, sub, vecvec;
    MPI_Type_vector(4, 3, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    check("vector", vec, 3);
    int bl[3] = { 2, 1, 4 }, disp[3] = { 9, 0, 4 }; /* out of address order */
    MPI_Type_indexed(3, bl, disp, MPI_DOUBLE, &idx);
    MPI_Type_commit(&idx);
    check("indexed", idx, 2);
    int sbl[3] = { 1, 3, 2 };
    MPI_Aint sdisp[3] = { 0, 8, 40 }; /* gaps */
    MPI_Datatype stypes[3] = { MPI_CHAR, MPI_INT, MPI_DOUBLE };
    MPI_Type_create_struct(3, sbl, sdisp, stypes, &st);
    MPI_Type_commit(&st);
    check("struct", st, 5);
    MPI_Type_create_resized(st, 0, 72, &res); /* more room than its data */
    MPI_Type_commit(&res);
    check("resized", res, 4);
    int sizes[2] = { 10, 12 }, subsizes[2] = { 3, 4 }, starts[2] = { 2, 5 };
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_FLOAT, &sub);
    MPI_Type_commit(&sub);
    check("subarray", sub, 1);
    MPI_Type_vector(2, 1, 3, res, &vecvec); /* a vector of a resized struct */
    MPI_Type_commit(&vecvec);
    check("vector of resized struct", vecvec, 2);
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    MPI_Type_free(&st);
    MPI_Type_free(&res);
    MPI_Type_free(&sub);
    MPI_Type_free(&vecvec);
}

/* Blocks of dense children as one range each (datatype.c: put_block), and of
 * children with holes element by element, in every constructor that has blocks. */
static void test_blocks(void)
{
    for (int i = 0; i < BUF; i++)
        buf[i] = (unsigned char)(i * 13 + 5);
    MPI_Datatype t[10], st, res;
    int n = 0;
    int sbl[2] = { 1, 2 };
    MPI_Aint sdisp[2] = { 0, 8 };
    MPI_Datatype stypes[2] = { MPI_CHAR, MPI_INT }; /* a hole after the char */
    MPI_Type_create_struct(2, sbl, sdisp, stypes, &st);
    MPI_Type_create_resized(st, 0, 20, &res);
    MPI_Type_commit(&res);
    int s3[3] = { 6, 5, 7 }, sub3[3] = { 2, 3, 4 }, st3[3] = { 1, 1, 2 };
    MPI_Type_create_subarray(3, s3, sub3, st3, MPI_ORDER_C, MPI_DOUBLE, &t[n++]);
    int s2[2] = { 9, 7 }, sub2[2] = { 4, 3 }, st2[2] = { 2, 3 };
    MPI_Type_create_subarray(2, s2, sub2, st2, MPI_ORDER_FORTRAN, MPI_INT, &t[n++]);
    int s2h[2] = { 4, 3 }, sub2h[2] = { 2, 2 }, st2h[2] = { 1, 0 };
    MPI_Type_create_subarray(2, s2h, sub2h, st2h, MPI_ORDER_FORTRAN, res, &t[n++]);
    MPI_Type_contiguous(5, MPI_DOUBLE, &t[n++]);
    MPI_Type_contiguous(3, res, &t[n++]);
    MPI_Type_create_hvector(3, 2, 100, res, &t[n++]);
    MPI_Aint hd[3] = { 200, 0, 96 };
    MPI_Type_create_hindexed_block(3, 3, hd, MPI_DOUBLE, &t[n++]);
    int bl[3] = { 2, 0, 3 }, dp[3] = { 7, 1, 0 }; /* a block of none */
    MPI_Type_indexed(3, bl, dp, MPI_INT, &t[n++]);
    int ib[2] = { 4, 0 };
    MPI_Type_create_indexed_block(2, 2, ib, res, &t[n++]);
    int cbl[2] = { 3, 2 };
    MPI_Aint cdisp[2] = { 0, 40 };
    MPI_Datatype ctypes[2] = { MPI_DOUBLE, res };
    MPI_Type_create_struct(2, cbl, cdisp, ctypes, &t[n++]);
    const char *names[10] = { "subarray 3-D C", "subarray Fortran", "subarray of a holed type",
                              "contiguous", "contiguous of a holed type", "hvector of a holed type",
                              "hindexed_block", "indexed with an empty block",
                              "indexed_block of a holed type", "struct of blocks" };
    for (int i = 0; i < n; i++) {
        MPI_Type_commit(&t[i]);
        check(names[i], t[i], 2);
        MPI_Type_free(&t[i]);
    }
    MPI_Type_free(&res);
    MPI_Type_free(&st);
    /* 4100 x 4100 doubles of a 4200 x 4200 array: more elements than WORK_MAX
     * (before, placed one by one, given up), 4100 ranges of 32,800 bytes. */
    MPI_Datatype big;
    int sb[2] = { 4200, 4200 }, subb[2] = { 4100, 4100 }, stb[2] = { 50, 60 };
    MPI_Type_create_subarray(2, sb, subb, stb, MPI_ORDER_C, MPI_DOUBLE, &big);
    MPI_Type_commit(&big);
    unblock_dt_t dt;
    ASSERT(unblock_dt_lookup(big, &dt));
    ASSERT(dt.flat != NULL);
    if (dt.flat) {
        ASSERT_EQ(dt.flat->n, 4100);
        ASSERT_EQ(dt.flat->size, (int64_t)4100 * 4100 * 8);
        ASSERT_EQ(dt.flat->r[0].off, (int64_t)(50 * 4200 + 60) * 8);
        ASSERT_EQ(dt.flat->r[0].len, 4100 * 8);
        unblock_flat_release(dt.flat);
    }
    MPI_Type_free(&big);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ASSERT(unblock_dt_pack_matches());
    RUN_TEST(test_derived_types);
    RUN_TEST(test_blocks);
    int rc = TEST_SUMMARY();
    MPI_Finalize();
    return rc;
}
