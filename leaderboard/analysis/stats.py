"""Paired significance tests, bootstrap intervals, multiple-testing correction and tie groups.

Every paired test here is a function of the per-query differences only, so one implementation
serves both a single pair (`paired_test`) and all pairs of a dataset (`pairwise_pvalues`), and the
two always agree. Inputs are per-query metric values aligned on the same queries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from evaluator.errors import IrboardError, UnknownNameError, closest_names, did_you_mean
from leaderboard.analysis.verdicts import t_isf, t_sf

# Element budget of one temporary array (float64: 2**22 elements = 32 MiB).
_CHUNK_ELEMENTS = 2**22
_EPS = np.finfo(np.float64).eps

DifferenceTest = Callable[[np.ndarray, int, int], np.ndarray]


def _check_name(kind: str, name: str, registry: dict) -> None:
    if name in registry:
        return
    valid = sorted(registry)
    hint = did_you_mean(closest_names(name, valid))
    raise UnknownNameError(f"unknown {kind} {name!r}; valid names: {', '.join(valid)}.{hint}")


def _paired_differences(a, b) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise ValueError(
            f"paired tests need two non-empty 1-D arrays of equal length, got shapes {a.shape} and {b.shape}"
        )
    d = a - b
    if not np.all(np.isfinite(d)):
        raise ValueError("paired tests need finite per-query values (found NaN or infinity)")
    return d


# --- tests on a (pairs, queries) matrix of differences -------------------------------------------------


def _t_test_pvalues(d: np.ndarray, resamples: int = 0, seed: int = 0) -> np.ndarray:
    """Two-sided one-sample t-test of mean 0 on each row (= scipy.stats.ttest_rel)."""
    n = d.shape[1]
    mean = d.mean(axis=1)
    if n < 2:  # no variance estimate: nothing can be rejected
        return np.ones(d.shape[0])
    centered = d - mean[:, None]
    var = np.einsum("ij,ij->i", centered, centered) / (n - 1)
    p = np.empty(d.shape[0])
    constant = var == 0.0
    # Zero variance: identical systems cannot differ (p = 1); a constant shift is certain (p = 0).
    p[constant] = np.where(mean[constant] == 0.0, 1.0, 0.0)
    varying = ~constant
    t = mean[varying] / np.sqrt(var[varying] / n)
    p[varying] = 2.0 * stats.t.sf(np.abs(t), n - 1)
    return np.minimum(p, 1.0)


def _sign_flip_counts(d: np.ndarray, bits: np.ndarray, observed: np.ndarray,
                      tol: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many rows of `bits` (1 keeps, 0 flips a difference) give |sum| above the observed one, and how many
    equal to it (within the rounding bound `tol`), per pair."""
    total = d.sum(axis=1)
    above = np.zeros(d.shape[0], dtype=np.int64)
    equal = np.zeros(d.shape[0], dtype=np.int64)
    rows = max(1, _CHUNK_ELEMENTS // max(d.shape[0], d.shape[1]))
    for start in range(0, bits.shape[0], rows):
        kept = bits[start : start + rows].astype(np.float64) @ d.T  # sum of the kept differences
        flipped_sums = np.abs(2.0 * kept - total)
        at_least = np.count_nonzero(flipped_sums >= observed - tol, axis=0)
        strictly = np.count_nonzero(flipped_sums > observed + tol, axis=0)
        above += strictly
        equal += at_least - strictly
    return above, equal


def _randomization_pvalues(d: np.ndarray, resamples: int, seed: int, mid_p: bool = True) -> np.ndarray:
    """Two-sided sign-flip test of |mean difference|: exact when 2**n <= resamples, else Monte Carlo.

    Mid-p (the default): sign flips as extreme as the observed one count half. On discrete metrics many flips
    tie with the observed sum, and counting them whole makes the test conservative (its size measured at 1.5-3.8%
    at alpha 5%, tests/leaderboard/analysis/test_honest_simulation.py); mid-p brings it back to about alpha (Lancaster
    1961). mid_p=False gives the classical p = P(|T| >= |t|)."""
    n = d.shape[1]
    observed = np.abs(d.sum(axis=1))
    # Rounding bound of a sum of n terms, so that exact ties are never lost to summation order.
    tol = (n + 4) * _EPS * np.abs(d).sum(axis=1)
    above = np.zeros(d.shape[0], dtype=np.int64)
    equal = np.zeros(d.shape[0], dtype=np.int64)
    weight = 0.5 if mid_p else 1.0
    if n < 63 and 2**n <= resamples:
        assignments = 2**n
        block = max(1, _CHUNK_ELEMENTS // n)
        shifts = np.arange(n, dtype=np.int64)
        for start in range(0, assignments, block):
            codes = np.arange(start, min(start + block, assignments), dtype=np.int64)
            bits = ((codes[:, None] >> shifts) & 1).astype(np.uint8)
            counts = _sign_flip_counts(d, bits, observed, tol)
            above += counts[0]
            equal += counts[1]
        return _identical_rows_one(d, (above + weight * equal) / assignments)
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    rng = np.random.default_rng(seed)
    # The block size depends on n only, so the random stream (and p) does not depend on the pair count.
    block = max(1, (_CHUNK_ELEMENTS // 4) // n)
    n_bytes = (n + 7) // 8
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        raw = rng.integers(0, 256, size=(size, n_bytes), dtype=np.uint8)
        bits = np.unpackbits(raw, axis=1, count=n)
        counts = _sign_flip_counts(d, bits, observed, tol)
        above += counts[0]
        equal += counts[1]
    # the observed assignment is one of the resamples' equals: (count + 1) / (resamples + 1) in the classical form
    return _identical_rows_one(d, (above + weight * (equal + 1)) / (resamples + 1))


def _identical_rows_one(d: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Identical systems (all differences 0) cannot differ: p = 1, as for the t-test (mid-p would give 1/2, since
    every sign flip ties with the observed sum)."""
    p[~np.any(d, axis=1)] = 1.0
    return p


def _wilcoxon_pvalues(d: np.ndarray, resamples: int = 0, seed: int = 0, method: str = "auto") -> np.ndarray:
    """scipy.stats.wilcoxon with its defaults on each row; all-zero differences give p = 1."""
    p = np.ones(d.shape[0])
    for row in range(d.shape[0]):
        if np.any(d[row] != 0.0):
            p[row] = stats.wilcoxon(d[row], method=method).pvalue
    return p


@dataclass(frozen=True)
class _TestSpec:
    run: DifferenceTest
    text: str


PAIRED_TESTS: dict[str, _TestSpec] = {
    "t": _TestSpec(_t_test_pvalues, "Paired two-sided t-test"),
    "randomization": _TestSpec(_randomization_pvalues, "Paired two-sided randomization (sign-flip) test, mid-p"),
    "wilcoxon": _TestSpec(_wilcoxon_pvalues, "Wilcoxon signed-rank test"),
}


# --- single pair -------------------------------------------------------------------------------------


def paired_t_test(a, b) -> float:
    """Two-sided paired t-test p-value (scipy.stats.ttest_rel); 1.0 for identical vectors."""
    return float(_t_test_pvalues(_paired_differences(a, b)[None, :])[0])


def paired_randomization_test(a, b, resamples: int = 100_000, seed: int = 0, mid_p: bool = True) -> float:
    """Sign-flip test of the mean difference: exact over all 2**n flips when 2**n <= resamples,
    otherwise Monte Carlo, seeded. Mid-p: (above + equal / 2) / 2**n exact, (above + (equal + 1) / 2) /
    (resamples + 1) Monte Carlo; mid_p=False: (above + equal) / 2**n and (above + equal + 1) / (resamples + 1)."""
    return float(_randomization_pvalues(_paired_differences(a, b)[None, :], resamples, seed, mid_p)[0])


def wilcoxon_test(a, b, method: str = "auto") -> float:
    """Wilcoxon signed-rank p-value with scipy's defaults (`method="approx"`: normal approximation)."""
    return float(_wilcoxon_pvalues(_paired_differences(a, b)[None, :], method=method)[0])


def paired_test(a, b, method: str = "t", resamples: int = 100_000, seed: int = 0) -> float:
    """Two-sided p-value of the paired test named `method` (one of PAIRED_TESTS)."""
    _check_name("significance test", method, PAIRED_TESTS)
    d = _paired_differences(a, b)
    return float(PAIRED_TESTS[method].run(d[None, :], resamples, seed)[0])


# --- multiple testing ---------------------------------------------------------------------------------


def _adjust(pvalues, name: str, step: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Apply `step` to the ascending p-values and put the adjusted values back in the input's order."""
    p = np.asarray(pvalues, dtype=np.float64)
    if np.any(np.isnan(p)):
        raise ValueError(f"{name}() got NaN p-values")
    flat = p.ravel()
    # Tied p-values get the same adjusted value in whatever order they come (for both corrections), so a fast
    # unstable sort gives the same result as a stable one.
    order = np.argsort(flat)
    adjusted = np.empty(flat.size)
    adjusted[order] = np.minimum(step(flat[order]), 1.0)
    return adjusted.reshape(p.shape)


def holm(pvalues) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values: sorted p_(k) -> max_{j<=k} min(1, (m-j+1) p_(j))."""
    return _adjust(pvalues, "holm", lambda p: np.maximum.accumulate(p * (p.size - np.arange(p.size))))


def benjamini_hochberg(pvalues) -> np.ndarray:
    """Benjamini–Hochberg step-up adjusted p-values (false discovery rate):
    sorted p_(k) -> min_{j>=k} min(1, m p_(j) / j)."""
    return _adjust(pvalues, "benjamini_hochberg",
                   lambda p: np.minimum.accumulate((p * p.size / np.arange(1, p.size + 1))[::-1])[::-1])


CORRECTIONS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], str]] = {
    "bh": (benjamini_hochberg, "Benjamini–Hochberg correction (false discovery rate) over all pairs"),
    "holm": (holm, "Holm–Bonferroni correction (family-wise error rate) over all pairs"),
    "none": (lambda p: np.asarray(p, dtype=np.float64), "no multiple-testing correction"),
}


def corrected_matrix(pvalues, correction: str) -> np.ndarray:
    """A symmetric (m, m) matrix of uncorrected p-values with the correction applied over its m(m-1)/2 pairs."""
    _check_name("multiple-testing correction", correction, CORRECTIONS)
    p = np.asarray(pvalues, dtype=np.float64)
    first, second = np.triu_indices(p.shape[0], k=1)
    adjusted = CORRECTIONS[correction][0](p[first, second])
    matrix = np.ones_like(p)
    matrix[first, second] = adjusted
    matrix[second, first] = adjusted
    return matrix


def pairwise_pvalues(
    scores, method: str = "t", correction: str = "holm", resamples: int = 100_000, seed: int = 0
) -> np.ndarray:
    """Symmetric (models, models) matrix of corrected p-values from a (models, queries) score matrix.

    The correction runs over the m(m-1)/2 unique pairs; the diagonal is 1. Differences are formed for
    blocks of pairs at once, so the t-test is vectorised over all pairs."""
    _check_name("significance test", method, PAIRED_TESTS)
    _check_name("multiple-testing correction", correction, CORRECTIONS)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[1] == 0:
        raise ValueError(
            f"scores must be a (models, queries) matrix with queries > 0, got shape {scores.shape}"
        )
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores contain NaN or infinity")
    m, n = scores.shape
    first, second = np.triu_indices(m, k=1)
    raw = np.empty(first.size)
    run = PAIRED_TESTS[method].run
    exact = np.ones(first.size, dtype=bool)
    if method == "t" and n >= 2:  # all pairs from one matrix product: m^2 n / 2 operations fewer passes
        t, exact = _gram_t(scores, first, second)
    pairs = np.flatnonzero(exact)
    block = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, pairs.size, block):
        chosen = pairs[start:start + block]
        d = scores[first[chosen]] - scores[second[chosen]]
        raw[chosen] = run(d, resamples, seed)
    if method == "t" and n >= 2:
        varying = ~exact
        raw[varying] = (_holm_reachable_p(t, n - 1, raw[exact]) if correction == "holm"
                        else _two_sided_t_p(t, n - 1))
    adjusted = CORRECTIONS[correction][0](raw)
    matrix = np.ones((m, m))
    matrix[first, second] = adjusted
    matrix[second, first] = adjusted
    return matrix


def _gram_t(scores: np.ndarray, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(|t|, exact): the paired t statistics of the pairs (first[i], second[i]) whose differences vary, with the
    variance of each pair's differences from one Gram matrix of the centred scores: var(a - b) = var(a) + var(b) -
    2 cov(a, b); and the pairs to compute directly instead (bool per pair): those whose differences vary so little
    next to the scores themselves (below 1e-3 of it) that the subtraction would lose digits; identical and shifted
    systems among them get their exact p of 1 and 0 there."""
    n = scores.shape[1]
    means = scores.mean(axis=1)
    centred = scores - means[:, None]
    gram = centred @ centred.T
    own = np.diag(gram)
    squares = own[first] + own[second] - 2.0 * gram[first, second]
    exact = ~(squares > 1e-3 * (own[first] + own[second]))
    varying = ~exact
    t = (means[first[varying]] - means[second[varying]]) / np.sqrt(squares[varying] / (n - 1) / n)
    return np.abs(t), exact


def _two_sided_t_p(t: np.ndarray, df: int) -> np.ndarray:
    """The two-sided p-values of |t| at df degrees of freedom."""
    return np.minimum(2.0 * t_sf(t, df), 1.0)


def _holm_reachable_p(t: np.ndarray, df: int, others: np.ndarray) -> np.ndarray:
    """_two_sided_t_p(t, df) where Holm's correction over these members and `others` (the family's other p-values)
    could give a corrected value below 1, and 1 elsewhere: the same corrected values as every exact p-value gives.

    Holm's corrected value is min(1, max over j <= k of (family - j + 1) p_(j)), so once that reaches 1 every larger
    p-value is corrected to 1 whatever it is. The p-values are computed for the largest |t| first (the smallest p,
    the same order: one df), more each round, until a member among those whose rank is then known reaches 1; the
    others stand at 1, which leaves every rank before them as it was. The tail costs most of a large board's tests:
    its family of 499,500 pairs at 1,000 models reaches 1 long before its last p-value."""
    family = t.size + others.size
    p = np.ones(t.size)
    done = np.zeros(t.size, dtype=bool)
    level = min(1.0, 4.0 / max(family, 1))
    while True:
        # every member with a |t| at least `cut` is computed; those short of it have a p-value at least p(cut)
        cut = float(t_isf(level / 2, df)) if level < 1 else -np.inf
        new = ~done & (t >= cut)
        p[new] = _two_sided_t_p(t[new], df)
        done |= new
        if level >= 1 or done.all():
            return p
        # the members below p(cut), short of it by more than any rounding of the tail, have their ranks known
        below = float(_two_sided_t_p(np.array([cut]), df)[0]) * (1 - 1e-9)
        known = np.sort(np.concatenate([p[done], others]))
        known = known[known < below]
        if known.size and np.max(known * (family - np.arange(known.size))) >= 1.0:
            return p
        level = min(1.0, level * 16)


def wins_ties_losses(a, b, tol: float = 1e-9) -> tuple[int, int, int]:
    """Per-query comparison of a against b: (queries where a > b + tol, |a - b| <= tol, a < b - tol)."""
    d = _paired_differences(a, b)
    wins = int(np.count_nonzero(d > tol))
    losses = int(np.count_nonzero(d < -tol))
    return wins, d.size - wins - losses, losses


# --- bootstrap confidence interval of the mean --------------------------------------------------------


def _bootstrap_means(x: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = x.size
    block = max(1, _CHUNK_ELEMENTS // n)
    means = np.empty(resamples)
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        means[start : start + size] = x[rng.integers(0, n, size=(size, n))].mean(axis=1)
    return means


def _percentile_bounds(x: np.ndarray, means: np.ndarray, alpha: float) -> tuple[float, float]:
    low, high = np.percentile(means, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)


def _bca_bounds(x: np.ndarray, means: np.ndarray, alpha: float) -> tuple[float, float]:
    """Efron's bias-corrected and accelerated interval (An Introduction to the Bootstrap, 14.3)."""
    theta = x.mean()
    b = means.size
    # Bias correction: normal quantile of the share of bootstrap means below the estimate (ties half).
    share = (np.count_nonzero(means < theta) + np.count_nonzero(means <= theta)) / (2 * b)
    z0 = special.ndtri(np.clip(share, 0.5 / b, 1 - 0.5 / b))
    # Acceleration from the jackknife (leave-one-out means).
    jack = (x.sum() - x) / (x.size - 1)
    dev = jack.mean() - jack
    largest = np.abs(dev).max()
    if largest > 0:
        dev = dev / largest  # the acceleration is scale-free; rescaling avoids underflow of dev**3
        accel = np.sum(dev**3) / (6.0 * np.sum(dev**2) ** 1.5)
    else:
        accel = 0.0
    levels = []
    for z in (special.ndtri(alpha / 2), special.ndtri(1 - alpha / 2)):
        levels.append(special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z))))
    low, high = np.percentile(means, [100 * levels[0], 100 * levels[1]])
    return float(low), float(high)


CI_METHODS: dict[str, tuple[Callable[[np.ndarray, np.ndarray, float], tuple[float, float]], str]] = {
    "percentile": (_percentile_bounds, "percentile"),
    "bca": (_bca_bounds, "BCa"),
}


def bootstrap_ci(
    x, method: str = "percentile", resamples: int = 10_000, seed: int = 0, confidence: float = 0.95
) -> tuple[float, float]:
    """Bootstrap confidence interval of the mean of x (resampling queries with replacement, seeded)."""
    _check_name("bootstrap CI method", method, CI_METHODS)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"bootstrap_ci needs a non-empty 1-D array of finite values, got shape {x.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if np.all(x == x[0]):
        return float(x[0]), float(x[0])
    means = _bootstrap_means(x, resamples, seed)
    return CI_METHODS[method][0](x, means, 1 - confidence)


# --- score interval of the mean of a bounded metric ---------------------------------------------------


def score_intervals(scores, confidence: float = 0.95, quantile: float | None = None) -> np.ndarray:
    """(rows, 2) confidence interval of the mean of each row of a (rows, queries) matrix.

    Rows within [0, 1] get Wilson's score interval with an effective number of queries n / kappa, where
    kappa = s^2 / (m (1 - m)) compares the row's variance (divide by n) with that of 0/1 values of the same
    mean: for 0/1 values it is Wilson's interval, for others the variance keeps the mean-variance link of a bounded
    metric, which is what makes low means skewed. The quantile is Student's t with n - 1 degrees of freedom
    (`quantile` overrides it; the normal one gives scipy's Wilson interval on 0/1 values). Chosen by simulation
    over percentile, BCa, t and studentized bootstrap intervals (docs/statistics.md). All-0 and all-1 rows keep
    kappa = 1 (the interval of 0 or n successes); other constant rows get a zero-width interval; rows outside
    [0, 1] get the t-interval (s^2 / n with the n - 1 divisor there)."""
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"score_intervals needs a (rows, queries) matrix of finite values, got shape {x.shape}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    n = x.shape[1]
    q = float(stats.t.ppf(0.5 + confidence / 2, max(n - 1, 1))) if quantile is None else float(quantile)
    mean = x.mean(axis=1)
    var = x.var(axis=1)  # divide by n: kappa = 1 exactly for 0/1 values; the t quantile widens small samples
    bounded = (x.min(axis=1) >= 0.0) & (x.max(axis=1) <= 1.0)
    interval = score_bounds(mean, var / n, np.full(mean.size, 1.0 / n), np.full(mean.size, q), bounded)
    if n > 1 and not bounded.all():  # the t-interval proper: the variance divided by n - 1
        half = q * np.sqrt(var[~bounded] / (n - 1))
        interval[~bounded] = np.stack([mean[~bounded] - half, mean[~bounded] + half], axis=1)
    return interval


def score_bounds(mean, mean_variance, binary_share, quantile, bounded) -> np.ndarray:
    """(rows, 2) score interval of means from their variances (the formula of score_intervals, which see).

    A weighted mean of several datasets' means (a group mean) has mean_variance = sum_k w_k^2 s_k^2 / n_k and
    binary_share = sum_k w_k^2 / n_k (what mean_variance would be for 0/1 values of mean 1/2, times 4); with one
    dataset they are s^2 / n and 1 / n. `quantile`: per row; rows not `bounded` to [0, 1] get the t-interval."""
    mean = np.asarray(mean, dtype=np.float64)
    mean_variance = np.asarray(mean_variance, dtype=np.float64)
    binary_spread = mean * (1.0 - mean)
    q2 = np.square(quantile)
    with np.errstate(divide="ignore", invalid="ignore"):
        # c = q^2 / effective queries; all-0 and all-1 rows are taken as 0/1 values (kappa = 1)
        c = np.where(binary_spread > 0, q2 * mean_variance / np.where(binary_spread > 0, binary_spread, 1.0),
                     q2 * binary_share)
    centre = (mean + c / 2) / (1 + c)
    half = np.sqrt(c * binary_spread + c * c / 4) / (1 + c)
    t_half = quantile * np.sqrt(mean_variance)
    low = np.where(bounded, centre - half, mean - t_half)
    high = np.where(bounded, centre + half, mean + t_half)
    # rounding may leave the mean a hair outside a near-zero-width interval
    return np.stack([np.minimum(low, mean), np.maximum(high, mean)], axis=1)


def score_interval(x, confidence: float = 0.95) -> tuple[float, float]:
    """score_intervals of one vector of per-query values."""
    low, high = score_intervals(np.asarray(x, dtype=np.float64)[None, :], confidence)[0]
    return float(low), float(high)


CI_TEXT = {"score": "score interval (Wilson's, with the effective number of queries)",
           "percentile": "percentile bootstrap", "bca": "BCa bootstrap"}


# --- settings shown on the page -----------------------------------------------------------------------


@dataclass(frozen=True)
class TestSettings:
    """Significance settings of a leaderboard build; `describe()` is the sentence the page shows."""

    __test__ = False  # not a pytest test class despite its name

    method: str = "t"
    alpha: float = 0.05
    correction: str = "holm"  # the site default: ranks need a family-wise guarantee; the method page says why
    resamples: int = 100_000
    seed: int = 0
    ci_method: str = "score"  # of each dataset mean; group means always use the percentile bootstrap
    ci_resamples: int = 10_000

    def __post_init__(self) -> None:
        _check_name("significance test", self.method, PAIRED_TESTS)
        _check_name("multiple-testing correction", self.correction, CORRECTIONS)
        _check_name("CI method", self.ci_method, CI_TEXT)
        if not 0 < self.alpha < 1:
            raise IrboardError(f"significance alpha must be in (0, 1), got {self.alpha}; use e.g. 0.05")
        if self.resamples < 1 or self.ci_resamples < 1:
            raise IrboardError(
                f"resamples must be >= 1, got resamples={self.resamples}, ci_resamples={self.ci_resamples}"
            )

    def describe(self) -> str:
        test = PAIRED_TESTS[self.method].text
        if self.method == "randomization":
            test += f" ({self.resamples:,} resamples, exact when all sign flips fit)"
        correction = CORRECTIONS[self.correction][1]
        ci = CI_TEXT[self.ci_method]
        resampled = "" if self.ci_method == "score" else f", {self.ci_resamples:,} resamples, seed {self.seed}"
        return f"{test}, {correction}, α = {self.alpha:g}; dataset means with a {100 * (1 - self.alpha):.10g}% {ci}{resampled}."
