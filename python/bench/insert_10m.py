#!/usr/bin/env python3
"""Keys inserted per second: bloomwire from an Arrow string array and from a list of str,
against the Python Bloom filter packages that are installed, in one run.

    python insert_10m.py [--keys 10000000] [--fpr 0.01] [--runs 3]

The keys are "key-0" ... "key-{n-1}": an Arrow string array for `insert_array`, the same
keys as a list of str for everything else (made before the clock starts). Each filter is
sized for n keys at the rate `--fpr` by its own library (bloomwire: `plan_for_fpr`, the
smallest frame at that rate; the others their constructors' capacity and error rate).
Each case is timed `--runs` times on a new filter, the best run reported, then every
inserted key is checked to be found (no false negatives). The packages tried are rbloom,
pybloom-live, fastbloom-rs and bloom-filter2 (`pip install rbloom pybloom-live
fastbloom-rs bloom-filter2`); one that is not installed or fails is reported as such.
Keys per second on one core: nothing here runs on more than one thread.
"""

import argparse
import importlib
import time


def timed(make, insert, runs):
    best = float("inf")
    filt = None
    for _ in range(runs):
        filt = make()
        start = time.perf_counter()
        insert(filt)
        best = min(best, time.perf_counter() - start)
    return best, filt


def cases(n, fpr, keys_arrow, keys_list):
    """(name, make, insert, contains_all) for every package that imports."""
    import bloomwire

    def add_each(f):
        """The keys inserted one call at a time: the packages without a batch insert."""
        add = f.add
        for k in keys_list:
            add(k)

    plan = bloomwire.plan_for_fpr(n, fpr)
    yield ("bloomwire insert_array (Arrow string array)", plan.new_filter,
           lambda f: f.insert_array(keys_arrow),
           lambda f: f.contains_array(keys_arrow).false_count == 0)
    yield ("bloomwire insert_many (list of str)", plan.new_filter,
           lambda f: f.insert_many(keys_list),
           lambda f: all(f.contains_many(keys_list)))

    # The other packages: (package, module, its case from the module).
    others = [
        ("rbloom", "rbloom", lambda m: (
            "rbloom Bloom.update (list of str)", lambda: m.Bloom(n, fpr),
            lambda f: f.update(keys_list), lambda f: all(k in f for k in keys_list))),
        ("fastbloom-rs", "fastbloom_rs", lambda m: (
            "fastbloom-rs add_str_batch (list of str)", lambda: m.BloomFilter(n, fpr),
            lambda f: f.add_str_batch(keys_list),
            lambda f: all(f.contains_str_batch(keys_list)))),
        ("pybloom-live", "pybloom_live", lambda m: (
            "pybloom-live BloomFilter.add (list of str)",
            lambda: m.BloomFilter(capacity=n, error_rate=fpr), add_each,
            lambda f: all(k in f for k in keys_list))),
        ("bloom-filter2", "bloom_filter2", lambda m: (
            "bloom-filter2 BloomFilter.add (list of str)",
            lambda: m.BloomFilter(max_elements=n, error_rate=fpr), add_each,
            lambda f: all(k in f for k in keys_list))),
    ]
    for package, module, case in others:
        try:
            found = importlib.import_module(module)
        except ImportError as e:
            yield (package, e, None, None)
        else:
            yield case(found)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=10_000_000)
    ap.add_argument("--fpr", type=float, default=0.01)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    n = args.keys

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    keys_arrow = pc.binary_join_element_wise(
        "key-", pc.cast(pa.array(np.arange(n, dtype=np.int64)), pa.string()), "")
    keys_list = keys_arrow.to_pylist()
    print(f"{n:,} keys, target false positive rate {args.fpr}, best of {args.runs} runs")
    print(f"| {'filter and input':<46} | {'seconds':>8} | {'M keys/s':>8} |")
    print(f"|{'-' * 48}|{'-' * 9}:|{'-' * 9}:|")
    for name, make, insert, check in cases(n, args.fpr, keys_arrow, keys_list):
        if insert is None:
            print(f"| {name:<46} | not installed ({make}) |")
            continue
        try:
            # Slow pure-Python packages are timed once.
            runs = 1 if "pybloom" in name or "bloom-filter2" in name else args.runs
            seconds, filt = timed(make, insert, runs)
            ok = check(filt)
        except Exception as e:  # a package that fails is reported, not fatal
            print(f"| {name:<46} | failed: {type(e).__name__}: {e} |")
            continue
        flag = "" if ok else " (false negatives!)"
        print(f"| {name:<46} | {seconds:8.2f} | {n / seconds / 1e6:8.2f} |{flag}")


if __name__ == "__main__":
    main()
