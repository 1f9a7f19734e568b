/* request.c — requests of file calls that are complete when they return: a
 * taken iwrite's (file.c), and on Open MPI every nonblocking file call made
 * while the I/O thread runs (below).  Generalized requests whose status counts
 * the bytes moved, so that MPI_Get_count and MPI_Test/Wait work as on any. */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "comm/mpi_wrap.h"
#include "interpose/interpose.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int gq_query(void *extra, MPI_Status *st)
{
    mio_mpi.set_elements(st, mio_mpi.byte, (MPI_Count)(intptr_t)extra);
    mio_mpi.set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    st->MPI_ERROR = MPI_SUCCESS;
    return MPI_SUCCESS;
}
static int gq_free(void *extra) { (void)extra; return MPI_SUCCESS; }
static int gq_cancel(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

int mio_request_done(MPI_Count n, MPI_Request *req)
{
    int rc = mio_mpi.grequest_start(gq_query, gq_free, gq_cancel, (void *)(intptr_t)n, req);
    if (rc == MPI_SUCCESS)
        mio_mpi.grequest_complete(*req);
    return rc;
}

/* ---- Open MPI: nonblocking file calls while the I/O thread runs ----
 * OMPIO (Open MPI 4.1) keeps the requests of nonblocking file calls on a list
 * that its progress function walks without a lock and that freeing a request
 * changes.  The I/O thread's MPI calls run that progress too, so a program
 * waiting for an MPI_File_iread_at while the thread ran crashed inside
 * mca_common_ompio_progress (the MPICH test suite's io/i_noncontig,
 * i_noncontig_coll, i_noncontig_coll2, i_types_with_zeros).  While the thread
 * runs, such a call (on any file) is made as its blocking form and returns a
 * generalized request already complete, whose status counts the bytes moved: MPI
 * allows a nonblocking call to complete before it returns.  A collective write
 * is followed by a barrier on the file's communicator: OMPIO's blocking
 * collective write returns on a rank whose bytes an aggregator has yet to write
 * (its nonblocking one completes after), so the rank's next read could miss
 * them; on a file we do not follow (no communicator of ours) such a write runs
 * as MPI's own. */
#if defined(OPEN_MPI)
/* The calls (nb_blocking: their blocking forms).  Split collectives (MPI_File_*_begin and
 * _end) are the same race: OMPIO's _begin starts the nonblocking collective
 * call and _end waits for its request, and MPI allows either call to do the
 * whole access.  Their _begin is made as the blocking form, what it moved kept
 * for the _end (split_list, below), which then returns it without calling MPI. */
enum { NB_AT = 1, NB_COLL_WRITE = 2, NB_SPLIT = 4 };
static const struct {
    const char *name;
    int flags;
} nb_calls[] = {
    { "MPI_File_iread", 0 },
    { "MPI_File_iread_at", NB_AT },
    { "MPI_File_iread_all", 0 },
    { "MPI_File_iread_at_all", NB_AT },
    { "MPI_File_iread_shared", 0 },
    { "MPI_File_iwrite", 0 },
    { "MPI_File_iwrite_at", NB_AT },
    { "MPI_File_iwrite_all", NB_COLL_WRITE },
    { "MPI_File_iwrite_at_all", NB_AT | NB_COLL_WRITE },
    { "MPI_File_iwrite_shared", 0 },
    { "MPI_File_read_all_begin", NB_SPLIT },
    { "MPI_File_read_at_all_begin", NB_SPLIT | NB_AT },
    { "MPI_File_read_ordered_begin", NB_SPLIT },
    { "MPI_File_write_all_begin", NB_SPLIT | NB_COLL_WRITE },
    { "MPI_File_write_at_all_begin", NB_SPLIT | NB_AT | NB_COLL_WRITE },
    { "MPI_File_write_ordered_begin", NB_SPLIT | NB_COLL_WRITE },
};
#define NB_CALLS (sizeof nb_calls / sizeof nb_calls[0])

/* The blocking form of nb_calls[k] (PMPI: UNBLOCK_PMPI takes a name, not a string). */
static void *nb_blocking(unsigned k)
{
    switch (k) {
    case 0: return UNBLOCK_PMPI(MPI_File_read);
    case 1: return UNBLOCK_PMPI(MPI_File_read_at);
    case 2: case 10: return UNBLOCK_PMPI(MPI_File_read_all);
    case 3: case 11: return UNBLOCK_PMPI(MPI_File_read_at_all);
    case 4: return UNBLOCK_PMPI(MPI_File_read_shared);
    case 5: return UNBLOCK_PMPI(MPI_File_write);
    case 6: return UNBLOCK_PMPI(MPI_File_write_at);
    case 7: case 13: return UNBLOCK_PMPI(MPI_File_write_all);
    case 8: case 14: return UNBLOCK_PMPI(MPI_File_write_at_all);
    case 9: return UNBLOCK_PMPI(MPI_File_write_shared);
    case 12: return UNBLOCK_PMPI(MPI_File_read_ordered);
    default: return UNBLOCK_PMPI(MPI_File_write_ordered);
    }
}

/* Which of nb_calls function `id` is (NB_CALLS: none). */
static unsigned nb_index(unsigned id)
{
    const char *name = unblock_mpi_fn_names[id];
    unsigned k = 0;
    while (k < NB_CALLS && strcmp(nb_calls[k].name, name) != 0)
        k++;
    return k;
}

int mio_nb_call(unsigned id, int *at, int *split)
{
    unsigned k = nb_index(id);
    if (k == NB_CALLS)
        return 0;
    *at = (nb_calls[k].flags & NB_AT) != 0;
    *split = (nb_calls[k].flags & NB_SPLIT) != 0;
    return 1;
}

/* Split collectives begun as blocking calls: what each moved, for its _end (MPI
 * allows one split collective per file handle at a time).  Under mio_lock. */
typedef struct split_done {
    MPI_File fh;
    MPI_Count bytes;
    int rc;
    struct split_done *next;
} split_done_t;
static split_done_t *split_list;

int mio_split_end(MPI_File fh, MPI_Status *st, int *rc)
{
    pthread_mutex_lock(&mio_lock);
    split_done_t **pp = &split_list;
    while (*pp && (*pp)->fh != fh)
        pp = &(*pp)->next;
    split_done_t *s = *pp;
    if (s)
        *pp = s->next;
    pthread_mutex_unlock(&mio_lock);
    if (s == NULL)
        return 0; /* (begun as MPI's own call, or no split collective at all) */
    *rc = s->rc;
    if (st != MPI_STATUS_IGNORE && s->rc == MPI_SUCCESS)
        gq_query((void *)(intptr_t)s->bytes, st);
    free(s);
    return 1;
}

int mio_nb_as_blocking(mio_file_t *f, unsigned id, int large, void **a, int *rc)
{
    typedef int (*at_t)(MPI_File, MPI_Offset, void *, int, MPI_Datatype, MPI_Status *);
    typedef int (*ind_t)(MPI_File, void *, int, MPI_Datatype, MPI_Status *);
    typedef int (*elements_t)(const MPI_Status *, MPI_Datatype, MPI_Count *);
    static void *fn[NB_CALLS];
    static elements_t elements;
    if (large || a == NULL || !mio_thread_running())
        return 0;
    unsigned k = nb_index(id);
    if (k == NB_CALLS)
        return 0;
    int fl = nb_calls[k].flags, at = (fl & NB_AT) != 0;
    if ((fl & NB_COLL_WRITE) && f == NULL)
        return 0;
    if (fn[k] == NULL)
        fn[k] = nb_blocking(k);
    if (elements == NULL)
        elements = (elements_t)UNBLOCK_PMPI(MPI_Get_elements_x);
    if (fn[k] == NULL || elements == NULL)
        return 0;
    MPI_File fh = *(MPI_File *)a[0];
    void *buf = *(void **)a[at + 1];
    int count = *(int *)a[at + 2];
    MPI_Datatype type = *(MPI_Datatype *)a[at + 3];
    split_done_t *s = NULL;
    if ((fl & NB_SPLIT) && (s = malloc(sizeof *s)) == NULL)
        return 0;
    MPI_Status st;
    *rc = at ? ((at_t)fn[k])(fh, *(MPI_Offset *)a[1], buf, count, type, &st)
             : ((ind_t)fn[k])(fh, buf, count, type, &st);
    MPI_Count n = 0;
    if (*rc == MPI_SUCCESS) {
        if (fl & NB_COLL_WRITE)
            mio_mpi.barrier(f->comm);
        elements(&st, mio_mpi.byte, &n);
    }
    if (s) { /* (an error is the _begin's and the _end's) */
        s->fh = fh;
        s->bytes = n;
        s->rc = *rc;
        pthread_mutex_lock(&mio_lock);
        s->next = split_list;
        split_list = s;
        pthread_mutex_unlock(&mio_lock);
        unblock_counter_add(&mio_stats.split_completed, 1);
        return 1;
    }
    if (*rc != MPI_SUCCESS)
        return 1;
    unblock_counter_add(&mio_stats.nonblocking_completed, 1);
    *rc = mio_request_done(n, (*(MPI_Request **)a[at + 4]));
    return 1;
}

/* ---- Open MPI: OMPIO's progress function, never on our threads ----
 * The blocking calls change that list too: OMPIO's default collective write
 * (fcoll vulcan) allocates a request of the list for each of its writes and
 * frees it before it returns.  The I/O thread's or the completion thread's MPI
 * calls, each of which runs opal_progress, walked the list meanwhile: PnetCDF
 * 1.15's own tests crashed in mca_common_ompio_progress under unblock (4 ranks:
 * 19 of them at least once, test/nonblocking/column_wise 3 runs of 3; in the
 * backtraces looked at, the program's thread was inside
 * MPI_File_write_at_all, in fcoll vulcan).  OMPIO registers
 * its progress function by its address, loaded through the GOT, so this
 * definition is the one opal_progress calls: on a thread of ours it does
 * nothing (the program's own waits, on its thread, progress its requests), on
 * the program's threads it is OMPIO's own.  Not for a library linked into the
 * program (UNBLOCK_LINK_WRAP): there the program's definitions come first. */
#if !defined(UNBLOCK_LINK_WRAP)
typedef int (*ompio_progress_t)(void);
int mca_common_ompio_progress(void) UNBLOCK_EXPORT;

int mca_common_ompio_progress(void)
{
    static ompio_progress_t real;
    if (unblock_tls.runtime)
        return 0;
    ompio_progress_t r = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (unblock_unlikely(r == NULL)) {
        void *p = unblock_dlsym_next("mca_common_ompio_progress");
        if (p == NULL)
            p = unblock_dlsym_in_object("mca_common_ompio_progress", "libmca_common_ompio");
        if (p == NULL || p == (void *)mca_common_ompio_progress)
            return 0; /* (cannot be: OMPIO's library took this address) */
        r = (ompio_progress_t)p;
        __atomic_store_n(&real, r, __ATOMIC_RELEASE);
    }
    return r();
}
#endif
#else
int mio_nb_call(unsigned id, int *at, int *split)
{
    (void)id, (void)at, (void)split;
    return 0;
}

int mio_split_end(MPI_File fh, MPI_Status *st, int *rc)
{
    (void)fh, (void)st, (void)rc;
    return 0;
}

int mio_nb_as_blocking(mio_file_t *f, unsigned id, int large, void **a, int *rc)
{
    (void)f, (void)id, (void)large, (void)a, (void)rc;
    return 0; /* (ROMIO's nonblocking calls are safe beside the thread) */
}
#endif
