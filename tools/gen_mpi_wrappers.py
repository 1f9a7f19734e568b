#!/usr/bin/env python3
"""Write the MPI wrappers of one MPI implementation.

Reads src/comm/mpi_functions.txt (which functions, with flags) and the output of
the C preprocessor run on that implementation's mpi.h (the exact prototypes), and
writes one C file holding, for every listed function the header declares:

  * the C entry point MPI_X (and MPI_X_c for large counts),
  * every Fortran entry point (mpi_x mpi_x_ mpi_x__ MPI_X mpi_x_f08_ mpi_x_f08ts_
    mpi_x_f08ts_large_), which take only pointers (plus hidden string lengths),
  * the table of names and "carries data" flags the statistics use.

Each wrapper forwards to the next definition of the same symbol (dlsym RTLD_NEXT,
so other PMPI tools still stack), never to PMPI_X.  See docs/interposition.md.

Built with -DUNBLOCK_LINK_WRAP the same file gives the link-time variant: every
wrapper is then named __wrap_X and calls __real_X (ld --wrap=X).  WRAP_LIST, if
given, receives one "-Wl,--wrap=X" line per symbol, the MPI ones and those of
POSIX_LIST (src/fileio/posix_functions.h), for the link line of a static program.

Usage: gen_mpi_wrappers.py SPEC PREPROCESSED_MPI_H OUTPUT_C [WRAP_LIST POSIX_LIST]
       (PREPROCESSED_MPI_H and OUTPUT_C "-": no MPI, only the POSIX wrap list)
"""
import re
import sys


def read_spec(path):
    funcs = []
    with open(path) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            flags = {}
            if len(parts) > 1:
                for fl in parts[1].split(','):
                    fl = fl.strip()
                    if '=' in fl:
                        k, v = fl.split('=', 1)
                        flags[k] = int(v)
                    elif fl:
                        flags[fl] = True
            funcs.append((parts[0], flags))
    return funcs


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


# The call convert.c takes for each `conv` function ({0}, {1}...: the C arguments).
CONV = {
    'MPI_Send': 'unblock_conv_send(0, {0}, {1}, {2}, {3}, {4}, {5}, real)',
    'MPI_Rsend': 'unblock_conv_send(1, {0}, {1}, {2}, {3}, {4}, {5}, real)',
    'MPI_Recv': 'unblock_conv_recv({0}, {1}, {2}, {3}, {4}, {5}, {6}, real)',
    'MPI_Sendrecv': 'unblock_conv_sendrecv({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, {9}, '
                    '{10}, {11}, 0, real, NULL)',
    'MPI_Sendrecv_replace': 'unblock_conv_sendrecv({0}, {1}, {2}, {3}, {4}, {0}, {1}, {2}, {5}, '
                            '{6}, {7}, {8}, 1, NULL, real)',
    'MPI_Init': 'unblock_conv_init({0}, {1}, MPI_THREAD_SINGLE, NULL, 0, real, NULL)',
    'MPI_Init_thread': 'unblock_conv_init({0}, {1}, {2}, {3}, 1, NULL, real)',
    'MPI_Query_thread': 'unblock_conv_query_thread({0}, real)',
    'MPI_Type_commit': 'unblock_dt_commit({0}, real)',
    'MPI_Type_dup': 'unblock_dt_dup({0}, {1}, real)',
    'MPI_Type_free': 'unblock_dt_free({0}, real)',
}

# The count arguments of the converted calls: their large-count `_c` forms (mpi4py
# 4 on MPICH calls those) are converted through the int form when every count
# fits in an int, and run as they are otherwise.
CONV_COUNTS = {
    'MPI_Send': [1], 'MPI_Rsend': [1], 'MPI_Recv': [1], 'MPI_Sendrecv': [1, 6],
    'MPI_Sendrecv_replace': [1],
}

