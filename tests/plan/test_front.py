"""The spec's validation and the C front end: what is accepted, and the one-line
errors (naming the line) for what is outside the subset."""
import os
import subprocess
import sys
import tempfile
import unittest

from common import BAD, kernel
from plan import PlanError
from plan.cfront import read_kernel
from plan.spec import parse_spec

GOOD = """
buffer_blocks = 4
[disks]
count = 4
stripe = 4096
[arrays.A]
type = "double"
extents = [64, 64]
file = "A.dat"
"""


class SpecTest(unittest.TestCase):
    def test_good(self):
        s = parse_spec(GOOD)
        a = s.arrays["A"]
        self.assertEqual((a.size, a.layout, a.stripe, a.disks, a.first_disk),
                         (8, [0, 1], 4096, 4, 0))
        self.assertEqual(a.stripes, 8)
        self.assertEqual(s.total_blocks, 8)

    def check_error(self, text, words):
        with self.assertRaises(PlanError) as cm:
            parse_spec(text, "s.toml")
        msg = str(cm.exception)
        self.assertNotIn("\n", msg)
        for w in words:
            self.assertIn(w, msg)

    def test_errors(self):
        self.check_error(GOOD.replace("buffer_blocks = 4", ""), ["buffer_blocks", "missing"])
        self.check_error(GOOD.replace("= 4\n[disks]", "= -1\n[disks]"), ["buffer_blocks"])
        self.check_error(GOOD.replace("[64, 64]", "[64, 0]"), ["arrays.A.extents"])
        self.check_error(GOOD.replace("[64, 64]", '["N", 64]'), ["arrays.A.extents"])
        self.check_error(GOOD.replace('"double"', '"struct x"'), ["arrays.A.type", "size"])
        self.check_error(GOOD.replace("stripe = 4096", "stripe = 4.5"), ["disks.stripe"])
        self.check_error(GOOD + "\n[arrays.B]\ntype='int'\nextents=[3]\nfile='A.dat'\n",
                         ["arrays.B.file", "one array per file"])
        self.check_error("colour = 3\n" + GOOD, ["unknown key 'colour'"])
        self.check_error(GOOD.replace('stripe = 4096', 'stripe = 4100'), ["arrays.A.stripe", "multiple"])
        self.check_error(GOOD.replace("file =", "fiel ="), ["arrays.A.fiel"])
        self.check_error(GOOD + "[params]\nN = 'big'\n", ["params.N"])
        self.check_error("buffer_blocks = [", ["not valid TOML"])

    def test_bad_optional_values_get_defaults(self):
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            s = parse_spec(GOOD.replace('file = "A.dat"', 'file = "A.dat"\nlayout = [0, 0]'))
        self.assertEqual(s.arrays["A"].layout, [0, 1])
        self.assertIn("arrays.A.layout", err.getvalue())
        self.assertEqual(len(err.getvalue().strip().split("\n")), 1)


class FrontTest(unittest.TestCase):
    def test_reads_the_kernels(self):
        k = read_kernel(kernel("transpose")[0])
        self.assertEqual(k.function, "kernel")
        self.assertEqual(k.nests, 2)
        s0, s1 = k.stmts
        self.assertEqual([a.array for a in s0.accesses], ["A", "B"])
        self.assertEqual(s0.accesses[1].subs, [{"j": 1}, {"i": 1}])
        self.assertTrue(s0.accesses[1].write)
        self.assertEqual(s0.upper, [{1: 63}, {1: 63}])
        self.assertEqual(s1.beta, [1, 0, 0])
        # the statement's own text, counters in parentheses
        self.assertEqual(s0.body, "B [ (j) ] [ (i) ] = A [ (i) ] [ (j) ];")

    def test_parameter_and_imperfect(self):
        k = read_kernel(kernel("param")[0])
        self.assertEqual(k.params, ["n"])
        self.assertEqual(k.stmts[0].upper[1], {"n": 1, 1: -1})
        k = read_kernel(kernel("imperfect")[0])
        self.assertEqual([s.iters for s in k.stmts], [["j"], ["j", "i"]])
        self.assertEqual([s.beta for s in k.stmts], [[0, 0], [0, 1, 0]])
        # a compound assignment reads its target too
        k = read_kernel(kernel("matmul")[0])
        self.assertEqual([(a.array, a.write) for a in k.stmts[0].accesses],
                         [("W", False), ("U", False), ("V", False), ("W", True)])

    def test_statement_opening_with_a_macro_keeps_its_text(self):
        from common import HERE
        k = read_kernel(os.path.join(HERE, "real", "fig3io.c"))
        self.assertEqual(k.stmts[0].body,
                         "AT ( U , (i) , (j) ) = 0.5 * AT ( U , (i) , (j) ) + 1.0;")
        self.assertEqual([(a.array, a.subs) for a in k.stmts[2].accesses][1],
                         ("U", [{"i": -1, 1: 63}, {"j": 1}]))

    def check_bad(self, name, line, words):
        with self.assertRaises(PlanError) as cm:
            read_kernel(os.path.join(BAD, f"{name}.c"))
        msg = str(cm.exception)
        self.assertNotIn("\n", msg)
        self.assertIn(f"{name}.c:{line}:", msg)
        for w in words:
            self.assertIn(w, msg)

    def test_outside_the_subset(self):
        self.check_bad("pointer", 4, ["pointer"])
        self.check_bad("nonaffine", 5, ["non-affine subscript", "product"])
        self.check_bad("call", 7, ["call to 'next_value'", "side effects"])
        self.check_bad("indirect", 4, ["non-affine subscript", "array element"])
        self.check_bad("scalar", 4, ["scalar 's'"])
        self.check_bad("macro_counter", 6, ["counter 'i'", "macro"])

    def test_names_that_collide_are_avoided(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "k.c")
            with open(src, "w") as f:
                f.write("int S_0, c0;\nvoid kernel(double A[8])\n{\n"
                        "    for (int i = 0; i < 8; i++)\n        A[i] = S_0 + c0;\n}\n")
            k = read_kernel(src)
            self.assertEqual(k.stmts[0].name, "SS_0")
            from plan import codegen
            self.assertEqual(codegen._iterator_prefix(k), "c_")

    def test_element_size_must_match_the_spec(self):
        from plan.cli import check_kernel
        k = read_kernel(kernel("matmul")[0])
        spec = parse_spec(GOOD.replace('"A"', '"W"').replace("[arrays.A]", "[arrays.W]")
                          .replace('"double"', '"double"').replace("[64, 64]", "[32, 32]"))
        with self.assertRaises(PlanError) as cm:
            check_kernel(k, spec)
        self.assertIn("4 bytes here but 8 in the spec", str(cm.exception))

    def test_the_command_line_error(self):
        """Through the launcher's way in: one line on stderr, status 2."""
        tools = os.path.dirname(os.path.dirname(os.path.abspath(__import__("plan").__file__)))
        env = dict(os.environ, PYTHONPATH=tools)
        with tempfile.TemporaryDirectory() as d:
            spec = os.path.join(d, "s.toml")
            with open(spec, "w") as f:
                f.write(GOOD)
            r = subprocess.run([sys.executable, "-m", "plan", os.path.join(BAD, "call.c"),
                                "--spec", spec, "-o", os.path.join(d, "o.c")],
                               capture_output=True, text=True, env=env, timeout=60)
            self.assertEqual(r.returncode, 2)
            self.assertEqual(len(r.stderr.strip().split("\n")), 1, r.stderr)
            self.assertIn("call.c:7: call to 'next_value'", r.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "o.c")))


if __name__ == "__main__":
    unittest.main()
