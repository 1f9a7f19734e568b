/* report.c — `unblock report DIR`: reads every DIR/unblock-*.json written by the
 * library (src/core/stats.c) and prints a per-process and total table, then the
 * most called MPI and file functions, and the call sites that cost the most.  The
 * reader is a small JSON parser that flattens objects into "a.b.c" keys and the
 * elements of arrays into "a.0.b", "a.1.b", ... */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 3072

typedef struct {
    char key[128];
    double num;
    char str[128];
    int is_str;
} kv_t;

typedef struct {
    char file[256];
    kv_t kv[MAX_KEYS];
    int n;
} doc_t;

typedef struct {
    const char *p;
    int ok;
} parser_t;

static void skip_ws(parser_t *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static int parse_string(parser_t *ps, char *out, size_t len)
{
    if (*ps->p != '"')
        return -1;
    ps->p++;
    size_t n = 0;
    while (*ps->p && *ps->p != '"') {
        if (*ps->p == '\\' && ps->p[1])
            ps->p++;
        if (n + 1 < len)
            out[n++] = *ps->p;
        ps->p++;
    }
    if (*ps->p != '"')
        return -1;
    ps->p++;
    out[n] = '\0';
    return 0;
}

static void parse_value(parser_t *ps, doc_t *d, const char *path);

static void add(doc_t *d, const char *path, double num, const char *str)
{
    if (d->n >= MAX_KEYS)
        return;
    kv_t *kv = &d->kv[d->n++];
    snprintf(kv->key, sizeof(kv->key), "%s", path);
    kv->num = num;
    kv->is_str = str != NULL;
    snprintf(kv->str, sizeof(kv->str), "%s", str ? str : "");
}

static void parse_value(parser_t *ps, doc_t *d, const char *path)
{
    skip_ws(ps);
    if (!ps->ok)
        return;
    char c = *ps->p;
    if (c == '{') {
        ps->p++;
        skip_ws(ps);
        if (*ps->p == '}') {
            ps->p++;
            return;
        }
        for (;;) {
            char key[128], sub[256];
            skip_ws(ps);
            if (parse_string(ps, key, sizeof(key)) != 0) {
                ps->ok = 0;
                return;
            }
            skip_ws(ps);
            if (*ps->p != ':') {
                ps->ok = 0;
                return;
            }
            ps->p++;
            snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
            parse_value(ps, d, sub);
            skip_ws(ps);
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p == '}') {
                ps->p++;
                return;
            }
            ps->ok = 0;
            return;
        }
    } else if (c == '[') {
        ps->p++;
        skip_ws(ps);
        if (*ps->p == ']') {
            ps->p++;
            return;
        }
        for (int i = 0;; i++) {
            char sub[256];
            snprintf(sub, sizeof(sub), "%s%s%d", path, *path ? "." : "", i);
            parse_value(ps, d, sub);
            skip_ws(ps);
            if (!ps->ok)
                return;
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p == ']') {
                ps->p++;
                return;
            }
            ps->ok = 0;
            return;
        }
    } else if (c == '"') {
        char s[128];
        if (parse_string(ps, s, sizeof(s)) != 0)
            ps->ok = 0;
        else
            add(d, path, 0, s);
    } else if (strncmp(ps->p, "true", 4) == 0) {
        ps->p += 4;
        add(d, path, 1, NULL);
    } else if (strncmp(ps->p, "false", 5) == 0) {
        ps->p += 5;
        add(d, path, 0, NULL);
    } else if (strncmp(ps->p, "null", 4) == 0) {
        ps->p += 4;
    } else {
        char *end;
        double v = strtod(ps->p, &end);
        if (end == ps->p) {
            ps->ok = 0;
            return;
        }
        ps->p = end;
        add(d, path, v, NULL);
    }
}

static const kv_t *lookup(const doc_t *d, const char *key)
{
    for (int i = 0; i < d->n; i++)
        if (strcmp(d->kv[i].key, key) == 0)
            return &d->kv[i];
    return NULL;
}

static double num(const doc_t *d, const char *key)
{
    const kv_t *kv = lookup(d, key);
    return kv ? kv->num : 0;
}

