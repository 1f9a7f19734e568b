/* ucm.c — UCX's memory hooks and ours.
 *
 * UCX (MPICH's transport here) watches the process's mappings for its
 * registration cache.  Its default way ("bistro") writes a jump to its own hook
 * over the first instructions of mmap, munmap, mremap and madvise, as the
 * dynamic linker finds them: under unblock, our wrappers (memory/alloc.c,
 * fileio/posix.c).  Its hooks make the system call themselves, so our wrappers
 * never run.  Measured under MPICH 4.0 with UCX 1.13: the first byte of each of
 * the four is 0xe9 (a jump) before MPI_Init already; a program's five mmap calls
 * of a file counted none.  What those wrappers do was lost with them: a file's
 * merged writes did not reach it before the program mapped it (4092 of 4096
 * records read back as zeros, test mpich.mapwrite.np2), an operation in flight
 * that owns pages the program unmaps was not finished first.
 *
 * So where libucm is loaded we take UCX's own events instead
 * (ucm_set_event_handler), called before the system call: UCM_EVENT_VM_UNMAPPED
 * (munmap, mremap's old range, madvise, shmdt, a shrinking sbrk) runs what the
 * wrappers run before a release (alloc.c: unblock_memory_before_release), and
 * UCM_EVENT_MMAP of a file what the mmap wrapper runs before the call
 * (unblock_memory_map_hook, fileio).  Where our wrappers do run as well (UCX
 * patched libc's functions, or a mode that does not patch), each runs twice;
 * both are idempotent.  We never ask UCX to install hooks (UCM_EVENT_FLAG_NO_INSTALL):
 * where it installs none, ours are untouched. */
#define _GNU_SOURCE
#include "memory/memory.h"
#include "core/log.h"
#include "interpose/interpose.h"

#include <sys/mman.h>
#include <sys/types.h>

/* From UCX's public header ucm/api/ucm.h (its ABI since UCX 1.6); unblock is not
 * built against UCX, so that one library serves every MPI. */
enum { UCM_EV_MMAP = 1 << 0, UCM_EV_VM_UNMAPPED = 1 << 17, UCM_EV_NO_INSTALL = 1 << 24 };
typedef union {
    struct {
        void *result;
        void *address;
        size_t size;
        int prot;
        int flags;
        int fd;
        off_t offset;
    } mmap;
    struct {
        void *address;
        size_t size;
    } vm_unmapped;
} ucm_event_part_t; /* (the members read here; UCX's union is larger) */
typedef void (*ucm_cb_t)(int type, ucm_event_part_t *ev, void *arg);
typedef int (*ucm_set_event_handler_t)(int events, int priority, ucm_cb_t cb, void *arg);

int (*unblock_memory_map_hook)(int fd);
static unblock_counter_t ucm_events;

static void on_event(int type, ucm_event_part_t *ev, void *arg)
{
    (void)arg;
    if (type == UCM_EV_VM_UNMAPPED) {
        unblock_memory_before_release(ev->vm_unmapped.address, ev->vm_unmapped.size);
        unblock_counter_add(&ucm_events, 1);
    } else if (type == UCM_EV_MMAP && ev->mmap.result == MAP_FAILED && ev->mmap.fd >= 0 &&
               !(ev->mmap.flags & MAP_ANONYMOUS)) {
        int (*map)(int) = __atomic_load_n(&unblock_memory_map_hook, __ATOMIC_ACQUIRE);
        if (map)
            map(ev->mmap.fd);
        unblock_counter_add(&ucm_events, 1);
    }
}

void unblock_memory_ucm_attach(void)
{
    static int tried;
    if (__atomic_exchange_n(&tried, 1, __ATOMIC_ACQ_REL))
        return;
    ucm_set_event_handler_t set =
        (ucm_set_event_handler_t)unblock_dlsym_in_object("ucm_set_event_handler", "libucm");
    if (set == NULL)
        return;
    /* (priority below 0: before the system call, which UCX's own handler at 0 makes) */
    int rc = set(UCM_EV_MMAP | UCM_EV_VM_UNMAPPED | UCM_EV_NO_INSTALL, -1000, on_event, NULL);
    unblock_info("UCX's memory events %s: unmaps and file mappings are followed through them "
                 "where UCX's hooks replace unblock's wrappers",
                 rc == 0 ? "taken" : "refused (UCX_MEM_EVENTS=no: its hooks are off too)");
}

uint64_t unblock_memory_ucm_events(void)
{
    return unblock_counter_get(&ucm_events);
}
