/* stats.c — the per-process report (see stats.h and docs/stats.md).  Runs at exit,
 * possibly from _exit, so it formats into a fixed buffer and writes with raw system
 * calls: no stdio, no allocation, none of our own wrappers. */
#define _GNU_SOURCE
#include "core/stats.h"
#include "core/module.h"
#include "core/profile.h"
#include "core/options.h"
#include "core/sites.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

unblock_stats_t unblock_stats;

struct unblock_emitter {
    int fd;
    int failed;
    unsigned len;
    char buf[4096];
};
typedef unblock_emitter_t emitter_t;

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

void unblock_emit(emitter_t *e, const char *fmt, ...)
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

#define emit unblock_emit

const char *unblock_json_safe(const char *s)
{
    for (const char *p = s; *p; p++)
        if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
            return "?";
    return s;
}
#define json_safe unblock_json_safe

void unblock_emit_counters(emitter_t *e, const char *indent, const unblock_stat_key_t *keys,
                           unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        emit(e, "%s\"%s\": %llu,\n", indent, keys[i].key,
             (unsigned long long)unblock_counter_get(keys[i].c));
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
             s->fn_name ? json_safe(s->fn_name) : "?",
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
    emit(&e, "{\n  \"version\": \"%s\",\n  \"rank\": %d,\n  \"size\": %d,\n"
             "  \"pid\": %d,\n  \"exe\": \"%s\",\n",
         UNBLOCK_VERSION, unblock_g.rank, unblock_g.size, (int)unblock_g.pid,
         json_safe(unblock_g.exe));
    const unblock_job_t *job = &unblock_g.job;
    emit(&e, "  \"job\": {\"launcher\": \"%s\", \"rank\": %d, \"size\": %d, "
             "\"local_rank\": %d, \"local_size\": %d, \"slurm_mpi\": \"%s\"},\n",
         unblock_job_launcher_name(job->launcher), job->rank, job->size, job->local_rank,
         job->local_size, json_safe(job->mpi_type));
    unblock_profile_emit(&e);
    unblock_modules_stats(&e);
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
