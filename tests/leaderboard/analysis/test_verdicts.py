"""The interval beside a corrected verdict excludes 0 exactly when the corrected test rejects; shown p-values keep
their side of alpha; the random-effects pooling equals statsmodels' meta-analysis."""

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.meta_analysis import combine_effects
from statsmodels.stats.multitest import multipletests

from leaderboard.analysis import meta, stats
from leaderboard.analysis.effects import spread
from leaderboard.analysis.verdicts import pvalue_text, shown_pvalue, t_pvalue, verdict_interval, verdict_words

ALPHA = 0.05


def _board(rng, models=9, queries=40):
    """Models whose true means are spread so that some pairs differ and some do not."""
    difficulty = rng.random(queries)
    shift = np.linspace(0.0, 0.25, models)[:, None]
    return np.clip(difficulty + shift + rng.normal(0, 0.25, (models, queries)), 0, 1)


@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_the_verdict_interval_excludes_zero_exactly_when_the_corrected_p_is_below_alpha(correction):
    rng = np.random.default_rng(7)
    disagreements_with_the_plain_interval = 0
    for _ in range(30):
        scores = _board(rng)
        n = scores.shape[1]
        corrected = stats.pairwise_pvalues(scores, "t", correction)
        diff, sd = spread(scores)
        shown = shown_pvalue(corrected, ALPHA)
        low, high = verdict_interval(diff, sd / np.sqrt(n), n - 1, shown, ALPHA)
        off = ~np.eye(len(scores), dtype=bool)
        excludes = (low > 0) | (high < 0)
        assert np.array_equal(excludes[off], (shown < ALPHA)[off])
        assert np.array_equal(shown < ALPHA, corrected < ALPHA)
        plain = scipy_stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n)
        disagreements_with_the_plain_interval += int(np.sum(((np.abs(diff) > plain) != (corrected < ALPHA))[off]))
    if correction != "none":  # the check can fail: the uncorrected interval tells another story on some pairs
        assert disagreements_with_the_plain_interval > 0


def test_the_verdict_interval_is_bonferronis_at_holms_first_step_and_the_t_interval_uncorrected():
    rng = np.random.default_rng(3)
    scores = _board(rng, models=6)
    n = scores.shape[1]
    diff, sd = spread(scores)
    first, second = np.triu_indices(6, k=1)
    se = sd[first, second] / np.sqrt(n)
    raw = t_pvalue(diff[first, second], se, n - 1)
    assert np.allclose(raw, [scipy_stats.ttest_rel(scores[i], scores[j]).pvalue for i, j in zip(first, second, strict=False)])
    holm = multipletests(raw, method="holm")[1]
    k = int(np.argmin(raw))  # Holm's first step: the level is alpha / pairs
    low, high = verdict_interval(diff[first, second][k], se[k], n - 1, holm[k], ALPHA)
    half = scipy_stats.t.ppf(1 - ALPHA / first.size / 2, n - 1) * se[k]
    assert np.isclose(low, diff[first, second][k] - half) and np.isclose(high, diff[first, second][k] + half)
    low, high = verdict_interval(diff[first, second], se, n - 1, raw, ALPHA)  # no correction: the 95% t-interval
    half = scipy_stats.t.ppf(0.975, n - 1) * se
    assert np.allclose(high - low, 2 * half)


def test_shown_pvalues_keep_their_side_of_alpha_and_small_ones_their_digits():
    p = np.array([0.04996, 0.05, 0.05004, 0.000123, 3.456e-7, 0.0, 1.0, 0.99996])
    shown = shown_pvalue(p, ALPHA)
    assert np.array_equal(shown < ALPHA, p < ALPHA)
    assert shown[3] == 0.0001 and shown[4] == 3.45e-7 and shown[5] == 0.0 and shown[7] == 1.0
    assert pvalue_text(0.0499, ALPHA) == "0.0499" and pvalue_text(0.0501, ALPHA) == "0.0501"


