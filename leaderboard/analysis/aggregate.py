"""From loaded results to the numbers the site shows: per-dataset statistics and group aggregates.

Per dataset (main metric): mean, confidence interval (stats.score_intervals by default), all-pairs paired tests
with correction, rank ranges and tie bands from them (ranks.py), the best set (who could be #1: ranks.best_set,
the site's one verdict on who is best, best_words.py), and the comparison with the baseline. Across datasets: group means only for models that cover the
whole group, with a bootstrap CI, rank ranges and bands from corrected pairwise tests of the group means
(ranks.py), and mean ranks. Effect sizes of every pair and what each dataset can tell apart: effects.py.

A result is ranked on a dataset when its main metric was re-scored from the stored ranking
(leaderboard/submissions/verify.py; `LoadedResult.ranked_on`), whatever its other metrics rest on (a deep metric
resting on claimed ranks is marked on its own, evaluator/trust.py): ranked results come first, and the best sets,
rank ranges, rank intervals, bands and mean ranks are computed among them alone; a group ranks the models ranked on
each of its datasets. The others follow, with their means, intervals and tests, but no rank and no place in a best
set.
Per result with score samples: the recall-at-scale prediction (predictions.py).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats as scipy_stats
from scipy.stats import rankdata
from threadpoolctl import threadpool_limits

from evaluator.metrics import KINDS, parse_measure
from evaluator.result import slugify
from leaderboard.analysis import effects, stats
from leaderboard.analysis.group_robust import DatasetPart, GroupRobustness, crossed_tests, group_robustness
from leaderboard.analysis.predictions import (
    DEFAULT_GROWTH,
    DEFAULT_MODE,
    DEFAULT_TAIL,
    Prediction,
    predict_results,
)
from leaderboard.analysis.ranks import (
    GroupBootstrap,
    best_set,
    group_differences,
    pooled_differences,
    rank_ranges,
    symmetric_difference_pvalues,
    tie_bands,
)
from leaderboard.analysis.robust import BoardRobustness, board_robustness
from leaderboard.analysis.verdicts import DEFAULT_MARGIN
from leaderboard.submissions.catalog import DEFAULT_BASELINE, DatasetInfo, dataset_info
from leaderboard.submissions.loaded import LoadedResult, ModelInfo, weakest
from leaderboard.submissions.parallel import forked_map

logger = logging.getLogger(__name__)

GROUP_ORDER = ("BEIR", "MIRACL", "mMARCO", "TREC DL", "Classic", "Local", "Other")
ALL_GROUP = "All datasets"
CONFIDENCE = 0.95  # the default level of the intervals; a build uses 1 - settings.tests.alpha


@dataclass(frozen=True)
class SiteSettings:
    tests: stats.TestSettings = field(default_factory=stats.TestSettings)
    baseline: str = DEFAULT_BASELINE
    scale_mode: str = DEFAULT_MODE  # recall-at-scale prediction: "per_query", "pooled" or "rank"
    scale_tail: str = DEFAULT_TAIL  # pooled mode's tail: "hybrid" or "skewnorm"
    scale_growth: str = DEFAULT_GROWTH  # growth scenario of the leaderboard column and crossings
    resample_datasets: bool = False  # group bootstrap: also resample the datasets of a group (ranks.py)
    # equivalence margin per metric ((metric, margin) pairs, metric units); others get verdicts.DEFAULT_MARGIN
    margins: tuple[tuple[str, float], ...] = ()

    def margin(self, metric: str) -> float:
        """The equivalence margin of `metric`: a difference smaller than this is of no practical importance."""
        return dict(self.margins).get(metric, DEFAULT_MARGIN)


def metric_order(name: str) -> tuple:
    """Display order of metrics: kind as evaluator.metrics lists them, then cutoff, then spelling."""
    measure = parse_measure(name)
    return (list(KINDS).index(measure.kind), measure.exp_gain, measure.cutoff or 0, name)


def _normalise(name: str) -> str:
    return re.sub(r"[^a-z0-9/]", "", name.lower())


@functools.cache  # asked for every result, twice
def training_aliases(info: DatasetInfo) -> frozenset[str]:
    """Names under which training on a dataset may be declared: every prefix of its id (the family,
    e.g. "beir" or "miracl", covers all its datasets), every id path after the family, and its name."""
    parts = info.id.split("/")
    names = {"/".join(parts[:k]) for k in range(1, len(parts) + 1)}
    names |= {"/".join(parts[1:k]) for k in range(2, len(parts) + 1)}
    names.add(info.name)
    return frozenset(_normalise(name) for name in names if name)


def is_zero_shot(model: ModelInfo, info: DatasetInfo) -> bool | None:
    """Whether the model's declared training data leaves the dataset out; None when it declares none (not stated)."""
    if model.training_datasets is None:
        return None
    trained = {_normalise(name) for name in model.training_datasets}
    return not (trained & training_aliases(info))


