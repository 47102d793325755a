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
    """Weighted sum of per-dataset bootstrap means, one (resamples, models) matrix, filled dataset by dataset."""

    def __init__(self, models: int, resamples: int, units: list[str], resample_units: bool = False, seed: int = 0):
        self.boot = np.zeros((resamples, models), dtype=np.float32)
        self.units = sorted(set(units))
        self.multiplicity = None
        if resample_units:
            rng = np.random.default_rng([seed, len(self.units)])
            count = len(self.units)
            self.multiplicity = rng.multinomial(count, np.full(count, 1 / count), size=resamples).astype(np.float32)

    def add(self, columns, weight: float, unit: str, boot: np.ndarray) -> None:
        """Add a dataset's (resamples, len(columns)) bootstrap means with its weight in the group mean."""
        if self.multiplicity is None:
            self.boot[:, columns] += np.float32(weight) * boot
        else:  # a unit drawn k times counts k times in that resample
            factor = np.float32(weight) * self.multiplicity[:, self.units.index(unit)]
            self.boot[:, columns] += factor[:, None] * boot


def rank_intervals(boot: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """(models, 2) interval of each model's rank (1 = highest mean) over the bootstrap resamples:
    the lower and upper (1 - confidence) / 2 quantiles of its rank, as whole ranks."""
    resamples, models = boot.shape
    if models == 0:
        return np.zeros((0, 2), dtype=np.int64)
    order = np.argsort(-boot, axis=1, kind="stable")
    ranks = np.empty((models, resamples), dtype=np.int32)  # by model: quantiles along contiguous rows
    ranks[order.T, np.arange(resamples)[None, :]] = np.arange(1, models + 1, dtype=np.int32)[:, None]
    tail = 100 * (1 - confidence) / 2
    low = np.percentile(ranks, tail, axis=1, method="lower")
    high = np.percentile(ranks, 100 - tail, axis=1, method="higher")
    return np.stack([low, high], axis=1).astype(np.int64)


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
