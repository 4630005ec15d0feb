#!/usr/bin/env python3
"""One Bloom filter from a PySpark DataFrame column in local[2], against one process.

    python spark_build.py [--keys 20000000] [--partitions 20] [--master local[2]]
                          [--fpr 0.01] [--depth 2] [--max-m BITS]

The keys are "key-0", "key-1", ... made by Spark itself (`spark.range` and a string
concatenation, `--partitions` partitions). `bloomwire.spark.build_filter` runs
`mapInArrow` (a partial filter per partition, yielded as its frame) and a `treeReduce` that
merges the frames; the same keys are then made in this process with pyarrow, inserted in
one filter, and the two compared. Printed: keys, partitions, both digests and whether the
filters are identical, both wall times, the bytes the executors wrote to each other in the
tree's shuffle (Spark's own stage metrics, from its REST API on this machine) against the
raw partial filters (m/8 bytes each), the partial frames' bytes and the time to make them
alone (a second pass) and the final frame's size. Needs the spark extra (from a checkout,
`pip install './python[spark]'`) and Java.
"""

import argparse
import json
import os
import sys
import time
import urllib.request

import bloomwire
import bloomwire.spark
from example_common import (
    finish_build,
    make_keys,
    mb,
    print_partial_frames,
    print_plan,
    ranges,
)


def shuffle_write_bytes(spark, since_stage):
    """Bytes the stages after `since_stage` wrote to the shuffle, from the REST API of the
    application's own web UI (on localhost)."""
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages"
    with urllib.request.urlopen(url, timeout=30) as response:
        stages = json.load(response)
    return sum(s.get("shuffleWriteBytes", 0) for s in stages if s["stageId"] > since_stage)


def last_stage(spark):
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages"
    with urllib.request.urlopen(url, timeout=30) as response:
        return max((s["stageId"] for s in json.load(response)), default=-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=20_000_000)
    ap.add_argument("--partitions", type=int, default=20)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--fpr", type=float, default=0.01)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--max-m", type=int, help="plan up to this m (default: a default "
                                               "receiver's 2^28 bits)")
    args = ap.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    # The Python workers run this interpreter unless PYSPARK_PYTHON says otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master(args.master).appName("bloomwire-spark-build")
             .config("spark.ui.port", "0").config("spark.driver.memory", "6g")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    plan = bloomwire.plan_for_fpr(args.keys, args.fpr, max_m=args.max_m)
    raw = (plan.m + 7) // 8
    print_plan(args.keys, args.partitions, plan, raw)
    df = (spark.range(0, args.keys, numPartitions=args.partitions)
          .select(F.concat(F.lit("key-"), F.col("id").cast("string")).alias("key")))

    before = last_stage(spark)
    start = time.perf_counter()
    frame = bloomwire.spark.build_filter(df, "key", plan, depth=args.depth, result="frame")
    spark_time = time.perf_counter() - start
    shuffled = shuffle_write_bytes(spark, before)
    # A second pass, timed apart: the partial filters alone, and each one's frame size.
    spec = bloomwire.spark.FilterSpec.of(plan)
    start = time.perf_counter()
    sizes = [r[0] for r in bloomwire.spark.partial_frames(df, "key", spec)
             .select(F.length("frame")).collect()]
    partials_time = time.perf_counter() - start
    spark.stop()

    start = time.perf_counter()
    single = plan.new_filter()
    for lo, hi in ranges(args.keys, args.partitions):
        single.insert_array(make_keys(lo, hi))
    single_time = time.perf_counter() - start

    built = bloomwire.decode(frame, max_m=plan.m, max_payload=raw + 4096)
    print(f"single process        {single_time:6.2f} s   digest {single.digest():#010x}")
    print(f"spark {args.master:<13}   {spark_time:6.2f} s   digest {built.digest():#010x}"
          f"   identical: {built == single}")
    print(f"between executors     {mb(shuffled)} shuffled; raw partial filters "
          f"{len(sizes)} x {mb(raw)} = {mb(len(sizes) * raw)}")
    print_partial_frames(sizes, raw, partials_time)
    info = bloomwire.frame_info(frame, max_m=plan.m, max_payload=raw + 4096)
    finish_build(frame, raw, info, built == single, "filters")


if __name__ == "__main__":
    main()
