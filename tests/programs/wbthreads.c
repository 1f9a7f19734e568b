/* wbthreads.c — threads writing their own files in small pieces, ended by a
 * terminating signal: each file must be a prefix of what its thread wrote (only
 * the last record may be cut), never a hole with data after it.
 *
 *     wbthreads DIR term|hup|int   4 threads write DIR/t<i>.dat (15-byte numbered
 *                                  records) until the main thread, 300 ms in,
 *                                  sends the process the signal; dies of it
 *     wbthreads DIR check          prints each file's records and "prefix ok",
 *                                  or MISMATCH and exits 1 (a missing file is
 *                                  an empty prefix: its thread had not opened
 *                                  it yet) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 4
#define REC 15
#define MAX_RECORDS 2000000 /* 30 MB a file at most, whatever happens */

static const char *dir;

static void record(char *out, long i)
{
    snprintf(out, REC + 1, "%014ld\n", i);
}

static void *writer(void *arg)
{
    char p[4096], rec[REC + 1];
    snprintf(p, sizeof(p), "%s/t%ld.dat", dir, (long)arg);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (long i = 0; i < MAX_RECORDS; i++) {
        record(rec, i);
        if (write(fd, rec, REC) != REC)
            break;
    }
    close(fd);
    return NULL;
}

static int check(void)
{
    int bad = 0;
    for (int t = 0; t < THREADS; t++) {
        char p[4096], rec[REC + 1], got[REC];
        snprintf(p, sizeof(p), "%s/t%d.dat", dir, t);
        FILE *f = fopen(p, "r");
        int err = f ? 0 : errno;
        if (err == ENOENT) {
            /* Its thread had not opened it when the signal came (a loaded
             * machine): without unblock it would not exist either, and a
             * missing file is the empty prefix. */
            printf("t%d: prefix ok\n", t);
            continue;
        }
        long i = 0;
        size_t n;
        while (f && (n = fread(got, 1, REC, f)) == REC) {
            record(rec, i);
            if (memcmp(got, rec, REC) != 0)
                break;
            i++;
        }
        int whole = f && feof(f) && !ferror(f);
        long rest = 0;
        if (f && !whole) { /* a wrong record: how far the file goes on after it */
            while (fgetc(f) != EOF)
                rest++;
        }
        /* (the record count is left out: it depends on the timing) */
        printf("t%d: %s\n", t, whole ? "prefix ok" : "MISMATCH");
        if (!f)
            fprintf(stderr, "t%d: %s\n", t, strerror(err));
        else if (!whole)
            fprintf(stderr, "t%d: record %ld wrong, %ld bytes after it\n", t, i, rest);
        bad |= !whole;
        if (f)
            fclose(f);
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    dir = argv[1];
    if (strcmp(argv[2], "check") == 0)
        return check();
    int sig = strcmp(argv[2], "hup") == 0 ? SIGHUP : strcmp(argv[2], "int") == 0 ? SIGINT : SIGTERM;
    signal(sig, SIG_DFL); /* whatever the shell left: the default, as programs have */
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, writer, (void *)t);
    usleep(300000);
    kill(getpid(), sig);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    return 0; /* the writers ran out before the signal came: the caller says so */
}
