/* test_worker.c — a module's own jobs on the file workers (src/fileio/worker.h):
 * jobs of a kind the worker knows only by its table run in the order they were
 * queued, in the worker's thread, each once, and their slots come back. */
#define _GNU_SOURCE
#include "fileio/worker.h"
#include "core/core.h"
#include "test.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 2000 /* more than the job slots: they must come back */

static int order[N];
static int ran;
static pthread_t main_thread;
static int wrong_thread;

static void run(unblock_io_worker_t *k, unblock_io_job_t *j)
{
    int i = (int)(intptr_t)unblock_io_job_arg(j);
    if (pthread_equal(pthread_self(), main_thread))
        wrong_thread = 1;
    order[__atomic_fetch_add(&ran, 1, __ATOMIC_SEQ_CST)] = i;
    unblock_io_job_release(k, j);
}

static const unblock_io_kind_t kind = { "test", run };

static void test_jobs_of_a_kind_run_in_order(void)
{
    struct stat st;
    ASSERT_EQ(stat("/tmp", &st), 0);
    main_thread = pthread_self();
    int k = unblock_io_worker(st.st_dev);
    ASSERT(k >= 0);
    int queued = 0;
    for (int i = 0, tries = 0; i < N && tries < 50000; i++) {
        while (unblock_io_submit(k, &kind, (void *)(intptr_t)i) != 0 && ++tries < 50000)
            usleep(100); /* all slots in use: the worker gives them back */
        queued += tries < 50000;
    }
    for (int t = 0; t < 5000 && __atomic_load_n(&ran, __ATOMIC_SEQ_CST) < N; t++)
        usleep(1000);
    ASSERT_EQ(queued, N);
    ASSERT_EQ(__atomic_load_n(&ran, __ATOMIC_SEQ_CST), N);
    int in_order = 1;
    for (int i = 0; i < N; i++)
        in_order &= order[i] == i;
    ASSERT(in_order);
    ASSERT_EQ(wrong_thread, 0);
    ASSERT_EQ(unblock_io_worker(st.st_dev), k); /* one worker per filesystem */
}

int main(void)
{
    RUN_TEST(test_jobs_of_a_kind_run_in_order);
    return TEST_SUMMARY();
}
