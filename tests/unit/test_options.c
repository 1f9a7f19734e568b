/* test_options.c — the options table parses what users write, rejects the rest
 * with one line naming the variable and the default, and keeps the default. */
#include "core/core.h"
#include "core/options.h"
#include "progress/progress.h"
#include "test.h"

static char warned[4][256];
static int nwarned;

static void collect(const char *line)
{
    if (nwarned < 4)
        snprintf(warned[nwarned], sizeof(warned[0]), "%s", line);
    nwarned++;
}

static int index_of(const char *name)
{
    for (unsigned i = 0; i < unblock_option_count; i++)
        if (strcmp(unblock_option_table[i].name, name) == 0)
            return (int)i;
    return -1;
}

static void test_defaults(void)
{
    unblock_options_t o;
    nwarned = 0;
    unsetenv("UNBLOCK_COMM");
    unsetenv("UNBLOCK_LOG");
    unblock_options_load(&o, collect);
    ASSERT_EQ(nwarned, 0);
    ASSERT_EQ(o.comm, 1);
    ASSERT_EQ(o.io, 1);
    ASSERT_EQ(o.disable, 0);
    ASSERT_EQ(o.log, UNBLOCK_LOG_WARN);
    ASSERT_EQ(o.protect, UNBLOCK_PROTECT_MPROTECT);
    ASSERT_STREQ(o.stats, "");
}

static void test_values(void)
{
    unblock_options_t o;
    nwarned = 0;
    setenv("UNBLOCK_COMM", "off", 1);
    setenv("UNBLOCK_LOG", "DEBUG", 1);
    setenv("UNBLOCK_PROTECT", "uffd", 1);
    setenv("UNBLOCK_STATS", "/some/dir", 1);
    unblock_options_load(&o, collect);
    ASSERT_EQ(nwarned, 0);
    ASSERT_EQ(o.comm, 0);
    ASSERT_EQ(o.log, UNBLOCK_LOG_DEBUG);
    ASSERT_EQ(o.protect, UNBLOCK_PROTECT_UFFD);
    ASSERT_STREQ(o.stats, "/some/dir");
    unsetenv("UNBLOCK_COMM");
    unsetenv("UNBLOCK_LOG");
    unsetenv("UNBLOCK_PROTECT");
    unsetenv("UNBLOCK_STATS");
}

static void test_bad_values_keep_defaults(void)
{
    unblock_options_t o;
    nwarned = 0;
    setenv("UNBLOCK_COMM", "maybe", 1);
    setenv("UNBLOCK_PROTECT", "magic", 1);
    unblock_options_load(&o, collect);
    ASSERT_EQ(nwarned, 2);
    ASSERT_EQ(o.comm, 1);
    ASSERT_EQ(o.protect, UNBLOCK_PROTECT_MPROTECT);
    ASSERT_STREQ(warned[0], "unblock: UNBLOCK_COMM='maybe' is not valid (0|1); using the default 1\n");
    ASSERT_STREQ(warned[1], "unblock: UNBLOCK_PROTECT='magic' is not valid (mprotect|uffd); "
                            "using the default mprotect\n");
    /* one line each */
    ASSERT(strchr(warned[0], '\n') == warned[0] + strlen(warned[0]) - 1);
    unsetenv("UNBLOCK_COMM");
    unsetenv("UNBLOCK_PROTECT");
}

static void test_parse_single(void)
{
    int v = 7;
    int i = index_of("VERIFY");
    ASSERT(i >= 0);
    ASSERT_EQ(unblock_option_parse((unsigned)i, "yes", &v), 0);
    ASSERT_EQ(v, 1);
    ASSERT_EQ(unblock_option_parse((unsigned)i, "2", &v), -1);
    ASSERT_EQ(v, 1);
    ASSERT_EQ(unblock_choice_index("a|bb|c", "bb", 2), 1);
    ASSERT_EQ(unblock_choice_index("a|bb|c", "b", 1), -1);
    ASSERT_EQ(unblock_choice_index("a|bb|c", "C", 1), 2);
}

static void test_sizes(void)
{
    unsigned long long v = 7;
    unsigned i;
    for (i = 0; i < unblock_option_count; i++)
        if (strcmp(unblock_option_table[i].name, "COPY_MAX") == 0)
            break;
    ASSERT(i < unblock_option_count);
    ASSERT_EQ(unblock_option_parse(i, "4096", &v), 0);
    ASSERT_EQ(v, 4096);
    ASSERT_EQ(unblock_option_parse(i, "64K", &v), 0);
    ASSERT_EQ(v, 65536);
    ASSERT_EQ(unblock_option_parse(i, "1MiB", &v), 0);
    ASSERT_EQ(v, 1048576);
    ASSERT_EQ(unblock_option_parse(i, "2g", &v), 0);
    ASSERT_EQ(v, 2147483648ull);
    ASSERT_EQ(unblock_option_parse(i, "-1", &v), -1);
    ASSERT_EQ(unblock_option_parse(i, "12Q", &v), -1);
    ASSERT_EQ(unblock_option_parse(i, "", &v), -1);
    ASSERT_EQ(v, 2147483648ull); /* a bad value leaves the field alone */
}

