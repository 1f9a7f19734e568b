/* stats.c — the per-process report (see stats.h and docs/stats.md).  Runs at exit,
 * possibly from _exit, so it formats into a fixed buffer and writes with raw system
 * calls: no stdio, no allocation, none of our own wrappers. */
#define _GNU_SOURCE
#include "core/stats.h"
#include "memory/memory.h"
#include "core/options.h"
#include "core/sites.h"
#include "fileio/writebehind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

unblock_stats_t unblock_stats;

typedef struct {
    int fd;
    int failed;
    unsigned len;
    char buf[4096];
} emitter_t;

static void emit_flush(emitter_t *e)
{
    const char *p = e->buf;
    unsigned n = e->len;
    while (n > 0 && !e->failed) {
        long w = syscall(SYS_write, e->fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            e->failed = 1;
            break;
        }
        p += w;
        n -= (unsigned)w;
    }
    e->len = 0;
}

static void __attribute__((format(printf, 2, 3))) emit(emitter_t *e, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((unsigned)n >= sizeof(tmp))
        n = sizeof(tmp) - 1;
    if (e->len + (unsigned)n > sizeof(e->buf))
        emit_flush(e);
    memcpy(e->buf + e->len, tmp, (size_t)n);
    e->len += (unsigned)n;
}

static uint64_t get(const unblock_counter_t *c) { return unblock_counter_get(c); }

static void emit_comm(emitter_t *e)
{
    uint64_t calls = 0, by_binding[UNBLOCK_BINDING_COUNT] = { 0 };
    for (unsigned i = 0; i < unblock_mpi_fn_count; i++)
        for (unsigned b = 0; b < UNBLOCK_BINDING_COUNT; b++) {
            uint64_t n = get(&unblock_mpi_fn_calls[i][b]);
            by_binding[b] += n;
            if (unblock_mpi_fn_carries_data[i])
                calls += n;
        }
    uint64_t async = get(&unblock_stats.comm_async);
    emit(e, "  \"comm\": {\n    \"calls\": %llu,\n    \"async\": %llu,\n"
            "    \"passthrough\": %llu,\n    \"faults\": %llu,\n",
         (unsigned long long)calls, (unsigned long long)async,
         (unsigned long long)(calls - async),
         (unsigned long long)get(&unblock_stats.comm_faults));
    emit(e, "    \"copied\": %llu,\n    \"protected\": %llu,\n    \"received\": %llu,\n"
            "    \"immediate\": %llu,\n    \"derived\": %llu,\n    \"types_flattened\": %llu,\n"
            "    \"multiview\": %llu,\n    \"viewed\": %llu,\n"
            "    \"bytes\": %llu,\n    \"passthrough_why\": {",
         (unsigned long long)get(&unblock_stats.comm_copied),
         (unsigned long long)get(&unblock_stats.comm_protected),
         (unsigned long long)get(&unblock_stats.comm_received),
         (unsigned long long)get(&unblock_stats.comm_immediate),
         (unsigned long long)get(&unblock_stats.comm_derived),
         (unsigned long long)get(&unblock_stats.comm_types_flattened),
         (unsigned long long)get(&unblock_stats.comm_multiview),
         (unsigned long long)get(&unblock_stats.comm_viewed),
         (unsigned long long)get(&unblock_stats.comm_bytes));
    static const char *const why[] = {
#define UNBLOCK_X(name, doc) #name,
        UNBLOCK_PASS_REASONS(UNBLOCK_X)
#undef UNBLOCK_X
    };
    for (unsigned i = 0; i < UNBLOCK_PASS_COUNT; i++)
        emit(e, "%s\"%s\": %llu", i ? ", " : "", why[i],
             (unsigned long long)get(&unblock_stats.comm_pass[i]));
    emit(e, "},\n");
    emit(e, "    \"own\": {\"tracked\": %llu, \"untracked\": %llu, \"progressed\": %llu},\n",
         (unsigned long long)get(&unblock_stats.comm_own_tracked),
         (unsigned long long)get(&unblock_stats.comm_own_untracked),
         (unsigned long long)get(&unblock_stats.comm_own_progressed));
    /* How transfers progress: the completion thread (MPI_THREAD_MULTIPLE), or
     * only at intercepted calls and faults (MPI did not give the level, or
     * UNBLOCK_THREAD=program); "none" before MPI_Init and without MPI. */
    emit(e, "    \"progress\": \"%s\",\n    \"thread_level\": %d,\n",
         get(&unblock_stats.engine_started) ? "thread"
         : unblock_g.size > 0 ? "calls" : "none",
         unblock_g.size > 0 ? unblock_g.mpi_thread_provided : -1);
    emit(e, "    \"engine\": {\"completed\": %llu, \"tests\": %llu, \"test_ms\": %.3f, "
            "\"spare_core\": %d},\n",
         (unsigned long long)get(&unblock_stats.engine_completed),
         (unsigned long long)get(&unblock_stats.engine_tests),
         (double)get(&unblock_stats.engine_ns) / 1e6,
         get(&unblock_stats.engine_started) ? unblock_spare_core() : 0);
    emit(e, "    \"by_binding\": {\"c\": %llu, \"f77\": %llu, \"f08\": %llu},\n",
         (unsigned long long)by_binding[0], (unsigned long long)by_binding[1],
         (unsigned long long)by_binding[2]);
    emit(e, "    \"functions\": {");
    const char *sep = "";
    for (unsigned i = 0; i < unblock_mpi_fn_count; i++) {
        uint64_t n = 0;
        for (unsigned b = 0; b < UNBLOCK_BINDING_COUNT; b++)
            n += get(&unblock_mpi_fn_calls[i][b]);
        if (n) {
            emit(e, "%s\n      \"%s\": %llu", sep, unblock_mpi_fn_names[i], (unsigned long long)n);
            sep = ",";
        }
    }
    emit(e, "%s}\n  },\n", *sep ? "\n    " : "");
}

