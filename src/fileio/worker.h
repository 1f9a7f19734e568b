/* worker.h — the file workers' jobs, for any module that has file work to do in
 * the background (write-behind's blocks, protected writes and background reads
 * today; MPI-IO write-behind next).
 *
 * One worker thread per filesystem (st_dev) runs the jobs queued on it in order
 * (a background read the program waits for goes first).  A job has a kind: a
 * small table of operations that the module owning the kind defines, and the
 * worker knows nothing else of it.  The POSIX worker never calls MPI: a kind's
 * `run` must not either (it runs with the thread marked "inside MPI", so its
 * file calls reach the kernel untouched, and it must not block on the program). */
#ifndef UNBLOCK_FILEIO_WORKER_H
#define UNBLOCK_FILEIO_WORKER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct wb_job unblock_io_job_t;
typedef struct wb_worker unblock_io_worker_t;

typedef struct unblock_io_kind {
    const char *name;
    /* Does the job, in worker k's thread, and ends it: unblock_io_job_release
     * (or the owning module's own end, for write-behind's kinds). */
    void (*run)(unblock_io_worker_t *k, unblock_io_job_t *j);
} unblock_io_kind_t;

/* The worker of filesystem `dev`, started if needed: its index, or -1 when no
 * worker can run (the caller does the work itself).  A worker with nothing to do
 * ends after UNBLOCK_IO_IDLE_MS; unblock_io_submit starts it again. */
int unblock_io_worker(dev_t dev);

/* Queues a job of `kind` carrying `arg` on worker k.  0, or -1 when no job slot is
 * free (the caller does the work itself).  Jobs of one worker run in the order
 * they were queued. */
int unblock_io_submit(int k, const unblock_io_kind_t *kind, void *arg);

/* What unblock_io_submit was given. */
void *unblock_io_job_arg(const unblock_io_job_t *j);

/* Ends a job submitted with unblock_io_submit (from its kind's run). */
void unblock_io_job_release(unblock_io_worker_t *k, unblock_io_job_t *j);

#endif
