#!/usr/bin/env python3
"""Semi-join on Dask: filter a big side by the bloomwire filter of a small side's keys,
against the hand-written predicate and Dask's own join.

From a checkout (the dask extra installs Dask, distributed and pyarrow):

    pip install './python[dask]'
    python3 python/examples/dask_semijoin.py --big 10000000 --small 1000000

The big side has `--big` rows of (key, value), keys drawn uniformly from [0, 10 * small)
in `--partitions` partitions generated and persisted on the workers (the query times do
not include making them); the small side is the keys 0, 10, 20, ... (`--small` of them),
so a tenth of the big rows find a match. Printed: the rows each method keeps, the exact
join's rows, the filter's false positive rate measured on the big rows that have no
match (against the plan's), the bytes shipped to the workers, and wall times of

- `bloomwire.dask.semi_join` (the frame scattered once to each worker, decoded once per
  worker process, each partition queried in bulk),
- the hand-written predicate: the frame passed to `map_partitions`, decoded in every
  partition and queried key by key (`contains_many`),
- Dask's join (`merge`) of the big side with the small side, without pruning, and the
  same join after the semi-join.

The workers are `--workers` processes of one thread each (a LocalCluster).
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pandas as pd

import bloomwire
import bloomwire.dask
import example_common as common

STRIDE = 10  # the small side's keys are the multiples of STRIDE: a tenth of the big rows match


def big_partition(i: int, rows: int, universe: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng([seed, i])
    return pd.DataFrame({"key": rng.integers(0, universe, rows, dtype=np.int64),
                         "value": rng.random(rows)})


def small_partition(lo: int, hi: int) -> pd.DataFrame:
    keys = np.arange(lo, hi, dtype=np.int64) * STRIDE
    return pd.DataFrame({"key": keys, "tag": np.ones(len(keys), dtype=np.int8)})


def hand_written(part: pd.DataFrame, frame: bytes) -> pd.DataFrame:
    """What a user writes without `semi_join`: the frame decoded in every partition, the
    keys queried one by one."""
    f = bloomwire.decode(frame)
    keys = [k.to_bytes(8, "little", signed=True) for k in part["key"].tolist()]
    return part[np.fromiter(f.contains_many(keys), dtype=bool, count=len(keys))]


def run(big_rows: int, small_keys: int, *, partitions: int, fpr: float = 0.01,
        seed: int = 1, workers: int = 2, joins: bool = True,
        client: Optional[Any] = None, quiet: bool = False) -> dict[str, Any]:
    """Run every method; the figures as a dict (what the script prints)."""
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, wait

    own = None
    if client is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        own = client = Client(cluster)
    try:
        universe = small_keys * STRIDE
        per = -(-big_rows // partitions)
        sizes = [min(per, big_rows - i * per) for i in range(partitions) if big_rows > i * per]
        meta = big_partition(0, 0, 1, seed)
        big = dd.from_map(big_partition, range(len(sizes)), sizes, [universe] * len(sizes),
                          [seed] * len(sizes), meta=meta, enforce_metadata=False)
        step = max(1, -(-small_keys // max(1, partitions // 4)))
        bounds = [(lo, min(lo + step, small_keys)) for lo in range(0, small_keys, step)]
        small = dd.from_map(small_partition, [b[0] for b in bounds], [b[1] for b in bounds],
                            meta=small_partition(0, 0), enforce_metadata=False)
        big, small = client.persist([big, small])
        wait([big, small])
        workers_n = len(client.scheduler_info(n_workers=-1)["workers"])

        times: dict[str, float] = {}
        plan = bloomwire.plan_for_fpr(small_keys, fpr)
        frame = common.timed("build", lambda: bloomwire.dask.build_filter(
            small, plan, column="key", result="frame"), times)
        exact = common.timed("exact", lambda: int((big["key"] % STRIDE == 0).sum().compute()),
                             times)

        kept = common.timed("bloomwire", lambda: len(bloomwire.dask.semi_join(big, frame, "key")),
                            times)
        hand = common.timed("hand_written", lambda: len(big.map_partitions(
            hand_written, frame, meta=meta)), times)
        out: dict[str, Any] = {}
        if joins:
            join_rows = common.timed("dask_join", lambda: len(big.merge(small, on="key")), times)
            pruned = common.timed("pruned_join", lambda: len(
                bloomwire.dask.semi_join(big, frame, "key").merge(small, on="key")), times)
            if join_rows != exact or pruned != exact:
                raise AssertionError(f"joins {join_rows} and {pruned} != {exact}")
            out["join_rows"] = join_rows
        if hand != kept:
            raise AssertionError(f"the hand-written predicate kept {hand}, not {kept}")

        negatives = big_rows - exact
        false_positives = kept - exact
        out.update({
            "engine": f"dask {dask.__version__}, {workers_n} worker processes x 1 thread",
            "big_rows": big_rows, "small_keys": small_keys, "partitions": len(sizes),
            "plan": {"m": plan.m, "k": plan.k, "fpr": plan.fpr},
            "rows_kept": kept, "exact_rows": exact, "false_positives": false_positives,
            "measured_fpr": false_positives / negatives if negatives else 0.0,
            "frame_bytes": len(frame),
            "bytes_shipped": {"bloomwire": len(frame) * workers_n,
                              "hand_written": len(frame) * len(sizes)},
            "seconds": {k: round(v, 3) for k, v in times.items()},
            "rows_per_second": {
                "bloomwire": big_rows / times["bloomwire"],
                "hand_written": big_rows / times["hand_written"],
            },
        })
        out["speedup_vs_hand_written"] = times["hand_written"] / times["bloomwire"]
        if not quiet:
            report(out)
        return out
    finally:
        if own is not None:
            own.close()
            own.cluster.close()


def report(out: dict[str, Any]) -> None:
    s = out["seconds"]
    common.print_semijoin_head(out)
    print(f"bytes shipped: bloomwire {out['bytes_shipped']['bloomwire']:,} (the frame once "
          f"a worker); hand-written up to {out['bytes_shipped']['hand_written']:,} (the frame in "
          "every task's arguments)")
    rps = out["rows_per_second"]
    print(f"semi-join, bloomwire.dask:  {s['bloomwire']:8.2f} s  {rps['bloomwire']:,.0f} rows/s")
    print(f"semi-join, hand-written:    {s['hand_written']:8.2f} s  {rps['hand_written']:,.0f} "
          f"rows/s  ({out['speedup_vs_hand_written']:.1f}x slower)")
    if "dask_join" in s:
        print(f"Dask join, no pruning:      {s['dask_join']:8.2f} s")
        print(f"Dask join after semi-join:  {s['pruned_join']:8.2f} s")


def main() -> None:
    parser = common.semijoin_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-joins", action="store_true", help="skip Dask's joins")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    out = run(args.big, args.small, partitions=common.semijoin_partitions(args), fpr=args.fpr,
              workers=args.workers, joins=not args.no_joins, quiet=args.json)
    common.semijoin_done(out, args.json)


if __name__ == "__main__":
    main()
