"""The layout advisor (Figure 12 of the paper, profile-based): per disk-resident
array, one counter for each permutation of its dimensions (its file layout) and
one for anything else (diagonal walks), incremented by what the accesses prefer;
and, for every permutation, the fetches the buffer simulator predicts.

Two sources, alone or together:
- the kernel (static): each reference prefers the layout that puts the dimension
  of the innermost loop counter last (dimensions ordered by the depth of the
  counters in their subscripts); it counts as many times as its statement runs
  (at the spec's parameter values).  Predicted fetches: the kernel's original
  order simulated with the array in that layout.
- traces of real runs (`UNBLOCK_TRACE=DIR`): each pair of consecutive elements a
  process touched in the file prefers the layout that puts last the one
  dimension that changed (two or more changed: other).  Predicted fetches: each
  process's element sequence replayed through the LRU buffer with the file in
  that layout.

The trace format (one file per process, DIR/trace.<pid>.txt):
    # unblock trace 1
    F <id> <path>                        a file, declared before its first use
    R <id> <offset> <length> <calls>     a run of reads (consecutive calls at
    W <id> <offset> <length> <calls>     contiguous increasing offsets, merged)
"""
import os
from collections import OrderedDict
from dataclasses import dataclass, field

from . import PlanError
from .spec import permutations

HEADER = "# unblock trace 1"


@dataclass
class Trace:
    path: str
    runs: dict = field(default_factory=dict)   # file path -> [(op, offset, length, calls)]
    order: list = field(default_factory=list)  # [(file path, op, offset, length)]


def read_traces(d):
    """Every trace.<pid>.txt in d (sorted by pid); PlanError naming file:line."""
    try:
        names = os.listdir(d)
    except OSError as e:
        raise PlanError(f"cannot read the trace folder {d}: {e.strerror}") from None
    files = []
    for n in names:
        if n.startswith("trace.") and n.endswith(".txt") and n[6:-4].isdigit():
            files.append((int(n[6:-4]), os.path.join(d, n)))
    if not files:
        raise PlanError(f"{d}: no trace.<pid>.txt (run the program with UNBLOCK_TRACE={d})")
    return [read_trace(p) for _, p in sorted(files)]


def _int(tok, where, what):
    if not tok.isdigit():
        raise PlanError(f"{where}: {what} must be a decimal number, not {tok!r}")
    return int(tok)


def read_trace(path):
    t = Trace(path)
    ids = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline().rstrip("\n")
        if first != HEADER:
            raise PlanError(f"{path}:1: not an unblock trace (the first line must be "
                            f"'{HEADER}')")
        for n, line in enumerate(f, 2):
            line = line.rstrip("\n")
            where = f"{path}:{n}"
            if not line or line.startswith("#"):
                continue
            kind = line[0]
            if kind == "F":
                parts = line.split(" ", 2)
                if len(parts) != 3 or not parts[2]:
                    raise PlanError(f"{where}: expected 'F <id> <path>'")
                ids[_int(parts[1], where, "the file id")] = parts[2]
            elif kind in "RW":
                parts = line.split()
                if len(parts) != 5:
                    raise PlanError(f"{where}: expected '{kind} <id> <offset> <length> <calls>'")
                fid = _int(parts[1], where, "the file id")
                if fid not in ids:
                    raise PlanError(f"{where}: file id {fid} used before its F line")
                off = _int(parts[2], where, "the offset")
                length = _int(parts[3], where, "the length")
                calls = _int(parts[4], where, "the count of calls")
                p = ids[fid]
                t.runs.setdefault(p, []).append((kind, off, length, calls))
                t.order.append((p, kind, off, length))
            else:
                raise PlanError(f"{where}: unknown record {line.split()[0]!r} (F, R, W)")
    return t


def array_of_path(spec, path):
    """The spec's array whose file is this path (equal, a suffix, or same name)."""
    best = None
    for a in spec.arrays.values():
        f = a.file
        if path == f or path.endswith("/" + f.lstrip("./")):
            return a
        if os.path.basename(path) == os.path.basename(f):
            best = a
    return best


def index_of_linear(arr, lin):
    """The array index of the element at linear position lin of its file."""
    idx = [0] * len(arr.extents)
    for dim in reversed(arr.layout):
        idx[dim] = lin % arr.extents[dim]
        lin //= arr.extents[dim]
    return tuple(idx)


def linear_of_index(extents, layout, idx):
    lin = 0
    for dim in layout:
        lin = lin * extents[dim] + idx[dim]
    return lin


def preferred_from_step(arr, a, b):
    """The permutation a step from index a to index b prefers (None: other)."""
    changed = [d for d in range(len(a)) if a[d] != b[d]]
    if len(changed) != 1:
        return None
    d = changed[0]
    return tuple([x for x in arr.layout if x != d] + [d])


