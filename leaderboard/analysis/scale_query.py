"""Per-query recall at scale: a tie mass, an empirical body and a generalized Pareto tail per query.

Each query's non-relevant scores are modelled from its stored sample (m scores):

- a point mass at the lowest sampled score holding every sampled score tied there (BM25 and SPLADE give most
  documents exactly 0; a 12-bit sample stores those exactly at its `lo`); dense scores have one or two there;
- above it, the empirical distribution of the sample, up to the top TAIL_FRACTION of the scores above the mass
  (at least MIN_TAIL of them);
- over that threshold, a generalized Pareto tail fitted by probability-weighted moments (Hosking and Wallis
  1987), in closed form for all queries at once: no per-query optimiser.

A relevant document with score s, below `above` other relevant documents of its query, is in the top k of a
corpus of S documents with R' relevant and N' non-relevant ones when at most k - 1 - above * R'/R non-relevant
documents score above s, a Binomial(N', sf(s)) count (sf from the model). One at the tie mass sits at a uniform
position among the N' * mass_share tied documents. Recall@k of the query is the mean over its relevant documents;
queries are averaged. Growth scenarios (which R', N' a size S means): see `target_counts`.

The rank-scaling baseline uses the same counting with the empirical share of the sample above s and expected
counts instead of binomial ones: a document is placed at 1 + (documents above it) x (target / sample size).
A query whose sample cannot support a tail is dropped with a reason, never fatal.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy import stats

from evaluator.score_samples import ScoreSamples
from leaderboard.analysis.scale_options import GROWTHS, CannotPredictError, Growth  # noqa: F401 (re-exported)

TAIL_FRACTION = 0.05  # share of the scores above the tie mass that the tail is fitted on
MIN_TAIL = 10  # fewest scores a tail is fitted on
SHAPE_LIMIT = 0.5  # |GPD shape| is clipped here (probability-weighted moments need shape < 0.5)
_EXACT_BAND = 9.0  # binomial cdfs further than this many sds (+ this count) from the mean are 0 or 1 to 1e-15


def check_growth(growth: str) -> None:
    if growth not in GROWTHS:
        raise ValueError(f"growth must be one of {', '.join(GROWTHS)}; got {growth!r}")


def target_counts(n_relevant, num_docs: float, size, growth: str, known=None):
    """(relevant, non-relevant) documents per query at corpus size `size`, broadcast over arrays.

    fixed-relevant: the judged relevant documents stay and only non-relevant ones are added (the SDM paper's
    CoRE setting). uniform: the collection grows as it is, so relevant documents grow in proportion. `known`:
    the relevant count at the target where it is known (benchmarks/scale.py's sub-corpora of a measured
    collection), in place of the scenario's."""
    check_growth(growth)
    n_relevant = np.asarray(n_relevant, dtype=np.float64)
    size = np.asarray(size, dtype=np.float64)
    if known is not None:
        relevant = np.asarray(known, dtype=np.float64) + 0.0 * size
    else:
        relevant = n_relevant * (size / num_docs) if growth == "uniform" else n_relevant + 0.0 * size
    return relevant, size - relevant


@dataclass(frozen=True)
class QueryModel:
    """What the prediction needs, per relevant document (flat, grouped by query) and per kept query.

    `share_above[i]` is the modelled share of the query's non-relevant documents scoring above relevant document
    i (the empirical share for the rank baseline), `share_tied[i]` the share tied with it, `above[i]` the other
    relevant documents above it and `tied[i]` those tied with it."""

    query_ids: tuple[str, ...]  # the kept queries
    num_docs: int
    n_relevant: np.ndarray  # (kept queries,)
    query: np.ndarray  # (relevant documents,) index into query_ids
    above: np.ndarray
    tied: np.ndarray
    share_above: np.ndarray
    share_tied: np.ndarray
    binomial: bool  # draw non-relevant counts (the model) or use expected counts (the rank baseline)
    dropped: dict[str, int]  # reason -> queries dropped for it


