/* open.c — a file's start and end under MPI-IO write-behind (docs/mpiio.md): at
 * MPI_File_open (every rank of the file at once) whether it is followed, its
 * duplicate communicator, the descriptor beside MPI, the logical block and the
 * mode every rank agrees on; at close and MPI_Finalize, everything written,
 * the I/O thread let go, and the space reserved past the file's end cut once.
 * file.c calls these from mio_hook. */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "core/log.h"
#include "core/options.h"
#include "fileio/fileio.h"
#include "fileio/writebehind.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

typedef int (*open_t)(MPI_Comm, const char *, int, MPI_Info, MPI_File *);

/* The logical block: UNBLOCK_MPIIO_BLOCK, else the file system's stripe (the MPI
 * library's striping_unit hint) or block, at least 1 MiB. */
static int64_t block_size(MPI_File fh, const char *path)
{
    if (unblock_opt.mpiio_block)
        return (int64_t)unblock_opt.mpiio_block;
    int64_t b = 1 << 20;
    MPI_Info info;
    if (mio_mpi.get_info(fh, &info) == MPI_SUCCESS) {
        char v[64];
        int flag = 0;
        if (mio_mpi.info_get(info, "striping_unit", sizeof v - 1, v, &flag) == MPI_SUCCESS &&
            flag && atoll(v) > b)
            b = atoll(v);
        mio_mpi.info_free(&info);
    }
    struct statfs sf;
    if (path && statfs(path, &sf) == 0 && sf.f_bsize > 0 && (int64_t)sf.f_bsize > b)
        b = (int64_t)sf.f_bsize;
    if (b > (1 << 30))
        b = 1 << 30;
    return b;
}

static int open_followed(MPI_Comm comm, const char *name, int amode, MPI_Info info,
                         MPI_File *fh);
static void plain_front_clear(void);

/* MPI_File_open: the file followed where it can be; a handle that is not is
 * noted (mio_plain_note). */
int mio_open(void **a, void (*real)(void), int *rc, int follow)
{
    MPI_Comm comm = *(MPI_Comm *)a[0];
    const char *name = *(const char **)a[1];
    int amode = *(int *)a[2];
    MPI_Info info = *(MPI_Info *)a[3];
    MPI_File *fh = *(MPI_File **)a[4];
    *rc = ((open_t)real)(comm, name, amode, info, fh);
    if (*rc != MPI_SUCCESS || !follow)
        return 1;
    mio_plain_forget(*fh); /* (a value MPI gives again) */
    if (!open_followed(comm, name, amode, info, fh))
        mio_plain_note(*fh, name);
    return 1;
}

/* The file of handle *fh followed (1), or not (0: read-only or sequential, an
 * intercommunicator's, or a rank could not open its own way to it).  Whether
 * two followed handles have the same file: fstat here, only where both have a
 * descriptor. */
