#!/usr/bin/env python3
"""The page of `unblock report`, opened in a real headless browser (Debian's
chromium), driven through the DevTools protocol over a pipe (stdlib only):

  - no console errors, no exceptions, no failed loads (Runtime and Log events);
  - every <img> loaded (complete, naturalWidth > 0), and as many as the page must
    have (phases, processes, call sites, and file I/O where there were file calls);
  - every number the page shows with a key (data-key, data-of) equals what the
    statistics files say (report_expect.value, computed here, not by the report),
    and the keys that must be there are.

First the checker is shown to catch what it looks for: a page with a broken
image, a console error and an uncaught exception must give all three, and the
real page with one number changed must give a mismatch.

  report_browser.py UNBLOCK synthetic                the synthetic files (report_expect)
  report_browser.py UNBLOCK {openmpi,mpich} SOR2D    a run of bench/sor2d.c (2 ranks:
                                                     MPI, call sites, file writes)

Skipped (77) only where chromium is missing or cannot start."""
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report_expect as X  # noqa: E402

UNBLOCK, MODE = sys.argv[1:3]
SKIP = 77


def fail(msg):
    sys.exit('FAIL: ' + msg)


class Browser:
    """Headless chromium with --remote-debugging-pipe: commands go to its fd 3,
    answers and events come from its fd 4, each a JSON text ended by a NUL."""

    def __init__(self, exe, profile):
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def fds():  # in the child: the pipe's ends on 3 and 4 (by way of fds out of the way)
            a, b = fcntl.fcntl(to_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        args = [exe, '--headless', '--remote-debugging-pipe', '--disable-gpu',
                '--no-first-run', '--no-default-browser-check', '--disable-extensions',
                '--disable-background-networking', '--disable-dev-shm-usage',
                '--user-data-dir=' + profile, 'about:blank']
        if os.geteuid() == 0:
            args.insert(1, '--no-sandbox')  # chromium refuses to run as root with its sandbox
        self.log = open(os.path.join(profile, 'stderr.txt'), 'w+')
        self.proc = subprocess.Popen(args, preexec_fn=fds, close_fds=False,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log)
        os.close(to_r)
        os.close(from_w)
        self.buf, self.next_id, self.events = b'', 0, []

    def send(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.to_w, json.dumps(msg).encode() + b'\0')
        end = time.monotonic() + timeout
        while True:
            m = self.receive(end - time.monotonic())
            if m is None:
                raise TimeoutError('no answer to %s' % method)
            if m.get('id') == self.next_id:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})
            self.events.append(m)

    def receive(self, timeout):
        while b'\0' not in self.buf:
            if timeout <= 0 or not select.select([self.from_r], [], [], timeout)[0]:
                return None
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                raise EOFError('the browser closed its pipe')
            self.buf += chunk
        text, self.buf = self.buf.split(b'\0', 1)
        return json.loads(text)

    def wait_event(self, method, session, timeout=30):
        end = time.monotonic() + timeout
        for m in self.events:
            if m.get('method') == method and m.get('sessionId') == session:
                return m
        while True:
            m = self.receive(end - time.monotonic())
            if m is None:
                raise TimeoutError('no %s' % method)
            self.events.append(m)
            if m.get('method') == method and m.get('sessionId') == session:
                return m

    def drain(self, seconds):
        end = time.monotonic() + seconds
        while True:
            m = self.receive(end - time.monotonic())
            if m is None:
                return
            self.events.append(m)

    def close(self):
        try:
            self.send('Browser.close', timeout=10)
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)


# What the page tells the test, evaluated in it once it has loaded.
COLLECT = """(() => ({
  title: document.title,
  images: Array.from(document.images).map(i => ({alt: i.alt, complete: i.complete,
            width: i.naturalWidth, height: i.naturalHeight, kind: i.src.slice(0, 30)})),
  cells: Array.from(document.querySelectorAll('[data-key]')).map(c =>
            [c.dataset.key, c.dataset.of, c.textContent]),
  headings: Array.from(document.querySelectorAll('h2')).map(h => h.textContent)
}))()"""


