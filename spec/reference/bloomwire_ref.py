#!/usr/bin/env python3
"""Reference decoder for the bloomwire frame format, version 1.

Written from spec/FORMAT.md alone (Python 3, standard library only).  Section
numbers in comments ("§2.1") refer to that document.  The code favours being
readable next to the spec over being fast; vectors are small.

Command line (run from the repository root):

    python3 spec/reference/bloomwire_ref.py check spec/vectors
    python3 spec/reference/bloomwire_ref.py inspect FRAME
    python3 spec/reference/bloomwire_ref.py query FRAME KEY...     (KEY: text, or hex:0a0b..)
    python3 spec/reference/bloomwire_ref.py conform [--profile core|full]
        (an adapter of the conformance kit, spec/conformance/README.md: JSON requests
        on stdin, one answer a line on stdout)

As a module:

    f = decode_frame(data)          # Frame (CountingFrame for filter type 3), or
                                    # raises a BloomwireError subclass
    f.contains(b"key-1")
"""

import bisect
import functools
import hashlib
import hmac
import json
import os
import random
import struct
import sys

MASK64 = (1 << 64) - 1


# ---------------------------------------------------------------------------
# Errors (names as in §2 / §2.3 / §4)
# ---------------------------------------------------------------------------

class BloomwireError(Exception):
    """Base class: the frame is rejected (or, for Incomplete, not yet complete)."""
    field = None


class BadMagic(BloomwireError):
    pass


class UnsupportedVersion(BloomwireError):
    pass


class InvalidField(BloomwireError):
    def __init__(self, field, detail=""):
        super().__init__(f"invalid field {field!r}" + (f": {detail}" if detail else ""))
        self.field = field


class BadVarint(BloomwireError):
    pass


class LimitExceeded(BloomwireError):
    def __init__(self, field, value, limit):
        super().__init__(f"{field} = {value} exceeds the receiver's limit {limit}")
        self.field = field


class Incomplete(BloomwireError):
    """§2.3: not an error of the frame; `needed` more bytes (at least) are required."""

    def __init__(self, needed):
        super().__init__(f"incomplete frame: need at least {needed} more byte(s)")
        self.needed = needed


class ChecksumMismatch(BloomwireError):
    pass


class TrailingBytes(BloomwireError):
    pass


class MissingTag(BloomwireError):
    """§2.5: a key was given, and the frame has no authentication tag (flags bit 2)."""


class BadTag(BloomwireError):
    """§2.5: the frame's tag is not keyed BLAKE2b-128 of its bytes under the key."""


TAG_LEN = 16


def frame_tag(key, data):
    """§2.5: keyed BLAKE2b (RFC 7693) with a 16-byte digest of every byte before the tag."""
    return hashlib.blake2b(data, key=key, digest_size=TAG_LEN).digest()


class GenerationGap(BloomwireError):
    """§5.2: the delta's base generation is not the one held."""


class Incompatible(BloomwireError):
    """§5.2: the delta's m, filter type, k or hash family differ from the base's."""


class BaseMismatch(BloomwireError):
    """§5.2: the held bits' digest is not the delta's base digest."""


class ResultMismatch(BloomwireError):
    """§5.2: the result's digest is not the delta's result digest."""


class CorruptPayload(BloomwireError):
    pass


class UnsupportedCoding(BloomwireError):
    """A coding the registry defines that this decoder's profile does not implement (a Core
    decoder meeting coding 3, 6, 9, 10 or 11), reported where InvalidField(coding) would be."""


class OpaqueHashFamily(BloomwireError):
    """§3.1: a membership query on a filter of base hash 0, whose bits another library
    placed: refused."""


# Field names used in InvalidField / LimitExceeded.  The spec names the error
# explicitly only for frame kind, m, k, q0 and payload length; for the other
# rows of the §2 table it says just "reject".  We use the table's "field"
# column as the name.  NOTE: the test vectors' reject manifest calls the
# base-hash field "hash family" (see the report accompanying this file).
F_FRAME_KIND = "frame kind"
F_FILTER_TYPE = "filter type"
F_BASE_HASH = "base hash"
F_INDEX_SCHEME = "index scheme"
F_CODING = "coding"
F_FLAGS = "flags"
F_M = "m"
F_K = "k"
F_Q0 = "q0"
F_PAYLOAD_LENGTH = "payload length"
F_FILTER_BYTES = "filter bytes"          # §2.3: the decoded filter's memory

# §2.2 the work bound: symbols <= 2^WORK_SHIFT * (L + WORK_SLACK)
WORK_SHIFT = 12
WORK_SLACK = 64
F_COUNTED_TYPE = "counted type"          # filter type 3 only (§2, §3.4)
F_COUNTER_WIDTH = "counter width"
F_TABLE_LENGTH = "table length"          # coding 4 only (§2, §4.7)
F_FREQUENCY = "frequency"
F_FREQUENCIES = "frequencies"
F_CHUNK_SHIFT = "chunk shift"
F_METADATA_LENGTH = "metadata length"    # flags bit 3 only (§2.5)


# ---------------------------------------------------------------------------
# §2.4 CRC-32C (Castagnoli), table driven, reflected polynomial 0x82F63B78
# ---------------------------------------------------------------------------

def _make_crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C_TABLE = _make_crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF                       # initial value
    table = _CRC32C_TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF                # final XOR


def varint(x):
    """The shortest varint (§1) of x, for writing test frames: the inverse of
    Reader.varint."""
    out = bytearray()
    while True:
        out.append((x & 0x7F) | (0x80 if x >> 7 else 0))
        x >>= 7
        if not x:
            return bytes(out)


# ---------------------------------------------------------------------------
# Appendix A: XXH64
# ---------------------------------------------------------------------------

P1 = 0x9E3779B185EBCA87
P2 = 0xC2B2AE3D27D4EB4F
P3 = 0x165667B19E3779F9
P4 = 0x85EBCA77C2B2AE63
P5 = 0x27D4EB2F165667C5


def rotl64(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK64


def _xxh_round(acc, lane):
    return (rotl64((acc + lane * P2) & MASK64, 31) * P1) & MASK64


def _xxh_merge(acc, v):
    return ((acc ^ _xxh_round(0, v)) * P1 + P4) & MASK64


def xxh64(data, seed):
    n = len(data)
    p = 0
    if n >= 32:
        v1 = (seed + P1 + P2) & MASK64
        v2 = (seed + P2) & MASK64
        v3 = seed
        v4 = (seed - P1) & MASK64
        while p + 32 <= n:
            l1, l2, l3, l4 = struct.unpack_from("<4Q", data, p)
            v1 = _xxh_round(v1, l1)
            v2 = _xxh_round(v2, l2)
            v3 = _xxh_round(v3, l3)
            v4 = _xxh_round(v4, l4)
            p += 32
        acc = (rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18)) & MASK64
        for v in (v1, v2, v3, v4):
            acc = _xxh_merge(acc, v)
    else:
        acc = (seed + P5) & MASK64
    acc = (acc + n) & MASK64
    while p + 8 <= n:
        (lane,) = struct.unpack_from("<Q", data, p)
        acc = (rotl64(acc ^ _xxh_round(0, lane), 27) * P1 + P4) & MASK64
        p += 8
    if p + 4 <= n:
        (lane,) = struct.unpack_from("<I", data, p)
        acc = (rotl64(acc ^ ((lane * P1) & MASK64), 23) * P2 + P3) & MASK64
        p += 4
    while p < n:
        acc = (rotl64(acc ^ ((data[p] * P5) & MASK64), 11) * P1) & MASK64
        p += 1
    acc ^= acc >> 33
    acc = (acc * P2) & MASK64
    acc ^= acc >> 29
    acc = (acc * P3) & MASK64
    acc ^= acc >> 32
    return acc


# ---------------------------------------------------------------------------
# Appendix B: SipHash-2-4 (64-bit output)
# ---------------------------------------------------------------------------

def siphash24(data, k0, k1):
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573

    def sipround():
        nonlocal v0, v1, v2, v3
        v0 = (v0 + v1) & MASK64; v1 = rotl64(v1, 13); v1 ^= v0; v0 = rotl64(v0, 32)
        v2 = (v2 + v3) & MASK64; v3 = rotl64(v3, 16); v3 ^= v2
        v0 = (v0 + v3) & MASK64; v3 = rotl64(v3, 21); v3 ^= v0
        v2 = (v2 + v1) & MASK64; v1 = rotl64(v1, 17); v1 ^= v2; v2 = rotl64(v2, 32)

    n = len(data)
    full = n - n % 8
    blocks = [struct.unpack_from("<Q", data, p)[0] for p in range(0, full, 8)]
    # last block: remaining 0..7 bytes little-endian, with (len mod 256) << 56 ORed in
    blocks.append(int.from_bytes(data[full:], "little") | ((n & 0xFF) << 56))
    for mword in blocks:
        v3 ^= mword
        sipround(); sipround()
        v0 ^= mword
    v2 ^= 0xFF
    for _ in range(4):
        sipround()
    return v0 ^ v1 ^ v2 ^ v3


# ---------------------------------------------------------------------------
# §3.2 Stream words, reduce, index sequences, rational k
# ---------------------------------------------------------------------------

def fmix64(x):
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & MASK64
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & MASK64
    x ^= x >> 33
    return x


def stream(h, s):
    return fmix64((h + s * 0x9E3779B97F4A7C15) & MASK64)


def reduce(x, r):
    """floor(x * R / 2^64): the 128-bit product's high half, in [0, R)."""
    return (x * r) >> 64


def index_sequence(a, b, r, scheme, count):
    """First `count` terms g_0 .. g_{count-1} of the index sequence of (a, b) in range r."""
    x = reduce(a, r)
    y = reduce(b, r)
    out = []
    for i in range(count):
        if i > 0:
            x = (x + y) % r
            if scheme == 1:                 # enhanced double hashing
                y = (y + i) % r
        out.append(x)
    return out


def k_count(raw_k, d):
    """count(k, d) = floor(k) + ((d >> 48) < frac(k)) — §3.2 'Rational k'."""
    return (raw_k >> 16) + (1 if (d >> 48) < (raw_k & 0xFFFF) else 0)


def ceil_k(raw_k):
    return (raw_k >> 16) + (1 if raw_k & 0xFFFF else 0)


def block_layout(m):
    """§3.3 type 2: (offset, size) of the blocks, the powers of two of m's binary
    digits, largest first."""
    blocks = []
    offset = 0
    for bit in range(m.bit_length() - 1, -1, -1):
        if (m >> bit) & 1:
            blocks.append((offset, 1 << bit))
            offset += 1 << bit
    return blocks


def base_hash(header, key):
    """§3.1."""
    if header["base_hash"] == 1:
        return xxh64(key, header["seed"])
    return siphash24(key, header["k0"], header["k1"])


