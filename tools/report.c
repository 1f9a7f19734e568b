/* report.c — `unblock report [--png FILE] DIR`: reads every DIR/unblock-*.json
 * written by the library (src/core/stats.c) and prints a per-process and total
 * table, then the most called MPI and file functions, and the call sites that
 * cost the most; then sums the processes' timelines and draws hidden against
 * exposed time per phase of the run into a PNG (png.c).  The reader is a small
 * JSON parser that flattens objects into "a.b.c" keys and the elements of arrays
 * into "a.0.b", "a.1.b", ... (an array of numbers: "a.0", "a.1", ...). */
#define _GNU_SOURCE
#include "png.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
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

/* How transfers progressed: with a completion thread, or only at the program's
 * calls and faults. */
static void print_progress(doc_t **docs, int n)
{
    int thread = 0, calls = 0;
    for (int i = 0; i < n; i++) {
        const kv_t *p = lookup(docs[i], "comm.progress");
        if (p && strcmp(p->str, "thread") == 0)
            thread++;
        else if (p && strcmp(p->str, "calls") == 0)
            calls++;
    }
    if (thread)
        printf("\nProgress: a completion thread (MPI_THREAD_MULTIPLE) in %d of %d processes.\n",
               thread, n);
    if (calls)
        printf("%sProgress: only at intercepted calls and faults in %d of %d processes "
               "(no MPI_THREAD_MULTIPLE: the MPI did not give it, or UNBLOCK_THREAD=program); "
               "conversions that need a completion thread ran as the original calls.\n",
               thread ? "" : "\n", calls, n);
}

/* ---- the picture: hidden and exposed time per phase (docs/stats.md) ---- */

#define PHASES_MAX 64 /* a file holds at most 64 phases (UNBLOCK_TIMELINE_BUCKETS) */

typedef struct {
    double width_ms; /* of a phase */
    int n, procs;    /* phases; processes with a timeline */
    double hidden[PHASES_MAX], exposed[PHASES_MAX];
} timeline_t;

/* Sums the processes' timelines on one time axis, each counted from its own
 * start, in phases of the widest width any of them has: the others' phases are
 * 2^k times narrower (all widths are 1 ms doubled) and fall in one phase each; a
 * width that does not divide would be shared out by overlap.  Returns the number
 * of processes with a timeline. */
static int sum_timelines(doc_t **docs, int n, timeline_t *t)
{
    memset(t, 0, sizeof(*t));
    double span = 0;
    for (int i = 0; i < n; i++) {
        double w = num(docs[i], "timeline.bucket_ms");
        if (w <= 0)
            continue;
        t->procs++;
        if (w > t->width_ms)
            t->width_ms = w;
        if (num(docs[i], "timeline.buckets") * w > span)
            span = num(docs[i], "timeline.buckets") * w;
    }
    if (t->procs == 0)
        return 0;
    t->n = (int)ceil(span / t->width_ms - 1e-9);
    t->n = t->n < 1 ? 1 : t->n > PHASES_MAX ? PHASES_MAX : t->n;
    for (int i = 0; i < n; i++) {
        double w = num(docs[i], "timeline.bucket_ms");
        int nb = (int)num(docs[i], "timeline.buckets");
        for (int j = 0; w > 0 && j < nb && j < PHASES_MAX; j++) {
            char key[64];
            snprintf(key, sizeof(key), "timeline.hidden_ms.%d", j);
            double h = num(docs[i], key);
            snprintf(key, sizeof(key), "timeline.exposed_ms.%d", j);
            double e = num(docs[i], key);
            double a = j * w, b = a + w;
            for (int k = (int)(a / t->width_ms); k < t->n && k * t->width_ms < b; k++) {
                double lo = fmax(a, k * t->width_ms), hi = fmin(b, (k + 1) * t->width_ms);
                if (hi > lo) {
                    t->hidden[k] += h * (hi - lo) / w;
                    t->exposed[k] += e * (hi - lo) / w;
                }
            }
        }
    }
    return t->procs;
}

