/* merge.c — small sequential writes merged into a block per descriptor, and
 * large writes queued behind them.
 *
 * Paper: Natvig & Elster, section III.D.  After 3 writes in sequence on a
 * followed descriptor (fdtable.c), small writes are copied into the descriptor's
 * block (UNBLOCK_IO_BLOCK, 1 MiB) and return at once, where that pays (timed
 * both ways; UNBLOCK_IO_MERGE_GAIN); so do pwrites that continue the block.  A
 * full block, an idle one (UNBLOCK_IO_DELAY_MS, the worker's timer) and a copied
 * large write go to the filesystem's worker as jobs of merge_write_kind; a large
 * write from a large allocation is queued from the program's own pages instead
 * (protected.c).  Before a buffered write extends the file, the range is
 * reserved (fallocate FALLOC_FL_KEEP_SIZE, growing steps) and RLIMIT_FSIZE
 * checked, so ENOSPC, EDQUOT and EFBIG/SIGXFSZ are met by a real write in the
 * program's call.
 * Owns: nothing but the block of each descriptor it buffers (in its fdtable entry).
 * Calls: fdtable.c, worker.c (queue, buffers, budget), protected.c, readahead.c
 * and bgread.c (a write first settles reads of its file), drain.c (signals). */
#define _GNU_SOURCE
#include "fileio/fileio_internal.h"

#include <linux/fs.h>
#include <linux/quota.h>
#include <sys/resource.h>
#include <sys/statfs.h>
/* The block's bytes are written or queued: it is empty again (locked). */
void block_done_locked(wb_fd_t *w)
{
    if (w->bwrites >= WB_PAYS)
        w->wstrikes = 0;
    w->bwrites = 0;
    w->len = 0;
    sc_block_gone((int)(w - unblock_fio_fds));
    __atomic_sub_fetch(&unblock_wb_dirty, 1, __ATOMIC_RELAXED);
    unblock_counter_add(&unblock_stats.io_flushes, 1);
}

int flush_locked(int fd, wb_fd_t *w)
{
    drain_locked(w);
    if (w->len) {
        write_out(fd, w, w->buf, w->len, w->boff);
        block_done_locked(w);
    }
    syscall(SYS_lseek, fd, w->off, SEEK_SET);
    return __atomic_load_n(&w->error, __ATOMIC_ACQUIRE) ? -1 : 0;
}


/* The worker: a block, or a copied large write, to the file; timed where large
 * (the descriptor's cost per KiB decides whether large writes are queued). */
static void write_job(wb_worker_t *k, wb_job_t *j)
{
    wb_fd_t *w = slot(j->fd);
    uint64_t t0 = j->len >= WB_LARGE_MIN ? unblock_now_ns() : 0;
    write_out(j->fd, w, j->buf, j->len, j->off);
    if (t0)
        note_cost(w, j->len, unblock_now_ns() - t0);
    reserve_ahead(j->fd, w, j->off + (off_t)j->len);
    job_done(k, j);
}

const unblock_io_kind_t merge_write_kind = { "write-behind block", write_job };

/* Queues `len` bytes of `buf` (capacity cap, now the worker's) for offset off of
 * fd.  0, or -1 if the worker is not running or no job slot is free (the caller
 * writes it itself). */
int enqueue(int fd, wb_fd_t *w, char *buf, size_t len, size_t cap, off_t off)
{
    wb_worker_t *k = worker_at(w->wk);
    if (!worker_hold(w->wk))
        return -1;
    wb_job_t *j = job_take();
    if (!j) {
        worker_release(w->wk);
        return -1;
    }
    *j = (wb_job_t){ .kind = &merge_write_kind, .fd = fd, .buf = buf, .len = len, .cap = cap, .off = off };
    sc_job_queued(job_index(j), fd, buf, len, off);
    /* The block's bytes: the job names them now, and the block must not once
     * the worker can take the job (it frees the buffer when written, maybe
     * before this thread runs again: preempted, or running the fatal-signal
     * handler).  Named twice for a moment, never by nobody. */
    if (buf == w->buf)
        sc_block_gone(fd);
    enqueue_job(w, k, j, len);
    worker_release(w->wk);
    return 0;
}

/* The test hook UNBLOCK_TEST_HANDOVER_MS (docs/testing.md): the thread that
 * hands the first block to a worker pauses there that long, as one preempted
 * or running the fatal-signal handler may. */
static void handover_pause(void)
{
    static int once;
    if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
        return;
    int e = errno;
    long ms = unblock_test_handover_ms;
    struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };
    while (syscall(SYS_nanosleep, &ts, &ts) != 0 && errno == EINTR)
        ;
    errno = e;
}

/* Hands the block to the worker and gives the descriptor a fresh one (locked).
 * Falls back to writing it here when no job slot or buffer is free. */