class Advice:
    def __init__(self, spec):
        self.spec = spec
        self.counters = {a: OrderedDict((tuple(p), 0) for p in permutations(len(arr.extents)))
                         for a, arr in spec.arrays.items()}
        self.other = {a: 0 for a in spec.arrays}
        self.static_fetches = {}    # array -> {perm: fetches}
        self.trace_fetches = {}
        self.sources = []

    def count(self, array, perm, n=1):
        if perm is None:
            self.other[array] += n
        else:
            self.counters[array][tuple(perm)] += n

    def recommend(self, a):
        """Fewest predicted fetches (kernel and traces summed); ties and no
        prediction: the largest counter (Figure 12)."""
        perms = list(self.counters[a])
        fig12 = max(perms, key=lambda p: (self.counters[a][p], -perms.index(p)))

        def predicted(p):
            tot, have = 0, False
            for src in (self.static_fetches, self.trace_fetches):
                if a in src:
                    tot += src[a][p]
                    have = True
            return tot if have else None

        preds = {p: predicted(p) for p in perms}
        if all(v is None for v in preds.values()):
            return fig12, fig12, preds
        best = min(perms, key=lambda p: (preds[p], p != fig12, perms.index(p)))
        return best, fig12, preds

    def text(self):
        lines = [f"layout advice ({', '.join(self.sources)}): per array, a counter per "
                 f"dimension permutation (Figure 12) and the fetches predicted for each "
                 f"(buffer {self.spec.buffer_blocks} blocks)"]
        for a, arr in self.spec.arrays.items():
            best, fig12, preds = self.recommend(a)
            lines.append(f"{a} ({arr.file}, extents {arr.extents}, now {arr.layout}):")
            cs = "  ".join(f"{list(p)} {c}" for p, c in self.counters[a].items())
            lines.append(f"  counters: {cs}  other {self.other[a]}")
            for name, src in (("kernel", self.static_fetches), ("traces", self.trace_fetches)):
                if a in src:
                    lines.append(f"  predicted fetches ({name}): " + "  ".join(
                        f"{list(p)} {n}" for p, n in src[a].items()))
            why = "fewest predicted fetches" if preds[best] is not None else "largest counter"
            if best != fig12:
                why += f"; the largest counter is {list(fig12)}"
            same = " (the current layout)" if list(best) == arr.layout else ""
            lines.append(f"  recommended: layout = {list(best)}{same}: {why}")
        return "\n".join(lines)


def _with_layout(spec, name, perm):
    import copy
    s = copy.deepcopy(spec)
    s.arrays[name].layout = list(perm)
    return s


def static_profile(adv, kernel, spec):
    from . import poly, sim
    adv.sources.append("kernel references")
    counts = {}
    for s in kernel.stmts:
        dom = poly.fix_params(poly.domain(kernel, s), kernel, spec.params)
        counts[s.name] = dom.count_val().to_python()
    for s in kernel.stmts:
        depth = {it: k for k, it in enumerate(s.iters)}
        for a in s.accesses:
            arr = spec.arrays.get(a.array)
            if arr is None:
                continue
            # the innermost counter that the reference uses
            used = [it for it in s.iters if any(it in sub for sub in a.subs)]
            if not used:
                continue
            inner = used[-1]
            dims = [d for d, sub in enumerate(a.subs) if inner in sub]
            if len(dims) != 1 or abs(a.subs[dims[0]][inner]) != 1:
                adv.count(a.array, None, counts[s.name])
                continue

            def level(d):
                sub = a.subs[d]
                return max((depth[it] for it in sub if it in depth), default=-1)

            perm = sorted(range(len(a.subs)), key=lambda d: (level(d), d))
            adv.count(a.array, perm, counts[s.name])
    from .lsg import Planner
    orig = sim.decode_order(kernel, Planner(kernel, spec).original_map(), spec.params)
    for name, arr in spec.arrays.items():
        adv.static_fetches[name] = OrderedDict()
        for p in adv.counters[name]:
            r = sim.simulate(kernel, _with_layout(spec, name, p), orig)
            adv.static_fetches[name][p] = r.fetches[name]


def trace_profile(adv, spec, traces):
    adv.sources.append(f"{len(traces)} trace file(s)")
    fetches = {a: OrderedDict((p, 0) for p in adv.counters[a]) for a in spec.arrays}
    for t in traces:
        seq = []   # (array, index) in the order the process touched them
        for path, kind, off, length in t.order:
            arr = array_of_path(spec, path)
            if arr is None or length == 0:
                continue
            first = off // arr.size
            last = min((off + length - 1) // arr.size, arr.elements - 1)
            for lin in range(first, last + 1):
                seq.append((arr.name, index_of_linear(arr, lin)))
        prev = {}
        for name, idx in seq:
            if name in prev:
                adv.count(name, preferred_from_step(spec.arrays[name], prev[name], idx))
            prev[name] = idx
        for name in spec.arrays:
            for p in adv.counters[name]:
                fetches[name][p] += replay(spec, seq, name, p)[name]
    for name in spec.arrays:
        if any(n for _, n in fetches[name].items()) or any(
                array_of_path(spec, p) is spec.arrays[name] for t in traces for p in t.runs):
            adv.trace_fetches[name] = fetches[name]


def replay(spec, seq, name=None, perm=None):
    """LRU over stripes for a sequence of (array, index); array name in layout perm."""
    lru = OrderedDict()
    out = {a: 0 for a in spec.arrays}
    for a, idx in seq:
        arr = spec.arrays[a]
        layout = list(perm) if a == name else arr.layout
        st = arr.size * linear_of_index(arr.extents, layout, idx) // arr.stripe
        blk = (a, st)
        if blk in lru:
            lru.move_to_end(blk)
            continue
        out[a] += 1
        lru[blk] = True
        if len(lru) > spec.buffer_blocks:
            lru.popitem(last=False)
    return out


def advise(kernel, spec, trace_dir):
    adv = Advice(spec)
    if kernel is not None:
        static_profile(adv, kernel, spec)
    if trace_dir:
        trace_profile(adv, spec, read_traces(trace_dir))
    return adv
