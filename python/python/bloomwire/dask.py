"""One filter from a Dask collection (the optional extra ``bloomwire[dask]``).

>>> import bloomwire.dask
>>> f = bloomwire.dask.build_filter(ddf["user"], n="count", fpr=0.01)   # doctest: +SKIP

`build_filter` builds a partial filter per partition (each worker inserts its partition's
keys, read in place when they are Arrow or NumPy data) and merges them by union in a tree
of fan-in `split_every`: the filter one process would build from the same keys, bits and n
alike. A partial filter that moves to another worker travels as its frame; one merged where
it was made is neither encoded nor decoded. A partial filter of a partition's keys is sparse, and
its frame costs about its keys, not m (the encoder codes sparse filters by their
positions). Counting filters go the same way, their counters added (saturating).

Every frame of the job is decoded within limits that follow from the plan (its m and k), so
a worker accepts nothing larger than the job's filter whatever its unpickling limits.

This is the partial-filter route: each worker holds one filter of m bits at a time. A
filter larger than one worker's memory takes the route by chunk, `build_chunked`: every
partition turns its keys into bit positions grouped by chunk of `2**shift` bits, Dask's
DataFrame shuffle (P2P on a distributed cluster) brings each chunk's positions to one task,
which builds the chunk (`2**shift` bits, never m) and counts its ones; the client sums them,
each chunk is built again where its positions are (the shuffle's output, persisted) and
coded, and the client assembles the payloads into one chunked frame, byte for byte the
frame one process encodes with the same coding and chunk shift. `build_filter` takes that
route by itself when the plan says a worker cannot hold the filter (`Plan.chunked_build` of
the smallest worker's memory limit).

A filter is used where the data is by `contains` (a column's membership, a boolean Series)
and `semi_join` (the rows of a big frame whose key may be in a small side: the small side's
filter built, then the big side filtered before any shuffle). What crosses the network:

- Build (`build_filter`): each partition's partial filter travels as its frame (sparse: it
  costs about its keys, not m) up the merge tree; the client receives the final frame.
  By chunk (`build_chunked`): 4 bytes a key and hash function through the shuffle, then
  the chunks' payloads (the compressed frame) to the client.
- Query (`contains`, `semi_join`): the filter's frame, never the filter object, once per
  worker: scattered to every worker (`Client.scatter(broadcast=True)`) with a distributed
  client, else one task of the graph holding the bytes. Every task carries only the
  frame's digest and its decoding limits (a few dozen bytes). Each worker process decodes
  the frame once (a cache keyed by the digest; a tagged frame verified by that decode with
  its key) and queries each partition's column in bulk (Arrow or NumPy values read in
  place, the GIL released). The big side's rows do not move for the query; a semi-join's
  later join or shuffle moves only the rows kept.
"""

from __future__ import annotations

import sys
from typing import Any, Literal, Optional, Union

import dask
from dask.delayed import Delayed

from . import _chunked, _membership, _partials
from ._partials import FilterSpec
from ._bloomwire import BloomFilter, Chunk, ChunkedFrame, CountingFilter, Plan

__all__ = ["FilterSpec", "build_chunked", "build_filter", "contains", "partial_frames",
           "semi_join"]


def _is(data: Any, module: str, name: str) -> bool:
    """Whether `data` is an instance of `module.name`, a module only a caller holding such
    an object has imported (dask.dataframe needs pandas, which a Bag's user may not have)."""
    cls = getattr(sys.modules.get(module), name, None)
    return cls is not None and isinstance(data, cls)


def _column(data: Any, column: Optional[str]) -> Any:
    """The collection of keys: a Series, a DataFrame's column, or a Bag."""
    if column is not None:
        return data[column]
    if _is(data, "dask.dataframe", "DataFrame"):
        raise TypeError("give the column of the DataFrame that holds the keys (column=...)")
    if not (_is(data, "dask.dataframe", "Series") or _is(data, "dask.bag", "Bag")):
        raise TypeError(f"expected a Dask Series, DataFrame or Bag, not {type(data).__name__}")
    return data


def _partitions(data: Any, column: Optional[str]) -> list[Delayed]:
    """One delayed object per partition of a Series, a DataFrame's column, or a Bag."""
    return list(_column(data, column).to_delayed())


def _count(data: Any, column: Optional[str]) -> int:
    """The number of values of the collection (nulls and duplicates counted)."""
    data = _column(data, column)
    if _is(data, "dask.bag", "Bag"):
        return int(data.count().compute())
    return int(len(data))


def _result(part: _partials.Partial, frame: bool) -> Union[BloomFilter, CountingFilter, bytes]:
    """What `build_filter` returns: the filter, or its frame."""
    return part.filter.encode() if frame else part.filter


