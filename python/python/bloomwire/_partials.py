"""The engine-neutral half of `bloomwire.dask` and `bloomwire.spark`: one filter built from
partial filters.

The route: every partition of a collection inserts its keys into an empty filter of the
job's parameters (a *partial filter*, m bits like the final one); partial filters are
merged by union (OR of the bits; for counting filters the counters added, saturating) in a
tree, a few at a time, and the last merge is the filter. A partial filter that moves
between workers travels as its frame (`Partial` pickles so). A partial
filter of few keys is sparse, and the default encoder codes it by its positions, so what
moves between workers grows with the keys of the partition, not with m. The result is the
filter one process would build from the same keys: bits, counters and n alike.

A filter larger than one worker's memory takes another route, by chunk (every key turned
into its positions where it lives, the positions shuffled by chunk index, each chunk built
and encoded where it lands, one chunked frame assembled from the chunks' payloads):
`_chunked`, and `build_chunked` in each engine module.

What travels to the workers is a `FilterSpec`: the frame of the empty filter (its exact
parameters) and the limits every frame of the job is decoded with, which follow from those
parameters: a worker accepts the job's m and k and nothing larger.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Callable, NamedTuple, Optional, Union

from . import _bloomwire
from ._bloomwire import BloomFilter, CountingFilter, Plan

AnyFilter = Union[BloomFilter, CountingFilter]

#: Bytes a frame may need beyond its packed array: a chunk table, the coder's last words.
_PAYLOAD_SLACK = 4096


class FilterSpec(NamedTuple):
    """The filter a job builds: the frame of its empty filter and the limits every frame of
    the job is decoded with (its m and k, the payload of its raw form, its memory)."""

    counting: bool
    empty_frame: bytes
    max_m: int
    max_k: int
    max_payload: int
    max_filter_bytes: int

    @classmethod
    def of(cls, plan: Plan, counting_width: Optional[int] = None) -> FilterSpec:
        """The spec of a plan's filter: a Bloom filter, or a counting filter of
        `counting_width`-bit counters."""
        if counting_width is None:
            empty: AnyFilter = plan.new_filter()
            bits = plan.m
        else:
            empty = plan.new_counting_filter(counting_width)
            bits = plan.m * counting_width
        return cls(
            counting=counting_width is not None,
            empty_frame=empty.encode(),
            max_m=plan.m,
            max_k=math.ceil(plan.k),
            max_payload=max(_bloomwire.DEFAULT_MAX_PAYLOAD, -(-bits // 8) + _PAYLOAD_SLACK),
            # The decoded filter's memory: a byte a counter, or ceil(m / 8) bytes of bits.
            max_filter_bytes=plan.m if counting_width is not None else -(-plan.m // 8),
        )

    def limits(self) -> dict[str, int]:
        """The keyword arguments of `decode` for this job's frames."""
        return {"max_m": self.max_m, "max_k": self.max_k, "max_payload": self.max_payload,
                "max_filter_bytes": self.max_filter_bytes}

    def decode(self, frame: bytes) -> AnyFilter:
        """A frame of this job, decoded within its limits."""
        decode = _bloomwire.decode_counting if self.counting else _bloomwire.decode
        return decode(frame, max_m=self.max_m, max_k=self.max_k, max_payload=self.max_payload,
                      max_filter_bytes=self.max_filter_bytes)

    def empty(self) -> AnyFilter:
        """An empty filter of the job's parameters."""
        return self.decode(self.empty_frame)


def resolve_plan(plan: Optional[Plan], n: Union[int, str, None], fpr: Optional[float],
                 count: Callable[[], int]) -> Plan:
    """The job's plan: `plan` itself, or `plan_for_fpr(n, fpr)`, with n counted by `count`
    when it is "count"."""
    if plan is not None:
        if n is not None or fpr is not None:
            raise ValueError("give a plan, or n and fpr, not both")
        return plan
    if fpr is None or n is None:
        raise ValueError('give a plan, or n (an int, or "count") and fpr')
    if n == "count":
        n = count()
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f'n is an int or "count", not {n!r}')
    return _bloomwire.plan_for_fpr(max(n, 1), fpr)


