#!/usr/bin/env python3
"""Write the MPI wrappers of one MPI implementation.

Reads src/comm/mpi_functions.toml (which functions, and for each its named
arguments, buffers, conversions and Fortran forms) and the output of the C
preprocessor run on that implementation's mpi.h (the exact prototypes), and
writes one C file holding, for every listed function the header declares:

  * the C entry point MPI_X (and MPI_X_c for large counts),
  * every Fortran entry point (mpi_x mpi_x_ mpi_x__ MPI_X mpi_x_f08_ mpi_x_f08ts_
    mpi_x_f08ts_large_), which take only pointers (plus hidden string lengths),
  * the tables of names, "carries data" flags and kinds the runtime uses.

Each wrapper forwards to the next definition of the same symbol (dlsym RTLD_NEXT,
so other PMPI tools still stack), never to PMPI_X (but where a Fortran direct
path makes the call MPICH's mpi_f08 binding makes, PMPI_X: fortran_pmpi_c08).
See docs/interposition.md.

Built with -DUNBLOCK_LINK_WRAP the same file gives the link-time variant: every
wrapper is then named __wrap_X and calls __real_X (ld --wrap=X).  WRAP_LIST, if
given, receives one "-Wl,--wrap=X" line per symbol, the MPI ones and those of
POSIX_LIST (src/fileio/posix_functions.h), for the link line of a static program.

Usage: gen_mpi_wrappers.py SPEC PREPROCESSED_MPI_H OUTPUT_C [WRAP_LIST POSIX_LIST]
       (PREPROCESSED_MPI_H and OUTPUT_C "-": no MPI, only the POSIX wrap list)
"""
import re
import sys
import tomllib

# ---- the spec ----

FIELDS = {  # field: type (the spec's header comment says what each means)
    'data': bool, 'large_count': bool, 'after_init': bool, 'fortran': bool,
    'fortran_args': int, 'fortran_strings': int, 'args': list, 'convert': str,
    'convert_counts': list, 'fortran_convert': str, 'fortran_before': str,
    'fortran_requests': str,
    'fortran_before_done': str, 'complete': str,
    'request': str, 'persistent': bool, 'buffers': list, 'fast': str, 'fortran_fast': str,
    'quick': str, 'front': str, 'quick_bytes': str, 'quick_front': str, 'fortran_quick': str,
    'fortran_bytes': str, 'fortran_min': str, 'fortran_quick_front': str, 'fortran_c': str,
    'fortran_c_call': str,
    'fortran_front': str, 'fortran_desc_fast': str, 'fortran_desc_c': str,
    'fortran_desc_c_when': str, 'fortran_pmpi_c08': str, 'fortran_desc_quick': str,
    'mpiio': str,
}
# What src/mpiio/ does at an MPI-IO call (the `mpiio` field; UNBLOCK_MPIIO_* in mpi_wrap.h).
MPIIO_OPS = ('open', 'close', 'write', 'write_at', 'iwrite', 'iwrite_at', 'local', 'collective',
             'seek', 'set_view', 'set_atomicity', 'sync', 'finalize', 'abort', 'split_end',
             'get_size', 'read_at', 'read')
BUFFER_FIELDS = {
    'buf': str, 'count': str, 'type': str, 'writes': bool, 'group': str, 'per_process': bool,
    'displs': str, 'root': str, 'mine': bool,
}
# The C type each argument role must have in the header.
ROLES = {
    'file': r'MPI_File', 'file_out': r'MPI_File\s*\*', 'offset': r'MPI_Offset',
    'status': r'MPI_Status\s*(\*|\[\s*\])', 'request': r'MPI_Request\s*(\*|\[\s*\])',
    'comm': r'MPI_Comm', 'datatype': r'MPI_Datatype',
}


class SpecError(Exception):
    pass


class Function:
    """One function of the spec: its fields, with argument names resolved to
    positions (`pos`), and its C prototype once the header is read."""

    def __init__(self, name, fields):
        self.name = name
        self.f = fields
        self.arg_names = [a.split(':')[0] for a in fields.get('args', [])]
        self.roles = [a.split(':')[1] if ':' in a else None for a in fields.get('args', [])]

    def get(self, key, default=None):
        return self.f.get(key, default)

    def pos(self, arg):
        """The position of argument `arg` (a name of `args`)."""
        if arg not in self.arg_names:
            raise SpecError('%s: %r is not one of its args %s' % (self.name, arg, self.arg_names))
        return self.arg_names.index(arg)

    def template(self, text, args, extra=None):
        """`text` with every {name} replaced by the generated argument of that name
        (or by extra[name]: {pc} and {id} in a wrapper's quick path)."""
        extra = extra or {'pc': 'pc', 'id': 'id'}
        return re.sub(r'\{(\w+)\}', lambda m: extra[m.group(1)] if m.group(1) in extra
                      else args[self.pos(m.group(1))], text)

    def buffers(self):
        """The described buffers as (buf, count, type, writes, comm, extra) positions,
        extra holding 'displs', 'root' (positions), 'sum' or 'mine'."""
        out = []
        for b in self.get('buffers', []):
            extra = {}
            if b.get('per_process'):
                extra = {'sum': 1}
                if 'displs' in b:
                    extra = {'displs': self.pos(b['displs'])}
                if b.get('mine'):
                    extra = {'mine': 1}
                if 'root' in b:
                    extra['root'] = self.pos(b['root'])
            out.append((self.pos(b['buf']), self.pos(b['count']), self.pos(b['type']),
                        int(b.get('writes', False)),
                        self.pos(b['group']) if 'group' in b else None, extra))
        return out


def load_spec(path):
    """The functions of the spec, in order; SpecError names a bad entry."""
    with open(path, 'rb') as f:
        try:
            raw = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise SpecError('%s: %s' % (path, e))
    funcs = []
    for name, fields in raw.items():
        if not re.fullmatch(r'MPI_\w+', name) or not isinstance(fields, dict):
            raise SpecError('%s: not a function table' % name)
        for key, value in fields.items():
            want = FIELDS.get(key)
            if want is None:
                raise SpecError('%s: unknown field %r' % (name, key))
            if not isinstance(value, want):
                raise SpecError('%s: %s must be a %s' % (name, key, want.__name__))
        fn = Function(name, fields)
        for role in fn.roles:
            if role is not None and role not in ROLES:
                raise SpecError('%s: unknown role %r' % (name, role))
        for b in fields.get('buffers', []):
            for key, value in b.items():
                if key not in BUFFER_FIELDS or not isinstance(value, BUFFER_FIELDS[key]):
                    raise SpecError('%s: buffer field %r' % (name, key))
            for key in ('buf', 'count', 'type'):
                if key not in b:
                    raise SpecError('%s: a buffer without %s' % (name, key))
        if 'mpiio' in fields and fields['mpiio'] not in MPIIO_OPS:
            raise SpecError('%s: mpiio must be one of %s' % (name, ', '.join(MPIIO_OPS)))
        for key in ('convert', 'complete', 'fast', 'quick'):
            if key in fields:
                fn.template(fields[key], fn.arg_names)  # every {name} must be an argument
        for key in ('convert_counts',):
            for a in fields.get(key, []):
                fn.pos(a)
        if 'request' in fields:
            fn.pos(fields['request'])
        fn.buffers()
        if ('convert' in fields or 'buffers' in fields or 'request' in fields or
                'complete' in fields) and not fn.arg_names:
            raise SpecError('%s: needs args to name its arguments' % name)
        funcs.append(fn)
    return funcs


# ---- the header ----

def find_prototype(text, name):
    """Return the parameter list text of `int NAME(...)` in the header, or None."""
    m = re.search(r'\bint\s+' + re.escape(name) + r'\s*\(', text)
    if not m:
        return None
    i = m.end()
    depth = 1
    start = i
    while depth:
        c = text[i]
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
        i += 1
    return text[start:i - 1]


def split_params(params):
    params = ' '.join(params.split())
    if params.strip() in ('', 'void'):
        return []
    out, depth, cur = [], 0, ''
    for c in params:
        if c in '([':
            depth += 1
        elif c in ')]':
            depth -= 1
        if c == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
        else:
            cur += c
    out.append(cur.strip())
    return out


def param_name(decl, index):
    """The parameter's name, and the declaration (a name is made up if absent)."""
    m = re.search(r'([A-Za-z_]\w*)\s*(\[\s*\w*\s*\])*\s*$', decl)
    if m and not re.fullmatch(r'(const\s+)?(int|void|char|MPI_\w+)\s*\**', decl):
        return m.group(1), decl
    name = 'a%d' % index
    return name, decl + ' ' + name


class Entry:
    """A C entry point the header declares: MPI_X or MPI_X_c, its function, its
    parameter declarations and (generated) argument names."""

    def __init__(self, name, fn, params):
        self.name, self.fn, self.params = name, fn, params
        named = [param_name(p, i) for i, p in enumerate(params)]
        self.args = [n for n, _ in named]
        self.decl = ', '.join(d for _, d in named) if named else 'void'
        self.large = name.endswith('_c')
        if fn.arg_names and len(fn.arg_names) != len(params):
            raise SpecError('%s: args names %d parameters, the header declares %d' % (
                name, len(fn.arg_names), len(params)))
        for i, role in enumerate(fn.roles):
            # the C type: the declaration without its name (and without const)
            t = re.sub(r'\b%s\b' % re.escape(named[i][0]), '', params[i])
            t = ' '.join(re.sub(r'\bconst\b', '', t).split())
            if role and not re.fullmatch(ROLES[role], t):
                raise SpecError('%s: %s should be %s, the header says %r' % (
                    name, fn.arg_names[i], ROLES[role], params[i]))


def entry_points(funcs, header):
    entries = []
    for fn in funcs:
        p = find_prototype(header, fn.name)
        if p is None:
            continue
        entries.append(Entry(fn.name, fn, split_params(p)))
        if fn.get('large_count'):
            pc = find_prototype(header, fn.name + '_c')
            if pc is not None:
                entries.append(Entry(fn.name + '_c', fn, split_params(pc)))
    return entries


# ---- what the runtime does at each call ----

