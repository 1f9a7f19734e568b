"""The layout advisor (Figure 12): counters per dimension permutation from the
kernel's references and from traces in the runtime's format (fixtures in
tests/plan/traces/), the fetches it predicts per permutation, what it
recommends, and the one-line errors for bad traces."""
import contextlib
import io
import os
import tempfile
import unittest

from common import HERE, kernel
from plan import PlanError
from plan.cfront import read_kernel
from plan.cli import main
from plan.layout import advise, index_of_linear, linear_of_index, read_trace, read_traces
from plan.spec import load_spec

TRACES = os.path.join(HERE, "traces")


def spec():
    return load_spec(os.path.join(TRACES, "spec.toml"))


class TraceTest(unittest.TestCase):
    def test_reads_the_format(self):
        t = read_trace(os.path.join(TRACES, "rows2", "trace.17.txt"))
        self.assertEqual(t.runs["/scratch/run/M.dat"], [("R", 0, 2048, 16)])
        self.assertEqual(t.runs["/scratch/run/other.log"], [("W", 0, 100, 10)])
        ts = read_traces(os.path.join(TRACES, "rows2"))
        self.assertEqual([os.path.basename(x.path) for x in ts], ["trace.9.txt", "trace.17.txt"])

    def bad(self, text, words):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "trace.1.txt")
            with open(p, "w") as f:
                f.write(text)
            with self.assertRaises(PlanError) as cm:
                read_traces(d)
            msg = str(cm.exception)
            self.assertNotIn("\n", msg)
            for w in words:
                self.assertIn(w, msg)

    def test_errors_name_the_line(self):
        self.bad("# unblock trace 2\n", ["trace.1.txt:1", "not an unblock trace"])
        self.bad("# unblock trace 1\nR 1 0 8 1\n", ["trace.1.txt:2", "before its F line"])
        self.bad("# unblock trace 1\nF 1 /a\nR 1 -8 8 1\n", ["trace.1.txt:3", "offset"])
        self.bad("# unblock trace 1\nF 1 /a\nR 1 0 8\n", ["trace.1.txt:3", "<calls>"])
        self.bad("# unblock trace 1\nX 1\n", ["trace.1.txt:2", "unknown record"])
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(PlanError) as cm:
                read_traces(d)
            self.assertIn("UNBLOCK_TRACE", str(cm.exception))

    def test_index_round_trip(self):
        s = spec()
        arr = s.arrays["M"]
        arr.layout = [1, 0]
        for lin in range(256):
            idx = index_of_linear(arr, lin)
            self.assertEqual(linear_of_index(arr.extents, arr.layout, idx), lin)
        self.assertEqual(index_of_linear(arr, 1), (1, 0))


class AdviceTest(unittest.TestCase):
    def test_column_walk_wants_column_major(self):
        adv = advise(None, spec(), os.path.join(TRACES, "colwise"))
        best, fig12, preds = adv.recommend("M")
        self.assertEqual(best, (1, 0))
        self.assertEqual(fig12, (1, 0))
        # 16 columns x 8 stripes, each fetched again (2 blocks of buffer), against
        # each stripe once in column-major order
        self.assertEqual(preds, {(0, 1): 128, (1, 0): 8})
        self.assertEqual(adv.counters["M"][(1, 0)], 16 * 15)
        self.assertEqual(adv.other["M"], 15)

    def test_row_walks_of_two_processes_keep_row_major(self):
        adv = advise(None, spec(), os.path.join(TRACES, "rows2"))
        best, _, preds = adv.recommend("M")
        self.assertEqual(best, (0, 1))
        self.assertEqual(preds[(0, 1)], 8 + 8)
        self.assertGreater(preds[(1, 0)], preds[(0, 1)])
        self.assertIn("recommended: layout = [0, 1] (the current layout)", adv.text())

    def test_static_from_the_kernel(self):
        c, t = kernel("fig3")
        s = load_spec(t)
        adv = advise(read_kernel(c), s, "")
        # nest 1: two row-wise references; nests 2 and 3: three column-wise
        self.assertEqual(adv.counters["U"][(0, 1)], 2 * 64 * 64)
        self.assertEqual(adv.counters["U"][(1, 0)], 3 * 64 * 64)
        best, fig12, preds = adv.recommend("U")
        self.assertEqual((best, fig12), ((1, 0), (1, 0)))
        self.assertLess(preds[(1, 0)], preds[(0, 1)])

    def test_command_line(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["--layout", os.path.join(TRACES, "colwise"), "--spec",
                       os.path.join(TRACES, "spec.toml")])
        self.assertEqual(rc, 0)
        self.assertIn("recommended: layout = [1, 0]", out.getvalue())
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            rc = main(["--layout", "--spec", os.path.join(TRACES, "spec.toml")])
        self.assertEqual(rc, 2)
        self.assertIn("--layout needs", err.getvalue())


if __name__ == "__main__":
    unittest.main()
