"""The sender and receiver of generations."""

import pytest

import bloomwire
import helpers


def grown(f, start, count):
    return helpers.with_keys(f.copy(), count, start)


@pytest.fixture
def base():
    # m = 2^18 bits: a delta of any size meets the work bound (spec 2.2), so even a delta of
    # a few changed keys is sent as one. In larger filters a payload must code at most 2^12
    # bits a byte: the smallest deltas go as full frames.
    return helpers.with_keys(bloomwire.BloomFilter(1 << 18, 3), 10_000)


def test_sequence(base):
    sender, receiver = bloomwire.Sender(full_every=100), bloomwire.Receiver()
    first = sender.next_frame(base)
    u = receiver.receive(first)
    assert (u.kind, u.is_full, u.generation, u.skipped) == ("full", True, 1, 0)
    assert receiver.filter == base and receiver.generation == 1 and sender.generation == 1
    f = base
    for gen in range(2, 6):
        f = grown(f, 10_000 * gen, 100)  # 1% more keys each generation
        frame = sender.next_frame(f)
        assert len(frame) < len(first) / 5
        info = bloomwire.frame_info(frame)
        assert (info.kind, info.generation, info.base_generation) == ("delta", gen, gen - 1)
        u = receiver.receive(frame)
        assert (u.kind, u.generation, u.skipped) == ("delta", gen, 0)
        assert receiver.filter == f
    assert "Update(kind='delta', generation=5)" == repr(u)

    # The same frame again: stale, nothing changes.
    with pytest.raises(bloomwire.StaleGeneration) as caught:
        receiver.receive(frame)
    assert (caught.value.have, caught.value.got) == (5, 5)
    assert receiver.filter == f and receiver.generation == 5

    # A lost frame: the next delta is a gap; a requested full frame resynchronizes.
    lost = sender.next_frame(grown(f, 90_000, 50))
    assert bloomwire.frame_info(lost).kind == "delta"
    f = grown(f, 95_000, 50)
    with pytest.raises(bloomwire.GenerationGap) as caught:
        receiver.receive(sender.next_frame(f))
    assert isinstance(caught.value, bloomwire.ResyncNeeded)
    assert (caught.value.have, caught.value.base) == (5, 6)
    sender.request_full()
    u = receiver.receive(sender.next_frame(f))
    assert (u.kind, u.generation, u.skipped) == ("full", 8, 2)
    assert receiver.filter == f


def test_full_every(base):
    sender = bloomwire.Sender(full_every=2)
    kinds = [bloomwire.frame_info(sender.next_frame(base)).kind for _ in range(4)]
    # Generations 2 and 4 are multiples of full_every; 1 has no base.
    assert kinds == ["full", "full", "delta", "full"]
    always = bloomwire.Sender(full_every=1)
    assert {bloomwire.frame_info(always.next_frame(base)).kind for _ in range(3)} == {"full"}


def test_delta_without_base_is_a_gap(base):
    sender = bloomwire.Sender()
    sender.next_frame(base)
    delta = sender.next_frame(grown(base, 50_000, 10))
    with pytest.raises(bloomwire.GenerationGap) as caught:
        bloomwire.Receiver().receive(delta)
    assert caught.value.have is None
    with pytest.raises(bloomwire.UnexpectedDelta):
        bloomwire.decode(delta)
    d = bloomwire.decode_message(delta)
    assert isinstance(d, bloomwire.Delta) and not d.counting
    assert (d.generation, d.base_generation) == (2, 1)
    assert d.apply(base, 1) == grown(base, 50_000, 10)
    with pytest.raises(bloomwire.GenerationGap):
        d.apply(base, 0)
    with pytest.raises(bloomwire.BaseMismatch):
        d.apply(grown(base, 70_000, 1), 1)
    with pytest.raises(bloomwire.UnexpectedFilterType):
        d.apply(bloomwire.CountingFilter(10, 1), 1)


def test_counting_generations():
    c = bloomwire.CountingFilter(160_000, 2, width=4)
    c.insert_many((f"k{i}" for i in range(10_000)))
    sender, receiver = bloomwire.Sender(), bloomwire.Receiver()
    first = sender.next_frame(c)
    assert receiver.receive(first).kind == "full"
    for i in range(100):
        c.remove(f"k{i}")
    second = sender.next_frame(c)
    assert len(second) < len(first) / 10
    assert receiver.receive(second).kind == "delta"
    assert receiver.filter == c and isinstance(receiver.filter, bloomwire.CountingFilter)
    d = bloomwire.decode_message(second)
    assert d.counting
    # One sender, one kind of filter.
    with pytest.raises(bloomwire.UnexpectedFilterType):
        sender.next_frame(bloomwire.BloomFilter(100, 1))
    # A receiver of counting frames refuses a Bloom filter's frame, restart flag or not,
    # after the frame's own checks; nothing changes.
    before = (receiver.filter, receiver.generation)
    other = bloomwire.BloomFilter(100, 1)
    for frame in (other.encode(generation=9), other.encode(generation=9, restart=True)):
        with pytest.raises(bloomwire.UnexpectedFilterType) as caught:
            receiver.receive(frame)
        assert (caught.value.expected, caught.value.got) == ("a counting filter", 0)
    corrupt = bytearray(other.encode(generation=9))
    corrupt[-1] ^= 1
    with pytest.raises(bloomwire.ChecksumMismatch):
        receiver.receive(corrupt)
    assert (receiver.filter, receiver.generation) == before
    # And the other way round; before its first frame a receiver takes either kind.
    bloom = bloomwire.Receiver()
    with pytest.raises(bloomwire.GenerationGap):
        bloom.receive(second)  # a counting delta: no base yet, and no kind held
    bloom.receive(other.encode(generation=1))
    with pytest.raises(bloomwire.UnexpectedFilterType) as caught:
        bloom.receive(c.encode(generation=5, restart=True))
    assert (caught.value.expected, caught.value.got) == ("a Bloom filter", 3)
    assert bloom.filter == other and bloom.generation == 1


def test_sender_options(base):
    sender = bloomwire.Sender(coding="raw")
    assert bloomwire.frame_info(sender.next_frame(base)).coding == "raw"
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.Sender(coding="nope")
    with pytest.raises(bloomwire.OverBudget):
        bloomwire.Sender(budget=10).next_frame(base)
    with pytest.raises(TypeError):
        bloomwire.Sender().next_frame(b"bytes")


def test_receiver_limits(base):
    frame = bloomwire.Sender().next_frame(base)
    receiver = bloomwire.Receiver(max_m=1000)
    with pytest.raises(bloomwire.LimitExceeded):
        receiver.receive(frame)
    assert receiver.generation is None
