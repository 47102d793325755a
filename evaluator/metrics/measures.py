"""One function per measure kind, each computing every query at once from the ranked label matrix.

Semantics are trec_eval 9.0.8's (see design/metrics.md): linear gain, ideal DCG from all judged documents,
negative labels never relevant, P@k divides by k, recall-like measures by R.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from evaluator.metrics.names import Measure
from evaluator.metrics.ranking import PAD, UNJUDGED, Qrels, QrelsStats, RankedRun


class _Context:
    """Arrays shared by the measures of one evaluation, computed lazily once."""

    def __init__(self, ranked: RankedRun, stats: QrelsStats, relevance_level: int):
        self.labels = ranked.labels
        self.lengths = ranked.lengths
        self.stats = stats
        self.level = relevance_level
        self.relevant = ranked.labels >= relevance_level
        self.n_relevant = stats.n_relevant.astype(np.float64)
        self._cumulative: np.ndarray | None = None

    def top(self, matrix: np.ndarray, k: int | None) -> np.ndarray:
        return matrix if k is None else matrix[:, :k]

    @property
    def relevant_so_far(self) -> np.ndarray:
        if self._cumulative is None:
            self._cumulative = np.cumsum(self.relevant, axis=1, dtype=np.int32)
        return self._cumulative

    def per_relevant(self, values: np.ndarray) -> np.ndarray:
        """values / R, 0 for queries without relevant documents."""
        return np.divide(values, self.n_relevant, out=np.zeros_like(values, dtype=np.float64),
                         where=self.n_relevant > 0)


def _discounts(width: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))


def _gains(labels: np.ndarray, exp_gain: bool) -> np.ndarray:
    positive = np.where(labels > 0, labels, 0).astype(np.float64)
    return np.exp2(positive) - 1.0 if exp_gain else positive


def _weighted_sums(matrix: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """matrix @ weights in numpy's own loop: BLAS would run it on a thread pool whose idle threads then spin for
    a while, on top of whatever the caller runs in parallel (one level of parallelism, design/style.md)."""
    return np.einsum("ij,j->i", matrix, weights)


def ndcg(ctx: _Context, m: Measure) -> np.ndarray:
    ranked = ctx.top(ctx.labels, m.cutoff)
    dcg = _weighted_sums(_gains(ranked, m.exp_gain), _discounts(ranked.shape[1]))
    ideal = ctx.top(ctx.stats.ideal_labels, m.cutoff)
    idcg = _weighted_sums(_gains(ideal, m.exp_gain), _discounts(ideal.shape[1]))
    return np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)


def recall(ctx: _Context, m: Measure) -> np.ndarray:
    return ctx.per_relevant(ctx.top(ctx.relevant, m.cutoff).sum(axis=1, dtype=np.float64))


def precision(ctx: _Context, m: Measure) -> np.ndarray:
    return ctx.top(ctx.relevant, m.cutoff).sum(axis=1, dtype=np.float64) / m.cutoff


def average_precision(ctx: _Context, m: Measure) -> np.ndarray:
    relevant = ctx.top(ctx.relevant, m.cutoff)
    ranks = np.arange(1, relevant.shape[1] + 1, dtype=np.float64)
    precision_at_hits = np.where(relevant, ctx.top(ctx.relevant_so_far, m.cutoff) / ranks, 0.0)
    return ctx.per_relevant(precision_at_hits.sum(axis=1))


def reciprocal_rank(ctx: _Context, m: Measure) -> np.ndarray:
    relevant = ctx.top(ctx.relevant, m.cutoff)
    found = relevant.any(axis=1)
    first = relevant.argmax(axis=1) + 1.0
    return np.where(found, 1.0 / first, 0.0)


def r_precision(ctx: _Context, m: Measure) -> np.ndarray:
    # Relevant documents among the first R, divided by R.
    cumulative = ctx.relevant_so_far
    at = np.minimum(ctx.stats.n_relevant, cumulative.shape[1])
    hits = np.where(at > 0, cumulative[np.arange(len(at)), np.maximum(at - 1, 0)], 0)
    return ctx.per_relevant(hits.astype(np.float64))


def bpref(ctx: _Context, m: Measure) -> np.ndarray:
    # For each retrieved relevant document: 1 - min(judged non-relevant ranked above it, R) / min(R, N).
    judged_nonrelevant = (ctx.labels >= 0) & (ctx.labels < ctx.level)
    above = np.cumsum(judged_nonrelevant, axis=1, dtype=np.int64) - judged_nonrelevant
    n_rel = ctx.stats.n_relevant[:, None]
    bound = np.minimum(n_rel, ctx.stats.n_nonrelevant[:, None])
    penalty = np.divide(np.minimum(above, n_rel), bound, out=np.zeros(above.shape), where=bound > 0)
    return ctx.per_relevant(np.where(ctx.relevant, 1.0 - penalty, 0.0).sum(axis=1))


def success(ctx: _Context, m: Measure) -> np.ndarray:
    return ctx.top(ctx.relevant, m.cutoff).any(axis=1).astype(np.float64)


def judged(ctx: _Context, m: Measure) -> np.ndarray:
    # As ir_measures defines it: judged documents in the top k / min(k, ranking length); 0 for an empty ranking.
    labels = ctx.top(ctx.labels, m.cutoff)
    count = ((labels != UNJUDGED) & (labels != PAD)).sum(axis=1, dtype=np.float64)
    shown = np.minimum(ctx.lengths, m.cutoff).astype(np.float64)
    return np.divide(count, shown, out=np.zeros_like(count), where=shown > 0)


def average_relevant_position(ctx: _Context, m: Measure) -> np.ndarray:
    # Gain-weighted mean rank of the retrieved relevant documents (0 when none is retrieved).
    weights = np.where(ctx.relevant, ctx.labels, 0).astype(np.float64)
    ranks = np.arange(1, weights.shape[1] + 1, dtype=np.float64)
    total = weights.sum(axis=1)
    return np.divide(_weighted_sums(weights, ranks), total, out=np.zeros_like(total), where=total > 0)


MEASURE_FUNCTIONS: dict[str, Callable[[_Context, Measure], np.ndarray]] = {
    "nDCG": ndcg,
    "R": recall,
    "P": precision,
    "AP": average_precision,
    "RR": reciprocal_rank,
    "Rprec": r_precision,
    "Bpref": bpref,
    "Success": success,
    "Judged": judged,
    "ARP": average_relevant_position,
}


def evaluate(
    ranked: RankedRun,
    qrels: Qrels | QrelsStats,
    measures: Sequence[Measure],
    relevance_level: int = 1,
) -> dict[str, np.ndarray]:
    """Per-query values of each measure, aligned with `ranked.query_ids` (one row per qrels query); a
    `judged_only` measure is scored on the condensed lists (`RankedRun.condensed`), as trec_eval -J does."""
    stats = qrels.label_stats(relevance_level) if isinstance(qrels, Qrels) else qrels
    condensed = [m for m in measures if m.judged_only]
    if condensed:
        values = _evaluate(ranked, stats, [m for m in measures if not m.judged_only], relevance_level)
        values |= _evaluate(ranked.condensed(), stats, condensed, relevance_level)
        return {str(m): values[str(m)] for m in measures}
    return _evaluate(ranked, stats, measures, relevance_level)


def _evaluate(ranked: RankedRun, stats: QrelsStats, measures: Sequence[Measure],
              relevance_level: int) -> dict[str, np.ndarray]:
    if not measures:
        return {}
    depth_needed = max((m.cutoff or ranked.depth for m in measures), default=1)
    if depth_needed > ranked.depth:  # pad so that every cutoff slice has its full width
        extra = np.full((ranked.labels.shape[0], depth_needed - ranked.depth), PAD, dtype=ranked.labels.dtype)
        ranked = RankedRun(ranked.query_ids, np.hstack([ranked.labels, extra]), ranked.lengths)
    elif depth_needed < ranked.depth:  # the shared arrays (relevant, its running sum) only as wide as a measure looks
        ranked = RankedRun(ranked.query_ids, ranked.labels[:, :depth_needed], ranked.lengths)
    ctx = _Context(ranked, stats, relevance_level)
    return {str(m): MEASURE_FUNCTIONS[m.kind](ctx, m) for m in measures}
