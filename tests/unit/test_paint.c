/* test_paint.c — the owner's block image (src/mpiio/stage.c): records painted
 * into it (mio_paint: the data copied, the written bytes' bitmap set, the count
 * of bytes written), and the runs of written bytes read back (mio_next_run),
 * against a byte-by-byte model, for random pieces of 1 byte to 3 KiB at any
 * alignment, rewrites over written bytes included.  Linked with the link-time
 * variant of the library (its internal functions are reachable from a static
 * link), run as an MPI singleton (no mpirun). */
#include "mpiio/mpiio.h"
#include "test.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK (64 << 10)

static unsigned char model[BLOCK], written[BLOCK];
static char rec[4 << 10];
static uint64_t seed = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return (uint32_t)(seed % n);
}

/* The image's runs and data against the model; its count of bytes written. */
static void compare(mio_image_t *im)
{
    size_t dirty = 0;
    for (uint32_t i = 0; i < BLOCK; i++)
        dirty += written[i];
    ASSERT_EQ(im->dirty, dirty);
    uint32_t s = 0, e = 0, at = 0;
    while (mio_next_run(im, &s, &e, BLOCK)) {
        ASSERT(s >= at && s < e && e <= BLOCK);
        for (uint32_t i = at; i < s; i++)
            if (written[i]) {
                fprintf(stderr, "byte %u written, outside every run\n", i);
                ASSERT(0);
                return;
            }
        for (uint32_t i = s; i < e; i++)
            if (!written[i] || (unsigned char)im->data[i] != model[i]) {
                fprintf(stderr, "byte %u of run [%u, %u) wrong\n", i, s, e);
                ASSERT(0);
                return;
            }
        ASSERT(e == BLOCK || !written[e]); /* a run ends where the written bytes do */
        at = e;
        s = e;
    }
    for (uint32_t i = at; i < BLOCK; i++)
        if (written[i]) {
            fprintf(stderr, "byte %u written, after the last run\n", i);
            ASSERT(0);
            return;
        }
}

static void test_random_pieces(void)
{
    mio_file_t f;
    memset(&f, 0, sizeof f);
    f.rank = 0, f.size = 2, f.block = BLOCK;
    mio_image_t im;
    memset(&im, 0, sizeof im);
    im.data = calloc(BLOCK, 1);
    im.bits = calloc(BLOCK / 64, 8);
    im.from = calloc(1, 1);
    im.lo = BLOCK;
    for (int round = 0; round < 300; round++) {
        size_t used = 0;
        for (int k = 0; k < 1 + (int)rnd(6); k++) {
            uint32_t len = rnd(4) == 0 ? 1 + rnd(64) : 1 + rnd(3072);
            uint32_t off = rnd(BLOCK - len + 1);
            if (used + 8 + len > sizeof rec)
                break;
            memcpy(rec + used, &off, 4);
            memcpy(rec + used + 4, &len, 4);
            for (uint32_t i = 0; i < len; i++) {
                unsigned char b = (unsigned char)rnd(256);
                rec[used + 8 + i] = (char)b;
                model[off + i] = b; /* later pieces win, as in the file */
                written[off + i] = 1;
            }
            used += 8 + len;
        }
        mio_paint(&f, &im, rec, used, 1);
        if (round % 10 == 0 || round == 299)
            compare(&im);
    }
    ASSERT(im.remote == 1 && im.from[0] == 2);
    /* Every byte at last: one run, the whole block. */
    uint32_t off = 0, len = BLOCK / 2;
    for (int half = 0; half < 2; half++, off += len) {
        memcpy(rec, &off, 4);
        memcpy(rec + 4, &len, 4);
        char *big = malloc(8 + len);
        memcpy(big, rec, 8);
        for (uint32_t i = 0; i < len; i++) {
            big[8 + i] = (char)(i * 31 + half);
            model[off + i] = (unsigned char)(i * 31 + half);
            written[off + i] = 1;
        }
        mio_paint(&f, &im, big, 8 + len, 0);
        free(big);
    }
    compare(&im);
    uint32_t s = 0, e = 0;
    ASSERT(mio_next_run(&im, &s, &e, BLOCK) && s == 0 && e == BLOCK);
    ASSERT(!mio_next_run(&im, &e, &s, BLOCK));
    free(im.data);
    free(im.bits);
    free(im.from);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    RUN_TEST(test_random_pieces);
    int rc = TEST_SUMMARY();
    MPI_Finalize();
    return rc;
}
