"""unblock plan KERNEL.c --spec SPEC.toml [-o OUT.c] [--report DIR] [--dry-run]
unblock plan [KERNEL.c] --layout [DIR] --spec SPEC.toml

Reads the function, finds its disk-locality sets, builds and schedules the
locality set graph, proves the new order legal with isl, simulates the buffer for
the original and the new order, and writes the restructured file (to OUT.c, or to
standard output) unless the fetches would not drop or no other order is legal, in
which case the file is written unchanged and the report says why."""
import argparse
import json
import os
import sys
import time

from . import PlanError

USAGE_EPILOG = """modes: wp = whole program (DRO-WP, the default), l = each loop nest alone
(DRO-L).  The explanation goes to standard output with -o, else to standard error.
See docs/plan.md for the spec and the subset of C accepted."""


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="unblock plan", description=__doc__.split("\n\n")[1],
                                 epilog=USAGE_EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernel", nargs="?", help="the C file")
    ap.add_argument("--spec", required=True, help="the spec (TOML)")
    ap.add_argument("-o", "--output", help="where the restructured file goes")
    ap.add_argument("--report", metavar="DIR", help="write a table and a picture to DIR")
    ap.add_argument("--dry-run", action="store_true", help="analysis and report, no code")
    ap.add_argument("--mode", choices=("wp", "l"), default="wp")
    ap.add_argument("--function", help="the function to restructure")
    ap.add_argument("--threads", type=int, default=1, metavar="T",
                    help="T > 1: the multi-thread schedule (Figure 14), emitted as OpenMP "
                         "code (compile with -fopenmp; without it one thread runs it)")
    ap.add_argument("--layout", metavar="DIR", nargs="?", const="",
                    help="advise file layouts (Figure 12) from the traces in DIR "
                         "(UNBLOCK_TRACE=DIR) and, with a kernel, from its references; "
                         "without DIR, from the kernel alone")
    ap.add_argument("-D", dest="defines", action="append", default=[],
                    help="a macro for parsing the kernel, as for the compiler")
    ap.add_argument("-I", dest="includes", action="append", default=[],
                    help="an include folder for parsing the kernel")
    return ap.parse_args(argv)


def check_kernel(kernel, spec):
    for p in kernel.params:
        if p not in spec.params:
            raise PlanError(f"{spec.path}: params.{p} is missing: the loop bounds use "
                            f"'{p}', give its value for the simulator")
    for s in kernel.stmts:
        for a in s.accesses:
            arr = spec.arrays.get(a.array)
            if arr is not None and len(a.subs) != len(arr.extents):
                raise PlanError(f"{kernel.path}:{a.line}: '{a.array}' has "
                                f"{len(arr.extents)} dimensions in the spec but "
                                f"{len(a.subs)} subscripts here")
            if arr is not None and a.size and a.size != arr.size:
                raise PlanError(f"{kernel.path}:{a.line}: the elements of '{a.array}' are "
                                f"{a.size} bytes here but {arr.size} in the spec "
                                f"({arr.ctype})")
    used = {a.array for s in kernel.stmts for a in s.accesses}
    missing = [a for a in spec.arrays if a not in used]
    return [f"spec array '{a}' is not used by {kernel.function}" for a in missing]


