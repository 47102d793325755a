"""The interval a corrected verdict rests on, so that a page never shows an interval that tells another story.

A corrected p-value p_adj of a pair whose uncorrected t-test gives p_raw rejects at alpha exactly when p_raw is
below alpha * p_raw / p_adj: that ratio is the level at which the correction tested this pair (alpha / pairs for
Bonferroni; alpha / (pairs - step + 1) for Holm at the pair's step). A pair the correction rejects gets the
two-sided t-interval at that level, which excludes 0; a pair it does not reject gets Bonferroni's simultaneous
interval (level alpha / pairs), which then holds 0 (its p_raw is above alpha / pairs). So the interval excludes 0
exactly when the corrected test rejects, and the intervals of all pairs not found different hold their true
differences together with probability at least 1 - alpha: that is what makes "equivalent" (the interval within
the margin) a claim with family-wise error at most alpha. Giving such pairs the level of Holm's last step instead
would not: the pairs left at the end are those with small observed differences, and a simulation with every
neighbouring pair at the margin called one equivalent 12% of the time
(tests/leaderboard/analysis/test_predictive_simulation.py).

The per-model data files carry corrected p-values rounded (`shown_pvalue`); the pages compute the interval from
that shown value, here and in site/js/pairs.js alike, so both print the same numbers.
"""

from __future__ import annotations

import numpy as np
from scipy import special


def shown_pvalue(p, alpha: float) -> np.ndarray:
    """Corrected p-values as the data files and pages carry them: four decimals, rounded away from alpha (down below
    it, up from it) so the rounded value keeps its side; below 1e-4, three significant digits (never 0 for p > 0)."""
    shape = np.shape(p)
    p = np.atleast_1d(np.asarray(p, dtype=np.float64))
    scaled = p * 10_000
    rounded = np.where(p < alpha, np.floor(scaled), np.ceil(scaled)) / 10_000
    small = (p > 0) & (p < 1e-4)
    if small.any():
        exponent = np.floor(np.log10(np.where(small, p, 1.0))) - 2
        digits = np.floor(p / 10.0**exponent * (1 + 1e-12)) * 10.0**exponent  # down: below 1e-4 < alpha
        texts = [float(f"{value:.3g}") for value in np.maximum(digits, 10.0**exponent)[small]]  # exact decimals
        rounded[small] = texts
    return np.minimum(rounded, 1.0).reshape(shape)


def pvalue_text(value: float, alpha: float = 0.05) -> str:
    """Three decimals, or as many more as keep the printed value off alpha and on the same side of it as the p-value
    (0.0498 and 0.0502, never 0.050 at alpha = 0.05); the pages, the pull-request summary and the API print p so."""
    if value < 0.001:
        return "< 0.001"
    for digits in range(3, 10):
        text = f"{value:.{digits}f}"
        if float(text) != alpha and (float(text) < alpha) == (value < alpha):
            return text
    return repr(float(value))


def verdict_level(p_raw, p_adj, alpha: float, pairs: int = 1) -> np.ndarray:
    """The level of each pair's interval: where the correction rejects, the level it tested the pair at,
    alpha * p_raw / p_adj; elsewhere alpha / pairs (Bonferroni's simultaneous level; pairs: the family's size, 1
    without a correction)."""
    p_raw = np.asarray(p_raw, dtype=np.float64)
    p_adj = np.asarray(p_adj, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tested = np.where(p_adj > 0, alpha * p_raw / np.where(p_adj > 0, p_adj, 1.0), alpha)
    level = np.where(p_adj < alpha, tested, np.minimum(alpha / max(pairs, 1), tested))
    return np.clip(level, 1e-300, 1.0)


def t_sf(t, df) -> np.ndarray:
    """stats.t.sf(t, df) for df >= 1, the same values without its argument checks (special.stdtr is its _sf, and
    the checks cost more than the tail itself on a few thousand values)."""
    return special.stdtr(np.asarray(df, dtype=np.float64), -np.asarray(t, dtype=np.float64))


def t_isf(p, df):
    """stats.t.isf(p, df) for df >= 1 and p in [0, 1], the same values (its _isf) without its argument checks."""
    return -special.stdtrit(np.asarray(df, dtype=np.float64), np.asarray(p, dtype=np.float64))


def t_pvalue(diff, se, df) -> np.ndarray:
    """Two-sided t-test p-value of a difference with standard error `se` (se 0: 1 for no difference, else 0)."""
    diff = np.asarray(diff, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(diff) / np.where(se > 0, se, 1.0)
    p = 2.0 * t_sf(t, np.maximum(df, 1))
    return np.where(se > 0, np.minimum(p, 1.0), np.where(diff == 0, 1.0, 0.0))


def verdict_interval(diff, se, df, p_adj, alpha: float, pairs: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the interval beside a corrected verdict (module docstring), from the shown corrected p-value;
    it excludes 0 exactly when p_adj < alpha. `pairs`: the size of the correction's family (1 without one)."""
    diff = np.asarray(diff, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    level = verdict_level(t_pvalue(diff, se, df), p_adj, alpha, pairs)
    half = np.where(se > 0, t_isf(level / 2, np.maximum(df, 1)) * se, 0.0)
    return diff - half, diff + half


# --- equivalence: better, worse, equivalent or undetermined ----------------------------------------------------

DEFAULT_MARGIN = 0.01  # one point of the metric ×100 (e.g. nDCG@10 0.01): SiteSettings.margins overrides per metric
VERDICTS = ("better", "worse", "equivalent", "undetermined")


def verdict_words(diff, low, high, p_adj, alpha: float, margin: float) -> np.ndarray:
    """Per pair (row minus column): "better" or "worse" where the corrected test rejects; else "equivalent" where
    the verdict's interval (Bonferroni's simultaneous one for these pairs) lies within (-margin, margin): two
    one-sided tests at alpha / (2 pairs) each, so the equivalence claims are all true together with probability
    at least 1 - alpha; else "undetermined"."""
    diff = np.asarray(diff, dtype=np.float64)
    significant = np.asarray(p_adj) < alpha
    inside = (np.asarray(low) > -margin) & (np.asarray(high) < margin)
    return np.where(significant, np.where(diff > 0, "better", "worse"),
                    np.where(inside, "equivalent", "undetermined"))


def family_size(models: int, correction: str) -> int:
    """The number of pairs a correction runs over (1 without a correction: each pair is its own family)."""
    return 1 if correction == "none" else max(models * (models - 1) // 2, 1)
