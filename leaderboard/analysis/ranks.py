"""Ranks with a guarantee: rank ranges and tie bands from corrected pairwise tests, for datasets and group means.

One rule serves every ranking on the site (Al Mohamad, Goeman & van Zwet 2022, "Simultaneous confidence
intervals for ranks using the partitioning principle"; Holm 1979): test every pair of ranked models, correct over
the pairs, and call a model better than another only where the corrected test rejects. A model's rank range is
[1 + models significantly better, models - models significantly worse]. With Holm's correction (the site default)
all pairwise claims hold together with probability at least 1 - alpha, so all rank ranges hold their true ranks at
once with that probability (up to the sign errors of two-sided tests, which the simulation in
tests/leaderboard/analysis/test_honest_simulation.py measures). The same decisions make the tie bands.

Group means: a group mean is a weighted sum of dataset means over fixed datasets, whose queries are independent
across datasets, so the difference of two models' group means has variance sum_k w_k^2 var_k / n_k (var_k: the
variance of the per-query differences on dataset k) and is tested with Welch-Satterthwaite degrees of freedom;
on a one-dataset group this is the paired t-test.

`GroupBootstrap` (resampled means) gives the group means' confidence intervals.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


class GroupBootstrap:
    """Weighted sum of per-dataset bootstrap means, filled dataset by dataset. Held model by model (each model's
    resamples contiguous), so that adding a dataset's models moves whole rows; `boot` is the (resamples, models)
    view of it. `resample_units` also resamples the group's units (datasets, beir/cqadupstack/* as one)."""

    def __init__(self, models: int, resamples: int, units: list[str], resample_units: bool = False, seed: int = 0):
        self.by_model = np.zeros((models, resamples), dtype=np.float32)
        self.units = sorted(set(units))
        self.multiplicity = None
        if resample_units:
            rng = np.random.default_rng([seed, len(self.units)])
            count = len(self.units)
            self.multiplicity = rng.multinomial(count, np.full(count, 1 / count), size=resamples).astype(np.float32)

    @property
    def boot(self) -> np.ndarray:
        return self.by_model.T

    def add(self, columns, weight: float, unit: str, boot: np.ndarray) -> None:
        """Add a dataset's (resamples, len(columns)) bootstrap means with its weight in the group mean."""
        factor = np.float32(weight)
        if self.multiplicity is not None:  # a unit drawn k times counts k times in that resample
            factor = factor * self.multiplicity[:, self.units.index(unit)]
        by_model = np.ascontiguousarray(boot.T)  # a view when the caller holds it model by model
        weighted = np.empty(by_model.shape[1], dtype=np.float32)
        for row, column in zip(by_model, columns, strict=True):  # row by row: 3x faster than fancy indexing
            np.multiply(row, factor, out=weighted)
            self.by_model[column] += weighted


def rank_ranges(means, pvalues, alpha: float) -> np.ndarray:
    """(models, 2): best rank = 1 + models significantly better; worst = models - those significantly worse
    (significant: corrected p < alpha). Higher means are better."""
    means = np.asarray(means, dtype=np.float64)
    significant = np.asarray(pvalues) < alpha
    better = (means[None, :] > means[:, None]) & significant
    worse = (means[None, :] < means[:, None]) & significant
    return np.stack([1 + better.sum(axis=1), means.size - worse.sum(axis=1)], axis=1).astype(np.int64)


def tie_bands(means, pvalues, alpha: float) -> np.ndarray:
    """Band number (1, 2, ...) of each model. Models are taken best mean first; a band starts with the best model
    not yet in one (its leader) and takes every later model not significantly different from the leader. So every
    model of a later band is significantly worse than the leader of each earlier band: with Holm's correction all
    these claims hold together with probability at least 1 - alpha. Band 1 holds the models tied with the best."""
    means = np.asarray(means, dtype=np.float64)
    different = np.asarray(pvalues) < alpha
    order = sorted(range(means.size), key=lambda i: (-means[i], i))
    bands = np.zeros(means.size, dtype=np.int64)
    band = 0
    for position, leader in enumerate(order):
        if bands[leader]:
            continue
        band += 1
        bands[leader] = band
        for other in order[position + 1:]:
            if not bands[other] and not different[leader, other]:
                bands[other] = band
    return bands


