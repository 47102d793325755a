"""Recall at scale: predict Recall@k at a larger corpus size from score samples (the SDM method and two others).

Model (../shared/design/sdm.md): relevant scores follow a skew-normal; non-relevant scores a
skew-normal body, optionally with a generalized Pareto tail spliced above its 80th percentile
("hybrid"). At corpus size S with R relevant and N = S - R non-relevant documents per query, the
plug-in threshold tau_k solves R*sf_r(tau) + N*sf_n(tau) = k and Recall@k = sf_r(tau_k).

Three modes (`forecasts`):
- "per_query" (leaderboard/analysis/scale_query.py): per query, a tie mass at the lowest score, the empirical sample
  above it and a GPD tail; each relevant document's chance of being in the top k, averaged. Vectorised over
  queries; a query that cannot be modelled is dropped and counted.
- "pooled" (the paper's): one fit over all queries' relevant scores and pooled non-relevant samples,
  R = mean relevant count per query, one plug-in recall.
- "rank": the rank-scaling baseline, each relevant document placed at 1 + (documents above it in the
  sample) x (target size / sample size).

Two growth scenarios say what a larger corpus holds (scale_query.target_counts): "fixed-relevant" (the judged
relevant documents stay, non-relevant ones are added) and "uniform" (relevant documents grow in proportion).

Inputs that cannot support a prediction raise CannotPredictError with a ``reason``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from scipy import optimize, special, stats

from evaluator.score_samples import FORMAT_V1, ScoreSamples, ScoreSamplesModel, decode_score_samples_v1
from leaderboard.analysis.scale_options import MODES, CannotPredictError, Mode, Tail  # noqa: F401 (re-exported)
from leaderboard.analysis.scale_query import GROWTHS, check_growth, fit_queries, query_recall, target_counts

logger = logging.getLogger(__name__)

MIN_SAMPLES = 10
TAIL_QUANTILE = 80.0
MAX_TIED_FRACTION = 0.5


@dataclass(frozen=True)
class HybridTail:
    """A skew-normal body with a generalized Pareto tail above ``threshold`` (sdm.md §2.3).

    GPD convention as scipy's genpareto(c=shape, loc=0, scale=scale): shape < 0 bounds the tail at
    ``endpoint``. The tail weight is the body's own survival at the threshold, so the CDF is
    continuous; with scale = sf_body(u) / pdf_body(u) the density is continuous too.
    """

    body: Any
    threshold: float
    shape: float
    scale: float
    tail_weight: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tail_weight", float(self.body.sf(self.threshold)))

    @property
    def endpoint(self) -> float:
        """Upper end of the support: finite when shape < 0."""
        return self.threshold - self.scale / self.shape if self.shape < 0 else math.inf

    def _log_gpd_sf(self, excess: np.ndarray) -> np.ndarray:
        z = excess / self.scale
        if abs(self.shape) < 1e-12:
            return -z
        base = 1.0 + self.shape * z
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(base > 0, -np.log1p(self.shape * z) / self.shape, -np.inf)

    def sf(self, x):
        x = np.asarray(x, dtype=np.float64)
        excess = np.maximum(x - self.threshold, 0.0)
        tail = self.tail_weight * np.exp(self._log_gpd_sf(excess))
        return np.where(x <= self.threshold, self.body.sf(np.minimum(x, self.threshold)), tail)

    def cdf(self, x):
        return 1.0 - self.sf(x)

    def pdf(self, x):
        x = np.asarray(x, dtype=np.float64)
        excess = np.maximum(x - self.threshold, 0.0)
        log_sf = self._log_gpd_sf(excess)
        # GPD density = sf(y)^(1 + shape) / scale.
        tail = self.tail_weight * np.exp((1.0 + self.shape) * log_sf) / self.scale
        return np.where(x <= self.threshold, self.body.pdf(np.minimum(x, self.threshold)), tail)

    def isf(self, q):
        q = np.asarray(q, dtype=np.float64)
        in_tail = q < self.tail_weight
        log_q = np.log(np.where(in_tail, q / self.tail_weight, 0.5))
        if abs(self.shape) < 1e-12:
            excess = -self.scale * log_q
        else:
            excess = self.scale * np.expm1(-self.shape * log_q) / self.shape
        return np.where(in_tail, self.threshold + excess, self.body.isf(np.where(in_tail, 0.5, q)))


class ScoreModel(NamedTuple):
    """Fitted score distributions: a frozen skew-normal and a skew-normal or HybridTail."""

    relevant: Any
    nonrelevant: Any


def check_scores(scores, what: str) -> np.ndarray:
    """Scores as a float64 vector, or CannotPredictError when no fit could be trusted."""
    values = np.asarray(scores, dtype=np.float64).ravel()
    if values.size < MIN_SAMPLES:
        raise CannotPredictError(f"{what}: {values.size} scores, at least {MIN_SAMPLES} are needed to fit")
    bad = int(np.count_nonzero(~np.isfinite(values)))
    if bad:
        raise CannotPredictError(f"{what}: {bad} of {values.size} scores are NaN or infinite")
    _, counts = np.unique(values, return_counts=True)
    if counts.size == 1:
        raise CannotPredictError(f"{what}: all {values.size} scores equal {values[0]:g}")
    if counts.max() > MAX_TIED_FRACTION * values.size:
        raise CannotPredictError(
            f"{what}: {counts.max()} of {values.size} scores are tied at one value (as with lexical or "
            "sparse scores); a continuous score model does not apply"
        )
    return values


def fit_skewnorm(values: np.ndarray, what: str = "scores"):
    """Maximum-likelihood skew-normal as a frozen scipy.stats.skewnorm (args a, loc, scale).

    Same estimate as scipy.stats.skewnorm.fit (to ~1e-4, with an equal or higher likelihood) in a
    fraction of the time: BFGS with the analytic gradient, on standardized scores, from the
    method-of-moments start.
    """
    mean, sd = float(values.mean()), float(values.std())
    u = (values - mean) / sd
    skewness = float(np.clip(np.mean(u**3), -0.99, 0.99))
    ratio = np.cbrt(2 * abs(skewness) / (4 - np.pi))
    delta = math.copysign(math.sqrt(math.pi / 2 * ratio**2 / (1 + ratio**2)), skewness)
    omega = 1 / math.sqrt(1 - 2 * delta**2 / math.pi)
    start = [delta / math.sqrt(1 - delta**2), -omega * delta * math.sqrt(2 / math.pi), math.log(omega)]

    def loss_and_gradient(params):
        a, loc, log_scale = params
        z = (u - loc) / math.exp(log_scale)
        log_cdf = special.log_ndtr(a * z)
        mills = np.exp(-0.5 * (a * z) ** 2 - 0.5 * math.log(2 * math.pi) - log_cdf)  # phi(az)/Phi(az)
        loss = np.mean(log_scale + 0.5 * z * z - log_cdf)
        gradient = [
            -np.mean(mills * z),
            -np.mean(z - a * mills) / math.exp(log_scale),
            -np.mean(-1 + z * z - a * mills * z),
        ]
        return loss, np.array(gradient)

    fit = optimize.minimize(
        loss_and_gradient,
        start,
        jac=True,
        method="BFGS",
        options={"maxiter": 1000, "gtol": 1e-9},
    )
    a, loc, log_scale = fit.x
    loc, scale = mean + sd * loc, sd * math.exp(log_scale)
    if not (np.isfinite([a, loc, scale]).all() and scale > 0):
        raise CannotPredictError(f"{what}: the skew-normal fit failed (a={a}, loc={loc}, scale={scale})")
    return stats.skewnorm(a, loc, scale)


def fit_gpd_tail(values: np.ndarray, body, what: str = "non-relevant scores") -> HybridTail:
    """Splices a GPD tail on ``body`` above the 80th percentile of ``values`` (sdm.md §2.3)."""
    threshold = float(np.percentile(values, TAIL_QUANTILE))
    excess = values[values > threshold] - threshold
    density = float(body.pdf(threshold))
    if excess.size < MIN_SAMPLES:
        raise CannotPredictError(
            f"{what}: {excess.size} scores above the {TAIL_QUANTILE:g}th percentile, too few for a tail fit"
        )
    if not density > 0:
        raise CannotPredictError(
            f"{what}: the skew-normal body has no density at the tail threshold {threshold:g}"
        )
    scale = float(body.sf(threshold)) / density
    n, biggest = excess.size, float(excess.max())

    def neg_log_likelihood(shape: float) -> float:
        if abs(shape) < 1e-8:
            return n * math.log(scale) + float(excess.sum()) / scale
        terms = 1.0 + shape * excess / scale
        if terms.min() <= 0:
            return 1e20
        return n * math.log(scale) + (1.0 + 1.0 / shape) * float(np.log(terms).sum())

    lower = max(-scale / biggest + 1e-9, -1.0)
    shape = optimize.minimize_scalar(
        neg_log_likelihood, bounds=(lower, 5.0), method="bounded", options={"xatol": 1e-9}
    ).x
    return HybridTail(body=body, threshold=threshold, shape=float(shape), scale=scale)


def fit_score_model(relevant_scores, nonrelevant_scores, tail: Tail = "hybrid") -> ScoreModel:
    """Fits (relevant, non-relevant) score distributions; both have sf/isf/cdf/pdf."""
    _check_tail(tail)
    relevant = fit_skewnorm(check_scores(relevant_scores, "relevant scores"), "relevant scores")
    return ScoreModel(relevant, fit_nonrelevant(nonrelevant_scores, tail))


def fit_nonrelevant(nonrelevant_scores, tail: Tail = "hybrid", what: str = "non-relevant scores"):
    """The non-relevant model: a skew-normal, with a GPD tail spliced on when tail="hybrid"."""
    _check_tail(tail)
    values = check_scores(nonrelevant_scores, what)
    body = fit_skewnorm(values, what)
    return fit_gpd_tail(values, body, what) if tail == "hybrid" else body


def _check_tail(tail: str) -> None:
    if tail not in ("hybrid", "skewnorm"):
        raise ValueError(f"tail must be 'hybrid' or 'skewnorm', got {tail!r}")


def _initial_bracket(relevant, nonrelevant, n_relevant, n_nonrelevant, ks):
    """Thresholds where the count above is >= k (lo) and <= k (hi), from inverse survival functions."""
    total = n_relevant + n_nonrelevant
    lo = np.full(ks.shape, -1.0)
    hi = np.full(ks.shape, 1.0)
    if not (hasattr(relevant, "isf") and hasattr(nonrelevant, "isf")):
        return lo, hi
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(ks / total, 0.0, 1.0)
        lo = np.minimum(relevant.isf(q), nonrelevant.isf(q)) if n_relevant > 0 else nonrelevant.isf(q)
        hi_r = np.where(ks < 2 * n_relevant, relevant.isf(np.clip(ks / (2 * n_relevant), 0, 1)), -np.inf)
        hi_n = np.where(
            ks < 2 * n_nonrelevant, nonrelevant.isf(np.clip(ks / (2 * n_nonrelevant), 0, 1)), -np.inf
        )
        hi = np.maximum(hi_r, hi_n)
    lo = np.where(np.isfinite(lo), lo, -1.0)
    hi = np.where(np.isfinite(hi), hi, 1.0)
    return lo, hi


def solve_thresholds(relevant, nonrelevant, n_relevant: float, n_nonrelevant, ks) -> np.ndarray:
    """tau with n_relevant*sf_r(tau) + n_nonrelevant*sf_n(tau) = k, elementwise over broadcast arrays.

    Bisection on a bracket checked to hold the root, all elements at once, to 1e-14; needs
    k < n_relevant + n_nonrelevant.
    """
    n_nonrelevant, ks = np.broadcast_arrays(np.asarray(n_nonrelevant, np.float64), np.asarray(ks, np.float64))
    if (ks >= n_relevant + n_nonrelevant).any():
        raise ValueError("every k must be below n_relevant + n_nonrelevant")

    def excess(t):
        return n_relevant * relevant.sf(t) + n_nonrelevant * nonrelevant.sf(t) - ks

    lo, hi = _initial_bracket(relevant, nonrelevant, n_relevant, n_nonrelevant, ks)
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    for _ in range(200):
        low = excess(lo) < 0
        high = excess(hi) > 0
        if not (low.any() or high.any()):
            break
        width = np.maximum(1.0, hi - lo)
        lo, hi = np.where(low, lo - width, lo), np.where(high, hi + width, hi)
    else:
        raise CannotPredictError(
            "no score threshold leaves k documents above it; the score model is degenerate"
        )
    if not (np.isfinite(excess(lo)).all() and np.isfinite(excess(hi)).all()):
        raise CannotPredictError("the survival functions returned NaN; the score model is degenerate")
    for _ in range(200):
        if (hi - lo <= 1e-14 + 4e-16 * np.abs(lo)).all():
            break
        mid = 0.5 * (lo + hi)
        above = excess(mid) >= 0
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return 0.5 * (lo + hi)


def solve_threshold(relevant, nonrelevant, n_relevant: float, n_nonrelevant: float, k: float) -> float:
    """tau_k with n_relevant*sf_r(tau) + n_nonrelevant*sf_n(tau) = k (sdm.md §3.2)."""
    return float(solve_thresholds(relevant, nonrelevant, n_relevant, n_nonrelevant, k))


def plugin_recall_matrix(relevant, nonrelevant, n_relevant: float, n_nonrelevant, ks) -> np.ndarray:
    """Plug-in Recall@k for each n_nonrelevant (rows) and k (columns)."""
    n_nonrelevant = np.atleast_1d(np.asarray(n_nonrelevant, dtype=np.float64))
    if not (
        n_relevant > 0
        and math.isfinite(n_relevant)
        and np.isfinite(n_nonrelevant).all()
        and (n_nonrelevant >= 0).all()
    ):
        raise CannotPredictError(
            f"counts must be n_relevant > 0 and n_nonrelevant >= 0, got {n_relevant} and {n_nonrelevant}"
        )
    grid_n, grid_k = np.meshgrid(n_nonrelevant, np.asarray(_check_ks(ks), np.float64), indexing="ij")
    everything = grid_k >= n_relevant + grid_n
    recall = np.ones(grid_n.shape)
    if (~everything).any():
        tau = solve_thresholds(relevant, nonrelevant, n_relevant, grid_n[~everything], grid_k[~everything])
        recall[~everything] = relevant.sf(tau)
    return recall


def plugin_recall(relevant, nonrelevant, n_relevant: float, n_nonrelevant: float, ks) -> dict[int, float]:
    """Plug-in Recall@k = sf_r(tau_k) for each k (sdm.md §3); distributions need vectorized ``sf``."""
    row = plugin_recall_matrix(relevant, nonrelevant, n_relevant, n_nonrelevant, ks)[0]
    return {k: float(v) for k, v in zip(_check_ks(ks), row, strict=True)}


def _check_ks(ks) -> tuple[int, ...]:
    """Positive integer cut-offs, duplicates dropped, order kept."""
    given = np.atleast_1d(np.asarray(ks, dtype=np.float64))
    if given.size == 0 or not (
        np.isfinite(given).all() and (given >= 1).all() and (given == np.floor(given)).all()
    ):
        raise ValueError(f"ks must be positive integers, got {ks!r}")
    return tuple(dict.fromkeys(int(k) for k in given))


@dataclass(frozen=True, eq=False)
class Forecast:
    """Predicted Recall@k in one growth scenario: ``recall[i, j]`` at sizes[i] for ks[j].

    ``per_query`` holds each kept query's values (per_query and rank modes); ``dropped`` counts the queries
    left out, by reason; ``fit`` is the pooled fit (pooled mode)."""

    sizes: tuple[float, ...]
    ks: tuple[int, ...]
    growth: str
    mode: str
    tail: str
    recall: np.ndarray
    queries: int
    dropped: dict[str, int]
    per_query: np.ndarray | None = None
    fit: ScoreModel | None = None

    @property
    def n_dropped(self) -> int:
        return sum(self.dropped.values())

    def band(self, level: float = 0.95, resamples: int = 1000, seed: int = 0) -> np.ndarray | None:
        """(2, sizes, ks) percentile bootstrap interval of the mean over queries; None without per-query values."""
        if self.per_query is None or len(self.per_query) < 2:
            return None
        rng = np.random.default_rng(seed)
        picks = rng.integers(0, len(self.per_query), size=(resamples, len(self.per_query)))
        flat = self.per_query.reshape(len(self.per_query), -1)
        means = np.stack([flat[row].mean(axis=0) for row in picks])
        tails = [(1.0 - level) / 2 * 100, (1.0 + level) / 2 * 100]
        return np.percentile(means, tails, axis=0).reshape(2, *self.recall.shape)


def samples_of(result) -> ScoreSamples:
    """The decoded score samples of a result (object or dict), of its encoded field, or ScoreSamples itself.

    The one adapter between result files and the prediction; CannotPredictError without samples."""
    if isinstance(result, ScoreSamples):
        return result
    data = getattr(result, "score_samples", None)
    if data is None and isinstance(result, Mapping):
        data = result.get("score_samples", result if "format" in result else None)
    if data is None:
        raise CannotPredictError(
            "the result has no score_samples (schema version 1 or collected without them); "
            "re-run irboard evaluate to collect them"
        )
    if isinstance(data, ScoreSamples):
        return data
    if isinstance(data, ScoreSamplesModel):
        data = data.model_dump()
    if isinstance(data, Mapping) and data.get("format") == FORMAT_V1:
        return decode_score_samples_v1(data)
    raise CannotPredictError("stored score samples are decoded when their result is read; pass the result")


def forecasts(result, sizes, ks, mode: Mode = "per_query", tail: Tail = "hybrid",
              growths: Sequence[str] = GROWTHS, known: Mapping[str, float] | None = None) -> dict[str, Forecast]:
    """Recall@k over sizes x ks for each growth scenario, from one fit of the result's score samples.

    ``result``: anything `samples_of` accepts. Queries without judged relevant documents are left out (their
    recall is undefined); relevant documents the samples call absent from the corpus are misses
    (`absent_as_misses`); per_query mode drops queries whose samples cannot support a tail, counting them.
    ``known``: query id -> relevant documents at the target, in place of the growth scenario's count
    (benchmarks/scale.py, whose sub-corpora come from a collection whose counts are known)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    _check_tail(tail)
    for growth in growths:
        check_growth(growth)
    samples = samples_of(result)
    sizes_array = np.atleast_1d(np.asarray(sizes, dtype=np.float64))
    ks = _check_ks(ks)
    flat = samples.flat_scores()
    counts = flat.n_relevant if flat is not None else np.array([q.n_relevant for q in samples.queries.values()],
                                                              dtype=np.int64)
    n_relevant = counts[counts > 0].astype(np.float64)
    if not n_relevant.size:
        raise CannotPredictError("no query has a relevant document, so there are no relevant scores to fit")
    if not (np.isfinite(sizes_array).all() and (sizes_array > n_relevant.max()).all()):
        raise CannotPredictError(
            f"corpus sizes {sizes_array.tolist()} must be finite and larger than the relevant count per query "
            f"(up to {n_relevant.max():g})"
        )
    common = {"sizes": tuple(float(s) for s in sizes_array), "ks": ks, "mode": mode, "tail": tail}
    if mode == "pooled":
        return {growth: _pooled(samples, n_relevant, sizes_array, growth, common, known) for growth in growths}
    model = fit_queries(samples, empirical=mode == "rank")
    if not model.query_ids:
        reasons = "; ".join(f"{count} {reason}" for reason, count in model.dropped.items())
        raise CannotPredictError(f"no query could be modelled ({reasons})")
    out = {}
    for growth in growths:
        values = query_recall(model, sizes_array, ks, growth,
                              None if known is None else [known[qid] for qid in model.query_ids])
        values = absent_as_misses(samples, model.query_ids, values)
        out[growth] = Forecast(growth=growth, recall=values.mean(axis=0), queries=values.shape[0],
                               dropped=dict(model.dropped), per_query=values, **common)
    return out


