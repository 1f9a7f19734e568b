/* worker.c — one worker thread per filesystem, its job queue and its timer.
 *
 * Owns: the workers, the job slots and their free list, the spare block-sized
 * buffers, the bytes of copies the workers hold (the copy budget,
 * UNBLOCK_COPY_BUDGET), and the "dying" state of a fatal signal.  A job has a kind
 * (worker.h): its table says what the worker does with it, so a module with file
 * work of its own (MPI-IO write-behind) queues jobs of its own kind without this
 * file or the POSIX code knowing them (unblock_io_submit).  Write-behind's kinds
 * are merge_write_kind (merge.c), the protected write (protected.c) and the
 * background read (bgread.c).
 * Calls: fdtable.c and merge.c (the timer's scan of idle blocks, a dying
 * program's blocks), readahead.c (leases that break), never MPI. */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h"
#define WB_JOBS 512
static wb_job_t jobs[WB_JOBS], *job_free;
static int qlock; /* the job lists, spare blocks, workers[] and files[] */
static size_t queued_bytes; /* bytes of copies the workers hold (atomic) */
static uint32_t budget_gen, budget_waiters; /* budget_wait's futex and its sleepers */
static char *spare_blocks[16]; /* block-sized buffers kept for reuse */
static unsigned nspare;
long unblock_test_handover_ms; /* the test hook UNBLOCK_TEST_HANDOVER_MS */

static wb_worker_t workers[WB_WORKERS];

/* A fatal signal: the workers write everything now (unblock_wb_drain_fatal). */
static uint32_t dying, dying_done;




void qlock_(void)
{
    while (__atomic_exchange_n(&qlock, 1, __ATOMIC_ACQUIRE))
        __builtin_ia32_pause();
}

void qunlock(void)
{
    __atomic_store_n(&qlock, 0, __ATOMIC_RELEASE);
}

/* A free job slot, or NULL; and giving one back (`copied`: the bytes of the copy
 * it held, no longer queued). */
wb_job_t *job_take(void)
{
    qlock_();
    wb_job_t *j = job_free;
    if (j)
        job_free = j->next;
    qunlock();
    return j;
}

void job_put(wb_job_t *j, size_t copied)
{
    qlock_();
    __atomic_sub_fetch(&queued_bytes, copied, __ATOMIC_SEQ_CST); /* faults add outside qlock */
    j->next = job_free;
    job_free = j;
    qunlock();
    budget_freed();
}

/* Appends j to k's queue; `copied`: the bytes of a copy it holds. */
void job_push(wb_worker_t *k, wb_job_t *j, size_t copied)
{
    qlock_();
    if (k->tail)
        k->tail->next = j;
    else
        k->head = j;
    k->tail = j;
    __atomic_add_fetch(&queued_bytes, copied, __ATOMIC_RELAXED);
    qunlock();
}

/* k has one more job: it wakes if it sleeps. */
void job_kick(wb_worker_t *k)
{
    __atomic_add_fetch(&k->queued, 1, __ATOMIC_SEQ_CST);
    unblock_futex_wake(&k->queued);
}

