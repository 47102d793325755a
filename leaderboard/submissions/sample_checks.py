"""Score samples checked against the stored ranking they must agree with (see `query_sample_problem`).

A screen over all queries at once (`_suspect_rows`) redoes every check with the same float operations and picks
the queries that may fail; the per-query check then decides, and words the problem, for those only.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import hypergeom

from evaluator.metrics import Qrels
from evaluator.metrics.ranking import UNJUDGED
from evaluator.result import ResultFile
from leaderboard.submissions.labels import entry_labels, flat_judgments, per_qrels

SCORE_TOLERANCE = 1e-5  # relative: a sampled score and the run's score of the same document
# A file is rejected as implausible when a query's p-value is below IMPLAUSIBLE / (its number of queries): Bonferroni
# over the file's queries, so that an honest file is rejected with probability at most 1e-6 whatever its size (at
# 1e-6 a query, a board of 29,258 files of 100 queries rejected an honest one in the benchmark).
IMPLAUSIBLE = 1e-6


def implausible_below(result: ResultFile) -> float:
    """The p-value below which one query's sample counts as implausible, for a file of this many queries."""
    return IMPLAUSIBLE / max(len(result.query_ids), 1)


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
    scores above t must be plausible for a uniform sample (hypergeometric tail, p >= `implausible_below`)."""

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
        if p_value < implausible_below(result):
            return (f"{where}: only {observed} of {sample.nonrelevant.size} sampled non-relevant scores reach the "
                    f"ranking's last score although {higher} ranked non-relevant documents lie above it "
                    f"(p = {p_value:.1e}, below {implausible_below(result):.1e}); the sample is not a uniform sample "
                    "of this ranking's scores")
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
    claimed, scores, n_scores, all_sampled, sizes, population = _sample_columns(samples, result.query_ids)
    suspect = claimed > _judged_relevant(result, qrels, level)
    if not run.docs.size:
        return np.flatnonzero(suspect)
    ranked = run.lengths > 0
    threshold = run.scores[np.maximum(run.offsets[1:] - 1, 0)]  # the last score (meaningless where unranked)
    tolerance = SCORE_TOLERANCE * np.maximum(1.0, np.abs(threshold))
    entry_rows = np.repeat(np.arange(n), run.lengths)
    relevant = labels >= level

    # relevant scores above the threshold: no more than the ranking's relevant documents
    rows = np.repeat(np.arange(n), n_scores)
    above = (scores > (threshold + tolerance)[rows]) & ranked[rows]
    relevant_above, relevant_rows = scores[above], rows[above]
    suspect |= np.bincount(relevant_rows, minlength=n) > np.bincount(entry_rows[relevant], minlength=n)

    # sampled non-relevant scores, of the queries with a ranking, a sample and non-relevant documents
    checked = ranked & (sizes > 0) & (population != 0)
    step, observed = np.zeros(n), np.zeros(n, dtype=np.int64)
    sampled_above, sampled_rows = np.zeros(0), np.zeros(0, dtype=np.int64)
    if checked.any():
        picked = np.flatnonzero(checked)
        sampled = all_sampled if picked.size == n else all_sampled[np.repeat(checked, sizes)]
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
        suspect[tail] = _implausible(observed[tail], population[tail], higher[tail], sizes[tail],
                                     implausible_below(result))
    return np.flatnonzero(suspect)


def _sample_columns(samples, query_ids: tuple[str, ...]):
    """Per query of `query_ids`, one after the other: (n_relevant, relevant scores, their count, sampled scores, their
    count, non-relevant documents), from the decoded flat arrays when they hold exactly these queries."""
    flat = samples.flat_scores()
    if flat is not None and tuple(flat.queries) == tuple(query_ids):
        return (flat.n_relevant, flat.relevant, flat.n_relevant, flat.nonrelevant, flat.n_sampled,
                samples.num_docs - flat.n_relevant)
    queries = [samples.queries[query_id] for query_id in query_ids]

    def column(values):
        return np.fromiter(values, dtype=np.int64, count=len(queries))

    def joined(arrays):
        return np.concatenate(arrays) if arrays else np.zeros(0)

    return (column(q.n_relevant for q in queries), joined([q.relevant for q in queries]),
            column(q.relevant.size for q in queries), joined([q.nonrelevant for q in queries]),
            column(q.nonrelevant.size for q in queries), column(q.n_nonrelevant for q in queries))


def _judged_relevant(result: ResultFile, qrels: Qrels, level: int) -> np.ndarray:
    """Per query of the result: how many documents its qrels judge relevant (0 for a query without judgments)."""
    def count():
        rows, _, labels = flat_judgments(qrels)
        return np.bincount(rows[labels >= level], minlength=len(qrels.query_ids))

    counts = per_qrels(qrels, ("relevant", level), count)
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


def _implausible(observed: np.ndarray, population: np.ndarray, higher: np.ndarray, drawn: np.ndarray,
                 below: float = IMPLAUSIBLE) -> np.ndarray:
    """Elementwise `hypergeom.cdf(observed, population, higher, drawn) < below`, as `query_sample_problem`
    computes it query by query. scipy (about 5 µs a query) is called only for what a bound leaves open: the
    probability of `observed` alone is at most the tail, and where gammaln puts it at 100 * `below` or
    more, the tail passes (gammaln's error is orders of magnitude below that factor)."""
    from scipy.special import gammaln

    valid = (population > 0) & (higher >= 0) & (drawn >= 0) & (higher <= population) & (drawn <= population)
    lowest, highest = np.maximum(drawn - (population - higher), 0), np.minimum(higher, drawn)
    settled = valid & (observed >= highest)  # scipy's cdf is 1 there
    inside = np.flatnonzero(valid & (observed >= lowest) & ~settled)
    if inside.size:
        k, m, h, d = (a[inside].astype(np.float64) for a in (observed, population, higher, drawn))

        def log_choose(a, b):
            return gammaln(a + 1) - gammaln(b + 1) - gammaln(a - b + 1)

        log_probability = log_choose(h, k) + log_choose(m - h, d - k) - log_choose(m, d)
        settled[inside] = log_probability >= np.log(100 * below)
    implausible = np.zeros(observed.size, dtype=bool)
    rest = np.flatnonzero(~settled)
    if rest.size:
        implausible[rest] = hypergeom.cdf(observed[rest], population[rest], higher[rest], drawn[rest]) < below
    return implausible
