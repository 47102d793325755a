"""Unjudged documents: Judged@k, and the hole bounds of a metric (docs/metrics.md, "Unjudged documents").

The hole bounds of a measure are, per query, the minimum and maximum of its value over every labelling of the
unjudged documents the measure reads (those within its cutoff; the whole ranking for AP, Rprec, Bpref and an
uncut nDCG or RR), each labelled with a grade of the qrels' scale 0..max. A labelled document joins the query's
judgments, so it also counts in R, in Bpref's N and in the ideal DCG: which is why nDCG, AP, Rprec and Bpref can
fall below trec_eval's value (where unjudged counts as non-relevant) and why their maximum is not always "every unjudged
document relevant at the top grade". Labellings are independent per query, so the range of the mean over
queries is [mean of the lows, mean of the highs]. Condensed lists (trec_eval -J) are `RankedRun.condensed()`,
asked for by name with `judged_only=True` (`nDCG(judged_only=True)@10`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluator.errors import UnknownNameError
from evaluator.metrics.measures import evaluate
from evaluator.metrics.names import Measure, parse_measure
from evaluator.metrics.ranking import PAD, UNJUDGED, Qrels, QrelsStats, RankedRun


@dataclass(frozen=True)
class HoleBounds:
    """Per-query bounds of one measure, aligned with `query_ids` (one row per qrels query)."""

    metric: str
    query_ids: list[str]
    value: np.ndarray  # trec_eval's value: every unjudged document non-relevant
    low: np.ndarray  # the minimum over every labelling of the unjudged documents the metric reads
    high: np.ndarray  # the maximum

    def mean(self) -> tuple[float, float]:
        """The range of the mean over queries: (mean of the lows, mean of the highs)."""
        if not len(self.query_ids):
            return 0.0, 0.0
        return float(np.mean(self.low)), float(np.mean(self.high))


def judged_at(ranked: RankedRun, cutoff: int | None) -> np.ndarray:
    """Judged@k per query as ir_measures defines it: judged documents in the top k / min(k, ranking length), 0 for
    an empty ranking; `cutoff` None reads the whole ranking (the depth an uncut metric reads)."""
    k = ranked.depth if cutoff is None else cutoff
    labels = ranked.labels[:, :k]
    count = ((labels != UNJUDGED) & (labels != PAD)).sum(axis=1, dtype=np.float64)
    shown = np.minimum(ranked.lengths, k).astype(np.float64)
    return np.divide(count, shown, out=np.zeros_like(count), where=shown > 0)


def judged_count(ranked: RankedRun, cutoff: int | None) -> np.ndarray:
    """Judged documents in the top k (the whole ranking for `cutoff` None) per query, as int64."""
    labels = ranked.labels if cutoff is None else ranked.labels[:, :cutoff]
    return ((labels != UNJUDGED) & (labels != PAD)).sum(axis=1, dtype=np.int64)


def max_grade(qrels: Qrels | QrelsStats) -> int:
    """The top grade of the qrels' scale (0 when no document is judged relevant at any grade): the grades an
    unjudged document may take are 0..max_grade."""
    stats = qrels.label_stats(1) if isinstance(qrels, Qrels) else qrels
    return int(stats.ideal_labels.max(initial=0))


def hole_bounds(ranked: RankedRun, qrels: Qrels | QrelsStats, measure: Measure | str, relevance_level: int = 1,
                top_grade: int | None = None) -> HoleBounds:
    """Per-query hole bounds of `measure` (a Measure or its name) for a ranked run against `qrels`.

    Unjudged documents are those labelled UNJUDGED in `ranked` (within the measure's cutoff; for an uncut measure,
    the whole label matrix: a ranking kept to depth 100 bounds an uncut measure over its top 100 only). Their grades range over 0..`top_grade`, by default the qrels' top grade
    (`max_grade`). `value` is trec_eval's value; `low <= value <= high` for every measure but Bpref (which skips
    unjudged documents, a value no labelling gives). Raises UnknownNameError for a measure without bounds (ARP)."""
    measure = parse_measure(measure) if isinstance(measure, str) else measure
    bound = _BOUNDS.get(measure.kind)
    if bound is None:
        raise UnknownNameError(f"metric {measure}: no hole bounds for {measure.kind}; they are defined for "
                               f"{', '.join(_BOUNDS)}")
    stats = qrels.label_stats(relevance_level) if isinstance(qrels, Qrels) else qrels
    grade = max_grade(stats) if top_grade is None else int(top_grade)
    value = evaluate(ranked, stats, [measure], relevance_level)[str(measure)]
    if measure.judged_only or measure.kind == "Judged":  # no unjudged document left to label
        low, high = value, value
    else:
        view = _View(ranked, stats, relevance_level, grade, measure.cutoff)
        low, high = bound(view, measure, value)
    return HoleBounds(str(measure), list(ranked.query_ids), value, low, high)


class _View:
    """The part of the label matrix a measure reads, and what the bounds of every family need from it."""

    def __init__(self, ranked: RankedRun, stats: QrelsStats, level: int, grade: int, cutoff: int | None):
        width = ranked.depth if cutoff is None else cutoff
        labels = ranked.labels[:, :width]
        if labels.shape[1] < width:
            pad = np.full((labels.shape[0], width - labels.shape[1]), PAD, dtype=labels.dtype)
            labels = np.hstack([labels, pad])
        self.labels = labels
        self.stats = stats
        self.level = level
        self.grade = grade
        self.width = width
        self.unjudged = labels == UNJUDGED
        self.relevant = labels >= level
        self.n_unjudged = self.unjudged.sum(axis=1)
        self.n_relevant = stats.n_relevant.astype(np.int64)
        self.can_relevant = grade >= level  # whether a labelling can make a document relevant at all

    def positions(self, reverse: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Column indices of each row's unjudged documents in rank order (last first with `reverse`), as a
        (queries, most unjudged) matrix, and the mask of real entries."""
        most = int(self.n_unjudged.max(initial=0))
        rows, columns = np.nonzero(self.unjudged)  # row by row, in rank order
        place = np.arange(len(rows)) - np.repeat(np.cumsum(self.n_unjudged) - self.n_unjudged, self.n_unjudged)
        if reverse:
            place = self.n_unjudged[rows] - 1 - place
        order = np.zeros((len(self.n_unjudged), most), dtype=np.int64)
        order[rows, place] = columns
        valid = np.arange(most)[None, :] < self.n_unjudged[:, None]
        return order, valid


