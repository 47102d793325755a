"""The per-query recall-at-scale model and the rank baseline: formula checks, Monte Carlo checks on synthetic
collections whose recall at a larger size is known, tie masses (lexical and sparse zeros) and dropped queries."""

import math

import numpy as np
import pytest
from scipy import stats

from evaluator.errors import IrboardError
from evaluator.score_samples import QueryScoreSamples, ScoreSamples
from leaderboard.analysis.scale import CannotPredictError, forecast, forecasts
from leaderboard.analysis.scale_query import (
    _partial_mean,
    _pwm_gpd,
    fit_queries,
    gpd_sf,
    query_recall,
    target_counts,
)


def samples_of_queries(queries, num_docs):
    """ScoreSamples from {query id: (relevant scores, sampled non-relevant scores)}."""
    return ScoreSamples(num_docs, 1, 0, 2000, 2000, {
        qid: QueryScoreSamples(np.sort(np.asarray(rel, float)), np.sort(np.asarray(non, float)), len(rel),
                               num_docs - len(rel))
        for qid, (rel, non) in queries.items()})


def quantize_12_bits(values):
    """What a 12-bit result file gives back: codes on [lo, hi], lo and hi exact."""
    values = np.sort(values)
    lo, hi = values[0], values[-1]
    return lo + np.rint((values - lo) / (hi - lo) * 4095) * ((hi - lo) / 4095)


def test_partial_mean_is_the_binomial_expectation():
    n, p = 40, 0.13
    b = np.arange(n + 1)
    pmf = stats.binom.pmf(b, n, p)
    for x in (-1.0, 0.0, 0.4, 3.0, 5.5, 17.25, 60.0):
        expected = float(np.sum(np.maximum(x - b, 0.0) * pmf))
        assert _partial_mean(np.array(x), np.array(float(n)), np.array(p)) == pytest.approx(expected, abs=1e-12)


def test_fixed_relevant_recall_is_the_binomial_formula():
    """One query, share above each relevant score known: P(in top k) = P[Binomial(N', share) <= k - 1 - above]."""
    rng = np.random.default_rng(1)
    sample = np.sort(rng.random(2000))  # uniform non-relevant scores: share above s is 1 - s
    relevant = np.array([0.999, 0.9995, 0.97])
    model = fit_queries(samples_of_queries({"q": (relevant, sample)}, 5000), empirical=True)
    shares = model.share_above
    np.testing.assert_allclose(shares, [(sample > s).mean() for s in np.sort(relevant)])
    size, ks = 50_000.0, [1, 10, 100]
    binomial = fit_queries(samples_of_queries({"q": (relevant, sample)}, 5000), empirical=True)
    object.__setattr__(binomial, "binomial", True)
    got = query_recall(binomial, [size], ks, "fixed-relevant")[0, 0]
    above = np.array([2, 1, 0])  # relevant documents above each, in ascending score order
    n_nonrel = size - 3
    expected = [np.mean(stats.binom.cdf(k - 1 - above, n_nonrel, shares)) for k in ks]
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_rank_baseline_places_documents_at_scaled_ranks():
    sample = np.arange(1.0, 101.0)  # 100 sampled non-relevant scores 1..100
    relevant = np.array([100.5, 95.5])  # 0 and 5 sampled documents above
    samples = samples_of_queries({"q": (relevant, sample)}, 1000)
    found = forecast(samples, [10_002.0], [1, 10, 60, 1000], mode="rank")
    # At 10,000 non-relevant documents each sampled one stands for 100: ranks 1 and 1 + 1 + 500.
    np.testing.assert_allclose(found.recall[0], [0.5, 0.5, 0.5, 1.0])


def test_uniform_growth_scales_relevant_counts_and_blocks():
    assert target_counts(2, 1000, 10_000, "uniform")[0] == pytest.approx(20)
    assert target_counts(2, 1000, 10_000, "fixed-relevant") == (pytest.approx(2), pytest.approx(9998))
    with pytest.raises(ValueError, match="growth must be one of fixed-relevant, uniform"):
        target_counts(2, 1000, 10_000, "sideways")
    # One relevant document far above every non-relevant one: at 10x it stands for 10 relevant documents,
    # so at most k of them fit in the top k.
    samples = samples_of_queries({"q": ([10.0], np.linspace(0, 1, 500))}, 1000)
    for mode in ("per_query", "rank"):
        found = forecast(samples, [10_000.0], [1, 5, 10, 20], "uniform", mode)
        np.testing.assert_allclose(found.recall[0], [0.1, 0.5, 1.0, 1.0], atol=1e-9)


