"""ring.py — mpi4py with numpy buffers (Send/Recv/Sendrecv/Allreduce, small and
3 MB) and pickled objects (send/recv, small and large; bcast).  Each rank writes OUTDIR/rank-<r>.txt; rank 0 also
writes a results file with small writes, as a script would.

mpi4py's default error handler returns errors to raise exceptions, so unblock
runs every call blocking (the error must come from the call itself); with --fatal
the script asks mpi4py for MPI_ERRORS_ARE_FATAL and the calls can be converted.

usage: python3 ring.py OUTDIR [--fatal]"""
import os
import sys

import mpi4py
import numpy as np

if '--fatal' in sys.argv[2:]:
    mpi4py.rc.errors = 'fatal'
from mpi4py import MPI  # noqa: E402

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
out = sys.argv[1]
n, iters = 5000, 10

if rank == 0:
    full = (np.arange(n * size, dtype=np.float64) * 7919 % 1000) / 10.0
    for r in range(1, size):
        comm.Send(full[r * n:(r + 1) * n], dest=r, tag=1)
    a = full[:n].copy()
else:
    a = np.empty(n, dtype=np.float64)
    comm.Recv(a, source=0, tag=1)

left, right = (rank - 1) % size, (rank + 1) % size
halo = np.empty(2, dtype=np.float64)
for it in range(iters):
    comm.Sendrecv(a[-1:], dest=right, sendtag=2, recvbuf=halo[0:1], source=left, recvtag=2)
    comm.Sendrecv(a[:1], dest=left, sendtag=3, recvbuf=halo[1:2], source=right, recvtag=3)
    a[0] = 0.5 * (a[0] + halo[0])
    a[-1] = 0.5 * (a[-1] + halo[1])
    a[1:-1] = 0.25 * a[:-2] + 0.5 * a[1:-1] + 0.25 * a[2:]

# Whole blocks: numpy arrays large enough to be converted (their receive buffer
# read at once, from the end), and a large pickled object (MPI_Mprobe/MPI_Mrecv).
big = np.arange(400000, dtype=np.float64) * (rank + 1)
got_big = np.empty_like(big)
for it in range(3):
    comm.Sendrecv(big, dest=right, sendtag=5, recvbuf=got_big, source=left, recvtag=5)
    big[:] = 0.5 * big + 0.25 * got_big[::-1]
bigreq = comm.isend({'rank': rank, 'data': [float(x) for x in big[:20000]]}, dest=right, tag=6)
bigobj = comm.recv(source=left, tag=6)
bigreq.wait()

total = np.zeros(1)
comm.Allreduce(np.array([a.sum()]), total, op=MPI.SUM)
meta = comm.bcast({'iters': iters, 'n': n} if rank == 0 else None, root=0)
req = comm.isend({'rank': rank, 'first': float(a[0])}, dest=right, tag=4)
got = comm.recv(source=left, tag=4)
req.wait()

with open(os.path.join(out, 'rank-%d.txt' % rank), 'w') as f:
    f.write('rank %d of %d %r\n' % (rank, size, meta))
    f.write('total %.17g\n' % total[0])
    f.write('from %d first %.17g\n' % (got['rank'], got['first']))
    f.write('block sum %.17g, object from %d sum %.17g\n' % (big.sum(), bigobj['rank'],
                                                           sum(bigobj['data'])))
if rank == 0:
    fd = os.open(os.path.join(out, 'result.txt'), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    for i in range(100):
        os.write(fd, b'%d %.17g\n' % (i, a[i]))
    os.fsync(fd)
    os.close(fd)
