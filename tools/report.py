#!/usr/bin/env python3
"""`unblock report [--html FILE | --text] [--png FILE] DIR`: the report of a run's
statistics (docs/stats.md).

Reads every DIR/unblock-*.json that the library wrote (src/core/stats.c) with
Python's json module, whatever their size, and prints: one row per process and a
total, how transfers progressed, the most called MPI and file functions, the call
sites that took the most time (summed over the processes), the sums of the
processes' timelines, and every section this report does not know (a newer
library's) generically: its numbers summed over the processes.  This needs the
standard library only.

Then it draws the page (report_page.py, matplotlib): DIR/unblock-report.html, or
FILE, self-contained.  Without matplotlib one line says that no page was drawn;
the tables are printed all the same.  `--text` prints the tables only.  `--png
FILE` also writes the picture of the phases as a PNG file.

The launcher (`unblock report ...`, tools/unblock.c) runs this file from
lib/unblock/ beside its libraries; it runs from the source tree as well."""
import json
import math
import os
import sys

USAGE = 'usage: unblock report [--html FILE | --text] [--png FILE] DIR'
HELP = '''Prints the tables of DIR/unblock-*.json (written with unblock --stats=DIR) and
writes a page with pictures of the run (matplotlib) to DIR/unblock-report.html.
  --html FILE   the page there instead
  --text        no page: the tables only
  --png FILE    also the picture of the phases (hidden against exposed time) as PNG'''

# The columns of the per-process table: (key in the statistics, heading).
COLUMNS = [('comm.calls', 'calls'), ('comm.async', 'async'), ('comm.passthrough', 'passthru'),
           ('comm.faults', 'faults'), ('protect.calls', 'protect'), ('io.calls', 'io.calls'),
           ('io.async', 'io.async'), ('io.merged', 'merged'), ('io.readahead_hits', 'ra.hits'),
           ('io.errors_deferred', 'io.errors')]

# The fields of a call site that are summed over the processes.
SITE_SUMS = ['calls', 'converted', 'passed', 'faults', 'bytes', 'blocking_ms', 'converted_ms',
             'hidden_ms']

# Top-level keys this report knows; any other section is shown generically.
KNOWN = {'version', 'mpi', 'rank', 'size', 'pid', 'exe', 'mpi_abi_ok', 'comm', 'protect',
         'memory', 'io', 'process', 'sites', 'timeline', 'profile', 'mpiio'}
OTHER = '(other fields)'  # the section of unknown top-level keys that are lone values


class Usage(Exception):
    pass


def get(doc, key, default=None):
    """The value at a dotted key ("comm.passthrough_why.status"), or default."""
    v = doc
    for part in key.split('.'):
        if not isinstance(v, dict) or part not in v:
            return default
        v = v[part]
    return v


def number(v):
    """v if it is a number (a boolean as 0 or 1), else 0."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
        return v
    return 0


def num(doc, key):
    """The number at a dotted key; 0 where it is missing or not a number."""
    return number(get(doc, key))


def text(doc, key, default='?'):
    v = get(doc, key)
    return v if isinstance(v, str) else default


def who(doc):
    """A process's name in the tables: its rank, or its pid if it had none."""
    return '%.0f' % num(doc, 'rank') if num(doc, 'rank') >= 0 else 'pid %.0f' % num(doc, 'pid')


