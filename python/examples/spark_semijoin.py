#!/usr/bin/env python3
"""Semi-join on Spark: filter a big side by the bloomwire filter of a small side's keys,
against the hand-written predicate, Spark's own join, and Spark's own Bloom filter.

From a checkout (the spark extra installs PySpark, pyarrow and pandas; Spark needs Java
17 or later):

    pip install './python[spark]'
    python3 python/examples/spark_semijoin.py --big 10000000 --small 1000000

The big side is `--big` rows of (key, value), keys drawn uniformly from [0, 10 * small)
(bigint, or with `--string-keys` the strings "key-0", ...) by `rand` in the JVM (made
again by every query: each method pays the same); the small side is the keys 0, 10, 20,
... (`--small` of them), so a tenth of the big rows find a match. Printed: the rows each
method keeps, the exact join's rows, the filter's false positive rate measured on the big
rows that have no match (against the plan's), the bytes shipped, and wall times of

- `bloomwire.spark.semi_join` (the frame broadcast once, decoded once per Python worker,
  every batch queried in bulk in an Arrow UDF), and with `--forms` the same predicate as
  an Arrow UDF, a pandas UDF and a `mapInArrow` filter, to compare the forms,
- the hand-written predicate: the frame broadcast, decoded in a pandas UDF for every batch
  and queried key by key (`contains_many`),
- Spark's join of the big side with the small side, without pruning, and after the
  semi-join,
- Spark's own Bloom filter, `df.stat.bloomFilter(key, n, fpr)` (reached through `_jdf`):
  its size, its build time and its false positive rate measured on keys that are not in it.
"""

from __future__ import annotations

import math
import os
import sys
from typing import Any, Optional

import bloomwire
import bloomwire.spark
import example_common as common

STRIDE = 10


def hand_written_udf(broadcast: Any, string_keys: bool = False) -> Any:
    """What a user writes without `semi_join`: a pandas UDF that decodes the broadcast frame
    for every batch and queries the keys one by one."""
    import numpy as np
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    def member(keys: pd.Series) -> pd.Series:
        f = bloomwire.decode(broadcast.value)
        values = keys.tolist() if string_keys else [
            k.to_bytes(8, "little", signed=True) for k in keys.tolist()]
        return pd.Series(np.fromiter(f.contains_many(values), dtype=bool, count=len(values)))

    member.__annotations__ = {"keys": pd.Series, "return": pd.Series}
    return pandas_udf(member, "boolean")


def map_in_arrow_filter(shipped: bloomwire.spark.Shipped, on: str) -> Any:
    """The same predicate as a `mapInArrow` filter of whole rows (for --forms)."""
    from bloomwire import _membership

    query, broadcast = shipped.query, shipped.broadcast

    def keep(batches: Any) -> Any:
        f = _membership.filter_of(query, lambda: broadcast.value)
        for batch in batches:
            yield batch.filter(_membership.contains_arrow(f, batch.column(on)))

    return keep


def spark_bloom_filter(small: Any, big_universe: int, n: int, fpr: float, spark: Any,
                       probes: int, times: dict[str, float],
                       string_keys: bool = False) -> dict[str, Any]:
    """Spark's own filter of the small side's keys: size, build time and the false
    positive rate measured on `probes` keys that are not in it (queried in the JVM)."""
    jvm = spark.sparkContext._jvm
    bf = common.timed("spark_bloom_build",
                      lambda: small._jdf.stat().bloomFilter("key", n, fpr), times)
    out = jvm.java.io.ByteArrayOutputStream()
    bf.writeTo(out)
    # Keys above the small side's range are not in it: each queried with one call into the
    # JVM (tens of microseconds each, so the probes are tens of thousands, not millions).
    start = big_universe + 1
    hits = 0
    for i in range(probes):
        absent = start + i * STRIDE + 1 + (i % (STRIDE - 1))
        if (bf.mightContainString(f"key-{absent}") if string_keys
                else bf.mightContainLong(absent)):
            hits += 1
    return {"bits": int(bf.bitSize()), "serialized_bytes": int(out.size()),
            "expected_fpp": float(bf.expectedFpp()), "probes": probes,
            "measured_fpr": hits / probes}


