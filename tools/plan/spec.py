"""The spec (TOML): the disk-resident arrays, how their files are striped over the
disks, the buffer, and the values of the loop-bound parameters the simulator uses.

    buffer_blocks = 8            # B: the buffer holds B blocks (a block is a stripe)
    function = "kernel"          # optional: the function to restructure
    [disks]                      # defaults for every array
    count = 4                    # disks (I/O nodes) the files are striped over
    stripe = 4096                # stripe size in bytes
    [params]                     # loop-bound parameters: values for the simulator
    N = 64
    [arrays.A]
    type = "double"              # element type: its size in bytes, or size = 8
    extents = [64, 64]
    file = "A.dat"
    layout = [0, 1]              # the array's dimensions in file order (row-major)
    stripe = 4096                # optional, else disks.stripe
    disks = 4                    # optional, else disks.count
    first_disk = 0               # the disk of the file's first stripe

Extents, stripe sizes and disk counts are integer constants, so the map from an
index to a disk is quasi-affine.  Required values that are wrong stop the tool
with one line naming the key; optional values that are wrong are reported in one
line and replaced by their default.
"""
import itertools
import sys
import tomllib
from dataclasses import dataclass, field

from . import PlanError

TYPE_SIZES = {"char": 1, "signed char": 1, "unsigned char": 1, "short": 2,
              "unsigned short": 2, "int": 4, "unsigned": 4, "unsigned int": 4,
              "float": 4, "long": 8, "unsigned long": 8, "long long": 8,
              "unsigned long long": 8, "double": 8, "int8_t": 1, "uint8_t": 1,
              "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
              "int64_t": 8, "uint64_t": 8, "long double": 16}


