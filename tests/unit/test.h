/* test.h — a minimal unit-test kit (after libuv's test/task.h): one process per
 * test program, ASSERT macros that print file:line and the values, a summary line
 * "N passed, N failed" that CI reads. */
#ifndef UNBLOCK_TEST_H
#define UNBLOCK_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failed_checks;
static int test_passed, test_failed;

#define ASSERT(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
            test_failed_checks++; \
        } \
    } while (0)

#define ASSERT_EQ(a, b) \
    do { \
        long long a_ = (long long)(a), b_ = (long long)(b); \
        if (a_ != b_) { \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, \
                    #b, a_, b_); \
            test_failed_checks++; \
        } \
    } while (0)

#define ASSERT_STREQ(a, b) \
    do { \
        const char *a_ = (a), *b_ = (b); \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) { \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                    #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
            test_failed_checks++; \
        } \
    } while (0)

#define RUN_TEST(fn) \
    do { \
        int before_ = test_failed_checks; \
        fn(); \
        if (test_failed_checks == before_) { \
            test_passed++; \
            printf("ok   %s\n", #fn); \
        } else { \
            test_failed++; \
            printf("FAIL %s\n", #fn); \
        } \
    } while (0)

#define TEST_SUMMARY() \
    (printf("%d passed, %d failed\n", test_passed, test_failed), test_failed ? 1 : 0)

#endif