def run(args):
    t0 = time.monotonic()
    from .spec import load_spec
    spec = load_spec(args.spec)
    if args.layout is not None:
        from .layout import advise
        kernel = None
        if args.kernel:
            from .cfront import read_kernel
            cflags = [f"-D{d}" for d in args.defines] + [f"-I{i}" for i in args.includes]
            kernel = read_kernel(args.kernel, args.function or spec.function, cflags)
            check_kernel(kernel, spec)
        elif not args.layout:
            raise PlanError("--layout needs a trace folder, a kernel, or both")
        print(advise(kernel, spec, args.layout).text())
        return 0
    if not args.kernel:
        raise PlanError("no kernel file given (unblock plan KERNEL.c --spec SPEC.toml)")
    try:
        import islpy  # noqa: F401
    except ImportError:
        raise PlanError("islpy is missing (scripts/bootstrap installs it in the planner's "
                        "virtual environment)") from None
    from .cfront import read_kernel
    from . import poly, lsg, sim, codegen
    cflags = [f"-D{d}" for d in args.defines] + [f"-I{i}" for i in args.includes]
    kernel = read_kernel(args.kernel, args.function or spec.function, cflags)
    notes = check_kernel(kernel, spec)
    th = poly.theta(kernel)
    flow, anti, out, deps = poly.dependences(kernel, th)
    planner = lsg.Planner(kernel, spec, deps, th)
    original = planner.original_map()
    orig_order = sim.decode_order(kernel, original, spec.params)
    res_orig = sim.simulate(kernel, spec, orig_order)

    if args.threads > 1:
        return run_threads(args, kernel, spec, planner, deps, orig_order, res_orig, notes, t0)
    if args.threads < 1:
        raise PlanError(f"--threads must be at least 1, not {args.threads}")
    order = planner.plan(whole_program=(args.mode == "wp"))
    sched = planner.schedule_map(order)
    ok, legal_lines = codegen.check_legal(kernel, deps, sched)
    if not ok:  # never expected: the graph was acyclic and the ranks follow it
        raise PlanError("internal error: the new order violates a dependence:\n  " +
                        "\n  ".join(legal_lines))
    new_order = sim.decode_order(kernel, sched, spec.params)
    res_new = sim.simulate(kernel, spec, new_order)

    same = [(s.name, tuple(e.values())) for s, e in orig_order] == \
        [(s.name, tuple(e.values())) for s, e in new_order]
    mode = "DRO-WP" if args.mode == "wp" else "DRO-L"
    if same:
        decision = "kept the original order: it is the only order the dependences " \
                   "allow for this grouping (the schedule found is the original one)"
        keep = True
    elif res_new.total_fetches >= res_orig.total_fetches:
        decision = (f"kept the original order: {mode} would not drop the simulated "
                    f"fetches ({res_new.total_fetches} against {res_orig.total_fetches})")
        keep = True
    else:
        decision = (f"restructured ({mode}): simulated fetches {res_orig.total_fetches} -> "
                    f"{res_new.total_fetches}, per block {res_orig.per_block():.2f} -> "
                    f"{res_new.per_block():.2f}")
        keep = False

    lines = explain(kernel, spec, planner, order, legal_lines, res_orig, res_new, decision,
                    notes, flow, anti, out)
    elapsed = time.monotonic() - t0
    lines.append(f"time: {elapsed:.2f} s")
    return finish(args, lines, kernel, keep, lambda: codegen.function_text(
        kernel, sched, [f"unblock plan: {mode}, {len(order)} locality-set nodes in "
                        f"Hamming-distance order"]),
        (spec, res_orig, res_new, order, decision, mode))


def finish(args, lines, kernel, keep, text, report):
    """The explanation (on stdout when the code goes to a file or there is none,
    else on stderr), the code (the original kept, or text()), and the report."""
    stream = sys.stdout if args.output or args.dry_run else sys.stderr
    print("\n".join(lines), file=stream)
    if not args.dry_run:
        data = kernel.source if keep else text()
        if args.output:
            with open(args.output, "wb") as f:
                f.write(data)
        else:
            sys.stdout.buffer.write(data)
    if args.report:
        from .report import write_report
        spec, r0, r1, order, decision, mode = report
        write_report(args.report, kernel, spec, r0, r1, order, decision, lines, mode, keep)
    return 0