# The program's own nonblocking calls that src/comm/requests.c follows (C binding):
# their buffers as (buffer, count, datatype argument positions, 1 when MPI writes
# it), the request argument, and 1 for persistent requests (started later).  The
# other nonblocking calls with a request (collectives, MPI-IO) are followed without
# a description of their buffers (see own_spec).
OWN = {
    'MPI_Isend': ([(0, 1, 2, 0)], 6, 0),
    'MPI_Ibsend': ([(0, 1, 2, 0)], 6, 0),
    'MPI_Issend': ([(0, 1, 2, 0)], 6, 0),
    'MPI_Irsend': ([(0, 1, 2, 0)], 6, 0),
    'MPI_Irecv': ([(0, 1, 2, 1)], 6, 0),
    'MPI_Imrecv': ([(0, 1, 2, 1)], 4, 0),
    'MPI_Isendrecv': ([(0, 1, 2, 0), (5, 6, 7, 1)], 11, 0),
    'MPI_Isendrecv_replace': ([(0, 1, 2, 1)], 8, 0),
    'MPI_Send_init': ([(0, 1, 2, 0)], 6, 1),
    'MPI_Bsend_init': ([(0, 1, 2, 0)], 6, 1),
    'MPI_Ssend_init': ([(0, 1, 2, 0)], 6, 1),
    'MPI_Rsend_init': ([(0, 1, 2, 0)], 6, 1),
    'MPI_Recv_init': ([(0, 1, 2, 1)], 6, 1),
    'MPI_Ibarrier': ([], 1, 0),
}

# Blocking calls with buffers besides the converted ones (C binding): each buffer
# as (buffer, count, datatype argument positions, 1 when MPI writes it, and the
# communicator's position when the count is per process of the group, else None).
# The wrapper hands them to unblock_conv_buffers before the real call (what owns
# their bytes finishes; pool memory goes to MPI on the runtime view) instead of
# finishing every operation in flight.  A buffer significant only at the root may
# be anything elsewhere: it is only compared with what is in flight.  The Fortran
# entry points describe the same buffers (unblock_fortran_buffers in
# src/comm/fortran.c); the last Fortran argument is ierror.
# The v-collectives add a sixth element: 'displs' (the displacements' position:
# the count's argument is then an array, one per process of the group), 'sum' (an
# array, the blocks one after another), 'mine' (an array, only this process's
# block), 'root' (the root's position: the buffer means something only there).
# MPI_Alltoallw (byte displacements, a datatype per process) and the
# neighbourhood collectives are not described: they finish everything first.
_RW = [(0, 2, 3, 0, None), (1, 2, 3, 1, None)]  # (sendbuf, recvbuf, count, type, ...)
BUFS = {
    'MPI_Bsend': [(0, 1, 2, 0, None)],
    'MPI_Ssend': [(0, 1, 2, 0, None)],
    'MPI_Mrecv': [(0, 1, 2, 1, None)],
    'MPI_Bcast': [(0, 1, 2, 1, None)],
    'MPI_Gather': [(0, 1, 2, 0, None), (3, 4, 5, 1, 7)],
    'MPI_Scatter': [(0, 1, 2, 0, 7), (3, 4, 5, 1, None)],
    'MPI_Allgather': [(0, 1, 2, 0, None), (3, 4, 5, 1, 6)],
    'MPI_Alltoall': [(0, 1, 2, 0, 6), (3, 4, 5, 1, 6)],
    'MPI_Reduce': _RW,
    'MPI_Allreduce': _RW,
    'MPI_Scan': _RW,
    'MPI_Exscan': _RW,
    'MPI_Reduce_scatter_block': [(0, 2, 3, 0, 5), (1, 2, 3, 1, None)],
    'MPI_Gatherv': [(0, 1, 2, 0, None), (3, 4, 6, 1, 8, {'displs': 5, 'root': 7})],
    'MPI_Scatterv': [(0, 1, 3, 0, 8, {'displs': 2, 'root': 7}), (4, 5, 6, 1, None)],
    'MPI_Allgatherv': [(0, 1, 2, 0, None), (3, 4, 6, 1, 7, {'displs': 5})],
    'MPI_Alltoallv': [(0, 1, 3, 0, 8, {'displs': 2}), (4, 5, 7, 1, 8, {'displs': 6})],
    'MPI_Reduce_scatter': [(0, 2, 3, 0, 5, {'sum': 1}), (1, 2, 3, 1, 5, {'mine': 1})],
}
for _n in ('read_at', 'read_at_all', 'write_at', 'write_at_all'):
    BUFS['MPI_File_' + _n] = [(2, 3, 4, int(_n.startswith('read')), None)]
