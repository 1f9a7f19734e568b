/* report.c — the fileio module's table (core/module.h): its drains at exit and on
 * fatal signals (write-behind), and its part of the per-process report, the "io"
 * and "process" sections (docs/stats.md). */
#define _GNU_SOURCE
#include "fileio/fileio.h"
#include "core/module.h"
#include "memory/memory.h"

#define emit unblock_emit
#define json_safe unblock_json_safe

static void emit_functions(unblock_emitter_t *e, int want_process)
{
    const char *sep = "";
    emit(e, "    \"functions\": {");
    for (unsigned i = 0; i < unblock_io_fn_count; i++) {
        int is_process = unblock_io_fn_cat[i] == UNBLOCK_IO_CAT_PROCESS;
        uint64_t n = unblock_io_fn_get(i);
        if (n && is_process == want_process) {
            emit(e, "%s\n      \"%s\": %llu", sep, unblock_io_fn_names[i], (unsigned long long)n);
            sep = ",";
        }
    }
    emit(e, "%s}\n", *sep ? "\n    " : "");
}

/* The size class of a file's small writes that saw the most calls. */
static int small_class(const unblock_wb_file_t *f)
{
    int best = 0;
    for (int i = 1; i < UNBLOCK_WB_SMALL_CLASSES; i++)
        if (f->costs.small[i].calls > f->costs.small[best].calls)
            best = i;
    return best;
}

/* Write-behind's access pattern per file (fdtable.c). */
static void emit_files(unblock_emitter_t *e)
{
    const unblock_wb_file_t *f;
    int n = unblock_wb_files(&f);
    const char *sep = "";
    emit(e, "    \"files\": [");
    for (int i = 0; i < n; i++, f++) {
        if (f->writes == 0)
            continue;
        /* (of the writes counted one by one: a quiet descriptor's are sampled) */
        uint64_t seq = f->sequential, str = f->strided, rnd = f->random;
        uint64_t counted = seq + str + rnd;
        const char *pattern = seq * 10 >= counted * 9 ? "sequential"
                            : str + seq >= (counted * 9) / 10 ? "strided" : "random";
        emit(e, "%s\n      {\"path\": \"%s\", \"pattern\": \"%s\", \"writes\": %llu, "
                "\"bytes\": %llu, \"merged\": %llu, \"direct\": %llu, \"sequential\": %llu, "
                "\"strided\": %llu, \"random\": %llu, \"min_size\": %llu, "
                "\"max_size\": %llu, \"small_ns\": %u, \"merged_ns\": %u, \"ns_per_kb\": %u}",
             sep, json_safe(f->path), pattern, (unsigned long long)f->writes,
             (unsigned long long)f->bytes, (unsigned long long)f->merged,
             (unsigned long long)f->direct,
             (unsigned long long)seq, (unsigned long long)str, (unsigned long long)rnd,
             (unsigned long long)f->min_size, (unsigned long long)f->max_size,
             f->costs.small[small_class(f)].small_ns, f->costs.small[small_class(f)].merged_ns,
             f->costs.ns_per_kb);
        sep = ",";
    }
    emit(e, "%s],\n", *sep ? "\n    " : "");
}

static void emit_io(unblock_emitter_t *e)
{
    unblock_wb_fold();
    uint64_t calls = 0;
    for (unsigned i = 0; i < unblock_io_fn_count; i++)
        if (unblock_io_fn_cat[i] != UNBLOCK_IO_CAT_PROCESS)
            calls += unblock_io_fn_get(i);
    /* One line each, in this order (docs/stats.md). */
    static const unblock_stat_key_t counters[] = {
        { "async", &unblock_stats.io_async },
        { "merged", &unblock_stats.io_merged },
        { "readahead_hits", &unblock_stats.io_readahead_hits },
        { "errors_deferred", &unblock_stats.io_errors_deferred },
        { "errors_returned", &unblock_stats.io_errors_returned },
        { "flushes", &unblock_stats.io_flushes },
        { "readahead_fills", &unblock_stats.io_readahead_fills },
        { "readahead_broken", &unblock_stats.io_readahead_broken },
        { "readahead_unleased", &unblock_stats.io_readahead_unleased },
        { "direct", &unblock_stats.io_direct },
        { "reads_cached", &unblock_stats.io_reads_cached },
        { "reads_background", &unblock_stats.io_reads_background },
        { "read_chunks", &unblock_stats.io_read_chunks },
        { "read_faults", &unblock_stats.io_read_faults },
        { "read_errors", &unblock_stats.io_read_errors },
        { "read_leases", &unblock_stats.io_read_leases },
        { "read_reorders", &unblock_stats.io_read_reorders },
        { "protected_writes", &unblock_stats.io_protected_writes },
        { "protected_bytes", &unblock_stats.io_protected_bytes },
        { "write_faults", &unblock_stats.io_write_faults },
        { "write_waits", &unblock_stats.io_write_waits },
        { "flushed_bytes", &unblock_stats.io_flushed_bytes },
        { "workers", &unblock_stats.io_workers },
        { "worker_ends", &unblock_stats.io_worker_ends },
        { "sidecar", &unblock_stats.io_sidecar },
        { "sidecar_files", &unblock_stats.io_sidecar_files },
        { "sidecar_failed", &unblock_stats.io_sidecar_failed },
        { "sidecar_unsafe", &unblock_stats.io_sidecar_unsafe },
        { "sidecar_waits", &unblock_stats.io_sidecar_waits },
        { "sidecar_drops", &unblock_stats.io_sidecar_drops },
        { "sidecar_settles", &unblock_stats.io_sidecar_settles },
        { "space_retries", &unblock_stats.io_space_retries },
        { "warmed", &unblock_stats.io_warmed },
        { "reserved", &unblock_stats.io_reserved },
        { "reserve_kept", &unblock_stats.io_reserve_kept },
        { "waits", &unblock_stats.io_waits },
        { "merge_stops", &unblock_stats.io_merge_stops },
        { "quiet", &unblock_stats.io_quiet },
        { "quiet_samples", &unblock_stats.io_quiet_samples },
        { "handler_kept", &unblock_stats.io_handler_kept },
        { "signals_held", &unblock_stats.io_signals_held },
    };
    emit(e, "  \"io\": {\n    \"calls\": %llu,\n", (unsigned long long)calls);
    unblock_emit_counters(e, "    ", counters, sizeof(counters) / sizeof(counters[0]));
    emit_files(e);
    emit_functions(e, 0);
    emit(e, "  },\n  \"process\": {\n");
    emit_functions(e, 1);
    emit(e, "  },\n");
}

/* (mappings that only UCX's hooks see: memory/ucm.c) */
static void fileio_init(void)
{
    __atomic_store_n(&unblock_memory_map_hook, unblock_io_map_unseen, __ATOMIC_RELEASE);
}

UNBLOCK_MODULE(unblock_fileio_module) = {
    .name = "fileio",
    .order = UNBLOCK_ORDER_FILEIO,
    .init = fileio_init,
    .fork_child = unblock_wb_forked_child,
    .exit_drain = unblock_wb_at_exit,
    .fatal_drain = unblock_wb_drain_fatal,
    .stats = emit_io,
};