def run_threads(args, kernel, spec, planner, deps, orig_order, r0, notes, t0):
    from . import lsg, sim, codegen
    T = args.threads
    nodes, succ, steps = planner.plan_threads(T, coordinated=True)
    alone = lsg.schedule_threads(nodes, succ, T, coordinated=False)
    ok, legal = codegen.check_threads_legal(kernel, deps, steps)
    ok2, _ = codegen.check_threads_legal(kernel, deps, alone)
    if not (ok and ok2):
        raise PlanError("internal error: a thread schedule violates a dependence:\n  " +
                        "\n  ".join(legal))
    om = planner.original_map()
    r1 = sim.simulate(kernel, spec, sim.threads_order(kernel, om, steps, spec.params))
    r2 = sim.simulate(kernel, spec, sim.threads_order(kernel, om, alone, spec.params))
    d1, d2 = sim.disks_per_step(steps), sim.disks_per_step(alone)
    lines = [f"unblock plan: {kernel.path}: function {kernel.function}, {T} threads "
             f"(Figure 14), {spec.disks} disks, buffer {spec.buffer_blocks} blocks of "
             f"{spec.total_blocks}"]
    lines += [f"note: {n}" for n in notes]
    lines += [f"  {x}" for x in planner.log]
    lines.append(f"nodes: {len(nodes)} over {T} threads (each nest's outer loop cut in "
                 f"{T} blocks), {len(steps)} steps")
    lines.append("legality (isl): every dependence between nodes of different threads "
                 "goes to a later step (the code waits for it):")
    lines += [f"  {x}" for x in legal]
    lines.append(f"disks in use per step: mean {sum(d1) / len(d1):.2f} with the global "
                 f"mask, {sum(d2) / len(d2):.2f} with each thread for itself")
    lines.append(f"fetches (threads interleaved, shared buffer): original order "
                 f"{r0.total_fetches}, Figure 14 {r1.total_fetches} "
                 f"({r1.per_block():.2f}/block), each thread for itself {r2.total_fetches} "
                 f"({r2.per_block():.2f}/block)")
    keep = r1.total_fetches >= r0.total_fetches
    if keep:
        decision = (f"kept the original order: the {T}-thread schedule would not drop the "
                    f"simulated fetches ({r1.total_fetches} against {r0.total_fetches})")
    else:
        decision = (f"restructured for {T} threads (Figure 14, OpenMP): simulated fetches "
                    f"{r0.total_fetches} -> {r1.total_fetches}")
    lines.append(decision)
    lines.append(f"time: {time.monotonic() - t0:.2f} s")
    return finish(args, lines, kernel, keep, lambda: codegen.threads_text(
        kernel, planner.th, nodes, succ, steps, T, spec.disks,
        [f"unblock plan: {T} threads, Figure 14 schedule, {len(steps)} steps"]),
        (spec, r0, r1, nodes, decision, f"{T} threads"))


def explain(kernel, spec, planner, order, legal_lines, r0, r1, decision, notes,
            flow, anti, out):
    from . import lsg
    lines = [f"unblock plan: {kernel.path}: function {kernel.function}, {kernel.nests} "
             f"nest(s), {len(kernel.stmts)} statement(s), {spec.disks} disks, buffer "
             f"{spec.buffer_blocks} blocks of {spec.total_blocks}"]
    lines += [f"note: {n}" for n in notes]
    nl = kernel.nest_lines()
    for nest in range(kernel.nests):
        tags = sorted({t for s in kernel.stmts if s.nest == nest
                       for _, t in planner.sets[s.name]} if planner.sets else [])
        lines.append(f"nest {nest + 1} (line {nl[nest]}): {len(tags)} locality set(s), tags "
                     f"{' '.join(lsg.tag_str(t, spec.disks) for t in tags) or '-'}")
    lines.append(f"dependences: {flow.n_map()} flow, {anti.n_map()} anti, {out.n_map()} "
                 f"output relation(s) (isl, memory-based, across nests)")
    lines += [f"  {x}" for x in planner.log]
    lines.append("schedule: " + " ".join(
        f"{n.label(spec.disks)}{'' if n.nest < 0 else f'@{n.nest + 1}'}" for n in order))
    lines.append("legality (isl):")
    lines += [f"  {x}" for x in legal_lines]
    lines.append(f"fetches: original {r0.total_fetches} ({r0.per_block():.2f}/block, "
                 f"{r0.total_switches} disk switches), new {r1.total_fetches} "
                 f"({r1.per_block():.2f}/block, {r1.total_switches} disk switches)")
    for a in spec.arrays:
        lines.append(f"  {a}: {r0.fetches[a]} -> {r1.fetches[a]} fetches over "
                     f"{len(r0.blocks[a])} blocks")
    lines.append(decision)
    return lines


def main(argv):
    try:
        args = parse_args(argv)
    except SystemExit as e:
        return e.code
    try:
        return run(args)
    except PlanError as e:
        print(f"unblock plan: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(f"unblock plan: {e.name or e} is missing (scripts/bootstrap installs the "
              f"planner's virtual environment)", file=sys.stderr)
        return 2