@dataclass(frozen=True)
class _Flat:
    """Ragged per-query arrays as one flat array, sorted within each query, with counts and starts.

    `keys` make the values sortable across queries: query index x width + (value - lowest), width larger than
    any query's range, so one searchsorted answers every query (equal values stay equal: same arithmetic)."""

    values: np.ndarray
    counts: np.ndarray
    starts: np.ndarray
    keys: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, counts: np.ndarray, lowest: float = 0.0, width: float = 1.0,
           ascending: bool = False) -> _Flat:
        """`values`: the queries' values one query after the other, `counts[i]` of query i; `ascending`: the
        caller knows them ascending within each query, so only where one query meets the next is checked."""
        starts = np.zeros(counts.size, dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        # query x width + (value - lowest), added the other way round (the same sums)
        keys = np.repeat(np.arange(counts.size) * width, counts)
        keys += values - lowest
        if ascending:
            meets = starts[(starts > 0) & (starts < keys.size)]
            unsorted = bool((keys[meets] < keys[meets - 1]).any())
        else:
            unsorted = keys.size > 1 and bool((np.diff(keys) < 0).any())
        if unsorted:  # a query's values were not sorted
            order = np.argsort(keys, kind="stable")
            return cls(values[order], counts, starts, keys[order])
        return cls(values, counts, starts, keys)

    @cached_property
    def query(self) -> np.ndarray:
        """The query index of each value."""
        return np.repeat(np.arange(self.counts.size), self.counts)

    def count_above_and_tied(self, keys: np.ndarray, query: np.ndarray):
        """For each key (of a value in `query`): how many of that query's values lie above it and equal it."""
        right = np.searchsorted(self.keys, keys, side="right")
        left = np.searchsorted(self.keys, keys, side="left")
        return self.starts[query] + self.counts[query] - right, right - left


@dataclass(frozen=True)
class _Scores:
    """The scores of the queries a model is fitted on: ids, then values and per-query counts as for `_Flat.of`."""

    kept: list[str]
    relevant: np.ndarray
    n_relevant: np.ndarray
    sampled: np.ndarray
    n_sampled: np.ndarray
    ascending: bool  # values ascending within each query (as decoded)

    def subset(self, keep: np.ndarray) -> _Scores:
        """Only the queries where `keep` is true."""
        return _Scores([qid for qid, k in zip(self.kept, keep.tolist(), strict=True) if k],
                       self.relevant[np.repeat(keep, self.n_relevant)], self.n_relevant[keep],
                       self.sampled[np.repeat(keep, self.n_sampled)], self.n_sampled[keep], self.ascending)


def _gather(samples: ScoreSamples, dropped: Counter) -> _Scores:
    """The scores of every query with a relevant document and a sample, counting the others in `dropped`."""
    flat = samples.flat_scores()
    if flat is not None:  # as decoded: flat already, and every query has its relevant scores
        has = flat.n_relevant > 0
        empty = has & (flat.n_sampled == 0)
        if empty.any():
            dropped["no sampled non-relevant score"] += int(empty.sum())
        scores = _Scores(list(samples.queries), flat.relevant, flat.n_relevant, flat.nonrelevant, flat.n_sampled,
                         True)
        keep = has & ~empty
        return scores if keep.all() else scores.subset(keep)
    kept, relevant, sampled = [], [], []
    for query_id, q in samples.queries.items():
        if q.n_relevant <= 0:
            continue  # recall is undefined without a relevant document
        if len(q.relevant) != q.n_relevant:
            dropped["relevant or sampled scores missing or not finite"] += 1
        elif len(q.nonrelevant) == 0:
            dropped["no sampled non-relevant score"] += 1
        else:
            kept.append(query_id)
            relevant.append(np.asarray(q.relevant))
            sampled.append(np.asarray(q.nonrelevant))

    def joined(arrays):
        values = np.concatenate(arrays).astype(np.float64, copy=False) if arrays else np.zeros(0)
        return values, np.array([a.size for a in arrays], dtype=np.int64)

    return _Scores(kept, *joined(relevant), *joined(sampled), False)


def fit_queries(samples: ScoreSamples, empirical: bool = False) -> QueryModel:
    """The per-query model of every query with a relevant document (`empirical`: the rank-scaling baseline).

    Every step runs on all queries' scores at once (flat arrays, one searchsorted), not query by query."""
    dropped = Counter()
    return _fit(samples, _gather(samples, dropped), empirical, dropped)


def _fit(samples: ScoreSamples, scores: _Scores, empirical: bool, dropped: Counter) -> QueryModel:
    """The model of `scores`; refitted on the rest where queries are dropped (counted in `dropped`)."""
    if not scores.kept:
        empty = _Flat.of(np.zeros(0), np.zeros(0, dtype=np.int64))
        return _model(samples, [], empty, *(np.zeros(0),) * 4, empirical, dropped)
    sampled = scores.sampled
    if scores.ascending:  # each query's smallest and largest sampled scores (see FlatScores for NaN and inf)
        starts = np.cumsum(scores.n_sampled) - scores.n_sampled
        sampled = np.r_[sampled[starts], sampled[starts + scores.n_sampled - 1]]
    ends = [float(f(a)) for a in (scores.relevant, sampled) for f in (np.min, np.max)]
    if not np.isfinite(ends).all():  # NaN or inf among the scores
        owner = np.repeat(np.r_[np.arange(len(scores.kept)), np.arange(len(scores.kept))],
                          np.r_[scores.n_relevant, scores.n_sampled])
        bad = np.zeros(len(scores.kept), dtype=bool)
        bad[owner[~np.isfinite(np.r_[scores.relevant, scores.sampled])]] = True
        dropped["relevant or sampled scores missing or not finite"] += int(bad.sum())
        return _fit(samples, scores.subset(~bad), empirical, dropped)
    lowest, highest = min(ends[0], ends[2]), max(ends[1], ends[3])
    width = (highest - lowest) + 1.0
    if (len(scores.kept) + 1) * width >= 2.0**51:  # keys are then spaced less than 1 apart: queries would mix
        raise CannotPredictError(f"the scores span {highest - lowest:.3g}, too wide a range to order every query's "
                                 "scores in one pass; no model gives scores this far apart")
    rel = _Flat.of(scores.relevant, scores.n_relevant, lowest, width, scores.ascending)
    sam = _Flat.of(scores.sampled, scores.n_sampled, lowest, width, scores.ascending)
    above, tied = sam.count_above_and_tied(rel.keys, rel.query)
    share_above, share_tied = above / sam.counts[rel.query], tied / sam.counts[rel.query]
    if not empirical:
        share_above, keep, reasons = _tail_shares(rel, sam, share_above, share_tied)
        if not keep.all():
            dropped.update(reasons)
            return _fit(samples, scores.subset(keep), empirical, dropped)
    rel_above, rel_tied = rel.count_above_and_tied(rel.keys, rel.query)
    return _model(samples, scores.kept, rel, rel_above, rel_tied - 1, share_above, share_tied, empirical, dropped)


def _model(samples, kept, rel, above, tied, share_above, share_tied, empirical, dropped) -> QueryModel:
    return QueryModel(query_ids=tuple(kept), num_docs=int(samples.num_docs), n_relevant=rel.counts, query=rel.query,
                      above=np.asarray(above), tied=np.asarray(tied), share_above=np.asarray(share_above),
                      share_tied=np.asarray(share_tied), binomial=not empirical, dropped=dict(dropped))


def _tail_shares(rel: _Flat, sam: _Flat, share_above, share_tied):
    """Replaces the empirical share above relevant scores in each query's tail by the fitted GPD's.

    All queries' tails are fitted at once from their concatenated exceedances. Returns (shares, queries kept,
    reasons for the dropped ones): a query is dropped when a relevant score needs a tail it cannot have."""
    mass = sam.count_above_and_tied(sam.keys[sam.starts], np.arange(sam.counts.size))[1]
    continuous = sam.counts - mass
    # a query whose sampled scores are all tied (continuous 0) has no tail: n_tail stays at 0, never negative
    n_tail = np.clip(np.ceil(TAIL_FRACTION * continuous).astype(np.int64), MIN_TAIL, np.maximum(continuous - 1, 0))
    fittable = n_tail >= MIN_TAIL
    ends = sam.starts + sam.counts
    thresholds = np.where(fittable, sam.values[np.clip(ends - n_tail - 1, sam.starts, ends - 1)],
                          sam.values[sam.starts])
    scale, shape = np.ones(sam.counts.size), np.zeros(sam.counts.size)
    if fittable.any():
        index = np.flatnonzero(fittable)
        counts = n_tail[index]
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        within = np.arange(counts.sum()) - np.repeat(starts, counts)  # the top n_tail scores of each query
        excess = sam.values[np.repeat(ends[index] - counts, counts) + within] - np.repeat(thresholds[index], counts)
        scale[index], shape[index] = _pwm_gpd(excess, counts, starts)
    fittable &= scale > 0
    q = rel.query
    in_tail = (rel.values > thresholds[q]) & (share_tied == 0)
    lacking = np.zeros(sam.counts.size, dtype=bool)
    lacking[q[in_tail & ~fittable[q]]] = True
    reasons = Counter()
    for i in np.flatnonzero(lacking):
        reasons[f"fewer than {MIN_TAIL + 1} sampled scores above the tie mass, too few for a tail fit"
                if scale[i] > 0 else "the sampled scores of the tail are all tied"] += 1
    use = in_tail & fittable[q]
    share = np.array(share_above, dtype=np.float64)
    weight = n_tail / sam.counts
    share[use] = weight[q[use]] * gpd_sf(rel.values[use] - thresholds[q[use]], scale[q[use]], shape[q[use]])
    return share, ~lacking, reasons


def _pwm_gpd(flat: np.ndarray, counts: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(scale, shape) of a GPD (scipy's genpareto convention) per query from its exceedances, `flat[starts[i]:
    starts[i] + counts[i]]` sorted ascending.

    Probability-weighted moments: a0 = mean(y), a1 = mean((1 - p_j) y_(j)) with p_j = (j - 0.35)/n; then
    k = a0/(a0 - 2 a1) - 2 and shape = -k. A few hundred exceedances leave the shape uncertain by ~0.06, and a
    recall averaged over queries is not linear in it, so each query's shape is shrunk towards the queries' mean
    by the share of the spread that is not sampling noise (an empirical-Bayes step; the noise variance of the
    estimate is 4 / (3 n) near shape 0, Hosking and Wallis 1987). The scale then keeps the mean excess:
    scale = a0 (1 - shape). Shapes are clipped to +-SHAPE_LIMIT and a bounded tail reaches the largest excess."""
    position = np.arange(flat.size) - np.repeat(starts, counts)  # j - 1 within each query
    n = np.repeat(counts, counts)
    a0 = np.add.reduceat(flat, starts) / counts
    a1 = np.add.reduceat(flat * (1.0 - (position + 0.65) / n), starts) / counts
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = a0 - 2.0 * a1
        shape = np.clip(-(a0 / denominator - 2.0), -SHAPE_LIMIT, SHAPE_LIMIT)
    degenerate = ~(a0 > 0) | ~(denominator > 0)
    if (~degenerate).sum() >= 2:
        noise = 4.0 / (3.0 * counts[~degenerate])
        center = float(np.mean(shape[~degenerate]))
        spread = max(float(np.var(shape[~degenerate])) - float(np.mean(noise)), 0.0)
        shape[~degenerate] = center + spread / (spread + noise) * (shape[~degenerate] - center)
    scale = a0 * (1.0 - shape)
    biggest = np.maximum.reduceat(flat, starts)
    bounded = (shape < 0) & (scale < -shape * biggest)
    shape = np.where(bounded, -scale / np.where(biggest > 0, biggest, 1.0), shape)
    return np.where(degenerate, 0.0, scale), np.where(degenerate, 0.0, shape)


def gpd_sf(excess, scale, shape):
    """Survival of a GPD(shape, loc 0, scale) at excess >= 0 (0 beyond a bounded tail's end), elementwise."""
    z = np.asarray(excess, dtype=np.float64) / scale
    shape = np.broadcast_to(np.asarray(shape, dtype=np.float64), z.shape)
    exponential = np.abs(shape) < 1e-9
    safe = np.where(exponential, 1.0, shape)
    base = 1.0 + safe * z
    with np.errstate(divide="ignore", invalid="ignore"):
        pareto = np.where(base > 0, np.exp(-np.log(np.maximum(base, 1e-300)) / safe), 0.0)
    return np.where(exponential, np.exp(-z), pareto)


def query_recall(model: QueryModel, sizes, ks, growth: str, known=None) -> np.ndarray:
    """(kept queries, sizes, ks) predicted Recall@k of each query at each corpus size (`known`: each kept
    query's relevant count at the target, see `target_counts`).

    With f = R'/R target relevant documents per sampled one, the relevant document with `above` others above
    it stands for f documents with a uniform number of relevant documents above them in [above f, (above+1) f):
    it is in the top k with probability E[clip(k - above f - B, 0, f)] / f, B the non-relevant documents
    above it (Binomial(N', share above) for the model, the expected N' * share for the rank baseline)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    ks = np.asarray(ks, dtype=np.float64)
    if not model.query.size:
        return np.zeros((0, sizes.size, ks.size))
    n_rel = model.n_relevant[model.query].astype(np.float64)
    known = None if known is None else np.asarray(known, dtype=np.float64)[model.query][:, None]
    relevant, nonrelevant = target_counts(n_rel[:, None], model.num_docs, sizes[None, :], growth, known)
    factor = (relevant / n_rel[:, None])[:, :, None]
    nonrel = nonrelevant[:, :, None]
    room = ks[None, None, :] - model.above[:, None, None] * factor  # k - relevant documents above the block
    share = model.share_above[:, None, None]
    tied_share = model.share_tied[:, None, None]
    # Documents tied with non-relevant ones (at the tie mass): a uniform position among the tied group.
    group = nonrel * tied_share + (model.tied[:, None, None] + 1.0) * factor
    in_ties = np.clip((room - nonrel * share) / group, 0.0, 1.0)
    if model.binomial:
        trials = np.broadcast_to(np.rint(nonrel), room.shape)
        p = np.broadcast_to(share, room.shape)
        if (factor == 1.0).all():  # one target document per sampled one: P[B <= k - 1 - above]
            inside = _cdf(room - 1.0, trials, p)
        else:
            inside = (_partial_mean(room, trials, p) - _partial_mean(room - factor, trials, p)) / factor
    else:
        inside = np.clip(room - nonrel * share, 0.0, factor) / factor
    inside = np.where(tied_share > 0, in_ties, inside)
    starts = np.concatenate([[0], np.cumsum(model.n_relevant)[:-1]])
    return np.add.reduceat(inside, starts, axis=0) / model.n_relevant[:, None, None]


def _partial_mean(x, n, p):
    """E[max(x - B, 0)] for B ~ Binomial(n, p), elementwise, x real.

    At an integer j it is j F_n(j) - n p F_{n-1}(j - 1) (F: binomial cdfs); between integers it is linear with
    slope F_n(floor x)."""
    j = np.floor(x)
    below = _cdf(j, n, p)
    at_j = j * below - n * p * _cdf(j - 1.0, n - 1.0, p)
    return np.where(x <= 0, 0.0, np.maximum(at_j, 0.0) + (x - j) * below)


def _cdf(x, n, p):
    """Binomial cdf, computed exactly only near the mean (far away it is 0 or 1 to double precision)."""
    x, n, p = np.broadcast_arrays(x, n, p)
    shape = x.shape
    x, n, p = (np.asarray(a, dtype=np.float64).ravel() for a in (x, n, p))
    mean = n * p
    out = ((x >= n) | (x >= mean)).astype(np.float64)
    out[x < 0] = 0.0
    near = np.flatnonzero((np.abs(x - mean) <= _EXACT_BAND * np.sqrt(mean * (1.0 - p)) + _EXACT_BAND)
                          & (x >= 0) & (x < n))
    if near.size:
        out[near] = _binom_cdf(x[near], n[near], p[near])
    return out.reshape(shape)


def _binom_cdf(x, n, p):
    """stats.binom.cdf(x, n, p) for 0 <= x < n, n whole (what `_cdf` asks), the same values without the checks
    and broadcasting around every call: its distribution's own cdf where p is a probability, NaN elsewhere."""
    out = np.full(x.shape, np.nan)
    valid = (p >= 0.0) & (p <= 1.0)
    out[valid] = np.clip(stats.binom._cdf(x[valid], n[valid], p[valid]), 0.0, 1.0)
    return out
