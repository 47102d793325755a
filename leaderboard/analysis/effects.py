"""Effect sizes, power and what a dataset can tell apart.

With thousands of queries nearly any difference is significant, so every p-value on the site comes with the
size of the difference: the paired mean difference with its t-interval (the interval of the test in use, so it
excludes 0 exactly when the uncorrected t-test rejects) and the standardised effect d_z = mean / SD of the
per-query differences (Cohen's d for paired samples). Per dataset: the minimum detectable effect at 80% power
and the share of model pairs the corrected tests separate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

POWER = 0.8
# A difference of less than 5% of the dataset's typical score is not "meaningful" (Sparck Jones 1974: 5% is
# noticeable; Voorhees & Buckley 2002 use the same relative bound).
MEANINGFUL_SHARE = 0.05
# Asymptotic relative efficiency of the Wilcoxon signed-rank test against the t-test for normal differences:
# it needs about pi/3 times as many queries for the same power.
WILCOXON_EFFICIENCY = 3 / np.pi


@dataclass(frozen=True, eq=False)
class PairEffects:
    """All pairs of one dataset, as (models, models) matrices; row minus column."""

    diff: np.ndarray  # mean difference
    low: np.ndarray  # CI of the mean difference
    high: np.ndarray
    sd: np.ndarray  # SD of the per-query differences
    dz: np.ndarray  # standardised effect: diff / SD of the differences (0 when both are 0, ±inf for a shift)


def t_critical(n: int, confidence: float = 0.95) -> float:
    """Half-width factor of the t-interval of a mean of n values: the t quantile at 0.5 + confidence / 2."""
    return float(stats.t.ppf(0.5 + confidence / 2, max(n - 1, 1)))


def _dz(diff: np.ndarray, sd: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sd > 0, diff / np.where(sd > 0, sd, 1.0), np.where(diff == 0, 0.0, np.sign(diff) * np.inf))


def spread(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean difference, SD of the per-query differences) of every pair of rows (n >= 2), from one covariance
    matrix: var(a - b) = var(a) + var(b) - 2 cov(a, b)."""
    n = scores.shape[1]
    means = scores.mean(axis=1)
    diff = means[:, None] - means[None, :]
    centered = scores - means[:, None]
    cov = centered @ centered.T / (n - 1)
    var = np.diag(cov)
    total = var[:, None] + var[None, :]
    var_diff = total - 2 * cov
    var_diff[var_diff <= 1e-12 * total] = 0.0  # identical rows or a constant shift, up to rounding
    return diff, np.sqrt(var_diff)


def _with_intervals(diff: np.ndarray, sd: np.ndarray, n: int, confidence: float) -> PairEffects:
    """Element by element, so a column of the matrices gives that column of the full result exactly."""
    half = t_critical(n, confidence) * sd / np.sqrt(n)
    return PairEffects(diff, diff - half, diff + half, sd, _dz(diff, sd))


def pair_effects(scores, confidence: float = 0.95) -> PairEffects:
    """Effect sizes of every pair of rows of a (models, queries) matrix (row minus column)."""
    scores = np.asarray(scores, dtype=np.float64)
    m, n = scores.shape
    if n < 2:
        means = scores.mean(axis=1)
        diff = means[:, None] - means[None, :]
        nan, zero = np.full((m, m), np.nan), np.zeros((m, m))
        return PairEffects(diff, nan, nan.copy(), zero, _dz(diff, zero))
    return _with_intervals(*spread(scores), n, confidence)


def dataset_effects(scores, baseline: int | None, pvalues, alpha: float, method: str,
                    confidence: float = 0.95, pair_spread=None) -> tuple[PairEffects | None, Separability]:
    """What a dataset keeps of pair_effects: every row against row `baseline` (PairEffects of (models,) vectors,
    None without a baseline) and the separability summary (scores ranked best first). The same numbers as
    pair_effects and separability, without holding its five (models, models) matrices (40 MB a dataset at 1,000
    models). `pair_spread`: spread(scores), when the caller has it."""
    scores = np.asarray(scores, dtype=np.float64)
    n = scores.shape[1]
    if n < 2:
        pairs = pair_effects(scores, confidence)
        diff, sd = pairs.diff, pairs.sd
        against = None if baseline is None else PairEffects(*(part[:, baseline] for part in (
            pairs.diff, pairs.low, pairs.high, pairs.sd, pairs.dz)))
    else:
        diff, sd = spread(scores) if pair_spread is None else pair_spread
        against = None if baseline is None else _with_intervals(diff[:, baseline], sd[:, baseline], n, confidence)
    return against, _separability(scores.mean(axis=1), diff, sd, pvalues, n, alpha, method)


