"""Multiple-testing corrections, effect sizes and power against tests/conformance/stats_oracle.json (statsmodels,
scipy and published worked examples) and against statsmodels directly."""

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

from leaderboard.analysis import stats
from leaderboard.analysis.effects import (
    dataset_effects,
    meaningful_threshold,
    minimum_detectable_effect,
    pair_effects,
    paired_effect,
    separability,
    t_power,
)

ORACLE = json.loads((Path(__file__).parents[2] / "conformance" / "stats_oracle.json").read_text())
TOL = ORACLE["tolerance"]


@pytest.mark.parametrize("case", sorted(ORACLE["corrections"]))
def test_corrections_match_statsmodels_fixture(case):
    data = ORACLE["corrections"][case]
    p = np.array(data["pvalues"])
    np.testing.assert_allclose(stats.benjamini_hochberg(p), data["bh"], rtol=0, atol=TOL)
    np.testing.assert_allclose(stats.holm(p), data["holm"], rtol=0, atol=TOL)
    assert int((stats.benjamini_hochberg(p) < 0.05).sum()) == data["bh_rejected_at_0.05"]
    assert int((stats.holm(p) < 0.05).sum()) == data["holm_rejected_at_0.05"]


def test_benjamini_hochberg_1995_worked_example():
    p = ORACLE["corrections"]["bh_1995_example"]["pvalues"]
    assert int((stats.benjamini_hochberg(p) <= 0.05).sum()) == ORACLE["published"]["bh_1995_rejected_bh"]
    assert int((stats.holm(p) <= 0.05).sum()) == ORACLE["published"]["bh_1995_rejected_holm"]


@given(st.lists(st.floats(0, 1), min_size=1, max_size=60))
@settings(max_examples=200, deadline=None)
def test_benjamini_hochberg_matches_statsmodels(pvalues):
    expected = multipletests(pvalues, method="fdr_bh")[1]
    np.testing.assert_allclose(stats.benjamini_hochberg(pvalues), expected, rtol=1e-12, atol=1e-15)


def test_holm_is_the_default_and_bh_never_stricter_than_holm():
    # ranks and tie bands need a family-wise guarantee (leaderboard/analysis/ranks.py), so Holm is the default
    p = np.random.default_rng(1).random(300) ** 4
    assert stats.TestSettings().correction == "holm"
    assert np.all(stats.benjamini_hochberg(p) <= stats.holm(p) + 1e-15)
    assert "Holm–Bonferroni" in stats.TestSettings().describe()


@pytest.mark.parametrize("index", range(len(ORACLE["effects"])))
def test_paired_effect_matches_scipy_fixture(index):
    case = ORACLE["effects"][index]
    diff, low, high, dz = paired_effect(case["a"], case["b"])
    assert diff == pytest.approx(case["mean_difference"], abs=TOL)
    assert low == pytest.approx(case["ci_low"], abs=TOL)
    assert high == pytest.approx(case["ci_high"], abs=TOL)
    assert dz == pytest.approx(case["dz"], abs=TOL)
    # The interval is the t-test's: it excludes 0 exactly when the uncorrected p-value is below 0.05.
    assert (low > 0 or high < 0) == (stats.paired_t_test(case["a"], case["b"]) < 0.05)


def test_pair_effects_matrix_agrees_with_every_single_pair():
    rng = np.random.default_rng(4)
    scores = rng.random((5, 80))
    scores[3] = scores[1]  # identical: difference 0, d_z 0
    scores[4] = scores[0] + 0.1  # constant shift: zero SD, infinite d_z
    effects = pair_effects(scores)
    for i in range(5):
        for j in range(5):
            expected = paired_effect(scores[i], scores[j])
            got = (effects.diff[i, j], effects.low[i, j], effects.high[i, j], effects.dz[i, j])
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    assert effects.dz[1, 3] == 0.0 and effects.sd[1, 3] == 0.0
    assert effects.dz[4, 0] == np.inf and effects.dz[0, 4] == -np.inf
    np.testing.assert_allclose(effects.diff, -effects.diff.T)


@pytest.mark.parametrize("case", ORACLE["minimum_detectable_effect"], ids=lambda c: f"n{c['n']}-a{c['alpha']}")
def test_minimum_detectable_effect_matches_statsmodels_fixture(case):
    # statsmodels' solve_power stops at about 1e-5 relative; its power function is exact to 1e-9 (next test)
    dz = minimum_detectable_effect(case["n"], case["alpha"])
    assert dz == pytest.approx(case["dz"], rel=1e-4)
    assert TTestPower().power(dz, case["n"], case["alpha"], alternative="two-sided") == pytest.approx(0.8, abs=1e-9)