for _n in ('read', 'read_all', 'read_shared', 'read_ordered',
           'write', 'write_all', 'write_shared', 'write_ordered'):
    BUFS['MPI_File_' + _n] = [(1, 2, 3, int(_n.startswith('read')), None)]


def bufs_of(base):
    """BUFS[base] with every entry as (buf, count, type, writes, comm, extra)."""
    return [e if len(e) == 6 else tuple(e) + ({},) for e in BUFS[base]]


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


def f_buf_spec(entry):
    """The Fortran description of one buffer (unblock_fbuf_t)."""
    b, c, t, wr, comm, x = entry
    flags = ' | '.join((['UNBLOCK_FBUF_ARRAY'] if x else []) +
                       (['UNBLOCK_FBUF_MINE'] if x.get('mine') else [])) or '0'
    return '{ %d, %d, %d, %d, %d, %d, %d, %s }' % (
        b, c, t, wr, -1 if comm is None else comm, x.get('displs', -1), x.get('root', -1), flags)


# ... and the calls that start or complete requests ({0}...: the C arguments).
OWN_COMPLETE = {
    'MPI_Wait': 'unblock_own_wait({0}, {1}, real)',
    'MPI_Test': 'unblock_own_test({0}, {1}, {2}, real)',
    'MPI_Waitall': 'unblock_own_waitall({0}, {1}, {2}, real)',
    'MPI_Testall': 'unblock_own_testall({0}, {1}, {2}, {3}, real)',
    'MPI_Waitany': 'unblock_own_waitany({0}, {1}, {2}, {3}, real)',
    'MPI_Testany': 'unblock_own_testany({0}, {1}, {2}, {3}, {4}, real)',
    'MPI_Waitsome': 'unblock_own_waitsome({0}, {1}, {2}, {3}, {4}, real)',
    'MPI_Testsome': 'unblock_own_testsome({0}, {1}, {2}, {3}, {4}, real)',
    'MPI_Start': 'unblock_own_start({0}, real)',
    'MPI_Startall': 'unblock_own_startall({0}, {1}, real)',
    'MPI_Request_free': 'unblock_own_request_free({0}, real)',
}


def base_name(name):
    """The MPI function a large-count `_c` form belongs to (the name itself otherwise)."""
    return name[:-2] if name.endswith('_c') else name


def own_spec(name, flags, params):
    """(buffers or None, request position, persistent) of a followed call, or None."""
    base = base_name(name)
    if base in OWN:
        return OWN[base]
    if mpi_kind(name, flags) == 'UNBLOCK_MPI_KIND_OWN_ASYNC' and params and \
            re.search(r'MPI_Request\s*\*', params[-1]):
        return (None, len(params) - 1, 0)
    return None


# The Fortran entry points of the converted calls (src/comm/fortran.c): args_ holds
# the arguments, {d} is 1 for MPICH's mpi_f08 form (an array descriptor).
FCONV = {
    'MPI_Send': 'unblock_fortran_send(0, args_, {d}, (void (*)())real);',
    'MPI_Rsend': 'unblock_fortran_send(1, args_, {d}, (void (*)())real);',
    'MPI_Recv': 'unblock_fortran_recv(args_, {d}, (void (*)())real);',
    'MPI_Sendrecv': 'unblock_fortran_sendrecv(args_, {d}, (void (*)())real);',
    'MPI_Sendrecv_replace': 'unblock_fortran_sendrecv_replace(args_, {d}, (void (*)())real);',
    'MPI_Init': 'unblock_fortran_init(args_, "{it}", (void (*)())real);',
    'MPI_Init_thread': 'unblock_fortran_init_thread(args_, (void (*)())real);',
    'MPI_Query_thread': 'unblock_fortran_query_thread(args_, (void (*)())real);',
}

# What a Fortran entry point does before the real call (a0...: its arguments).
FORTRAN_BEFORE = {
    'MPI_Type_free': 'unblock_dt_forget_fortran(a0);',
}
# A request completed or freed from Fortran may have been started in C: the
# completion thread stops driving the program's requests (requests.c).
for _n in ('MPI_Wait', 'MPI_Test', 'MPI_Waitall', 'MPI_Testall', 'MPI_Waitany', 'MPI_Testany',
           'MPI_Waitsome', 'MPI_Testsome', 'MPI_Request_free'):
    FORTRAN_BEFORE[_n] = 'unblock_own_fortran_completes();'


