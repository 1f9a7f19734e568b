#!/usr/bin/env python3
"""`unblock plan` through the launcher: it finds the planner beside its libraries
and runs it with the planner's python; the restructured file comes out, and a
kernel outside the subset gives the one-line error with status 2.

    launcher.py UNBLOCK TESTS_PLAN_DIR
"""
import os
import subprocess
import sys
import tempfile

unblock, here = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "out.c")
    r = subprocess.run([unblock, "plan", os.path.join(here, "kernels", "fig3.c"), "--spec",
                        os.path.join(here, "kernels", "fig3.toml"), "-o", out],
                       capture_output=True, text=True, timeout=100)
    if r.returncode == 2 and "is missing" in r.stderr:
        print(f"SKIPPED: {r.stderr.strip()}")
        sys.exit(77)
    assert r.returncode == 0, r.stderr
    assert "restructured (DRO-WP)" in r.stdout, r.stdout
    text = open(out).read()
    assert "#define floord(n, d)" in text and "void kernel(double U[N][N]" in text
    r = subprocess.run([unblock, "plan", os.path.join(here, "bad", "pointer.c"), "--spec",
                        os.path.join(here, "kernels", "fig3.toml")],
                       capture_output=True, text=True, timeout=100)
    assert r.returncode == 2, r
    assert r.stderr.count("\n") == 1 and "pointer.c:4:" in r.stderr, r.stderr
    r = subprocess.run([unblock, "--help"], capture_output=True, text=True, timeout=30)
    assert "unblock plan KERNEL.c --spec SPEC.toml" in r.stdout
print("ok: unblock plan through the launcher")