def test_known_relevant_counts_replace_the_scenarios():
    assert target_counts(2, 1000, 10_000, "uniform", known=3) == (pytest.approx(3), pytest.approx(9997))
    rng = np.random.default_rng(5)
    queries = {str(q): (0.5 + 0.1 * rng.standard_normal(1 + q % 4), 0.1 * rng.standard_normal(800))
               for q in range(12)}
    samples = samples_of_queries(queries, 4000)
    # The scenario's own count passed as known gives the scenario's prediction, in every mode.
    scaled = {qid: 10.0 * len(rel) for qid, (rel, _) in queries.items()}
    for mode in ("per_query", "rank", "pooled"):
        plain = forecast(samples, [40_000.0], [10, 100], "uniform", mode)
        given = forecast(samples, [40_000.0], [10, 100], "uniform", mode, known=scaled)
        np.testing.assert_allclose(given.recall, plain.recall, rtol=1e-12)
    # One relevant document far above every non-relevant one, known to stay one at 10x: always first.
    lone = samples_of_queries({"q": ([10.0], np.linspace(0, 1, 500))}, 1000)
    for mode in ("per_query", "rank"):
        found = forecast(lone, [10_000.0], [1, 5, 10], "uniform", mode, known={"q": 1.0})
        np.testing.assert_allclose(found.recall[0], [1.0, 1.0, 1.0], atol=1e-6)


def test_both_scenarios_agree_at_the_dataset_size():
    rng = np.random.default_rng(3)
    queries = {str(q): (0.5 + 0.1 * rng.standard_normal(3), 0.1 * rng.standard_normal(800)) for q in range(20)}
    found = forecasts(samples_of_queries(queries, 5000), [5000.0, 50_000.0], [10, 100])
    np.testing.assert_allclose(found["uniform"].recall[0], found["fixed-relevant"].recall[0], atol=1e-12)
    assert (found["uniform"].recall[1] <= found["fixed-relevant"].recall[1] + 1e-12).all()


def test_pwm_recovers_gpd_parameters():
    rng = np.random.default_rng(8)
    excess = [np.sort(stats.genpareto.rvs(c, scale=s, size=20_000, random_state=rng))
              for c, s in ((0.2, 0.05), (-0.2, 0.1), (0.0, 0.02))]
    counts = np.array([y.size for y in excess])
    scale, shape = _pwm_gpd(np.concatenate(excess), counts, np.r_[0, np.cumsum(counts)[:-1]])
    np.testing.assert_allclose(shape, [0.2, -0.2, 0.0], atol=0.03)
    np.testing.assert_allclose(scale, [0.05, 0.1, 0.02], rtol=0.05)
    assert gpd_sf(np.array([0.0, 1.0]), 0.1, -0.2)[1] == 0.0  # beyond the end of a bounded tail


# --- Monte Carlo: non-relevant scores with an exact GPD tail, so the model is right and recall is known -----

TAIL_START, TAIL_SCALE, TAIL_SHAPE = 0.8, 0.06, 0.1  # the top 20% of scores above the tie mass


def draw_nonrelevant(rng, size, zeros):
    """A tie mass at 0 (share `zeros`), then uniform on (0.2, 0.8] (60% of the rest) and a GPD tail above 0.8."""
    u = rng.random(size)
    values = np.where(u < 0.75, 0.2 + 0.6 * u / 0.75, 0.0)
    tail = u >= 0.75
    values[tail] = TAIL_START + stats.genpareto.rvs(TAIL_SHAPE, scale=TAIL_SCALE, size=int(tail.sum()),
                                                    random_state=rng)
    values[rng.random(size) < zeros] = 0.0
    return values


def share_above(score, zeros):
    """Exact share of non-relevant documents above `score` (> 0) under draw_nonrelevant."""
    if score >= TAIL_START:
        return (1 - zeros) * 0.25 * stats.genpareto.sf(score - TAIL_START, TAIL_SHAPE, scale=TAIL_SCALE)
    return (1 - zeros) * (0.25 + 0.75 * (TAIL_START - max(score, 0.2)) / 0.6)


@pytest.mark.parametrize("zeros", [0.0, 0.5])
def test_prediction_matches_the_exact_recall_of_a_synthetic_collection(zeros):
    """5,000-document queries, 2,000 sampled scores (12-bit), predicted at 10^5 documents against the exact
    expected recall there: each relevant document is in the top k with P[Binomial(N', share) <= k - 1 - above]."""
    rng = np.random.default_rng(21)
    num_docs, size, ks = 5000, 1e5, [10, 100, 1000]
    queries, exact = {}, []
    for q in range(150):
        relevant = np.sort(1.0 + stats.genpareto.rvs(0.0, scale=0.3, size=int(rng.integers(1, 5)),
                                                     random_state=rng))
        sample = quantize_12_bits(draw_nonrelevant(rng, 2000, zeros))
        queries[f"q{q}"] = (relevant, sample)
        above = relevant.size - 1 - np.arange(relevant.size)
        shares = np.array([share_above(s, zeros) for s in relevant])
        exact.append([np.mean(stats.binom.cdf(k - 1 - above, size - relevant.size, shares)) for k in ks])
    found = forecast(samples_of_queries(queries, num_docs), [size], ks)
    assert found.n_dropped == 0 and found.queries == 150
    # 0.03: the tail shape comes from 50-100 scores per query and is extrapolated 20x beyond the sample.
    np.testing.assert_allclose(found.recall[0], np.mean(exact, axis=0), atol=0.03)
    # The rank baseline cannot see shares below 1/2000 and is too optimistic at 20x.
    rank = forecast(samples_of_queries(queries, num_docs), [size], ks, mode="rank")
    assert rank.recall[0, 0] > np.mean(exact, axis=0)[0] + 0.05


