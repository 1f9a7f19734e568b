"""What `unblock report` must show, computed here from the statistics files
themselves (never with the report's own code), for report_text.py and
report_browser.py; and synthetic statistics far larger than a run of the tests
makes, with sections the report does not know.

  load(DIR)            the files, as the report names its processes: [(name, doc)]
  value(docs, key, of) a number the report shows: key is a dotted key of the
                       statistics (or one of the keys below), of a process, "total",
                       a call site ("SITE FUNCTION"), ...
  synthetic(DIR)       writes the synthetic files; returns how many keys each has"""
import glob
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transparency import lookup  # noqa: E402  (a dotted key in a statistics document)

COLUMNS = ['comm.calls', 'comm.async', 'comm.passthrough', 'comm.faults', 'protect.calls',
           'io.calls', 'io.async', 'io.merged', 'io.readahead_hits', 'io.errors_deferred']


def load(directory):
    docs = []
    for path in glob.glob(os.path.join(directory, 'unblock-*.json')):
        with open(path) as f:
            doc = json.load(f)
        docs.append(doc)
    docs.sort(key=lambda d: (d.get('rank', 0), d.get('pid', 0)))
    return [(name(d), d) for d in docs]


def name(doc):
    return str(doc.get('rank', 0)) if doc.get('rank', 0) >= 0 else 'pid %d' % doc['pid']


def functions(docs, section):
    """{function: calls} over all processes."""
    out = {}
    for _, d in docs:
        for f, c in (lookup(d, section + '.functions') or {}).items():
            out[f] = out.get(f, 0) + c
    return out


SITE_FIELDS = ['calls', 'converted', 'passed', 'faults', 'bytes', 'blocking_ms', 'converted_ms',
               'hidden_ms']


def sites(docs):
    """{(site, function): summed fields, with 'decision' ('mixed' if it differs)}."""
    out = {}
    for _, d in docs:
        for s in d.get('sites', []):
            a = out.setdefault((s['site'], s['function']), {k: 0 for k in SITE_FIELDS})
            for k in SITE_FIELDS:
                a[k] += s.get(k, 0)
            a['decision'] = s['decision'] if a.get('decision', s['decision']) == s['decision'] \
                else 'mixed'
    return out


def timeline_sum(doc, what):
    tl = doc.get('timeline')
    return sum(tl[what]) if tl else 0


def unknown(docs, section, key):
    """The sum of a number under an unknown section over the processes, where
    "a[]" is the number of items of list a and "a[].b" the sum of b over them;
    also its smallest and largest per value."""
    vals = []

    def walk(v, parts):
        if not parts:
            vals.append(v)
            return
        p = parts[0]
        if p.endswith('[]'):
            lst = v.get(p[:-2]) if isinstance(v, dict) else None
            if isinstance(lst, list):
                if len(parts) == 1:
                    vals.append(len(lst))
                else:
                    for item in lst:
                        walk(item, parts[1:])
        elif isinstance(v, dict) and p in v:
            walk(v[p], parts[1:])

    for _, d in docs:
        if section is None:
            if key in d:
                vals.append(d[key])
        elif section in d:
            walk({section: d[section]}, [section] + key.split('.'))
    return vals


_cache = {}


def cached(fn, docs, *args):
    """fn(docs, *args), computed once per list of files (a page has thousands of numbers)."""
    key = (fn.__name__, id(docs)) + args
    if key not in _cache:
        _cache[key] = fn(docs, *args)
    return _cache[key]


def value(docs, key, of):
    """The number the report shows for key and of (the page's data-key and
    data-of), or raises KeyError for a number this module cannot check."""
    byname = dict(docs)
    if key in COLUMNS + ['comm.bytes']:
        if of == 'total':
            return sum(lookup(d, key) for _, d in docs)
        return lookup(byname[of], key)
    if key in ('timeline.exposed_ms', 'timeline.hidden_ms'):
        what = key.split('.')[1]
        if of == 'total':
            return sum(timeline_sum(d, what) for _, d in docs)
        return timeline_sum(byname[of], what)
    if key.startswith('sites.'):
        site, fn = of.rsplit(' ', 1)
        return cached(sites, docs)[(site, fn)][key[6:]]
    for section in ('comm', 'io', 'process'):
        if key.startswith(section + '.functions.') and of == 'total':
            return cached(functions, docs, section)[key[len(section) + 11:]]
    if key.startswith('comm.passthrough_why.') and of == 'total':
        return sum(lookup(d, key) for _, d in docs)
    if key.startswith('io.files.'):
        who, path = of.split(':', 1)
        field = key[9:]
        return sum(f[field] for f in byname[who]['io']['files'] if f['path'] == path)
    if key.startswith('io.') and of == 'total':
        return sum(lookup(d, key) for _, d in docs)
    section, _, rest = key.partition('.')
    if section in KNOWN or of not in ('total', 'min', 'max'):
        raise KeyError(key)
    vals = unknown(docs, section, rest) if rest else unknown(docs, None, section)
    vals = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not vals:
        raise KeyError(key)
    return {'total': sum(vals), 'min': min(vals), 'max': max(vals)}[of]


