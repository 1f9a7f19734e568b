/* fatalrecv.c — a receive that MPI must refuse with MPI_ERR_TRUNCATE, errors
 * fatal (the default handler).  Rank 0 sends 2 MiB; rank 1 receives them into a
 * 1 MiB buffer.  Without unblock rank 1 dies inside its MPI_Recv; a conversion
 * returns from MPI_Recv first, and the error surfaces later, from a test of the
 * request the program never made: unblock must then name the program's call and
 * its site.  A warm-up exchange first makes the communicator and the datatype
 * known, so that the receive may be converted at all.
 *
 * usage: fatalrecv OUTDIR [late|early]
 *   late   (the default) rank 1 is in MPI_Recv before rank 0 sends (200 ms later)
 *   early  the message's envelope has arrived before rank 1 calls MPI_Recv
 * Rank 1 prints "rank 1: MPI_Recv returned" to stdout if its call returns, then
 * computes for 2 s and reads the buffer; reaching the end is a failure (exit 3).
 * OUTDIR is unused (the harness convention). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MiB (1024 * 1024)

static void pause_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int early = argc > 2 && strcmp(argv[2], "early") == 0;
    if (size < 2) {
        fprintf(stderr, "fatalrecv: needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = malloc(2 * MiB);
    memset(buf, rank + 1, 2 * MiB);
    int token = 0;
    MPI_Request req;
    if (rank == 0) {
        MPI_Send(buf, 64 * 1024, MPI_BYTE, 1, 0, MPI_COMM_WORLD); /* warm-up */
        if (early) {
            MPI_Isend(buf, 2 * MiB, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req);
            MPI_Send(&token, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            pause_ms(200);
            MPI_Send(buf, 2 * MiB, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        }
    } else if (rank == 1) {
        MPI_Recv(buf, 64 * 1024, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (early) {
            MPI_Recv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            pause_ms(100);
        }
        MPI_Recv(buf, MiB, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* truncated */
        printf("rank 1: MPI_Recv returned\n");
        fflush(stdout);
        pause_ms(2000); /* computing */
        long sum = 0;
        for (int i = 0; i < MiB; i += 4096)
            sum += buf[i];
        printf("rank 1: read the buffer (%ld)\n", sum);
        fflush(stdout);
        return 3;
    }
    MPI_Finalize();
    return 0;
}
