#!/usr/bin/env python3
"""Runs the planner's tests (unittest) with the planner's package on the path;
exits 77 (skipped) with the reason when islpy or libclang's bindings are missing.

    run.py TOOLS_DIR MODULE [unittest args...]
"""
import importlib.util
import os
import sys
import unittest

tools, module = sys.argv[1], sys.argv[2]
missing = [m for m in ("islpy", "clang.cindex")
           if importlib.util.find_spec(m.split(".")[0]) is None]
if missing:
    print(f"SKIPPED: {', '.join(missing)} missing in {sys.executable} "
          f"(scripts/bootstrap installs the planner's virtual environment)")
    sys.exit(77)
sys.path.insert(0, tools)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
prog = unittest.main(module=module, argv=[sys.argv[0]] + sys.argv[3:], exit=False,
                     verbosity=2)
sys.exit(0 if prog.result.wasSuccessful() else 1)