def partial_frames(data: Any, spec: _partials.FilterSpec, *,
                   column: Optional[str] = None) -> list[Delayed]:
    """The frames of the partial filters of `data`'s partitions, one delayed `bytes` per
    partition: the first step of `build_filter`, for callers that merge them otherwise."""
    task = dask.delayed(_partials.partial_frame, pure=True)
    return [task(spec, p) for p in _partitions(data, column)]


def cluster_worker_memory() -> Optional[int]:
    """The memory limit of the smallest worker of the current client's cluster (bytes), or
    None without a distributed client or without limits."""
    try:
        from distributed import default_client

        client = default_client()
    except (ImportError, ValueError):
        return None
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:  # distributed before the argument: every worker
        info = client.scheduler_info()
    limits = [w.get("memory_limit") or 0 for w in info.get("workers", {}).values()]
    limits = [limit for limit in limits if limit > 0]
    return min(limits) if limits else None


def build_filter(
    data: Any,
    plan: Optional[Plan] = None,
    *,
    column: Optional[str] = None,
    n: Union[int, Literal["count"], None] = None,
    fpr: Optional[float] = None,
    counting_width: Optional[int] = None,
    split_every: int = 8,
    result: Literal["filter", "frame"] = "filter",
    compute: bool = True,
    worker_memory: Optional[int] = None,
    chunk_shift: Optional[int] = None,
) -> Union[BloomFilter, CountingFilter, bytes, Delayed]:
    """One filter of every value of `data`: a Dask Series, a Dask DataFrame (the keys in
    `column`) or a Dask Bag (of str or bytes).

    The parameters are `plan`'s, or those of `plan_for_fpr(n, fpr)`; `n="count"` counts
    the collection's values first (one pass; duplicates and nulls count, so n is an upper
    bound of the keys). With `counting_width` the filter is a `CountingFilter` of counters
    of that many bits. Keys are hashed as the filter's `insert_array` hashes them (str and
    binary values as their bytes, integers as their little-endian bytes at the column's
    width; nulls skipped).

    Partial filters are merged `split_every` at a time. `result="frame"` returns the final
    frame (bytes) instead of the filter; `compute=False` returns the Dask `Delayed` of the
    result instead of computing it.

    A Bloom filter that one worker cannot hold, by `plan.chunked_build(worker_memory)`
    (`worker_memory`: the smallest worker's memory limit by default), or any with a
    `chunk_shift`, is built by chunk instead (`build_chunked`, coding "auto"): its result
    is the chunked frame, or with `result="filter"` that frame decoded on the client (which
    then holds the filter); `compute=False` is refused there (the route computes between
    its phases).
    """
    if result not in ("filter", "frame"):
        raise ValueError(f'result is "filter" or "frame", not {result!r}')
    plan = _partials.resolve_plan(plan, n, fpr, lambda: _count(data, column))
    if counting_width is not None and chunk_shift is not None:
        raise ValueError("counting filters are not built by chunk (their codings are not "
                         "chunked): drop chunk_shift")
    if counting_width is None:
        memory = worker_memory if worker_memory is not None else cluster_worker_memory()
        shift = _chunked.chunk_shift(plan, memory, chunk_shift)
        if shift is not None:
            if not compute:
                raise ValueError("the route by chunk computes between its phases: "
                                 "compute=False is not available for it")
            frame = build_chunked(data, plan, column=column, chunk_shift=shift)
            if result == "frame":
                return frame
            return _chunked.decode_built(frame, plan)
    spec = _partials.FilterSpec.of(plan, counting_width)
    task = dask.delayed(_partials.partial, pure=True)
    merge = dask.delayed(_partials.merge, pure=True)
    parts = [task(spec, p) for p in _partitions(data, column)]
    if not parts:
        final: Delayed = merge(spec, [])
    else:
        final = _partials.tree(parts, split_every, lambda group: merge(spec, group))
    # The client receives the last partial as its frame; the filter is decoded there.
    final = dask.delayed(_result, pure=True)(final, result == "frame")
    if not compute:
        return final
    return final.compute()  # type: ignore[no-any-return]


def _chunk_of_rows(job: _chunked.ChunkJob, index: int, rows: Any) -> Chunk:
    """Chunk `index` from the shuffled rows of its positions (one per partition that had
    any)."""
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]

    # Each row's bytes read in place (Arrow buffers), not copied into Python bytes.
    blobs = pa.array(rows["positions"])
    return _chunked.build_chunk(job, index, (b.as_buffer() for b in blobs if b.is_valid))


def _chunk_ones(job: _chunked.ChunkJob, index: int, rows: Any) -> int:
    """Phase 1 of a chunk: built from its rows, its ones counted, and let go."""
    return _chunk_of_rows(job, index, rows).count_ones()


