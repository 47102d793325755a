"""Group bootstrap, rank intervals and bands; the coverage of the group-mean interval checked by simulation."""

import numpy as np

from leaderboard.analysis.aggregate import bootstrap_means, percentile_ci
from leaderboard.analysis.ranks import GroupBootstrap, rank_bands, rank_intervals


def test_rank_intervals_of_clearly_separated_models_are_single_ranks():
    boot = np.array([[0.9, 0.5, 0.1]] * 50, dtype=np.float32) + np.float32(0.001) * np.arange(50)[:, None]
    np.testing.assert_array_equal(rank_intervals(boot), [[1, 1], [2, 2], [3, 3]])


def test_rank_intervals_are_the_quantiles_of_each_models_rank():
    rng = np.random.default_rng(7)
    boot = (np.array([0.50, 0.49, 0.45, 0.30]) + rng.normal(0, 0.02, (4000, 4))).astype(np.float32)
    ranks = 1 + np.argsort(np.argsort(-boot, axis=1), axis=1)  # rank of each model in each resample
    expected = np.stack([np.percentile(ranks, 2.5, axis=0, method="lower"),
                         np.percentile(ranks, 97.5, axis=0, method="higher")], axis=1)
    got = rank_intervals(boot)
    np.testing.assert_array_equal(got, expected)
    assert got[0, 0] == 1 and got[1, 0] == 1 and got[3].tolist() == [4, 4]


def test_bands_group_models_whose_rank_interval_reaches_the_leaders():
    means = np.array([0.30, 0.50, 0.49, 0.45, 0.10])
    intervals = np.array([[4, 4], [1, 2], [1, 3], [2, 3], [5, 5]])
    np.testing.assert_array_equal(rank_bands(means, intervals), [2, 1, 1, 1, 3])
    assert rank_bands([], np.zeros((0, 2))).size == 0


def test_resampling_datasets_widens_the_interval_when_datasets_disagree():
    rng = np.random.default_rng(3)
    datasets = [rng.normal(mean, 0.2, (2, 400)) for mean in (0.2, 0.8, 0.3, 0.9)]
    widths = []
    for resample in (False, True):
        group = GroupBootstrap(2, 2000, ["a", "b", "c", "d"], resample, seed=0)
        for unit, scores in zip("abcd", datasets, strict=True):
            group.add([0, 1], 0.25, unit, bootstrap_means(scores, 2000, 0))
        low, high = percentile_ci(group.boot)[0]
        widths.append(high - low)
        assert low < np.mean([s[0].mean() for s in datasets]) < high
    assert widths[1] > 5 * widths[0]


def _coverage(replicates: int, resamples: int) -> tuple[float, float]:
    """Share of replicates whose 95% group-mean interval holds the true group mean, and whose rank interval
    holds the true rank, for 4 models on 3 datasets of different sizes and weights."""
    rng = np.random.default_rng(2026)
    true = np.array([[0.50, 0.52, 0.48, 0.40], [0.30, 0.28, 0.36, 0.20], [0.70, 0.69, 0.71, 0.60]])
    sizes, weights = (150, 300, 500), (0.5, 0.25, 0.25)
    group_true = np.average(true, axis=0, weights=weights)
    true_rank = 1 + np.argsort(np.argsort(-group_true))
    covered = ranked = 0
    for _ in range(replicates):
        group = GroupBootstrap(4, resamples, ["a", "b", "c"])
        for k, n in enumerate(sizes):
            query = rng.beta(2, 2, n)  # query difficulty shared by the models (paired data)
            scores = np.clip(true[k][:, None] + 0.25 * (query - 0.5) + rng.normal(0, 0.2, (4, n)), -1, 2)
            group.add([0, 1, 2, 3], weights[k], "abc"[k], bootstrap_means(scores, resamples, int(rng.integers(1 << 30))))
        ci = percentile_ci(group.boot)
        covered += np.count_nonzero((ci[:, 0] <= group_true) & (group_true <= ci[:, 1]))
        intervals = rank_intervals(group.boot)
        ranked += np.count_nonzero((intervals[:, 0] <= true_rank) & (true_rank <= intervals[:, 1]))
    return covered / (4 * replicates), ranked / (4 * replicates)


def test_group_interval_coverage_is_nominal_by_simulation():
    mean_coverage, rank_coverage = _coverage(replicates=400, resamples=500)
    assert 0.93 <= mean_coverage <= 0.97
    assert rank_coverage >= 0.93  # rank intervals are conservative: ranks move only when means cross


def test_rank_intervals_break_ties_by_column_as_a_stable_sort_does():
    rng = np.random.default_rng(11)
    for trial in range(60):
        resamples, models = int(rng.integers(1, 400)), int(rng.integers(1, 12))
        boot = (rng.integers(0, 3, (resamples, models)) / 4).astype(np.float32)  # many ties
        boot[rng.random(boot.shape) < 0.1] = -0.0  # ties with 0.0
        if trial % 3 == 0:
            boot -= np.float32(0.3)  # negative means order as numbers too
        order = np.argsort(-boot, axis=1, kind="stable")
        ranks = np.empty_like(order)
        np.put_along_axis(ranks, order, np.arange(1, models + 1)[None, :], axis=1)
        confidence = (0.95, 0.5, 0.8)[trial % 3]
        tail = 100 * (1 - confidence) / 2
        expected = np.stack([np.percentile(ranks, tail, axis=0, method="lower"),
                             np.percentile(ranks, 100 - tail, axis=0, method="higher")], axis=1)
        np.testing.assert_array_equal(rank_intervals(boot, confidence), expected)
