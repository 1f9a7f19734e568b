/* test_ranges.c — byte ranges of flattened datatypes (src/protect/ranges.c):
 * merging, bounds, byte-level overlap (columns of one grid that interleave but
 * share no byte), gather and scatter in message order, short messages. */
#include "protect/ranges.h"
#include "test.h"

#include <stdint.h>

/* The column of a rows x cols grid of doubles: `rows` ranges of 8 bytes. */
static unblock_flat_t *column(int rows, int cols)
{
    unblock_range_t r[256];
    for (int i = 0; i < rows; i++)
        r[i] = (unblock_range_t){ (int64_t)i * cols * 8, 8 };
    /* An MPI_Type_vector's extent ends at its last block. */
    return unblock_flat_new(r, (uint32_t)rows, (int64_t)(rows - 1) * cols * 8 + 8);
}

static void test_merge_and_bounds(void)
{
    unblock_range_t r[] = { { 16, 8 }, { 24, 8 }, { 0, 4 }, { 4, 0 }, { 40, 8 } };
    unblock_flat_t *f = unblock_flat_new(r, 5, 64);
    ASSERT(f != NULL);
    ASSERT_EQ(f->n, 3);            /* 16+8 and 24+8 merge; the empty one is dropped */
    ASSERT_EQ(f->r[0].off, 16);
    ASSERT_EQ(f->r[0].len, 16);
    ASSERT_EQ(f->r[1].off, 0);     /* message order kept */
    ASSERT_EQ(f->size, 28);
    ASSERT_EQ(f->lo, 0);
    ASSERT_EQ(f->hi, 48);
    ASSERT_EQ(f->nsorted, 3);
    ASSERT_EQ(f->r[f->n].off, 0);  /* sorted copy */
    ASSERT_EQ(f->interleaved, 0);
    unblock_bytes_t b = { 1000, f, 3 };
    uintptr_t lo, hi;
    unblock_bytes_span(&b, &lo, &hi);
    ASSERT_EQ(lo, 1000);
    ASSERT_EQ(hi, 1000 + 2 * 64 + 48);
    ASSERT_EQ(unblock_bytes_size(&b), 84);
    free(f);
}

static void test_columns_interleave(void)
{
    enum { ROWS = 100, COLS = 130 };
    unblock_flat_t *c = column(ROWS, COLS);
    uintptr_t grid = 1 << 20;
    unblock_bytes_t col0 = { grid, c, 1 }, col1 = { grid + 8, c, 1 }, col0b = { grid, c, 1 };
    unblock_bytes_t last = { grid + (COLS - 1) * 8, c, 1 };
    ASSERT(!unblock_bytes_overlap(&col0, &col1));
    ASSERT(!unblock_bytes_overlap(&col1, &last));
    ASSERT(unblock_bytes_overlap(&col0, &col0b));
    /* A row shares one byte range with each column. */
    unblock_bytes_t row5 = { grid + 5 * COLS * 8, NULL, COLS * 8 };
    ASSERT(unblock_bytes_overlap(&row5, &col1));
    ASSERT(unblock_bytes_overlap(&col1, &row5));
    /* The half of a row before column 1 does not touch it. */
    unblock_bytes_t row5a = { grid + 5 * COLS * 8, NULL, 8 };
    ASSERT(!unblock_bytes_overlap(&row5a, &col1));
    ASSERT(unblock_bytes_overlap(&row5a, &col0));
    /* A one-byte probe at every position of a row: only its column matches. */
    int hits = 0;
    for (int i = 0; i < COLS * 8; i++) {
        unblock_bytes_t p = { grid + 7 * COLS * 8 + (uintptr_t)i, NULL, 1 };
        hits += unblock_bytes_overlap(&p, &col1);
    }
    ASSERT_EQ(hits, 8);
    free(c);
}

