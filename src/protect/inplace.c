/* inplace.c — a receive's data copied into its pages while they stay
 * inaccessible, once the program has threads of its own (docs/protection.md,
 * "Threads"). */
#define _GNU_SOURCE
#include "protect/protect.h"
#include "core/core.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* /proc/self/mem writes through the protection (the kernel's access for
 * debuggers), so a receive's data can be in place before any other thread can see
 * the pages: with one thread the copy-out is simply done before that thread
 * continues; with several, another thread could read the pages between the
 * unprotect and the end of a memcpy.  Under the table lock; async-signal-safe. */
static int memfd = -1;
static pid_t memfd_pid;

static int mem_write(uintptr_t to, const char *from, size_t n)
{
    while (n) {
        ssize_t w = syscall(SYS_pwrite64, memfd, from, n, (off_t)to);
        if (w <= 0)
            return -1;
        to += (size_t)w;
        from += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Writes the first op->got bytes of a receive into its inaccessible pages; 0 if
 * done, -1 if the caller must copy the usual way (a flattened type of many ranges
 * would take a system call each). */
int unblock_copy_in_place(unblock_op_t *op)
{
    pid_t pid = (pid_t)syscall(SYS_getpid);
    if (memfd < 0 || memfd_pid != pid) { /* first use, or a fork child */
        if (memfd >= 0)
            syscall(SYS_close, memfd);
        memfd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDWR | O_CLOEXEC);
        memfd_pid = pid;
        if (memfd < 0)
            return -1;
    }
    const unblock_bytes_t *b = &op->bytes;
    if (b->flat && (uint64_t)b->flat->n * b->count > 64)
        return -1;
    return unblock_bytes_scatter_by(b, op->rtbuf, op->got, mem_write);
}

