"""Format 1.0's profiles (spec 4.0): an encoder restricted to Core writes only Core
codings, a decoder restricted to Core refuses the others with UnsupportedCoding, and the
codings' names are the library's."""

import pytest

import bloomwire

CORE = {"raw", "adaptive", "known-p", "positional"}


def paper_filter():
    f = bloomwire.BloomFilter(140_000, 2)
    f.insert_many([f"key-{i}" for i in range(10_000)])
    return f


def test_core_encoder_writes_core_codings():
    f = paper_filter()
    for profile in ("core", "full"):
        frame = f.encode(profile=profile)
        coding = bloomwire.frame_info(frame).coding
        assert profile == "full" or coding in CORE, coding
        assert bloomwire.decode(frame) == f
    sparse = bloomwire.BloomFilter(1 << 20, 1)
    sparse.insert_many([f"key-{i}" for i in range(1000)])
    assert bloomwire.frame_info(sparse.encode(profile="core")).coding == "positional"


def test_a_named_coding_outside_the_profile_is_refused():
    with pytest.raises(bloomwire.InvalidParameter):
        paper_filter().encode("escape", profile="core")
    with pytest.raises(bloomwire.InvalidParameter):
        paper_filter().encode(profile="tiny")


def test_core_decoder_answers_unsupported_coding():
    f = paper_filter()
    frame = f.encode("escape")
    with pytest.raises(bloomwire.UnsupportedCoding) as e:
        bloomwire.decode(frame, profile="core")
    assert e.value.coding == 11 and e.value.offset == 9
    assert isinstance(e.value, bloomwire.FrameError)
    assert bloomwire.decode(f.encode("known-p"), profile="core") == f
    receiver = bloomwire.Receiver(profile="core")
    with pytest.raises(bloomwire.UnsupportedCoding):
        receiver.receive(frame)


def test_chunked_auto_is_the_whole_filters_choice():
    f = bloomwire.BloomFilter(300_007, 2)
    f.insert_many([f"key-{i}" for i in range(9000)])
    frame = bloomwire.ChunkedFrame(f, f.n, f.count_ones(), 14, "auto")
    whole = f.encode(chunk_shift=14)
    assert frame.coding == bloomwire.frame_info(whole).coding
