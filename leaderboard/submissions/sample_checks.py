"""Score samples checked against the stored ranking they must agree with (see `query_sample_problem`).

A screen over all queries at once (`_suspect_rows`) redoes every check with the same float operations and picks
the queries that may fail; the per-query check then decides, and words the problem, for those only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import hypergeom

from evaluator.metrics import Qrels
from evaluator.metrics.ranking import UNJUDGED
from evaluator.result import ResultFile
from leaderboard.submissions.labels import entry_labels, flat_judgments, per_qrels

if TYPE_CHECKING:  # a type only: reading results needs no Arrow
    from evaluator.datasets.corpus import Corpus

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
    if sample.absent and not absences_allowed(result):
        return (f"{where}: absent_relevant says {sample.absent} judged relevant documents are not in the corpus, but "
                f"{result.dataset.id}'s judgments name no document missing from its corpus; regenerate the result "
                "with `irboard evaluate`")
    if sample.n_relevant + sample.absent != n_judged_relevant:
        absent = f" (+ {sample.absent} absent from the corpus)" if sample.absent else ""
        return (f"{where}: n_relevant is {sample.n_relevant}{absent} but the qrels judge {n_judged_relevant} "
                "documents relevant; a sample holds the score of every judged relevant document: regenerate the "
                "result with `irboard evaluate`")
    start, end = run.offsets[row], run.offsets[row + 1]
    names = [run.doc_ids[d] for d in run.docs[start:end]]
    if sample.absent and (problem := _absence_problem(result, row, sample, judged, names)):
        return f"{where}: {problem}"
    if end == start:
        return None
    scores = run.scores[start:end]
    is_relevant = np.array([judged.get(name, UNJUDGED) >= level for name in names])
    threshold = float(scores[-1])
    tolerance = SCORE_TOLERANCE * max(1.0, abs(threshold))
    run_relevant = np.sort(scores[is_relevant])
    above = sample.relevant[sample.relevant > threshold + tolerance]
    # every relevant document above t is ranked, and every ranked one above t has its score in the sample
    ranked_above = int(np.count_nonzero(run_relevant > threshold + tolerance))
    if above.size != ranked_above or _unmatched(above, run_relevant, tolerance):
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


def _absence_problem(result: ResultFile, row: int, sample, judged: dict[str, int], ranked: list[str]) -> str | None:
    """What contradicts the sample's claim that these judged relevant documents are missing from the corpus: each
    must be named (`absent_ids`), once, judged relevant for the query, and not a document the ranking holds (a
    ranked document is in the corpus). `validate --data-dir` also looks for them in the corpus
    (`absent_in_corpus`)."""
    fix = "regenerate the result with `irboard evaluate`"
    ids, level = sample.absent_ids, result.settings.relevance_level
    if len(ids) != sample.absent:
        return (f"absent_relevant says {sample.absent} judged relevant documents are not in the corpus but "
                f"absent_ids names {len(ids)}; files must name them so that the claim can be checked: {fix}")
    if len(set(ids)) != len(ids):
        return f"absent_ids names a document twice; {fix}"
    if (other := next((d for d in ids if judged.get(d, UNJUDGED) < level), None)) is not None:
        return f"absent_ids names {other!r}, which the qrels do not judge relevant for this query; {fix}"
    below = result.run.below
    if below is not None:  # the judged documents ranked below the stored depth
        ranked = ranked + [doc_id for _, doc_id, _ in below.entries(row)]
    held = set(ranked)
    if (present := next((d for d in ids if d in held), None)) is not None:
        return f"absent_ids names {present!r} as missing from the corpus, but the stored ranking holds it; {fix}"
    return None


def claims_absences(result: ResultFile) -> bool:
    """Do the result's score samples say that some judged relevant documents are missing from the corpus?"""
    samples = result.score_samples
    return samples is not None and bool(_absent(samples, result.query_ids).any())


