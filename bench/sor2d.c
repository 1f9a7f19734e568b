/* sor2d.c — the papers' verification application: a Red-Black SOR solver on a 2D
 * Cartesian decomposition with one layer of ghost cells.
 *
 * Rank 0 reads the input grid from a file and sends every rank its block with
 * MPI_Send.  Before each half-sweep (one colour) the borders are exchanged in four
 * directions (rows contiguous, columns as an MPI_Type_vector).  Every K iterations
 * the grid is gathered and written to OUTDIR/grid.bin.
 *
 *   --variant sync     MPI_Sendrecv four times; gather with MPI_Send/MPI_Recv to
 *                      rank 0, which writes with write() (what our users write)
 *   --variant hand     the hand-optimised reference: Isend/Irecv of all borders +
 *                      Waitall; every rank writes its block with MPI-IO
 *   --variant overlap  border cells first, their exchange runs while the interior
 *                      is computed
 *
 * All variants compute bit-identical grids: OUTDIR/grid.bin and the checksum in
 * OUTDIR/result.txt are the same.  Standard output: "checksum X" and one line per
 * phase, "time.<phase> SECONDS" (read, comm, comp, write, total; the maximum over
 * ranks), which bench/compare.py reads, and "model.io", "model.dist", "model.rows":
 * rank 0's file read and distribution times and the rows of ranks, the inputs of
 * the papers' performance model (bench/model.py).
 *
 * usage: sor2d OUTDIR [--n N] [--iters I] [--k K] [--variant V] [--imbalance]
 *              [--input FILE] [--dims PxQ] [--read scatter|direct]
 *   --read direct: every rank reads its own block from the input file, one
 *           pread() per row (the papers' Figure 5), instead of rank 0 reading
 *           the file and sending each rank its block (Figure 3, the default).
 *   --imbalance: odd ranks compute 1.5 times as long (same results).
 *   --dims: the process grid (default MPI_Dims_create's; 1x2 gives two ranks
 *           column exchanges only). */
#define _GNU_SOURCE
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SYNC, HAND, OVERLAP };
enum { T_READ, T_COMM, T_COMP, T_WRITE, T_COUNT };
static const char *const phase_names[T_COUNT] = { "read", "comm", "comp", "write" };

typedef struct {
    int n, iters, k, variant, imbalance, dims[2], direct;
    const char *outdir, *input;
} config_t;

typedef struct {
    int rank, size, coords[2], dims[2];
    int up, down, left, right;    /* neighbours (MPI_PROC_NULL at the edges) */
    int lx, ly, x0, y0;           /* local interior size and global offset */
    double *u;                    /* (lx+2) x (ly+2), row-major */
    MPI_Comm cart;
    MPI_Datatype column;
    double t[T_COUNT];
    double t_io;                  /* rank 0: reading the input file (part of T_READ) */
} grid_t;

#define U(g, i, j) ((g)->u[(size_t)(i) * ((g)->ly + 2) + (j)])

static void block(int n, int parts, int idx, int *len, int *off)
{
    *len = n / parts + (idx < n % parts);
    *off = idx * (n / parts) + (idx < n % parts ? idx : n % parts);
}

