/* options.c — the options table and its parser.  Shared by the library and the
 * launcher (which prints --help from the same rows).  Runs before main in the
 * library, so it only uses getenv and fixed buffers. */
#include "core/options.h"

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
    unsigned long long n = strtoull(v, &end, 10);
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

void unblock_options_load(unblock_options_t *opts, void (*warn)(const char *line))
{
    char env[64], line[256];
    for (unsigned i = 0; i < unblock_option_count; i++) {
        const unblock_option_desc_t *d = &unblock_option_table[i];
        void *field = (char *)opts + unblock_option_offsets[i];
        unblock_option_parse(i, d->def, field); /* defaults always parse */
        snprintf(env, sizeof(env), "UNBLOCK_%s", d->name);
        const char *v = getenv(env);
        if (v == NULL || unblock_option_parse(i, v, field) == 0)
            continue;
        if (warn) {
            snprintf(line, sizeof(line), "unblock: %s='%s' is not valid (%s); using the default %s\n",
                     env, v, d->type == UNBLOCK_OPT_BOOL ? "0|1" : d->type == UNBLOCK_OPT_SIZE
                     ? "a size such as 4096, 64K, 1M" : d->choices, d->def);
            warn(line);
        }
    }
}
