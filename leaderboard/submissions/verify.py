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
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import repeat
from operator import eq
from pathlib import Path

import numpy as np

from evaluator.errors import DatasetLoadError, IrboardError, ResultValidationError
from evaluator.metrics import Measure, Qrels, RankedRun, evaluate, parse_measure
from evaluator.metrics.ranking import PAD, UNJUDGED
from evaluator.result import ResultFile
from leaderboard.submissions.cache import ContentCache

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


def entry_labels(result: ResultFile, qrels: Qrels) -> np.ndarray:
    """The qrels label of every stored ranking entry (aligned with `run.docs`; UNJUDGED where not judged), the
    query's own id included. Vectorised: each judged (query, document) is looked up once in the run's sorted
    doc-id table, and every ranked entry then finds its label by one sorted search."""
    run, n = result.run, len(result.query_ids)
    size = len(run.doc_ids)
    qrels_rows, names, judged_labels = _judged(qrels)
    if tuple(qrels.query_ids) == result.query_ids:
        rows_of_judged = qrels_rows
    else:
        row_of = {query_id: i for i, query_id in enumerate(result.query_ids)}
        rows_of_judged = np.array([row_of.get(query_id, -1) for query_id in qrels.query_ids],
                                  dtype=np.int64)[qrels_rows]
    # position of each judged document in the sorted table, and whether it is there at all (all in C)
    at = np.fromiter(map(bisect_left, repeat(run.doc_ids), names), dtype=np.int64, count=len(names))
    clipped = np.minimum(at, max(size - 1, 0)).tolist()
    there = np.fromiter(map(eq, map(run.doc_ids.__getitem__, clipped), names), dtype=bool, count=len(names)) \
        if size else np.zeros(len(names), dtype=bool)
    there &= rows_of_judged >= 0
    keys = rows_of_judged[there] * size + at[there]
    order = np.argsort(keys)
    keys, labels = keys[order], judged_labels[there][order]
    rows = np.repeat(np.arange(n, dtype=np.int64), run.lengths)
    found_labels = np.full(rows.size, UNJUDGED, dtype=np.int32)
    if keys.size:
        judged_anywhere = np.zeros(size, dtype=bool)
        judged_anywhere[at[there]] = True
        candidates = np.flatnonzero(judged_anywhere[run.docs])  # few: search only these
        entries = rows[candidates] * size + run.docs[candidates]
        found = np.minimum(np.searchsorted(keys, entries), keys.size - 1)
        hit = keys[found] == entries
        found_labels[candidates[hit]] = labels[found[hit]]
    return found_labels


def ranked_from_result(result: ResultFile, qrels: Qrels, labels: np.ndarray | None = None) -> RankedRun:
    """The label matrix of the stored ranking, in its stored order (dropping the query's own id when the
    settings ignore identical ids); `labels`: `entry_labels(result, qrels)`, when the caller has them."""
    run, n = result.run, len(result.query_ids)
    if labels is None:
        labels = entry_labels(result, qrels)
    rows = np.repeat(np.arange(n, dtype=np.int64), run.lengths)
    lengths = run.lengths.astype(np.int64)
    if result.settings.ignore_identical_ids:
        own = np.array([_table_index(run.doc_ids, query_id) for query_id in result.query_ids], dtype=np.int64)
        keep = run.docs != own[rows]
        rows, labels = rows[keep], labels[keep]
        lengths = np.bincount(rows, minlength=n).astype(np.int64)
    depth = max(int(lengths.max(initial=0)), 1)
    matrix = np.full((n, depth), PAD, dtype=np.int32)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    matrix[rows, np.arange(rows.size) - np.repeat(starts, lengths)] = labels
    return RankedRun(list(result.query_ids), matrix, lengths)


def _table_index(table: tuple[str, ...], name: str) -> int:
    """Where `name` is in the sorted tuple `table`, or -1."""
    at = bisect_left(table, name)
    return at if at < len(table) and table[at] == name else -1


_PER_QRELS: dict[tuple[int, object], tuple] = {}  # (id(qrels), what) -> (qrels, value)


def _per_qrels(qrels: Qrels, what: object, make):
    """`make()`, once per qrels object (a build re-scores about 1,000 results against each)."""
    held = _PER_QRELS.get((id(qrels), what))
    if held is None or held[0] is not qrels:
        if len(_PER_QRELS) >= 256:
            _PER_QRELS.clear()
        held = _PER_QRELS[(id(qrels), what)] = (qrels, make())
    return held[1]