static void emit_functions(emitter_t *e, int want_process)
{
    const char *sep = "";
    emit(e, "    \"functions\": {");
    for (unsigned i = 0; i < unblock_io_fn_count; i++) {
        int is_process = unblock_io_fn_cat[i] == UNBLOCK_IO_CAT_PROCESS;
        uint64_t n = get(&unblock_io_fn_calls[i]);
        if (n && is_process == want_process) {
            emit(e, "%s\n      \"%s\": %llu", sep, unblock_io_fn_names[i], (unsigned long long)n);
            sep = ",";
        }
    }
    emit(e, "%s}\n", *sep ? "\n    " : "");
}

static const char *json_safe(const char *s)
{
    for (const char *p = s; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
            return "?";
    return s;
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

/* Write-behind's access pattern per file (writebehind.c). */
static void emit_files(emitter_t *e)
{
    const unblock_wb_file_t *f;
    int n = unblock_wb_files(&f);
    const char *sep = "";
    emit(e, "    \"files\": [");
    for (int i = 0; i < n; i++, f++) {
        if (f->writes == 0)
            continue;
        uint64_t seq = f->sequential, str = f->strided, rnd = f->random;
        const char *pattern = seq * 10 >= f->writes * 9 ? "sequential"
                            : str + seq >= (f->writes * 9) / 10 ? "strided" : "random";
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

static void emit_io(emitter_t *e)
{
    unblock_wb_fold();
    uint64_t calls = 0;
    for (unsigned i = 0; i < unblock_io_fn_count; i++)
        if (unblock_io_fn_cat[i] != UNBLOCK_IO_CAT_PROCESS)
            calls += get(&unblock_io_fn_calls[i]);
    /* One line each, in this order (docs/stats.md). */
    static const struct {
        const char *key;
        const unblock_counter_t *c;
    } counters[] = {
        { "async", &unblock_stats.io_async },
        { "merged", &unblock_stats.io_merged },
        { "readahead_hits", &unblock_stats.io_readahead_hits },
        { "errors_deferred", &unblock_stats.io_errors_deferred },
        { "errors_returned", &unblock_stats.io_errors_returned },
        { "flushes", &unblock_stats.io_flushes },
        { "readahead_fills", &unblock_stats.io_readahead_fills },
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
        { "waits", &unblock_stats.io_waits },
    };
    emit(e, "  \"io\": {\n    \"calls\": %llu,\n", (unsigned long long)calls);
    for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
        emit(e, "    \"%s\": %llu,\n", counters[i].key, (unsigned long long)get(counters[i].c));
    emit_files(e);
    emit_functions(e, 0);
    emit(e, "  },\n  \"process\": {\n");
    emit_functions(e, 1);
    emit(e, "  },\n");
}

/* The call sites the predictor saw, most time first (the 32 largest). */
static void emit_sites(emitter_t *e)
{
    static const char *const decisions[] = { "explore", "convert", "pass", "excluded" };
    /* (a site whose size classes decided differently is "mixed") */
    int order[UNBLOCK_SITES_MAX], n = 0;
    uint64_t cost[UNBLOCK_SITES_MAX];
    for (int i = 0; i < UNBLOCK_SITES_MAX; i++) {
        const unblock_site_t *s = &unblock_sites[i];
        uint64_t conv, conv_ns;
        unblock_site_converted_totals(s, &conv, &conv_ns);
        if (__atomic_load_n(&s->pc, __ATOMIC_ACQUIRE) == 0 || s->passed + conv == 0)
            continue;
        cost[i] = s->pass_total_ns + conv_ns;
        int j = n++;
        while (j > 0 && cost[order[j - 1]] < cost[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    if (n > 32)
        n = 32;
    emit(e, "  \"sites\": [");
    for (int k = 0; k < n; k++) {
        const unblock_site_t *s = &unblock_sites[order[k]];
        char name[320];
        unblock_site_name(s, name, sizeof(name));
        double blocking = s->passed ? (double)s->pass_total_ns / (double)s->passed / 1e3 : 0;
        uint64_t conv, conv_ns;
        unblock_site_converted_totals(s, &conv, &conv_ns);
        double converted = conv ? (double)conv_ns / (double)conv / 1e3 : 0;
        /* Time hidden: what the converted calls would have cost blocking (each at
         * its size class's blocking mean), less what they cost; negative when they
         * cost more.  Classes never run blocking are left out (sites.h). */
        int64_t hidden_ns = 0;
        for (int c = 0; c < UNBLOCK_SITE_CLASSES; c++)
            hidden_ns += s->cls[c].hidden_ns;
        double hidden = (double)hidden_ns / 1e6;
        int d = unblock_site_summary(s);
        emit(e, "%s\n    {\"site\": \"%s\", \"function\": \"%s\", \"decision\": \"%s\", "
                "\"calls\": %llu, \"converted\": %llu, \"passed\": %llu, \"bytes\": %llu, "
                "\"faults\": %llu, \"blocking_us\": %.1f, \"converted_us\": %.1f, "
                "\"blocking_ms\": %.3f, \"converted_ms\": %.3f, \"hidden_ms\": %.3f}",
             k ? "," : "", json_safe(name),
             s->fn < unblock_mpi_fn_count ? unblock_mpi_fn_names[s->fn]
             : s->fn - unblock_mpi_fn_count < unblock_io_fn_count
                 ? unblock_io_fn_names[s->fn - unblock_mpi_fn_count] : "?",
             d < 0 ? "mixed" : decisions[d & 3], (unsigned long long)(s->passed + conv),
             (unsigned long long)conv, (unsigned long long)s->passed,
             (unsigned long long)s->bytes, (unsigned long long)s->faults, blocking, converted,
             (double)s->pass_total_ns / 1e6, (double)conv_ns / 1e6, hidden);
    }
    emit(e, "%s],\n", n ? "\n  " : "");
}

/* The timeline (sites.h): per phase of the run, the time hidden and the time the
 * program waited, in ms; only the phases up to now. */
static void emit_timeline(emitter_t *e)
{
    int64_t hidden[UNBLOCK_TIMELINE_BUCKETS];
    uint64_t exposed[UNBLOCK_TIMELINE_BUCKETS], width;
    uint64_t now = unblock_now_ns();
    unsigned n = unblock_timeline_read(now, &width, hidden, exposed);
    emit(e, "  \"timeline\": {\"bucket_ms\": %.3f, \"buckets\": %u,\n    \"hidden_ms\": [",
         (double)width / 1e6, n);
    for (unsigned i = 0; i < n; i++)
        emit(e, "%s%.3f", i ? ", " : "", (double)hidden[i] / 1e6);
    emit(e, "],\n    \"exposed_ms\": [");
    for (unsigned i = 0; i < n; i++)
        emit(e, "%s%.3f", i ? ", " : "", (double)exposed[i] / 1e6);
    emit(e, "]}\n");
}


int unblock_stats_write(const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)syscall(SYS_getpid));
    emitter_t e = { 0 };
    e.fd = (int)syscall(SYS_openat, AT_FDCWD, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (e.fd < 0)
        return -1;
    emit(&e, "{\n  \"version\": \"%s\",\n  \"mpi\": \"%s\",\n  \"rank\": %d,\n  \"size\": %d,\n"
             "  \"pid\": %d,\n  \"exe\": \"%s\",\n  \"mpi_abi_ok\": %s,\n",
         UNBLOCK_VERSION, unblock_mpi_impl, unblock_g.rank, unblock_g.size, (int)unblock_g.pid,
         json_safe(unblock_g.exe), unblock_g.mpi_abi_ok ? "true" : "false");
    emit_comm(&e);
    emit(&e, "  \"protect\": {\n    \"calls\": %llu,\n    \"enomem\": %llu,\n"
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
    emit(&e, "  \"memory\": {\n    \"pool\": %s,\n    \"pool_reserved\": %llu,\n"
             "    \"pool_in_use\": %llu,\n    \"pool_peak\": %llu,\n    \"outside_pool\": %llu,\n"
             "    \"kept\": %llu,\n"
             "    \"fork_copies\": %llu,\n    \"fork_bytes\": %llu\n  },\n",
         unblock_pool_base ? "true" : "false",
         (unsigned long long)get(&unblock_stats.pool_reserved),
         (unsigned long long)(unblock_pool_in_use() - unblock_alloc_kept(1)),
         (unsigned long long)get(&unblock_stats.pool_peak),
         (unsigned long long)get(&unblock_stats.pool_outside),
         (unsigned long long)(unblock_alloc_kept(0) + unblock_alloc_kept(1)),
         (unsigned long long)get(&unblock_stats.pool_fork_copies),
         (unsigned long long)get(&unblock_stats.pool_fork_bytes));
    emit_io(&e);
    emit_sites(&e);
    emit_timeline(&e);
    emit(&e, "}\n");
    emit_flush(&e);
    int failed = e.failed;
    int saved = errno;
    syscall(SYS_close, e.fd);
    if (failed || syscall(SYS_rename, tmp, path) != 0) {
        saved = errno;
        syscall(SYS_unlink, tmp);
        errno = saved;
        return -1;
    }
    return 0;
}

void unblock_stats_path(const char *dir, char *out, unsigned outlen)
{
    if (unblock_g.rank >= 0)
        snprintf(out, outlen, "%s/unblock-%d.json", dir, unblock_g.rank);
    else
        snprintf(out, outlen, "%s/unblock-%d.json", dir, (int)unblock_g.pid);
}
