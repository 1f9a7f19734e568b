/* selfquick.c — N rounds of a blocking 4 KiB MPI_Send to itself and the
 * MPI_Recv of it into a 4 KiB heap block: the send's site passes once explored
 * (the original call costs less than converting), the receive is refused for
 * its memory (too small to have pages of its own), so both take the quick path
 * of a site that runs the original call (tests/integration/fastpath_count.py
 * counts its instructions, CALLS 2).  Open MPI's self transport sends 4 KiB by
 * rendezvous, which a blocking send to itself never ends: its eager limit is
 * raised before MPI_Init (the program's own environment; nothing else reads it).
 * usage: selfquick N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEN = 4096 };

int main(int argc, char **argv)
{
    setenv("OMPI_MCA_btl_self_eager_limit", "65536", 0);
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 1000, me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    unsigned char *out = malloc(LEN), *in = malloc(LEN);
    long sum = 0, want = 0;
    for (int i = 0; i < n; i++) {
        memset(out, i & 0xff, LEN);
        MPI_Send(out, LEN, MPI_BYTE, me, 7, MPI_COMM_WORLD);
        MPI_Recv(in, LEN, MPI_BYTE, me, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += in[i % LEN] + in[LEN - 1];
        want += 2 * (i & 0xff);
    }
    printf("%s: %d rounds, sum %ld\n", sum == want ? "ok" : "MISMATCH", n, sum);
    free(out);
    free(in);
    MPI_Finalize();
    return sum == want ? 0 : 1;
}