def _precision(view: _View, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Each unjudged document in the top k made relevant adds 1/k.
    raised = view.n_unjudged if view.can_relevant else 0
    return value, (view.relevant.sum(axis=1) + raised) / m.cutoff


def _success(view: _View, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return value, np.where(view.can_relevant & (view.n_unjudged > 0), 1.0, value)


def _reciprocal_rank(view: _View, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Relevance only grows, so the first relevant document only moves up: to the first unjudged one, if earlier.
    candidate = view.relevant | (view.unjudged & view.can_relevant)
    first = candidate.argmax(axis=1) + 1.0
    return value, np.where(candidate.any(axis=1), 1.0 / first, 0.0)


def _recall(view: _View, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # x unjudged documents of the top k made relevant give (h + x) / (R + x), which grows with x as h <= R.
    hits = view.relevant.sum(axis=1)
    x = view.n_unjudged if view.can_relevant else np.zeros_like(hits)
    total = (view.n_relevant + x).astype(np.float64)
    high = np.divide((hits + x).astype(np.float64), total, out=np.zeros_like(total), where=total > 0)
    return value, high


def _r_precision(view: _View, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # x documents made relevant: R' = R + x, and the value is (relevant among the first R') / R'. For a given x the
    # earliest x unjudged documents give the most inside the first R', the latest x the fewest; try every x.
    relevant_above = _cumulative(view.relevant)
    unjudged_above = _cumulative(view.unjudged)
    x = _counts(view)
    r_prime = view.n_relevant[:, None] + x
    top = np.minimum(r_prime, view.width)
    judged_hits = np.take_along_axis(relevant_above, top, axis=1)
    inside = np.take_along_axis(unjudged_above, top, axis=1)
    most = judged_hits + np.minimum(x, inside)
    fewest = judged_hits + np.maximum(0, x - (view.n_unjudged[:, None] - inside))
    return _extremes(most, fewest, r_prime, x <= _allowed(view)[:, None])


def _average_precision(view: _View, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # x documents made relevant: AP = (sum of the precisions at the relevant ranks) / (R + x). Moving a relevant
    # document up never lowers that sum, so for a given x the earliest x unjudged documents give the most and the
    # latest x the least; each is built one document at a time, then every x is tried.
    ranks = np.arange(1, view.width + 1, dtype=np.float64)
    judged_above = _cumulative(view.relevant)[:, :-1]  # judged relevant documents above each rank
    inverse = np.where(view.relevant, 1.0 / ranks, 0.0)
    below = inverse.sum(axis=1, keepdims=True) - np.cumsum(inverse, axis=1)  # sum of 1/rank over those below
    base = np.where(view.relevant, (judged_above + 1) / ranks, 0.0).sum(axis=1)
    x = _counts(view)
    sums = []
    for reverse in (False, True):
        columns, valid = view.positions(reverse)
        rank = columns + 1.0
        above = np.take_along_axis(judged_above, columns, axis=1)
        later = np.take_along_axis(below, columns, axis=1)
        if not reverse:  # the documents chosen before are all above this one
            step = (above + np.arange(columns.shape[1])[None, :] + 1) / rank + later
        else:  # the documents chosen before are all below this one: each gains a relevant document above it
            inverse_chosen = np.cumsum(np.where(valid, 1.0 / rank, 0.0), axis=1) - np.where(valid, 1.0 / rank, 0.0)
            step = (above + 1) / rank + later + inverse_chosen
        step = np.where(valid, step, 0.0)
        sums.append(base[:, None] + np.concatenate([np.zeros((len(base), 1)), np.cumsum(step, axis=1)], axis=1))
    r_prime = view.n_relevant[:, None] + x
    return _extremes(sums[0], sums[1], r_prime, x <= _allowed(view)[:, None])


def _ndcg(view: _View, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # For a given multiset of grades the ideal DCG is fixed, so the DCG is highest with the grades in descending
    # order down the unjudged ranks and lowest in ascending order. Write C_v for the number of unjudged documents
    # graded >= v (u >= C_1 >= ... >= C_top >= 0) and g_v - g_{v-1} for the step in gain at grade v; then
    #     nDCG = (D + sum_v step_v * P(C_v)) / sum_v step_v * I(J_v + C_v)
    # where D is the judged DCG, P(c) the sum of the discounts of the first c unjudged ranks (the last c, for the
    # lowest DCG), J_v the judged documents graded >= v and I(s) the sum of the first min(s, k) ideal discounts.
    # The ratio is optimised exactly by Dinkelbach's method: for a trial value t, the chain maximising (or
    # minimising) numerator - t * denominator is one pass of prefix maxima over the grades; t moves to that
    # chain's value until no chain beats it.
    if view.grade < 1:
        return value, value
    ideal = view.stats.ideal_labels
    grades = np.arange(1, max(view.grade, int(ideal.max(initial=0))) + 1)  # judged grades above the top one too
    gains = np.exp2(grades) - 1.0 if m.exp_gain else grades.astype(np.float64)
    steps = np.diff(np.concatenate([[0.0], gains]))
    judged_at_least = np.stack([(ideal >= g).sum(axis=1) for g in grades], axis=1)  # (queries, grades)
    most = int(view.n_unjudged.max(initial=0))
    span = int(judged_at_least.max(initial=0)) + most + 1
    discounts = 1.0 / np.log2(np.arange(2, span + 1, dtype=np.float64))
    if m.cutoff is not None:
        discounts[m.cutoff:] = 0.0
    ideal_sums = np.concatenate([[0.0], np.cumsum(discounts)])  # I(s) for s = 0..span
    judged_labels = np.where(view.unjudged, 0, view.labels)
    dcg = np.einsum("ij,j->i", _gained(judged_labels, m.exp_gain),
                    1.0 / np.log2(np.arange(2, view.width + 2, dtype=np.float64)))
    chains = np.arange(most + 1)
    within = chains[None, :] <= view.n_unjudged[:, None]
    allowed = [within & ((chains == 0) | (grade <= view.grade))[None, :] for grade in grades]
    denominators = [np.where(within, ideal_sums[np.minimum(judged_at_least[:, [i]] + chains, span)], 0.0)
                    for i in range(len(grades))]
    bounds = []
    for reverse in (False, True):
        columns, valid = view.positions(reverse)
        rank_discounts = np.where(valid, 1.0 / np.log2(columns + 2.0), 0.0)
        prefix = np.concatenate([np.zeros((len(dcg), 1)), np.cumsum(rank_discounts, axis=1)], axis=1)
        bounds.append(_dinkelbach(dcg, prefix, denominators, steps, allowed, value, maximise=not reverse))
    return np.minimum(bounds[1], value), np.maximum(bounds[0], value)


def _gained(labels: np.ndarray, exp_gain: bool) -> np.ndarray:
    positive = np.where(labels > 0, labels, 0).astype(np.float64)
    return np.exp2(positive) - 1.0 if exp_gain else positive


def _dinkelbach(dcg: np.ndarray, prefix: np.ndarray, denominators: list[np.ndarray], steps: np.ndarray,
                allowed: list[np.ndarray], start: np.ndarray, maximise: bool) -> np.ndarray:
    """The extreme over chains u >= C_1 >= ... >= C_top of (dcg + sum_v steps_v prefix[C_v]) /
    (sum_v steps_v denominators_v[C_v]), per query (0 where the denominator is 0)."""
    sign = 1.0 if maximise else -1.0
    trial = start.copy()
    active = np.ones(len(dcg), dtype=bool)
    for _ in range(100):  # converges superlinearly; a few rounds in practice
        rows = np.flatnonzero(active)
        if not len(rows):
            break
        t = trial[rows, None]
        best = numerator = denominator = None
        for v in range(len(steps) - 1, -1, -1):  # from the top grade down: C_v >= C_{v+1}
            own_num = steps[v] * prefix[rows]
            own_den = steps[v] * denominators[v][rows]
            score = np.where(allowed[v][rows], sign * (own_num - t * own_den), -np.inf)
            if best is not None:  # add the best chain above with C_{v+1} <= C_v
                running = np.maximum.accumulate(best, axis=1)
                where = np.maximum.accumulate(np.where(best >= running, np.arange(best.shape[1]), 0), axis=1)
                score = score + running
                own_num = own_num + np.take_along_axis(numerator, where, axis=1)
                own_den = own_den + np.take_along_axis(denominator, where, axis=1)
            best, numerator, denominator = score, own_num, own_den
        choice = best.argmax(axis=1)[:, None]
        num = dcg[rows] + np.take_along_axis(numerator, choice, axis=1)[:, 0]
        den = np.take_along_axis(denominator, choice, axis=1)[:, 0]
        found = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
        better = sign * (found - trial[rows]) > 1e-15
        trial[rows[better]] = found[better]
        active[rows[~better]] = False
    return trial


def _bpref(view: _View, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Every labelling judges every unjudged document, so x made relevant give R' = R + x and N' = N + u - x. For a
    # given x, a relevant document moved above a non-relevant one never raises a penalty: the earliest x give the
    # most, the latest x the least. Each x costs a pass over the label matrix.
    order = np.cumsum(view.unjudged, axis=1) - 1  # each unjudged document's place among its row's unjudged
    judged_nonrelevant = (view.labels >= 0) & (view.labels < view.level)
    allowed = _allowed(view)
    low = np.full(len(value), np.inf)
    high = np.full(len(value), -np.inf)
    for x in range(int(allowed.max(initial=0)) + 1):
        rows = np.flatnonzero(allowed >= x)
        unjudged, labels_order, u = view.unjudged[rows], order[rows], view.n_unjudged[rows, None]
        r_prime = view.n_relevant[rows, None] + x
        bound = np.minimum(r_prime, view.stats.n_nonrelevant[rows, None] + u - x)
        for made, keep in (((labels_order < x), np.maximum), ((labels_order >= u - x), np.minimum)):
            relevant = view.relevant[rows] | (unjudged & made)
            nonrelevant = judged_nonrelevant[rows] | (unjudged & ~made)
            above = np.cumsum(nonrelevant, axis=1, dtype=np.int64) - nonrelevant
            penalty = np.divide(np.minimum(above, r_prime), bound, out=np.zeros(above.shape), where=bound > 0)
            total = np.where(relevant, 1.0 - penalty, 0.0).sum(axis=1)
            found = np.divide(total, r_prime[:, 0], out=np.zeros_like(total), where=r_prime[:, 0] > 0)
            if keep is np.maximum:
                high[rows] = np.maximum(high[rows], found)
            else:
                low[rows] = np.minimum(low[rows], found)
    return low, high


def _cumulative(matrix: np.ndarray) -> np.ndarray:
    """Per row, the count of True in the first j columns for j = 0..width (a leading 0 column)."""
    counts = np.cumsum(matrix, axis=1, dtype=np.int64)
    return np.concatenate([np.zeros((matrix.shape[0], 1), dtype=np.int64), counts], axis=1)


def _counts(view: _View) -> np.ndarray:
    """0..most unjudged, as a (1, most + 1) row: how many documents a labelling makes relevant."""
    return np.arange(int(view.n_unjudged.max(initial=0)) + 1)[None, :]


def _allowed(view: _View) -> np.ndarray:
    """Per query, how many documents a labelling can make relevant."""
    return view.n_unjudged if view.can_relevant else np.zeros_like(view.n_unjudged)


def _extremes(most: np.ndarray, fewest: np.ndarray, total: np.ndarray,
              allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """min over x of fewest / total and max over x of most / total (0 where total is 0), over the allowed x."""
    total = total.astype(np.float64)
    high = np.divide(most, total, out=np.zeros(most.shape), where=total > 0)
    low = np.divide(fewest, total, out=np.zeros(fewest.shape), where=total > 0)
    return np.where(allowed, low, np.inf).min(axis=1), np.where(allowed, high, -np.inf).max(axis=1)


_Bound = Callable[[_View, Measure, np.ndarray], tuple[np.ndarray, np.ndarray]]
_BOUNDS: dict[str, _Bound] = {
    "P": _precision,
    "R": _recall,
    "RR": _reciprocal_rank,
    "Success": _success,
    "Judged": lambda view, m, value: (value, value),
    "Rprec": _r_precision,
    "AP": _average_precision,
    "nDCG": _ndcg,
    "Bpref": _bpref,
}
