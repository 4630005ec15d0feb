"""Plans state what they cost: memory at both sides beside bytes on the wire, memory caps,
the frontier of bytes against memory, and the limit that bent a plan."""

import math
import pickle

import pytest

import bloomwire


def theory_fpr(plan):
    """The false positive rate of the plan's filter (integer k, standard layout) from the
    theory's formula with the exact finite-m zero probability."""
    k = round(plan.k)
    assert k == plan.k
    p_zero = math.exp(plan.n * k * math.log1p(-1.0 / plan.m))
    return (1.0 - p_zero) ** k


def check_memory(plan):
    bits = (plan.m + 7) // 8
    assert plan.receiver_bytes == bits and plan.sender_bytes == bits
    assert plan.delta_sender_bytes == 2 * bits
    assert plan.counting_sender_bytes == plan.m + bits


@pytest.mark.parametrize("n, fpr", [(1_000_000, 0.01), (20_000, 0.001), (300_000, 2**-16)])
def test_every_frontier_plan_meets_the_target(n, fpr):
    frontier = bloomwire.frontier(n, fpr, churn=0.01)
    factors = [factor for factor, _ in frontier]
    assert factors[0] == 1 and factors[-1] is None
    least = frontier[0][1].m
    # The memory-optimal plan is the standard filter: about n ln(1/f) / ln(2)^2 bits.
    assert least == pytest.approx(n * math.log(1 / fpr) / math.log(2) ** 2, rel=0.03)
    for factor, plan in frontier:
        assert theory_fpr(plan) <= fpr * (1 + 1e-9)
        assert plan.fpr <= fpr
        check_memory(plan)
        if factor is not None:
            assert plan.m <= factor * least
        assert plan.delta["changed"] == 0.01
        assert plan.delta["worst_case_bytes"] < plan.worst_case_bytes
    for (_, a), (_, b) in zip(frontier, frontier[1:]):
        assert a.m <= b.m and a.worst_case_bytes >= b.worst_case_bytes


def test_the_frontier_of_a_million_keys_at_one_percent():
    frontier = bloomwire.frontier(1_000_000, 0.01, churn=0.01)
    assert [f for f, _ in frontier] == [1, 2, 4, None]
    assert [p.k for _, p in frontier] == [7, 2, 2, 1]
    least, most = frontier[0][1], frontier[-1][1]
    assert 0.83 < most.bytes / least.bytes < 0.85  # full frames 16% smaller
    assert 0.45 < most.delta["bytes"] / least.delta["bytes"] < 0.5  # deltas half the size
    assert 10 < most.receiver_bytes / least.receiver_bytes < 10.5  # for 10x the memory
    assert most.bent is None
    assert frontier[1][1].bent["limit"] == "max_memory"


@pytest.mark.parametrize("cap", [1_250_000, 2_000_000, 4_000_000])
def test_the_memory_cap_holds(cap):
    for plan in [bloomwire.plan_for_fpr(1_000_000, 0.01, max_memory=cap),
                 bloomwire.plan(1_000_000, 1_000_000, max_memory=cap)]:
        check_memory(plan)
        assert plan.receiver_bytes <= cap
        bent = plan.bent
        assert bent["limit"] == "max_memory" and bent["max_m"] == 8 * cap
        assert bent["m"] > 8 * cap and bent["receiver_bytes"] == (bent["m"] + 7) // 8
    target = bloomwire.plan_for_fpr(1_000_000, 0.01, max_memory=cap)
    assert theory_fpr(target) <= 0.01 * (1 + 1e-9)
    assert target.bent["worst_case_bytes"] < target.worst_case_bytes
    budget = bloomwire.plan(1_000_000, 1_000_000, max_memory=cap)
    assert budget.worst_case_bytes <= 1_000_000
    assert budget.bent["fpr"] < budget.fpr


def test_bits_per_element_cap_and_bad_caps():
    plan = bloomwire.plan_for_fpr(1_000_000, 0.01, max_bits_per_element=12.0)
    assert plan.m <= 12_000_000
    assert plan.bent["limit"] == "max_bits_per_element"
    for kwargs in [{"max_memory": 0}, {"max_bits_per_element": 1e-9}, {"churn": 0.0},
                   {"churn": 1.5}]:
        with pytest.raises(bloomwire.InvalidParameter):
            bloomwire.plan_for_fpr(1_000, 0.01, **kwargs)


def test_a_bent_plan_reports_its_limit():
    # 10^7 keys at 1%: the default receiver's 2^28 bits hold the plan to k = 2.
    plan = bloomwire.plan_for_fpr(10_000_000, 0.01)
    bent = plan.bent
    assert bent["limit"] == "max_m" and bent["max_m"] == 2**28
    assert bent["m"] > 2**28 and bent["k"] == 1
    assert bent["worst_case_bytes"] < plan.worst_case_bytes
    # This package's max_m, below the default, is named the same.
    plan = bloomwire.plan_for_fpr(1_000_000, 0.01, max_m=20_000_000)
    assert plan.bent["limit"] == "max_m" and plan.m <= 20_000_000
    plan = bloomwire.plan_for_fpr(1_000_000, 0.01, max_filter_bytes=1_500_000)
    assert plan.bent["limit"] == "max_filter_bytes"
    # At its optimum a plan says nothing, and reports no deltas without a churn.
    plan = bloomwire.plan_for_fpr(1_000_000, 0.01)
    assert plan.bent is None and plan.delta is None
    assert plan.receiver_bytes > 12_000_000  # the default plan's price: 99.5 bits a key


def test_memory_survives_pickling():
    plan = bloomwire.plan_for_fpr(10_000_000, 0.01, churn=0.01)
    back = pickle.loads(pickle.dumps(plan))
    assert back == plan
    check_memory(back)
    assert back.counting_sender_bytes == plan.counting_sender_bytes
    # The bent and delta figures are the optimizer's answer, not pickled.
    assert back.bent is None and back.delta is None
