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
filter larger than one worker's memory needs the route by chunk (positions shuffled by
chunk index, each chunk encoded where it lands, one chunked frame assembled from them),
which will be a function of its own beside this one.
"""

from __future__ import annotations

import sys
from typing import Any, Literal, Optional, Union

import dask
from dask.delayed import Delayed

from . import _partials
from ._bloomwire import BloomFilter, CountingFilter, Plan

__all__ = ["build_filter", "partial_frames"]


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
    """
    if result not in ("filter", "frame"):
        raise ValueError(f'result is "filter" or "frame", not {result!r}')
    plan = _partials.resolve_plan(plan, n, fpr, lambda: _count(data, column))
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