KNOWN = {'version', 'mpi', 'rank', 'size', 'pid', 'exe', 'mpi_abi_ok', 'comm', 'protect',
         'memory', 'io', 'process', 'sites', 'timeline'}


def count_keys(v):
    """Leaves of a JSON value, as a flattening parser would store them."""
    if isinstance(v, dict):
        return sum(count_keys(x) for x in v.values())
    if isinstance(v, list):
        return sum(count_keys(x) for x in v)
    return 1


def synthetic(directory, seed=26):
    """Three processes (ranks 0 and 1, and one without a rank) whose files hold
    far more than a few thousand keys: 4,000 MPI functions, 3,000 call sites, 200
    files each, with the most called functions and the costliest sites last in
    the file (where a reader that stops early never gets); timelines of three
    widths; a section the report does not know (`gpuio`, numbers, a boolean, a
    string, a list of objects) and lone top-level values (`host`).  Returns the
    number of keys of each file."""
    rnd = random.Random(seed)
    os.makedirs(directory, exist_ok=True)
    keys = []
    for p, (rank, width, buckets) in enumerate([(0, 1, 64), (1, 2, 40), (-1, 4, 10)]):
        funcs = {'MPI_Fake_%04d' % i: rnd.randrange(1, 500) for i in range(4000)}
        funcs['MPI_Isend'] = 900001 + p   # the most called: last in the file
        funcs['MPI_Wait'] = 800001 + p
        sites = []
        for i in range(3000):
            blocking = round(rnd.uniform(0, 5), 3)
            sites.append({'site': 'app+0x%x' % (0x1000 + i), 'function': 'MPI_Send',
                          'decision': 'convert' if (i + p) % 3 else 'pass',
                          'calls': rnd.randrange(1, 100), 'converted': rnd.randrange(0, 50),
                          'passed': rnd.randrange(0, 50), 'bytes': rnd.randrange(0, 1 << 20),
                          'faults': rnd.randrange(0, 3), 'blocking_us': 1.0, 'converted_us': 1.0,
                          'blocking_ms': blocking, 'converted_ms': round(rnd.uniform(0, 1), 3),
                          'hidden_ms': round(rnd.uniform(-1, 4), 3)})
        sites.append({'site': 'app+0xffff', 'function': 'MPI_Recv', 'decision': 'convert',
                      'calls': 7000 + p, 'converted': 6000, 'passed': 1000 + p, 'bytes': 1 << 30,
                      'faults': 12, 'blocking_us': 1.0, 'converted_us': 1.0,
                      'blocking_ms': 5000.125, 'converted_ms': 250.5, 'hidden_ms': 4321.001})
        doc = {
            'version': '0.1.0', 'rank': rank, 'size': 2, 'pid': 1000 + p,
            'exe': 'synthetic', 'mpi': 'openmpi', 'mpi_abi_ok': True,
            'comm': {'calls': 100000 + 17 * p, 'async': 60000 + p, 'passthrough': 40000 + 16 * p,
                     'faults': 31 + p, 'bytes': 123456789 * (p + 1),
                     'passthrough_why': {'small': 100 + p, 'predicted': 7, 'status': 0},
                     'progress': 'calls' if rank < 0 else 'thread', 'functions': funcs},
            'protect': {'calls': 5000 + p},
            'io': {'calls': 20000 + p, 'async': 300 + p, 'merged': 15000 + p, 'direct': 40,
                   'readahead_hits': 999 + p, 'errors_deferred': p, 'flushed_bytes': 1 << 28,
                   'files': [{'path': '/data/out-%03d.bin' % i, 'pattern': 'sequential',
                              'writes': 10 + i, 'bytes': 4096 * (10 + i), 'merged': i,
                              'direct': 1} for i in range(200)],
                   'functions': dict({'f%02d' % i: rnd.randrange(1, 50) for i in range(48)},
                                     write=70000 + p, pwrite=60000)},
            'process': {'functions': {'fork': 1 + p}},
            'sites': sites,
            'timeline': {'bucket_ms': width, 'buckets': buckets,
                         'hidden_ms': [round(rnd.uniform(-1, 3), 3) for _ in range(buckets)],
                         'exposed_ms': [round(rnd.uniform(0, width), 3) for _ in range(buckets)]},
            'gpuio': {'calls': 500 + 10 * p, 'bytes': 1 << (20 + p), 'collective': rank != 1,
                      'mode': 'two-stage', 'latency_ms': 0.25 * (p + 1),
                      'functions': {'MPI_File_write_at': 300 + p, 'MPI_File_read_at': 200},
                      'files': [{'path': 'ckpt-%d' % i, 'bytes': 1000 * (i + 1)}
                                for i in range(3 + p)]},
            'host': 'node%d' % (p % 2),
        }
        keys.append(count_keys(doc))
        with open(os.path.join(directory, 'unblock-%d.json' % (rank if rank >= 0 else 1000 + p)),
                  'w') as f:
            json.dump(doc, f, indent=1)
    return keys
