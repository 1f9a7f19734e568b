/* ncpattern.c — a file written as PnetCDF writes one (its tst_multi_redefine test,
 * traced here call by call): two handles on the same file, one opened on
 * MPI_COMM_WORLD for the header and the collective calls, one on MPI_COMM_SELF
 * for independent data.  What it times is what MPI-IO write-behind does to a
 * handle that sees many collective calls and almost no independent writes
 * (docs/mpiio.md, quiet files; docs/performance.md).
 *
 * Each of FILES files (OUTDIR/ncpattern-<f mod 2>.dat) is created with a header
 * of 256 bytes, then VARS variables are added one by one.  Adding variable v:
 *   - the header grows by 64 bytes and the variables already written move up by
 *     64 (PnetCDF's redef/enddef): each one read with MPI_File_read_at_all, a
 *     barrier, and written back with MPI_File_write_at_all through a file view at its place
 *     (set_view, the transfer, set_view back to bytes), then rank 0 writes the
 *     header with MPI_File_write_at on the collective handle;
 *   - each rank writes its N doubles of v: `--mode indep` one MPI_File_write_at on
 *     the MPI_COMM_SELF handle, `coll` one MPI_File_write_at_all on the
 *     collective handle, both through a view as above; rank 0 then writes the
 *     4-byte record count (the self handle, or the collective one);
 *   - ncmpi_sync: MPI_File_sync of both handles and a barrier; then every rank
 *     reads back its part of every variable so far (read_at on the self handle,
 *     read_at_all on the collective one) and checks it.
 * Rank 0 prints time.total (s, open of the first file to close of the last, the
 * slowest rank), file.ms (the mean a file), calls.coll and calls.indep (the
 * calls a rank made on each handle), read.wrong (exit status 1 if not 0) and the
 * checksum of the last file.
 *
 * usage: ncpattern OUTDIR [--files F] [--vars V] [--n N] [--mode indep|coll]
 *        (8, 16, 100, indep) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HDR0 256  /* the header's first size */
#define HDR_STEP 64 /* what each variable adds to it */

static int rank, np, n, indep;
static long coll_calls, indep_calls;

static void fail(const char *what, const char *name)
{
    fprintf(stderr, "ncpattern: %s %s\n", what, name);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Where rank's part of variable j lies while the file has v variables. */
static MPI_Offset place(int v, int j)
{
    return HDR0 + (MPI_Offset)HDR_STEP * v + ((MPI_Offset)j * np + rank) * n * 8;
}

static double value(int f, int j, long i)
{
    return (double)f * 1000003 + j * 1009 + rank * 101 + (double)i;
}

/* One transfer of the rank's N doubles at `at` through a view, as PnetCDF makes
 * it: the view set, the transfer at 0, the view set back to bytes. */
static void xfer(MPI_File fh, int collective, int write, MPI_Offset at, double *buf)
{
    MPI_File_set_view(fh, at, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    if (write && collective)
        MPI_File_write_at_all(fh, 0, buf, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    else if (write)
        MPI_File_write_at(fh, 0, buf, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    else if (collective)
        MPI_File_read_at_all(fh, 0, buf, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    else
        MPI_File_read_at(fh, 0, buf, n, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    *(collective ? &coll_calls : &indep_calls) += 3;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int files = 8, vars = 16;
    const char *mode = "indep";
    n = 100;
    if (argc < 2) {
        fprintf(stderr, "usage: ncpattern OUTDIR [--files F] [--vars V] [--n N] "
                        "[--mode indep|coll]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--files"))
            files = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--vars"))
            vars = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--n"))
            n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--mode"))
            mode = argv[i + 1];
        else
            fail("unknown option", argv[i]);
    }
    indep = !strcmp(mode, "indep");
    if (files < 1 || vars < 1 || n < 1 || (!indep && strcmp(mode, "coll")))
        fail("FILES, VARS and N positive, the mode indep or coll:", mode);
    double *buf = malloc((size_t)n * sizeof *buf), *tmp = malloc((size_t)n * sizeof *tmp);
    char hdr[HDR0 + HDR_STEP * 64], path[4096];
    long wrong = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int f = 0; f < files; f++) {
        snprintf(path, sizeof path, "%s/ncpattern-%d.dat", argv[1], f % 2);
        MPI_File c, s = MPI_FILE_NULL;
        if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                          &c) != MPI_SUCCESS)
            fail("cannot open", path);
        MPI_File_set_size(c, 0);
        if (indep && MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR, MPI_INFO_NULL, &s) !=
                         MPI_SUCCESS)
            fail("cannot open on MPI_COMM_SELF", path);
        MPI_File data = indep ? s : c;
        for (int v = 0; v <= vars; v++) {
            for (int j = v - 1; j >= 0; j--) { /* the redefine: every variable moves up */
                xfer(c, 1, 0, place(v, j), tmp);
                MPI_Barrier(MPI_COMM_WORLD); /* every part read before any moves over it */
                xfer(c, 1, 1, place(v + 1, j), tmp);
            }
            int len = HDR0 + HDR_STEP * (v < 64 ? v : 63);
            memset(hdr, 'A' + (f + v) % 26, (size_t)len);
            if (rank == 0) {
                MPI_File_write_at(c, 0, hdr, len, MPI_BYTE, MPI_STATUS_IGNORE);
                coll_calls++;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (v == vars)
                break;
            for (long i = 0; i < n; i++)
                buf[i] = value(f, v, i);
            xfer(data, !indep, 1, place(v + 1, v), buf);
            int32_t recs = v + 1;
            if (rank == 0) { /* the record count, after the processes agree on it */
                MPI_File_write_at(data, HDR0 - 4, &recs, 4, MPI_BYTE, MPI_STATUS_IGNORE);
                *(indep ? &indep_calls : &coll_calls) += 1;
            }
            if (indep) {
                MPI_File_sync(s);
                indep_calls++;
            }
            MPI_File_sync(c);
            coll_calls++;
            MPI_Barrier(MPI_COMM_WORLD);
            for (int j = 0; j <= v; j++) {
                xfer(data, !indep, 0, place(v + 1, j), tmp);
                for (long i = 0; i < n; i++)
                    wrong += tmp[i] != value(f, j, i);
            }
        }
        if (indep)
            MPI_File_close(&s);
        MPI_File_close(&c);
    }
    double secs = MPI_Wtime() - t0, maxs;
    long allwrong;
    MPI_Reduce(&secs, &maxs, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&wrong, &allwrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *fp = fopen(path, "rb");
        uint64_t h = 1469598103934665603ull;
        int ch;
        while (fp && (ch = getc(fp)) != EOF)
            h = (h ^ (uint64_t)(unsigned char)ch) * 1099511628211ull;
        if (fp)
            fclose(fp);
        printf("checksum %llu\ntime.total %.4f\nfile.ms %.2f\ncalls.coll %ld\n"
               "calls.indep %ld\nread.wrong %ld\n",
               (unsigned long long)h, maxs, maxs / files * 1e3, coll_calls, indep_calls,
               allwrong);
    }
    free(buf);
    free(tmp);
    MPI_Finalize();
    return allwrong ? 1 : 0;
}
