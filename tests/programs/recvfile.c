/* recvfile.c — a receive that tells a file was written: rank 0 writes the
 * round's number into a file, then sends 1 MiB to rank 1; rank 1 receives it,
 * then reads the number back and answers, so rank 0 writes the next one only
 * after rank 1 read.  Without unblock the blocking receive returns once the
 * message came, so the read sees the write; a converted receive returns at once,
 * and the read must first wait for it (protect.h: unblock_protect_receives_done).
 * Rank 0 waits 1 ms before each write, so that a receive returned too early
 * reads the older number.  Each round reads in another way: pread, read after
 * lseek, fread (stdio), MPI_File_read_at of a file rank 0 writes with
 * MPI_File_write_at, fstat of a file rank 0 makes 4 bytes longer, and the
 * same size through lseek(SEEK_END).  Names rank 0 makes before it sends are
 * looked at too: a file found by access, renamed, unlinked, found by
 * opendir+readdir, and a symbolic link read by readlink.  And a thread of rank
 * 1 that did not receive: the receiving thread starts it after the receive,
 * and it preads the number.  Rank 1 prints MISMATCH where a number read (or a
 * name looked at) is not the round's.
 *
 * usage: recvfile OUTDIR [ROUNDS] */
#include <dirent.h>
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOWS 12
static const char *how_name[HOWS] = { "pread", "read", "fread", "MPI_File_read_at",
                                      "fstat", "lseek(SEEK_END)", "access", "rename",
                                      "unlink", "readdir", "readlink", "another thread" };

/* The other thread's read: the number at offset 0 of the file. */
static int other_fd, other_v;
static void *other_read(void *unused)
{
    (void)unused;
    if (pread(other_fd, &other_v, sizeof other_v, 0) != (ssize_t)sizeof other_v)
        other_v = -1;
    return NULL;
}

/* The name of round r's file of kind k in dir. */
static void name(char *out, size_t cap, const char *dir, const char *k, int r)
{
    snprintf(out, cap, "%s/%s-%d", dir, k, r);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *dir = argc > 1 ? argv[1] : ".";
    int rounds = argc > 2 ? atoi(argv[2]) : 240;
    if (np != 2) {
        if (rank == 0)
            fprintf(stderr, "recvfile: 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char p[4096], q[4096], a[4096], b[4096];
    snprintf(p, sizeof p, "%s/posix.dat", dir);
    snprintf(q, sizeof q, "%s/mpiio.dat", dir);
    int fd = open(p, O_CREAT | O_RDWR, 0644);
    snprintf(a, sizeof a, "%s/list", dir);
    if (rank == 0)
        mkdir(a, 0755);
    MPI_Barrier(MPI_COMM_WORLD); /* (created before rank 1 opens it) */
    FILE *fp = rank == 1 ? fopen(p, "r") : NULL;
    if (fp) /* (each fread reads the file: a buffer would keep the old number) */
        setvbuf(fp, NULL, _IONBF, 0);
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, q, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    size_t n = 1 << 20;
    char *buf = malloc(n);
    int bad = 0, wrong[HOWS] = { 0 };
    for (int r = 0; r < rounds; r++) {
        int how = r % HOWS, v = -1;
        if (rank == 0) {
            usleep(1000); /* (rank 1 is in its receive by now) */
            if (how == 3) {
                MPI_File_write_at(fh, 0, &r, 1, MPI_INT, MPI_STATUS_IGNORE);
            } else if (how >= 6 && how <= 9) { /* (a name made) */
                static const char *kind[] = { "access", "rename", "unlink", "list/e" };
                name(a, sizeof a, dir, kind[how - 6], r);
                int t = open(a, O_CREAT | O_WRONLY, 0644);
                bad += t < 0;
                if (t >= 0)
                    close(t);
            } else if (how == 10) {
                name(a, sizeof a, dir, "link", r);
                snprintf(b, sizeof b, "target-%d", r);
                bad += symlink(b, a) != 0;
            } else if (pwrite(fd, &r, sizeof r, how == 4 || how == 5 ? 4096 + 4 * (off_t)r : 0) !=
                       (ssize_t)sizeof r) {
                bad++;
            }
            memset(buf, r & 0x7f, n);
            MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            continue;
        }
        MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (how == 0) {
            if (pread(fd, &v, sizeof v, 0) != (ssize_t)sizeof v)
                v = -1;
        } else if (how == 1) {
            if (lseek(fd, 0, SEEK_SET) != 0 || read(fd, &v, sizeof v) != (ssize_t)sizeof v)
                v = -1;
        } else if (how == 2) {
            fseek(fp, 0, SEEK_SET);
            if (fread(&v, sizeof v, 1, fp) != 1)
                v = -1;
        } else if (how == 3) {
            MPI_File_read_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
        } else if (how == 4) { /* (the size: the file grows by 4 bytes in these rounds) */
            struct stat st;
            v = fstat(fd, &st) == 0 && st.st_size == 4096 + 4 * (off_t)(r + 1) ? r : -1;
        } else if (how == 5) {
            v = lseek(fd, 0, SEEK_END) == 4096 + 4 * (off_t)(r + 1) ? r : -1;
        } else if (how == 6) {
            name(a, sizeof a, dir, "access", r);
            v = access(a, F_OK) == 0 ? r : -1;
            unlink(a);
        } else if (how == 7) {
            name(a, sizeof a, dir, "rename", r);
            name(b, sizeof b, dir, "renamed", r);
            v = rename(a, b) == 0 ? r : -1;
            unlink(b);
        } else if (how == 8) {
            name(a, sizeof a, dir, "unlink", r);
            v = unlink(a) == 0 ? r : -1;
        } else if (how == 9) {
            snprintf(a, sizeof a, "%s/list", dir);
            snprintf(b, sizeof b, "e-%d", r);
            DIR *d = opendir(a);
            for (struct dirent *e; d && (e = readdir(d)) != NULL;)
                if (strcmp(e->d_name, b) == 0)
                    v = r;
            if (d)
                closedir(d);
            name(a, sizeof a, dir, "list/e", r);
            unlink(a);
        } else if (how == 10) {
            name(a, sizeof a, dir, "link", r);
            ssize_t k = readlink(a, b, sizeof b - 1);
            char want[64];
            snprintf(want, sizeof want, "target-%d", r);
            v = k > 0 && (b[k] = '\0', strcmp(b, want) == 0) ? r : -1;
            unlink(a);
        } else { /* (a thread of the program's that did not receive) */
            pthread_t t;
            other_fd = fd;
            other_v = -1;
            if (pthread_create(&t, NULL, other_read, NULL) == 0 && pthread_join(t, NULL) == 0)
                v = other_v;
        }
        if (v != r) {
            wrong[how]++;
            if (bad < 5)
                printf("MISMATCH: round %d (%s): read %d\n", r, how_name[how], v);
            bad++;
        }
        bad += buf[0] != (char)(r & 0x7f) || buf[n - 1] != (char)(r & 0x7f);
        MPI_Send(&r, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    for (int h = 0; h < HOWS; h++)
        if (wrong[h])
            printf("MISMATCH: %s wrong in %d rounds\n", how_name[h], wrong[h]);
    MPI_File_close(&fh);
    if (fp)
        fclose(fp);
    close(fd);
    snprintf(p, sizeof p, "%s/result-%d.txt", dir, rank);
    FILE *out = fopen(p, "w");
    if (out) {
        fprintf(out, "rank %d: %d rounds, %d wrong\n", rank, rounds, bad);
        fclose(out);
    }
    free(buf);
    MPI_Finalize();
    return bad != 0;
}