def open_page(browser, path):
    """Loads file `path` in a new tab: returns (what COLLECT gives, problems), the
    problems being console errors, exceptions and failed loads, as text."""
    target = browser.send('Target.createTarget', {'url': 'about:blank'})['targetId']
    session = browser.send('Target.attachToTarget', {'targetId': target,
                                                     'flatten': True})['sessionId']
    for domain in ('Runtime', 'Log', 'Page'):
        browser.send(domain + '.enable', session=session)
    start = len(browser.events)
    browser.send('Page.navigate', {'url': 'file://' + os.path.abspath(path)}, session=session)
    browser.wait_event('Page.loadEventFired', session)
    browser.drain(0.5)
    r = browser.send('Runtime.evaluate', {'expression': COLLECT, 'returnByValue': True},
                     session=session)
    if 'exceptionDetails' in r:
        fail('the page could not be read: %r' % r['exceptionDetails'])
    problems = []
    for m in browser.events[start:]:
        if m.get('sessionId') != session:
            continue
        p = m.get('params', {})
        if m.get('method') == 'Runtime.exceptionThrown':
            problems.append('exception: %s' % p['exceptionDetails'].get('text'))
        elif m.get('method') == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert'):
            problems.append('console.%s: %s' % (p['type'], ' '.join(
                str(a.get('value', a.get('description'))) for a in p.get('args', []))))
        elif m.get('method') == 'Log.entryAdded' and p['entry'].get('level') == 'error':
            problems.append('log (%s): %s' % (p['entry'].get('source'), p['entry'].get('text')))
    browser.send('Target.closeTarget', {'targetId': target})
    return r['result']['value'], problems


def number(text):
    return float(text.replace(',', ''))


def compare(docs, cells):
    """Mismatches between the page's numbers and the files'."""
    bad = []
    for key, of, text in cells:
        try:
            want = X.value(docs, key, of)
        except KeyError:
            bad.append('%s of %s: %s, a number the test cannot check' % (key, of, text))
            continue
        got = number(text)
        # counts are shown whole, times to 0.001 ms (each file value is rounded
        # to 0.001 too, so a sum may differ by that rounding only)
        tol = 0.5 if float(want).is_integer() and '.' not in text else 0.0005 + 1e-9 * abs(want)
        if abs(got - want) > tol:
            bad.append('%s of %s: the page shows %s, the files say %r' % (key, of, text, want))
    return bad


def required(docs):
    """(key, of) the page must show."""
    keys = [(k, n) for n, _ in docs for k in X.COLUMNS + ['timeline.exposed_ms',
                                                          'timeline.hidden_ms']]
    keys += [(k, 'total') for k in X.COLUMNS]
    keys += [('sites.%s' % f, '%s %s' % s) for s in X.sites(docs) for f in X.SITE_FIELDS]
    keys += [('comm.functions.' + f, 'total') for f in X.functions(docs, 'comm')]
    keys += [('io.functions.' + f, 'total') for f in X.functions(docs, 'io')]
    if any('gpuio' in d for _, d in docs):  # the synthetic section the report does not know
        keys += [(k, of) for k in ('gpuio.calls', 'gpuio.latency_ms', 'gpuio.files[]',
                                   'gpuio.files[].bytes', 'gpuio.functions.MPI_File_write_at')
                 for of in ('total', 'min', 'max')]
    return keys


