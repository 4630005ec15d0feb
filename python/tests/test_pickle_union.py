"""Pickling (filters and plans travel as frames, loaded with the receiver's limits), union
(`|`, `|=`, `union`) and equality."""

import copy
import pickle
import threading

import pytest

import bloomwire


def keys(n, prefix="key-"):
    return [f"{prefix}{i}" for i in range(n)]


@pytest.fixture
def bloom():
    f = bloomwire.plan_for_fpr(2000, 0.01).new_filter()
    f.insert_many(keys(2000))
    return f


@pytest.fixture
def counting():
    c = bloomwire.CountingFilter(20_000, 3, width=4)
    c.insert_many(keys(500))
    c.insert("twice")
    c.insert("twice")
    return c


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_filters_pickle_as_their_frames(bloom, counting, protocol):
    for f in (bloom, counting):
        data = pickle.dumps(f, protocol=protocol)
        back = pickle.loads(data)
        assert type(back) is type(f) and back == f and back.n == f.n
        if protocol >= 3:  # protocol 2 writes bytes as latin-1 text
            # The pickle holds the frame (the default coding), a few bytes around it.
            frame = f.encode()
            assert frame in data and len(data) < len(frame) + 150


def test_sparse_filters_pickle_small():
    f = bloomwire.BloomFilter(1 << 24, 1)  # 2 MiB of bits
    f.insert_many(keys(100))
    assert len(pickle.dumps(f)) < 600


def test_opaque_and_siphash_filters_pickle():
    opaque = bloomwire.BloomFilter.from_bits(bytes([0x0f] * 16), 128, 3, n=7, opaque=True)
    keyed = bloomwire.BloomFilter(1000, 2, siphash_key=bytes(range(16)))
    keyed.insert("x")
    for f in (opaque, keyed):
        assert pickle.loads(pickle.dumps(f)) == f
    assert pickle.loads(pickle.dumps(opaque)).opaque
    assert "x" in pickle.loads(pickle.dumps(keyed))


def test_plan_pickles_and_makes_the_same_filter():
    for plan in (bloomwire.plan_for_fpr(100_000, 0.001, seed=3),
                 bloomwire.plan(50_000, 40_000, siphash_key=bytes(16))):
        back = pickle.loads(pickle.dumps(plan))
        assert back == plan and repr(back) == repr(plan) and str(back) == str(plan)
        assert (back.m, back.k, back.k_raw, back.layout, back.fpr, back.bytes) == \
            (plan.m, plan.k, plan.k_raw, plan.layout, plan.fpr, plan.bytes)
        a, b = plan.new_filter(), back.new_filter()
        a.insert("same")
        b.insert("same")
        assert a == b and a.bits() == b.bits()
        assert back.new_counting_filter(2) == plan.new_counting_filter(2)
    assert bloomwire.plan_for_fpr(1000, 0.01) != bloomwire.plan_for_fpr(1000, 0.02)


def test_a_plan_for_a_filter_no_machine_holds_pickles_small():
    # About 10^12 bits (120 GB): pickling the plan used to build (and encode) its empty
    # filter on the way out, and to decode one on the way in.
    plan = bloomwire.plan_for_fpr(10**11, 0.01, max_m=1 << 43)
    assert plan.receiver_bytes > 100 * 10**9
    data = pickle.dumps(plan)
    assert len(data) < 2000
    with bloomwire.unpickling_limits(max_m=1 << 43):
        back = pickle.loads(data)
    assert back == plan and back.m == plan.m and back.chunked_build(8 << 30) is not None
    # The default limits refuse it, as they refuse its filter's frame.
    with pytest.raises(bloomwire.LimitExceeded) as caught:
        pickle.loads(data)
    assert caught.value.field == "m"
    # A plan pickled before 0.4 (its empty filter's frame) still loads.
    small = bloomwire.plan_for_fpr(1000, 0.01)
    figures = small.__reduce__()[1][1]
    old = bloomwire._pickle.load_plan(small.new_filter().encode(), figures)
    assert old == small