static void test_instances(void)
{
    /* Two 4-byte pieces 16 bytes apart, extent 32: count 10 instances. */
    unblock_range_t r[] = { { 0, 4 }, { 16, 4 } };
    unblock_flat_t *f = unblock_flat_new(r, 2, 32);
    unblock_bytes_t a = { 4096, f, 10 };
    for (int i = 0; i < 320; i++) {
        unblock_bytes_t p = { 4096 + (uintptr_t)i, NULL, 1 };
        int expect = (i % 32) < 4 || ((i % 32) >= 16 && (i % 32) < 20);
        if (unblock_bytes_overlap(&a, &p) != expect) {
            fprintf(stderr, "byte %d: expected %d\n", i, expect);
            ASSERT(0);
            break;
        }
    }
    unblock_bytes_t shifted = { 4096 + 4, f, 10 }; /* bytes 4..8 and 20..24 of each */
    ASSERT(!unblock_bytes_overlap(&a, &shifted));
    /* Interleaving instances (extent smaller than the span): conservative. */
    unblock_flat_t *g = unblock_flat_new(r, 2, 8);
    ASSERT_EQ(g->interleaved, 1);
    unblock_bytes_t ga = { 4096, g, 3 }, gp = { 4096 + 4, NULL, 1 };
    ASSERT(unblock_bytes_overlap(&ga, &gp));
    free(f);
    free(g);
}

static void test_gather_scatter(void)
{
    enum { ROWS = 50, COLS = 20 };
    double grid[ROWS * COLS], back[ROWS * COLS], packed[ROWS * 2];
    for (int i = 0; i < ROWS * COLS; i++)
        grid[i] = i;
    unblock_flat_t *c = column(ROWS, COLS);
    unblock_bytes_t col3 = { (uintptr_t)&grid[3], c, 1 };
    ASSERT_EQ(unblock_bytes_gather(&col3, packed), ROWS * 8);
    for (int i = 0; i < ROWS; i++)
        ASSERT_EQ((long)packed[i], i * COLS + 3);
    /* Scatter into another grid: only the column changes. */
    for (int i = 0; i < ROWS * COLS; i++)
        back[i] = -1;
    unblock_bytes_t into = { (uintptr_t)&back[3], c, 1 };
    unblock_bytes_scatter(&into, packed, ROWS * 8);
    int wrong = 0;
    for (int i = 0; i < ROWS * COLS; i++)
        wrong += back[i] != ((i % COLS) == 3 ? grid[i] : -1);
    ASSERT_EQ(wrong, 0);
    /* A short message (10 doubles and 4 bytes) fills only what arrived. */
    for (int i = 0; i < ROWS * COLS; i++)
        back[i] = -1;
    unblock_bytes_scatter(&into, packed, 10 * 8 + 4);
    ASSERT_EQ((long)back[9 * COLS + 3], 9 * COLS + 3);
    ASSERT((long)back[11 * COLS + 3] == -1);
    unsigned char *half = (unsigned char *)&back[10 * COLS + 3];
    ASSERT(memcmp(half, &grid[10 * COLS + 3], 4) == 0);
    /* Message order, not address order: a struct whose second block comes first. */
    unblock_range_t r[] = { { 8, 8 }, { 0, 4 } };
    unblock_flat_t *s = unblock_flat_new(r, 2, 16);
    unsigned char src[32], out[24];
    for (int i = 0; i < 32; i++)
        src[i] = (unsigned char)i;
    unblock_bytes_t two = { (uintptr_t)src, s, 2 };
    ASSERT_EQ(unblock_bytes_gather(&two, out), 24);
    static const unsigned char expect[24] = { 8,  9,  10, 11, 12, 13, 14, 15, 0,  1,  2,  3,
                                              24, 25, 26, 27, 28, 29, 30, 31, 16, 17, 18, 19 };
    ASSERT(memcmp(out, expect, 24) == 0);
    free(c);
    free(s);
}

int main(void)
{
    RUN_TEST(test_merge_and_bounds);
    RUN_TEST(test_columns_interleave);
    RUN_TEST(test_instances);
    RUN_TEST(test_gather_scatter);
    return TEST_SUMMARY();
}
