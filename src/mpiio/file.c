/* file.c — what MPI-IO write-behind does at each MPI-IO call (docs/mpiio.md).
 *
 * The generated wrappers of the calls marked `mpiio` in src/comm/mpi_functions.toml
 * call mio_hook (installed in unblock_mpiio_hook at start-up).  A file opened for
 * writing (not read-only, not sequential) is followed (open.c: its communicator
 * is duplicated, stage 2 talks on the duplicate, and each rank opens a
 * descriptor of it, or where the kernel cannot the same file on MPI_COMM_SELF,
 * which is where buffered bytes are written).  Independent
 * writes are taken into stage 1 (stage.c) while the view is native, the file
 * not atomic and both datatypes known; every other call that may see, change or
 * order the bytes first flushes what it must: this rank's buffered writes are
 * written (by it, or by their owners, who answer when they did) before reads
 * (unless own.c serves them), shared-pointer calls, SEEK_END and collective
 * accesses; sync, close
 * and MPI_Finalize also wait for every rank of the file (a barrier), so the
 * owners are done before the real sync or close.
 *
 * An error of a write done later is kept with the file (its MPI error class) and
 * returned, through the file's error handler, by the next call on the file
 * (which then does nothing else), by sync or by close (which still close). */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "core/log.h"
#include "core/module.h"
#include "core/options.h"
#include "fileio/fileio.h"
#include "fileio/writebehind.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

mio_mpi_t mio_mpi;
pthread_mutex_t mio_lock = PTHREAD_MUTEX_INITIALIZER;
mio_file_t *mio_files;
int mio_ending;
/* Moves (under mio_lock) whenever mio_files changes: each thread's memo of its
 * last handle's file (mio_hook) holds while it has not moved. */
uint32_t mio_files_gen = 1;
static UNBLOCK_TLS struct {
    MPI_File fh;
    mio_file_t *f;
    uint32_t gen;
} last_file;
int mio_mode;
static int resolved;
static int finalized;

#define R(field, name) mio_mpi.field = (__typeof__(mio_mpi.field))UNBLOCK_PMPI(name)

void mio_resolve(void)
{
    if (resolved)
        return;
    R(open, MPI_File_open);
    R(close, MPI_File_close);
    R(write_at, MPI_File_write_at);
    R(sync, MPI_File_sync);
    R(set_eh, MPI_File_set_errhandler);
    R(call_eh, MPI_File_call_errhandler);
    R(get_position, MPI_File_get_position);
    R(seek, MPI_File_seek);
    R(set_view, MPI_File_set_view);
    R(set_atomicity, MPI_File_set_atomicity);
    R(get_info, MPI_File_get_info);
    R(get_amode, MPI_File_get_amode);
    R(info_get, MPI_Info_get);
    R(info_set, MPI_Info_set);
    R(info_create, MPI_Info_create);
    R(info_dup, MPI_Info_dup);
    R(info_free, MPI_Info_free);
    R(comm_dup, MPI_Comm_dup);
    R(comm_free, MPI_Comm_free);
    R(comm_rank, MPI_Comm_rank);
    R(comm_size, MPI_Comm_size);
    R(comm_test_inter, MPI_Comm_test_inter);
    R(barrier, MPI_Barrier);
    R(allreduce, MPI_Allreduce);
    R(iallreduce, MPI_Iallreduce);
    R(type_size, MPI_Type_size);
    R(error_class, MPI_Error_class);
    R(set_elements, MPI_Status_set_elements_x);
    R(set_cancelled, MPI_Status_set_cancelled);
    R(grequest_start, MPI_Grequest_start);
    R(grequest_complete, MPI_Grequest_complete);
    R(finalized, MPI_Finalized);
    R(initialized, MPI_Initialized);
    R(isend, MPI_Isend);
    R(send, MPI_Send);
    R(recv, MPI_Recv);
    R(irecv, MPI_Irecv);
    R(testall, MPI_Testall);
    R(waitall, MPI_Waitall);
    R(test, MPI_Test);
    R(improbe, MPI_Improbe);
    R(mrecv, MPI_Mrecv);
    R(get_count, MPI_Get_count);
    R(file_f2c, MPI_File_f2c);
    R(file_c2f, MPI_File_c2f);
#if defined(OPEN_MPI)
    R(info_f2c, MPI_Info_f2c);
    R(request_c2f, MPI_Request_c2f);
#endif
    R(status_c2f, MPI_Status_c2f);
    mio_mpi.self = UNBLOCK_MPI_HANDLE(MPI_Comm, "ompi_mpi_comm_self", MPI_COMM_SELF);
    mio_mpi.world = UNBLOCK_MPI_HANDLE(MPI_Comm, "ompi_mpi_comm_world", MPI_COMM_WORLD);
    mio_mpi.byte = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_byte", MPI_BYTE);
    mio_mpi.integer = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_int", MPI_INT);
    mio_mpi.int64 = UNBLOCK_MPI_HANDLE(MPI_Datatype, "ompi_mpi_int64_t", MPI_INT64_T);
    mio_mpi.info_null = UNBLOCK_MPI_HANDLE(MPI_Info, "ompi_mpi_info_null", MPI_INFO_NULL);
    mio_mpi.errors_return =
        UNBLOCK_MPI_HANDLE(MPI_Errhandler, "ompi_mpi_errors_return", MPI_ERRORS_RETURN);
    mio_mpi.max = UNBLOCK_MPI_HANDLE(MPI_Op, "ompi_mpi_op_max", MPI_MAX);
    unblock_dt_learn(mio_mpi.byte); /* (files are written in bytes more than anything) */
    __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}