typedef struct {
    int w, h;
    unsigned char *px; /* RGB, rows top to bottom */
} canvas_t;

typedef unsigned char rgb_t[3];
static const rgb_t WHITE = { 255, 255, 255 }, AXIS = { 60, 60, 60 }, GRID = { 228, 228, 228 },
                   INK = { 40, 40, 40 }, FAINT = { 140, 140, 140 };
/* The two colours of the bars (also said in the printed output). */
static const rgb_t EXPOSED = { 0xd6, 0x45, 0x41 }, HIDDEN = { 0x2e, 0x86, 0xc1 };

/* Fills [x0, x1) x [y0, y1), clipped to the canvas. */
static void fill(canvas_t *c, int x0, int y0, int x1, int y1, const rgb_t col)
{
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > c->w ? c->w : x1;
    y1 = y1 > c->h ? c->h : y1;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            memcpy(c->px + ((size_t)y * c->w + x) * 3, col, 3);
}

/* A 5 x 7 font (rows top to bottom, bit 4 the leftmost column) for the labels:
 * digits, lower case and a few signs; anything else is left blank. */
static const struct {
    char c;
    unsigned char row[7];
} font[] = {
    { '0', { 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e } },
    { '1', { 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e } },
    { '2', { 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f } },
    { '3', { 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e } },
    { '4', { 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 } },
    { '5', { 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e } },
    { '6', { 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e } },
    { '7', { 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 } },
    { '8', { 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e } },
    { '9', { 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c } },
    { '.', { 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c } },
    { ',', { 0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08 } },
    { '-', { 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00 } },
    { ':', { 0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00 } },
    { '(', { 0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02 } },
    { ')', { 0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08 } },
    { '/', { 0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00 } },
    { 'a', { 0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f } },
    { 'b', { 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e } },
    { 'c', { 0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e } },
    { 'd', { 0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f } },
    { 'e', { 0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e } },
    { 'f', { 0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08 } },
    { 'g', { 0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e } },
    { 'h', { 0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11 } },
    { 'i', { 0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e } },
    { 'j', { 0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0c } },
    { 'k', { 0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12 } },
    { 'l', { 0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e } },
    { 'm', { 0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11 } },
    { 'n', { 0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11 } },
    { 'o', { 0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e } },
    { 'p', { 0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10 } },
    { 'q', { 0x00, 0x00, 0x0d, 0x13, 0x0f, 0x01, 0x01 } },
    { 'r', { 0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10 } },
    { 's', { 0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e } },
    { 't', { 0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06 } },
    { 'u', { 0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d } },
    { 'v', { 0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04 } },
    { 'w', { 0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a } },
    { 'x', { 0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11 } },
    { 'y', { 0x00, 0x00, 0x11, 0x11, 0x0f, 0x01, 0x0e } },
    { 'z', { 0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f } },
};
#define GLYPH_W 6 /* 5 columns and a space */
#define GLYPH_H 7

static int text_width(const char *s)
{
    return (int)strlen(s) * GLYPH_W - 1;
}

/* Draws `s` with its top left corner at (x, y). */
static void text(canvas_t *c, int x, int y, const char *s, const rgb_t col)
{
    for (; *s; s++, x += GLYPH_W)
        for (unsigned g = 0; g < sizeof(font) / sizeof(font[0]); g++)
            if (font[g].c == *s) {
                for (int r = 0; r < GLYPH_H; r++)
                    for (int b = 0; b < 5; b++)
                        if (font[g].row[r] & (0x10 >> b))
                            fill(c, x + b, y + r, x + b + 1, y + r + 1, col);
                break;
            }
}

/* A tick step of 1, 2 or 5 times a power of ten that cuts `range` in at most 6. */
static double nice_step(double range)
{
    double p = pow(10, floor(log10(range / 6)));
    return range / 6 <= p ? p : range / 6 <= 2 * p ? 2 * p : range / 6 <= 5 * p ? 5 * p : 10 * p;
}