class Stats:
    """The statistics files of one directory, sorted by rank (then pid)."""

    def __init__(self, directory):
        self.dir = directory
        self.docs, self.files, self.bad = [], [], []
        names = sorted(n for n in os.listdir(directory)
                       if n.startswith('unblock-') and n.endswith('.json'))
        loaded = []
        for name in names:
            path = os.path.join(directory, name)
            try:
                with open(path, encoding='utf-8') as f:
                    doc = json.load(f)
            except (OSError, ValueError):
                doc = None
            if not isinstance(doc, dict):
                self.bad.append(path)
                continue
            loaded.append((num(doc, 'rank'), num(doc, 'pid'), name, doc))
        loaded.sort(key=lambda t: t[:3])
        self.files = [t[2] for t in loaded]
        self.docs = [t[3] for t in loaded]

    def total(self, key):
        return sum(num(d, key) for d in self.docs)

    def functions(self, section):
        """`SECTION.functions` summed over the processes, most called first
        (ties by name): [(name, calls)]."""
        agg = {}
        for d in self.docs:
            funcs = get(d, section + '.functions')
            if isinstance(funcs, dict):
                for name, v in funcs.items():
                    if isinstance(v, (int, float)):
                        agg[name] = agg.get(name, 0) + v
        return sorted(agg.items(), key=lambda kv: (-kv[1], kv[0]))

    def sites(self):
        """The call sites of all processes, the same site and function summed over
        them, most time (blocking + converted) first: a list of dicts with
        SITE_SUMS and `decision` ("mixed" where the processes decided differently)."""
        agg = {}
        for d in self.docs:
            sites = d.get('sites')
            for s in sites if isinstance(sites, list) else []:
                if not isinstance(s, dict) or not isinstance(s.get('site'), str) or \
                        not isinstance(s.get('function'), str):
                    continue
                a = agg.get((s['site'], s['function']))
                if a is None:
                    a = agg[(s['site'], s['function'])] = dict(
                        site=s['site'], function=s['function'], decision=None,
                        **{k: 0 for k in SITE_SUMS})
                for k in SITE_SUMS:
                    a[k] += num(s, k)
                dec = s.get('decision') if isinstance(s.get('decision'), str) else '?'
                a['decision'] = dec if a['decision'] in (None, dec) else 'mixed'
        return sorted(agg.values(), key=lambda a: -(a['blocking_ms'] + a['converted_ms']))

    def timeline(self):
        return Timeline(self.docs)

    def section_leaves(self, name):
        """One section's values over the processes that have it, flattened (see
        flatten): the page shows MPI-IO write-behind's this way."""
        return flatten([d[name] for d in self.docs if isinstance(d.get(name), dict)])

    def unknown_sections(self):
        """The top-level keys this report does not know, in order of first
        appearance: {name: [(flat key, Leaf)]} (see flatten)."""
        names = []
        for d in self.docs:
            names += [k for k in d if k not in KNOWN and k not in names]
        # lone values at the top level ("host": "n1") go together in one section
        lone = [n for n in names
                if not any(isinstance(d.get(n), (dict, list)) for d in self.docs)]
        sections = {n: flatten([d[n] for d in self.docs if n in d])
                    for n in names if n not in lone}
        if lone:
            sections[OTHER] = flatten([{n: d[n] for n in lone if n in d} for d in self.docs])
        return sections