def _pooled_interval(y, v, oracle, alpha):
    """The hull of the modified Hartung-Knapp interval (statsmodels' Hartung-Knapp variance floored at the plain
    random-effects one: q >= 1) and scipy's t-interval of the unweighted mean of y."""
    k = len(y)
    se = np.sqrt(max(oracle.var_hksj_re, 1 / np.sum(1 / (v + oracle.tau2))))
    t = scipy_stats.t.isf(alpha / 2, k - 1)
    plain = scipy_stats.ttest_1samp(y, 0.0).confidence_interval(1 - alpha)
    return (min(oracle.mean_effect_re - t * se, plain.low), max(oracle.mean_effect_re + t * se, plain.high))


def test_pooling_equals_statsmodels_paule_mandel_with_hartung_knapp():
    rng = np.random.default_rng(11)
    for k in (2, 3, 5, 12, 30):
        y = rng.normal(0.02, 0.03, k)
        v = rng.uniform(0.5, 3.0, k) * 1e-4
        pooled = meta.pool(y, v)
        oracle = combine_effects(y, v, method_re="pm", use_t=True)
        assert np.isclose(pooled.tau ** 2, oracle.tau2, rtol=1e-6, atol=1e-12)
        assert np.isclose(pooled.mean, oracle.mean_effect_re, rtol=1e-9)
        assert np.allclose(pooled.ci, _pooled_interval(y, v, oracle, 0.05), rtol=1e-6)
        if k >= 3:  # the prediction interval, from its formula (Higgins, Thompson & Spiegelhalter 2009)
            variance = max(1 / np.sum(1 / (v + oracle.tau2)), oracle.var_hksj_re)
            # tau at its 80% upper Q-profile bound: the generalised Q at that tau^2 is chi^2_{k-1}'s 20% quantile
            upper = _q_profile_bound(y, v, scipy_stats.chi2.ppf(0.2, k - 1))
            half = scipy_stats.t.ppf(0.975, k - 2) * np.sqrt(upper + variance)
            assert np.allclose(pooled.prediction, (oracle.mean_effect_re - half, oracle.mean_effect_re + half))
            assert np.isclose(pooled.p_beats, scipy_stats.t.cdf(oracle.mean_effect_re / np.sqrt(upper + variance),
                                                                 k - 2))
        else:
            assert pooled.prediction is None and pooled.p_beats is None


def _q_profile_bound(y, v, target):
    """tau^2 where Q(tau^2) = target, by bisection on the formula (0 where Q(0) is below it)."""
    def q(t2):
        w = 1 / (v + t2)
        mu = np.sum(w * y) / np.sum(w)
        return np.sum(w * (y - mu) ** 2)
    if q(0.0) <= target:
        return 0.0
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if q(middle) > target else (low, middle)
    return (low + high) / 2


def test_pooling_one_dataset_and_homogeneous_datasets():
    one = meta.pool([0.03], [1e-4])
    assert one.mean == 0.03 and one.ci is None and one.prediction is None
    same = meta.pool([0.01, 0.0101, 0.0099, 0.01], [1e-4] * 4)  # far less spread than their errors: tau = 0
    assert same.tau == 0.0


def test_datasets_of_one_parent_are_one_unit():
    y, v = meta.unit_differences([0.1, 0.2, 0.3, 0.5], [1.0, 1.0, 2.0, 4.0],
                                 ["beir/a", "beir/cqa", "beir/cqa", "beir/b"])
    assert np.allclose(y, [0.1, 0.25, 0.5]) and np.allclose(v, [1.0, 0.75, 4.0])


