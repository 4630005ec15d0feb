"""One filter from a PySpark DataFrame column (the optional extra ``bloomwire[spark]``).

>>> import bloomwire.spark
>>> f = bloomwire.spark.build_filter(df, "user", n="count", fpr=0.01)   # doctest: +SKIP

`build_filter` runs `mapInArrow` over the column: each task inserts its partition's Arrow
batches into a partial filter (in place, the GIL released) and yields the filter's frame
in a one-row binary column. A `treeAggregate` of depth `depth` then merges them by union on
the executors (the partial filters it moves between them travel as their frames), and the
driver merges the last few: the filter one process would build from the same keys, bits
and n alike. Partial filters are sparse, and their
frames cost about their keys, not m. Counting filters go the same way, their counters added
(saturating).

Every frame of the job is decoded within limits that follow from the plan (its m and k).
This is the partial-filter route. A filter larger than one executor's memory takes the route
by chunk, `build_chunked`: `mapInArrow` turns each partition's keys into bit positions
grouped by chunk of `2**shift` bits, the RDD's `partitionBy` shuffles them to one partition
per chunk, where the chunk (`2**shift` bits, never m) is built and its ones counted; the
driver sums them, a second job codes each chunk where the shuffle put its positions (the
shuffle's files are reused: the positions are not made again), and the driver assembles the
payloads into one chunked frame, byte for byte the frame one process encodes with the same
coding and chunk shift. `build_filter` takes that route when given a `chunk_shift`, or a
`worker_memory` that `Plan.chunked_build` says cannot hold the filter.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator
from typing import Any, Literal, Optional, Union

from . import _chunked, _partials
from ._bloomwire import BloomFilter, ChunkedFrame, CountingFilter, Indexer, Plan, decode

__all__ = ["build_chunked", "build_filter", "partial_frames"]


def _partials_of(spec: _partials.FilterSpec) -> Any:
    """The `mapInArrow` function of a job: a partition's batches in, one batch of one
    frame out."""

    def partials(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]

        frame = _partials.partial_frame_of_batches(spec, batches)
        yield pa.RecordBatch.from_arrays([pa.array([frame], pa.binary())], names=["frame"])

    return partials


def partial_frames(df: Any, column: str, spec: _partials.FilterSpec) -> Any:
    """A DataFrame of one binary column, `frame`: the partial filter of each partition of
    `df[column]`, the first step of `build_filter`, for callers that merge them
    otherwise."""
    return df.select(column).mapInArrow(_partials_of(spec), "frame binary")


def build_filter(
    df: Any,
    column: str,
    plan: Optional[Plan] = None,
    *,
    n: Union[int, Literal["count"], None] = None,
    fpr: Optional[float] = None,
    counting_width: Optional[int] = None,
    depth: int = 2,
    result: Literal["filter", "frame"] = "filter",
    worker_memory: Optional[int] = None,
    chunk_shift: Optional[int] = None,
) -> Union[BloomFilter, CountingFilter, bytes]:
    """One filter of every value of the column `column` of the PySpark DataFrame `df`
    (string, binary or integer; nulls skipped).

    The parameters are `plan`'s, or those of `plan_for_fpr(n, fpr)`; `n="count"` counts
    the DataFrame's rows first (`df.count()`: nulls and duplicates count, an upper bound of
    the keys). With `counting_width` the filter is a `CountingFilter` of counters of that
    many bits. Keys are hashed as `insert_array` hashes them: strings as UTF-8, binary as
    is, integers as their little-endian bytes at the column's width (a Spark `bigint` 7 is
    `(7).to_bytes(8, "little", signed=True)`).

    The frames are merged by `treeAggregate(depth=depth)`. `result="frame"` returns the
    final frame (bytes) instead of the filter.

    A Bloom filter that an executor's Python worker of `worker_memory` bytes cannot hold
    (`plan.chunked_build(worker_memory)`; by default the session's
    `spark.executor.pyspark.memory`, if set), or any with a `chunk_shift`, is built by chunk
    instead (`build_chunked`, coding "auto"): its result is the chunked frame, or with
    `result="filter"` that frame decoded on the driver (which then holds the filter).
    """
    if result not in ("filter", "frame"):
        raise ValueError(f'result is "filter" or "frame", not {result!r}')
    plan = _partials.resolve_plan(plan, n, fpr, df.count)
    if counting_width is not None and chunk_shift is not None:
        raise ValueError("counting filters are not built by chunk (their codings are not "
                         "chunked): drop chunk_shift")
    if counting_width is None:
        memory = worker_memory if worker_memory is not None else python_worker_memory(df)
        shift = _chunked.chunk_shift(plan, memory, chunk_shift)
        if shift is not None:
            frame = build_chunked(df, column, plan, chunk_shift=shift)
            if result == "frame":
                return frame
            return decode(frame, max_m=plan.m, max_k=math.ceil(plan.k),
                          max_payload=max(len(frame), 1 << 26),
                          max_filter_bytes=-(-plan.m // 8))
    spec = _partials.FilterSpec.of(plan, counting_width)
    frames = partial_frames(df, column, spec).rdd.map(lambda row: bytes(row[0]))
    merged = frames.treeAggregate(
        None,
        lambda acc, frame: _partials.fold_frame(acc, frame, spec),
        _partials.fold_partials,
        depth=depth,
    )
    f = merged.filter if merged is not None else spec.empty()
    return f.encode() if result == "frame" else f


def python_worker_memory(df: Any) -> Optional[int]:
    """The memory of an executor's Python worker, `spark.executor.pyspark.memory` of `df`'s
    session, in bytes; None when it is not set (Python workers are then limited by nothing
    Spark knows of)."""
    try:
        conf = df.sparkSession.sparkContext.getConf()
    except AttributeError:  # Spark Connect: no SparkContext
        return None
    value = conf.get("spark.executor.pyspark.memory")
    if not value:
        return None
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    value = value.strip().lower().rstrip("b")
    if value and value[-1] in units:
        return int(float(value[:-1]) * units[value[-1]])
    return int(value) * (1 << 20)  # Spark reads a number without a unit as MiB


def _positions_of(job: _chunked.ChunkJob) -> Any:
    """The `mapInArrow` function of phase 1: a partition's batches of keys in, batches of
    `(chunk, positions)` rows out (and one row carrying its count of keys)."""

    def positions(batches: Iterator[Any]) -> Iterator[Any]:
        return _chunked.position_batches(job, batches)

    return positions


def _chunk_partition(job: _chunked.ChunkJob, frame: Optional[ChunkedFrame]) -> Any:
    """The function of a chunk's partition after the shuffle (partition `i < chunks` holds
    chunk i's positions, the last one the partitions' counts of keys): the chunk built
    from its pieces as they stream in, and its ones (phase 1) or its payload in `frame`
    (phase 2); the count partition yields the number of keys."""
    count = job.chunk_count

    def run(index: int, rows: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
        if index == count:
            yield -1, sum(struct.unpack("<Q", bytes(blob))[0] for _, blob in rows)
            return
        chunk = _chunked.build_chunk(job, index, (blob for _, blob in rows))
        if frame is None:
            yield index, chunk.count_ones()
        else:
            yield index, chunk.encode(frame)

    return run


def build_chunked(
    df: Any,
    column: str,
    plan: Optional[Plan] = None,
    *,
    n: Union[int, Literal["count"], None] = None,
    fpr: Optional[float] = None,
    worker_memory: Optional[int] = None,
    chunk_shift: Optional[int] = None,
    coding: str = "auto",
    metadata: Optional[bytes] = None,
    key: Optional[bytes] = None,
    budget: Optional[int] = None,
    generation: int = 0,
) -> bytes:
    """The frame (bytes) of the Bloom filter of every value of `df[column]` (string, binary
    or integer, as `build_filter` takes it), built by chunk: no Python worker holds more
    than a chunk of `2**shift` bits of it.

    The plan is `plan`, or `plan_for_fpr(n, fpr)` (`n="count"`: `df.count()` first). The
    chunk shift is `chunk_shift`, else `plan.chunked_build(worker_memory)`, by default with
    the session's `spark.executor.pyspark.memory` (ValueError when none is known or a worker
    holds the whole filter: give `chunk_shift`). The coding is named (adaptive, known-p,
    known-p-symbols, known-p-interleaved, positional, dense, wide), or "auto": positional while at
    most one bit in 40 is one, else dense. `metadata`, `key` (used on the driver only),
    `budget` and `generation` as in `encode`.

    Phase 1: `mapInArrow` turns each partition's keys into bit positions grouped by chunk
    (4 bytes each while `shift <= 32`; rows of about a million keys' positions per chunk),
    and the RDD's `partitionBy` with one partition per chunk (and one for the counts of
    keys) shuffles them; each chunk's partition builds the chunk from its rows as they
    stream in and counts its ones. Phase 2 (codings with q0, and "auto"): a second job over
    the same shuffled RDD (Spark reuses the shuffle's files: the keys are not hashed again)
    builds each chunk again and codes it with the frame's q0. The driver collects the
    payloads and assembles the frame, byte for byte `f.encode(coding, chunk_shift=shift,
    ...)` of the filter one process builds from the same keys.
    """
    plan = _partials.resolve_plan(plan, n, fpr, df.count)
    memory = worker_memory if worker_memory is not None else python_worker_memory(df)
    shift = _chunked.chunk_shift(plan, memory, chunk_shift)
    if shift is None:
        raise ValueError(
            f"a worker of {memory} bytes holds the whole filter ({plan.receiver_bytes} bytes): "
            "give chunk_shift to build it by chunk anyway, or use build_filter"
            if memory else "give chunk_shift or worker_memory (spark.executor.pyspark.memory "
                           "is not set)")
    indexer = Indexer(plan)
    job = _chunked.ChunkJob(indexer, shift)
    ChunkedFrame(indexer, 0, 0, shift, "positional")  # the shift checked before any work
    if coding != _chunked.AUTO:
        ChunkedFrame(indexer, 0, 0, shift, coding)  # and the coding
    count = job.chunk_count

    rows = (df.select(column).mapInArrow(_positions_of(job), "chunk long, positions binary")
            .rdd.map(lambda row: (row[0], row[1])))
    # One partition per chunk, and the last for the partitions' counts of keys.
    shuffled = rows.partitionBy(count + 1, lambda c: c if c >= 0 else count)
    if _chunked.needs_ones(job, coding):
        found = dict(shuffled.mapPartitionsWithIndex(_chunk_partition(job, None)).collect())
        n_keys = found.pop(-1)
        ones = sum(found.values())
        coding = _chunked.choose_coding(job, coding, n_keys, ones, metadata=metadata,
                                         key=key, budget=budget)
        frame = _chunked.worker_frame(job, coding, n_keys, ones)
        payloads = dict(shuffled.mapPartitionsWithIndex(_chunk_partition(job, frame)).collect())
        payloads.pop(-1)
    else:
        frame = _chunked.worker_frame(job, coding, 0, 0)
        found = dict(shuffled.mapPartitionsWithIndex(_chunk_ones_and_payloads(job, frame))
                     .collect())
        n_keys = found.pop(-1)
        ones = sum(o for o, _ in found.values())
        payloads = {i: p for i, (_, p) in found.items()}
    return _chunked.assemble(job, coding, n_keys, ones, payloads, metadata=metadata, key=key,
                             budget=budget, generation=generation)


def _chunk_ones_and_payloads(job: _chunked.ChunkJob, frame: ChunkedFrame) -> Any:
    """One phase, for a coding without q0: each chunk's ones and payload together."""
    count = job.chunk_count

    def run(index: int, rows: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
        if index == count:
            yield -1, sum(struct.unpack("<Q", bytes(blob))[0] for _, blob in rows)
            return
        chunk = _chunked.build_chunk(job, index, (blob for _, blob in rows))
        yield index, (chunk.count_ones(), chunk.encode(frame))

    return run
