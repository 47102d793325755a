"""Forged claims below the stored depth (`run.below`) against the deep checks: which are refused, which pass as
verified, and how far each moves the deep metrics.

    python benchmarks/deep_attacks.py /tmp/deep/*.json

Each file given is a result evaluated to depth 1,000 with its score samples (`irboard evaluate --model ...
--metrics R@1000,AP,nDCG@1000,Judged@1000,...`), its qrels under ../shared/data/<dataset id>/qrels/. Every forgery
is re-scored as a forger would (its per-query values recomputed from the forged ranks, so re-scoring matches), then
verified; the line gives the verdict and the metrics before and after. The method page quotes these figures
(leaderboard/web/views/method.py), benchmarks/README.md has the table.
"""
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from evaluator.below import Below
from evaluator.metrics import evaluate, parse_measure
from evaluator.result import expand_result, parse_result, read_result
from evaluator.trec import read_qrels
from leaderboard.submissions.labels import ranked_from_result
from leaderboard.submissions.verify import verify_result

SHOWN = ("R@1000", "AP", "nDCG@1000", "Judged@1000")
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def qrels_of(result):
    family, name = result.dataset.id.split("/", 1)
    return read_qrels(SHARED / "data" / family / name / "qrels" / f"{result.dataset.split}.tsv")


def rescored(result, qrels):
    """`result` with every metric's per-query values and means recomputed from its (forged) ranking and claims."""
    level = result.settings.relevance_level
    measures = [parse_measure(name) for name in result.metrics]
    values = evaluate(ranked_from_result(result, qrels), qrels.label_stats(level), measures, level)
    per_query = {str(m): np.asarray(values[str(m)], dtype=np.float64) for m in measures}
    header = result.header.model_copy(update={"metrics": {k: float(v.mean()) for k, v in per_query.items()}})
    forged = replace(result, header=header, per_query=per_query)
    return parse_result(expand_result(forged))  # written and read back: the stored form checks it as a file's


def _query_parts(result, qrels, row):
    """(ranked ids, last stored score, below entries, judged relevant ids) of one query."""
    run, level = result.run, result.settings.relevance_level
    start, end = int(run.offsets[row]), int(run.offsets[row + 1])
    ranked = [run.doc_ids[d] for d in run.docs[start:end]]
    judged = dict(zip(qrels.query_ids, qrels.judgments, strict=True)).get(result.query_ids[row], {})
    relevant = [d for d, label in judged.items() if label >= level]
    return ranked, float(run.scores[end - 1]) if end > start else np.inf, result.run.below.entries(row), relevant


def claim_missed(result, qrels, scores: str = "naive", rewrite_samples: bool = False):
    """Every judged relevant document the ranking lacks, claimed ranked just after its query's last judged entry.

    scores: "naive" (just below the last claimed score), "sample" (the relevant scores the sample holds but no
    ranked document takes, highest first: the documents' own), or "consistent" (scores placed among the sampled
    non-relevant scores where the claimed ranks put them, with `rewrite_samples` the sample's relevant scores
    rewritten to match: a forgery of the samples too)."""
    run, samples = result.run, result.score_samples
    below = run.below
    totals, entries, queries = below.totals.copy(), [], dict(samples.queries)
    absent_ids = {q: set(samples.queries[q].absent_ids) for q in result.query_ids}
    for row, query_id in enumerate(result.query_ids):
        ranked, last, claims, relevant = _query_parts(result, qrels, row)
        claims = list(claims)
        held = set(ranked) | {d for _, d, _ in claims} | absent_ids[query_id]
        missed = sorted(d for d in relevant if d not in held)
        if not missed or totals[row] <= run.lengths[row]:
            entries.append(claims)
            continue
        sample = samples.queries[query_id]
        rank = claims[-1][0] if claims else int(run.depth)
        score = claims[-1][2] if claims else last
        taken = [s for d, s in zip(ranked, run.scores[run.offsets[row]:run.offsets[row + 1]].tolist(),
                                   strict=True) if d in set(relevant)] + \
                [s for _, d, s in claims if d in set(relevant)]
        leftover = sorted(_less(sample.relevant, taken), reverse=True)
        values, m, population = sample.nonrelevant, sample.nonrelevant.size, sample.n_nonrelevant
        new_scores = []
        for i, doc in enumerate(missed):
            if rank + 1 > totals[row]:
                break
            rank += 1
            lower = _lower32(score)  # trec_eval orders by float32 scores: each claim strictly below the last
            if scores == "naive":
                score = score - 1e-3 * max(abs(score), 1.0)
            elif scores == "sample":
                score = min(leftover[i], lower) if i < len(leftover) else score - 1e-3
            else:  # consistent: about (rank - 1) * m / M sampled scores above it
                above = min(int((rank - 1) * m / population), m - 1)
                score = min(float(values[m - 1 - above]) + 1e-9, lower)
            claims.append((rank, doc, score))
            new_scores.append(score)
        entries.append(claims)
        if rewrite_samples and new_scores:
            kept = _less(sample.relevant, leftover[:len(new_scores)])
            queries[query_id] = replace(sample, relevant=np.sort(np.concatenate((kept, new_scores))))
    forged = replace(run, below=Below.from_entries(totals.tolist(), entries))
    return replace(result, run=forged, score_samples=replace(samples, queries=queries))


def _lower32(score: float) -> float:
    return float(np.nextafter(np.float32(score), np.float32(-np.inf)))


