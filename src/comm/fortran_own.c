/* fortran_own.c — the program's own requests from Fortran.
 *
 * MPI_ISEND, MPI_IRECV and the other nonblocking calls of the spec's buffers
 * (OWN_FOLLOWED in tools/gen_mpi_wrappers.py) are followed as C's are, by their
 * Fortran handles (requests.h: unblock_own_fkey): described and ordered as a
 * blocking call's buffers (fortran.c: unblock_fortran_describe), then logged
 * here (after MPI's call: the generated wrappers' slow part; their fronts log
 * inline, fastpath.h: unblock_own_flog).  MPI_BOTTOM and a section MPI packs
 * itself are followed as "everything" (nothing converts while they are pending).
 * The completion calls see which handles MPI turned into MPI_REQUEST_NULL. */
#define _GNU_SOURCE
#include "comm/fastpath.h"
#include "comm/mpi_wrap.h"

#include <stdlib.h>
#include <string.h>

void unblock_fortran_own_after(const unblock_fbufs_t *f, const void *req, const void *ierr)
{
    /* (ierror left out in mpi_f08: the request is taken as started; if it was
     * not, its entry only keeps its memory off limits until the handle is
     * handed out again and completed) */
    if (ierr != NULL && *(const MPI_Fint *)ierr != MPI_SUCCESS)
        return;
    unblock_own_fortran_after(f->b, f->n, unblock_own_fkey(*(const MPI_Fint *)req));
}

/* A Fortran wrapper's front found the log full, or another thread about
 * (requests.h: unblock_own_flog): the table. */
void unblock_fortran_own_logged(const void *buf, const void *count, const void *type, int writes,
                                const void *req)
{
    unblock_own_buf_t b = { .buf = buf, .count = *(const MPI_Fint *)count,
                            .type = unblock_type_f2c(*(const MPI_Fint *)type),
                            .writes = writes };
    unblock_own_fortran_after(&b, 1, unblock_own_fkey(*(const MPI_Fint *)req));
}

void unblock_fortran_reqs_save(unblock_freqs_t *r, MPI_Fint n, const void *reqs)
{
    r->n = 0;
    r->keys = r->small;
    if (!unblock_own_tracking() || n <= 0)
        return;
    if (n > (MPI_Fint)(sizeof(r->small) / sizeof(r->small[0])) &&
        (r->keys = malloc(sizeof(MPI_Fint) * (size_t)n)) == NULL) {
        unblock_own_untracked(); /* (their completion would not be seen) */
        r->keys = r->small;
        return;
    }
    memcpy(r->keys, reqs, sizeof(MPI_Fint) * (size_t)n);
    r->n = n;
}

void unblock_fortran_reqs_done(unblock_freqs_t *r, const void *reqs, int freed)
{
    const MPI_Fint *now = reqs;
    MPI_Request small[16];
    int m = 0;
    for (MPI_Fint i = 0; i < r->n; i++)
        if (r->keys[i] != UNBLOCK_OWN_FNULL && now[i] == UNBLOCK_OWN_FNULL) {
            if (freed) { /* (MPI_REQUEST_FREE: one request) */
                unblock_own_freed(unblock_own_fkey(r->keys[i]));
                continue;
            }
            small[m++] = unblock_own_fkey(r->keys[i]);
            if (m == 16) {
                unblock_own_done(m, small);
                m = 0;
            }
        }
    unblock_own_done(m, small);
    if (r->keys != r->small)
        free(r->keys);
}
