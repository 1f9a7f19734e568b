"""The kernel suite end to end: each kernel planned (DRO-WP and DRO-L), the new
file compiled with the original's own driver (PLAN_MAIN) and run, its output
compared byte for byte with the original's.  The simulated fetches never exceed
the original's; the dependent kernels are either left as they are, with the
reason said (the Gauss-Seidel stencil), or reordered legally (the float matrix
multiply, its k-chains kept: the run shows it)."""
import contextlib
import io
import os
import tempfile
import unittest

from common import compile, compile_and_run, kernel, run
from plan.cli import main

KERNELS = ["fig3", "transpose", "matmul", "stencil", "imperfect", "param", "colscale"]


def plan(name, out, *extra):
    c, t = kernel(name)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main([c, "--spec", t, "-o", out, *extra])
    return rc, buf.getvalue()


def fetches(text):
    line = next(x for x in text.split("\n") if x.startswith("fetches: original"))
    words = line.split()
    return int(words[2]), int(words[words.index("new") + 1])


class KernelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.d = cls.tmp.name
        cls.ref = {}
        for name in KERNELS:
            cls.ref[name] = compile_and_run(kernel(name)[0], os.path.join(cls.d, name))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, name, mode):
        out = os.path.join(self.d, f"{name}.{mode}.c")
        rc, text = plan(name, out, "--mode", mode)
        self.assertEqual(rc, 0, text)
        orig, new = fetches(text)
        print(f"\n{name} {mode}: fetches {orig} -> {new}")
        with open(out, "rb") as f:
            data = f.read()
        with open(kernel(name)[0], "rb") as f:
            source = f.read()
        if "kept the original order" in text:
            self.assertEqual(data, source)
        else:
            self.assertIn("restructured", text)
            self.assertLess(new, orig)
            # only the function's body changed: the text before it, and after it
            # (the driver), is the original's
            head = source[:source.index(b"{", source.index(b"void kernel"))]
            tail = source[source.index(b"#ifdef PLAN_MAIN"):]
            self.assertTrue(data.startswith(head))
            self.assertTrue(data.endswith(tail))
        self.assertIn("all satisfied", text)
        self.assertNotIn("VIOLATED", text)
        got = compile_and_run(out, os.path.join(self.d, f"{name}.{mode}"))
        self.assertEqual(got, self.ref[name], f"{name} {mode}: output differs")
        return text, orig, new

    def test_figure3_and_transpose_drop_a_lot(self):
        for name in ("fig3", "transpose"):
            text, orig, new = self.check(name, "wp")
            self.assertIn("restructured (DRO-WP)", text)
            self.assertLessEqual(new, 0.6 * orig)

    def test_dro_l(self):
        for name in ("fig3", "transpose", "imperfect", "matmul"):
            self.check(name, "l")

    def test_dependent_kernels(self):
        # the stencil keeps its order; the float matrix multiply is reordered with
        # every k-chain kept (its output is identical, byte for byte)
        text, orig, new = self.check("stencil", "wp")
        self.assertIn("kept the original order", text)
        text, orig, new = self.check("matmul", "wp")
        self.assertIn("restructured", text)
        self.assertLessEqual(new, 0.6 * orig)

    def test_imperfect(self):
        self.check("imperfect", "wp")

    def test_counters_declared_at_the_top(self):
        self.check("colscale", "wp")

    def test_parameter_bound_for_every_value(self):
        self.check("param", "wp")
        out = os.path.join(self.d, "param.wp.c")
        ref = os.path.join(self.d, "param")
        compile(out, os.path.join(self.d, "param.wp"))
        for n in ("0", "1", "17", "64"):
            want = run(ref, [n])
            got = run(os.path.join(self.d, "param.wp"), [n])
            self.assertEqual(got, want, f"n = {n}")

    def test_dry_run_writes_nothing(self):
        out = os.path.join(self.d, "dry.c")
        rc, text = plan("fig3", out, "--dry-run")
        self.assertEqual(rc, 0)
        self.assertFalse(os.path.exists(out))
        self.assertIn("legality (isl):", text)

    def test_threads_figure_14(self):
        """--threads T: OpenMP code whose threads wait on every dependence edge
        that crosses threads; run with T threads (several times: a missing wait
        would show as a wrong result now and then), with a team smaller than T
        (one thread runs the steps in order) and compiled without OpenMP."""
        for name, T in (("fig3", 2), ("transpose", 2), ("imperfect", 3), ("stencil", 2),
                        ("matmul", 2)):
            out = os.path.join(self.d, f"{name}.t{T}.c")
            rc, text = plan(name, out, "--threads", str(T))
            self.assertEqual(rc, 0, text)
            self.assertIn("all satisfied", text)
            exe = os.path.join(self.d, f"{name}.t{T}")
            if "kept the original order" in text:
                with open(out, "rb") as f, open(kernel(name)[0], "rb") as g:
                    self.assertEqual(f.read(), g.read())
                continue
            code = open(out).read()
            self.assertIn("#pragma omp parallel", code)
            if name == "transpose":  # nest 2 reads rows the other thread transposed
                self.assertIn("UB_WAIT(", code.split("#pragma omp parallel")[1])
            env = dict(os.environ, OMP_WAIT_POLICY="passive")
            compile(out, exe, ["-fopenmp"])
            for _ in range(5):
                got = run(exe, env=env)
                self.assertEqual(got, self.ref[name], f"{name} {T} threads")
            got = run(exe, env=dict(env, OMP_THREAD_LIMIT="1"))
            self.assertEqual(got, self.ref[name], f"{name}, a team of 1")
            got = compile_and_run(out, exe + ".serial")
            self.assertEqual(got, self.ref[name], f"{name} without OpenMP")

    def test_report(self):
        import json
        rep = os.path.join(self.d, "report")
        rc, text = plan("transpose", os.path.join(self.d, "r.c"), "--report", rep)
        self.assertEqual(rc, 0)
        orig, new = fetches(text)
        with open(os.path.join(rep, "plan.json")) as f:
            data = json.load(f)
        self.assertEqual((data["original"]["fetches"], data["new"]["fetches"]), (orig, new))
        self.assertEqual(sum(a["fetches"] for a in data["new"]["arrays"].values()), new)
        self.assertFalse(data["kept_original"])
        with open(os.path.join(rep, "table.txt")) as f:
            last = f.read().strip().split("\n")[-1].split()
        self.assertEqual(last[:4], ["all", "24", str(orig), str(new)])
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return
        with open(os.path.join(rep, "disk-use.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
