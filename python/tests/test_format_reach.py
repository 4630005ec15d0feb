"""The whole format from Python: keys (tags), metadata, the restart flag, opaque filters,
and the errors of each."""

import subprocess
import sys
import textwrap

import pytest

import bloomwire
import helpers

KEY = bytes(range(32))
OTHER = bytes(32)


@pytest.fixture
def f():
    return helpers.with_keys(bloomwire.BloomFilter(1 << 16, 3), 500)


def test_keyed_frames_are_verified(f):
    frame = f.encode(key=KEY)
    assert len(frame) == len(f.encode()) + 16
    g = bloomwire.decode(frame, key=KEY)
    assert g == f and g.header.tag == "verified"
    # Without a key the tag is skipped, and reported as such.
    g = bloomwire.decode(frame)
    assert g == f and g.header.tag == "unverified"
    assert bloomwire.decode(f.encode()).header.tag == "absent"
    assert bloomwire.frame_info(frame).tag == "unverified"
    assert bloomwire.frame_info(frame, key=KEY).tag == "verified"
    for form in (bytearray(KEY), memoryview(KEY)):
        assert bloomwire.decode(frame, key=form) == f


def test_keyed_decoders_refuse_untagged_and_forged_frames(f):
    plain, tagged = f.encode(), f.encode(key=KEY)
    for decode in (bloomwire.decode, bloomwire.decode_message, bloomwire.frame_info):
        with pytest.raises(bloomwire.MissingTag) as caught:
            decode(plain, key=KEY)
        assert caught.value.offset == 10  # the flags byte
        with pytest.raises(bloomwire.BadTag) as caught:
            decode(tagged, key=OTHER)
        assert caught.value.offset == len(tagged) - 16
    forged = bytearray(tagged)
    forged[-1] ^= 1
    with pytest.raises(bloomwire.BadTag):
        bloomwire.decode(forged, key=KEY)
    assert issubclass(bloomwire.MissingTag, bloomwire.FrameError)
    assert issubclass(bloomwire.BadTag, bloomwire.FrameError)


def test_counting_frames_take_keys_and_metadata():
    c = bloomwire.CountingFilter(10_000, 2, width=4)
    c.insert_many(["a", "b", "a"])
    frame = bloomwire.encode(c, key=KEY, metadata=b"node=3")
    back = bloomwire.decode_counting(frame, key=KEY)
    assert back == c
    assert (back.header.tag, back.header.metadata) == ("verified", b"node=3")
    with pytest.raises(bloomwire.MissingTag):
        bloomwire.decode_counting(c.encode(), key=KEY)
    assert bloomwire.decode_message(frame, key=KEY).header.counting


@pytest.mark.parametrize("bad", [b"short", bytes(33), b""])
def test_a_key_is_32_bytes(f, bad):
    with pytest.raises(ValueError, match="32 bytes"):
        f.encode(key=bad)
    with pytest.raises(ValueError, match="32 bytes"):
        bloomwire.decode(f.encode(), key=bad)
    with pytest.raises(ValueError, match="32 bytes"):
        bloomwire.Receiver(key=bad)


def test_a_key_is_not_str_or_int(f):
    with pytest.raises(TypeError, match="not str"):
        f.encode(key="k" * 32)
    with pytest.raises(TypeError):
        bloomwire.Sender(key=1234)
    with pytest.raises(TypeError):
        bloomwire.frame_info(f.encode(), key=["x"] * 32)


def test_metadata_rides_in_the_header(f):
    frame = f.encode(metadata=b"sender=7")
    info = bloomwire.frame_info(frame)
    assert info.metadata == b"sender=7" and isinstance(info.metadata, bytes)
    assert bloomwire.decode(frame).header.metadata == b"sender=7"
    assert bloomwire.frame_info(f.encode()).metadata is None
    assert bloomwire.frame_info(f.encode(metadata=b"")).metadata is None  # empty is none
    assert bloomwire.frame_info(f.encode(metadata=bytearray(b"x"))).metadata == b"x"
    with pytest.raises(TypeError):
        f.encode(metadata="text")
    # The receiver's limit on metadata.
    big = f.encode(metadata=bytes(5000))
    with pytest.raises(bloomwire.LimitExceeded) as caught:
        bloomwire.decode(big)
    assert caught.value.limit == bloomwire.DEFAULT_MAX_METADATA
    assert bloomwire.decode(big, max_metadata=8000).header.metadata == bytes(5000)


