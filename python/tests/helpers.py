"""Paths, the Rust program and the reference decoder, for the tests and the benchmark; a
watch of the GIL; the optional modules of the Dask tests; filters of numbered keys."""

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VECTORS = os.path.join(ROOT, "spec", "vectors")
EXAMPLES = os.path.join(ROOT, "python", "examples")


def rust_cli(release=False):
    """The path of the `bloomwire` program, built if needed.

    `BLOOMWIRE_CLI` names one to use as is. Otherwise cargo builds it in the repository's
    target directory: by default with the test profile and all features, which the
    repository's `cargo test --all-features` has already built (so this costs nothing after
    it, with the same features); `release=True` for the release profile with the default
    features, as users build it. `--bin` finds the program in whichever package holds it.
    """
    given = os.environ.get("BLOOMWIRE_CLI")
    if given:
        return given
    profile = ["--release"] if release else ["--profile", "test", "--all-features"]
    out = subprocess.run(["cargo", "build", "--quiet", "--message-format=json", *profile,
                          "--bin", "bloomwire"],
                         cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable") \
                and message["target"]["name"] == "bloomwire":
            return message["executable"]
    raise RuntimeError("cargo built no bloomwire program")


def module_at(name, path):
    """The Python file at `path`, run as the module `name` (not put in sys.modules)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference_decoder():
    """The spec's standard-library decoder, `spec/reference/bloomwire_ref.py`, as a module."""
    return module_at("bloomwire_ref", os.path.join(ROOT, "spec", "reference", "bloomwire_ref.py"))


def example(name):
    """The example `python/examples/{name}.py` as a module. Its folder goes on sys.path
    first, as when it runs as a script: the examples import what they share from there."""
    if EXAMPLES not in sys.path:
        sys.path.insert(0, EXAMPLES)
    return module_at(name, os.path.join(EXAMPLES, f"{name}.py"))


def dask_modules():
    """pyarrow, NumPy and pandas, for the tests of the Dask extra: the calling test module
    is skipped when Dask, distributed or one of them is not installed."""
    import pytest

    pytest.importorskip("dask")
    pytest.importorskip("distributed")
    return tuple(pytest.importorskip(name) for name in ("pyarrow", "numpy", "pandas"))


@contextlib.contextmanager
def dask_client(processes):
    """A Dask client of a LocalCluster of two workers of one thread each: worker processes,
    or threads of this process (quick to start)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        yield client


def dask_client_fixture(processes):
    """A test module's fixture of one `dask_client(processes)` for all its tests; assigned
    to a module's name, it is the fixture of that name."""
    import pytest

    @pytest.fixture(scope="module")
    def client():
        with dask_client(processes) as client:
            yield client

    return client


def with_keys(f, count, start=0):
    """`f`, with the keys "key-{start}" to "key-{start + count - 1}" inserted."""
    f.insert_many(f"key-{i}" for i in range(start, start + count))
    return f


def ticks_while(work):
    """How many times another Python thread ran while `work()` did. The switch interval is
    10 s meanwhile, so the other thread runs only where `work` releases the GIL."""
    ticks = []
    stop, started = threading.Event(), threading.Event()

    def tick():
        started.set()
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.0002)

    interval = sys.getswitchinterval()
    t = threading.Thread(target=tick)
    t.start()
    try:
        started.wait()
        sys.setswitchinterval(10.0)
        before = len(ticks)
        work()
        return len(ticks) - before
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        t.join()
