#!/usr/bin/env python3
"""The timeline and the picture of `unblock report` (docs/stats.md), on the PIOMan
benchmark (bench/overlap.c pioman, 2 ranks): rank 0's MPI_Send of 4 KiB to 1 MiB
waits, when it runs blocking, for rank 1 to finish 20 ms of computation.  Two runs
under unblock with statistics, each followed by `unblock report --png FILE DIR`:

  converted  the predictor's defaults: each size class converts its first 3 sends
             (copied: under UNBLOCK_COPY_MAX), runs 2 blocking, then decides.  The
             blocking ones wait about 20 ms, the converted ones return at once:
             conversions hide time, and the picture has bars of both colours.
  blocking   UNBLOCK_EXCLUDE=MPI_Send: every send runs as the original call (and is
             timed): the picture has the exposed colour and not the hidden one.

Each time:
  - the PNG is valid: signature; IHDR first (8-bit RGB, no interlace, the size
    the rows have); every chunk's CRC-32; IEND last; the IDAT data is one zlib
    stream that decompresses, and its Adler-32 is that of the data; every row
    starts with filter byte 0;
  - the colours the report names for exposed and hidden time are counted: the
    legend's swatch of a colour is 10 x 7 pixels and is drawn only with bars of
    that colour, so "bars of that colour" is more than 70 pixels of it and "none"
    is 0;
  - each statistics file's timeline adds up to its sites: the exposed time to the
    sites' blocking_ms + converted_ms, the hidden time to their hidden_ms.  The
    runtime adds the same nanoseconds to both (src/core/sites.c), so the only
    difference allowed is the file's rounding: every value is printed to 0.001
    ms, each off by at most 0.0005 ms, so a sum of k values by k x 0.0005 ms;
  - the report's printed sums are the files' (putting the processes on one time
    axis loses nothing), to its own rounding of 0.0005 ms.

usage: report_png.py UNBLOCK {openmpi,mpich} OVERLAP"""
import glob
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

UNBLOCK, IMPL, OVERLAP = sys.argv[1:4]
LAUNCH = (['mpirun.openmpi', '--oversubscribe'] if IMPL == 'openmpi' else ['mpirun.mpich'])
SWATCH = 10 * 7


def fail(msg):
    sys.exit('FAIL: ' + msg)


def read_png(path):
    """The image of a PNG as (width, height, rows of RGB bytes), checking every
    structural rule this writer follows."""
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        fail('%s: no PNG signature' % path)
    pos, chunks = 8, []
    while pos < len(data):
        if pos + 12 > len(data):
            fail('%s: a chunk cut short at byte %d' % (path, pos))
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        crc, = struct.unpack('>I', data[pos + 8 + length:pos + 12 + length])
        if len(body) != length or zlib.crc32(kind + body) & 0xffffffff != crc:
            fail('%s: chunk %s at byte %d: bad length or CRC' % (path, kind, pos))
        chunks.append((kind, body))
        pos += 12 + length
    kinds = [k for k, _ in chunks]
    if kinds[0] != b'IHDR' or kinds[-1] != b'IEND' or b'IDAT' not in kinds:
        fail('%s: chunks %s' % (path, kinds))
    w, h, depth, colour, method, filt, interlace = struct.unpack('>IIBBBBB', chunks[0][1])
    if (depth, colour, method, filt, interlace) != (8, 2, 0, 0, 0) or not (0 < w < 10000 and 0 < h < 10000):
        fail('%s: IHDR %r' % (path, (w, h, depth, colour, method, filt, interlace)))
    stream = b''.join(b for k, b in chunks if k == b'IDAT')
    try:
        raw = zlib.decompress(stream)
    except zlib.error as e:
        fail('%s: the image data does not decompress: %s' % (path, e))
    if struct.unpack('>I', stream[-4:])[0] != zlib.adler32(raw):
        fail('%s: Adler-32' % path)
    row = 1 + 3 * w
    if len(raw) != h * row:
        fail('%s: %d bytes of image data for %d x %d' % (path, len(raw), w, h))
    rows = [raw[y * row:(y + 1) * row] for y in range(h)]
    if any(r[0] != 0 for r in rows):
        fail('%s: a row with a filter other than 0' % path)
    return w, h, [r[1:] for r in rows]


def count(rows, rgb):
    n = 0
    for r in rows:
        for x in range(0, len(r), 3):
            if r[x:x + 3] == rgb:
                n += 1
    return n


def run(name, extra):
    with tempfile.TemporaryDirectory(prefix='report-png-') as work:
        return run_in(name, extra, work)