def _chunk_payload(job: _chunked.ChunkJob, index: int, rows: Any,
                   frame: ChunkedFrame) -> bytes:
    """Phase 2 of a chunk: built from its rows again, and coded in the frame."""
    return _chunk_of_rows(job, index, rows).encode(frame)


def _chunk_ones_and_payload(job: _chunked.ChunkJob, index: int, rows: Any,
                            frame: ChunkedFrame) -> tuple[int, Optional[bytes]]:
    """The one phase of a coding without q0."""
    return _chunked.ones_and_payload(_chunk_of_rows(job, index, rows), frame)


def build_chunked(
    data: Any,
    plan: Optional[Plan] = None,
    *,
    column: Optional[str] = None,
    n: Union[int, Literal["count"], None] = None,
    fpr: Optional[float] = None,
    worker_memory: Optional[int] = None,
    chunk_shift: Optional[int] = None,
    coding: str = "auto",
    metadata: Optional[bytes] = None,
    key: Optional[bytes] = None,
    budget: Optional[int] = None,
    generation: int = 0,
    shuffle_method: Optional[str] = None,
) -> bytes:
    """The frame (bytes) of the Bloom filter of every value of `data` (a Dask Series, a
    DataFrame's `column` or a Bag, as `build_filter` takes it), built by chunk: no worker
    holds more than chunks of `2**shift` bits of it.

    The plan is `plan`, or `plan_for_fpr(n, fpr)` (`n="count"` counts the values first).
    The chunk shift is `chunk_shift`, else `plan.chunked_build(worker_memory)` with the
    smallest worker's memory limit by default (ValueError when a worker holds the whole
    filter: give `chunk_shift`, or use `build_filter`). The coding is named (adaptive,
    known-p, known-p-symbols, known-p-interleaved, positional, dense, wide), or "auto": positional
    while at most one bit in 40 is one, else dense. `metadata`, `key` (used on the client
    only), `budget` and `generation` as in `encode`.

    Phase 1: each partition's keys become bit positions grouped by chunk (4 bytes each
    while `shift <= 32`), one row per chunk, shuffled to their chunk by `set_index` on the
    chunk with one division per chunk (`shuffle_method`: Dask's default, P2P on a
    distributed cluster); the shuffle's output stays on the workers (persisted), and each
    chunk is built from its rows and counts its ones. Phase 2: the client sums the keys and
    ones, and each chunk is built again where its rows are and coded with the frame's q0;
    the payloads come back in chunk order and are assembled here. A worker thread holds one
    chunk at a time, never the filter. A coding without q0 (positional, adaptive) is coded
    in phase 1. The frame equals, byte for byte, `f.encode(coding, chunk_shift=shift, ...)`
    of the filter one process builds from the same keys.
    """
    import dask.dataframe as dd

    plan = _partials.resolve_plan(plan, n, fpr, lambda: _count(data, column))
    memory = worker_memory if worker_memory is not None else cluster_worker_memory()
    job = _chunked.job_of(plan, memory, chunk_shift, coding,
                          no_memory="no worker memory limit found")
    count = job.chunk_count

    rows = [dask.delayed(_chunked.position_rows, pure=True)(job, p)
            for p in _partitions(data, column)]
    keys = [r[0] for r in rows]
    meta = _chunked.position_frame([], [])
    positions = dd.from_delayed([r[1] for r in rows], meta=meta, verify_meta=False)
    # One division per chunk: partition i of the shuffle's output holds chunk i's rows.
    shuffled = positions.set_index("chunk", divisions=list(range(count + 1)),
                                   shuffle_method=shuffle_method)
    parts = shuffled.to_delayed()
    if len(parts) != count:
        raise RuntimeError(f"the shuffle made {len(parts)} partitions for {count} chunks")
    if _chunked.needs_ones(job, coding):
        # Phase 1: the shuffle's output (each chunk's positions, 4 bytes each) kept on the
        # workers, where Dask spills it to disk under memory pressure; each chunk built from
        # it and its ones counted, one chunk at a time per thread.
        parts, keys = dask.persist(parts, keys)
        count_ones = dask.delayed(_chunk_ones, pure=True)
        ones_each, keys_each = dask.compute([count_ones(job, i, p) for i, p in enumerate(parts)],
                                            keys)
        ones, n_keys = sum(ones_each), sum(keys_each)
        coding = _chunked.choose_coding(job, coding, n_keys, ones, metadata=metadata,
                                         key=key, budget=budget)
        # Phase 2: each chunk built again where its positions are, and coded.
        frame = _chunked.worker_frame(job, coding, n_keys, ones)
        encode = dask.delayed(_chunk_payload, pure=True)
        payloads = dask.compute([encode(job, i, p, frame) for i, p in enumerate(parts)])[0]
        del parts
    else:
        frame = _chunked.worker_frame(job, coding, 0, 0)
        both = dask.delayed(_chunk_ones_and_payload, pure=True)
        results, keys_each = dask.compute([both(job, i, p, frame) for i, p in enumerate(parts)],
                                          keys)
        ones, n_keys = sum(r[0] for r in results), sum(keys_each)
        payloads = [r[1] for r in results]
    return _chunked.assemble(job, coding, n_keys, ones, dict(enumerate(payloads)),
                             metadata=metadata, key=key, budget=budget, generation=generation)


