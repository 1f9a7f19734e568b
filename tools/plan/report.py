"""--report DIR: the explanation (plan.txt), a table of the simulated buffer
per array and in all, original beside restructured (table.txt, plan.json), and a
picture of disk use over time (disk-use.png, with matplotlib): every fetch as a
point at (instance executed, disk), the original order above, the new below."""
import json
import os
import sys


def table(spec, r0, r1):
    rows = [("array", "blocks", "fetches", "fetches", "per block", "per block",
             "switches", "switches"),
            ("", "", "original", "new", "original", "new", "original", "new")]
    for a in spec.arrays:
        rows.append((a, str(len(r0.blocks[a])), str(r0.fetches[a]), str(r1.fetches[a]),
                     f"{r0.per_block(a):.2f}", f"{r1.per_block(a):.2f}",
                     str(r0.switches[a]), str(r1.switches[a])))
    rows.append(("all", str(r0.total_blocks), str(r0.total_fetches), str(r1.total_fetches),
                 f"{r0.per_block():.2f}", f"{r1.per_block():.2f}", str(r0.total_switches),
                 str(r1.total_switches)))
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(x.rjust(w) if c else x.ljust(w)
                               for c, (x, w) in enumerate(zip(r, widths))) for r in rows)


def picture(path, spec, r0, r1, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("unblock plan: no matplotlib: the report has no picture", file=sys.stderr)
        return False
    fig, axes = plt.subplots(2, 1, figsize=(9, 5), sharey=True)
    names = list(spec.arrays)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, r, what in ((axes[0], r0, "original"), (axes[1], r1, "restructured")):
        for k, a in enumerate(names):
            pts = [(n, d) for n, d, arr in r.timeline if arr == a]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=6,
                           color=colours[k % len(colours)], label=a)
        ax.set_title(f"{what}: {r.total_fetches} fetches, {r.per_block():.2f} per block",
                     fontsize=9)
        ax.set_ylabel("disk")
        ax.set_yticks(range(spec.disks))
        ax.set_xlim(0, max(1, r.iterations))
    axes[1].set_xlabel("statement instances executed")
    axes[0].legend(fontsize=7, loc="upper right", markerscale=2)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write_report(d, kernel, spec, r0, r1, order, decision, lines, mode, kept):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "plan.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    t = table(spec, r0, r1)
    with open(os.path.join(d, "table.txt"), "w") as f:
        f.write(t + "\n")
    data = {"kernel": kernel.path, "function": kernel.function, "mode": mode,
            "kept_original": kept, "decision": decision,
            "buffer_blocks": spec.buffer_blocks, "disks": spec.disks,
            "nodes": len(order), "original": r0.as_dict(), "new": r1.as_dict()}
    with open(os.path.join(d, "plan.json"), "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    picture(os.path.join(d, "disk-use.png"), spec, r0, r1,
            f"{os.path.basename(kernel.path)}: {kernel.function}, {mode}, buffer "
            f"{spec.buffer_blocks} of {spec.total_blocks} blocks, {spec.disks} disks")
