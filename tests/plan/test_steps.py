"""Each step of the disk-reuse algorithm, alone: index -> stripe -> disk maps,
tags and locality sets, the LSG's edges, cycle removal, the Hamming-distance
schedule (Figure 10), DRO-L and DRO-WP, the legality proof, the LRU simulator,
and the multi-thread schedule (Figure 14)."""
import itertools
import unittest

import islpy as isl

from common import kernel
from plan import lsg, poly, sim, codegen
from plan.cfront import read_kernel
from plan.lsg import Node, Planner, hamming_schedule, strongly_connected, tag_str
from plan.spec import load_spec, parse_spec


def load(name):
    c, t = kernel(name)
    return read_kernel(c), load_spec(t)


def brute_deps(k, spec, order):
    """Instance pairs (src, dst) that touch one element, one of them writing, src
    first: the memory-based dependences, by enumeration."""
    last = {}
    pairs = set()
    seen = {}
    for n, (s, env) in enumerate(order):
        inst = (s.name, tuple(env[i] for i in s.iters))
        for a in s.accesses:
            el = (a.array, tuple(poly.eval_subs(a, env)))
            for prev, w in seen.get(el, []):
                if (w or a.write) and prev != inst:
                    pairs.add((prev, inst))
            seen.setdefault(el, []).append((inst, a.write))
    return pairs


class DiskMapTest(unittest.TestCase):
    def test_isl_and_python_agree(self):
        spec = parse_spec("""
buffer_blocks = 2
[disks]
count = 4
stripe = 96
[arrays.A]
type = "int"
extents = [5, 7, 3]
file = "A"
layout = [2, 0, 1]
disks = 3
first_disk = 2
""")
        arr = spec.arrays["A"]
        dm = poly.disk_map(arr, spec.disks)
        sm = poly.stripe_map(arr)
        got_d, got_s = {}, {}
        for p in poly.points(isl.UnionSet.from_set(dm.wrap().flatten())):
            got_d[p[1][:3]] = p[1][3]
        for p in poly.points(isl.UnionSet.from_set(sm.wrap().flatten())):
            got_s[p[1][:3]] = p[1][3]
        self.assertEqual(len(got_d), 5 * 7 * 3)
        for idx in itertools.product(range(5), range(7), range(3)):
            # file order: dimension 2, then 0, then 1
            lin = (idx[2] * 5 + idx[0]) * 7 + idx[1]
            st = lin * 4 // 96
            self.assertEqual(poly.stripe_of(arr, idx), st)
            self.assertEqual(got_s[idx], st)
            self.assertEqual(poly.disk_of_stripe(arr, st, 4), (2 + st % 3) % 4)
            self.assertEqual(got_d[idx], (2 + st % 3) % 4)


class LocalitySetTest(unittest.TestCase):
    def test_sets_partition_the_domain_by_tag(self):
        for name in ("transpose", "imperfect", "param"):
            k, spec = load(name)
            sets = lsg.locality_sets(k, spec)
            for s in k.stmts:
                dom = poly.fix_params(poly.domain(k, s), k, spec.params)
                seen = set()
                for piece, tag in sets[s.name]:
                    for _, pt in poly.points(isl.UnionSet.from_set(
                            poly.fix_params(piece, k, spec.params))):
                        env = dict(zip(s.iters, pt))
                        self.assertEqual(lsg.tag_of_point(k, spec, s, env), tag,
                                         f"{name} {s.name}{pt}")
                        self.assertNotIn(pt, seen)
                        seen.add(pt)
                self.assertEqual(len(seen), dom.count_val().to_python())
        # transpose: A row i on disk i//8 % 4, B column i on disks j//8 % 4
        k, spec = load("transpose")
        tags = {t for _, t in lsg.locality_sets(k, spec)["S_0"]}
        self.assertEqual(len(tags), 10)  # 4 single disks + 6 pairs
        self.assertEqual(tag_str(0b0101, 4), "1010")