void submit_block_locked(int fd, wb_fd_t *w)
{
    if (w->len == 0)
        return;
    char *fresh = get_buffer(unblock_opt.io_block);
    if (fresh == NULL || enqueue(fd, w, w->buf, w->len, unblock_opt.io_block, w->boff) != 0) {
        if (fresh)
            put_buffer(fresh, unblock_opt.io_block);
        write_out(fd, w, w->buf, w->len, w->boff);
    } else {
        if (unblock_unlikely(unblock_test_handover_ms))
            handover_pause();
        w->buf = fresh;
    }
    block_done_locked(w);
}


/* What the quotas that charge this file (its owner's, its group's, its
 * project's) still allow it to take, in bytes; UINT64_MAX where none is
 * readable (no quota on its filesystem, or not ours to read: then never asked
 * again for this descriptor).  A soft limit counts as the limit: reaching ahead
 * is a convenience, never worth a user's grace period. */
static uint64_t quota_room(int fd, wb_fd_t *w)
{
#ifdef SYS_quotactl_fd
    struct stat st;
    if (w->noquota || syscall(SYS_fstat, fd, &st) != 0)
        return UINT64_MAX;
    struct fsxattr fx;
    unsigned prj = syscall(SYS_ioctl, fd, FS_IOC_FSGETXATTR, &fx) == 0 ? fx.fsx_projid : 0;
    const struct {
        int type;
        unsigned id;
    } q[] = { { USRQUOTA, st.st_uid }, { GRPQUOTA, st.st_gid }, { PRJQUOTA, prj } };
    uint64_t room = UINT64_MAX;
    int readable = 0;
    for (unsigned i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        struct if_dqblk d;
        if ((q[i].type == PRJQUOTA && prj == 0) ||
            syscall(SYS_quotactl_fd, fd, QCMD(Q_GETQUOTA, q[i].type), q[i].id, &d) != 0)
            continue;
        readable = 1;
        uint64_t lim = d.dqb_valid & QIF_BLIMITS ? d.dqb_bhardlimit : 0;
        if ((d.dqb_valid & QIF_BLIMITS) && d.dqb_bsoftlimit && (!lim || d.dqb_bsoftlimit < lim))
            lim = d.dqb_bsoftlimit;
        if (lim == 0)
            continue;
        lim *= QIF_DQBLKSIZE;
        uint64_t left = d.dqb_curspace < lim ? lim - d.dqb_curspace : 0;
        if (left < room)
            room = left;
    }
    if (!readable)
        w->noquota = 1;
    return room;
#else
    (void)fd, (void)w;
    return UINT64_MAX;
#endif
}

/* Whether reserving [from, want), past a write that ends at `end`, leaves its
 * file system and the quotas that charge the file 16 times that free.  The
 * rest of the write's last page is not ahead: the page is taken anyway (and
 * asking cost a descriptor's first small write an fstatfs, an fstat and an
 * ioctl, each a request on FUSE: 0.2-0.4 ms of an MPI-IO open on slowfs). */