def run(big_rows: int, small_keys: int, *, partitions: int, fpr: float = 0.01, seed: int = 1,
        spark: Optional[Any] = None, forms: bool = False, joins: bool = True,
        spark_filter: bool = True, probes: int = 20_000, string_keys: bool = False,
        quiet: bool = False) -> dict[str, Any]:
    """Run every method; the figures as a dict (what the script prints)."""
    import pyspark
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    own = spark is None
    if own:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        spark = (SparkSession.builder.master("local[2]").appName("bloomwire-semijoin")
                 .config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false")
                 .config("spark.driver.memory", "2g")
                 .config("spark.sql.shuffle.partitions", str(max(2, partitions)))
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
    try:
        universe = small_keys * STRIDE
        def as_key(num: Any) -> Any:
            return F.concat(F.lit("key-"), num.cast("string")) if string_keys else num

        big = (spark.range(0, big_rows, numPartitions=partitions)
               .select(F.floor(F.rand(seed) * universe).cast("long").alias("num"),
                       F.rand(seed + 1).alias("value"))
               .select(as_key(F.col("num")).alias("key"), "num", "value"))
        small = (spark.range(0, small_keys, numPartitions=max(1, partitions // 4))
                 .select(as_key(F.col("id") * STRIDE).alias("key"), F.lit(1).alias("tag")))

        times: dict[str, float] = {}
        # Warm-up, not timed: the JVM's first jobs, the Python workers and their imports
        # of a pandas UDF (the first query to use them would pay it, whichever it is).
        warm = spark.range(0, 1000, numPartitions=2)
        warm.mapInArrow(lambda b: b, "id long").count()
        warm.filter(pandas_udf(lambda s: s >= 0, "boolean")("id")).count()
        plan = bloomwire.plan_for_fpr(small_keys, fpr)
        frame = common.timed("build", lambda: bloomwire.spark.build_filter(
            small, "key", plan, result="frame"), times)
        exact = common.timed("exact", lambda: big.filter(F.col("num") % STRIDE == 0).count(), times)
        shipped = bloomwire.spark.ship(frame, spark=spark)
        kept = common.timed("bloomwire", lambda: big.filter(shipped.contains("key")).count(), times)
        if forms:
            # Each form twice, in turn, the best of two kept (the machine is shared).
            arrow_form = bloomwire.spark.ship(frame, spark=spark, form="arrow")
            pandas_form = bloomwire.spark.ship(frame, spark=spark, form="pandas")
            runs = {
                "form_arrow_udf": lambda: big.filter(arrow_form.contains("key")).count(),
                "form_pandas_udf": lambda: big.filter(pandas_form.contains("key")).count(),
                "form_map_in_arrow": lambda: big.mapInArrow(
                    map_in_arrow_filter(shipped, "key"), big.schema).count(),
            }
            best: dict[str, float] = {}
            for _ in range(2):
                for name, fn in runs.items():
                    got = common.timed(name, fn, times)
                    assert got == kept, (name, got, kept)
                    best[name] = min(best.get(name, math.inf), times[name])
            times.update(best)
        broadcast = spark.sparkContext.broadcast(frame)
        hand = common.timed("hand_written", lambda: big.filter(
            hand_written_udf(broadcast, string_keys)("key")).count(), times)
        if hand != kept:
            raise AssertionError(f"the hand-written predicate kept {hand}, not {kept}")
        out: dict[str, Any] = {}
        if joins:
            join_rows = common.timed("spark_join", lambda: big.join(small, "key").count(), times)
            pruned = common.timed("pruned_join", lambda: big.filter(shipped.contains("key"))
                                  .join(small, "key").count(), times)
            if join_rows != exact or pruned != exact:
                raise AssertionError(f"joins {join_rows} and {pruned} != {exact}")
            out["join_rows"] = join_rows
        if spark_filter:
            out["spark_bloom_filter"] = spark_bloom_filter(small, universe, small_keys, fpr,
                                                           spark, probes, times, string_keys)
        negatives = big_rows - exact
        false_positives = kept - exact
        out.update({
            "engine": f"pyspark {pyspark.__version__}, "
                      f"{spark.sparkContext.master}",
            "big_rows": big_rows, "small_keys": small_keys, "partitions": partitions,
            "keys": "string" if string_keys else "bigint",
            "plan": {"m": plan.m, "k": plan.k, "fpr": plan.fpr},
            "rows_kept": kept, "exact_rows": exact, "false_positives": false_positives,
            "measured_fpr": false_positives / negatives if negatives else 0.0,
            "frame_bytes": len(frame),
            "seconds": {k: round(v, 3) for k, v in times.items()},
            "rows_per_second": {"bloomwire": big_rows / times["bloomwire"],
                                "hand_written": big_rows / times["hand_written"]},
        })
        out["speedup_vs_hand_written"] = times["hand_written"] / times["bloomwire"]
        shipped.unpersist()
        broadcast.unpersist()
        if not quiet:
            report(out)
        return out
    finally:
        if own:
            spark.stop()


def report(out: dict[str, Any]) -> None:
    s = out["seconds"]
    common.print_semijoin_head(out, f" ({out['keys']})", " (broadcast once)")
    rps = out["rows_per_second"]
    print(f"semi-join, bloomwire.spark:             {s['bloomwire']:8.2f} s  "
          f"{rps['bloomwire']:,.0f} rows/s")
    if "form_pandas_udf" in s:
        print(f"  forms, best of two: arrow UDF {s['form_arrow_udf']:.2f} s, pandas UDF "
              f"{s['form_pandas_udf']:.2f} s, mapInArrow {s['form_map_in_arrow']:.2f} s")
    print(f"semi-join, hand-written pandas UDF:     {s['hand_written']:8.2f} s  "
          f"{rps['hand_written']:,.0f} rows/s  ({out['speedup_vs_hand_written']:.1f}x slower)")
    if "spark_join" in s:
        print(f"Spark join, no pruning:                 {s['spark_join']:8.2f} s")
        print(f"Spark join after semi-join:             {s['pruned_join']:8.2f} s")
    if "spark_bloom_filter" in out:
        b = out["spark_bloom_filter"]
        print(f"Spark's df.stat.bloomFilter: {b['bits']:,} bits, {b['serialized_bytes']:,} B "
              f"serialized, built in {s['spark_bloom_build']:.2f} s; expectedFpp "
              f"{b['expected_fpp']:.5f}, measured {b['measured_fpr']:.5f} on {b['probes']:,} "
              "absent keys")


def main() -> None:
    parser = common.semijoin_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--forms", action="store_true",
                        help="also time the predicate as a pandas UDF and by mapInArrow")
    parser.add_argument("--no-joins", action="store_true", help="skip Spark's joins")
    parser.add_argument("--string-keys", action="store_true",
                        help='keys as strings "key-123" instead of bigint')
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    out = run(args.big, args.small, partitions=common.semijoin_partitions(args), fpr=args.fpr,
              forms=args.forms, joins=not args.no_joins, string_keys=args.string_keys,
              quiet=args.json)
    common.semijoin_done(out, args.json)


if __name__ == "__main__":
    main()