def insert_values(f: AnyFilter, values: Any) -> None:
    """Insert a partition's values: an Arrow or NumPy column in place, a pandas Series as
    its Arrow or NumPy values, anything else as an iterable of keys (None skipped, as
    Arrow nulls are)."""
    if hasattr(values, "__arrow_c_array__") or hasattr(values, "__arrow_c_stream__") \
            or hasattr(values, "__array_interface__"):
        f.insert_array(values)
        return
    if _is_pandas(values):
        f.insert_array(_pandas_column(values))
        return
    f.insert_many(v for v in values if v is not None)


def _is_pandas(values: Any) -> bool:
    return type(values).__module__.startswith("pandas.") and hasattr(values, "dtype")


def _pandas_column(series: Any) -> Any:
    """A pandas Series as a column: integers as their NumPy array (no copy), everything
    else through pyarrow (Arrow-backed strings without a copy; object columns of str or
    bytes converted, None and NaN as nulls)."""
    kind = getattr(series.dtype, "kind", None)
    if kind in ("i", "u") and type(series.dtype).__module__.startswith("numpy"):
        return series.to_numpy()
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]

    return pa.array(series, from_pandas=True)


class Partial:
    """A filter of the job between tasks. It is pickled as its frame (the default coding:
    a sparse filter costs its keys, not m) whenever the engine moves it to another worker
    or to the driver, and loaded within the job's limits whatever the unpickling limits of
    the process; a task that uses a result where it was made takes the filter as it is,
    neither encoded nor decoded."""

    __slots__ = ("spec", "filter")

    def __init__(self, spec: FilterSpec, filter: AnyFilter) -> None:
        self.spec = spec
        self.filter = filter

    def __reduce__(self) -> tuple[Any, ...]:
        return (_load_partial, (self.spec, self.filter.encode()))


def _load_partial(spec: FilterSpec, frame: bytes) -> Partial:
    return Partial(spec, spec.decode(frame))


def partial(spec: FilterSpec, partition: Any) -> Partial:
    """The partial filter of one partition's values."""
    f = spec.empty()
    insert_values(f, partition)
    return Partial(spec, f)


def partial_frame(spec: FilterSpec, partition: Any) -> bytes:
    """The frame of the partial filter of one partition's values (what moving it costs)."""
    return partial(spec, partition).filter.encode()


def partial_frame_of_batches(spec: FilterSpec, batches: Iterable[Any]) -> bytes:
    """The frame of the partial filter of a partition given as Arrow record batches (the
    first column holds the keys)."""
    f = spec.empty()
    for batch in batches:
        f.insert_array(batch.column(0))
    return f.encode()


def merge(spec: FilterSpec, parts: Sequence[Partial]) -> Partial:
    """The union of partial filters of the job, a new one (the inputs are left as they
    are: an engine may hold a task's result for a retry)."""
    if not parts:
        return Partial(spec, spec.empty())
    out = parts[0].filter.copy()
    for p in parts[1:]:
        out |= p.filter  # type: ignore[operator]
    return Partial(spec, out)


def fold_frame(acc: Optional[Partial], frame: bytes, spec: FilterSpec) -> Partial:
    """An aggregation's step: a frame of the job merged into the accumulator (which the
    engine lets the step change), or the accumulator's start."""
    f = spec.decode(frame)
    if acc is None:
        return Partial(spec, f)
    acc.filter |= f  # type: ignore[operator]
    return acc


def fold_partials(a: Optional[Partial], b: Optional[Partial]) -> Optional[Partial]:
    """An aggregation's combination of two accumulators (the first changed and returned)."""
    if a is None:
        return b
    if b is not None:
        a.filter |= b.filter  # type: ignore[operator]
    return a


def tree(items: list[Any], split_every: int, combine: Callable[[list[Any]], Any]) -> Any:
    """Reduce `items` by `combine` in a tree of fan-in `split_every`: level after level,
    each group of `split_every` items combined into one."""
    if split_every < 2:
        raise ValueError(f"split_every is at least 2, not {split_every}")
    if not items:
        raise ValueError("nothing to reduce")
    while len(items) > 1:
        items = [combine(items[i:i + split_every]) for i in range(0, len(items), split_every)]
    return items[0]
