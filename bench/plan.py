#!/usr/bin/env python3
"""unblock plan's targets (issue: disk-reuse restructuring): for each kernel of
tests/plan/kernels (buffer a quarter of the data, 4 disks, sizes fixed there), the
simulated fetches per block of the original order, DRO-L and DRO-WP, what the
tool emits (it keeps the original where the fetches would not drop), and the
tool's own time (median of RUNS runs of the whole command, DRO-WP).

    python3 bench/plan.py [--python PY] [--runs N] [--json FILE] [--plot FILE]

Targets, checked (exit status 1 when one is missed): on fig3 and transpose,
DRO-WP's fetches per block at most 0.6x the original's; on every kernel, what
is emitted never fetches more than the original; the tool under 10 s (CPU) per
kernel.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
KERNELS = ["fig3", "transpose", "matmul", "stencil", "imperfect", "param"]
TARGET_KERNELS = ("fig3", "transpose")


def run_plan(py, name, mode, rep):
    k = os.path.join(ROOT, "tests", "plan", "kernels", name)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools"))
    t0 = time.monotonic()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([py, "-m", "plan", f"{k}.c", "--spec", f"{k}.toml", "--dry-run",
                        "--mode", mode, "--report", rep], capture_output=True, text=True,
                       env=env, timeout=600)
    dt = time.monotonic() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru1.ru_utime - ru0.ru_utime + ru1.ru_stime - ru0.ru_stime
    if r.returncode != 0:
        sys.exit(f"bench/plan.py: {name}: {r.stderr.strip()}")
    with open(os.path.join(rep, "plan.json")) as f:
        return json.load(f), (dt, cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=os.environ.get("UNBLOCK_PLAN_PYTHON",
                                                       "/opt/unblock/venv-plan/bin/python"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--real", metavar="SLOWFS",
                    help="also the real run on this bench/slowfs binary (--slow-reads): "
                         "tests/plan/realrun.py, RUNS x 5 rounds")
    a = ap.parse_args()
    rows, missed = [], []
    with tempfile.TemporaryDirectory() as d:
        for name in KERNELS:
            wp_times = []
            for _ in range(a.runs):
                wp, dt = run_plan(a.python, name, "wp", os.path.join(d, name + ".wp"))
                wp_times.append(dt)
            lo, _ = run_plan(a.python, name, "l", os.path.join(d, name + ".l"))
            o = wp["original"]
            emitted = o if wp["kept_original"] else wp["new"]
            row = {"kernel": name, "blocks": o["blocks"], "buffer": wp["buffer_blocks"],
                   "original": o["fetches_per_block"], "dro_l": lo["new"]["fetches_per_block"],
                   "dro_wp": wp["new"]["fetches_per_block"],
                   "emitted": emitted["fetches_per_block"], "kept": wp["kept_original"],
                   "fetches": [o["fetches"], lo["new"]["fetches"], wp["new"]["fetches"]],
                   "tool_cpu_s": statistics.median(t[1] for t in wp_times),
                   "tool_max_cpu_s": max(t[1] for t in wp_times),
                   "tool_wall_s": statistics.median(t[0] for t in wp_times)}
            rows.append(row)
            if name in TARGET_KERNELS and row["dro_wp"] > 0.6 * row["original"]:
                missed.append(f"{name}: DRO-WP {row['dro_wp']} > 0.6 x {row['original']}")
            if row["emitted"] > row["original"]:
                missed.append(f"{name}: emitted {row['emitted']} > original {row['original']}")
            if row["tool_max_cpu_s"] >= 10:
                missed.append(f"{name}: the tool took {row['tool_max_cpu_s']:.1f} s of CPU")
    print("| kernel | blocks (buffer) | original | DRO-L | DRO-WP | WP / original | emitted "
          "| tool CPU s, median (max) | tool wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['kernel']} | {r['blocks']} ({r['buffer']}) | {r['original']:.2f} | "
              f"{r['dro_l']:.2f} | {r['dro_wp']:.2f} | {r['dro_wp'] / r['original']:.2f} | "
              f"{r['emitted']:.2f}{' (kept)' if r['kept'] else ''} | "
              f"{r['tool_cpu_s']:.2f} ({r['tool_max_cpu_s']:.2f}) | {r['tool_wall_s']:.2f} |")
    print()
    print("Fetches per block (simulated, LRU over stripes).  Targets: " +
          ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    if a.real:
        r = subprocess.run([a.python, os.path.join(ROOT, "tests", "plan", "realrun.py"),
                            os.path.join(ROOT, "tools"), "slowfs", a.real, str(5 * a.runs)],
                           capture_output=True, text=True, timeout=900)
        print()
        print("Real run (fig3 through a buffer manager of 2 stripes, on slowfs --slow-reads):")
        print()
        print("    " + "\n    ".join(r.stdout.strip().split("\n")[-4:]))
        if r.returncode not in (0, 77):
            missed.append(f"real run failed: {r.stdout[-300:]} {r.stderr[-300:]}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    if a.plot:
        plot(rows, a.plot)
    return 1 if missed else 0


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 3.5))
    w = 0.27
    xs = range(len(rows))
    for k, (key, label) in enumerate((("original", "original"), ("dro_l", "DRO-L"),
                                      ("dro_wp", "DRO-WP"))):
        ax.bar([x + (k - 1) * w for x in xs], [r[key] for r in rows], w, label=label)
    ax.set_xticks(list(xs), [r["kernel"] for r in rows])
    ax.set_yscale("log")
    ax.set_ylabel("fetches per block (log)")
    ax.set_title("unblock plan: simulated fetches per block, buffer = 1/4 of the data, 4 disks",
                 fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
