/* forkexec.c — fork and exec while messages and written data are in flight.
 *
 *     forkexec OUTDIR            (2 or more ranks; ranks past 1 only take part)
 *
 * Rank 1 sends 1 MiB to rank 0 ROUNDS times, each after a pause, so that rank 0's
 * blocking MPI_Recv (converted by unblock) is still in flight when rank 0 then
 * writes a file in small pieces (merged by write-behind, not yet in the file) and
 * forks.  The fork child checks, before anything else, the receive buffer it
 * inherited and the file as the kernel has it, then execs this program
 * (`--child FILE BYTES SUM`), which checks the file again from a new process
 * image.  Without unblock all of it holds trivially; with it, the fork must
 * first complete the receive (the child has no completion thread, and its copy
 * of the pages would stay inaccessible) and write the merged blocks (the child's
 * view of the file is the kernel's).  Each rank writes OUTDIR/forkexec-<rank>.txt;
 * any wrong byte prints MISMATCH and the program exits 1. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 4
#define MSG (1 << 20)
#define PIECES 3000
#define PIECE 24

static unsigned long long sum_of(const unsigned char *p, size_t n)
{
    unsigned long long s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31 + p[i];
    return s;
}

static void fill(unsigned char *p, size_t n, int round)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 7 + round * 13 + 1);
}

/* The file's bytes as written so far: pieces "<round>:<index>\n" padded to PIECE. */
static void piece(char *out, int round, int i)
{
    memset(out, '.', PIECE);
    int n = snprintf(out, PIECE, "%d:%d", round, i);
    out[n] = '.';
    out[PIECE - 1] = '\n';
}

/* Whether FILE holds exactly `bytes` bytes whose checksum is `sum`. */
static int file_ok(const char *file, size_t bytes, unsigned long long sum)
{
    int fd = open(file, O_RDONLY);
    if (fd < 0)
        return 0;
    unsigned char *p = malloc(bytes + 1);
    size_t got = 0;
    ssize_t r;
    while ((r = read(fd, p + got, bytes + 1 - got)) > 0)
        got += (size_t)r;
    close(fd);
    int ok = got == bytes && sum_of(p, got) == sum;
    free(p);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--child") == 0)
        return file_ok(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10)) ? 0 : 3;
    if (argc != 2) {
        fprintf(stderr, "usage: forkexec OUTDIR\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char path[4096], data[4096];
    snprintf(path, sizeof(path), "%s/forkexec-%d.txt", argv[1], rank);
    FILE *out = fopen(path, "w");
    snprintf(data, sizeof(data), "%s/data-%d.bin", argv[1], rank);
    int bad = 0;
    unsigned char *buf = malloc(MSG), *want = malloc(MSG);
    if (size < 2) {
        fprintf(out, "needs 2 ranks\n");
        bad = 1;
    } else if (rank == 1) {
        for (int round = 0; round < ROUNDS; round++) {
            usleep(50000); /* rank 0 is past its receive by then */
            fill(buf, MSG, round);
            MPI_Send(buf, MSG, MPI_BYTE, 0, round, MPI_COMM_WORLD);
        }
        fprintf(out, "sent %d\n", ROUNDS);
    } else if (rank == 0) {
        int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        unsigned char *written = malloc((size_t)ROUNDS * PIECES * PIECE);
        size_t bytes = 0;
        for (int round = 0; round < ROUNDS; round++) {
            MPI_Recv(buf, MSG, MPI_BYTE, 1, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < PIECES; i++) {
                piece((char *)written + bytes, round, i);
                if (write(fd, written + bytes, PIECE) != PIECE)
                    bad = 1;
                bytes += PIECE;
            }
            fill(want, MSG, round);
            unsigned long long fsum = sum_of(written, bytes);
            pid_t pid = fork();
            if (pid == 0) {
                alarm(30); /* a page left inaccessible would hang the child */
                /* The receive must be complete and the file written, here already. */
                int ok = memcmp(buf, want, MSG) == 0 && file_ok(data, bytes, fsum);
                if (!ok)
                    _exit(4);
                char b[32], s[32];
                snprintf(b, sizeof(b), "%zu", bytes);
                snprintf(s, sizeof(s), "%llu", fsum);
                execl(argv[0], argv[0], "--child", data, b, s, (char *)NULL);
                _exit(5);
            }
            int status = -1;
            waitpid(pid, &status, 0);
            int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
            fprintf(out, "round %d: child %s (status %d), received %s\n", round,
                    ok ? "ok" : "MISMATCH", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                    memcmp(buf, want, MSG) == 0 ? "ok" : "MISMATCH");
            bad |= !ok || memcmp(buf, want, MSG) != 0;
        }
        close(fd);
        int ok = file_ok(data, bytes, sum_of(written, bytes));
        fprintf(out, "file %zu bytes %s\n", bytes, ok ? "ok" : "MISMATCH");
        bad |= !ok;
        free(written);
    }
    fclose(out);
    free(buf);
    free(want);
    MPI_Finalize();
    return bad;
}