def is_conv(fn):
    return 'convert' in fn.f


def mpi_kind(e):
    """What the runtime does at this call with operations in flight (mpi_wrap.h)."""
    name, fn = e.name, e.fn
    if is_conv(fn) and name in ('MPI_Init', 'MPI_Init_thread', 'MPI_Query_thread'):
        return 'UNBLOCK_MPI_KIND_PLAIN'
    if is_conv(fn) and name.startswith('MPI_Type_'):
        return 'UNBLOCK_MPI_KIND_PLAIN'
    if is_conv(fn) and (not e.large or fn.get('convert_counts')):
        return 'UNBLOCK_MPI_KIND_CONVERT'
    if name == 'MPI_Finalize':
        return 'UNBLOCK_MPI_KIND_FINALIZE'
    if name in ('MPI_Comm_free', 'MPI_Comm_disconnect', 'MPI_Comm_set_errhandler'):
        return 'UNBLOCK_MPI_KIND_FORGET_COMM'
    # The program's own requests: nonblocking and persistent calls, and split
    # MPI-IO calls whose buffers MPI keeps using after they return.
    if re.match(r'MPI_(I[a-z]|File_i|.*_init(_c)?$|Start|File_.*_begin)', name) and \
            name not in ('MPI_Init', 'MPI_Iprobe', 'MPI_Improbe'):
        return 'UNBLOCK_MPI_KIND_OWN_ASYNC'
    if fn.get('data') and blocking_buffers(fn):
        return 'UNBLOCK_MPI_KIND_BUFS'
    if fn.get('data'):
        return 'UNBLOCK_MPI_KIND_DATA'
    return 'UNBLOCK_MPI_KIND_PLAIN'


def carries_news(e):
    """Whether the call may tell another process that this one's earlier writes
    are done (mpi_wrap.h: unblock_mpi_fn_news): it sends, starts a receive (a
    synchronous send completes when one matches it), or is collective.  Not the
    calls that only look, wait or test (an operation started before a write
    cannot tell of it), make types or error handlers, nor the calls on files
    (src/mpiio/'s hook sees theirs)."""
    name, fn = e.name, e.fn
    if 'mpiio' in fn.f:
        return False
    if name in ('MPI_Init', 'MPI_Init_thread', 'MPI_Query_thread', 'MPI_Request_free',
                'MPI_Cancel', 'MPI_Comm_free', 'MPI_Probe', 'MPI_Iprobe', 'MPI_Mprobe',
                'MPI_Improbe', 'MPI_Request_get_status', 'MPI_Errhandler_free',
                'MPI_File_get_view'):
        return False
    return not re.match(r'MPI_(Type_|Wait|Test|.*_errhandler$)', name)


def hears_news(e):
    """Whether the call may tell this process of another one's earlier writes
    (mpi_wrap.h: unblock_mpi_fn_news, bit 2): every call that may tell, and the
    calls that wait for, test or look at an operation or a message (an MPI_Wait
    completes a receive started before).  Not the calls on files (src/mpiio/'s
    hook sees theirs)."""
    if carries_news(e):
        return True
    if 'mpiio' in e.fn.f:
        return False
    return bool(re.match(r'MPI_(Wait|Test|Probe|Iprobe|Mprobe|Improbe|Request_get_status)',
                         e.name)) and not re.match(r'MPI_Test_cancelled', e.name)


def reads_file(e):
    """Whether the call reads a file or its size (mpi_wrap.h: unblock_mpi_fn_news,
    bit 4): the message receives in flight complete first, since their senders
    may have written it before they sent."""
    return bool(re.match(r'MPI_File_(i?read|get_size$|seek(_shared)?$)', e.name))


def blocking_buffers(fn):
    """Whether the call is a blocking one whose buffers are described."""
    return bool(fn.get('buffers')) and 'request' not in fn.f


def own_spec(e):
    """(buffers or None, request position, persistent) of a followed call, or None.
    The nonblocking calls with a request that the spec does not describe
    (collectives, MPI-IO) are followed without a description of their buffers."""
    fn = e.fn
    if 'request' in fn.f:
        bufs = [b[:4] for b in fn.buffers()]
        return (bufs, fn.pos(fn.f['request']), int(fn.get('persistent', False)))
    if mpi_kind(e) == 'UNBLOCK_MPI_KIND_OWN_ASYNC' and e.params and \
            re.search(r'MPI_Request\s*\*', e.params[-1]):
        return (None, len(e.params) - 1, 0)
    return None


def followed_from_fortran(e):
    """A request of the program's that is followed from Fortran too
    (fortran_own.c): a nonblocking call whose buffers the spec describes, not
    persistent, not the MPI_Count form, not MPI-IO."""
    spec = own_spec(e)
    return spec is not None and spec[0] is not None and not spec[2] and not e.large \
        and 'mpiio' not in e.fn.f and len(spec[0]) <= 2  # (UNBLOCK_FBUFS_MAX)


def kind_of(e):
    if followed_from_fortran(e):
        return 'UNBLOCK_MPI_KIND_OWN_FOLLOWED'
    if own_spec(e) is not None or e.name in ('MPI_Start', 'MPI_Startall'):
        return 'UNBLOCK_MPI_KIND_OWN_TRACKED'
    return mpi_kind(e)


OWN_KINDS = ('UNBLOCK_MPI_KIND_OWN_TRACKED', 'UNBLOCK_MPI_KIND_OWN_FOLLOWED')


def complete_call(fn, args, call):
    """The C call of a completing function: requests.c's, only while it
    follows requests of the program's (requests.h: unblock_own_tracking);
    else MPI's alone."""
    return '(unblock_own_tracking() ? %s : real(%s))' % (fn.template(fn.f['complete'], args), call)


def only_counted(e):
    """A call unblock only counts: not converted, completing, MPI-IO or
    MPI_Init's, nor one whose kind makes unblock_mpi_enter act at every call.
    With nothing in flight and no pool, unblock_mpi_enter would only count it,
    unblock_conv_buffers (or unblock_fortran_buffers) find nothing to order it
    after (buffers.c: "the common case") and their _done nothing to learn."""
    fn = e.fn
    return kind_of(e) in ('UNBLOCK_MPI_KIND_BUFS', 'UNBLOCK_MPI_KIND_DATA',
                          'UNBLOCK_MPI_KIND_PLAIN') and not is_conv(fn) and \
        'mpiio' not in fn.f and 'complete' not in fn.f and not fn.get('after_init')


# ---- C ----

def viewed_call(args, positions, table):
    """The real call's arguments, each buffer moved by its table entry's view."""
    a = list(args)
    for i, p in enumerate(positions):
        a[p] = '(void *)((uintptr_t)%s + (uintptr_t)%s[%d].view)' % (args[p], table, i)
    return ', '.join(a)


def c_buf_init(entry, args, wide):
    """The C initialiser of one described buffer (unblock_own_buf_t)."""
    b, c, t, wr, comm, x = entry
    f = ['.buf = %s' % args[b], '.type = %s' % args[t], '.writes = %d' % wr]
    if x:
        f += ['.vec = 1', '.counts = %s' % args[c]]
        if 'displs' in x:
            f.append('.displs = %s' % args[x['displs']])
        if x.get('mine'):
            f.append('.mine = 1')
        if 'root' in x:
            f += ['.at_root = 1', '.root = %s' % args[x['root']]]
        if wide:
            f.append('.wide = 1')
    else:
        f.append('.count = (long long)%s' % args[c])
    if comm is not None:
        f.append('.group = &%s' % args[comm])
    return '{ %s }' % ', '.join(f)


def gen_tables(w, entries):
    """The enum of ids and the tables the statistics and the runtime read."""
    w('enum {')
    for i, e in enumerate(entries):
        w('    ID_%s = %d,' % (e.name, i))
    w('    ID_COUNT_ = %d' % len(entries))
    w('};')
    w('')
    w('const unsigned unblock_mpi_fn_count = %d;' % len(entries))
    w('const char *const unblock_mpi_fn_names[%d] = {' % len(entries))
    for e in entries:
        w('    "%s",' % e.name)
    w('};')
    w('const unsigned char unblock_mpi_fn_carries_data[%d] = {' % len(entries))
    for e in entries:
        w('    %d, /* %s */' % (1 if e.fn.get('data') else 0, e.name))
    w('};')
    w('const unsigned char unblock_mpi_fn_kind[%d] = {' % len(entries))
    for e in entries:
        w('    %s, /* %s */' % (kind_of(e), e.name))
    w('};')
    w('const unsigned char unblock_mpi_fn_news[%d] = {' % len(entries))
    for e in entries:
        w('    %d, /* %s */' % ((1 if carries_news(e) else 0) | (2 if hears_news(e) else 0) |
                              (4 if reads_file(e) else 0), e.name))
    w('};')
    w('_Static_assert(%d <= UNBLOCK_COUNT_MPI_MAX, "core/counts.h: more MPI functions than slots");'
      % len(entries))
    w('')


