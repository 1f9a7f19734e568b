"""The C front end: reads one function of a C file with libclang and turns it into
statements of affine loop nests (iteration domains, array accesses, the original
order), or stops with one line naming the line of the first construct outside that
subset.

The subset: the function's body is a sequence of `for` loops (nests), optionally
after declarations of integer loop counters without initialisers.  A loop is
`for (int i = LB; i < UB; i++)` (or `<=`, `++i`, `i += 1`, or a counter declared
before), LB and UB affine in the enclosing counters and in parameters (integer
variables the function never writes: its parameters, globals, macros, constants).
Inside a nest: more loops, and assignments to array elements (`=`, `+=`, `-=`,
`*=`, `/=`) whose subscripts are affine and whose right-hand sides read array
elements, parameters and constants through arithmetic, casts, `?:` and calls of
side-effect-free math functions (sqrt, fabs, exp, ...).  Outside it: pointer
arithmetic and dereference, non-affine subscripts (a product of counters, a
division, an array element as index), calls of other functions, writes to scalar
variables, declarations, `if`, `while`, `break`, `goto` in a nest.
"""
import ctypes
import os
import subprocess
from dataclasses import dataclass, field

from . import PlanError

try:
    import clang.cindex as ci
except ImportError:  # pragma: no cover - reported by the CLI
    ci = None

PURE_CALLS = {f + s for f in ("sqrt", "fabs", "exp", "exp2", "expm1", "log", "log2",
                              "log10", "log1p", "sin", "cos", "tan", "asin", "acos",
                              "atan", "atan2", "sinh", "cosh", "tanh", "pow", "fmin",
                              "fmax", "floor", "ceil", "round", "trunc", "fmod",
                              "hypot", "cbrt", "copysign", "fma", "erf", "erfc")
              for s in ("", "f", "l")} | {"abs", "labs", "llabs"}

# libclang's enums, as the C API numbers them (clang-c/Index.h).
BIN = {3: "*", 4: "/", 5: "%", 6: "+", 7: "-", 8: "<<", 9: ">>", 11: "<", 12: ">",
       13: "<=", 14: ">=", 15: "==", 16: "!=", 17: "&", 18: "^", 19: "|", 20: "&&",
       21: "||", 22: "=", 23: "*=", 24: "/=", 25: "%=", 26: "+=", 27: "-=", 28: "<<=",
       29: ">>=", 30: "&=", 31: "^=", 32: "|=", 33: ","}
UN = {1: "post++", 2: "post--", 3: "++", 4: "--", 5: "&", 6: "*", 7: "+", 8: "-",
      9: "~", 10: "!"}

_registered = False


def _lib():
    global _registered
    lib = ci.conf.lib
    if not _registered:
        lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
        lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
        lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
        lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
        lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
        lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
        lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getKind.restype = ctypes.c_int
        lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
        lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
        lib.clang_EvalResult_dispose.restype = None
        lib.clang_getFileLocation.argtypes = [ci.SourceLocation, ctypes.POINTER(ctypes.c_void_p),
                                              ctypes.POINTER(ctypes.c_uint),
                                              ctypes.POINTER(ctypes.c_uint),
                                              ctypes.POINTER(ctypes.c_uint)]
        lib.clang_getFileLocation.restype = None
        _registered = True
    return lib


def file_offset(loc):
    """Where a location was written: for a macro argument, the argument's own
    place; for anything else from a macro, the place of the macro's use."""
    f = ctypes.c_void_p()
    line, col, off = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    _lib().clang_getFileLocation(loc, ctypes.byref(f), ctypes.byref(line), ctypes.byref(col),
                                 ctypes.byref(off))
    return off.value


def binop(c):
    return BIN.get(_lib().clang_getCursorBinaryOperatorKind(c), "?")


def unop(c):
    return UN.get(_lib().clang_getCursorUnaryOperatorKind(c), "?")


