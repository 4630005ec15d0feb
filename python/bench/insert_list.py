#!/usr/bin/env python3
"""CPU time of inserting (and querying) a Python list of str: bloomwire's `insert_many`
and `contains_many` against rbloom's `Bloom.update` and `in`, paired, alternating.

    python insert_list.py [--keys 10000000] [--fpr 0.01] [--pairs 5]

Each pair makes a fresh list of the keys "key-0" ... "key-{n-1}" for each side (before the
clock starts: no side finds hashes or encodings another run cached in the str objects),
then times both sides in turn, alternating which goes first, on a new filter each,
measured with `time.thread_time()` (CPU time of this thread: what a loaded machine's other
processes do not change). Each side's filter is sized for n keys at `--fpr` by its own
library (bloomwire: `plan_for_fpr`; rbloom: `Bloom(n, fpr)`). Printed: every pair's
seconds, the median of each side and the median of the per-pair ratios bloomwire/rbloom.
rbloom is not a dependency: `pip install rbloom` to run this.
"""

import argparse
import statistics
import time


def fresh_keys(n):
    return [f"key-{i}" for i in range(n)]


def cpu(f):
    start = time.thread_time()
    out = f()
    return time.thread_time() - start, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=10_000_000)
    ap.add_argument("--fpr", type=float, default=0.01)
    ap.add_argument("--pairs", type=int, default=5)
    args = ap.parse_args()
    n = args.keys

    import bloomwire
    import rbloom

    plan = bloomwire.plan_for_fpr(n, args.fpr)
    print(f"{n:,} keys, target false positive rate {args.fpr}, {args.pairs} pairs, "
          "thread CPU seconds")

    def bloomwire_side(keys):
        f = plan.new_filter()
        t_ins, _ = cpu(lambda: f.insert_many(keys))
        t_q, hits = cpu(lambda: f.contains_many(keys))
        assert all(hits) and len(f) == n
        return t_ins, t_q

    def rbloom_side(keys):
        f = rbloom.Bloom(n, args.fpr)
        t_ins, _ = cpu(lambda: f.update(keys))
        t_q, hits = cpu(lambda: [k in f for k in keys])
        assert all(hits)
        return t_ins, t_q

    sides = {"bloomwire": bloomwire_side, "rbloom": rbloom_side}
    times = {name: [] for name in sides}
    for pair in range(args.pairs):
        order = list(sides) if pair % 2 == 0 else list(sides)[::-1]
        for name in order:
            keys = fresh_keys(n)
            times[name].append(sides[name](keys))
            del keys
        b, r = times["bloomwire"][-1], times["rbloom"][-1]
        print(f"pair {pair + 1}: insert bloomwire {b[0]:.3f} s, rbloom {r[0]:.3f} s; "
              f"query bloomwire {b[1]:.3f} s, rbloom {r[1]:.3f} s")
    for i, what in enumerate(["insert", "query"]):
        b = [t[i] for t in times["bloomwire"]]
        r = [t[i] for t in times["rbloom"]]
        ratio = statistics.median(x / y for x, y in zip(b, r))
        print(f"{what}: median bloomwire {statistics.median(b):.3f} s, "
              f"rbloom {statistics.median(r):.3f} s, "
              f"median ratio bloomwire/rbloom {ratio:.2f}")


if __name__ == "__main__":
    main()