static int room_ahead(int fd, wb_fd_t *w, off_t from, off_t want, off_t end)
{
    const off_t pg = (off_t)unblock_page_size;
    if (want <= (end + pg - 1) / pg * pg)
        return 1;
    struct statfs sf;
    uint64_t need = 16 * (uint64_t)(want - from);
    return !(syscall(SYS_fstatfs, fd, &sf) == 0 &&
             (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize < need) &&
           quota_room(fd, w) >= need;
}

/* Makes sure the file can hold [start, end), so that ENOSPC, EDQUOT or EFBIG
 * come from a real write in the program's call, as they would without us: the
 * range is reserved (fallocate KEEP_SIZE, 1 MiB steps) and RLIMIT_FSIZE checked.
 * One range per descriptor, grown while writes continue it.  1 if it can
 * (locked). */
int reserve_locked(int fd, wb_fd_t *w, off_t start, off_t end)
{
    if (start >= w->rlo && end <= w->reserved)
        return 1;
    if (end <= w->alloc_end) /* a file rewritten in place: its blocks are there */
        return 1;
    if (start < w->alloc_end)
        start = w->alloc_end;
    /* Not a continuation: a new range (never the hole before it). */
    int fresh = start < w->rlo || start > w->reserved;
    off_t from = fresh ? start : w->reserved;
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 ||
        (rl.rlim_cur != RLIM_INFINITY && (rlim_t)end > rl.rlim_cur))
        return 0;
    /* The step grows with the range (1 MiB, 2, 4, ... 64 MiB): a long stream of
     * writes calls fallocate a few times, not once per MiB.  That matters where
     * fallocate waits for the worker's write to the same file (the inode lock on
     * FUSE, NFS). */
    off_t step = fresh ? 0 : w->reserved - w->rlo;
    /* Large writes (a checkpoint in 1 MiB calls) reserve 32 of themselves ahead
     * at least: queued without a copy they come every few tens of microseconds,
     * far ahead of the worker, and each fallocate waited 8-11 ms for the
     * worker's writes on slowfs (1, 2, 4, ... MiB steps: 6 calls for 64 MiB). */
    if (end - start > (off_t)(unblock_opt.io_block / 4) && step < 32 * (end - start))
        step = 32 * (end - start);
    if (step > WB_RESERVE_MAX)
        step = WB_RESERVE_MAX;
    /* Space is shared (a scratch filesystem near full, a quota): what is reserved
     * ahead of the data is taken from other files and processes.  So ahead only
     * while the filesystem has 16 times the reservation free (room_ahead): the
     * descriptor's least step if it has, else the usual one; otherwise exactly
     * the bytes written (whole pages), which the program is about to use anyway:
     * ENOSPC still comes from its own write, and nobody else loses space. */
    off_t least = w->resv_min > step ? w->resv_min : step;
    off_t want = ((end + least + WB_RESERVE_STEP - 1) / WB_RESERVE_STEP) * WB_RESERVE_STEP;
    /* A descriptor's first reservation, of small writes: its pages only.  A file
     * written a few KiB (a checkpoint per step) got 1 MiB, given back by an
     * ftruncate at close (70-90 µs of a 2-rank MPI-IO open-write-close of 400 here);
     * the next write that continues it takes the 1 MiB step.  Only the first:
     * a rank writing every other 8-byte cell left a gap at each page's end, so
     * each page began a new range, and one fallocate a page (16 a 64 KiB, each
     * a request on FUSE, where they cost rank 1 of bench/smallw's interleaved
     * cells 0.6-0.9 µs a write; tests *.mpiio.np2 and np4, io.reserved). */
    if (least == 0 && !w->resv_made) {
        const off_t pg = (off_t)unblock_page_size;
        want = (end + pg - 1) / pg * pg;
    }
    if (least > step && !room_ahead(fd, w, from, want, end))
        want = ((end + step + WB_RESERVE_STEP - 1) / WB_RESERVE_STEP) * WB_RESERVE_STEP;
    if (!room_ahead(fd, w, from, want, end)) {
        const off_t pg = (off_t)unblock_page_size;
        want = (end + pg - 1) / pg * pg;
    }
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)want > rl.rlim_cur)
        want = (off_t)rl.rlim_cur;
    if (want <= from ||
        syscall(SYS_fallocate, fd, FALLOC_FL_KEEP_SIZE, from, want - from) != 0) {
        if (want > from && errno != ENOSPC && errno != EDQUOT)
            w->state = WB_OFF; /* no fallocate here: stop buffering this one */
        return 0;
    }
    set_reserved(w, fresh ? start : w->rlo, want);
    w->resv_made = 1;
    unblock_counter_add(&unblock_stats.io_reserved, 1);
    return 1;
}

int unblock_wb_reserve(int fd, off_t start, off_t end)
{
    wb_fd_t *w = slot(fd);
    if (w == NULL) {
        errno = EBADF;
        return 0;
    }
    wlock(w);
    if (start >= w->rlo && end <= w->reserved) { /* reserved already: most calls */
        wunlock(w);
        return 1;
    }
    int ok = reserve_locked(fd, w, start, end);
    int e = errno;
    wunlock(w);
    errno = e;
    return ok;
}

uint32_t unblock_wb_resv_shrinks;

off_t unblock_wb_reserved_to(int fd, off_t start)
{
    wb_fd_t *w = slot(fd);
    if (w == NULL)
        return start;
    wlock(w);
    off_t to = start >= w->rlo && start < w->reserved ? w->reserved : start;
    wunlock(w);
    return to;
}

void unblock_wb_reserve_ahead(int fd, off_t ahead)
{
    wb_fd_t *w = slot(fd);
    if (w == NULL)
        return;
    wlock(w);
    w->resv_min = ahead > WB_RESERVE_MAX ? WB_RESERVE_MAX : ahead;
    wunlock(w);
}

off_t unblock_wb_reserved_end(int fd)
{
    wb_fd_t *w = slot(fd);
    if (w == NULL)
        return 0;
    wlock(w);
    off_t end = w->reserved;
    wunlock(w);
    return end;
}

void unblock_wb_unreserve(int fd, off_t end)
{
    wb_fd_t *w = slot(fd);
    if (w == NULL)
        return;
    wlock(w);
    give_back_sure_locked(fd, w, end);
    wunlock(w);
}

/* A real write made here failed for want of space (w locked): the space
 * reserved ahead of buffered data may be what it lacked.  1 when that was given
 * back (drain.c: unblock_wb_space_short) and the write should be made again. */
