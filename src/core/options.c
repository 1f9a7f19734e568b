/* options.c — the options table and its parser.  Shared by the library and the
 * launcher (which prints --help from the same rows).  Runs before main in the
 * library, so it only uses getenv and fixed buffers. */
#include "core/options.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const unblock_option_desc_t unblock_option_table[] = {
#define UNBLOCK_OPTION(field, NAME, type, def, choices, metavar, doc) \
    { #NAME, UNBLOCK_OPT_##type, def, choices, metavar, doc },
#include "core/options.def"
#undef UNBLOCK_OPTION
};
const unsigned unblock_option_count =
    sizeof(unblock_option_table) / sizeof(unblock_option_table[0]);

static const size_t unblock_option_offsets[] = {
#define UNBLOCK_OPTION(field, NAME, type, def, choices, metavar, doc) \
    offsetof(unblock_options_t, field),
#include "core/options.def"
#undef UNBLOCK_OPTION
};

unblock_options_t unblock_opt;

int unblock_choice_index(const char *choices, const char *value, unsigned len)
{
    int idx = 0;
    const char *p = choices;
    while (*p) {
        const char *end = strchr(p, '|');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncasecmp(p, value, n) == 0)
            return idx;
        if (!end)
            break;
        p = end + 1;
        idx++;
    }
    return -1;
}

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = { "1", "yes", "true", "on", "y" };
    static const char *const no[] = { "0", "no", "false", "off", "n" };
    for (unsigned i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(v, yes[i]) == 0) { *out = 1; return 0; }
        if (strcasecmp(v, no[i]) == 0) { *out = 0; return 0; }
    }
    return -1;
}

static int parse_size(const char *v, unsigned long long *out)
{
    char *end;
    if (*v < '0' || *v > '9')
        return -1;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno == ERANGE)
        return -1; /* saturated: not the number written */
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end != '\0' || n > (~0ull >> shift))
        return -1;
    *out = n << shift;
    return 0;
}

int unblock_option_parse(unsigned i, const char *value, void *out)
{
    const unblock_option_desc_t *d = &unblock_option_table[i];
    switch (d->type) {
    case UNBLOCK_OPT_BOOL:
        return parse_bool(value, (int *)out);
    case UNBLOCK_OPT_ENUM: {
        int idx = unblock_choice_index(d->choices, value, (unsigned)strlen(value));
        if (idx < 0)
            return -1;
        *(int *)out = idx;
        return 0;
    }
    case UNBLOCK_OPT_STRING:
        *(const char **)out = value;
        return 0;
    case UNBLOCK_OPT_SIZE:
        return parse_size(value, (unsigned long long *)out);
    }
    return -1;
}

/* Values a SIZE option may take where its doc does not bound them already:
 * beyond these, the mechanism it tunes is defeated (or the number cannot be
 * meant).  A value outside gets the same one-line warning as a malformed one, and
 * the default.  `zero`: 0 is allowed too (its doc says what it turns off). */
typedef struct {
    const char *name;
    unsigned long long min, max;
    int zero;
    const char *why;
} option_range_t;

#define KiB 1024ull
#define GiB (1024ull * 1024 * 1024)
#define MiB (1024ull * 1024)
static const option_range_t option_ranges[] = {
    { "IO_BLOCK", 4 * KiB, 1 * GiB, 1, "a block under a page makes merged writes dearer than the calls" },
    { "RECV_COVER", 0, 100, 1, "a percentage" },
    { "PEER_MAX", 1, 64, 0, "at most 64 operations are in flight in all" },
    { "CHAIN_LEARN", 2, 1000, 1, "a chain is learned from at least 2 runs" },
    { "POLL_US", 1, 1000000, 0, "microseconds, at most 1 s" },
    { "OWN_POLL_US", 1, 1000000, 0, "microseconds, at most 1 s" },
    { "TICK_US", 20, 1000000, 1, "microseconds, 20 to 1 s: a shorter period spends the program's time in the handler" },
    { "LINGER_MS", 0, 60000, 1, "milliseconds, at most 1 min" },
    { "IO_DELAY_MS", 1, 3600000, 1, "milliseconds, at most 1 h" },
    { "IO_IDLE_MS", 1, 3600000, 1, "milliseconds, at most 1 h" },
    { "MPIIO_BLOCK", 4 * KiB, 1 * GiB, 1, "a block is 4K to 1G (0: the file system's)" },
    { "MPIIO_CACHE", 1 * MiB, 1ull << 40, 0, "at least 1M, so both stages hold a block" },
    { "MPIIO_SPIN_US", 0, 1000000, 1, "microseconds, at most 1 s" },
    { "MPIIO_QUIET", 1, 1000, 1, "collective calls, at most 1000" },
    { "MPIIO_SLEEP_MS", 1, 3600000, 0, "milliseconds, 1 to 1 h" },
};
/* Every other SIZE option: at most this (1 PiB), so that no sum overflows. */
#define SIZE_MAX_ANY (1ull << 50)

/* 0 if `v` is within the bounds of option `name`; else the reason. */
static const char *out_of_range(const char *name, unsigned long long v, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof(option_ranges) / sizeof(option_ranges[0]); i++) {
        const option_range_t *r = &option_ranges[i];
        if (strcmp(r->name, name) != 0)
            continue;
        if ((v == 0 && r->zero) || (v >= r->min && v <= r->max))
            return NULL;
        snprintf(buf, len, "%s%llu to %llu: %s", r->zero && r->min > 0 ? "0, or " : "", r->min,
                 r->max, r->why);
        return buf;
    }
    if (v > SIZE_MAX_ANY) {
        snprintf(buf, len, "at most %llu", SIZE_MAX_ANY);
        return buf;
    }
    return NULL;
}

const char *unblock_option_invalid(unsigned i, const char *value, char *buf, size_t len)
{
    const unblock_option_desc_t *d = &unblock_option_table[i];
    unsigned long long parsed[2]; /* the largest field there is, and aligned */
    if (unblock_option_parse(i, value, parsed) != 0)
        return d->type == UNBLOCK_OPT_BOOL ? "0|1"
               : d->type == UNBLOCK_OPT_SIZE ? "a size such as 4096, 64K, 1M" : d->choices;
    if (d->type != UNBLOCK_OPT_SIZE)
        return NULL;
    return out_of_range(d->name, parsed[0], buf, len);
}

void unblock_options_load(unblock_options_t *opts, void (*warn)(const char *line))
{
    char env[64], line[384], why[160];
    for (unsigned i = 0; i < unblock_option_count; i++) {
        const unblock_option_desc_t *d = &unblock_option_table[i];
        void *field = (char *)opts + unblock_option_offsets[i];
        unblock_option_parse(i, d->def, field); /* defaults always parse */
        snprintf(env, sizeof(env), "UNBLOCK_%s", d->name);
        const char *v = getenv(env);
        if (v == NULL)
            continue;
        const char *bad = unblock_option_invalid(i, v, why, sizeof(why));
        if (bad == NULL)
            unblock_option_parse(i, v, field);
        else if (warn) {
            snprintf(line, sizeof(line), "unblock: %s='%s' is not valid (%s); using the default %s\n",
                     env, v, bad, d->def);
            warn(line);
        }
    }
}