def key_bit_indexes(header, key):
    """§3.3: all bit indexes of `key` in the filter described by `header`."""
    h = base_hash(header, key)
    m = header["m"]
    scheme = header["index_scheme"]
    ftype = header["filter_type"]
    if ftype == 3:                                         # counting: the counted type (§3.4)
        ftype = header["counted_type"]
    if ftype == 0:                                         # standard
        a, b, d = stream(h, 0), stream(h, 1), stream(h, 2)
        return index_sequence(a, b, m, scheme, k_count(header["k_raw"], d))
    if ftype == 1:                                         # partitioned
        p = ceil_k(header["k_raw"])
        s = m // p
        a, b, d = stream(h, 0), stream(h, 1), stream(h, 2)
        g = index_sequence(a, b, s, scheme, k_count(header["k_raw"], d))
        return [i * s + gi for i, gi in enumerate(g)]
    # variably-sized blocks
    out = []
    for j, ((offset, size), raw_j) in enumerate(zip(block_layout(m), header["block_k_raw"])):
        a, b, d = stream(h, 3 * j), stream(h, 3 * j + 1), stream(h, 3 * j + 2)
        c = k_count(raw_j, d)
        out.extend(offset + g for g in index_sequence(a, b, size, scheme, c))
    return out


# ---------------------------------------------------------------------------
# §2 Header parsing
# ---------------------------------------------------------------------------

DEFAULT_MAX_M = 1 << 28          # §2.3 recommended defaults
DEFAULT_MAX_K = 64
DEFAULT_MAX_PAYLOAD = 1 << 26
DEFAULT_MAX_METADATA = 4096       # §2.3, §2.5
HARD_MAX_M = 1 << 48             # §2.3 hard limits
HARD_MAX_K_RAW = 1024 * 65536

FILTER_TYPES = {0: "standard", 1: "partitioned", 2: "blocks", 3: "counting"}
BASE_HASHES = {0: "opaque", 1: "xxh64", 2: "siphash24"}
INDEX_SCHEMES = {0: "double", 1: "enhanced"}
CODINGS = {0: "raw", 1: "adaptive", 2: "known-p", 3: "known-p-symbols",
           4: "known-counters", 5: "adaptive-counters", 6: "known-p-interleaved", 7: "positional",
           9: "small", 10: "wide", 11: "escape"}      # 8: withdrawn before 1.0 (§4.0)
BIT_CODINGS = (0, 1, 2, 3, 6, 7, 9, 10, 11)  # valid with filter types 0, 1, 2 (§2)
COUNTER_CODINGS = (0, 4, 5)          # valid with filter type 3 (§2)
CORE_CODINGS = (0, 1, 2, 4, 5, 7)    # the Core profile's codings (with chunked payloads)


class _Reader:
    """Reads from a byte buffer; running out of bytes raises Incomplete (§2.3)."""

    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n):
        end = self.pos + n
        if end > len(self.data):
            raise Incomplete(end - len(self.data))
        out = self.data[self.pos:end]
        self.pos = end
        return out

    def u8(self):
        return self.take(1)[0]

    def varint(self):
        """§1 unsigned LEB128, at most 10 bytes, <= 2^64-1, shortest form."""
        value = 0
        for i in range(10):
            byte = self.u8()                      # may raise Incomplete (need >= 1 more)
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                if i > 0 and byte == 0:
                    raise BadVarint("varint not in shortest form (ends with 0x00)")
                if i == 9 and byte > 1:
                    raise BadVarint("varint exceeds 2^64 - 1")
                return value
        raise BadVarint("varint longer than 10 bytes")


