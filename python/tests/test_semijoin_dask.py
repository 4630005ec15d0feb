"""bloomwire.dask: a column's membership and semi-joins, the frame shipped once per worker
and decoded once per worker process; the example dask_semijoin.py at a small size."""

import pytest

import bloomwire
import helpers

pa, np, pd = helpers.dask_modules()

import dask.dataframe as dd  # noqa: E402

import bloomwire.dask  # noqa: E402
from bloomwire import _membership  # noqa: E402

N = 20_000


# Worker processes: the frame really travels, and each process decodes it.
client = helpers.dask_client_fixture(processes=True)


def users(lo, hi):
    return pd.array([f"user-{i}" for i in range(lo, hi)], dtype="string[pyarrow]")


def big_frame():
    # Users 0..2N; the small side holds 0..N: half of the rows match.
    return pd.DataFrame({"user": users(0, 2 * N), "id": np.arange(2 * N, dtype="int64")},
                        index=pd.RangeIndex(100, 100 + 2 * N))


def small_filter(plan=None, counting=False):
    plan = plan or bloomwire.plan_for_fpr(N, 0.01)
    f = plan.new_counting_filter(4) if counting else plan.new_filter()
    f.insert_array(pa.array(users(0, N)))
    return f


def expected(f, pdf):
    return np.asarray(f.contains_array(pa.array(pdf["user"])).to_numpy(zero_copy_only=False))


def test_contains_is_the_bulk_query_with_the_index_kept(client):
    pdf = big_frame()
    ddf = dd.from_pandas(pdf, npartitions=5)
    f = small_filter()
    got = bloomwire.dask.contains(ddf, f, column="user").compute()
    assert got.dtype == bool
    assert list(got.index) == list(pdf.index)
    assert (got.to_numpy() == expected(f, pdf)).all()
    assert got.iloc[:N].all()  # every key of the set
    # Integers: hashed as their little-endian bytes at the column's width.
    g = bloomwire.plan_for_fpr(N, 0.01).new_filter()
    g.insert_array(np.arange(N, dtype="int64"))
    ints = bloomwire.dask.contains(ddf["id"], g.encode()).compute()
    assert ints.iloc[:N].all()
    assert ints.iloc[N:].sum() < 0.03 * N


def test_semi_join_from_a_small_dask_frame(client):
    pdf = big_frame()
    big = dd.from_pandas(pdf, npartitions=6)
    small = dd.from_pandas(pd.DataFrame({"name": users(0, N)}), npartitions=3)
    plan = bloomwire.plan_for_fpr(N, 0.01)
    kept = bloomwire.dask.semi_join(big, small, "user", small_on="name", plan=plan).compute()
    f = small_filter(plan)
    assert kept.equals(pdf[expected(f, pdf)])
    exact = N
    false_positives = len(kept) - exact
    assert 0 <= false_positives < 0.03 * N
    # The join after it is the join without it.
    joined = kept.merge(small.compute(), left_on="user", right_on="name")
    assert len(joined) == exact


def test_decoded_once_per_worker_process(client):
    big = dd.from_pandas(big_frame(), npartitions=12)
    f = small_filter(bloomwire.plan_for_fpr(N, 0.001))
    before = client.run(_membership.decodes)
    kept = bloomwire.dask.semi_join(big, f, "user")
    assert len(kept) >= N
    assert len(kept) == len(bloomwire.dask.semi_join(big, f, "user"))  # cached: no decode
    after = client.run(_membership.decodes)
    digest = _membership.Shipment.of(f).query.digest
    held = client.run(_membership.cached_digests)
    # 12 partitions over 2 processes: one decode in each process that ran a task.
    for worker in after:
        assert after[worker] - before[worker] <= 1
    assert sum(after.values()) - sum(before.values()) >= 1
    assert any(digest in d for d in held.values())


def test_counting_chunked_and_tagged_frames(client):
    pdf = big_frame()
    big = dd.from_pandas(pdf, npartitions=4)
    plan = bloomwire.plan_for_fpr(N, 0.01)
    bloom = small_filter(plan)
    want = pdf[expected(bloom, pdf)]
    counting = small_filter(plan, counting=True)
    # A counting filter, as an object (shipped as its Bloom filter) and as its frame.
    assert bloomwire.dask.semi_join(big, counting, "user").compute().equals(want)
    assert bloomwire.dask.semi_join(big, counting.encode(), "user").compute().equals(want)
    # A chunked frame of several chunks, as the route by chunk makes it.
    small = dd.from_pandas(pd.DataFrame({"user": users(0, N)}), npartitions=3)
    chunked = bloomwire.dask.build_chunked(small["user"], plan, chunk_shift=16)
    info = bloomwire.frame_info(chunked)
    assert info.chunk_shift == 16 and plan.m > 4 << 16
    assert bloomwire.dask.semi_join(big, chunked, "user").compute().equals(want)
    # A tagged frame: refused without its key, verified by each worker's decode with it.
    key = bytes(range(32))
    tagged = bloom.encode(key=key)
    with pytest.raises(ValueError, match="tagged"):
        bloomwire.dask.semi_join(big, tagged, "user")
    assert bloomwire.dask.semi_join(big, tagged, "user", key=key).compute().equals(want)
    with pytest.raises(Exception):
        bloomwire.dask.semi_join(big, tagged, "user", key=bytes(32)).compute()
    with pytest.raises(TypeError):
        bloomwire.dask.contains(big["user"], "not a filter")


def test_the_example_at_a_small_size(client):
    out = helpers.example("dask_semijoin").run(200_000, 20_000, partitions=4, client=client,
                                       quiet=True)
    assert out["rows_kept"] == out["exact_rows"] + out["false_positives"]
    assert out["false_positives"] >= 0
    assert out["join_rows"] == out["exact_rows"]
    assert out["bytes_shipped"]["bloomwire"] == 2 * out["frame_bytes"]
    assert helpers.example("example_common").within_plan(out)