def run_in(name, extra, work):
    stats = os.path.join(work, 'stats')
    env = {k: v for k, v in os.environ.items() if not k.startswith('UNBLOCK_')}
    env.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    p = subprocess.run(LAUNCH + ['-np', '2', UNBLOCK, '--stats=' + stats] + extra +
                       [OVERLAP, 'pioman', '--max', '1048576', '--compute-ms', '20'],
                       env=env, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        fail('%s: the run exited %d\n%s' % (name, p.returncode, p.stderr[-3000:]))
    png = os.path.join(work, 'phases.png')
    r = subprocess.run([UNBLOCK, 'report', '--png', png, stats], capture_output=True,
                       text=True, timeout=60)
    print(r.stdout)
    if r.returncode != 0 or 'wrote ' + png not in r.stdout:
        fail('%s: unblock report exited %d: %s' % (name, r.returncode, r.stderr))
    if os.path.exists(os.path.join(stats, 'unblock-report.png')):
        fail('%s: --png FILE also wrote the default file' % name)

    docs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(stats, 'unblock-*.json')))]
    if len(docs) != 2:
        fail('%s: %d statistics files' % (name, len(docs)))
    total_e = total_h = 0.0
    values = 0
    for d in docs:
        tl, sites = d['timeline'], d['sites']
        n = tl['buckets']
        if not (1 <= n <= 64 and len(tl['hidden_ms']) == n and len(tl['exposed_ms']) == n):
            fail('%s: rank %d: timeline %r' % (name, d['rank'], tl))
        w = tl['bucket_ms']
        if not (w >= 1 and float(w).is_integer() and int(w) & (int(w) - 1) == 0):
            fail('%s: rank %d: phases of %r ms, not 1 ms doubled' % (name, d['rank'], w))
        if len(sites) >= 32:
            fail('%s: rank %d: %d sites, the file lists only some' % (name, d['rank'], len(sites)))
        e, h = sum(tl['exposed_ms']), sum(tl['hidden_ms'])
        se = sum(s['blocking_ms'] + s['converted_ms'] for s in sites)
        sh = sum(s['hidden_ms'] for s in sites)
        if abs(e - se) > 0.0005 * (n + 2 * len(sites)) + 1e-9:
            fail('%s: rank %d: timeline exposed %.4f ms, sites %.4f ms' % (name, d['rank'], e, se))
        if abs(h - sh) > 0.0005 * (n + len(sites)) + 1e-9:
            fail('%s: rank %d: timeline hidden %.4f ms, sites %.4f ms' % (name, d['rank'], h, sh))
        print('%s: rank %d: %d phases of %g ms, exposed %.3f ms (sites %.3f), hidden %.3f ms '
              '(sites %.3f)' % (name, d['rank'], n, w, e, se, h, sh))
        total_e, total_h, values = total_e + e, total_h + h, values + n
    m = re.search(r'exposed (-?[\d.]+) ms, hidden (-?[\d.]+) ms', r.stdout)
    if not m or abs(float(m.group(1)) - total_e) > 0.0005 * (values + 1) or \
            abs(float(m.group(2)) - total_h) > 0.0005 * (values + 1):
        fail('%s: the report prints other sums than the files (%.3f, %.3f)' % (name, total_e, total_h))

    colours = {}
    for what in ('exposed', 'hidden'):
        c = re.search(what + r' time \([^#]*#([0-9a-f]{6})', r.stdout)
        if not c:
            fail('%s: the report does not name the colour of %s time' % (name, what))
        colours[what] = bytes.fromhex(c.group(1))
    if colours['exposed'] == colours['hidden']:
        fail('%s: one colour for both' % name)
    _, _, rows = read_png(png)
    seen = {k: count(rows, v) for k, v in colours.items()}
    print('%s: pixels %r' % (name, seen))
    return docs, total_e, total_h, seen


docs, e, h, seen = run('converted', [])
if sum(d['comm']['async'] for d in docs) == 0:
    fail('converted: no send was converted')
if not (e > 0 and h > 0):
    fail('converted: exposed %.3f ms, hidden %.3f ms: both should be there' % (e, h))
if seen['exposed'] <= SWATCH or seen['hidden'] <= SWATCH:
    fail('converted: bars of both colours expected, pixels %r' % seen)

docs, e, h, seen = run('blocking', ['--exclude=MPI_Send'])
if sum(d['comm']['async'] for d in docs) != 0:
    fail('blocking: %d sends converted' % sum(d['comm']['async'] for d in docs))
if not (e > 0 and h == 0 and all(x == 0 for d in docs for x in d['timeline']['hidden_ms'])):
    fail('blocking: exposed %.3f ms, hidden %.3f ms: only exposed time expected' % (e, h))
if seen['exposed'] <= SWATCH or seen['hidden'] != 0:
    fail('blocking: only the exposed colour expected, pixels %r' % seen)
print('PASS')
