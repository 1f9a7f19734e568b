/* report.c — the mpiio module's table (core/module.h): start-up installs the hook
 * the MPI-IO wrappers call, the exit drain writes what a program that never
 * called MPI_Finalize left buffered, the fatal-signal drain writes what this rank
 * holds through plain descriptors, and its part of the report, the "mpiio"
 * section (docs/stats.md). */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "core/log.h"
#include "core/module.h"

#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Also before an exec (the exec_drain hook), which replaces the process: from
 * then on nothing is taken (mio_ending), also if the exec fails and the
 * program goes on (its writes are then MPI's own calls).  Before, a rank that
 * exec'd without MPI_Finalize lost every write it had buffered (2 ranks, 1000
 * cells each: 16,000 bytes plain, an empty file under unblock, both MPIs;
 * *.mpiio-exec). */
static void exit_drain(void)
{
    mio_drain_all(1);
    mio_report_unconsumed();
}

/* A fatal signal: each rank writes the pieces it holds itself (the images of the
 * blocks it owns, stage 1, and what waits to be sent to owners), with pwrite on the descriptor opened beside the
 * file at open; nothing is sent to owners.  Async-signal-safe (no lock: a
 * structure the interrupted thread was changing may be skipped). */
void mio_write_records_fd(int fd, int64_t base, const char *rec, size_t used)
{
    size_t i = 0;
    while (i + 8 <= used) {
        uint32_t off, len;
        memcpy(&off, rec + i, 4);
        memcpy(&len, rec + i + 4, 4);
        if (i + 8 + len > used)
            break;
        if (pwrite(fd, rec + i + 8, len, base + off) < 0)
            break;
        i += 8 + (size_t)len;
    }
}

/* From here on nothing is taken (mio_ending): writes are made in their calls,
 * and the cursor's and memos' takes end (unblock_mpiio_gen). */
static void ending(void)
{
    __atomic_store_n(&mio_ending, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&unblock_mpiio_gen, 1, __ATOMIC_SEQ_CST);
}

/* A fatal signal's drain takes mio_lock and never gives it back: the process
 * ends after the drain, and another thread of the program that writes through
 * MPI-IO meanwhile waits in its call (which has not returned: nothing it wrote
 * is lost).  Before, such a thread went on taking writes into buffers the drain
 * had passed: with a second thread writing 8-byte MPI_File_write_at records
 * while another took SIGTERM, 6 of 12 one-rank MPICH programs lost records, and
 * 11 of 12 where the main thread wrote through the cursor (the
 * signals.end-mpiio-* tests).  Not where this thread holds the lock already
 * (the signal came inside our code: the drain reads the structures as they
 * are; told by glibc's owner field, elsewhere by the wait's end), nor after
 * 100 ms of another thread's hold (a block written through MPI to a slow file
 * system): then the drain goes on without it, as before.  Async-signal-safe:
 * a trylock is one atomic exchange. */
static void lock_for_drain(void)
{
#if defined(__GLIBC__)
    if (mio_lock.__data.__owner == (int)syscall(SYS_gettid))
        return;
#endif
    uint64_t until = unblock_now_ns() + 100000000ull;
    while (pthread_mutex_trylock(&mio_lock) != 0) {
        if (unblock_now_ns() > until)
            return;
        syscall(SYS_sched_yield);
    }
}

static void fatal_drain(void)
{
    if (mio_files == NULL)
        return;
    ending();
    lock_for_drain();
    for (mio_file_t *f = mio_files; f; f = f->next) {
        if (f->fd < 0)
            continue;
        /* (oldest first: a newer image of a block holds later bytes) */
        for (mio_image_t *im = mio_image_after(f, -1, 0); im;
             im = mio_image_after(f, -1, im->seq)) {
            uint32_t s = im->lo, e;
            while (mio_next_run(im, &s, &e, im->hi) &&
                   pwrite(f->fd, im->data + s, e - s, im->block * f->block + s) >= 0)
                s = e;
        }
        for (mio_pblock_t *b = f->list; b; b = b->next)
            if (b->buf)
                mio_write_records_fd(f->fd, b->block * f->block, b->buf, b->used);
        mio_cur_fatal_write(f);
    }
    mio_fatal_drain_queue();
}

/* A fork child: the files, buffers and thread are the parent's; the child
 * writes none of them (not at its exit either). */
static void fork_child(void)
{
    mio_files = NULL;
    __atomic_store_n(&unblock_outside_look, NULL, __ATOMIC_RELEASE);
    mio_news_none();
    memset(&unblock_mpiio_cur, 0, sizeof unblock_mpiio_cur);
    mio_thread_forked();
}