static mio_file_t *find(MPI_File fh)
{
    for (mio_file_t *f = mio_files; f; f = f->next)
        if (f->fh == fh)
            return f;
    return NULL;
}

/* How call op on a file flushes its siblings (mio_siblings_flush): a call
 * that may read also sees what other ranks wrote through them (MIO_FL_SEE:
 * their news left it at owners). */
static int sees(int op)
{
    switch (op) {
    case UNBLOCK_MPIIO_READ_AT:
    case UNBLOCK_MPIIO_READ:
    case UNBLOCK_MPIIO_LOCAL:
    case UNBLOCK_MPIIO_GET_SIZE:
    case UNBLOCK_MPIIO_SEEK:
    case UNBLOCK_MPIIO_COLLECTIVE:
        return MIO_FL_SEE;
    default:
        return MIO_FL_OWN;
    }
}

/* A call on a handle not followed (open.c: mio_plain_look): this rank's writes
 * of its file through followed handles first; a read's handle is the fronts'
 * next (`front`: MIO_PLAIN_C, or MIO_PLAIN_F with ffh its integer).  A close
 * ends the note. */
static void plain_call(MPI_File fh, int op, int front, MPI_Fint ffh)
{
    if (op == UNBLOCK_MPIIO_CLOSE)
        mio_plain_forget(fh);
    else
        mio_plain_look(fh, sees(op),
                       op == UNBLOCK_MPIIO_READ_AT || op == UNBLOCK_MPIIO_READ ? front
                                                                              : MIO_PLAIN_NONE,
                       ffh);
}

/* An error kept for the program: returned through the file's error handler.
 * Blocks whose write failed on the I/O thread are written again first, by this
 * thread through MPI, which gives the class (or none: then 0, and the call
 * goes on). */
static int deliver(mio_file_t *f)
{
    pthread_mutex_lock(&mio_lock);
    mio_settle(f);
    int code = f->err;
    f->err = 0;
    pthread_mutex_unlock(&mio_lock);
    if (code) {
        unblock_counter_add(&mio_stats.errors_returned, 1);
        mio_mpi.call_eh(f->fh, code);
    }
    return code;
}

/* Whether a call on f returns the error kept for it (`deliver`) before it runs
 * (then it runs not at all): any call but the sync and the close (which run, and
 * return it after), and but a collective call on a file of several ranks, which
 * runs, as every other rank is in it, and leaves the error for the rank's next
 * call that returns it, its sync or its close.  Before, a collective call
 * returned it at once without running: the other ranks waited in it for ever
 * (*.mpiio-failcoll.np2). */
static int delivers_at(const mio_file_t *f, int op)
{
    switch (op) {
    case UNBLOCK_MPIIO_SYNC:
    case UNBLOCK_MPIIO_CLOSE:
        return 0;
    case UNBLOCK_MPIIO_COLLECTIVE:
    case UNBLOCK_MPIIO_SET_VIEW:
    case UNBLOCK_MPIIO_SET_ATOMICITY:
        return f->size == 1;
    default:
        return 1;
    }
}

/* MPI_File_sync (`real` MPI's, from C or Fortran): every rank's buffered
 * writes, MPI's own sync, the descriptor fsynced where this rank wrote
 * through it since its last fsync here and MPI's sync made none, and an
 * earlier write's error kept for the program returned (from Fortran too: its
 * sync returned MPI's answer alone, and a failed write of the sync's own
 * flush came back only at the close).  The descriptor only where written: a
 * sync with nothing written made two fsyncs where plain makes one, each a
 * flush of the disk's cache (PnetCDF's tst_multi_redefine, 2 ranks, 22,080
 * fsyncs against plain's 11,040). */
static int sync_file(mio_file_t *f, int (*real)(MPI_File))
{
    mio_flush_all_ranks(f, &mio_stats.flush_collective);
    int srr = MPI_SUCCESS, dirty = 0;
    if (f->has_self)
        srr = mio_mpi.sync(f->self);
    else
        dirty = __atomic_exchange_n(&f->fd_dirty, 0, __ATOMIC_ACQ_REL);
    unsigned before = unblock_tls.mpi_fsyncs;
    int rc = real(f->fh);
    /* The descriptor fsynced only where MPI's sync fsynced nothing on this
     * thread (an fsync is the file's, whichever descriptor: MPI's covers
     * unblock's writes, and its error comes back as MPI's answer).  OMPIO's
     * sync always fsyncs; ROMIO's only after a write through its own handle,
     * so under MPICH this one is made.  Before, both were: PnetCDF's
     * tst_multi_redefine, 2 ranks on Open MPI, 15,088 fsyncs against plain's
     * 11,040 (now 11,040). */
    if (dirty && unblock_tls.mpi_fsyncs == before) {
        unblock_counter_add(&mio_stats.sync_fsyncs, 1);
        if (fsync(f->fd) != 0 && errno != EINVAL)
            srr = MPI_ERR_IO;
    }
    if (srr != MPI_SUCCESS)
        mio_note_error(f, srr);
    int kept = f->err ? deliver(f) : 0;
    return kept ? kept : rc;
}

/* ---- writes ---- */

