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
from typing import Literal

import numpy as np
from scipy import stats

from evaluator.score_samples import ScoreSamples

Growth = Literal["fixed-relevant", "uniform"]
GROWTHS: tuple[str, ...] = ("fixed-relevant", "uniform")
TAIL_FRACTION = 0.05  # share of the scores above the tie mass that the tail is fitted on
MIN_TAIL = 10  # fewest scores a tail is fitted on
SHAPE_LIMIT = 0.5  # |GPD shape| is clipped here (probability-weighted moments need shape < 0.5)
_EXACT_BAND = 12.0  # binomial cdfs further than this many sds (+ this count) from the mean are taken as 0 or 1


def check_growth(growth: str) -> None:
    if growth not in GROWTHS:
        raise ValueError(f"growth must be one of {', '.join(GROWTHS)}; got {growth!r}")


def target_counts(n_relevant, num_docs: float, size, growth: str):
    """(relevant, non-relevant) documents per query at corpus size `size`, broadcast over arrays.

    fixed-relevant: the judged relevant documents stay and only non-relevant ones are added (the SDM paper's
    CoRE setting). uniform: the collection grows as it is, so relevant documents grow in proportion."""
    check_growth(growth)
    n_relevant = np.asarray(n_relevant, dtype=np.float64)
    size = np.asarray(size, dtype=np.float64)
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


def fit_queries(samples: ScoreSamples, empirical: bool = False) -> QueryModel:
    """The per-query model of every query with a relevant document (`empirical`: the rank-scaling baseline)."""
    kept, rows, dropped = [], [], Counter()
    for query_id, q in samples.queries.items():
        if q.n_relevant <= 0:
            continue  # recall is undefined without a relevant document
        relevant = np.sort(np.asarray(q.relevant, dtype=np.float64))
        sample = np.asarray(q.nonrelevant, dtype=np.float64)
        if relevant.size != q.n_relevant or not (np.isfinite(relevant).all() and np.isfinite(sample).all()):
            dropped["relevant or sampled scores missing or not finite"] += 1
            continue
        if sample.size == 0:
            dropped["no sampled non-relevant score"] += 1
            continue
        if sample.size > 1 and (np.diff(sample) < 0).any():
            sample = np.sort(sample)
        rows.append((relevant, sample))
        kept.append(query_id)
    shares_above, shares_tied = _empirical_shares(rows)
    if not empirical and rows:
        shares_above, keep, reasons = _tail_shares(rows, shares_above, shares_tied)
        dropped.update(reasons)
        rows = [row for row, k in zip(rows, keep, strict=True) if k]
        kept = [query_id for query_id, k in zip(kept, keep, strict=True) if k]
        shares_above = [s for s, k in zip(shares_above, keep, strict=True) if k]
        shares_tied = [s for s, k in zip(shares_tied, keep, strict=True) if k]
    counts = np.array([row[0].size for row in rows], dtype=np.int64)
    flat = np.concatenate([row[0] for row in rows]) if rows else np.zeros(0)
    query = np.repeat(np.arange(len(rows)), counts)
    above, tied = _relevant_ranks(rows)
    return QueryModel(
        query_ids=tuple(kept), num_docs=int(samples.num_docs), n_relevant=counts, query=query,
        above=above, tied=tied,
        share_above=np.concatenate(shares_above) if rows else flat,
        share_tied=np.concatenate(shares_tied) if rows else flat,
        binomial=not empirical, dropped=dict(dropped),
    )


def _empirical_shares(rows):
    """Per query: shares of the sample strictly above and tied with each relevant score."""
    above, tied = [], []
    for relevant, sample in rows:
        below_or_equal = np.searchsorted(sample, relevant, side="right")
        below = np.searchsorted(sample, relevant, side="left")
        above.append((sample.size - below_or_equal) / sample.size)
        tied.append((below_or_equal - below) / sample.size)
    return above, tied


def _relevant_ranks(rows):
    above, tied = [], []
    for relevant, _ in rows:
        right = np.searchsorted(relevant, relevant, side="right")
        left = np.searchsorted(relevant, relevant, side="left")
        above.append(relevant.size - right)
        tied.append(right - left - 1)
    empty = np.zeros(0, dtype=np.int64)
    return (np.concatenate(above) if above else empty), (np.concatenate(tied) if tied else empty)


