#!/usr/bin/env python3
"""Build the wheel, install it into a fresh virtual environment, run the tests there.

    python3 python/tests/run.py [PYTEST ARGS...]

Steps: `maturin build --release -m python/Cargo.toml` (maturin from PATH, else installed
with pip), `python3 -m venv` in a temporary directory, `pip install` of the wheel with its
`test` extra (pytest, mypy, whose stubtest checks the type stubs, NumPy, pyarrow, pandas,
Dask and PySpark: pyproject.toml) into it, then that environment's pytest on python/tests.
The tests import the installed package, never the source tree. The Spark tests need Java
too, and skip saying so without it. Standard library only; exits with pytest's status.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
ROOT = os.path.dirname(PACKAGE)


def step(what):
    print(f"== {what}", flush=True)


def run(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def maturin():
    found = shutil.which("maturin")
    if found:
        return [found]
    try:
        import maturin  # noqa: F401
    except ImportError:
        step("pip install maturin")
        run([sys.executable, "-m", "pip", "install", "--quiet", "maturin>=1.9.4,<2"])
    return [sys.executable, "-m", "maturin"]


def main(pytest_args):
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bloomwire-py-") as tmp:
        wheels = os.path.join(tmp, "wheels")
        step("maturin build --release -m python/Cargo.toml")
        run(maturin() + ["build", "--release", "-m", os.path.join(PACKAGE, "Cargo.toml"),
                         "--out", wheels], cwd=ROOT)
        wheel = glob.glob(os.path.join(wheels, "bloomwire-*.whl"))
        if len(wheel) != 1:
            sys.exit(f"expected one wheel in {wheels}, found {wheel}")
        venv = os.path.join(tmp, "venv")
        step(f"fresh venv, pip install {os.path.basename(wheel[0])}[test]")
        run([sys.executable, "-m", "venv", venv])
        python = os.path.join(venv, "bin", "python")
        run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             f"{wheel[0]}[test]"])
        step(f"pytest (wheel built and installed in {time.monotonic() - start:.0f} s)")
        env = dict(os.environ, BLOOMWIRE_VENV=venv)
        # The venv's pytest from the package directory: the tests' conftest checks that
        # `bloomwire` comes from the venv, not from the sources.
        code = subprocess.call([os.path.join(venv, "bin", "pytest"), "-p", "no:cacheprovider",
                                *pytest_args], cwd=PACKAGE, env=env)
    print(f"python package: {time.monotonic() - start:.0f} s in all", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