def const_int(c):
    """The value of an integer constant expression, or None."""
    if _has_ref(c):
        return None
    lib = _lib()
    r = lib.clang_Cursor_Evaluate(c)
    if not r:
        return None
    try:
        if lib.clang_EvalResult_getKind(r) != 1:  # CXEval_Int
            return None
        return int(lib.clang_EvalResult_getAsLongLong(r))
    finally:
        lib.clang_EvalResult_dispose(r)


def _has_ref(c):
    if c.kind == ci.CursorKind.DECL_REF_EXPR:
        d = c.referenced
        return not (d is not None and d.kind == ci.CursorKind.ENUM_CONSTANT_DECL)
    return any(_has_ref(ch) for ch in c.get_children())


# ---- affine expressions: {name: coefficient, 1: constant} ----

def aff_add(a, b, k=1):
    r = dict(a)
    for n, v in b.items():
        r[n] = r.get(n, 0) + k * v
        if r[n] == 0:
            del r[n]
    return r


def aff_scale(a, k):
    return {n: v * k for n, v in a.items() if v * k != 0}


def aff_str(a):
    """isl's (and C's) text of an affine expression."""
    terms = []
    for n, v in sorted(a.items(), key=lambda t: (t[0] == 1, str(t[0]))):
        if n == 1:
            terms.append(str(v))
        elif v == 1:
            terms.append(n)
        elif v == -1:
            terms.append(f"-{n}")
        else:
            terms.append(f"{v}*{n}")
    if not terms:
        return "0"
    s = terms[0]
    for t in terms[1:]:
        s += f" - {t[1:]}" if t.startswith("-") else f" + {t}"
    return s


def aff_eval(a, env):
    return sum(v * (1 if n == 1 else env[n]) for n, v in a.items())


@dataclass
class Access:
    array: str
    subs: list          # one affine expression per dimension
    write: bool
    line: int
    size: int = 0       # bytes of the element, as the C code types it


@dataclass
class Stmt:
    name: str
    nest: int
    iters: list
    lower: list         # per loop: affine lower bound (inclusive)
    upper: list         # per loop: affine upper bound (inclusive)
    beta: list          # textual positions, len(iters) + 1
    accesses: list
    body: str           # C text with each counter in parentheses, ending in ';'
    line: int


@dataclass
class Kernel:
    path: str
    source: bytes
    function: str
    body_start: int
    body_end: int
    counter_decls: list    # texts of top-level counter declarations (the new body drops them)
    params: list           # names used symbolically in bounds and subscripts
    stmts: list
    nests: int
    names: set = field(default_factory=set)   # every identifier in the function

    def nest_lines(self):
        lines = {}
        for s in self.stmts:
            lines.setdefault(s.nest, s.line)
        return lines


def _strip(c):
    while c.kind in (ci.CursorKind.UNEXPOSED_EXPR, ci.CursorKind.PAREN_EXPR) or \
            (c.kind == ci.CursorKind.CSTYLE_CAST_EXPR and _is_int_type(c.type)):
        ch = list(c.get_children())
        if c.kind == ci.CursorKind.CSTYLE_CAST_EXPR:
            ch = [x for x in ch if x.kind != ci.CursorKind.TYPE_REF]
        if len(ch) != 1:
            break
        c = ch[0]
    return c


def _is_int_type(t):
    t = t.get_canonical()
    return t.kind in (ci.TypeKind.INT, ci.TypeKind.UINT, ci.TypeKind.LONG,
                      ci.TypeKind.ULONG, ci.TypeKind.LONGLONG, ci.TypeKind.ULONGLONG,
                      ci.TypeKind.SHORT, ci.TypeKind.USHORT, ci.TypeKind.CHAR_S,
                      ci.TypeKind.SCHAR, ci.TypeKind.UCHAR, ci.TypeKind.CHAR_U)


