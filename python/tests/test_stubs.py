"""The type stubs match the compiled module (mypy's stubtest), when mypy is installed."""

import subprocess
import sys

import pytest


def test_stubs_match_the_module():
    pytest.importorskip("mypy")
    run = subprocess.run([sys.executable, "-m", "mypy.stubtest", "bloomwire"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