typedef int (*write_at_t)(MPI_File, MPI_Offset, const void *, int, MPI_Datatype, MPI_Status *);
typedef int (*write_t)(MPI_File, const void *, int, MPI_Datatype, MPI_Status *);
typedef int (*iwrite_at_t)(MPI_File, MPI_Offset, const void *, int, MPI_Datatype, MPI_Request *);
typedef int (*iwrite_t)(MPI_File, const void *, int, MPI_Datatype, MPI_Request *);
/* (the MPI_Count forms, MPI 4.0: MPI_File_write_c and the others) */
typedef int (*write_at_c_t)(MPI_File, MPI_Offset, const void *, MPI_Count, MPI_Datatype,
                            MPI_Status *);
typedef int (*write_c_t)(MPI_File, const void *, MPI_Count, MPI_Datatype, MPI_Status *);
typedef int (*iwrite_at_c_t)(MPI_File, MPI_Offset, const void *, MPI_Count, MPI_Datatype,
                             MPI_Request *);
typedef int (*iwrite_c_t)(MPI_File, const void *, MPI_Count, MPI_Datatype, MPI_Request *);

/* The call as the program made it (after a flush): a write we do not take.
 * `large`: the MPI_Count form. */
static int run_real(mio_file_t *f, unsigned id, int op, int large, void **a,
                    void (*real)(void))
{
    int rc;
    if ((op == UNBLOCK_MPIIO_IWRITE || op == UNBLOCK_MPIIO_IWRITE_AT) &&
        mio_nb_as_blocking(f, id, large, a, &rc))
        return rc;
    MPI_File fh = *(MPI_File *)a[0];
    int at = op == UNBLOCK_MPIIO_WRITE_AT || op == UNBLOCK_MPIIO_IWRITE_AT;
    MPI_Offset off = at ? *(MPI_Offset *)a[1] : 0;
    const void *buf = *(const void **)a[at + 1];
    MPI_Datatype type = *(MPI_Datatype *)a[at + 3];
    void *last = *(void **)a[at + 4];
    if (large) {
        MPI_Count count = *(MPI_Count *)a[at + 2];
        switch (op) {
        case UNBLOCK_MPIIO_WRITE_AT:
            return ((write_at_c_t)real)(fh, off, buf, count, type, last);
        case UNBLOCK_MPIIO_IWRITE_AT:
            return ((iwrite_at_c_t)real)(fh, off, buf, count, type, last);
        case UNBLOCK_MPIIO_WRITE:
            return ((write_c_t)real)(fh, buf, count, type, last);
        default:
            return ((iwrite_c_t)real)(fh, buf, count, type, last);
        }
    }
    int count = *(int *)a[at + 2];
    switch (op) {
    case UNBLOCK_MPIIO_WRITE_AT:
        return ((write_at_t)real)(fh, off, buf, count, type, last);
    case UNBLOCK_MPIIO_IWRITE_AT:
        return ((iwrite_at_t)real)(fh, off, buf, count, type, last);
    case UNBLOCK_MPIIO_WRITE:
        return ((write_t)real)(fh, buf, count, type, last);
    default:
        return ((iwrite_t)real)(fh, buf, count, type, last);
    }
}

/* A write the program made (`large`: the MPI_Count form; `fortran`: from the
 * Fortran entry points, which run the call themselves when it is not taken). */