/* Sizes that overflow, or that defeat the mechanism they tune, get the warning
 * and the default; the bounds themselves and the documented 0 are taken. */
static void test_sizes_out_of_range(void)
{
    unblock_options_t o;
    nwarned = 0;
    setenv("UNBLOCK_IO_BLOCK", "99999999999999999999999", 1);
    setenv("UNBLOCK_PEER_MAX", "0", 1);
    setenv("UNBLOCK_COPY_MAX", "2000000G", 1);
    setenv("UNBLOCK_RECV_COVER", "101", 1);
    unblock_options_load(&o, collect);
    ASSERT_EQ(nwarned, 4);
    ASSERT_EQ(o.io_block, 1 << 20);
    ASSERT_EQ(o.peer_max, 16);
    ASSERT_EQ(o.copy_max, 4 << 20);
    ASSERT_EQ(o.recv_cover, 75);
    ASSERT_STREQ(warned[0], "unblock: UNBLOCK_COPY_MAX='2000000G' is not valid (at most "
                            "1125899906842624); using the default 4M\n");
    nwarned = 0;
    unsetenv("UNBLOCK_PEER_MAX");
    unsetenv("UNBLOCK_COPY_MAX");
    unsetenv("UNBLOCK_RECV_COVER");
    setenv("UNBLOCK_IO_BLOCK", "1", 1);
    unblock_options_load(&o, collect);
    ASSERT_EQ(o.io_block, 1 << 20);
    ASSERT(nwarned == 1 && strstr(warned[0], "UNBLOCK_IO_BLOCK='1' is not valid (0, or 4096 to") != NULL);
    nwarned = 0;
    setenv("UNBLOCK_IO_BLOCK", "0", 1);     /* documented: merging off */
    setenv("UNBLOCK_PEER_MAX", "64", 1);    /* the bound itself */
    setenv("UNBLOCK_COPY_MAX", "1024G", 1);
    setenv("UNBLOCK_RECV_COVER", "100", 1);
    unblock_options_load(&o, collect);
    ASSERT_EQ(nwarned, 0);
    ASSERT_EQ(o.io_block, 0);
    ASSERT_EQ(o.peer_max, 64);
    ASSERT_EQ(o.copy_max, 1024ull << 30);
    ASSERT_EQ(o.recv_cover, 100);
    char buf[160];
    ASSERT(unblock_option_invalid((unsigned)index_of("IO_BLOCK"), "4K", buf, sizeof(buf)) == NULL);
    ASSERT(unblock_option_invalid((unsigned)index_of("IO_BLOCK"), "4095", buf, sizeof(buf)) != NULL);
    unsetenv("UNBLOCK_IO_BLOCK");
    unsetenv("UNBLOCK_PEER_MAX");
    unsetenv("UNBLOCK_COPY_MAX");
    unsetenv("UNBLOCK_RECV_COVER");
}

static void test_table_is_documented(void)
{
    for (unsigned i = 0; i < unblock_option_count; i++) {
        const unblock_option_desc_t *d = &unblock_option_table[i];
        ASSERT(d->doc && strlen(d->doc) > 10);
        ASSERT(d->metavar && d->metavar[0]);
        if (d->type == UNBLOCK_OPT_ENUM)
            ASSERT(unblock_choice_index(d->choices, d->def, (unsigned)strlen(d->def)) >= 0);
    }
}

/* The rule behind UNBLOCK_POLL_US's back-off and write merging: whether the
 * runtime's threads have a core the ranks do not use. */
static void test_spare_core_rule(void)
{
    ASSERT_EQ(unblock_spare_core_of(1, 2, 2), 0);  /* 2 ranks bound to the 2 cores */
    ASSERT_EQ(unblock_spare_core_of(2, 2, 2), 0);  /* 2 ranks unbound on 2 cores */
    ASSERT_EQ(unblock_spare_core_of(2, 2, 1), 1);  /* 1 rank (or serial) on 2 cores */
    ASSERT_EQ(unblock_spare_core_of(4, 8, 4), 1);  /* bound to 4 of 8: its own */
    ASSERT_EQ(unblock_spare_core_of(8, 8, 8), 0);  /* a full node, unbound */
    ASSERT_EQ(unblock_spare_core_of(16, 16, 4), 1);
    ASSERT_EQ(unblock_spare_core_of(1, 1, 1), 0);  /* one core */
    ASSERT_EQ(unblock_spare_core_of(2, 2, 0), 1);  /* no launcher said: 1 rank */
}

int main(void)
{
    RUN_TEST(test_spare_core_rule);
    RUN_TEST(test_defaults);
    RUN_TEST(test_values);
    RUN_TEST(test_bad_values_keep_defaults);
    RUN_TEST(test_parse_single);
    RUN_TEST(test_sizes);
    RUN_TEST(test_sizes_out_of_range);
    RUN_TEST(test_table_is_documented);
    return TEST_SUMMARY();
}