def gen_c_body(w, e, by_name, hands_site=False):
    """The middle of the C wrapper: from unblock_mpi_enter to the real call's rc
    (`hands_site`: the wrapper's front handed the program's call site to its
    slow part, which has it in pc_)."""
    fn, name, args, call = e.fn, e.name, e.args, ', '.join(e.args)
    base = by_name.get(fn.name)  # the int form, for a `_c` one
    narrow = e.large and is_conv(fn) and fn.get('convert_counts') and base is not None
    spec = own_spec(e)
    # The program's call site.
    pc = 'pc_' if hands_site else '(uintptr_t)__builtin_return_address(0)'
    if is_conv(fn) and not e.large:
        if fn.f['convert'].startswith(('unblock_conv_send', 'unblock_conv_recv')):
            # The call site, for the predictor (src/core/sites.h).
            w('    unblock_tls.call_pc = %s;' % pc)
            w('    unblock_tls.call_fn = ID_%s;' % name)
        w('    int rc = %s;' % fn.template(fn.f['convert'], args))
    elif narrow:
        counts = [fn.pos(a) for a in fn.f['convert_counts']]
        fits = ' && '.join('%s >= 0 && %s <= INT_MAX' % (args[c], args[c]) for c in counts)
        w('    int rc;')
        w('    if (%s) {' % fits)
        w('        wide_%s = real;' % name)
        w('        unblock_tls.call_pc = (uintptr_t)__builtin_return_address(0);')
        w('        unblock_tls.call_fn = ID_%s;' % name)
        nargs = ['(int)%s' % a if i in counts else a for i, a in enumerate(args)]
        w('        rc = %s;' % fn.template(fn.f['convert'], nargs).replace(', real',
                                                                          ', narrow_' + name))
        w('    } else {')
        w('        rc = real(%s);' % call)
        w('    }')
    elif 'complete' in fn.f:
        w('    int rc = %s;' % complete_call(fn, args, call))
    elif spec is not None and spec[0] != []:
        bufs, req, persistent = spec
        if bufs is None:
            init = ['{ .writes = 1, .everything = 1 }']
        else:
            init = ['{ .buf = %s, .count = (long long)%s, .type = %s, .writes = %d }'
                    % (args[b], args[c], args[t], wr) for b, c, t, wr in bufs]
        w('    unblock_own_buf_t own_[%d] = { %s };' % (len(init), ', '.join(init)))
        w('    unblock_conv_buffers(own_, %d);' % len(init))
        w('    int rc = real(%s);' % viewed_call(args, [b[0] for b in bufs or []], 'own_'))
        w('    unblock_own_after(own_, %d, rc, %s, %d, %s);' % (len(init), args[req], persistent, pc))
    elif blocking_buffers(fn):
        bufs = fn.buffers()
        init = [c_buf_init(b, args, e.large) for b in bufs]
        w('    unblock_own_buf_t bufs_[%d] = { %s };' % (len(init), ', '.join(init)))
        w('    unblock_conv_buffers(bufs_, %d);' % len(init))
        w('    int rc = real(%s);' % viewed_call(args, [b[0] for b in bufs], 'bufs_'))
        w('    unblock_conv_buffers_done(bufs_, %d, rc);' % len(init))
    else:
        w('    int rc = real(%s);' % call)
    return narrow


def gen_c_mpiio(w, e):
    """MPI-IO write-behind (src/mpiio/, through the hook it installs): the hook sees
    the call's arguments by address and either handles the call (its result is the
    call's) or lets it go on to MPI."""
    args = ', '.join('(void *)&%s' % a for a in e.args) or 'NULL'
    w('    if (unblock_mpiio_hook != NULL) {')
    w('        void *mio_[] = { %s };' % args)
    w('        int rc_;')
    w('        if (unblock_mpiio_hook(UNBLOCK_MPIIO_%s, ID_%s, %d, mio_, (void (*)(void))real, &rc_)) {'
      % (e.fn.f['mpiio'].upper(), e.name, int(e.large)))
    w('            unblock_mpi_leave();')
    w('            return rc_;')
    w('        }')
    w('    }')


def gen_front(w, e, pre, cond, taken, before_slow=(), second=None, depth_here=False):
    """The exported C wrapper as a front: the lines `pre`, then when `cond` holds
    the statements `taken` (the last a return); else the rest of the wrapper, a
    function of its own (`slow_<name>`, whose header this ends with: its body
    follows), reached after the statements `before_slow` by a jump: a call with
    the wrapper's own arguments (with six or fewer, and `taken` a jump to MPI,
    the front saves no registers and spills no argument; where `taken` works
    after MPI's call, the front saves only what that work keeps, and the slow
    part's frame is its own).  `second`: the body lines of a second front
    (`quick_<name>`) between them, which ends by a jump to the slow part (so
    that what it keeps in registers costs neither the front nor the slow part
    a register saved).  `depth_here`: MPI's own call (MPICH's Fortran binding
    calling the C MPI_x, ROMIO's collectives) goes to MPI from the front, after
    its test failed (depth_pass), not through the slow part: for a front that
    works after MPI's call and so saves registers anyway (through the slow
    part, an MPI_ISEND from mpif.h on MPICH cost 61 instructions of the C
    wrapper besides the Fortran one's, 28 so).  In a front that jumps to MPI,
    GCC's code for the test made the small path longer (an 8-byte MPI_Send
    52 -> 61 instructions, an MPI_Sendrecv 96 -> 107)."""
    name, call = e.name, ', '.join(e.args)
    w('static int slow_%s(%s);' % (name, e.decl))
    nxt = 'slow_%s' % name
    if second is not None:
        w('static int quick_%s(%s);' % (name, e.decl))
        nxt = 'quick_%s' % name
    w('UNBLOCK_EXPORT int UNBLOCK_WRAP(%s)(%s)' % (name, e.decl))
    w('{')
    for line in pre:
        w(line)
    w('    if (%s) {' % cond)
    for line in taken:
        w('        ' + line)
    w('    }')
    if depth_here:
        for line in depth_pass(name, call, '    '):
            w(line)
    for line in before_slow:
        w('    ' + line)
    w('    return %s(%s);' % (nxt, call))
    w('}')
    if second is not None:
        w('__attribute__((noinline)) static int quick_%s(%s)' % (name, e.decl))
        w('{')
        for line in second:
            w(line)
        w('    return slow_%s(%s);' % (name, call))
        w('}')
    w('__attribute__((noinline)) static int slow_%s(%s)' % (name, e.decl))


def depth_pass(name, call, indent, known=False):
    """The first statements of a wrapper's part behind its front: MPI's own call
    (inside one of the program's that a wrapper sent to MPI: MPICH's Fortran
    binding calls the C MPI_x, ROMIO calls collectives) goes to MPI at once.
    The rest would only find UNBLOCK_MPI_SKIP and call MPI after its own setup
    (a small MPI_SENDRECV from mpif.h on MPICH paid it at every call).  In the
    front itself the test made the small path 10 instructions longer."""
    if known:
        return [indent + 'if (unblock_tls.mpi_depth > 0)', indent + '    return real(%s);' % call]
    return [indent + 'if (unblock_tls.mpi_depth > 0 &&',
            indent + '    UNBLOCK_MPI_KNOWN(real = UNBLOCK_MPI_REAL_IF_KNOWN(%s)))' % name,
            indent + '    return real(%s);' % call]


# After MPI's call on a quick path: the chain timing told, with a pool only.
CHAIN_AFTER = 'if (unblock_unlikely(unblock_pool_base != 0))\n{i}    unblock_chain_returned();'


def fortran_args(nargs, **extra):
    """A Fortran spec template's names: a0, a1, ... as themselves, and `extra`."""
    args = {'a%d' % i: 'a%d' % i for i in range(nargs)}
    args.update(extra)
    return args


def direct_lines(call, before=None, after=None, void=False):
    """The statements of a path straight to MPI: `before`, MPI's `call` inside
    the runtime's depth (MPI's own calls pass through), `after`, and return."""
    lines = [before] if before else []
    lines += ['unblock_tls.mpi_depth++;', '%s;' % call if void else 'int rc = %s;' % call,
              'unblock_tls.mpi_depth--;']
    if after:
        lines.append(after)
    return lines + ['return;' if void else 'return rc;']


def gen_direct(w, cond, call, before=None, after=None, void=False):
    """A path straight to MPI when `cond` holds (direct_lines)."""
    w('    if (%s) {' % cond)
    for line in direct_lines(call, before, after, void):
        w('        ' + line)
    w('    }')


def own_one_buffer(e):
    """The program's own request of one buffer, not persistent, not an MPI-IO
    call: the generated wrapper logs it itself (requests.h: unblock_own_log_take)."""
    spec = own_spec(e)
    return spec is not None and spec[0] is not None and len(spec[0]) == 1 and not spec[2] \
        and not e.large and 'mpiio' not in e.fn.f


def direct_path(e, call):
    """The statements of the C wrapper's path straight to MPI, taken with nothing
    in flight and no pool (unblock_mpi_front_ok), or None when it has none."""
    fn, name = e.fn, e.name
    counted = 'unblock_count(unblock_mpi_count_slot(ID_%s, UNBLOCK_BINDING_C, 0));' % name
    if own_one_buffer(e):
        # The program's own request of one buffer (nothing for
        # unblock_mpi_enter or unblock_conv_buffers to do): to MPI, then into
        # the log, inline where it fits (requests.h: unblock_own_log_take),
        # else by requests.c's unblock_own_logged.  Not followed (the run
        # untracked: requests.h, unblock_own_unfollowed_small), MPI's call
        # ends the front; armed by the profile, this start makes the run
        # untracked.  (The log as a function of its own, reached by a jump,
        # saved the path not followed 15 instructions a call of an 8-byte
        # MPI_Irecv, MPI_Isend and MPI_Waitall to itself and cost the
        # followed one 9, Open MPI: the front keeps a frame for its argument
        # on the stack either way.)
        spec = own_spec(e)
        (b, c, t, wr), req = spec[0][0], spec[1]
        args = (e.args[b], e.args[c], e.args[t], wr, e.args[req])
        # Counted after MPI's call: before it, only what decides the path (the
        # message or the receive is posted a few instructions sooner).
        return direct_lines('real(%s)' % call,
                            before='if (unblock_own_unfollowed_small((long long)%s, %s)) {\n'
                                   '            %s\n'
                                   '            return real(%s);\n'
                                   '        }' % (e.args[c], e.args[t], counted, call),
                            after=counted + '\n        '
                                  'if (unblock_unlikely(rc != MPI_SUCCESS) ||\n'
                                  '            !unblock_own_log_take(%s, (long long)%s, %s, %d, %s))\n'
                                  '            unblock_own_logged(%s, (long long)%s, %s, %d, rc, %s,\n'
                                  '                               (uintptr_t)__builtin_return_address(0));'
                                  % (args + args))
    if 'complete' in fn.f and not e.large and kind_of(e) in (
            'UNBLOCK_MPI_KIND_PLAIN', 'UNBLOCK_MPI_KIND_OWN_TRACKED'):
        # A completion call (nothing for unblock_mpi_enter to do): requests.c
        # forgets what it completes.
        return direct_lines(complete_call(fn, e.args, call), before=counted)
    if only_counted(e):
        # A blocking collective or any other call unblock only counts: to MPI,
        # counted.  An 8-byte MPI_Allreduce, MPI_Bcast and MPI_Barrier cost 137
        # instructions of unblock a call through the full path
        # (docs/performance.md).
        return direct_lines('real(%s)' % call, before=counted)
    return None


