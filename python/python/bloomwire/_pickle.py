"""Pickling: filters and plans travel as frames, loaded with the receiving side's limits.

A pickled `BloomFilter` or `CountingFilter` is its frame (the default coding, so a sparse
filter costs its keys, not m); a pickled `Plan` is its parameters and figures (nothing of
the size of its filter: a plan for a filter no machine holds pickles in a few hundred
bytes). Loading decodes the frame like `decode` does: checksum, canonical payload, and
the limits, which are the *receiving* side's, never the sender's; a plan's m and k meet
the same limits. `pickle.loads` takes no
arguments to pass them through, so they live here:

* `unpickling_limits(max_m=..., ...)` is a context manager: inside the ``with`` block (in
  this thread or asyncio task only, as a `contextvars` variable), frames are loaded with
  these limits;
* `set_unpickling_limits(...)` changes the default for the whole process, for code that
  does not call `pickle.loads` itself: a Dask worker, a Spark executor (call it in a worker
  plugin or at the top of the task);
* `get_unpickling_limits()` tells which are in force.

Pickle itself runs code of the pickle's choosing: load pickles only from peers you trust.
The limits guard against filters larger than the receiver wants (a mistake, not an attack);
frames are how untrusted peers send filters (`decode` with limits, and a key).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from typing import Any, NamedTuple, Optional, Union

from . import _bloomwire


class Limits(NamedTuple):
    """What a decoder accepts (see `decode`). `max_filter_bytes` None is `ceil(max_m / 8)`,
    as in `decode`."""

    max_m: int = _bloomwire.DEFAULT_MAX_M
    max_k: int = _bloomwire.DEFAULT_MAX_K
    max_payload: int = _bloomwire.DEFAULT_MAX_PAYLOAD
    max_metadata: int = _bloomwire.DEFAULT_MAX_METADATA
    max_filter_bytes: Optional[int] = None


class _Keep:
    """The default of `max_filter_bytes` below: keep the value in force (None is a value
    there: the limit follows `max_m`)."""

    def __repr__(self) -> str:
        return "<the limit in force>"


_KEEP = _Keep()

_lock = threading.Lock()
_process_default = Limits()
_override: contextvars.ContextVar[Optional[Limits]] = contextvars.ContextVar(
    "bloomwire_unpickling_limits", default=None
)


def _updated(base: Limits, max_m: Optional[int], max_k: Optional[int],
             max_payload: Optional[int], max_metadata: Optional[int],
             max_filter_bytes: Union[int, None, _Keep]) -> Limits:
    given = {"max_m": max_m, "max_k": max_k, "max_payload": max_payload,
             "max_metadata": max_metadata}
    for name, value in [*given.items(), ("max_filter_bytes", max_filter_bytes)]:
        if value is not None and value is not _KEEP and (
                not isinstance(value, int) or value < 0):
            raise ValueError(f"{name} is a non-negative int, not {value!r}")
    changes: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if max_filter_bytes is not _KEEP:
        changes["max_filter_bytes"] = max_filter_bytes
    return base._replace(**changes)


def get_unpickling_limits() -> Limits:
    """The limits frames are unpickled with here and now: those of the innermost
    `unpickling_limits` block of this context, else the process default."""
    override = _override.get()
    return override if override is not None else _process_default


def set_unpickling_limits(*, max_m: Optional[int] = None, max_k: Optional[int] = None,
                          max_payload: Optional[int] = None,
                          max_metadata: Optional[int] = None,
                          max_filter_bytes: Union[int, None, _Keep] = _KEEP) -> Limits:
    """Set the process default for unpickling (the limits not given keep their value;
    `max_filter_bytes=None` makes that one follow `max_m` again); returns the previous
    default, which `set_unpickling_limits(**previous._asdict())` restores. For a process that loads pickles it does not call
    `pickle.loads` on itself, such as a Dask worker or a Spark executor."""
    global _process_default
    with _lock:
        previous = _process_default
        _process_default = _updated(previous, max_m, max_k, max_payload, max_metadata,
                                    max_filter_bytes)
    return previous


@contextlib.contextmanager
def unpickling_limits(*, max_m: Optional[int] = None, max_k: Optional[int] = None,
                      max_payload: Optional[int] = None,
                      max_metadata: Optional[int] = None,
                      max_filter_bytes: Union[int, None, _Keep] = _KEEP) -> Iterator[Limits]:
    """Within the ``with`` block, filters and plans are unpickled with these limits (the
    ones not given are those in force when the block starts; `max_filter_bytes` None, as
    by default, follows `max_m`: `ceil(max_m / 8)` bytes). The setting belongs to the
    current thread or asyncio task (a `contextvars` variable), so concurrent loads do not
    see each other's. Yields the limits in force in the block.

    >>> import pickle, bloomwire
    >>> data = pickle.dumps(bloomwire.BloomFilter(1 << 20, 3))
    >>> with bloomwire.unpickling_limits(max_m=1 << 16):
    ...     pickle.loads(data)
    Traceback (most recent call last):
    bloomwire.LimitExceeded: m = 1048576 at offset 12 exceeds the limit 65536
    """
    limits = _updated(get_unpickling_limits(), max_m, max_k, max_payload, max_metadata,
                      max_filter_bytes)
    token = _override.set(limits)
    try:
        yield limits
    finally:
        _override.reset(token)


def load_bloom_filter(frame: bytes) -> _bloomwire.BloomFilter:
    """Load a pickled `BloomFilter`: decode its frame with the unpickling limits."""
    return _bloomwire.decode(frame, **get_unpickling_limits()._asdict())


def load_counting_filter(frame: bytes) -> _bloomwire.CountingFilter:
    """Load a pickled `CountingFilter`: decode its frame with the unpickling limits."""
    return _bloomwire.decode_counting(frame, **get_unpickling_limits()._asdict())


def load_plan(params: Union[tuple, bytes],  # type: ignore[type-arg]
              figures: tuple) -> _bloomwire.Plan:  # type: ignore[type-arg]
    """Load a pickled `Plan`: its parameters (checked against the unpickling limits as a
    frame's m and k are), its figures as they were. A plan pickled before 0.4 carries the
    frame of its empty filter instead, decoded with the same limits."""
    limits = get_unpickling_limits()._asdict()
    if isinstance(params, bytes):
        empty = _bloomwire.decode(params, **limits)
        return _bloomwire.Plan._from_filter(empty, figures)  # type: ignore[attr-defined]
    return _bloomwire.Plan._from_parts(params, figures, **limits)  # type: ignore[attr-defined]
