"""The group means' flags from the pairs Holm's steps can reach (analysis.group_robust.group_robustness) equal those
from every crossed p-value and both corrected matrices (exact_robustness, the straightforward computation): on
random small boards and on one seeded board of 120 models."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.analysis import stats
from leaderboard.analysis.group_robust import DatasetPart, crossed_tests, exact_robustness, group_robustness
from leaderboard.analysis.ranks import best_set, difference_pvalues, group_differences
from leaderboard.analysis.robust import cross_spread


def group_case(seed: int, models: int, datasets: int, queries: int, spread: float, width: float, ties: bool):
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.4, spread, models)
    parts, weights, dataset_means, dataset_terms = [], list(rng.dirichlet(np.ones(datasets))), [], []
    for k in range(datasets):
        n = queries + k
        values = np.clip(skill[:, None] + rng.normal(0, 0.1, (models, n)), 0, 1)
        if ties:  # whole rows equal: equal means, zero-variance differences
            values[1] = values[0]
            values = np.round(values, 1)
        high = np.minimum(values + rng.uniform(0, width, values.shape) * (rng.random(values.shape) < 0.5), 1)
        means = values.mean(axis=1)
        _, sd = cross_spread(values, values)
        terms = means[:, None] - means[None, :], np.square(sd)
        crossed = cross_spread(values, high)  # even where no bound differs: flags that all hold
        parts.append(DatasetPart(n, lambda block, out, terms=terms: (terms[0][block], terms[1][block]),
                                 lambda block, out, crossed=crossed: (crossed[0][block], np.square(crossed[1][block]))))
        dataset_means.append(means)
        dataset_terms.append(terms)
    own = group_differences([diff for diff, _ in dataset_terms], [variance for _, variance in dataset_terms],
                            [p.queries for p in parts], weights)
    means = sum(w * dataset_mean for w, dataset_mean in zip(weights, dataset_means, strict=True))
    return parts, weights, own, means


def both(case, correction: str, margin: float):
    parts, weights, own, means = case
    tests = stats.TestSettings(correction=correction)
    pvalues = stats.corrected_matrix(difference_pvalues(*own), correction)
    best = best_set(means, own[0], np.sqrt(own[1]), own[2], tests.alpha)
    crossed = crossed_tests(parts, weights, means.size)
    return (group_robustness(means, own, pvalues, best, crossed, tests, margin),
            exact_robustness(means, own, pvalues, best, crossed, tests, margin))


def assert_same(fast, exact):
    np.testing.assert_array_equal(fast.pairs, exact.pairs)
    np.testing.assert_array_equal(fast.best, exact.best)
    np.testing.assert_array_equal(fast.rank, exact.rank)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), models=st.integers(2, 12), datasets=st.integers(1, 3),
       queries=st.integers(2, 25), spread=st.sampled_from([0.0, 0.01, 0.05, 0.2]),
       width=st.sampled_from([0.0, 0.01, 0.1, 0.5]), ties=st.booleans(),
       correction=st.sampled_from(["holm", "none", "bh"]), margin=st.sampled_from([0.01, 0.05, 0.3]))
def test_fast_group_flags_equal_the_exact_ones_on_small_boards(seed, models, datasets, queries, spread, width, ties,
                                                                correction, margin):
    assert_same(*both(group_case(seed, models, datasets, queries, spread, width, ties), correction, margin))


def test_fast_group_flags_equal_the_exact_ones_on_a_board_of_120_models():
    fast, exact = both(group_case(43, 120, 4, 60, 0.03, 0.05, False), "holm", 0.01)
    assert_same(fast, exact)
    # the case decides something either way: some flags hold and some could flip
    assert fast.pairs.any() and not fast.pairs.all() and not fast.rank.all()