class GraphTest(unittest.TestCase):
    def test_edges_are_the_instance_dependences(self):
        for name in ("fig3", "imperfect", "transpose"):
            k, spec = load(name)
            p = Planner(k, spec)
            nodes = p.initial_nodes(True)
            succ = p.edges(nodes)
            order = sim.decode_order(k, p.original_map(), spec.params)
            where = {}
            for n in nodes:
                for tup, pt in poly.points(poly.fix_params(n.set, k, spec.params)):
                    where[(tup, pt)] = n.ident
            want = {n.ident: set() for n in nodes}
            for a, b in brute_deps(k, spec, order):
                if where[a] != where[b]:
                    want[where[a]].add(where[b])
            self.assertEqual(succ, want, name)

    def test_cycle_removal_keeps_every_instance_once(self):
        k, spec = load("imperfect")
        p = Planner(k, spec)
        nodes = p.initial_nodes(True)
        self.assertTrue(any(len(c) > 1 for c in strongly_connected(nodes, p.edges(nodes))))
        nodes, succ = p.remove_cycles(nodes)
        self.assertFalse(any(len(c) > 1 for c in strongly_connected(nodes, succ)))
        self.assertTrue(p.log)
        total = 0
        union = None
        for n in nodes:
            c = poly.fix_params(n.set, k, spec.params)
            total += len(poly.points(c))
            union = c if union is None else union.union(c)
        dom = poly.fix_params(poly.domains(k), k, spec.params)
        self.assertEqual(total, len(poly.points(dom)))
        self.assertTrue(union.is_equal(dom))

    def test_merge_is_the_last_resort(self):
        k, spec = load("stencil")
        p = Planner(k, spec)
        nodes, succ = p.remove_cycles(p.initial_nodes(True), max_splits=2)
        self.assertTrue(any("merged" in x for x in p.log))
        self.assertFalse(any(len(c) > 1 for c in strongly_connected(nodes, succ)))


class ScheduleTest(unittest.TestCase):
    def nodes(self, tags, edges):
        ns = [Node(i, t, 0, None, key=(i,)) for i, t in enumerate(tags)]
        succ = {i: set() for i in range(len(tags))}
        for a, b in edges:
            succ[a].add(b)
        return ns, succ

    def test_nearest_ready_tag_first(self):
        # 0:1100 -> 3:0011 ; 1:0110 2:1000 free.  From 1100: 1000 (distance 1),
        # then 0110 (3 from 1000? no: 1000 ^ 0110 = 1110, 3) vs 0011 (ready after 0,
        # 1000 ^ 0011 -> 3): tie -> original order (key): 0110.
        ns, succ = self.nodes([0b0011, 0b0110, 0b0001, 0b1100], [(0, 3)])
        order = hamming_schedule(ns, succ)
        self.assertEqual([n.ident for n in order], [0, 2, 1, 3])
        total = sum(lsg.hamming(a.tag, b.tag) for a, b in zip(order, order[1:]))
        orig = sum(lsg.hamming(a.tag, b.tag) for a, b in zip(ns, ns[1:]))
        self.assertLessEqual(total, orig)

    def test_respects_edges(self):
        ns, succ = self.nodes([0b1, 0b1, 0b1000, 0b1], [(2, 0), (2, 1), (2, 3)])
        order = [n.ident for n in hamming_schedule(ns, succ)]
        self.assertEqual(order[0], 2)

    def test_a_cycle_is_refused(self):
        ns, succ = self.nodes([1, 2], [(0, 1), (1, 0)])
        with self.assertRaises(AssertionError):
            hamming_schedule(ns, succ)

    def test_dro_l_keeps_nests_in_order_and_wp_mixes_them(self):
        k, spec = load("fig3")
        p = Planner(k, spec)
        _, _, _, deps = poly.dependences(k)
        for wp in (False, True):
            order = p.plan(whole_program=wp)
            ok, lines = codegen.check_legal(k, deps, p.schedule_map(order))
            self.assertTrue(ok, lines)
            nests = []
            for n in order:
                nests.append({s for s in range(k.nests) if not n.set.intersect(
                    isl.UnionSet(f"{{ S_{s}[i, j] }}")).is_empty()})
            if wp:  # a node runs the chunks of several nests one after another
                self.assertTrue(any(len(x) > 1 for x in nests))
            else:
                self.assertTrue(all(len(x) == 1 for x in nests))
                firsts = [min(x) for x in nests]
                self.assertEqual(firsts, sorted(firsts))

    def test_threads_figure_14(self):
        # thread 0: 0011 then 1100 (an edge); thread 1: 0100 and 0010, free.  With
        # the global mask, thread 1 takes at each step the node G already covers;
        # each for itself, it takes them in original order.
        def nodes():
            return [Node(0, 0b1100, 0, None, key=(0,), thread=0),
                    Node(1, 0b0011, 0, None, key=(1,), thread=0),
                    Node(2, 0b0010, 0, None, key=(2,), thread=1),
                    Node(3, 0b0100, 0, None, key=(3,), thread=1)]
        succ = {0: {1}, 1: set(), 2: set(), 3: set()}
        steps = lsg.schedule_threads(nodes(), succ, 2)
        self.assertEqual([(a.tag, b.tag) for a, b in steps], [(0b1100, 0b0100),
                                                              (0b0011, 0b0010)])
        steps = lsg.schedule_threads(nodes(), succ, 2, coordinated=False)
        self.assertEqual([(a.tag, b.tag) for a, b in steps], [(0b1100, 0b0010),
                                                              (0b0011, 0b0100)])
        # an edge across threads: node 3 waits for node 1, a step later
        succ = {0: {1}, 1: {3}, 2: set(), 3: set()}
        steps = lsg.schedule_threads(nodes(), succ, 2)
        where = {n.ident: k for k, st in enumerate(steps) for n in st if n is not None}
        self.assertGreater(where[3], where[1])
        self.assertEqual(len(steps), 3)


