"""Code generation with isl's AST build, and the proof of legality.

The new function keeps the original's text up to its body; the body becomes the
loops isl generates for the new schedule, each statement written as a macro whose
text is the original statement's (each counter in parentheses, so any expression
may stand for it).  floord, min and max, which isl's code uses, and the statement
macros are defined inside the body and undefined at its end; #pragma push_macro /
pop_macro keep any of the file's own macros of those names."""
import islpy as isl

from . import PlanError

HELPERS = [("floord(n, d)", "(((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))"),
           ("min(x, y)", "((x) < (y) ? (x) : (y))"),
           ("max(x, y)", "((x) > (y) ? (x) : (y))")]


def check_legal(kernel, deps, sched_map):
    """Every dependence (flow, anti, output; source before sink originally) must
    go forward in the new order.  Returns (ok, [per-nest lines])."""
    forward = sched_map.lex_lt_union_map(sched_map)
    bad = deps.subtract(forward)
    lines = []
    ok = True
    for nest in range(kernel.nests):
        names = [s.name for s in kernel.stmts if s.nest == nest]
        into = isl.UnionMap("{ }")
        nbad = isl.UnionMap("{ }")
        dom = None
        for s in kernel.stmts:
            if s.nest == nest:
                d = isl.UnionSet(f"{{ {s.name}[{', '.join(s.iters)}] }}") if not kernel.params \
                    else isl.UnionSet(f"[{', '.join(kernel.params)}] -> "
                                      f"{{ {s.name}[{', '.join(s.iters)}] }}")
                dom = d if dom is None else dom.union(d)
        into = deps.intersect_range(dom)
        nbad = bad.intersect_range(dom)
        rel = into.n_map()
        if nbad.is_empty():
            lines.append(f"nest {nest + 1} ({', '.join(names)}): {rel} dependence relation"
                         f"{'s' if rel != 1 else ''} into it, all satisfied")
        else:
            ok = False
            lines.append(f"nest {nest + 1}: VIOLATED: {nbad}")
    return ok, lines


def _iterator_prefix(kernel):
    for p in ("c", "c_", "ub_c", "ub_c_"):
        if not any(n.startswith(p) and n[len(p):].isdigit() for n in kernel.names):
            return p
    raise PlanError("no free name for the loop counters of the generated code")


def ast_code(kernel, sched_map):
    ctx = isl.Set(f"[{', '.join(kernel.params)}] -> {{ : }}") if kernel.params \
        else isl.Set("{ : }")
    build = isl.AstBuild.from_context(ctx)
    prefix = _iterator_prefix(kernel)
    ids = isl.IdList.alloc(isl.DEFAULT_CONTEXT, 0)
    for k in range(64):
        ids = ids.add(isl.Id(f"{prefix}{k}"))
    build = build.set_iterators(ids)
    node = build.node_from_schedule_map(sched_map)
    return node.to_C_str()


def function_text(kernel, sched_map, note_lines=()):
    """The whole file with the function's body replaced."""
    code = ast_code(kernel, sched_map)
    macros = [h.split("(")[0] for h, _ in HELPERS] + [s.name for s in kernel.stmts]
    out = ["{"]
    for d in kernel.counter_decls:
        out.append(f"    {d}")
    for line in note_lines:
        out.append(f"    /* {line} */")
    for m in macros:
        out.append(f'#pragma push_macro("{m}")')
        out.append(f"#undef {m}")
    for h, body in HELPERS:
        out.append(f"#define {h} {body}")
    for s in kernel.stmts:
        out.append(f"#define {s.name}({', '.join(s.iters)}) {s.body}")
    for line in code.rstrip("\n").split("\n"):
        out.append(("    " + line) if line else line)
    for m in macros:
        out.append(f"#undef {m}")
        out.append(f'#pragma pop_macro("{m}")')
    out.append("}")
    body = "\n".join(out)
    src = kernel.source
    return src[:kernel.body_start] + body.encode() + src[kernel.body_end:]