/* A buffer for a job or a block: a spare block when the size is a block's. */
char *get_buffer(size_t cap)
{
    char *b = NULL;
    if (cap == unblock_opt.io_block) {
        qlock_();
        if (nspare)
            b = spare_blocks[--nspare];
        qunlock();
        if (b)
            return b;
    }
    if ((b = sc_alloc(cap)) != NULL) /* crash safety: shared memory */
        return b;
    b = (char *)syscall(SYS_mmap, NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    return b == MAP_FAILED ? NULL : b;
}

void put_buffer(char *b, size_t cap)
{
    /* Under the test hook a buffer given back holds bytes nobody wrote: a
     * journal entry still naming it shows in the file. */
    if (unblock_unlikely(unblock_test_handover_ms))
        memset(b, '#', cap);
    if (cap == unblock_opt.io_block) {
        qlock_();
        if (nspare < sizeof(spare_blocks) / sizeof(spare_blocks[0])) {
            spare_blocks[nspare++] = b;
            b = NULL;
        }
        qunlock();
    }
    if (b && !sc_free(b, cap))
        syscall(SYS_munmap, b, cap);
}

/* One block's memory made ready ahead, kept as a spare (MPI_Init: sidecar.c,
 * unblock_wb_mpi_started).  A fresh page costs its first write a fault, a
 * page's allocation and zeroing: 2.2-2.3 us a page of the sidecar's shared
 * memory here, 1.25 us an anonymous one, so a 512 KiB checkpoint written one
 * 2 KiB row per pwrite into fresh memory cost more merged (128 faults) than the
 * system calls it saved, and sor2d 256^2's one checkpoint at the end took 1.94x
 * plain's time.  Made here, in MPI_Init (0.6 ms a MiB here, beside MPI_Init's
 * tens of milliseconds), every later block reuses kept memory (spares, and the
 * arena's warm chunks).  The cost of a rank that never writes: one block of
 * memory. */
void buffers_warm_one(void)
{
    size_t cap = unblock_opt.io_block;
    if (cap == 0 || __atomic_load_n(&nspare, __ATOMIC_RELAXED))
        return;
    char *b = get_buffer(cap);
    if (!b)
        return;
    /* Its first MiB at most: a larger UNBLOCK_IO_BLOCK would cost every rank
     * its size in memory and time at start. */
    size_t n = cap < ((size_t)1 << 20) ? cap : (size_t)1 << 20;
    unblock_populate(b, n);
    unblock_counter_add(&unblock_stats.io_warmed, n);
    put_buffer(b, cap);
}

/* A fork child: the spare buffers may be the parent's shared memory. */
void buffers_forked_child(void)
{
    nspare = 0;
}

int job_index(const wb_job_t *j)
{
    return (int)(j - jobs);
}

/* Hands a filled job of w to its worker k (`copied`: the bytes of a copy it holds). */
void enqueue_job(wb_fd_t *w, wb_worker_t *k, wb_job_t *j, size_t copied)
{
    job_push(k, j, copied);
    __atomic_add_fetch(&w->pending, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST);
    job_kick(k);
}

/* Waits until the worker has written every job of fd (locked: a worker never
 * waits for a descriptor lock while it writes, so this cannot deadlock). */
void drain_locked(wb_fd_t *w)
{
    uint32_t p = __atomic_load_n(&w->pending, __ATOMIC_SEQ_CST);
    if (p == 0)
        return;
    unblock_counter_add(&unblock_stats.io_waits, 1);
    do
        unblock_futex_wait(&w->pending, p, 0);
    while ((p = __atomic_load_n(&w->pending, __ATOMIC_SEQ_CST)) != 0);
}


/* The worker of the filesystem `dev` (qlock held). */
uint8_t worker_for(dev_t dev)
{
    int k, unused = -1;
    for (k = 0; k < WB_WORKERS; k++) {
        if (workers[k].used && workers[k].dev == dev)
            return (uint8_t)k;
        if (!workers[k].used && unused < 0)
            unused = k;
    }
    if (unused < 0)
        return (uint8_t)(dev % WB_WORKERS); /* more filesystems than workers: share */
    workers[unused].used = 1;
    workers[unused].dev = dev;
    return (uint8_t)unused;
}

/* ---- the workers: queued blocks and large writes, and the timer ---- */

/* Each writes its filesystem's queued jobs in order; while blocks on its
 * filesystem hold data it also looks every UNBLOCK_IO_DELAY_MS (50 ms, the paper's
 * figure) and queues the blocks that did not change since its last look, so data
 * never waits in memory much longer than that after the last write.  With nothing
 * queued and no block holding data it sleeps on the futex: an idle program pays
 * nothing. */

static long now_ms(void)
{
    return (long)(unblock_now_ns() / 1000000u);
}

/* The next job: FIFO, except that a read the program waits for goes first, and
 * after a piece its neighbour in the direction the program consumes them (the
 * paper's reordering: reading goes on from where the program faulted, in pieces
 * of about 1 MiB; a program that consumes its block bottom to top gets the
 * pieces bottom to top).  Reads may pass writes: none of their file is queued
 * (rd_read settles it first). */
static wb_job_t *dequeue(wb_worker_t *k)
{
    qlock_();
    wb_job_t **pp = &k->head, *prev = NULL, *x;
    int found = 0;
    if (__atomic_load_n(&unblock_io_urgent, __ATOMIC_ACQUIRE))
        for (x = k->head; x && !found; prev = x, x = x->next)
            if (x->op && __atomic_load_n(&x->op->urgent, __ATOMIC_ACQUIRE) == 1) {
                pp = prev ? &prev->next : &k->head;
                found = 1;
                break;
            }
    if (found) {
        uintptr_t lo = (*pp)->op->bytes.base;
        k->down = k->urgent_lo && lo < k->urgent_lo;
        k->urgent_lo = lo;
    } else if (k->last_hi) {
        prev = NULL;
        for (x = k->head; x; prev = x, x = x->next)
            if (x->op && (k->down ? x->op->bytes.base + x->len == k->last_lo
                                  : x->op->bytes.base == k->last_hi)) {
                pp = prev ? &prev->next : &k->head;
                found = 1;
                break;
            }
    }
    if (!found)
        prev = NULL;
    wb_job_t *j = *pp;
    if (j && pp != &k->head)
        unblock_counter_add(&unblock_stats.io_read_reorders, 1);
    if (j && j->op) {
        k->last_lo = j->op->bytes.base;
        k->last_hi = j->op->bytes.base + j->len;
    } else {
        k->last_lo = k->last_hi = 0;
    }
    if (j) {
        *pp = j->next;
        if (k->tail == j)
            k->tail = pp == &k->head ? NULL : prev;
        j->started = 1; /* a protected write no longer grows */
    }
    qunlock();
    return j;
}


/* A write job of worker k is over: the `copied` bytes of copy budget it held go
 * back, and its slot too unless `reuse` is 0 (a dying program's thread may still
 * look at it); its descriptor's drain may end. */
void job_end(wb_worker_t *k, wb_job_t *j, size_t copied, int reuse)
{
    wb_fd_t *w = slot(j->fd);
    if (reuse)
        job_put(j, copied);
    else {
        __atomic_sub_fetch(&queued_bytes, copied, __ATOMIC_SEQ_CST);
        budget_freed();
    }
    __atomic_sub_fetch(&k->queued, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&w->pending, 1, __ATOMIC_SEQ_CST);
    unblock_futex_wake(&w->pending);
}

/* A block or a copied large write is in the file (or failed). */
void job_done(wb_worker_t *k, wb_job_t *j)
{
    sc_job_written(job_index(j)); /* in the file: the sidecar has nothing to do for it */
    put_buffer(j->buf, j->cap);
    job_end(k, j, j->len, 1);
}

/* Blocks of this worker's descriptors that did not change since the last look are
 * queued; with `all` (a fatal signal) every block goes: written here when none of
 * its descriptor's earlier data waits in the queue, else queued behind it, so the
 * file is always a prefix of what was written, never a block with a hole before
 * it (a lock the dying program holds is waited for 100 ms at most; holding it,
 * nobody can queue more of that descriptor). */
static void scan_blocks(int me, int all)
{
    for (int fd = 0; fd < fd_end(); fd++) {
        wb_fd_t *w = slot(fd);
        if (w->wk != me || w->state != WB_BUFFERING || w->len == 0)
            continue;
        int locked = wtrylock(w);
        for (long t0 = now_ms(); !locked && all && now_ms() - t0 < 100;)
            syscall(SYS_sched_yield), locked = wtrylock(w);
        if (!locked)
            continue; /* the program is writing it right now */
        if (w->state == WB_BUFFERING && w->len) {
            if (all && __atomic_load_n(&w->pending, __ATOMIC_SEQ_CST) == 0) {
                write_out(fd, w, w->buf, w->len, w->boff);
                block_done_locked(w);
            } else if (all || w->idle) {
                submit_block_locked(fd, w);
            } else {
                w->idle = 1;
            }
        }
        wunlock(w);
    }
}


/* After the worker wrote up to `done` on fd: when less than half of the range
 * the descriptor reserved is left ahead of it, the worker reserves the next step
 * itself, while no write of its own holds the file (fallocate waits for a
 * running write on FUSE and NFS).  The program's writes then find their range
 * reserved; a failure here is left to the program's own call to meet. */
void reserve_ahead(int fd, wb_fd_t *w, off_t done)
{
    if (w->state != WB_BUFFERING || !wtrylock(w))
        return;
    off_t range = w->reserved - w->rlo;
    if (w->state == WB_BUFFERING && range > 0 && done >= w->rlo && w->reserved - done < range / 2) {
        reserve_locked(fd, w, w->reserved, w->reserved + 1);
        if (w->state == WB_OFF)
            w->state = WB_BUFFERING; /* the program's next reservation decides */
    }
    wunlock(w);
}



/* ---- a worker that ends when idle, and starts again ----
 *
 * A process with a second thread pays on every file call: the kernel takes a
 * file's position lock once its descriptor table is shared, glibc's system-call
 * wrappers switch cancellation on and off.  A loop of 8-byte writes to two files
 * cost 1.10x plain CPU time with an idle thread beside it, 1.00x once the
 * thread had ended (docs/performance.md).  So a worker with nothing queued,
 * no block holding data, no read lease and no read-ahead buffer anywhere ends
 * after UNBLOCK_IO_IDLE_MS, and the next block, queued write or background read
 * starts it again (start_worker).
 *
 * A caller that has seen the worker running and is about to give it work holds
 * it (worker_hold): the worker clears `ok` before it looks at `holds`, `queued`
 * and the dirty count, and a caller raises those before it reads `ok` (both
 * sequentially consistent), so either the worker sees the caller's work and
 * stays, or the caller sees it gone and starts another.  The decision is made
 * under qlock, which start_worker takes: a new thread is never started beside
 * one still deciding. */

/* Ends worker k if it still has nothing: 1 if the thread must return now. */
static int worker_end(wb_worker_t *k)
{
    qlock_();
    __atomic_store_n(&k->ok, 0, __ATOMIC_SEQ_CST);
    if (k->head == NULL && __atomic_load_n(&k->queued, __ATOMIC_SEQ_CST) == 0 &&
        __atomic_load_n(&k->holds, __ATOMIC_SEQ_CST) == 0 &&
        __atomic_load_n(&unblock_wb_dirty, __ATOMIC_SEQ_CST) == 0 &&
        __atomic_load_n(&unblock_ra_live, __ATOMIC_SEQ_CST) == 0 &&
        !__atomic_load_n(&dying, __ATOMIC_SEQ_CST) && rd_leases_none()) {
        k->started = 0;
        __atomic_store_n(&k->tid, 0, __ATOMIC_RELEASE);
        qunlock();
        unblock_counter_add(&unblock_stats.io_worker_ends, 1);
        return 1;
    }
    __atomic_store_n(&k->ok, 1, __ATOMIC_SEQ_CST);
    qunlock();
    return 0;
}

/* Keeps worker k from ending while the caller gives it work or ties a read lease
 * to its thread, starting it if it had ended: 1 if held (worker_release after),
 * 0 if no worker can run (the caller does the work itself). */
int worker_hold(int k)
{
    wb_worker_t *wk = &workers[k];
    for (int tries = 0; tries < 3; tries++) {
        __atomic_add_fetch(&wk->holds, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&wk->ok, __ATOMIC_SEQ_CST))
            return 1;
        __atomic_sub_fetch(&wk->holds, 1, __ATOMIC_SEQ_CST);
        if (!start_worker(k))
            return 0;
    }
    return 0;
}

