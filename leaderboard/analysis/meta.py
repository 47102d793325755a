"""Will A beat B on a dataset like mine? Random-effects meta-analysis of one pair's per-dataset differences.

Each dataset of a group gives the pair's paired mean difference y_k with its variance v_k = s_k^2 / n_k (s_k: SD of
the per-query differences). The datasets' true differences are taken as drawn from a normal distribution of
mean mu and spread tau (the datasets of a group are exchangeable: a new dataset "of the group" is one more draw):

- tau^2 by Paule and Mandel (the generalised Q statistic sum w_k (y_k - mu_w)^2, w_k = 1 / (v_k + tau^2), equal to
  its expectation k - 1; 0 when Q at tau = 0 is already below it);
- mu with the hull of two intervals, each t with k - 1 degrees of freedom (`mean_interval`): the modified
  Hartung-Knapp-Sidik-Jonkman interval, variance max(q, 1) / sum w_k with q = Q / (k - 1) (Roever, Knapp & Friede
  2015; Jackson, Law, Ruecker & Schwarzer 2017: with the Paule-Mandel tau, q < 1 exactly when tau is estimated 0, and
  the plain Hartung-Knapp interval is then narrower than the fixed-effect one just when the spread is hidden), and
  the t-interval of the unweighted mean of the units' differences, which targets the mean over the population of
  datasets whatever the weights (when a dataset's true difference is linked to its size, the weighted mean leans to
  the large datasets' difference: 60% coverage at 10 datasets in tests/leaderboard/analysis/simulate_claims.py);
- the prediction interval for the true difference on a new dataset of the group (Higgins, Thompson &
  Spiegelhalter 2009): mu +- t_{k-2} sqrt(tau_u^2 + se^2), with se^2 the larger of 1 / sum w_k and the
  Hartung-Knapp variance (never narrower than either), and the probability that A beats B there,
  P(T_{k-2} < mu / sqrt(tau_u^2 + se^2)). tau_u is the upper end of the one-sided 80% Q-profile interval of tau
  (the Q statistic equal to the 20% quantile of chi^2_{k-1}; Viechtbauer 2007): with the point estimate the
  interval covered a new dataset's difference only 85-91% of the time where the spread between datasets is
  small next to their own errors (tau is then often estimated 0), with tau_u 95-99% for 4-30 datasets
  (tests/leaderboard/analysis/test_predictive_simulation.py, docs/statistics.md).

Equivalence of the pooled difference (`equivalence`): that interval at level alpha / pairs (Bonferroni over the
pairs of the family, as the other verdicts: analysis/verdicts.py) lying within (-margin, margin), i.e. two one-sided
tests at alpha / (2 pairs) each; all of a family's pooled equivalence claims then hold together with probability at
least 1 - alpha where the interval keeps its level. With fewer than MIN_EQUIVALENCE_UNITS units no claim is made:
the interval's level rests on the true differences spreading roughly normally, and with few datasets a rare kind of
dataset (a two-point spread, 20% of datasets apart) is often missing from the sample altogether (0.8^k of the
time), which no interval over the sample can see. It is a claim about mu, the mean over the group's population of
datasets; a new dataset's difference may still exceed the margin (the prediction interval says by how much).

Datasets below a common parent (beir/cqadupstack/*) are one unit, as in the group means: their differences are
averaged first. With one unit there is nothing to pool; the prediction needs at least three.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy import optimize, stats

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Pooled:
    """Random-effects summary of one pair over the datasets of a group (difference A - B)."""

    datasets: int  # k: units pooled
    mean: float  # mu: the pooled difference
    ci: tuple[float, float] | None  # Hartung-Knapp interval of mu (None with one unit)
    tau: float  # between-dataset SD of the true differences (Paule-Mandel)
    prediction: tuple[float, float] | None  # for a new dataset of the group (None below three units)
    p_beats: float | None  # P(A's true difference over B is above 0 on a new dataset)
    se: float | None = None  # modified Hartung-Knapp standard error of mu (q floored at 1; None with one unit)
    plain_mean: float | None = None  # the unweighted mean of the units' differences (None with one unit)
    plain_se: float | None = None  # its standard error, SD / sqrt(k) (None with one unit)


def _q(tau2: float, y: np.ndarray, v: np.ndarray) -> float:
    w = 1.0 / (v + tau2)
    mu = np.sum(w * y) / np.sum(w)
    return float(np.sum(w * (y - mu) ** 2))


UPPER_TAU_QUANTILE = 0.2  # tau_u: Q equal to this quantile of chi^2_{k-1} (an 80% upper confidence bound of tau)


def paule_mandel(y, v, target: float | None = None) -> float:
    """tau^2 solving sum w (y - mu_w)^2 = target (default k - 1: Paule-Mandel; a quantile of chi^2_{k-1}: that end
    of the Q-profile confidence interval), 0 when the left side is already below the target at tau^2 = 0."""
    y = np.asarray(y, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    k = y.size
    if k < 2:
        return 0.0
    floor = max(float(v.max()), 1e-300) * 1e-12
    v = np.maximum(v, floor)  # a zero variance (a constant shift) weighs a lot, never infinitely
    target = k - 1 if target is None else target
    if _q(0.0, y, v) <= target:
        return 0.0
    high = max(float(np.var(y, ddof=1)), floor)
    while _q(high, y, v) > target:
        high *= 2.0
    return float(optimize.brentq(lambda t2: _q(t2, y, v) - target, 0.0, high, xtol=1e-14 * high, rtol=1e-12))


def pool(y, v, confidence: float = CONFIDENCE) -> Pooled:
    """Random-effects summary of differences y_k with variances v_k (one per unit)."""
    y = np.asarray(y, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    k = y.size
    if k == 0:
        raise ValueError("pool needs at least one dataset")
    if k == 1:
        return Pooled(1, float(y[0]), None, 0.0, None, None)
    floor = max(float(v.max()), 1e-300) * 1e-12
    v = np.maximum(v, floor)
    tau2 = paule_mandel(y, v)
    w = 1.0 / (v + tau2)
    mu = float(np.sum(w * y) / np.sum(w))
    plain = 1.0 / float(np.sum(w))
    hk = max(float(np.sum(w * (y - mu) ** 2)) / (k - 1), 1.0) * plain  # modified Hartung-Knapp: q >= 1
    level = 0.5 + confidence / 2
    prediction = p_beats = None
    if k >= 3:
        upper = paule_mandel(y, v, float(stats.chi2.ppf(UPPER_TAU_QUANTILE, k - 1)))
        scale = np.sqrt(upper + max(plain, hk))
        spread = float(stats.t.ppf(level, k - 2)) * scale
        prediction = (float(mu - spread), float(mu + spread))
        p_beats = float(stats.t.cdf(mu / scale, k - 2)) if scale > 0 else float(mu > 0)
    fit = Pooled(k, mu, None, float(np.sqrt(tau2)), prediction, p_beats, float(np.sqrt(hk)), float(y.mean()),
                 float(y.std(ddof=1)) / np.sqrt(k))
    return replace(fit, ci=mean_interval(fit, 1 - confidence))


def mean_interval(fit: Pooled, alpha: float) -> tuple[float, float] | None:
    """The two-sided 1 - alpha interval of the population mean mu: the hull of the modified Hartung-Knapp interval
    (t_{k-1}) and the t-interval of the unweighted mean of the units (module docstring). None with one unit."""
    if fit.se is None:
        return None
    t = float(stats.t.isf(alpha / 2, fit.datasets - 1))
    return (min(fit.mean - t * fit.se, fit.plain_mean - t * fit.plain_se),
            max(fit.mean + t * fit.se, fit.plain_mean + t * fit.plain_se))


MIN_EQUIVALENCE_UNITS = 15  # fewer units: no pooled equivalence claim (module docstring)


def equivalence_withheld(units: int) -> str | None:
    """Why a pooled equivalence verdict is not given over this many units, or None where it is."""
    if units >= MIN_EQUIVALENCE_UNITS:
        return None
    return (f"withheld: {units} dataset unit{'s' if units != 1 else ''}, fewer than the {MIN_EQUIVALENCE_UNITS} "
            "pooled equivalence needs (with fewer, a rare kind of dataset is often missing from the sample, and the "
            "interval's level no longer holds: docs/statistics.md)")


def equivalence(fit: Pooled, alpha: float, pairs: int, margin: float) -> tuple[float, float, bool] | None:
    """(low, high, equivalent): the interval of the pooled difference (mean_interval) at level alpha / pairs (the
    family's Bonferroni level; pairs 1 without a correction) and whether it lies within (-margin, margin); never
    equivalent below MIN_EQUIVALENCE_UNITS units (equivalence_withheld says why). None with one unit."""
    interval = mean_interval(fit, alpha / max(pairs, 1))
    if interval is None:
        return None
    low, high = interval
    return low, high, bool(low > -margin and high < margin and equivalence_withheld(fit.datasets) is None)


def unit_differences(diffs, variances, units) -> tuple[np.ndarray, np.ndarray]:
    """Per-dataset differences and variances of their means averaged within each unit (datasets sharing a parent),
    in the order units first appear."""
    order: dict[str, list[int]] = {}
    for i, unit in enumerate(units):
        order.setdefault(unit, []).append(i)
    diffs = np.asarray(diffs, dtype=np.float64)
    variances = np.asarray(variances, dtype=np.float64)
    y = np.array([diffs[rows].mean() for rows in order.values()])
    v = np.array([variances[rows].sum() / len(rows) ** 2 for rows in order.values()])
    return y, v
