/* test_chains.c — chain learning (src/protect/chains.c): a period of steps seen
 * UNBLOCK_CHAIN_LEARN (3) times in a row is learned, and its first step then
 * starts the chain, which the following steps join in order; a step that does not
 * match closes it (a miss) and it must be learned again. */
#define _GNU_SOURCE
#include "protect/protect.h"
#include "core/options.h"
#include "core/stats.h"
#include "test.h"

#include <sys/mman.h>
#include <unistd.h>

static size_t pg;
static char *r;

enum { A = 101, B = 102, C = 103, D = 104 };

/* One step of key k on pages [first, last) of r: the chain slot covering it, or -1. */
static int step(uint64_t k, int first, int last, int *is_last, uint64_t *seq)
{
    return unblock_chain_step(k, k != B, (uintptr_t)r + first * pg, (uintptr_t)r + last * pg,
                              is_last, seq);
}

static void period(int *slots, int *lasts, uint64_t *seq)
{
    slots[0] = step(A, 0, 2, &lasts[0], seq);
    slots[1] = step(B, 2, 4, &lasts[1], seq);
    slots[2] = step(C, 4, 6, &lasts[2], seq);
}

static void test_learned_after_three_periods(void)
{
    int slots[3], lasts[3];
    uint64_t seq = 0;
    uint64_t learned0 = unblock_stats.chain_learned;
    for (int p = 0; p < 3; p++) { /* recorded: nothing starts yet */
        period(slots, lasts, &seq);
        ASSERT_EQ(slots[0], -1);
        ASSERT_EQ(slots[1], -1);
        ASSERT_EQ(slots[2], -1);
    }
    /* The 4th A ends the 3rd period: learned, and the chain starts here. */
    period(slots, lasts, &seq);
    ASSERT_EQ(unblock_stats.chain_learned - learned0, 1);
    ASSERT(slots[0] >= 0);
    ASSERT_EQ(slots[1], slots[0]);
    ASSERT_EQ(slots[2], slots[0]);
    ASSERT_EQ(lasts[0], 0);
    ASSERT_EQ(lasts[1], 0);
    ASSERT_EQ(lasts[2], 1); /* C is the chain's last */
    ASSERT_EQ(unblock_stats.chain_hits, 1);
    if (slots[0] >= 0)
        unblock_chain_close(slots[0], seq);
}

static void test_a_different_step_misses(void)
{
    int is_last;
    uint64_t seq = 0;
    uint64_t misses0 = unblock_stats.chain_misses;
    int s = step(A, 0, 2, &is_last, &seq); /* the learned chain starts */
    ASSERT(s >= 0);
    ASSERT_EQ(step(D, 2, 4, &is_last, &seq), -1); /* not B: a miss */
    ASSERT_EQ(unblock_stats.chain_misses - misses0, 1);
    /* It must be learned again: the next A starts nothing. */
    ASSERT_EQ(step(A, 0, 2, &is_last, &seq), -1);
}

int main(void)
{
    pg = (size_t)sysconf(_SC_PAGESIZE);
    ASSERT(unblock_protect_init());
    ASSERT_EQ(unblock_opt.chain_learn, 3);
    r = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    RUN_TEST(test_learned_after_three_periods);
    RUN_TEST(test_a_different_step_misses);
    return TEST_SUMMARY();
}