void worker_release(int k)
{
    __atomic_sub_fetch(&workers[k].holds, 1, __ATOMIC_SEQ_CST);
}

static void *worker_main(void *arg)
{
    int me = (int)(intptr_t)arg;
    wb_worker_t *k = &workers[me];
    __atomic_store_n(&k->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    __atomic_store_n(&k->ok, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&k->gen, 1, __ATOMIC_SEQ_CST); /* start_worker waits for this */
    pthread_setname_np(pthread_self(), "unblock-io");
    unblock_runtime_thread();
    long delay = (long)unblock_opt.io_delay_ms, next_scan = now_ms() + delay;
    int drained = 0;
    for (;;) {
        /* Read-ahead buffers live only under leases: a break drops them. */
        int leased = __atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED) != 0;
        if (leased)
            ra_check_leases();
        wb_job_t *j = dequeue(k);
        if (j) {
            j->kind->run(k, j);
            continue;
        }
        /* A fatal signal: every block, then what the scan queued, then it
         * counts as done (the dying thread waits for that, 2 s at most). */
        if (unblock_unlikely(__atomic_load_n(&dying, __ATOMIC_ACQUIRE)) && drained < 2) {
            if (drained++ == 0) {
                scan_blocks(me, 1);
                continue;
            }
            __atomic_add_fetch(&dying_done, 1, __ATOMIC_SEQ_CST);
            unblock_futex_wake(&dying_done);
            continue;
        }
        int dirty = delay > 0 && __atomic_load_n(&unblock_wb_dirty, __ATOMIC_SEQ_CST) != 0;
        long t = now_ms();
        if (dirty && t >= next_scan) {
            scan_blocks(me, 0);
            next_scan = t + delay;
            continue;
        }
        if (!dirty)
            next_scan = t + delay;
        long wait_ms = dirty ? next_scan - t : 0;
        if (leased && (wait_ms == 0 || wait_ms > RA_LEASE_POLL_MS))
            wait_ms = RA_LEASE_POLL_MS;
        /* Nothing to do and nothing to look at later: after UNBLOCK_IO_IDLE_MS of
         * that the thread ends (worker_end), and the next work starts it again. */
        long idle = (long)unblock_opt.io_idle_ms;
        int may_end = wait_ms == 0 && idle > 0 && !dirty && !leased && !drained;
        if (__atomic_load_n(&k->queued, __ATOMIC_SEQ_CST) == 0 &&
            (drained || !__atomic_load_n(&dying, __ATOMIC_ACQUIRE))) {
            long t0 = may_end ? now_ms() : 0;
            unblock_futex_wait(&k->queued, 0, (may_end ? idle : wait_ms) * 1000000L);
            if (may_end && now_ms() - t0 >= idle && worker_end(k))
                return NULL;
        }
    }
    return NULL;
}

