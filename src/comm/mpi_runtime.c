/* mpi_runtime.c — the MPI side of start-up: finding the real MPI functions, the
 * ABI check, the rank for the report.  Calls only PMPI_ functions it looked up
 * itself (never our own wrappers, never a direct reference to libmpi). */
#define _GNU_SOURCE
#include "comm/mpi_wrap.h"
#include "core/log.h"
#include "core/options.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unblock_mpiio_hook_t unblock_mpiio_hook; /* set by src/mpiio/ (mpi_wrap.h) */
unblock_mpiio_cont_t unblock_mpiio_cont;
unblock_mpiio_cur_t unblock_mpiio_cur;
unblock_mpiio_plain_t unblock_mpiio_plain;
uint32_t unblock_mpiio_gen;

const char unblock_mpi_impl[] = UNBLOCK_MPI_NAME;

#ifdef UNBLOCK_LINK_WRAP
/* Linked into the program: the MPI library is the one it was compiled against. */
static int abi_matches(void)
{
    return 1;
}

static MPI_Comm comm_world(void)
{
    return MPI_COMM_WORLD;
}
#else
static void *resolve_or_die(const char *name, const char *sonames)
{
    void *p = unblock_dlsym_next_or_in(name, sonames);
    if (p == NULL) {
        unblock_log(UNBLOCK_LOG_ERROR,
                    "cannot find the real %s in the loaded MPI library (this library is built "
                    "for %s; see 'unblock --mpi'); aborting", name, UNBLOCK_MPI_NAME);
        abort();
    }
    return p;
}

void *unblock_mpi_resolve(const char *name)
{
    return resolve_or_die(name, UNBLOCK_MPI_SONAMES);
}

void *unblock_mpi_resolve_fortran(const char *name)
{
    return resolve_or_die(name, UNBLOCK_MPI_FORTRAN_SONAMES);
}

/* Open MPI exports its communicator objects; MPICH and its derivatives use integer
 * handles and do not. */
static int abi_matches(void)
{
    int is_ompi = unblock_dlsym_data("ompi_mpi_comm_world", UNBLOCK_MPI_SONAMES) != NULL;
#ifdef OPEN_MPI
    return is_ompi;
#else
    return !is_ompi;
#endif
}

/* MPI_COMM_WORLD without a link-time reference to libmpi: in Open MPI the
 * predefined handles are addresses of objects inside libmpi (&ompi_mpi_comm_world),
 * which would make this library unloadable in a process without MPI.  Every
 * predefined Open MPI handle the runtime needs must be looked up like this. */
static MPI_Comm comm_world(void)
{
#if defined(OPEN_MPI)
    return (MPI_Comm)unblock_dlsym_data("ompi_mpi_comm_world", UNBLOCK_MPI_SONAMES);
#else
    return MPI_COMM_WORLD;
#endif
}

#endif /* UNBLOCK_LINK_WRAP */

void unblock_comm_after_init(void)
{
    if (unblock_g.mpi_abi_ok || !unblock_g.active)
        return;
    if (!abi_matches()) {
        /* The wrappers were compiled for the other family's handles (pointers in
         * Open MPI, integers in MPICH): even forwarding a call would truncate or
         * misread them.  Stop here, in MPI_Init, with a clear word, rather than
         * crash or compute wrong in a later call. */
        unblock_error("the program's MPI library is not %s, the one this unblock library was "
                      "built for, and its calls cannot pass through this library: stopping. "
                      "Start the program with the unblock launcher (it picks the library), "
                      "or with --mpi=%s",
                      UNBLOCK_MPI_NAME, strcmp(UNBLOCK_MPI_NAME, "mpich") == 0 ? "openmpi" : "mpich");
        _exit(1);
    }
    typedef int (*comm_int_t)(MPI_Comm, int *);
    typedef int (*query_t)(int *);
    int initialized = 0;
#ifdef UNBLOCK_LINK_WRAP
    PMPI_Initialized(&initialized);
#else
    ((query_t)unblock_mpi_resolve("PMPI_Initialized"))(&initialized);
#endif
    if (!initialized) /* a Fortran MPI_Init that failed */
        return;
#ifdef UNBLOCK_LINK_WRAP
    comm_int_t rank_fn = PMPI_Comm_rank, size_fn = PMPI_Comm_size;
    query_t thread_fn = PMPI_Query_thread;
#else
    comm_int_t rank_fn = (comm_int_t)unblock_mpi_resolve("PMPI_Comm_rank");
    comm_int_t size_fn = (comm_int_t)unblock_mpi_resolve("PMPI_Comm_size");
    query_t thread_fn = (query_t)unblock_mpi_resolve("PMPI_Query_thread");
#endif
    int rank = -1, size = 0, level = 0;
    unblock_tls.mpi_depth++;
    MPI_Comm world = comm_world();
    rank_fn(world, &rank);
    size_fn(world, &size);
    thread_fn(&level);
    unblock_tls.mpi_depth--;
    unblock_g.rank = rank;
    unblock_g.size = size;
    unblock_g.mpi_thread_provided = level;
    unblock_g.mpi_abi_ok = 1;
    if (unblock_opt.comm)
        unblock_conv_after_init();
    unblock_debug("MPI initialised: rank %d of %d, thread level %d", rank, size, level);
}

