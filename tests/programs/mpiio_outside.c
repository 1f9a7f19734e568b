/* mpiio_outside.c — a rank's MPI-IO writes seen from outside MPI-IO before the
 * file is closed or synced: ROMIO and OMPIO write in the call, so without
 * unblock the program's own POSIX calls and the processes it starts find them
 * in the file (MPI promises that only after MPI_File_sync; programs rely on it
 * all the same).  Ten rounds; in each, every rank writes a segment of CELLS
 * 8-byte cells with MPI_File_write_at (its own region of the file per round,
 * rank 0's segment last, so the file's size is known from rank 0's writes
 * alone), then looks once, with the file still open:
 *   0: stat of the path: the size reaches the end of this rank's cells;
 *   1: open + pread of its cells (opened after writing): each holds its value;
 *   2: fopen + fread of its first cell;
 *   3: fstat of a descriptor opened before any write: the size, as in 0;
 *   4: statx of the path: the size, as in 0;
 *   5: pread of its cells through a descriptor opened before MPI_File_open;
 *   6: lseek to the end of the descriptor of 3 (the size, as in 0), then
 *      lseek to its cells and read() them one by one;
 *   7: pread of its cells through a dup() of the descriptor of 5;
 *   8: its cells through an mmap of the descriptor of 5;
 *   9: rank 0: system("wc -c < FILE"): the size of the whole file (last: the
 *      other ranks write nothing more until the close, which waits for it).
 * Each rank prints MISMATCH for a look that found something wrong;
 * result-RANK.txt holds the counts (the same with and without unblock where
 * nothing is wrong).
 *
 * usage: mpiio_outside OUTDIR [CELLS] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t cell(int rank, int round, long i)
{
    return ((uint64_t)rank << 40) | ((uint64_t)round << 32) | (uint64_t)i;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *dir = argc > 1 ? argv[1] : ".";
    long cells = argc > 2 ? atol(argv[2]) : 1000;
    char path[4096];
    snprintf(path, sizeof path, "%s/outside.dat", dir);
    int fdb = open(path, O_RDONLY | O_CREAT, 0644); /* (before MPI_File_open) */
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    int fd0 = open(path, O_RDONLY); /* (before any write) */
    static const char *look[] = { "stat", "open+pread", "fopen+fread", "fstat", "statx",
                                  "pread", "lseek+read", "dup+pread", "mmap", "system" };
    enum { ROUNDS = sizeof look / sizeof look[0] };
    MPI_Offset seg = (MPI_Offset)cells * 8;
    int bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Offset region = (MPI_Offset)round * np * seg, base = region + (np - 1 - rank) * seg;
        for (long i = 0; i < cells; i++) {
            uint64_t v = cell(rank, round, i);
            MPI_File_write_at(fh, base + 8 * i, &v, 8, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        long wrong = 0;
        struct stat st;
        if (round == 0) {
            wrong = stat(path, &st) != 0 || st.st_size < base + seg;
        } else if (round == 1) {
            int fd = open(path, O_RDONLY);
            for (long i = 0; i < cells; i++) {
                uint64_t v = 0;
                wrong += fd < 0 || pread(fd, &v, 8, base + 8 * i) != 8 || v != cell(rank, round, i);
            }
            if (fd >= 0)
                close(fd);
        } else if (round == 2) {
            FILE *f = fopen(path, "rb");
            uint64_t first = 0;
            wrong = f == NULL || fseek(f, (long)base, SEEK_SET) != 0 || fread(&first, 8, 1, f) != 1 ||
                    first != cell(rank, round, 0);
            if (f)
                fclose(f);
        } else if (round == 3) {
            wrong = fd0 < 0 || fstat(fd0, &st) != 0 || st.st_size < base + seg;
        } else if (round == 4) {
            struct statx sx;
            wrong = statx(AT_FDCWD, path, 0, STATX_SIZE, &sx) != 0 ||
                    (MPI_Offset)sx.stx_size < base + seg;
        } else if (round == 5 || round == 7) {
            int fd = round == 5 ? fdb : dup(fdb);
            for (long i = 0; i < cells; i++) {
                uint64_t v = 0;
                wrong += fd < 0 || pread(fd, &v, 8, base + 8 * i) != 8 || v != cell(rank, round, i);
            }
            if (round == 7 && fd >= 0)
                close(fd);
        } else if (round == 6) {
            off_t end = fd0 < 0 ? -1 : lseek(fd0, 0, SEEK_END);
            wrong = end < base + seg || lseek(fd0, base, SEEK_SET) != base;
            for (long i = 0; i < cells && !wrong; i++) {
                uint64_t v = 0;
                wrong += read(fd0, &v, 8) != 8 || v != cell(rank, round, i);
            }
        } else if (round == 8) {
            size_t len = (size_t)(base + seg);
            const unsigned char *m =
                fdb < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_SHARED, fdb, 0);
            if (m == MAP_FAILED)
                wrong = cells;
            for (long i = 0; i < cells && m != MAP_FAILED; i++) {
                uint64_t v;
                memcpy(&v, m + base + 8 * i, 8);
                wrong += v != cell(rank, round, i);
            }
            if (m != MAP_FAILED)
                munmap((void *)m, len);
        } else if (rank == 0) {
            char cmd[8300], wc[4096];
            snprintf(wc, sizeof wc, "%s/wc.txt", dir);
            snprintf(cmd, sizeof cmd, "wc -c < '%s' > '%s'", path, wc);
            long n = -1;
            if (system(cmd) == 0) {
                FILE *w = fopen(wc, "r");
                if (w == NULL || fscanf(w, "%ld", &n) != 1)
                    n = -1;
                if (w)
                    fclose(w);
            }
            wrong = n != (long)(region + np * seg);
            if (wrong)
                printf("MISMATCH: rank 0: wc -c counted %ld bytes, not %lld\n", n,
                       (long long)(region + np * seg));
        }
        if (wrong)
            printf("MISMATCH: rank %d: %s found %ld wrong\n", rank, look[round], wrong);
        bad += wrong != 0;
    }
    if (fd0 >= 0)
        close(fd0);
    if (fdb >= 0)
        close(fdb);
    MPI_File_close(&fh);
    char p[4096];
    snprintf(p, sizeof p, "%s/result-%d.txt", dir, rank);
    FILE *out = fopen(p, "w");
    if (out) {
        fprintf(out, "rank %d: %ld cells a round, %d looks wrong\n", rank, cells, bad);
        fclose(out);
    }
    MPI_Finalize();
    return bad != 0;
}
