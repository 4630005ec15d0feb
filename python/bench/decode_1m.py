#!/usr/bin/env python3
"""Decoding a 1M-key frame: Python (`bloomwire.decode`) against the Rust program's `decode`.

    python decode_1m.py [--cli PATH] [--runs 9] [--keys 1000000]

The frame is the one `bloomwire build --fpr 0.01` makes of 1M keys (the plan of
`plan_for_fpr(1_000_000, 0.01)`). The program is built with `cargo build --release` unless
--cli names one. Its time is the wall time of `bloomwire decode FRAME -o /dev/null`, process
start and file read included; Python's is `bloomwire.decode(frame)` on bytes already in
memory. Both report the minimum and the median of the runs; the ratio is of the minima.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import bloomwire  # noqa: E402
import helpers  # noqa: E402


def timings(fn, runs):
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return min(out), statistics.median(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", help="the bloomwire program (default: cargo build --release)")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--keys", type=int, default=1_000_000)
    args = ap.parse_args()
    cli = args.cli or helpers.rust_cli(release=True)
    n = args.keys

    with tempfile.TemporaryDirectory() as tmp:
        keys_path = os.path.join(tmp, "keys.txt")
        frame_path = os.path.join(tmp, "keys.blwr")
        with open(keys_path, "w") as fh:
            fh.write("".join(f"key-{i}\n" for i in range(n)))
        subprocess.run([cli, "build", "--keys", keys_path, "--fpr", "0.01", "-o", frame_path],
                       check=True, capture_output=True)
        with open(frame_path, "rb") as fh:
            frame = fh.read()
        info = bloomwire.frame_info(frame)
        plan = bloomwire.plan_for_fpr(n, 0.01)
        assert (info.m, info.k) == (plan.m, plan.k), (info, plan)
        print(f"frame: {len(frame)} bytes, m = {info.m}, k = {info.k:g}, coding {info.coding}, "
              f"chunk shift {info.chunk_shift}")

        decoded = bloomwire.decode(frame)
        assert len(decoded) == n and "key-12345" in decoded

        def rust():
            subprocess.run([cli, "decode", frame_path, "-o", os.devnull], check=True)

        rust()  # warm the page cache
        r_min, r_med = timings(rust, args.runs)
        p_min, p_med = timings(lambda: bloomwire.decode(frame), args.runs)

    print(f"rust   `bloomwire decode`: min {1000 * r_min:7.1f} ms, median {1000 * r_med:7.1f} ms")
    print(f"python bloomwire.decode:   min {1000 * p_min:7.1f} ms, median {1000 * p_med:7.1f} ms")
    print(f"python / rust: {p_min / r_min:.2f} (minima), {p_med / r_med:.2f} (medians)")
    return 0 if p_min <= 1.5 * r_min else 1


if __name__ == "__main__":
    sys.exit(main())
