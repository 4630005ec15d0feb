"""bloomwire.dask: one filter from a Dask collection, equal to one process's filter."""

import pickle

import pytest

import bloomwire
import helpers

pa, np, pd = helpers.dask_modules()

import dask.bag as db  # noqa: E402
import dask.dataframe as dd  # noqa: E402

import bloomwire.dask  # noqa: E402

N = 20_000


# Threads in one process: quick to start; the pickling test below uses processes.
client = helpers.dask_client_fixture(processes=False)


def frame_of_keys(n=N):
    return pd.DataFrame({
        "user": pd.array([f"user-{i}" for i in range(n)], dtype="string[pyarrow]"),
        "id": np.arange(n, dtype="int64"),
    })


def single_process(plan, values, counting_width=None):
    f = plan.new_filter() if counting_width is None else plan.new_counting_filter(counting_width)
    f.insert_array(values)
    return f


@pytest.mark.parametrize("split_every", [2, 8])
def test_series_of_strings_equals_one_process(client, split_every):
    pdf = frame_of_keys()
    ddf = dd.from_pandas(pdf, npartitions=7)
    plan = bloomwire.plan_for_fpr(N, 0.01)
    f = bloomwire.dask.build_filter(ddf["user"], plan, split_every=split_every)
    assert isinstance(f, bloomwire.BloomFilter)
    assert f == single_process(plan, pa.array(pdf["user"])) and f.n == N
    assert f.contains_array(pa.array(pdf["user"])).to_pylist() == [True] * N


def test_dataframe_column_of_integers_with_n_counted(client):
    pdf = frame_of_keys()
    ddf = dd.from_pandas(pdf, npartitions=4)
    f = bloomwire.dask.build_filter(ddf, column="id", n="count", fpr=0.001)
    plan = bloomwire.plan_for_fpr(N, 0.001)
    assert f.m == plan.m and f == single_process(plan, pdf["id"].to_numpy())
    assert (5).to_bytes(8, "little", signed=True) in f


def test_bag_of_str_and_frame_result(client):
    keys = [f"k{i}" for i in range(5000)] + [None]
    bag = db.from_sequence(keys, npartitions=5)
    plan = bloomwire.plan_for_fpr(5000, 0.01)
    frame = bloomwire.dask.build_filter(bag, plan, result="frame")
    assert isinstance(frame, bytes)
    one = plan.new_filter()
    one.insert_many(k for k in keys if k is not None)
    assert bloomwire.decode(frame) == one
    assert frame == one.encode()  # byte for byte the frame one process sends
    lazy = bloomwire.dask.build_filter(bag, plan, compute=False)
    assert lazy.compute() == one


def test_counting_filters_add_their_counters(client):
    pdf = pd.DataFrame({"k": pd.array([f"k{i % 3000}" for i in range(9000)],
                                       dtype="string[pyarrow]")})
    ddf = dd.from_pandas(pdf, npartitions=6)
    plan = bloomwire.plan_for_fpr(3000, 0.01)
    c = bloomwire.dask.build_filter(ddf["k"], plan, counting_width=2)
    assert isinstance(c, bloomwire.CountingFilter)
    assert c == single_process(plan, pa.array(pdf["k"]), counting_width=2)
    assert c.n == 9000


def test_partial_frames_cost_their_keys_not_m(client):
    ddf = dd.from_pandas(frame_of_keys(), npartitions=10)
    plan = bloomwire.plan_for_fpr(N, 0.01)
    spec = bloomwire._partials.FilterSpec.of(plan)
    frames = [p.compute() for p in bloomwire.dask.partial_frames(ddf["user"], spec)]
    assert len(frames) == 10
    assert sum(map(len, frames)) < plan.m / 8  # ten partial filters in less than one raw


def test_arguments_are_checked(client):
    ddf = dd.from_pandas(frame_of_keys(100), npartitions=2)
    plan = bloomwire.plan_for_fpr(100, 0.01)
    with pytest.raises(ValueError):
        bloomwire.dask.build_filter(ddf["user"])
    with pytest.raises(ValueError):
        bloomwire.dask.build_filter(ddf["user"], plan, fpr=0.01)
    with pytest.raises(TypeError):
        bloomwire.dask.build_filter(ddf, plan)  # which column?
    with pytest.raises(ValueError):
        bloomwire.dask.build_filter(ddf["user"], plan, split_every=1)


KEY = bytes(range(32))


@pytest.mark.parametrize("coding", ["auto", "known-p-interleaved", "positional"])
def test_by_chunk_is_the_frame_one_process_encodes(client, coding):
    pdf = frame_of_keys()
    ddf = dd.from_pandas(pdf, npartitions=5)
    plan = bloomwire.plan_for_fpr(N, 0.01)  # 2 million bits (k = 1): 31 chunks of 2^16
    frame = bloomwire.dask.build_chunked(ddf["user"], plan, chunk_shift=16, coding=coding,
                                         metadata=b"by chunk", key=KEY, generation=4)
    info = bloomwire.frame_info(frame, key=KEY)
    assert info.chunk_shift == 16 and info.n == N and info.generation == 4
    one = single_process(plan, pa.array(pdf["user"]))
    # "auto": the library's choice, the coding one process chooses for the whole filter in
    # the same chunks.
    whole = one.encode(None if coding == "auto" else coding, chunk_shift=16,
                       metadata=b"by chunk", key=KEY, generation=4)
    assert frame == whole
    assert coding == "auto" or info.coding == coding