def _distributed_client() -> Any:
    """The current distributed client, or None."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _ship(frame: bytes) -> Any:
    """The frame as a task argument that is sent to each worker once: scattered to every
    worker with a distributed client, else one task of the graph holding the bytes."""
    client = _distributed_client()
    if client is not None:
        return client.scatter(frame, broadcast=True, hash=True)
    return dask.delayed(frame, pure=True)


def _contains_partition(values: Any, query: _membership.Query, frame: Any) -> Any:
    """One partition's membership: a pandas Series of bool with the partition's index."""
    import pandas as pd  # type: ignore[import-untyped,import-not-found,unused-ignore]

    found = _membership.contains_values(_membership.filter_of(query, frame), values)
    return pd.Series(found, index=values.index, name=values.name, dtype=bool)


def _semi_join_partition(df: Any, on: str, query: _membership.Query, frame: Any) -> Any:
    """One partition's rows whose key may be in the filter."""
    f = _membership.filter_of(query, frame)
    return df[_membership.contains_values(f, df[on])]


def contains(
    data: Any,
    filter: Union[BloomFilter, CountingFilter, bytes],
    *,
    column: Optional[str] = None,
    key: Optional[bytes] = None,
    limits: Optional[dict[str, Any]] = None,
) -> Any:
    """Membership of every value of a Dask Series (or a DataFrame's `column`): a Dask
    Series of bool, True where the value may be in `filter`, False where it certainly is
    not (and for a null). Values are hashed as `insert_array` hashes them.

    `filter` is a `BloomFilter`, a `CountingFilter` (queried as the Bloom filter of its
    nonzero counters) or a frame (bytes), such as `build_filter(..., result="frame")`
    returns, chunked frames included. The frame, never the filter object, is sent to each
    worker once (scattered with a distributed client, else held by one task of the graph)
    and decoded once per worker process; a tagged frame needs its `key`, and is verified
    there. `limits` (the keyword arguments of `frame_info`: `max_m`, ...) admit a frame
    above the default limits; the workers then decode it within its own header's m and k.
    """
    series = _column(data, column)
    if _is(series, "dask.bag", "Bag"):
        raise TypeError("contains takes a Dask Series or a DataFrame's column, not a Bag")
    shipment = _membership.Shipment.of(filter, key=key, limits=limits)
    return series.map_partitions(_contains_partition, shipment.query, _ship(shipment.frame),
                                 meta=(series.name, bool))


def semi_join(
    big: Any,
    small: Any,
    on: str,
    *,
    small_on: Optional[str] = None,
    plan: Optional[Plan] = None,
    fpr: Optional[float] = 0.01,
    n: Union[int, Literal["count"], None] = "count",
    key: Optional[bytes] = None,
    limits: Optional[dict[str, Any]] = None,
) -> Any:
    """The rows of the Dask DataFrame `big` whose `on` value may be in `small`: every row
    whose key is in `small`, and the false positives of the filter (about `fpr` of the
    others). A join of the result with `small` is the join of `big` with `small`; the rows
    dropped here never reach its shuffle.

    `small` is the small side's keys: a Dask DataFrame (its column `small_on`, by default
    `on`), a Dask Series or Bag, whose filter is built by `build_filter` (the plan `plan`,
    or `plan_for_fpr(n, fpr)` with `n="count"` counting the small side first) and travels to
    the client as its frame; or a filter or a frame already built (`key` and `limits` as in
    `contains`). The frame then goes to each worker once, as in `contains`.
    """
    if isinstance(small, (BloomFilter, CountingFilter, bytes, bytearray, memoryview)):
        frame: Any = small
    else:
        if plan is not None:
            fpr, n = None, None
        column: Optional[str] = small_on if small_on is not None else on
        if _is(small, "dask.dataframe", "Series") or _is(small, "dask.bag", "Bag"):
            column = None
        frame = build_filter(small, plan, column=column, n=n, fpr=fpr, result="frame")
    shipment = _membership.Shipment.of(frame, key=key, limits=limits)
    return big.map_partitions(_semi_join_partition, on, shipment.query,
                              _ship(shipment.frame), meta=big._meta)
