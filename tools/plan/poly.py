"""The kernel as isl objects: iteration domains, access relations, the original
order, the maps from array elements to stripes and disks, and the dependences.

Every map from an array index to a disk is quasi-affine: the file offset of an
element is affine in its index once the dimensions are taken in file order (the
layout permutation), and the stripe and the disk are a floor and a modulo of it by
integer constants:

    offset(x) = size * sum_k x[layout[k]] * prod_{l>k} extent[layout[l]]
    stripe(x) = floor(offset(x) / stripe_size)
    disk(x)   = (first_disk + stripe(x) mod disks_of_the_array) mod disks
"""
import islpy as isl

from .cfront import aff_str, aff_eval


def _params(kernel):
    return "[" + ", ".join(kernel.params) + "] -> " if kernel.params else ""


def depth(kernel):
    return max(len(s.iters) for s in kernel.stmts)


def domain_str(kernel, s):
    cons = []
    for it, lo, up in zip(s.iters, s.lower, s.upper):
        cons.append(f"{aff_str(lo)} <= {it} <= {aff_str(up)}")
    body = " and ".join(cons) if cons else ""
    return f"{_params(kernel)}{{ {s.name}[{', '.join(s.iters)}]{' : ' + body if body else ''} }}"


def domain(kernel, s):
    return isl.Set(domain_str(kernel, s))


def domains(kernel):
    u = isl.UnionSet("{ }")
    for s in kernel.stmts:
        u = u.union(isl.UnionSet.from_set(domain(kernel, s)))
    return u


def theta_dims(kernel):
    return 2 * depth(kernel) + 1


def theta_vector(s, width):
    """The original (2d+1) time of S: [b0, i1, b1, ..., id, bd], zero-padded."""
    v = [str(s.beta[0])]
    for it, b in zip(s.iters, s.beta[1:]):
        v += [it, str(b)]
    return v + ["0"] * (width - len(v))


def theta(kernel):
    """The original order: statement instance -> time vector (lexicographic)."""
    width = theta_dims(kernel)
    u = isl.UnionMap("{ }")
    for s in kernel.stmts:
        m = isl.Map(f"{_params(kernel)}{{ {s.name}[{', '.join(s.iters)}] -> "
                    f"[{', '.join(theta_vector(s, width))}] }}").intersect_domain(domain(kernel, s))
        u = u.union(isl.UnionMap.from_map(m))
    return u


def access_map(kernel, s, a):
    subs = ", ".join(aff_str(x) for x in a.subs)
    m = isl.Map(f"{_params(kernel)}{{ {s.name}[{', '.join(s.iters)}] -> {a.array}[{subs}] }}")
    return m.intersect_domain(domain(kernel, s))


def accesses(kernel, write):
    u = isl.UnionMap("{ }")
    for s in kernel.stmts:
        for a in s.accesses:
            if a.write == write:
                u = u.union(isl.UnionMap.from_map(access_map(kernel, s, a)))
    return u


# ---- index -> file offset -> stripe -> disk ----

def linear_str(arr, idx):
    """The element offset in the file of index names idx, through the layout."""
    terms = []
    for k, dim in enumerate(arr.layout):
        mult = 1
        for later in arr.layout[k + 1:]:
            mult *= arr.extents[later]
        terms.append(f"{mult}*{idx[dim]}")
    return " + ".join(terms)


def _idx(arr):
    return [f"x{k}" for k in range(len(arr.extents))]


def _bounds(arr, idx):
    return " and ".join(f"0 <= {x} < {n}" for x, n in zip(idx, arr.extents))


def stripe_map(arr):
    """A[x] -> Stripe_A[b]: the stripe (block) of the file that holds A[x]."""
    idx = _idx(arr)
    return isl.Map(f"{{ {arr.name}[{', '.join(idx)}] -> Stripe_{arr.name}[b] : "
                   f"{_bounds(arr, idx)} and "
                   f"b = floor(({arr.size}*({linear_str(arr, idx)}))/{arr.stripe}) }}")


def disk_map(arr, disks):
    """A[x] -> D[d]: the disk that holds A[x]."""
    idx = _idx(arr)
    return isl.Map(f"{{ {arr.name}[{', '.join(idx)}] -> D[d] : {_bounds(arr, idx)} and "
                   f"d = ({arr.first_disk} + (floor(({arr.size}*({linear_str(arr, idx)}))"
                   f"/{arr.stripe}) mod {arr.disks})) mod {disks} }}")


def stripe_of(arr, index):
    """The same maps in Python, for the simulator (tested against isl's)."""
    lin = 0
    for dim in arr.layout:
        lin = lin * arr.extents[dim] + index[dim]
    return (arr.size * lin) // arr.stripe


def disk_of_stripe(arr, stripe, disks):
    return (arr.first_disk + stripe % arr.disks) % disks


def iteration_disks(kernel, spec, s):
    """S[i] -> D[d] for every disk some disk-resident reference of S touches."""
    sp = isl.Space.create_from_names(isl.DEFAULT_CONTEXT, set=[], params=kernel.params)
    u = None
    for a in s.accesses:
        arr = spec.arrays.get(a.array)
        if arr is None:
            continue
        m = access_map(kernel, s, a).apply_range(disk_map(arr, spec.disks).align_params(sp))
        u = m if u is None else u.union(m)
    return u


# ---- dependences ----

def dependences(kernel, th=None):
    """Flow, anti and output dependences between statement instances (memory-based:
    every pair of accesses to one element, at least one a write, in original order;
    this covers the transitive ones too).  Returns (flow, anti, output, all)."""
    th = th if th is not None else theta(kernel)
    before = th.lex_lt_union_map(th)
    W = accesses(kernel, True)
    R = accesses(kernel, False)
    flow = W.apply_range(R.reverse()).intersect(before)
    anti = R.apply_range(W.reverse()).intersect(before)
    out = W.apply_range(W.reverse()).intersect(before)
    return flow, anti, out, flow.union(anti).union(out)


def fix_params(obj, kernel, values):
    """obj with every parameter fixed to its value in values."""
    if not kernel.params:
        return obj
    cons = " and ".join(f"{p} = {values[p]}" for p in kernel.params)
    ctx = isl.Set(f"[{', '.join(kernel.params)}] -> {{ : {cons} }}")
    if isinstance(obj, (isl.UnionSet, isl.UnionMap)):
        return obj.intersect_params(ctx)
    return obj.intersect_params(ctx)


def points(uset):
    """The points of a bounded union set: (tuple name, coordinates) pairs."""
    out = []

    def each(p):
        sp = p.get_space()
        n = sp.dim(isl.dim_type.set)
        out.append((sp.get_tuple_name(isl.dim_type.set),
                    tuple(p.get_coordinate_val(isl.dim_type.set, k).to_python()
                          for k in range(n))))

    uset.foreach_point(each)
    return out


def eval_subs(a, env):
    return [aff_eval(x, env) for x in a.subs]