class _Reader:
    def __init__(self, path, tu, func):
        self.path = path
        self.tu = tu
        self.func = func
        self.params = []
        self.stmts = []
        self.top_counters = {}

    def err(self, c, what):
        return PlanError(f"{self.path}:{c.location.line}: {what}")

    # -- affine expressions --
    def aff(self, c, iters, what):
        c = _strip(c)
        v = const_int(c)
        if v is not None:
            return {1: v} if v else {}
        k = c.kind
        if k == ci.CursorKind.DECL_REF_EXPR:
            d = c.referenced
            name = c.spelling
            if name in iters:
                return {name: 1}
            if d is not None and d.kind in (ci.CursorKind.PARM_DECL, ci.CursorKind.VAR_DECL) \
                    and _is_int_type(d.type) and name not in self.top_counters:
                if name not in self.params:
                    self.params.append(name)
                return {name: 1}
            raise self.err(c, f"'{name}' in {what} is not a loop counter, an integer "
                              f"parameter or a constant (affine expressions only)")
        if k == ci.CursorKind.BINARY_OPERATOR:
            a, b = list(c.get_children())
            op = binop(c)
            if op in "+-":
                return aff_add(self.aff(a, iters, what), self.aff(b, iters, what),
                               1 if op == "+" else -1)
            if op == "*":
                x, y = self.aff(a, iters, what), self.aff(b, iters, what)
                if set(x) <= {1}:
                    return aff_scale(y, x.get(1, 0))
                if set(y) <= {1}:
                    return aff_scale(x, y.get(1, 0))
                raise self.err(c, f"non-affine {what}: a product of variables")
            raise self.err(c, f"non-affine {what}: operator '{op}' on variables")
        if k == ci.CursorKind.UNARY_OPERATOR:
            op = unop(c)
            (a,) = list(c.get_children())
            if op == "-":
                return aff_scale(self.aff(a, iters, what), -1)
            if op == "+":
                return self.aff(a, iters, what)
            if op == "*":
                raise self.err(c, f"pointer dereference in {what} (pointer arithmetic is "
                                  f"outside the subset)")
        if k == ci.CursorKind.ARRAY_SUBSCRIPT_EXPR:
            raise self.err(c, f"non-affine {what}: an array element used as an index")
        if k == ci.CursorKind.CALL_EXPR:
            raise self.err(c, f"non-affine {what}: a call to '{c.spelling}'")
        raise self.err(c, f"non-affine {what} ({k.name.lower()})")

    # -- array references --
    def access(self, c, iters, write):
        subs = []
        node = _strip(c)
        top = node
        while node.kind == ci.CursorKind.ARRAY_SUBSCRIPT_EXPR:
            base, idx = list(node.get_children())
            subs.insert(0, idx)
            node = _strip(base)
        if node.kind == ci.CursorKind.DECL_REF_EXPR and subs:
            t = node.type.get_canonical()
            if t.kind not in (ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY,
                              ci.TypeKind.INCOMPLETEARRAY, ci.TypeKind.VARIABLEARRAY):
                raise self.err(c, f"'{node.spelling}' is subscripted but is not an array")
            size = top.type.get_canonical().get_size()
            return Access(node.spelling,
                          [self.aff(s, iters, "subscript") for s in subs], write,
                          top.location.line, size if size > 0 else 0)
        if node.kind == ci.CursorKind.UNARY_OPERATOR and unop(node) == "*":
            raise self.err(c, "pointer dereference (pointer arithmetic is outside the subset)")
        if node.kind == ci.CursorKind.BINARY_OPERATOR:
            raise self.err(c, "pointer arithmetic (an array reference must be NAME[i]...[k])")
        raise self.err(c, f"unsupported array reference ({node.kind.name.lower()})")

    def reads(self, c, iters, out):
        """Collects the array reads of a right-hand side, checking every node."""
        k = c.kind
        if k == ci.CursorKind.ARRAY_SUBSCRIPT_EXPR:
            out.append(self.access(c, iters, False))
            return
        if k in (ci.CursorKind.INTEGER_LITERAL, ci.CursorKind.FLOATING_LITERAL,
                 ci.CursorKind.CHARACTER_LITERAL, ci.CursorKind.TYPE_REF):
            return
        if k == ci.CursorKind.DECL_REF_EXPR:
            d = c.referenced
            if d is not None and d.kind == ci.CursorKind.FUNCTION_DECL:
                return
            t = c.type.get_canonical()
            if t.kind in (ci.TypeKind.POINTER, ci.TypeKind.CONSTANTARRAY,
                          ci.TypeKind.INCOMPLETEARRAY):
                raise self.err(c, f"'{c.spelling}' used as a pointer value (pointer "
                                  f"arithmetic is outside the subset)")
            if c.spelling in self.top_counters and c.spelling not in iters:
                raise self.err(c, f"'{c.spelling}' is read outside its loop")
            return
        if k == ci.CursorKind.BINARY_OPERATOR:
            op = binop(c)
            if op in ("=", ",") or op.endswith("=") and op not in ("<=", ">=", "==", "!="):
                raise self.err(c, f"assignment '{op}' inside an expression")
        elif k == ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
            raise self.err(c, "assignment inside an expression")
        elif k == ci.CursorKind.UNARY_OPERATOR:
            op = unop(c)
            if op in ("post++", "post--", "++", "--"):
                raise self.err(c, f"'{op.replace('post', '')}' inside a loop nest (a write "
                                  f"outside the subset)")
            if op in ("*", "&"):
                raise self.err(c, f"'{op}' on a pointer (pointer arithmetic is outside the "
                                  f"subset)")
        elif k == ci.CursorKind.CALL_EXPR:
            if c.spelling not in PURE_CALLS:
                raise self.err(c, f"call to '{c.spelling}' inside a loop nest: it may have "
                                  f"side effects (only math functions such as sqrt are allowed)")
        elif k not in (ci.CursorKind.UNEXPOSED_EXPR, ci.CursorKind.PAREN_EXPR,
                       ci.CursorKind.CSTYLE_CAST_EXPR, ci.CursorKind.CONDITIONAL_OPERATOR):
            raise self.err(c, f"{k.name.lower().replace('_', ' ')} inside a loop nest is "
                              f"outside the subset")
        for ch in c.get_children():
            self.reads(ch, iters, out)

    # -- statements --
    def tokens(self, c):
        """The file's tokens of a cursor's text, from its first character to its last
        (libclang's own cursor tokens start inside a macro call that opens it)."""
        f = c.extent.start.file
        rng = ci.SourceRange.from_locations(
            ci.SourceLocation.from_offset(self.tu, f, c.extent.start.offset),
            ci.SourceLocation.from_offset(self.tu, f, c.extent.end.offset))
        return list(self.tu.get_tokens(extent=rng))

    def check_counters_visible(self, c, iters):
        """A counter the statement uses must be written in it, not hidden in a
        macro's body: the generated code renames counters by substituting the
        statement's own tokens."""
        spelled = {}
        for t in self.tokens(c):
            spelled[t.extent.start.offset] = t.spelling

        def walk(x):
            if x.kind == ci.CursorKind.DECL_REF_EXPR and x.spelling in iters:
                if spelled.get(file_offset(x.location)) != x.spelling:
                    raise self.err(x, f"the loop counter '{x.spelling}' is used inside a "
                                      f"macro's body; write it in the statement itself")
            for ch in x.get_children():
                walk(ch)
        walk(c)

    def body_text(self, c, iters):
        self.check_counters_visible(c, iters)
        toks = []
        for t in self.tokens(c):
            s = t.spelling
            if t.kind == ci.TokenKind.IDENTIFIER and s in iters:
                s = f"({s})"
            elif t.kind == ci.TokenKind.COMMENT:
                continue
            toks.append(s)
        return " ".join(toks) + ";"

    def assignment(self, c, nest, iters, lower, upper, beta):
        k = c.kind
        ops = None
        if k == ci.CursorKind.BINARY_OPERATOR and binop(c) == "=":
            ops = "="
        elif k == ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR:
            ops = binop(c)
            if ops not in ("+=", "-=", "*=", "/="):
                raise self.err(c, f"'{ops}' is outside the subset (=, +=, -=, *=, /=)")
        if ops is None:
            kind = k.name.lower().replace("_", " ")
            if k == ci.CursorKind.CALL_EXPR:
                raise self.err(c, f"call to '{c.spelling}' inside a loop nest: it may have "
                                  f"side effects")
            if k == ci.CursorKind.UNARY_OPERATOR:
                kind = f"'{unop(c).replace('post', '')}'"
            raise self.err(c, f"{kind} inside a loop nest is outside the subset (only "
                              f"assignments to array elements)")
        lhs, rhs = list(c.get_children())
        ls = _strip(lhs)
        if ls.kind == ci.CursorKind.DECL_REF_EXPR:
            raise self.err(c, f"assigns the scalar '{ls.spelling}' inside a loop nest (only "
                              f"array elements may be written)")
        w = self.access(lhs, iters, True)
        accs = []
        if ops != "=":
            accs.append(Access(w.array, w.subs, False, w.line, w.size))
        self.reads(rhs, iters, accs)
        accs.append(w)
        name = f"S_{len(self.stmts)}"
        self.stmts.append(Stmt(name, nest, list(iters), list(lower), list(upper), list(beta),
                               accs, self.body_text(c, iters), c.location.line))

    def loop(self, c, nest, iters, lower, upper, beta):
        ch = list(c.get_children())
        if len(ch) != 4:
            raise self.err(c, "a for loop needs an initialisation, a condition and an "
                              "increment")
        init, cond, inc, body = ch
        # counter and lower bound
        if init.kind == ci.CursorKind.DECL_STMT:
            vs = list(init.get_children())
            if len(vs) != 1 or vs[0].kind != ci.CursorKind.VAR_DECL:
                raise self.err(init, "the loop must declare one counter")
            var = vs[0]
            name = var.spelling
            if not _is_int_type(var.type):
                raise self.err(init, f"loop counter '{name}' is not an integer")
            vch = [x for x in var.get_children() if x.kind != ci.CursorKind.TYPE_REF]
            if len(vch) != 1:
                raise self.err(init, f"loop counter '{name}' has no initial value")
            lb_c = vch[0]
        elif init.kind == ci.CursorKind.BINARY_OPERATOR and binop(init) == "=":
            lhs, lb_c = list(init.get_children())
            lhs = _strip(lhs)
            name = lhs.spelling
            if lhs.kind != ci.CursorKind.DECL_REF_EXPR or name not in self.top_counters:
                raise self.err(init, "the loop counter must be declared in the loop or, "
                                     "without initial value, at the top of the function")
        else:
            raise self.err(c, "the loop must start with 'int i = LB' or 'i = LB'")
        if name in iters:
            raise self.err(c, f"loop counter '{name}' is already the counter of an enclosing "
                              f"loop")
        lb = self.aff(lb_c, iters, "loop bound")
        # condition
        if cond.kind != ci.CursorKind.BINARY_OPERATOR or binop(cond) not in ("<", "<="):
            raise self.err(c, f"the condition of loop '{name}' must be '{name} < UB' or "
                              f"'{name} <= UB'")
        cl, cr = list(cond.get_children())
        if _strip(cl).kind != ci.CursorKind.DECL_REF_EXPR or _strip(cl).spelling != name:
            raise self.err(cond, f"the condition of loop '{name}' must compare '{name}'")
        ub = self.aff(cr, iters, "loop bound")
        if binop(cond) == "<":
            ub = aff_add(ub, {1: -1})
        # increment: +1 only
        ok = False
        if inc.kind == ci.CursorKind.UNARY_OPERATOR and unop(inc) in ("post++", "++"):
            (x,) = list(inc.get_children())
            ok = _strip(x).spelling == name
        elif inc.kind == ci.CursorKind.COMPOUND_ASSIGNMENT_OPERATOR and binop(inc) == "+=":
            x, y = list(inc.get_children())
            ok = _strip(x).spelling == name and const_int(y) == 1
        if not ok:
            raise self.err(inc, f"loop '{name}' must step by +1 ({name}++)")
        self.block(body, nest, iters + [name], lower + [lb], upper + [ub], beta)

    def block(self, c, nest, iters, lower, upper, beta):
        items = list(c.get_children()) if c.kind == ci.CursorKind.COMPOUND_STMT else [c]
        pos = 0
        for it in items:
            if it.kind == ci.CursorKind.NULL_STMT:
                continue
            if it.kind == ci.CursorKind.FOR_STMT:
                self.loop(it, nest, iters, lower, upper, beta + [pos])
            elif it.kind == ci.CursorKind.COMPOUND_STMT:
                raise self.err(it, "a nested block inside a loop nest is outside the subset")
            else:
                self.assignment(it, nest, iters, lower, upper, beta + [pos])
            pos += 1