def mpi_kind(name, flags):
    """What the runtime does at this call with operations in flight (mpi_wrap.h)."""
    if flags.get('conv') and name in ('MPI_Init', 'MPI_Init_thread', 'MPI_Query_thread'):
        return 'UNBLOCK_MPI_KIND_PLAIN'
    if flags.get('conv') and name.startswith('MPI_Type_'):
        return 'UNBLOCK_MPI_KIND_PLAIN'
    if flags.get('conv') and (not name.endswith('_c') or name[:-2] in CONV_COUNTS):
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
    if flags.get('data') and base_name(name) in BUFS:
        return 'UNBLOCK_MPI_KIND_BUFS'
    if flags.get('data'):
        return 'UNBLOCK_MPI_KIND_DATA'
    return 'UNBLOCK_MPI_KIND_PLAIN'


def viewed_call(args, positions, table):
    """The real call's arguments, each buffer moved by its table entry's view."""
    a = list(args)
    for i, p in enumerate(positions):
        a[p] = '(void *)((uintptr_t)%s + (uintptr_t)%s[%d].view)' % (args[p], table, i)
    return ', '.join(a)


FORTRAN_F77 = ['{l}', '{l}_', '{l}__', '{u}']
FORTRAN_F08 = ['{l}_f08_', '{l}_f08ts_', '{l}_f08ts_large_']


