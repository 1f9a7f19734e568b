#!/usr/bin/env python3
"""The real run: the Figure-3-style kernel over its array in a file
(tests/plan/real/fig3io.c through the buffer manager of real/run.c: B frames of
one stripe, LRU, a pread per miss, the page cache kept out), original against
what unblock plan makes of it.  Both must write what the in-memory kernel
writes, byte for byte, and the buffer manager's misses must equal the
simulator's fetch counts for U.  Run plainly (no unblock, so no read-ahead of
unblock's either).

    realrun.py TOOLS_DIR local [UNBLOCK]   in a temporary folder; with the
                                           launcher, the original again under
                                           --trace, its trace checked and given
                                           to `unblock plan --layout`
    realrun.py TOOLS_DIR slowfs SLOWFS [RUNS]
                                           on a fresh mount of bench/slowfs
                                           --slow-reads (77 where FUSE cannot
                                           be mounted); RUNS rounds, original
                                           and restructured alternating, with
                                           the median times (bench/plan.py)
"""
import statistics
import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
tools, where = sys.argv[1], sys.argv[2]
if importlib.util.find_spec("islpy") is None or importlib.util.find_spec("clang") is None:
    print(f"SKIPPED: islpy or libclang missing in {sys.executable}")
    sys.exit(77)
sys.path.insert(0, tools)
sys.path.insert(0, HERE)
from common import cc, compile, run  # noqa: E402
from plan.cli import main  # noqa: E402
from plan.spec import load_spec  # noqa: E402

KERNEL = os.path.join(HERE, "real", "fig3io.c")
SPEC = os.path.join(HERE, "kernels", "fig3.toml")


@contextlib.contextmanager
def slowfs_mount(binary):
    if not os.access(binary, os.X_OK):
        print(f"SKIPPED: {binary} is not built (no fuse3)")
        sys.exit(77)
    back, mnt = tempfile.mkdtemp(), tempfile.mkdtemp()
    counts = os.path.join(back + ".count")
    p = subprocess.Popen([binary, back, mnt, "--slow-reads", "--count", counts],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def mounted():  # the FUSE magic number
            return subprocess.run(["stat", "-f", "-c", "%t", mnt], capture_output=True,
                                  text=True).stdout.strip() == "65735546"
        for _ in range(25):
            if mounted() or p.poll() is not None:
                break
            time.sleep(0.2)
        if not mounted():
            print("SKIPPED: cannot mount a FUSE filesystem here")
            sys.exit(77)
        yield mnt, counts
    finally:
        for _ in range(50):
            if subprocess.run(["fusermount3", "-u", mnt], capture_output=True).returncode == 0:
                break
            time.sleep(0.2)
        else:
            subprocess.run(["fusermount3", "-uz", mnt], capture_output=True)
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        subprocess.run(["rm", "-rf", back, mnt, counts])


def served(counts):
    """The read requests slowfs served so far, and their bytes (its --count file)."""
    try:
        with open(counts) as f:
            w = f.read().split()
        return int(w[1]), int(w[3])
    except (OSError, IndexError, ValueError):
        return 0, 0


def traced(unblock, exe, d, fetches, arr):
    """The original run again under `unblock --trace=DIR`: the trace holds the
    buffer manager's reads (one stripe per fetch and the final read of the
    whole array), and `unblock plan --layout DIR` reads it and advises."""
    tr, data = os.path.join(d, "trace"), os.path.join(d, "data-traced")
    os.makedirs(data)
    r = subprocess.run([unblock, "--no-profile", f"--trace={tr}", exe, data],
                       capture_output=True, timeout=300)
    assert r.returncode == 0, r.stderr
    files = [os.path.join(tr, f) for f in os.listdir(tr) if f.startswith("trace.")]
    assert len(files) == 1, files
    read = 0
    with open(files[0]) as f:
        lines = f.read().splitlines()
    assert lines[0] == "# unblock trace 1", lines[:1]
    for line in lines[1:]:
        w = line.split()
        if w[0] == "R":
            read += int(w[3])
    whole = arr.size
    for e in arr.extents:
        whole *= e
    assert read == fetches * arr.stripe + whole, (read, fetches, arr.stripe, whole)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["--layout", tr, "--spec", SPEC])
    text = buf.getvalue()
    print(text.rstrip())
    assert rc == 0 and "recommended: layout" in text and "(traces)" in text, text
    print(f"ok: the trace of a real run holds {read} bytes read "
          f"({fetches} stripes and the whole array), and the advisor read it")