def cursor_count(e):
    """MPI_File_write_at's count for the cursor and the continuation path
    (an int): (a test to add to their condition, the count as an int).  The
    MPI_Count form's only when an int holds it."""
    c = e.args[3]
    if not e.large:
        return '', c
    return '%s >= 0 && %s <= INT_MAX' % (c, c), '(int)%s' % c


def gen_c_wrapper(w, e, by_name):
    """The C entry point of e."""
    name, fn, call = e.name, e.fn, ', '.join(e.args)
    w('/* %s */' % name)
    w('typedef int (*real_%s_t)(%s);' % (name, e.decl))
    w('UNBLOCK_MPI_DECL(%s, (%s));' % (name, e.decl))
    base = by_name.get(fn.name)
    if e.large and is_conv(fn) and fn.get('convert_counts') and base is not None:
        # The int form of the call, running the real large-count function.
        w('static real_%s_t wide_%s;' % (name, name))
        w('static int narrow_%s(%s)' % (name, base.decl))
        w('{')
        w('    return wide_%s(%s);' % (name, ', '.join(base.args)))
        w('}')
    fast = 'fast' in fn.f and not e.large
    hands_site = fast  # the front hands the call site to the slow part (pc_)
    if fast:
        # A call that will not be converted goes to MPI at once (fastpath.h),
        # as the wrapper's last call, a jump.  MPI's own calls inside it then
        # see mpi_depth 0: an allocation of its may get a block of its own, a
        # file call takes the file wrappers' path (a descriptor MPI opened is
        # never followed), a thread it starts counts as the program's.  Each is
        # safe, only less quick, and a small message's path makes none of them
        # in practice.  The rest of the wrapper is a
        # function of its own, called with the wrapper's arguments alone (the
        # program's call site, which the predictor needs and the slow
        # function's own return address is not, goes by the thread's state):
        # with six arguments or fewer that call is a jump too, and the fast path
        # saves no registers.
        # The front calls nothing but MPI (fastpath.h: unblock_mpi_front_ok):
        # MPI's function not yet resolved, or the thread's counts not yet made,
        # go to the slow part, which does both; so the front saves no register.
        # (fastpath.h: unblock_front_small, without the pool's range.)
        # With `front`, the front's test also reckons the call's bytes (q_),
        # and a call that is not small hands them on (core.h:
        # unblock_tls.call_bytes), so that neither the second front nor the
        # slow part needs the datatype's size or the front's tests again.
        hands_bytes = 'front' in fn.f
        second = None
        pre = ['    real_%s_t real;' % name, '    unblock_counter_t *counts_;']
        handed = ['unblock_tls.call_site = (uintptr_t)__builtin_return_address(0);']
        if hands_bytes:
            front = fn.template(fn.f['front'], e.args, {'bytes': 'q_'})
            pre.append('    size_t q_ = 0;')
            handed.append('unblock_tls.call_bytes = q_;')
        else:
            front = fn.template(fn.f['fast'].replace('unblock_small', 'unblock_front_small')
                                .replace('unblock_opt.', '&unblock_opt.'), e.args)
        if 'quick_front' in fn.f:
            # A call that is not small tries the quick path of a class the
            # predictor runs as the original call in a second front, through
            # the thread's memo alone (sites.h: unblock_site_pass_memo): to MPI
            # as a jump, calling nothing else (as part of the slow part, the
            # quick path saved six registers and spilled two arguments around
            # its call of sites.c; in the front, it made the front save them).
            memo = fn.template(fn.f['quick_front'], e.args, {
                'pc': 'unblock_tls.call_site', 'id': 'ID_%s' % name, 'bytes': 'q_',
                'counts': 'counts_'})
            second = ['    real_%s_t real;' % name, '    unblock_counter_t *counts_;'] + \
                depth_pass(name, call, '    ')
            if hands_bytes:
                second.append('    size_t q_ = unblock_tls.call_bytes;')
            second += ['    if (%s && UNBLOCK_MPI_KNOWN(real = UNBLOCK_MPI_REAL_IF_KNOWN(%s)) &&'
                       % ('q_ != 0' if hands_bytes else 'unblock_mpi_front_ok()', name),
                       '        (counts_ = unblock_tls.count_slab) != NULL &&',
                       '        %s) {' % memo,
                       '        unblock_count_in(counts_, unblock_mpi_count_slot(ID_%s, UNBLOCK_BINDING_C, 0));'
                       % name,
                       '        return real(%s);' % call,
                       '    }']
        gen_front(w, e, pre,
                  'unblock_mpi_front_ok() && %s &&\n'
                  '        UNBLOCK_MPI_KNOWN(real = UNBLOCK_MPI_REAL_IF_KNOWN(%s)) &&\n'
                  '        (counts_ = unblock_tls.count_slab) != NULL'
                  % (front, name),
                  ['unblock_count_in(counts_, unblock_mpi_count_slot(ID_%s, UNBLOCK_BINDING_C, 1));'
                   % name, 'return real(%s);' % call], handed, second)
        w('{')
        w('    real_%s_t real = UNBLOCK_MPI_REAL(%s);' % (name, name))
        if second is None:
            for line in depth_pass(name, call, '    ', known=True):
                w(line)
        w('    uintptr_t pc_ = unblock_tls.call_site;')
        if hands_bytes:
            w('    size_t q_ = unblock_tls.call_bytes;')
        # Multiview: the chain timing is told when the call returns.  (Without
        # the pool, a small call reaches here only as a thread's first: the
        # front's other reasons hold here too; the full path takes that one.)
        gen_direct(w, '(unblock_pool_base != 0 || unblock_tls.count_slab == NULL) &&\n'
                   '        unblock_mpi_fast_ok() && %s' % fn.template(fn.f['fast'], e.args),
                   'real(%s)' % call, after='unblock_mpi_fast_done(ID_%s, UNBLOCK_BINDING_C);' % name)
        if 'quick' in fn.f:
            # A call at a site that runs the original call, steadily (fastpath.h:
            # unblock_quick; sites.h: unblock_site_pass_quick).
            # Counted first; without the pool, MPI's function is the last call,
            # a jump (as in the front).
            at = {'pc': 'pc_', 'id': 'ID_%s' % name, 'bytes': 'q_'}
            quick = 'unblock_mpi_fast_ok() && %s' % fn.template(fn.f['quick'], e.args, at)
            if hands_bytes:
                # (q_ not 0: the front's tests held, and there is no pool)
                quick = 'q_ != 0 ? %s\n        : %s' % (
                    fn.template(fn.f['quick_bytes'], e.args, at), quick)
            w('    if (%s) {' % quick)
            w('        unblock_mpi_quick_count(ID_%s, UNBLOCK_BINDING_C);' % name)
            w('        if (unblock_likely(unblock_pool_base == 0))')
            w('            return real(%s);' % call)
            w('        unblock_tls.mpi_depth++;')
            w('        int rc = real(%s);' % call)
            w('        unblock_tls.mpi_depth--;')
            w('        unblock_chain_returned();')
            w('        return rc;')
            w('    }')
    else:
        fronted = True  # (a front before the rest: depth_pass)
        if fn.f.get('mpiio') == 'write_at':
            # MPI-IO write-behind's cursor (mpi_wrap.h: unblock_mpiio_cur): a
            # write continuing the last one taken, outside MPI's own calls and
            # with no operation in flight (whose buffer this one could read),
            # copied here.  No MPI call is made, so none could carry news of a
            # file to another process: the news flags of unblock_mpi_fast_ok
            # are not its business.  The rest of the wrapper is a function of
            # its own, reached by a jump, so this path saves no registers and
            # spills no argument.  The MPI_Count form too, for a count an int
            # holds (IOR built against MPICH 4 calls MPI_File_write_at_c:
            # every write took the general path before).
            count = cursor_count(e)
            gen_front(w, e, [], '%s == MPI_STATUS_IGNORE && %s == unblock_mpiio_cur.fh &&\n'
                      '        unblock_tls.mpi_depth == 0 && unblock_conv_idle() &&%s\n'
                      '        unblock_mpiio_cur_take(%s)'
                      % (e.args[5], e.args[0], ' %s &&' % count[0] if count[0] else '',
                         ', '.join(e.args[:3] + [count[1]] + e.args[4:5])),
                      ['unblock_count(unblock_mpi_count_slot(ID_%s, UNBLOCK_BINDING_C, 0));'
                       % name, 'return MPI_SUCCESS;'])
        elif fn.f.get('mpiio') in ('read_at', 'read'):
            # An independent read on the plain handle (mpi_wrap.h:
            # unblock_mpiio_plain: not followed, its file followed through no
            # handle), with nothing in flight and no pool: to MPI inside the
            # runtime's depth, counted.  MPI's own file calls and allocations
            # stay MPI's (a front that jumped to MPI would let OMPIO's pread
            # take the file wrappers' path), so this one keeps a frame.  The
            # MPI_Count forms too (IOR built against MPICH 4 calls them).
            gen_front(w, e, ['    real_%s_t real;' % name],
                      '%s == unblock_mpiio_plain.fh && unblock_mpi_front_ok() &&\n'
                      '        UNBLOCK_MPI_KNOWN(real = UNBLOCK_MPI_REAL_IF_KNOWN(%s))'
                      % (e.args[0], name),
                      direct_lines('real(%s)' % call,
                                   before='unblock_count(unblock_mpi_count_slot(ID_%s, '
                                          'UNBLOCK_BINDING_C, 0));' % name),
                      depth_here=True)
        else:
            taken = direct_path(e, call)
            if taken is not None:
                # The call's path straight to MPI, with nothing in flight and no
                # pool, as a front: the rest of the wrapper is a function of its
                # own (gen_front), so that the front saves only the registers
                # that hold what it needs after MPI's call (the request's
                # buffer, for the log) and sets up no frame for the rest.
                hands_site = own_one_buffer(e)  # (for unblock_own_after)
                gen_front(w, e, ['    real_%s_t real;' % name],
                          'unblock_mpi_front_ok() &&\n'
                          '        UNBLOCK_MPI_KNOWN(real = UNBLOCK_MPI_REAL_IF_KNOWN(%s))' % name,
                          taken, ['unblock_tls.call_site = (uintptr_t)__builtin_return_address(0);']
                          if hands_site else (), depth_here=True)
            else:
                fronted = False
                w('UNBLOCK_EXPORT int UNBLOCK_WRAP(%s)(%s)' % (name, e.decl))
        w('{')
        w('    real_%s_t real = UNBLOCK_MPI_REAL(%s);' % (name, name))
        if fronted:
            for line in depth_pass(name, call, '    ', known=True):
                w(line)
        if hands_site:
            w('    uintptr_t pc_ = unblock_tls.call_site;')
    if fn.f.get('mpiio') == 'write_at':
        # MPI-IO write-behind's continuation path: a write continuing the
        # thread's last taken one, with nothing for unblock_mpi_enter to do.
        count = cursor_count(e)
        w('    if (unblock_mpiio_cont != NULL && unblock_mpi_fast_ok()%s) {'
          % (' && ' + count[0] if count[0] else ''))
        w('        int rc_;')
        w('        if (unblock_mpiio_cont(%s, &rc_)) {'
          % ', '.join(e.args[:3] + [count[1]] + e.args[4:]))
        w('            unblock_count(unblock_mpi_count_slot(ID_%s, UNBLOCK_BINDING_C, 0));' % name)
        w('            return rc_;')
        w('        }')
        w('    }')
    w('    if (UNBLOCK_MPI_SKIP()) {')
    w('        unblock_mpi_skip_hook();')
    if fn.get('after_init'):
        w('        int rc = real(%s);' % call)
        w('        if (rc == MPI_SUCCESS && unblock_tls.mpi_depth == 0)')
        w('            unblock_comm_after_init();')
        w('        return rc;')
    else:
        w('        return real(%s);' % call)
    w('    }')
    w('    unblock_mpi_enter(ID_%s, UNBLOCK_BINDING_C);' % name)
    if 'mpiio' in fn.f:
        gen_c_mpiio(w, e)
    gen_c_body(w, e, by_name, hands_site)
    w('    unblock_mpi_leave();')
    if fn.get('after_init'):
        w('    if (rc == MPI_SUCCESS)')
        w('        unblock_comm_after_init();')
    w('    return rc;')
    w('}')
    w('')