def absent_as_misses(samples: ScoreSamples, kept: Sequence[str], values: np.ndarray) -> np.ndarray:
    """Per-query recall (kept queries, sizes, ks) with the judged relevant documents the samples call absent from
    the corpus (`absent_relevant`) counted as misses at every size, as trec_eval counts them in the measured R@k:
    each kept query's recall scaled by n_relevant / (n_relevant + absent), and a query whose every relevant
    document is called absent added with recall 0, never dropped. So a claimed absence, checked or not, can only
    lower a prediction (an unchecked claim that a missed document is absent bought recall before)."""
    flat = samples.flat_scores()
    if flat is not None and flat.absent is None:
        return values
    absent = {q: samples.queries[q].absent for q in samples.queries}
    if not any(absent.values()):
        return values
    kept_relevant = np.array([samples.queries[q].n_relevant for q in kept], dtype=np.float64)
    kept_absent = np.array([absent[q] for q in kept], dtype=np.float64)
    scaled = values * (kept_relevant / (kept_relevant + kept_absent))[:, None, None]
    only_absent = sum(1 for q, a in absent.items() if a and not samples.queries[q].n_relevant)
    return np.concatenate((scaled, np.zeros((only_absent, *values.shape[1:]))))


def forecast(result, sizes, ks, growth: str = "fixed-relevant", mode: Mode = "per_query",
             tail: Tail = "hybrid", known: Mapping[str, float] | None = None) -> Forecast:
    """`forecasts` for one growth scenario."""
    return forecasts(result, sizes, ks, mode, tail, (growth,), known)[growth]