def unit_of(dataset_id: str) -> str:
    """Datasets below a common parent (beir/cqadupstack/*) form one unit, averaged before the group mean."""
    parts = dataset_id.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else dataset_id


@dataclass(frozen=True, eq=False)
class BaselineComparison:
    model_id: str
    diff: np.ndarray  # model mean - baseline mean, main metric
    wins: np.ndarray
    ties: np.ndarray
    losses: np.ndarray
    pvalue: np.ndarray  # corrected p-value of the pair (model, baseline)


@dataclass(frozen=True, eq=False)
class DatasetBoard:
    info: DatasetInfo
    slug: str
    metrics: tuple[str, ...]  # main metric first
    query_ids: tuple[str, ...]
    results: tuple[LoadedResult, ...]  # ranked first (main metric re-scored), then the others; each by mean, then id
    scores: np.ndarray  # (models, queries) main metric
    means: np.ndarray
    ci: np.ndarray  # (models, 2)
    pvalues: np.ndarray  # (models, models) corrected
    rank_range: np.ndarray  # (models, 2): best and worst rank among the ranked results (0, 0 when unranked)
    zero_shot: np.ndarray
    box: dict[str, np.ndarray]  # per-query distribution: q1, median, q3, low, high (whiskers), mean
    baseline: BaselineComparison | None
    left_out: tuple[str, ...]  # models whose results lack the main metric
    # every model against the baseline (vectors: mean difference, its CI, d_z); None without a baseline
    baseline_effects: effects.PairEffects | None = None
    separability: effects.Separability | None = None
    rows: tuple[int, ...] = ()  # which of the dataset's results (in load order) each row is
    # (models, models) SD of the per-query differences of each pair (float32), for the group means' tests
    diff_sd: np.ndarray | None = None
    band: np.ndarray | None = None  # tie band among the ranked results (ranks.tie_bands); 0 when unranked
    # bool: ranked and in the 1 - alpha confidence set for the best ranked result (ranks.best_set): the ★
    best_set: np.ndarray | None = None
    # main metric, per row: mean Judged@k at its cutoff and the hole bounds of the mean (NaN: not re-scored, so
    # unknown), and which verdicts hold over the bounds (analysis.robust)
    judged: np.ndarray | None = None
    hole_low: np.ndarray | None = None
    hole_high: np.ndarray | None = None
    robust: BoardRobustness | None = None
    # main metric on the condensed lists (trec_eval -J), mean per row; NaN where unknown (submissions.holes)
    condensed: np.ndarray | None = None
    model_ids: tuple[str, ...] = field(init=False, default=())  # from results
    position: dict[str, int] = field(init=False, default_factory=dict)  # model id -> row

    def __post_init__(self) -> None:
        ids = tuple(result.model.id for result in self.results)
        object.__setattr__(self, "model_ids", ids)
        object.__setattr__(self, "position", {model_id: i for i, model_id in enumerate(ids)})

    @functools.cached_property  # every model page asks, for each of its datasets
    def ranked(self) -> np.ndarray:
        """bool per row: the result's main metric was re-scored, so it has a rank and may be in the best set."""
        return np.array([result.ranked_on(self.info.main_metric) for result in self.results], dtype=bool)

    def metric_means(self, metric: str) -> list[float | None]:
        return [result.metrics.get(metric) for result in self.results]


@dataclass(frozen=True)
class GroupScore:
    mean: float
    ci: tuple[float, float]
    mean_rank: float | None  # None: the model is not ranked on every dataset of the group, so not ranked here
    rank_interval: tuple[int, int] = (0, 0)  # rank range from corrected pairwise tests of group means (ranks.py)
    band: int = 0  # tie band of the group mean (ranks.tie_bands), 1 = tied with the best; 0 when not ranked


def dataset_differences(boards: dict[str, DatasetBoard], dataset_ids, model_ids: list[str]) -> tuple[list, list, list]:
    """Per dataset: the (models, models) differences of the models' means, the variances of their per-query
    differences and the number of queries (what ranks.group_differences combines into a group's tests)."""
    terms = [dataset_terms(boards[dataset_id], model_ids)() for dataset_id in dataset_ids]
    return [diff for diff, _ in terms], [variance for _, variance in terms], queries_of(boards, dataset_ids)


def dataset_terms(board: DatasetBoard, model_ids: list[str]):
    """A function of (block, out) giving rows `block` (a slice; all by default) of one dataset's (differences of the
    models' means, variances of their per-query differences), as dataset_differences has them; into `out` (two
    (rows, models) float64 arrays) when given, so that ranks.pooled_differences fills the same memory again."""
    rows = np.array([board.position[model_id] for model_id in model_ids], dtype=np.int64)
    means = board.means[rows]

    def terms(block: slice = slice(None), out: tuple[np.ndarray, np.ndarray] | None = None):
        diff, variance = out if out is not None else (None, None)
        diff = np.subtract(means[block, None], means[None, :], out=diff)
        sd = np.take(board.diff_sd[rows[block]], rows, axis=1)  # np.ix_'s values, 3x faster
        if variance is None:
            variance = sd.astype(np.float64)
        else:
            variance[...] = sd
        return diff, np.square(variance, out=variance)

    return terms


