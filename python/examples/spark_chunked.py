#!/usr/bin/env python3
"""A Bloom filter larger than a Python worker's memory, built by chunk in Spark's local[2],
against one process.

    python spark_chunked.py [--keys 40000000] [--fpr 0.0047] [--max-m 8589934592]
                            [--partitions 20] [--master local[2]]
                            [--python-memory 768m] [--driver-memory 2g] [--coding auto]

The plan is `plan_for_fpr(keys, fpr, max_m=...)`: by default 40M keys at 0.47% in 8.49e9
bits (k = 1), a bit array of 1.06 GB whose frame is about 46 MB. What limits what in
local mode: the tasks run in Python worker processes, each limited by
`spark.executor.pyspark.memory` (PySpark sets it as the worker's address-space limit,
RLIMIT_AS; 768 MiB by default here, of which about 310 MB is the interpreter with
PySpark, pyarrow and NumPy loaded: a worker cannot allocate the 1.06 GB bit array, nor
half of it); the executor is the driver's JVM (`spark.driver.memory`, 2 GiB by default
here), which holds the shuffle's blocks (bytes) and never the bits. `Plan.chunked_build` of
the Python worker's memory chooses the chunk shift, and `bloomwire.spark.build_chunked`
builds the frame: `mapInArrow` turns each partition's keys (made by Spark: `spark.range`
and a concatenation) into positions by chunk, `partitionBy` shuffles them to one partition
per chunk, each chunk's ones are counted, and a second job (for the codings with q0) codes
each chunk from the same shuffle files; the driver assembles the payloads. The same keys
are then made with pyarrow and inserted in this process alone, and the filter encoded with
the same coding and chunk shift.

Printed: keys, partitions, chunks; both frames' SHA-256 and whether they are identical;
both wall times, and the CPU time of Spark's processes (the JVM and its Python workers)
and of this process; the shuffle's bytes (Spark's stage metrics, from its REST API on this
machine) and the stages it skipped (the second job reusing the shuffle) against the bit
array; the largest resident memory of a Python worker (sampled every 0.2 s); the final
frame's size. Needs the spark extra (from a checkout,
`pip install './python[spark]'`, which brings psutil) and Java.
"""

import hashlib
import json
import os
import sys
import threading
import time
import urllib.request

import psutil

import bloomwire
import bloomwire.spark
from example_common import (
    chunked_parser,
    cpu_seconds,
    finish_build,
    make_keys,
    mb,
    print_bit_array,
    print_plan,
    ranges,
)


def api(spark, path):
    """A resource of the REST API of the application's own web UI (on localhost)."""
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/{path}"
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.load(response)


class Processes(threading.Thread):
    """Spark's processes (the JVM and its Python workers, which come and go): their CPU time
    and the largest resident memory a Python worker reached, sampled every `every` s."""

    def __init__(self, jvm, every=0.2):
        super().__init__(daemon=True)
        self.jvm, self.every = jvm, every
        self.peak_python = 0
        self.cpu = {}  # pid: the last CPU time seen
        self.done = threading.Event()

    def sample(self):
        for p in [self.jvm, *self.jvm.children(recursive=True)]:
            try:
                with p.oneshot():
                    t = p.cpu_times()
                    self.cpu[p.pid] = t.user + t.system
                    if p is not self.jvm and "python" in p.name():
                        self.peak_python = max(self.peak_python, p.memory_info().rss)
            except psutil.Error:
                pass

    def run(self):
        while not self.done.is_set():
            self.sample()
            self.done.wait(self.every)