def test_unpickling_applies_the_receivers_limits(bloom, counting):
    big = bloomwire.BloomFilter(1 << 20, 3)
    plan = bloomwire.plan_for_fpr(100_000, 0.01)
    data = {name: pickle.dumps(obj) for name, obj in
            [("big", big), ("plan", plan), ("counting", bloomwire.CountingFilter(1 << 17, 2))]}
    with bloomwire.unpickling_limits(max_m=1 << 16) as limits:
        assert limits.max_m == 1 << 16 and limits.max_k == bloomwire.DEFAULT_MAX_K
        for name in data:
            with pytest.raises(bloomwire.LimitExceeded) as caught:
                pickle.loads(data[name])
            assert caught.value.field == "m" and caught.value.limit == 1 << 16
        # Nested blocks start from the enclosing limits.
        with bloomwire.unpickling_limits(max_k=1):
            assert bloomwire.get_unpickling_limits().max_m == 1 << 16
            with pytest.raises(bloomwire.LimitExceeded):
                pickle.loads(pickle.dumps(bloomwire.BloomFilter(100, 2)))
    assert pickle.loads(data["big"]) == big  # the default limits again
    # A filter over the default max_m (2^28) needs the receiver to raise it.
    huge = pickle.dumps(bloomwire.BloomFilter((1 << 28) + 64, 1))
    with pytest.raises(bloomwire.LimitExceeded):
        pickle.loads(huge)
    with bloomwire.unpickling_limits(max_m=1 << 29):
        assert pickle.loads(huge).m == (1 << 28) + 64


def test_unpickling_limits_bound_the_filters_memory():
    # 2^22 counters of a byte: 4 MiB, over ceil(max_m / 8) = 2^21 bytes for max_m = 2^24.
    data = pickle.dumps(bloomwire.CountingFilter(1 << 22, 2, width=1))
    with bloomwire.unpickling_limits(max_m=1 << 24) as limits:
        assert limits.max_filter_bytes is None
        with pytest.raises(bloomwire.LimitExceeded) as caught:
            pickle.loads(data)
        assert (caught.value.field, caught.value.limit) == ("filter bytes", 1 << 21)
        with bloomwire.unpickling_limits(max_filter_bytes=1 << 22) as raised:
            assert raised.max_m == 1 << 24 and raised.max_filter_bytes == 1 << 22
            assert pickle.loads(data).m == 1 << 22
            # Nested blocks keep it unless told; None follows max_m again.
            with bloomwire.unpickling_limits(max_k=8):
                assert pickle.loads(data).m == 1 << 22
            with bloomwire.unpickling_limits(max_filter_bytes=None):
                with pytest.raises(bloomwire.LimitExceeded):
                    pickle.loads(data)
    assert pickle.loads(data).m == 1 << 22  # the default max_m: 2^25 bytes
    previous = bloomwire.set_unpickling_limits(max_filter_bytes=1 << 10)
    try:
        with pytest.raises(bloomwire.LimitExceeded):
            pickle.loads(data)
    finally:
        bloomwire.set_unpickling_limits(**previous._asdict())
    assert bloomwire.get_unpickling_limits() == bloomwire.Limits()
    with pytest.raises(ValueError):
        bloomwire.set_unpickling_limits(max_filter_bytes=-1)


def test_unpickling_limits_belong_to_their_thread():
    data = pickle.dumps(bloomwire.BloomFilter(1 << 20, 3))
    seen = []
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen.append(pickle.loads(data).m)  # default limits in this thread
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with bloomwire.unpickling_limits(max_m=1 << 10):
        inside.set()
        done.wait()
        with pytest.raises(bloomwire.LimitExceeded):
            pickle.loads(data)
    t.join()
    assert seen == [1 << 20]


def test_process_default_limits():
    data = pickle.dumps(bloomwire.BloomFilter(1 << 20, 3))
    previous = bloomwire.set_unpickling_limits(max_m=1 << 12)
    try:
        assert bloomwire.get_unpickling_limits().max_m == 1 << 12
        with pytest.raises(bloomwire.LimitExceeded):
            pickle.loads(data)
        with bloomwire.unpickling_limits(max_m=1 << 21):
            assert pickle.loads(data).m == 1 << 20
    finally:
        bloomwire.set_unpickling_limits(**previous._asdict())
    assert bloomwire.get_unpickling_limits() == bloomwire.Limits()
    with pytest.raises(ValueError):
        bloomwire.set_unpickling_limits(max_m=-1)