def paired_effect(a, b, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """(mean difference, CI low, CI high, d_z) of a - b for one pair of aligned per-query vectors."""
    effects = pair_effects(np.stack([np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)]), confidence)
    return (float(effects.diff[0, 1]), float(effects.low[0, 1]), float(effects.high[0, 1]),
            float(effects.dz[0, 1]))


def t_power(dz: float, n: int, alpha: float) -> float:
    """Power of the two-sided one-sample (paired) t-test at standardised effect dz with n queries."""
    df = n - 1
    crit = stats.t.isf(alpha / 2, df)
    nc = dz * np.sqrt(n)
    # the lower tail as the upper tail of the mirrored distribution: scipy's nct.cdf gives NaN far in the tail
    return float(stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc))


def minimum_detectable_effect(n: int, alpha: float, method: str = "t", power: float = POWER) -> float:
    """The smallest standardised effect d_z the test finds with probability `power` at level alpha (two-sided).

    t and randomization: the t-test's power (the sign-flip test has the same large-sample power); wilcoxon:
    the t-test's with n scaled by its asymptotic relative efficiency 3/pi."""
    effective = n * WILCOXON_EFFICIENCY if method == "wilcoxon" else n
    if effective < 2:
        return float("inf")
    high = 1.0
    while t_power(high, effective, alpha) < power:  # smallest power-of-two bracket: nct is unstable far out
        high *= 2
    return float(optimize.brentq(lambda d: t_power(d, effective, alpha) - power, 1e-9, high, xtol=1e-12))


@dataclass(frozen=True)
class Separability:
    """What one dataset can tell apart (main metric, all models ranked on it)."""

    pairs: int
    separable: int  # pairs with corrected p < alpha
    adjacent: int  # pairs of models next to each other in the ranking
    adjacent_separable: int
    meaningful: int  # pairs with |difference| >= threshold
    threshold: float  # "meaningful difference" in metric units
    mde_dz: float  # minimum detectable standardised effect at 80% power, one comparison at alpha
    typical_sd: float  # median SD of the per-query differences over all pairs
    mde: float  # mde_dz * typical_sd: the same in metric units
    mde_corrected: float = float("nan")  # the same at alpha / pairs (Bonferroni, Holm's first step), metric units

    @property
    def separable_share(self) -> float | None:
        return self.separable / self.pairs if self.pairs else None

    @property
    def adjacent_share(self) -> float | None:
        return self.adjacent_separable / self.adjacent if self.adjacent else None


def meaningful_threshold(means) -> float:
    """5% of the median model mean on the dataset (its typical score)."""
    return MEANINGFUL_SHARE * float(np.median(np.asarray(means, dtype=np.float64)))


def separability(means, effects: PairEffects, pvalues, n: int, alpha: float, method: str) -> Separability:
    """Summary of a dataset whose models are ranked best first (means descending)."""
    return _separability(means, effects.diff, effects.sd, pvalues, n, alpha, method)


def _separability(means, diff: np.ndarray, sd: np.ndarray, pvalues, n: int, alpha: float,
                  method: str) -> Separability:
    means = np.asarray(means, dtype=np.float64)
    m = means.size
    first, second = np.triu_indices(m, k=1)
    significant = np.asarray(pvalues)[first, second] < alpha
    adjacent = second == first + 1
    threshold = meaningful_threshold(means) if m else 0.0
    sd = sd[first, second]
    typical = float(np.median(sd)) if sd.size else 0.0
    mde_dz = minimum_detectable_effect(n, alpha, method)
    corrected_dz = minimum_detectable_effect(n, alpha / max(int(first.size), 1), method)
    return Separability(
        pairs=int(first.size), separable=int(significant.sum()), adjacent=int(adjacent.sum()),
        adjacent_separable=int((significant & adjacent).sum()),
        meaningful=int((np.abs(diff[first, second]) >= threshold).sum()), threshold=threshold,
        mde_dz=mde_dz, typical_sd=typical, mde=mde_dz * typical, mde_corrected=corrected_dz * typical,
    )
