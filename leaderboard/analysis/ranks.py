"""Uncertainty of group means and of the ranks they give: a hierarchical bootstrap, rank intervals, bands.

Level 1 resamples the queries of each dataset (aggregate.bootstrap_means, the draws behind each dataset's CI).
Level 2 resamples the group's units (datasets, with beir/cqadupstack/* as one unit) with replacement, only when
`resample_units` is set: that answers "how would the ranking change on another sample of tasks like these". The
site leaves it off: its groups are fixed, named collections and a group mean is defined as the mean over exactly
those datasets, so the only sampling to account for is that of the queries.
"""

from __future__ import annotations

import numpy as np


class GroupBootstrap:
    """Weighted sum of per-dataset bootstrap means, filled dataset by dataset. Held model by model (each model's
    resamples contiguous), so that adding a dataset's models moves whole rows; `boot` is the (resamples, models)
    view of it."""

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


def rank_intervals(boot: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """(models, 2) interval of each model's rank (1 = highest mean, ties by column) over the bootstrap resamples:
    the lower and upper (1 - confidence) / 2 quantiles of its rank, as whole ranks."""
    resamples, models = boot.shape
    if models == 0:
        return np.zeros((0, 2), dtype=np.int64)
    # Each resample's models by mean descending, ties by column: one sort of 64-bit keys (the mean's bits made
    # order-preserving and inverted, then the column), several times faster than a stable argsort of the floats.
    # Counted block by block: how often each model takes each rank (+ 0.0 makes -0.0 tie with 0.0).
    counts = np.zeros(models * models, dtype=np.int64)
    columns = np.arange(models, dtype=np.uint64)
    block = max(1, 2**20 // models)
    for start in range(0, resamples, block):
        bits = (np.ascontiguousarray(boot[start:start + block], dtype=np.float32) + np.float32(0.0)).view(np.uint32)
        descending = np.where(bits >> 31, bits, ~bits & np.uint32(0x7FFFFFFF))  # larger means, smaller keys
        keys = np.sort(descending.astype(np.uint64) << np.uint64(32) | columns, axis=1)
        order = (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)  # order[r, j]: the model ranked j + 1
        counts += np.bincount((order * models + np.arange(models)).ravel(), minlength=models * models)
    below = np.cumsum(counts.reshape(models, models), axis=1)  # below[i, j]: resamples with model i ranked <= j + 1
    tail = 100 * (1 - confidence) / 2
    positions = np.arange(resamples)  # the same quantile positions as np.percentile's "lower" and "higher"
    low = int(np.percentile(positions, tail, method="lower"))
    high = int(np.percentile(positions, 100 - tail, method="higher"))
    return np.stack([1 + (below <= low).sum(axis=1), 1 + (below <= high).sum(axis=1)], axis=1).astype(np.int64)


def rank_bands(means, intervals) -> np.ndarray:
    """Band number (1, 2, ...) of each model. Models are taken best mean first; each band starts with the best
    model not yet in a band and takes every later model whose rank interval reaches its leader's (best rank <=
    the leader's worst rank). Models in one band cannot be told apart from its leader at this confidence."""
    means = np.asarray(means, dtype=np.float64)
    intervals = np.asarray(intervals)
    order = sorted(range(means.size), key=lambda i: (-means[i], i))
    bands = np.zeros(means.size, dtype=np.int64)
    band = 0
    for position, leader in enumerate(order):
        if bands[leader]:
            continue
        band += 1
        bands[leader] = band
        for other in order[position + 1:]:
            if not bands[other] and intervals[other, 0] <= intervals[leader, 1]:
                bands[other] = band
    return bands
