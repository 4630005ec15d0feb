"""Type stubs of the compiled module; the package re-exports everything in it."""

from collections.abc import Iterable
from typing import Any, Final, Optional, Protocol, Union, final, type_check_only

from typing_extensions import Self

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
    "release_thread_scratch",
    "thread_scratch_bytes",
    "plan",
    "plan_for_fpr",
    "frontier",
]

_Key = Union[bytes, str, bytearray, memoryview]
"""A key: bytes as they are, str as UTF-8."""

_Buffer = Union[bytes, bytearray, memoryview]
"""A frame: bytes are read in place, the others copied once."""

_AnyFilter = Union["BloomFilter", "CountingFilter"]

class _ArrowArray(Protocol):
    """An Arrow array (the Arrow PyCapsule interface): pyarrow.Array and others."""

    def __arrow_c_array__(self, requested_schema: Any = ..., /) -> tuple[Any, Any]: ...

class _ArrowStream(Protocol):
    """A stream of Arrow arrays: pyarrow.ChunkedArray and others."""

    def __arrow_c_stream__(self, requested_schema: Any = ..., /) -> Any: ...

class _ArrayInterface(Protocol):
    """A NumPy array (the array interface)."""

    @property
    def __array_interface__(self) -> dict[str, Any]: ...

_Column = Union[_ArrowArray, _ArrowStream, _ArrayInterface]
"""A column of keys: Arrow string, binary, fixed-size binary or integer values, or a
one-dimensional NumPy array of integers or fixed-width bytes (S)."""

DEFAULT_MAX_M: Final[int]
"""Largest m a decoder accepts by default (2**28 bits)."""
DEFAULT_MAX_K: Final[int]
"""Largest k a decoder accepts by default (64)."""
DEFAULT_MAX_PAYLOAD: Final[int]
"""Largest payload a decoder accepts by default (2**26 bytes)."""
DEFAULT_MAX_METADATA: Final[int]
"""Largest application metadata field a decoder accepts by default (4096 bytes)."""
CODINGS: Final[list[str]]
"""The coding names: raw, adaptive, known-p, known-p-symbols, known-p-interleaved,
positional, small, wide, escape (Bloom filters), known-counters, adaptive-counters (counting
filters; raw is the packed counters)."""

