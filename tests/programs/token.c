/* token.c — the paper's integrity test for write-behind: ranks pass a token
 * around a ring; each one, on getting it, reads what the previous rank wrote to
 * the shared file just before sending the token (through its own descriptor,
 * still open: nothing was closed or synced), checks it, appends its own records
 * with small write() calls and passes the token on.  Results per rank in
 * OUTDIR/rank-<r>.txt.  usage: token OUTDIR [records]
 *
 * token OUTDIR records append: every rank appends its records to one O_APPEND
 * file at the same time (write-behind must leave such descriptors alone: the
 * kernel places each write at the end); after a barrier rank 0 checks that every
 * record is there once and each rank's are in order.
 *
 * token OUTDIR records readahead: rank 1 reads a file 8 bytes at a time (read
 * ahead under unblock) while rank 0 rewrites the part it has not read yet; the
 * news comes by MPI_Send, and what rank 1 reads next must be the new bytes.
 *
 * token OUTDIR records bigread: rank 1 reads a cold 16 MiB file with one read()
 * (in the background under unblock), tells rank 0 at once, which then rewrites
 * the whole file, and sends rank 0 the second half of what it read (read, then
 * scatter).  Both halves must be the file as it was at the read.
 *
 * token OUTDIR records placed: IOR's POSIX transfers: each rank writes its own
 * segment of one file with an lseek to where the last record ended before each
 * 8-byte write (merged under unblock: the seek moves nothing), its descriptor
 * kept open; after a barrier (news) it reads the next rank's segment through a
 * new read-only descriptor the same way, then, once every writer has closed,
 * again (read ahead under unblock), checking every record both times.
 *
 * token OUTDIR rounds protsend: rank 0 write()s a large buffer, MPI_Send()s it (the
 * call drains the write), rewrites half of it at once (a fault on the send in
 * flight), write()s that half and rewrites the whole buffer for the next round at
 * once (a fault on the write in flight: under unblock each large write is
 * protected read-only instead of copied); rank 1 write()s each message from its
 * receive buffer at once (a receive still in flight) and receives the next into
 * it.  Each rank then reads its file back and checks every byte of every round. */
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* protsend's 8-byte record i of round r. */
static void protsend_rec(char rec[9], int r, size_t i)
{
    snprintf(rec, 9, "%02d%06zu", r % 100, i % 1000000);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, n = argc > 2 ? atoi(argv[2]) : 5000;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096], mine[4096];
    snprintf(path, sizeof(path), "%s/token.dat", argv[1]);
    snprintf(mine, sizeof(mine), "%s/rank-%d.txt", argv[1], rank);
    FILE *out = fopen(mine, "w");
    int token = 0;
    if (argc > 3 && strcmp(argv[3], "readahead") == 0 && size >= 2) {
        snprintf(path, sizeof(path), "%s/ra.dat", argv[1]);
        char rec[9];
        if (rank == 0) {
            int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
            for (int i = 0; i < n; i++) {
                snprintf(rec, sizeof(rec), "old%05d", i % 100000);
                write(fd, rec, 8);
            }
            close(fd);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            int fd = open(path, O_RDONLY);
            long bad = 0;
            for (int i = 0; i < n / 2; i++)
                if (read(fd, rec, 8) != 8 || memcmp(rec, "old", 3) != 0)
                    bad++;
            MPI_Send(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD); /* half read */
            MPI_Recv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            long fresh = 0;
            for (int i = n / 2; i < n; i++)
                if (read(fd, rec, 8) == 8 && memcmp(rec, "new", 3) == 0)
                    fresh++;
            fprintf(out, "readahead: %ld old records wrong, %ld of %d new records seen\n", bad,
                    fresh, n - n / 2);
            close(fd);
        } else if (rank == 0) {
            MPI_Recv(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int fd = open(path, O_WRONLY);
            for (int i = n / 2; i < n; i++) {
                snprintf(rec, sizeof(rec), "new%05d", i % 100000);
                pwrite(fd, rec, 8, (off_t)i * 8);
            }
            close(fd);
            MPI_Send(&token, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
        }
        fclose(out);
        MPI_Finalize();
        return 0;
    }
    if (argc > 3 && strcmp(argv[3], "placed") == 0) {
        snprintf(path, sizeof(path), "%s/placed.dat", argv[1]);
        if (rank == 0)
            close(open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644));
        MPI_Barrier(MPI_COMM_WORLD);
        int fd = open(path, O_RDWR), peer = (rank + 1) % size;
        long bad = 0;
        for (long i = 0; i < n; i++) {
            off_t at = ((off_t)rank * n + i) * 8;
            long v = (long)rank << 32 | i;
            bad += lseek(fd, at, SEEK_SET) != at || write(fd, &v, 8) != 8;
            if (i % 1000 == 999)
                bad += lseek(fd, 0, SEEK_CUR) != at + 8;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                close(fd);
                MPI_Barrier(MPI_COMM_WORLD); /* every writer closed: read-ahead's lease */
            }
            int rd = open(path, O_RDONLY);
            long wrong = 0;
            for (long i = 0; i < n; i++) {
                off_t at = ((off_t)peer * n + i) * 8;
                long v = -1;
                bad += lseek(rd, at, SEEK_SET) != at;
                wrong += read(rd, &v, 8) != 8 || v != ((long)peer << 32 | i);
            }
            close(rd);
            fprintf(out, "placed: pass %d, %ld of rank %d's %d records wrong\n", pass, wrong,
                    peer, n);
        }
        fprintf(out, "placed: %ld calls answered wrong\n", bad);
        fclose(out);
        MPI_Finalize();
        return 0;
    }
    if (argc > 3 && strcmp(argv[3], "bigread") == 0 && size >= 2) {
        snprintf(path, sizeof(path), "%s/big.dat", argv[1]);
        const size_t len = 16u << 20, half = len / 2;
        char *buf = malloc(len);
        if (rank == 0) {
            int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
            for (size_t i = 0; i < len; i += 8)
                memcpy(buf + i, "old-old-", 8);
            write(fd, buf, len);
            fsync(fd);
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        long old = 0;
        if (rank == 1) {
            int fd = open(path, O_RDONLY);
            ssize_t r = read(fd, buf, len);
            MPI_Send(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD); /* "read() returned" */
            MPI_Send(buf + half, (int)half, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < len; i += 8)
                old += memcmp(buf + i, "old-old-", 8) == 0;
            fprintf(out, "bigread: read %ld bytes, %ld of %zu records as they were\n", (long)r,
                    old, len / 8);
            close(fd);
        } else if (rank == 0) {
            MPI_Recv(&token, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int fd = open(path, O_WRONLY);
            for (size_t i = 0; i < len; i += 8)
                memcpy(buf + i, "new-new-", 8);
            write(fd, buf, len);
            close(fd);
            MPI_Recv(buf, (int)half, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < half; i += 8)
                old += memcmp(buf + i, "old-old-", 8) == 0;
            fprintf(out, "bigread: %ld of %zu records of the second half as they were\n", old,
                    half / 8);
            MPI_Send(&token, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
        }
        free(buf);
        fclose(out);
        MPI_Finalize();
        return 0;
    }
    if (argc > 3 && strcmp(argv[3], "protsend") == 0 && size >= 2) {
        const size_t len = 8u << 20;
        char *buf = malloc(len), rec[9];
        snprintf(path, sizeof(path), "%s/protsend-%d.dat", argv[1], rank);
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        for (int r = 0; r < n && rank < 2; r++) {
            if (rank == 0) {
                for (size_t i = 0; i < len; i += 8) {
                    protsend_rec(rec, r, i / 8);
                    memcpy(buf + i, rec, 8);
                }
                write(fd, buf, len);
                MPI_Send(buf, (int)len, MPI_BYTE, 1, r, MPI_COMM_WORLD);
                memset(buf, 'x', len / 2); /* at once: the send still owns the pages */
                write(fd, buf, len / 2);   /* rewritten at once by the next round */
            } else {
                MPI_Recv(buf, (int)len, MPI_BYTE, 0, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                write(fd, buf, len); /* from a receive buffer still being filled */
            }
        }
        close(fd);
        fd = open(path, O_RDONLY);
        long bad = 0, rounds = 0;
        for (int r = 0; r < n && rank < 2; r++, rounds++) {
            ssize_t got = read(fd, buf, len);
            for (size_t i = 0; i < len; i += 8) {
                protsend_rec(rec, r, i / 8);
                bad += got != (ssize_t)len || memcmp(buf + i, rec, 8) != 0;
            }
            if (rank == 0) {
                got = read(fd, buf, len / 2);
                for (size_t i = 0; i < len / 2; i++)
                    bad += got != (ssize_t)(len / 2) || buf[i] != 'x';
            }
        }
        fprintf(out, "protsend: %ld rounds, %ld records wrong\n", rounds, bad);
        close(fd);
        free(buf);
        fclose(out);
        MPI_Finalize();
        return 0;
    }
    if (argc > 3 && strcmp(argv[3], "append") == 0) {
        snprintf(path, sizeof(path), "%s/append.dat", argv[1]);
        if (rank == 0)
            close(open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644));
        MPI_Barrier(MPI_COMM_WORLD);
        int fd = open(path, O_WRONLY | O_APPEND);
        char rec[9];
        for (int i = 0; i < n; i++) {
            snprintf(rec, sizeof(rec), "%d:%05d\n", rank, i % 100000);
            write(fd, rec, 8);
        }
        close(fd);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            FILE *f = fopen(path, "r");
            int *next = calloc((size_t)size, sizeof(int)), r, i, bad = 0;
            while (f && fscanf(f, "%d:%d\n", &r, &i) == 2)
                if (r < 0 || r >= size || i != next[r]++ % 100000)
                    bad++;
            for (r = 0; r < size; r++)
                fprintf(out, "append: rank %d: %d records%s\n", r, next[r],
                        bad ? " (out of order)" : "");
            if (f)
                fclose(f);
            free(next);
            unlink(path); /* how the ranks' records interleave differs from run to run */
        }
        fclose(out);
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int fd = open(path, O_RDWR);
    size_t region = (size_t)n * 8;
    char *expect = malloc(region), *got = malloc(region);
    /* Steps k = 0 .. 2*size-1: rank k % size writes region k. */
    for (int k = rank; k < 2 * size; k += size) {
        if (k > 0) {
            int from = (k - 1) % size;
            MPI_Recv(&token, 1, MPI_INT, from, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++)
                snprintf(expect + (size_t)i * 8, 9, "%d:%05d\n", from, i % 100000);
            ssize_t r = pread(fd, got, region, (off_t)(k - 1) * (off_t)region);
            fprintf(out, "step %d: read %zd bytes of rank %d: %s\n", k, r, from,
                    r == (ssize_t)region && memcmp(got, expect, region) == 0 ? "ok" : "STALE");
        }
        lseek(fd, (off_t)k * (off_t)region, SEEK_SET);
        char rec[9];
        for (int i = 0; i < n; i++) {
            snprintf(rec, sizeof(rec), "%d:%05d\n", rank, i % 100000);
            write(fd, rec, 8);
        }
        token++;
        if (k + 1 < 2 * size)
            MPI_Send(&token, 1, MPI_INT, (k + 1) % size, k + 1, MPI_COMM_WORLD);
    }
    fprintf(out, "token %d\n", token);
    close(fd);
    fclose(out);
    free(expect);
    free(got);
    MPI_Finalize();
    return 0;
}
