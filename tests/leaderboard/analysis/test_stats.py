import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats as scipy_stats

from evaluator.errors import IrboardError, UnknownNameError
from leaderboard.analysis.stats import (
    TestSettings,
    bootstrap_ci,
    holm,
    paired_randomization_test,
    paired_t_test,
    paired_test,
    pairwise_pvalues,
    wilcoxon_test,
    wins_ties_losses,
)
from tests.conftest import CONFORMANCE

FIXTURE = CONFORMANCE / "significance.json"


@pytest.fixture(scope="module")
def oracle():
    return json.loads(FIXTURE.read_text())


def _pair_scores(oracle, pair):
    first, second = pair.split("_vs_")
    systems = oracle["systems_per_query_scores"]
    return np.array(systems[first]), np.array(systems[second])


# --- conformance with tests/conformance/shared/significance.json -----------------------------------------

PAIRS = ["A_vs_B", "A_vs_C", "B_vs_C"]


@pytest.mark.parametrize("pair", PAIRS)
def test_t_test_matches_scipy_fixture(oracle, pair):
    a, b = _pair_scores(oracle, pair)
    expected = oracle["pairs"][pair]["ttest_rel"]["pvalue"]
    assert paired_t_test(a, b) == pytest.approx(expected, abs=1e-9)
    assert paired_test(a, b, method="t") == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("pair", PAIRS)
def test_wilcoxon_matches_scipy_fixture(oracle, pair):
    a, b = _pair_scores(oracle, pair)
    case = oracle["pairs"][pair]
    assert wilcoxon_test(a, b) == pytest.approx(case["wilcoxon_default"]["pvalue"], abs=1e-9)
    assert paired_test(a, b, method="wilcoxon") == pytest.approx(case["wilcoxon_default"]["pvalue"], abs=1e-9)
    approx = case["wilcoxon_normal_approx"]["pvalue"]
    assert wilcoxon_test(a, b, method="approx") == pytest.approx(approx, abs=1e-9)


@pytest.mark.parametrize("pair", PAIRS)
def test_monte_carlo_randomization_within_fixture_tolerance(oracle, pair):
    a, b = _pair_scores(oracle, pair)
    case = oracle["pairs"][pair]["randomization_sign_flip"]
    p = paired_randomization_test(a, b, resamples=case["R"], seed=0, mid_p=False)  # the fixture's classical p
    assert abs(p - case["p_plus_one"]) <= case["tolerance_for_other_implementations"]
    # Monte Carlo form: p = (c + 1) / (R + 1) for an integer count c.
    count = p * (case["R"] + 1) - 1
    assert count == pytest.approx(round(count), abs=1e-6)


def test_small_case_exact_values(oracle):
    case = oracle["small_exact_case"]
    x, y = np.array(case["x"]), np.array(case["y"])
    exact = case["randomization_exact"]
    p = paired_randomization_test(x, y, mid_p=False)  # 2**12 <= 100,000: all assignments enumerated
    assert p == pytest.approx(exact["p"], abs=1e-12)
    assert p == exact["count_ge_observed"] / exact["n_assignments"]
    # the site's test is the mid-p one: flips as extreme as the observed count half
    above, equal = _flip_counts([Fraction(str(u)) - Fraction(str(v)) for u, v in zip(x, y, strict=True)])
    assert paired_test(x, y, method="randomization") == pytest.approx((above + equal / 2) / 2**x.size, abs=1e-12)
    assert paired_t_test(x, y) == pytest.approx(case["ttest_rel_pvalue"], abs=1e-9)
    assert wilcoxon_test(x, y) == pytest.approx(case["wilcoxon_default_pvalue"], abs=1e-9)


@pytest.mark.parametrize("system", ["A", "B"])
def test_bootstrap_intervals_match_fixture(oracle, system):
    x = np.array(oracle["systems_per_query_scores"][system])
    entry = oracle["bootstrap_ci_of_mean"][system]
    percentile = entry["percentile_bootstrap_95"]
    low, high = bootstrap_ci(x, "percentile", resamples=percentile["B"], seed=percentile["seed"])
    assert low == pytest.approx(percentile["low"], abs=percentile["tolerance"])
    assert high == pytest.approx(percentile["high"], abs=percentile["tolerance"])
    bca = entry["scipy_bootstrap_BCa_95"]
    # The BCa entry states no seed of its own; it was drawn with the percentile entry's seed.
    low, high = bootstrap_ci(x, "bca", resamples=bca["n_resamples"], seed=percentile["seed"])
    assert low == pytest.approx(bca["low"], abs=oracle["tolerances"]["BCa bounds"])
    assert high == pytest.approx(bca["high"], abs=oracle["tolerances"]["BCa bounds"])