static int space_again_locked(wb_fd_t *w, ssize_t r)
{
    if (unblock_likely(r >= 0) || (errno != ENOSPC && errno != EDQUOT))
        return 0;
    int e = errno;
    wunlock(w); /* it takes every descriptor's lock, this one's too */
    int again = unblock_wb_space_short(e);
    wlock(w);
    errno = e;
    return again;
}

/* Copies n bytes written at file position pos into the block (locked); a block
 * they do not continue, or cannot join, goes to the worker first.  0, or -1 when
 * the caller must make the real call (no room in the file, a bad buffer). */
static int merge_locked(int fd, wb_fd_t *w, const void *p, size_t n, off_t pos)
{
    if (w->len && (pos != w->boff + (off_t)w->len || w->len + n > unblock_opt.io_block))
        submit_block_locked(fd, w);
    if (!reserve_locked(fd, w, pos, pos + (off_t)n))
        return -1;
    /* A bad buffer: the real call gives the kernel's answer (EFAULT). */
    if (unblock_unlikely(unblock_copy_from_program(w->buf + w->len, p, n) != 0))
        return -1;
    if (w->len == 0) {
        w->boff = pos;
        if (__atomic_add_fetch(&unblock_wb_dirty, 1, __ATOMIC_SEQ_CST) == 1)
            unblock_futex_wake(&worker_at(w->wk)->queued); /* its worker may sleep */
        /* ... or have ended, idle: the block needs its timer (the count raised
         * first, so a worker deciding to end sees it, or we see it gone). */
        if (!__atomic_load_n(&worker_at(w->wk)->ok, __ATOMIC_SEQ_CST))
            start_worker(w->wk);
    }
    w->idle = 0;
    w->bwrites++;
    note_write(w, pos, n, 1);
    w->len += n;
    sc_block(fd, w, n);
    return 0;
}

/* ---- small writes: merged where that pays ----
 *
 * Merging saves a system call per write and costs a copy in the call, plus the
 * worker's write of the block, which is the program's loss where the worker
 * shares its cores.  For 8-byte writes the call is 35x cheaper merged; for a
 * grid written one 4 KiB row per pwrite into the page cache, by ranks bound to
 * every core, merging saved nothing and the worker's writes slowed the next
 * communication phase by 15 %.  So both ways are timed (one merged write in 16
 * and one made in the call in 8; the first small write of a file is made in the
 * call), and small writes are merged while that is UNBLOCK_IO_MERGE_GAIN percent
 * cheaper (0: always merged, untimed).  Every WB_SMALL_RECHECK small writes the
 * other way is tried again: one write made in the call, at the next write that
 * finds the block empty and the worker without a block of the descriptor (a
 * block is never split for it, and the worker's write holds the file's lock: 2-3
 * us instead of 0.8 for a 4 KiB row here), or WB_SMALL_RUN merged ones timed
 * together (a single one would pay for starting a block alone). */
#define WB_SMALL_RECHECK 256
#define WB_SMALL_RUN 64

/* Whether small writes of n bytes (class c of the file's costs) cost less made
 * in the call (measured both ways; until then they are merged). */
static int small_direct(const unblock_wb_costs_t *costs, const unblock_wb_small_t *c, size_t n)
{
    uint64_t d = __atomic_load_n(&c->small_ns, __ATOMIC_RELAXED);
    uint64_t merge = __atomic_load_n(&c->merged_ns, __ATOMIC_RELAXED);
    if (d == 0 || merge == 0)
        return 0;
    if (!unblock_spare_core())
        merge += (uint64_t)__atomic_load_n(&costs->ns_per_kb, __ATOMIC_RELAXED) * n / 1024;
    return d * 100 < merge * (100 + unblock_opt.io_merge_gain);
}

/* A small write of n bytes at pos while buffering (locked): merged (0), made here
 * with its result in *ret and errno (1), or -1 when the caller must make the real
 * call (merge_locked's refusal). */
