/* alloc.c — the malloc family under unblock (the double-mapped pool, memory/).
 *
 * Every check prints one line whose text is the same with and without unblock;
 * the transparency test compares them and the statistics show the pool was used.
 * Cases: a block allocated in a constructor (before main), alignment of every
 * allocation function, realloc growing and shrinking, calloc zeroing reused
 * memory, threads hammering alloc/free, fork (the child writes its heap while the
 * parent reads its own), huge and impossible sizes, foreign pointers, and large
 * messages between two ranks from blocks freed and allocated again. */
#include <errno.h>
#include <malloc.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static FILE *out;
static int failures;

static void check(const char *what, int ok)
{
    fprintf(out, "%s: %s\n", what, ok ? "ok" : "FAILED");
    failures += !ok;
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 7 + (i >> 12));
}

static int same(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i * 7 + (i >> 12)))
            return 0;
    return 1;
}

static int zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static unsigned char *early;
#define EARLY (3u << 20)
__attribute__((constructor)) static void before_main(void)
{
    early = malloc(EARLY);
    if (early)
        fill(early, EARLY, 11);
}

static void *hammer(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    unsigned char *held[8] = { 0 };
    size_t sizes[8] = { 0 };
    int ok = 1;
    for (int it = 0; it < 300; it++) {
        int k = (int)(rand_r(&seed) % 8);
        if (held[k]) {
            ok &= same(held[k], sizes[k], (unsigned)k);
            free(held[k]);
        }
        sizes[k] = 1000 + rand_r(&seed) % (1u << 20);
        held[k] = it % 3 == 0 ? calloc(1, sizes[k]) : malloc(sizes[k]);
        if (held[k] == NULL)
            return NULL;
        if (it % 3 == 0)
            ok &= zero(held[k], sizes[k]);
        fill(held[k], sizes[k], (unsigned)k);
        if (it % 5 == 0) {
            size_t n = sizes[k] / 2 + rand_r(&seed) % (1u << 20);
            unsigned char *q = realloc(held[k], n);
            if (q == NULL)
                return NULL;
            ok &= same(q, n < sizes[k] ? n : sizes[k], (unsigned)k);
            held[k] = q;
            sizes[k] = n;
            fill(q, n, (unsigned)k);
        }
    }
    for (int k = 0; k < 8; k++) {
        if (held[k])
            ok &= same(held[k], sizes[k], (unsigned)k);
        free(held[k]);
    }
    return ok ? arg : NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4096];
    snprintf(path, sizeof(path), "%s/rank-%d.txt", argc > 1 ? argv[1] : ".", rank);
    out = fopen(path, "w");
    if (out == NULL) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    check("constructor block", early && same(early, EARLY, 11));
    free(early);

    /* Alignment: malloc's promise, and each aligned function's own. */
    size_t sizes[] = { 100, 4096, 128 << 10, (1 << 20) + 3, 5 << 20 };
    int aligned = 1;
    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        void *p = malloc(sizes[i]);
        aligned &= p && ((uintptr_t)p & 15) == 0 && malloc_usable_size(p) >= sizes[i];
        memset(p, 1, sizes[i]);
        free(p);
        size_t aligns[] = { 16, 64, 4096, 65536, 2 << 20 };
        for (unsigned j = 0; j < sizeof(aligns) / sizeof(aligns[0]); j++) {
            void *q = NULL;
            aligned &= posix_memalign(&q, aligns[j], sizes[i]) == 0 &&
                       ((uintptr_t)q & (aligns[j] - 1)) == 0;
            memset(q, 2, sizes[i]);
            free(q);
            q = aligned_alloc(aligns[j], sizes[i]);
            aligned &= q && ((uintptr_t)q & (aligns[j] - 1)) == 0;
            free(q);
            q = memalign(aligns[j], sizes[i]);
            aligned &= q && ((uintptr_t)q & (aligns[j] - 1)) == 0;
            free(q);
        }
        void *v = valloc(sizes[i]), *pv = pvalloc(sizes[i]);
        aligned &= v && pv && ((uintptr_t)v & 4095) == 0 && ((uintptr_t)pv & 4095) == 0 &&
                   malloc_usable_size(pv) >= ((sizes[i] + 4095) & ~(size_t)4095);
        free(v);
        free(pv);
    }
    void *bad = NULL;
    check("alignment", aligned);
    check("posix_memalign rejects alignment 24", posix_memalign(&bad, 24, 1 << 20) == EINVAL);

    /* realloc: grow (in place or moved), shrink, grow again; contents kept. */
    unsigned char *r = malloc(200 << 10);
    fill(r, 200 << 10, 3);
    r = realloc(r, 3 << 20);
    int kept = r && same(r, 200 << 10, 3);
    fill(r, 3 << 20, 4);
    unsigned char *blocker = malloc(256 << 10); /* something after it: the next grow moves */
    r = realloc(r, 7 << 20);
    kept &= r && same(r, 3 << 20, 4);
    r = realloc(r, 150 << 10);
    kept &= r && same(r, 150 << 10, 4);
    r = realloc(r, 100); /* large to small */
    kept &= r && same(r, 100, 4);
    r = realloc(r, 1 << 20); /* small to large */
    kept &= r && same(r, 100, 4);
    free(r);
    free(blocker);
    check("realloc keeps contents", kept);
    check("realloc(NULL) allocates", (r = realloc(NULL, 1 << 20)) != NULL);
    free(r);

    /* calloc: zero, even where a freed block was dirty. */
    int zeroed = 1;
    for (int i = 0; i < 20; i++) {
        unsigned char *d = malloc((size_t)(i + 1) << 18);
        memset(d, 0xa5, (size_t)(i + 1) << 18);
        free(d);
        unsigned char *z = calloc((size_t)(i + 1) << 16, 4);
        zeroed &= z && zero(z, (size_t)(i + 1) << 18);
        free(z);
    }
    check("calloc zeroes reused memory", zeroed);
    volatile size_t too_many = SIZE_MAX / 2, too_large = SIZE_MAX - 4096;
    errno = 0;
    check("calloc overflow", calloc(too_many, 4) == NULL && errno == ENOMEM);

    /* Threads hammering alloc/free/realloc. */
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, hammer, (void *)(i + 1));
    int threads_ok = 1;
    for (int i = 0; i < 4; i++) {
        void *ret;
        pthread_join(t[i], &ret);
        threads_ok &= ret != NULL;
    }
    check("threads", threads_ok);

    /* fork: the child writes its heap over and over while the parent reads its
     * own; each sees only its own writes. */
    unsigned char *mine = malloc(4 << 20);
    fill(mine, 4 << 20, 21);
    fflush(out);
    int started[2], stop[2];
    if (pipe(started) != 0 || pipe(stop) != 0)
        return 2;
    pid_t pid = fork();
    if (pid == 0) {
        char c = 0;
        int ok = 1;
        fill(mine, 4 << 20, 99);
        if (write(started[1], &c, 1) != 1)
            _exit(4);
        unsigned char *fresh = malloc(2 << 20);
        for (unsigned round = 0;; round++) {
            fill(mine, 4 << 20, 99 + round % 2);
            fill(fresh, 2 << 20, 5);
            ok &= same(mine, 4 << 20, 99 + round % 2) && same(fresh, 2 << 20, 5);
            struct timeval tv = { 0, 0 };
            fd_set fds;
            FD_ZERO(&fds);
            FD_SET(stop[0], &fds);
            if (select(stop[0] + 1, &fds, NULL, NULL, &tv) > 0)
                break;
        }
        free(fresh);
        _exit(ok ? 0 : 3);
    }
    char c;
    int parent_ok = read(started[0], &c, 1) == 1;
    for (int i = 0; i < 20; i++)
        parent_ok &= same(mine, 4 << 20, 21);
    if (write(stop[1], &c, 1) != 1)
        parent_ok = 0;
    int status = 0;
    waitpid(pid, &status, 0);
    check("fork child", WIFEXITED(status) && WEXITSTATUS(status) == 0);
    check("fork parent keeps its heap", parent_ok && same(mine, 4 << 20, 21));
    free(mine);

    /* Huge: 1 GiB (only a few pages touched), and an impossible size. */
    unsigned char *huge = malloc((size_t)1 << 30);
    int huge_ok = huge != NULL;
    if (huge) {
        for (size_t off = 0; off < ((size_t)1 << 30); off += (size_t)64 << 20)
            huge[off] = (unsigned char)(off >> 20);
        for (size_t off = 0; off < ((size_t)1 << 30); off += (size_t)64 << 20)
            huge_ok &= huge[off] == (unsigned char)(off >> 20);
        free(huge);
    }
    check("1 GiB", huge_ok);
    errno = 0;
    check("impossible size", malloc(too_large) == NULL && errno == ENOMEM);

    /* Foreign pointers: libc's own allocations, freed and grown by us. */
    char *s = strdup("a string libc allocated");
    check("free of a libc pointer", s != NULL);
    free(s);
    char *g = strdup("grown");
    g = realloc(g, 2 << 20);
    check("libc pointer grown large", g && strcmp(g, "grown") == 0);
    free(g);
    free(NULL);

    /* Large messages between ranks from pool blocks freed and allocated again at
     * the same addresses (their pages given back in between): MPI's registration
     * caches and memory hooks must see the change. */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1, mpi_ok = 1;
    if (peer < size) {
        for (int round = 0; round < 3; round++)
            for (size_t n = 1 << 20; n <= (32u << 20); n *= 4) {
                unsigned char *snd = malloc(n), *rcv = malloc(n);
                fill(snd, n, (unsigned)(rank * 16 + round));
                MPI_Sendrecv(snd, (int)n, MPI_BYTE, peer, round, rcv, (int)n, MPI_BYTE, peer,
                             round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mpi_ok &= same(rcv, n, (unsigned)(peer * 16 + round));
                free(snd);
                free(rcv);
            }
        check("large messages from reused pool blocks", mpi_ok);
    }

    fclose(out);
    MPI_Finalize();
    return failures != 0;
}