static void emit_mpiio(unblock_emitter_t *e)
{
    static const unblock_stat_key_t counters[] = {
        { "files", &mio_stats.files },
        { "writes", &mio_stats.writes },
        { "bytes", &mio_stats.bytes },
        { "iwrites", &mio_stats.iwrites },
        { "passthrough", &mio_stats.passthrough },
        { "pieces_sent", &mio_stats.pieces_sent },
        { "bytes_sent", &mio_stats.bytes_sent },
        { "pieces_received", &mio_stats.pieces_received },
        { "blocks_written", &mio_stats.blocks_written },
        { "blocks_written_remote", &mio_stats.blocks_written_remote },
        { "blocks_written_full", &mio_stats.blocks_written_full },
        { "blocks_kept", &mio_stats.blocks_kept },
        { "blocks_kept_asked", &mio_stats.blocks_kept_asked },
        { "write_calls", &mio_stats.write_calls },
        { "evictions", &mio_stats.evictions },
        { "peak_buffered", &mio_stats.peak_buffered },
        { "blocks_retried", &mio_stats.blocks_retried },
        { "errors_deferred", &mio_stats.errors_deferred },
        { "errors_returned", &mio_stats.errors_returned },
        { "errors_unconsumed", &mio_stats.errors_unconsumed },
        { "thread_started", &mio_stats.thread_started },
        { "thread_wakeups", &mio_stats.thread_wakeups },
        { "thread_sleeps", &mio_stats.thread_sleeps },
        { "nonblocking_completed", &mio_stats.nonblocking_completed },
        { "split_completed", &mio_stats.split_completed },
        { "sizes_answered", &mio_stats.sizes_answered },
        { "reads_served", &mio_stats.reads_served },
        { "cursor_writes", &mio_stats.cursor_writes },
        { "flushes_direct", &mio_stats.flushes_direct },
        { "blocks_passed", &mio_stats.blocks_passed },
        { "strided_writes", &mio_stats.strided_writes },
        { "sync_fsyncs", &mio_stats.sync_fsyncs },
        { "flushes_quiet", &mio_stats.flushes_quiet },
    };
    static const char *const modes[] = { "unused", "one-stage", "two-stage" };
    unblock_emit(e, "  \"mpiio\": {\n    \"mode\": \"%s\",\n", modes[mio_mode]);
    unblock_emit_counters(e, "    ", counters, sizeof counters / sizeof counters[0]);
    unblock_emit(e, "    \"flushes\": {\"local\": %llu, \"collective\": %llu, \"bound\": %llu, "
                    "\"idle\": %llu, \"close\": %llu, \"finalize\": %llu, \"exit\": %llu, "
                    "\"news\": %llu, \"see\": %llu, \"outside\": %llu}\n  },\n",
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_local),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_collective),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_bound),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_idle),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_close),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_finalize),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_exit),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_news),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_see),
                 (unsigned long long)unblock_counter_get(&mio_stats.flush_outside));
}

/* ---- drains ---- */

void mio_drain_all(int why)
{
    if (mio_files == NULL) /* (a file followed: MPI's functions are resolved) */
        return;
    int init = 0, fin = 1;
    mio_mpi.initialized(&init);
    mio_mpi.finalized(&fin);
    if (!init || fin)
        return;
    if (why)
        ending(); /* (before the cursor is dropped: it takes nothing after it) */
    mio_cur_drop();
    pthread_mutex_lock(&mio_lock);
    for (mio_file_t *f = mio_files; f; f = f->next) {
        if (f->list || f->images)
            unblock_counter_add(why ? &mio_stats.flush_exit : &mio_stats.flush_finalize, 1);
        mio_write_held(f);
    }
    pthread_mutex_unlock(&mio_lock);
}

/* Errors of background writes the program never saw (no file closed after them). */
void mio_report_unconsumed(void)
{
    for (mio_file_t *f = mio_files; f; f = f->next)
        if (f->err > 0) {
            unblock_counter_add(&mio_stats.errors_unconsumed, 1);
            unblock_warn("MPI-IO write-behind: a background write failed (MPI error class %d) "
                         "and the program never saw it",
                         f->err);
        }
}

UNBLOCK_MODULE(unblock_mpiio_module) = {
    .name = "mpiio",
    .order = UNBLOCK_ORDER_MPIIO,
    .init = mio_install,
    .fork_child = fork_child,
    .exit_drain = exit_drain,
    .exec_drain = exit_drain,
    .fatal_drain = fatal_drain,
    .stats = emit_mpiio,
};
