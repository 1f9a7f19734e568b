/* forward.c — the floor of any interposer: a library, preloaded beside plain MPI
 * (never with unblock), whose MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv and
 * MPI_Wait only call the next definition, looked up once.  What a ping-pong
 * costs under it is what taking the calls at all costs (docs/performance.md,
 * "the floor of any interposer"):
 *   mpirun -np 2 -x LD_PRELOAD=build/bench/openmpi/forward.so \
 *       build/bench/openmpi/pingpong --nonblocking --max 2048
 * Built with -DFORWARD_FILES (build/bench/serial/forward.so), the same for the
 * file calls of src/fileio/fastpath.h instead: read, write, pread, pwrite and
 * lseek, for a serial program (bench/fileio positioned):
 *   LD_PRELOAD=build/bench/serial/forward.so build/bench/serial/fileio DIR positioned */
#define _GNU_SOURCE
#include <dlfcn.h>
#ifndef FORWARD_FILES
#include <mpi.h>
#endif
#include <stddef.h>
#include <sys/types.h>

#define FORWARD(ret, name, params, args)                      \
    ret name params                                           \
    {                                                         \
        static ret(*next) params;                             \
        if (next == NULL)                                     \
            next = (ret(*) params)dlsym(RTLD_NEXT, #name);    \
        return next args;                                     \
    }

#ifndef FORWARD_FILES
FORWARD(int, MPI_Send, (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m),
        (b, c, t, d, g, m))
FORWARD(int, MPI_Recv, (void *b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Status *st),
        (b, c, t, s, g, m, st))
FORWARD(int, MPI_Isend,
        (const void *b, int c, MPI_Datatype t, int d, int g, MPI_Comm m, MPI_Request *r),
        (b, c, t, d, g, m, r))
FORWARD(int, MPI_Irecv, (void *b, int c, MPI_Datatype t, int s, int g, MPI_Comm m, MPI_Request *r),
        (b, c, t, s, g, m, r))
FORWARD(int, MPI_Wait, (MPI_Request *r, MPI_Status *st), (r, st))
#else
FORWARD(ssize_t, read, (int fd, void *b, size_t n), (fd, b, n))
FORWARD(ssize_t, write, (int fd, const void *b, size_t n), (fd, b, n))
FORWARD(ssize_t, pread, (int fd, void *b, size_t n, off_t o), (fd, b, n, o))
FORWARD(ssize_t, pwrite, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o))
FORWARD(off_t, lseek, (int fd, off_t o, int whence), (fd, o, whence))
#endif