def _judged(qrels: Qrels) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Every judgment flattened: (qrels row, doc id, label), in query order."""
    def flatten():
        counts = [len(judged) for judged in qrels.judgments]
        names = [name for judged in qrels.judgments for name in judged]
        labels = np.fromiter((label for judged in qrels.judgments for label in judged.values()), dtype=np.int32,
                             count=len(names))
        return np.repeat(np.arange(len(counts), dtype=np.int64), counts), names, labels

    return _per_qrels(qrels, "judged", flatten)


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
    labels = entry_labels(result, qrels) if result.run is not None else None
    if measures:
        level = result.settings.relevance_level
        stats = _per_qrels(qrels, ("stats", level), lambda: qrels.label_stats(level))
        values = evaluate(ranked_from_result(result, qrels, labels), stats, measures, level)
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
        problems += score_sample_problems(result, qrels, labels)
    verified = frozenset() if problems else frozenset(str(m) for m in measures)
    return Verification(verified, tuple(others), tuple(problems))


def score_sample_problems(result: ResultFile, qrels: Qrels, labels: np.ndarray | None = None) -> list[str]:
    """Score samples that the stored ranking contradicts: the problem `query_sample_problem` finds in the first
    query it rejects, or nothing (`labels`: `entry_labels(result, qrels)`, when the caller has them). A screen
    over all queries at once (`_suspect_rows`) picks the queries that may fail; only those are checked one by
    one, so a build pays the per-query cost only for files that are rejected anyway."""
    if labels is None:
        labels = entry_labels(result, qrels)
    suspects = _suspect_rows(result, qrels, labels)
    if suspects.size:
        judged_by_query = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
        for row in suspects.tolist():
            problem = query_sample_problem(result, row, judged_by_query.get(result.query_ids[row], {}))
            if problem is not None:
                return [problem]
    return []


def query_sample_problem(result: ResultFile, row: int, judged: dict[str, int]) -> str | None:
    """The problem in the score sample of query `row` (`judged`: its qrels, doc id -> label), or None.

    Every document the ranking does not hold scores at most the last stored score t of its query. So: the
    sample's relevant scores above t must be exactly those of the relevant documents in the ranking; every
    sampled non-relevant score above t must be (within its quantisation step) a non-relevant score of the
    ranking; no more relevant documents than the qrels judge; and the number of sampled non-relevant
    scores above t must be plausible for a uniform sample (hypergeometric tail, p >= 1e-6)."""
    from scipy.stats import hypergeom

    samples, run, level = result.score_samples, result.run, result.settings.relevance_level
    query_id = result.query_ids[row]
    sample = samples.queries[query_id]
    where = f"score_samples of query {query_id!r}"
    n_judged_relevant = sum(1 for label in judged.values() if label >= level)
    if sample.n_relevant > n_judged_relevant:
        return (f"{where}: n_relevant is {sample.n_relevant} but the qrels judge {n_judged_relevant} documents "
                "relevant; regenerate the result with `irboard evaluate`")
    start, end = run.offsets[row], run.offsets[row + 1]
    if end == start:
        return None
    names = [run.doc_ids[d] for d in run.docs[start:end]]
    scores = run.scores[start:end]
    is_relevant = np.array([judged.get(name, UNJUDGED) >= level for name in names])
    threshold = float(scores[-1])
    tolerance = SCORE_TOLERANCE * max(1.0, abs(threshold))
    run_relevant = np.sort(scores[is_relevant])
    above = sample.relevant[sample.relevant > threshold + tolerance]
    if above.size > run_relevant.size or _unmatched(above, run_relevant, tolerance):
        return (f"{where}: relevant scores above the ranking's last score ({threshold:.6g}) do not match the "
                "relevant documents of the stored ranking; regenerate the result with `irboard evaluate`")
    if sample.nonrelevant.size and sample.n_nonrelevant:
        width = float(sample.nonrelevant[-1] - sample.nonrelevant[0])
        step = width / samples.levels + tolerance
        run_nonrelevant = np.sort(scores[~is_relevant])
        sampled_above = sample.nonrelevant[sample.nonrelevant > threshold + step]
        # with ignore_identical_ids the query's own document may score above t without being ranked
        spare = 1 if result.settings.ignore_identical_ids else 0
        if sampled_above.size > run_nonrelevant.size + spare or \
                _unmatched(sampled_above, run_nonrelevant, step) > spare:
            return (f"{where}: sampled non-relevant scores above the ranking's last score ({threshold:.6g}) are "
                    "not scores of the stored ranking; regenerate the result with `irboard evaluate`")
        higher = int(np.count_nonzero(run_nonrelevant > threshold + step))
        observed = int(np.count_nonzero(sample.nonrelevant > threshold - step))
        p_value = hypergeom.cdf(observed, sample.n_nonrelevant, higher, sample.nonrelevant.size)
        if p_value < IMPLAUSIBLE:
            return (f"{where}: only {observed} of {sample.nonrelevant.size} sampled non-relevant scores reach the "
                    f"ranking's last score although {higher} ranked non-relevant documents lie above it "
                    f"(p = {p_value:.1e}); the sample is not a uniform sample of this ranking's scores")
    return None


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


def _suspect_rows(result: ResultFile, qrels: Qrels, labels: np.ndarray) -> np.ndarray:
    """The rows, ascending, of the queries whose sample `query_sample_problem` may reject: each of its checks made
    for all queries at once, with the same float operations on the same numbers, so the same outcome."""
    samples, run, level = result.score_samples, result.run, result.settings.relevance_level
    n = len(result.query_ids)
    if tuple(qrels.query_ids) != result.query_ids and len(set(qrels.query_ids)) < len(qrels.query_ids):
        return np.arange(n)  # repeated qrels queries: the labels may differ from the per-query lookup's
    queries = [samples.queries[query_id] for query_id in result.query_ids]
    claimed = np.fromiter((q.n_relevant for q in queries), dtype=np.int64, count=n)
    suspect = claimed > _judged_relevant(result, qrels, level)
    if not run.docs.size:
        return np.flatnonzero(suspect)
    ranked = run.lengths > 0
    threshold = run.scores[np.maximum(run.offsets[1:] - 1, 0)]  # the last score (meaningless where unranked)
    tolerance = SCORE_TOLERANCE * np.maximum(1.0, np.abs(threshold))
    entry_rows = np.repeat(np.arange(n), run.lengths)
    relevant = labels >= level

    # relevant scores above the threshold: no more than the ranking's relevant documents
    scores = np.concatenate([q.relevant for q in queries])
    rows = np.repeat(np.arange(n), np.fromiter((q.relevant.size for q in queries), dtype=np.int64, count=n))
    above = (scores > (threshold + tolerance)[rows]) & ranked[rows]
    relevant_above, relevant_rows = scores[above], rows[above]
    suspect |= np.bincount(relevant_rows, minlength=n) > np.bincount(entry_rows[relevant], minlength=n)

    # sampled non-relevant scores, of the queries with a ranking, a sample and non-relevant documents
    sizes = np.fromiter((q.nonrelevant.size for q in queries), dtype=np.int64, count=n)
    population = np.fromiter((q.n_nonrelevant for q in queries), dtype=np.int64, count=n)
    checked = ranked & (sizes > 0) & (population != 0)
    step, observed = np.zeros(n), np.zeros(n, dtype=np.int64)
    sampled_above, sampled_rows = np.zeros(0), np.zeros(0, dtype=np.int64)
    if checked.any():
        picked = np.flatnonzero(checked)
        sampled = np.concatenate([queries[row].nonrelevant for row in picked.tolist()])
        ends = np.cumsum(sizes[picked])
        step[picked] = (sampled[ends - 1] - sampled[ends - sizes[picked]]) / samples.levels + tolerance[picked]
        # only the few values above the lower of the two cuts can count (the bulk of the sample lies below both)
        near = np.flatnonzero(sampled > np.repeat(np.minimum(threshold + step, threshold - step)[picked],
                                                  sizes[picked]))
        sampled, rows = sampled[near], picked[np.searchsorted(ends, near, side="right")]
        above = sampled > (threshold + step)[rows]
        sampled_above, sampled_rows = sampled[above], rows[above]
        observed = np.bincount(rows[sampled > (threshold - step)[rows]], minlength=n)

    # every value above the threshold matched against the ranking's scores of its kind, in one grouped match:
    # group r holds query r's relevant scores, group n + r its non-relevant ones
    nonrelevant = ~relevant
    unmatched = _unmatched_by_group(np.concatenate((relevant_above, sampled_above)),
                                    np.concatenate((relevant_rows, n + sampled_rows)),
                                    np.concatenate((run.scores[relevant], run.scores[nonrelevant])),
                                    np.concatenate((entry_rows[relevant], n + entry_rows[nonrelevant])),
                                    np.concatenate((tolerance, step)), 2 * n)
    suspect |= unmatched[:n] > 0
    # with ignore_identical_ids the query's own document may score above t without being ranked
    spare = 1 if result.settings.ignore_identical_ids else 0
    run_nonrelevant = np.bincount(entry_rows[nonrelevant], minlength=n)
    suspect |= checked & ((np.bincount(sampled_rows, minlength=n) > run_nonrelevant + spare) | (unmatched[n:] > spare))
    tail = np.flatnonzero(checked & ~suspect)
    if tail.size:
        higher = np.bincount(entry_rows[nonrelevant & (run.scores > np.repeat(threshold + step, run.lengths))],
                             minlength=n)
        suspect[tail] = _implausible(observed[tail], population[tail], higher[tail], sizes[tail])
    return np.flatnonzero(suspect)


def _judged_relevant(result: ResultFile, qrels: Qrels, level: int) -> np.ndarray:
    """Per query of the result: how many documents its qrels judge relevant (0 for a query without judgments)."""
    def count():
        rows, _, labels = _judged(qrels)
        return np.bincount(rows[labels >= level], minlength=len(qrels.query_ids))

    counts = _per_qrels(qrels, ("relevant", level), count)
    if tuple(qrels.query_ids) == result.query_ids:
        return counts
    by_query = dict(zip(qrels.query_ids, counts.tolist(), strict=True))
    return np.fromiter((by_query.get(query_id, 0) for query_id in result.query_ids), dtype=np.int64,
                       count=len(result.query_ids))


def _unmatched_by_group(values: np.ndarray, value_groups: np.ndarray, targets: np.ndarray,
                        target_groups: np.ndarray, tolerance: np.ndarray, groups: int) -> np.ndarray:
    """Per group g: how many of its `values` lie farther than tolerance[g] from every target of the same group
    (`_unmatched` for all groups at once). (group, score) pairs order as complex numbers, real part first, so one
    sorted search finds for every value the targets `_unmatched` compares it with: its group's last target below
    it and first at or above it."""
    if values.size == 0 or targets.size == 0:
        return np.bincount(value_groups, minlength=groups)
    pairs = np.empty(targets.size + 2, dtype=np.complex128)  # sorted targets between two sentinels of no group
    pairs[0] = pairs[-1] = -1
    pairs.real[1:-1], pairs.imag[1:-1] = target_groups, targets
    pairs[1:-1].sort(kind="stable")  # fast for targets in group order, each group's in rank order: a merge
    wanted = np.empty(values.size, dtype=np.complex128)
    wanted.real, wanted.imag = value_groups, values
    at = np.searchsorted(pairs[1:-1], wanted)
    nearest = np.full(values.size, np.inf)
    for neighbour in (pairs[at], pairs[at + 1]):
        nearest = np.where(neighbour.real == value_groups, np.minimum(nearest, np.abs(neighbour.imag - values)),
                           nearest)
    return np.bincount(value_groups[nearest > tolerance[value_groups]], minlength=groups)


def _implausible(observed: np.ndarray, population: np.ndarray, higher: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """Elementwise `hypergeom.cdf(observed, population, higher, drawn) < IMPLAUSIBLE`, as `query_sample_problem`
    computes it query by query. scipy (about 5 µs a query) is called only for what a bound leaves open: the
    probability of `observed` alone is at most the tail, and where gammaln puts it at 100 * IMPLAUSIBLE or
    more, the tail passes (gammaln's error is orders of magnitude below that factor)."""
    from scipy.special import gammaln
    from scipy.stats import hypergeom

    valid = (population > 0) & (higher >= 0) & (drawn >= 0) & (higher <= population) & (drawn <= population)
    lowest, highest = np.maximum(drawn - (population - higher), 0), np.minimum(higher, drawn)
    settled = valid & (observed >= highest)  # scipy's cdf is 1 there
    inside = np.flatnonzero(valid & (observed >= lowest) & ~settled)
    if inside.size:
        k, m, h, d = (a[inside].astype(np.float64) for a in (observed, population, higher, drawn))

        def log_choose(a, b):
            return gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)

        log_probability = log_choose(h, k) + log_choose(m - h, d - k) - log_choose(m, d)
        settled[inside] = log_probability >= np.log(100 * IMPLAUSIBLE)
    implausible = np.zeros(observed.size, dtype=bool)
    rest = np.flatnonzero(~settled)
    if rest.size:
        implausible[rest] = hypergeom.cdf(observed[rest], population[rest], higher[rest], drawn[rest]) < IMPLAUSIBLE
    return implausible


