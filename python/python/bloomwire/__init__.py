"""Compressed Bloom filters on the wire.

bloomwire puts Bloom filters on the wire in close to the entropy bound (arithmetic- and
ANS-coded frames, Mitzenmacher's *Compressed Bloom Filters*) and reads them back safely from
peers it does not trust. This package is the Rust crate compiled for Python:

>>> import bloomwire
>>> plan = bloomwire.plan_for_fpr(10_000, 0.01)          # m and k for a target rate
>>> f = plan.new_filter()
>>> f.insert_many(f"key-{i}" for i in range(10_000))
>>> frame = f.encode()                                    # bytes, the smallest coding
>>> g = bloomwire.decode(frame)                           # limits checked first
>>> "key-42" in g, g == f
(True, True)

Planning: `plan` (a byte budget), `plan_for_fpr` (a target rate), both returning a `Plan`
with the memory it takes at each side; `frontier` (the plans to choose between, bytes on
the wire against memory).
Filters: `BloomFilter`, `CountingFilter`; keys are `bytes` or `str` (UTF-8), or whole
Arrow and NumPy columns (`insert_array`, `contains_array`); `|` merges filters of equal
parameters; filters and plans pickle as frames (`unpickling_limits`).
Frames: `encode`, `decode`, `decode_counting`, `decode_message`, `frame_info`, with
application `metadata`, a 32-byte `key` that tags and checks frames, and the restart flag;
`BloomFilter.from_bits(..., opaque=True)` carries another library's bits. Each thread keeps
up to 64 MiB for its next encodes (`thread_scratch_bytes`, `release_thread_scratch`).
Generations: `Sender` (deltas when smaller; `next_frame_with_flips` from the bits that changed),
`SummarySender` (a counting filter's Bloom filter, sent from the counters that changed) and
`Receiver` (in order, every gap reported).
Errors: `BloomwireError` and one subclass per kind of failure, under `FrameError`,
`SequenceError` and `ResyncNeeded`.
Engines (optional extras): `bloomwire.dask` and `bloomwire.spark` build one filter from a
distributed collection, by chunk when it is larger than a worker (`Indexer`, `Chunk`,
`ChunkedFrame`).
"""

from ._bloomwire import *  # noqa: F403  (every name of the compiled module: its __all__)
from ._pickle import (
    Limits,
    get_unpickling_limits,
    set_unpickling_limits,
    unpickling_limits,
)

__version__ = "0.1.0"

# The compiled module's names and the pickles' four, written out: type checkers read no
# other form of `__all__` (stubtest checks this one against the package at run time).
__all__ = [
    "CODINGS",
    "DEFAULT_MAX_K",
    "DEFAULT_MAX_M",
    "DEFAULT_MAX_METADATA",
    "DEFAULT_MAX_PAYLOAD",
    "AllocationFailed",
    "BadMagic",
    "BadTag",
    "BadVarint",
    "BaseMismatch",
    "BloomFilter",
    "BloomwireError",
    "ChecksumMismatch",
    "Chunk",
    "ChunkedFrame",
    "CorruptPayload",
    "CountingFilter",
    "Delta",
    "FrameError",
    "FrameInfo",
    "GenerationGap",
    "Incompatible",
    "Incomplete",
    "Indexer",
    "InvalidField",
    "UnsupportedCoding",
    "InvalidParameter",
    "LimitExceeded",
    "Limits",
    "MissingTag",
    "OpaqueHashFamily",
    "OverBudget",
    "Plan",
    "PlanExceedsLimits",
    "Receiver",
    "ResultMismatch",
    "ResyncNeeded",
    "Sender",
    "SequenceError",
    "StaleGeneration",
    "SummarySender",
    "TagNotVerified",
    "TrailingBytes",
    "UnexpectedDelta",
    "UnexpectedFilterType",
    "UnsupportedVersion",
    "Update",
    "decode",
    "decode_counting",
    "decode_message",
    "encode",
    "frame_info",
    "frontier",
    "get_unpickling_limits",
    "plan",
    "plan_for_fpr",
    "release_thread_scratch",
    "set_unpickling_limits",
    "thread_scratch_bytes",
    "unpickling_limits",
]