static int do_write(mio_file_t *f, unsigned id, int op, int large, void **a,
                    void (*real)(void), int *rc, int fortran)
{
    int at = op == UNBLOCK_MPIIO_WRITE_AT || op == UNBLOCK_MPIIO_IWRITE_AT;
    int i = at ? 2 : 1;
    MPI_File fh = f->fh;
    if (unblock_unlikely(f->sib)) /* (later writes of the same bytes win: open.c) */
        mio_siblings_flush(f, MIO_FL_OWN);
    const char *buf = *(const char **)a[i];
    MPI_Count count = large ? *(MPI_Count *)a[i + 1] : *(int *)a[i + 1];
    MPI_Datatype type = *(MPI_Datatype *)a[i + 2];
    MPI_Offset pos = at ? *(MPI_Offset *)a[1] : 0;
    unblock_dt_t d;
    int known = mio_takes(f) && count >= 0 && pos >= 0 && unblock_dt_lookup(type, &d);
    if (known && !d.contiguous && d.flat == NULL)
        known = 0;
    if (known && d.size > 0 && count > INT64_MAX / (int64_t)d.size) { /* (no such memory) */
        if (d.flat)
            unblock_flat_release(d.flat);
        known = 0;
    }
    /* (MPICH 4.0's ROMIO says -1 right after a view whose filetype's lower bound
     * is not 0: such a position is left to MPI's own call) */
    if (known && !at && (mio_mpi.get_position(fh, &pos) != MPI_SUCCESS || pos < 0)) {
        if (d.flat)
            unblock_flat_release(d.flat);
        known = 0;
    }
    int64_t n = known ? (int64_t)count * (int64_t)d.size : 0;
    if (known && n % f->view.esize) { /* not whole etypes: MPI says what that is */
        if (d.flat)
            unblock_flat_release(d.flat);
        known = 0;
    }
    if (!known) {
        unblock_counter_add(&mio_stats.passthrough, 1);
        f->passed += f->quiet; /* (counted for its next check: flush.c, flush_quiet) */
        mio_flush_local(f, &mio_stats.flush_local);
        if (fortran)
            return 0; /* (the Fortran entry point runs) */
        *rc = run_real(f, id, op, large, a, real);
        if (*rc == MPI_SUCCESS)
            unblock_dt_learn(type);
        return 1;
    }
    char *tmp = NULL;
    const char *src = buf + d.lb;
    if (d.flat) {
        tmp = malloc(n ? (size_t)n : 1);
        if (tmp) {
            unblock_bytes_t b = { (uintptr_t)buf, d.flat, (size_t)count };
            unblock_bytes_gather(&b, tmp);
        }
        unblock_flat_release(d.flat);
        src = tmp;
        if (tmp == NULL) {
            mio_flush_local(f, &mio_stats.flush_local);
            if (fortran)
                return 0;
            *rc = run_real(f, id, op, large, a, real);
            return 1;
        }
    }
    pthread_mutex_lock(&mio_lock);
    /* (quiet since the look above: another thread's collective call made it
     * so, and no write may be held now; MPI's own call, below) */
    int bad = unblock_unlikely(f->quiet) ? -1
              : n                          ? mio_take_view(f, pos * f->view.esize, src, n)
                                           : 0;
    pthread_mutex_unlock(&mio_lock);
    if (tmp) /* (free(NULL) is not free here: our allocator's wrapper) */
        free(tmp);
    if (bad) { /* no memory, or no room: flush and make the call as the program did */
        f->passed += f->quiet;
        mio_flush_local(f, &mio_stats.flush_local);
        if (fortran)
            return 0;
        *rc = run_real(f, id, op, large, a, real);
        return 1;
    }
    unblock_counter_add(&mio_stats.writes, 1);
    unblock_counter_add(&mio_stats.bytes, (uint64_t)n);
    if (op == UNBLOCK_MPIIO_WRITE_AT && d.flat == NULL && d.lb == 0 && count <= INT_MAX)
        mio_cont_fill(f, type, (int64_t)d.size, pos, n); /* (the cursor's count: an int) */
    if (!at)
        mio_mpi.seek(fh, pos + n / f->view.esize, MPI_SEEK_SET);
    if (op == UNBLOCK_MPIIO_WRITE || op == UNBLOCK_MPIIO_WRITE_AT) {
        MPI_Status *st = *(MPI_Status **)a[i + 3];
        if (st != MPI_STATUS_IGNORE) {
            mio_mpi.set_elements(st, mio_mpi.byte, (MPI_Count)n);
            mio_mpi.set_cancelled(st, 0);
        }
        *rc = MPI_SUCCESS;
    } else {
        unblock_counter_add(&mio_stats.iwrites, 1);
        MPI_Request *req = *(MPI_Request **)a[i + 3];
        *rc = mio_request_done((MPI_Count)n, req);
    }
    return 1;
}

/* ---- the hook ---- */

static void flush_every_file(void)
{
    if (!resolved)
        return;
    for (mio_file_t *f = mio_files; f; f = f->next)
        mio_flush_local(f, &mio_stats.flush_local);
}

/* A new view: nothing to flush (a taken piece has its place in the file
 * already: the view it was written through placed it; every call that may see
 * it through the new view flushes first; PnetCDF sets a view before each put in
 * independent mode, and a flush here would write every piece at once).  The
 * writes through it are taken where mio_view_set can follow it.  From C and,
 * with the arguments converted, from Fortran. */
typedef int (*set_view_t)(MPI_File, MPI_Offset, MPI_Datatype, MPI_Datatype, const char *,
                          MPI_Info);
static int set_view(mio_file_t *f, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft,
                    const char *rep, MPI_Info info, set_view_t real)
{
    int rc = real(f->fh, disp, et, ft, rep, info);
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&mio_lock);
        int atomic = f->follow < 0;
        int ok = mio_view_set(f, disp, et, ft, rep);
        f->s1_gen++; /* (the continuation path's memos went through the old view) */
        f->follow = atomic ? -1 : ok;
        pthread_mutex_unlock(&mio_lock);
    }
    return rc;
}

/* Atomic mode: every rank's buffered writes first; while it is on nothing is
 * taken (follow -1), and when it ends the view's verdict is back. */
static int set_atomicity(mio_file_t *f, int flag, int (*real)(MPI_File, int))
{
    mio_flush_all_ranks(f, &mio_stats.flush_collective);
    int rc = real(f->fh, flag);
    if (rc == MPI_SUCCESS) {
        pthread_mutex_lock(&mio_lock);
        f->s1_gen++;
        if (flag)
            f->follow = -1;
        else if (f->follow < 0)
            f->follow = f->view.plain || f->view.ftsize > 0;
        pthread_mutex_unlock(&mio_lock);
    }
    return rc;
}

/* mpif.h, `use mpi` and `use mpi_f08`: open, close and the four writes, with
 * Fortran arguments (addresses; a string's length last).  Handles are converted
 * and the call is made as from C; ierror, the status and the request are
 * converted back.  A write not taken returns 0: the Fortran entry point runs
 * (after a flush).  `flags`: UNBLOCK_MPIIO_F08 (ierror may be absent: a NULL
 * address), UNBLOCK_MPIIO_FDESC (the buffer is a gfortran descriptor).  Both MPIs'
 * mpi_f08 handles are the integer handle of mpif.h (the MPI_VAL inside), and
 * their mpi_f08 status has the layout MPI_Status_c2f fills: Open MPI's mpi_f08
 * entry points hand it to the mpif.h code, MPICH's is the C struct, as is its
 * mpif.h status. */