static int small_write_locked(int fd, wb_fd_t *w, const void *p, size_t n, off_t pos,
                              ssize_t *ret)
{
    if (unblock_opt.io_merge_gain == 0) /* always merged, neither way timed */
        return merge_locked(fd, w, p, n, pos) != 0 ? -1 : 0;
    unblock_wb_small_t *c = &w->costs->small[n < 256 ? 0 : n < 4096 ? 1 : 2];
    uint32_t k = __atomic_fetch_add(&c->calls, 1, __ATOMIC_RELAXED);
    int direct = __atomic_load_n(&c->direct, __ATOMIC_RELAXED), run = 0, probe = 0;
    if (__atomic_load_n(&c->run_left, __ATOMIC_RELAXED)) {
        direct = 0;
        run = 1;
    } else if (direct && k % WB_SMALL_RECHECK == WB_SMALL_RECHECK - 1) {
        __atomic_store_n(&c->run_left, WB_SMALL_RUN, __ATOMIC_RELAXED);
        direct = 0;
        run = 1;
    } else if (!direct && (k == 0 || k % WB_SMALL_RECHECK == WB_SMALL_RECHECK - 1 ||
                           __atomic_load_n(&c->probe, __ATOMIC_RELAXED))) {
        direct = w->len == 0 && __atomic_load_n(&w->pending, __ATOMIC_ACQUIRE) == 0;
        __atomic_store_n(&c->probe, !direct, __ATOMIC_RELAXED);
        probe = direct;
    }
    /* Never past data still in memory: a write made here beside a block or a
     * queued job of lower offsets would, if the program died before they were
     * written, leave a hole in the file instead of a prefix of it.  So they go
     * first (rarely: after a timed run of merged writes), else this one merges. */
    if (direct && !probe && (w->len || __atomic_load_n(&w->pending, __ATOMIC_ACQUIRE)) &&
        flush_locked(fd, w) != 0)
        direct = 0;
    /* One merged write in 16 and one made in the call in 8, at a phase that
     * wanders: a fixed one (k % 16 == 8) met 2 KiB rows at the same place of
     * every page, never the write that faults a fresh one, and k % 8 == 8
     * never held (a write made in the call was timed only by probes). */
    uint32_t h = k * 0x9E3779B1u;
    int timed = run || probe || (h >> (direct ? 29 : 28)) == 0;
    uint64_t t0 = timed ? unblock_now_ns() : 0;
    int how = 0;
    if (direct) {
        ssize_t r = sys_pwrite(fd, p, n, pos);
        if (space_again_locked(w, r))
            r = sys_pwrite(fd, p, n, pos);
        int e = errno;
        if (timed && r == (ssize_t)n)
            note_ns(&c->small_ns, unblock_now_ns() - t0, !probe);
        if (r > 0) {
            note_write(w, pos, (size_t)r, 0);
            w->direct++;
        }
        errno = e;
        *ret = r;
        how = 1;
    } else {
        if (merge_locked(fd, w, p, n, pos) != 0)
            return -1;
        if (run) { /* races between descriptors of the file only blur it */
            c->run_ns += unblock_now_ns() - t0;
            c->run_n++;
            if (__atomic_sub_fetch(&c->run_left, 1, __ATOMIC_RELAXED) != 0)
                return 0;
            note_ns(&c->merged_ns, c->run_ns / (c->run_n ? c->run_n : 1), 0);
            c->run_ns = c->run_n = 0;
        } else if (timed) {
            note_ns(&c->merged_ns, unblock_now_ns() - t0, 1);
        }
    }
    if (timed)
        __atomic_store_n(&c->direct, (uint8_t)small_direct(w->costs, c, n), __ATOMIC_RELAXED);
    return how;
}

/* The write, here and now, after everything before it (locked; unlocks): the
 * real call's result, errors included.  The descriptor counts writes again. */
static int write_now_locked(int fd, wb_fd_t *w, const void *p, size_t n, ssize_t *ret)
{
    if (flush_locked(fd, w) != 0) {
        errno = take_error(w);
        wunlock(w);
        *ret = -1;
        return 1;
    }
    uint64_t t0 = n >= WB_LARGE_MIN ? unblock_now_ns() : 0;
    ssize_t r = syscall(SYS_write, fd, p, n);
    if (space_again_locked(w, r))
        r = syscall(SYS_write, fd, p, n);
    int e = errno;
    if (t0 && r == (ssize_t)n)
        note_cost(w, n, unblock_now_ns() - t0);
    if (r > 0) {
        note_write(w, w->off, (size_t)r, 0);
        w->off += r;
    }
    if (w->state == WB_BUFFERING && r != (ssize_t)n)
        w->state = WB_COUNTING, w->seq = 0, w->calm = 0, w->quiet = 0;
    wunlock(w);
    errno = e;
    *ret = r;
    return 1;
}


