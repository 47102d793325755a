"""Group bootstrap, rank ranges, tie bands and the test of group-mean differences; the coverage of the group-mean
interval checked by simulation (rank coverage: test_honest_simulation.py)."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from leaderboard.analysis.aggregate import bootstrap_means, percentile_ci
from leaderboard.analysis.effects import spread
from leaderboard.analysis.ranks import (
    GroupBootstrap,
    beat_sizes,
    best_among,
    best_set,
    group_difference_pvalues,
    group_differences,
    rank_ranges,
    tie_bands,
)


def test_rank_ranges_count_the_significantly_better_and_worse():
    means = np.array([0.50, 0.49, 0.30])
    p = np.array([[1.0, 0.40, 0.001], [0.40, 1.0, 0.01], [0.001, 0.01, 1.0]])
    np.testing.assert_array_equal(rank_ranges(means, p, 0.05), [[1, 2], [1, 2], [3, 3]])
    np.testing.assert_array_equal(rank_ranges(means, p, 0.005), [[1, 2], [1, 3], [2, 3]])


def test_tie_bands_follow_the_leaders_pairwise_decisions():
    # 0 leads band 1 and is not told apart from 1 or 2; 3 differs from 0, so it leads band 2 and takes 4
    means = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    p = np.full((5, 5), 0.001)
    np.fill_diagonal(p, 1.0)
    for a, b in ((0, 1), (0, 2), (3, 4), (2, 3)):
        p[a, b] = p[b, a] = 0.5
    np.testing.assert_array_equal(tie_bands(means, p, 0.05), [1, 1, 1, 2, 2])
    assert tie_bands([], np.zeros((0, 0)), 0.05).size == 0


def test_group_difference_test_of_one_dataset_is_scipys_paired_t_test():
    rng = np.random.default_rng(5)
    scores = rng.random((3, 40))
    diff, sd = spread(scores)
    p = group_difference_pvalues([diff], [sd**2], [40], [1.0])
    for a, b in ((0, 1), (0, 2), (1, 2)):
        assert p[a, b] == pytest.approx(scipy_stats.ttest_rel(scores[a], scores[b]).pvalue, rel=1e-9)
    assert np.all(np.diag(p) == 1.0)


def test_group_difference_test_uses_welch_satterthwaite_degrees_of_freedom():
    rng = np.random.default_rng(6)
    sets = [rng.random((2, n)) for n in (12, 300)]
    weights = [0.5, 0.5]
    spreads = [spread(scores) for scores in sets]
    p = group_difference_pvalues([d for d, _ in spreads], [sd**2 for _, sd in spreads], [12, 300], weights)
    parts = [w * w * np.var(s[0] - s[1], ddof=1) / s.shape[1] for w, s in zip(weights, sets, strict=True)]
    diff = sum(w * (s[0].mean() - s[1].mean()) for w, s in zip(weights, sets, strict=True))
    df = sum(parts) ** 2 / sum(v * v / (s.shape[1] - 1) for v, s in zip(parts, sets, strict=True))
    expected = 2 * scipy_stats.t.sf(abs(diff) / np.sqrt(sum(parts)), df)
    assert p[0, 1] == pytest.approx(expected, rel=1e-9)


def test_group_differences_row_block_by_row_block_are_the_whole_matrices_sums_to_the_last_bit(monkeypatch):
    """The pooled sums run over blocks of rows (ranks._BLOCK_ELEMENTS): blocks of 7 rows of 23 models, the last one
    short, give every element the whole-matrix formulas' value in the datasets' order, bit for bit."""
    import leaderboard.analysis.ranks as ranks

    rng = np.random.default_rng(8)
    sets = [rng.random((23, n)) for n in (5, 40, 2)]
    weights = [0.2, 0.5, 0.3]
    spreads = [spread(scores) for scores in sets]
    diffs, variances, queries = [d for d, _ in spreads], [sd**2 for _, sd in spreads], [s.shape[1] for s in sets]
    total = variance = df_terms = 0.0
    for d, v, n, w in zip(diffs, variances, queries, weights, strict=True):
        total = total + d * w
        part = v * (w * w) / n
        variance, df_terms = variance + part, df_terms + part * part / (n - 1)
    df = np.where(df_terms > 0, variance * variance / np.where(df_terms > 0, df_terms, 1.0), 1.0)
    monkeypatch.setattr(ranks, "_BLOCK_ELEMENTS", 7 * 23)
    got = group_differences(diffs, variances, queries, weights)
    for value, expected in zip(got, (total, variance, df), strict=True):
        assert np.array_equal(value, expected)
    monkeypatch.setattr(ranks, "_BLOCK_ELEMENTS", 2**14)  # one block
    assert all(np.array_equal(a, b) for a, b in zip(group_differences(diffs, variances, queries, weights), got,
                                                    strict=True))
    with pytest.raises(ValueError, match="at least one dataset"):
        group_differences([], [], [], [])


@pytest.mark.parametrize("scalar_df", [True, False])
def test_best_set_and_the_pages_sets_apply_one_rule_where_p_is_the_level_to_the_last_bit(scalar_df):
    """best_set (the build's ★ and bold) and best_among(beat_sizes) (the home page's sets for any view) keep a model
    exactly when no one-sided p against it is below alpha / (models - 1), the p from scipy. Model 0 leads model 1 by
    t standard errors, t within 20 units in the last place of the level's critical value; at 28 models, alpha 0.01
    and 29 df, p is alpha / 27 to the last bit and alpha / p rounds to 27.000000000000004, whose ceiling once left
    the model out of the page's set but not of the build's."""
    at_the_level = 0
    for m, alpha, df in [(28, 0.01, 29), (3, 0.05, 9), (5, 0.1, 99), (40, 0.05, 29), (17, 0.025, 49)]:
        level = alpha / (m - 1)
        critical = scipy_stats.t.isf(level, df)
        for t in critical + np.arange(-20, 21) * np.spacing(critical):
            diff = np.zeros((m, m))
            diff[0, 1], diff[1, 0] = t, -t
            se, dfs = np.ones((m, m)), (df if scalar_df else np.full((m, m), float(df)))
            p = scipy_stats.t.sf(t, df)
            at_the_level += p == level
            keep = best_set(np.zeros(m), diff, se, dfs, alpha)
            assert keep[1] == (p >= level) and keep[0] and keep[2:].all(), (m, alpha, t)
            assert best_among(beat_sizes(diff, se, dfs, alpha), range(m)).tolist() == keep.tolist(), (m, alpha, t)
    assert at_the_level  # the boundary itself was met


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


def _coverage(replicates: int, resamples: int) -> float:
    """Share of replicates whose 95% group-mean interval holds the true group mean, for 4 models on 3 datasets of
    different sizes and weights."""
    rng = np.random.default_rng(2026)
    true = np.array([[0.50, 0.52, 0.48, 0.40], [0.30, 0.28, 0.36, 0.20], [0.70, 0.69, 0.71, 0.60]])
    sizes, weights = (150, 300, 500), (0.5, 0.25, 0.25)
    group_true = np.average(true, axis=0, weights=weights)
    covered = 0
    for _ in range(replicates):
        group = GroupBootstrap(4, resamples, ["a", "b", "c"])
        for k, n in enumerate(sizes):
            query = rng.beta(2, 2, n)  # query difficulty shared by the models (paired data)
            scores = np.clip(true[k][:, None] + 0.25 * (query - 0.5) + rng.normal(0, 0.2, (4, n)), -1, 2)
            group.add([0, 1, 2, 3], weights[k], "abc"[k], bootstrap_means(scores, resamples, int(rng.integers(1 << 30))))
        ci = percentile_ci(group.boot)
        covered += np.count_nonzero((ci[:, 0] <= group_true) & (group_true <= ci[:, 1]))
    return covered / (4 * replicates)


@pytest.mark.slow
def test_group_interval_coverage_is_nominal_by_simulation():
    assert 0.93 <= _coverage(replicates=400, resamples=500) <= 0.97


def test_a_groups_own_pvalues_from_the_upper_triangle_are_the_whole_matrixs_to_the_last_bit():
    from leaderboard.analysis.ranks import difference_pvalues, symmetric_difference_pvalues

    rng = np.random.default_rng(9)
    sets = [rng.random((30, n)) for n in (4, 60)]
    spreads = [spread(scores) for scores in sets]
    total, variance, df = group_differences([d for d, _ in spreads], [sd**2 for _, sd in spreads], [4, 60],
                                            [0.4, 0.6])
    variance[3, 7] = variance[7, 3] = 0.0  # a certain shift
    assert np.array_equal(symmetric_difference_pvalues(total, variance, df), difference_pvalues(total, variance, df))