@final
class Plan:
    """A planned filter: its m and k, and the false positive rate and frame size to expect."""

    @property
    def n(self) -> int:
        """Number of keys planned for."""
    @property
    def m(self) -> int:
        """Bits of the filter."""
    @property
    def k(self) -> float:
        """Hash functions per key (k may be rational on a 1/65536 grid)."""
    @property
    def k_raw(self) -> int:
        """k times 65536, as the frame header carries it."""
    @property
    def layout(self) -> str:
        """The filter layout: "standard", "partitioned" or "blocks"."""
    @property
    def coding(self) -> str:
        """The coding the plan assumed: "raw", "adaptive" or "known-p"."""
    @property
    def fpr(self) -> float:
        """The expected false positive rate."""
    @property
    def bytes(self) -> float:
        """The expected frame size in bytes (header and checksum included)."""
    @property
    def worst_case_bytes(self) -> int:
        """Frame bytes exceeded with probability at most `epsilon`."""
    @property
    def epsilon(self) -> float:
        """The probability with which a frame may exceed `worst_case_bytes`."""
    @property
    def bits_per_element(self) -> float:
        """Expected bits on the wire per key."""
    @property
    def receiver_bytes(self) -> int:
        """The receiver's memory for the decoded filter, `ceil(m/8)` bytes."""
    @property
    def sender_bytes(self) -> int:
        """The sender's memory for the filter's bits, `ceil(m/8)` bytes."""
    @property
    def delta_sender_bytes(self) -> int:
        """The memory of a sender of deltas (its filter and the generation it sent last)."""
    @property
    def counting_sender_bytes(self) -> int:
        """The memory of a sender with a counting filter: m counters of a byte each and
        the bits it sent last."""
    @property
    def delta(self) -> Optional[dict[str, Any]]:
        """The delta frames at the plan's `churn` (`changed`, `bytes`,
        `worst_case_bytes`), None without one."""
    @property
    def bent(self) -> Optional[dict[str, Any]]:
        """The limit that held the plan away from its optimum (`limit`, `max_m`) and the
        plan without it (`m`, `k`, `coding`, `bytes`, `worst_case_bytes`, `fpr`,
        `receiver_bytes`), None when the plan is its optimum."""
    def chunked_build(self, worker_bytes: int) -> Optional[int]:
        """The chunk shift for building this filter by chunks on workers of `worker_bytes`
        bytes each (a chunk about a quarter of a worker), or None when one worker holds the
        whole filter and its frame."""
    def new_filter(self) -> BloomFilter:
        """An empty Bloom filter with the planned parameters (`AllocationFailed`, a
        `MemoryError`, when the machine cannot hold it)."""
    def new_counting_filter(self, width: int = 4) -> CountingFilter:
        """An empty counting filter with the planned parameters and `width`-bit counters."""
    def __eq__(self, other: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its parameters and figures (checked on load with the unpickling limits)."""

def plan(
    n: int,
    budget_bytes: int,
    *,
    seed: int = 0,
    siphash_key: Optional[bytes] = None,
    max_m: Optional[int] = None,
    max_filter_bytes: Optional[int] = None,
    max_memory: Optional[int] = None,
    max_bits_per_element: Optional[float] = None,
    churn: Optional[float] = None,
) -> Plan:
    """The filter of `n` keys with the lowest false positive rate whose frame fits in
    `budget_bytes`. Raises `OverBudget` when nothing fits."""

def plan_for_fpr(
    n: int,
    fpr: float,
    *,
    seed: int = 0,
    siphash_key: Optional[bytes] = None,
    max_m: Optional[int] = None,
    max_filter_bytes: Optional[int] = None,
    max_memory: Optional[int] = None,
    max_bits_per_element: Optional[float] = None,
    churn: Optional[float] = None,
) -> Plan:
    """The filter of `n` keys with the smallest frame whose false positive rate is at most
    `fpr`. Within a default receiver's limits unless `max_m` allows more
    (`PlanExceedsLimits` otherwise)."""

def frontier(
    n: int,
    fpr: float,
    *,
    seed: int = 0,
    siphash_key: Optional[bytes] = None,
    max_m: Optional[int] = None,
    max_filter_bytes: Optional[int] = None,
    max_memory: Optional[int] = None,
    max_bits_per_element: Optional[float] = None,
    churn: Optional[float] = None,
) -> list[tuple[Optional[int], Plan]]:
    """The plans to choose between at a rate of at most `fpr`, bytes on the wire against
    memory: `(memory_factor, plan)` for the memory-optimal plan (factor 1), at most 2 and 4
    times its memory, and without a memory cap (None)."""

@type_check_only
class _Filter:
    """What `BloomFilter` and `CountingFilter` both have. No such class exists at run time:
    each class has these methods itself (their docstrings say what differs)."""

    def insert(self, key: _Key) -> None:
        """Add a key (a counting filter increments its counters)."""
    def insert_many(self, keys: Iterable[_Key]) -> None:
        """Add every key of an iterable."""
    def insert_array(self, values: _Column) -> None:
        """Add every value of an Arrow or NumPy column, read in place, hashed with the GIL
        released; each value is the key a scalar insert of it would be; nulls skipped."""
    def contains(self, key: _Key) -> bool:
        """Whether the key may be in the set: False means certainly not."""
    def contains_array(self, values: _Column) -> Any:
        """`contains` for every value of a column: a pyarrow BooleanArray for Arrow input,
        a NumPy bool array for NumPy input; False for a null."""
    def __contains__(self, key: _Key, /) -> bool: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __or__(self, other: Self, /) -> Self: ...
    def __ror__(self, other: Self, /) -> Self: ...
    def __ior__(self, other: Self, /) -> Self: ...
    def __copy__(self) -> Self: ...
    def __deepcopy__(self, memo: Any, /) -> Self: ...
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its frame, checked on load against the unpickling limits."""
    @property
    def n(self) -> int:
        """The number of keys in the filter (a counting filter's inserted less removed)."""
    @property
    def m(self) -> int:
        """Bits (or counters) of the filter."""
    @property
    def k(self) -> float:
        """Hash functions per key."""
    @property
    def header(self) -> Optional[FrameInfo]:
        """The header of the frame the filter was decoded from; None if built here."""
    def digest(self) -> int:
        """The digest of the bits or counters (spec 5.1)."""
    def union(self, other: Self) -> None:
        """Merge `other` (same parameters) into this filter; `self |= other`."""
    def copy(self) -> Self:
        """A copy of the filter."""

@final
class BloomFilter(_Filter):
    """A Bloom filter; keys are bytes or str (UTF-8). `len(f)` is the number of keys inserted."""

    def __new__(
        cls, m: int, k: int, *, seed: int = 0, siphash_key: Optional[bytes] = None
    ) -> Self:
        """A standard filter of `m` bits and `k` hash functions (xxHash64 with `seed`, or
        keyed SipHash-2-4 with a 16-byte `siphash_key`); `AllocationFailed`, a `MemoryError`,
        when the machine cannot hold m bits."""
    @staticmethod
    def from_plan(plan: Plan) -> BloomFilter:
        """An empty filter with a plan's parameters."""
    @staticmethod
    def from_bits(
        bits: _Buffer,
        m: int,
        k: int,
        *,
        n: int = 0,
        opaque: bool = False,
        seed: int = 0,
        siphash_key: Optional[bytes] = None,
    ) -> BloomFilter:
        """A standard filter holding these packed bits (`ceil(m / 8)` bytes). With
        `opaque=True` the bits are another library's: carried, encoded and merged, never
        queried (`OpaqueHashFamily`, raised by the inserts and queries)."""
    def contains_many(self, keys: Iterable[_Key]) -> list[bool]:
        """`contains` for every key of an iterable."""
    @property
    def opaque(self) -> bool:
        """Whether the bits are another library's (inserts and queries refused)."""
    @property
    def fraction_of_zeros(self) -> float:
        """The fraction of bits that are zero."""
    def count_ones(self) -> int:
        """The number of bits set."""
    def bits(self) -> bytes:
        """The packed bit array: bit i is `(b[i // 8] >> (i % 8)) & 1`. `==` compares
        parameters and bits, not n, so `f | f == f`."""
    def encode(
        self,
        coding: Optional[str] = None,
        *,
        budget: Optional[int] = None,
        generation: int = 0,
        metadata: Optional[_Buffer] = None,
        key: Optional[_Buffer] = None,
        restart: bool = False,
        chunk_shift: Optional[int] = None,
        profile: Optional[str] = None,
    ) -> bytes:
        """The full frame of this filter; see `encode`."""

@final
class CountingFilter(_Filter):
    """A counting Bloom filter: `width`-bit counters, so keys can be removed; a union adds
    counters, saturating (same parameters and width)."""

    def __new__(
        cls,
        m: int,
        k: int,
        width: int = 4,
        *,
        seed: int = 0,
        siphash_key: Optional[bytes] = None,
    ) -> Self:
        """A standard counting filter of `m` counters of `width` bits and `k` hash functions
        (a byte a counter in memory: `AllocationFailed`, a `MemoryError`, when the machine
        cannot hold them)."""
    @staticmethod
    def from_plan(plan: Plan, width: int = 4) -> CountingFilter:
        """An empty counting filter with a plan's parameters."""
    def remove(self, key: _Key) -> None:
        """Remove a key; raises `InvalidParameter`, changing nothing, if it is not in the filter."""
    @property
    def width(self) -> int:
        """Bits per counter."""
    def counters(self) -> bytes:
        """The counters, one byte each."""
    def packed(self) -> bytes:
        """The counters packed `width` bits each."""
    def histogram(self) -> list[int]:
        """How many counters hold each value 0 .. 2**width - 1."""
    def saturated(self) -> int:
        """The number of saturated counters."""
    def to_bloom_filter(self) -> BloomFilter:
        """The Bloom filter this one summarizes."""
    def encode(
        self,
        coding: Optional[str] = None,
        *,
        budget: Optional[int] = None,
        generation: int = 0,
        metadata: Optional[_Buffer] = None,
        key: Optional[_Buffer] = None,
        restart: bool = False,
        profile: Optional[str] = None,
    ) -> bytes:
        """The full frame of this counting filter; see `encode`."""

def encode(
    filter: _AnyFilter,
    coding: Optional[str] = None,
    *,
    budget: Optional[int] = None,
    generation: int = 0,
    metadata: Optional[_Buffer] = None,
    key: Optional[_Buffer] = None,
    restart: bool = False,
    chunk_shift: Optional[int] = None,
    profile: Optional[str] = None,
) -> bytes:
    """The full frame of a filter: the smallest coding, or the named one (raw when that is
    not smaller); `OverBudget` when it exceeds `budget` bytes. `metadata` rides in the
    header; a 32-byte `key` tags the frame; `restart` sets the restart flag; `chunk_shift`
    (Bloom filters) codes the payload in chunks of `2**chunk_shift` bits."""

def decode(
    frame: _Buffer,
    *,
    key: Optional[_Buffer] = None,
    max_m: int = ...,
    max_k: int = ...,
    max_payload: int = ...,
    max_metadata: int = ...,
    max_filter_bytes: Optional[int] = None,
    profile: Optional[str] = None,
) -> BloomFilter:
    """Decode one full Bloom filter frame; limits are checked before anything is allocated
    (`max_filter_bytes`, the decoded filter's memory, is `ceil(max_m / 8)` when None)."""

def decode_counting(
    frame: _Buffer,
    *,
    key: Optional[_Buffer] = None,
    max_m: int = ...,
    max_k: int = ...,
    max_payload: int = ...,
    max_metadata: int = ...,
    max_filter_bytes: Optional[int] = None,
    profile: Optional[str] = None,
) -> CountingFilter:
    """Decode one full counting filter frame."""

def decode_message(
    frame: _Buffer,
    *,
    key: Optional[_Buffer] = None,
    max_m: int = ...,
    max_k: int = ...,
    max_payload: int = ...,
    max_metadata: int = ...,
    max_filter_bytes: Optional[int] = None,
    profile: Optional[str] = None,
) -> Union[BloomFilter, CountingFilter, Delta]:
    """Decode any one frame."""

def frame_info(
    frame: _Buffer,
    *,
    key: Optional[_Buffer] = None,
    max_m: int = ...,
    max_k: int = ...,
    max_payload: int = ...,
    max_metadata: int = ...,
    max_filter_bytes: Optional[int] = None,
    profile: Optional[str] = None,
) -> FrameInfo:
    """The header of the frame at the start of `frame` (payload and checksum not checked)."""

def thread_scratch_bytes() -> int:
    """Bytes of memory the calling thread keeps for its next encodes (at most 64 MiB)."""

def release_thread_scratch() -> int:
    """Give the calling thread's kept encoding memory back: the bytes it was."""

@final
class Delta:
    """A decoded delta frame: the XOR of two generations of a filter."""

    @property
    def generation(self) -> int:
        """The generation the delta produces."""
    @property
    def base_generation(self) -> int:
        """The generation the delta applies to."""
    @property
    def counting(self) -> bool:
        """Whether it is a counting filter's delta."""
    @property
    def header(self) -> FrameInfo:
        """The frame's header."""
    def xor(self) -> bytes:
        """The XOR, packed like the filter's bits or counters."""
    def apply(self, base: _AnyFilter, base_generation: int) -> _AnyFilter:
        """The next generation's filter; `base` is unchanged."""

@final
class FrameInfo:
    """The header fields of a frame."""

    @property
    def kind(self) -> str:
        """"full" or "delta"."""
    @property
    def counting(self) -> bool:
        """Whether the frame carries a counting filter."""
    @property
    def generation(self) -> int:
        """The generation the frame carries (or a delta produces)."""
    @property
    def base_generation(self) -> Optional[int]:
        """A delta's base generation, else None."""
    @property
    def n(self) -> int:
        """Keys the sender inserted."""
    @property
    def m(self) -> int:
        """Bits (or counters) of the filter."""
    @property
    def k(self) -> float:
        """Hash functions per key."""
    @property
    def layout(self) -> str:
        """"standard", "partitioned" or "blocks"."""
    @property
    def coding(self) -> str:
        """The coding's name."""
    @property
    def counter_width(self) -> Optional[int]:
        """A counting filter's counter width, else None."""
    @property
    def chunk_shift(self) -> Optional[int]:
        """log2 of the bits per chunk of a chunked payload, else None."""
    @property
    def header_len(self) -> int:
        """Header bytes."""
    @property
    def payload_len(self) -> int:
        """Payload bytes."""
    @property
    def frame_len(self) -> int:
        """Bytes of the whole frame, checksum and tag included."""
    @property
    def hash(self) -> str:
        """The base hash: "xxh64", "siphash24" or "opaque" (another library's bits)."""
    @property
    def metadata(self) -> Optional[bytes]:
        """The application metadata, None when the frame carries none."""
    @property
    def tag(self) -> str:
        """"absent", "unverified" (not checked: no key given) or "verified"."""
    @property
    def restart(self) -> bool:
        """The restart flag: the sender's numbering starts again with this full frame."""

@final
class Update:
    """What a `Receiver` did with a frame."""

    @property
    def kind(self) -> str:
        """"full" or "delta"."""
    @property
    def is_full(self) -> bool:
        """Whether a full frame replaced the filter."""
    @property
    def generation(self) -> int:
        """The receiver's new generation."""
    @property
    def skipped(self) -> int:
        """Generations a full frame skipped (0 for a delta)."""
    @property
    def header(self) -> FrameInfo:
        """The header of the frame applied."""
    def __eq__(self, other: object, /) -> bool: ...

@final
class Sender:
    """Sends the generations of one filter: deltas when smaller, full frames regularly."""

    def __new__(
        cls,
        full_every: int = 100,
        *,
        coding: Optional[str] = None,
        budget: Optional[int] = None,
        metadata: Optional[_Buffer] = None,
        key: Optional[_Buffer] = None,
        profile: Optional[str] = None,
    ) -> Self:
        """A sender with a full frame at least every `full_every` generations; `metadata`
        on every frame, every frame tagged with a 32-byte `key`."""
    def next_frame(self, filter: _AnyFilter) -> bytes:
        """The frame of the next generation of `filter`."""
    def next_frame_with_flips(
        self, flips: Union[Iterable[int], _ArrayInterface], n: int
    ) -> bytes:
        """The frame of the next generation of a Bloom filter given as the positions of
        the bits that flipped since the generation sent last (increasing, each once) and
        its count of keys: `next_frame`'s frame, byte for byte, in time proportional to the
        flips."""
    @property
    def last_sent(self) -> Optional[_AnyFilter]:
        """A copy of the generation sent last, None before the first frame."""
    def full_frame(self) -> Optional[bytes]:
        """A full frame (restart flag set) of the generation sent last, for a receiver that
        joins late; None before the first frame."""
    def request_full(self) -> None:
        """Make the next frame a full one."""
    @property
    def generation(self) -> int:
        """The generation of the last frame returned (0 before the first)."""

@final
class SummarySender:
    """Sends the Bloom filter of a counting filter it owns (Summary Cache), each frame made
    from the counters that left or reached zero."""

    def __new__(
        cls,
        counting: CountingFilter,
        full_every: int = 100,
        *,
        coding: Optional[str] = None,
        budget: Optional[int] = None,
        metadata: Optional[_Buffer] = None,
        key: Optional[_Buffer] = None,
        profile: Optional[str] = None,
    ) -> Self:
        """A sender of a copy of `counting`'s Bloom filter; the options are `Sender`'s."""
    def insert(self, key: _Key) -> None:
        """Add a key."""
    def insert_many(self, keys: Iterable[_Key]) -> None:
        """Add every key of an iterable."""
    def insert_array(self, values: _Column) -> None:
        """Add every value of an Arrow or NumPy column (nulls skipped)."""
    def remove(self, key: _Key) -> None:
        """Remove a key; `InvalidParameter`, nothing changed, if it is not in the filter."""
    def remove_many(self, keys: Iterable[_Key]) -> None:
        """Remove every key of an iterable."""
    def contains(self, key: _Key) -> bool:
        """Whether the key may be in the set."""
    def __contains__(self, key: _Key, /) -> bool: ...
    def __len__(self) -> int: ...
    def next_frame(self) -> bytes:
        """The frame of the next generation of the counting filter's Bloom filter."""
    def full_frame(self) -> Optional[bytes]:
        """A full frame (restart flag set) of the generation sent last; None before the
        first frame."""
    def request_full(self) -> None:
        """Make the next frame a full one."""
    @property
    def generation(self) -> int:
        """The generation of the last frame returned (0 before the first)."""
    @property
    def filter(self) -> CountingFilter:
        """A copy of the counting filter."""

@final
class Receiver:
    """Applies a `Sender`'s frames in order; on any error nothing changes."""

    def __new__(
        cls,
        *,
        key: Optional[_Buffer] = None,
        max_m: int = ...,
        max_k: int = ...,
        max_payload: int = ...,
        max_metadata: int = ...,
        max_filter_bytes: Optional[int] = None,
        profile: Optional[str] = None,
    ) -> Self:
        """A receiver with no filter yet, decoding within the limits; with a 32-byte `key`,
        only frames tagged with it."""
    def receive(self, frame: _Buffer) -> Update:
        """Decode and apply one frame."""
    def apply(self, message: Union[BloomFilter, CountingFilter, Delta]) -> Update:
        """Apply a filter or delta decoded elsewhere (its `header` is its frame's) by the
        rules of `receive`. With a key only what was decoded with that key: `MissingTag` for
        an untagged frame's, `TagNotVerified` for one decoded without it or with another."""
    @property
    def filter(self) -> Optional[_AnyFilter]:
        """A copy of the current filter, None before the first full frame."""
    @property
    def generation(self) -> Optional[int]:
        """The current generation, None before the first full frame."""

_Positions = Union[_ArrayInterface, int, Iterable[Union[int, _ArrayInterface]]]
"""Bit positions: a NumPy integer array (read in place), an int, or an iterable of ints
and arrays."""

_Params = Union[Plan, BloomFilter, CountingFilter, "Indexer"]
"""What gives a filter's parameters."""

@final
class Indexer:
    """The bit positions of keys under one filter's parameters, without the filter."""

    def __new__(cls, filter: Union[Plan, BloomFilter, CountingFilter]) -> Self:
        """The indexer of a plan's or a filter's parameters (`OpaqueHashFamily` for
        another library's)."""
    @property
    def m(self) -> int:
        """Bits of the filter."""
    @property
    def k(self) -> float:
        """Hash functions per key."""
    def positions(self, keys: Union[_Column, Iterable[_Key]]) -> Any:
        """Every key's bit positions, key after key, as a NumPy uint64 array (the bits
        `insert` sets; columns read in place with the GIL released, nulls skipped)."""
    def positions_by_chunk(
        self, keys: Union[_Column, Iterable[_Key]], shift: int
    ) -> tuple[int, Any, Any, Any]:
        """`(keys, chunks, offsets, positions)`: the number of keys, the chunks of
        `2**shift` bits that hold positions, their offsets, and the positions relative to
        their chunk (uint32 while `shift <= 32`), chunk after chunk."""
    def __eq__(self, other: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the filter's parameters."""
    @staticmethod
    def _from_parts(parts: tuple[int, int, list[int], int, int, int, int]) -> Indexer: ...

@final
class Chunk:
    """One chunk of a filter built by chunks: `2**shift` bits set from positions."""

    def __new__(cls, m: int, shift: int, index: int) -> Self:
        """Chunk `index` of a filter of `m` bits in chunks of `2**shift` bits, all zero."""
    @property
    def index(self) -> int:
        """The chunk's index."""
    @property
    def m(self) -> int:
        """Bits of the whole filter."""
    @property
    def shift(self) -> int:
        """log2 of the bits of a chunk."""
    @property
    def range(self) -> range:
        """The bits of the filter this chunk holds."""
    def add(self, positions: _Positions, *, relative: bool = False) -> None:
        """Set the bit of every position (absolute, or from the chunk's first bit with
        `relative=True`); `InvalidParameter` for one outside the chunk."""
    def count_ones(self) -> int:
        """The number of bits set."""
    def encode(self, frame: ChunkedFrame) -> bytes:
        """The chunk's payload in `frame` (same m and shift)."""
    def bits(self) -> bytes:
        """The packed bits of the chunk."""
    def __eq__(self, other: object, /) -> bool: ...
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its shape and packed bits."""
    @staticmethod
    def _from_bits(m: int, shift: int, index: int, bits: bytes) -> Chunk: ...

@final
class ChunkedFrame:
    """A chunked frame written a chunk at a time: the frame-wide choices of a filter
    built by chunks, which codes each chunk and assembles the frame from the payloads."""

    def __new__(
        cls,
        params: _Params,
        n: int,
        ones: int,
        shift: int,
        coding: str,
        *,
        metadata: Optional[_Buffer] = None,
        key: Optional[_Buffer] = None,
        budget: Optional[int] = None,
        generation: int = 0,
        profile: Optional[str] = None,
    ) -> Self:
        """The frame of a filter of `params`' parameters holding `n` keys and `ones` one
        bits, in chunks of `2**shift` bits coded with `coding` (chunkable; "auto": the library's
        choice from `n` and `ones`, the one `encode(chunk_shift=shift)` of the whole filter
        makes)."""
    @property
    def m(self) -> int:
        """Bits of the filter."""
    @property
    def n(self) -> int:
        """Keys of the filter."""
    @property
    def ones(self) -> int:
        """One bits of the whole filter."""
    @property
    def shift(self) -> int:
        """log2 of the bits of a chunk."""
    @property
    def generation(self) -> int:
        """The generation the frame carries."""
    @property
    def chunk_count(self) -> int:
        """The number of chunks."""
    @property
    def coding(self) -> str:
        """The coding of every chunk."""
    @property
    def q0(self) -> Optional[int]:
        """The frame's q0, for the codings that carry one."""
    @property
    def metadata(self) -> Optional[bytes]:
        """The application metadata, None when there is none."""
    @property
    def keyed(self) -> bool:
        """Whether the frame is tagged with a key."""
    def chunk_bits(self, i: int) -> range:
        """The bits chunk `i` holds."""
    def chunk_of(self, position: int) -> int:
        """The chunk that holds bit `position`."""
    def indexer(self) -> Indexer:
        """The indexer of the filter's parameters."""
    def encode_chunk(self, i: int, positions: _Positions, *, relative: bool = False) -> bytes:
        """The payload of chunk `i`, built from the positions of its keys' bits."""
    def assemble(self, payloads: Iterable[_Buffer]) -> bytes:
        """The frame, from every chunk's payload in chunk order."""
    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled with everything it was made with (the key too)."""
    @staticmethod
    def _from_parts(
        params: tuple[int, int, list[int], int, int, int, int],
        n: int,
        ones: int,
        shift: int,
        coding: str,
        metadata: Optional[_Buffer],
        key: Optional[_Buffer],
        budget: Optional[int],
        generation: int,
    ) -> ChunkedFrame: ...

class BloomwireError(Exception):
    """Every error of bloomwire."""

class InvalidParameter(BloomwireError):
    """A parameter outside what bloomwire supports."""
    name: str
    reason: str

class Incompatible(BloomwireError):
    """Two filters that must agree on m, k, layout and hash family do not."""
    reason: str

class OverBudget(BloomwireError):
    """No encoding fits the byte budget."""
    budget: int
    compressed: int
    raw: int

class UnexpectedDelta(BloomwireError):
    """A delta frame where a full frame was expected."""

class UnexpectedFilterType(BloomwireError):
    """A counting filter where a Bloom filter was expected, or the other way round."""
    expected: str
    got: int

class OpaqueHashFamily(BloomwireError):
    """A query or insert on a filter of the opaque hash family (base hash 0): another library
    placed its bits, and only that library can query them."""

class PlanExceedsLimits(BloomwireError):
    """A plan would exceed the receiver's limits."""
    name: str
    needed: int
    limit: int

class AllocationFailed(BloomwireError, MemoryError):
    """Memory for a filter (or a decoded payload) could not be allocated: the machine lacks
    it. A `MemoryError` too."""
    bytes: int

class FrameError(BloomwireError):
    """A frame that cannot be decoded."""

class Incomplete(FrameError):
    """The input ends before the frame does."""
    needed: int

class LimitExceeded(FrameError):
    """A header value exceeds the caller's limits."""
    field: str
    value: int
    limit: int
    offset: int

class BadMagic(FrameError):
    """Not a bloomwire frame: the first byte that differs from the magic, and its offset."""
    byte: int
    offset: int

class UnsupportedVersion(FrameError):
    """A format version this decoder does not implement."""
    version: int

class InvalidField(FrameError):
    """A header field holds a reserved or undefined value."""
    field: str
    value: int
    offset: int

class UnsupportedCoding(FrameError):
    """A coding of the registry outside the profile the decoder implements: the frame may
    be valid; send this receiver the core profile."""
    coding: int
    offset: int

class BadVarint(FrameError):
    """A malformed varint."""
    field: str
    offset: int

class ChecksumMismatch(FrameError):
    """The frame's checksum does not match its contents."""
    stored: int
    computed: int
    offset: int

class MissingTag(FrameError):
    """A decoder with a key was given a frame without an authentication tag."""
    offset: int

class BadTag(FrameError):
    """The frame's authentication tag does not match the frame and the key."""
    offset: int

class TagNotVerified(FrameError):
    """A `Receiver` with a key was given a filter or delta whose tag was not checked with
    that key (decoded without a key, or with another one)."""

class TrailingBytes(FrameError):
    """Bytes follow the frame."""
    count: int
    offset: int

class CorruptPayload(FrameError):
    """The payload does not decode to exactly the filter."""
    reason: str
    offset: int

class SequenceError(BloomwireError):
    """A frame that does not follow the receiver's generation."""

class StaleGeneration(SequenceError):
    """A duplicate or late frame."""
    have: int
    got: int

class ResyncNeeded(SequenceError):
    """The receiver needs a full frame."""

class GenerationGap(ResyncNeeded):
    """A delta for a generation the receiver does not hold."""
    have: Optional[int]
    base: int

class BaseMismatch(ResyncNeeded):
    """The receiver's base differs from the sender's."""
    generation: int
    expected: int
    actual: int

class ResultMismatch(ResyncNeeded):
    """Applying the delta did not give the sender's bits."""
    generation: int
    expected: int
    actual: int
