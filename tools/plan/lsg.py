"""The paper's algorithm: disk-locality tags, locality sets, the locality set graph
(LSG), cycle removal by node splitting, and the schedule that always takes next
the ready node whose tag is nearest (Hamming distance) to the last one's
(Figure 10), for each loop nest alone (DRO-L) or for the whole function (DRO-WP).

A node is a set of statement instances (possibly of several statements and nests)
with one disk tag; its instances run in their original order.  Nodes run one
after another in the order of the schedule, so the new time of an instance is
[rank of its node, original time].  That order is legal exactly when the graph of
nodes is acyclic and the ranks follow its edges; isl proves it afterwards
(codegen.check_legal).
"""
from dataclasses import dataclass, field

import islpy as isl

from . import poly


@dataclass
class Node:
    ident: int
    tag: int               # bit d set: the node's instances touch disk d
    nest: int              # its nest, or -1 when it holds instances of several
    set: object            # isl.UnionSet of statement instances
    key: tuple = ()        # its first instance's original time (params fixed)
    origin: str = ""       # how it was made (locality set, split, merge)
    tried: frozenset = frozenset()   # references whose stripe already split it
    stripe_split: bool = False       # no further split by stripe
    thread: int = 0        # the thread that runs it (--threads)

    def label(self, disks):
        return tag_str(self.tag, disks)


def tag_str(tag, disks):
    """The paper's notation: lambda_1 ... lambda_T, disk 0 first."""
    return "".join("1" if tag >> d & 1 else "0" for d in range(disks))


def hamming(a, b):
    return bin(a ^ b).count("1")


# ---- step 1: the disks of each iteration, as a tag ----

def locality_sets(kernel, spec):
    """For each statement, [(tag, isl.Set)]: its instances partitioned by the set of
    disks they touch (Q_tag restricted to the statement).  Instances without
    disk-resident references have tag 0."""
    out = {}
    for s in kernel.stmts:
        dom = poly.domain(kernel, s)
        touch = poly.iteration_disks(kernel, spec, s)
        pieces = [(dom, 0)]
        if touch is not None:
            for d in range(spec.disks):
                on_d = touch.intersect_range(isl.Set(f"{{ D[{d}] }}")).domain()
                nxt = []
                for p, tag in pieces:
                    inside = p.intersect(on_d)
                    outside = p.subtract(on_d)
                    if not inside.is_empty():
                        nxt.append((inside.coalesce(), tag | 1 << d))
                    if not outside.is_empty():
                        nxt.append((outside.coalesce(), tag))
                pieces = nxt
        out[s.name] = pieces
    return out


def tag_of_point(kernel, spec, s, env):
    """The tag of one instance, in Python (the simulator's view; tested against
    locality_sets)."""
    tag = 0
    for a in s.accesses:
        arr = spec.arrays.get(a.array)
        if arr is None:
            continue
        st = poly.stripe_of(arr, poly.eval_subs(a, env))
        tag |= 1 << poly.disk_of_stripe(arr, st, spec.disks)
    return tag


# ---- step 2: nodes and the graph ----

