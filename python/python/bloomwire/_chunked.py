"""The engine-neutral half of the route by chunk of `bloomwire.dask` and `bloomwire.spark`:
one chunked frame of a filter larger than one worker's memory (spec 4.10).

The route, in two phases, both on the engine:

1. Every partition turns its keys into their bit positions where it lives
   (`Indexer.positions_by_chunk`: the hashing of `insert`, with the GIL released), grouped
   by chunk of `2**shift` bits and made relative to the chunk's first bit (4 bytes each
   while `shift <= 32`), and counts its keys. The engine's shuffle brings every chunk's
   positions to one task, which builds the chunk (`Chunk`: `2**shift` bits, never m) and
   counts its ones.
2. The driver sums the keys (the header's n) and the ones (the frame's q0 for the codings
   that carry one), and makes the `ChunkedFrame`; each chunk is built again where its
   positions are (the shuffle's output, which the engine keeps: Spark's shuffle files,
   Dask's persisted partitions) and coded (`Chunk.encode`), and the driver collects the
   payloads in chunk order (they are the compressed frame, small) and assembles the frame
   without decoding them. A task holds one chunk at a time, never the filter.

The frame is byte for byte the one one process encodes for the same keys, coding and chunk
shift (`f.encode(coding, chunk_shift=shift)`). A coding without q0 (positional, adaptive)
needs no count of ones: its chunks are coded in the first phase, and there is no second.

The workers' frame carries neither the key nor the metadata (a chunk's payload depends on
its bits, the coding and q0 alone): the key never leaves the driver, which assembles the
frame with both.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple, Optional

from ._bloomwire import BloomFilter, Chunk, ChunkedFrame, Indexer, Plan, decode
from ._partials import _is_pandas, _pandas_column

#: The choice of a coding from the count of ones (the library's first choice for a chunked
#: frame: positional while at most 1 bit in 40 is one, else dense).
AUTO = "auto"

#: Keys hashed at a time by a partition (Spark's batches are gathered up to it), so that a
#: task holds the positions of this many keys at most.
KEYS_PER_GROUP = 1 << 20

#: The pseudo-chunk that carries a partition's count of keys through Spark's shuffle.
COUNT_CHUNK = -1


class ChunkJob(NamedTuple):
    """What the workers of a build by chunk need: the filter's parameters (an `Indexer`,
    pickled as a few dozen bytes) and the chunk shift."""

    indexer: Indexer
    shift: int

    @property
    def m(self) -> int:
        return self.indexer.m

    @property
    def chunk_count(self) -> int:
        return -(-self.indexer.m // (1 << self.shift))

    @property
    def dtype(self) -> str:
        """The NumPy dtype of the chunk-relative positions that travel."""
        return "<u4" if self.shift <= 32 else "<u8"


def chunk_shift(plan: Plan, worker_memory: Optional[int], shift: Optional[int]) -> Optional[int]:
    """The chunk shift of a build: `shift` when given, else the plan's for workers of
    `worker_memory` bytes (None: one worker holds the filter, or no memory was given)."""
    if shift is not None:
        return shift
    if worker_memory is None or worker_memory <= 0:
        return None
    return plan.chunked_build(worker_memory)


def job_of(plan: Plan, worker_memory: Optional[int], shift: Optional[int], coding: str,
           no_memory: str) -> ChunkJob:
    """The job of a build of `plan` by chunk: the chunk shift `shift`, else the plan's for
    workers of `worker_memory` bytes (ValueError when one holds the whole filter, or, saying
    `no_memory`, when no memory is known), the shift and the coding checked before any work."""
    shift = chunk_shift(plan, worker_memory, shift)
    if shift is None:
        raise ValueError(
            f"a worker of {worker_memory} bytes holds the whole filter "
            f"({plan.receiver_bytes} bytes): give chunk_shift to build it by chunk anyway, "
            "or use build_filter"
            if worker_memory else f"give chunk_shift or worker_memory ({no_memory})")
    indexer = Indexer(plan)
    job = ChunkJob(indexer, shift)
    ChunkedFrame(indexer, 0, 0, shift, "positional")  # the shift checked before any work
    if coding != AUTO:
        ChunkedFrame(indexer, 0, 0, shift, coding)  # and the coding
    return job


def decode_built(frame: bytes, plan: Plan) -> BloomFilter:
    """The filter of a frame built by chunk, decoded within its plan's limits (the default
    limits refuse a filter larger than them)."""
    return decode(frame, max_m=plan.m, max_k=math.ceil(plan.k),
                  max_payload=max(len(frame), 1 << 26), max_filter_bytes=-(-plan.m // 8))


def keys_of(values: Any) -> Any:
    """A partition's keys as `Indexer.positions` reads them: Arrow and NumPy columns as
    they are, a pandas Series as its Arrow or NumPy values, any other iterable as a list of
    its keys that are not None (nulls are skipped, as Arrow's are)."""
    if hasattr(values, "__arrow_c_array__") or hasattr(values, "__arrow_c_stream__") \
            or hasattr(values, "__array_interface__"):
        return values
    if _is_pandas(values):
        return _pandas_column(values)
    return [v for v in values if v is not None]


def positions_by_chunk(job: ChunkJob, values: Any) -> tuple[int, list[tuple[int, Any]]]:
    """A partition's count of keys and its positions by chunk: `(chunk, positions)` for
    every chunk that has any, the positions a NumPy array relative to the chunk."""
    count, chunks, offsets, positions = job.indexer.positions_by_chunk(keys_of(values),
                                                                      job.shift)
    pieces = [(int(c), positions[offsets[j]:offsets[j + 1]]) for j, c in enumerate(chunks)]
    return count, pieces


def position_rows(job: ChunkJob, values: Any) -> tuple[int, Any]:
    """A partition's count of keys and a pandas DataFrame of one row per chunk that has
    positions: `chunk` (int64) and `positions` (Arrow binary: the relative positions'
    bytes, little-endian, `job.dtype`). What the Dask route shuffles."""
    count, pieces = positions_by_chunk(job, values)
    return count, position_frame([c for c, _ in pieces], [p.tobytes() for _, p in pieces])


def position_frame(chunks: list[int], blobs: list[bytes]) -> Any:
    """The DataFrame of `position_rows`."""
    import pandas as pd  # type: ignore[import-untyped,import-not-found,unused-ignore]
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]

    return pd.DataFrame({
        "chunk": pd.Series(chunks, dtype="int64"),
        "positions": pd.Series(pa.array(blobs, pa.binary()), dtype=pd.ArrowDtype(pa.binary())),
    })