def monte_carlo_recall(rng, relevant, n_nonrelevant, zeros, ks):
    """Explicit draws of a whole corpus; ties at 0 broken at random (a uniform position)."""
    nonrelevant = draw_nonrelevant(rng, int(n_nonrelevant), zeros)
    scores = np.concatenate([relevant, nonrelevant])
    order = np.lexsort((rng.random(scores.size), -scores))
    ranks = np.empty(scores.size, dtype=np.int64)
    ranks[order] = np.arange(1, scores.size + 1)
    return [np.mean(ranks[: relevant.size] <= k) for k in ks]


@pytest.mark.parametrize("growth", ["fixed-relevant", "uniform"])
def test_monte_carlo_agrees_in_both_growth_scenarios_with_relevant_documents_on_the_tie_mass(growth):
    """Relevant documents partly at 0 (as BM25 gives those without a query term); the corpus grows 10x."""
    rng = np.random.default_rng(5)
    num_docs, size, ks, zeros = 2000, 20_000.0, [10, 100, 1000], 0.7
    queries, truth = {}, []
    for q in range(120):
        relevant = 0.9 + 0.05 * rng.standard_normal(4)
        relevant[: int(rng.integers(0, 3))] = 0.0
        relevant = np.sort(relevant)
        queries[f"q{q}"] = (relevant, quantize_12_bits(draw_nonrelevant(rng, num_docs - 4, zeros)))
        grown = relevant if growth == "fixed-relevant" else np.repeat(relevant, 10)
        truth.append(monte_carlo_recall(rng, grown, size - grown.size, zeros, ks))
    found = forecast(samples_of_queries(queries, num_docs), [size], ks, growth)
    truth = np.array(truth)
    standard_error = truth.std(axis=0, ddof=1) / math.sqrt(len(truth))
    assert (np.abs(found.recall[0] - truth.mean(axis=0)) <= 3 * standard_error + 0.02).all()


# --- tie masses and dropped queries -------------------------------------------------------------------------


def test_relevant_document_on_the_tie_mass_takes_a_uniform_place_among_the_tied():
    sample = np.r_[np.zeros(1500), np.linspace(1, 5, 500)]  # 75% zeros, as 12-bit codes store them: lo exactly
    samples = samples_of_queries({"q": ([0.0], sample)}, 4001)
    found = forecast(samples, [40_001.0], [5000, 15_000, 40_001])
    # 10,000 non-relevant documents above it, 30,000 tied with it (and itself).
    np.testing.assert_allclose(found.recall[0], [0.0, 5000 / 30_001, 1.0], atol=1e-9)


def test_lexical_queries_with_mostly_zero_scores_are_predicted_not_refused():
    rng = np.random.default_rng(2)
    queries = {}
    for q in range(30):
        sample = np.where(rng.random(2000) < 0.95, 0.0, rng.gamma(2.0, 2.0, 2000))
        queries[f"q{q}"] = (np.array([16.0 + rng.random()]), sample)
    found = forecast(samples_of_queries(queries, 10_000), [1e5], [10, 100, 1000])
    assert found.n_dropped == 0 and found.queries == 30
    assert (np.diff(found.recall[0]) >= 0).all() and 0 < found.recall[0, 0] < 1


def test_queries_that_cannot_be_modelled_are_dropped_and_counted():
    rng = np.random.default_rng(4)
    good = {f"g{q}": ([0.6], 0.1 * rng.standard_normal(500)) for q in range(5)}
    few_above_mass = {"few": ([3.0], np.r_[np.zeros(495), [1.0, 1.5, 2.0, 2.5, 2.7]])}
    on_mass_only = {"tied": ([0.0], np.r_[np.zeros(495), [1.0, 1.5, 2.0, 2.5, 2.7]])}  # needs no tail: kept
    empty = {"empty": ([0.5], [])}
    samples = samples_of_queries({**good, **few_above_mass, **on_mass_only, **empty}, 1000)
    found = forecast(samples, [1e5], [10])
    assert found.queries == 6 and found.n_dropped == 2
    assert found.dropped == {"fewer than 11 sampled scores above the tie mass, too few for a tail fit": 1,
                             "no sampled non-relevant score": 1}
    with pytest.raises(CannotPredictError, match="no query could be modelled") as caught:
        forecast(samples_of_queries(few_above_mass, 1000), [1e5], [10])
    assert isinstance(caught.value, IrboardError)


def test_sizes_and_modes_are_checked():
    samples = samples_of_queries({"q": ([0.5, 0.6], np.linspace(0, 1, 100))}, 1000)
    with pytest.raises(CannotPredictError, match="larger than the relevant count"):
        forecast(samples, [2.0], [10])
    with pytest.raises(ValueError, match="mode must be one of per_query, pooled, rank"):
        forecast(samples, [1e5], [10], mode="magic")
    with pytest.raises(CannotPredictError, match="no query has a relevant document"):
        forecast(samples_of_queries({}, 1000), [1e5], [10])