def _pooled(samples: ScoreSamples, n_relevant: np.ndarray, sizes: np.ndarray, growth: str, common,
            known: Mapping[str, float] | None = None) -> Forecast:
    """The paper's pooled plug-in: one fit over every query's scores, R = the mean relevant count."""
    used = [q for q in samples.queries.values() if q.n_relevant > 0]
    fit = fit_score_model(np.concatenate([q.relevant for q in used]),
                          np.concatenate([q.nonrelevant for q in used]), common["tail"])
    mean_known = None if known is None else float(np.mean(
        [known[qid] for qid, q in samples.queries.items() if q.n_relevant > 0]))
    relevant, nonrelevant = target_counts(float(n_relevant.mean()), samples.num_docs, sizes, growth, mean_known)
    rows = [plugin_recall_matrix(*fit, float(r), n, common["ks"])[0] for r, n in zip(relevant, nonrelevant,
                                                                                        strict=True)]
    # claimed-absent relevant documents are misses (see absent_as_misses): the mean share of each query's present
    judged = [q for q in samples.queries.values() if q.n_relevant + q.absent > 0]
    present = float(np.mean([q.n_relevant / (q.n_relevant + q.absent) for q in judged]))
    return Forecast(growth=growth, recall=np.array(rows) * present, queries=len(judged), dropped={}, fit=fit,
                    **common)