def _tail_shares(rows, shares_above, shares_tied):
    """Replaces the empirical share above relevant scores in each query's tail by the fitted GPD's.

    All queries' tails are fitted at once: their exceedances are concatenated and the probability-weighted
    moments summed per query with np.add.reduceat."""
    sizes = np.array([sample.size for _, sample in rows])
    mass = np.array([np.searchsorted(sample, sample[0], side="right") for _, sample in rows])
    continuous = sizes - mass
    n_tail = np.minimum(np.maximum(np.ceil(TAIL_FRACTION * continuous).astype(np.int64), MIN_TAIL), continuous - 1)
    fittable = n_tail >= MIN_TAIL
    thresholds = np.array([sample[size - n - 1] if ok else sample[0]
                           for (_, sample), size, n, ok in zip(rows, sizes, n_tail, fittable, strict=True)])
    scale, shape = np.ones(len(rows)), np.zeros(len(rows))
    if fittable.any():
        index = np.flatnonzero(fittable)
        excess = [rows[i][1][sizes[i] - n_tail[i]:] - thresholds[i] for i in index]
        scale[index], shape[index] = _pwm_gpd(excess)
    fittable &= scale > 0
    keep = np.ones(len(rows), dtype=bool)
    reasons = Counter()
    out = []
    for i, (relevant, _) in enumerate(rows):
        share = shares_above[i].copy()
        in_tail = (relevant > thresholds[i]) & (shares_tied[i] == 0)
        if in_tail.any():
            if not fittable[i]:
                keep[i] = False
                reasons[f"fewer than {MIN_TAIL + 1} sampled scores above the tie mass, too few for a tail fit"
                        if scale[i] > 0 else "the sampled scores of the tail are all tied"] += 1
            else:
                weight = n_tail[i] / sizes[i]
                share[in_tail] = weight * gpd_sf(relevant[in_tail] - thresholds[i], scale[i], shape[i])
        out.append(share)
    return out, keep, reasons


def _pwm_gpd(excess: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(scale, shape) of a GPD (scipy's genpareto convention) per array of exceedances, sorted ascending.

    Probability-weighted moments: a0 = mean(y), a1 = mean((1 - p_j) y_(j)) with p_j = (j - 0.35)/n; then
    k = a0/(a0 - 2 a1) - 2 and shape = -k. A few hundred exceedances leave the shape uncertain by ~0.06, and a
    recall averaged over queries is not linear in it, so each query's shape is shrunk towards the queries' mean
    by the share of the spread that is not sampling noise (an empirical-Bayes step; the noise variance of the
    estimate is 4 / (3 n) near shape 0, Hosking and Wallis 1987). The scale then keeps the mean excess:
    scale = a0 (1 - shape). Shapes are clipped to +-SHAPE_LIMIT and a bounded tail reaches the largest excess."""
    counts = np.array([y.size for y in excess])
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    flat = np.concatenate(excess)
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
    """Survival of a GPD(shape, loc 0, scale) at excess >= 0 (0 beyond a bounded tail's end)."""
    z = np.asarray(excess, dtype=np.float64) / scale
    if abs(shape) < 1e-9:
        return np.exp(-z)
    base = 1.0 + shape * z
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(base > 0, np.exp(-np.log(np.maximum(base, 1e-300)) / shape), 0.0)


def query_recall(model: QueryModel, sizes, ks, growth: str) -> np.ndarray:
    """(kept queries, sizes, ks) predicted Recall@k of each query at each corpus size.

    With f = R'/R target relevant documents per sampled one, the relevant document with `above` others above
    it stands for f documents with a uniform number of relevant documents above them in [above f, (above+1) f):
    it is in the top k with probability E[clip(k - above f - B, 0, f)] / f, B the non-relevant documents
    above it (Binomial(N', share above) for the model, the expected N' * share for the rank baseline)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    ks = np.asarray(ks, dtype=np.float64)
    if not model.query.size:
        return np.zeros((0, sizes.size, ks.size))
    n_rel = model.n_relevant[model.query].astype(np.float64)
    relevant, nonrelevant = target_counts(n_rel[:, None], model.num_docs, sizes[None, :], growth)  # (docs, sizes)
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
    x, n, p = np.broadcast_arrays(x, n, p)
    j = np.floor(x)
    at_j = j * _cdf(j, n, p) - n * p * _cdf(j - 1.0, n - 1.0, p)
    value = np.maximum(at_j, 0.0) + (x - j) * _cdf(j, n, p)
    return np.where(x <= 0, 0.0, value)


def _cdf(x, n, p):
    """Binomial cdf, computed exactly only near the mean (far away it is 0 or 1 to double precision)."""
    mean = n * p
    sd = np.sqrt(n * p * (1.0 - p))
    out = np.where(x < 0, 0.0, np.where((x >= n) | (x >= mean), 1.0, 0.0))
    near = (np.abs(x - mean) <= _EXACT_BAND * sd + _EXACT_BAND) & (x >= 0) & (x < n)
    if near.any():
        out[near] = stats.binom.cdf(x[near], n[near], p[near])
    return out
