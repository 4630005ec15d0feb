"""The engine-neutral half of membership and semi-joins in `bloomwire.dask` and
`bloomwire.spark`: a filter queried where the data lives.

On the client (driver), `Shipment.of` turns what the user gives (a `BloomFilter`, a
`CountingFilter`, or a frame) into the one thing that travels: a frame (bytes), with a
`Query` of a few dozen bytes beside it (the frame's digest, whether it is a counting
filter's, the limits it is decoded with, and the key of a tagged frame). A filter object is
encoded once there; a counting filter object travels as the Bloom filter of its nonzero
counters (`to_bloom_filter`: m bits, not m counters), which answers every query alike.

In a task, `filter_of` decodes the frame once per worker process: the filter is cached by
the frame's digest, and every later task of the process (and every thread of it) queries
the decoded filter without touching the frame again. A tagged frame is verified by that
one decode, with the key. `contains_values` queries a partition's column in bulk
(`contains_array`: the Arrow or NumPy values read in place, the GIL released).
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from typing import Any, NamedTuple, Optional, Union

from . import _bloomwire
from ._bloomwire import BloomFilter, CountingFilter
from ._partials import _is_pandas, _pandas_column

AnyFilter = Union[BloomFilter, CountingFilter]

#: Decoded filters a worker process keeps (the least recently used goes first).
MAX_CACHED = 4

_CACHE: OrderedDict[str, AnyFilter] = OrderedDict()
_LOCK = threading.Lock()
_DECODES = 0


class Query(NamedTuple):
    """What a task needs beside the frame: the frame's digest (the cache's key), whether it
    is a counting filter's frame, the limits it is decoded with (those of its own header,
    read on the client: a worker accepts that filter and nothing larger), and the key of a
    tagged frame."""

    digest: str
    counting: bool
    limits: dict[str, Any]
    key: Optional[bytes]

    def decode(self, frame: Any) -> AnyFilter:
        """The frame decoded within the query's limits (and verified with its key)."""
        decode = _bloomwire.decode_counting if self.counting else _bloomwire.decode
        return decode(frame, key=self.key, **self.limits)


class Shipment(NamedTuple):
    """The frame that travels to the workers, and its `Query`."""

    frame: bytes
    query: Query

    @classmethod
    def of(cls, filter: Union[AnyFilter, bytes, bytearray, memoryview], *,
           key: Optional[bytes] = None, limits: Optional[dict[str, Any]] = None) -> Shipment:
        """The shipment of a filter or a frame. A frame's header is read here (within
        `limits`, the keyword arguments of `frame_info`, for frames above the default
        limits) and the limits of its decoding follow from it; a tagged frame needs its
        `key`, with which every worker verifies it."""
        if isinstance(filter, CountingFilter):
            filter = filter.to_bloom_filter()
        if isinstance(filter, BloomFilter):
            frame = filter.encode()
            key = None  # encoded here, untagged: nothing to verify
        elif isinstance(filter, (bytes, bytearray, memoryview)):
            frame = bytes(filter)
        else:
            raise TypeError("expected a BloomFilter, a CountingFilter or a frame (bytes), "
                            f"not {type(filter).__name__}")
        info = _bloomwire.frame_info(frame, key=key, **(limits or {}))
        if info.kind != "full":
            raise ValueError(f"expected a full frame, not a {info.kind} frame")
        if info.tag != "absent" and key is None:
            raise ValueError("the frame is tagged: give its key, with which the workers "
                             "verify it")
        counting = info.counting
        m = info.m
        decode_limits: dict[str, Any] = {
            "max_m": m,
            "max_k": math.ceil(info.k),
            "max_payload": max(info.payload_len, 1),
            "max_metadata": max(len(info.metadata or b""), 1),
            # The decoded filter's memory: a byte a counter, or ceil(m / 8) bytes of bits.
            "max_filter_bytes": m if counting else -(-m // 8),
        }
        if len(frame) != info.frame_len:
            raise ValueError(f"{len(frame) - info.frame_len} bytes after the frame")
        digest = hashlib.blake2b(frame, digest_size=16).hexdigest()
        return cls(frame, Query(digest, counting, decode_limits, key))


def filter_of(query: Query, frame: Any) -> AnyFilter:
    """The filter of a shipped frame, decoded once per process: the cached filter of the
    frame's digest, or the frame decoded (and verified), cached and returned. Threads of
    one process wait for one decode."""
    with _LOCK:
        f = _CACHE.get(query.digest)
        if f is not None:
            _CACHE.move_to_end(query.digest)
            return f
        if callable(frame):  # a broadcast's value, loaded only when it is decoded
            frame = frame()
        f = query.decode(frame)
        global _DECODES
        _DECODES += 1
        _CACHE[query.digest] = f
        while len(_CACHE) > MAX_CACHED:
            _CACHE.popitem(last=False)
        return f


def cached_digests() -> list[str]:
    """The digests of the filters this process holds decoded (oldest first)."""
    with _LOCK:
        return list(_CACHE)


def decodes() -> int:
    """How many frames this process has decoded for queries (each once while cached)."""
    return _DECODES


def clear_cache() -> None:
    """Let go of every decoded filter this process holds."""
    with _LOCK:
        _CACHE.clear()


def column_of(values: Any) -> Any:
    """A partition's values as `contains_array` reads them: Arrow and NumPy columns as they
    are, a pandas Series as its Arrow or NumPy values."""
    if _is_pandas(values):
        return _pandas_column(values)
    return values


def contains_values(f: AnyFilter, values: Any) -> Any:
    """Membership of every value of a column, as a NumPy bool array (False for a null)."""
    result = f.contains_array(column_of(values))
    if hasattr(result, "to_numpy") and not hasattr(result, "__array_interface__"):
        result = result.to_numpy(zero_copy_only=False)
    return result


def contains_arrow(f: AnyFilter, values: Any) -> Any:
    """Membership of every value of an Arrow array or chunked array, as a pyarrow
    BooleanArray (False for a null)."""
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]

    if isinstance(values, pa.ChunkedArray):
        if values.num_chunks == 1:
            values = values.chunk(0)
        else:
            return pa.chunked_array([f.contains_array(c) for c in values.chunks],
                                    pa.bool_()).combine_chunks()
    return f.contains_array(values)
