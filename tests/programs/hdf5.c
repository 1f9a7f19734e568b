/* hdf5.c — parallel HDF5 with its default, independent transfer, as users write
 * it: every rank writes its part of a contiguous and of a chunked dataset with
 * many small hyperslab writes, the ranks' pieces interleaved in the file, then
 * reads its own pieces back and closes.  The file is OUTDIR/data.h5; the
 * transparency harness compares it with and without unblock (byte for byte, and
 * with h5diff).  A rank that reads back other values than it wrote prints
 * MISMATCH.
 *
 * usage: hdf5 OUTDIR [ROWS [noread]]
 *   ROWS    rows of both datasets (a multiple of 64; default 256); given, rank 0
 *           prints the seconds from H5Fcreate to the end of H5Fclose (a benchmark)
 *   noread  no reading back
 *
 * The datasets do not record times (H5Pset_obj_track_times off), so two runs
 * write the same bytes: HDF5 otherwise stores the second the object was made. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS 512
#define SEG 16   /* contiguous dataset: a rank writes its rows SEG values at a time */
#define CHUNK 64 /* chunked dataset: CHUNK x CHUNK chunks ... */
#define CELL 8   /* ... written in CELL x CELL cells, cell k by rank k mod np */

static int rank, np, rows = 256;

static void check(herr_t rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "rank %d: %s failed\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static double value_contig(int r, int c) { return r * 1000.0 + c + 0.25; }
static int value_chunked(int r, int c) { return (r * 7919 + c * 31) ^ 0x5a5a; }

/* One hyperslab write of count[0] x count[1] values at start, independent transfer
 * (the default: no H5Pset_dxpl_mpio). */
static void put(hid_t ds, hid_t type, int r, int c, int nr, int nc, const void *buf)
{
    hsize_t start[2] = { (hsize_t)r, (hsize_t)c }, count[2] = { (hsize_t)nr, (hsize_t)nc };
    hid_t fs = H5Dget_space(ds);
    check(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), "select");
    hid_t ms = H5Screate_simple(2, count, NULL);
    check(H5Dwrite(ds, type, ms, fs, H5P_DEFAULT, buf), "H5Dwrite");
    H5Sclose(ms);
    H5Sclose(fs);
}

static void get(hid_t ds, hid_t type, int r, int c, int nr, int nc, void *buf)
{
    hsize_t start[2] = { (hsize_t)r, (hsize_t)c }, count[2] = { (hsize_t)nr, (hsize_t)nc };
    hid_t fs = H5Dget_space(ds);
    check(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), "select");
    hid_t ms = H5Screate_simple(2, count, NULL);
    check(H5Dread(ds, type, ms, fs, H5P_DEFAULT, buf), "H5Dread");
    H5Sclose(ms);
    H5Sclose(fs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: hdf5 OUTDIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/data.h5", argv[1]);
    if (argc > 2)
        rows = atoi(argv[2]);
    int readback = !(argc > 3 && strcmp(argv[3], "noread") == 0);
    if (rows <= 0 || rows % CHUNK) {
        if (rank == 0)
            fprintf(stderr, "hdf5: ROWS must be a positive multiple of %d\n", CHUNK);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    check(file, "H5Fcreate");
    H5Pclose(fapl);

    hsize_t dims[2] = { rows, COLS };
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    check(H5Pset_obj_track_times(dcpl, 0), "track times");
    hid_t contig = H5Dcreate2(file, "contiguous", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl,
                              H5P_DEFAULT);
    check(contig, "H5Dcreate2 contiguous");
    hsize_t cdims[2] = { CHUNK, CHUNK };
    check(H5Pset_chunk(dcpl, 2, cdims), "H5Pset_chunk");
    hid_t chunked = H5Dcreate2(file, "chunked", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl,
                               H5P_DEFAULT);
    check(chunked, "H5Dcreate2 chunked");
    H5Pclose(dcpl);
    H5Sclose(space);

    /* Contiguous: row r is rank r mod np's, written SEG values at a time, the
     * ranks' rows interleaved in the file. */
    double seg[SEG];
    for (int r = rank; r < rows; r += np)
        for (int c = 0; c < COLS; c += SEG) {
            for (int i = 0; i < SEG; i++)
                seg[i] = value_contig(r, c + i);
            put(contig, H5T_NATIVE_DOUBLE, r, c, 1, SEG, seg);
        }
    /* Chunked: cell k (row-major over the CELL x CELL cells) is rank k mod np's;
     * each cell is CELL runs of CELL values inside one chunk. */
    int cell[CELL * CELL];
    const int cells_per_row = COLS / CELL, ncells = (rows / CELL) * cells_per_row;
    for (int k = rank; k < ncells; k += np) {
        int r0 = k / cells_per_row * CELL, c0 = k % cells_per_row * CELL;
        for (int i = 0; i < CELL; i++)
            for (int j = 0; j < CELL; j++)
                cell[i * CELL + j] = value_chunked(r0 + i, c0 + j);
        put(chunked, H5T_NATIVE_INT, r0, c0, CELL, CELL, cell);
    }

    /* Each rank reads its own pieces back (a rank reads its own writes at once). */
    int bad = 0;
    for (int r = rank; readback && r < rows; r += np * 7) {
        double row[COLS];
        get(contig, H5T_NATIVE_DOUBLE, r, 0, 1, COLS, row);
        for (int c = 0; c < COLS; c++)
            bad += row[c] != value_contig(r, c);
    }
    for (int k = rank; readback && k < ncells; k += np * 13) {
        int r0 = k / cells_per_row * CELL, c0 = k % cells_per_row * CELL;
        get(chunked, H5T_NATIVE_INT, r0, c0, CELL, CELL, cell);
        for (int i = 0; i < CELL; i++)
            for (int j = 0; j < CELL; j++)
                bad += cell[i * CELL + j] != value_chunked(r0 + i, c0 + j);
    }
    if (bad)
        printf("MISMATCH: rank %d read %d values back that it did not write\n", rank, bad);

    /* An attribute: metadata, written when the file is closed. */
    hid_t as = H5Screate(H5S_SCALAR);
    hid_t at = H5Acreate2(contig, "ranks", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT);
    check(at, "H5Acreate2");
    check(H5Awrite(at, H5T_NATIVE_INT, &np), "H5Awrite");
    H5Aclose(at);
    H5Sclose(as);

    H5Dclose(contig);
    H5Dclose(chunked);
    check(H5Fclose(file), "H5Fclose");
    if (argc > 2 && rank == 0)
        printf("hdf5: %d ranks, %d x %d, %.3f s from create to close\n", np, rows, COLS,
               MPI_Wtime() - t0);
    MPI_Finalize();
    return bad != 0;
}