def main():
    spec, header, out = sys.argv[1:4]
    text = open(header).read() if header != '-' else ''
    funcs = read_spec(spec)
    entries = []  # (c_name, flags, params) for every C entry point present
    for name, flags in funcs:
        p = find_prototype(text, name)
        if p is None:
            continue
        entries.append((name, flags, split_params(p)))
        if flags.get('c'):
            pc = find_prototype(text, name + '_c')
            if pc is not None:
                entries.append((name + '_c', flags, split_params(pc)))

    o = []
    w = o.append
    wrapped = []
    w('/* Generated by tools/gen_mpi_wrappers.py from src/comm/mpi_functions.txt: do not edit. */')
    w('#include "comm/datatype.h"')
    w('#include "comm/mpi_wrap.h"')
    w('#include "comm/requests.h"')
    w('#include <limits.h>')
    w('')
    w('enum {')
    for i, (name, _, _) in enumerate(entries):
        w('    ID_%s = %d,' % (name, i))
    w('    ID_COUNT_ = %d' % len(entries))
    w('};')
    w('')
    w('const unsigned unblock_mpi_fn_count = %d;' % len(entries))
    w('const char *const unblock_mpi_fn_names[%d] = {' % len(entries))
    for name, _, _ in entries:
        w('    "%s",' % name)
    w('};')
    w('const unsigned char unblock_mpi_fn_carries_data[%d] = {' % len(entries))
    for name, flags, _ in entries:
        w('    %d, /* %s */' % (1 if flags.get('data') else 0, name))
    w('};')
    w('const unsigned char unblock_mpi_fn_kind[%d] = {' % len(entries))
    for name, flags, params in entries:
        kind = mpi_kind(name, flags)
        if own_spec(name, flags, params) is not None or name in ('MPI_Start', 'MPI_Startall'):
            kind = 'UNBLOCK_MPI_KIND_OWN_TRACKED'
        w('    %s, /* %s */' % (kind, name))
    w('};')
    w('unblock_counter_t unblock_mpi_fn_calls[%d][UNBLOCK_BINDING_COUNT];' % len(entries))
    w('')

    int_args = {}  # the argument names of each C entry point, for the _c adaptors
    for name, flags, params in entries:
        decls, args = [], []
        for i, prm in enumerate(params):
            n, d = param_name(prm, i)
            decls.append(d)
            args.append(n)
        decl = ', '.join(decls) if decls else 'void'
        call = ', '.join(args)
        int_args[name] = (decl, args)
        base = base_name(name)
        narrow = name.endswith('_c') and flags.get('conv') and base in CONV_COUNTS and \
            base in int_args
        w('/* %s */' % name)
        w('typedef int (*real_%s_t)(%s);' % (name, decl))
        w('UNBLOCK_MPI_DECL(%s, (%s));' % (name, decl))
        wrapped.append(name)
        if narrow:
            # The int form of the call, running the real large-count function.
            bdecl, bargs = int_args[base]
            w('static real_%s_t wide_%s;' % (name, name))
            w('static int narrow_%s(%s)' % (name, bdecl))
            w('{')
            w('    return wide_%s(%s);' % (name, ', '.join(bargs)))
            w('}')
        w('UNBLOCK_EXPORT int UNBLOCK_WRAP(%s)(%s)' % (name, decl))
        w('{')
        w('    real_%s_t real = UNBLOCK_MPI_REAL(%s);' % (name, name))
        w('    if (UNBLOCK_MPI_SKIP()) {')
        w('        unblock_mpi_skip_hook();')
        if flags.get('init'):
            w('        int rc = real(%s);' % call)
            w('        if (rc == MPI_SUCCESS && unblock_tls.mpi_depth == 0)')
            w('            unblock_comm_after_init();')
            w('        return rc;')
        else:
            w('        return real(%s);' % call)
        w('    }')
        w('    unblock_mpi_enter(ID_%s, UNBLOCK_BINDING_C);' % name)
        spec = own_spec(name, flags, params)
        if flags.get('conv') and not name.endswith('_c'):
            if CONV[name].startswith(('unblock_conv_send', 'unblock_conv_recv')):
                # The call site, for the predictor (src/core/sites.h).
                w('    unblock_tls.call_pc = (uintptr_t)__builtin_return_address(0);')
                w('    unblock_tls.call_fn = ID_%s;' % name)
            w('    int rc = %s;' % CONV[name].format(*args))
        elif narrow:
            counts = CONV_COUNTS[base]
            fits = ' && '.join('%s >= 0 && %s <= INT_MAX' % (args[c], args[c]) for c in counts)
            w('    int rc;')
            w('    if (%s) {' % fits)
            w('        wide_%s = real;' % name)
            w('        unblock_tls.call_pc = (uintptr_t)__builtin_return_address(0);')
            w('        unblock_tls.call_fn = ID_%s;' % name)
            nargs = ['(int)%s' % a if i in counts else a for i, a in enumerate(args)]
            w('        rc = %s;' % CONV[base].format(*nargs).replace(', real', ', narrow_' + name))
            w('    } else {')
            w('        rc = real(%s);' % call)
            w('    }')
        elif name in OWN_COMPLETE:
            w('    int rc = %s;' % OWN_COMPLETE[name].format(*args))
        elif spec is not None and spec[0] != []:
            bufs, req, persistent = spec
            if bufs is None:
                init = ['{ .writes = 1, .everything = 1 }']
            else:
                init = ['{ .buf = %s, .count = (long long)%s, .type = %s, .writes = %d }'
                        % (args[b], args[c], args[t], wr)
                        for b, c, t, wr in bufs]
            w('    unblock_own_buf_t own_[%d] = { %s };' % (len(init), ', '.join(init)))
            w('    unblock_conv_buffers(own_, %d);' % len(init))
            w('    int rc = real(%s);' % viewed_call(args, [b[0] for b in bufs or []], 'own_'))
            w('    unblock_own_after(own_, %d, rc, %s, %d);' % (len(init), args[req], persistent))
        elif base in BUFS:
            init = [c_buf_init(e, args, name.endswith('_c')) for e in bufs_of(base)]
            w('    unblock_own_buf_t bufs_[%d] = { %s };' % (len(init), ', '.join(init)))
            w('    unblock_conv_buffers(bufs_, %d);' % len(init))
            w('    int rc = real(%s);' % viewed_call(args, [b[0] for b in BUFS[base]], 'bufs_'))
            w('    unblock_conv_buffers_done(bufs_, %d, rc);' % len(init))
        else:
            w('    int rc = real(%s);' % call)
        w('    unblock_mpi_leave();')
        if flags.get('init'):
            w('    if (rc == MPI_SUCCESS)')
            w('        unblock_comm_after_init();')
        w('    return rc;')
        w('}')
        w('')

        if flags.get('nof'):
            continue
        base = base_name(name)
        if name.endswith('_c'):
            forms = [('{l}_f08ts_large_', 'UNBLOCK_BINDING_F08')]
        else:
            forms = [(f, 'UNBLOCK_BINDING_F77') for f in FORTRAN_F77]
            forms += [(f, 'UNBLOCK_BINDING_F08') for f in FORTRAN_F08[:2]]
        nargs = flags.get('f', len(params) + 1) + flags.get('s', 0)
        fdecl = ', '.join('void *a%d' % i for i in range(nargs)) or 'void'
        fcall = ', '.join('a%d' % i for i in range(nargs))
        w('typedef void (*freal_%s_t)(%s);' % (name, fdecl))
        for form, binding in forms:
            sym = form.format(l=base.lower(), u=base.upper())
            w('UNBLOCK_FORTRAN_DECL(freal_%s_t, %s, (%s));' % (name, sym, fdecl))
            wrapped.append(sym)
            w('UNBLOCK_EXPORT void UNBLOCK_WRAP(%s)(%s)' % (sym, fdecl))
            w('{')
            w('    freal_%s_t real = UNBLOCK_FORTRAN_REAL(freal_%s_t, %s);' % (name, name, sym))
            w('    if (UNBLOCK_MPI_SKIP()) {')
            w('        unblock_mpi_skip_hook();')
            w('        real(%s);' % fcall)
            if flags.get('init'):
                w('        if (unblock_tls.mpi_depth == 0)')
                w('            unblock_comm_after_init();')
            w('        return;')
            w('    }')
            w('    unblock_mpi_enter(ID_%s, %s);' % (name, binding))
            if name in FORTRAN_BEFORE:
                w('    ' + FORTRAN_BEFORE[name])
            if base in BUFS and name not in FCONV:
                # gfortran descriptors in MPICH's mpi_f08 forms (as FCONV's {d})
                desc = 1 if form.startswith('{l}_f08ts_') else 0
                specs = ', '.join(f_buf_spec(e) for e in bufs_of(base))
                w('    static const unblock_fbuf_t spec_[%d] = { %s };' % (len(BUFS[base]), specs))
                w('    void *args_[%d] = { %s };' % (nargs, fcall))
                w('    unblock_fbufs_t fb_;')
                w('    unblock_fortran_buffers(&fb_, args_, spec_, %d, %d, %d);'
                  % (len(BUFS[base]), desc, int(name.endswith('_c'))))
                w('    real(%s);' % ', '.join('args_[%d]' % i for i in range(nargs)))
                w('    unblock_fortran_buffers_done(&fb_, args_[%d]);' % (nargs - 1))
            elif name in FCONV:
                w('    unblock_tls.call_pc = (uintptr_t)__builtin_return_address(0);')
                w('    unblock_tls.call_fn = ID_%s;' % name)
                w('    void *args_[%d] = { %s };' % (nargs, fcall))
                w('    ' + FCONV[name].format(d=1 if form == '{l}_f08ts_' else 0,
                                             it=form.format(l='mpi_init_thread',
                                                            u='MPI_INIT_THREAD')))
            else:
                w('    real(%s);' % fcall)
            w('    unblock_mpi_leave();')
            if flags.get('init'):
                w('    unblock_comm_after_init();')
            w('}')
        w('')

    if out != '-':
        with open(out, 'w') as f:
            f.write('\n'.join(o) + '\n')
    if len(sys.argv) > 5:
        posix = re.findall(r'^UNBLOCK_IO_FN\((\w+),', open(sys.argv[5]).read(), re.M)
        # compat-only symbols (binaries older than glibc 2.33) cannot be linked against
        posix = [p for p in posix if not re.match(r'__[fl]?xstat', p)] + [
            'pthread_create', 'sigaction', 'signal', 'bsd_signal', '__sysv_signal', 'sysv_signal', 'sigset',
            'munmap', 'madvise', 'mprotect', 'mremap', 'malloc', 'calloc', 'free', 'realloc',
            'posix_memalign', 'aligned_alloc', 'memalign', 'valloc', 'pvalloc',
            'malloc_usable_size']
        with open(sys.argv[4], 'w') as f:
            for sym in wrapped + posix:
                f.write('-Wl,--wrap=%s\n' % sym)


if __name__ == '__main__':
    main()
