#!/usr/bin/env python3
"""A tour of the bloomwire package: plan, build, encode, decode a frame made by the Rust
program, and follow a sender's deltas.

    python tour.py [--cli PATH/TO/bloomwire] [--keys N]

Without --cli the Rust part is skipped. Exits non-zero if any check fails.
"""

import argparse
import os
import subprocess
import tempfile
import time

import bloomwire


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", help="the `bloomwire` program, to decode a frame it built")
    ap.add_argument("--keys", type=int, default=100_000, help="keys in the filter")
    ap.add_argument("--dir", help="where to write the keys file and frames")
    args = ap.parse_args()
    n = args.keys
    keys = [f"url-{i}" for i in range(n)]

    # Plan: the fewest bytes for a 1% false positive rate, and the lowest rate in 100 kB.
    plan = bloomwire.plan_for_fpr(n, 0.01)
    print(f"plan for 1%:      m = {plan.m}, k = {plan.k:g}, "
          f"{plan.bytes:.0f} bytes expected, fpr {plan.fpr:.4f}")
    budget = bloomwire.plan(n, 100_000)
    print(f"plan for 100 kB:  m = {budget.m}, k = {budget.k:g}, fpr {budget.fpr:.5f}")
    assert plan.fpr <= 0.01 and budget.worst_case_bytes <= 100_000

    # Build and encode.
    f = plan.new_filter()
    f.insert_many(keys)
    frame = f.encode()
    info = bloomwire.frame_info(frame)
    print(f"frame:            {len(frame)} bytes, coding {info.coding} "
          f"({8 * len(frame) / n:.2f} bits per key)")
    assert bloomwire.decode(frame) == f
    absent = sum(f.contains_many(f"absent-{i}" for i in range(100_000)))
    print(f"false positives:  {absent / 100_000:.4f} on 100000 absent keys")

    # A frame made by the Rust program, decoded here.
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            where = args.dir or tmp
            keys_path = os.path.join(where, "keys.txt")
            frame_path = os.path.join(where, "keys.blwr")
            with open(keys_path, "w") as fh:
                fh.write("\n".join(keys) + "\n")
            subprocess.run([args.cli, "build", "--keys", keys_path, "--fpr", "0.01",
                            "-o", frame_path], check=True, capture_output=True)
            with open(frame_path, "rb") as fh:
                theirs = fh.read()
        g = bloomwire.decode(theirs)
        print(f"rust frame:       {len(theirs)} bytes, n = {len(g)}, "
              f"{'same filter' if g == f else 'DIFFERENT filter'}")
        assert all(g.contains_many(keys)) and len(g) == n

    # Follow a sender's generations: 1% of the keys change each round.
    current = list(keys)

    def next_generation(round_):
        for i in range(n // 100):
            current[(round_ * 7919 + i * 104729) % n] = f"r{round_}-{i}"
        g = plan.new_filter()
        g.insert_many(current)
        return g

    sender, receiver = bloomwire.Sender(full_every=10), bloomwire.Receiver()
    g = f
    for round_ in range(1, 6):
        if round_ > 1:
            g = next_generation(round_)
        start = time.perf_counter()
        wire = sender.next_frame(g)
        update = receiver.receive(wire)
        ms = 1000 * (time.perf_counter() - start)
        print(f"round {round_}:          {update.kind:5} generation {update.generation}, "
              f"{len(wire)} bytes, {ms:.1f} ms")
        assert receiver.filter == g and update.generation == round_
        assert update.kind == ("full" if round_ == 1 else "delta")

    # A lost frame is noticed, and a full frame resynchronizes.
    sender.next_frame(next_generation(6))  # lost
    g = next_generation(7)
    try:
        receiver.receive(sender.next_frame(g))
        raise AssertionError("a gap went unnoticed")
    except bloomwire.ResyncNeeded as e:
        print(f"lost a frame:     {type(e).__name__}: {e}")
    sender.request_full()
    g = next_generation(8)
    update = receiver.receive(sender.next_frame(g))
    print(f"resynchronized:   {update}")
    assert update.kind == "full" and receiver.filter == g
    print("all checks passed")


if __name__ == "__main__":
    main()