static int open_followed(MPI_Comm comm, const char *name, int amode, MPI_Info info,
                         MPI_File *fh)
{
    if (amode & (MPI_MODE_RDONLY | MPI_MODE_SEQUENTIAL))
        return 0;
    mio_resolve();
    int inter = 0;
    mio_mpi.comm_test_inter(comm, &inter);
    if (inter)
        return 0;
    mio_file_t *f = calloc(1, sizeof *f);
    if (f == NULL)
        return 0;
    f->fh = *fh;
    f->fd = -1;
    if (mio_mpi.comm_dup(comm, &f->comm) != MPI_SUCCESS) {
        free(f);
        return 0;
    }
    mio_mpi.comm_rank(f->comm, &f->rank);
    mio_mpi.comm_size(f->comm, &f->size);
    /* The file through the kernel, beside MPI (reservations, the blocks' writes,
     * fsync at MPI_File_sync, the fatal drain): none where the MPI library's
     * driver reaches a file system the kernel does not mount (ROMIO's pvfs2:,
     * daos:, or testfs:). */
    int fd = unblock_own_fd(open(mio_plain_path(name), O_WRONLY | O_CLOEXEC));
    /* Without one, this rank's own MPI handle (mio_self_open). */
    f->amode = amode;
    f->name = strdup(name);
    int ok = f->name != NULL && (fd >= 0 || mio_self_open(f, info));
    /* Two stages where the MPI allows a second thread calling it (owner.c), and
     * where owners can write without MPI: through MPI's own I/O layer the I/O
     * thread would wait for the library's lock (ROMIO's is global), which the
     * owner's program may hold in a collective call that waits for the rank
     * that waits for the owner (test: *.mpiio-nofd.np2, ROMIO's testfs).  A
     * file of one rank is its own owner: the I/O thread writes its full
     * blocks through the descriptor and calls no MPI function for it, so at
     * any thread level (before, one stage: every block stayed buffered until
     * the cache's bound or a flush, and was written inside the program's
     * call).  Where space is reserved ahead (a job of one rank; below) a file
     * system that fills finds the program's call, made as MPI's own, whose
     * answer is the program's (OMPIO says nothing of a full disk); where it
     * is not (a file of one rank in a job of several: PnetCDF's handle for
     * independent data), a block whose write fails on the I/O thread is
     * written again through MPI by the program's next call on the file
     * (stage.c, mio_settle), which returns MPI's answer. */
    int world = 0;
    if (mio_mpi.comm_size(mio_mpi.world, &world) != MPI_SUCCESS || f->size < world)
        f->noreserve = 1;
    f->solo = f->size == 1;
    f->news = world > 1 && (f->solo || unblock_opt.mpiio_visible == MIO_VISIBLE_MESSAGES ||
                            (unblock_opt.mpiio_visible == MIO_VISIBLE_AUTO &&
                             !(amode & MPI_MODE_WRONLY)));
    int two = ok && fd >= 0 &&
              (f->solo ? unblock_opt.mpiio_stages != 1
                       : f->size > 1 && mio_two_stage_possible());
    if (two) {
        f->sent = calloc((size_t)f->size, 1);
        f->owed = calloc((size_t)f->size, sizeof(int));
        two = f->sent && f->owed && mio_thread_attach(f);
    }
    /* Every rank follows the file, or none; one block size and one mode for all
     * (maxima of negated values are minima). */
    int64_t mine[3] = { ok ? -block_size(*fh, mio_plain_path(name)) : 0, 0, -(int64_t)two }, all[3];
    mine[1] = -mine[0];
    int agreed = mio_mpi.allreduce(mine, all, 3, mio_mpi.int64, mio_mpi.max, f->comm) ==
                 MPI_SUCCESS;
    if (two && (!agreed || all[2] == 0))
        mio_thread_detach(f);
    if (!agreed || all[0] == 0) {
        if (fd >= 0)
            unblock_own_close(fd);
        if (f->has_self)
            mio_mpi.close(&f->self);
        mio_mpi.comm_free(&f->comm);
        free(f->sent);
        free(f->owed);
        free(f->name);
        free(f);
        unblock_debug("MPI-IO write-behind: %s not followed (its own handle could not be opened)",
                      name);
        return 0;
    }
    f->block = all[1];
    f->follow = 1;
    f->two_stage = all[2] != 0;
    mio_view_reset(&f->view);
    f->fd = fd;
    unblock_own_hold(fd, &f->fd);
    /* Space reserved ahead is given back at close by cutting the file to the
     * size it has then, which is final only when every process that writes it
     * is done: the file's ranks are (let_go), others need not be.  A file opened
     * on fewer ranks than the job's (PnetCDF's MPI_COMM_SELF handle of each
     * rank in independent mode) may be written by processes outside them: a
     * cut there dropped another rank's last bytes.  No reservation for it
     * (noreserve, set before the agreement). */
    f->cut_at_close = !f->noreserve;
    if (f->fd >= 0)
        unblock_wb_fatal_signals();
    snprintf(f->path, sizeof f->path, "%s", name);
    if (mio_mode < (f->two_stage ? 2 : 1))
        mio_mode = f->two_stage ? 2 : 1;
    unblock_counter_add(&mio_stats.files, 1);
    struct stat st;
    int known = f->fd >= 0 && fstat(f->fd, &st) == 0;
    if (known) {
        f->dev = st.st_dev;
        f->ino = st.st_ino;
    }
    pthread_mutex_lock(&mio_lock);
    mio_file_t **p = &mio_files;
    while (*p) {
        mio_file_t *g = *p;
        if (known && mio_same_file(g, f))
            g->sib = f->sib = 1;
        p = &g->next;
    }
    *p = f;
    plain_front_clear(); /* (a handle of this file may have been the fronts') */
    __atomic_add_fetch(&mio_files_gen, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&unblock_outside_look, mio_outside_look, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mio_lock);
    if (known) /* (the program's descriptors of it look first from now on) */
        unblock_wb_outside_file((uint64_t)f->dev, (uint64_t)f->ino);
    return 1;
}

/* A handle not followed, of a file the kernel names (read-only, sequential,
 * refused): MPI makes writes through another handle visible through it only
 * after MPI_File_sync, but ROMIO and OMPIO write in the call, so its calls see
 * them at once.  Before, a handle opened MPI_MODE_RDONLY beside the one a rank
 * wrote through read none of the rank's writes and a size of 0
 * (*.mpiio-rdhandle.np2, both MPIs).  So each call on one writes this rank's
 * buffered writes of the same file first, as a sibling's do (siblings_flush);
 * one whose file is followed through no handle looks at a short list. */
