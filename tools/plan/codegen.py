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
        dom = _nest_domain(kernel, nest)
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


def check_threads_legal(kernel, deps, steps):
    """Threads run concurrently: every dependence between instances of two
    different nodes must go from an earlier step to a later one (the generated
    code then waits for it, or the thread's own order keeps it); inside a node,
    the original order keeps them.  Returns (ok, [per-nest lines])."""
    step = isl.UnionMap("{ }")
    node = isl.UnionMap("{ }")
    for k, st in enumerate(steps):
        for n in st:
            if n is None:
                continue
            step = step.union(isl.UnionMap.from_domain_and_range(
                n.set, isl.UnionSet(f"{{ [{k}] }}")))
            node = node.union(isl.UnionMap.from_domain_and_range(
                n.set, isl.UnionSet(f"{{ [{n.ident}] }}")))
    later = step.lex_lt_union_map(step)
    same = node.apply_range(node.reverse())
    bad = deps.subtract(later).subtract(same)
    lines, ok = [], True
    for nest in range(kernel.nests):
        if bad.intersect_range(_nest_domain(kernel, nest)).is_empty():
            lines.append(f"nest {nest + 1}: every dependence between threads' nodes goes to "
                         f"a later step, all satisfied")
        else:
            ok = False
            lines.append(f"nest {nest + 1}: VIOLATED between threads")
    return ok, lines


def _pfx(kernel):
    return f"[{', '.join(kernel.params)}] -> " if kernel.params else ""


def _nest_domain(kernel, nest):
    """The instances of every statement of a nest, as one isl union set."""
    dom = None
    for s in kernel.stmts:
        if s.nest == nest:
            d = isl.UnionSet(f"{_pfx(kernel)}{{ {s.name}[{', '.join(s.iters)}] }}")
            dom = d if dom is None else dom.union(d)
    return dom


def _iterator_prefix(kernel):
    for p in ("c", "c_", "ub_c", "ub_c_"):
        if not any(n.startswith(p) and n[len(p):].isdigit() for n in kernel.names):
            return p
    raise PlanError("no free name for the loop counters of the generated code")


def _free_name(kernel, base):
    name = base
    while name in kernel.names:
        name = "_" + name
    return name


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
    head, tail = _macro_lines(kernel)
    out = ["{"] + [f"    /* {line} */" for line in note_lines] + head
    out += _indent(code, 4) + tail + ["}"]
    body = "\n".join(out)
    src = kernel.source
    return src[:kernel.body_start] + body.encode() + src[kernel.body_end:]


def _macro_lines(kernel, extra=()):
    macros = [h.split("(")[0] for h, _ in HELPERS] + [s.name for s in kernel.stmts] + \
        list(extra)
    head = []
    for m in macros:
        head.append(f'#pragma push_macro("{m}")')
        head.append(f"#undef {m}")
    for h, body in HELPERS:
        head.append(f"#define {h} {body}")
    for s in kernel.stmts:
        head.append(f"#define {s.name}({', '.join(s.iters)}) {s.body}")
    tail = []
    for m in macros:
        tail.append(f"#undef {m}")
        tail.append(f'#pragma pop_macro("{m}")')
    return head, tail


def _indent(code, n):
    return [(" " * n + line) if line else line for line in code.rstrip("\n").split("\n")]


def threads_text(kernel, th, nodes, succ, steps, threads, disks, note_lines=()):
    """The whole file with the body replaced by T threads (OpenMP) running the
    Figure 14 schedule: each thread runs its nodes in step order; before a node
    it waits for every predecessor another thread runs (a flag per node, set
    with release and read with acquire).  Compiled without OpenMP, or given
    fewer threads than T, one thread runs all the nodes in step order."""
    done = _free_name(kernel, "ub_done")
    tid = _free_name(kernel, "ub_t")
    wait, signal = _free_name(kernel, "UB_WAIT"), _free_name(kernel, "UB_DONE")
    index = {}
    for st in steps:
        for n in st:
            if n is not None:
                index[n.ident] = len(index)
    preds = {n.ident: set() for n in nodes}
    for u, vs in succ.items():
        for v in vs:
            preds[v].add(u)
    byid = {n.ident: n for n in nodes}
    code = {}
    for n in nodes:
        code[n.ident] = ast_code(kernel, th.intersect_domain(n.set))
    out = ["{"]
    for line in note_lines:
        out.append(f"    /* {line} */")
    head, tail = _macro_lines(kernel, (wait, signal))
    out += head
    out.append(f"#define {wait}(k) while (!__atomic_load_n(&{done}[k], __ATOMIC_ACQUIRE)) ;")
    out.append(f"#define {signal}(k) __atomic_store_n(&{done}[k], 1, __ATOMIC_RELEASE);")
    out.append(f"    int {done}[{len(index)}] = {{0}};")
    out.append(f"    (void){done};")

    def sequential(ind):
        lines = []
        for st in steps:
            for n in st:
                if n is not None:
                    lines += _indent(code[n.ident], ind)
        return lines

    def thread(t, ind):
        lines = []
        for st in steps:
            n = st[t]
            if n is None:
                continue
            k = index[n.ident]
            tag = "".join("1" if n.tag >> d & 1 else "0" for d in range(disks))
            lines.append(" " * ind + f"/* node {k}: tag {tag} */")
            for p in sorted(preds[n.ident], key=lambda x: index[x]):
                if byid[p].thread != t:
                    lines.append(" " * ind + f"{wait}({index[p]})")
            lines += _indent(code[n.ident], ind)
            lines.append(" " * ind + f"{signal}({k})")
        return lines

    out.append("#ifdef _OPENMP")
    out.append("    {")
    out.append("        int omp_get_thread_num(void), omp_get_num_threads(void);")
    out.append(f"#pragma omp parallel num_threads({threads})")
    out.append("        {")
    out.append(f"            int {tid} = omp_get_thread_num();")
    out.append(f"            if (omp_get_num_threads() != {threads}) {{")
    out.append(f"                if ({tid} == 0) {{")
    out += sequential(20)
    out.append("                }")
    for t in range(threads):
        out.append(f"            }} else if ({tid} == {t}) {{")
        out += thread(t, 16)
    out.append("            }")
    out.append("        }")
    out.append("    }")
    out.append("#else")
    out += sequential(4)
    out.append("#endif")
    out += tail
    out.append("}")
    body = "\n".join(out)
    src = kernel.source
    return src[:kernel.body_start] + body.encode() + src[kernel.body_end:]