def test_restart_flag(f):
    assert not bloomwire.frame_info(f.encode()).restart
    frame = f.encode(generation=5, restart=True)
    info = bloomwire.frame_info(frame)
    assert info.restart and info.generation == 5
    assert bloomwire.decode(frame).header.restart
    assert "restart=True" in repr(info)


def test_keyed_sender_and_receiver(f):
    sender = bloomwire.Sender(key=KEY, metadata=b"from=a")
    receiver = bloomwire.Receiver(key=KEY)
    first = sender.next_frame(f)
    update = receiver.receive(first)
    assert update.kind == "full" and update.header.tag == "verified"
    assert update.header.restart and update.header.metadata == b"from=a"
    g = f.copy()
    g.insert("one more")
    update = receiver.receive(sender.next_frame(g))
    assert update.kind == "delta" and receiver.filter == g
    assert update.header.kind == "delta" and update.header.tag == "verified"
    # A receiver with a key refuses frames without one, or with another one, unchanged.
    with pytest.raises(bloomwire.MissingTag):
        receiver.receive(bloomwire.Sender().next_frame(g))
    with pytest.raises(bloomwire.BadTag):
        receiver.receive(bloomwire.Sender(key=OTHER).next_frame(g))
    assert receiver.generation == 2
    # A frame of the other filter kind is refused for its tag first, as any frame is.
    c = bloomwire.CountingFilter(1000, 2)
    with pytest.raises(bloomwire.BadTag):
        receiver.receive(c.encode(generation=3, key=OTHER))
    with pytest.raises(bloomwire.MissingTag):
        receiver.receive(c.encode(generation=3))
    with pytest.raises(bloomwire.UnexpectedFilterType):
        receiver.receive(c.encode(generation=3, key=KEY))
    assert receiver.generation == 2 and receiver.filter == g
    # Without a key, the same frames are read and reported unverified.
    plain = bloomwire.Receiver()
    assert plain.receive(first).header.tag == "unverified"


def test_a_keyed_receiver_applies_only_what_its_key_verified(f):
    sender = bloomwire.Sender(key=KEY)
    first = sender.next_frame(f)
    g = f.copy()
    g.insert("one more")
    delta = sender.next_frame(g)
    receiver = bloomwire.Receiver(key=KEY)
    # Decoded without the key (its tag skipped) or with another key: not this key's word.
    unverified = bloomwire.decode_message(first)
    assert unverified.header.tag == "unverified"
    other = bloomwire.decode_message(bloomwire.Sender(key=OTHER).next_frame(f), key=OTHER)
    assert other.header.tag == "verified"
    for message in (unverified, other):
        with pytest.raises(bloomwire.TagNotVerified):
            receiver.apply(message)
    with pytest.raises(bloomwire.MissingTag):
        receiver.apply(bloomwire.decode(f.encode(generation=1)))
    assert receiver.generation is None and receiver.filter is None
    # Decoded with the key: applied as receive applies the frame.
    update = receiver.apply(bloomwire.decode_message(first, key=KEY))
    assert (update.kind, update.generation) == ("full", 1)
    assert update.header.tag == "verified" and update.header.restart
    with pytest.raises(bloomwire.TagNotVerified):
        receiver.apply(bloomwire.decode_message(delta))
    with pytest.raises(bloomwire.StaleGeneration):  # generation 1 again, no restart flag
        receiver.apply(bloomwire.decode(f.encode(generation=1, key=KEY), key=KEY))
    update = receiver.apply(bloomwire.decode_message(delta, key=KEY))
    assert (update.kind, update.generation) == ("delta", 2) and receiver.filter == g
    # A counting filter's message, to this Bloom filter's receiver: the tag first.
    c = bloomwire.CountingFilter(1000, 2)
    counting = c.encode(generation=3, key=KEY)
    with pytest.raises(bloomwire.TagNotVerified):
        receiver.apply(bloomwire.decode_counting(counting))
    with pytest.raises(bloomwire.UnexpectedFilterType):
        receiver.apply(bloomwire.decode_counting(counting, key=KEY))
    assert receiver.generation == 2 and receiver.filter == g
    assert issubclass(bloomwire.TagNotVerified, bloomwire.FrameError)
    assert bloomwire.TagNotVerified.__module__ == "bloomwire"