@pytest.mark.parametrize("case", ORACLE["power"], ids=lambda c: f"n{c['n']}-d{c['dz']}")
def test_power_matches_statsmodels_fixture(case):
    assert t_power(case["dz"], case["n"], case["alpha"]) == pytest.approx(case["power"], abs=1e-9)


def test_power_reproduces_the_gpower_worked_example():
    example = ORACLE["published"]["gpower_paired_t"]
    n, d, alpha = example["n"], example["dz"], example["alpha"]
    assert t_power(d, n, alpha) == pytest.approx(example["actual_power"], abs=example["actual_power_tolerance"])
    assert t_power(d, n - 1, alpha) < example["power"] <= t_power(d, n, alpha)  # 34 is the smallest n
    assert minimum_detectable_effect(n, alpha) < d < minimum_detectable_effect(n - 1, alpha)


@pytest.mark.parametrize("n", [15, 200, 3000])
def test_minimum_detectable_effect_against_live_statsmodels(n):
    expected = TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8, alternative="two-sided")
    assert minimum_detectable_effect(n, 0.05) == pytest.approx(expected, rel=1e-4)
    assert minimum_detectable_effect(n, 0.05, "randomization") == minimum_detectable_effect(n, 0.05)
    # Wilcoxon: the t-test's power at n * 3/pi queries (asymptotic relative efficiency)
    assert minimum_detectable_effect(n, 0.05, "wilcoxon") == pytest.approx(
        minimum_detectable_effect(n * 3 / np.pi, 0.05), rel=1e-9)


def test_separability_counts_pairs_adjacent_pairs_and_meaningful_differences():
    means = np.array([0.50, 0.49, 0.40, 0.20])  # ranked best first
    pvalues = np.ones((4, 4))
    for i, j in ((0, 2), (0, 3), (1, 3), (2, 3)):
        pvalues[i, j] = pvalues[j, i] = 0.001
    scores = means[:, None] + np.random.default_rng(0).normal(0, 0.1, (4, 400))
    scores -= scores.mean(axis=1, keepdims=True) - means[:, None]
    effects = pair_effects(scores)
    summary = separability(means, effects, pvalues, 400, 0.05, "t")
    assert (summary.pairs, summary.separable, summary.adjacent, summary.adjacent_separable) == (6, 4, 3, 1)
    assert summary.threshold == pytest.approx(0.05 * np.median(means)) == meaningful_threshold(means)
    assert summary.meaningful == 5  # all but 0.50 vs 0.49 differ by at least 0.05 * 0.445
    assert summary.separable_share == pytest.approx(4 / 6)
    assert summary.adjacent_share == pytest.approx(1 / 3)
    first, second = np.triu_indices(4, k=1)
    assert summary.typical_sd == pytest.approx(np.median(effects.sd[first, second]))
    assert summary.mde == pytest.approx(minimum_detectable_effect(400, 0.05) * summary.typical_sd)


def test_dataset_effects_are_the_baseline_column_and_the_separability_of_pair_effects_exactly():
    rng = np.random.default_rng(9)
    scores = rng.random((7, 60))
    scores[5] = scores[2]  # identical: d_z 0
    scores[6] = scores[0] + 0.05  # constant shift: infinite d_z
    scores = scores[np.argsort(-scores.mean(axis=1), kind="stable")]
    pvalues = stats.pairwise_pvalues(scores, "t", "bh")
    full = pair_effects(scores)
    expected = separability(scores.mean(axis=1), full, pvalues, 60, 0.05, "t")
    for baseline in range(7):
        against, summary = dataset_effects(scores, baseline, pvalues, 0.05, "t")
        assert summary == expected
        for name in ("diff", "low", "high", "sd", "dz"):  # bit for bit: the site must not change
            assert np.array_equal(getattr(against, name), getattr(full, name)[:, baseline])
    assert dataset_effects(scores, None, pvalues, 0.05, "t") == (None, expected)
    one = scores[:, :1]
    against, summary = dataset_effects(one, 0, np.ones((7, 7)), 0.05, "t")
    assert np.isnan(against.low).all() and summary.separable == 0