#define FI(k) (*(MPI_Fint *)a[k])
#define SET_IERR(k, v)                   \
    do {                                 \
        if (a[k] != NULL)                \
            FI(k) = (MPI_Fint)(v);       \
    } while (0)
/* (any call's ierror: mpi_wrap.h, UNBLOCK_MPIIO_F77) */
#define SET_FIERR(v) SET_IERR(-1, v)
#if defined(OPEN_MPI)
#define INFO_F2C(x) mio_mpi.info_f2c(x)
#define REQUEST_C2F(x) mio_mpi.request_c2f(x)
#else /* (MPICH: integer handles, and these two are macros) */
#define INFO_F2C(x) ((MPI_Info)(x))
#define REQUEST_C2F(x) ((MPI_Fint)(x))
#endif
/* The nonblocking calls and split collectives of mio_nb_as_blocking from Fortran
 * (Open MPI's mpif.h, `use mpi` and `use mpi_f08` entry points: addresses, no
 * descriptors). */
static int fortran_nb(mio_file_t *f, MPI_File cfh, unsigned id, int flags, void **a, int *rc)
{
#if defined(OPEN_MPI)
    int at, split;
    if (!mio_nb_call(id, &at, &split) || (flags & UNBLOCK_MPIIO_FDESC) || !mio_thread_running())
        return 0;
    void *buf = a[at + 1];
    if (unblock_fortran_sentinel(buf))
        return 0;
    MPI_Offset off = at ? *(MPI_Offset *)a[1] : 0;
    int count = FI(at + 2);
    MPI_Datatype type = unblock_type_f2c(FI(at + 3));
    MPI_Request req, *reqp = &req;
    void *ca[6];
    int n = 0;
    ca[n++] = &cfh;
    if (at)
        ca[n++] = &off;
    ca[n++] = &buf;
    ca[n++] = &count;
    ca[n++] = &type;
    if (!split)
        ca[n++] = &reqp;
    if (!mio_nb_as_blocking(f, id, 0, ca, rc))
        return 0;
    if (*rc == MPI_SUCCESS && !split)
        FI(at + 4) = REQUEST_C2F(req);
    SET_IERR(at + (split ? 4 : 5), *rc);
    return 1;
#else
    (void)f, (void)cfh, (void)id, (void)flags, (void)a, (void)rc;
    return 0;
#endif
}

/* A split collective's _end from Fortran (fh, buf, status, ierror). */
static int fortran_split_end(void **a, int *rc)
{
    MPI_Status st, *stp = unblock_fortran_status_ignored(a[2]) ? MPI_STATUS_IGNORE : &st;
    if (!mio_split_end(mio_mpi.file_f2c(FI(0)), stp, rc))
        return 0;
    if (*rc == MPI_SUCCESS && stp != MPI_STATUS_IGNORE)
        mio_mpi.status_c2f(&st, (MPI_Fint *)a[2]);
    SET_IERR(3, *rc);
    return 1;
}

/* MPI_File_write_at from Fortran (fh, offset, buf, count, datatype, status,
 * ierror) continuing the wrapper's cursor (own.c), as the C wrapper takes it:
 * the status ignored, the buffer contiguous, the handles converted. */
static int fortran_cont(int flags, void **a, int *rc)
{
    if (unblock_mpiio_cur.room == 0 || !unblock_fortran_status_ignored(a[5]))
        return 0;
    const void *buf = unblock_fortran_contiguous(a[2], (flags & UNBLOCK_MPIIO_FDESC) != 0);
    if (buf == NULL || !unblock_mpiio_cur_take(mio_mpi.file_f2c(FI(0)), *(MPI_Offset *)a[1], buf,
                                               FI(3), unblock_type_f2c(FI(4))))
        return 0;
    /* (the Fortran wrapper takes the next one itself: mpi_wrap.h) */
    unblock_mpiio_cur_t *c = &unblock_mpiio_cur;
    c->ffh = FI(0);
    c->ftype = FI(4);
    c->fstatus = a[5];
    c->fvalid = 1;
    *rc = MPI_SUCCESS;
    SET_IERR(6, MPI_SUCCESS);
    return 1;
}