def test_a_receiver_applies_decoded_messages():
    c = bloomwire.CountingFilter(10_000, 2, width=4)
    c.insert_many(f"k{i}" for i in range(300))
    sender = bloomwire.Sender()
    first = sender.next_frame(c)
    c.remove("k0")
    second = sender.next_frame(c)
    receiver, twin = bloomwire.Receiver(), bloomwire.Receiver()
    # Without a key, what was read unverified is applied as it is, as receive would.
    assert receiver.apply(bloomwire.decode_counting(first)) == twin.receive(first)
    delta = bloomwire.decode_message(second)
    assert isinstance(delta, bloomwire.Delta) and delta.counting
    update = receiver.apply(delta)
    assert update == twin.receive(second) and update.kind == "delta"
    assert receiver.filter == twin.filter == c and receiver.generation == 2
    with pytest.raises(ValueError, match="not decoded from a frame"):
        receiver.apply(c)
    with pytest.raises(TypeError):
        receiver.apply(first)
    assert receiver.generation == 2


def test_sender_full_frame_for_a_late_receiver(f):
    sender = bloomwire.Sender()
    assert sender.full_frame() is None
    early = bloomwire.Receiver()
    for i in range(3):
        f.insert(f"generation {i}")
        early.receive(sender.next_frame(f))
    late = bloomwire.Receiver()
    join = sender.full_frame()
    assert bloomwire.frame_info(join).restart
    assert late.receive(join).generation == 3
    f.insert("fourth")
    delta = sender.next_frame(f)
    assert late.receive(delta).kind == early.receive(delta).kind == "delta"
    assert late.filter == early.filter == f


def test_opaque_filters_carry_bits_and_refuse_queries():
    theirs = bytes([0x55] * 128)
    f = bloomwire.BloomFilter.from_bits(theirs, 1024, 7, n=100, opaque=True)
    assert f.opaque and f.bits() == theirs and f.n == 100
    frame = f.encode(metadata=b"hashes=7 seed=42")
    info = bloomwire.frame_info(frame)
    assert info.hash == "opaque" and info.metadata == b"hashes=7 seed=42"
    back = bloomwire.decode(frame)
    assert back.opaque and back.bits() == theirs and back == f
    for query in (lambda: back.contains("x"), lambda: "x" in back, lambda: back.insert("x"),
                  lambda: back.insert_many(["x"]), lambda: back.contains_many(["x"])):
        with pytest.raises(bloomwire.OpaqueHashFamily):
            query()
    # Deltas and unions of opaque filters work on the bits.
    g = bloomwire.BloomFilter.from_bits(bytes([0x01] + [0] * 127), 1024, 7, opaque=True)
    assert (f | g).bits() == theirs
    with pytest.raises(bloomwire.Incompatible):
        f | bloomwire.BloomFilter(1024, 7)
    sender, receiver = bloomwire.Sender(), bloomwire.Receiver()
    receiver.receive(sender.next_frame(f))
    receiver.receive(sender.next_frame(f | bloomwire.BloomFilter.from_bits(
        bytes([0xaa] * 128), 1024, 7, opaque=True)))
    assert receiver.filter.bits() == bytes([0xff] * 128)


def test_from_bits_checks_its_input():
    f = bloomwire.BloomFilter(100, 2, seed=9)
    f.insert("a")
    g = bloomwire.BloomFilter.from_bits(f.bits(), 100, 2, n=1, seed=9)
    assert g == f and "a" in g and not g.opaque
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.BloomFilter.from_bits(b"\0" * 12, 100, 2)  # 13 bytes for 100 bits
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.BloomFilter.from_bits(b"\0" * 12 + b"\xff", 100, 2)  # bits past m
    with pytest.raises(ValueError):
        bloomwire.BloomFilter.from_bits(bytes(13), 100, 2, opaque=True, seed=1)
    with pytest.raises(TypeError):
        bloomwire.BloomFilter.from_bits("bits", 100, 2)


def test_new_errors_are_in_the_tree():
    assert issubclass(bloomwire.PlanExceedsLimits, bloomwire.BloomwireError)
    assert bloomwire.MissingTag.__module__ == "bloomwire"