def _less(values, removed):
    """`values` (any order) less, for each of `removed`, the nearest one left (the run's and the sample's copies of
    a score may differ in the last bits)."""
    out = list(np.sort(values).tolist())
    for value in removed:
        out.pop(int(np.argmin(np.abs(np.array(out) - value))))
    return np.array(out, dtype=np.float64)


def shorten(result, qrels, fraction: float | None = None):
    """Each ranking that reaches below the depth claimed shorter: cut to its deepest judged entry (fraction None)
    or to `fraction` of its length (judged entries beyond dropped), raising Judged@k's share."""
    run = result.run
    below = run.below
    totals, entries = below.totals.copy(), []
    for row in range(len(result.query_ids)):
        claims = below.entries(row)
        if totals[row] > run.lengths[row]:
            if fraction is None:
                totals[row] = max(claims[-1][0] if claims else 0, int(run.lengths[row]))
            else:
                totals[row] = max(int(totals[row] * fraction), int(run.lengths[row]))
            claims = [c for c in claims if c[0] <= totals[row]]
        entries.append(claims)
    return replace(result, run=replace(run, below=Below.from_entries(totals.tolist(), entries)))


def claim_near(result, qrels, reach: int):
    """The subtler forgery: missed relevant documents whose own scores (the sample's leftover relevant scores) put
    them at most `reach` ranks below the ranking's end (estimated from the sample: 1 + relevant scores above +
    sampled non-relevant scores above x M / m), claimed at the last ranks of the ranking with those scores."""
    run, samples = result.run, result.score_samples
    below = run.below
    entries = []
    for row, query_id in enumerate(result.query_ids):
        ranked, _, claims, relevant = _query_parts(result, qrels, row)
        claims = list(claims)
        total = int(below.totals[row])
        held = set(ranked) | {d for _, d, _ in claims} | set(samples.queries[query_id].absent_ids)
        missed = sorted(d for d in relevant if d not in held)
        sample = samples.queries[query_id]
        if not missed or total <= run.lengths[row] or not sample.nonrelevant.size:
            entries.append(claims)
            continue
        taken = [s for d, s in zip(ranked, run.scores[run.offsets[row]:run.offsets[row + 1]].tolist(), strict=True)
                 if d in set(relevant)] + [s for _, d, s in claims if d in set(relevant)]
        leftover = sorted(_less(sample.relevant, taken), reverse=True)
        values, rate = sample.nonrelevant, sample.nonrelevant.size / sample.n_nonrelevant
        near = [s for s in leftover if 1 + np.count_nonzero(sample.relevant > s)
                + np.count_nonzero(values > s) / rate <= total + reach][:len(missed)]
        last = claims[-1][0] if claims else int(run.depth)
        first = max(total - len(near) + 1, last + 1)
        previous = claims[-1][2] if claims else float(run.scores[run.offsets[row + 1] - 1])
        added = []
        for i, (doc, score) in enumerate(zip(missed, near, strict=False)):
            if first + i <= total:  # strictly below the entry before it in float32 (trec_eval's order)
                previous = min(score, _lower32(previous))
                added.append((first + i, doc, previous))
        entries.append(claims + added)
    return replace(result, run=replace(run, below=Below.from_entries(below.totals.tolist(), entries)))


def without_samples(result, qrels):
    return replace(result, score_samples=None)


ATTACKS = {
    "honest": lambda r, q: r,
    "claim missed relevant, naive scores": lambda r, q: claim_missed(r, q, "naive"),
    "claim missed relevant at their own scores": lambda r, q: claim_missed(r, q, "sample"),
    "claim missed relevant, scores placed by rank": lambda r, q: claim_missed(r, q, "consistent"),
    "... and the samples' relevant scores rewritten": lambda r, q: claim_missed(r, q, "consistent", True),
    "claim missed relevant within 100 ranks of the end": lambda r, q: claim_near(r, q, 100),
    "... within 250 ranks": lambda r, q: claim_near(r, q, 250),
    "... within 500 ranks": lambda r, q: claim_near(r, q, 500),
    "... within 1,000 ranks": lambda r, q: claim_near(r, q, 1000),
    "lengths cut to the deepest judged rank": lambda r, q: shorten(r, q),
    "lengths halved": lambda r, q: shorten(r, q, 0.5),
    "lengths cut, no samples": lambda r, q: without_samples(shorten(r, q), q),
    "claim missed relevant, no samples": lambda r, q: without_samples(claim_missed(r, q, "naive"), q),
}


def verdict(result, qrels) -> str:
    outcome = verify_result(result, qrels)
    if outcome.problems:
        return "refused: " + outcome.problems[0][:110]
    if outcome.claimed:
        return "rests on claimed ranks"
    return "verified"


def main(paths):
    for path in paths:
        result = read_result(path)
        qrels = qrels_of(result)
        print(f"\n{path} ({result.model.id} on {result.dataset.id}):")
        print("| forgery | verdict | " + " | ".join(SHOWN) + " |")
        print("|---|---|" + "---|" * len(SHOWN))
        for name, attack in ATTACKS.items():
            forged = rescored(attack(result, qrels), qrels)
            moved = " | ".join(f"{result.metrics[m]:.3f} → {forged.metrics[m]:.3f}" for m in SHOWN
                               if m in result.metrics)
            print(f"| {name} | {verdict(forged, qrels)} | {moved} |")


if __name__ == "__main__":
    main(sys.argv[1:])