def absent_in_corpus(result: ResultFile, corpus: Corpus, which: str = "the corpus of --data-dir") -> list[str]:
    """The claims of `absent_ids` that a corpus contradicts: one problem for the first query whose named
    document the corpus holds (`which`: the corpus, as the problem names it). Every named id is looked up in one
    pass over the corpus's ids (`Corpus.find`)."""
    samples = result.score_samples
    if samples is None:
        return []
    named = {d for q in result.query_ids if samples.queries[q].absent for d in samples.queries[q].absent_ids}
    held = corpus.find(named) if named else {}
    for query_id in result.query_ids:
        sample = samples.queries[query_id]
        if sample.absent and (present := next((d for d in sample.absent_ids if d in held), None)) is not None:
            return [f"score_samples of query {query_id!r}: absent_ids names {present!r} as missing from the corpus, "
                    f"but {which} holds it; regenerate the result with `irboard evaluate`"]
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


def _suspect_rows(result: ResultFile, qrels: Qrels, labels: np.ndarray) -> np.ndarray:
    """The rows, ascending, of the queries whose sample `query_sample_problem` may reject: each of its checks made
    for all queries at once, with the same float operations on the same numbers, so the same outcome."""
    samples, run, level = result.score_samples, result.run, result.settings.relevance_level
    n = len(result.query_ids)
    if tuple(qrels.query_ids) != result.query_ids and len(set(qrels.query_ids)) < len(qrels.query_ids):
        return np.arange(n)  # repeated qrels queries: the labels may differ from the per-query lookup's
    claimed, scores, n_scores, all_sampled, sizes, population = _sample_columns(samples, result.query_ids)
    absent = _absent(samples, result.query_ids)
    suspect = claimed + absent != _judged_relevant(result, qrels, level)
    suspect |= absent > 0  # each claimed absence is checked query by query (rare: ArguAna's judgments)
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
    ranked_above = relevant & (run.scores > np.repeat(threshold + tolerance, run.lengths))
    suspect |= ranked & (np.bincount(relevant_rows, minlength=n) != np.bincount(entry_rows[ranked_above], minlength=n))

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


def absences_allowed(result: ResultFile) -> bool:
    """May the result's samples say that judged relevant documents are missing from the corpus? Only on a dataset
    whose registered definition says its judgments name such documents (ArguAna), or one the registry does not
    know: elsewhere a claimed absence would only hide relevant scores."""
    from evaluator.datasets import get_spec
    from evaluator.errors import IrboardError

    try:
        return get_spec(result.dataset.id).allow_unknown_qrels_docs
    except IrboardError:
        return True


def _absent(samples, query_ids: tuple[str, ...]) -> np.ndarray:
    """Per query of `query_ids`: the judged relevant documents its sample says the corpus lacks."""
    flat = samples.flat_scores()
    if flat is not None and tuple(flat.queries) == tuple(query_ids):
        return flat.absent if flat.absent is not None else np.zeros(len(query_ids), dtype=np.int64)
    return np.fromiter((samples.queries[q].absent for q in query_ids), dtype=np.int64, count=len(query_ids))


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


# --- the samples below the ranking's last score -------------------------------------------------------------------
#
# Below the last ranked score t the ranking says only that every document it leaves out scores at most t, so a
# sample's values there cannot be matched one by one. Three things still follow, checked over the whole file at
# once (the sum over queries of their sampled counts: a manipulation of many queries adds up even where one query's
# sample says little, e.g. 2,000 samples of an 8.8M-document corpus). All are scale-free: every bound is a count,
# and every window is measured in the ranking's own scores.
#
# 1. The share of the sample above t: every non-relevant document above t is ranked, so the number of sampled
#    scores above t is hypergeometric with the ranked non-relevant documents above t as its successes (two-sided).
# 2. The sample just below t: score densities fall towards the top of a ranking (the ranked documents lie in the
#    upper tail, above the mode), so the window [t - w, t] holds at least DENSITY_RATIO times as many non-relevant
#    documents as (t, t + w], which holds the k ranked non-relevant documents nearest above t when w is the score
#    gap to the k-th of them. The sample's count in that window is then at least hypergeometric with mean
#    DENSITY_RATIO * k * m / M (m sampled of M non-relevant). Windows for k = h, h/2, h/4, h/8 (h: ranked
#    non-relevant documents above t) catch a sample shifted or collapsed away from t at any depth below it.
# 3. Deeper down, ranks (no assumption on any distribution): `run.below` gives the rank r and score s of each
#    judged document ranked below the stored depth, so at least r - 1 documents score s or more, of which at most
#    the query's relevant scores at or above s are relevant. The sampled scores at or above s then number at least
#    a hypergeometric count with that many successes. One such checkpoint a query, its deepest (it sees every
#    sampled score moved from anywhere above it to below it), summed over the file's queries.
# Counts are compared with Chernoff bounds (Hoeffding 1963: they hold for sampling without replacement, and for
# sums of independent queries), which are never below the exact tail: an honest file is rejected with
# probability below IMPLAUSIBLE by each test, as long as densities fall towards the top of each ranking on average
# (test 2; tests 1 and 3 need no such premise).