UNBLOCK_REAL_DECL(int, pthread_create,
                  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *));

/* Starts worker k if it does not run (never started, or ended idle); 1 if it
 * runs.  A worker that could not start is not tried again. */
int start_worker(int k)
{
    static int jobs_ready;
    wb_worker_t *wk = &workers[k];
    if (__atomic_load_n(&wk->ok, __ATOMIC_ACQUIRE))
        return 1;
    qlock_();
    if (wk->started) { /* starting in another thread, or it could not start */
        int ok = __atomic_load_n(&wk->ok, __ATOMIC_ACQUIRE);
        qunlock();
        return ok;
    }
    wk->started = 1;
    if (!jobs_ready) {
        jobs_ready = 1;
        const char *h = getenv("UNBLOCK_TEST_HANDOVER_MS");
        unblock_test_handover_ms = h ? atol(h) : 0;
        h = getenv("UNBLOCK_TEST_GIVEBACK_MS");
        unblock_test_giveback_ms = h ? atol(h) : 0;
        for (int i = 0; i < WB_JOBS; i++) {
            jobs[i].next = job_free;
            job_free = &jobs[i];
        }
    }
    qunlock();
    unblock_real_pthread_create_t create = UNBLOCK_REAL(pthread_create);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    uint32_t gen = __atomic_load_n(&wk->gen, __ATOMIC_ACQUIRE);
    if (unblock_runtime_thread_create(create, &t, &attr, worker_main, (void *)(intptr_t)k) == 0) {
        unblock_counter_add(&unblock_stats.io_workers, 1);
        /* It says it runs first thing (ok, then gen): once it has, it may even
         * have ended again, idle, without this thread looking. */
        while (__atomic_load_n(&wk->gen, __ATOMIC_ACQUIRE) == gen)
            syscall(SYS_sched_yield);
    } else {
        unblock_warn("cannot start a write-behind thread; writes to that filesystem are "
                     "not buffered");
    }
    pthread_attr_destroy(&attr);
    return __atomic_load_n(&wk->ok, __ATOMIC_ACQUIRE);
}


