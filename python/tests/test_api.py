"""The package's API: planning, filters, encoding (checked by the spec's reference decoder),
decoding with limits, counting filters, exceptions."""

import hashlib
import threading

import pytest

import bloomwire
import helpers

BLOOM_CODINGS = ["raw", "adaptive", "known-p", "known-p-symbols", "known-p-interleaved",
                 "wide", "escape"]


def keys(n, prefix="key-"):
    return [f"{prefix}{i}" for i in range(n)]


@pytest.fixture(scope="module")
def planned():
    plan = bloomwire.plan_for_fpr(5_000, 0.01)
    f = plan.new_filter()
    f.insert_many(keys(5_000))
    return plan, f


def test_plan_for_fpr():
    plan = bloomwire.plan_for_fpr(10_000, 0.01)
    assert plan.n == 10_000
    assert plan.fpr <= 0.01
    assert plan.m > 0 and plan.k >= 1 and plan.k_raw == round(plan.k * 65536)
    assert plan.worst_case_bytes >= plan.bytes > 0
    assert plan.bits_per_element == pytest.approx(8 * plan.bytes / plan.n)
    assert plan.receiver_bytes == (plan.m + 7) // 8
    assert plan.layout == "standard" and plan.coding in ("raw", "adaptive", "known-p")
    assert "false positive" in str(plan) and repr(plan).startswith("Plan(")
    # A compressed filter beats the uncompressed one: fewer than 9.59 bits per key at 1%.
    assert plan.bits_per_element < 9.59


def test_plan_budget():
    plan = bloomwire.plan(10_000, 10_000)
    assert plan.worst_case_bytes <= 10_000
    f = plan.new_filter()
    f.insert_many(keys(10_000))
    assert len(f.encode(budget=10_000)) <= 10_000
    # A larger budget buys a lower rate.
    assert bloomwire.plan(10_000, 20_000).fpr < plan.fpr


def test_plan_errors():
    with pytest.raises(bloomwire.OverBudget) as caught:
        bloomwire.plan(1_000_000, 10)
    assert caught.value.budget == 10
    with pytest.raises(bloomwire.InvalidParameter) as caught:
        bloomwire.plan_for_fpr(0, 0.01)
    assert caught.value.name == "n"
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.plan_for_fpr(100, 1.5)


def test_plan_max_m_and_hash_families():
    assert bloomwire.plan_for_fpr(10_000, 0.01, max_m=100_000).m <= 100_000
    a = bloomwire.plan_for_fpr(1000, 0.01, seed=7).new_filter()
    b = bloomwire.plan_for_fpr(1000, 0.01, siphash_key=bytes(range(16))).new_filter()
    a.insert("x")
    b.insert("x")
    assert a.bits() != b.bits()
    assert "seed 7" in repr(a) and "siphash" in repr(b)
    with pytest.raises(ValueError):
        bloomwire.plan_for_fpr(1000, 0.01, siphash_key=b"short")
    with pytest.raises(ValueError):
        bloomwire.BloomFilter(1000, 3, seed=1, siphash_key=bytes(16))


def test_bloom_filter_basics():
    f = bloomwire.BloomFilter(10_000, 3)
    assert (f.m, f.k, f.n, len(f)) == (10_000, 3.0, 0, 0)
    assert "x" not in f and f.fraction_of_zeros == 1.0 and f.count_ones() == 0
    f.insert("x")
    f.insert(b"y")
    f.insert(bytearray(b"z"))
    f.insert(memoryview(b"w"))
    assert len(f) == f.n == 4
    for k in ("x", b"x", b"y", "y", "z", b"w"):
        assert k in f and f.contains(k)
    # str keys are their UTF-8 bytes.
    f.insert("é")
    assert "é".encode() in f
    assert f.contains_many(["x", "nope-1", "y"])[0::2] == [True, True]
    assert 1 <= f.count_ones() <= 15
    assert len(f.bits()) == 10_000 // 8
    with pytest.raises(TypeError):
        f.insert(5)
    with pytest.raises(TypeError):
        f.contains(None)
    g = f.copy()
    assert g == f
    g.insert("other")
    assert g != f and "other" not in f
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.BloomFilter(0, 3)


