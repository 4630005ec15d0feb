#!/usr/bin/env python3
"""A Bloom filter larger than a worker's memory, built by chunk on a LocalCluster, against
one process.

    python dask_chunked.py [--keys 40000000] [--fpr 0.0047] [--max-m 8589934592]
                           [--partitions 20] [--workers 2] [--memory-limit 512MiB]
                           [--coding auto]

The plan is `plan_for_fpr(keys, fpr, max_m=...)`: by default 40M keys at 0.47% in 8.49e9
bits (k = 1), a bit array of 1.06 GB whose frame is about 46 MB. The LocalCluster has
`--workers` worker processes of one thread, each with Dask's `memory_limit` (the nanny
pauses a worker at 80% of it and restarts it at 95%): by default 512 MiB, half the bit
array. `Plan.chunked_build(memory_limit)` chooses the chunk shift (chunks of a quarter of a
worker, or less), and `bloomwire.dask.build_chunked` builds the frame: positions by chunk
in each partition (the keys "key-0", ... made where they live, with pyarrow), Dask's P2P
shuffle to one partition per chunk, each chunk's ones counted, then each chunk coded where
its positions are; the client assembles the payloads. The same keys are then inserted in
this process alone and the filter encoded with the same coding and chunk shift.

Printed: keys, partitions, chunks; both frames' SHA-256 and whether they are identical;
both wall times, and the CPU time of the workers and of this process; what moved (the
bytes P2P's comm layer sent, Dask's worker-to-worker and worker-to-client transfers, the
chunks' payloads) against the bit array; the largest resident memory a worker reached
(sampled every 0.2 s) against its limit, the times a worker paused at 80% of it and
whether one restarted; the final frame's size. Needs
the dask extra: from a checkout, `pip install './python[dask]'` (psutil comes with
distributed).
"""

import hashlib
import os
import threading
import time

import pandas as pd
import pyarrow as pa

import bloomwire
import bloomwire.dask
from example_common import (
    chunked_parser,
    cpu_seconds,
    finish_build,
    make_keys,
    make_partition,
    mb,
    print_bit_array,
    print_plan,
    ranges,
)


def worker_cpu(dask_worker):
    import psutil

    t = psutil.Process().cpu_times()
    return t.user + t.system


def worker_rss(dask_worker):
    import psutil

    return psutil.Process().memory_info().rss


def task_cpu(dask_scheduler):
    """CPU seconds of the tasks by prefix (the scheduler's cumulative worker metrics)."""
    out = {}
    for k, v in dask_scheduler.cumulative_worker_metrics.items():
        if k[0] == "execute" and k[-2:] == ("thread-cpu", "seconds"):
            out[k[1]] = out.get(k[1], 0) + v
    return out


def p2p_sent(dask_scheduler):
    """The bytes P2P's comm layer sent, from the scheduler's cumulative worker metrics."""
    return sum(v for k, v in dask_scheduler.cumulative_worker_metrics.items()
               if k[:2] == ("p2p", "background-comms") and k[-1] == "bytes")


class PeakMemory(threading.Thread):
    """Samples every worker's resident memory every `every` seconds; `peak` is the largest."""

    def __init__(self, client, every=0.2):
        super().__init__(daemon=True)
        self.client, self.every, self.peak = client, every, 0
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            try:
                self.peak = max([self.peak, *self.client.run(worker_rss).values()])
            except Exception:  # a worker restarting: sample again
                pass
            self.done.wait(self.every)