/* ---- protected writes: large writes from the program's pages, not copied ----
 *
 * Paper: Natvig & Elster, section III.D ("the worker thread copies the data when
 * the application tries to access it").  A queued large write of at least
 * UNBLOCK_IO_PROTECT_MIN bytes whose source lies in one large allocation (whole
 * pages of its own: src/memory/alloc.c) is not copied: an operation of the
 * operation table (protect.h, kind SEND_PROT, op->file UNBLOCK_OP_FILE_WRITE)
 * makes its pages read-only, and the worker writes from them, in pieces of a
 * block (UNBLOCK_IO_BLOCK, one request of an NFS-sized wsize: quarter-block
 * pieces made the 64 MiB checkpoint 8 % longer on slowfs, 4x the requests).
 * When the job is written the op is done and the pages open.
 * Frees, munmap, fork, the program's own writes to those pages (a fault), a read
 * or receive into them reach the op through protect.c like any other; those
 * that are about to write the pages call release_write:
 *   - the rest (what the worker has not written) is copied to a runtime buffer,
 *     if the copies the workers hold stay within UNBLOCK_COPY_BUDGET; the job's
 *     source becomes the copy, and the pages open at once;
 *   - past the budget, the caller waits for the worker to write the job.
 * The job's ctl word keeps the worker off the pages once the program may write
 * them: the worker sets JW_RUN (fetch_or) before a piece from the program's
 * pages and so learns atomically whether JW_COPY is set; the fault sets JW_COPY
 * and then waits for JW_RUN to clear before it opens the pages.  JW_CLAIM: one
 * thread takes the job over; JW_END: the worker has written all of it; whoever
 * of the two comes second leaves the op to the first (JW_END without JW_CLAIM:
 * the worker finishes the op; with it, the claimer does).  JW_EXT: the program
 * is growing the job (a write that continues it, before the worker has started
 * it), which a claimer waits out.  Only atomics, futexes, mmap and memcpy on
 * the fault's side: it runs in the SIGSEGV handler. */


/* A large write of n bytes from the cnt buffers of iov at `at` (locked): queued
 * after the block, in order, where the file is slower than our copy: from the
 * program's pages made read-only (one buffer), or copied.  0, or -1 when it must
 * be written here (after the block, which is handed over either way). */
static int large_write_locked(int fd, wb_fd_t *w, const struct iovec *iov, int cnt, size_t n,
                              off_t at)
{
    submit_block_locked(fd, w);
    uint32_t cost = __atomic_load_n(&w->costs->ns_per_kb, __ATOMIC_RELAXED);
    if ((cost != 0 && cost < unblock_opt.io_queue_ns) || !reserve_locked(fd, w, at, at + (off_t)n))
        return -1;
    /* From the program's pages when they are one buffer, else copied.  With a
     * sidecar, only copied, into the shared arena: the program's pages die with
     * it at a kill -9, a copy in the arena does not (docs/fileio.md, "Crash
     * safety").  Past the copy budget, or with the arena full, it waits for the
     * workers to give copies back, as the kernel's write would wait for its
     * dirty pages; when they hold none (n alone is past the budget, or the
     * arena is full of blocks) it is written here. */
    int safe = __atomic_load_n(&unblock_sc_journal, __ATOMIC_ACQUIRE) != NULL;
    int queued = !safe && cnt == 1 && protect_write_locked(fd, w, iov[0].iov_base, n, at) == 0;
    for (int waited = 0; !queued;) {
        uint32_t seen = budget_seen();
        char *b = budget_used() + n <= unblock_opt.copy_budget ? get_buffer(n) : NULL;
        if (b && safe && !sc_in_arena(b)) {
            put_buffer(b, n);
            b = NULL;
        }
        if (b) {
            size_t done = 0;
            queued = 1;
            for (int i = 0; i < cnt && queued; done += iov[i++].iov_len)
                queued = unblock_copy_from_program(b + done, iov[i].iov_base, iov[i].iov_len) == 0;
            queued = queued && enqueue(fd, w, b, n, n, at) == 0;
            if (!queued)
                put_buffer(b, n);
            break;
        }
        if (!safe || !budget_wait(seen))
            break;
        if (!waited++)
            unblock_counter_add(&unblock_stats.io_sidecar_waits, 1);
    }
    if (!queued)
        return -1;
    note_write(w, at, n, 0);
    unblock_counter_add(&unblock_stats.io_async, 1);
    return 0;
}

/* Before a write to fd: the reads in flight get the file as it was, and
 * read-ahead buffers of its file go. */
static void before_write(int fd)
{
    rd_settle(0);
    if (unblock_unlikely(__atomic_load_n(&unblock_ra_live, __ATOMIC_RELAXED)))
        ra_drop_same_file(fd);
}

/* A large write of n bytes from iov at pos (-1: at the descriptor's offset, which
 * then moves) on buffering w (locked; unlocks): 1 with *ret (n, or a deferred
 * error) when queued, 0 for the real call after the block. */
static int large_write_unlock(int fd, wb_fd_t *w, const struct iovec *iov, int cnt, size_t n,
                              off_t pos, ssize_t *ret)
{
    int e = take_error(w);
    if (!e && large_write_locked(fd, w, iov, cnt, n, pos < 0 ? w->off : pos) != 0) {
        wunlock(w);
        return 0;
    }
    if (!e && pos < 0)
        w->off += (off_t)n;
    wunlock(w);
    if (e)
        errno = e;
    *ret = e ? -1 : (ssize_t)n;
    return 1;
}

/* While the process ends (unblock_wb_ending: a fatal signal's drain, exit, an
 * exec): what fd holds goes to the file, then the caller makes the real call
 * (0), or its error (1, *ret -1).  Locked; unlocks. */