# --- randomization test details ------------------------------------------------------------------------


def _flip_counts(exact: list[Fraction]) -> tuple[int, int]:
    """Sign flips whose |sum| is above the observed one, and equal to it, in exact arithmetic."""
    observed = abs(sum(exact))
    sums = [abs(sum(s * v for s, v in zip(signs, exact, strict=True)))
            for signs in itertools.product((1, -1), repeat=len(exact))]
    return sum(total > observed for total in sums), sum(total == observed for total in sums)


def test_exact_randomization_counts_ties_like_exact_arithmetic():
    values = ["0.1", "0.2", "-0.3", "0.3", "0.4", "-0.1", "0.25"]
    d = np.array([float(v) for v in values])
    above, equal = _flip_counts([Fraction(v) for v in values])
    assert equal > 2  # ties beyond the observed assignment and its mirror image
    assert paired_randomization_test(d, np.zeros_like(d), mid_p=False) == (above + equal) / 2 ** len(values)
    assert paired_randomization_test(d, np.zeros_like(d)) == (above + equal / 2) / 2 ** len(values)


def test_mid_p_matches_scipys_permutation_test_in_both_directions():
    # mid-p = (P(|T| >= t) + P(|T| > t)) / 2; scipy gives the first as "greater" and 1 - the second as "less"
    rng = np.random.default_rng(12)
    d = rng.integers(-2, 3, 11) / 4  # a discrete metric: many flips tie
    kwargs = {"permutation_type": "samples", "n_resamples": np.inf}
    greater = scipy_stats.permutation_test((d,), lambda x: abs(x.sum()), alternative="greater", **kwargs).pvalue
    less = scipy_stats.permutation_test((d,), lambda x: abs(x.sum()), alternative="less", **kwargs).pvalue
    assert paired_randomization_test(d, np.zeros_like(d)) == pytest.approx((greater + 1 - less) / 2, abs=1e-12)
    assert paired_randomization_test(d, np.zeros_like(d), mid_p=False) == pytest.approx(greater, abs=1e-12)


def test_monte_carlo_mid_p_counts_the_observed_flip_as_half_a_tie():
    rng = np.random.default_rng(4)
    d = rng.integers(-1, 2, 80) / 2
    classical = paired_randomization_test(d, np.zeros_like(d), resamples=5_000, seed=2, mid_p=False)
    mid = paired_randomization_test(d, np.zeros_like(d), resamples=5_000, seed=2)
    # (above + equal + 1) / (R + 1) and (above + (equal + 1) / 2) / (R + 1): the same draws, so below by half the ties
    assert 0 < classical - mid < classical
    ties = 2 * (classical - mid) * 5_001
    assert ties == pytest.approx(round(ties), abs=1e-6)


def test_monte_carlo_agrees_with_exact_enumeration():
    rng = np.random.default_rng(7)
    a, b = rng.random(18), rng.random(18) + 0.08
    exact = paired_randomization_test(a, b, resamples=2**18)
    resamples = 20_000
    estimate = paired_randomization_test(a, b, resamples=resamples, seed=3)
    standard_error = np.sqrt(exact * (1 - exact) / resamples)
    assert abs(estimate - exact) <= 4 * standard_error + 1 / resamples


# --- degenerate inputs ---------------------------------------------------------------------------------


def test_t_test_zero_variance_cases():
    b = np.arange(10) / 8
    assert paired_t_test(b, b) == 1.0
    assert paired_t_test(b + 0.25, b) == 0.0
    assert paired_t_test(b, b + 0.25) == 0.0


def test_identical_systems_give_one_for_every_method():
    x = np.array([0.1, 0.5, 0.3, 0.9])
    for method in ("t", "randomization", "wilcoxon"):
        assert paired_test(x, x.copy(), method=method) == 1.0


def test_unknown_names_raise_with_valid_names():
    x = np.array([0.1, 0.2, 0.3])
    with pytest.raises(UnknownNameError, match=r"randomization, t, wilcoxon. Did you mean 't'\?$"):
        paired_test(x, x, method="tt")
    with pytest.raises(UnknownNameError, match="bca, percentile"):
        bootstrap_ci(x, method="basic")
    with pytest.raises(UnknownNameError, match="holm, none"):
        pairwise_pvalues(np.stack([x, x]), correction="bonferroni")


