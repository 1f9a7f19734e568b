/* pnetcdf.c — PnetCDF in independent data mode, as users write it: every rank
 * puts its part of two variables with many small ncmpi_put_vara_* calls, the
 * ranks' pieces interleaved in the file, reads its own pieces back, and closes.
 * The file is OUTDIR/data.nc; the transparency harness compares it with and
 * without unblock (byte for byte, and with ncmpidiff).  A rank that reads back
 * other values than it wrote prints MISMATCH.
 *
 * usage: pnetcdf OUTDIR */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 256
#define COLS 512
#define SEG 16 /* "grid": a rank puts its rows SEG values at a time */
#define CELL 8 /* "cells": CELL x CELL cells, cell k by rank k mod np */

static int rank, np;

static void check(int rc, const char *what)
{
    if (rc != NC_NOERR) {
        fprintf(stderr, "rank %d: %s: %s\n", rank, what, ncmpi_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static double value_grid(int r, int c) { return r * 1000.0 + c + 0.25; }
static int value_cells(int r, int c) { return (r * 7919 + c * 31) ^ 0x5a5a; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: pnetcdf OUTDIR\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/data.nc", argv[1]);

    int nc, dim[2], grid, cells;
    check(ncmpi_create(MPI_COMM_WORLD, path, NC_CLOBBER | NC_64BIT_DATA, MPI_INFO_NULL, &nc),
          "ncmpi_create");
    check(ncmpi_def_dim(nc, "y", ROWS, &dim[0]), "ncmpi_def_dim");
    check(ncmpi_def_dim(nc, "x", COLS, &dim[1]), "ncmpi_def_dim");
    check(ncmpi_def_var(nc, "grid", NC_DOUBLE, 2, dim, &grid), "ncmpi_def_var");
    check(ncmpi_def_var(nc, "cells", NC_INT, 2, dim, &cells), "ncmpi_def_var");
    check(ncmpi_put_att_int(nc, NC_GLOBAL, "ranks", NC_INT, 1, &np), "ncmpi_put_att_int");
    check(ncmpi_enddef(nc), "ncmpi_enddef");
    check(ncmpi_begin_indep_data(nc), "ncmpi_begin_indep_data");

    /* grid: row r is rank r mod np's, put SEG values at a time (contiguous in
     * the file), the ranks' rows interleaved. */
    double seg[SEG];
    for (int r = rank; r < ROWS; r += np)
        for (int c = 0; c < COLS; c += SEG) {
            MPI_Offset start[2] = { r, c }, count[2] = { 1, SEG };
            for (int i = 0; i < SEG; i++)
                seg[i] = value_grid(r, c + i);
            check(ncmpi_put_vara_double(nc, grid, start, count, seg), "ncmpi_put_vara_double");
        }
    /* cells: a subarray of the variable each (PnetCDF sets a file view for it). */
    int cell[CELL * CELL];
    const int cells_per_row = COLS / CELL, ncells = (ROWS / CELL) * cells_per_row;
    for (int k = rank; k < ncells; k += np) {
        int r0 = k / cells_per_row * CELL, c0 = k % cells_per_row * CELL;
        MPI_Offset start[2] = { r0, c0 }, count[2] = { CELL, CELL };
        for (int i = 0; i < CELL; i++)
            for (int j = 0; j < CELL; j++)
                cell[i * CELL + j] = value_cells(r0 + i, c0 + j);
        check(ncmpi_put_vara_int(nc, cells, start, count, cell), "ncmpi_put_vara_int");
    }

    /* Each rank reads its own pieces back (a rank reads its own writes at once). */
    int bad = 0;
    for (int r = rank; r < ROWS; r += np * 7) {
        double row[COLS];
        MPI_Offset start[2] = { r, 0 }, count[2] = { 1, COLS };
        check(ncmpi_get_vara_double(nc, grid, start, count, row), "ncmpi_get_vara_double");
        for (int c = 0; c < COLS; c++)
            bad += row[c] != value_grid(r, c);
    }
    for (int k = rank; k < ncells; k += np * 13) {
        int r0 = k / cells_per_row * CELL, c0 = k % cells_per_row * CELL;
        MPI_Offset start[2] = { r0, c0 }, count[2] = { CELL, CELL };
        check(ncmpi_get_vara_int(nc, cells, start, count, cell), "ncmpi_get_vara_int");
        for (int i = 0; i < CELL; i++)
            for (int j = 0; j < CELL; j++)
                bad += cell[i * CELL + j] != value_cells(r0 + i, c0 + j);
    }
    if (bad)
        printf("MISMATCH: rank %d read %d values back that it did not write\n", rank, bad);

    check(ncmpi_end_indep_data(nc), "ncmpi_end_indep_data");
    check(ncmpi_close(nc), "ncmpi_close");
    MPI_Finalize();
    return bad != 0;
}
