"""Fixtures: the installed package (never the source tree), the Rust program, the
reference decoder."""

import os
import sys

import pytest

import bloomwire
import helpers


def pytest_report_header(config):
    return f"bloomwire {bloomwire.__version__} from {os.path.dirname(bloomwire.__file__)}"


def pytest_sessionstart(session):
    # The compiled module lives only in the installed wheel: importing the sources would fail,
    # but a stale build elsewhere on the path would not. Check that it is the venv's.
    venv = os.environ.get("BLOOMWIRE_VENV")
    if venv is not None:
        where = os.path.realpath(bloomwire.__file__)
        if not where.startswith(os.path.realpath(venv) + os.sep):
            pytest.exit(f"bloomwire imported from {where}, not from the venv {venv}", 2)
        assert os.path.realpath(sys.prefix) == os.path.realpath(venv)


@pytest.fixture(scope="session")
def rust_cli():
    """The `bloomwire` program of the repository (see helpers.rust_cli)."""
    return helpers.rust_cli()


@pytest.fixture(scope="session")
def ref():
    """The reference decoder of the spec."""
    return helpers.reference_decoder()


@pytest.fixture(scope="session")
def vectors():
    return helpers.VECTORS