def find_function(tu, path, name):
    funcs = [c for c in tu.cursor.get_children()
             if c.kind == ci.CursorKind.FUNCTION_DECL and c.is_definition() and
             c.location.file is not None and
             os.path.realpath(c.location.file.name) == os.path.realpath(path)]
    if name:
        for f in funcs:
            if f.spelling == name:
                return f
        raise PlanError(f"{path}: no definition of function '{name}'")
    if len(funcs) != 1:
        names = ", ".join(f.spelling for f in funcs) or "none"
        raise PlanError(f"{path}: {len(funcs)} function definitions ({names}): name one "
                        f"with --function or the spec's function key")
    return funcs[0]


def _system_includes():
    try:
        d = subprocess.run(["cc", "-print-file-name=include"], capture_output=True,
                           text=True, timeout=10).stdout.strip()
        return ["-isystem", d] if d and os.path.isdir(d) else []
    except (OSError, subprocess.SubprocessError):
        return []


def read_kernel(path, function=None, cflags=()):
    """Parses PATH and returns the Kernel of its function (raises PlanError)."""
    if ci is None:
        raise PlanError("libclang's Python bindings are missing (scripts/bootstrap installs "
                        "them in the planner's virtual environment)")
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as e:
        raise PlanError(f"cannot read {path}: {e.strerror}") from None
    index = ci.Index.create()
    tu = index.parse(path, args=["-std=gnu11", *_system_includes(), *cflags])
    for d in tu.diagnostics:
        if d.severity >= ci.Diagnostic.Error:
            raise PlanError(f"{path}:{d.location.line}: {d.spelling}")
    func = find_function(tu, path, function)
    body = [c for c in func.get_children() if c.kind == ci.CursorKind.COMPOUND_STMT]
    if not body:
        raise PlanError(f"{path}: function '{func.spelling}' has no body")
    body = body[0]
    r = _Reader(path, tu, func)
    counter_decls = []
    nest = 0
    for it in body.get_children():
        if it.kind == ci.CursorKind.DECL_STMT:
            vs = list(it.get_children())
            for v in vs:
                init = [x for x in v.get_children() if x.kind != ci.CursorKind.TYPE_REF]
                if v.kind != ci.CursorKind.VAR_DECL or not _is_int_type(v.type) or init:
                    raise r.err(it, "only declarations of integer loop counters without "
                                    "initial value may precede the loop nests")
                r.top_counters[v.spelling] = True
            counter_decls.append(source[it.extent.start.offset:it.extent.end.offset]
                                 .decode())
        elif it.kind == ci.CursorKind.FOR_STMT:
            r.loop(it, nest, [], [], [], [nest])
            nest += 1
        elif it.kind == ci.CursorKind.NULL_STMT:
            continue
        elif it.kind == ci.CursorKind.RETURN_STMT and not list(it.get_children()):
            continue
        else:
            raise r.err(it, f"only loop nests may form the body of '{func.spelling}' "
                            f"(found {it.kind.name.lower().replace('_', ' ')})")
    if not r.stmts:
        raise PlanError(f"{path}: function '{func.spelling}' has no loop nest with an "
                        f"assignment")
    names = {t.spelling for t in tu.cursor.get_tokens() if t.kind == ci.TokenKind.IDENTIFIER}
    prefix = "S_"
    while any(n.startswith(prefix) and n[len(prefix):].isdigit() for n in names):
        prefix = "S" + prefix
    for k, st in enumerate(r.stmts):
        st.name = f"{prefix}{k}"
    return Kernel(path, source, func.spelling, body.extent.start.offset,
                  body.extent.end.offset, counter_decls, r.params, r.stmts, nest, names)