def test_union():
    a, b = bloomwire.BloomFilter(1000, 2), bloomwire.BloomFilter(1000, 2)
    a.insert("a")
    b.insert("b")
    a.union(b)
    assert "a" in a and "b" in a
    with pytest.raises(bloomwire.Incompatible):
        a.union(bloomwire.BloomFilter(1001, 2))


def test_false_positive_rate_matches_plan(planned):
    plan, f = planned
    assert all(f.contains_many(keys(5_000)))
    fp = sum(f.contains_many(keys(100_000, "absent-")))
    assert fp / 100_000 == pytest.approx(plan.fpr, rel=0.25)


@pytest.mark.parametrize("coding", BLOOM_CODINGS)
def test_each_coding_round_trips_and_matches_the_reference(planned, ref, coding):
    _, f = planned
    frame = f.encode(coding)
    assert isinstance(frame, bytes)
    assert bloomwire.frame_info(frame).coding == coding
    assert bloomwire.encode(f, coding) == frame
    back = bloomwire.decode(frame)
    assert back == f
    # The spec's standard-library decoder reads the same bits.
    theirs = ref.decode_frame(frame)
    assert theirs.bits == f.bits()
    assert theirs.contains(b"key-42")


def test_default_coding_is_within_the_margin_of_the_smallest(planned):
    # The default predicts sizes and codes once, with the fastest coding near the smallest:
    # the crate holds it within 0.1% + 8 bytes of the smallest frame (tests/coding_choice.rs).
    _, f = planned
    frame = f.encode()
    sizes = {c: len(f.encode(c)) for c in BLOOM_CODINGS}
    assert len(frame) <= min(sizes.values()) * 1.001 + 8
    assert len(frame) < sizes["raw"]
    assert bloomwire.decode(frame) == f


def test_encode_options(planned):
    _, f = planned
    with pytest.raises(bloomwire.InvalidParameter):
        f.encode("zstd")
    with pytest.raises(bloomwire.InvalidParameter):
        f.encode("known-counters")
    with pytest.raises(bloomwire.OverBudget) as caught:
        f.encode(budget=100)
    assert caught.value.budget == 100 and caught.value.raw > caught.value.compressed > 100
    frame = f.encode(generation=9)
    assert bloomwire.frame_info(frame).generation == 9
    with pytest.raises(TypeError):
        bloomwire.encode("not a filter")
    assert set(BLOOM_CODINGS) < set(bloomwire.CODINGS)


def test_a_thread_gives_its_encoding_memory_back():
    # Run on a thread of its own: what it keeps is its own, whatever other tests left.
    seen = {}

    def encode_and_release():
        f = bloomwire.BloomFilter(1 << 22, 3)
        f.insert_many(keys(100_000))
        f.encode("wide")
        seen["kept"] = bloomwire.thread_scratch_bytes()
        seen["released"] = bloomwire.release_thread_scratch()
        seen["after"] = bloomwire.thread_scratch_bytes()

    thread = threading.Thread(target=encode_and_release)
    thread.start()
    thread.join()
    assert 0 < seen["kept"] <= 64 << 20
    assert seen["released"] == seen["kept"]
    assert seen["after"] == 0


def test_dense_filter_goes_raw():
    # Half the bits set: no coding beats the bits themselves.
    f = bloomwire.BloomFilter(800, 1)
    f.insert_many(keys(555))
    assert bloomwire.frame_info(f.encode("adaptive")).coding == "raw"


