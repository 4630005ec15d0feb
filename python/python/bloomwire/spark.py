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
This is the partial-filter route; a filter larger than one executor's memory needs the route
by chunk, which will be a function of its own beside this one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, Optional, Union

from . import _partials
from ._bloomwire import BloomFilter, CountingFilter, Plan

__all__ = ["build_filter", "partial_frames"]


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
    """
    if result not in ("filter", "frame"):
        raise ValueError(f'result is "filter" or "frame", not {result!r}')
    plan = _partials.resolve_plan(plan, n, fpr, df.count)
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
