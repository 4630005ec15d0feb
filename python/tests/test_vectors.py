"""The spec's golden vectors: every accept vector decodes to its manifest, every reject
vector raises the exception class its manifest names."""

import glob
import hashlib
import json
import os

import pytest

import bloomwire
from helpers import VECTORS

ACCEPT = sorted(glob.glob(os.path.join(VECTORS, "accept", "*.json")))
with open(os.path.join(VECTORS, "reject", "manifest.json")) as fh:
    REJECT = json.load(fh)


def read(*parts):
    with open(os.path.join(VECTORS, *parts), "rb") as fh:
        return fh.read()


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def test_there_are_vectors():
    assert len(ACCEPT) >= 40
    assert len(REJECT) >= 60


def num(v):
    """A manifest integer: 64-bit values above 2^53 are decimal strings (spec section 6)."""
    return int(v) if isinstance(v, str) else v


@pytest.mark.parametrize("manifest", ACCEPT, ids=lambda p: os.path.basename(p)[:-5])
def test_accept_vector(manifest):
    with open(manifest) as fh:
        man = json.load(fh)
    frame = read("accept", man["frame"])
    info = bloomwire.frame_info(frame)
    params = man["params"]
    assert info.kind == params["kind"]
    assert info.m == num(params["m"])
    assert info.n == num(params["n"])
    assert info.generation == num(params["generation"])
    assert info.coding == params["coding"]
    assert info.header_len == params["header_len"]
    assert info.payload_len == params["payload_len"]
    assert info.frame_len == len(frame)
    assert info.counting == (params["filter_type"] == "counting")
    # The header fields every product exposes (design 14): metadata, restart, base hash, tag.
    want_metadata = params.get("metadata_hex")
    assert info.metadata == (bytes.fromhex(want_metadata) if want_metadata else None)
    assert info.restart == params.get("restart", False)
    assert info.hash == params["base_hash"]
    key = bytes.fromhex(man["key_hex"]) if "key_hex" in man else None
    assert info.tag == ("unverified" if params.get("tagged") else "absent")
    if key is not None:
        # A decoder with the key verifies the tag; one with another key refuses the frame.
        assert bloomwire.frame_info(frame, key=key).tag == "verified"
        assert bloomwire.decode_message(frame, key=key).header.tag == "verified"
        with pytest.raises(bloomwire.BadTag):
            bloomwire.decode_message(frame, key=bytes(32))

    decoded = bloomwire.decode_message(frame)
    if isinstance(decoded, bloomwire.Delta):
        assert decoded.generation == num(params["generation"])
        assert decoded.base_generation == num(params["base_generation"])
        assert sha256(decoded.xor()) == man[
            "counters_sha256" if decoded.counting else "bits_sha256"]
        # Applied to its base, directly and through a receiver.
        base_frame = read("accept", man["base_frame"])
        base = bloomwire.decode_message(base_frame)
        result = decoded.apply(base, bloomwire.frame_info(base_frame).generation)
        receiver = bloomwire.Receiver(key=key)
        receiver.receive(base_frame)
        update = receiver.receive(frame)
        assert (update.kind, update.generation) == ("delta", decoded.generation)
        assert update.header.metadata == info.metadata
        assert update.header.tag == ("verified" if key else info.tag)
        assert receiver.filter == result
        if decoded.counting:
            assert sha256(result.packed()) == man["result_counters_sha256"]
        else:
            assert sha256(result.bits()) == man["result_bits_sha256"]
        filt = result
    elif isinstance(decoded, bloomwire.CountingFilter):
        assert sha256(decoded.packed()) == man["counters_sha256"]
        assert decoded.histogram() == man["counter_histogram"]
        assert decoded == bloomwire.decode_counting(frame)
        filt = decoded
    else:
        assert isinstance(decoded, bloomwire.BloomFilter)
        assert sha256(decoded.bits()) == man["bits_sha256"]
        if "ones" in man:
            assert decoded.count_ones() == man["ones"]
        assert decoded == bloomwire.decode(frame)
        filt = decoded
    if man.get("query_refused"):
        # Another library's bits (base hash 0): decoded and applied, never queried.
        with pytest.raises(bloomwire.OpaqueHashFamily):
            filt.contains(b"key-0")
        with pytest.raises(bloomwire.OpaqueHashFamily):
            assert b"key-0" in filt
        with pytest.raises(bloomwire.OpaqueHashFamily):
            filt.insert(b"key-0")
    for group in ("member_keys", "other_keys"):
        for entry in man[group]:
            key = bytes.fromhex(entry["key_hex"])
            assert (key in filt) == entry["expected"], (group, entry)
            assert filt.contains(bytearray(key)) == entry["expected"]