static int load(const char *path, doc_t *d)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        fclose(f);
        return -1;
    }
    buf[len] = '\0';
    fclose(f);
    parser_t ps = { buf, 1 };
    d->n = 0;
    parse_value(&ps, d, "");
    free(buf);
    return ps.ok ? 0 : -1;
}

static int by_rank(const void *a, const void *b)
{
    const doc_t *x = *(doc_t *const *)a, *y = *(doc_t *const *)b;
    double rx = num(x, "rank"), ry = num(y, "rank");
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return num(x, "pid") < num(y, "pid") ? -1 : 1;
}

static const char *const columns[][2] = {
    { "comm.calls", "calls" },       { "comm.async", "async" },
    { "comm.passthrough", "passthru" }, { "comm.faults", "faults" },
    { "protect.calls", "protect" },  { "io.calls", "io.calls" },
    { "io.async", "io.async" },      { "io.merged", "merged" },
    { "io.readahead_hits", "ra.hits" }, { "io.errors_deferred", "io.errors" },
};
#define NCOL (sizeof(columns) / sizeof(columns[0]))

/* Sums "PREFIX.<name>" over all documents and prints the largest `top`. */
static void print_functions(doc_t **docs, int n, const char *prefix, const char *title, int top)
{
    struct { char name[64]; double total; } agg[512];
    int na = 0;
    size_t plen = strlen(prefix);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < docs[i]->n; k++) {
            const kv_t *kv = &docs[i]->kv[k];
            if (kv->is_str || strncmp(kv->key, prefix, plen) != 0 || kv->key[plen] != '.')
                continue;
            const char *name = kv->key + plen + 1;
            int j;
            for (j = 0; j < na; j++)
                if (strcmp(agg[j].name, name) == 0)
                    break;
            if (j == na) {
                if (na == 512)
                    continue;
                snprintf(agg[na].name, sizeof(agg[na].name), "%s", name);
                agg[na++].total = 0;
            }
            agg[j].total += kv->num;
        }
    if (na == 0)
        return;
    printf("\n%s (all processes):\n", title);
    for (int shown = 0; shown < top && shown < na; shown++) {
        int best = shown;
        for (int j = shown + 1; j < na; j++)
            if (agg[j].total > agg[best].total)
                best = j;
        char tmp[sizeof(agg[0].name)];
        double t = agg[best].total;
        memcpy(tmp, agg[best].name, sizeof(tmp));
        agg[best] = agg[shown];
        memcpy(agg[shown].name, tmp, sizeof(tmp));
        agg[shown].total = t;
        printf("  %-28s %12.0f\n", agg[shown].name, agg[shown].total);
    }
}

/* The call sites of all processes (the same site and function summed over
 * ranks), most time first: where conversion hid time and where it cost. */
