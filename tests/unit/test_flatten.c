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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ASSERT(unblock_dt_pack_matches());
    RUN_TEST(test_derived_types);
    int rc = TEST_SUMMARY();
    MPI_Finalize();
    return rc;
}
