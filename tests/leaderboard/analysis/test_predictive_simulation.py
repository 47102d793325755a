"""Do the predictive claims keep their level? Simulations with a known truth, as test_honest_simulation.py:

- the prediction interval for a new dataset's true difference (random-effects pooling, meta.pool) covers it at
  >= 93% for 4-30 datasets with heterogeneous true differences and per-query values with point masses;
- "equivalent" (the verdict's interval within the margin) is claimed for a pair whose true difference is at the
  margin at most 5% of the time, with the corrected tests of all pairs of a dataset (the pooled verdicts over
  datasets: simulate_claims.py and test_claims_table.py);
- the confidence set for the best model (ranks.best_set) holds the true best at >= 95% with near-ties, and is
  smaller than the top group of the rank ranges.

Widths and sizes are computed beside coverage; docs/statistics.md tabulates them from the stored run of every row
(`python -m tests.leaderboard.analysis.simulate_claims` writes claims_table.json; test_claims_table.py compares), and
the tests here compute one row of each table live. Monte Carlo tolerances:
three standard errors, as in test_honest_simulation.py."""

import functools
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from leaderboard.analysis import meta, stats
from leaderboard.analysis.effects import spread
from leaderboard.analysis.ranks import best_set, rank_ranges
from leaderboard.analysis.verdicts import verdict_interval, verdict_words

ALPHA = 0.05


def tolerance(replicates: int, level: float) -> float:
    return 3 * np.sqrt(level * (1 - level) / replicates)


