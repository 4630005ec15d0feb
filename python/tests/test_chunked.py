"""Building by chunk (spec 4.10), without an engine: the keys' bit positions, chunks built
from them where they land, and the frame assembled from the chunks' payloads, byte for byte
the frame one process encodes for the same filter, coding and chunk shift."""

import pickle

import pytest

import bloomwire
from bloomwire import _chunked

np = pytest.importorskip("numpy")
pa = pytest.importorskip("pyarrow")

M, K, SHIFT = 300_007, 2, 14
KEYS = [f"key-{i}" for i in range(9000)]
KEY = bytes(range(32))
CHUNKED = ["adaptive", "known-p", "known-p-symbols", "known-p-interleaved", "positional",
           "wide"]


@pytest.fixture(scope="module")
def whole():
    f = bloomwire.BloomFilter(M, K)
    f.insert_many(KEYS)
    return f


def chunks_of(indexer, keys, shift, pieces=3):
    """Each chunk built from the positions of `pieces` slices of the keys (as the partitions
    of a collection would send them), and the number of keys."""
    built, n = {}, 0
    for part in range(pieces):
        count, chunks, offsets, positions = indexer.positions_by_chunk(
            pa.array(keys[part::pieces]), shift)
        n += count
        for j, c in enumerate(chunks):
            c = int(c)
            if c not in built:
                built[c] = bloomwire.Chunk(indexer.m, shift, c)
            built[c].add(positions[offsets[j]:offsets[j + 1]], relative=True)
    return built, n