@pytest.mark.parametrize("name", sorted(REJECT), ids=lambda n: n[:-4])
def test_reject_vector(name):
    want = REJECT[name]
    # A decoder with a key (spec 2.5) where the manifest names one.
    key = bytes.fromhex(want["key_hex"]) if "key_hex" in want else None
    frame = read("reject", name)
    cls = getattr(bloomwire, want["error"])
    assert issubclass(cls, bloomwire.BloomwireError)
    if "apply_to" in want:
        # A delta that decodes, refused by a receiver holding `apply_to`; nothing changes.
        receiver = bloomwire.Receiver(key=key)
        receiver.receive(read(want["apply_to"]))
        before = (receiver.filter, receiver.generation)
        with pytest.raises(cls):
            receiver.receive(frame)
        assert (receiver.filter, receiver.generation) == before
    else:
        with pytest.raises(cls) as caught:
            bloomwire.decode(frame, key=key)
        if "field" in want:
            assert caught.value.field == want["field"]
        assert type(caught.value) is cls


def test_limit_vectors_decode_with_raised_limits():
    # Over the default limits only: a receiver that expects larger filters raises them.
    with pytest.raises(bloomwire.LimitExceeded) as caught:
        bloomwire.decode(read("reject", "m_over_default_limit.bin"))
    err = caught.value
    assert (err.field, err.limit) == ("m", bloomwire.DEFAULT_MAX_M)
    assert err.value > err.limit and err.offset > 0
    frame = read("accept", "dense_known_p.bin")
    m = bloomwire.frame_info(frame).m
    with pytest.raises(bloomwire.LimitExceeded):
        bloomwire.decode(frame, max_m=m - 1)
    assert bloomwire.decode(frame, max_m=m).m == m


def test_filter_bytes_vector_decodes_with_a_raised_limit():
    # 2^25 + 1 counters of a byte: over the default limit on a decoded filter's memory
    # (ceil(max_m / 8) = 2^25 bytes, what a Bloom filter of max_m bits takes), refused from
    # the header, before anything is allocated.
    frame = read("reject", "counting_filter_bytes_over_default_limit.bin")
    for decode in (bloomwire.decode_counting, bloomwire.decode_message, bloomwire.frame_info,
                   lambda f, **kw: bloomwire.Receiver(**kw).receive(f)):
        with pytest.raises(bloomwire.LimitExceeded) as caught:
            decode(frame)
        err = caught.value
        assert (err.field, err.value, err.limit, err.offset) == \
            ("filter bytes", 2**25 + 1, 2**25, 12)
        with pytest.raises(bloomwire.LimitExceeded):
            decode(frame, max_filter_bytes=2**25)
        decode(frame, max_filter_bytes=2**26)
    c = bloomwire.decode_counting(frame, max_filter_bytes=2**26)
    assert (c.m, c.width, c.n, c.header.coding) == (2**25 + 1, 8, 1, "known-counters")
    assert bloomwire.decode_message(frame, max_filter_bytes=2**26) == c
    receiver = bloomwire.Receiver(max_filter_bytes=2**26)
    assert receiver.receive(frame).kind == "full" and receiver.filter == c
    # None (the default) follows max_m: raising max_m raises it.
    assert bloomwire.decode_counting(frame, max_m=2**29).m == 2**25 + 1
    assert bloomwire.frame_info(frame, max_filter_bytes=None, max_m=2**29).counting


def test_filter_bytes_bound_bloom_filters_too():
    frame = bloomwire.BloomFilter(1 << 16, 3).encode()  # 8192 bytes decoded
    with pytest.raises(bloomwire.LimitExceeded) as caught:
        bloomwire.decode(frame, max_filter_bytes=8191)
    assert (caught.value.field, caught.value.value) == ("filter bytes", 8192)
    assert bloomwire.decode(frame, max_filter_bytes=8192).m == 1 << 16
    # A limit above ceil(max_m / 8) does not raise max_m.
    with pytest.raises(bloomwire.LimitExceeded) as caught:
        bloomwire.decode(frame, max_m=1000, max_filter_bytes=1 << 20)
    assert caught.value.field == "m"
