/* mapwrite.c — a file written with small write() calls, then mapped, under MPI.
 * Write-behind merges the small writes into a block; a mapping of the file must
 * find them in it (the mmap wrapper writes the block first).  Under MPICH, UCX's
 * memory hooks replace the mmap wrapper (src/memory/ucm.c), so this runs what
 * the wrapper ran through UCX's events.  Each rank writes its own file of
 * RECORDS 8-byte records (its size first, with one write of zeros, so that
 * the mapping lies inside the file), maps it, checks every record, and does it ROUNDS
 * times (a new file each round, the old one unmapped first: its munmap is an
 * event too).  Prints MISMATCH and exits 1 where a record is wrong.
 *
 * usage: mapwrite OUTDIR [RECORDS] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *dir = argc > 1 ? argv[1] : ".";
    long records = argc > 2 ? atol(argv[2]) : 4096;
    long wrong = 0;
    for (int round = 0; round < 4; round++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/map-%d-%d.dat", dir, rank, round);
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror("open");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        size_t len = (size_t)records * 8;
        char *zero = calloc(1, len); /* (the file's size first: the mapping is all inside) */
        if (zero == NULL || pwrite(fd, zero, len, 0) != (ssize_t)len) {
            perror("pwrite");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        free(zero);
        lseek(fd, 0, SEEK_SET);
        for (long i = 0; i < records; i++) {
            uint64_t v = ((uint64_t)rank << 48) | ((uint64_t)round << 32) | (uint64_t)i;
            if (write(fd, &v, 8) != 8) {
                perror("write");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        }
        const unsigned char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            perror("mmap");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        long bad = 0;
        for (long i = 0; i < records; i++) {
            uint64_t v;
            memcpy(&v, m + 8 * i, 8);
            bad += v != (((uint64_t)rank << 48) | ((uint64_t)round << 32) | (uint64_t)i);
        }
        if (bad)
            printf("MISMATCH: rank %d round %d: %ld of %ld records wrong in the mapping\n", rank,
                   round, bad, records);
        wrong += bad;
        munmap((void *)m, len);
        close(fd);
    }
    long all = 0;
    MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mapwrite: %ld records wrong\n", all);
    MPI_Finalize();
    return all != 0;
}