def test_positions_are_the_bits_inserts_set(whole):
    indexer = bloomwire.Indexer(whole)
    positions = indexer.positions(KEYS)
    assert positions.dtype == np.uint64 and len(positions) == K * len(KEYS)
    assert (indexer.positions(pa.array(KEYS)) == positions).all()
    assert (indexer.positions(np.array([k.encode() for k in KEYS])) == positions).all()
    f = bloomwire.BloomFilter(M, K)
    for key in KEYS[:50]:
        f.insert(key)
    bits = f.bits()
    for p in indexer.positions(KEYS[:50]):
        assert bits[p // 8] >> (p % 8) & 1
    # Integer columns hash their little-endian bytes, nulls are skipped, as in inserts.
    ints = np.arange(10, dtype="<i8")
    assert (indexer.positions(ints)
            == indexer.positions([int(i).to_bytes(8, "little", signed=True) for i in ints])).all()
    assert len(indexer.positions(pa.array(["a", None, "b"]))) == 2 * K
    # A rational k, another layout, a seed: the same positions as the plan's filter sets.
    plan = bloomwire.plan_for_fpr(2000, 0.003, seed=7)
    g = plan.new_filter()
    g.insert_many(KEYS[:2000])
    ones = bytearray(-(-plan.m // 8))
    for p in bloomwire.Indexer(plan).positions(KEYS[:2000]):
        ones[p // 8] |= 1 << (p % 8)
    assert bytes(ones) == g.bits()


def test_positions_by_chunk(whole):
    indexer = bloomwire.Indexer(whole)
    n, chunks, offsets, positions = indexer.positions_by_chunk(KEYS, SHIFT)
    assert n == len(KEYS) and positions.dtype == np.uint32
    assert list(chunks) == list(range(-(-M // (1 << SHIFT))))
    assert offsets[0] == 0 and offsets[-1] == len(positions) == K * len(KEYS)
    absolute = indexer.positions(KEYS)
    regrouped = np.concatenate([positions[offsets[j]:offsets[j + 1]].astype(np.uint64)
                                + (int(c) << SHIFT) for j, c in enumerate(chunks)])
    assert sorted(regrouped) == sorted(absolute)
    # Few keys: only the chunks they fall in.
    n, chunks, offsets, positions = indexer.positions_by_chunk(KEYS[:3], 6)
    assert n == 3 and len(chunks) <= 3 * K and len(offsets) == len(chunks) + 1
    assert (positions < 64).all()


@pytest.mark.parametrize("coding", CHUNKED)
@pytest.mark.parametrize("shift", [SHIFT, 17])
def test_assembled_frame_is_the_one_process_frame(whole, coding, shift):
    indexer = bloomwire.Indexer(whole)
    built, n = chunks_of(indexer, KEYS, shift)
    ones = sum(c.count_ones() for c in built.values())
    assert ones == whole.count_ones() and n == whole.n
    for keyed in (False, True):
        options = {"metadata": b"chunks", "generation": 9}
        if keyed:
            options["key"] = KEY
        frame = bloomwire.ChunkedFrame(whole, n, ones, shift, coding, **options)
        # The frame travels to the workers pickled (a chunk's payload needs no key, but a
        # pickle keeps everything).
        frame = pickle.loads(pickle.dumps(frame))
        payloads = [built[i].encode(frame) if i in built else frame.encode_chunk(i, [])
                    for i in range(frame.chunk_count)]
        assembled = frame.assemble(payloads)
        one = whole.encode(coding, chunk_shift=shift, **options)
        assert assembled == one, (coding, shift, keyed)
        info = bloomwire.frame_info(assembled, key=KEY if keyed else None)
        assert (info.coding, info.chunk_shift, info.n, info.generation) == (coding, shift, n, 9)
        assert bloomwire.decode(assembled, key=KEY if keyed else None) == whole


def test_chunks_from_absolute_unsorted_repeated_positions(whole):
    frame = bloomwire.ChunkedFrame(whole, whole.n, whole.count_ones(), SHIFT, "wide")
    positions = bloomwire.Indexer(whole).positions(KEYS)
    rng = np.random.default_rng(5)
    payloads = []
    for i in range(frame.chunk_count):
        mine = positions[positions >> SHIFT == i]
        mine = np.concatenate([mine, mine[: len(mine) // 2]])  # repeats
        rng.shuffle(mine)
        pieces = [mine[: len(mine) // 3], mine[len(mine) // 3:].astype("<i8"),
                  [int(p) for p in mine[:5]]]
        payloads.append(frame.encode_chunk(i, [p for piece in pieces for p in
                                               ([piece] if hasattr(piece, "dtype")
                                                else piece)]))
        chunk = bloomwire.Chunk(M, SHIFT, i)
        chunk.add(mine)
        assert chunk.encode(frame) == payloads[-1]
        assert chunk.range == frame.chunk_bits(i)
    assert frame.assemble(payloads) == whole.encode("wide", chunk_shift=SHIFT)


def test_a_large_chunk_sets_its_bits_region_by_region():
    # A chunk of 2^26 bits takes its positions region by region (2^23 bits at a time).
    rng = np.random.default_rng(3)
    relative = rng.integers(0, 1 << 26, 20_000, dtype=np.uint64)
    chunk = bloomwire.Chunk(1 << 28, 26, 2)
    chunk.add([relative[:7000] + (2 << 26), relative[7000:].astype("<u4") + (2 << 26),
               int(relative[0]) + (2 << 26)])
    expected = np.zeros(1 << 23, dtype=np.uint8)
    np.bitwise_or.at(expected, (relative >> 3).astype(np.int64),
                     (1 << (relative & 7)).astype(np.uint8))
    assert chunk.bits() == expected.tobytes()
    assert chunk.count_ones() == len(np.unique(relative))


def test_chunked_frame_fields_and_pickles(whole):
    frame = bloomwire.ChunkedFrame(bloomwire.Indexer(whole), 9000, 17000, SHIFT, "wide",
                                   metadata=b"x", key=KEY, generation=3)
    assert (frame.m, frame.n, frame.ones, frame.shift, frame.generation) == (M, 9000, 17000,
                                                                              SHIFT, 3)
    assert frame.chunk_count == 19 and frame.coding == "wide" and frame.q0 is not None
    assert frame.metadata == b"x" and frame.keyed
    assert frame.chunk_bits(18) == range(18 << SHIFT, M)
    assert frame.chunk_of(0) == 0 and frame.chunk_of(M - 1) == 18
    assert frame.indexer() == bloomwire.Indexer(whole)
    positional = bloomwire.ChunkedFrame(whole, 9000, 17000, SHIFT, "positional")
    assert positional.q0 is None and not positional.keyed and positional.metadata is None
    back = pickle.loads(pickle.dumps(frame))
    assert repr(back) == repr(frame) and back.keyed and back.metadata == b"x"
    indexer = bloomwire.Indexer(whole)
    assert len(pickle.dumps(indexer)) < 200  # its parameters, not m bits
    chunk = bloomwire.Chunk(M, SHIFT, 3)
    chunk.add([3 << SHIFT, (3 << SHIFT) + 7])
    assert pickle.loads(pickle.dumps(chunk)) == chunk and chunk.count_ones() == 2


def test_plans_say_when_to_build_by_chunk():
    plan = bloomwire.plan_for_fpr(100_000_000, 0.01, max_m=1 << 30)
    assert plan.chunked_build(1 << 32) is None  # a 4 GiB worker builds it whole
    shift = plan.chunked_build(1 << 26)  # 64 MiB workers: chunks of a quarter of that
    assert shift == 27 and (1 << shift) < plan.m
    # A plan restored from its pickle answers the same.
    plan = bloomwire.plan_for_fpr(100_000, 0.01)  # 1.2 MB of bits
    back = pickle.loads(pickle.dumps(plan))
    assert back.chunked_build(1 << 22) is None and plan.chunked_build(1 << 22) is None
    assert back.chunked_build(1 << 20) == plan.chunked_build(1 << 20) == 21


def test_errors(whole):
    frame = bloomwire.ChunkedFrame(whole, whole.n, whole.count_ones(), SHIFT, "wide")
    with pytest.raises(bloomwire.InvalidParameter) as e:
        frame.encode_chunk(19, [])  # chunks 0 to 18
    assert e.value.name == "chunk"
    with pytest.raises(bloomwire.InvalidParameter) as e:
        frame.assemble([b""] * 18)
    assert e.value.name == "payloads"
    with pytest.raises(bloomwire.InvalidParameter):
        frame.assemble([])
    with pytest.raises(bloomwire.InvalidParameter) as e:
        frame.encode_chunk(0, [1 << SHIFT])  # chunk 1's bit
    assert e.value.name == "positions"
    with pytest.raises(bloomwire.InvalidParameter):
        frame.encode_chunk(0, np.array([1 << SHIFT], dtype="<u4"), relative=True)
    with pytest.raises(ValueError):
        frame.encode_chunk(0, np.array([-1]))
    with pytest.raises(TypeError):
        frame.encode_chunk(0, b"\x00\x00")
    with pytest.raises(TypeError):
        frame.encode_chunk(0, np.array([1.0]))
    with pytest.raises(bloomwire.InvalidParameter):
        frame.chunk_of(M)
    with pytest.raises(bloomwire.InvalidParameter):
        frame.chunk_bits(19)
    chunk = bloomwire.Chunk(M, SHIFT, 0)
    with pytest.raises(bloomwire.InvalidParameter):
        chunk.add(np.array([5, 1 << SHIFT], dtype="<u8"))
    assert chunk.count_ones() == 0  # the array that held a bad position set nothing
    other = bloomwire.ChunkedFrame(bloomwire.BloomFilter(M + 64, K), 1, 1, SHIFT, "wide")
    with pytest.raises(bloomwire.InvalidParameter):
        chunk.encode(other)  # a chunk of another filter
    for coding, shift in [("raw", SHIFT), ("small", SHIFT), ("wide", 19), ("wide", 5)]:
        with pytest.raises(bloomwire.InvalidParameter):
            bloomwire.ChunkedFrame(whole, 1, 1, shift, coding)
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.ChunkedFrame(whole, 1, M + 1, SHIFT, "wide")  # more ones than bits
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.Chunk(M, SHIFT, 19)
    with pytest.raises(TypeError):
        bloomwire.ChunkedFrame("plan", 1, 1, SHIFT, "wide")
    opaque = bloomwire.BloomFilter.from_bits(bytes(128), 1024, 3, opaque=True)
    with pytest.raises(bloomwire.OpaqueHashFamily):
        bloomwire.Indexer(opaque)
    with pytest.raises(TypeError):
        bloomwire.Indexer(whole).positions("one key")
    with pytest.raises(ValueError):
        bloomwire.encode(bloomwire.CountingFilter(1000, 2), chunk_shift=8)
    # Payloads are assembled as they are, not decoded: a wrong one makes a frame that
    # decoders refuse.
    with pytest.raises(bloomwire.CorruptPayload):
        bloomwire.decode(frame.assemble([b"\x00"] * 19))
    # One process would not write a payload under the work bound (spec 2.2): refused.
    big = bloomwire.ChunkedFrame(bloomwire.BloomFilter(1 << 24, 2), 1, 1, SHIFT, "wide")
    with pytest.raises(bloomwire.InvalidParameter):
        big.assemble([b""] * big.chunk_count)


def test_the_engine_neutral_steps(whole):
    job = _chunked.ChunkJob(bloomwire.Indexer(whole), SHIFT)
    assert job.chunk_count == 19 and job.dtype == "<u4"
    n, rows = _chunked.position_rows(job, KEYS)
    assert n == len(KEYS) and list(rows["chunk"]) == list(range(19))
    chunks = [_chunked.build_chunk(job, int(c), [blob]) for c, blob in
              zip(rows["chunk"], rows["positions"])]
    ones = sum(c.count_ones() for c in chunks)
    assert ones == whole.count_ones()
    # "auto" is the library's choice from the summed counts: the coding one process
    # encoding the whole filter in these chunks chooses.
    auto = _chunked.choose_coding(job, "auto", n, ones)
    assert auto == bloomwire.decode(whole.encode(chunk_shift=SHIFT)).header.coding
    assert _chunked.choose_coding(job, "known-p", n, ones) == "known-p"
    assert _chunked.needs_ones(job, "wide") and not _chunked.needs_ones(job, "positional")
    frame = _chunked.worker_frame(job, "wide", n, ones)
    payloads = {c.index: _chunked.encode(c, frame) for c in chunks}
    assembled = _chunked.assemble(job, "wide", n, ones, payloads, metadata=b"m", key=KEY)
    assert assembled == whole.encode("wide", chunk_shift=SHIFT, metadata=b"m", key=KEY)
    with pytest.raises(RuntimeError):
        _chunked.assemble(job, "wide", n, ones, {0: payloads[0]})
    # Spark's batches: the rows, and the count of keys in the pseudo-chunk's row.
    batches = list(_chunked.position_batches(job, iter([pa.record_batch([pa.array(KEYS)],
                                                                        names=["k"])])))
    counts = [row for b in batches for row in zip(b.column(0).to_pylist(),
                                                    b.column(1).to_pylist())
              if row[0] == _chunked.COUNT_CHUNK]
    assert counts == [(_chunked.COUNT_CHUNK, len(KEYS).to_bytes(8, "little"))]
    assert _chunked.chunk_shift(bloomwire.plan_for_fpr(1000, 0.01), None, None) is None
    assert _chunked.chunk_shift(bloomwire.plan_for_fpr(1000, 0.01), None, 8) == 8
