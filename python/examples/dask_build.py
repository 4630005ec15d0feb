#!/usr/bin/env python3
"""One Bloom filter from a Dask DataFrame column on a LocalCluster, against one process.

    python dask_build.py [--keys 20000000] [--partitions 20] [--workers 2] [--fpr 0.01]
                         [--split-every 8] [--max-m BITS]

The keys are "key-0", "key-1", ... made where they live (each partition makes its range
with pyarrow), in a Dask DataFrame of `--partitions` partitions on a LocalCluster of
`--workers` worker processes (one thread each). `bloomwire.dask.build_filter` builds a
partial filter per partition and merges the frames in a tree; the same keys are then
inserted in this process alone (made here, partition by partition, with the same code),
and the two filters compared. Printed: keys, partitions, both digests and whether the
filters are identical, both wall times, the bytes the workers sent each other (Dask's own
transfer counters) against the raw partial filters (m/8 bytes each), the partial frames'
bytes and the time to make them alone (a second pass) and the final frame's size.
Needs the dask extra: from a checkout, `pip install './python[dask]'`.
"""

import argparse
import time

import pandas as pd
import pyarrow as pa

import bloomwire
import bloomwire.dask
from example_common import (
    finish_build,
    make_keys,
    make_partition,
    mb,
    print_partial_frames,
    print_plan,
    ranges,
)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=20_000_000)
    ap.add_argument("--partitions", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--fpr", type=float, default=0.01)
    ap.add_argument("--split-every", type=int, default=8)
    ap.add_argument("--max-m", type=int, help="plan up to this m (default: a default "
                                               "receiver's 2^28 bits)")
    args = ap.parse_args()

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    bounds = ranges(args.keys, args.partitions)
    plan = bloomwire.plan_for_fpr(args.keys, args.fpr, max_m=args.max_m)
    raw = (plan.m + 7) // 8
    print_plan(args.keys, len(bounds), plan, raw)

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        meta = pd.DataFrame({"key": pd.Series([], dtype=pd.ArrowDtype(pa.string()))})
        ddf = dd.from_map(make_partition, bounds, meta=meta, enforce_metadata=False)

        start = time.perf_counter()
        frame = bloomwire.dask.build_filter(ddf["key"], plan, split_every=args.split_every,
                                            result="frame")
        dask_time = time.perf_counter() - start
        moved = sum(client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total)
                    .values())
        # A second pass, timed apart: the partial filters alone, and each one's frame size
        # (computed on the workers).
        spec = bloomwire.dask.FilterSpec.of(plan)
        start = time.perf_counter()
        sizes = client.gather(client.map(
            len, client.compute(bloomwire.dask.partial_frames(ddf["key"], spec))))
        partials_time = time.perf_counter() - start

    start = time.perf_counter()
    single = plan.new_filter()
    for b in bounds:
        single.insert_array(make_keys(*b))
    single_time = time.perf_counter() - start

    limits = {"max_m": plan.m, "max_payload": raw + 4096}
    built = bloomwire.decode(frame, **limits)
    print(f"single process        {single_time:6.2f} s   digest {single.digest():#010x}")
    print(f"dask, {args.workers} workers       {dask_time:6.2f} s   digest "
          f"{built.digest():#010x}   identical: {built == single}")
    print(f"between workers       {mb(moved)} moved; raw partial filters "
          f"{len(bounds)} x {mb(raw)} = {mb(len(bounds) * raw)}")
    print_partial_frames(sizes, raw, partials_time)
    finish_build(frame, raw, bloomwire.frame_info(frame, **limits), built == single, "filters")


if __name__ == "__main__":
    main()