static int ending_forward_unlock(int fd, wb_fd_t *w, ssize_t *ret)
{
    if (flush_locked(fd, w) != 0) {
        errno = take_error(w);
        wunlock(w);
        *ret = -1;
        return 1;
    }
    wunlock(w);
    return 0;
}

/* write(fd, p, n) on a descriptor we may buffer.  Returns 1 and sets *ret if it
 * handled the call; 0 means "forward it" (after which unblock_wb_wrote updates). */
int unblock_wb_write(int fd, const void *p, size_t n, ssize_t *ret)
{
    before_write(fd);
    wb_fd_t *w = slot(fd);
    if (w && wlock_mine(w)) /* a signal handler's, whatever w's state (drain.c) */
        return wb_defer(fd, p, n, -1, ret);
    if (!w || w->state != WB_BUFFERING || n == 0) {
        if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED) &&
            (!w || w->state != WB_BUFFERING))
            unblock_wb_flush_all(); /* the news may travel through this descriptor */
        return 0;
    }
    wlock(w);
    if (w->state != WB_BUFFERING) {
        wunlock(w);
        return 0;
    }
    int e = take_error(w);
    if (e) {
        wunlock(w);
        errno = e;
        *ret = -1;
        return 1;
    }
    if (unblock_unlikely(wb_ending()))
        return write_now_locked(fd, w, p, n, ret); /* (the process ends) */
    if (n > unblock_opt.io_block / 4) {
        struct iovec one = { (void *)p, n };
        if (large_write_locked(fd, w, &one, 1, n, w->off) != 0)
            return write_now_locked(fd, w, p, n, ret);
        w->off += (off_t)n;
        wunlock(w);
        *ret = (ssize_t)n;
        return 1;
    }
    int how = small_write_locked(fd, w, p, n, w->off, ret);
    if (how < 0)
        return write_now_locked(fd, w, p, n, ret);
    if (how == 0)
        *ret = (ssize_t)n;
    if (*ret > 0)
        w->off += (off_t)*ret;
    e = errno;
    wunlock(w);
    errno = e;
    return 1;
}

/* writev(fd, iov, cnt) (pos -1) or pwritev at pos: a large one (over a quarter
 * of a block in all, at most WB_IOV buffers) is copied and queued like a large
 * write(); anything else is forwarded (0) after the block.  A bad iovec array or
 * buffer gets the real call's answer. */
#define WB_IOV 64
int unblock_wb_writev(int fd, const struct iovec *iov, int cnt, off_t pos, ssize_t *ret)
{
    wb_fd_t *w = slot(fd);
    struct iovec v[WB_IOV];
    if (!w || w->state != WB_BUFFERING) {
        if (__atomic_load_n(&unblock_wb_dirty, __ATOMIC_RELAXED))
            unblock_wb_flush_all(); /* the news may travel through this descriptor, as
                                       with write() (a pipe, a socket, a log) */
        return 0;
    }
    if (cnt <= 0 || cnt > WB_IOV || pos < -1 ||
        unblock_copy_from_program(v, iov, (size_t)cnt * sizeof(*v)) != 0)
        return 0;
    size_t n = 0;
    for (int i = 0; i < cnt; i++) {
        if (n + v[i].iov_len < n || v[i].iov_len > SSIZE_MAX)
            return 0; /* EINVAL, from the kernel */
        n += v[i].iov_len;
    }
    if (n <= unblock_opt.io_block / 4 || n > SSIZE_MAX)
        return 0;
    before_write(fd);
    wlock(w);
    if (w->state != WB_BUFFERING) {
        wunlock(w);
        return 0;
    }
    if (unblock_unlikely(wb_ending()))
        return ending_forward_unlock(fd, w, ret);
    return large_write_unlock(fd, w, v, cnt, n, pos, ret);
}

/* pwrite(fd, p, n, pos): like a small write() when it continues the previous
 * write, e.g. rows written one pwrite each at consecutive offsets (merged, or made
 * here where merging does not pay).  Anything else is forwarded (0) after the
 * block. */
int unblock_wb_pwrite(int fd, const void *p, size_t n, off_t pos, ssize_t *ret)
{
    before_write(fd);
    wb_fd_t *w = slot(fd);
    if (w && pos >= 0 && wlock_mine(w)) /* a signal handler's, whatever w's state (drain.c) */
        return wb_defer(fd, p, n, pos, ret);
    if (!w || w->state != WB_BUFFERING || n == 0 || pos < 0)
        return 0;
    wlock(w);
    if (unblock_unlikely(wb_ending()) && w->state == WB_BUFFERING)
        return ending_forward_unlock(fd, w, ret);
    if (w->state == WB_BUFFERING && n > unblock_opt.io_block / 4) {
        /* A large one, wherever it goes: queued like a large write(). */
        struct iovec one = { (void *)p, n };
        return large_write_unlock(fd, w, &one, 1, n, pos, ret);
    }
    if (w->state != WB_BUFFERING || pos != w->last_end) {
        wunlock(w);
        return 0;
    }
    int e = take_error(w);
    int how = e ? 1 : small_write_locked(fd, w, p, n, pos, ret);
    if (how < 0) {
        wunlock(w);
        return 0; /* the real call, after the block */
    }
    if (e) {
        errno = e;
        *ret = -1;
    } else if (how == 0) {
        *ret = (ssize_t)n;
    }
    e = errno;
    wunlock(w);
    errno = e;
    return 1;
}