def group_differences(dataset_diffs, dataset_variances, queries, weights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(models, models) differences of group means, their variances and Welch-Satterthwaite degrees of freedom.

    dataset_diffs[k] and dataset_variances[k]: (models, models) mean differences and variances of the per-query
    differences (divide by n - 1) on dataset k of `queries[k]` queries, with weight weights[k] in the group mean."""
    matrices = [(np.asarray(diff, dtype=np.float64), np.asarray(variance, dtype=np.float64))
                for diff, variance in zip(dataset_diffs, dataset_variances, strict=True)]
    terms = [lambda block, out, diff=diff, variance=variance: (diff[block], variance[block])
             for diff, variance in matrices]
    models = np.shape(dataset_diffs[0])[0] if len(dataset_diffs) else 0
    return pooled_differences(terms, queries, weights, models)


# rows of every (models, models) sum worked at once: a block's seven arrays (about 0.9 MB) stay in the cache through
# every dataset's terms, where whole matrices made a trip to memory for each of their passes
_BLOCK_ELEMENTS = 2**14


def pooled_differences(terms, queries, weights, models: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """group_differences from a function per dataset: terms[k](block, out) -> the (diff, variance) rows `block` (a
    slice) of dataset k's (models, models) terms, into `out` (two (rows, models) float64 arrays) where it can. Row
    block by row block, each element summed in the datasets' order: the same values as whole matrices give."""
    if not len(terms):
        raise ValueError("group_difference_pvalues needs at least one dataset")
    total, variance, df = np.empty((models, models)), np.empty((models, models)), np.empty((models, models))
    height = max(1, _BLOCK_ELEMENTS // max(models, 1))
    buffers = [np.empty((height, models)) for _ in range(5)]
    for start in range(0, models, height):
        block = slice(start, min(start + height, models))
        rows = block.stop - start
        diff_out, var_out, part, term, df_terms = (buffer[:rows] for buffer in buffers)
        block_total, block_variance = total[block], variance[block]
        block_total.fill(0.0)
        block_variance.fill(0.0)
        df_terms.fill(0.0)
        for terms_of, n, weight in zip(terms, queries, weights, strict=True):
            diff, var = terms_of(block, (diff_out, var_out))
            block_total += np.multiply(diff, weight, out=term)
            np.multiply(var, weight * weight, out=part)
            part /= n
            block_variance += part
            np.multiply(part, part, out=term)
            term /= max(n - 1, 1)
            df_terms += term
        with np.errstate(divide="ignore", invalid="ignore"):
            df[block] = np.where(df_terms > 0, block_variance * block_variance / np.where(df_terms > 0, df_terms, 1.0),
                                 1.0)
    return total, variance, df


def group_difference_pvalues(dataset_diffs, dataset_variances, queries, weights) -> np.ndarray:
    """(models, models) two-sided p-values of the differences of group means, uncorrected (group_differences)."""
    return difference_pvalues(*group_differences(dataset_diffs, dataset_variances, queries, weights))


def difference_pvalues(total: np.ndarray, variance: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Two-sided t-test p-values of differences with these variances and degrees of freedom (group_differences):
    matrices (the diagonal 1) or the pairs' vectors."""
    p = np.ones_like(total)
    varying = variance > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(total) / np.sqrt(variance)
    p[varying] = 2.0 * stats.t.sf(t[varying], df[varying])
    p[~varying & (total != 0)] = 0.0  # a constant shift on every query is certain
    if p.ndim == 2:
        np.fill_diagonal(p, 1.0)
    return np.minimum(p, 1.0)


def symmetric_difference_pvalues(total: np.ndarray, variance: np.ndarray, df: np.ndarray) -> np.ndarray:
    """difference_pvalues of a group's own differences (total antisymmetric, variance and df symmetric, so p is
    symmetric): each pair's test once, over the upper triangle, mirrored. The same values at half the tails."""
    m = total.shape[0]
    first, second = np.triu_indices(m, k=1)
    upper = difference_pvalues(total[first, second], variance[first, second], df[first, second])
    p = np.ones((m, m))
    p[first, second] = upper
    p[second, first] = upper
    return p


def best_set(means, diff, se, df, alpha: float) -> np.ndarray:
    """bool per model: in the 1 - alpha confidence set for the best model. Model i is left out when some
    model j is significantly better than it in a one-sided test at level alpha / (models - 1) (Bonferroni over the
    comparisons with i; Hsu's multiple comparisons with the best in its simplest form). Only one hypothesis "i is
    the best" is true (that of the true best), so the set holds the true best with probability at least 1 - alpha,
    at near-ties too; it needs one one-sided test at alpha / (models - 1) where the top group's two-sided Holm
    correction starts at alpha / (models (models - 1) / 2), so it is usually smaller (not always a subset).

    diff[i, j] = mean_i - mean_j, se[i, j] its standard error, df its degrees of freedom (scalar or matrix)."""
    means = np.asarray(means, dtype=np.float64)
    m = means.size
    if m < 2:
        return np.ones(m, dtype=bool)
    t = _better_t(diff, se)
    best_other = t.argmax(axis=1)
    rows = np.arange(m)
    # kept when no other model's beat size (the rule beat_sizes and best_among use, so the home page's sets agree)
    # reaches m, that is when p >= alpha / (m - 1) for every other model
    if np.ndim(df) == 0:  # one df: the smallest p of a row is that of its largest t
        return _sizes(stats.t.sf(t[rows, best_other], max(float(df), 1.0)), alpha) < m
    df = np.maximum(np.asarray(df, dtype=np.float64), 1.0)
    # most rows are decided by their largest t; the others (a few near the top) by every comparison
    keep = _sizes(stats.t.sf(t[rows, best_other], df[rows, best_other]), alpha) < m
    for i in np.flatnonzero(keep):
        keep[i] = (_sizes(stats.t.sf(t[i], df[i]), alpha) < m).all()
    return keep


def _better_t(diff, se) -> np.ndarray:
    """t[i, j]: how far j is better than i, in standard errors (se 0: +-inf; no difference and no variance, or
    the model itself: -inf, never better)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.negative(diff, dtype=np.float64) / np.asarray(se, dtype=np.float64)
    t[np.isnan(t)] = -np.inf
    np.fill_diagonal(t, -np.inf)
    return t


_NEVER_DOUBTED = np.iinfo(np.int32).max  # the beat size of a certain difference


def _sizes(p: np.ndarray, alpha: float) -> np.ndarray:
    """int per one-sided p-value: the largest s with p < alpha / (s - 1), compared as written (0 or 1: never).
    alpha / p is rounded, so its ceiling can be one off where p is alpha / (s - 1) to the last bit: each is checked
    against the level itself, which best_set's rule and the page's (best_among) then share."""
    p = np.asarray(p, dtype=np.float64)
    certain = p <= 0.0
    with np.errstate(divide="ignore"):
        size = np.minimum(np.ceil(alpha / np.where(certain, 1.0, p)), _NEVER_DOUBTED)
        size = np.where((size >= 2) & (p >= alpha / np.maximum(size - 1, 1)), size - 1, size)
        size = np.where((size < _NEVER_DOUBTED) & (p < alpha / np.maximum(size, 1)), size + 1, size)
    return np.where(certain, _NEVER_DOUBTED, size).astype(np.int64)


def beat_sizes(diff, se, df, alpha: float) -> np.ndarray:
    """(models, models) int: sizes[i, j] is the largest number of models s at which j is significantly better than
    i in best_set's one-sided test at alpha / (s - 1), that is (s - 1) p < alpha (0 or 1: never, for s >= 2).
    The pairwise tests do not depend on the other models, so the best set among any subset S of the models is
    {i in S: sizes[i, j] < |S| for every other j in S} (best_among): the same rule as best_set over S alone."""
    t = _better_t(diff, se)
    return _sizes(stats.t.sf(t, np.maximum(np.broadcast_to(np.asarray(df, dtype=np.float64), t.shape), 1.0)), alpha)


def best_among(sizes: np.ndarray, members, tested: int | None = None) -> np.ndarray:
    """bool per member (indices into sizes): in the best set among these members alone (beat_sizes), testing at
    alpha / (tested - 1); `tested` (at least the members, default their number) makes it more conservative."""
    members = np.asarray(members, dtype=np.int64)
    tested = members.size if tested is None else tested
    if members.size < 2:
        return np.ones(members.size, dtype=bool)
    sub = sizes[np.ix_(members, members)].copy()
    np.fill_diagonal(sub, 0)
    return (sub < tested).all(axis=1)