# ---- Fortran ----

FORTRAN_F77 = ['{l}', '{l}_', '{l}__', '{u}']
# The MPI-IO calls whose Fortran entry points (mpif.h, `use mpi`, `use mpi_f08`;
# not the MPI_Count forms) write-behind handles
# (the file handle first: converted, and only that file flushed where needed).
FORTRAN_MPIIO = ('open', 'close', 'write', 'write_at', 'iwrite', 'iwrite_at', 'local',
                 'collective', 'seek', 'set_view', 'set_atomicity', 'sync', 'split_end',
                 'get_size', 'read_at', 'read')
FORTRAN_F08 = ['{l}_f08_', '{l}_f08ts_', '{l}_f08ts_large_']


def f_buf_spec(entry):
    """The Fortran description of one buffer (unblock_fbuf_t)."""
    b, c, t, wr, comm, x = entry
    flags = ' | '.join((['UNBLOCK_FBUF_ARRAY'] if x else []) +
                       (['UNBLOCK_FBUF_MINE'] if x.get('mine') else [])) or '0'
    return '{ %d, %d, %d, %d, %d, %d, %d, %s }' % (
        b, c, t, wr, -1 if comm is None else comm, x.get('displs', -1), x.get('root', -1), flags)


def gen_fortran_c_direct(w, i, ctype, flag, known, call, after, void=True):
    """Where the Fortran binding calls the public MPI_x (MPICH,
    UNBLOCK_FORTRAN_CALLS_C): MPI's C function `call` (of type `ctype`, named
    creal_ once `known` found it) as the binding calls it, inside the runtime's
    depth and `after` it, once fortran.c set `flag` (it found that it may;
    asked here while not known)."""
    w('#if UNBLOCK_FORTRAN_CALLS_C')
    w(i + '%s creal_;' % ctype)
    w(i + 'if ((__atomic_load_n(&%s, __ATOMIC_ACQUIRE) > 0 ||' % flag)
    w(i + '     unblock_fortran_direct_asked(&%s)) &&' % flag)
    w(i + '    %s) {' % known)
    for line in direct_lines(call, void=void, after=after):
        w(i + '    ' + ('return;' if line == 'return rc;' else line))
    w(i + '}')
    w('#endif')


def gen_fortran_direct(w, indent, name, sym, fcall, f77, c_call, after):
    """The end of a Fortran wrapper's path straight to MPI (direct_lines):
    with `c_call` where the Fortran binding calls the public MPI_x (MPICH),
    MPI's C function as the binding calls it (FRONT_CALL_, fortran_c) once
    fortran.c found that it may; else the Fortran function.  Both inside the
    runtime's depth, `after` (a template of {i}, its indentation) after MPI's
    call."""
    i = ' ' * indent
    if c_call:
        gen_fortran_c_direct(w, i, 'FRONT_REAL_%s' % name, 'unblock_fortran_direct',
                             'FRONT_KNOWN_%s(creal_, %s, %d)' % (name, sym, f77),
                             'FRONT_CALL_%s(creal_, %s)' % (name, fcall),
                             after.format(i=i + '    '))
    for line in direct_lines('real(%s)' % fcall, void=True, after=after.format(i=i)):
        w(i + line)


def gen_fortran_front(w, sym, fdecl, fcall, real_t, test, call, slot, rest, hands_site=True):
    """A Fortran wrapper's front, as the C wrappers': when `test` holds (with
    `real`, of type `real_t`, set to MPI's function) the call goes to MPI
    (`call`), counted in `slot`; else to `rest`, with `hands_site`, the
    program's call site and the bytes q_ the test reckoned in the thread's
    state."""
    w('UNBLOCK_EXPORT void UNBLOCK_WRAP(%s)(%s)' % (sym, fdecl))
    w('{')
    w('    %s real;' % real_t)
    w('    unblock_counter_t *counts_;')
    if hands_site:
        w('    size_t q_ = 0;')
    w('    if (%s &&' % test)
    w('        (counts_ = unblock_tls.count_slab) != NULL) {')
    w('        unblock_count_in(counts_, %s);' % slot)
    w('        %s;' % call)
    w('        return;')
    w('    }')
    if hands_site:
        w('    unblock_tls.call_site = (uintptr_t)__builtin_return_address(0);')
        w('    unblock_tls.call_bytes = q_;')
    w('    %s(%s);' % (rest, fcall))
    w('}')


def gen_fortran_small_front(w, name, sym, fdecl, fcall, binding, f77, cond, rest):
    """The front of a small call (`cond`: small, its handles' sizes known to
    the cache): to MPI as the binding calls it (FRONT_CALL_), counted in the
    slot of calls a front passed (1)."""
    gen_fortran_front(w, sym, fdecl, fcall, 'FRONT_REAL_%s' % name,
                      'unblock_mpi_front_ok() && %s && FRONT_KNOWN_%s(real, %s, %d)' % (cond, name, sym, f77),
                      'FRONT_CALL_%s(real, %s)' % (name, fcall),
                      'unblock_mpi_count_slot(ID_%s, %s, 1)' % (name, binding), rest)


def gen_fortran08_direct(w, e, nargs, form, fcall, after):
    """The end of an mpi_f08 form's path straight to MPI, `after` MPI's call
    (indented for its place in the Fortran call's branch): where MPICH's
    binding calls MPI's C function or PMPI_x (f08_direct_c), that call once
    fortran.c found that it may (unblock_fortran_check_direct: direct08),
    ierror (optional) its result; else the Fortran function."""
    c = f08_direct_c(e, nargs, form, resolve=True)
    if c is not None:
        when, known, cargs = c
        gen_fortran_c_direct(
            w, ' ' * 8, 'real_%s_t' % e.name, 'unblock_fortran_direct08',
            '%sUNBLOCK_MPI_KNOWN(creal_ = %s)' % (when + ' &&\n' + ' ' * 12 if when else '', known),
            'creal_(%s)' % cargs,
            'if (a%d != NULL)\n%s*(MPI_Fint *)a%d = rc;%s'
            % (nargs - 1, ' ' * 16, nargs - 1,
               '\n' + ' ' * 12 + after.replace('\n', '\n    ') if after else ''),
            void=False)
    for line in direct_lines('real(%s)' % fcall, void=True, after=after):
        w('        ' + line)


def f08_direct_c(e, nargs, form, resolve=False):
    """What the paths of an mpi_f08 form straight to MPI call where MPICH's
    binding calls MPI's C function (fortran_desc_c, its buffer tested by
    fortran_desc_c_when) or PMPI_x (fortran_pmpi_c08), once fortran.c found
    that it may (direct08): (a test before it or None, MPI's function as known
    so far or, with `resolve`, looked up when not yet, its arguments); None
    for the other forms."""
    fn, args = e.fn, fortran_args(nargs)
    if e.large:
        return None
    if 'fortran_desc_c' in fn.f and form == '{l}_f08ts_':
        when = fn.f['fortran_desc_c_when'].format(**args) if 'fortran_desc_c_when' in fn.f else None
        return (when, 'UNBLOCK_MPI_REAL_IF_KNOWN(%s)' % e.name, fn.f['fortran_desc_c'].format(**args))
    if 'fortran_pmpi_c08' in fn.f and form == '{l}_f08_':
        return (None, 'UNBLOCK_PMPI_REAL%s(%s)' % ('' if resolve else '_IF_KNOWN', e.name),
                fn.f['fortran_pmpi_c08'].format(**args))
    return None