typedef struct plain {
    MPI_File fh;
    dev_t dev;
    ino_t ino;
    struct plain *next;
} plain_t;
static plain_t *plains; /* (under mio_lock) */

void mio_plain_note(MPI_File fh, const char *name)
{
    struct stat st;
    plain_t *p;
    if (stat(mio_plain_path(name), &st) != 0 || (p = malloc(sizeof *p)) == NULL)
        return; /* (a file the kernel cannot name: no followed one has it either) */
    p->fh = fh;
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    pthread_mutex_lock(&mio_lock);
    p->next = plains;
    plains = p;
    pthread_mutex_unlock(&mio_lock);
}

/* (under mio_lock: a reader's front may still pass one more call) */
static void plain_front_clear(void)
{
    unblock_mpiio_plain_t *m = &unblock_mpiio_plain;
    __atomic_store_n(&m->fvalid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&m->fh, (MPI_File)NULL, __ATOMIC_RELEASE);
}

void mio_plain_forget(MPI_File fh)
{
    if (__atomic_load_n(&unblock_mpiio_plain.fh, __ATOMIC_RELAXED) == fh) {
        pthread_mutex_lock(&mio_lock);
        if (unblock_mpiio_plain.fh == fh)
            plain_front_clear();
        pthread_mutex_unlock(&mio_lock);
    }
    if (__atomic_load_n(&plains, __ATOMIC_RELAXED) == NULL)
        return;
    pthread_mutex_lock(&mio_lock);
    for (plain_t **pp = &plains; *pp; pp = &(*pp)->next)
        if ((*pp)->fh == fh) {
            plain_t *p = *pp;
            *pp = p->next;
            free(p);
            break;
        }
    pthread_mutex_unlock(&mio_lock);
}