def check(browser, docs, page, work):
    info, problems = open_page(browser, page)
    print('%s: %d images, %d numbers, sections %s' % (
        os.path.basename(os.path.dirname(page)), len(info['images']), len(info['cells']),
        ', '.join(info['headings'])))
    if problems:
        fail('the page logged: %s' % '; '.join(problems))
    want_images = 3 + bool(X.functions(docs, 'io'))
    if len(info['images']) != want_images:
        fail('%d pictures, expected %d' % (len(info['images']), want_images))
    for img in info['images']:
        if not img['complete'] or img['width'] <= 0 or img['height'] <= 0:
            fail('a picture did not load: %r' % img)
    bad = compare(docs, info['cells'])
    if bad:
        fail('%d numbers differ, e.g. %s' % (len(bad), '; '.join(bad[:5])))
    shown = {(k, of) for k, of, _ in info['cells']}
    missing = [k for k in required(docs) if k not in shown]
    if missing:
        fail('%d numbers missing from the page, e.g. %r' % (len(missing), missing[:5]))
    print('  no errors; every picture loaded (%s); all %d numbers equal the files\'' % (
        ', '.join('%dx%d' % (i['width'], i['height']) for i in info['images']),
        len(info['cells'])))

    # The checker catches what it looks for: a number changed on the page ...
    html = open(page).read()
    cell = html.index('data-key="comm.calls"')
    start = html.index('>', cell) + 1
    tampered = os.path.join(work, 'tampered.html')
    with open(tampered, 'w') as f:
        f.write(html[:start] + '7' + html[start:])
    info, _ = open_page(browser, tampered)
    if not compare(docs, info['cells']):
        fail('a changed number went unnoticed')
    return info


def self_test(browser, work):
    """... and a broken picture, a console error and an exception."""
    page = os.path.join(work, 'broken.html')
    with open(page, 'w') as f:
        f.write('<!DOCTYPE html><html><body><img alt="missing" src="missing.png">'
                '<script>console.error("an error for the test"); null.x;</script></body></html>')
    info, problems = open_page(browser, page)
    kinds = {p.split(':')[0].split(' ')[0] for p in problems}
    if not {'exception', 'console.error', 'log'} <= kinds or info['images'][0]['width'] != 0:
        fail('the checker missed something on a broken page: %r, %r' % (problems, info['images']))
    print('checker: a broken page gives %r' % problems)


def stats_of_a_run(impl, sor2d, work):
    stats, out = os.path.join(work, 'stats'), os.path.join(work, 'out')
    os.makedirs(out)
    launch = (['mpirun.openmpi', '--oversubscribe'] if impl == 'openmpi' else ['mpirun.mpich'])
    env = {k: v for k, v in os.environ.items() if not (k.startswith('UNBLOCK_') and k != 'UNBLOCK_PROFILE')}
    env.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    p = subprocess.run(launch + ['-np', '2', UNBLOCK, '--stats=' + stats, sor2d, out, '--n',
                                 '1024', '--iters', '20', '--k', '10'],
                       env=env, capture_output=True, text=True, timeout=180,
                       stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        fail('sor2d exited %d: %s' % (p.returncode, p.stderr[-2000:]))
    return stats


def main():
    exe = shutil.which('chromium') or shutil.which('chromium-browser')
    if not exe:
        print('SKIP: no chromium (Debian package chromium; scripts/bootstrap installs it)')
        return SKIP
    with tempfile.TemporaryDirectory(prefix='report-browser-') as work:
        if MODE == 'synthetic':
            stats = os.path.join(work, 'stats')
            X.synthetic(stats)
        else:
            stats = stats_of_a_run(MODE, sys.argv[3], work)
        docs = X.load(stats)
        r = subprocess.run([UNBLOCK, 'report', stats], capture_output=True, text=True,
                           timeout=120)
        page = os.path.join(stats, 'unblock-report.html')
        if r.returncode != 0 or not os.path.isfile(page):
            fail('unblock report exited %d, page %s: %s%s' % (
                r.returncode, 'written' if os.path.isfile(page) else 'not written',
                r.stdout[-500:], r.stderr))
        profile = os.path.join(work, 'profile')
        os.makedirs(profile)
        browser = Browser(exe, profile)
        try:
            try:
                version = browser.send('Browser.getVersion', timeout=60)['product']
            except (OSError, EOFError, TimeoutError, RuntimeError) as e:
                browser.log.seek(0)
                print('SKIP: chromium cannot start here (%s): %s' % (e, browser.log.read()[-1500:]))
                return SKIP
            print('browser: %s' % version)
            self_test(browser, work)
            check(browser, docs, page, work)
        finally:
            browser.close()
    print('PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main())