static int fortran_call(int op, unsigned id, int flags, void **a, void (*real)(void), int *rc)
{
    mio_resolve();
    if (op == UNBLOCK_MPIIO_OPEN) {
        size_t len = (size_t)(uintptr_t)a[6];
        while (len > 0 && ((const char *)a[1])[len - 1] == ' ')
            len--;
        char *name = malloc(len + 1);
        if (name == NULL)
            return 0;
        memcpy(name, a[1], len);
        name[len] = 0;
        MPI_Comm comm = unblock_comm_f2c(FI(0));
        MPI_Info info = INFO_F2C(FI(3));
        int amode = FI(2);
        const char *cname = name;
        MPI_File cfh;
        MPI_File *pfh = &cfh;
        void *ca[5] = { &comm, &cname, &amode, &info, &pfh };
        mio_news_at_open(comm);
        mio_open(ca, (void (*)(void))mio_mpi.open, rc, !finalized);
        free(name);
        if (*rc == MPI_SUCCESS)
            FI(4) = mio_mpi.file_c2f(cfh);
        SET_IERR(5, *rc);
        return 1;
    }
    if (op == UNBLOCK_MPIIO_SPLIT_END)
        return fortran_split_end(a, rc);
    MPI_File cfh = mio_mpi.file_f2c(FI(0));
    pthread_mutex_lock(&mio_lock);
    mio_file_t *f = find(cfh);
    pthread_mutex_unlock(&mio_lock);
    mio_news_at(op, f);
    if (f == NULL) {
        plain_call(cfh, op, MIO_PLAIN_F, FI(0));
        return op == UNBLOCK_MPIIO_LOCAL || op == UNBLOCK_MPIIO_READ_AT ||
                       op == UNBLOCK_MPIIO_READ || op == UNBLOCK_MPIIO_COLLECTIVE
                   ? fortran_nb(NULL, cfh, id, flags, a, rc)
                   : 0;
    }
    if (op == UNBLOCK_MPIIO_CLOSE) {
        int err = mio_let_go(f, &mio_stats.flush_close);
        if (err) {
            unblock_counter_add(&mio_stats.errors_returned, 1);
            mio_mpi.call_eh(cfh, err);
        }
        *rc = mio_mpi.close(&cfh);
        if (err)
            *rc = err;
        FI(0) = mio_mpi.file_c2f(cfh);
        SET_IERR(1, *rc);
        return 1;
    }
    if (f->err && delivers_at(f, op) && (*rc = deliver(f)) != 0) {
        /* an earlier write failed: this call returns it, as from C (before,
         * from Fortran only a write, the sync and the close did) */
        SET_FIERR(*rc);
        return 1;
    }
    switch (op) {
    case UNBLOCK_MPIIO_SEEK:
        if (FI(2) == MPI_SEEK_END)
            mio_flush_local(f, &mio_stats.flush_local);
        return 0;
    case UNBLOCK_MPIIO_GET_SIZE: { /* (fh, size, ierror: the Fortran call as made) */
        int64_t held = mio_size_held(f);
        ((void (*)(void *, void *, void *))real)(a[0], a[1], a[2]);
        *rc = a[2] != NULL ? FI(2) : MPI_SUCCESS;
        if (*rc == MPI_SUCCESS)
            mio_answer_size(f, (MPI_Offset *)a[1], held);
        return 1;
    }
    case UNBLOCK_MPIIO_LOCAL:
    case UNBLOCK_MPIIO_READ_AT:
    case UNBLOCK_MPIIO_READ:
        mio_flush_local(f, &mio_stats.flush_local);
        return fortran_nb(f, cfh, id, flags, a, rc);
    case UNBLOCK_MPIIO_COLLECTIVE:
        mio_flush_all_ranks(f, &mio_stats.flush_collective);
        return fortran_nb(f, cfh, id, flags, a, rc);
    case UNBLOCK_MPIIO_SYNC: /* (fh, ierror: made as from C, as close is) */
        *rc = sync_file(f, mio_mpi.sync);
        SET_IERR(1, *rc);
        return 1;
    case UNBLOCK_MPIIO_SET_VIEW: {
        /* (fh, disp, etype, filetype, datarep, info, ierror, datarep's length):
         * made as from C (as MPI's Fortran bindings do), so that the view is
         * known and the writes through it are taken (before, a view set from
         * Fortran stopped taking the file's writes).  The string without its
         * trailing blanks. */
        char rep[MPI_MAX_DATAREP_STRING + 1];
        size_t len = (size_t)(uintptr_t)a[7];
        while (len > 0 && ((const char *)a[4])[len - 1] == ' ')
            len--;
        if (len >= sizeof rep) { /* (MPI says what is wrong with it; nothing more
                                    is taken from the file) */
            mio_flush_all_ranks(f, &mio_stats.flush_collective);
            pthread_mutex_lock(&mio_lock);
            mio_view_set(f, 0, mio_mpi.byte, mio_mpi.byte, NULL); /* (refused: so
                                                the end of atomic mode keeps it so) */
            f->follow = 0;
            pthread_mutex_unlock(&mio_lock);
            return 0;
        }
        memcpy(rep, a[4], len);
        rep[len] = 0;
        *rc = set_view(f, *(MPI_Offset *)a[1], unblock_type_f2c(FI(2)), unblock_type_f2c(FI(3)),
                       rep, INFO_F2C(FI(5)), mio_mpi.set_view);
        SET_IERR(6, *rc);
        return 1;
    }
    case UNBLOCK_MPIIO_SET_ATOMICITY: /* (fh, flag, ierror: flag a LOGICAL) */
        *rc = set_atomicity(f, FI(1) != 0, mio_mpi.set_atomicity);
        SET_IERR(2, *rc);
        return 1;
    default:
        break;
    }
    int at = op == UNBLOCK_MPIIO_WRITE_AT || op == UNBLOCK_MPIIO_IWRITE_AT;
    int i = at ? 2 : 1;
    const void *buf = unblock_fortran_contiguous(a[i], (flags & UNBLOCK_MPIIO_FDESC) != 0);
    if (buf == NULL) { /* MPI_BOTTOM, MPI_IN_PLACE, a section MPICH makes a type for */
        unblock_counter_add(&mio_stats.passthrough, 1);
        mio_flush_local(f, &mio_stats.flush_local);
        return 0;
    }
    MPI_Offset off = at ? *(MPI_Offset *)a[1] : 0;
    int count = FI(i + 1);
    MPI_Datatype type = unblock_type_f2c(FI(i + 2));
    MPI_Status st, *stp = &st;
    if (op == UNBLOCK_MPIIO_WRITE || op == UNBLOCK_MPIIO_WRITE_AT)
        stp = unblock_fortran_status_ignored(a[i + 3]) ? MPI_STATUS_IGNORE : &st;
    MPI_Request req, *reqp = &req;
    void *last = (op == UNBLOCK_MPIIO_WRITE || op == UNBLOCK_MPIIO_WRITE_AT) ? (void *)&stp
                                                                            : (void *)&reqp;
    void *ca[6];
    int k = 0;
    ca[k++] = &cfh;
    if (at)
        ca[k++] = &off;
    ca[k++] = &buf;
    ca[k++] = &count;
    ca[k++] = &type;
    ca[k++] = last;
    if (!do_write(f, 0, op, 0, ca, NULL, rc, 1)) {
        /* Not taken.  A type not known yet (a predefined Fortran type such as
         * MPI_INTEGER8) is learned as from C, once MPI's own call says it is a
         * type: the Fortran call made here with an ierror of ours (an mpi_f08
         * caller may leave its own out; MPI calls the file's error handler
         * either way).  Before, every such write from Fortran passed through. */
        if (unblock_dt_known(type))
            return 0; /* (the Fortran entry point runs) */
        typedef void (*f7_t)(void *, void *, void *, void *, void *, void *, void *);
        typedef void (*f6_t)(void *, void *, void *, void *, void *, void *);
        MPI_Fint ierr = MPI_SUCCESS;
        if (at)
            ((f7_t)real)(a[0], a[1], a[2], a[3], a[4], a[5], &ierr);
        else
            ((f6_t)real)(a[0], a[1], a[2], a[3], a[4], &ierr);
        if (ierr == MPI_SUCCESS)
            unblock_dt_learn(type);
        *rc = ierr;
        SET_IERR(i + 4, ierr);
        return 1;
    }
    if (*rc == MPI_SUCCESS && stp != MPI_STATUS_IGNORE &&
        (op == UNBLOCK_MPIIO_WRITE || op == UNBLOCK_MPIIO_WRITE_AT))
        mio_mpi.status_c2f(&st, (MPI_Fint *)a[i + 3]);
    if (*rc == MPI_SUCCESS && (op == UNBLOCK_MPIIO_IWRITE || op == UNBLOCK_MPIIO_IWRITE_AT))
        FI(i + 3) = REQUEST_C2F(req);
    SET_IERR(i + 4, *rc);
    return 1;
}
#undef SET_IERR
#undef FI

