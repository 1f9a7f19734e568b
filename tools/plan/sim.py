"""The block-level buffer simulator: replays an order of statement instances
against an LRU buffer of B blocks (a block is one stripe of one file) and counts,
per array and in all, the fetches (an access to a block not in the buffer: it is
read from its disk; writes fetch too, the stripe being read, modified and written
back), fetches per block (fetches / distinct blocks touched), and disk switches
(consecutive fetches of one array, or of all, from different disks; and the sum of
Hamming distances between the disk tags of consecutive instances, the paper's
measure of disk state changes)."""
from collections import OrderedDict

from . import poly
from .lsg import hamming


def decode_order(kernel, sched_map, params):
    """The instances of a schedule map in execution order: [(stmt, {counter: value})].
    The schedule's times are [rank, original time], and the textual positions in
    the original time name the statement."""
    by_beta = {tuple(s.beta): s for s in kernel.stmts}
    rng = poly.fix_params(sched_map, kernel, params).range()
    times = sorted(p for _, p in poly.points(rng))
    out = []
    for t in times:
        orig = t[1:]
        beta = [orig[0]]
        k = 1
        while tuple(beta) not in by_beta:
            beta.append(orig[k + 1])
            k += 2
        s = by_beta[tuple(beta)]
        env = {it: orig[2 * n + 1] for n, it in enumerate(s.iters)}
        out.append((s, env))
    return out


class Result:
    def __init__(self, arrays):
        self.fetches = {a: 0 for a in arrays}
        self.blocks = {a: set() for a in arrays}
        self.switches = {a: 0 for a in arrays}
        self.total_switches = 0
        self.hamming = 0
        self.accesses = 0
        self.iterations = 0
        self.timeline = []      # (iteration index, disk, array) of every fetch

    @property
    def total_fetches(self):
        return sum(self.fetches.values())

    @property
    def total_blocks(self):
        return sum(len(b) for b in self.blocks.values())

    def per_block(self, array=None):
        if array is None:
            return self.total_fetches / max(1, self.total_blocks)
        return self.fetches[array] / max(1, len(self.blocks[array]))

    def as_dict(self):
        return {"fetches": self.total_fetches, "blocks": self.total_blocks,
                "fetches_per_block": round(self.per_block(), 4),
                "disk_switches": self.total_switches, "hamming": self.hamming,
                "iterations": self.iterations,
                "arrays": {a: {"fetches": self.fetches[a], "blocks": len(self.blocks[a]),
                               "fetches_per_block": round(self.per_block(a), 4),
                               "disk_switches": self.switches[a]}
                           for a in self.fetches}}


def simulate(kernel, spec, order, buffer_blocks=None):
    """LRU over stripes: order is [(stmt, env)]; each instance reads its
    references in textual order, then writes."""
    B = buffer_blocks or spec.buffer_blocks
    lru = OrderedDict()
    r = Result(spec.arrays)
    last_disk = {}
    last_any = None
    last_tag = None
    refs = {}
    for s in kernel.stmts:
        refs[s.name] = [(a, spec.arrays[a.array]) for a in s.accesses if a.array in spec.arrays]
    for n, (s, env) in enumerate(order):
        tag = 0
        for a, arr in refs[s.name]:
            st = poly.stripe_of(arr, poly.eval_subs(a, env))
            disk = poly.disk_of_stripe(arr, st, spec.disks)
            tag |= 1 << disk
            blk = (arr.name, st)
            r.accesses += 1
            r.blocks[arr.name].add(st)
            if blk in lru:
                lru.move_to_end(blk)
                continue
            r.fetches[arr.name] += 1
            r.timeline.append((n, disk, arr.name))
            if last_disk.get(arr.name, disk) != disk:
                r.switches[arr.name] += 1
            last_disk[arr.name] = disk
            if last_any is not None and last_any != disk:
                r.total_switches += 1
            last_any = disk
            lru[blk] = True
            if len(lru) > B:
                lru.popitem(last=False)
        if last_tag is not None:
            r.hamming += hamming(last_tag, tag)
        last_tag = tag
    r.iterations = len(order)
    return r


def threads_order(kernel, original_map, steps, params):
    """The instances of a Figure 14 schedule as the buffer sees them: step by
    step, the threads' nodes interleaved one instance each in turn (threads run
    at the same speed)."""
    out = []
    for st in steps:
        lists = [decode_order(kernel, original_map.intersect_domain(n.set), params)
                 if n is not None else [] for n in st]
        k = 0
        while any(k < len(x) for x in lists):
            for x in lists:
                if k < len(x):
                    out.append(x[k])
            k += 1
    return out


def disks_per_step(steps):
    """The number of disks in use at each step (the OR of the threads' tags)."""
    out = []
    for st in steps:
        g = 0
        for n in st:
            if n is not None:
                g |= n.tag
        out.append(bin(g).count("1"))
    return out
