"""Shared by the planner's tests: the kernels and what running them needs."""
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "kernels")
BAD = os.path.join(HERE, "bad")


def kernel(name):
    return os.path.join(KERNELS, f"{name}.c"), os.path.join(KERNELS, f"{name}.toml")


def cc():
    return shutil.which("cc") or shutil.which("gcc")


def compile(src, exe, flags=(), timeout=60):
    subprocess.run([cc(), "-std=gnu11", "-O1", "-Wall", "-Werror", "-DPLAN_MAIN", *flags,
                    src, "-o", exe, "-lm"], check=True, timeout=timeout)


def run(exe, args=(), env=None, timeout=60):
    return subprocess.run([exe, *args], check=True, capture_output=True, env=env,
                          timeout=timeout).stdout


def compile_and_run(src, exe, args=(), timeout=60, flags=(), env=None):
    """Compiles src with its PLAN_MAIN driver and returns what it writes."""
    compile(src, exe, flags, timeout)
    return run(exe, args, env, timeout)