/* The picture: per phase, a bar of exposed time and one of hidden time next to
 * it (below the baseline where hiding cost more than it saved), in ms summed
 * over the processes; y ticks with grid lines, x ticks at every phase, labelled
 * where there is room. */
static int draw_timeline(const timeline_t *t, const char *path)
{
    canvas_t c = { 720, 360, NULL };
    c.px = malloc((size_t)c.w * c.h * 3);
    if (!c.px)
        return -1;
    fill(&c, 0, 0, c.w, c.h, WHITE);
    const int x0 = 64, x1 = c.w - 16, y0 = 34, y1 = c.h - 44; /* the plot area */

    double vmax = 0, vmin = 0;
    for (int i = 0; i < t->n; i++) {
        vmax = fmax(vmax, fmax(t->exposed[i], t->hidden[i]));
        vmin = fmin(vmin, t->hidden[i]);
    }
    if (vmax - vmin <= 0)
        vmax = 1;
    double step = nice_step(vmax - vmin);
    double top = ceil(vmax / step - 1e-9) * step, bot = floor(vmin / step + 1e-9) * step;
    if (vmin < 0 && -vmin < step / 4) /* a little below 0: a strip, not a whole step */
        bot = -(top - vmin) / 25;
#define YOF(v) (y0 + (int)lround((top - (v)) / (top - bot) * (y1 - y0)))

    char buf[128];
    snprintf(buf, sizeof(buf), "ms per phase, %d process%s", t->procs, t->procs == 1 ? "" : "es");
    text(&c, x0, 6, buf, INK);
    /* The legend names only what has bars: no swatch of a colour that is not drawn. */
    int lx = x0;
    static const char *const names[2] = { "exposed (waited)", "hidden (saved)" };
    const unsigned char *cols[2] = { EXPOSED, HIDDEN };
    int any[2] = { 0, 0 };
    for (int i = 0; i < t->n; i++) {
        any[0] |= t->exposed[i] != 0;
        any[1] |= t->hidden[i] != 0;
    }
    for (int k = 0; k < 2; k++) {
        if (any[k]) {
            fill(&c, lx, 19, lx + 10, 26, cols[k]);
            text(&c, lx + 14, 19, names[k], INK);
            lx += 14 + text_width(names[k]) + 18;
        } else {
            snprintf(buf, sizeof(buf), "%s: none", names[k]);
            text(&c, lx, 19, buf, FAINT);
            lx += text_width(buf) + 18;
        }
    }

    /* y: grid lines and labelled ticks */
    for (double v = ceil(bot / step - 1e-9) * step; v <= top + step / 2; v += step) {
        int y = YOF(v);
        fill(&c, x0, y, x1, y + 1, GRID);
        fill(&c, x0 - 4, y, x0, y + 1, AXIS);
        snprintf(buf, sizeof(buf), "%g", fabs(v) < step / 2 ? 0 : v);
        text(&c, x0 - 7 - text_width(buf), y - 3, buf, INK);
    }
    /* the bars */
    double slot = (double)(x1 - x0) / t->n;
    int gap = slot >= 5 ? (int)(slot / 5) : 0;
    int bw = (int)((slot - gap) / 2);
    bw = bw < 1 ? 1 : bw > 48 ? 48 : bw;
    int y_zero = YOF(0);
    for (int i = 0; i < t->n; i++) {
        int bx = x0 + (int)(i * slot + (slot - 2 * bw) / 2);
        double v[2] = { t->exposed[i], t->hidden[i] };
        for (int k = 0; k < 2; k++) {
            if (v[k] == 0)
                continue;
            int y = YOF(v[k]);
            if (y == y_zero) /* too small to see at this scale: one pixel */
                y = v[k] > 0 ? y_zero - 1 : y_zero + 1;
            if (v[k] > 0)
                fill(&c, bx + k * bw, y, bx + (k + 1) * bw, y_zero, cols[k]);
            else
                fill(&c, bx + k * bw, y_zero + 1, bx + (k + 1) * bw, y + 1, cols[k]);
        }
    }
    /* axes: the y axis, the baseline (0), the time axis under the plot with a
     * tick at every phase boundary, labelled where the labels fit */
    fill(&c, x0 - 1, y0, x0, y1 + 1, AXIS);
    fill(&c, x0 - 1, y_zero, x1, y_zero + 1, AXIS);
    if (y1 != y_zero)
        fill(&c, x0 - 1, y1, x1, y1 + 1, AXIS);
    double span_ms = t->n * t->width_ms;
    int in_s = span_ms >= 10000;
    int every = 1;
    while (every * slot < 44)
        every *= 2;
    for (int i = 0; i <= t->n; i++) {
        int x = x0 + (int)lround(i * slot);
        if (x >= x1)
            x = x1 - 1;
        fill(&c, x, y1 + 1, x + 1, y1 + (i % every ? 3 : 5), AXIS);
        if (i % every == 0) {
            snprintf(buf, sizeof(buf), "%g", in_s ? i * t->width_ms / 1000 : i * t->width_ms);
            text(&c, x - text_width(buf) / 2, y1 + 8, buf, INK);
        }
    }
    snprintf(buf, sizeof(buf), "time since the start of each process, %s (%d phases of %g ms)",
             in_s ? "s" : "ms", t->n, t->width_ms);
    text(&c, x0, y1 + 24, buf, INK);
#undef YOF
    int rc = unblock_png_write(path, c.px, (unsigned)c.w, (unsigned)c.h);
    free(c.px);
    return rc;
}