# Allocation failure must never abort the interpreter. Each case runs in a child process
# (an abort would take pytest down with it) and passes when the child gets a MemoryError,
# which is bloomwire's AllocationFailed. 2^40 bits (128 GiB) is more than this 24 GiB
# machine holds; 2^47 bits (16 TiB) is more than any machine the tests run on.
ALLOCATIONS = {
    "constructor": "bloomwire.BloomFilter(2**40, 3)",
    "constructor-2^47": "bloomwire.BloomFilter(2**47, 3)",
    "counting": "bloomwire.CountingFilter(2**40, 3)",
    "counting-2^47": "bloomwire.CountingFilter(2**47, 3, width=1)",
    "plan": "bloomwire.plan_for_fpr(10**11, 0.01, max_m=2**41).new_filter()",
    "plan-2^47": "bloomwire.plan_for_fpr(5 * 10**12, 0.01, max_m=2**47).new_filter()",
    "decode": "bloomwire.decode_message(bytes.fromhex("
              "'424c5752010000010007000080808080802080800400000100cecdb6ce'), max_m=2**40)",
    "decode-2^47": "bloomwire.decode_message(bytes.fromhex(EMPTY_2_47), max_m=2**47)",
    "decode-counting": "bloomwire.decode_counting(bytes.fromhex(COUNTING_2_40), max_m=2**40, "
                       "max_filter_bytes=2**40)",
}


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    return bytes(out + bytes([v]))


def empty_frame(ref, m, counting=False):
    """The frame of an empty standard filter of m bits and k = 1 (positional coding: the
    count 0), or of an empty counting filter of m 8-bit counters (known counters, a table of
    the one value 0 and an empty payload): a few bytes whose header asks for a large
    allocation."""
    if counting:
        head = bytes([1, 0, 3, 1, 0, 4, 0, 0]) + varint(m) + bytes([0, 8]) + varint(1 << 16)
        tail = bytes([0, 0, 1]) + varint(1 << 16) + bytes([0])
    else:
        head = bytes([1, 0, 0, 1, 0, 7, 0, 0]) + varint(m) + varint(1 << 16)
        tail = bytes([0, 0, 1, 0])
    body = b"BLWR" + head + tail
    return body + ref.crc32c(body).to_bytes(4, "little")


def test_the_frames_of_the_allocation_cases(ref):
    assert empty_frame(ref, 2**40).hex() == ALLOCATIONS["decode"].split("'")[1]
    for m, counting in ((2**47, False), (2**40, True)):
        info = bloomwire.frame_info(empty_frame(ref, m, counting), max_m=m,
                                    max_filter_bytes=m)
        assert (info.m, info.counting, info.frame_len) == (m, counting,
                                                          len(empty_frame(ref, m, counting)))


@pytest.mark.parametrize("case", sorted(ALLOCATIONS))
def test_allocation_failure_is_a_memory_error(case, ref):
    # An address-space limit makes the allocation fail whatever the system's overcommit
    # policy, so the child never touches more memory than the machine has.
    code = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
        import bloomwire
        EMPTY_2_47 = {empty_frame(ref, 2**47).hex()!r}
        COUNTING_2_40 = {empty_frame(ref, 2**40, counting=True).hex()!r}
        try:
            {ALLOCATIONS[case]}
        except MemoryError as e:
            assert isinstance(e, bloomwire.AllocationFailed), type(e)
            assert isinstance(e, bloomwire.BloomwireError)
            assert e.bytes >= 2**37, e.bytes
            print("MemoryError")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "MemoryError", \
        (run.returncode, run.stderr[-500:])


def test_allocation_failed_is_in_the_tree():
    assert issubclass(bloomwire.AllocationFailed, MemoryError)
    assert issubclass(bloomwire.AllocationFailed, bloomwire.BloomwireError)
    assert not issubclass(bloomwire.AllocationFailed, bloomwire.FrameError)
    assert bloomwire.AllocationFailed.__module__ == "bloomwire"


def test_plans_beyond_a_default_receivers_limits():
    # 100M keys at 1% need more than the 2^28 bits a default receiver takes.
    with pytest.raises(bloomwire.PlanExceedsLimits) as caught:
        bloomwire.plan_for_fpr(100_000_000, 0.01)
    assert caught.value.name == "max_m" and caught.value.limit == bloomwire.DEFAULT_MAX_M
    plan = bloomwire.plan_for_fpr(100_000_000, 0.01, max_m=1 << 31)
    assert bloomwire.DEFAULT_MAX_M < plan.m <= 1 << 31 and plan.fpr <= 0.01
    assert bloomwire.plan_for_fpr(100, 0.01, max_m=5000).m <= 5000
    # max_filter_bytes bounds the receiver's memory for the plan's filter, ceil(m / 8).
    plan = bloomwire.plan(100_000, 50_000, max_filter_bytes=20_000)
    assert plan.receiver_bytes <= 20_000 and plan.m <= 160_000
    with pytest.raises(bloomwire.PlanExceedsLimits):
        bloomwire.plan_for_fpr(100_000, 0.01, max_filter_bytes=20_000)
