/* options.h — parsed options (see options.def for the table itself). */
#ifndef UNBLOCK_OPTIONS_H
#define UNBLOCK_OPTIONS_H

#include <stddef.h>

#include "core/core.h" /* UNBLOCK_HIDDEN */

typedef enum { UNBLOCK_OPT_BOOL, UNBLOCK_OPT_STRING, UNBLOCK_OPT_ENUM, UNBLOCK_OPT_SIZE } unblock_opt_type_t;

typedef struct {
#define UNBLOCK_OPTION(field, NAME, type, def, choices, metavar, doc) \
    UNBLOCK_OPT_FIELD_##type field;
#define UNBLOCK_OPT_FIELD_BOOL int
#define UNBLOCK_OPT_FIELD_ENUM int
#define UNBLOCK_OPT_FIELD_STRING const char *
#define UNBLOCK_OPT_FIELD_SIZE unsigned long long
#include "core/options.def"
#undef UNBLOCK_OPTION
} unblock_options_t;

typedef struct {
    const char *name;     /* "COMM" */
    unblock_opt_type_t type;
    const char *def;
    const char *choices;  /* "a|b|c" for ENUM */
    const char *metavar;
    const char *doc;
} unblock_option_desc_t;

enum { UNBLOCK_LOG_ERROR, UNBLOCK_LOG_WARN, UNBLOCK_LOG_INFO, UNBLOCK_LOG_DEBUG };
enum { UNBLOCK_PROTECT_MPROTECT, UNBLOCK_PROTECT_UFFD };
enum { UNBLOCK_MPI_AUTO, UNBLOCK_MPI_OPENMPI, UNBLOCK_MPI_MPICH };
enum { UNBLOCK_THREAD_AUTO, UNBLOCK_THREAD_MULTIPLE, UNBLOCK_THREAD_PROGRAM };
enum { UNBLOCK_OWN_FOLLOW_AUTO, UNBLOCK_OWN_FOLLOW_YES, UNBLOCK_OWN_FOLLOW_NO };

extern UNBLOCK_HIDDEN const unblock_option_desc_t unblock_option_table[];
extern UNBLOCK_HIDDEN const unsigned unblock_option_count;
extern UNBLOCK_HIDDEN unblock_options_t unblock_opt;

/* Parses one value for table row `i`.  Returns 0 and stores the result in *out
 * (an int for BOOL/ENUM, the string pointer for STRING, an unsigned long long for
 * SIZE: a count with an optional K, M or G suffix, powers of 1024), or -1 if the value is
 * not valid for the option (then *out is untouched). */
int unblock_option_parse(unsigned i, const char *value, void *out);

/* NULL if `value` is valid for row `i` (it parses, and a size is within the
 * bounds where the mechanism still works); else why not, in a few words (which
 * may be written to buf). */
const char *unblock_option_invalid(unsigned i, const char *value, char *buf, size_t len);

/* Fills `opts` from the environment (UNBLOCK_<NAME>).  A bad value prints one line
 * naming the variable and the default used, through `warn` (may be NULL). */
void unblock_options_load(unblock_options_t *opts, void (*warn)(const char *line));

/* The index of `value` in a '|'-separated list, or -1. */
int unblock_choice_index(const char *choices, const char *value, unsigned len);

#endif
