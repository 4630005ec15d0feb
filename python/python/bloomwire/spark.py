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

A filter is used where the data is by `contains` (a column expression of membership) and
`semi_join` (the rows of a big DataFrame whose key may be in a small side, dropped before
any join's shuffle). What crosses the network:

- Build (`build_filter`): each partition's partial filter travels as its frame (sparse: it
  costs about its keys, not m) through `treeAggregate` to the driver. By chunk
  (`build_chunked`): 4 bytes a key and hash function through the shuffle, then the
  chunks' payloads (the compressed frame) to the driver.
- Query (`contains`, `semi_join`): the filter's frame, broadcast once (`SparkContext.
  broadcast`: the executors fetch it once each, and each Python worker reads it once);
  each Python worker process decodes it once (a cache keyed by the frame's digest; a
  tagged frame verified by that decode with its key) and queries every batch of the key
  column in bulk in an Arrow UDF (`arrow_udf`, PySpark 4.1 and later; a pandas UDF
  before, or with `form="pandas"`), which returns one boolean column; Spark
  filters the rows in the JVM. Only the key column goes to Python and back as booleans;
  the big side's rows do not move for the query, and a semi-join's later join shuffles
  only the rows kept.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, Optional, Union

from . import _chunked, _membership, _partials
from ._partials import FilterSpec
from ._bloomwire import BloomFilter, Chunk, CountingFilter, Plan

__all__ = ["FilterSpec", "build_chunked", "build_filter", "contains", "partial_frames",
           "semi_join"]


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
            return _chunked.decode_built(frame, plan)
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


def _chunk_partition(job: _chunked.ChunkJob, result: Callable[[Chunk], Any]) -> Any:
    """The function of a chunk's partition after the shuffle (partition `i < chunks` holds
    chunk i's positions, the last one the partitions' counts of keys): the chunk built
    from its pieces as they stream in, and what `result` makes of it (its ones in phase 1,
    its payload in phase 2, both for a coding without q0); the count partition yields the
    number of keys."""
    count = job.chunk_count

    def run(index: int, rows: Iterable[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
        if index == count:
            yield -1, sum(struct.unpack("<Q", bytes(blob))[0] for _, blob in rows)
            return
        yield index, result(_chunked.build_chunk(job, index, (blob for _, blob in rows)))

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
    job = _chunked.job_of(plan, memory, chunk_shift, coding,
                          no_memory="spark.executor.pyspark.memory is not set")
    count = job.chunk_count

    rows = (df.select(column).mapInArrow(_positions_of(job), "chunk long, positions binary")
            .rdd.map(lambda row: (row[0], row[1])))
    # One partition per chunk, and the last for the partitions' counts of keys.
    shuffled = rows.partitionBy(count + 1, lambda c: c if c >= 0 else count)
    if _chunked.needs_ones(job, coding):
        ones_of = _chunk_partition(job, lambda chunk: chunk.count_ones())
        found = dict(shuffled.mapPartitionsWithIndex(ones_of).collect())
        n_keys = found.pop(-1)
        ones = sum(found.values())
        coding = _chunked.choose_coding(job, coding, n_keys, ones, metadata=metadata,
                                         key=key, budget=budget)
        frame = _chunked.worker_frame(job, coding, n_keys, ones)
        payload_of = _chunk_partition(job, lambda chunk: chunk.encode(frame))
        payloads = dict(shuffled.mapPartitionsWithIndex(payload_of).collect())
        payloads.pop(-1)
    else:
        frame = _chunked.worker_frame(job, coding, 0, 0)
        both_of = _chunk_partition(job, lambda chunk: (chunk.count_ones(), chunk.encode(frame)))
        found = dict(shuffled.mapPartitionsWithIndex(both_of).collect())
        n_keys = found.pop(-1)
        ones = sum(o for o, _ in found.values())
        payloads = {i: p for i, (_, p) in found.items()}
    return _chunked.assemble(job, coding, n_keys, ones, payloads, metadata=metadata, key=key,
                             budget=budget, generation=generation)


#: The UDF forms of `contains`: "arrow" (`arrow_udf`, PySpark 4.1 and later) and "pandas"
#: (`pandas_udf`). "auto" is "arrow" where PySpark has it: a pandas UDF was 8 to 12% faster
#: (examples/spark_semijoin.py --forms) but receives an integer column with nulls as
#: float64, which cannot hold every 64-bit key; the Arrow UDF receives the keys as they are.
#: The pandas form refuses such a column rather than hash rounded keys.
FORMS = ("auto", "arrow", "pandas")


def _session(spark: Any) -> Any:
    if spark is not None:
        return spark
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None:
        raise ValueError("no active SparkSession: give spark=")
    return session


def _has_arrow_udf() -> bool:
    try:
        from pyspark.sql.functions import arrow_udf  # noqa: F401
    except ImportError:
        return False
    return True


def _membership_udf(query: _membership.Query, broadcast: Any, form: str) -> Any:
    """The UDF of membership over a broadcast frame, in the named form."""
    if form not in FORMS:
        raise ValueError(f"form is one of {', '.join(FORMS)}, not {form!r}")
    if form == "auto":
        form = "arrow" if _has_arrow_udf() else "pandas"
    load = lambda: broadcast.value  # noqa: E731  (read only by the process's one decode)
    if form == "arrow":
        import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]
        from pyspark.sql.functions import arrow_udf

        def member(values: Any) -> Any:
            f = _membership.filter_of(query, load)
            return _membership.contains_arrow(f, values)

        # PySpark reads the UDF's kind from its type hints (Array to Array: scalar).
        member.__annotations__ = {"values": pa.Array, "return": pa.Array}
        return arrow_udf(member, "boolean")  # type: ignore[call-overload]
    import pandas as pd  # type: ignore[import-untyped,import-not-found,unused-ignore]
    from pyspark.sql.functions import pandas_udf

    def member_pandas(values: Any) -> Any:
        if getattr(values.dtype, "kind", None) == "f":
            raise TypeError(
                "a pandas UDF receives an integer column with nulls as float64, which "
                "rounds keys above 2**53: use form=\"arrow\" (PySpark 4.1 and later) or "
                "drop the nulls first")
        f = _membership.filter_of(query, load)
        return pd.Series(_membership.contains_values(f, values), index=values.index)

    member_pandas.__annotations__ = {"values": pd.Series, "return": pd.Series}
    return pandas_udf(member_pandas, "boolean")  # type: ignore[call-overload]


class Shipped:
    """A frame broadcast to the executors, and what queries it: `contains(column)` is the
    membership expression of a column. Returned by `ship`; `unpersist()` lets the
    executors drop the broadcast."""

    def __init__(self, shipment: _membership.Shipment, broadcast: Any, form: str) -> None:
        self.frame_bytes = len(shipment.frame)
        self.query = shipment.query
        self.broadcast = broadcast
        self._udf = _membership_udf(shipment.query, broadcast, form)

    def contains(self, column: Any) -> Any:
        """The membership column expression of `column` (a name or a Column)."""
        return self._udf(column)

    def unpersist(self) -> None:
        self.broadcast.unpersist()


def ship(
    filter: Union[BloomFilter, CountingFilter, bytes],
    *,
    key: Optional[bytes] = None,
    limits: Optional[dict[str, Any]] = None,
    form: str = "auto",
    spark: Any = None,
) -> Shipped:
    """Broadcast a filter's frame once, for any number of `contains` expressions and
    semi-joins. `filter`, `key` and `limits` as in `contains`."""
    shipment = _membership.Shipment.of(filter, key=key, limits=limits)
    session = _session(spark)
    broadcast = session.sparkContext.broadcast(shipment.frame)
    return Shipped(shipment, broadcast, form)


def contains(
    column: Any,
    filter: Union[BloomFilter, CountingFilter, bytes, Shipped],
    *,
    key: Optional[bytes] = None,
    limits: Optional[dict[str, Any]] = None,
    form: str = "auto",
    spark: Any = None,
) -> Any:
    """The membership of `column` (a name or a Column of strings, binary or integers) as a
    boolean Column expression: True where the value may be in `filter`, False where it
    certainly is not (and for a null). Values are hashed as `insert_array` hashes them (a
    Spark `bigint` as 8 little-endian bytes).

    `filter` is a `BloomFilter`, a `CountingFilter` (queried as the Bloom filter of its
    nonzero counters), a frame (bytes: `build_filter(..., result="frame")`, chunked frames
    included), or a `Shipped` from `ship`. The frame, never the filter object, is broadcast
    once (`spark`: the active session by default) and decoded once per Python worker
    process; a tagged frame needs its `key`, and is verified there. `limits` (the keyword
    arguments of `frame_info`) admit a frame above the default limits. `form` picks the UDF:
    "arrow" (`arrow_udf`, PySpark 4.1+), "pandas" (`pandas_udf`: 8 to 12% faster on
    PySpark 4.3, but it refuses an integer column with nulls, which reaches it as
    float64), "auto" the Arrow UDF where PySpark has it.
    """
    shipped = filter if isinstance(filter, Shipped) else ship(
        filter, key=key, limits=limits, form=form, spark=spark)
    return shipped.contains(column)


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
    form: str = "auto",
) -> Any:
    """The rows of the DataFrame `big` whose `on` value may be in `small`: every row whose
    key is in `small`, and the false positives of the filter (about `fpr` of the others).
    A join of the result with `small` is the join of `big` with `small`; the rows dropped
    here never reach its shuffle.

    `small` is the small side: a DataFrame (its column `small_on`, by default `on`), whose
    filter `build_filter` builds (the plan `plan`, or `plan_for_fpr(n, fpr)` with
    `n="count"` counting the small side first) and returns to the driver as its frame; or a
    filter, a frame or a `Shipped` (`key`, `limits` and `form` as in `contains`).
    """
    if isinstance(small, (BloomFilter, CountingFilter, bytes, bytearray, memoryview, Shipped)):
        frame: Any = small
    else:
        if plan is not None:
            fpr, n = None, None
        frame = build_filter(small, small_on if small_on is not None else on, plan, n=n,
                             fpr=fpr, result="frame")
    return big.filter(contains(big[on], frame, key=key, limits=limits, form=form,
                               spark=big.sparkSession))