def test_corrupt_pickles_are_typed_errors(bloom):
    frame = bloom.encode()
    data = bytearray(pickle.dumps(bloom))
    at = bytes(data).index(frame) + len(frame) // 2
    data[at] ^= 0x40
    with pytest.raises(bloomwire.ChecksumMismatch):
        pickle.loads(bytes(data))


def test_copies_do_not_go_through_frames(bloom):
    # copy and deepcopy clone directly: no limits apply, nothing is encoded.
    big = bloomwire.BloomFilter((1 << 28) + 64, 1)
    assert copy.copy(big) == big and copy.deepcopy(big) == big
    c = copy.deepcopy(bloom)
    c.insert("new")
    assert c != bloom


def test_union_operators(bloom):
    a = bloomwire.plan_for_fpr(2000, 0.01).new_filter()
    b = a.copy()
    a.insert_many(keys(1000))
    b.insert_many(keys(1000, "other-"))
    both = a | b
    assert all(both.contains_many(keys(1000))) and all(both.contains_many(keys(1000, "other-")))
    assert both.n == 2000 and a.n == 1000  # a unchanged
    one = a.copy()
    one.insert_many(keys(1000, "other-"))
    assert both.bits() == one.bits() and both == one
    c = a.copy()
    c |= b
    assert c == both
    d = a.copy()
    d.union(b)
    assert d == both
    assert (a | a).bits() == a.bits()
    with pytest.raises(bloomwire.Incompatible):
        a | bloomwire.BloomFilter(a.m + 1, 1)
    with pytest.raises(bloomwire.Incompatible):
        a |= bloomwire.plan_for_fpr(2000, 0.01, seed=1).new_filter()
    with pytest.raises(TypeError):
        a | "text"
    with pytest.raises(TypeError):
        a | bloomwire.CountingFilter(a.m, 1)


def test_equality():
    a, b = bloomwire.BloomFilter(1000, 2), bloomwire.BloomFilter(1000, 2)
    assert a == b and not (a != b)
    b.insert("x")
    assert a != b and not (a == b)
    assert a != "x" and a != bloomwire.CountingFilter(1000, 2)
    # Equal as sets: a union with itself is itself; n counts insertions and is not compared.
    assert (b | b) == b and (b | b).n == 2 * b.n
    with pytest.raises(TypeError):
        hash(a)


def test_counting_union_adds_counters_saturating():
    a = bloomwire.CountingFilter(5000, 2, width=2)
    b = bloomwire.CountingFilter(5000, 2, width=2)
    a.insert_many(keys(300))
    b.insert_many(keys(300, "b-"))
    for _ in range(5):
        a.insert("hot")
        b.insert("hot")
    one = bloomwire.CountingFilter(5000, 2, width=2)
    one.insert_many(keys(300))
    one.insert_many(keys(300, "b-"))
    for _ in range(10):
        one.insert("hot")
    assert (a | b) == one and (a | b).counters() == one.counters()
    assert max((a | b).counters()) == 3  # saturated, not wrapped
    c = a.copy()
    c |= b
    assert c == one and c.n == a.n + b.n
    # Removing one set's keys from the union leaves the other's.
    for k in keys(300):
        c.remove(k)
    assert all(c.contains(k) for k in keys(300, "b-"))
    with pytest.raises(bloomwire.Incompatible):
        a | bloomwire.CountingFilter(5000, 2, width=3)
    with pytest.raises(bloomwire.Incompatible):
        a | bloomwire.CountingFilter(5001, 2, width=2)


def test_docstring_examples():
    import doctest

    import bloomwire._pickle

    for module in (bloomwire, bloomwire._pickle):
        assert doctest.testmod(module).failed == 0, module.__name__
