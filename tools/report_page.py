"""The page of `unblock report` (report.py): one self-contained HTML file with its
pictures drawn by matplotlib and embedded as SVG, and the numbers behind them in
tables (docs/stats.md, The report).

  Phases         hidden against exposed time over the run, summed over the processes
  Processes      per-rank balance: the time each waited and hid, its converted and
                 original calls; the table of report.py with every process
  Call sites     what each site cost blocking and converted, and what it hid
  File I/O       file calls by function, and what unblock did with them (merged,
                 queued, read ahead, ...); the files written
  MPI calls      by function, and why convertible calls ran as the original call
  other sections (a newer library's) shown generically

Every number in a table carries the key it shows (data-key, a dotted key of the
statistics, and data-of, the process or site), so that a test can compare the page
with the files.  The page has no script and loads nothing."""
import base64
import datetime
import html
import io
import os
import sys

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

import report

EXPOSED, HIDDEN, CONVERTED = '#d64541', '#2e86c1', '#e59c38'
PASSED, ASYNC = '#8e8e8e', '#2e86c1'

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; color: #222; max-width: 1100px; margin: 2em auto;
       padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { margin-top: 2em; border-bottom: 1px solid #ddd; }
p.lead { color: #555; margin-top: 0; }
img { max-width: 100%; height: auto; display: block; margin: .5em 0; }
table { border-collapse: collapse; margin: .5em 0 1em; font-size: 12.5px; }
th, td { padding: 2px 6px; border-bottom: 1px solid #eee; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
tr.total td { font-weight: 600; border-top: 1px solid #999; }
.note { color: #666; font-size: 13px; }
.scroll { max-height: 32em; overflow: auto; }
"""


def esc(s):
    return html.escape(str(s), quote=True)


def count(v):
    return '{:,.0f}'.format(v)


def ms(v):
    return '{:,.3f}'.format(v)


def cell(value, key=None, of=None, shown=None):
    """A number of the page: `shown` (or `value` formatted) with its key."""
    attrs = ''
    if key is not None:
        attrs = ' data-key="%s" data-of="%s"' % (esc(key), esc(of))
    return '<td%s>%s</td>' % (attrs, esc(shown if shown is not None else count(value)))


def picture(fig, alt):
    """The figure as an <img> with the SVG inline in a data: URL."""
    buf = io.BytesIO()
    fig.savefig(buf, format='svg', bbox_inches='tight', metadata={'Date': None})
    data = base64.b64encode(buf.getvalue()).decode('ascii')
    return '<img alt="%s" src="data:image/svg+xml;base64,%s">' % (esc(alt), data)


def phases_figure(tl, nprocs):
    """Per phase, a bar of exposed time and one of hidden time beside it (below
    the baseline where hiding cost more than it saved), in ms summed over the
    processes, against the time since each process started."""
    fig = Figure(figsize=(10, 4.2))
    ax = fig.add_subplot()
    span = tl.n * tl.width
    unit, div = ('s', 1000.0) if span >= 10000 else ('ms', 1.0)
    w = tl.width / div
    starts = [i * w for i in range(tl.n)]
    # A colour with no bars has no swatch in the legend either: the picture shows
    # a colour only where there is time of that kind.
    none = []
    for k, (values, colour, label) in enumerate([
            (tl.exposed, EXPOSED, 'exposed: the program waited'),
            (tl.hidden, HIDDEN, 'hidden: what conversions saved')]):
        if any(v != 0 for v in values):
            ax.bar([x + (0.08 + 0.42 * k) * w for x in starts], values, width=0.42 * w,
                   align='edge', color=colour, label=label)
        else:
            none.append(label.split(':')[0])
    ax.axhline(0, color='#333', linewidth=0.8)
    ax.set_xlim(0, span / div)
    ax.set_xlabel('time since the start of each process, %s (%d phases of %g ms)'
                  % (unit, tl.n, tl.width))
    ax.set_ylabel('ms per phase, summed over %d process%s' % (nprocs, '' if nprocs == 1 else 'es'))
    ax.grid(axis='y', color='#e4e4e4')
    ax.set_axisbelow(True)
    if len(none) < 2:
        ax.legend(loc='upper left', frameon=False)
    ax.set_title('Hidden against exposed time over the run' +
                 ''.join('; %s time: none' % n for n in none))
    return fig


def balance_figure(st, tl, names):
    """Per process: the time it waited and the time conversions hid for it; its
    MPI calls that carry data, converted or run as the original call."""
    fig = Figure(figsize=(10, 4.2))
    a, b = fig.subplots(1, 2)
    x = list(range(len(names)))
    e = [p[0] for p in tl.per_process]
    h = [p[1] for p in tl.per_process]
    a.bar([i - 0.2 for i in x], e, width=0.4, color=EXPOSED, label='exposed (waited)')
    a.bar([i + 0.2 for i in x], h, width=0.4, color=HIDDEN, label='hidden (saved)')
    a.axhline(0, color='#333', linewidth=0.8)
    a.set_ylabel('ms')
    a.set_title('Time per process')
    conv = [report.num(d, 'comm.async') for d in st.docs]
    orig = [report.num(d, 'comm.passthrough') for d in st.docs]
    b.bar(x, orig, color=PASSED, label='run as the original call')
    b.bar(x, conv, bottom=orig, color=ASYNC, label='converted')
    b.set_ylabel('MPI calls that carry data')
    b.set_title('Calls per process')
    for ax in (a, b):
        ax.xaxis.set_major_locator(MaxNLocator(nbins=16, integer=True))
        ax.xaxis.set_major_formatter(FuncFormatter(
            lambda v, _: names[int(v)] if 0 <= v < len(names) and float(v).is_integer() else ''))
        ax.set_xlabel('process (rank)')
        ax.set_xlim(-0.6, len(names) - 0.4)
        ax.grid(axis='y', color='#e4e4e4')
        ax.set_axisbelow(True)
        ax.legend(frameon=False, fontsize=8, ncol=2, loc='upper center',
                  bbox_to_anchor=(0.5, -0.2))
    fig.tight_layout()
    return fig


def sites_figure(sites):
    """The sites that took the most time: blocking, converted, hidden ms."""
    top = list(reversed(sites[:10]))
    fig = Figure(figsize=(10, 1.2 + 0.55 * len(top)))
    ax = fig.add_subplot()
    y = list(range(len(top)))
    for k, (field, colour, label) in enumerate([
            ('blocking_ms', EXPOSED, 'blocking calls'), ('converted_ms', CONVERTED,
                                                         'converted calls (in the call + waits)'),
            ('hidden_ms', HIDDEN, 'hidden')]):
        ax.barh([i + (1 - k) * 0.27 for i in y], [s[field] for s in top], height=0.27,
                color=colour, label=label)
    ax.set_yticks(y)
    ax.set_yticklabels(['%s  %s' % (s['site'][:36], s['function']) for s in top], fontsize=8)
    ax.axvline(0, color='#333', linewidth=0.8)
    ax.set_xlabel('ms, summed over the processes')
    ax.set_title('Call sites, most time first')
    ax.grid(axis='x', color='#e4e4e4')
    ax.set_axisbelow(True)
    ax.legend(frameon=False, fontsize=8, loc='lower right')
    return fig


# What unblock did with file calls: (key, label) of counters in `io`.
IO_KINDS = [
    ('io.merged', 'small writes merged into blocks'),
    ('io.direct', 'small writes made in the call (merging did not pay)'),
    ('io.async', 'large writes queued to a worker'),
    ('io.protected_writes', '... of those, from the program\'s pages (jobs)'),
    ('io.readahead_hits', 'reads served from read-ahead'),
    ('io.reads_cached', 'large reads answered from the page cache'),
    ('io.reads_background', 'large reads done in the background'),
    ('io.waits', 'calls that waited for a worker'),
]


def io_figure(st, funcs):
    fig = Figure(figsize=(10, 3.8))
    a, b = fig.subplots(1, 2, gridspec_kw={'width_ratios': [1, 1.3]})
    top = list(reversed(funcs[:10]))
    a.barh(range(len(top)), [c for _, c in top], color='#6c8ebf')
    a.set_yticks(range(len(top)))
    a.set_yticklabels([n for n, _ in top], fontsize=8)
    a.set_xlabel('calls, all processes')
    a.set_title('File calls by function')
    kinds = list(reversed(IO_KINDS))
    vals = [st.total(k) for k, _ in kinds]
    b.barh(range(len(kinds)), vals, color='#2e86c1')
    b.set_yticks(range(len(kinds)))
    b.set_yticklabels([l for _, l in kinds], fontsize=8)
    b.set_xlabel('calls, all processes')
    b.set_title('What unblock did with them')
    for i, v in enumerate(vals):
        b.annotate(count(v), (v, i), xytext=(3, 0), textcoords='offset points', va='center',
                   fontsize=7)
    for ax in (a, b):
        ax.grid(axis='x', color='#e4e4e4')
        ax.set_axisbelow(True)
    fig.tight_layout()
    return fig


def functions_table(st, section, title):
    funcs = st.functions(section)
    if not funcs:
        return ''
    rows = ''.join('<tr><td class="l">%s</td>%s</tr>' % (
        esc(n), cell(c, '%s.functions.%s' % (section, n), 'total')) for n, c in funcs)
    return ('<h3>%s</h3><div class="scroll"><table><tr><th class="l">function</th>'
            '<th>calls</th></tr>%s</table></div>' % (esc(title), rows))


def create(path, mode):
    """path opened for writing, or None with one line on stderr: before anything
    is drawn, so that a path that cannot be written costs no drawing."""
    try:
        return open(path, mode)
    except OSError as e:
        print('unblock report: cannot write %s: %s' % (path, e.strerror), file=sys.stderr)
        return None


def write(st, tl, html_path, png_path):
    """Writes the page to html_path (unless None) and the phases' picture to
    png_path (unless None); prints what it wrote.  Returns the exit status."""
    status = 0
    if png_path:
        if not tl.procs:
            print('unblock report: no timeline in these statistics: no picture for %s'
                  % png_path, file=sys.stderr)
            status = 1
        else:
            f = create(png_path, 'wb')
            if f is None:
                status = 1
            else:
                with f:
                    phases_figure(tl, tl.procs).savefig(f, format='png', dpi=100)
                print('  wrote %s: the phases (exposed time red %s, hidden time blue %s)'
                      % (png_path, EXPOSED, HIDDEN))
    if html_path:
        f = create(html_path, 'wb')
        if f is None:
            return 1
        with f:
            f.write(page(st, tl).encode('utf-8'))
        print('\nPage: %s (phases of the run, processes, call sites, file I/O, MPI calls)'
              % html_path)
    return status


def page(st, tl):
    """The page, as text."""
    nprocs = len(st.docs)
    names = [report.who(d) for d in st.docs]
    parts = []
    add = parts.append
    programs = sorted({report.text(d, 'exe') for d in st.docs})
    add('<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<title>unblock report: %s</title><style>%s</style></head><body>'
        % (esc(', '.join(programs)), CSS))
    add('<h1>unblock report: %s</h1><p class="lead">%s process%s, MPI library %s, unblock %s; '
        'statistics of <code>%s</code>, drawn %s.</p>' % (
            esc(', '.join(programs)), nprocs, '' if nprocs == 1 else 'es',
            esc(report.text(st.docs[0], 'mpi')), esc(report.text(st.docs[0], 'version')),
            esc(os.path.abspath(st.dir)), datetime.datetime.now().strftime('%Y-%m-%d %H:%M')))

    # -- the phases
    add('<h2 id="phases">Phases of the run</h2>')
    if tl.procs:
        add('<p>The run cut in %d phases of %g ms, each process from its own start, summed '
            'over %d process%s: the time the program waited (<em>exposed</em>) against the '
            'time conversions hid (<em>hidden</em>; negative where converting cost more than '
            'it saved).</p>' % (tl.n, tl.width, tl.procs, '' if tl.procs == 1 else 'es'))
        add(picture(phases_figure(tl, tl.procs), 'hidden against exposed time per phase'))
        add('<table id="phase-sums"><tr><th class="l"></th><th>exposed ms</th><th>hidden ms</th>'
            '</tr><tr><td class="l">all phases</td>%s%s</tr></table>' % (
                cell(0, 'timeline.exposed_ms', 'total', ms(sum(tl.exposed))),
                cell(0, 'timeline.hidden_ms', 'total', ms(sum(tl.hidden)))))
    else:
        add('<p class="note">No timeline in these statistics (an older unblock).</p>')

    # -- the processes
    add('<h2 id="processes">Processes</h2>')
    add(picture(balance_figure(st, tl, names), 'per-process balance'))
    head = ''.join('<th>%s</th>' % esc(c[1]) for c in report.COLUMNS)
    rows = []
    for d, name, (e, h) in zip(st.docs, names, tl.per_process):
        rows.append('<tr><td class="l">%s</td><td class="l">%s</td>%s%s%s%s</tr>' % (
            esc(name), esc(report.text(d, 'exe')),
            ''.join(cell(report.num(d, k), k, name) for k, _ in report.COLUMNS),
            cell(report.num(d, 'comm.bytes'), 'comm.bytes', name),
            cell(e, 'timeline.exposed_ms', name, ms(e)),
            cell(h, 'timeline.hidden_ms', name, ms(h))))
    rows.append('<tr class="total"><td class="l">total</td><td></td>%s%s%s%s</tr>' % (
        ''.join(cell(st.total(k), k, 'total') for k, _ in report.COLUMNS),
        cell(st.total('comm.bytes'), 'comm.bytes', 'total'),
        cell(0, 'timeline.exposed_ms', 'total', ms(sum(p[0] for p in tl.per_process))),
        cell(0, 'timeline.hidden_ms', 'total', ms(sum(p[1] for p in tl.per_process)))))
    add('<div class="scroll"><table id="processes-table"><tr><th class="l">rank</th>'
        '<th class="l">program</th>%s<th>bytes converted</th><th>exposed ms</th>'
        '<th>hidden ms</th></tr>%s</table></div>' % (head, ''.join(rows)))
    thread = sum(1 for d in st.docs if report.get(d, 'comm.progress') == 'thread')
    calls = sum(1 for d in st.docs if report.get(d, 'comm.progress') == 'calls')
    if thread:
        add('<p class="note">Progress: a completion thread (MPI_THREAD_MULTIPLE) in %d of %d '
            'processes.</p>' % (thread, nprocs))
    if calls:
        add('<p class="note">Progress: only at intercepted calls and faults in %d of %d '
            'processes (no MPI_THREAD_MULTIPLE): conversions that need a completion thread ran '
            'as the original calls.</p>' % (calls, nprocs))

    # -- the call sites
    sites = st.sites()
    add('<h2 id="sites">Call sites</h2>')
    if sites:
        add(picture(sites_figure(sites), 'call sites: blocking, converted and hidden ms'))
        rows = []
        for s in sites:
            of = '%s %s' % (s['site'], s['function'])
            rows.append('<tr><td class="l">%s</td><td class="l">%s</td>%s%s<td class="l">%s</td>'
                        '</tr>' % (esc(s['site']), esc(s['function']),
                                   ''.join(cell(s[k], 'sites.' + k, of) for k in
                                           ('calls', 'converted', 'passed', 'faults', 'bytes')),
                                   ''.join(cell(s[k], 'sites.' + k, of, ms(s[k])) for k in
                                           ('blocking_ms', 'converted_ms', 'hidden_ms')),
                                   esc(s['decision'])))
        add('<div class="scroll"><table id="sites-table"><tr><th class="l">site</th>'
            '<th class="l">function</th><th>calls</th><th>converted</th><th>passed</th>'
            '<th>faults</th><th>bytes</th><th>blocking ms</th><th>converted ms</th>'
            '<th>hidden ms</th><th class="l">decision</th></tr>%s</table></div>' % ''.join(rows))
        add('<p class="note">Summed over the processes (a file lists its 32 costliest sites); '
            '<em>mixed</em>: the processes decided differently.</p>')
    else:
        add('<p class="note">No call site was timed.</p>')

    # -- file I/O
    add('<h2 id="io">File I/O</h2>')
    funcs = st.functions('io')
    if funcs:
        add(picture(io_figure(st, funcs), 'file I/O by kind'))
        add('<table id="io-kinds"><tr><th class="l">what</th><th>all processes</th></tr>%s'
            '<tr><td class="l">bytes the workers put in files</td>%s</tr></table>' % (
                ''.join('<tr><td class="l">%s</td>%s</tr>' % (esc(l), cell(st.total(k), k, 'total'))
                        for k, l in IO_KINDS),
                cell(st.total('io.flushed_bytes'), 'io.flushed_bytes', 'total')))
        files = []
        for d, name in zip(st.docs, names):
            for f in d.get('io', {}).get('files', []) if isinstance(d.get('io'), dict) else []:
                if isinstance(f, dict):
                    of = '%s:%s' % (name, f.get('path'))
                    files.append('<tr><td class="l">%s</td><td class="l">%s</td>'
                                 '<td class="l">%s</td>%s</tr>' % (
                                     esc(name), esc(f.get('path')), esc(f.get('pattern')),
                                     ''.join(cell(report.num(f, k), 'io.files.' + k, of) for k in
                                             ('writes', 'bytes', 'merged', 'direct'))))
        if files:
            add('<h3>Files written</h3><div class="scroll"><table id="files-table"><tr>'
                '<th class="l">rank</th><th class="l">path</th><th class="l">pattern</th>'
                '<th>writes</th><th>bytes</th><th>merged</th><th>direct</th></tr>%s</table></div>'
                % ''.join(files))
        add(functions_table(st, 'io', 'File calls by function'))
    else:
        add('<p class="note">No file call was intercepted.</p>')
    add(functions_table(st, 'process', 'Process calls by function'))

    # -- MPI calls
    add('<h2 id="mpi">MPI calls</h2>')
    why = {}
    for d in st.docs:
        w = report.get(d, 'comm.passthrough_why')
        for k, v in (w.items() if isinstance(w, dict) else []):
            why[k] = why.get(k, 0) + report.num(w, k)
    if any(why.values()):
        add('<h3>Why convertible calls ran as the original call</h3><table id="why-table">'
            '<tr><th class="l">reason</th><th>calls</th></tr>%s</table>' % ''.join(
                '<tr><td class="l">%s</td>%s</tr>' % (esc(k), cell(v, 'comm.passthrough_why.' + k,
                                                                  'total'))
                for k, v in sorted(why.items(), key=lambda kv: -kv[1]) if v))
    add(functions_table(st, 'comm', 'MPI calls by function') or
        '<p class="note">No MPI call was intercepted.</p>')

    # -- MPI-IO write-behind (docs/mpiio.md), then sections this report does not know
    def leaf_rows(name, leaves):
        rows = []
        for key, lf in leaves:
            full = key if name == report.OTHER else name + '.' + key
            label = key + (' (items)' if lf.items else '')
            if lf.kind() == 'number':
                rows.append('<tr><td class="l">%s</td>%s%s%s</tr>' % (
                    esc(label), cell(lf.sum, full, 'total', report.fmt_number(lf.sum)),
                    cell(lf.min, full, 'min', report.fmt_number(lf.min)),
                    cell(lf.max, full, 'max', report.fmt_number(lf.max))))
            else:
                rows.append('<tr><td class="l">%s</td><td class="l" colspan="3">%s</td></tr>'
                            % (esc(label), esc(lf.shown())))
        return ''.join(rows)

    table = ('<div class="scroll"><table class="generic"><tr><th class="l">key</th>'
             '<th>total</th><th>min</th><th>max</th></tr>%s</table></div>')
    if any(report.num(d, 'mpiio.files') > 0 for d in st.docs):
        add('<h2>MPI-IO write-behind</h2><p class="note">Independent MPI-IO writes taken, '
            'pieces sent to block owners, blocks written (docs/mpiio.md): summed over the '
            'processes, and the smallest and largest.</p>' +
            table % leaf_rows('mpiio', st.section_leaves('mpiio')))
    for name, leaves in st.unknown_sections().items():
        title = 'Other fields' if name == report.OTHER else 'Section %s' % name
        add('<h2>%s</h2><p class="note">Not known to this report: its numbers summed over the '
            'processes, and the smallest and largest.</p>' % esc(title) +
            table % leaf_rows(name, leaves))

    add('<p class="note">Files: %s. The keys are explained in the statistics page of '
        'unblock\'s documentation (docs/stats.md).</p></body></html>\n'
        % esc(', '.join(st.files)))
    return ''.join(parts)