@dataclass
class ArraySpec:
    name: str
    ctype: str
    size: int          # bytes per element
    extents: list
    file: str
    layout: list       # layout[k] = the array dimension stored k-th (outermost first)
    stripe: int        # bytes
    disks: int
    first_disk: int

    @property
    def elements(self):
        n = 1
        for e in self.extents:
            n *= e
        return n

    @property
    def bytes(self):
        return self.elements * self.size

    @property
    def stripes(self):
        return -(-self.bytes // self.stripe)


@dataclass
class Spec:
    path: str
    arrays: dict
    buffer_blocks: int
    disks: int
    params: dict = field(default_factory=dict)
    function: str = None
    warnings: list = field(default_factory=list)

    @property
    def total_blocks(self):
        return sum(a.stripes for a in self.arrays.values())


def _pos_int(v):
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _warn(spec_path, key, value, why, default, warnings):
    msg = f"{spec_path}: {key} = {value!r} is not valid ({why}); using {default!r}"
    warnings.append(msg)
    print(f"unblock plan: {msg}", file=sys.stderr)
    return default


def parse_spec(text, path="spec"):
    """Parses and validates a spec; raises PlanError with one line naming the key."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PlanError(f"{path}: not valid TOML: {e}") from None
    warnings = []
    known = {"buffer_blocks", "function", "disks", "params", "arrays"}
    for k in raw:
        if k not in known:
            raise PlanError(f"{path}: unknown key '{k}' (known: {', '.join(sorted(known))})")
    if "buffer_blocks" not in raw:
        raise PlanError(f"{path}: buffer_blocks is missing (the buffer size in blocks)")
    if not _pos_int(raw["buffer_blocks"]):
        raise PlanError(f"{path}: buffer_blocks must be a positive integer, not "
                        f"{raw['buffer_blocks']!r}")
    disks = raw.get("disks", {})
    if not isinstance(disks, dict):
        raise PlanError(f"{path}: [disks] must be a table")
    for k in disks:
        if k not in ("count", "stripe"):
            raise PlanError(f"{path}: unknown key 'disks.{k}' (known: count, stripe)")
    dcount = disks.get("count", 4)
    if not _pos_int(dcount) or dcount > 64:
        raise PlanError(f"{path}: disks.count must be an integer from 1 to 64, not {dcount!r}")
    dstripe = disks.get("stripe", 65536)
    if not _pos_int(dstripe):
        raise PlanError(f"{path}: disks.stripe must be a positive integer (bytes), not "
                        f"{dstripe!r}")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise PlanError(f"{path}: [params] must be a table of integers")
    for k, v in params.items():
        if not isinstance(v, int) or isinstance(v, bool):
            raise PlanError(f"{path}: params.{k} must be an integer, not {v!r}")
    function = raw.get("function")
    if function is not None and not (isinstance(function, str) and function.isidentifier()):
        raise PlanError(f"{path}: function must be the name of a C function, not {function!r}")
    arrays_raw = raw.get("arrays")
    if not isinstance(arrays_raw, dict) or not arrays_raw:
        raise PlanError(f"{path}: no [arrays.NAME] table: name the disk-resident arrays")
    arrays = {}
    files = {}
    for name, a in arrays_raw.items():
        key = f"arrays.{name}"
        if not name.isidentifier():
            raise PlanError(f"{path}: {key}: not a C identifier")
        if not isinstance(a, dict):
            raise PlanError(f"{path}: {key} must be a table")
        allowed = {"type", "size", "extents", "file", "layout", "stripe", "disks",
                   "first_disk"}
        for k in a:
            if k not in allowed:
                raise PlanError(f"{path}: unknown key '{key}.{k}' "
                                f"(known: {', '.join(sorted(allowed))})")
        ctype = a.get("type")
        if ctype is None:
            raise PlanError(f"{path}: {key}.type is missing (the element type, e.g. \"double\")")
        if "size" in a:
            if not _pos_int(a["size"]):
                raise PlanError(f"{path}: {key}.size must be a positive integer (bytes)")
            size = a["size"]
        elif ctype in TYPE_SIZES:
            size = TYPE_SIZES[ctype]
        else:
            raise PlanError(f"{path}: {key}.type {ctype!r} has no known size: give "
                            f"{key}.size in bytes")
        ext = a.get("extents")
        if not (isinstance(ext, list) and ext and all(_pos_int(e) for e in ext)):
            raise PlanError(f"{path}: {key}.extents must be a non-empty list of positive "
                            f"integer constants, not {ext!r}")
        f = a.get("file")
        if not (isinstance(f, str) and f):
            raise PlanError(f"{path}: {key}.file is missing (the file the array lives in)")
        if f in files:
            raise PlanError(f"{path}: {key}.file {f!r} is also the file of {files[f]} "
                            f"(one array per file)")
        files[f] = name
        ident = list(range(len(ext)))
        layout = a.get("layout", ident)
        if not (isinstance(layout, list) and sorted(layout) == ident and
                all(isinstance(x, int) and not isinstance(x, bool) for x in layout)):
            layout = _warn(path, f"{key}.layout", layout,
                           f"not a permutation of 0..{len(ext) - 1}", ident, warnings)
        stripe = a.get("stripe", dstripe)
        if not _pos_int(stripe):
            raise PlanError(f"{path}: {key}.stripe must be a positive integer (bytes), not "
                            f"{stripe!r}")
        if stripe % size:
            raise PlanError(f"{path}: {key}.stripe ({stripe} bytes) must be a multiple of "
                            f"the element size ({size} bytes)")
        nd = a.get("disks", dcount)
        if not _pos_int(nd) or nd > dcount:
            raise PlanError(f"{path}: {key}.disks must be an integer from 1 to disks.count "
                            f"({dcount}), not {nd!r}")
        first = a.get("first_disk", 0)
        if not (isinstance(first, int) and not isinstance(first, bool) and 0 <= first < dcount):
            first = _warn(path, f"{key}.first_disk", first, f"not in 0..{dcount - 1}", 0,
                          warnings)
        arrays[name] = ArraySpec(name, ctype, size, list(ext), f, list(layout), stripe, nd,
                                 first)
    return Spec(path, arrays, raw["buffer_blocks"], dcount, dict(params), function, warnings)


def load_spec(path):
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
    except OSError as e:
        raise PlanError(f"cannot read the spec {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text") from None
    return parse_spec(text, path)


def permutations(m):
    """Every dimension permutation of an m-dimensional array, identity first."""
    return [list(p) for p in itertools.permutations(range(m))]