def main_():
    spec = load_spec(SPEC)
    arr = spec.arrays["U"]
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "fig3io.plan.c")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = main([KERNEL, "--spec", SPEC, "-o", out])
        text = buf.getvalue()
        assert rc == 0 and "restructured" in text, text
        m = re.search(r"^  U: (\d+) -> (\d+) fetches", text, re.M)
        want = {"original": int(m.group(1)), "restructured": int(m.group(2))}
        ref = os.path.join(d, "memory")
        compile(KERNEL, ref)
        expect = run(ref)
        exes = {}
        for name, src in (("original", KERNEL), ("restructured", out)):
            exes[name] = os.path.join(d, name)
            subprocess.run([cc(), "-std=gnu11", "-O1", "-Wall", "-Werror",
                            f'-DKERNEL="{src}"', f"-DFRAMES={spec.buffer_blocks}",
                            f"-DSTRIPE={arr.stripe}", os.path.join(HERE, "real", "run.c"),
                            "-o", exes[name]], check=True, timeout=60)

        def go(folder, counts=None):
            got = {}
            for name in ("original", "restructured"):
                sub = os.path.join(folder, f"data-{name}")
                os.makedirs(sub, exist_ok=True)
                r0, b0 = served(counts) if counts else (0, 0)
                r = subprocess.run([exes[name], sub], capture_output=True, timeout=300)
                assert r.returncode == 0, r.stderr
                assert r.stdout == expect, f"{name}: output differs from the in-memory run"
                misses, wb, secs = r.stderr.decode().split()[1::2]
                r1, b1 = served(counts) if counts else (0, 0)
                extra = (f", slowfs served {r1 - r0} read requests, {b1 - b0} bytes"
                         if counts else "")
                print(f"{name}: misses {misses} (simulated fetches {want[name]}), "
                      f"write-backs {wb}, {float(secs):.4f} s{extra}")
                assert int(misses) == want[name], (name, misses, want[name])
                if counts:
                    # Every fetch reached the file system, whole, and nothing else
                    # but run.c's one read of the whole array at the end (to print
                    # it): the simulator's fetches of stripes, and one request each.
                    whole = arr.size
                    for e in arr.extents:
                        whole *= e
                    assert b1 - b0 == want[name] * arr.stripe + whole, \
                        (name, b1 - b0, want[name], arr.stripe, whole)
                    assert r1 - r0 == want[name] + 1, (name, r1 - r0, want[name])
                    got[name + ".requests"] = r1 - r0
                got[name] = float(secs)
                got[name + ".misses"] = int(misses)
            return got

        if where == "local":
            go(d)
            if len(sys.argv) > 3:
                traced(sys.argv[3], exes["original"], d, want["original"], arr)
        else:
            rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
            with slowfs_mount(sys.argv[3]) as (mnt, counts):
                times = [go(mnt, counts) for _ in range(rounds)]
            if rounds > 1:
                o = [t["original"] for t in times]
                n = [t["restructured"] for t in times]
                ratios = sorted(b / a for a, b in zip(o, n))
                print(f"median of {rounds}: original {statistics.median(o):.4f} s "
                      f"({min(o):.4f}-{max(o):.4f}), restructured {statistics.median(n):.4f} s "
                      f"({min(n):.4f}-{max(n):.4f}), ratio {statistics.median(ratios):.4f}")
    print("ok: the buffer manager's misses are the simulator's fetches; outputs identical")


main_()