class LegalityTest(unittest.TestCase):
    def test_a_reversed_order_is_refused(self):
        k, spec = load("stencil")
        _, _, _, deps = poly.dependences(k)
        p = Planner(k, spec, deps)
        ok, _ = codegen.check_legal(k, deps, p.original_map())
        self.assertTrue(ok)
        width = poly.theta_dims(k)
        ts = ", ".join(f"t{i}" for i in range(width))
        neg = ", ".join(f"-t{i}" for i in range(width))
        rev = p.th.apply_range(isl.UnionMap(f"{{ [{ts}] -> [0, {neg}] }}"))
        ok, lines = codegen.check_legal(k, deps, rev)
        self.assertFalse(ok)
        self.assertIn("VIOLATED", lines[0])


    def test_threads_in_one_step_are_refused(self):
        k, spec = load("transpose")
        _, _, _, deps = poly.dependences(k)
        p = Planner(k, spec, deps)
        nodes, succ, steps = p.plan_threads(2)
        ok, _ = codegen.check_threads_legal(k, deps, steps)
        self.assertTrue(ok)
        flat = [n for st in steps for n in st if n is not None]
        # every node at once: nest 2's readers beside nest 1's writers
        ok, lines = codegen.check_threads_legal(k, deps, [flat])
        self.assertFalse(ok)
        self.assertIn("VIOLATED", lines[1])


class SimulatorTest(unittest.TestCase):
    def test_lru_by_hand(self):
        # one array of 8 ints in stripes of 8 bytes (2 elements), 4 disks, buffer 2;
        # order touches elements 0 2 4 0 1 6: stripes 0 1 2 0 0 3
        spec = parse_spec("""
buffer_blocks = 2
[disks]
count = 4
stripe = 8
[arrays.A]
type = "int"
extents = [8]
file = "A"
""")
        import tempfile, os
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "k.c")
            with open(src, "w") as f:
                f.write("void kernel(int A[8]) { for (int i = 0; i < 8; i++) A[i] = 0; }\n")
            k = read_kernel(src)
        s = k.stmts[0]
        order = [(s, {"i": i}) for i in (0, 2, 4, 0, 1, 6)]
        r = sim.simulate(k, spec, order)
        # 0 miss, 1 miss, 2 miss (evicts 0), 0 miss (evicts 1), 0 hit, 3 miss
        self.assertEqual(r.fetches["A"], 5)
        self.assertEqual(len(r.blocks["A"]), 4)
        self.assertAlmostEqual(r.per_block(), 5 / 4)
        self.assertEqual([t[1] for t in r.timeline], [0, 1, 2, 0, 3])
        self.assertEqual(r.total_switches, 4)
        self.assertEqual(r.hamming, 2 + 2 + 2 + 0 + 2)
        self.assertEqual(sim.simulate(k, spec, order, buffer_blocks=4).fetches["A"], 4)


if __name__ == "__main__":
    unittest.main()