class Planner:
    def __init__(self, kernel, spec, deps=None, th=None):
        self.kernel = kernel
        self.spec = spec
        self.th = th if th is not None else poly.theta(kernel)
        self.deps = deps if deps is not None else poly.dependences(kernel, self.th)[3]
        self.sets = None
        self.next_id = 0
        self.log = []
        width = poly.theta_dims(kernel)
        sp = isl.Space.create_from_names(isl.DEFAULT_CONTEXT,
                                         set=[f"t{k}" for k in range(width)])
        self.lex_le = isl.UnionMap.from_map(isl.Map.lex_le(sp))
        self.lex_ge = isl.UnionMap.from_map(isl.Map.lex_ge(sp))
        self.stripe_maps = self._stripe_maps()
        self.first_stripe = self.stripe_maps[0] if self.stripe_maps else isl.UnionMap("{ }")
        self._reach = {}

    def _stripe_maps(self):
        """For r = 0, 1, ...: S[i] -> [b], the stripe the r-th distinct disk-resident
        reference of S touches (the written one first; a statement with fewer
        references gives its last)."""
        per = {}
        for s in self.kernel.stmts:
            refs, seen = [], set()
            for a in sorted((a for a in s.accesses if a.array in self.spec.arrays),
                            key=lambda a: not a.write):
                k = (a.array, repr(a.subs))
                if k not in seen:
                    seen.add(k)
                    refs.append(a)
            per[s.name] = (s, refs)
        ranks = max((len(r) for _, r in per.values()), default=0)
        maps = []
        for r in range(ranks):
            u = isl.UnionMap("{ }")
            for s, refs in per.values():
                if not refs:
                    continue
                a = refs[min(r, len(refs) - 1)]
                arr = self.spec.arrays[a.array]
                m = poly.access_map(self.kernel, s, a).apply_range(poly.stripe_map(arr))
                u = u.union(isl.UnionMap.from_map(m.reset_tuple_id(isl.dim_type.out)))
            maps.append(u)
        return maps

    def node(self, tag, nest, uset, origin, thread=0):
        n = Node(self.next_id, tag, nest, uset.coalesce(), origin=origin, thread=thread)
        self.next_id += 1
        n.key = self.first_time(n.set)
        return n

    def first_time(self, uset):
        t = poly.fix_params(uset, self.kernel, self.spec.params).apply(self.th)
        if t.is_empty():
            return (float("inf"),)
        pts = poly.points(t.lexmin())
        return pts[0][1] if pts else (float("inf"),)

    def initial_nodes(self, whole_program):
        """DRO-WP: one node per tag over all nests; DRO-L: one per (nest, tag)."""
        if self.sets is None:
            self.sets = locality_sets(self.kernel, self.spec)
        groups = {}
        for s in self.kernel.stmts:
            for st, tag in ((x, t) for x, t in self.sets[s.name]):
                k = (tag, -1 if whole_program else s.nest)
                u = isl.UnionSet.from_set(st)
                groups[k] = groups[k].union(u) if k in groups else u
        nodes = [self.node(tag, nest, u, "locality set")
                 for (tag, nest), u in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0]))]
        return nodes

    def reach(self, n):
        """The instances that depend on an instance of node n (cached per node)."""
        if n.ident not in self._reach:
            self._reach[n.ident] = self.deps.intersect_domain(n.set).range()
        return self._reach[n.ident]

    def edges(self, nodes, succ=None, new=()):
        """u -> v when an instance of v depends on one of u (flow, anti or output).
        With succ and new: succ updated for the nodes in new only."""
        if succ is None:
            succ = {}
            new = nodes
        ids = {n.ident for n in nodes}
        succ = {i: {j for j in vs if j in ids} for i, vs in succ.items() if i in ids}
        newids = {n.ident for n in new}
        for u in nodes:
            succ.setdefault(u.ident, set())
            reach = self.reach(u)
            if reach.is_empty():
                continue
            targets = nodes if u.ident in newids else new
            for v in targets:
                if v is not u and not reach.intersect(v.set).is_empty():
                    succ[u.ident].add(v.ident)
        return succ

    # ---- step 3: cycle removal ----

    def remove_cycles(self, nodes, max_splits=48):
        """Makes the LSG acyclic.  Which node: in each strongly connected component,
        the node with the largest in-degree x out-degree inside it (the greedy
        feedback-vertex-set heuristic).  How it is split: first by the stripe of its
        first disk-resident reference (pieces that touch fewer blocks, often no
        longer on the cycle); then along the original order, into the instances
        before the first one that receives a dependence from the cycle and the rest
        (the first part then has no edge from the cycle, so it leaves it).  A
        component that no split breaks within max_splits is merged into one node
        (tag: the union), which runs in the original order."""
        splits = 0
        succ, new = None, nodes
        while True:
            succ = self.edges(nodes, succ, new)
            sccs = [c for c in strongly_connected(nodes, succ) if len(c) > 1]
            if not sccs:
                return nodes, succ
            comp = sccs[0]
            ids = set(comp)
            byid = {n.ident: n for n in nodes}
            if splits >= max_splits:
                nodes = self.merge(nodes, ids, "no split within the limit")
                new = nodes[-1:]
                continue

            def score(i):
                indeg = sum(1 for j in ids if i in succ[j])
                outdeg = len(succ[i] & ids)
                return (-indeg * outdeg, byid[i].key)

            done = False
            for i in sorted(ids, key=score):
                v = byid[i]
                others = None
                for j in ids - {i}:
                    others = byid[j].set if others is None else others.union(byid[j].set)
                rest = [byid[j] for j in ids - {i}]
                parts = self.split(v, others, rest, succ)
                if parts:
                    nodes = [n for n in nodes if n.ident != i] + parts
                    new = parts
                    splits += 1
                    self.log.append(f"split node {v.ident} (tag {v.label(self.spec.disks)}, "
                                    f"{v.origin}) into {len(parts)}: {parts[0].origin}")
                    done = True
                    break
            if not done:
                nodes = self.merge(nodes, ids, "no node of the cycle could be split")
                new = nodes[-1:]

    def split(self, v, others, rest, succ):
        if not v.stripe_split:
            best, best_score = None, None
            ranks = [r for r in range(len(self.stripe_maps)) if r not in v.tried]
            for r in ranks:
                parts = self.split_by_stripe(v, r)
                if not parts:
                    continue
                freed = self.freed(parts, rest, succ) if len(ranks) > 1 else 0
                score = (freed, -r)
                if best_score is None or score > best_score:
                    best, best_score = (r, parts), score
            v.stripe_split = True
            if best:
                r, parts = best
                for p in parts:
                    p.tried = v.tried | {r}
                    p.stripe_split = len(p.tried) >= len(self.stripe_maps)
                return parts
        for side in ("in", "out"):
            parts = self.split_by_time(v, others, side)
            if parts:
                return parts
        return None

    def freed(self, parts, rest, succ):
        """How many of parts are on no cycle of the graph rest + parts (a cycle
        through them cannot leave the component they were cut from); succ holds
        the edges among rest already."""
        local = list(rest) + list(parts)
        ids = {n.ident for n in rest}
        succ = {i: succ[i] & ids for i in ids}
        for p in parts:
            succ[p.ident] = set()
        for u in local:
            reach = self.reach(u)
            if reach.is_empty():
                continue
            for v in (local if u in parts else parts):
                if v is not u and not reach.intersect(v.set).is_empty():
                    succ[u.ident].add(v.ident)
        cyclic = set()
        for c in strongly_connected(local, succ):
            if len(c) > 1:
                cyclic.update(c)
        return sum(1 for p in parts if p.ident not in cyclic)

    def split_by_stripe(self, v, rank=0, limit=16):
        stripes = self.stripe_maps[rank]
        b = v.set.apply(stripes)
        b = poly.fix_params(b, self.kernel, self.spec.params)
        if b.is_empty():
            return None
        lo = poly.points(b.lexmin())[0][1][0]
        hi = poly.points(b.lexmax())[0][1][0]
        if lo == hi:
            return None
        width = -(-(hi - lo + 1) // limit)
        parts = []
        for start in range(lo, hi + 1, width):
            rng = isl.UnionSet(f"{{ [b] : {start} <= b < {start + width} }}")
            piece = v.set.intersect(stripes.intersect_range(rng).domain())
            if not piece.is_empty():
                n = self.node(v.tag, v.nest, piece,
                              f"split by the stripe of reference {rank + 1}, "
                              f"{start}..{start + width - 1}", v.thread)
                parts.append(n)
        # instances whose stripe lies outside lo..hi at other parameter values
        rest = v.set
        for p in parts:
            rest = rest.subtract(p.set)
        if not rest.is_empty():
            n = self.node(v.tag, v.nest, rest, "split by stripe (rest)", v.thread)
            parts.append(n)
        return parts if len(parts) > 1 else None

    def split_by_time(self, v, others, side):
        if side == "in":
            recv = self.deps.intersect_domain(others).intersect_range(v.set).range()
            if recv.is_empty():
                return None
            later = recv.apply(self.th).apply(self.lex_le)
            second = self.th.intersect_range(later).domain().intersect(v.set)
            first = v.set.subtract(second)
        else:
            send = self.deps.intersect_domain(v.set).intersect_range(others).domain()
            if send.is_empty():
                return None
            earlier = send.apply(self.th).apply(self.lex_ge)
            first = self.th.intersect_range(earlier).domain().intersect(v.set)
            second = v.set.subtract(first)
        if first.is_empty() or second.is_empty():
            return None
        how = "before the first dependence from the cycle" if side == "in" else \
            "up to the last dependence into the cycle"
        a = self.node(v.tag, v.nest, first, f"split in original order, {how}", v.thread)
        b = self.node(v.tag, v.nest, second, "split in original order, the rest", v.thread)
        a.stripe_split = b.stripe_split = True
        return [a, b]

    def merge(self, nodes, ids, why):
        parts = [n for n in nodes if n.ident in ids]
        u = parts[0].set
        tag = 0
        for p in parts[1:]:
            u = u.union(p.set)
        for p in parts:
            tag |= p.tag
        nests = {p.nest for p in parts}
        m = self.node(tag, nests.pop() if len(nests) == 1 else -1, u, f"merged ({why})",
                      min(p.thread for p in parts))
        m.stripe_split = True
        self.log.append(f"merged {len(parts)} nodes of a cycle into node {m.ident} "
                        f"(tag {m.label(self.spec.disks)}): {why}")
        return [n for n in nodes if n.ident not in ids] + [m]

    # ---- step 4: the schedule (Figure 10) ----

    def plan(self, whole_program):
        """DRO-WP (whole_program) or DRO-L: returns the scheduled nodes, in order."""
        nodes = self.initial_nodes(whole_program)
        if whole_program:
            nodes, succ = self.remove_cycles(nodes)
            return hamming_schedule(nodes, succ)
        order, last = [], None
        for nest in range(self.kernel.nests):
            part = [n for n in nodes if n.nest == nest]
            part, succ = self.remove_cycles(part)
            sched = hamming_schedule(part, succ, last)
            order += sched
            if sched:
                last = sched[-1].tag
        return order

    def thread_blocks(self, threads):
        """Instances per thread: each nest's outermost loop cut into `threads`
        blocks of equal length at the spec's parameter values (the first and last
        block open-ended, so every instance has a thread for any value)."""
        blocks = [isl.UnionSet("{ }") for _ in range(threads)]
        for s in self.kernel.stmts:
            dom = poly.domain(self.kernel, s)
            fixed = poly.fix_params(dom, self.kernel, self.spec.params)
            it = s.iters[0]
            if fixed.is_empty():
                lo, hi = 0, 0
            else:
                pts = [p[1][0] for p in poly.points(isl.UnionSet.from_set(
                    fixed.lexmin())) + poly.points(isl.UnionSet.from_set(fixed.lexmax()))]
                lo, hi = min(pts), max(pts)
            size = max(1, -(-(hi - lo + 1) // threads))
            for t in range(threads):
                cons = []
                if t > 0:
                    cons.append(f"{it} >= {lo + t * size}")
                if t < threads - 1:
                    cons.append(f"{it} < {lo + (t + 1) * size}")
                c = " and ".join(cons)
                piece = isl.UnionSet.from_set(dom.intersect(isl.Set(
                    f"{poly._params(self.kernel)}{{ {s.name}[{', '.join(s.iters)}]"
                    f"{' : ' + c if c else ''} }}")))
                blocks[t] = blocks[t].union(piece)
        return blocks

    def plan_threads(self, threads, coordinated=True):
        """Figure 14: the whole-program nodes cut by thread, cycles removed again
        (a cut can make two parts of one node depend on each other both ways),
        scheduled step by step.  Returns (nodes, succ, steps)."""
        base = self.plan(whole_program=True)
        blocks = self.thread_blocks(threads)
        nodes = []
        for n in base:
            for t in range(threads):
                part = n.set.intersect(blocks[t])
                if not part.is_empty():
                    nodes.append(self.node(n.tag, n.nest, part, f"{n.origin}, thread {t}", t))
        nodes, succ = self.remove_cycles(nodes)
        return nodes, succ, schedule_threads(nodes, succ, threads, coordinated)

    def steps_map(self, steps):
        """The order in which one thread would run the steps: [step, thread,
        original time]; legal when every edge goes to a later step."""
        width = poly.theta_dims(self.kernel)
        ts = ", ".join(f"t{k}" for k in range(width))
        u = isl.UnionMap("{ }")
        for k, step in enumerate(steps):
            for t, n in enumerate(step):
                if n is None:
                    continue
                shift = isl.UnionMap(f"{{ [{ts}] -> [{k}, {t}, {ts}] }}")
                u = u.union(self.th.intersect_domain(n.set).apply_range(shift))
        return u

    def schedule_map(self, order):
        """The new order as an isl map: instance -> [rank of its node, original time]."""
        width = poly.theta_dims(self.kernel)
        ts = ", ".join(f"t{k}" for k in range(width))
        u = isl.UnionMap("{ }")
        for rank, n in enumerate(order):
            shift = isl.UnionMap(f"{{ [{ts}] -> [{rank}, {ts}] }}")
            u = u.union(self.th.intersect_domain(n.set).apply_range(shift))
        return u

    def original_map(self):
        width = poly.theta_dims(self.kernel)
        ts = ", ".join(f"t{k}" for k in range(width))
        return self.th.apply_range(isl.UnionMap(f"{{ [{ts}] -> [0, {ts}] }}"))


def hamming_schedule(nodes, succ, last=None):
    """Figure 10: repeatedly take, among the ready nodes (all predecessors taken),
    the one whose tag is nearest in Hamming distance to the last taken; ties go to
    the one that comes first in the original order."""
    pred = {n.ident: 0 for n in nodes}
    for u, vs in succ.items():
        for v in vs:
            pred[v] += 1
    ready = [n for n in nodes if pred[n.ident] == 0]
    order = []
    while ready:
        if last is None:
            pick = min(ready, key=lambda n: n.key)
        else:
            pick = min(ready, key=lambda n: (hamming(last, n.tag), n.key))
        ready.remove(pick)
        order.append(pick)
        last = pick.tag
        for v in succ[pick.ident]:
            pred[v] -= 1
            if pred[v] == 0:
                ready.append(next(n for n in nodes if n.ident == v))
    if len(order) != len(nodes):
        raise AssertionError("the LSG still has a cycle")
    return order


def strongly_connected(nodes, succ):
    """Tarjan's algorithm, iterative: lists of node ids."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in (n.ident for n in nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(succ[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(succ[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def schedule_threads(nodes, succ, threads, coordinated=True):
    """Figure 14: T threads, each with its own nodes (Node.thread), one graph of
    dependences over all of them.  At each step every thread with a ready node
    (all predecessors, of any thread, run at earlier steps) takes one: with
    coordination, the node whose tag is already covered by the global disk usage
    G and needs the most disks, else the one nearest to G in Hamming distance, G
    being the OR of the tags taken so far at this step (the first thread: nearest
    to its own last tag); without (each thread for itself, Figure 10): the node
    nearest to its own last tag.  Returns the steps: per step, the node each
    thread runs (None: nothing ready)."""
    byid = {n.ident: n for n in nodes}
    pred = {n.ident: 0 for n in nodes}
    for u, vs in succ.items():
        for v in vs:
            pred[v] += 1
    ready = [[n for n in nodes if n.thread == t and pred[n.ident] == 0]
             for t in range(threads)]
    last = [None] * threads
    steps = []
    left = len(nodes)
    while left:
        G = 0
        step = []
        for t in range(threads):
            cand = ready[t]
            if not cand:
                step.append(None)
                continue
            covered = [n for n in cand if n.tag & ~G == 0] if coordinated and G else []
            if covered:
                pick = max(covered, key=lambda n: (bin(n.tag).count("1"),
                                                   tuple(-x for x in n.key)))
            else:
                ref = G if coordinated and G else last[t]
                pick = min(cand, key=lambda n: (0 if ref is None else hamming(ref, n.tag),
                                                n.key))
            cand.remove(pick)
            step.append(pick)
            G |= pick.tag
            last[t] = pick.tag
        if not any(step):
            raise AssertionError("the thread graph still has a cycle")
        for pick in step:
            if pick is None:
                continue
            left -= 1
            for v in succ[pick.ident]:
                pred[v] -= 1
                if pred[v] == 0:
                    ready[byid[v].thread].append(byid[v])
        steps.append(step)
    return steps
