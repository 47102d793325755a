"""Claims below the stored depth checked against the score samples the same file carries.

Below `run.depth` a result keeps only each ranking's length and its judged documents' ranks and scores
(`run.below`); the deep metrics (AP, R@1000, nDCG@1000, Judged@1000, ...) are re-scored from those claims. The
score samples hold every judged relevant document's score exactly and a uniform sample of m of the other M
documents' scores, so each claim has consequences the samples can contradict:

1. A relevant document claimed at rank r with score s is one of the sample's relevant scores: each claimed
   relevant score matches a distinct relevant score of the sample (within SCORE_TOLERANCE), one the stored
   ranking's relevant documents do not already take.
2. The relevant scores left over (documents ranked nowhere) lie below every ranked score, so at or below the
   lowest score the ranking is known to have (the last claimed entry's, or the last stored one's).
3. A document at rank r with score s has at most r - 1 documents scoring more than s; of those, the sample's
   relevant scores above s are known exactly, so at most K = r - 1 - (relevant above s) are non-relevant, and the
   sampled non-relevant scores above s number at most a Hypergeometric(M, K, m) count. Each claim's upper tail is
   tested (Bonferroni over the file's claims), and the sum over queries of their deepest relevant claims' counts
   with a Chernoff bound (Hoeffding 1963; it holds for sampling without replacement and sums of independent
   queries), which sees a forgery spread thinly over many queries of a large corpus.
4. A ranking's length: at most `settings.top_k`; and one shorter than min(top_k, the documents there are) says
   the model scored no other document above the corpus's lowest score (irboard's sparse models rank only the
   documents a query matches; dense ones always fill top_k), so the sampled scores above the sample's lowest
   number at most a Hypergeometric(M, length - relevant above it, m) count (the test of 3).

Every p-value bound is valid whatever the score distributions: an honest file is refused with probability below
IMPLAUSIBLE. What the samples cannot see (the method page says how far it reaches): a forger who rewrites the
samples' relevant scores below the cut together with the ranks; and, on a large corpus, moves within the
sampling error (a uniform sample of m of M scores resolves ranks only to about M / m).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import hypergeom

from evaluator.metrics import Qrels
from evaluator.metrics.ranking import UNJUDGED
from evaluator.result import ResultFile
from evaluator.trust import deep_claims_checked, deep_metric_names, extends_below  # noqa: F401 (the rule's home)
from leaderboard.submissions.labels import entry_labels
from leaderboard.submissions.sample_checks import IMPLAUSIBLE, SCORE_TOLERANCE, chernoff_tail

DEEP_TESTS = 3  # the Bonferroni split of IMPLAUSIBLE: the claims' ranks, their sum over queries, the lengths
_FIX = "regenerate the result with `irboard evaluate`"


def deep_claim_problems(result: ResultFile, qrels: Qrels, labels: np.ndarray | None = None) -> list[str]:
    """What the score samples contradict in the claims below the stored depth (1 to 4 above): one problem, or
    nothing (`labels`: `entry_labels(result, qrels)`, when the caller has them). Queries without a sample of
    non-relevant scores are left to `deep_claims_checked`."""
    run, samples = result.run, result.score_samples
    if run is None or run.below is None or samples is None or not extends_below(result).any():
        return []
    if labels is None:
        labels = entry_labels(result, qrels)
    below, level, top_k = run.below, result.settings.relevance_level, result.settings.top_k
    spare = 1 if result.settings.ignore_identical_ids else 0
    if (below.totals > top_k + spare).any():
        row = int(np.flatnonzero(below.totals > top_k + spare)[0])
        return [f"run.below.totals: query {result.query_ids[row]!r} claims a ranking of {below.totals[row]} "
                f"documents, longer than settings.top_k {top_k}; {_FIX}"]
    judged = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
    reach = extends_below(result)
    tails: list[tuple[int, int, int, int, str]] = []  # each claim's rank test: (observed, M, K, m, its problem)
    deepest_observed, deepest_mean = 0.0, 0.0
    lengths: list[tuple[int, int, int, int, str]] = []  # each short ranking's test, the same way
    for row in np.flatnonzero(reach).tolist():
        query_id = result.query_ids[row]
        sample = samples.queries[query_id]
        values, population = sample.nonrelevant, sample.n_nonrelevant
        if not values.size or population <= 0:
            continue
        start, end = int(run.offsets[row]), int(run.offsets[row + 1])
        top_scores = run.scores[start:end]
        top_relevant = np.sort(top_scores[labels[start:end] >= level])
        first, last = int(below.offsets[row]), int(below.offsets[row + 1])
        ranks, scores = below.ranks[first:last], below.scores[first:last]
        query_labels = judged.get(query_id, {})
        is_relevant = np.array([query_labels.get(d, UNJUDGED) >= level for d in below.doc_ids[first:last]],
                               dtype=bool)
        where = f"run.below of query {query_id!r}"
        # 1. every claimed relevant score is one of the sample's, not taken by the stored ranking
        pool = _take(np.sort(sample.relevant), top_relevant)
        if pool is None:
            continue  # the stored ranking's own mismatch: score_sample_problems words it
        rest = _take(pool, np.sort(scores[is_relevant]))
        if rest is None:
            return [f"{where}: a judged relevant document is claimed below the stored depth with a score that is "
                    f"none of the relevant scores its score samples hold; {_FIX}"]
        # 2. the relevant documents ranked nowhere score at most the lowest score the ranking is known to have
        lowest = float(scores[-1]) if scores.size else float(top_scores[-1]) if top_scores.size else np.inf
        # (with ignore_identical_ids the query's own document, dropped from the ranking, may be one of them)
        if rest.size > spare and float(rest[-1 - spare]) > lowest + 2 * _tolerance(lowest):
            return [f"{where}: its score samples hold a relevant score ({float(rest[-1 - spare]):.6g}) above the lowest "
                    f"ranked score ({lowest:.6g}) for a document the ranking does not hold; a ranking holds every "
                    f"document that scores above its last one: {_FIX}"]
        quantum = float(values[-1] - values[0]) / samples.levels
        relevant = np.sort(sample.relevant)
        m = values.size
        # 3. at most rank - 1 documents score above each claimed score
        above_relevant = relevant.size - np.searchsorted(relevant, scores + _tolerance(scores), side="right")
        successes = ranks - 1 + spare - above_relevant
        if (successes < 0).any():
            i = int(np.flatnonzero(successes < 0)[0])
            return [f"{where}: rank {ranks[i]} is claimed for a score that {above_relevant[i]} relevant documents "
                    f"exceed (its score samples hold every relevant score); {_FIX}"]
        observed = m - np.searchsorted(values, scores + quantum + _tolerance(scores), side="right")
        successes = np.minimum(successes, population)
        for i in np.flatnonzero(observed > successes * m / population).tolist():
            tails.append((int(observed[i]), population, int(successes[i]), m,
                          f"{where}: {observed[i]} of its {m} sampled non-relevant scores lie above the score claimed "
                          f"at rank {ranks[i]}, where at most {successes[i]} documents may score more"))
        if is_relevant.any():
            i = int(np.flatnonzero(is_relevant)[-1])  # the deepest relevant claim: one a query, fixed in advance
            deepest_observed += float(observed[i])
            deepest_mean += float(successes[i]) * m / population
        # 4. a ranking shorter than it could be leaves only documents at the corpus's lowest score unranked
        total = int(below.totals[row])
        if total < min(top_k, samples.num_docs - spare):
            floor = float(values[0])
            above_floor = relevant.size - np.searchsorted(relevant, floor + _tolerance(floor), side="right")
            allowed = min(max(total + spare - int(above_floor), 0), population)
            seen = int(m - np.searchsorted(values, floor + quantum + _tolerance(floor), side="right"))
            if seen > allowed * m / population:
                lengths.append((seen, population, allowed, m, f"{where}: totals says the ranking holds {total} documents, fewer than "
                                f"settings.top_k {top_k}, but {seen} of its {m} sampled non-relevant scores lie above "
                                f"the lowest, where at most {allowed} documents may"))
    threshold = IMPLAUSIBLE / DEEP_TESTS
    if (found := _least_tail(tails, threshold / max(int(below.counts[reach].sum()), 1))) is not None:
        return [f"{found[1]} (p <= {found[0]:.1e}); the claimed ranks disagree with the score samples: {_FIX}"]
    if deepest_observed > deepest_mean and (p := chernoff_tail(deepest_observed, deepest_mean)) < threshold:
        return [f"run.below: {deepest_observed:.0f} sampled non-relevant scores lie above the scores of the deepest "
                f"relevant documents claimed below the stored depth, where their ranks allow {deepest_mean:.1f} "
                f"(p <= {p:.1e}); the claimed ranks disagree with the score samples: {_FIX}"]
    if (found := _least_tail(lengths, threshold / max(len(result.query_ids), 1))) is not None:
        return [f"{found[1]} (p <= {found[0]:.1e}); {_FIX}"]
    return []


def _least_tail(tests: list[tuple[int, int, int, int, str]], below: float) -> tuple[float, str] | None:
    """(p, problem) of the test with the least upper tail P[Hypergeometric(M, K, m) >= observed], when it is below
    `below`; None otherwise (one vectorised scipy call for all of them)."""
    if not tests:
        return None
    observed, population, successes, drawn = (np.array([t[i] for t in tests], dtype=np.int64) for i in range(4))
    p_values = hypergeom.sf(observed - 1, population, successes, drawn)
    i = int(np.argmin(p_values))
    return (float(p_values[i]), tests[i][4]) if p_values[i] < below else None


def _tolerance(score):
    return SCORE_TOLERANCE * np.maximum(1.0, np.abs(score))


def _take(pool: np.ndarray, wanted: np.ndarray) -> np.ndarray | None:
    """`pool` (ascending) less one value within tolerance of each of `wanted` (ascending), matched greedily from
    the lowest (optimal for intervals of one width); None when some wanted value has no match left."""
    if not wanted.size:
        return pool
    used = np.zeros(pool.size, dtype=bool)
    at = 0
    for value in wanted.tolist():
        tolerance = float(_tolerance(value))
        while at < pool.size and (used[at] or pool[at] < value - tolerance):
            at += 1
        if at == pool.size or pool[at] > value + tolerance:
            return None
        used[at] = True
        at += 1
    return pool[~used]