def _dataset_differences(rng, theta: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per dataset: the observed mean of per-query differences whose true mean is theta_k, and its variance of the
    mean estimated from them. A query's difference is 0 with probability 0.4 (both systems equal: a point mass),
    else theta_k / 0.6 plus noise of SD 0.3, as paired nDCG differences look."""
    y = np.empty(theta.size)
    v = np.empty(theta.size)
    for k, (mean, n) in enumerate(zip(theta, queries, strict=True)):
        moved = rng.random(n) < 0.6
        d = np.where(moved, mean / 0.6 + rng.normal(0, 0.3, n), 0.0)
        y[k] = d.mean()
        v[k] = d.var(ddof=1) / n
    return y, v


def prediction_coverage(k: int, tau: float, replicates: int, seed: int) -> tuple[float, float, float]:
    """(coverage of the prediction interval, of the naive one: normal quantile and the pooled mean's error only,
    mean width of the prediction interval)."""
    rng = np.random.default_rng(seed)
    covered = naive = 0
    widths = []
    quantile = scipy_stats.t.ppf(0.975, k - 1)  # the fit's t quantile, the same in every replicate
    for _ in range(replicates):
        theta = rng.normal(0.01, tau, k)
        queries = rng.integers(50, 400, k)
        y, v = _dataset_differences(rng, theta, queries)
        fit = meta.pool(y, v)
        new = rng.normal(0.01, tau)
        low, high = fit.prediction
        covered += low <= new <= high
        widths.append(high - low)
        half = 1.96 * (fit.ci[1] - fit.ci[0]) / 2 / quantile
        naive += fit.mean - half <= new <= fit.mean + half
    return covered / replicates, naive / replicates, float(np.mean(widths))


@pytest.mark.parametrize(("k", "tau"), [(4, 0.02), (8, 0.02), (30, 0.005)])
def test_prediction_intervals_cover_a_new_datasets_difference(k, tau):
    replicates = 1000
    coverage, naive, width = prediction_coverage(k, tau=tau, replicates=replicates, seed=k)
    assert coverage >= 0.93, (k, coverage, width)
    # the check can fail: the mean's interval, read as a prediction, misses a new dataset's difference
    assert naive < 0.93


def test_prediction_intervals_without_heterogeneity_stay_honest():
    coverage, _, _ = prediction_coverage(5, tau=0.0, replicates=1000, seed=1)
    assert coverage >= 0.93


PREDICTION_KS = (4, 6, 10, 15, 30)
PREDICTION_TAUS = (0.005, 0.02, 0.05)
PREDICTION_REPLICATES = 4000


def prediction_seed(k: int, tau: float) -> int:
    return 100 * k + int(1000 * tau)


def _models(rng, true_means: np.ndarray, n: int, noise: float = 0.2) -> np.ndarray:
    """Per-query values with a query difficulty shared by all models, clipped to [0, 1] (point masses at 0 and 1)."""
    difficulty = rng.normal(0, 0.25, n)
    return np.clip(true_means[:, None] + difficulty[None, :] + rng.normal(0, noise, (true_means.size, n)), 0, 1)


def _true_means(base: np.ndarray, noise: float = 0.2, samples: int = 400_000) -> np.ndarray:
    """The true means of the clipped values, by a large sample of the same models."""
    return _models(np.random.default_rng(0), base, samples, noise).mean(axis=1)


@functools.cache  # seeded: the docs-table test reuses the fast test's row
def equivalence_at_the_margin(queries: int, replicates: int, seed: int, models: int = 6) -> tuple[float, float, float]:
    """Per dataset: `models` models one margin apart (per-query values clipped to [0, 1], shared query difficulty),
    the verdicts of all pairs with Holm's correction. Returns (share of replicates in which some pair at the margin
    is called equivalent, the same with one uncorrected two one-sided test per pair (a 90% interval within the
    margin), the median width of the verdict's interval of those pairs)."""
    rng = np.random.default_rng(seed)
    noise = 0.05
    base = 0.40 + 0.01 * np.arange(models)
    truth = _true_means(base, noise)
    margin = float(np.min(np.diff(truth)))  # clipping shrinks differences: the closest neighbours are at the margin
    at_margin = np.abs(truth[:, None] - truth[None, :]) >= margin
    np.fill_diagonal(at_margin, False)
    pairs = models * (models - 1) // 2
    false_claims = naive_claims = 0
    widths = []
    for _ in range(replicates):
        scores = _models(rng, base, queries, noise)
        corrected = stats.pairwise_pvalues(scores, "t", "holm")
        diff, sd = spread(scores)
        low, high = verdict_interval(diff, sd / np.sqrt(queries), queries - 1, corrected, ALPHA, pairs)
        words = verdict_words(diff, low, high, corrected, ALPHA, margin)
        false_claims += bool(np.any((words == "equivalent") & at_margin))
        widths.append(np.median((high - low)[at_margin]))
        half = scipy_stats.t.ppf(1 - ALPHA, queries - 1) * sd / np.sqrt(queries)
        naive_claims += bool(np.any((np.abs(diff) + half < margin) & at_margin))
    return false_claims / replicates, naive_claims / replicates, float(np.median(widths))


def test_equivalence_at_the_margin_is_claimed_at_most_five_percent_of_the_time():
    """Six models 1 point apart (the margin); no pair may be called equivalent, over all pairs at once."""
    replicates = 1000
    rate, naive, width = equivalence_at_the_margin(400, replicates, 34)  # positional: the cache key of the docs row
    assert rate <= ALPHA + tolerance(replicates, ALPHA), width
    # the check can fail: uncorrected tests over the five neighbouring pairs call one of them equivalent too often
    assert naive > ALPHA + tolerance(replicates, ALPHA)
    assert _row("per-dataset", 400, rate, naive, width) in DOCS.read_text()  # docs/statistics.md quotes this run


@functools.cache  # seeded: the docs-table test reuses the fast test's row
def best_set_coverage(queries: int, gap: float, replicates: int, seed: int) -> tuple[float, float, float]:
    """Twelve models: the best three within `gap` standard errors of a pair's difference of each other, then two
    at 3 and 4 SE below, seven far behind. Returns (share of replicates in which ranks.best_set holds the true best,
    its mean size, the mean size of the top group of the rank ranges)."""
    rng = np.random.default_rng(seed)
    se_unit = 0.2 / np.sqrt(queries)  # the SE of a pair's difference of means, roughly
    base = np.r_[0.5 + gap * se_unit, 0.5, 0.5 - gap * se_unit, 0.5 - 3 * se_unit, 0.5 - 4 * se_unit,
                 0.4 - np.arange(7) * 2 * se_unit]
    truth = _true_means(base)
    best = int(np.argmax(truth))
    held = 0
    sizes, top_sizes = [], []
    for _ in range(replicates):
        scores = _models(rng, base, queries)
        diff, sd = spread(scores)
        contenders = best_set(scores.mean(axis=1), diff, sd / np.sqrt(queries), queries - 1, ALPHA)
        held += contenders[best]
        sizes.append(contenders.sum())
        corrected = stats.pairwise_pvalues(scores, "t", "holm")
        top_sizes.append(int((rank_ranges(scores.mean(axis=1), corrected, ALPHA)[:, 0] == 1).sum()))
    return held / replicates, float(np.mean(sizes)), float(np.mean(top_sizes))


def test_the_best_set_holds_the_true_best_at_near_ties_and_is_smaller_than_the_top_group():
    replicates = 600
    coverage, size, top = best_set_coverage(60, 0.05, replicates, 2024)  # positional: the cache key of the docs row
    assert coverage >= 0.95 - tolerance(replicates, 0.95)
    assert size < top
    assert _best_row(60, 0.05, coverage, size, top) in DOCS.read_text()


# --- the tables of docs/statistics.md ----------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[3] / "docs" / "statistics.md"
EQUIVALENCE_ROWS = [("per-dataset", 100, 1000, 100), ("per-dataset", 400, 1000, 34), ("per-dataset", 2000, 1000, 2000)]
BEST_ROWS = [(30, 0.05, 600, 30), (60, 0.05, 600, 2024), (60, 1.0, 600, 61), (300, 0.05, 600, 300)]


def _row(kind: str, setting, rate: float, naive: float, width: float) -> str:
    return f"| {kind} | {setting} | **{rate:.1%}** | {naive:.1%} | {100 * width:.2f} |"


def _best_row(queries: int, gap: float, coverage: float, size: float, top: float) -> str:
    return f"| {queries} | {gap:g} SE | **{coverage:.1%}** | {size:.2f} | {top:.2f} |"


def docs_tables() -> list[tuple[str, bool]]:
    """The rows docs/statistics.md tabulates, each with whether it keeps its level (equivalence: false claims at
    most alpha; best set: coverage at least 95%, within three Monte Carlo SE), from the same seeds as the fast
    tests (one row of each table is theirs)."""
    rows = []
    for kind, queries, replicates, seed in EQUIVALENCE_ROWS:
        found = equivalence_at_the_margin(queries, replicates, seed)
        rows.append((_row(kind, queries, *found), found[0] <= ALPHA + tolerance(replicates, ALPHA)))
    for queries, gap, replicates, seed in BEST_ROWS:
        found = best_set_coverage(queries, gap, replicates, seed)
        rows.append((_best_row(queries, gap, *found), found[0] >= 0.95 - tolerance(replicates, 0.95)))
    return rows