/* n more bytes of the copy budget for the workers' copies; 0 past it. */
int budget_take(size_t n)
{
    size_t q = __atomic_load_n(&queued_bytes, __ATOMIC_RELAXED);
    do
        if (q + n > unblock_opt.copy_budget)
            return 0;
    while (!__atomic_compare_exchange_n(&queued_bytes, &q, q + n, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
    return 1;
}

void budget_give(size_t n)
{
    __atomic_sub_fetch(&queued_bytes, n, __ATOMIC_SEQ_CST);
    budget_freed();
}

/* Copies went back (after queued_bytes fell): a budget_wait may end. */
void budget_freed(void)
{
    __atomic_add_fetch(&budget_gen, 1, __ATOMIC_SEQ_CST);
    if (unblock_unlikely(__atomic_load_n(&budget_waiters, __ATOMIC_SEQ_CST)))
        unblock_futex_wake(&budget_gen);
}

/* The count of copies given back so far: read before a try that may find no
 * room (the copy budget, or the arena), for budget_wait. */
uint32_t budget_seen(void)
{
    return __atomic_load_n(&budget_gen, __ATOMIC_SEQ_CST);
}

/* After a try that found no room: waits until copies go back, unless some
 * already did since `seen` (then at once); 1 then (the caller tries again), 0
 * at once when the workers hold none (waiting cannot help: the write alone is
 * past the budget, or the arena is full of blocks).  The waiter counts itself
 * before the futex compares the count, budget_freed looks at the waiters after
 * raising it (both sequentially consistent): one of them sees the other.  The
 * workers never wait for the caller, who may hold a descriptor lock. */
int budget_wait(uint32_t seen)
{
    if (__atomic_load_n(&queued_bytes, __ATOMIC_SEQ_CST) == 0)
        return 0;
    __atomic_add_fetch(&budget_waiters, 1, __ATOMIC_SEQ_CST);
    unblock_futex_wait(&budget_gen, seen, 100000000L); /* 100 ms at most: then look again */
    __atomic_sub_fetch(&budget_waiters, 1, __ATOMIC_SEQ_CST);
    return 1;
}

size_t budget_used(void)
{
    return __atomic_load_n(&queued_bytes, __ATOMIC_RELAXED);
}

int workers_dying(void)
{
    return (int)__atomic_load_n(&dying, __ATOMIC_ACQUIRE);
}

wb_worker_t *worker_at(int k)
{
    return &workers[k];
}

uint32_t unblock_wb_ending;

/* The workers write every queue and every block (they own no lock the dying
 * thread could hold); a descriptor whose worker is not running is written here
 * if its lock is free.  Waits 2 s at most.  Async-signal-safe.
 *
 * The program's other threads go on meanwhile, until the signal's default
 * action ends the process: a thread writing while another took the SIGTERM
 * merged records into blocks that the workers had already passed, and those
 * were lost with the process, though their write() had returned (up to 37,000
 * records of 8 bytes in 3 of 20 runs; serial.writebehind.sigend-thread).  So
 * from here on every write is made in its call (unblock_wb_ending: merge.c
 * checks it under the descriptor's lock, and wb_ending_begin lets a write that
 * read it before finish merging, into a block the workers then find). */
void unblock_wb_drain_fatal(void)
{
    wb_ending_begin(0);
    if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_SEQ_CST) == 0)
        return;
    int started = 0;
    if (__atomic_exchange_n(&dying, 1, __ATOMIC_ACQ_REL) == 0) {
        for (int k = 0; k < WB_WORKERS; k++)
            if (__atomic_load_n(&workers[k].ok, __ATOMIC_ACQUIRE)) {
                started++;
                unblock_futex_wake(&workers[k].queued);
            }
        for (int fd = 0; fd < fd_end(); fd++) {
            wb_fd_t *w = slot(fd);
            if (w->state == WB_BUFFERING && w->len && !workers[w->wk].ok && wtrylock(w)) {
                write_out(fd, w, w->buf, w->len, w->boff);
                block_done_locked(w);
                wunlock(w);
            }
        }
    } else {
        for (int k = 0; k < WB_WORKERS; k++)
            started += __atomic_load_n(&workers[k].ok, __ATOMIC_ACQUIRE);
    }
    for (int i = 0; i < 20; i++) {
        uint32_t d = __atomic_load_n(&dying_done, __ATOMIC_SEQ_CST);
        if ((int)d >= started)
            break;
        unblock_futex_wait(&dying_done, d, 100000000L);
    }
}


/* ---- jobs of other modules (worker.h) ---- */

int unblock_io_worker(dev_t dev)
{
    qlock_();
    int k = worker_for(dev);
    qunlock();
    return start_worker(k) ? k : -1;
}

int unblock_io_submit(int k, const unblock_io_kind_t *kind, void *arg)
{
    if (!worker_hold(k)) /* it may have ended idle since unblock_io_worker */
        return -1;
    wb_job_t *j = job_take();
    if (j) {
        *j = (wb_job_t){ .kind = kind, .arg = arg, .fd = -1 };
        job_push(&workers[k], j, 0);
        job_kick(&workers[k]);
    }
    worker_release(k);
    return j ? 0 : -1;
}

void *unblock_io_job_arg(const unblock_io_job_t *j)
{
    return j->arg;
}

void unblock_io_job_release(unblock_io_worker_t *k, unblock_io_job_t *j)
{
    job_put(j, 0);
    __atomic_sub_fetch(&k->queued, 1, __ATOMIC_SEQ_CST);
}