DENSITY_RATIO = 0.75
WINDOW_DIVISORS = (1, 2, 4, 8)
CUT_TESTS = len(WINDOW_DIVISORS) + 3  # the Bonferroni split of IMPLAUSIBLE over the whole-file tests


def chernoff_tail(observed: float, mean: float) -> float:
    """An upper bound on P[X <= observed] (observed below the mean) or P[X >= observed] (above it) for X a sum of
    independent hypergeometric counts with this mean: exp(-mean * h(observed / mean)), h(u) = u ln u - u + 1."""
    if mean <= 0:
        return 1.0 if observed <= 0 else 0.0
    u = observed / mean
    h = 1.0 - u if u == 0 else u * np.log(u) - u + 1.0
    return float(np.exp(-mean * h))


def cut_counts(result: ResultFile, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Per query, what the checks below compare: the sampled scores above the cut ('above') with the bounds of their
    expected number ('above_low', 'above_high'), and per window (columns, WINDOW_DIVISORS) the sampled scores in it
    ('window') with the least expected number ('window_least'), and at the deepest judged document ranked below the
    stored depth, the sampled scores that may reach its score ('deep') with the least expected number
    ('deep_least'). Queries without a ranking, a sample or non-relevant documents count 0 everywhere."""
    samples, run, level = result.score_samples, result.run, result.settings.relevance_level
    n = len(result.query_ids)
    _, _, _, sampled, sizes, population = _sample_columns(samples, result.query_ids)
    starts = np.concatenate(([0], np.cumsum(sizes)))
    spare = 1 if result.settings.ignore_identical_ids else 0
    counts = {name: np.zeros(n) for name in ("above", "above_low", "above_high", "deep", "deep_least")}
    below = run.below
    relevant_scores, relevant_at = _relevant_by_query(samples, result.query_ids)
    counts["window"] = np.zeros((n, len(WINDOW_DIVISORS)))
    counts["window_least"] = np.zeros((n, len(WINDOW_DIVISORS)))
    for row in range(n):
        start, end, m, total = run.offsets[row], run.offsets[row + 1], int(sizes[row]), int(population[row])
        if end == start or m == 0 or total <= 0:
            continue
        values = sampled[starts[row]:starts[row + 1]]  # ascending
        scores = run.scores[start:end]
        t = float(scores[-1])
        quantum = float(values[-1] - values[0]) / samples.levels
        tolerance = SCORE_TOLERANCE * max(1.0, abs(t))
        nonrelevant = scores[labels[start:end] < level]  # descending
        rate = m / total
        # a sampled value is within quantum / 2 of its document's score
        counts["above"][row] = np.count_nonzero(values > t + quantum + tolerance)
        counts["above_low"][row] = rate * np.count_nonzero(nonrelevant > t + 1.5 * quantum + tolerance)
        counts["above_high"][row] = min(m, rate * (np.count_nonzero(nonrelevant > t + 0.5 * quantum + tolerance)
                                                   + spare))
        if below is not None and below.counts[row]:
            # the deepest judged document below the depth: at least rank - 1 documents score its score or more
            last = int(below.offsets[row + 1]) - 1
            score, rank = float(below.scores[last]), int(below.ranks[last])
            step = quantum + SCORE_TOLERANCE * max(1.0, abs(score))
            rel = relevant_scores[relevant_at[row]:relevant_at[row + 1]]
            higher = max(rank - 1 - int(np.count_nonzero(rel >= score - step)), 0)
            counts["deep"][row] = m - np.searchsorted(values, score - step, side="left")
            counts["deep_least"][row] = rate * min(higher, total)
        nearest = nonrelevant[nonrelevant > t + tolerance]  # every one is in (t, t + w] for w at least its gap
        if not nearest.size:
            continue
        # The window's values: those from t - w up to t + quantum (where a document scoring t may be stored), less
        # every ranked document that may be stored there from above t. A coarse quantum (a sample stretched far
        # below t) thus widens nothing: it only takes more from the count.
        top = np.searchsorted(values, t + quantum + tolerance, side="right")
        overlap = np.count_nonzero((nonrelevant > t) & (nonrelevant <= t + 1.5 * quantum + tolerance)) + spare
        for j, divisor in enumerate(WINDOW_DIVISORS):
            k = -(-nearest.size // divisor)
            width = float(nearest[nearest.size - k]) - t
            bottom = np.searchsorted(values, t - width, side="left")
            counts["window"][row, j] = max(top - bottom - overlap, 0)
            counts["window_least"][row, j] = DENSITY_RATIO * rate * k
    return counts


def _relevant_by_query(samples, query_ids: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Every query's relevant scores one after the other, and where each query's start (and the last one's end)."""
    _, relevant, n_relevant, _, _, _ = _sample_columns(samples, query_ids)
    return relevant, np.concatenate(([0], np.cumsum(n_relevant)))


def cut_problems(result: ResultFile, qrels: Qrels, labels: np.ndarray | None = None) -> list[str]:
    """What the samples around and below the ranking's last score contradict (tests 1 to 3 above), over the whole
    file; empty when they are plausible."""
    if result.score_samples is None or result.run is None:
        return []
    if labels is None:
        labels = entry_labels(result, qrels)
    counts = cut_counts(result, labels)
    fix = "the sample is not a uniform sample of the documents this ranking leaves out; regenerate the result " \
          "with `irboard evaluate`"
    seen, low, high = (float(counts[name].sum()) for name in ("above", "above_low", "above_high"))
    tests = CUT_TESTS
    for observed, mean, side in ((seen, low, "few"), (seen, high, "many")):
        beyond = observed < mean if side == "few" else observed > mean
        if beyond and (p := chernoff_tail(observed, mean)) < IMPLAUSIBLE / tests:
            return [f"score_samples: {observed:.0f} sampled non-relevant scores lie above the rankings' last scores, "
                    f"too {side} for the {mean:.1f} expected from the ranked documents above them (p <= {p:.1e}); "
                    f"{fix}"]
    for j, divisor in enumerate(WINDOW_DIVISORS):
        observed, least = float(counts["window"][:, j].sum()), float(counts["window_least"][:, j].sum())
        if observed < least and (p := chernoff_tail(observed, least)) < IMPLAUSIBLE / tests:
            return [f"score_samples: only {observed:.0f} sampled non-relevant scores lie just below the rankings' last "
                    f"scores (within the score gap to the {_nth(divisor)} ranked non-relevant document above them), "
                    f"where at least {least:.1f} are expected (p <= {p:.1e}); {fix}"]
    observed, least = float(counts["deep"].sum()), float(counts["deep_least"].sum())
    if observed < least and (p := chernoff_tail(observed, least)) < IMPLAUSIBLE / tests:
        return [f"score_samples: only {observed:.0f} sampled non-relevant scores reach the scores of the deepest judged "
                f"documents ranked below the stored depth (run.below), where their ranks put at least {least:.1f} "
                f"(p <= {p:.1e}); {fix}"]
    return []


def _nth(divisor: int) -> str:
    return "farthest" if divisor == 1 else f"1/{divisor} farthest"
