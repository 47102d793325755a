"""Re-scoring a submitted result against the qrels: what makes a value, and a result, "verified".

- A metric is *determined* by the stored ranking when every query's stored part decides it: a metric with
  cutoff k needs k <= run.depth, or the query's whole ranking stored (fewer entries than the depth, or
  depth >= settings.top_k); a metric without cutoff (AP, RR, Rprec, Bpref, ARP) needs every whole ranking.
- Every determined metric is recomputed for every query from the stored ranking (in its stored order, which
  the reader has checked is trec_eval's) and must equal the submitted per-query values: any difference is
  a problem that rejects the result.
- Metrics that are not determined are *unverified*: kept, shown as such per value, never counted verified.
- A result is verified when every reported metric was re-scored and matched, and its score samples agree
  with its ranking (see `score_sample_problems`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.errors import DatasetLoadError, IrboardError, ResultValidationError
from evaluator.metrics import Measure, Qrels, RankedRun, evaluate, parse_measure
from evaluator.metrics.ranking import PAD, UNJUDGED
from evaluator.result import ResultFile

log = logging.getLogger(__name__)
TOLERANCE = 1e-9  # per-query values are stored as float64; migrated ones were rounded to 10 decimals
SCORE_TOLERANCE = 1e-5  # relative: a sampled score and the run's score of the same document
IMPLAUSIBLE = 1e-6  # p-value below which a sample is too unlike the ranking to be a uniform sample


@dataclass(frozen=True)
class Verification:
    """The outcome of re-scoring one result."""

    verified: frozenset[str]  # metrics re-scored and matching
    unverified: tuple[str, ...]  # metrics the stored ranking does not determine (or no ranking at all)
    problems: tuple[str, ...]  # differences and inconsistencies: the result is rejected

    @property
    def complete(self) -> bool:
        """Every reported metric re-scored and matching, nothing inconsistent."""
        return not self.problems and not self.unverified


def whole_rankings(result: ResultFile) -> np.ndarray:
    """Per query: is its whole ranking stored (nothing beyond the stored depth was cut)?"""
    run = result.run
    if run.depth >= result.settings.top_k:
        return np.ones(len(result.query_ids), dtype=bool)
    return run.lengths < run.depth


def determined(result: ResultFile) -> tuple[list[Measure], list[str]]:
    """(measures the stored ranking determines, names of the others)."""
    measures, others = [], []
    whole = whole_rankings(result).all() if result.run is not None else False
    for name in sorted(result.metrics):
        measure = parse_measure(name)
        if result.run is not None and (whole or (measure.cutoff is not None and measure.cutoff <= result.run.depth)):
            measures.append(measure)
        else:
            others.append(name)
    return measures, others


def ranked_from_result(result: ResultFile, qrels: Qrels) -> RankedRun:
    """The label matrix of the stored ranking, in its stored order (dropping the query's own id when the
    settings ignore identical ids)."""
    run = result.run
    judged_by_query = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
    offsets = run.offsets
    rows = []
    for i, query_id in enumerate(result.query_ids):
        judged = judged_by_query.get(query_id, {})
        names = [run.doc_ids[d] for d in run.docs[offsets[i]:offsets[i + 1]]]
        if result.settings.ignore_identical_ids:
            names = [name for name in names if name != query_id]
        rows.append([judged.get(name, UNJUDGED) for name in names])
    depth = max(max(map(len, rows), default=0), 1)
    labels = np.full((len(rows), depth), PAD, dtype=np.int32)
    for i, row in enumerate(rows):
        labels[i, :len(row)] = row
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    return RankedRun(list(result.query_ids), labels, lengths)


def verify_result(result: ResultFile, qrels: Qrels) -> Verification:
    """Re-score every determined metric and check the score samples against the ranking."""
    if qrels.sha256() != result.dataset.qrels_sha256:
        return Verification(frozenset(), tuple(sorted(result.metrics)), (
            f"dataset.qrels_sha256 does not match the official qrels of {result.dataset.id}; "
            "evaluate on the official qrels",))
    if tuple(qrels.query_ids) != result.query_ids:
        return Verification(frozenset(), tuple(sorted(result.metrics)), (
            f"per_query's queries differ from the queries of the qrels of {result.dataset.id}",))
    measures, others = determined(result)
    problems: list[str] = []
    if measures:
        values = evaluate(ranked_from_result(result, qrels), qrels, measures, result.settings.relevance_level)
        for measure in measures:
            name = str(measure)
            submitted, rescored = result.per_query[name], np.asarray(values[name], dtype=np.float64)
            wrong = np.flatnonzero(np.abs(submitted - rescored) > TOLERANCE)
            if wrong.size:
                i = int(wrong[0])
                problems.append(
                    f"per_query[{name!r}][{result.query_ids[i]!r}] is {submitted[i]:.6f} but re-scoring the stored "
                    f"ranking gives {rescored[i]:.6f} ({wrong.size} queries differ); regenerate the result with "
                    "`irboard evaluate`")
    if result.score_samples is not None and result.run is not None:
        problems += score_sample_problems(result, qrels)
    verified = frozenset() if problems else frozenset(str(m) for m in measures)
    return Verification(verified, tuple(others), tuple(problems))


def score_sample_problems(result: ResultFile, qrels: Qrels) -> list[str]:
    """Score samples that the stored ranking contradicts.

    Every document the ranking does not hold scores at most the last stored score t of its query. So: the
    sample's relevant scores above t must be exactly those of the relevant documents in the ranking; every
    sampled non-relevant score above t must be (within its quantisation step) a non-relevant score of the
    ranking; no more relevant documents than the qrels judge; and the number of sampled non-relevant
    scores above t must be plausible for a uniform sample (hypergeometric tail, p >= 1e-6)."""
    from scipy.stats import hypergeom

    samples, run, level = result.score_samples, result.run, result.settings.relevance_level
    judged_by_query = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
    offsets = run.offsets
    for i, query_id in enumerate(result.query_ids):
        sample = samples.queries[query_id]
        where = f"score_samples of query {query_id!r}"
        judged = judged_by_query.get(query_id, {})
        n_judged_relevant = sum(1 for label in judged.values() if label >= level)
        if sample.n_relevant > n_judged_relevant:
            return [f"{where}: n_relevant is {sample.n_relevant} but the qrels judge {n_judged_relevant} documents "
                    "relevant; regenerate the result with `irboard evaluate`"]
        start, end = offsets[i], offsets[i + 1]
        if end == start:
            continue
        names = [run.doc_ids[d] for d in run.docs[start:end]]
        scores = run.scores[start:end]
        is_relevant = np.array([judged.get(name, UNJUDGED) >= level for name in names])
        threshold = float(scores[-1])
        tolerance = SCORE_TOLERANCE * max(1.0, abs(threshold))
        run_relevant = np.sort(scores[is_relevant])
        above = sample.relevant[sample.relevant > threshold + tolerance]
        if above.size > run_relevant.size or _unmatched(above, run_relevant, tolerance):
            return [f"{where}: relevant scores above the ranking's last score ({threshold:.6g}) do not match the "
                    "relevant documents of the stored ranking; regenerate the result with `irboard evaluate`"]
        if sample.nonrelevant.size and sample.n_nonrelevant:
            width = float(sample.nonrelevant[-1] - sample.nonrelevant[0])
            step = width / samples.levels + tolerance
            run_nonrelevant = np.sort(scores[~is_relevant])
            sampled_above = sample.nonrelevant[sample.nonrelevant > threshold + step]
            # with ignore_identical_ids the query's own document may score above t without being ranked
            spare = 1 if result.settings.ignore_identical_ids else 0
            if sampled_above.size > run_nonrelevant.size + spare or \
                    _unmatched(sampled_above, run_nonrelevant, step) > spare:
                return [f"{where}: sampled non-relevant scores above the ranking's last score ({threshold:.6g}) are "
                        "not scores of the stored ranking; regenerate the result with `irboard evaluate`"]
            higher = int(np.count_nonzero(run_nonrelevant > threshold + step))
            observed = int(np.count_nonzero(sample.nonrelevant > threshold - step))
            p_value = hypergeom.cdf(observed, sample.n_nonrelevant, higher, sample.nonrelevant.size)
            if p_value < IMPLAUSIBLE:
                return [f"{where}: only {observed} of {sample.nonrelevant.size} sampled non-relevant scores reach the "
                        f"ranking's last score although {higher} ranked non-relevant documents lie above it "
                        f"(p = {p_value:.1e}); the sample is not a uniform sample of this ranking's scores"]
    return []


def _unmatched(values: np.ndarray, targets: np.ndarray, tolerance: float) -> int:
    """How many of `values` lie farther than `tolerance` from every target (targets sorted)."""
    if values.size == 0:
        return 0
    if targets.size == 0:
        return int(values.size)
    at = np.searchsorted(targets, values)
    below = targets[np.clip(at - 1, 0, targets.size - 1)]
    above = targets[np.clip(at, 0, targets.size - 1)]
    nearest = np.minimum(np.abs(below - values), np.abs(above - values))
    return int(np.count_nonzero(nearest > tolerance))


def rescore_problems(result: ResultFile, qrels: Qrels) -> list[str]:
    """The problems re-scoring finds (empty when every determined metric matches)."""
    return list(verify_result(result, qrels).problems)


def qrels_for(dataset_id: str, split: str, data_dirs: dict[str, Path], data_root: Path | None) -> Qrels | None:
    """The qrels to re-score a result on `dataset_id` against: an explicit `--data-dir ID=DIR`, `<root>/<dataset id>`,
    the official judgments (cached, else downloaded), or a copy extracted into the cache (datasets without an
    official download, or offline); None when there is none. DatasetLoadError: official judgments that cannot be had
    and no copy."""
    from evaluator.datasets.download import cache_root
    from evaluator.datasets.official import official_judgments, official_qrels
    from evaluator.trec import read_qrels

    folders = [data_dirs[dataset_id]] if dataset_id in data_dirs else []
    if data_root is not None:
        folders.append(data_root / dataset_id)
    for folder in folders:
        path = folder / "qrels" / f"{split}.tsv"
        if path.is_file():
            try:
                return read_qrels(path)
            except IrboardError as error:
                log.warning("cannot read %s: %s", path, error)
    # where downloads are extracted, or a user placed e.g. a classic collection
    cached = cache_root() / dataset_id / "qrels" / f"{split}.tsv"
    official = official_judgments(dataset_id)
    if official is not None and official.split == split:
        try:
            return official_qrels(dataset_id)
        except DatasetLoadError:
            if not cached.is_file():
                raise
    return read_qrels(cached) if cached.is_file() else None


class Judgments:
    """Qrels by (dataset id, split), looked up once each through `qrels_for`. Judgments that cannot be had are
    None, with the reason in `errors` (one line per dataset). Called with a result, says whether it is verified."""

    def __init__(self, data_dirs: dict[str, Path] | None = None, data_root: Path | None = None):
        self.data_dirs, self.data_root = data_dirs or {}, data_root
        self.errors: list[str] = []
        self._qrels: dict[tuple[str, str], Qrels | None] = {}

    def get(self, dataset_id: str, split: str) -> Qrels | None:
        key = (dataset_id, split)
        if key not in self._qrels:
            try:
                self._qrels[key] = qrels_for(dataset_id, split, self.data_dirs, self.data_root)
            except DatasetLoadError as error:
                self._qrels[key] = None
                self.errors.append(str(error))
        return self._qrels[key]

    def __call__(self, result: ResultFile) -> Verification | None:
        """The verification of a result with a stored ranking (a split result's: that of its full file); None
        without one, without judgments or when a split result's full file cannot be fetched (said in `errors`)."""
        if result.run is None and result.full is None:
            return None
        qrels = self.get(result.dataset.id, result.dataset.split)
        if qrels is None:
            return None
        # a split result whose queries are not the qrels' is rejected below without fetching its full file
        if result.full is not None and tuple(qrels.query_ids) == result.query_ids:
            from leaderboard.submissions.full import resolve_full

            try:
                result = resolve_full(result)
            except ResultValidationError as error:
                return Verification(frozenset(), tuple(sorted(result.metrics)), (str(error),))
            except DatasetLoadError as error:
                self.errors.append(f"{result.model.id} on {result.dataset.id}: full file not available: {error}")
                return None
        return verify_result(result, qrels)


def verifier(data_dirs: dict[str, Path], data_root: Path | None) -> Judgments:
    """`verification(result)` for the site build; its `errors` name the datasets whose judgments were missing."""
    return Judgments(data_dirs, data_root)