def rescore_problems(result: ResultFile, qrels: Qrels) -> list[str]:
    """The problems re-scoring finds (empty when every determined metric matches)."""
    return list(verify_result(result, qrels).problems)


# Bump when reading a ranking or re-scoring it changes (evaluator.result's run checks, this module, the metrics):
# cached verifications made by other code then no longer count.
VERIFICATION_VERSION = "1"


class VerifiedCache(ContentCache):
    """Past verifications, keyed by (VERIFICATION_VERSION, the sha256 of a result file's exact bytes, the sha256 of
    the qrels it was re-scored against). An entry says only that those exact bytes re-scored cleanly against those
    exact judgments with this code, so a file that differs in one byte, other judgments or other code miss it.
    Only outcomes without problems are stored (a rejected file is re-checked, and rejected again, every time)."""

    @staticmethod
    def _fields(file_sha256: str, qrels_sha256: str) -> dict[str, str]:
        return {"version": VERIFICATION_VERSION, "file_sha256": file_sha256, "qrels_sha256": qrels_sha256}

    def get(self, file_sha256: str, qrels_sha256: str, metrics: Iterable[str]) -> Verification | None:
        entry = super().get(self._fields(file_sha256, qrels_sha256))
        if entry is None:
            return None
        verified, unverified = entry.get("verified"), entry.get("unverified")
        if not isinstance(verified, list) or not isinstance(unverified, list) or not all(
                isinstance(name, str) for name in [*verified, *unverified]) \
                or sorted([*verified, *unverified]) != sorted(metrics):
            return None
        return Verification(frozenset(verified), tuple(unverified), ())

    def put(self, file_sha256: str, qrels_sha256: str, outcome: Verification) -> None:
        if not outcome.problems:
            super().put(self._fields(file_sha256, qrels_sha256),
                        {"verified": sorted(outcome.verified), "unverified": list(outcome.unverified)})


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
    None, with the reason in `errors` (one line per dataset). Called with a result, says whether it is verified.
    Verifications are cached by content (`VerifiedCache` under `<cache>/verified`) unless `cache` is False."""

    def __init__(self, data_dirs: dict[str, Path] | None = None, data_root: Path | None = None, cache: bool = True):
        from evaluator.datasets.download import cache_root

        self.data_dirs, self.data_root = data_dirs or {}, data_root
        self.errors: list[str] = []
        self._qrels: dict[tuple[str, str], Qrels | None] = {}
        self.cache = VerifiedCache(cache_root() / "verified") if cache else None

    def get(self, dataset_id: str, split: str) -> Qrels | None:
        key = (dataset_id, split)
        if key not in self._qrels:
            try:
                self._qrels[key] = qrels_for(dataset_id, split, self.data_dirs, self.data_root)
            except DatasetLoadError as error:
                self._qrels[key] = None
                self.errors.append(str(error))
        return self._qrels[key]

    def cached(self, file_sha256: str, header) -> Verification | None:
        """The cached verification of the file whose bytes hash to `file_sha256` (`header`: its parsed header),
        against the judgments of its dataset; None when not cached (or no judgments)."""
        qrels = self.get(header.dataset.id, header.dataset.split) if self.cache is not None else None
        return None if qrels is None else self.cache.get(file_sha256, qrels.sha256(), header.metrics)

    def verify(self, result: ResultFile, qrels: Qrels, file_sha256: str | None = None) -> Verification:
        """`verify_result`, through the cache when the sha256 of the result file's bytes is given."""
        if file_sha256 is None or self.cache is None:
            return verify_result(result, qrels)
        outcome = self.cache.get(file_sha256, qrels.sha256(), result.metrics)
        if outcome is None:
            outcome = verify_result(result, qrels)
            self.cache.put(file_sha256, qrels.sha256(), outcome)
        return outcome

    def __call__(self, result: ResultFile, file_sha256: str | None = None) -> Verification | None:
        """The verification of a result with a stored ranking (a split result's: that of its full file); None
        without one, without judgments or when a split result's full file cannot be fetched (said in `errors`).
        `file_sha256`: the sha256 of the result file's bytes, to look the verification up in the cache (and
        store it there); split results are not cached."""
        if result.run is None and result.full is None:
            return None
        qrels = self.get(result.dataset.id, result.dataset.split)
        if qrels is None:
            return None
        if result.full is not None:
            file_sha256 = None
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
        return self.verify(result, qrels, file_sha256)


def verifier(data_dirs: dict[str, Path], data_root: Path | None) -> Judgments:
    """`verification(result)` for the site build; its `errors` name the datasets whose judgments were missing."""
    return Judgments(data_dirs, data_root)
