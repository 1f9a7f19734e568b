/* view.c — where a taken write's bytes go in the file: the file view the
 * program set (followed when native and flattenable: view_set), the pieces it
 * places through it (take_view, into stage 1: stage.c), and the file's path as
 * the file system knows it.  The calls are in file.c. */
#define _GNU_SOURCE
#include "mpiio/mpiio.h"
#include "fileio/fileio.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

void mio_view_reset(mio_view_t *v)
{
    if (v->flat)
        unblock_flat_release(v->flat);
    memset(v, 0, sizeof *v);
    v->plain = 1;
    v->esize = 1;
}

/* A view not followed: neither plain nor with a filetype, so that the end of
 * atomic mode (file.c: the view's verdict, plain or ftsize > 0) does not take
 * writes through the default view instead (before: a view set in external32,
 * or from a type that could not be flattened, then atomic mode on and off, and
 * the writes were taken at their offsets in bytes from 0). */
static int refused(mio_view_t *v)
{
    mio_view_reset(v);
    v->plain = 0;
    return 0;
}

/* The view the program set: followed when its data representation is native and
 * its filetype is known (contiguous, or flattened with nondecreasing ranges). */
int mio_view_set(mio_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype ft,
                 const char *datarep)
{
    mio_view_t *v = &f->view;
    mio_view_reset(v);
    if (datarep == NULL || strcasecmp(datarep, "native") != 0)
        return refused(v);
    int es = 0;
    if (mio_mpi.type_size(etype, &es) != MPI_SUCCESS || es <= 0)
        return refused(v);
    unblock_dt_learn(etype);
    unblock_dt_learn(ft);
    unblock_dt_t d;
    if (!unblock_dt_lookup(ft, &d))
        return refused(v);
    v->disp = disp;
    v->esize = es;
    if (d.flat == NULL) {
        if (!d.contiguous || d.lb != 0 || d.size <= 0)
            return refused(v);
        v->plain = disp == 0;
        v->ftsize = v->ftextent = d.size;
        return 1;
    }
    int64_t last = INT64_MIN;
    for (uint32_t i = 0; i < d.flat->n; i++) {
        if (d.flat->r[i].off < last || d.flat->r[i].off < 0) {
            unblock_flat_release(d.flat);
            return refused(v); /* (MPI requires nondecreasing displacements; negative
                                  ones are rare) */
        }
        last = d.flat->r[i].off + d.flat->r[i].len;
    }
    if (d.flat->size <= 0 || d.flat->extent <= 0) {
        unblock_flat_release(d.flat);
        return refused(v);
    }
    v->plain = 0;
    v->flat = d.flat;
    v->ftsize = d.flat->size;
    v->ftextent = d.flat->extent;
    return 1;
}

/* Takes n bytes of the view's data stream from byte s on. */
/* One piece taken, and logged for UNBLOCK_TRACE (the program's write at its
 * place in the file, not the merged writes the owners make; a no-op when the
 * trace is off). */
static int take(mio_file_t *f, int64_t at, const char *p, int64_t n)
{
    int rc = mio_take(f, at, p, n);
    if (rc == 0 && unblock_unlikely(__atomic_load_n(&unblock_trace_on, __ATOMIC_RELAXED)))
        unblock_trace_io(-1, mio_plain_path(f->path), 'W', (long long)at, (long long)n);
    return rc;
}

int mio_take_view(mio_file_t *f, int64_t s, const char *p, int64_t n)
{
    mio_view_t *v = &f->view;
    if (s < 0)
        return -1; /* (nothing is placed before the view's start) */
    if (v->plain)
        return take(f, s, p, n);
    if (v->flat == NULL)
        return take(f, v->disp + s, p, n);
    int64_t t = s / v->ftsize, q = s % v->ftsize;
    uint32_t k = 0;
    int64_t cum = 0;
    while (cum + v->flat->r[k].len <= q)
        cum += v->flat->r[k++].len;
    while (n > 0) {
        const unblock_range_t *r = &v->flat->r[k];
        int64_t in = q - cum, len = r->len - in < n ? r->len - in : n;
        int rc = take(f, v->disp + t * v->ftextent + r->off + in, p, len);
        if (rc)
            return rc;
        p += len, n -= len, q += len;
        if (q - cum == r->len) {
            cum += r->len;
            if (++k == v->flat->n)
                k = 0, cum = 0, q = 0, t++;
        }
    }
    return 0;
}

/* The path as the file system knows it (ROMIO's "ufs:" style prefixes dropped). */
const char *mio_plain_path(const char *name)
{
    const char *c = strchr(name, ':');
    if (c && c - name >= 2 && c - name <= 8 && strchr(name, '/') > c)
        return c + 1;
    return name;
}