def main():
    ap = chunked_parser(__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="512MiB", help="Dask's memory_limit per worker")
    ap.add_argument("--coding", default="auto")
    args = ap.parse_args()

    import dask.dataframe as dd
    from dask.utils import parse_bytes
    from distributed import Client, LocalCluster

    limit = parse_bytes(args.memory_limit)
    bounds = ranges(args.keys, args.partitions)
    plan = bloomwire.plan_for_fpr(args.keys, args.fpr, max_m=args.max_m)
    raw = (plan.m + 7) // 8
    shift = plan.chunked_build(limit)
    if shift is None:
        raise SystemExit(f"a worker of {args.memory_limit} holds the whole filter: lower "
                         "--memory-limit or raise --keys")
    chunks = -(-plan.m // (1 << shift))
    print_plan(args.keys, len(bounds), plan, raw, "bit array ")
    print(f"workers               {args.workers} processes of 1 thread, memory_limit "
          f"{mb(limit)} each ({limit / raw:.0%} of the bit array)")
    print(f"chunks                {chunks} of 2^{shift} bits ({mb((1 << shift) / 8)}), "
          f"plan.chunked_build({limit})")
    print(f"load average          {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (at start)")

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        meta = pd.DataFrame({"key": pd.Series([], dtype=pd.ArrowDtype(pa.string()))})
        ddf = dd.from_map(make_partition, bounds, meta=meta, enforce_metadata=False)
        transfers = client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total)
        p2p = client.run_on_scheduler(p2p_sent)
        tasks = client.run_on_scheduler(task_cpu)
        cpu = client.run(worker_cpu)
        client_cpu = cpu_seconds()
        peak = PeakMemory(client)
        peak.start()
        start = time.perf_counter()
        frame = bloomwire.dask.build_chunked(ddf["key"], plan, worker_memory=limit,
                                             coding=args.coding)
        dask_time = time.perf_counter() - start
        peak.done.set()
        peak.join()
        client_cpu = cpu_seconds() - client_cpu
        after = client.run(worker_cpu)
        restarted = set(after) != set(cpu)  # a worker's address changes when it restarts
        workers_cpu = sum(after.values()) - sum(cpu[w] for w in after if w in cpu)
        moved = sum(client.run(lambda dask_worker: dask_worker.transfer_outgoing_bytes_total)
                    .values()) - sum(transfers.values())
        p2p = client.run_on_scheduler(p2p_sent) - p2p
        tasks = {k: v - tasks.get(k, 0) for k, v in client.run_on_scheduler(task_cpu).items()}
        # Dask's memory management: a worker past 80% of its limit pauses until it is below.
        pauses = sum("Pausing worker" in message for log in client.get_worker_logs().values()
                     for _, message in log)

    limits = {"max_m": plan.m, "max_payload": raw + 4096, "max_filter_bytes": raw}
    info = bloomwire.frame_info(frame, **limits)
    start, single_cpu = time.perf_counter(), cpu_seconds()
    single = plan.new_filter()
    for b in bounds:
        single.insert_array(make_keys(*b))
    one = single.encode(info.coding, chunk_shift=shift)
    single_time, single_cpu = time.perf_counter() - start, cpu_seconds() - single_cpu

    digest = hashlib.sha256(frame).hexdigest()[:16]
    print(f"single process        {single_time:6.2f} s wall, {single_cpu:6.2f} s CPU   "
          f"frame sha256 {hashlib.sha256(one).hexdigest()[:16]}")
    print(f"dask by chunk         {dask_time:6.2f} s wall, {workers_cpu:6.2f} s CPU in the "
          f"workers, {client_cpu:.2f} s in the client   frame sha256 {digest}   "
          f"identical: {frame == one}")
    top = sorted(tasks.items(), key=lambda kv: -kv[1])[:5]
    print("task CPU              " + ", ".join(f"{k} {v:.1f} s" for k, v in top))
    print(f"positions shuffled    {mb(p2p)} sent by P2P's comm layer (every shard, those "
          f"for the same worker too; 4 bytes a position, {info.n * plan.k:,.0f} positions)")
    print(f"task transfers        {mb(moved)} (worker to worker and to the client: the "
          f"chunks' payloads, {mb(info.payload_len)} with their table of lengths)")
    print_bit_array(raw, "positions shuffled", p2p, info)
    print(f"worker memory         largest resident set {mb(peak.peak)} of a "
          f"{mb(limit)} limit; {pauses} pauses at 80% of it; "
          f"{'a worker restarted' if restarted else 'no worker restarted'}")
    finish_build(frame, raw, info, frame == one, "frames", chunks)


if __name__ == "__main__":
    main()
