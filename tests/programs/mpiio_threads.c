/* mpiio_threads.c — MPI-IO writes from several threads of a rank at
 * MPI_THREAD_MULTIPLE: the continuation path then runs under write-behind's lock
 * (docs/mpiio.md).  Each rank runs 3 threads; thread t writes runs of 8-byte
 * MPI_File_write_at into its own 64 KiB region of one shared file through the one
 * handle, each run continuing the last, and every 64th write goes elsewhere in
 * the same block (a general take that ends other threads' runs too); thread 0
 * also reads its region back now and then (a flush that frees stage-1 blocks
 * under the others).  The file and what each rank read go to OUTDIR; the
 * transparency harness compares both with and without unblock.
 *
 * usage: mpiio_threads OUTDIR */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 3
#define WRITES 7000 /* (7000 x 8 bytes, then the tail: within 64 KiB) */

static int rank, np, bad;
static MPI_File fh;

static MPI_Offset region(int t) { return ((MPI_Offset)rank * THREADS + t) * 65536; }

static void *writer(void *arg)
{
    int t = (int)(long)arg;
    MPI_Offset base = region(t);
    for (int i = 0; i < WRITES; i++) {
        long v = ((long)rank * THREADS + t) * 1000000 + i;
        if (i % 64 == 63) { /* elsewhere in the block: the tail of the region */
            MPI_File_write_at(fh, base + 65536 - 8 * (i / 64 + 1), &v, 1, MPI_LONG,
                              MPI_STATUS_IGNORE);
            continue;
        }
        MPI_File_write_at(fh, base + (MPI_Offset)i * 8, &v, 1, MPI_LONG, MPI_STATUS_IGNORE);
        if (t == 0 && i % 256 == 255) {
            long back = -1;
            MPI_File_read_at(fh, base + (MPI_Offset)i * 8, &back, 1, MPI_LONG, MPI_STATUS_IGNORE);
            if (back != v)
                __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2 || provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, argc < 2 ? "usage: mpiio_threads OUTDIR\n"
                                     : "mpiio_threads: no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char p[4096];
    snprintf(p, sizeof p, "%s/threads.dat", argv[1]);
    MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, writer, (void *)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    MPI_File_close(&fh);
    if (bad)
        printf("MISMATCH: rank %d read back %d values it did not write\n", rank, bad);
    snprintf(p, sizeof p, "%s/result-%d.txt", argv[1], rank);
    FILE *out = fopen(p, "w");
    fprintf(out, "threads: %d read back wrong\n", bad);
    fclose(out);
    MPI_Finalize();
    return bad != 0;
}
