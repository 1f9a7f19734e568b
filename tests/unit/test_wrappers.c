/* test_wrappers.c — the file wrappers, linked into this program, return what the
 * real calls return and leave errno as they leave it, count each call once, and
 * the report they feed is valid. */
#define _GNU_SOURCE
#include "core/core.h"
#include "core/stats.h"
#include "fileio/fileio.h"
#include "interpose/interpose.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static char dir[] = "/tmp/unblock-unit-XXXXXX";

static void test_errors_are_the_real_ones(void)
{
    char buf[8];
    errno = 0;
    ASSERT_EQ(write(-1, "x", 1), -1);
    ASSERT_EQ(errno, EBADF);
    errno = 0;
    ASSERT_EQ(read(12345, buf, sizeof(buf)), -1);
    ASSERT_EQ(errno, EBADF);
    errno = 0;
    ASSERT_EQ(open("/nonexistent/file", O_RDONLY), -1);
    ASSERT_EQ(errno, ENOENT);
    errno = 0;
    struct stat st;
    ASSERT_EQ(stat("/nonexistent/file", &st), -1);
    ASSERT_EQ(errno, ENOENT);
    errno = 0;
    ASSERT_EQ(lseek(-5, 0, SEEK_SET), -1);
    ASSERT_EQ(errno, EBADF);
    /* success leaves errno alone, as the real call does */
    errno = 1234;
    int fd = open("/dev/null", O_WRONLY);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, "abc", 3), 3);
    ASSERT_EQ(errno, 1234);
    close(fd);
}

static void test_calls_are_counted_once(void)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/count", dir);
    uint64_t w0 = unblock_io_fn_get(UNBLOCK_IO_ID_write);
    uint64_t o0 = unblock_io_fn_get(UNBLOCK_IO_ID_open);
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(write(fd, "0123456789", 10), 10);
    close(fd);
    ASSERT_EQ(unblock_io_fn_get(UNBLOCK_IO_ID_write) - w0, 10);
    ASSERT_EQ(unblock_io_fn_get(UNBLOCK_IO_ID_open) - o0, 1);
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ(st.st_size, 100);
    ASSERT_EQ(st.st_mode & 0777, 0600); /* the variadic mode reached the kernel */
}

static void test_inside_mpi_passes_through(void)
{
    uint64_t w0 = unblock_io_fn_get(UNBLOCK_IO_ID_write);
    int fd = open("/dev/null", O_WRONLY);
    unblock_tls.mpi_depth = 1; /* as while MPI runs ROMIO's own writes */
    ASSERT_EQ(write(fd, "x", 1), 1);
    unblock_tls.mpi_depth = 0;
    close(fd);
    ASSERT_EQ(unblock_io_fn_get(UNBLOCK_IO_ID_write) - w0, 0);
}

static void test_resolve(void)
{
    void *w = unblock_dlsym_next("write");
    ASSERT(w != NULL);
    ASSERT(w != (void *)write); /* the real one, not our wrapper */
    ASSERT(unblock_dlsym_next("unblock_no_such_symbol") == NULL);
    /* a library that is not loaded is never loaded by the lookup */
    ASSERT(unblock_dlsym_next_or_in("MPI_Send", "libmpi.so.40:libmpich.so.12") == NULL);
    ASSERT(unblock_dlsym_next_or_in("write", "libc.so.6") == w);
}

static void test_stats_file(void)
{
    char path[256], text[16384];
    snprintf(path, sizeof(path), "%s/stats.json", dir);
    ASSERT_EQ(unblock_stats_write(path), 0);
    int fd = open(path, O_RDONLY);
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    ASSERT(n > 0);
    text[n > 0 ? n : 0] = '\0';
    static const char *const keys[] = { "\"comm\"", "\"calls\"", "\"async\"", "\"passthrough\"",
                                        "\"faults\"", "\"protect\"", "\"io\"", "\"merged\"",
                                        "\"readahead_hits\"", "\"errors_deferred\"", "\"sites\"" };
    for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        ASSERT(strstr(text, keys[i]) != NULL);
    ASSERT(strstr(text, "\"write\":") != NULL);
    /* no temporary file is left behind */
    char tmp[300];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    ASSERT_EQ(access(tmp, F_OK), -1);
    unlink(path);
    snprintf(path, sizeof(path), "%s/missing-dir/stats.json", dir);
    ASSERT_EQ(unblock_stats_write(path), -1);
    ASSERT_EQ(errno, ENOENT);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 2;
    RUN_TEST(test_errors_are_the_real_ones);
    RUN_TEST(test_calls_are_counted_once);
    RUN_TEST(test_inside_mpi_passes_through);
    RUN_TEST(test_resolve);
    RUN_TEST(test_stats_file);
    char path[300];
    snprintf(path, sizeof(path), "%s/count", dir);
    unlink(path);
    rmdir(dir);
    return TEST_SUMMARY();
}