/* How much of fd's file has its blocks (locked): the first hole's offset, or
 * its size, on a filesystem that rewrites in place.  A checkpoint rewritten
 * into the same file (opened without O_TRUNC) reserved a block past its end and
 * gave it back at close: a fallocate, then a lease, an ftruncate and eight more
 * calls, which made sor2d's one checkpoint 1.5x plain's time.  Not where a
 * rewrite takes new blocks (copy-on-write: btrfs, ZFS, bcachefs), nor where
 * the file's blocks are fewer than its size says (SEEK_HOLE unknown to the
 * filesystem reports no hole). */
static off_t allocated_end(int fd, const wb_fd_t *w)
{
    struct stat st;
    struct statfs sf;
    if (syscall(SYS_fstat, fd, &st) != 0 || st.st_size == 0 ||
        (uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size ||
        syscall(SYS_fstatfs, fd, &sf) != 0 || sf.f_type == 0x9123683E /* btrfs */ ||
        sf.f_type == 0x2FC12FC1 /* ZFS */ || sf.f_type == 0xCA451A4E /* bcachefs */)
        return 0;
    off_t hole = (off_t)syscall(SYS_lseek, fd, 0, SEEK_HOLE);
    syscall(SYS_lseek, fd, w->off, SEEK_SET);
    return hole > 0 && hole <= st.st_size ? hole : 0;
}

/* The descriptor has seen 3 complete writes in sequence: its writes are merged
 * from now on (locked). */
static void start_buffering_locked(int fd, wb_fd_t *w)
{
    if (!unblock_protect_init() || !start_worker(w->wk))
        return;
    sync_offset_locked(fd, w);
    w->alloc_end = allocated_end(fd, w);
    sc_running(); /* before the first buffer: it comes from the shared memory */
    char *b = get_buffer(unblock_opt.io_block);
    if (b != NULL) {
        w->buf = b;
        w->len = 0;
        set_reserved(w, 0, 0);
        w->state = WB_BUFFERING;
        install_signals();
        sc_follow(fd, w);
    }
}

/* After a forwarded write(fd) returned r: counts writes in sequence and switches
 * the descriptor to buffering after the third. */
void unblock_wb_wrote(int fd, size_t n, ssize_t r, uint64_t ns)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state != WB_COUNTING)
        return;
    wlock(w);
    if (ns && r == (ssize_t)n)
        note_cost(w, n, ns);
    if (w->state == WB_COUNTING && r >= 0 && !quiet_kept_locked(fd, w, n, (size_t)r, r)) {
        note_calm(w, w->seq != 0);
        if (r > 0)
            note_write(w, w->off, (size_t)r, 0);
        w->off += r;
        if ((size_t)r == n) {
            /* 3 writes in sequence (the paper's rule), or one large write the
             * file took slower than a copy: the next large ones are queued. */
            if (++w->seq >= wb_run_length(w) ||
                (n > unblock_opt.io_block / 4 && n >= WB_LARGE_MIN && ns &&
                 __atomic_load_n(&w->costs->ns_per_kb, __ATOMIC_RELAXED) >= unblock_opt.io_queue_ns))
                start_buffering_locked(fd, w);
        } else {
            w->seq = 0;
        }
    }
    wunlock(w);
}

/* After a forwarded pwrite: complete ones that continue the previous write count
 * toward buffering, as write()s do. */
void unblock_wb_pwrote(int fd, size_t n, off_t off, ssize_t r)
{
    wb_fd_t *w = slot(fd);
    if (!w || w->state == WB_NONE || w->state == WB_OFF || r <= 0)
        return;
    wlock(w);
    int kept = w->state == WB_COUNTING && quiet_kept_locked(fd, w, n, (size_t)r, 0);
    if (!kept && w->state != WB_NONE && w->state != WB_OFF) {
        int continues = off == w->last_end;
        if (w->state == WB_COUNTING)
            note_calm(w, continues);
        note_write(w, off, (size_t)r, 0);
        if (w->state == WB_COUNTING) {
            if (continues && (size_t)r == n && ++w->seq >= wb_run_length(w))
                start_buffering_locked(fd, w);
            else if (!continues || (size_t)r != n)
                w->seq = 0;
        }
    }
    wunlock(w);
}