def fortran_direct_when(e, form, nargs):
    """What, beside unblock_mpi_front_ok, lets a Fortran entry point (of `form`,
    `nargs` arguments) go straight to MPI, counted ('' for nothing more), or
    None where it may not: a call only counted; a request of the program's, not
    followed from Fortran (mpi_wrap.h: unblock_mpi_enter), once the run is
    marked untracked; one followed from Fortran (OWN_FOLLOWED) of one buffer,
    once untracked or when the log can take it after MPI's call
    (fortran_direct_after; fastpath.h: unblock_own_fdirect); a completion call
    once its fortran_before has nothing left to do (fortran_before_done: for
    Wait, Test and their forms, also a round of the requests the log holds,
    requests.h: unblock_own_fround_ok).  An 8-byte MPI_IRECV, MPI_ISEND and
    MPI_WAITALL of mpif.h to itself cost 122.3 instructions of unblock a call
    through the full path (Open MPI)."""
    fn = e.fn
    if 'fortran_convert' in fn.f or 'mpiio' in fn.f or fn.get('after_init'):
        return None
    if 'fortran_before' in fn.f:
        if 'fortran_before_done' in fn.f and not e.large and kind_of(e) in (
                'UNBLOCK_MPI_KIND_PLAIN', 'UNBLOCK_MPI_KIND_OWN_TRACKED'):
            return ' && %s' % fn.f['fortran_before_done'].format(**fortran_args(nargs))
        return None
    if only_counted(e):
        return ''
    if fortran_direct_after(e, form, nargs):
        b = own_spec(e)[0][0][0]
        if form.startswith('{l}_f08ts_'):
            return ' &&\n        unblock_own_fdirect_desc(a%d)' % b
        return ' &&\n        unblock_own_fdirect(a%d)' % b
    if kind_of(e) in OWN_KINDS:
        # (untracked, not merely armed: requests.h, UNBLOCK_OWN_ARMED)
        return ' &&\n        unblock_own_unfollowed()'
    return None


def fortran_direct_after(e, form, nargs):
    """What a Fortran entry point's direct path does after MPI's call: a
    completion call's round out of the log (requests.h: unblock_own_fround_after);
    a request followed from Fortran of one buffer into the log (fastpath.h:
    unblock_own_flog; MPICH's descriptor forms' buffer its base); else ''."""
    if 'fortran_requests' in e.fn.f and e.name != 'MPI_Request_free' and not e.large and nargs:
        return 'unblock_own_fround_after(%s);' % e.fn.f['fortran_requests'].format(
            **fortran_args(nargs))
    if kind_of(e) != 'UNBLOCK_MPI_KIND_OWN_FOLLOWED' or len(own_spec(e)[0]) != 1 or not nargs:
        return ''
    (b, c, t, wr), req = own_spec(e)[0][0], own_spec(e)[1]
    buf = 'unblock_fortran_desc_base(a%d)' % b if form.startswith('{l}_f08ts_') else 'a%d' % b
    return 'unblock_own_flog(%s, a%d, a%d, %d, a%d, a%d);' % (buf, c, t, int(wr), req, nargs - 1)


def then(call, after):
    """A front's `call` continued with fortran_direct_after's statement; a
    started request's log (unblock_own_flog) only while the program's
    requests are followed, else the call alone ends the front (requests.h:
    unblock_own_unfollowed), MPI's as a tail call where it can be.  (The log
    as a function of its own, reached by a jump, saved the path not followed
    1.3 instructions a call of an 8-byte MPI_IRECV, MPI_ISEND and MPI_WAITALL
    of mpif.h to itself, Open MPI, and cost the followed one 8.6: the front
    keeps its frame for the two arguments on the stack either way.)"""
    if not after:
        return call
    if after.startswith('unblock_own_flog('):
        return ('if (unblock_own_unfollowed()) {\n            %s;\n            return;\n        }\n'
                '        %s;\n        %s' % (call.replace('\n        ', '\n            '), call,
                                            after.rstrip(';')))
    return call + ';\n        ' + after.rstrip(';')