def queries_of(boards: dict[str, DatasetBoard], dataset_ids) -> list[int]:
    return [boards[dataset_id].scores.shape[1] for dataset_id in dataset_ids]


def dataset_tests(means: np.ndarray, diff_sd: np.ndarray, queries: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The best set's one-sided tests among some models of a dataset (queries >= 2): the differences of their means,
    standard errors from the stored (float32) SDs of their per-query differences, and degrees of freedom. The
    build's best set and the home page's sets for any view (web/best_data.py) both take them from here, so that
    they cannot differ at a rounding."""
    return means[:, None] - means[None, :], diff_sd.astype(np.float64) / np.sqrt(queries), queries - 1


def group_tests(boards: dict[str, DatasetBoard], dataset_ids, weights, model_ids: list[str]):
    """(difference, variance, df) of the group means of these models (ranks.group_differences): the group's rank
    ranges, its best set and the home page's sets for any view all come from here."""
    return group_differences(*dataset_differences(boards, dataset_ids, model_ids), weights)


def testable(boards: dict[str, DatasetBoard], dataset_ids) -> bool:
    """Can the group of these datasets test its means' differences? Not when every dataset has one query: the
    variance of a difference is then unknown, not 0, so no model is shown better than another (as on each of the
    datasets) and every ranked model could be #1."""
    return any(boards[dataset_id].scores.shape[1] >= 2 for dataset_id in dataset_ids)


@dataclass(frozen=True, eq=False)
class GroupBoard:
    name: str
    dataset_ids: tuple[str, ...]
    weights: tuple[float, ...]  # weight of each dataset in the mean (1 / units / datasets in its unit)
    coverage: dict[str, int]  # model id -> datasets of the group it has results for
    scores: dict[str, GroupScore]  # only models that cover every dataset of the group
    # corrected p-values of the group means' differences among the ranked models (in `ranked_ids` order): the tests
    # behind the rank ranges and bands, which the compare page and irboard compare show pair by pair
    ranked_ids: tuple[str, ...] = ()
    pvalues: np.ndarray | None = None
    best_set: frozenset[str] = frozenset()  # 1 - alpha confidence set for the best ranked model (ranks.best_set)
    # which of its verdicts hold over the hole bounds (analysis.group_robust, in `ranked_ids` order); None when
    # nothing can flip (no unjudged document within the cutoff among its ranked models, or no test)
    robust: GroupRobustness | None = None

    @property
    def units(self) -> int:
        return len({unit_of(dataset_id) for dataset_id in self.dataset_ids})

    @functools.cached_property  # every model page asks, for each group
    def ranked_models(self) -> int:
        """Models with a rank in the group (ranked on every dataset of it)."""
        return sum(score.mean_rank is not None for score in self.scores.values())


@dataclass(frozen=True, eq=False)
class ModelBoard:
    info: ModelInfo
    slug: str
    results: dict[str, LoadedResult]  # dataset id -> result
    zero_shot: dict[str, bool | None]  # None: training data not stated
    verified: str  # "all", "some" or "none" of its results ranked (their dataset's main metric re-scored)
    tiers: dict[str, str] = field(default_factory=dict)  # dataset id -> the tier of the result's main metric

    @property
    def zero_shot_all(self) -> bool | None:
        """False when trained on some dataset of the board, None when that is not stated, else True."""
        values = self.zero_shot.values()
        return False if False in values else None if None in values else True

    @property
    def tier(self) -> str:
        """The trust tier of the model's least trusted result (each result's: that of its main metric)."""
        return weakest(self.tiers.values())

    @property
    def costs_measured(self) -> bool:
        """The parameter count and dimension shown were measured by irboard: CI reproduced a result of the model and
        read them from the model it loaded (else they are what the result files claim)."""
        return any(r.measured is not None and (r.measured["parameters"], r.measured["dim"])
                   == (self.info.parameters, self.info.dim) for r in self.results.values())


@dataclass(frozen=True, eq=False)
class Leaderboard:
    settings: SiteSettings
    baseline_id: str | None
    models: tuple[ModelBoard, ...]  # by id
    datasets: tuple[DatasetBoard, ...]  # by group, then id
    groups: tuple[GroupBoard, ...]  # GROUP_ORDER, then others by name, then ALL_GROUP
    warnings: tuple[str, ...]
    predictions: dict[tuple[str, str], Prediction] = field(default_factory=dict)  # (model id, dataset id)
    # dataset id -> its boards under each declared judgment set (analysis.set_boards.SetBoard), official excluded
    judgment_sets: dict[str, tuple] = field(default_factory=dict)

    def dataset(self, dataset_id: str) -> DatasetBoard:
        return next(board for board in self.datasets if board.info.id == dataset_id)


def bootstrap_means(scores: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples, models) bootstrap means of each row of scores, resampling queries; every model gets
    the same draws, which are the draws of `stats.bootstrap_ci(row, seed=seed)` for each row.

    A resample's means are its query counts times the score matrix: one float32 matrix product per block
    (exact counts; means within about 1e-7 of float64, far below the two decimals shown ×100). BLAS runs on one
    thread: a float32 product's last bits depend on how the work is split, and the site must be the same bytes
    whether it is built by `irboard build` or in a test, on any number of cores."""
    models, n = scores.shape
    rng = np.random.default_rng(seed)
    block = max(1, 2**22 // n)  # the block size stats.bootstrap_ci draws with: same random stream
    transposed = np.ascontiguousarray(scores.T, dtype=np.float32) / np.float32(n)
    means = np.empty((resamples, models), dtype=np.float32)
    rows = 256  # counted together: their bins stay in cache (one big bincount is ~20x slower)
    offsets = (np.arange(rows) * n)[:, None]
    with threadpool_limits(limits=1, user_api="blas"):
        for start in range(0, resamples, block):
            size = min(block, resamples - start)
            draws = rng.integers(0, n, size=(size, n))
            counts = np.empty((size, n), dtype=np.float32)
            for first in range(0, size, rows):
                last = min(first + rows, size)
                flat = (draws[first:last] + offsets[: last - first]).ravel()
                counts[first:last] = np.bincount(flat, minlength=(last - first) * n).reshape(last - first, n)
            np.matmul(counts, transposed, out=means[start : start + size])
    return means


def dataset_seed(seed: int, dataset_id: str) -> int:
    """The seed of one dataset's resamples: the site's seed mixed with the dataset id, so datasets with equally
    many queries do not share their resample indices (which would correlate their bootstrap means in a group)."""
    digest = hashlib.sha256(f"{seed}\0{dataset_id}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def model_major(boot: np.ndarray) -> np.ndarray:
    """(resamples, models) bootstrap means as a C-contiguous (models, resamples) copy, transposed in blocks of
    resamples (3x faster than a plain transposing copy, which strides through memory)."""
    out = np.empty(boot.shape[::-1], dtype=boot.dtype)
    for start in range(0, boot.shape[0], 256):
        out[:, start:start + 256] = boot[start:start + 256].T
    return out


def percentile_ci(boot: np.ndarray, values: np.ndarray | None = None, confidence: float = CONFIDENCE) -> np.ndarray:
    """(models, 2) percentile interval; rows of constant per-query values get a zero-width interval."""
    alpha = 1 - confidence
    # np.percentile partitions each row; sorting the rows first (a vectorised sort) and letting it partition
    # sorted rows gives the same values several times faster
    rows = np.array(boot.T, order="C")
    rows.sort(axis=1)
    ci = np.percentile(rows, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=1, overwrite_input=True)
    ci = ci.T.astype(np.float64)
    if values is not None:
        constant = np.all(values == values[:, :1], axis=1)
        ci[constant] = values[constant, :1]
    return ci


def ranks_among_verified(verified: list[bool], means: np.ndarray, pvalues: np.ndarray,
                         alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(rank ranges, tie bands) among the verified rows only, from the corrected p-values (ranks.py). Unverified
    rows get ((0, 0), 0)."""
    rows = np.flatnonzero(np.asarray(verified, dtype=bool))
    ranges = np.zeros((means.size, 2), dtype=np.int64)
    bands = np.zeros(means.size, dtype=np.int64)
    if rows.size:
        among = pvalues[np.ix_(rows, rows)]
        ranges[rows] = rank_ranges(means[rows], among, alpha)
        bands[rows] = tie_bands(means[rows], among, alpha)
    return ranges, bands


def box_stats(scores: np.ndarray) -> dict[str, np.ndarray]:
    q1, median, q3 = np.percentile(scores, [25, 50, 75], axis=1)
    reach = 1.5 * (q3 - q1)
    low = np.where(scores >= (q1 - reach)[:, None], scores, np.inf).min(axis=1)
    high = np.where(scores <= (q3 + reach)[:, None], scores, -np.inf).max(axis=1)
    return {"q1": q1, "median": median, "q3": q3, "low": low, "high": high, "mean": scores.mean(axis=1)}


def find_baseline(model_ids: list[str], wanted: str) -> str | None:
    """The model called `wanted`, or the one model whose last id segment is `wanted` (any case)."""
    if wanted in model_ids:
        return wanted
    matches = [model_id for model_id in model_ids if model_id.rsplit("/", 1)[-1].lower() == wanted.lower()]
    return matches[0] if len(matches) == 1 else None


def _dataset_board(info: DatasetInfo, results: list[LoadedResult], settings: SiteSettings,
                   baseline_id: str | None) -> tuple[DatasetBoard, np.ndarray]:
    """The dataset's board and its bootstrap means model by model ((models, resamples), for the group means; None
    when they are not bootstrapped).

    The board's `results` are left empty (row j is `results[board.rows[j]]`), so that a worker process sends back
    only the numbers: `_with_results` puts the caller's own objects in."""
    tests = settings.tests
    metric = info.main_metric
    keep = [i for i, result in enumerate(results) if metric in result.per_query]
    ranked = [results[i] for i in keep]
    left_out = tuple(sorted(result.model.id for result in results if metric not in result.per_query))
    means_by_result = np.array([result.per_query[metric].mean() for result in ranked])
    order = sorted(range(len(ranked)), key=lambda i: (not ranked[i].ranked_on(metric), -means_by_result[i],
                                                      ranked[i].model.id))
    ranked = [ranked[i] for i in order]
    scores = np.stack([result.per_query[metric] for result in ranked])
    means = scores.mean(axis=1)
    resampled = None
    seed = dataset_seed(tests.seed, info.id)
    if tests.ci_method == "score":
        ci = stats.score_intervals(scores, 1 - tests.alpha)
    elif tests.ci_method == "percentile":
        resampled = model_major(bootstrap_means(scores, tests.ci_resamples, seed))
        ci = percentile_ci(resampled.T, scores, 1 - tests.alpha)
    else:
        ci = np.array([stats.bootstrap_ci(row, tests.ci_method, tests.ci_resamples, seed) for row in scores])
    model_ids = [result.model.id for result in ranked]
    b = model_ids.index(baseline_id) if baseline_id in model_ids else None
    # One (models, models) matrix product each. A second BLAS thread does not make them faster on a shared machine,
    # only busier (2 s of CPU at 1,000 models); their values do not depend on it.
    with threadpool_limits(limits=1, user_api="blas"):
        pvalues = stats.pairwise_pvalues(scores, tests.method, tests.correction, tests.resamples, seed)
        spread = effects.spread(scores) if scores.shape[1] >= 2 else None
        against, separability = effects.dataset_effects(scores, b, pvalues, tests.alpha, tests.method, 1 - tests.alpha,
                                                        spread)
    verified = np.array([result.ranked_on(metric) for result in ranked], dtype=bool)  # ranked on the main metric
    rank_range, band = ranks_among_verified(verified, means, pvalues, tests.alpha)
    diff_sd = (spread[1] if spread is not None else np.zeros((len(ranked),) * 2)).astype(np.float32)
    contenders = np.zeros(len(ranked), dtype=bool)
    if verified.any() and spread is not None:
        rows = np.flatnonzero(verified)
        contenders[rows] = best_set(means[rows], *dataset_tests(means[rows], diff_sd[np.ix_(rows, rows)],
                                                                scores.shape[1]), tests.alpha)
    elif verified.any():  # one query: no one-sided test can be made, so none is shown worse than another
        contenders[verified] = True
    judged, low, high = hole_arrays(ranked, metric, scores)
    robust = board_robustness(low, high, verified, pvalues, contenders, b, tests, settings.margin(metric),
                              None if against is None else (against.diff, against.sd), scores,
                              None if spread is None else spread[1])
    comparison = None
    if b is not None:
        diff = scores - scores[b]
        tol = 1e-9  # as stats.wins_ties_losses
        wins, losses = (diff > tol).sum(axis=1), (diff < -tol).sum(axis=1)
        comparison = BaselineComparison(baseline_id, means - means[b], wins, scores.shape[1] - wins - losses,
                                        losses, pvalues[:, b].copy())
    metrics = sorted({name for result in results for name in result.metrics}, key=metric_order)
    headline = [name for name in info.headline_metrics if name != metric and name in metrics]  # shown first
    board = DatasetBoard(
        info=info,
        slug=slugify(info.id),
        metrics=(metric, *headline, *[name for name in metrics if name != metric and name not in headline]),
        query_ids=(),
        results=(),
        rows=tuple(keep[i] for i in order),
        scores=scores,
        means=means,
        ci=ci,
        pvalues=pvalues,
        rank_range=rank_range,
        zero_shot=np.array([is_zero_shot(result.model, info) for result in ranked], dtype=object),
        box=box_stats(scores),
        baseline=comparison,
        left_out=left_out,
        baseline_effects=against,
        separability=separability,
        diff_sd=diff_sd,
        band=band,
        best_set=contenders,
        judged=judged,
        hole_low=np.where(np.isnan(judged), np.nan, low.mean(axis=1)),
        hole_high=np.where(np.isnan(judged), np.nan, high.mean(axis=1)),
        robust=robust,
        condensed=condensed_means(ranked, metric, scores.shape[1]),
    )
    if resampled is None and bootstrapped_groups(settings):  # percentile draws of the same seed
        resampled = model_major(bootstrap_means(scores, tests.ci_resamples, seed))
    return board, resampled


def hole_arrays(results: list[LoadedResult], metric: str, scores: np.ndarray) -> tuple[np.ndarray, ...]:
    """(judged, low, high): each row's mean Judged@k at the metric's cutoff (NaN where unknown) and its per-query
    hole bounds of `metric`, (models, queries); a row without bounds (not re-scored) has low = high = its values."""
    judged = np.full(len(results), np.nan)
    low, high = scores.copy(), scores.copy()
    rows = [i for i, result in enumerate(results) if result.holes is not None and result.holes.metric == metric
            and len(result.holes.low) == scores.shape[1]]
    if rows:
        judged[rows] = [results[i].holes.judged for i in rows]
        values = scores[rows]
        for out, bound in ((low, np.stack([results[i].holes.low for i in rows])),
                           (high, np.stack([results[i].holes.high for i in rows]))):
            # float32 bounds equal to the value are the value itself, so that no rounding moves a test
            out[rows] = np.where(np.abs(bound - values) <= 1e-6, values, bound)
    return judged, low, high


def condensed_means(results: list[LoadedResult], metric: str, queries: int) -> np.ndarray:
    """Each row's mean of `metric` on the condensed lists (trec_eval -J), NaN where unknown."""
    out = np.full(len(results), np.nan)
    for i, result in enumerate(results):
        holes = result.holes
        condensed = getattr(holes, "condensed", None)
        if holes is not None and holes.metric == metric and condensed is not None and len(condensed) == queries:
            out[i] = float(np.mean(condensed, dtype=np.float64)) if queries else 0.0
    return out


def bootstrapped_groups(settings: SiteSettings) -> bool:
    """Do the group means' intervals come from the bootstrap? With score intervals for the datasets and fixed
    datasets, group means get the score interval of a weighted mean instead (stats.score_bounds)."""
    return settings.tests.ci_method != "score" or settings.resample_datasets


def _with_results(board: DatasetBoard, results: list[LoadedResult]) -> DatasetBoard:
    """The board of `_dataset_board(..., results, ...)` with its rows' results (the caller's objects) in."""
    rows = tuple(results[i] for i in board.rows)
    return replace(board, results=rows, query_ids=rows[0].query_ids)


def _group_names(infos: list[DatasetInfo]) -> list[str]:
    present = {info.group for info in infos}
    known = [name for name in GROUP_ORDER if name in present]
    return known + sorted(present - set(GROUP_ORDER))


def _weights(dataset_ids: list[str]) -> list[float]:
    units: dict[str, int] = {}
    for dataset_id in dataset_ids:
        units[unit_of(dataset_id)] = units.get(unit_of(dataset_id), 0) + 1
    return [1.0 / len(units) / units[unit_of(dataset_id)] for dataset_id in dataset_ids]


class _GroupAccumulator:
    """Sums weighted per-dataset means and bootstrap means of one group, for all models at once."""

    def __init__(self, name: str, dataset_ids: list[str], model_index: dict[str, int], tests: stats.TestSettings,
                 resample_datasets: bool = False, bootstrap: bool = True, weights: list[float] | None = None):
        self.name = name
        self.tests = tests
        resamples, seed = tests.ci_resamples, tests.seed
        self.dataset_ids = dataset_ids
        # a registered group weighs its units equally (_weights); a reader's benchmark may give its own (custom.py)
        self.weights = dict(zip(dataset_ids, _weights(dataset_ids) if weights is None else weights, strict=True))
        self.model_index = model_index
        self.bootstrap = GroupBootstrap(len(model_index), resamples, [unit_of(d) for d in dataset_ids],
                                        resample_datasets, seed) if bootstrap else None
        self.coverage = np.zeros(len(model_index), dtype=np.int64)

    def add(self, board: DatasetBoard, resampled: np.ndarray) -> None:
        columns = [self.model_index[model_id] for model_id in board.model_ids]
        if self.bootstrap is not None:
            self.bootstrap.add(columns, self.weights[board.info.id], unit_of(board.info.id), resampled.T)
        self.coverage[columns] += 1

    def score_ci(self, boards: dict[str, DatasetBoard], model_ids: list[str], means: np.ndarray) -> np.ndarray:
        """Score intervals of the models' group means: the variance of a weighted mean of independent datasets'
        means, Student's t with Welch-Satterthwaite degrees of freedom (stats.score_bounds)."""
        variance = np.zeros(len(model_ids))
        df_terms = np.zeros(len(model_ids))
        share = 0.0
        bounded = np.ones(len(model_ids), dtype=bool)
        for dataset_id in self.dataset_ids:
            board = boards[dataset_id]
            rows = board.scores[[board.position[model_id] for model_id in model_ids]]
            n = rows.shape[1]
            weight = self.weights[dataset_id]
            part = weight * weight * rows.var(axis=1) / n  # divide by n, as stats.score_intervals
            variance += part
            df_terms += part * part / max(n - 1, 1)
            share += weight * weight / n
            bounded &= (rows.min(axis=1) >= 0.0) & (rows.max(axis=1) <= 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            df = np.where(df_terms > 0, variance * variance / np.where(df_terms > 0, df_terms, 1.0), 1.0)
        quantile = scipy_stats.t.ppf(0.5 + (1 - self.tests.alpha) / 2, np.maximum(df, 1.0))
        return stats.score_bounds(means, variance, np.full(len(model_ids), share), quantile, bounded)

    def finish(self, boards: dict[str, DatasetBoard], margin_of=lambda metric: DEFAULT_MARGIN) -> GroupBoard:
        ids = list(self.model_index)
        complete = [i for i in range(len(ids)) if self.coverage[i] == len(self.dataset_ids)]
        complete_ids = [ids[i] for i in complete]
        # ranked: ranked on every dataset of the group (its main metric re-scored there)
        ranked = np.array([all(boards[d].ranked[boards[d].position[model_id]] for d in self.dataset_ids)
                           for model_id in complete_ids], dtype=bool)
        means = np.zeros(len(complete))
        ranks = np.zeros(len(complete))
        for dataset_id in self.dataset_ids:
            board = boards[dataset_id]
            dataset_means = board.means[[board.position[model_id] for model_id in complete_ids]]
            means += self.weights[dataset_id] * dataset_means
            if ranked.any():
                ranks[ranked] += self.weights[dataset_id] * rankdata(-dataset_means[ranked], method="average")
        if not complete:
            ci = np.zeros((0, 2))
        elif self.bootstrap is not None:
            ci = percentile_ci(self.bootstrap.by_model[complete].T, confidence=1 - self.tests.alpha)
        else:
            ci = self.score_ci(boards, complete_ids, means)
        intervals = np.zeros((len(complete), 2), dtype=np.int64)
        bands = np.zeros(len(complete), dtype=np.int64)
        chosen: list[str] = []
        pvalues = None
        robust = None
        best = np.zeros(len(complete), dtype=bool)
        if ranked.any():
            chosen = [complete_ids[k] for k in np.flatnonzero(ranked)]
            total, variance, df = pooled_differences([dataset_terms(boards[d], chosen) for d in self.dataset_ids],
                                                     queries_of(boards, self.dataset_ids),
                                                     [self.weights[d] for d in self.dataset_ids], len(chosen))
            if testable(boards, self.dataset_ids):
                pvalues = stats.corrected_matrix(symmetric_difference_pvalues(total, variance, df),
                                                 self.tests.correction)
                best[ranked] = best_set(means[ranked], total, np.sqrt(variance), df, self.tests.alpha)
            else:  # one query on each dataset: no test, as on each of those datasets (views.dataset.build)
                pvalues = np.ones_like(total)
                best[ranked] = True
            intervals[ranked] = rank_ranges(means[ranked], pvalues, self.tests.alpha)
            bands[ranked] = tie_bands(means[ranked], pvalues, self.tests.alpha)
            if testable(boards, self.dataset_ids):
                robust = self._robustness(boards, chosen, means[ranked], (total, variance, df), pvalues, best[ranked],
                                          margin_of(boards[self.dataset_ids[0]].info.main_metric))
        scores = {
            model_id: GroupScore(float(means[k]), (float(ci[k, 0]), float(ci[k, 1])),
                                 float(ranks[k]) if ranked[k] else None,
                                 (int(intervals[k, 0]), int(intervals[k, 1])), int(bands[k]))
            for k, model_id in enumerate(complete_ids)
        }
        return GroupBoard(
            name=self.name,
            dataset_ids=tuple(self.dataset_ids),
            weights=tuple(self.weights[dataset_id] for dataset_id in self.dataset_ids),
            coverage={ids[i]: int(self.coverage[i]) for i in range(len(ids)) if self.coverage[i]},
            scores=scores,
            best_set=frozenset(complete_ids[k] for k in np.flatnonzero(best)),
            ranked_ids=tuple(chosen),
            pvalues=pvalues,
            robust=robust,
        )

    def _robustness(self, boards: dict[str, DatasetBoard], chosen: list[str], means: np.ndarray, own, pvalues,
                    best: np.ndarray, margin: float) -> GroupRobustness | None:
        """The group's flags over the hole bounds of its datasets (analysis.group_robust); None when no dataset has
        an unjudged document among the ranked models, so nothing can flip."""
        parts = []
        for dataset_id in self.dataset_ids:
            board = boards[dataset_id]
            crossings = None if board.robust is None else board.robust.crossings
            rows = np.array([board.position[model_id] for model_id in chosen], dtype=np.int64)
            unjudged = crossings is not None and crossings.unjudged(rows)
            parts.append(DatasetPart(board.scores.shape[1], dataset_terms(board, chosen),
                                     functools.partial(crossings.among, rows) if unjudged else None))
        crossed = crossed_tests(parts, [self.weights[d] for d in self.dataset_ids], len(chosen))
        if crossed is None:
            return None
        return group_robustness(means, own, pvalues, best, crossed, self.tests, margin)


def build_leaderboard(results: list[LoadedResult], settings: SiteSettings | None = None,
                      lookup=dataset_info, warnings: list[str] | None = None, workers: int = 1) -> Leaderboard:
    """Aggregate validated results; `warnings` (if given) receives what the site user should know. Each dataset's
    statistics are computed in `workers` forked processes when more than one (the same numbers); the group means
    add them up here, in dataset order."""
    settings = settings or SiteSettings()
    warnings = warnings if warnings is not None else []
    by_dataset: dict[str, list[LoadedResult]] = {}
    by_model: dict[str, dict[str, LoadedResult]] = {}
    for result in results:
        by_dataset.setdefault(result.dataset_id, []).append(result)
        by_model.setdefault(result.model.id, {})[result.dataset_id] = result
    model_ids = sorted(by_model)
    baseline_id = find_baseline(model_ids, settings.baseline)
    if baseline_id is None and model_ids:
        warnings.append(f"baseline {settings.baseline!r}: no model has this id; comparisons with a baseline "
                        "are left out; add its results or choose another baseline")
    infos = {dataset_id: lookup(dataset_id) for dataset_id in sorted(by_dataset)}
    groups = _group_names(list(infos.values()))
    dataset_order = sorted(infos, key=lambda d: (groups.index(infos[d].group), d))
    predictions = predict_results(results, settings.scale_mode, settings.scale_tail, warnings)
    for dataset_id in dataset_order:
        metric = infos[dataset_id].main_metric
        for result in by_dataset[dataset_id]:
            if metric not in result.per_query:
                warnings.append(f"{result.path}: no {metric} (the main metric of {dataset_id}); the model is left "
                                "out of this dataset's ranking and means; evaluate it with that metric")
    ranked_datasets = [d for d in dataset_order if any(infos[d].main_metric in r.per_query for r in by_dataset[d])]
    model_index = {model_id: i for i, model_id in enumerate(model_ids)}
    options = (settings.tests, settings.resample_datasets, bootstrapped_groups(settings))
    accumulators = [
        _GroupAccumulator(name, [d for d in ranked_datasets if infos[d].group == name], model_index, *options)
        for name in groups
    ]
    if len(groups) > 1:
        accumulators.append(_GroupAccumulator(ALL_GROUP, ranked_datasets, model_index, *options))
    boards: dict[str, DatasetBoard] = {}
    computed = forked_map(lambda d: _dataset_board(infos[d], by_dataset[d], settings, baseline_id), ranked_datasets,
                          workers)
    for dataset_id, (board, resampled) in zip(ranked_datasets, computed, strict=True):
        board = boards[dataset_id] = _with_results(board, by_dataset[dataset_id])
        for accumulator in accumulators:
            if dataset_id in accumulator.weights:
                accumulator.add(board, resampled)
        logger.debug("aggregated %s (%d models)", dataset_id, len(board.results))
    models = tuple(
        ModelBoard(
            info=_shown_metadata(by_model[model_id]),
            slug=slugify(model_id),
            results=dict(sorted(by_model[model_id].items(), key=lambda item: dataset_order.index(item[0]))),
            zero_shot={d: is_zero_shot(r.model, infos[d]) for d, r in by_model[model_id].items()},
            verified=_verified([r.ranked_on(infos[d].main_metric) for d, r in by_model[model_id].items()]),
            tiers={d: r.tier_of(infos[d].main_metric) for d, r in by_model[model_id].items()},
        )
        for model_id in model_ids
    )
    return Leaderboard(
        settings=settings,
        baseline_id=baseline_id,
        models=models,
        datasets=tuple(boards[d] for d in ranked_datasets),
        groups=tuple(accumulator.finish(boards, settings.margin) for accumulator in accumulators
                     if accumulator.dataset_ids),
        warnings=tuple(warnings),
        predictions=predictions,
        judgment_sets=_judgment_set_boards(infos, by_dataset, ranked_datasets, settings, baseline_id),
    )


def _judgment_set_boards(infos, by_dataset, dataset_ids, settings: SiteSettings, baseline_id: str | None) -> dict:
    """Each dataset's boards under its declared judgment sets (analysis.set_boards), for those that have any."""
    from leaderboard.analysis.set_boards import set_boards

    def make(info, results):
        return _with_results(_dataset_board(info, results, settings, baseline_id)[0], results)

    found = {}
    for dataset_id in dataset_ids:
        if any(result.judgment_sets for result in by_dataset[dataset_id]):
            boards = set_boards(infos[dataset_id], by_dataset[dataset_id], settings, baseline_id, make)
            if boards:
                found[dataset_id] = boards
    return found


def _shown_metadata(results: dict[str, LoadedResult]) -> ModelInfo:
    """The metadata most files of the model agree on (ties: the first file by path), as load.py reports."""
    items = sorted(results.values(), key=lambda r: r.path)
    counts: dict[ModelInfo, int] = {}
    for item in items:
        counts[item.model] = counts.get(item.model, 0) + 1
    return max(counts, key=lambda info: counts[info])  # max keeps the first of equal counts


def _verified(flags: list[bool]) -> str:
    return "all" if all(flags) else "some" if any(flags) else "none"