/* Prints the sums of the timelines and writes their picture to `png`. */
static int print_timeline(doc_t **docs, int n, const char *png)
{
    timeline_t t;
    if (sum_timelines(docs, n, &t) == 0) {
        printf("\nNo timeline in these statistics: no picture.\n");
        return 0;
    }
    double h = 0, e = 0;
    for (int i = 0; i < t.n; i++) {
        h += t.hidden[i];
        e += t.exposed[i];
    }
    printf("\nPhases (%d of %g ms, from the start of each process; %d process%s):\n"
           "  exposed %.3f ms, hidden %.3f ms\n",
           t.n, t.width_ms, t.procs, t.procs == 1 ? "" : "es", e, h);
    if (draw_timeline(&t, png) != 0) {
        fprintf(stderr, "unblock report: cannot write %s: %m\n", png);
        return -1;
    }
    printf("  wrote %s:\n"
           "    per phase, exposed time (the program waited): red #%02x%02x%02x, left bar;\n"
           "    hidden time (what conversions saved): blue #%02x%02x%02x, right bar, below\n"
           "    the baseline where they cost more; y: ms summed over the processes,\n"
           "    x: time since each process started\n",
           png, EXPOSED[0], EXPOSED[1], EXPOSED[2], HIDDEN[0], HIDDEN[1], HIDDEN[2]);
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: unblock report [--png FILE] DIR\n");
    return 2;
}

/* `unblock report [--png FILE] DIR` (argv: what follows "report"). */
int unblock_report_main(int argc, char **argv)
{
    const char *dir = NULL, *png_opt = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--png") == 0 && i + 1 < argc)
            png_opt = argv[++i];
        else if (strncmp(argv[i], "--png=", 6) == 0 && argv[i][6])
            png_opt = argv[i] + 6;
        else if (argv[i][0] == '-' || dir)
            return usage();
        else
            dir = argv[i];
    }
    if (!dir)
        return usage();
    char png[4096];
    snprintf(png, sizeof(png), "%s", png_opt ? png_opt : "");
    if (!png_opt)
        snprintf(png, sizeof(png), "%s/unblock-report.png", dir);

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
    print_progress(docs, n);
    print_functions(docs, n, "comm.functions", "MPI calls", 12);
    print_functions(docs, n, "io.functions", "File calls", 12);
    print_sites(docs, n, 10);
    if (print_timeline(docs, n, png) != 0)
        bad++;
    for (int i = 0; i < n; i++)
        free(docs[i]);
    free(docs);
    return bad ? 1 : 0;
}
