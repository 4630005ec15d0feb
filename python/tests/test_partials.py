"""The engine-neutral route of bloomwire.dask and bloomwire.spark: the job's spec, its
limits, and partial filters between tasks (no engine needed)."""

import math
import pickle

import pytest

import bloomwire
from bloomwire import _partials


@pytest.fixture
def plan():
    return bloomwire.plan_for_fpr(5000, 0.01)


def test_spec_makes_the_plans_empty_filter_and_decodes_within_its_limits(plan):
    spec = _partials.FilterSpec.of(plan)
    assert spec.empty() == plan.new_filter()
    assert (spec.max_m, spec.max_k) == (plan.m, math.ceil(plan.k))
    larger = bloomwire.BloomFilter(plan.m + 1, 1).encode()
    with pytest.raises(bloomwire.LimitExceeded):
        spec.decode(larger)  # a worker accepts the job's filter, nothing larger
    assert spec.max_filter_bytes == -(-plan.m // 8)
    counting = _partials.FilterSpec.of(plan, counting_width=4)
    assert counting.empty() == plan.new_counting_filter(4)
    # A counter takes a byte: the job's memory limit is m bytes, not the default m / 8.
    assert counting.max_filter_bytes == plan.m
    with pytest.raises(bloomwire.UnexpectedFilterType):
        counting.decode(plan.new_filter().encode())


def test_partials_pickle_as_frames_within_the_jobs_limits(plan):
    spec = _partials.FilterSpec.of(plan)
    part = _partials.partial(spec, [f"k{i}" for i in range(100)])
    data = pickle.dumps(part)
    assert part.filter.encode() in data
    # The job's limits, not the process's unpickling limits, apply to it.
    with bloomwire.unpickling_limits(max_m=64):
        back = pickle.loads(data)
    assert back.filter == part.filter and back.spec == spec


def test_merges_leave_their_inputs_and_equal_one_filter(plan):
    spec = _partials.FilterSpec.of(plan)
    chunks = [[f"k{i}" for i in range(j, 3000, 3)] for j in range(3)]
    parts = [_partials.partial(spec, c) for c in chunks]
    before = [p.filter.copy() for p in parts]
    merged = _partials.tree(parts, 2, lambda group: _partials.merge(spec, group))
    one = plan.new_filter()
    one.insert_many(k for c in chunks for k in c)
    assert merged.filter == one
    assert [p.filter for p in parts] == before
    # The aggregation's steps (Spark's seqOp and combOp).
    acc = None
    for c in chunks:
        acc = _partials.fold_partials(acc, _partials.fold_frame(
            None, _partials.partial_frame(spec, c), spec))
    assert acc.filter == one


def test_partition_values_of_every_kind(plan):
    spec = _partials.FilterSpec.of(plan)
    keys = ["a", "b", None, "c"]
    expected = plan.new_filter()
    expected.insert_many(["a", "b", "c"])
    assert _partials.partial(spec, keys).filter == expected  # a list: None skipped
    pa = pytest.importorskip("pyarrow")
    pd = pytest.importorskip("pandas")
    np = pytest.importorskip("numpy")
    assert _partials.partial(spec, pa.array(keys)).filter == expected
    assert _partials.partial(spec, pd.Series(keys, dtype=object)).filter == expected
    assert _partials.partial(spec, pd.Series(keys, dtype="string[pyarrow]")).filter == expected
    ints = pd.Series([1, 2, 3], dtype="int32")
    by_numpy = plan.new_filter()
    by_numpy.insert_array(np.array([1, 2, 3], dtype="<i4"))
    assert _partials.partial(spec, ints).filter == by_numpy


def test_plan_resolution(plan):
    assert _partials.resolve_plan(plan, None, None, lambda: 0) is plan
    assert _partials.resolve_plan(None, "count", 0.01, lambda: 5000) == plan
    assert _partials.resolve_plan(None, 5000, 0.01, lambda: 0) == plan
    for bad in [(plan, 10, None), (None, None, 0.01), (None, 10, None)]:
        with pytest.raises(ValueError):
            _partials.resolve_plan(*bad, lambda: 0)
    with pytest.raises(TypeError):
        _partials.resolve_plan(None, "all", 0.01, lambda: 0)
    with pytest.raises(ValueError):
        _partials.tree([1, 2], 1, sum)