def test_by_chunk_from_a_bag_and_integers_with_empty_chunks(client):
    keys = [f"k{i}" for i in range(20)] + [None]
    bag = db.from_sequence(keys, npartitions=3)
    plan = bloomwire.plan_for_fpr(300, 0.01)  # 29 851 bits: 30 chunks of 2^10, for 20 keys
    frame = bloomwire.dask.build_chunked(bag, plan, chunk_shift=10, coding="positional")
    one = plan.new_filter()
    one.insert_many(k for k in keys if k is not None)
    # Chunks without a key's bit are built and coded too.
    assert one.count_ones() <= 20 < plan.m >> 10
    assert frame == one.encode("positional", chunk_shift=10)
    pdf = frame_of_keys(5000)
    ddf = dd.from_pandas(pdf, npartitions=3)
    # m held to 100 000 bits: one bit in ten is one, and "auto" codes it as one process
    # does in the same chunks.
    plan = bloomwire.plan_for_fpr(5000, 0.01, max_m=100_000)
    frame = bloomwire.dask.build_chunked(ddf, plan, column="id", chunk_shift=13)
    one = single_process(plan, pdf["id"].to_numpy())
    assert one.count_ones() > plan.m // 40
    assert frame == one.encode(chunk_shift=13)
    frame = bloomwire.dask.build_chunked(ddf, column="id", n="count", fpr=0.001,
                                         chunk_shift=17, coding="known-p")
    plan = bloomwire.plan_for_fpr(5000, 0.001)
    assert frame == single_process(plan, pdf["id"].to_numpy()).encode("known-p",
                                                                       chunk_shift=17)


def test_build_filter_takes_the_route_by_chunk_when_a_worker_cannot_hold_it(client):
    keys = [f"u{i}" for i in range(100_000)]
    pdf = pd.DataFrame({"user": pd.array(keys, dtype="string[pyarrow]")})
    ddf = dd.from_pandas(pdf, npartitions=4)
    plan = bloomwire.plan_for_fpr(100_000, 0.01)  # 1.2 MB of bits, and its frame
    shift = plan.chunked_build(1 << 20)  # workers of 1 MiB: chunks of 2^21 bits
    assert shift == 21
    one = single_process(plan, pa.array(keys))
    frame = bloomwire.dask.build_filter(ddf["user"], plan, worker_memory=1 << 20,
                                        result="frame")
    assert bloomwire.frame_info(frame).chunk_shift == shift
    assert frame == one.encode(bloomwire.frame_info(frame).coding, chunk_shift=shift)
    f = bloomwire.dask.build_filter(ddf["user"], plan, worker_memory=1 << 20)
    assert f == one
    # Workers that hold it: the partial filters' route, the default frame.
    assert bloomwire.dask.build_filter(ddf["user"], plan, worker_memory=1 << 30,
                                       result="frame") == one.encode()
    with pytest.raises(ValueError):  # a worker holds it: say how to chunk it
        bloomwire.dask.build_chunked(ddf["user"], plan, worker_memory=1 << 30)
    with pytest.raises(ValueError):
        bloomwire.dask.build_filter(ddf["user"], plan, chunk_shift=21, compute=False)
    with pytest.raises(ValueError):
        bloomwire.dask.build_filter(ddf["user"], plan, chunk_shift=21, counting_width=4)
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.dask.build_chunked(ddf["user"], plan, chunk_shift=40)
    with pytest.raises(bloomwire.InvalidParameter):
        bloomwire.dask.build_chunked(ddf["user"], plan, chunk_shift=21, coding="raw")


def build_on_worker(plan, keys):
    """Runs in a worker process: the plan arrived pickled (as its parameters and figures);
    the filter built there comes back pickled (as its frame)."""
    f = plan.new_filter()
    f.insert_many(keys)
    return f


def test_worker_processes_plans_and_filters_travel_pickled():
    plan = bloomwire.plan_for_fpr(10_000, 0.01)
    with helpers.dask_client(processes=True) as client:
        # A plan shipped to every worker makes the same empty filter there.
        empties = client.run(lambda: pickle.dumps(plan.new_filter()))
        assert len(empties) == 2
        assert all(pickle.loads(e) == plan.new_filter() for e in empties.values())
        futures = [client.submit(build_on_worker, plan, [f"k{i}" for i in range(j, 10_000, 4)])
                   for j in range(4)]
        merged = plan.new_filter()
        for f in client.gather(futures):
            merged |= f
        one = plan.new_filter()
        one.insert_many(f"k{i}" for i in range(10_000))
        assert merged == one
        # And the whole route with real worker processes.
        ddf = dd.from_pandas(frame_of_keys(), npartitions=4)
        f = bloomwire.dask.build_filter(ddf["user"], bloomwire.plan_for_fpr(N, 0.01))
        one = single_process(bloomwire.plan_for_fpr(N, 0.01), pa.array(frame_of_keys()["user"]))
        assert f == one
        # The route by chunk too: P2P's shuffle between the processes, chunks persisted
        # where they were built.
        frame = bloomwire.dask.build_chunked(ddf["user"], bloomwire.plan_for_fpr(N, 0.01),
                                             chunk_shift=15, coding="wide")
        assert frame == one.encode("wide", chunk_shift=15)
