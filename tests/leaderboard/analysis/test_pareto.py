"""The Pareto front (leaderboard/analysis/pareto.py), against their definitions written out."""

import math

from hypothesis import given
from hypothesis import strategies as st

from leaderboard.analysis.pareto import latency_ms, pareto_front


def _dominated(i: int, means, costs) -> bool:
    """The definition: some j costs no more and scores no less than i, and is strictly better in one."""
    return any(costs[j] is not None and costs[j] <= costs[i] and means[j] >= means[i]
               and (costs[j] < costs[i] or means[j] > means[i]) for j in range(len(means)) if j != i)


def test_the_front_of_a_small_case():
    # (mean, cost): c is dearer and worse than a; d equals b exactly (neither dominates); e has no cost
    means = [0.52, 0.50, 0.49, 0.50, 0.60]
    costs = [100, 20, 300, 20, None]
    assert pareto_front(means, costs).tolist() == [True, True, False, True, False]


def test_a_model_without_a_cost_dominates_nothing():
    assert pareto_front([0.9, 0.1], [math.nan, 5]).tolist() == [False, True]


@given(st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(1, 5))), min_size=1, max_size=9))
def test_the_front_is_exactly_the_undominated(points):
    means = [mean / 5 for mean, _ in points]
    costs = [cost for _, cost in points]
    expected = [cost is not None and not _dominated(i, means, costs) for i, cost in enumerate(costs)]
    assert pareto_front(means, costs).tolist() == expected


def test_latency_is_the_median_only_when_every_dataset_has_it():
    assert latency_ms([100.0, 50.0, 400.0]) == 10.0  # 1000 / rate: 10, 20, 2.5 ms; the median
    assert latency_ms([100.0, None]) is None
    assert latency_ms([100.0, 0.0]) is None
    assert latency_ms([]) is None