def gen_fortran_wrappers(w, e, wrapped):
    """Every Fortran entry point of e (pointers only, ierror last)."""
    name, fn = e.name, e.fn
    base = fn.name
    if e.large:
        forms = [('{l}_f08ts_large_', 'UNBLOCK_BINDING_F08')]
    else:
        forms = [(f, 'UNBLOCK_BINDING_F77') for f in FORTRAN_F77]
        forms += [(f, 'UNBLOCK_BINDING_F08') for f in FORTRAN_F08[:2]]
    nargs = fn.get('fortran_args', len(e.params) + 1) + fn.get('fortran_strings', 0)
    fdecl = ', '.join('void *a%d' % i for i in range(nargs)) or 'void'
    fcall = ', '.join('a%d' % i for i in range(nargs))
    w('typedef void (*freal_%s_t)(%s);' % (name, fdecl))
    if 'fortran_pmpi_c08' in fn.f:
        w('#if UNBLOCK_FORTRAN_CALLS_C && !defined(UNBLOCK_LINK_WRAP)')
        w('static real_%s_t preal_%s; /* (UNBLOCK_PMPI_REAL) */' % (name, name))
        w('#endif')
    bufs = fn.buffers() if blocking_buffers(fn) else []
    c_call = ('fortran_c' in fn.f or 'fortran_c_call' in fn.f) and not e.large
    if c_call:
        # What the fronts of the plain forms (below) call: where the Fortran
        # binding calls PMPI_x (Open MPI), the Fortran function; where it calls
        # the public MPI_x (MPICH), MPI's C function, as the binding calls it
        # (fastpath.h: UNBLOCK_FORTRAN_CALLS_C, fortran_c), once fortran.c
        # found that it may, and only for mpif.h's and `use mpi`'s forms (f77:
        # the ones fortran.c checked; the mpi_f08 forms' ierror is optional).
        if 'fortran_c_call' in fn.f:
            ccall = fn.f['fortran_c_call'].format(real='real', **fortran_args(nargs))
        else:
            ccall = 'real(%s)' % fn.f['fortran_c'].format(**fortran_args(nargs))
        w('#if UNBLOCK_FORTRAN_CALLS_C')
        w('#define FRONT_REAL_%s real_%s_t' % (name, name))
        w('#define FRONT_KNOWN_%s(real, sym, f77) ((f77) && UNBLOCK_MPI_KNOWN(real = UNBLOCK_MPI_REAL_IF_KNOWN(%s)))'
          % (name, name))
        w('#define FRONT_CALL_%s(real, %s) (*(MPI_Fint *)a%d = %s)'
          % (name, fcall, nargs - 1, ccall))
        w('#else')
        w('#define FRONT_REAL_%s freal_%s_t' % (name, name))
        w('#define FRONT_KNOWN_%s(real, sym, f77) UNBLOCK_MPI_KNOWN(real = UNBLOCK_FORTRAN_REAL_IF_KNOWN(sym))'
          % name)
        w('#define FRONT_CALL_%s(real, %s) real(%s)' % (name, fcall, fcall))
        w('#endif')
    for form, binding in forms:
        sym = form.format(l=base.lower(), u=base.upper())
        w('UNBLOCK_FORTRAN_DECL(freal_%s_t, %s, (%s));' % (name, sym, fdecl))
        wrapped.append(sym)
        plain_form = not e.large and not form.startswith('{l}_f08ts_')
        f77 = int(binding == 'UNBLOCK_BINDING_F77')  # (FRONT_KNOWN_'s f77)
        fast_done = 'unblock_mpi_fast_done(ID_%s, %s);' % (name, binding)
        if 'fortran_bytes' in fn.f and plain_form:
            # A front as the C wrappers': a small call whose handle's size
            # the cache knows goes to MPI (FRONT_CALL_), the rest of the
            # wrapper a function of its own.  (From mpif.h on Open MPI, 120.5
            # instructions of unblock a call before.)
            w('static void fslow_%s(%s);' % (sym, fdecl))
            w('static void fquick_%s(%s);' % (sym, fdecl))
            gen_fortran_small_front(w, name, sym, fdecl, fcall, binding, f77,
                                    '(q_ = unblock_fortran_front_bytes(a0, a1, a2)) != 0 &&\n'
                                    '        q_ < %s' % fn.f['fortran_min'],
                                    'fquick_%s' % sym)
            # The second front (as the C wrappers'): the memo alone.
            fargs = fortran_args(nargs, pc='unblock_tls.call_site', id='ID_%s' % name,
                                 bytes='q_', counts='counts_')
            w('__attribute__((noinline)) static void fquick_%s(%s)' % (sym, fdecl))
            w('{')
            w('    FRONT_REAL_%s real;' % name)
            w('    unblock_counter_t *counts_;')
            w('    size_t q_ = unblock_tls.call_bytes;')
            w('    if (q_ != 0 && FRONT_KNOWN_%s(real, %s, %d) &&' % (name, sym, f77))
            w('        (counts_ = unblock_tls.count_slab) != NULL &&')
            w('        %s) {' % fn.f['fortran_quick_front'].format(**fargs))
            w('        unblock_count_in(counts_, unblock_mpi_count_slot(ID_%s, %s, 0));' % (name, binding))
            w('        FRONT_CALL_%s(real, %s);' % (name, fcall))
            w('        return;')
            w('    }')
            w('    fslow_%s(%s);' % (sym, fcall))
            w('}')
            w('__attribute__((noinline)) static void fslow_%s(%s)' % (sym, fdecl))
        elif 'fortran_front' in fn.f and plain_form:
            # A front of a call with two buffers (MPI_SENDRECV): small halves
            # whose handles' sizes the cache knows go to MPI (FRONT_CALL_),
            # the rest of the wrapper a function of its own.
            w('static void fslow_%s(%s);' % (sym, fdecl))
            gen_fortran_small_front(w, name, sym, fdecl, fcall, binding, f77,
                                    fn.f['fortran_front'].format(**fortran_args(nargs, bytes='&q_')),
                                    'fslow_%s' % sym)
            w('__attribute__((noinline)) static void fslow_%s(%s)' % (sym, fdecl))
        elif fn.f.get('mpiio') in ('read_at', 'read') and not e.large:
            # An independent read on the plain handle (mpi_wrap.h:
            # unblock_mpiio_plain) from Fortran, as the C wrapper's front: its
            # integer (mpi_f08's MPI_VAL) as the hook noted it, MPI's Fortran
            # function inside the runtime's depth (MPICH's binding calls the
            # C MPI_x, which passes it); the rest a function of its own.  In
            # the wrapper's body, the front kept the body's frame: 49
            # instructions a call from mpif.h.
            w('static void fslow_%s(%s);' % (sym, fdecl))
            gen_fortran_front(w, sym, fdecl, fcall, 'freal_%s_t' % name,
                              'unblock_mpiio_plain.fvalid &&\n'
                              '        *(const MPI_Fint *)a0 == unblock_mpiio_plain.ffh &&\n'
                              '        unblock_mpi_front_ok() &&\n'
                              '        UNBLOCK_MPI_KNOWN(real = UNBLOCK_FORTRAN_REAL_IF_KNOWN(%s))' % sym,
                              'unblock_tls.mpi_depth++;\n'
                              '        real(%s);\n'
                              '        unblock_tls.mpi_depth--' % fcall,
                              'unblock_mpi_count_slot(ID_%s, %s, 0)' % (name, binding),
                              'fslow_%s' % sym, hands_site=False)
            w('__attribute__((noinline)) static void fslow_%s(%s)' % (sym, fdecl))
        elif fortran_direct_when(e, form, nargs) is not None:
            fafter = fortran_direct_after(e, form, nargs)
            # Where the Fortran binding calls PMPI_x (Open MPI), the direct
            # path (below) as a front that jumps to MPI, the rest of the
            # wrapper a function of its own (gen_fortran_front).
            w('#if !UNBLOCK_FORTRAN_CALLS_C')
            w('static void fslow_%s(%s);' % (sym, fdecl))
            gen_fortran_front(w, sym, fdecl, fcall, 'freal_%s_t' % name,
                              'unblock_mpi_front_ok()%s &&\n'
                              '        UNBLOCK_MPI_KNOWN(real = UNBLOCK_FORTRAN_REAL_IF_KNOWN(%s))'
                              % (fortran_direct_when(e, form, nargs), sym),
                              then('real(%s)' % fcall, fafter),
                              'unblock_mpi_count_slot(ID_%s, %s, 0)' % (name, binding),
                              'fslow_%s' % sym, hands_site=False)
            w('__attribute__((noinline)) static void fslow_%s(%s)' % (sym, fdecl))
            w('#else')
            if c_call and f77:
                # Where it calls the public MPI_x (MPICH), a front too that
                # makes the direct path's call of MPI's C function (FRONT_CALL_)
                # once fortran.c found that it may, the rest (which asks while
                # that is not known) a function of its own.
                w('static void fslow_%s(%s);' % (sym, fdecl))
                gen_fortran_front(w, sym, fdecl, fcall, 'FRONT_REAL_%s' % name,
                                  'unblock_mpi_front_ok()%s &&\n'
                                  '        __atomic_load_n(&unblock_fortran_direct, __ATOMIC_ACQUIRE) > 0 &&\n'
                                  '        FRONT_KNOWN_%s(real, %s, 1)'
                                  % (fortran_direct_when(e, form, nargs), name, sym),
                                  then('unblock_tls.mpi_depth++;\n'
                                       '        FRONT_CALL_%s(real, %s);\n'
                                       '        unblock_tls.mpi_depth--' % (name, fcall), fafter),
                                  'unblock_mpi_count_slot(ID_%s, %s, 0)' % (name, binding),
                                  'fslow_%s' % sym, hands_site=False)
                w('__attribute__((noinline)) static void fslow_%s(%s)' % (sym, fdecl))
            elif f08_direct_c(e, nargs, form) is not None:
                # The same for mpi_f08's forms, where MPICH's binding calls
                # the C function (fortran_desc_c) or PMPI_x (fortran_pmpi_c08).
                when, known, cargs = f08_direct_c(e, nargs, form)
                w('static void fslow_%s(%s);' % (sym, fdecl))
                gen_fortran_front(w, sym, fdecl, fcall, 'real_%s_t' % name,
                                  'unblock_mpi_front_ok()%s &&\n'
                                  '        __atomic_load_n(&unblock_fortran_direct08, __ATOMIC_ACQUIRE) > 0 &&\n'
                                  '        %sUNBLOCK_MPI_KNOWN(real = %s)'
                                  % (fortran_direct_when(e, form, nargs), when + ' &&\n        ' if when else '', known),
                                  then('unblock_tls.mpi_depth++;\n'
                                       '        int rc_ = real(%s);\n'
                                       '        unblock_tls.mpi_depth--;\n'
                                       '        if (a%d != NULL)\n'
                                       '            *(MPI_Fint *)a%d = rc_'
                                       % (cargs, nargs - 1, nargs - 1), fafter),
                                  'unblock_mpi_count_slot(ID_%s, %s, 0)' % (name, binding),
                                  'fslow_%s' % sym, hands_site=False)
                w('__attribute__((noinline)) static void fslow_%s(%s)' % (sym, fdecl))
            else:
                w('UNBLOCK_EXPORT void UNBLOCK_WRAP(%s)(%s)' % (sym, fdecl))
            w('#endif')
        else:
            w('UNBLOCK_EXPORT void UNBLOCK_WRAP(%s)(%s)' % (sym, fdecl))
        w('{')
        if fn.f.get('mpiio') == 'write_at' and not e.large:
            # The wrapper's cursor from Fortran (mpi_wrap.h: unblock_mpiio_fcur_take):
            # a write continuing the last one the cursor took from Fortran.
            w('    if (unblock_mpiio_cur.fvalid && unblock_tls.mpi_depth == 0 && unblock_conv_idle() &&')
            w('        unblock_mpiio_fcur_take(a0, a1, a2, a3, a4, a5, %d)) {'
              % int(form.startswith('{l}_f08ts_')))
            w('        if (a6 != NULL)')
            w('            *(MPI_Fint *)a6 = MPI_SUCCESS;')
            w('        unblock_count(unblock_mpi_count_slot(ID_%s, %s, 0));' % (name, binding))
            w('        return;')
            w('    }')
        w('    freal_%s_t real = UNBLOCK_FORTRAN_REAL(freal_%s_t, %s);' % (name, name, sym))
        if 'fortran_desc_fast' in fn.f and form == '{l}_f08ts_':
            # The descriptor forms' fast path, inside the runtime's depth
            # (MPICH's binding calls the public MPI_x): a small call from
            # MPICH's mpi_f08 went through unblock_mpi_enter and fortran.c.
            w('    if (unblock_mpi_fast_ok() && %s) {'
              % fn.f['fortran_desc_fast'].format(**fortran_args(nargs)))
            gen_fortran08_direct(w, e, nargs, form, fcall, fast_done)
            w('    }')
            if 'fortran_desc_quick' in fn.f:
                # ... and their quick path, as the plain forms' (until
                # 2026-12-02 a 4 KiB call at a passing site took the full path).
                args = fortran_args(nargs, pc='(uintptr_t)__builtin_return_address(0)',
                                    id='ID_%s' % name)
                w('    if (unblock_mpi_fast_ok() && %s) {' % fn.f['fortran_desc_quick'].format(**args))
                w('        unblock_mpi_quick_count(ID_%s, %s);' % (name, binding))
                gen_fortran08_direct(w, e, nargs, form, fcall, CHAIN_AFTER.format(i=' ' * 8))
                w('    }')
        if 'fortran_bytes' in fn.f and plain_form:
            # The fast path and the quick path of a class the predictor runs as
            # the original call from one lookup of the type's size (fortran.c:
            # unblock_fortran_bytes), inside the runtime's depth: MPICH's
            # Fortran binding calls the C MPI_x, which must pass through.
            args = fortran_args(nargs, pc='(uintptr_t)__builtin_return_address(0)',
                                id='ID_%s' % name, bytes='q_')
            w('    size_t q_;')
            w('    if (unblock_mpi_fast_ok() && (q_ = %s) != 0) {' % fn.f['fortran_bytes'].format(**args))
            w('        if (q_ < %s) {' % fn.f['fortran_min'])
            gen_fortran_direct(w, 12, name, sym, fcall, f77, c_call, fast_done)
            w('        }')
            w('        if (%s) {' % fn.f['fortran_quick'].format(**args))
            w('            unblock_mpi_quick_count(ID_%s, %s);' % (name, binding))
            gen_fortran_direct(w, 12, name, sym, fcall, f77, c_call, CHAIN_AFTER)
            w('        }')
            w('    }')
        elif 'fortran_fast' in fn.f and plain_form:
            # The fast path (fastpath.h), as the C wrapper's; not for the
            # descriptor forms (MPICH's mpi_f08 passes gfortran descriptors).
            # With fortran_c, where the Fortran binding calls the public MPI_x
            # (MPICH), MPI's C function as the binding calls it (FRONT_CALL_).
            # Behind a front (fortran_front), the bytes the front reckoned of
            # a call it found not small (q_, not 0) skip the fast path's test
            # and the quick path's sizes: a front whose rest tested again cost
            # an 8 KiB MPI_SENDRECV at a passing site from mpif.h 416.4 ->
            # 483.5 instructions (the 7 arguments on the stack are loaded and
            # stored again on the front's way to the rest, too).
            front = 'fortran_front' in fn.f
            site = 'unblock_tls.call_site' if front else '(uintptr_t)__builtin_return_address(0)'
            if front:
                w('    size_t q_ = unblock_tls.call_bytes;')
            w('    if (%sunblock_mpi_fast_ok() && %s) {'
              % ('q_ == 0 && ' if front else '', fn.f['fortran_fast'].format(**fortran_args(nargs))))
            gen_fortran_direct(w, 8, name, sym, fcall, f77, c_call, fast_done)
            w('    }')
            if 'fortran_quick' in fn.f:
                # The quick path of a class the predictor runs as the original
                # call, as the C wrapper's, inside the runtime's depth.
                args = fortran_args(nargs, pc=site, id='ID_%s' % name,
                                    bytes='q_' if front else '0')
                w('    if (unblock_mpi_fast_ok() && %s) {' % fn.f['fortran_quick'].format(**args))
                w('        unblock_mpi_quick_count(ID_%s, %s);' % (name, binding))
                gen_fortran_direct(w, 8, name, sym, fcall, f77, c_call, CHAIN_AFTER)
                w('    }')
        direct = fortran_direct_when(e, form, nargs)
        fafter = fortran_direct_after(e, form, nargs)
        c08 = f08_direct_c(e, nargs, form)
        if direct is not None and (c_call and f77 or c08 is not None):
            # Where the binding calls the public MPI_x (MPICH), MPI's C
            # function as the binding calls it (fortran_c, gen_fortran_direct;
            # from mpi_f08's descriptor forms fortran_desc_c): through the
            # binding, our C wrapper's front passed the call again (an
            # MPI_ISEND from mpif.h: 53 instructions here, 28 there).  Where
            # MPICH's mpi_f08 binding calls PMPI_x (fortran_pmpi_c08), that,
            # as the binding does (an 8-byte own-request round of mpi_f08:
            # its MPI_WAITALL copies the requests to a malloc'd array and back).
            w('    if (unblock_mpi_front_ok()%s) {' % direct)
            w('        unblock_count(unblock_mpi_count_slot(ID_%s, %s, 0));' % (name, binding))
            if c08 is not None:
                gen_fortran08_direct(w, e, nargs, form, fcall, fafter)
            else:
                gen_fortran_direct(w, 8, name, sym, fcall, f77, c_call, fafter)
            w('    }')
        elif direct is not None:
            # As the C wrapper's direct path (where the binding calls the
            # public MPI_x, MPICH, inside the depth: its C wrapper passes it).
            gen_direct(w, 'unblock_mpi_front_ok()' + direct, 'real(%s)' % fcall, void=True,
                       after=fafter or None,
                       before='unblock_count(unblock_mpi_count_slot(ID_%s, %s, 0));'
                       % (name, binding))
        w('    if (UNBLOCK_MPI_SKIP()) {')
        w('        unblock_mpi_skip_hook();')
        w('        real(%s);' % fcall)
        if fn.get('after_init'):
            w('        if (unblock_tls.mpi_depth == 0)')
            w('            unblock_comm_after_init();')
        w('        return;')
        w('    }')
        w('    unblock_mpi_enter(ID_%s, %s);' % (name, binding))
        if 'fortran_before' in fn.f and not e.large:
            w('    ' + fn.f['fortran_before'])
        if 'mpiio' in fn.f and fn.f['mpiio'] in FORTRAN_MPIIO and not e.large:
            # mpif.h, `use mpi` and `use mpi_f08`: opened, closed and written as
            # from C.  The mpi_f08 forms' ierror is optional (NULL when left out);
            # MPICH's descriptor forms pass the buffer as gfortran's descriptor.
            flags = ' | UNBLOCK_MPIIO_F77'
            if binding == 'UNBLOCK_BINDING_F08':
                flags += ' | UNBLOCK_MPIIO_F08'
            if form.startswith('{l}_f08ts_'):
                flags += ' | UNBLOCK_MPIIO_FDESC'
            # The ierror argument's address also before the arguments (fa_[0],
            # the hook's a[-1]), so that any call can return a kept error.
            ierr = fn.get('fortran_args', len(e.params) + 1) - 1
            w('    if (unblock_mpiio_hook != NULL) {')
            w('        void *fa_[%d] = { a%d, %s };' % (nargs + 1, ierr, fcall))
            w('        int rc_;')
            w('        if (unblock_mpiio_hook(UNBLOCK_MPIIO_%s%s, ID_%s, 0, fa_ + 1, '
              '(void (*)(void))real, &rc_)) {' % (fn.f['mpiio'].upper(), flags, name))
            w('            unblock_mpi_leave();')
            w('            return;')
            w('        }')
            w('    }')
        elif 'mpiio' in fn.f:
            # Files the program opened from C may be written from Fortran: what
            # is buffered goes first (finalize and abort drain as from C).
            op = fn.f['mpiio'] if fn.f['mpiio'] in ('finalize', 'abort') else 'fortran'
            w('    if (unblock_mpiio_hook != NULL)')
            w('        unblock_mpiio_hook(UNBLOCK_MPIIO_%s, ID_%s, 0, NULL, NULL, NULL);'
              % (op.upper(), name))
        fconv = fn.get('fortran_convert') if not e.large else None
        followed = kind_of(e) == 'UNBLOCK_MPI_KIND_OWN_FOLLOWED'
        if 'fortran_requests' in fn.f and not e.large:
            # A completion call (or MPI_REQUEST_FREE): the requests MPI turns
            # into MPI_REQUEST_NULL, seen by their handles before and after.
            args = fortran_args(nargs)
            n, reqs = (x.strip().format(**args) for x in fn.f['fortran_requests'].split(','))
            w('    unblock_freqs_t fr_;')
            w('    unblock_fortran_reqs_save(&fr_, %s, %s);' % (n, reqs))
            w('    real(%s);' % fcall)
            w('    unblock_fortran_reqs_done(&fr_, %s, %d);'
              % (reqs, int(e.name == 'MPI_Request_free')))
        elif (bufs or followed) and not fconv:
            # The buffers described and ordered (on the runtime view), as from
            # C; gfortran descriptors in MPICH's mpi_f08 forms (as
            # fortran_convert's {d}).  A blocking call's only when something
            # is in flight or there is a pool (unblock_fortran_buffers); the
            # program's own request's always, then followed under its Fortran
            # handle (fortran_own.c).
            fbufs = fn.buffers() if followed else bufs
            desc = 1 if form.startswith('{l}_f08ts_') else 0
            specs = ', '.join(f_buf_spec(b) for b in fbufs)
            w('    static const unblock_fbuf_t spec_[%d] = { %s };' % (len(fbufs), specs))
            w('    void *args_[%d] = { %s };' % (nargs, fcall))
            w('    unblock_fbufs_t fb_;')
            w('    unblock_fortran_%s(&fb_, args_, spec_, %d, %d, %d);'
              % ('describe' if followed else 'buffers', len(fbufs), desc, int(e.large)))
            w('    real(%s);' % ', '.join('args_[%d]' % i for i in range(nargs)))
            if followed:
                w('    unblock_fortran_own_after(&fb_, args_[%d], args_[%d]);'
                  % (own_spec(e)[1], nargs - 1))
            else:
                w('    unblock_fortran_buffers_done(&fb_, args_[%d]);' % (nargs - 1))
        elif fconv:
            w('    unblock_tls.call_pc = %s;' % (
                'unblock_tls.call_site' if 'fortran_front' in fn.f and plain_form
                else '(uintptr_t)__builtin_return_address(0)'))
            w('    unblock_tls.call_fn = ID_%s;' % name)
            w('    void *args_[%d] = { %s };' % (nargs, fcall))
            w('    ' + fconv.format(
                d=1 if form == '{l}_f08ts_' else 0,
                it=form.format(l='mpi_init_thread', u='MPI_INIT_THREAD')))
        else:
            w('    real(%s);' % fcall)
        w('    unblock_mpi_leave();')
        if fn.get('after_init'):
            w('    unblock_comm_after_init();')
        w('}')
    w('')


