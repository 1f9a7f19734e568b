/* memory.h — which of the program's memory may be protected.
 *
 * Page protection acts on whole pages, so a page may only be protected if every
 * byte on it belongs to the same allocation of the program: otherwise malloc's
 * metadata, another thread's or MPI's data, or libc's copy-relocated objects could
 * share the page and be touched by a thread that must never stop (the completion
 * thread inside MPI).  The malloc family therefore serves allocations of
 * UNBLOCK_LARGE_ALLOC bytes or more from mappings of their own (page-aligned, no
 * in-band header), recorded in a registry; only their pages are ever protected.
 * Everything else (smaller blocks, stacks, globals, shared mappings, MPI_Alloc_mem,
 * memory allocated inside MPI) is never protected: sends from it are copied or run
 * blocking, receives into it complete before the call returns.
 *
 * With multiview (UNBLOCK_POOL, the default) those blocks come from the
 * double-mapped pool (pool.c): MPI and the runtime use the pool's second view,
 * whose protection never changes.  Where the pool cannot be made (no memfd, no
 * address space) or is full, blocks are plain mappings again (single view). */
#ifndef UNBLOCK_MEMORY_H
#define UNBLOCK_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h" /* UNBLOCK_HIDDEN */

/* A mapping of len bytes (a multiple of UNBLOCK_HUGE_PAGE) aligned to a huge
 * page, the kernel asked to back it with huge pages (a hint: without them, 4
 * KiB pages); NULL when mmap fails.  Freed with munmap(p, len).  A buffer of
 * it costs a fault (or a populating call) a 2 MiB instead of one a 4 KiB page:
 * MPI-IO's block buffers, the runtime buffers of copied sends. */
#define UNBLOCK_HUGE_PAGE ((size_t)2 << 20)
void *unblock_map_huge(size_t len);

/* Makes the kernel back [p, p+len) now (MADV_POPULATE_WRITE; on a kernel before
 * 5.14, a write a page): one call instead of a fault a page while it is
 * filled. */
void unblock_populate(void *p, size_t len);

/* If [addr, addr+len) lies inside one registered block, stores that block's bounds
 * (page-aligned) and returns 1; else 0.  Any thread; takes the registry lock. */
int unblock_memory_block_of(const void *addr, size_t len, uintptr_t *start, uintptr_t *end);

/* Memory about to be freed, moved, unmapped or re-protected by the program: what
 * an operation in flight owns of it must finish first.  The protect module, a
 * layer above, installs it when protection starts (unblock_protect_init); NULL
 * until then, when nothing can own a page.  Called only for the program's own
 * calls (not from inside MPI). */
extern UNBLOCK_HIDDEN void (*unblock_memory_release_hook)(const void *addr, size_t len);

/* What munmap, mremap, madvise and mprotect do first (alloc.c): an operation in
 * flight that owns pages of [addr, addr+len) finishes (the program's calls
 * only), and our blocks there are not kept for reuse. */
void unblock_memory_before_release(const void *addr, size_t len);

/* UCX's memory hooks replace our wrappers of mmap, munmap, mremap and madvise
 * where libucm is loaded (ucm.c): from MPI_Init on, their events run what the
 * wrappers would (unblock_memory_ucm_attach, once; the count of events taken is
 * unblock_memory_ucm_events).  unblock_memory_map_hook: what a mapping of file
 * descriptor fd needs first, installed by fileio (NULL: nothing). */
void unblock_memory_ucm_attach(void);
uint64_t unblock_memory_ucm_events(void);
extern UNBLOCK_HIDDEN int (*unblock_memory_map_hook)(int fd);

/* Bytes of freed large blocks kept mapped for reuse (UNBLOCK_ALLOC_KEEP), those in
 * the pool or those outside it. */
size_t unblock_alloc_kept(int in_pool);

/* The pool: the application's view is [base, base+size), the runtime's view of
 * address p is p + delta.  base is 0 until the first large allocation, and stays 0
 * when there is no pool. */
extern UNBLOCK_HIDDEN uintptr_t unblock_pool_base;
extern UNBLOCK_HIDDEN size_t unblock_pool_size;
extern UNBLOCK_HIDDEN intptr_t unblock_pool_delta;

/* Whether [lo, hi) lies in the application's view of the pool. */
static inline int unblock_pool_has(uintptr_t lo, uintptr_t hi)
{
    return lo - unblock_pool_base < unblock_pool_size &&
           hi - unblock_pool_base <= unblock_pool_size && hi >= lo;
}

/* `len` bytes (a page multiple) of zeroed pool memory, page-aligned, or NULL (no
 * pool, or it is full).  Sets the pool up on first use. */
void *unblock_pool_alloc(size_t len);
/* Gives back a block (or the tail of one) of the pool. */
void unblock_pool_free(void *p, size_t len);
/* Grows or shrinks the block at p from len to nlen bytes in place; 1 if done. */
int unblock_pool_resize(void *p, size_t len, size_t nlen);
/* Bytes of pool blocks in use now. */
size_t unblock_pool_in_use(void);

#endif