int mio_plain_look(MPI_File fh, int how, int front, MPI_Fint ffh)
{
    if (__atomic_load_n(&plains, __ATOMIC_RELAXED) == NULL && front == MIO_PLAIN_NONE)
        return 0;
    mio_file_t key = { .fd = 0 }; /* (what mio_same_file reads) */
    int found = 0, followed = 0;
    pthread_mutex_lock(&mio_lock);
    for (const plain_t *p = plains; p && !found; p = p->next)
        if (p->fh == fh) {
            key.dev = p->dev;
            key.ino = p->ino;
            found = 1;
        }
    followed = found && mio_file_followed(&key);
    /* (a file followed later clears it: open_followed, under this lock too) */
    if (!followed && front != MIO_PLAIN_NONE) {
        unblock_mpiio_plain_t *m = &unblock_mpiio_plain;
        __atomic_store_n(&m->fvalid, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&m->fh, fh, __ATOMIC_RELEASE);
        if (front == MIO_PLAIN_F) {
            __atomic_store_n(&m->ffh, ffh, __ATOMIC_RELAXED);
            __atomic_store_n(&m->fvalid, 1, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&mio_lock);
    return followed && mio_flush_picked(&key, mio_pick_same_file, &mio_stats.flush_local, how) > 0;
}

/* Another handle of the same file in this process (f->sib): MPI makes writes
 * through one handle visible through another only after MPI_File_sync, but
 * ROMIO and OMPIO write in the call, and PnetCDF 1.15 relies on it: it writes
 * independent data through a handle of its own on MPI_COMM_SELF and reads the
 * header and data back, or writes collectively over them, through the handle
 * on the file's communicator, with no sync between.  Before, such a read missed
 * the buffered writes (6 of PnetCDF 1.15's tests failed: "number of records
 * expect 2 but got 0"), and the older buffered writes, written at close, landed
 * over the later collective ones (*.mpiio-twohandles.np2).  So every call on
 * either handle first writes what this rank buffered through the others (a
 * local flush: owners answer once written). */
static int sibling_of(const mio_file_t *g, const mio_file_t *f)
{
    return g != f && g->sib && mio_same_file(g, f);
}

void mio_siblings_flush(mio_file_t *f, int how)
{
    mio_flush_picked(f, sibling_of, &mio_stats.flush_local, how);
}

/* The name under which MPI opens f's own handle: f's name while it still names
 * the descriptor's file, else the descriptor's /proc link (with the name's
 * ROMIO prefix, if any): a file removed while open (before, the handle's open
 * failed, and a write that failed through the descriptor returned errno's
 * class, not MPI's: *.mpiio-unlinked.np2) or replaced by another file (whose
 * bytes are not ours to write). */
static const char *self_name(const mio_file_t *f, char *buf, size_t n)
{
    struct stat st;
    const char *path = mio_plain_path(f->name);
    if (f->fd < 0 || (stat(path, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino))
        return f->name; /* (f->dev, f->ino: the descriptor's, mio_open's fstat) */
    snprintf(buf, n, "%.*s/proc/self/fd/%d", (int)(path - f->name), f->name, f->fd);
    return buf;
}

/* This rank's own MPI handle of f (info: the program's hints, or MPI_INFO_NULL),
 * for a file the kernel cannot open, or to ask MPI what a write that failed
 * through the descriptor would have returned (stage.c): never exclusive, never
 * deleted on close, never "unique" (the program's handle has the file open too);
 * data sieving off (it would read and rewrite bytes of other ranks).  1 if open. */
int mio_self_open(mio_file_t *f, MPI_Info info)
{
    if (f->has_self)
        return 1;
    char proc[PATH_MAX];
    const char *name = self_name(f, proc, sizeof proc);
    MPI_Info si = mio_mpi.info_null;
    if (info != mio_mpi.info_null ? mio_mpi.info_dup(info, &si) : mio_mpi.info_create(&si))
        si = mio_mpi.info_null;
    if (si != mio_mpi.info_null) {
        mio_mpi.info_set(si, "romio_ds_write", "disable");
        mio_mpi.info_set(si, "romio_cb_write", "disable");
    }
    int smode = (f->amode & ~(MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE |
                              MPI_MODE_UNIQUE_OPEN | MPI_MODE_RDWR | MPI_MODE_APPEND)) |
                MPI_MODE_WRONLY;
    int ok = mio_mpi.open(mio_mpi.self, name, smode, si, &f->self) == MPI_SUCCESS;
    if (si != mio_mpi.info_null)
        mio_mpi.info_free(&si);
    if (ok)
        mio_mpi.set_eh(f->self, mio_mpi.errors_return);
    f->has_self = ok;
    return ok;
}

/* Our side of a file goes: everything written (every rank: collective), its own
 * handle closed, the duplicate freed.  Returns the error kept for the program. */
int mio_let_go(mio_file_t *f, unblock_counter_t *why)
{
    mio_flush_all_ranks(f, why);
    if (f->two_stage)
        mio_thread_detach(f);
    pthread_mutex_lock(&mio_lock);
    for (mio_file_t **p = &mio_files; *p; p = &(*p)->next)
        if (*p == f) {
            *p = f->next;
            break;
        }
    if (f->news) { /* (the last such file gone: the fast paths come back) */
        int any = 0;
        for (mio_file_t *g = mio_files; g && !any; g = g->next)
            any = g->news;
        if (!any)
            mio_news_none();
    }
    if (f->sib) { /* (a sibling left alone is no longer one) */
        mio_file_t *left = NULL;
        int n = 0;
        for (mio_file_t *g = mio_files; g; g = g->next)
            if (mio_same_file(g, f))
                left = g, n++;
        if (n == 1)
            left->sib = 0;
    }
    __atomic_add_fetch(&mio_files_gen, 1, __ATOMIC_RELEASE);
    int last = mio_files == NULL;
    if (last)
        __atomic_store_n(&unblock_outside_look, NULL, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mio_lock);
    /* (another thread's call may flush it still: mio_flush_picked found it in
     * the list before; none finds it now) */
    while (__atomic_load_n(&f->held, __ATOMIC_ACQUIRE))
        sched_yield();
    if (last) /* (the warm buffers kept for the next block: none will come) */
        mio_buf_release();
    if (f->has_self)
        mio_mpi.close(&f->self);
    /* Space reserved past the end of the file goes back once every rank is done
     * writing (two stages: the collective flush answered; one: this reduction
     * is the barrier), so the size is final: cut once, by the first rank with a
     * descriptor, where any rank reserved past the end (each rank's ftruncate
     * of the same file was a metadata request of its own: two at once on
     * bench/slowfs took up to 2.4 ms).  Every rank takes part (agreed at
     * open), also one whose fallocate failed since. */
    if (f->cut_at_close) {
        int have = f->fd >= 0 && !f->noreserve;
        int64_t mine[2] = { have ? (int64_t)unblock_wb_reserved_end(f->fd) : 0,
                            f->fd >= 0 ? -(int64_t)f->rank : INT64_MIN },
                all[2];
        if (mio_mpi.allreduce(mine, all, 2, mio_mpi.int64, mio_mpi.max, f->comm) != MPI_SUCCESS)
            all[0] = mine[0], all[1] = mine[1]; /* (then each rank cuts for itself) */
        if (f->fd >= 0)
            unblock_wb_unreserve(f->fd, -all[1] == f->rank ? (off_t)all[0] : 0);
    }
    mio_mpi.comm_free(&f->comm);
    if (f->fd >= 0)
        unblock_own_close(f->fd);
    mio_view_reset(&f->view);
    free(f->sent);
    free(f->owed);
    free(f->name);
    int err = f->err > 0 ? f->err : 0; /* (MIO_ERR_RETRY: settled by the flush) */
    free(f);
    return err;
}
