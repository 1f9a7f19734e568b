/* test_protect.c — the page table (src/protect/protect.c): a page's protection is
 * derived from the operations that own it, whatever order they come and go in.
 * The protection the kernel applied is read back from /proc/self/maps. */
#define _GNU_SOURCE
#include "protect/protect.h"
#include "core/core.h"
#include "test.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static size_t pg;

/* The protection of the page at p as /proc/self/maps shows it: "rw", "r-", "--".
 * Read with the kernel's calls, not stdio's: the library's fopen and read
 * complete the message receives in flight first (protect.h:
 * unblock_protect_receives_done), and this test's operations have no engine. */
static const char *prot_of(const void *p)
{
    static char out[3], maps[1 << 16];
    strcpy(out, "?");
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY);
    if (fd < 0)
        return out;
    size_t n = 0;
    for (long r; n < sizeof maps - 1 && (r = syscall(SYS_read, fd, maps + n, sizeof maps - 1 - n)) > 0;)
        n += (size_t)r;
    syscall(SYS_close, fd);
    maps[n] = '\0';
    for (char *line = maps; line && *line;) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        unsigned long lo, hi;
        char perms[5];
        if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 && (uintptr_t)p >= lo &&
            (uintptr_t)p < hi) {
            out[0] = perms[0];
            out[1] = perms[1];
            out[2] = '\0';
            break;
        }
        line = next;
    }
    return out;
}

/* An operation of `kind` owning pages [first, last) of region r, ACTIVE. */
static unblock_op_t *start(unblock_op_kind_t kind, char *r, int first, int last)
{
    unblock_op_t *op = unblock_op_claim(kind, 1);
    ASSERT(op != NULL);
    if (!op)
        return NULL;
    op->bytes = (unblock_bytes_t){ (uintptr_t)r + first * pg, NULL, (last - first) * pg };
    op->pstart = (uintptr_t)r + first * pg;
    op->pend = (uintptr_t)r + last * pg;
    op->got = 0; /* a receive that brings nothing: its pages keep what they hold */
    ASSERT_EQ(unblock_op_activate(op), 0);
    return op;
}

static void done(unblock_op_t *op)
{
    unblock_op_mark_done(op, 0);
    unblock_op_complete(op, 0);
}

static void test_protection_follows_the_owners(void)
{
    char *r = mmap(NULL, 6 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT(r != MAP_FAILED);
    memset(r, 7, 6 * pg);
    /* A send on pages 0-2 (read-only), a receive on 2-4 (inaccessible). */
    unblock_op_t *send = start(UNBLOCK_OP_SEND_PROT, r, 0, 3);
    ASSERT_STREQ(prot_of(r), "r-");
    ASSERT_STREQ(prot_of(r + 2 * pg), "r-");
    ASSERT_STREQ(prot_of(r + 3 * pg), "rw");
    unblock_op_t *recv = start(UNBLOCK_OP_RECV, r, 2, 5);
    ASSERT_STREQ(prot_of(r + 1 * pg), "r-");
    ASSERT_STREQ(prot_of(r + 2 * pg), "--"); /* both own it: the stricter */
    ASSERT_STREQ(prot_of(r + 4 * pg), "--");
    ASSERT_STREQ(prot_of(r + 5 * pg), "rw");
    /* Another send beside them, sharing page 0 with the first. */
    unblock_op_t *send2 = start(UNBLOCK_OP_SEND_PROT, r, 0, 1);
    /* The receive ends first: page 2 is the first send's alone again. */
    done(recv);
    ASSERT_STREQ(prot_of(r + 2 * pg), "r-");
    ASSERT_STREQ(prot_of(r + 3 * pg), "rw");
    ASSERT_STREQ(prot_of(r + 4 * pg), "rw");
    /* The first send ends: page 0 stays read-only for the second. */
    done(send);
    ASSERT_STREQ(prot_of(r), "r-");
    ASSERT_STREQ(prot_of(r + 1 * pg), "rw");
    ASSERT_STREQ(prot_of(r + 2 * pg), "rw");
    done(send2);
    ASSERT_STREQ(prot_of(r), "rw");
    ASSERT_EQ(__atomic_load_n(&unblock_ops_inflight, __ATOMIC_SEQ_CST), 0);
    ASSERT_EQ(r[0] + r[6 * pg - 1], 14); /* nothing was written */
    munmap(r, 6 * pg);
}

/* The same, the receive first: whichever slot each one holds, a page a receive
 * owns is inaccessible. */
static void test_receive_first(void)
{
    char *r = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unblock_op_t *recv = start(UNBLOCK_OP_RECV, r, 0, 2);
    unblock_op_t *send = start(UNBLOCK_OP_SEND_PROT, r, 1, 3);
    ASSERT_STREQ(prot_of(r), "--");
    ASSERT_STREQ(prot_of(r + pg), "--");
    ASSERT_STREQ(prot_of(r + 2 * pg), "r-");
    done(send);
    ASSERT_STREQ(prot_of(r + pg), "--");
    ASSERT_STREQ(prot_of(r + 2 * pg), "rw");
    done(recv);
    ASSERT_STREQ(prot_of(r + pg), "rw");
    munmap(r, 3 * pg);
}

/* Releasing a range (free, munmap) completes exactly the owners of its pages. */
static void test_release_range_completes_its_owners(void)
{
    char *r = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unblock_op_t *a = start(UNBLOCK_OP_SEND_PROT, r, 0, 1);
    unblock_op_t *b = start(UNBLOCK_OP_SEND_PROT, r, 2, 3);
    uint64_t bseq = b->seq;
    unblock_op_mark_done(a, 0);
    unblock_op_mark_done(b, 0);
    unblock_protect_release_range(r, pg); /* page 0 only */
    ASSERT_STREQ(prot_of(r), "rw");
    ASSERT_STREQ(prot_of(r + 2 * pg), "r-"); /* b is done but not finished: still owned */
    ASSERT(b->seq == bseq && b->state == UNBLOCK_OP_DONE);
    unblock_protect_release_range(r, 4 * pg);
    ASSERT_STREQ(prot_of(r + 2 * pg), "rw");
    ASSERT_EQ(__atomic_load_n(&unblock_ops_inflight, __ATOMIC_SEQ_CST), 0);
    munmap(r, 4 * pg);
}

int main(void)
{
    pg = (size_t)sysconf(_SC_PAGESIZE);
    ASSERT(unblock_protect_init());
    RUN_TEST(test_protection_follows_the_owners);
    RUN_TEST(test_receive_first);
    RUN_TEST(test_release_range_completes_its_owners);
    return TEST_SUMMARY();
}