class Timeline:
    """The processes' timelines (docs/stats.md) summed on one time axis, each
    counted from its own start, in phases of the widest width any of them has:
    the others' are 2^k times narrower (all widths are 1 ms doubled) and fall in
    one phase each; a width that did not divide would be shared out by overlap."""

    def __init__(self, docs):
        self.width, self.procs, span = 0.0, 0, 0.0
        lines = []
        for d in docs:
            w = num(d, 'timeline.bucket_ms')
            if w <= 0:
                lines.append(None)
                continue
            n = int(num(d, 'timeline.buckets'))
            h, e = get(d, 'timeline.hidden_ms'), get(d, 'timeline.exposed_ms')
            h = [number(x) for x in (h if isinstance(h, list) else [])][:n]
            e = [number(x) for x in (e if isinstance(e, list) else [])][:n]
            lines.append((w, n, h + [0] * (n - len(h)), e + [0] * (n - len(e))))
            self.procs += 1
            self.width = max(self.width, w)
            span = max(span, n * w)
        # per process: the sums of its own timeline (its exposed and hidden ms)
        self.per_process = [(sum(l[3]), sum(l[2])) if l else (0, 0) for l in lines]
        self.n = max(1, math.ceil(span / self.width - 1e-9)) if self.procs else 0
        self.hidden, self.exposed = [0.0] * self.n, [0.0] * self.n
        for line in lines:
            if not line:
                continue
            w, n, hs, es = line
            for j in range(n):
                a, b = j * w, (j + 1) * w
                k = int(a // self.width)
                while k < self.n and k * self.width < b:
                    lo, hi = max(a, k * self.width), min(b, (k + 1) * self.width)
                    if hi > lo:
                        self.hidden[k] += hs[j] * (hi - lo) / w
                        self.exposed[k] += es[j] * (hi - lo) / w
                    k += 1


class Leaf:
    """One key of a section this report does not know, over the processes:
    numbers are summed, booleans counted (`true` in how many), strings listed."""

    def __init__(self):
        self.sum, self.min, self.max, self.count = 0, None, None, 0
        self.trues, self.strings, self.items = 0, [], False

    def add(self, v):
        if isinstance(v, bool):
            self.trues += v
            self.count += 1
        elif isinstance(v, (int, float)):
            self.sum += v
            self.min = v if self.min is None else min(self.min, v)
            self.max = v if self.max is None else max(self.max, v)
            self.count += 1
        elif isinstance(v, str):
            if v not in self.strings:
                self.strings.append(v)
            self.count += 1

    def kind(self):
        return 'number' if self.min is not None else 'bool' if self.count and not self.strings \
            else 'string'

    def shown(self):
        if self.kind() == 'number':
            return fmt_number(self.sum)
        if self.kind() == 'bool':
            return 'true in %d of %d' % (self.trues, self.count)
        if len(self.strings) == 1:
            return self.strings[0]
        return '%d values: %s%s' % (len(self.strings), ', '.join(self.strings[:3]),
                                    ', ...' if len(self.strings) > 3 else '')


def fmt_number(v):
    """An integer as one; any other number to 0.001."""
    if isinstance(v, int) or float(v).is_integer():
        return '%d' % v
    return '%.3f' % v


def flatten(values):
    """The leaves of one section over the processes, in order of first
    appearance: objects give "a.b", the items of a list are put together as
    "a[]" (how many, summed) and "a[].b" (their fields, summed over the items).
    Returns [(key, Leaf)]."""
    leaves = {}

    def leaf(key):
        if key not in leaves:
            leaves[key] = Leaf()
        return leaves[key]

    def walk(v, key):
        if isinstance(v, dict):
            for k, sub in v.items():
                walk(sub, key + '.' + k if key else k)
        elif isinstance(v, list):
            count = leaf(key + '[]')
            count.items = True
            count.add(len(v))
            for sub in v:
                walk(sub, key + '[]')
        else:
            leaf(key or '(value)').add(v)

    for v in values:
        walk(v, '')
    return list(leaves.items())


# ---- the text ----

def print_table(st):
    print('unblock report: %d process%s, MPI library: %s\n' % (
        len(st.docs), '' if len(st.docs) == 1 else 'es', text(st.docs[0], 'mpi')))
    print('%-10s %-12s' % ('rank', 'program') + ''.join(' %10s' % c[1] for c in COLUMNS))
    for d in st.docs:
        print('%-10s %-12.12s' % (who(d), text(d, 'exe')) +
              ''.join(' %10.0f' % num(d, c[0]) for c in COLUMNS))
    print('%-10s %-12s' % ('total', '') + ''.join(' %10.0f' % st.total(c[0]) for c in COLUMNS))


def print_progress(st):
    thread = sum(1 for d in st.docs if get(d, 'comm.progress') == 'thread')
    calls = sum(1 for d in st.docs if get(d, 'comm.progress') == 'calls')
    n = len(st.docs)
    if thread:
        print('\nProgress: a completion thread (MPI_THREAD_MULTIPLE) in %d of %d processes.'
              % (thread, n))
    if calls:
        print('%sProgress: only at intercepted calls and faults in %d of %d processes (no '
              'MPI_THREAD_MULTIPLE: the MPI did not give it, the program\'s profile said it '
              'was not needed, or UNBLOCK_THREAD=program); '
              'conversions that need a completion thread ran as the original calls.'
              % ('' if thread else '\n', calls, n))
    print_profile(st)


def print_profile(st):
    """The program's profile (docs/profile.md): rank 0's, which every rank used;
    and whether the program's own requests were followed, which each process
    decides when no profile does (its trial, UNBLOCK_OWN_TRIAL)."""
    d = st.docs[0]
    p = d.get('profile')
    if not isinstance(p, dict):
        return
    indent = ''
    if p.get('state') not in (None, 'off'):
        state = {'new': 'none yet: this run wrote the first',
                 'used': 'used (%s runs before this one)' % p.get('runs'),
                 'stale': 'stale (the program changed): this run wrote a new one',
                 'ignored': 'unreadable, ignored: this run wrote a new one'}.get(
                     p.get('state'), p.get('state'))
        print('Profile: %s\n  %s\n  thread level: %s (%s)' % (
            state, p.get('file', ''), p.get('thread', ''), p.get('why', '')))
        indent = '  '
    unfollowed = [x['profile'] for x in st.docs if isinstance(x.get('profile'), dict) and
                  x['profile'].get('own') == 'not-followed']
    if unfollowed:
        where = ('' if len(unfollowed) == len(st.docs)
                 else ' by %d of %d processes' % (len(unfollowed), len(st.docs)))
        print('%s%s program\'s own requests: not followed%s (%s)' % (
            indent, 'the' if indent else 'The', where, unfollowed[0].get('own_why', '')))


# MPI-IO write-behind (docs/mpiio.md): the columns of its table, per process.
MPIIO_COLUMNS = [('mpiio.writes', 'writes'), ('mpiio.bytes', 'bytes'),
                 ('mpiio.pieces_sent', 'sent'), ('mpiio.pieces_received', 'received'),
                 ('mpiio.blocks_written', 'blocks'), ('mpiio.blocks_written_remote', 'remote'),
                 ('mpiio.blocks_kept', 'kept'), ('mpiio.blocks_written_full', 'full'),
                 ('mpiio.evictions', 'evicted'), ('mpiio.peak_buffered', 'peak'),
                 ('mpiio.errors_deferred', 'errors')]


# Why buffered pieces were written (docs/stats.md, mpiio.flushes), and the calls
# write-behind answered or made otherwise than MPI would have, where any were.
MPIIO_FLUSHES = ['local', 'collective', 'bound', 'idle', 'close', 'finalize', 'exit', 'news',
                 'see']
MPIIO_EXTRA = [('mpiio.sizes_answered', 'MPI_File_get_size answered without a flush'),
               ('mpiio.nonblocking_completed', 'nonblocking file calls made blocking'),
               ('mpiio.split_completed', 'split collectives made blocking'),
               ('mpiio.passthrough', 'writes passed to MPI')]


def print_mpiio(st):
    docs = [d for d in st.docs if num(d, 'mpiio.files') > 0]
    if not docs:
        return
    modes = sorted({text(d, 'mpiio.mode') for d in docs})
    print('\nMPI-IO write-behind (%s; blocks: written by this rank, remote: holding '
          'pieces of other ranks, kept: written whole here rather than sent to their '
          'owner, full: written as soon as full):' % ', '.join(modes))
    print('  %-10s' % 'rank' + ''.join(' %10s' % c[1] for c in MPIIO_COLUMNS))
    for d in docs:
        print('  %-10s' % who(d) + ''.join(' %10.0f' % num(d, c[0]) for c in MPIIO_COLUMNS))
    print('  %-10s' % 'total' + ''.join(' %10.0f' % sum(num(d, c[0]) for d in docs)
                                       for c in MPIIO_COLUMNS))
    flushes = [(c, sum(num(d, 'mpiio.flushes.' + c) for d in docs)) for c in MPIIO_FLUSHES]
    print('  flushes (all ranks), by cause: ' + ', '.join('%s %.0f' % f for f in flushes))
    extra = [(label, sum(num(d, key) for d in docs)) for key, label in MPIIO_EXTRA]
    extra = [e for e in extra if e[1] > 0]
    if extra:
        print('  ' + ', '.join('%s: %.0f' % e for e in extra))
    unseen = sum(num(d, 'mpiio.errors_unconsumed') for d in docs)
    if unseen:
        print('  %d background write error(s) the program never saw' % unseen)


def print_functions(st, section, title, top=12):
    funcs = st.functions(section)
    if funcs:
        print('\n%s (all processes):' % title)
        for name, calls in funcs[:top]:
            print('  %-28s %12.0f' % (name, calls))


def print_sites(st, top=10):
    sites = st.sites()
    if not sites:
        return
    print('\nCall sites (all processes, most time first; times in ms):')
    print('  %-32s %-20s %9s %9s %9s %7s %10s %10s %10s %s' % (
        'site', 'function', 'calls', 'converted', 'passed', 'faults', 'blocking', 'converted',
        'hidden', 'decision'))
    for s in sites[:top]:
        print('  %-32.32s %-20.20s %9.0f %9.0f %9.0f %7.0f %10.3f %10.3f %10.3f %s' % (
            s['site'], s['function'], s['calls'], s['converted'], s['passed'], s['faults'],
            s['blocking_ms'], s['converted_ms'], s['hidden_ms'], s['decision']))
    if len(sites) > top:
        print('  (%d more sites)' % (len(sites) - top))


def print_timeline(tl):
    if not tl.procs:
        print('\nNo timeline in these statistics.')
        return
    print('\nPhases (%d of %g ms, from the start of each process; %d process%s):\n'
          '  exposed %.3f ms, hidden %.3f ms' % (
              tl.n, tl.width, tl.procs, '' if tl.procs == 1 else 'es', sum(tl.exposed),
              sum(tl.hidden)))


def print_unknown(st):
    for name, leaves in st.unknown_sections().items():
        n = len(st.docs) if name == OTHER else sum(1 for d in st.docs if name in d)
        print('\n%s (not known to this report; numbers summed over the %d process%s '
              'that have it):' % ('Other fields' if name == OTHER else 'Section ' + name, n,
                                  '' if n == 1 else 'es'))
        for key, lf in leaves:
            label = key + (' (items)' if lf.items else '')
            print('  %-40s %s' % (label, lf.shown()))


def parse_args(argv):
    opts = {'html': None, 'png': None, 'text': False, 'dir': None}
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition('=')
        if name in ('--html', '--png'):
            if not eq:
                i += 1
                if i >= len(argv):
                    raise Usage()
                value = argv[i]
            if not value:
                raise Usage()
            opts[name[2:]] = value
        elif a == '--text':
            opts['text'] = True
        elif a in ('-h', '--help'):
            print(USAGE + '\n\n' + HELP)
            sys.exit(0)
        elif a.startswith('-') or opts['dir'] is not None:
            raise Usage()
        else:
            opts['dir'] = a
        i += 1
    if opts['dir'] is None or (opts['text'] and opts['html']):
        raise Usage()
    return opts


def main(argv):
    try:
        opts = parse_args(argv)
    except Usage:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        st = Stats(opts['dir'])
    except OSError as e:
        print('unblock report: cannot open %s: %s' % (opts['dir'], e.strerror), file=sys.stderr)
        return 1
    for path in st.bad:
        print('unblock report: %s is not a statistics file' % path, file=sys.stderr)
    if not st.docs:
        if not st.bad:
            print('unblock report: no unblock-*.json in %s' % opts['dir'], file=sys.stderr)
        return 1
    status = 1 if st.bad else 0
    print_table(st)
    print_progress(st)
    print_functions(st, 'comm', 'MPI calls')
    print_functions(st, 'io', 'File calls')
    print_mpiio(st)
    print_sites(st)
    tl = st.timeline()
    print_timeline(tl)
    print_unknown(st)
    sys.stdout.flush()
    if opts['text'] and not opts['png']:
        return status
    try:
        import matplotlib  # noqa: F401 (report_page draws with it)
    except ImportError:
        print('\nNo page drawn: matplotlib is missing (Debian: python3-matplotlib); '
              'the tables above are the report.')
        return 1 if opts['png'] else status
    import report_page
    html = None if opts['text'] else \
        opts['html'] or os.path.join(opts['dir'], 'unblock-report.html')
    return max(status, report_page.write(st, tl, html, opts['png']))


if __name__ == '__main__':
    sys.dont_write_bytecode = True  # nothing written into the install tree
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        sys.exit(main(sys.argv[1:]))
    except BrokenPipeError:  # `unblock report DIR | head`
        sys.stderr.close()
        sys.exit(141)
