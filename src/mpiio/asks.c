/* asks.c — owners asked to write first, before a rank writes a whole block of
 * theirs itself (a kept block) in a file whose news leaves records at owners
 * (mio_news_owners; docs/mpiio.md, "Nothing around the owners").
 *
 * The owner may hold older bytes of the block from any rank: asked, it writes
 * them and answers (owner.c: K_BLOCK).  The ask goes out when the block is full
 * (stage.c: ask_ahead) and its answer is received in the background, up to
 * MIO_ASKS at once a file; the program's thread only looks whether it came.
 * An ask no block waits for any more (the block went to its owner instead) has
 * block -1 and is dropped once answered.  Every ask is answered and its
 * receive completed before the file's communicator goes (a flush of all of
 * stage 1: mio_asks_finish). */
#include "mpiio/mpiio.h"

#include <stdlib.h>

int mio_ask_of(const mio_file_t *f, int64_t block)
{
    for (int i = 0; i < f->nasks; i++)
        if (f->asks[i].block == block)
            return i;
    return -1;
}

int mio_ask_post(mio_file_t *f, int owner, int64_t block)
{
    for (int i = 0; i < f->nasks; i++) /* (asks no block waits for, answered) */
        if (f->asks[i].block < 0 && mio_ask_answered(f, i)) {
            mio_ask_finish(f, i);
            i = -1;
        }
    if (f->nasks == MIO_ASKS)
        return 0;
    typeof(f->asks[0]) *a = &f->asks[f->nasks];
    a->cls = 0;
    if (!mio_send_ask(f, owner, block, &a->cls, &a->req))
        return 0;
    a->block = block;
    a->owner = owner;
    a->heard = mio_heard_any();
    f->nasks++;
    unblock_counter_add(&mio_stats.blocks_kept_asked, 1);
    return 1;
}

int mio_ask_answered(mio_file_t *f, int i)
{
    /* (a request tested complete is null: MPI_Test answers at once again) */
    int done = 0;
    if (mio_mpi.test(&f->asks[i].req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        return 1;
    return done;
}

void mio_ask_finish(mio_file_t *f, int i)
{
    if (!mio_ask_answered(f, i)) { /* (else no wait for the I/O thread's next look) */
        MPI_Request req = f->asks[i].req;
        pthread_mutex_unlock(&mio_lock);
        mio_wait_requests(f, 1, &req);
        pthread_mutex_lock(&mio_lock);
    }
    if (f->asks[i].cls && mio_keep_error(f, f->asks[i].cls))
        unblock_counter_add(&mio_stats.errors_deferred, 1);
    f->asks[i] = f->asks[--f->nasks];
}

void mio_asks_finish(mio_file_t *f)
{
    while (f->nasks > 0)
        mio_ask_finish(f, f->nasks - 1);
}