static void print_sites(doc_t **docs, int n, int top)
{
    typedef struct {
        char site[128], fn[128], decision[128];
        double calls, converted, passed, faults, blocking_ms, converted_ms, hidden_ms;
    } site_t;
    static site_t agg[512];
    int na = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0;; k++) {
            char key[64];
            snprintf(key, sizeof(key), "sites.%d.site", k);
            const kv_t *site = lookup(docs[i], key);
            snprintf(key, sizeof(key), "sites.%d.function", k);
            const kv_t *fn = lookup(docs[i], key);
            if (!site || !fn)
                break;
            int j;
            for (j = 0; j < na; j++)
                if (strcmp(agg[j].site, site->str) == 0 && strcmp(agg[j].fn, fn->str) == 0)
                    break;
            if (j == na) {
                if (na == 512)
                    continue;
                memset(&agg[na], 0, sizeof(agg[na]));
                snprintf(agg[na].site, sizeof(agg[na].site), "%s", site->str);
                snprintf(agg[na].fn, sizeof(agg[na].fn), "%s", fn->str);
                na++;
            }
            site_t *a = &agg[j];
#define SITE_NUM(field) (snprintf(key, sizeof(key), "sites.%d." #field, k), num(docs[i], key))
            a->calls += SITE_NUM(calls);
            a->converted += SITE_NUM(converted);
            a->passed += SITE_NUM(passed);
            a->faults += SITE_NUM(faults);
            a->blocking_ms += SITE_NUM(blocking_ms);
            a->converted_ms += SITE_NUM(converted_ms);
            a->hidden_ms += SITE_NUM(hidden_ms);
#undef SITE_NUM
            snprintf(key, sizeof(key), "sites.%d.decision", k);
            const kv_t *dec = lookup(docs[i], key);
            const char *d = dec ? dec->str : "?";
            if (!a->decision[0])
                snprintf(a->decision, sizeof(a->decision), "%s", d);
            else if (strcmp(a->decision, d) != 0)
                snprintf(a->decision, sizeof(a->decision), "mixed");
        }
    if (na == 0)
        return;
    printf("\nCall sites (all processes, most time first; times in ms):\n");
    printf("  %-32s %-20s %9s %9s %9s %7s %10s %10s %10s %s\n", "site", "function", "calls",
           "converted", "passed", "faults", "blocking", "converted", "hidden", "decision");
    for (int shown = 0; shown < top && shown < na; shown++) {
        int best = shown;
        for (int j = shown + 1; j < na; j++)
            if (agg[j].blocking_ms + agg[j].converted_ms >
                agg[best].blocking_ms + agg[best].converted_ms)
                best = j;
        site_t t = agg[best];
        agg[best] = agg[shown];
        agg[shown] = t;
        printf("  %-32.32s %-20.20s %9.0f %9.0f %9.0f %7.0f %10.3f %10.3f %10.3f %s\n", t.site,
               t.fn, t.calls, t.converted, t.passed, t.faults, t.blocking_ms, t.converted_ms,
               t.hidden_ms, t.decision);
    }
}

int unblock_report_main(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp) {
        fprintf(stderr, "unblock report: cannot open %s: %m\n", dir);
        return 1;
    }
    doc_t **docs = NULL;
    int n = 0, bad = 0;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        size_t len = strlen(de->d_name);
        if (strncmp(de->d_name, "unblock-", 8) != 0 || len < 6 ||
            strcmp(de->d_name + len - 5, ".json") != 0)
            continue;
        doc_t *d = calloc(1, sizeof(*d));
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        if (!d || load(path, d) != 0) {
            fprintf(stderr, "unblock report: %s is not a statistics file\n", path);
            free(d);
            bad++;
            continue;
        }
        snprintf(d->file, sizeof(d->file), "%s", de->d_name);
        docs = realloc(docs, sizeof(*docs) * (size_t)(n + 1));
        docs[n++] = d;
    }
    closedir(dp);
    if (n == 0) {
        fprintf(stderr, "unblock report: no unblock-*.json in %s\n", dir);
        return 1;
    }
    qsort(docs, (size_t)n, sizeof(*docs), by_rank);
    const kv_t *mpi = lookup(docs[0], "mpi");
    printf("unblock report: %d process%s, MPI library: %s\n\n", n, n == 1 ? "" : "es",
           mpi ? mpi->str : "?");
    printf("%-10s %-12s", "rank", "program");
    for (unsigned c = 0; c < NCOL; c++)
        printf(" %10s", columns[c][1]);
    printf("\n");
    double total[NCOL] = { 0 };
    for (int i = 0; i < n; i++) {
        const kv_t *exe = lookup(docs[i], "exe");
        char who[32];
        if (num(docs[i], "rank") >= 0)
            snprintf(who, sizeof(who), "%.0f", num(docs[i], "rank"));
        else
            snprintf(who, sizeof(who), "pid %.0f", num(docs[i], "pid"));
        printf("%-10s %-12.12s", who, exe ? exe->str : "?");
        for (unsigned c = 0; c < NCOL; c++) {
            double v = num(docs[i], columns[c][0]);
            total[c] += v;
            printf(" %10.0f", v);
        }
        printf("\n");
    }
    printf("%-10s %-12s", "total", "");
    for (unsigned c = 0; c < NCOL; c++)
        printf(" %10.0f", total[c]);
    printf("\n");
    print_functions(docs, n, "comm.functions", "MPI calls", 12);
    print_functions(docs, n, "io.functions", "File calls", 12);
    print_sites(docs, n, 10);
    for (int i = 0; i < n; i++)
        free(docs[i]);
    free(docs);
    return bad ? 1 : 0;
}