static int mio_hook(int op, unsigned id, int large, void **a, void (*real)(void), int *rc)
{
    if (!unblock_opt.mpiio)
        return 0;
    if ((op & 0xff) == UNBLOCK_MPIIO_WRITE_AT && resolved && a != NULL) {
        if (op & UNBLOCK_MPIIO_F77) {
            if (!large && !finalized && fortran_cont(op, a, rc))
                return 1;
        } else { /* (the MPI_Count form's count where an int holds it: the cursor's) */
            MPI_Count wc = large ? *(MPI_Count *)a[3] : *(int *)a[3];
            if (wc >= INT_MIN && wc <= INT_MAX &&
                mio_cont_take(*(MPI_File *)a[0], *(MPI_Offset *)a[1], *(const void **)a[2],
                              (int)wc, *(MPI_Datatype *)a[4], *(MPI_Status **)a[5], rc))
                return 1;
        }
    }
    mio_cur_drop(); /* (what the wrapper's cursor took, into stage 1) */
    if (op & UNBLOCK_MPIIO_F77) {
        int flags = op & (UNBLOCK_MPIIO_F08 | UNBLOCK_MPIIO_FDESC);
        return finalized ? 0 : fortran_call(op & 0xff, id, flags, a, real, rc);
    }
    switch (op) {
    case UNBLOCK_MPIIO_NEWS:
        if (resolved)
            mio_news_call(id);
        return 0;
    case UNBLOCK_MPIIO_OPEN:
        mio_news_at_open(*(MPI_Comm *)a[0]);
        return mio_open(a, real, rc, !finalized);
    case UNBLOCK_MPIIO_FORTRAN:
        flush_every_file();
        return 0;
    case UNBLOCK_MPIIO_ABORT:
        mio_drain_all(1);
        return 0;
    case UNBLOCK_MPIIO_FINALIZE:
        /* Files still open: every rank's buffers written (all ranks are here). */
        while (resolved && mio_files) {
            mio_file_t *f = mio_files;
            int err = mio_let_go(f, &mio_stats.flush_finalize);
            if (err) {
                unblock_counter_add(&mio_stats.errors_unconsumed, 1);
                unblock_warn("MPI-IO write-behind: a background write failed (MPI error class %d) "
                             "and the program closed no file after it",
                             err);
            }
        }
        mio_thread_stop();
        finalized = 1;
        return 0;
    default:
        break;
    }
    if (a == NULL)
        return 0;
    if (!resolved) { /* (no file followed yet: a read's handle is the fronts') */
        if (op == UNBLOCK_MPIIO_READ_AT || op == UNBLOCK_MPIIO_READ)
            mio_plain_look(*(MPI_File *)a[0], 0, MIO_PLAIN_C, 0);
        return 0;
    }
    if (op == UNBLOCK_MPIIO_SPLIT_END) /* (any file: its _begin may have been made blocking) */
        return mio_split_end(*(MPI_File *)a[0], *(MPI_Status **)a[2], rc);
    /* (MPI_File_close takes the handle's address) */
    MPI_File fh = op == UNBLOCK_MPIIO_CLOSE ? **(MPI_File **)a[0] : *(MPI_File *)a[0];
    mio_file_t *f;
    if (last_file.fh == fh && last_file.gen == __atomic_load_n(&mio_files_gen, __ATOMIC_ACQUIRE)) {
        f = last_file.f; /* the common case: one file, call after call (no lock) */
    } else {
        pthread_mutex_lock(&mio_lock);
        f = find(fh);
        last_file.gen = mio_files_gen;
        pthread_mutex_unlock(&mio_lock);
        last_file.fh = fh;
        last_file.f = f;
    }
    mio_news_at(op, f);
    if (f == NULL) { /* (a file we do not follow: only the nonblocking calls, below) */
        plain_call(fh, op, MIO_PLAIN_C, 0);
        return mio_nb_as_blocking(NULL, id, large, a, rc);
    }
    if (unblock_unlikely(f->sib) && op != UNBLOCK_MPIIO_SET_VIEW && op != UNBLOCK_MPIIO_WRITE &&
        op != UNBLOCK_MPIIO_WRITE_AT && op != UNBLOCK_MPIIO_IWRITE && op != UNBLOCK_MPIIO_IWRITE_AT)
        mio_siblings_flush(f, sees(op)); /* (the writes: in do_write, also from Fortran) */
    if (unblock_unlikely(__atomic_load_n(&f->ship, __ATOMIC_RELAXED)))
        mio_ship(f); /* (stage 1 idle since the program's last call on the file) */
    if (f->err && delivers_at(f, op) && (*rc = deliver(f)) != 0)
        return 1;
    switch (op) {
    case UNBLOCK_MPIIO_WRITE:
    case UNBLOCK_MPIIO_WRITE_AT:
    case UNBLOCK_MPIIO_IWRITE:
    case UNBLOCK_MPIIO_IWRITE_AT:
        return do_write(f, id, op, large, a, real, rc, 0);
    case UNBLOCK_MPIIO_SEEK:
        if (*(int *)a[2] != MPI_SEEK_END)
            return 0;
        break;
    case UNBLOCK_MPIIO_GET_SIZE: {
        MPI_Offset *size = *(MPI_Offset **)a[1];
        int64_t held = mio_size_held(f);
        *rc = ((int (*)(MPI_File, MPI_Offset *))real)(fh, size);
        if (*rc == MPI_SUCCESS)
            mio_answer_size(f, size, held);
        return 1;
    }
    case UNBLOCK_MPIIO_READ_AT:
    case UNBLOCK_MPIIO_READ:
        if (!large && mio_read_served(f, op == UNBLOCK_MPIIO_READ_AT, a, real, rc))
            return 1;
        break; /* (this rank's pieces written first, below) */
    case UNBLOCK_MPIIO_COLLECTIVE:
        mio_flush_all_ranks(f, &mio_stats.flush_collective);
        return mio_nb_as_blocking(f, id, large, a, rc);
    case UNBLOCK_MPIIO_SET_VIEW:
        *rc = set_view(f, *(MPI_Offset *)a[1], *(MPI_Datatype *)a[2], *(MPI_Datatype *)a[3],
                       *(const char **)a[4], *(MPI_Info *)a[5], (set_view_t)real);
        return 1;
    case UNBLOCK_MPIIO_SET_ATOMICITY:
        *rc = set_atomicity(f, *(int *)a[1], (int (*)(MPI_File, int))real);
        return 1;
    case UNBLOCK_MPIIO_SYNC:
        *rc = sync_file(f, (int (*)(MPI_File))real);
        return 1;
    case UNBLOCK_MPIIO_CLOSE: {
        MPI_File *fh = *(MPI_File **)a[0];
        int err = mio_let_go(f, &mio_stats.flush_close);
        if (err) {
            unblock_counter_add(&mio_stats.errors_returned, 1);
            mio_mpi.call_eh(*fh, err);
        }
        *rc = ((int (*)(MPI_File *))real)(fh);
        if (err)
            *rc = err;
        return 1;
    }
    default:
        break;
    }
    mio_flush_local(f, &mio_stats.flush_local);
    return mio_nb_as_blocking(f, id, large, a, rc);
}

long mio_test_write_ms; /* test hook UNBLOCK_TEST_MPIIO_WRITE_MS (stage.c, owner.c) */

void mio_test_pause(void)
{
    struct timespec ts = { mio_test_write_ms / 1000, mio_test_write_ms % 1000 * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

int mio_test_fail_rank = -1; /* test hook UNBLOCK_TEST_MPIIO_FAIL_RANK (stage.c) */

void mio_install(void)
{
    const char *h = getenv("UNBLOCK_TEST_MPIIO_WRITE_MS");
    mio_test_write_ms = h ? atol(h) : 0;
    h = getenv("UNBLOCK_TEST_MPIIO_FAIL_RANK");
    char *end = NULL; /* (a rank's number alone, else none) */
    long r = h && *h ? strtol(h, &end, 10) : -1;
    mio_test_fail_rank = end && *end == 0 && r >= 0 && r < 1L << 30 ? (int)r : -1;
    if (unblock_opt.mpiio) {
        unblock_mpiio_hook = mio_hook;
        unblock_mpiio_cont = mio_cont_take;
    }
}