def test_bootstrap_of_constant_is_the_constant():
    assert bootstrap_ci(np.full(20, 0.37)) == (0.37, 0.37)
    assert bootstrap_ci(np.full(20, 0.37), method="bca") == (0.37, 0.37)


# --- Holm ----------------------------------------------------------------------------------------------


def test_holm_hand_computed_example():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted: 0.005, 0.01, 0.03, 0.04 with multipliers 4, 3, 2, 1; step-down keeps the running maximum
    expected = np.array([3 * 0.01, max(2 * 0.03, 1 * 0.04), 2 * 0.03, 4 * 0.005])
    np.testing.assert_allclose(holm(p), expected, rtol=1e-15)
    np.testing.assert_allclose(
        holm([0.5, 0.6, 0.001]), [min(1, 2 * 0.5), min(1, max(2 * 0.5, 0.6)), 3 * 0.001]
    )
    assert holm([]).shape == (0,)


@given(arrays(np.float64, st.integers(1, 30), elements=st.floats(0, 1)))
def test_holm_properties(p):
    adjusted = holm(p)
    assert np.all(adjusted >= p) and np.all(adjusted <= 1) and not np.any(np.isnan(adjusted))
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= 0)


# --- all pairs ------------------------------------------------------------------------------------------


def _per_pair_matrix(scores, test):
    m = scores.shape[0]
    pairs = list(itertools.combinations(range(m), 2))
    adjusted = holm([test(scores[i], scores[j]) for i, j in pairs])
    expected = np.ones((m, m))
    for (i, j), p in zip(pairs, adjusted, strict=True):
        expected[i, j] = expected[j, i] = p
    return expected


def test_pairwise_t_matches_per_pair_tests_and_holm():
    rng = np.random.default_rng(11)
    scores = rng.random((6, 50)) + np.linspace(0, 0.2, 6)[:, None]
    scores[4] = scores[3]  # identical systems inside the matrix
    matrix = pairwise_pvalues(scores)
    np.testing.assert_allclose(matrix, _per_pair_matrix(scores, paired_t_test), rtol=1e-12, atol=1e-15)
    assert np.array_equal(matrix, matrix.T) and np.all(np.diag(matrix) == 1.0)
    raw = pairwise_pvalues(scores, correction="none")
    assert raw[0, 5] == pytest.approx(paired_t_test(scores[0], scores[5]), rel=1e-12)


def _holm_of_every_pvalue(scores):
    """pairwise_pvalues' Holm matrix from every pair's t-test p-value (scipy), none left out."""
    m = scores.shape[0]
    first, second = np.triu_indices(m, k=1)
    raw = np.array([scipy_stats.ttest_rel(scores[i], scores[j]).pvalue for i, j in zip(first, second, strict=True)])
    raw = np.where(np.isnan(raw), 1.0, raw)  # identical rows: no difference, p 1
    expected = np.ones((m, m))
    expected[first, second] = expected[second, first] = holm(raw)
    return expected


@pytest.mark.parametrize("spread", [0.0, 0.05, 0.3, 2.0])  # from few pairs below 1 to nearly all
def test_pairwise_holm_leaves_out_only_the_tail_it_corrects_to_1(spread):
    """Holm's corrected value reaches 1 long before the last p-value of a large family, and the tests past that
    point are not computed (stats._holm_reachable_p): the matrix is that of every p-value, whether the first cut
    suffices or (spread 2: 6,096 of the 7,140 pairs below 1) a second round has to lower it."""
    import leaderboard.analysis.stats as stats_module

    rng = np.random.default_rng(21)
    scores = np.clip(rng.random((120, 25)) * 0.5 + rng.uniform(0, spread, 120)[:, None], 0, None)
    scores[1] = scores[0]  # identical systems
    scores[3] = scores[2] + 0.01  # a constant shift
    computed = []
    original = stats_module._two_sided_t_p
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stats_module, "_two_sided_t_p", lambda t, df: computed.append(t.size) or original(t, df))
        matrix = pairwise_pvalues(scores)
    expected = _holm_of_every_pvalue(scores)
    np.testing.assert_allclose(matrix, expected, rtol=1e-10, atol=1e-300)
    assert np.array_equal(matrix == 1.0, expected == 1.0)
    tails = sum(computed[0::2])  # each round's new members, then the p-value at its cut
    assert tails < 120 * 119 // 2 - 2  # some pairs are never tested (the two exact ones apart)
    if spread == 0.0:
        assert tails < 10  # almost the whole family is corrected to 1 unseen
    if spread == 2.0:
        assert len(computed) >= 3  # a second round
    # BH and no correction read every p-value
    np.testing.assert_allclose(pairwise_pvalues(scores, correction="none")[0, 5],
                               scipy_stats.ttest_rel(scores[0], scores[5]).pvalue, rtol=1e-10)