def parse_header(data, max_m=DEFAULT_MAX_M, max_k=DEFAULT_MAX_K,
                 max_payload=DEFAULT_MAX_PAYLOAD, max_metadata=DEFAULT_MAX_METADATA,
                 max_filter_bytes=None, profile="full"):
    """§2, checks in the order of the table (§2.3).  Returns (header dict, header length).

    Nothing here allocates or loops in proportion to m, k, n or L (type 2 reads
    popcount(m) <= 48 varints).  max_filter_bytes (§2.3) bounds the decoded filter's
    memory: ceil(m / 8) bytes for a Bloom filter, m for a counting filter; by default
    ceil(max_m / 8), the memory of a Bloom filter of max_m bits.  profile "core" decodes
    the Core profile's codings only (UnsupportedCoding for the others)."""
    if max_filter_bytes is None:
        max_filter_bytes = -(-max_m // 8)
    r = _Reader(data)
    hdr = {}
    if r.take(4) != b"BLWR":
        raise BadMagic("magic is not 'BLWR'")
    hdr["version"] = r.u8()
    if hdr["version"] != 1:
        raise UnsupportedVersion(f"version {hdr['version']}")
    hdr["frame_kind"] = r.u8()
    if hdr["frame_kind"] not in (0, 1):           # 0 = full, 1 = delta (§5)
        raise InvalidField(F_FRAME_KIND, str(hdr["frame_kind"]))
    hdr["filter_type"] = r.u8()
    if hdr["filter_type"] not in FILTER_TYPES:
        raise InvalidField(F_FILTER_TYPE, str(hdr["filter_type"]))
    hdr["base_hash"] = r.u8()
    opaque = hdr["base_hash"] == 0                # §3.1: another library's bits
    if hdr["base_hash"] not in BASE_HASHES or (opaque and hdr["filter_type"] != 0):
        raise InvalidField(F_BASE_HASH, str(hdr["base_hash"]))
    hdr["index_scheme"] = r.u8()
    if hdr["index_scheme"] not in INDEX_SCHEMES or (opaque and hdr["index_scheme"] != 0):
        raise InvalidField(F_INDEX_SCHEME, str(hdr["index_scheme"]))
    hdr["coding"] = r.u8()
    counting = hdr["filter_type"] == 3
    if hdr["coding"] not in (COUNTER_CODINGS if counting else BIT_CODINGS):
        raise InvalidField(F_CODING, f"{hdr['coding']} with filter type {hdr['filter_type']}")
    if profile == "core" and hdr["coding"] not in CORE_CODINGS:
        raise UnsupportedCoding(f"coding {hdr['coding']} is not in the Core profile")
    hdr["flags"] = r.u8()
    # bit 0: chunked payload (§4.10), for codings 1, 2, 3, 6, 7 and 10 (never 9 or 11); bit 1:
    # restart (§5.2), on full frames only; bit 2: authentication tag (§2.5); bit 3: application
    # metadata (§2.6); bits 4-7 reserved
    flags = hdr["flags"]
    if (flags & ~0b1111 or (flags & 1 and hdr["coding"] not in (1, 2, 3, 6, 7, 10))
            or (flags & 2 and hdr["frame_kind"] != 0)):
        raise InvalidField(F_FLAGS, hex(flags))
    hdr["restart"] = bool(flags & 2)
    hdr["tagged"] = bool(flags & 4)

    # seed: a varint for xxHash64, 16 bytes (k0 then k1) for SipHash-2-4, none for opaque
    if opaque:
        pass
    elif hdr["base_hash"] == 1:
        hdr["seed"] = r.varint()
    else:
        # two fields (§2.3): input ending inside k0 needs the rest of k0 only
        hdr["k0"] = struct.unpack("<Q", r.take(8))[0]
        hdr["k1"] = struct.unpack("<Q", r.take(8))[0]

    # m: 1 ..= 2^48 (InvalidField), then the receiver's max_m (LimitExceeded)
    m = hdr["m"] = r.varint()
    if not 1 <= m <= HARD_MAX_M:
        raise InvalidField(F_M, str(m))
    if m > max_m:
        raise LimitExceeded(F_M, m, max_m)
    if not counting and -(-m // 8) > max_filter_bytes:
        raise LimitExceeded(F_FILTER_BYTES, -(-m // 8), max_filter_bytes)

    # counted type and counter width: filter type 3 only (§2, §3.4)
    layout = hdr["filter_type"]
    if counting:
        layout = hdr["counted_type"] = r.u8()
        if layout not in (0, 1, 2):
            raise InvalidField(F_COUNTED_TYPE, str(layout))
        hdr["counter_width"] = r.u8()
        if not 1 <= hdr["counter_width"] <= 8:
            raise InvalidField(F_COUNTER_WIDTH, str(hdr["counter_width"]))
        if m > max_filter_bytes:                 # a byte a counter, whatever the width
            raise LimitExceeded(F_FILTER_BYTES, m, max_filter_bytes)

    # k (§2.1); a counting filter has the k field of its counted type
    if layout in (0, 1):
        raw = r.varint()
        if not 65536 <= raw <= HARD_MAX_K_RAW:
            raise InvalidField(F_K, f"raw {raw}")
        if layout == 1 and m < ceil_k(raw):
            raise InvalidField(F_K, f"partitioned filter needs m >= ceil(k) = {ceil_k(raw)}")
        hdr["k_raw"] = raw
    else:
        raws = []
        for _ in range(bin(m).count("1")):       # one per block, block order
            raw_j = r.varint()
            if raw_j > HARD_MAX_K_RAW:
                raise InvalidField(F_K, f"block raw {raw_j}")
            raws.append(raw_j)
        total = sum(raws)
        if not 65536 <= total <= HARD_MAX_K_RAW:
            raise InvalidField(F_K, f"sum of block raw k {total}")
        hdr["block_k_raw"] = raws
        hdr["k_raw"] = total                      # "The filter's k is the sum."
    if ceil_k(hdr["k_raw"]) > max_k:
        raise LimitExceeded(F_K, ceil_k(hdr["k_raw"]), max_k)

    hdr["n"] = r.varint()                         # informational
    hdr["generation"] = r.varint()                # §5: 0 = not numbered
    if hdr["frame_kind"] == 1:                    # delta fields (§2, §5)
        hdr["base_generation"] = r.varint()
        if hdr["base_generation"] >= hdr["generation"]:
            raise InvalidField("base generation", str(hdr["base_generation"]))
        hdr["base_digest"], hdr["result_digest"] = struct.unpack("<2I", r.take(8))

    # application metadata (§2.6): flags bit 3; at least 1 byte, then max_metadata, both
    # checked before the bytes are read
    if flags & 8:
        length = r.varint()
        if length == 0:
            raise InvalidField(F_METADATA_LENGTH, "0 (an empty field is no field)")
        if length > max_metadata:
            raise LimitExceeded(F_METADATA_LENGTH, length, max_metadata)
        hdr["metadata_hex"] = r.take(length).hex()

    hdr["q0"] = None
    if hdr["coding"] in (2, 3, 6, 9, 10, 11):
        (hdr["q0"],) = struct.unpack("<H", r.take(2))
        if hdr["q0"] == 0:
            raise InvalidField(F_Q0, "0")

    # counter table: coding 4 only (§2, §4.7); t <= 2^b <= 256 entries
    hdr["counter_table"] = None
    if hdr["coding"] == 4:
        t = r.varint()
        if not 1 <= t <= 1 << hdr["counter_width"]:
            raise InvalidField(F_TABLE_LENGTH, str(t))
        table = []
        for _ in range(t):
            f = r.varint()
            if f > 65536:
                raise InvalidField(F_FREQUENCY, str(f))
            table.append(f)
        if sum(table) != 65536 or table[-1] == 0:
            raise InvalidField(F_FREQUENCIES, f"sum {sum(table)}, last {table[-1]}")
        hdr["counter_table"] = table
    hdr["chunk_shift"] = None
    if hdr["flags"] & 1:
        shift = hdr["chunk_shift"] = r.u8()
        if not 6 <= shift <= 47 or (1 << shift) >= m:
            raise InvalidField(F_CHUNK_SHIFT, str(shift))

    # payload length: max_payload first, then §2.2 (table order)
    length = hdr["payload_len"] = r.varint()
    if length > max_payload:
        raise LimitExceeded(F_PAYLOAD_LENGTH, length, max_payload)
    coding = hdr["coding"]
    if hdr["chunk_shift"] is not None:
        chunks = -(-m // (1 << hdr["chunk_shift"]))
        if length < chunks:                        # a length varint per chunk
            raise InvalidField(F_PAYLOAD_LENGTH, f"{length} bytes for {chunks} chunks")
    elif coding == 0:
        need = (m * hdr["counter_width"] + 7) // 8 if counting else (m + 7) // 8
        if length != need:
            raise InvalidField(F_PAYLOAD_LENGTH, f"raw needs {need}, got {length}")
    elif coding in (1, 2, 4, 5):
        pass                                       # any length (§2.2)
    elif coding == 6:
        if length % 4 or length < 32:
            raise InvalidField(F_PAYLOAD_LENGTH, f"{length} (must be a multiple of 4, >= 32)")
    elif coding == 9:
        if length < SMALL_MIN_LEN:
            raise InvalidField(F_PAYLOAD_LENGTH, f"{length} (must be >= 6)")
    elif coding == 11:
        if length < ESCAPE_MIN_LEN:
            raise InvalidField(F_PAYLOAD_LENGTH, f"{length} (must be >= 8)")
    elif coding == 10:
        if length % 2 or length < WIDE_STATE_BYTES:
            raise InvalidField(F_PAYLOAD_LENGTH, f"{length} (must be even, >= 256)")
    elif coding == 7:
        if length < 1:
            raise InvalidField(F_PAYLOAD_LENGTH, "0 (positional needs the count)")
    else:
        if length % 4:
            raise InvalidField(F_PAYLOAD_LENGTH, f"{length} (must be a multiple of 4)")

    # the work bound (§2.2): at most 2^12 (L + 64) symbols for codings 1 to 6 and 9 to 11; raw has a
    # fixed length, positional its own bound (§4.11), and a known-counters table of one value
    # decodes by filling
    table = hdr.get("counter_table")
    exempt = coding in (0, 7) or (coding == 4 and table is not None and len(table) == 1)
    if not exempt and m > (length + WORK_SLACK) << WORK_SHIFT:
        raise InvalidField(F_PAYLOAD_LENGTH,
                           f"{length} bytes may code at most {(length + WORK_SLACK) << WORK_SHIFT} symbols, not m = {m}")

    hdr["header_len"] = r.pos
    return hdr, r.pos


# ---------------------------------------------------------------------------
# §4.1 Coding 0: raw
# ---------------------------------------------------------------------------

def decode_raw(payload, m):
    bits = bytearray(payload)
    if m % 8 and bits[-1] >> (m % 8):
        raise CorruptPayload("raw: a bit past m in the last byte is set")
    return bits


# ---------------------------------------------------------------------------
# §4.2 Range decoder, with §4.3 (adaptive) and §4.4 (known-p) models
# ---------------------------------------------------------------------------


class RangeWords:
    """§4.2 the range decoder's input: big-endian 32-bit words, zero bytes past the end of
    the payload; `reads` counts every word read, also those past the end."""

    def __init__(self, payload):
        self.payload = payload
        self.reads = 0

    def next(self):
        chunk = self.payload[4 * self.reads:4 * self.reads + 4]
        self.reads += 1
        return int.from_bytes(chunk + bytes(4 - len(chunk)), "big")


def check_termination(payload, lower, rng, point, reads):
    """§4.2 termination: the fewest bytes b naming a point X of the final interval."""
    end = lower + rng                              # 65 bits, no wrap
    for b in range(5):
        unit = 1 << (64 - 8 * b)
        x = -(-lower // unit) * unit               # ceil(lower / unit) * unit
        if x < end:
            break
    if point != x & MASK64:
        raise CorruptPayload("range: payload does not end with the encoder's termination")
    if len(payload) > 4 * (reads - 2) + b:
        raise CorruptPayload("range: payload continues past the termination")
    if payload and payload[-1] == 0:
        raise CorruptPayload("range: payload ends with a zero byte")


def decode_range(payload, m, q0_fixed):
    """Decode m bits.  q0_fixed None = adaptive model (§4.3), else known-p (§4.4)."""
    words = RangeWords(payload)
    next_word = words.next

    point = (next_word() << 32) | next_word()
    lower = 0
    rng = MASK64                                   # 2^64 - 1
    c0 = c1 = 1                                    # adaptive counts (§4.3)
    bits = bytearray((m + 7) // 8)
    for i in range(m):
        if q0_fixed is None:
            q0 = max(1, (c0 << 16) // (c0 + c1))
        else:
            q0 = q0_fixed
        # decode_bit(q0)
        scale = rng >> 16
        offset = (point - lower) & MASK64
        if offset >= scale << 16:
            raise CorruptPayload(f"range: point outside the interval at bit {i}")
        bound = scale * q0
        if offset < bound:
            rng = bound
            c0 += 1
        else:
            lower = (lower + bound) & MASK64
            rng = scale * (65536 - q0)
            bits[i >> 3] |= 1 << (i & 7)
            c1 += 1
        if rng < 1 << 32:
            lower = (lower << 32) & MASK64
            rng <<= 32
            point = ((point << 32) & MASK64) | next_word()

    check_termination(payload, lower, rng, point, words.reads)
    return bits


# ---------------------------------------------------------------------------
# §4.5 Coding 3: known-p symbols (ANS, precision 24)
# ---------------------------------------------------------------------------

ANS_PRECISION = 24


def ans_model(w, q0):
    """Exact integer model of §4.5: returns (f, cum) lists indexed by symbol v."""
    q1 = 65536 - q0
    f = []
    for v in range(1 << w):
        o = bin(v).count("1")
        weight = q0 ** (w - o) * q1 ** o                   # exact, < 2^128
        f.append(max(1, (weight << ANS_PRECISION) >> (16 * w)))
    s = sum(f)
    t = f.index(max(f))                                    # smallest v with the largest f
    f[t] += (1 << ANS_PRECISION) - s
    assert f[t] > 0
    cum = [0]
    for fv in f[:-1]:
        cum.append(cum[-1] + fv)
    return f, cum


def decode_ans(payload, m, q0):
    stack = list(struct.unpack(f"<{len(payload) // 4}I", payload))   # popped from the end
    if not stack:
        state = 0
    else:
        if stack[-1] == 0:
            raise CorruptPayload("ans: last word is zero")
        state = stack.pop()
        if stack:
            state = (state << 32) | stack.pop()

    mask = (1 << ANS_PRECISION) - 1

    def decode_symbols(count, model, out):
        nonlocal state
        f, cum = model
        for _ in range(count):
            quantile = state & mask
            v = bisect.bisect_right(cum, quantile) - 1     # cum(v) <= quantile < cum(v)+f(v)
            state = (state >> ANS_PRECISION) * f[v] + (quantile - cum[v])
            if state < 1 << 32 and stack:
                state = (state << 32) | stack.pop()
            out.append(v)

    bits = bytearray()
    decode_symbols(m // 8, ans_model(8, q0), bits)         # whole bytes, in order
    r = m % 8
    if r:
        decode_symbols(1, ans_model(r, q0), bits)          # the last r bits
    if state != 0 or stack:
        raise CorruptPayload("ans: data left after the last symbol")
    return bits


# ---------------------------------------------------------------------------
# §3.4 packed counters; §4.2 decode_symbol with §4.7 (known) and §4.8 (adaptive)
# ---------------------------------------------------------------------------

def pack_counters(counters, width):
    """§3.4: counter i in bits i*b .. i*b + b - 1, least significant bit first."""
    acc = 0
    for i, c in enumerate(counters):
        acc |= c << (i * width)
    return acc.to_bytes((len(counters) * width + 7) // 8, "little")


def unpack_counters(payload, m, width):
    """§4.6: the packed form; bits past m*b must be zero."""
    acc = int.from_bytes(payload, "little")
    if acc >> (m * width):
        raise CorruptPayload("packed counters: a bit past m*b is set")
    mask = (1 << width) - 1
    return [(acc >> (i * width)) & mask for i in range(m)]


def decode_range_counters(payload, m, width, table):
    """§4.2 decode_symbol for m counters: with the header's table (§4.7, coding 4), or
    with table None the adaptive model (§4.8, coding 5)."""
    words = RangeWords(payload)
    next_word = words.next

    point = (next_word() << 32) | next_word()
    lower = 0
    rng = MASK64
    if table is None:
        freq, total = [1] * (1 << width), 1 << width      # §4.8 initial counts
    else:
        freq, total = list(table), 65536
    counters = []
    for i in range(m):
        # decode_symbol(freq, total)
        scale = rng // total
        offset = (point - lower) & MASK64
        quantile = offset // scale
        if quantile >= total:
            raise CorruptPayload(f"range: point outside the interval at counter {i}")
        cum = 0
        v = 0
        while not quantile < cum + freq[v]:                # cum(v) <= quantile < cum(v)+f(v)
            cum += freq[v]
            v += 1
        lower = (lower + scale * cum) & MASK64
        rng = scale * freq[v]
        if rng < 1 << 32:
            lower = (lower << 32) & MASK64
            rng <<= 32
            point = ((point << 32) & MASK64) | next_word()
        counters.append(v)
        if table is None:                                  # §4.8 update
            freq[v] += 32
            total += 32
            if total > 1 << 22:
                freq = [(c + 1) // 2 for c in freq]
                total = sum(freq)

    check_termination(payload, lower, rng, point, words.reads)   # as for the bit codings
    return counters


# ---------------------------------------------------------------------------
# §4.9 Coding 6: known-p interleaved (four rANS lanes, precision 24)
# ---------------------------------------------------------------------------

RANS_LOWER = 1 << 31


def decode_interleaved(payload, m, q0):
    w = struct.unpack(f"<{len(payload) // 4}I", payload)   # read front to back
    x = []
    for j in range(4):
        state = w[2 * j] | (w[2 * j + 1] << 32)
        if not RANS_LOWER <= state < 1 << 63:
            raise CorruptPayload(f"interleaved: initial state {j} out of range")
        x.append(state)
    pos = 8
    mask = (1 << ANS_PRECISION) - 1
    count = m // 8 + (1 if m % 8 else 0)
    full = ans_model(8, q0)
    last = ans_model(m % 8, q0) if m % 8 else None
    bits = bytearray()
    for t in range(count):
        f, cum = last if (t == m // 8) else full
        j = t % 4
        slot = x[j] & mask
        v = bisect.bisect_right(cum, slot) - 1              # cum(v) <= slot < cum(v)+f(v)
        x[j] = f[v] * (x[j] >> ANS_PRECISION) + (slot - cum[v])
        if x[j] < RANS_LOWER:
            if pos == len(w):
                raise CorruptPayload("interleaved: payload ends before the last symbol")
            x[j] = (x[j] << 32) | w[pos]
            pos += 1
        bits.append(v)
    if any(state != RANS_LOWER for state in x) or pos != len(w):
        raise CorruptPayload("interleaved: states not at 2^31 or words left")
    return bits


# ---------------------------------------------------------------------------
# §4.11 Coding 7: positional (gaps: rANS-coded quotient, raw remainder bits)
# ---------------------------------------------------------------------------

GAP_A_MIN = 34816          # 0.53125 in units of 2^-16: largest frequency 30720 < 2^15
GAP_A_MAX = 63488          # 31/32: smallest frequency 16
GAP_R_MAX = 46
GAP_R_JOINT = 15           # remainder bits taken in the quotient's step
GAP_TWO_LANES = 16384      # from this many ones, two rANS lanes take turns


def gap_params(m, c):
    """§4.11 parameters from the count: (r, a), integers only."""
    r = 0
    while r < GAP_R_MAX and c << (r + 4) <= m:     # largest r with c * 2^(r+3) <= m
        r += 1
    t = ((m - c) << 64) // m                       # (1 - c/m) in units of 2^-64
    for _ in range(r):
        t = (t * t + (1 << 63)) >> 64              # squared, rounded: (1 - c/m)^(2^r)
    a = min(max((t + (1 << 47)) >> 48, GAP_A_MIN), GAP_A_MAX)
    return r, a


def gap_model(a):
    """Quotient model of parameter a: (f, cum), quotients 0 .. Q-1 then the escape Q."""
    tails = [1 << 16]                     # tails[j] = round(2^16 * P(q >= j))
    s = 1 << 32                           # a^j in units of 2^-32, floored at each step
    while True:
        s = (s * a) >> 16
        tails.append((s + (1 << 15)) >> 16)
        if s < 1 << 25:                   # tail below 2^-7: this index is the escape
            break
    q = len(tails) - 1
    f = [tails[j] - tails[j + 1] for j in range(q)] + [tails[q]]
    cum = [(1 << 16) - t for t in tails]
    return f, cum


def decode_positions(payload, m):
    """§4.11: the positions of the one bits of a positional payload, in increasing order."""
    rd = _Reader(payload)
    try:
        c = rd.varint()
    except (Incomplete, BadVarint):
        raise CorruptPayload("positional: bad count")
    body = payload[rd.pos:]
    if c > m:
        raise CorruptPayload("positional: more ones than bits")
    if c == 0:
        if body:
            raise CorruptPayload("positional: bytes after the count of an empty array")
        return []
    lanes = 2 if c >= GAP_TWO_LANES else 1
    if len(body) % 4 or len(body) < 8 * lanes or c > 8 * len(body):
        raise CorruptPayload("positional: bad stream length for the count")
    w = struct.unpack(f"<{len(body) // 4}I", body)
    x = []
    for j in range(lanes):
        state = w[2 * j] | (w[2 * j + 1] << 32)
        if not RANS_LOWER <= state < 1 << 63:
            raise CorruptPayload(f"positional: initial state {j} out of range")
        x.append(state)
    pos = 2 * lanes
    r, a = gap_params(m, c)
    f, cum = gap_model(a)
    escape = len(f) - 1
    rj = min(r, GAP_R_JOINT)
    k = r - rj

    def renorm(j):
        nonlocal pos
        if x[j] < RANS_LOWER:
            if pos == len(w):
                raise CorruptPayload("positional: payload ends before the last gap")
            x[j] = (x[j] << 32) | w[pos]
            pos += 1

    def symbol(j):
        slot = x[j] & 0xFFFF
        v = bisect.bisect_right(cum, slot) - 1             # cum(v) <= slot < cum(v)+f(v)
        x[j] = f[v] * (x[j] >> 16) + (slot - cum[v])
        return v

    out = []
    nxt = 0                                                # first position still free
    for i in range(c):
        j = i % lanes
        avail = m - nxt
        if avail == 0:
            raise CorruptPayload("positional: a one beyond m")
        q = 0
        v = symbol(j)
        while v == escape:                                 # escape: Q more, same model
            renorm(j)
            q += escape
            if q << r >= avail:
                raise CorruptPayload("positional: gap past m")
            v = symbol(j)
        rem = x[j] & ((1 << rj) - 1)                       # low remainder bits, same step
        x[j] >>= rj
        renorm(j)
        if k:                                              # high remainder bits
            rem |= (x[j] & ((1 << k) - 1)) << rj
            x[j] >>= k
            renorm(j)
        g = ((q + v) << r) | rem
        if g >= avail:
            raise CorruptPayload("positional: gap past m")
        out.append(nxt + g)
        nxt += g + 1
    if any(state != RANS_LOWER for state in x) or pos != len(w):
        raise CorruptPayload("positional: stream does not end where the last gap does")
    return out


def decode_positional(payload, m):
    """§4.11: the packed bits (ceil(m/8) bytes) of a positional payload."""
    bits = bytearray((m + 7) // 8)
    for p in decode_positions(payload, m):
        bits[p >> 3] |= 1 << (p & 7)
    return bits


# ---------------------------------------------------------------------------
# §4.12 Nibble lanes (nibbles, precision 13, 16-bucket alias table; 32 lanes of 32-bit
# rANS, states in [2^15, 2^31)): the model and steps of coding 10 (coding 8, which used them
# alone, was withdrawn before 1.0)
# ---------------------------------------------------------------------------

DENSE_LANES = 32
DENSE_STATE_BYTES = 4 * DENSE_LANES        # 32 u32le states before the words
DENSE_PRECISION = 13                       # f(v) sum to 2^13
DENSE_BUCKET = 512                         # 16 buckets of 512 slots
DENSE_LOWER = 1 << 15                      # states in [2^15, 2^31)
DENSE_UPPER = 1 << 31


def nibble_frequencies(q0, precision):
    """§4.12 and §4.13: f(v) of the 16 nibbles at `precision` bits (13 for coding 10, 12 for 9)."""
    q1 = 65536 - q0
    f = []
    for v in range(16):
        o = bin(v).count("1")
        weight = q0 ** (4 - o) * q1 ** o                   # exact, < 2^64
        f.append(max(1, weight >> (64 - precision)))        # floor(weight / 2^(64 - precision))
    t = f.index(max(f))                                    # smallest v with the largest f
    f[t] += (1 << precision) - sum(f)
    assert 1 <= f[t] <= (1 << precision) - 15
    return f


def dense_model(q0):
    """§4.12: nibble frequencies at precision 13 and the alias table.

    Returns (f, div, alias, second), lists indexed by nibble / bucket 0 .. 15: bucket b's
    first div[b] slots are nibble b's (numbers 0 .. div[b]-1), the rest nibble alias[b]'s,
    numbered from second[b] on."""
    f = nibble_frequencies(q0, DENSE_PRECISION)

    rem = list(f)
    div = [DENSE_BUCKET] * 16
    alias = list(range(16))
    small = [v for v in range(16) if f[v] < DENSE_BUCKET]  # stacks: push/pop at the end
    large = [v for v in range(16) if f[v] > DENSE_BUCKET]
    while small:
        sv = small.pop()
        lv = large[-1]
        div[sv] = rem[sv]
        alias[sv] = lv
        rem[lv] -= DENSE_BUCKET - rem[sv]
        if rem[lv] <= DENSE_BUCKET:
            large.pop()
            if rem[lv] < DENSE_BUCKET:
                small.append(lv)
    assert all(1 <= d <= DENSE_BUCKET for d in div)

    # slot numbering: nibble v's own part of bucket v first (0 .. div(v)-1), then the
    # second parts of the buckets b = 0 .. 15 in order
    nxt = list(div)
    second = []
    for b in range(16):
        second.append(nxt[alias[b]])
        nxt[alias[b]] += DENSE_BUCKET - div[b]
    assert nxt == f
    return f, div, alias, second


def dense_step(state, f, div, alias, second):
    """§4.12 decode_nibble before its refill: the nibble and the state (< 2^31)."""
    slot = state & ((1 << DENSE_PRECISION) - 1)
    b, r = slot >> 9, slot % DENSE_BUCKET
    if r < div[b]:
        v, i = b, r
    else:
        v, i = alias[b], second[b] + r - div[b]
    return v, f[v] * (state >> DENSE_PRECISION) + i


# ---------------------------------------------------------------------------
# §4.13 Coding 9: small
# ---------------------------------------------------------------------------
SMALL_PRECISION = 12                       # f(v) sum to 4096, the table's size
SMALL_SIZE = 1 << SMALL_PRECISION
SMALL_STRIDE = 2563
SMALL_STATES = 4
SMALL_MIN_LEN = 6                          # the four 12-bit states


def small_model(q0):
    """§4.13: the nibble model at precision 12 and the table (sym, nb, base per position)."""
    f = nibble_frequencies(q0, SMALL_PRECISION)
    sym = [0] * SMALL_SIZE
    pos = 0
    for v in range(16):
        for _ in range(f[v]):
            sym[pos] = v
            pos = (pos + SMALL_STRIDE) % SMALL_SIZE
    assert pos == 0
    nxt = list(f)
    nb, base = [0] * SMALL_SIZE, [0] * SMALL_SIZE
    for u in range(SMALL_SIZE):                            # increasing u
        k = nxt[sym[u]]
        nxt[sym[u]] = k + 1
        nb[u] = SMALL_PRECISION - (k.bit_length() - 1)     # 12 - floor(log2 k)
        base[u] = (k << nb[u]) - SMALL_SIZE
    return sym, nb, base


def decode_small(payload, m, q0):
    """§4.13: the packed bits (ceil(m/8) bytes) of a small payload (length checked, §2.2)."""
    if len(payload) < SMALL_MIN_LEN:
        raise CorruptPayload(f"small: bad payload length {len(payload)}")
    stream = int.from_bytes(payload, "little")             # bit j is bit j of the stream
    total = 8 * len(payload)
    j = 0

    def read(c):
        nonlocal j
        if j + c > total:
            raise CorruptPayload("small: a read past the end of the payload")
        value = (stream >> j) & ((1 << c) - 1)             # first bit read is the lowest
        j += c
        return value

    sym, nb, base = small_model(q0)
    u = [read(SMALL_PRECISION) for _ in range(SMALL_STATES)]
    n = (m + 3) // 4
    first_carried = max(0, n - 3 * SMALL_STATES)           # the states carry the last 12
    bits = bytearray((m + 7) // 8)
    for t in range(first_carried):
        s = t % SMALL_STATES
        v = sym[u[s]]
        u[s] = base[u[s]] + read(nb[u[s]])
        bits[t >> 1] |= v << (4 * (t & 1))                 # even t: low nibble, odd: high
    carried = [0] * SMALL_STATES
    for t in range(first_carried, n):
        s = t % SMALL_STATES
        v = (u[s] >> (4 * ((t - first_carried) // SMALL_STATES))) & 15
        carried[s] += 1
        bits[t >> 1] |= v << (4 * (t & 1))
    if any(u[s] >> (4 * carried[s]) for s in range(SMALL_STATES)):
        raise CorruptPayload("small: a state holds more than its carried nibbles")
    if (j + 7) // 8 != len(payload):
        raise CorruptPayload("small: bytes left")
    if stream >> j:
        raise CorruptPayload("small: padding bits are set")
    if m % 8 and bits[-1] >> (m % 8):
        raise CorruptPayload("small: bits past m are set")
    return bits


# ---------------------------------------------------------------------------
# §4.14 Coding 10: wide (the lanes of 4.12 over two halves, one stream from the front and one
# from the back, each half's states carrying its last four rounds)
# ---------------------------------------------------------------------------

WIDE_STATE_BYTES = 2 * DENSE_STATE_BYTES
WIDE_CARRIED = 4


def decode_wide(payload, m, q0):
    """§4.14: the packed bits (ceil(m/8) bytes) of a wide payload (length checked, §2.2)."""
    if len(payload) % 2 or len(payload) < WIDE_STATE_BYTES:
        raise CorruptPayload(f"wide: bad payload length {len(payload)}")
    xs = [list(struct.unpack(f"<{DENSE_LANES}I", payload[128 * h:128 * h + 128]))
          for h in (0, 1)]
    if any(not DENSE_LOWER <= s < DENSE_UPPER for x in xs for s in x):
        raise CorruptPayload("wide: an initial state is outside [2^15, 2^31)")
    rest = payload[WIDE_STATE_BYTES:]
    w = struct.unpack(f"<{len(rest) // 2}H", rest)
    W = len(w)
    read = [0, 0]                                          # words read by half 0, half 1
    model = dense_model(q0)
    n = (m + 3) // 4                                       # nibbles
    R = -(-n // DENSE_LANES)                               # rounds
    R0 = -(-R // 2)
    halves = [(0, R0), (R0, R - R0)]                       # (F(h), R(h))
    nibbles = [0] * (R * DENSE_LANES)

    def next_word(h):
        if read[0] + read[1] == W:
            raise CorruptPayload("wide: payload ends before the last nibble")
        read[h] += 1
        return w[read[0] - 1] if h == 0 else w[W - read[1]]

    for h, (first, rounds) in enumerate(halves):
        x = xs[h]
        coded = rounds - min(WIDE_CARRIED, rounds)
        for r in range(first, first + coded):
            for l in range(DENSE_LANES):
                t = DENSE_LANES * r + 4 * (l % 8) + l // 8
                v, x[l] = dense_step(x[l], *model)
                if x[l] < DENSE_LOWER:
                    x[l] = (x[l] << 16) | next_word(h)
                nibbles[t] = v
    if read[0] + read[1] != W:
        raise CorruptPayload("wide: words left")
    for h, (first, rounds) in enumerate(halves):
        c = min(WIDE_CARRIED, rounds)
        for l in range(DENSE_LANES):
            carried = xs[h][l] - DENSE_LOWER
            if carried >> (4 * c):
                raise CorruptPayload("wide: a state holds more than its carried nibbles")
            for i in range(c):
                t = DENSE_LANES * (first + rounds - c + i) + 4 * (l % 8) + l // 8
                v = (carried >> (4 * i)) & 15
                if t < n:
                    nibbles[t] = v
                elif v:
                    raise CorruptPayload("wide: a carried nibble past m is set")
    bits = bytearray((m + 7) // 8)
    for t in range(n):
        bits[t >> 1] |= nibbles[t] << (4 * (t & 1))
    if m % 8 and bits[-1] >> (m % 8):
        raise CorruptPayload("wide: bits past m are set")
    return bits


# ---------------------------------------------------------------------------
# §4.15 Coding 11: escape (bytes by four tANS coders over the bytes with at most three
# ones and an escape, the escaped bytes by a fifth coder, all over one bit stream)
# ---------------------------------------------------------------------------

ESCAPE_P1 = 12                             # primary: f1 sum to 2^12, table of 4096
ESCAPE_P2 = 11                             # secondary: f2 sum to 2^11, table of 2048
ESCAPE_SYMBOL = 93                         # primary symbol 93 is the escape
ESCAPE_STATES = 4                          # primary states; the fifth (secondary) is y
ESCAPE_MIN_LEN = 8                         # the five states' 4 * 12 + 11 = 59 bits (§2.2)

# §4.15 Alphabets: the 256 byte values by their count of ones, then by value.  Primary
# symbol s < 93 is byte ESCAPE_BYTES[s]; secondary symbol s is byte ESCAPE_BYTES[93 + s].
ESCAPE_BYTES = tuple(sorted(range(256), key=lambda v: (bin(v).count("1"), v)))
ESCAPE_INDEX = tuple(ESCAPE_BYTES.index(v) for v in range(256))    # byte -> its index in B


def _binomial(n, k):
    c = 1
    for i in range(k):
        c = c * (n - i) // (i + 1)                         # exact at every step
    return c


def escape_frequencies(q0):
    """§4.15 Model: (f1, f2), the primary (94 symbols, sum 4096) and secondary (163
    symbols, sum 2048) frequencies, in exact integers."""
    q1 = 65536 - q0
    weight = [q0 ** (8 - o) * q1 ** o for o in range(9)]              # W(o) < 2^128
    escape = sum(_binomial(8, o) * weight[o] for o in range(4, 9))    # E < 2^128
    rest1 = (1 << ESCAPE_P1) - (ESCAPE_SYMBOL + 1)                    # 4002 = 4096 - 94
    f1 = [1 + ((weight[bin(ESCAPE_BYTES[s]).count("1")] * rest1) >> 128)
          for s in range(ESCAPE_SYMBOL)]
    f1.append(1 + ((escape * rest1) >> 128))
    v = [q0 ** (8 - o) * q1 ** (o - 4) if o >= 4 else 0 for o in range(9)]  # V(o) < 2^64
    total = sum(_binomial(8, o) * v[o] for o in range(4, 9))          # T (up to 71 bits)
    count2 = 256 - ESCAPE_SYMBOL                                      # 163 symbols
    rest2 = (1 << ESCAPE_P2) - count2                                 # 1885 = 2048 - 163
    f2 = [1 + v[bin(ESCAPE_BYTES[ESCAPE_SYMBOL + s]).count("1")] * rest2 // total
          for s in range(count2)]
    for f, size in ((f1, 1 << ESCAPE_P1), (f2, 1 << ESCAPE_P2)):
        w = f.index(max(f))                                # smallest s with the largest f
        f[w] += size - sum(f)                              # what rounding left (>= 0)
    return f1, f2


def _escape_spread(f, precision):
    """§4.15 Tables: the pairs (s, i), i = 0 .. f(s) - 1, in increasing order of
    (2i + 1) / f(s), equal values by increasing s; the u-th pair is position u."""
    def compare(a, b):
        (s, i), (r, j) = a, b
        left, right = (2 * i + 1) * f[r], (2 * j + 1) * f[s]   # exact integers
        if left != right:
            return -1 if left < right else 1
        return (s > r) - (s < r)
    pairs = [(s, i) for s in range(len(f)) for i in range(f[s])]
    pairs.sort(key=functools.cmp_to_key(compare))
    assert len(pairs) == 1 << precision
    return pairs


def _escape_table(f, precision):
    """§4.15 Tables: (sym, nb, base) per position u of an alphabet of N = 2^precision."""
    size = 1 << precision
    sym, nb, base = [], [], []
    for s, i in _escape_spread(f, precision):
        k = f[s] + i                                       # f(s) <= k < 2 f(s)
        bits = precision - (k.bit_length() - 1)            # P - floor(log2 k)
        sym.append(s)
        nb.append(bits)
        base.append((k << bits) - size)                    # 0 .. N - 1
    return tuple(sym), tuple(nb), tuple(base)


@functools.lru_cache(maxsize=16)
def escape_model(q0):
    """§4.15: ((f1, sym1, nb1, base1), (f2, sym2, nb2, base2)): the primary alphabet (94
    symbols, 4096 positions) and the secondary (163 symbols, 2048 positions).  Cached:
    the tables depend on q0 only."""
    f1, f2 = escape_frequencies(q0)
    return ((tuple(f1),) + _escape_table(f1, ESCAPE_P1),
            (tuple(f2),) + _escape_table(f2, ESCAPE_P2))


def decode_escape(payload, m, q0):
    """§4.15: the packed bits (ceil(m/8) bytes) of an escape payload (length checked, §2.2)."""
    if len(payload) < ESCAPE_MIN_LEN:
        raise CorruptPayload(f"escape: bad payload length {len(payload)}")
    buf = bytes(payload) + bytes(3)                        # a read of <= 12 bits spans <= 3 bytes
    total = 8 * len(payload)
    j = 0                                                  # bits read so far

    def read(c):                                           # §4.13 Bits: least significant first
        nonlocal j
        if j + c > total:
            raise CorruptPayload("escape: a read past the end of the payload")
        p = j >> 3
        value = ((buf[p] | buf[p + 1] << 8 | buf[p + 2] << 16) >> (j & 7)) & ((1 << c) - 1)
        j += c
        return value

    (_, sym1, nb1, base1), (_, sym2, nb2, base2) = escape_model(q0)
    u = [read(ESCAPE_P1) for _ in range(ESCAPE_STATES)]
    y = read(ESCAPE_P2)
    n = (m + 7) // 8                                       # bytes
    coded = max(0, n - ESCAPE_STATES)                      # T: the last min(4, n) are carried
    out = bytearray(n)
    v = [0] * ESCAPE_STATES
    for g in range(0, coded, ESCAPE_STATES):               # groups t = 4g .. min(4g + 3, T - 1)
        group = range(g, min(g + ESCAPE_STATES, coded))
        for t in group:                                    # the primary steps
            s = t % ESCAPE_STATES
            v[s] = sym1[u[s]]
            u[s] = base1[u[s]] + read(nb1[u[s]])
        for t in group:                                    # then the escapes, then the others
            s = t % ESCAPE_STATES
            if v[s] == ESCAPE_SYMBOL:
                out[t] = ESCAPE_BYTES[ESCAPE_SYMBOL + sym2[y]]
                y = base2[y] + read(nb2[y])
            else:
                out[t] = ESCAPE_BYTES[v[s]]
    carried = [0] * ESCAPE_STATES                          # r(s)
    for t in range(coded, n):
        s = t % ESCAPE_STATES
        out[t] = u[s] & 0xFF                               # u[t mod 4] mod 256
        carried[s] += 1
    if any(u[s] >> (8 * carried[s]) for s in range(ESCAPE_STATES)):
        raise CorruptPayload("escape: a state holds more than its carried byte")
    if y != 0:
        raise CorruptPayload("escape: the secondary state does not end at 0")
    if (j + 7) // 8 != len(payload):
        raise CorruptPayload("escape: bytes left")
    if int.from_bytes(payload[j >> 3:], "little") >> (j & 7):
        raise CorruptPayload("escape: padding bits are set")
    if m % 8 and out[-1] >> (m % 8):
        raise CorruptPayload("escape: bits past m are set")
    return out


def _encode_escape(bits, m, q0):
    """§4.15 Encoder (informative), for the self-tests: the payload of packed bits `bits`
    (ceil(m/8) bytes, bits past m zero)."""
    n = (m + 7) // 8
    coded = max(0, n - ESCAPE_STATES)
    primary, secondary = escape_model(q0)
    tables = []
    for f, sym, _, _ in (primary, secondary):
        where = [[] for _ in f]                            # where[s][i]: position of (s, i)
        for u, s in enumerate(sym):
            where[s].append(u)
        tables.append((f, len(sym), where))
    pushes = []                                            # (value, bit count), in push order

    def step(x, s, table):
        f, size, where = table
        c = x.bit_length() - f[s].bit_length()             # the c with f <= x >> c < 2 f
        if x >> c < f[s]:
            c -= 1
        pushes.append((x & ((1 << c) - 1), c))
        return size + where[s][(x >> c) - f[s]]

    x = [4096] * ESCAPE_STATES                             # 4096 + carried byte, or 4096
    for t in range(coded, n):
        x[t % ESCAPE_STATES] = 4096 + bits[t]
    y = 2048
    for g in range((coded - 1) // ESCAPE_STATES * ESCAPE_STATES, -1, -ESCAPE_STATES):
        group = range(min(g + ESCAPE_STATES, coded) - 1, g - 1, -1)     # last to first
        for t in group:                                    # the escaped bytes, on Y
            index = ESCAPE_INDEX[bits[t]]
            if index >= ESCAPE_SYMBOL:
                y = step(y, index - ESCAPE_SYMBOL, tables[1])
        for t in group:                                    # every byte, on X[t mod 4]
            s = t % ESCAPE_STATES
            x[s] = step(x[s], min(ESCAPE_INDEX[bits[t]], ESCAPE_SYMBOL), tables[0])
    pushes.append((y - 2048, ESCAPE_P2))
    for s in range(ESCAPE_STATES - 1, -1, -1):
        pushes.append((x[s] - 4096, ESCAPE_P1))
    out = bytearray()
    acc = fill = 0
    for value, c in reversed(pushes):                      # reverse order, each lsb first
        acc |= value << fill
        fill += c
        while fill >= 8:
            out.append(acc & 0xFF)
            acc >>= 8
            fill -= 8
    if fill:
        out.append(acc)                                    # zero bits to the end of the byte
    return bytes(out)


# ---------------------------------------------------------------------------
# §4.10 Chunked payloads
# ---------------------------------------------------------------------------

def _payload_length_ok(coding, length):
    """§2.2 length rules, applied to one chunk's payload."""
    if coding == 3:
        return length % 4 == 0
    if coding == 6:
        return length % 4 == 0 and length >= 32
    if coding == 7:
        return length >= 1
    if coding == 10:
        return length % 2 == 0 and length >= WIDE_STATE_BYTES
    if coding == 11:
        return length >= ESCAPE_MIN_LEN
    return True                                    # codings 1 and 2: any length


def decode_payload(coding, payload, m, q0):
    """Section 4: the packed bits (ceil(m/8) bytes) of an unchunked payload."""
    if coding == 0:
        return decode_raw(payload, m)
    if not _payload_length_ok(coding, len(payload)):
        raise CorruptPayload(f"coding {coding}: bad payload length {len(payload)}")
    if coding == 1:
        return decode_range(payload, m, None)      # the adaptive model: no q0
    if coding == 7:
        return decode_positional(payload, m)
    decode = _DECODE_WITH_Q0.get(coding)
    if decode is None:  # the header's checks refuse such ids first (§3)
        raise UnsupportedCoding(f"coding {coding} does not code bits")
    return decode(payload, m, q0)


# The codings of bits whose model is the header's q0 (§4.4, §4.5, §4.9, §4.13 to §4.15).
_DECODE_WITH_Q0 = {
    2: decode_range,
    3: decode_ans,
    6: decode_interleaved,
    9: decode_small,
    10: decode_wide,
    11: decode_escape,
}


def decode_chunked(coding, payload, m, q0, shift):
    size = 1 << shift
    count = -(-m // size)
    r = _Reader(payload)
    try:
        lengths = [r.varint() for _ in range(count)]
    except (BadVarint, Incomplete):
        raise CorruptPayload("chunk table malformed or past the payload")
    pos = r.pos
    if pos + sum(lengths) != len(payload):
        raise CorruptPayload("chunk lengths do not add up to the payload")
    bits = bytearray()
    for i, length in enumerate(lengths):
        nbits = min(size, m - i * size)            # every chunk but the last: 2^s bits
        bits += decode_payload(coding, payload[pos:pos + length], nbits, q0)
        pos += length
    return bits


# ---------------------------------------------------------------------------
# Frame
# ---------------------------------------------------------------------------

class Frame:
    def __init__(self, header, bits, frame_len):
        self.header = header
        self.bits = bytes(bits)        # packed form, ceil(m/8) bytes (§1)
        self.frame_len = frame_len

    def bit(self, i):
        return (self.bits[i >> 3] >> (i & 7)) & 1

    def contains(self, key):
        """§3.3: true when all the key's bits are 1 (possibly a false positive).  §3.1: a
        filter of base hash 0 (opaque) refuses the query."""
        if self.header["base_hash"] == 0:
            raise OpaqueHashFamily("base hash 0: the bits are another library's")
        return all(self.bit(i) for i in key_bit_indexes(self.header, key))


class CountingFrame:
    """A decoded frame of filter type 3 (§3.4): m counters (for a delta, their XOR)."""

    def __init__(self, header, counters, frame_len):
        self.header = header
        self.counters = list(counters)
        self.frame_len = frame_len

    def packed(self):
        return pack_counters(self.counters, self.header["counter_width"])

    def contains(self, key):
        """§3.4: true when all the key's counters are non-zero."""
        return all(self.counters[i] for i in key_bit_indexes(self.header, key))


def decode_frame_prefix(data, key=None, **limits):
    """Stream decoding (§2.3): decode the frame at the start of `data`, return
    (Frame, bytes consumed).  Raises Incomplete if `data` holds only part of it.
    With a `key` (32 bytes) the frame must carry a tag made with it (§2.5); without one
    a tag is skipped, and header["verified"] is False."""
    data = bytes(data)
    hdr, hlen = parse_header(data, **limits)
    tag_len = TAG_LEN if hdr["tagged"] else 0
    total = hlen + hdr["payload_len"] + 4 + tag_len
    if len(data) < total:
        raise Incomplete(total - len(data))
    end = total - tag_len                                   # end of the checksum
    (stored,) = struct.unpack_from("<I", data, end - 4)
    if crc32c(data[:end - 4]) != stored:
        raise ChecksumMismatch(f"stored {stored:#010x}, computed {crc32c(data[:end - 4]):#010x}")
    hdr["verified"] = False
    if key is not None:                                     # §2.5, before the payload
        if not hdr["tagged"]:
            raise MissingTag("no authentication tag (flags bit 2), and a key was given")
        if not hmac.compare_digest(frame_tag(key, data[:end]), data[end:total]):
            raise BadTag(f"tag at offset {end} does not match")
        hdr["verified"] = True
    payload = data[hlen:end - 4]
    m = hdr["m"]
    coding = hdr["coding"]
    if hdr["filter_type"] == 3:
        width = hdr["counter_width"]
        if coding == 0:
            counters = unpack_counters(payload, m, width)
        else:
            counters = decode_range_counters(payload, m, width, hdr["counter_table"])
        return CountingFrame(hdr, counters, total), total
    if hdr["chunk_shift"] is None:
        bits = decode_payload(coding, payload, m, hdr["q0"])
    else:
        bits = decode_chunked(hdr["coding"], payload, m, hdr["q0"], hdr["chunk_shift"])
    assert len(bits) == (m + 7) // 8
    if coding in (9, 10, 11) and hdr["q0"] != measured_q0(bits, m):
        # §4.4: codings 9 to 11 carry the measured fraction of zeros (their tables are
        # shared by neighbouring q0), so one array has one frame per coding
        raise CorruptPayload(f"q0 {hdr['q0']} is not the measured {measured_q0(bits, m)}")
    return Frame(hdr, bits, total), total


def measured_q0(bits, m):
    """§4.4: round(zeros * 65536 / m) in integers (a tie rounds up), clamped to 1..=65535."""
    zeros = m - sum(bin(b).count("1") for b in bits)
    return min(max((zeros * 65536 + m // 2) // m, 1), 65535)


def decode_frame(data, key=None, **limits):
    """Decode input that must hold exactly one frame (else TrailingBytes)."""
    frame, used = decode_frame_prefix(data, key, **limits)
    if used != len(data):
        raise TrailingBytes(f"{len(data) - used} byte(s) after the frame")
    return frame


# Header fields that fix where keys' bits are; a delta must agree with its base (§5).
_SHAPE_FIELDS = ("m", "filter_type", "k_raw", "block_k_raw", "base_hash", "seed", "k0", "k1",
                 "index_scheme", "counted_type", "counter_width")


class StaleGeneration(BloomwireError):
    """§5.2 step 1: the frame is not newer than the generation held."""


def apply_delta(base, delta):
    """§5.2 steps 1 and 3: apply a decoded delta frame to a decoded base frame held as
    generation base.header['generation'].  Returns a new Frame; `base` is unchanged."""
    bh, dh = base.header, delta.header
    if dh["frame_kind"] != 1:
        raise ValueError("not a delta frame")
    if dh["generation"] <= bh["generation"]:
        raise StaleGeneration(f"generation {dh['generation']}, held {bh['generation']}")
    if dh["base_generation"] != bh["generation"]:
        raise GenerationGap(f"delta for generation {dh['base_generation']}, "
                            f"held {bh['generation']}")
    if any(bh.get(f) != dh.get(f) for f in _SHAPE_FIELDS):
        raise Incompatible("delta and base differ in m, filter type, k or hash family")
    if dh["filter_type"] == 3:                              # counter-wise XOR (§5)
        if crc32c(base.packed()) != dh["base_digest"]:      # §5.1: packed counters
            raise BaseMismatch(f"base digest {crc32c(base.packed()):#010x}, "
                               f"delta names {dh['base_digest']:#010x}")
        header = dict(bh)
        header.update(n=dh["n"], generation=dh["generation"])
        result = CountingFrame(header, [a ^ d for a, d in zip(base.counters, delta.counters)],
                               delta.frame_len)
        if crc32c(result.packed()) != dh["result_digest"]:
            raise ResultMismatch(f"result digest {crc32c(result.packed()):#010x}, "
                                 f"delta names {dh['result_digest']:#010x}")
        return result
    if crc32c(base.bits) != dh["base_digest"]:               # §5.1 digest
        raise BaseMismatch(f"base digest {crc32c(base.bits):#010x}, "
                           f"delta names {dh['base_digest']:#010x}")
    result = bytes(a ^ b for a, b in zip(base.bits, delta.bits))
    if crc32c(result) != dh["result_digest"]:
        raise ResultMismatch(f"result digest {crc32c(result):#010x}, "
                             f"delta names {dh['result_digest']:#010x}")
    header = dict(bh)
    header.update(n=dh["n"], generation=dh["generation"])
    return Frame(header, result, delta.frame_len)


def receive(held, frame):
    """§5.2 as a receiver runs it: `held` is the decoded frame it holds (or None), `frame`
    the decoded frame that arrived.  Returns what it holds afterwards; raises on refusal,
    when `held` stays what it was."""
    fh = frame.header
    if fh["frame_kind"] == 0:
        if held is not None and fh["generation"] <= held.header["generation"] \
                and not fh["restart"]:                      # step 1, unless a restart
            raise StaleGeneration(f"generation {fh['generation']}, "
                                  f"held {held.header['generation']}")
        return frame                                        # step 2
    if held is None:
        raise GenerationGap(f"delta for generation {fh['base_generation']}, nothing held")
    return apply_delta(held, frame)                         # steps 1 and 3


# ---------------------------------------------------------------------------
# Checker (§6)
# ---------------------------------------------------------------------------

class _Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}")
        return cond


def _self_tests(t):
    """Check values given in the spec text itself (§2.4, appendices A and B), then coding 11
    (§4.15): its model and tables, and its decoder against the informative encoder."""
    t.ok(crc32c(b"123456789") == 0xE3069283, "spec: CRC-32C('123456789')")
    t.ok(xxh64(b"", 0) == 0xEF46DB3751D8E999, "spec: XXH64('', 0)")
    t.ok(xxh64(b"a", 0) == 0xD24EC4F1A98C6E5B, "spec: XXH64('a', 0)")
    k0, k1 = struct.unpack("<2Q", bytes(range(16)))
    t.ok(siphash24(bytes(range(15)), k0, k1) == 0xA129CA6149BE45E5, "spec: SipHash-2-4 vector")

    # §4.15 Alphabets: B by count of ones, then value
    t.ok(ESCAPE_BYTES[:11] == (0, 1, 2, 4, 8, 16, 32, 64, 128, 3, 5)
         and ESCAPE_BYTES[92] == 224 and ESCAPE_BYTES[93] == 15 and ESCAPE_BYTES[255] == 255
         and sorted(ESCAPE_BYTES) == list(range(256)), "§4.15: the byte order B")

    # §4.15 Model: the f1 sum to 4096, the f2 to 2048, every f >= 1; the 64-bit form of
    # floor(x * c / 2^128) the spec gives equals the exact one
    for q0 in (1, 2, 1000, 32768, 56820, 65535):
        f1, f2 = escape_frequencies(q0)
        t.ok(len(f1) == 94 and sum(f1) == 4096 and min(f1) >= 1
             and len(f2) == 163 and sum(f2) == 2048 and min(f2) >= 1,
             f"§4.15: frequencies of q0 = {q0} (sums {sum(f1)}, {sum(f2)})")
        q1 = 65536 - q0
        split_ok = True
        for o in range(9):
            x = q0 ** (8 - o) * q1 ** o
            hi, lo = x >> 64, x & MASK64
            split_ok &= (x * 4002) >> 128 == (hi * 4002 + ((lo * 4002) >> 64)) >> 64
        t.ok(split_ok, f"§4.15: hi/lo form of floor(W(o) * 4002 / 2^128), q0 = {q0}")
        # §4.15 Tables: each symbol f(s) times, its states k = f(s) .. 2 f(s) - 1 in the
        # order of its positions, nb in 0 .. P, base in 0 .. N - 1, a step stays in 0 .. N - 1
        for (f, sym, nb, base), precision in zip(escape_model(q0), (ESCAPE_P1, ESCAPE_P2)):
            size = 1 << precision
            seen = [0] * len(f)
            ok = len(sym) == size
            for u in range(size):
                s = sym[u]
                k = (base[u] + size) >> nb[u]
                ok &= k == f[s] + seen[s] and 0 <= nb[u] <= precision and 0 <= base[u] < size
                ok &= base[u] + (1 << nb[u]) <= size
                seen[s] += 1
            t.ok(ok and seen == list(f), f"§4.15: table of {len(f)} symbols, q0 = {q0}")

    # §4.15 round trips through the informative encoder; one byte more or less is rejected;
    # flipping a bit of the payload is rejected or decodes to other bits
    rng = random.Random(20240611)

    def random_bits(m, ones_per_1000):
        bits = bytearray((m + 7) // 8)
        for i in range(m):
            if rng.randrange(1000) < ones_per_1000:
                bits[i >> 3] |= 1 << (i & 7)
        return bits

    cases = [(m, random_bits(m, 133), None) for m in (1, 7, 8, 9, 33, 1000, 4099, 140000)]
    cases += [(m, random_bits(m, ones), None) for m in (33, 1000) for ones in (30, 300, 500, 900)]
    cases += [(4099, random_bits(4099, 0), None), (4099, random_bits(4099, 1000), None),
              (1000, random_bits(1000, 133), 1), (1000, random_bits(1000, 133), 65535),
              (1000, random_bits(1000, 700), 2), (1000, random_bits(1000, 1), 65535)]
    flips_rejected = flips_other = 0
    for m, bits, q0 in cases:
        q0 = q0 or measured_q0(bits, m)
        payload = _encode_escape(bits, m, q0)
        what = f"§4.15: m = {m}, q0 = {q0}, {len(payload)} bytes"
        try:
            same = decode_payload(11, payload, m, q0) == bits
        except CorruptPayload as e:
            same = False
            what += f": {e}"
        t.ok(same, what + ": round trip")
        for other in (payload + b"\0", payload + b"\1", payload[:-1]):
            try:
                decode_payload(11, other, m, q0)
                t.ok(False, what + f": a payload of {len(other)} bytes is accepted")
            except CorruptPayload:
                pass
        if m <= 1000 and q0 in (measured_q0(bits, m), 65535):
            for i in range(8 * len(payload)):
                flipped = bytearray(payload)
                flipped[i >> 3] ^= 1 << (i & 7)
                try:
                    got = decode_escape(flipped, m, q0)
                except CorruptPayload:
                    flips_rejected += 1
                    continue
                flips_other += 1
                t.ok(got != bits, what + f": bit {i} flipped decodes to the same bits")
    t.ok(flips_rejected > 0, f"§4.15: flipped bits: {flips_rejected} rejected, "
                             f"{flips_other} decoded to other bits")

    # §2, §2.2: coding 11 in the header: q0 read, never chunked, L >= 8, the work bound,
    # Bloom filters only
    def frame(m, q0, payload, flags=0, filter_type=0):
        head = b"BLWR" + bytes([1, 0, filter_type, 1, 0, 11, flags]) + varint(0) + varint(m)
        if filter_type == 3:
            head += bytes([0, 4])                          # counted type 0, width 4
        head += varint(2 << 16) + varint(3) + varint(0) + struct.pack("<H", q0)
        if flags & 1:
            head += bytes([6])                             # chunks of 64 bits
        head += varint(len(payload)) + payload
        return head + struct.pack("<I", crc32c(head))

    def error_of(data):
        try:
            decode_frame(data)
            return None
        except BloomwireError as e:
            return type(e).__name__, e.field

    m, bits, _ = cases[5]                                  # the 1000 bits at 13% ones
    q0 = measured_q0(bits, m)
    payload = _encode_escape(bits, m, q0)
    try:
        got = decode_frame(frame(m, q0, payload))
        t.ok(got.bits == bytes(bits) and got.header["q0"] == q0
             and CODINGS[got.header["coding"]] == "escape", "§4.15: a coding-11 frame")
    except BloomwireError as e:
        t.ok(False, f"§4.15: a coding-11 frame is rejected: {type(e).__name__}: {e}")
    for data, want, what in (
            (frame(m, q0, payload, flags=1), ("InvalidField", F_FLAGS), "chunked"),
            (frame(m, 0, payload), ("InvalidField", F_Q0), "q0 = 0"),
            (frame(8, 65535, bytes(7)), ("InvalidField", F_PAYLOAD_LENGTH), "L = 7"),
            (frame(8, 65535, bytes(8)), None, "L = 8, all zero"),
            (frame(8, 65535, bytes(7) + b"\x80"), ("CorruptPayload", None), "a padding bit set"),
            (frame(7, 65535, b"\x80" + bytes(7)), ("CorruptPayload", None), "a bit past m set"),
            (frame(8, 57344, b"\1" + bytes(7)), None, "L = 8, the one byte carried, 1"),
            (frame(8, 65535, b"\1" + bytes(7)), ("CorruptPayload", None),
             "L = 8, the one byte carried, 1, q0 not measured"),
            (frame(8, 65535, b"\0\x10" + bytes(6)), ("CorruptPayload", None), "u[1] = 1, n = 1"),
            (frame(8, 65535, bytes(6) + b"\1\0"), ("CorruptPayload", None), "y = 1"),
            (frame((8 + 64) << 12, 65535, bytes(8)), ("CorruptPayload", None), "at the work bound"),
            (frame(((8 + 64) << 12) + 1, 65535, bytes(8)), ("InvalidField", F_PAYLOAD_LENGTH),
             "past the work bound"),
            (frame(m, q0, payload, filter_type=3), ("InvalidField", F_CODING), "counting")):
        got = error_of(data)
        t.ok(got == want, f"§2: coding-11 frame, {what}: expected {want}, got {got}")


def _check_hash_indexes(t, path):
    with open(path) as fh:
        doc = json.load(fh)
    for n, case in enumerate(doc["cases"]):
        key = bytes.fromhex(case["key_hex"])
        if case["base_hash"] == "xxh64":
            h = xxh64(key, int(case["seed"]))
        elif case["base_hash"] == "siphash24":
            h = siphash24(key, int(case["k0"]), int(case["k1"]))
        else:
            t.ok(False, f"hash_indexes case {n}: unknown base_hash {case['base_hash']}")
            continue
        scheme = {"double": 0, "enhanced": 1}[case["index_scheme"]]
        m = int(case["m"])
        got = index_sequence(stream(h, 0), stream(h, 1), m, scheme, int(case["k"]))
        want = [int(x) for x in case["indexes"]]
        t.ok(h == int(case["hash"]) and got == want,
             f"hash_indexes case {n} ({case['base_hash']}, {case['index_scheme']}, "
             f"m={m}, k={case['k']}, key={case['key_hex']!r}): hash {h} vs {case['hash']}, "
             f"indexes {got} vs {want}")


def _check_params(hdr, params):
    """Compare the manifest's header fields with what we parsed; returns mismatches."""
    names = {"filter_type": FILTER_TYPES, "base_hash": BASE_HASHES,
             "index_scheme": INDEX_SCHEMES, "coding": CODINGS}
    kinds = {0: "full", 1: "delta"}
    bad = []
    for key, want in params.items():
        if key in names:
            got = names[key][hdr[key]]
        elif key == "kind":
            got = kinds[hdr["frame_kind"]]
        elif key in ("seed", "k0", "k1", "generation"):
            got, want = hdr.get(key), int(want)
        elif key == "k_raw" and 2 in (hdr["filter_type"], hdr.get("counted_type")):
            continue
        elif key == "counted_type":
            got = FILTER_TYPES[hdr["counted_type"]]
        elif key in hdr:
            got = hdr[key]
        else:
            bad.append(f"unknown manifest param {key!r}")
            continue
        if got != want:
            bad.append(f"{key}: decoded {got!r}, manifest {want!r}")
    return bad


def _check_accept(t, bin_path, json_path):
    name = os.path.basename(bin_path)
    with open(json_path) as fh:
        man = json.load(fh)
    with open(bin_path, "rb") as fh:
        data = fh.read()
    key = bytes.fromhex(man["key_hex"]) if "key_hex" in man else None
    try:
        frame = decode_frame(data, key)
        if key is not None:                       # §2.5: without the key, read unverified
            plain = decode_frame(data)
            if plain.header["verified"] or plain.bits != getattr(frame, "bits", plain.bits):
                t.ok(False, f"accept/{name}: differs when decoded without the key")
    except BloomwireError as e:
        t.ok(False, f"accept/{name}: rejected with {type(e).__name__}: {e}")
        return
    problems = _check_params(frame.header, man.get("params", {}))
    if isinstance(frame, CountingFrame):
        if hashlib.sha256(frame.packed()).hexdigest() != man["counters_sha256"]:
            problems.append("counters_sha256 differs")
        hist = [0] * (1 << frame.header["counter_width"])
        for c in frame.counters:
            hist[c] += 1
        if hist != man["counter_histogram"]:
            problems.append(f"counter_histogram: decoded {hist}")
    else:
        if hashlib.sha256(frame.bits).hexdigest() != man["bits_sha256"]:
            problems.append("bits_sha256 differs")
        ones = sum(bin(b).count("1") for b in frame.bits)
        if "ones" in man and ones != man["ones"]:
            problems.append(f"ones: decoded {ones}, manifest {man['ones']}")
    if "base_frame" in man:                       # a delta: apply it, query the result
        try:
            base = _read_frame(os.path.join(os.path.dirname(bin_path), man["base_frame"]), key)
            frame = receive(base, frame)
        except BloomwireError as e:
            t.ok(False, f"accept/{name}: applying to {man['base_frame']}: "
                        f"{type(e).__name__}: {e}")
            return
        if isinstance(frame, CountingFrame):
            if hashlib.sha256(frame.packed()).hexdigest() != man["result_counters_sha256"]:
                problems.append("result_counters_sha256 differs")
        elif hashlib.sha256(frame.bits).hexdigest() != man["result_bits_sha256"]:
            problems.append("result_bits_sha256 differs")
    if man.get("query_refused"):                  # opaque (§3.1): queries are refused
        try:
            frame.contains(b"key-0")
            problems.append("a query on an opaque filter was answered")
        except OpaqueHashFamily:
            pass
    for group in ("member_keys", "other_keys"):
        for entry in man.get(group, []):
            key = bytes.fromhex(entry["key_hex"])
            if frame.contains(key) != entry["expected"]:
                problems.append(f"{group} {entry['key_hex']}: expected {entry['expected']}")
    t.ok(not problems, f"accept/{name}: " + "; ".join(problems))


def _check_reject(t, reject_dir):
    with open(os.path.join(reject_dir, "manifest.json")) as fh:
        manifest = json.load(fh)
    files = sorted(f for f in os.listdir(reject_dir) if f.endswith(".bin"))
    for name in sorted(set(files) | set(manifest)):
        want = manifest.get(name)
        if want is None or name not in files:
            t.ok(False, f"reject/{name}: in manifest but no file, or file without manifest entry")
            continue
        with open(os.path.join(reject_dir, name), "rb") as fh:
            data = fh.read()
        key = bytes.fromhex(want["key_hex"]) if "key_hex" in want else None
        try:
            frame = decode_frame(data, key)
            if "apply_to" in want:                # a valid delta, applied to the wrong base
                base = _read_frame(os.path.join(os.path.dirname(reject_dir), want["apply_to"]),
                                   key)
                receive(base, frame)
            got, field, msg = None, None, "accepted"
        except BloomwireError as e:
            got, field, msg = type(e).__name__, getattr(e, "field", None), str(e)
            if "needed" in want and getattr(e, "needed", None) != want["needed"]:
                got = f"{got}(needed {getattr(e, 'needed', None)})"
        t.ok(got == want["error"] and field == want.get("field"),
             f"reject/{name}: expected {want['error']}"
             + (f"({want['field']})" if "field" in want else "")
             + f", got {got}" + (f"({field})" if field else "") + f" [{msg}]")


def check(vectors_dir):
    t = _Tally()
    _self_tests(t)
    _check_hash_indexes(t, os.path.join(vectors_dir, "hash_indexes.json"))
    accept_dir = os.path.join(vectors_dir, "accept")
    for name in sorted(os.listdir(accept_dir)):
        if name.endswith(".bin"):
            stem = os.path.join(accept_dir, name[:-4])
            if not os.path.exists(stem + ".json"):
                t.ok(False, f"accept/{name}: no manifest {name[:-4]}.json")
                continue
            _check_accept(t, stem + ".bin", stem + ".json")
    _check_reject(t, os.path.join(vectors_dir, "reject"))
    print(f"{t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def _read_frame(path, key=None):
    with open(path, "rb") as fh:
        return decode_frame(fh.read(), key)


def inspect(path):
    with open(path, "rb") as fh:
        data = fh.read()
    try:
        hdr, hlen = parse_header(data)
    except BloomwireError as e:
        print(f"header rejected: {type(e).__name__}: {e}")
        return 1
    names = {"filter_type": FILTER_TYPES, "base_hash": BASE_HASHES,
             "index_scheme": INDEX_SCHEMES, "coding": CODINGS, "counted_type": FILTER_TYPES}
    for key, value in hdr.items():
        if key in names:
            value = f"{value} ({names[key][value]})"
        elif key == "k_raw":
            value = f"{value} (k = {value / 65536:g})"
        print(f"{key:14} {value}")
    try:
        frame = decode_frame(data)
    except BloomwireError as e:
        print(f"frame rejected: {type(e).__name__}: {e}")
        return 1
    if isinstance(frame, CountingFrame):
        hist = [0] * (1 << frame.header["counter_width"])
        for c in frame.counters:
            hist[c] += 1
        print(f"{'histogram':14} {hist}")
        print(f"{'counters_sha256':14} {hashlib.sha256(frame.packed()).hexdigest()}")
        return 0
    ones = sum(bin(b).count("1") for b in frame.bits)
    print(f"{'ones':14} {ones}")
    print(f"{'bits_sha256':14} {hashlib.sha256(frame.bits).hexdigest()}")
    return 0


def query(path, keys):
    try:
        frame = _read_frame(path)
    except BloomwireError as e:
        print(f"frame rejected: {type(e).__name__}: {e}")
        return 1
    for k in keys:
        key = bytes.fromhex(k[4:]) if k.startswith("hex:") else k.encode()
        try:
            answer = frame.contains(key)
        except OpaqueHashFamily as e:
            print(f"query refused: {type(e).__name__}: {e}")
            return 1
        print(f"{k}\t{'maybe' if answer else 'no'}")
    return 0


# ---------------------------------------------------------------------------
# Conformance kit adapter (spec/conformance/README.md): decode and receive
# ---------------------------------------------------------------------------

def _conform_header(hdr):
    """The protocol's HEADER members from a parsed header."""
    dec = lambda name: None if hdr.get(name) is None else str(hdr[name])
    crc = lambda name: None if hdr.get(name) is None else f"{hdr[name]:08x}"
    return {
        "kind": hdr["frame_kind"], "filter_type": hdr["filter_type"],
        "base_hash": hdr["base_hash"], "index_scheme": hdr["index_scheme"],
        "coding": hdr["coding"], "flags": hdr["flags"],
        "seed": dec("seed"), "k0": dec("k0"), "k1": dec("k1"), "m": hdr["m"],
        "counted_type": hdr.get("counted_type"), "counter_width": hdr.get("counter_width"),
        "k_raw": hdr.get("block_k_raw", [hdr["k_raw"]]),
        "n": str(hdr["n"]), "generation": str(hdr["generation"]),
        "base_generation": dec("base_generation"),
        "base_digest": crc("base_digest"), "result_digest": crc("result_digest"),
        "metadata": hdr.get("metadata_hex"), "q0": hdr["q0"],
        "counter_table": hdr["counter_table"], "chunk_shift": hdr["chunk_shift"],
        "header_len": hdr["header_len"], "payload_len": hdr["payload_len"],
        "tag": ("verified" if hdr["verified"] else "unverified") if hdr["tagged"] else "absent",
    }


def _conform_digest(frame):
    """§5.1: the CRC-32C of the packed bits, or of the packed counters."""
    packed = frame.packed() if isinstance(frame, CountingFrame) else frame.bits
    return f"{crc32c(packed):08x}"


def _conform_error(e):
    answer = {"ok": False, "error": type(e).__name__, "detail": str(e)}
    if isinstance(e, (InvalidField, LimitExceeded)):
        answer["field"] = e.field
    if isinstance(e, Incomplete):
        answer["needed"] = e.needed
    return answer


def _conform_limits(request, profile):
    limits = request.get("limits")
    out = {"profile": profile}
    if limits:
        out.update(max_m=limits["max_m"], max_k=limits["max_k"],
                   max_payload=limits["max_payload"], max_metadata=limits["max_metadata"],
                   max_filter_bytes=limits.get("max_filter_bytes"))
    return out


def _conform_answer(request, profile, sessions):
    op = request.get("op")
    if op == "hello":
        return {"ok": True, "name": "bloomwire_ref.py", "profile": profile,
                "ops": ["decode", "receive"], "codings": []}
    key = bytes.fromhex(request["key"]) if request.get("key") else None
    if op == "decode":
        try:
            frame = decode_frame(bytes.fromhex(request["frame"]), key,
                                 **_conform_limits(request, profile))
        except BloomwireError as e:
            return _conform_error(e)
        return {"ok": True, "header": _conform_header(frame.header),
                "digest": _conform_digest(frame)}
    if op == "open":
        sessions[request["session"]] = {"key": key, "limits": _conform_limits(request, profile),
                                        "held": None}
        return {"ok": True}
    if op == "receive":
        if request.get("session") not in sessions:
            return {"ok": False, "error": "BadRequest", "detail": "session never opened"}
        session = sessions[request["session"]]
        try:
            frame = decode_frame(bytes.fromhex(request["frame"]), session["key"],
                                 **session["limits"])
            session["held"] = receive(session["held"], frame)
            answer = {"ok": True, "update": "delta" if frame.header["frame_kind"] else "full"}
        except BloomwireError as e:
            answer = _conform_error(e)
        held = session["held"]
        answer["held"] = None if held is None else {
            "generation": str(held.header["generation"]), "digest": _conform_digest(held)}
        return answer
    return {"ok": False, "error": "UnsupportedOp"}


def conform(profile):
    """Answer the kit's requests, one JSON object a line, until stdin ends."""
    sessions = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as e:
            request = None
            answer = {"ok": False, "error": "BadRequest", "detail": repr(e)}
        if isinstance(request, dict):
            try:
                answer = _conform_answer(request, profile, sessions)
            except Exception as e:               # a bad request, or a bug the kit reports
                answer = {"ok": False, "error": "InternalError", "detail": repr(e)}
        elif request is not None:
            answer = {"ok": False, "error": "BadRequest", "detail": "not a JSON object"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


def main(argv):
    if argv[:1] == ["conform"] and argv[1:] in ([], ["--profile", "core"], ["--profile", "full"]):
        return conform(argv[2] if len(argv) == 3 else "full")
    if len(argv) >= 2 and argv[0] == "check":
        return check(argv[1])
    if len(argv) == 2 and argv[0] == "inspect":
        return inspect(argv[1])
    if len(argv) >= 3 and argv[0] == "query":
        return query(argv[1], argv[2:])
    print("\n\n".join(__doc__.strip().split("\n\n")[2:4]), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
