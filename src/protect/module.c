/* module.c — the protect module's table (core/module.h): its part of the
 * per-process report, the "protect" section (docs/stats.md).  The handler and the
 * page table start on demand (unblock_protect_init), not from a hook. */
#include "core/module.h"
#include "core/stats.h"
#include "protect/protect.h"

#define get unblock_counter_get

static void protect_stats(unblock_emitter_t *e)
{
    unblock_emit(e, "  \"protect\": {\n    \"calls\": %llu,\n    \"enomem\": %llu,\n"
             "    \"verify_failures\": %llu,\n    \"copied_in_place\": %llu,\n"
             "    \"finished_early\": %llu,\n"
             "    \"chains\": {\"learned\": %llu, \"started\": %llu, \"hits\": %llu, \"misses\": %llu},\n"
             "    \"large_blocks\": %llu,\n"
             "    \"large_bytes\": %llu,\n    \"large_overhead\": %llu,\n"
             "    \"large_reused\": %llu\n  },\n",
         (unsigned long long)get(&unblock_stats.protect_calls),
         (unsigned long long)get(&unblock_stats.protect_enomem),
         (unsigned long long)get(&unblock_stats.verify_failures),
         (unsigned long long)get(&unblock_stats.protect_copied_in_place),
         (unsigned long long)get(&unblock_stats.protect_finished_early),
         (unsigned long long)get(&unblock_stats.chain_learned),
         (unsigned long long)get(&unblock_stats.chain_started),
         (unsigned long long)get(&unblock_stats.chain_hits),
         (unsigned long long)get(&unblock_stats.chain_misses),
         (unsigned long long)get(&unblock_stats.large_blocks),
         (unsigned long long)get(&unblock_stats.large_bytes),
         (unsigned long long)get(&unblock_stats.large_overhead),
         (unsigned long long)get(&unblock_stats.large_reused));
}

UNBLOCK_MODULE(unblock_protect_module) = {
    .name = "protect",
    .order = UNBLOCK_ORDER_PROTECT,
    .stats = protect_stats,
};