# ---- the files ----

POSIX_EXTRA = [  # wrapped outside posix_functions.h (signals.c, threads.c, memory/, tick.c)
    'pthread_create', 'sigaction', 'signal', 'bsd_signal', '__sysv_signal', 'sysv_signal',
    'sigset', 'munmap', 'madvise', 'mprotect', 'mremap', 'malloc', 'calloc', 'free', 'realloc',
    'posix_memalign', 'aligned_alloc', 'memalign', 'valloc', 'pvalloc', 'malloc_usable_size',
    # progress/tick.c: sleeping calls the tick must not interrupt
    'nanosleep', 'clock_nanosleep', 'usleep', 'sleep', 'poll', 'ppoll', 'select', 'pselect',
    'epoll_wait', 'epoll_pwait', 'sem_timedwait', 'sem_wait', 'pause', 'sigsuspend']


def gen_wrappers(entries):
    """The C file, and the symbols it wraps."""
    o, wrapped = [], []
    w = o.append
    w('/* Generated by tools/gen_mpi_wrappers.py from src/comm/mpi_functions.toml: do not edit. */')
    w('#include "comm/datatype.h"')
    w('#include "comm/fastpath.h"')
    w('#include "comm/mpi_wrap.h"')
    w('#include "comm/requests.h"')
    w('#include <limits.h>')
    w('')
    gen_tables(w, entries)
    by_name = {e.name: e for e in entries}
    for e in entries:
        gen_c_wrapper(w, e, by_name)
        wrapped.append(e.name)
        if e.fn.get('fortran', True):
            gen_fortran_wrappers(w, e, wrapped)
    return '\n'.join(o) + '\n', wrapped


def write_wrap_list(path, wrapped, posix_list):
    posix = re.findall(r'^UNBLOCK_IO_FN\((\w+),', open(posix_list).read(), re.M)
    # compat-only symbols (binaries older than glibc 2.33) cannot be linked against
    posix = [p for p in posix if not re.match(r'__[fl]?xstat', p)] + POSIX_EXTRA
    with open(path, 'w') as f:
        for sym in wrapped + posix:
            f.write('-Wl,--wrap=%s\n' % sym)


def main():
    if len(sys.argv) not in (4, 6):
        sys.exit(__doc__.split('\n\n')[-1])
    spec_path, header_path, out_path = sys.argv[1:4]
    try:
        funcs = load_spec(spec_path)
        header = open(header_path).read() if header_path != '-' else ''
        entries = entry_points(funcs, header)
    except SpecError as e:
        sys.exit('gen_mpi_wrappers.py: %s: %s' % (spec_path, e))
    text, wrapped = gen_wrappers(entries)
    if out_path != '-':
        with open(out_path, 'w') as f:
            f.write(text)
    if len(sys.argv) == 6:
        write_wrap_list(sys.argv[4], wrapped, sys.argv[5])


if __name__ == '__main__':
    main()
