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
 * blocking, receives into it complete before the call returns.  The double-mapped
 * pool of the multiview issue replaces these mappings later. */
#ifndef UNBLOCK_MEMORY_H
#define UNBLOCK_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* If [addr, addr+len) lies inside one registered block, stores that block's bounds
 * (page-aligned) and returns 1; else 0.  Any thread; takes the registry lock. */
int unblock_memory_block_of(const void *addr, size_t len, uintptr_t *start, uintptr_t *end);

#endif