def position_batches(job: ChunkJob, batches: Iterable[Any]) -> Iterator[Any]:
    """A Spark partition's Arrow batches (the keys in the first column) in, Arrow batches of
    `(chunk, positions)` rows out: the positions' bytes of each chunk, gathered over about
    `KEYS_PER_GROUP` keys at a time, and one row of the pseudo-chunk `COUNT_CHUNK` carrying
    the partition's count of keys (8 bytes, little-endian)."""
    import pyarrow as pa  # type: ignore[import-untyped,import-not-found,unused-ignore]

    total = 0
    group: list[Any] = []
    size = 0

    def flush() -> Iterator[Any]:
        nonlocal total, group, size
        if not group:
            return
        keys = pa.chunked_array(group) if len(group) > 1 else group[0]
        count, pieces = positions_by_chunk(job, keys)
        total += count
        group, size = [], 0
        if pieces:
            yield pa.RecordBatch.from_arrays(
                [pa.array([c for c, _ in pieces], pa.int64()),
                 pa.array([p.tobytes() for _, p in pieces], pa.binary())],
                names=["chunk", "positions"])

    for batch in batches:
        column = batch.column(0)
        group.append(column)
        size += len(column)
        if size >= KEYS_PER_GROUP:
            yield from flush()
    yield from flush()
    yield pa.RecordBatch.from_arrays(
        [pa.array([COUNT_CHUNK], pa.int64()),
         pa.array([struct.pack("<Q", total)], pa.binary())],
        names=["chunk", "positions"])


def build_chunk(job: ChunkJob, index: int, pieces: Iterable[Any]) -> Chunk:
    """Chunk `index`, its bits set from pieces of chunk-relative positions (each a NumPy
    array, or the bytes of one as `position_rows` and `position_batches` make them: bytes,
    or anything with the buffer protocol, such as a pyarrow Buffer), one piece at a time."""
    import numpy as np

    chunk = Chunk(job.m, job.shift, index)
    for piece in pieces:
        if not hasattr(piece, "__array_interface__"):
            piece = np.frombuffer(piece, dtype=job.dtype)
        chunk.add(piece, relative=True)
    return chunk


def choose_coding(job: ChunkJob, coding: str, n: int, ones: int, *,
                  metadata: Optional[bytes] = None, key: Optional[bytes] = None,
                  budget: Optional[int] = None) -> str:
    """The coding of the frame: `coding`, or for "auto" the library's choice from the
    summed counts, the one a single process encoding the whole filter in these chunks makes
    (`ChunkedFrame` with "auto")."""
    if coding != AUTO:
        return coding
    return ChunkedFrame(job.indexer, n, ones, job.shift, AUTO, metadata=metadata, key=key,
                        budget=budget).coding


def needs_ones(job: ChunkJob, coding: str) -> bool:
    """Whether the chunks' payloads in `coding` depend on the count of ones (the codings
    with q0), so that the route needs its second phase; "auto" needs the count to choose."""
    if coding == AUTO:
        return True
    return ChunkedFrame(job.indexer, 0, 0, job.shift, coding).q0 is not None


def encode(chunk: Chunk, frame: ChunkedFrame) -> bytes:
    """A chunk's payload in the frame."""
    return chunk.encode(frame)


def ones_and_payload(chunk: Chunk, frame: Optional[ChunkedFrame]) -> tuple[int, Optional[bytes]]:
    """A chunk's ones and, when the frame is already known (a coding without q0), its
    payload."""
    return chunk.count_ones(), (chunk.encode(frame) if frame is not None else None)


def worker_frame(job: ChunkJob, coding: str, n: int, ones: int) -> ChunkedFrame:
    """The frame the workers code their chunks with: the frame-wide choices, no key and no
    metadata (which a chunk's payload does not depend on)."""
    return ChunkedFrame(job.indexer, n, ones, job.shift, coding)


def assemble(job: ChunkJob, coding: str, n: int, ones: int, payloads: dict[int, bytes], *,
             metadata: Optional[bytes] = None, key: Optional[bytes] = None,
             budget: Optional[int] = None, generation: int = 0) -> bytes:
    """The frame, from every chunk's payload (by chunk index), with the header's n, the
    metadata and the key."""
    frame = ChunkedFrame(job.indexer, n, ones, job.shift, coding, metadata=metadata, key=key,
                         budget=budget, generation=generation)
    missing = [i for i in range(frame.chunk_count) if i not in payloads]
    if missing:
        raise RuntimeError(f"no payload for chunks {missing[:8]}")
    return frame.assemble([payloads[i] for i in range(frame.chunk_count)])
