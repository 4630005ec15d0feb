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

Planning: `plan` (a byte budget), `plan_for_fpr` (a target rate), both returning a `Plan`.
Filters: `BloomFilter`, `CountingFilter`; keys are `bytes` or `str` (UTF-8).
Frames: `encode`, `decode`, `decode_counting`, `decode_message`, `frame_info`.
Generations: `Sender` (deltas when smaller) and `Receiver` (in order, every gap reported).
Errors: `BloomwireError` and one subclass per kind of failure, under `FrameError`,
`SequenceError` and `ResyncNeeded`.
"""

from ._bloomwire import (
    CODINGS,
    DEFAULT_MAX_K,
    DEFAULT_MAX_M,
    DEFAULT_MAX_PAYLOAD,
    BadMagic,
    BadVarint,
    BaseMismatch,
    BloomFilter,
    BloomwireError,
    ChecksumMismatch,
    CorruptPayload,
    CountingFilter,
    Delta,
    FrameError,
    FrameInfo,
    GenerationGap,
    Incompatible,
    Incomplete,
    InvalidField,
    InvalidParameter,
    LimitExceeded,
    OpaqueHashFamily,
    OverBudget,
    Plan,
    Receiver,
    ResultMismatch,
    ResyncNeeded,
    Sender,
    SequenceError,
    StaleGeneration,
    TrailingBytes,
    UnexpectedDelta,
    UnexpectedFilterType,
    UnsupportedVersion,
    Update,
    decode,
    decode_counting,
    decode_message,
    encode,
    frame_info,
    plan,
    plan_for_fpr,
)

__version__ = "0.1.0"

__all__ = [
    "CODINGS",
    "DEFAULT_MAX_K",
    "DEFAULT_MAX_M",
    "DEFAULT_MAX_PAYLOAD",
    "BadMagic",
    "BadVarint",
    "BaseMismatch",
    "BloomFilter",
    "BloomwireError",
    "ChecksumMismatch",
    "CorruptPayload",
    "CountingFilter",
    "Delta",
    "FrameError",
    "FrameInfo",
    "GenerationGap",
    "Incompatible",
    "Incomplete",
    "InvalidField",
    "InvalidParameter",
    "LimitExceeded",
    "OpaqueHashFamily",
    "OverBudget",
    "Plan",
    "Receiver",
    "ResultMismatch",
    "ResyncNeeded",
    "Sender",
    "SequenceError",
    "StaleGeneration",
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
    "plan",
    "plan_for_fpr",
]