def main():
    ap = chunked_parser(__doc__.splitlines()[0])
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--python-memory", default="768m",
                    help="spark.executor.pyspark.memory: each Python worker's limit")
    ap.add_argument("--driver-memory", default="2g", help="spark.driver.memory (the JVM)")
    ap.add_argument("--coding", default="auto")
    args = ap.parse_args()

    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master(args.master).appName("bloomwire-spark-chunked")
             .config("spark.ui.port", "0").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", args.driver_memory)
             .config("spark.executor.pyspark.memory", args.python_memory)
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    df = (spark.range(0, args.keys, numPartitions=args.partitions)
          .select(F.concat(F.lit("key-"), F.col("id").cast("string")).alias("key")))
    plan = bloomwire.plan_for_fpr(args.keys, args.fpr, max_m=args.max_m)
    raw = (plan.m + 7) // 8
    memory = bloomwire.spark.python_worker_memory(df)
    shift = plan.chunked_build(memory)
    if shift is None:
        raise SystemExit(f"a Python worker of {args.python_memory} holds the whole filter")
    chunks = -(-plan.m // (1 << shift))
    print_plan(args.keys, args.partitions, plan, raw, "bit array ")
    print(f"spark {args.master:<15} Python workers limited to {mb(memory)} each "
          f"(spark.executor.pyspark.memory, {memory / raw:.0%} of the bit array); "
          f"JVM spark.driver.memory {args.driver_memory}")
    print(f"chunks                {chunks} of 2^{shift} bits ({mb((1 << shift) / 8)}), "
          f"plan.chunked_build({memory})")
    print(f"load average          {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (at start)")

    gateway = spark.sparkContext._gateway
    jvm = psutil.Process(gateway.proc.pid) if getattr(gateway, "proc", None) else \
        psutil.Process()
    procs = Processes(jvm)
    procs.sample()
    cpu_before = dict(procs.cpu)
    stages_before = max((s["stageId"] for s in api(spark, "stages")), default=-1)
    jobs_before = max((j["jobId"] for j in api(spark, "jobs")), default=-1)
    procs.start()
    start, driver_cpu = time.perf_counter(), cpu_seconds()
    frame = bloomwire.spark.build_chunked(df, "key", plan, coding=args.coding)
    spark_time, driver_cpu = time.perf_counter() - start, cpu_seconds() - driver_cpu
    procs.done.set()
    procs.join()
    procs.sample()
    spark_cpu = sum(v - cpu_before.get(pid, 0) for pid, v in procs.cpu.items())
    # The UI's listener catches up with the jobs after they end: read them once it has
    # shown the same finished jobs for a second.
    seen, stable = None, 0
    while stable < 10:
        jobs = [j for j in api(spark, "jobs") if j["jobId"] > jobs_before]
        now = sorted((j["jobId"], j["status"]) for j in jobs)
        done = all(status != "RUNNING" for _, status in now)
        stable = stable + 1 if now == seen and done else 0
        seen = now
        time.sleep(0.1)
    stages = [s for s in api(spark, "stages")
              if s["stageId"] > stages_before and s["status"] != "SKIPPED"]
    written = sum(s.get("shuffleWriteBytes", 0) for s in stages)
    read = sum(s.get("shuffleReadBytes", 0) for s in stages)
    skipped = sum(j.get("numSkippedStages", 0) for j in jobs)
    spark.stop()

    limits = {"max_m": plan.m, "max_payload": raw + 4096, "max_filter_bytes": raw}
    info = bloomwire.frame_info(frame, **limits)
    start, single_cpu = time.perf_counter(), cpu_seconds()
    single = plan.new_filter()
    for lo, hi in ranges(args.keys, args.partitions):
        single.insert_array(make_keys(lo, hi))
    one = single.encode(info.coding, chunk_shift=shift)
    single_time, single_cpu = time.perf_counter() - start, cpu_seconds() - single_cpu

    print(f"single process        {single_time:6.2f} s wall, {single_cpu:6.2f} s CPU   "
          f"frame sha256 {hashlib.sha256(one).hexdigest()[:16]}")
    print(f"spark by chunk        {spark_time:6.2f} s wall, {spark_cpu:6.2f} s CPU in Spark's "
          f"processes, {driver_cpu:.2f} s in this one   frame sha256 "
          f"{hashlib.sha256(frame).hexdigest()[:16]}   identical: {frame == one}")
    print(f"jobs                  {len(jobs)} jobs, {len(stages)} stages run, {skipped} "
          f"skipped (a job reusing the shuffle's map output): "
          + "; ".join(f"{j['name'].split(' at ')[0]} ({j['numTasks']} tasks)" for j in
                      sorted(jobs, key=lambda j: j["jobId"])))
    print("stages                " + "; ".join(
        f"{st['numTasks']} tasks {st['executorRunTime'] / 1000:.1f} s"
        f"{' (map: keys, positions, shuffle write)' if st.get('shuffleWriteBytes') else ''}"
        for st in sorted(stages, key=lambda st: st["stageId"])) + " (task time, summed)")
    print(f"positions shuffled    {mb(written)} written, {mb(read)} read (Spark's shuffle: "
          f"4 bytes a position, {info.n * plan.k:,.0f} positions, in pickled batches)")
    print(f"payloads              {mb(info.payload_len)} to the driver, with their table of "
          f"lengths")
    print_bit_array(raw, "shuffle written", written, info)
    print(f"python worker memory  largest resident set {mb(procs.peak_python)} of a "
          f"{mb(memory)} address-space limit")
    finish_build(frame, raw, info, frame == one, "frames", chunks)


if __name__ == "__main__":
    main()
