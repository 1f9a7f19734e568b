/* smallw.c — 8-byte independent MPI-IO writes (the `ior -a MPIIO -t 8 -b 4m` pattern,
 * and interleaved cells), against the same bytes written with one collective call
 * through a file view: the comparison of MPI-IO write-behind (docs/mpiio.md).
 *
 *   --pattern segment      each rank writes its own segment of B bytes, T at a time
 *   --pattern interleaved  cell i (T bytes) belongs to rank i mod np
 *   --how independent      one MPI_File_write_at per T bytes
 *   --how view             a file view (vector) and one MPI_File_write_all
 *   --comm self            each rank opens the file on MPI_COMM_SELF (as PnetCDF's
 *                          handle for independent data), not on MPI_COMM_WORLD
 *   --read rdonly|rdwr     then the file opened again (MPI_MODE_RDONLY, as IOR's
 *                          read phase; or MPI_MODE_RDWR, as HDF5 opens one) and
 *                          each rank's bytes read back T at a time with
 *                          MPI_File_read_at: "time.read" (the reads alone, the
 *                          maximum over the ranks) and "read.wrong" (bytes that
 *                          differ, summed; exits 1 if any)
 *
 * The time counted is from MPI_File_open to the end of MPI_File_close (maximum over
 * the ranks); rank 0 prints "time.total S", "time.calls S" (the writes alone),
 * "time.open S" and "time.close S" (each the maximum over the ranks), "bw.mbs"
 * (file MB per second of total time) and the file's checksum, so every way can
 * be checked to write the same bytes.
 *
 * usage: smallw OUTDIR [--pattern P] [--how H] [--comm C] [--read R] [--t BYTES]
 *               [--b BYTES] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    const char *pattern = "segment", *how = "independent", *comm = "world", *rd = "none";
    long t = 8, b = 4 << 20;
    if (argc < 2) {
        fprintf(stderr, "usage: smallw OUTDIR [--pattern segment|interleaved] "
                        "[--how independent|view] [--comm world|self] [--read none|rdonly|rdwr] "
                        "[--t BYTES] [--b BYTES]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--pattern"))
            pattern = argv[i + 1];
        else if (!strcmp(argv[i], "--how"))
            how = argv[i + 1];
        else if (!strcmp(argv[i], "--comm"))
            comm = argv[i + 1];
        else if (!strcmp(argv[i], "--read"))
            rd = argv[i + 1];
        else if (!strcmp(argv[i], "--t"))
            t = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--b"))
            b = atol(argv[i + 1]);
    }
    int inter = !strcmp(pattern, "interleaved"), view = !strcmp(how, "view");
    long n = b / t; /* writes per rank */
    char *data = malloc((size_t)b);
    for (long i = 0; i < b; i++)
        data[i] = (char)('A' + (rank * 7 + i / t) % 26);
    char path[4096];
    snprintf(path, sizeof path, "%s/smallw.dat", argv[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_File fh;
    MPI_File_open(strcmp(comm, "self") ? MPI_COMM_WORLD : MPI_COMM_SELF, path,
                  MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    double t1 = MPI_Wtime();
    if (view) {
        MPI_Datatype cell, ft;
        MPI_Type_contiguous((int)t, MPI_BYTE, &cell);
        if (inter)
            MPI_Type_vector((int)n, 1, np, cell, &ft);
        else
            MPI_Type_contiguous((int)n, cell, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, inter ? (MPI_Offset)rank * t : (MPI_Offset)rank * b, MPI_BYTE, ft,
                          "native", MPI_INFO_NULL);
        MPI_File_write_all(fh, data, (int)b, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Type_free(&ft);
        MPI_Type_free(&cell);
    } else {
        for (long i = 0; i < n; i++) {
            MPI_Offset off = inter ? (MPI_Offset)(i * np + rank) * t : (MPI_Offset)rank * b + i * t;
            MPI_File_write_at(fh, off, data + i * t, (int)t, MPI_BYTE, MPI_STATUS_IGNORE);
        }
    }
    double t2 = MPI_Wtime();
    MPI_File_close(&fh);
    double t3 = MPI_Wtime();
    double mine[4] = { t3 - t0, t2 - t1, t1 - t0, t3 - t2 }, maxt[4];
    MPI_Reduce(mine, maxt, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen(path, "rb");
        uint64_t h = 1469598103934665603ull;
        int c;
        long len = 0;
        while (f && (c = getc(f)) != EOF) {
            h = (h ^ (unsigned char)c) * 1099511628211ull;
            len++;
        }
        if (f)
            fclose(f);
        printf("bytes %ld\nchecksum %llu\ntime.total %.6f\ntime.calls %.6f\ntime.open %.6f\ntime.close %.6f\n"
               "bw.mbs %.2f\n", len, (unsigned long long)h, maxt[0], maxt[1], maxt[2], maxt[3],
               len / 1e6 / maxt[0]);
    }
    long wrong = 0;
    if (strcmp(rd, "none")) {
        char *back = malloc((size_t)b);
        MPI_File_open(strcmp(comm, "self") ? MPI_COMM_WORLD : MPI_COMM_SELF, path,
                      strcmp(rd, "rdwr") ? MPI_MODE_RDONLY : MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_Barrier(MPI_COMM_WORLD);
        double r0 = MPI_Wtime();
        for (long i = 0; i < n; i++) {
            MPI_Offset off = inter ? (MPI_Offset)(i * np + rank) * t : (MPI_Offset)rank * b + i * t;
            MPI_File_read_at(fh, off, back + i * t, (int)t, MPI_BYTE, MPI_STATUS_IGNORE);
        }
        double rt = MPI_Wtime() - r0, rmax;
        MPI_File_close(&fh);
        long mine_wrong = 0;
        for (long i = 0; i < b; i++)
            mine_wrong += back[i] != data[i];
        MPI_Reduce(&rt, &rmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&mine_wrong, &wrong, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf("time.read %.6f\nread.wrong %ld\n", rmax, wrong);
        free(back);
    }
    free(data);
    MPI_Finalize();
    return wrong != 0;
}
