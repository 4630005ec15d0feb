"""Updates that cost what changed: a sender given the bits that flipped
(`Sender.next_frame_with_flips`) and the Summary Cache's sender of a counting filter's
Bloom filter (`SummarySender`), frame for frame those of the sender given whole filters."""

import pytest

import bloomwire
import helpers

np = pytest.importorskip("numpy")

KEY = bytes(range(32))


def flipped(before, after):
    """The positions of the bits that differ between two filters, increasing."""
    a = np.frombuffer(before.bits(), dtype=np.uint8)
    b = np.frombuffer(after.bits(), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(a ^ b, bitorder="little")).astype(np.uint64)


def generations(count, m=1 << 18, per=300):
    """A filter and `count` later generations of it: keys added, and in some generations
    bits cleared as if keys had left (a filter sent whole does not care how it changed)."""
    f = helpers.with_keys(bloomwire.BloomFilter(m, 3), 5000)
    out = [f]
    for g in range(1, count + 1):
        f = f.copy()
        f.insert_many(f"g{g}-{i}" for i in range(per))
        if g % 3 == 0:  # clear a few bits
            bits = bytearray(f.bits())
            for byte in range(0, len(bits), 997):
                bits[byte] = 0
            f = bloomwire.BloomFilter.from_bits(bytes(bits), m, 3, n=f.n)
        out.append(f)
    return out


@pytest.mark.parametrize("options", [{}, {"coding": "positional"},
                                     {"metadata": b"flips", "key": KEY}])
def test_frames_from_flips_are_the_frames_of_whole_filters(options):
    gens = generations(12)
    whole = bloomwire.Sender(full_every=5, **options)
    by_flips = bloomwire.Sender(full_every=5, **options)
    receiver = bloomwire.Receiver(key=options.get("key"))
    assert by_flips.last_sent is None
    for g, f in enumerate(gens):
        expected = whole.next_frame(f)
        if g == 0:
            frame = by_flips.next_frame(f)  # the first generation goes whole
        else:
            flips = flipped(gens[g - 1], f)
            # As a NumPy array, or as a list of ints.
            flips = flips if g % 2 else [int(p) for p in flips]
            frame = by_flips.next_frame_with_flips(flips, f.n)
        assert frame == expected, g
        if g == 7:
            whole.request_full()
            by_flips.request_full()
        receiver.receive(frame)
        assert receiver.filter == f and by_flips.last_sent == f
        assert by_flips.generation == whole.generation == g + 1
    kinds = [bloomwire.frame_info(whole.full_frame(), key=options.get("key")).restart]
    assert kinds == [True] and whole.full_frame() == by_flips.full_frame()


def test_a_delta_from_flips_costs_the_flips():
    f = bloomwire.BloomFilter(1 << 24, 2)
    f.insert_many(f"k{i}" for i in range(10_000))
    sender, receiver = bloomwire.Sender(), bloomwire.Receiver()
    receiver.receive(sender.next_frame(f))
    flips = np.arange(20, dtype=np.uint64) * 800_000 + 7
    delta = sender.next_frame_with_flips(flips, 10_010)
    assert len(delta) < 100 and bloomwire.frame_info(delta).kind == "delta"
    update = receiver.receive(delta)
    assert (update.kind, update.generation) == ("delta", 2)
    assert receiver.filter == sender.last_sent and receiver.filter.n == 10_010
    assert receiver.filter.count_ones() == f.count_ones() + 20  # bits 7 + 800 000 i were 0


def test_flips_are_checked():
    f = bloomwire.BloomFilter(1 << 16, 2)
    f.insert_many(f"k{i}" for i in range(500))
    sender = bloomwire.Sender()
    with pytest.raises(bloomwire.InvalidParameter):
        sender.next_frame_with_flips([1, 2], 1)  # nothing sent yet
    sender.next_frame(f)
    for bad in ([5, 3], [3, 3], [1 << 16]):
        with pytest.raises(bloomwire.InvalidParameter):
            sender.next_frame_with_flips(bad, 500)
    assert sender.generation == 1 and sender.last_sent == f  # unchanged
    with pytest.raises(ValueError):
        sender.next_frame_with_flips(np.array([-1]), 500)
    with pytest.raises(TypeError):
        sender.next_frame_with_flips(b"\x01", 500)
    counting = bloomwire.Sender()
    counting.next_frame(bloomwire.CountingFilter(1 << 12, 2))
    with pytest.raises(bloomwire.UnexpectedFilterType):
        counting.next_frame_with_flips([1], 0)
    assert isinstance(counting.last_sent, bloomwire.CountingFilter)


def test_summary_sender_is_followed_through_inserts_and_removals():
    cache = bloomwire.CountingFilter(1 << 18, 3, 4)
    summary = bloomwire.SummarySender(cache, full_every=10, metadata=b"proxy-1", key=KEY)
    whole = bloomwire.Sender(full_every=10, metadata=b"proxy-1", key=KEY)
    peer = bloomwire.Receiver(key=KEY)
    assert summary.full_frame() is None and summary.generation == 0
    summary.insert_many(f"url-{i}" for i in range(20_000))
    first = summary.next_frame()
    assert first == whole.next_frame(summary.filter.to_bloom_filter())
    assert peer.receive(first).kind == "full"
    sizes = []
    for step in range(1, 13):
        # 1% of the cache replaced each step: 200 keys leave, 200 arrive.
        summary.remove_many(f"url-{i}" for i in range(200 * (step - 1), 200 * step))
        summary.insert_array(np.array([f"new-{step}-{i}".encode() for i in range(200)]))
        if step == 6:
            summary.request_full()
            whole.request_full()
        frame = summary.next_frame()
        assert frame == whole.next_frame(summary.filter.to_bloom_filter()), step
        update = peer.receive(frame)
        assert peer.filter == summary.filter.to_bloom_filter()
        assert update.generation == step + 1 == summary.generation
        if update.kind == "delta":
            sizes.append(len(frame))
    assert sizes and max(sizes) < len(first) / 10
    # Counters saturate and nothing is lost: a key inserted twice and removed once stays.
    summary.insert("twice")
    summary.insert("twice")
    summary.remove("twice")
    assert "twice" in summary and len(summary) == summary.filter.n
    late = bloomwire.Receiver(key=KEY)
    late.receive(summary.full_frame())
    assert late.generation == summary.generation
    with pytest.raises(bloomwire.InvalidParameter):
        summary.remove("never inserted")
    assert "SummarySender(" in repr(summary)


def test_summary_sender_copies_its_counting_filter():
    cache = bloomwire.CountingFilter(4096, 2, 4)
    cache.insert("a")
    summary = bloomwire.SummarySender(cache, coding="positional")
    cache.insert("b")
    assert "b" not in summary and summary.filter.n == 1 and cache.n == 2
    frame = summary.next_frame()
    assert bloomwire.frame_info(frame).coding == "positional"
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.SummarySender(cache, coding="known-counters")  # a counting filter's coding
