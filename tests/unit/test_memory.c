/* test_memory.c — the double-mapped pool (src/memory/pool.c) and the allocator
 * that serves large blocks from it (src/memory/alloc.c): the two views hold the
 * same bytes, blocks are page-aligned, zero when handed out (again), and the
 * registry knows each block's bounds; realloc keeps the data, calloc clears. */
#define _GNU_SOURCE
#include "memory/memory.h"
#include "core/core.h"
#include "core/options.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t pg;

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static void test_pool_views_and_reuse(void)
{
    size_t len = 3 * pg;
    unsigned char *p = unblock_pool_alloc(len);
    ASSERT(p != NULL);
    if (!p)
        return;
    ASSERT_EQ((uintptr_t)p % pg, 0);
    ASSERT(unblock_pool_has((uintptr_t)p, (uintptr_t)p + len));
    ASSERT(all_zero(p, len));
    for (size_t i = 0; i < len; i++)
        p[i] = (unsigned char)(i * 7 + 3);
    const unsigned char *rt = p + unblock_pool_delta; /* the runtime's view */
    int same = 1;
    for (size_t i = 0; i < len; i++)
        same &= rt[i] == (unsigned char)(i * 7 + 3);
    ASSERT(same);
    ASSERT(!unblock_pool_has((uintptr_t)rt, (uintptr_t)rt + len)); /* the app view only */
    size_t before = unblock_pool_in_use();
    unblock_pool_free(p, len);
    ASSERT_EQ(unblock_pool_in_use(), before - len);
    unsigned char *q = unblock_pool_alloc(len); /* first fit: the same pages, cleared */
    ASSERT(q == p);
    ASSERT(q && all_zero(q, len));
    unblock_pool_free(q, len);
}

static void test_large_blocks(void)
{
    size_t n = 1 << 20;
    unsigned char *p = malloc(n);
    ASSERT(p != NULL);
    ASSERT_EQ((uintptr_t)p % pg, 0);
    ASSERT(unblock_pool_has((uintptr_t)p, (uintptr_t)p + n));
    uintptr_t s = 0, e = 0;
    ASSERT(unblock_memory_block_of(p + 1000, 100, &s, &e));
    ASSERT_EQ(s, (uintptr_t)p);
    ASSERT(e >= (uintptr_t)p + n && e % pg == 0);
    ASSERT(!unblock_memory_block_of(p + n - 10, 100, &s, &e)); /* runs past the block */
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i ^ (i >> 8));
    unsigned char *q = realloc(p, 3 * n);
    ASSERT(q != NULL);
    int kept = 1;
    for (size_t i = 0; q && i < n; i++)
        kept &= q[i] == (unsigned char)(i ^ (i >> 8));
    ASSERT(kept);
    ASSERT(q && unblock_memory_block_of(q, 3 * n, &s, &e));
    free(q);
    unsigned char *z = calloc(1, n / 2 + 123);
    ASSERT(z && all_zero(z, n / 2 + 123));
    free(z);
    char *small = malloc(100); /* glibc's: not a block of ours */
    ASSERT(small && !unblock_memory_block_of(small, 10, &s, &e));
    free(small);
}

int main(void)
{
    pg = (size_t)sysconf(_SC_PAGESIZE);
    unblock_opt.pool = 1;        /* multiview (UNBLOCK_POOL=1) */
    unblock_g.protect_ready = 1; /* large blocks only once protection can start */
    RUN_TEST(test_pool_views_and_reuse);
    RUN_TEST(test_large_blocks);
    return TEST_SUMMARY();
}