def test_decode_inputs_and_errors(planned):
    _, f = planned
    frame = f.encode()
    for form in (frame, bytearray(frame), memoryview(frame)):
        assert bloomwire.decode(form) == f
    with pytest.raises(TypeError):
        bloomwire.decode(frame.hex())
    with pytest.raises(bloomwire.Incomplete) as caught:
        bloomwire.decode(frame[:-10])
    assert caught.value.needed == 10
    with pytest.raises(bloomwire.TrailingBytes) as caught:
        bloomwire.decode(frame + b"\0")
    assert caught.value.count == 1
    corrupt = bytearray(frame)
    corrupt[len(frame) // 2] ^= 0x10
    with pytest.raises(bloomwire.ChecksumMismatch) as caught:
        bloomwire.decode(corrupt)
    assert caught.value.offset == len(frame) - 4
    assert caught.value.stored != caught.value.computed
    with pytest.raises(bloomwire.BadMagic) as caught:
        bloomwire.decode(b"BLXX" + frame[4:])
    assert (caught.value.byte, caught.value.offset) == (ord("X"), 2)
    with pytest.raises(bloomwire.LimitExceeded) as caught:
        bloomwire.decode(frame, max_payload=100)
    assert caught.value.field == "payload length"
    with pytest.raises(bloomwire.LimitExceeded):
        bloomwire.decode(frame, max_k=0)
    # Every one of them is a FrameError and a BloomwireError.
    with pytest.raises(bloomwire.FrameError):
        bloomwire.decode(b"")
    with pytest.raises(bloomwire.BloomwireError):
        bloomwire.decode(b"")


def test_exception_hierarchy():
    E = bloomwire
    for cls in (E.Incomplete, E.LimitExceeded, E.BadMagic, E.UnsupportedVersion,
                E.InvalidField, E.BadVarint, E.ChecksumMismatch, E.TrailingBytes,
                E.CorruptPayload):
        assert issubclass(cls, E.FrameError)
    for cls in (E.GenerationGap, E.BaseMismatch, E.ResultMismatch):
        assert issubclass(cls, E.ResyncNeeded) and issubclass(cls, E.SequenceError)
    assert issubclass(E.StaleGeneration, E.SequenceError)
    assert not issubclass(E.StaleGeneration, E.ResyncNeeded)
    for name in E.__all__:
        obj = getattr(E, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, E.BloomwireError)
            assert obj.__module__ == "bloomwire"
            assert obj.__doc__


def test_counting_filter(ref):
    c = bloomwire.CountingFilter(20_000, 3, width=4)
    assert (c.m, c.k, c.width, len(c)) == (20_000, 3.0, 4, 0)
    c.insert_many(keys(1000))
    c.insert("dup")
    c.insert("dup")
    c.remove("dup")
    assert "dup" in c and len(c) == 1001
    c.remove(b"dup")
    assert "dup" not in c and len(c) == 1000
    with pytest.raises(bloomwire.InvalidParameter) as caught:
        c.remove("never inserted")
    assert caught.value.name == "key"
    assert sum(c.histogram()) == c.m and len(c.histogram()) == 16
    assert len(c.counters()) == c.m and c.saturated() == 0
    b = c.to_bloom_filter()
    assert all(b.contains_many(keys(1000)))
    for coding in ("raw", "known-counters", "adaptive-counters", None):
        frame = c.encode(coding)
        back = bloomwire.decode_counting(frame)
        assert back == c
        assert bloomwire.decode_message(frame) == c
        theirs = ref.decode_frame(frame)
        assert theirs.packed() == c.packed()
        if coding:
            assert bloomwire.frame_info(frame).coding == coding
    frame = c.encode()
    with pytest.raises(bloomwire.UnexpectedFilterType):
        bloomwire.decode(frame)
    with pytest.raises(bloomwire.UnexpectedFilterType):
        bloomwire.decode_counting(b.encode())
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.CountingFilter(100, 2, width=9)
    plan = bloomwire.plan_for_fpr(1000, 0.01)
    assert bloomwire.CountingFilter.from_plan(plan, 2).width == 2
    assert plan.new_counting_filter().m == plan.m


def test_saturation():
    c = bloomwire.CountingFilter(64, 1, width=1)
    c.insert("a")
    c.insert("a")
    assert c.saturated() >= 1
    c.remove("a")
    assert "a" in c  # a saturated counter stays


def test_decode_releases_the_gil():
    # A large frame decodes while another Python thread keeps running. With a switch
    # interval of 10 s the other thread only runs where the GIL is released.
    plan = bloomwire.plan_for_fpr(300_000, 0.01)
    f = plan.new_filter()
    f.insert_many(keys(300_000))
    frame = f.encode()
    assert len(frame) > 1 << 15

    def decode_ten_times():
        for _ in range(10):
            assert bloomwire.decode(frame).n == 300_000

    during = helpers.ticks_while(decode_ten_times)
    assert during >= 5, during


def test_digest_of_bits_is_stable():
    f = bloomwire.BloomFilter(1024, 2)
    f.insert_many(keys(50))
    assert hashlib.sha256(f.bits()).hexdigest() == hashlib.sha256(
        bloomwire.decode(f.encode("adaptive")).bits()).hexdigest()