def test_pairs_not_found_different_get_bonferronis_simultaneous_interval_and_equivalence_reads_it():
    rng = np.random.default_rng(5)
    scores = _board(rng, models=6, queries=30)
    n = scores.shape[1]
    corrected = stats.pairwise_pvalues(scores, "t", "holm")
    diff, sd = spread(scores)
    low, high = verdict_interval(diff, sd / np.sqrt(n), n - 1, corrected, ALPHA, 15)
    kept = (corrected >= ALPHA) & ~np.eye(6, dtype=bool)
    assert kept.any()
    half = scipy_stats.t.isf(ALPHA / 15 / 2, n - 1) * sd / np.sqrt(n)
    assert np.allclose((high - low)[kept], 2 * half[kept])
    assert np.all((low[kept] <= 0) & (high[kept] >= 0))
    words = verdict_words(diff, low, high, corrected, ALPHA, margin=0.5)  # a wide margin: all kept are equivalent
    assert set(words[kept]) == {"equivalent"}
    words = verdict_words(diff, low, high, corrected, ALPHA, margin=1e-6)
    assert set(words[kept]) == {"undetermined"}
    assert set(words[(corrected < ALPHA) & (diff > 0)]) <= {"better"}


def test_the_pooled_interval_is_never_narrower_than_the_modified_hartung_knapp_or_the_unweighted_one():
    # tau estimated 0 with q < 1: the plain Hartung-Knapp interval would be narrower than the fixed-effect one
    y = np.array([0.0100, 0.0102, 0.0098, 0.0101, 0.0099])
    v = np.full(5, 1e-6)
    fit = meta.pool(y, v)
    oracle = combine_effects(y, v, method_re="pm", use_t=True)
    assert fit.tau == 0.0 and oracle.var_hksj_re < 1 / np.sum(1 / v)
    hk = oracle.conf_int(alpha=0.05, use_t=True)[3]
    assert fit.ci[1] - fit.ci[0] > hk[1] - hk[0]
    # one big dataset pulls the weighted mean; the unweighted interval widens the hull towards the others
    y = np.array([0.00, 0.03, 0.031, 0.029, 0.032, 0.028])
    v = np.array([1e-8, 4e-4, 4e-4, 4e-4, 4e-4, 4e-4])
    fit = meta.pool(y, v)
    assert fit.ci[1] >= scipy_stats.ttest_1samp(y, 0.0).confidence_interval(0.95).high - 1e-12


def test_pooled_equivalence_is_the_pooled_interval_at_bonferronis_level_within_the_margin():
    rng = np.random.default_rng(12)
    k = meta.MIN_EQUIVALENCE_UNITS
    y = rng.normal(0.002, 0.001, k)
    v = rng.uniform(0.5, 3.0, k) * 1e-6
    fit = meta.pool(y, v)
    oracle = combine_effects(y, v, method_re="pm", use_t=True)
    for pairs in (1, 15):
        low, high, equivalent = meta.equivalence(fit, ALPHA, pairs, margin=0.01)
        assert np.allclose((low, high), _pooled_interval(y, v, oracle, ALPHA / pairs), rtol=1e-6)
        assert equivalent == (low > -0.01 and high < 0.01)
    assert meta.equivalence(fit, ALPHA, 15, margin=0.01)[2]  # a difference of 0.2 points, well measured
    assert not meta.equivalence(fit, ALPHA, 15, margin=abs(fit.mean))[2]  # the interval holds the pooled mean
    wide = meta.equivalence(fit, ALPHA, 15, 0.01)
    assert wide[1] - wide[0] > fit.ci[1] - fit.ci[0]  # Bonferroni's level widens the 95% interval
    assert meta.equivalence(meta.pool([0.001], [1e-6]), ALPHA, 1, 0.01) is None  # one unit: nothing pooled
    assert meta.equivalence_withheld(k) is None
    # one unit fewer: the same well-measured difference is withheld, and says why
    fewer = meta.pool(y[1:], v[1:])
    low, high, equivalent = meta.equivalence(fewer, ALPHA, 15, 0.01)
    assert low > -0.01 and high < 0.01 and not equivalent
    assert meta.equivalence_withheld(k - 1).startswith(f"withheld: {k - 1} dataset units, fewer than the {k}")