static void die(const char *msg)
{
    fprintf(stderr, "sor2d: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Rank 0: the input grid, written once if the file does not exist yet. */
static void input_path(const config_t *c, char *path, size_t len)
{
    if (c->input)
        snprintf(path, len, "%s", c->input);
    else
        snprintf(path, len, "%s/input.bin", c->outdir);
}

/* Rank 0 writes the input file if it does not exist yet (outside the timings). */
static void ensure_input(const config_t *c)
{
    char path[4096];
    input_path(c, path, sizeof(path));
    if (access(path, R_OK) == 0)
        return;
    size_t cells = (size_t)c->n * c->n;
    double *all = malloc(cells * sizeof(double));
    if (!all)
        die("out of memory");
    for (size_t i = 0; i < cells; i++)
        all[i] = (double)((i * 2654435761u) % 1000) / 1000.0;
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0 || write(fd, all, cells * sizeof(double)) != (ssize_t)(cells * sizeof(double)))
        die("cannot write the input file");
    close(fd);
    free(all);
}

static double *read_input(const config_t *c, const char *path)
{
    size_t cells = (size_t)c->n * c->n;
    double *all = malloc(cells * sizeof(double));
    if (!all)
        die("out of memory");
    int fd = open(path, O_RDONLY);
    size_t got = 0;
    while (fd >= 0 && got < cells * sizeof(double)) {
        ssize_t r = read(fd, (char *)all + got, cells * sizeof(double) - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (fd < 0 || got != cells * sizeof(double))
        die("cannot read the input file");
    close(fd);
    return all;
}

/* The block of rank r in the global grid, packed row by row into buf. */
static void pack_block(const config_t *c, const grid_t *g, const double *all, int r, double *buf)
{
    int co[2], lx, ly, x0, y0;
    MPI_Cart_coords(g->cart, r, 2, co);
    block(c->n, g->dims[0], co[0], &lx, &x0);
    block(c->n, g->dims[1], co[1], &ly, &y0);
    for (int i = 0; i < lx; i++)
        memcpy(buf + (size_t)i * ly, all + (size_t)(x0 + i) * c->n + y0, sizeof(double) * ly);
}

/* --read direct: this rank's rows, one pread() each, straight into the grid. */
static void read_direct(const config_t *c, grid_t *g)
{
    double t0 = MPI_Wtime();
    char path[4096];
    input_path(c, path, sizeof(path));
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("cannot open the input file");
    for (int i = 0; i < g->lx; i++) {
        size_t len = sizeof(double) * g->ly, got = 0;
        off_t off = (off_t)(((size_t)(g->x0 + i) * c->n + g->y0) * sizeof(double));
        while (got < len) {
            ssize_t r = pread(fd, (char *)&U(g, i + 1, 1) + got, len - got, off + (off_t)got);
            if (r <= 0)
                die("cannot read the input file");
            got += (size_t)r;
        }
    }
    close(fd);
    g->t_io = MPI_Wtime() - t0;
    g->t[T_READ] += g->t_io;
}

static void distribute(const config_t *c, grid_t *g)
{
    if (c->direct) {
        read_direct(c, g);
        return;
    }
    double t0 = MPI_Wtime();
    double *buf = malloc(sizeof(double) * (size_t)g->lx * g->ly * 2 + 64);
    if (g->rank == 0) {
        char path[4096];
        input_path(c, path, sizeof(path));
        double *all = read_input(c, path);
        g->t_io = MPI_Wtime() - t0;
        double *tmp = malloc(sizeof(double) * ((size_t)c->n / g->dims[0] + 1) *
                             ((size_t)c->n / g->dims[1] + 1));
        for (int r = 1; r < g->size; r++) {
            int co[2], lx, ly, off;
            MPI_Cart_coords(g->cart, r, 2, co);
            block(c->n, g->dims[0], co[0], &lx, &off);
            block(c->n, g->dims[1], co[1], &ly, &off);
            pack_block(c, g, all, r, tmp);
            MPI_Send(tmp, lx * ly, MPI_DOUBLE, r, 1, g->cart);
        }
        pack_block(c, g, all, 0, buf);
        free(tmp);
        free(all);
    } else {
        MPI_Recv(buf, g->lx * g->ly, MPI_DOUBLE, 0, 1, g->cart, MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < g->lx; i++)
        memcpy(&U(g, i + 1, 1), buf + (size_t)i * g->ly, sizeof(double) * g->ly);
    free(buf);
    g->t[T_READ] += MPI_Wtime() - t0;
}

/* ---- border exchange ---- */

static void exchange_sync(grid_t *g)
{
    MPI_Sendrecv(&U(g, 1, 1), g->ly, MPI_DOUBLE, g->up, 10, &U(g, g->lx + 1, 1), g->ly,
                 MPI_DOUBLE, g->down, 10, g->cart, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&U(g, g->lx, 1), g->ly, MPI_DOUBLE, g->down, 11, &U(g, 0, 1), g->ly, MPI_DOUBLE,
                 g->up, 11, g->cart, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&U(g, 1, 1), 1, g->column, g->left, 12, &U(g, 1, g->ly + 1), 1, g->column,
                 g->right, 12, g->cart, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&U(g, 1, g->ly), 1, g->column, g->right, 13, &U(g, 1, 0), 1, g->column, g->left,
                 13, g->cart, MPI_STATUS_IGNORE);
}

static void exchange_start(grid_t *g, MPI_Request req[8])
{
    MPI_Irecv(&U(g, g->lx + 1, 1), g->ly, MPI_DOUBLE, g->down, 10, g->cart, &req[0]);
    MPI_Irecv(&U(g, 0, 1), g->ly, MPI_DOUBLE, g->up, 11, g->cart, &req[1]);
    MPI_Irecv(&U(g, 1, g->ly + 1), 1, g->column, g->right, 12, g->cart, &req[2]);
    MPI_Irecv(&U(g, 1, 0), 1, g->column, g->left, 13, g->cart, &req[3]);
    MPI_Isend(&U(g, 1, 1), g->ly, MPI_DOUBLE, g->up, 10, g->cart, &req[4]);
    MPI_Isend(&U(g, g->lx, 1), g->ly, MPI_DOUBLE, g->down, 11, g->cart, &req[5]);
    MPI_Isend(&U(g, 1, 1), 1, g->column, g->left, 12, g->cart, &req[6]);
    MPI_Isend(&U(g, 1, g->ly), 1, g->column, g->right, 13, g->cart, &req[7]);
}

static void exchange(const config_t *c, grid_t *g)
{
    double t0 = MPI_Wtime();
    if (c->variant == SYNC) {
        exchange_sync(g);
    } else {
        MPI_Request req[8];
        MPI_Status st[8];
        exchange_start(g, req);
        MPI_Waitall(8, req, st);
    }
    g->t[T_COMM] += MPI_Wtime() - t0;
}

/* ---- computation ---- */

static const double omega = 1.5;

/* Updates the cells of `colour` in rows [i0, i1) and columns [j0, j1). */
static void relax(grid_t *g, int colour, int i0, int i1, int j0, int j1)
{
    for (int i = i0; i < i1; i++) {
        int j = j0 + ((g->x0 + i - 1 + g->y0 + j0 - 1 + colour) & 1);
        for (; j < j1; j += 2) {
            double nb = U(g, i - 1, j) + U(g, i + 1, j) + U(g, i, j - 1) + U(g, i, j + 1);
            U(g, i, j) = (1.0 - omega) * U(g, i, j) + omega * 0.25 * nb;
        }
    }
}

/* Work that changes nothing, to make some ranks slower (--imbalance). */
static double ballast(const grid_t *g, int colour)
{
    double s = 0;
    for (int i = 1; i <= g->lx / 2; i++)
        for (int j = 1 + ((i + colour) & 1); j <= g->ly; j += 2) {
            double nb = U(g, i - 1, j) + U(g, i + 1, j) + U(g, i, j - 1) + U(g, i, j + 1);
            s += (1.0 - omega) * U(g, i, j) + omega * 0.25 * nb;
        }
    return s;
}

static volatile double sink;

static void compute(const config_t *c, grid_t *g, int colour)
{
    double t0 = MPI_Wtime();
    relax(g, colour, 1, g->lx + 1, 1, g->ly + 1);
    if (c->imbalance && (g->rank & 1))
        sink = ballast(g, colour);
    g->t[T_COMP] += MPI_Wtime() - t0;
}

/* The overlap variant: border cells of `colour`, then their exchange runs while
 * the interior is computed.  Interior cells of a colour depend only on cells of
 * the other colour, so the result is the same as computing all, then exchanging. */
static void compute_overlapped(const config_t *c, grid_t *g, int colour)
{
    double t0 = MPI_Wtime();
    int lx = g->lx, ly = g->ly;
    relax(g, colour, 1, 2, 1, ly + 1);
    if (lx > 1)
        relax(g, colour, lx, lx + 1, 1, ly + 1);
    relax(g, colour, 2, lx, 1, 2);
    if (ly > 1)
        relax(g, colour, 2, lx, ly, ly + 1);
    double t1 = MPI_Wtime();
    MPI_Request req[8];
    exchange_start(g, req);
    double t2 = MPI_Wtime();
    relax(g, colour, 2, lx, 2, ly);
    if (c->imbalance && (g->rank & 1))
        sink = ballast(g, colour);
    double t3 = MPI_Wtime();
    MPI_Status st[8];
    MPI_Waitall(8, req, st);
    double t4 = MPI_Wtime();
    g->t[T_COMP] += (t1 - t0) + (t3 - t2);
    g->t[T_COMM] += (t2 - t1) + (t4 - t3);
}

/* ---- gather and write ---- */

/* Rank 0 gets the whole grid (row-major, n x n); returns NULL elsewhere. */
static double *gather(const config_t *c, grid_t *g)
{
    double *mine = malloc(sizeof(double) * (size_t)g->lx * g->ly + 8);
    for (int i = 0; i < g->lx; i++)
        memcpy(mine + (size_t)i * g->ly, &U(g, i + 1, 1), sizeof(double) * g->ly);
    if (g->rank != 0) {
        MPI_Send(mine, g->lx * g->ly, MPI_DOUBLE, 0, 2, g->cart);
        free(mine);
        return NULL;
    }
    double *all = malloc(sizeof(double) * (size_t)c->n * c->n);
    double *tmp = malloc(sizeof(double) * ((size_t)c->n / g->dims[0] + 1) *
                         ((size_t)c->n / g->dims[1] + 1));
    for (int r = 0; r < g->size; r++) {
        int co[2], lx, ly, x0, y0;
        MPI_Cart_coords(g->cart, r, 2, co);
        block(c->n, g->dims[0], co[0], &lx, &x0);
        block(c->n, g->dims[1], co[1], &ly, &y0);
        const double *src = mine;
        if (r != 0) {
            MPI_Recv(tmp, lx * ly, MPI_DOUBLE, r, 2, g->cart, MPI_STATUS_IGNORE);
            src = tmp;
        }
        for (int i = 0; i < lx; i++)
            memcpy(all + (size_t)(x0 + i) * c->n + y0, src + (size_t)i * ly, sizeof(double) * ly);
    }
    free(tmp);
    free(mine);
    return all;
}

static void write_posix(const config_t *c, const double *all)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/grid.bin", c->outdir);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    /* one row per write(), as simple codes write a grid */
    for (int i = 0; i < c->n && fd >= 0; i++)
        if (pwrite(fd, all + (size_t)i * c->n, sizeof(double) * c->n,
                   (off_t)i * c->n * sizeof(double)) < 0)
            die("cannot write grid.bin");
    if (fd < 0)
        die("cannot open grid.bin");
    close(fd);
}

static void write_mpiio(const config_t *c, grid_t *g)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/grid.bin", c->outdir);
    int gsizes[2] = { c->n, c->n }, lsizes[2] = { g->lx, g->ly }, starts[2] = { g->x0, g->y0 };
    int msizes[2] = { g->lx + 2, g->ly + 2 }, mstarts[2] = { 1, 1 };
    MPI_Datatype ftype, mtype;
    MPI_Type_create_subarray(2, gsizes, lsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &ftype);
    MPI_Type_create_subarray(2, msizes, lsizes, mstarts, MPI_ORDER_C, MPI_DOUBLE, &mtype);
    MPI_Type_commit(&ftype);
    MPI_Type_commit(&mtype);
    MPI_File fh;
    if (MPI_File_open(g->cart, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh) !=
        MPI_SUCCESS)
        die("cannot open grid.bin with MPI-IO");
    MPI_File_set_view(fh, 0, MPI_DOUBLE, ftype, "native", MPI_INFO_NULL);
    MPI_File_write_all(fh, g->u, 1, mtype, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
}

static void checkpoint(const config_t *c, grid_t *g)
{
    double t0 = MPI_Wtime();
    if (c->variant == HAND) {
        write_mpiio(c, g);
    } else {
        double *all = gather(c, g);
        if (all)
            write_posix(c, all);
        free(all);
    }
    g->t[T_WRITE] += MPI_Wtime() - t0;
}

static void parse(int argc, char **argv, config_t *c)
{
    *c = (config_t){ .n = 512, .iters = 100, .k = 50, .variant = SYNC };
    if (argc < 2 || argv[1][0] == '-')
        die("usage: sor2d OUTDIR [--n N] [--iters I] [--k K] [--variant sync|hand|overlap] "
            "[--imbalance] [--input FILE] [--dims PxQ] [--read scatter|direct]");
    c->outdir = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--imbalance") == 0) {
            c->imbalance = 1;
            continue;
        }
        if (!v)
            die("option needs a value");
        i++;
        if (strcmp(a, "--n") == 0)
            c->n = atoi(v);
        else if (strcmp(a, "--iters") == 0)
            c->iters = atoi(v);
        else if (strcmp(a, "--k") == 0)
            c->k = atoi(v);
        else if (strcmp(a, "--input") == 0)
            c->input = v;
        else if (strcmp(a, "--read") == 0)
            c->direct = !strcmp(v, "direct") ? 1 : !strcmp(v, "scatter") ? 0
                      : (die("--read wants scatter or direct"), 0);
        else if (strcmp(a, "--dims") == 0) {
            if (sscanf(v, "%dx%d", &c->dims[0], &c->dims[1]) != 2 || c->dims[0] < 1 ||
                c->dims[1] < 1)
                die("--dims wants PxQ");
        }
        else if (strcmp(a, "--variant") == 0)
            c->variant = !strcmp(v, "sync") ? SYNC : !strcmp(v, "hand") ? HAND
                       : !strcmp(v, "overlap") ? OVERLAP : (die("unknown variant"), 0);
        else
            die("unknown option");
    }
    if (c->n < 4 || c->iters < 1 || c->k < 1)
        die("bad sizes");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    config_t c;
    grid_t g = { 0 };
    parse(argc, argv, &c);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0)
        ensure_input(&c);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    MPI_Comm_size(MPI_COMM_WORLD, &g.size);
    int periods[2] = { 0, 0 };
    if (c.dims[0] && c.dims[0] * c.dims[1] != g.size)
        die("--dims does not match the number of ranks");
    g.dims[0] = c.dims[0];
    g.dims[1] = c.dims[1];
    MPI_Dims_create(g.size, 2, g.dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, g.dims, periods, 0, &g.cart);
    MPI_Comm_rank(g.cart, &g.rank);
    MPI_Cart_coords(g.cart, g.rank, 2, g.coords);
    MPI_Cart_shift(g.cart, 0, 1, &g.up, &g.down);
    MPI_Cart_shift(g.cart, 1, 1, &g.left, &g.right);
    block(c.n, g.dims[0], g.coords[0], &g.lx, &g.x0);
    block(c.n, g.dims[1], g.coords[1], &g.ly, &g.y0);
    if (g.lx < 2 || g.ly < 2)
        die("grid too small for this many ranks");
    g.u = calloc((size_t)(g.lx + 2) * (g.ly + 2), sizeof(double));
    MPI_Type_vector(g.lx, 1, g.ly + 2, MPI_DOUBLE, &g.column);
    MPI_Type_commit(&g.column);

    distribute(&c, &g);
    exchange(&c, &g);
    for (int it = 1; it <= c.iters; it++) {
        for (int colour = 0; colour < 2; colour++) {
            if (c.variant == OVERLAP) {
                compute_overlapped(&c, &g, colour);
            } else {
                compute(&c, &g, colour);
                exchange(&c, &g);
            }
        }
        if (it % c.k == 0 || it == c.iters)
            checkpoint(&c, &g);
    }

    /* The checksum, from the gathered grid in a fixed order (outside the timings).
     * The timings' maximum by an all-reduction: with MPI_Reduce, rank 1 began
     * MPI_Finalize while rank 0 still received its part, and Debian's MPICH over
     * UCX's TCP hung in MPI_Finalize in 10 of 10 plain runs of 256^2
     * (docs/cluster.md); with MPI_Allreduce, 0 of 24. */
    double total = MPI_Wtime() - start;
    double *all = gather(&c, &g);
    double times[T_COUNT + 1], maxt[T_COUNT + 1];
    memcpy(times, g.t, sizeof(g.t));
    times[T_COUNT] = total;
    MPI_Allreduce(times, maxt, T_COUNT + 1, MPI_DOUBLE, MPI_MAX, g.cart);
    if (g.rank == 0) {
        double sum = 0;
        for (size_t i = 0; i < (size_t)c.n * c.n; i++)
            sum += all[i] * (double)(i % 17 + 1);
        char path[4096];
        snprintf(path, sizeof(path), "%s/result.txt", c.outdir);
        FILE *f = fopen(path, "w");
        if (!f)
            die("cannot write result.txt");
        fprintf(f, "n %d iters %d ranks %d (%d x %d)\nchecksum %.17g\n", c.n, c.iters, g.size,
                g.dims[0], g.dims[1], sum);
        fclose(f);
        printf("checksum %.17g\n", sum);
        for (int p = 0; p < T_COUNT; p++)
            printf("time.%s %.6f\n", phase_names[p], maxt[p]);
        printf("time.total %.6f\n", maxt[T_COUNT]);
        /* For the papers' performance model (bench/model.py): the read phase split
         * into rank 0's file read and the distribution, and the rows of ranks. */
        printf("model.io %.6f\n", g.t_io);
        printf("model.dist %.6f\n", g.t[T_READ] - g.t_io);
        printf("model.rows %d\n", g.dims[0]);
    }
    free(all);
    free(g.u);
    MPI_Type_free(&g.column);
    MPI_Comm_free(&g.cart);
    MPI_Finalize();
    return 0;
}