@pytest.mark.parametrize("n_queries", [10, 30])  # exact enumeration, Monte Carlo
def test_pairwise_randomization_and_wilcoxon_match_per_pair(n_queries):
    rng = np.random.default_rng(5)
    scores = rng.random((4, n_queries))
    matrix = pairwise_pvalues(scores, method="randomization", resamples=2000, seed=9)
    expected = _per_pair_matrix(scores, lambda a, b: paired_randomization_test(a, b, 2000, 9))
    np.testing.assert_allclose(matrix, expected, rtol=1e-12)
    wilcoxon = pairwise_pvalues(scores, method="wilcoxon")
    np.testing.assert_allclose(wilcoxon, _per_pair_matrix(scores, wilcoxon_test), rtol=1e-12)


# --- tie groups and per-query comparison ---------------------------------------------------------------


def test_wins_ties_losses():
    a = np.array([0.5, 0.3, 0.2, 0.7, 0.9])
    b = np.array([0.4, 0.3, 0.25, 0.7 + 1e-12, 0.1])
    assert wins_ties_losses(a, b) == (2, 2, 1)
    assert wins_ties_losses(b, a) == (1, 2, 2)


# --- settings text ---------------------------------------------------------------------------------------


def test_settings_describe():
    assert TestSettings().describe() == (
        "Paired two-sided t-test, Holm–Bonferroni correction (family-wise error rate) over all pairs, α = 0.05; "
        "dataset means with a 95% score interval (Wilson's, with the effective number of queries)."
    )
    assert "Benjamini–Hochberg correction (false discovery rate)" in TestSettings(correction="bh").describe()
    assert "percentile bootstrap, 10,000 resamples, seed 0" in TestSettings(ci_method="percentile").describe()
    text = TestSettings(method="randomization", correction="none", ci_method="bca", seed=7).describe()
    assert "randomization" in text and "100,000 resamples" in text and "BCa" in text and "seed 7" in text
    with pytest.raises(UnknownNameError, match="randomization, t, wilcoxon"):
        TestSettings(method="welch")
    with pytest.raises(IrboardError, match="alpha"):
        TestSettings(alpha=1.5)


# --- properties ---------------------------------------------------------------------------------------------

unit = st.floats(0, 1, allow_subnormal=False)


@st.composite
def paired_vectors(draw, min_size=2, max_size=25):
    n = draw(st.integers(min_size, max_size))
    a = draw(arrays(np.float64, n, elements=unit))
    b = draw(arrays(np.float64, n, elements=unit))
    return a, b


@settings(max_examples=60, deadline=None)
@given(paired_vectors(), st.sampled_from(["t", "randomization", "wilcoxon"]))
def test_two_sided_p_is_symmetric_and_in_unit_interval(pair, method):
    a, b = pair
    p = paired_test(a, b, method=method, resamples=1000, seed=1)
    assert 0.0 <= p <= 1.0
    assert paired_test(b, a, method=method, resamples=1000, seed=1) == pytest.approx(p, abs=1e-12)
    assert paired_test(a, a.copy(), method=method, resamples=1000, seed=1) == 1.0


@settings(max_examples=30, deadline=None)
@given(paired_vectors(min_size=12, max_size=25), st.integers(0, 2**32 - 1))
def test_seeded_results_are_reproducible(pair, seed):
    a, b = pair
    first = paired_randomization_test(a, b, resamples=1500, seed=seed)
    assert paired_randomization_test(a, b, resamples=1500, seed=seed) == first
    for method in ("percentile", "bca"):
        assert bootstrap_ci(a, method, resamples=500, seed=seed) == bootstrap_ci(a, method, 500, seed)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.integers(5, 40), elements=unit), st.sampled_from(["percentile", "bca"]))
def test_interval_contains_the_mean(x, method):
    if np.ptp(x) < 1e-6:
        x = x + np.linspace(0, 0.1, x.size)  # keep the data non-degenerate
    low, high = bootstrap_ci(x, method, resamples=2000, seed=0)
    assert low <= x.mean() <= high


def test_t_test_agrees_with_scipy_on_random_data():
    rng = np.random.default_rng(21)
    for n in (2, 3, 17, 300):
        a, b = rng.random(n), rng.random(n)
        expected = scipy_stats.ttest_rel(a, b).pvalue
        assert paired_t_test(a, b) == pytest.approx(expected, rel=1e-10, abs=1e-15)
