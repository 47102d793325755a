"""Could be #1, against cost: which of the models that could be #1 are worth their cost.

"Could be #1" is the best set (ranks.best_set, the site's one verdict on who is best: best_words.py). Among its
models a model is on the Pareto front for a cost (parameters, embedding dimensions, milliseconds per query) when no
other of them is at least as good at no more cost, and better in one of the two: the mean higher or the cost lower.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

COSTS = ("parameters", "dim", "latency")  # the costs a result can state (docs/result-format.md)
LATENCY_TIMING = "queries_per_s"  # provenance.timings key the evaluator records while searching


def pareto_front(means: Sequence[float], costs: Sequence[float | None]) -> np.ndarray:
    """bool per model: not dominated. Model j dominates i when cost_j <= cost_i and mean_j >= mean_i, one of them
    strictly. A model without a cost (None or NaN) is on no front and dominates none."""
    mean = np.asarray(means, dtype=np.float64)
    cost = np.asarray([math.nan if value is None else float(value) for value in costs], dtype=np.float64)
    known = np.isfinite(cost)
    if mean.shape != cost.shape:
        raise ValueError(f"pareto_front: {mean.size} means but {cost.size} costs")
    no_dearer = cost[None, :] <= cost[:, None]  # [i, j]: j costs no more than i
    no_worse = mean[None, :] >= mean[:, None]
    strictly = (cost[None, :] < cost[:, None]) | (mean[None, :] > mean[:, None])
    dominated = (no_dearer & no_worse & strictly & known[None, :]).any(axis=1)
    return known & ~dominated


def latency_ms(queries_per_s: Sequence[float | None]) -> float | None:
    """Milliseconds per query over datasets: the median of 1000 / queries_per_s, None unless every dataset
    records a positive rate (a cost measured on only some datasets would not be the group's)."""
    if not queries_per_s or any(rate is None or not rate > 0 for rate in queries_per_s):
        return None
    return float(np.median([1000.0 / rate for rate in queries_per_s]))
