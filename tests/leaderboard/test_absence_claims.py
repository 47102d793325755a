"""Absence claims (`score_samples.absent_ids`, issue 33 item 3): a relevant document a file says the corpus lacks is
a miss in the recall-at-scale prediction, whether or not a corpus checked the claim, so that claiming every missed
relevant document absent (the ArguAna-style attack) no longer buys recall; and `irboard validate` checks the claims
against the corpus wherever one is at hand, saying when none was. Results are the repository's own (real BM25 on
SciFact), judgments the official ones."""

from dataclasses import replace

import numpy as np
import pytest

from evaluator.result import expand_result, parse_result, read_result
from evaluator.trec import read_qrels
from leaderboard.analysis.predictions import predict_result
from leaderboard.submissions.loaded import to_loaded
from leaderboard.submissions.verify import verify_result
from tests.conftest import ROOT, SHARED
from tests.leaderboard.test_hostile_samples import to_stored_depth

BM25 = ROOT / "results" / "bm25" / "beir__scifact.json"
QRELS = SHARED / "data" / "beir" / "scifact" / "qrels" / "test.tsv"


def _every_miss_claimed_absent(result, qrels):
    """`result` whose samples say, for every query, that each judged relevant document its stored ranking leaves
    out is missing from the corpus (its score dropped from the sample, its id named): what an ArguAna result could
    claim, since that dataset's judgments do name missing documents."""
    run, samples = result.run, result.score_samples
    judgments = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
    queries, claimed = {}, 0
    for row, query_id in enumerate(result.query_ids):
        sample = samples.queries[query_id]
        start, end = run.offsets[row], run.offsets[row + 1]
        ranked = {run.doc_ids[d] for d in run.docs[start:end]}
        missed = sorted(d for d, label in judgments[query_id].items() if label >= 1 and d not in ranked)
        t = float(run.scores[end - 1]) if end > start else np.inf
        kept = sample.relevant[sample.relevant > t]
        if not missed or kept.size + len(missed) != sample.n_relevant:  # a tie at the cut: leave the query be
            queries[query_id] = sample
            continue
        claimed += len(missed)
        queries[query_id] = replace(sample, relevant=kept, n_relevant=kept.size, absent=len(missed),
                                    absent_ids=tuple(missed))
    assert claimed > 20  # 25 of the 339 relevant documents of the 300 queries
    return parse_result(expand_result(replace(result, score_samples=replace(samples, queries=queries))))


@pytest.fixture(scope="module")
def honest_and_forged():
    result = to_stored_depth(read_result(BM25))
    return result, _every_miss_claimed_absent(result, read_qrels(QRELS))


def _prediction(result):
    return predict_result(to_loaded("x", result, result.query_ids, {}, False))


def test_claiming_every_missed_relevant_document_absent_raises_no_predicted_recall(honest_and_forged, monkeypatch):
    """The forged file passes the checks that need no corpus (on a dataset allowed absences), and its predicted
    recall stays at or below the honest file's at every size and cut-off, over the same queries (none dropped)."""
    import leaderboard.submissions.sample_checks as checks

    honest, forged = honest_and_forged
    monkeypatch.setattr(checks, "absences_allowed", lambda result: True)  # as for beir/arguana
    assert verify_result(forged, read_qrels(QRELS)).problems == ()
    before, after = _prediction(honest), _prediction(forged)
    assert after.queries == before.queries
    for growth, values in before.recall.items():  # the fit of the rest moves by < 1e-3 (measured 1.1e-4)
        assert (after.recall[growth] <= values + 1e-3).all(), growth
    # at the corpus's own size the claimed documents count as misses, as in the measured R@100 (before, the
    # prediction there was that of the ranked relevant documents alone: near 1)
    assert abs(after.value(after.num_docs, 100) - honest.metrics["R@100"]) < 0.02


def test_a_query_whose_every_relevant_document_is_claimed_absent_counts_as_zero(honest_and_forged):
    """Recall is averaged over every query with judged relevant documents: one whose relevant documents are all said
    absent adds a 0, as trec_eval's recall of that query is 0."""
    from leaderboard.analysis.scale import forecast

    honest = honest_and_forged[0]
    samples = honest.score_samples
    query_id = next(q for q in honest.query_ids if samples.queries[q].n_relevant == 1)
    sample = samples.queries[query_id]
    gone = replace(samples, queries={**samples.queries, query_id: replace(
        sample, relevant=sample.relevant[:0], n_relevant=0, absent=1, absent_ids=("x",))})
    sizes, ks = (1e5, 1e7), (10, 100)
    base, dropped = forecast(samples, sizes, ks), forecast(gone, sizes, ks)
    assert dropped.queries == base.queries == dropped.per_query.shape[0]
    assert (dropped.per_query[-1] == 0).all() and (dropped.per_query[:-1] > 0).any()
    np.testing.assert_allclose(dropped.recall, dropped.per_query[:-1].sum(axis=0) / base.queries, rtol=1e-12)


def test_validate_checks_absences_against_the_cached_corpus_and_says_when_it_could_not(monkeypatch, tmp_path,
                                                                                        capsys):
    """Without --data-dir, `irboard validate` looks the claimed ids up in the corpus the download cache holds (where
    a BEIR dataset whose judgments name missing documents, ArguAna, is fetched as judgments are): a claim the corpus
    contradicts is one line and exit 1; with no corpus at hand the file passes with a line saying the claims were
    not checked and count as misses."""
    from pathlib import Path
    from urllib.parse import urlparse

    import leaderboard.submissions.sample_checks as checks
    from evaluator.datasets import get_spec
    from leaderboard.cli import main
    from tests.leaderboard.test_hostile_samples import _claiming_absence, _said, _write

    monkeypatch.setattr(checks, "absences_allowed", lambda result: True)  # as for beir/arguana
    monkeypatch.setenv("IRBOARD_CACHE", str(tmp_path / "cache"))
    result = read_result(BM25)
    dropped, query_id, unranked, _ = _claiming_absence(result, read_qrels(QRELS))
    path = _write(tmp_path / "results", _said(dropped, query_id, [unranked]))
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: absent_ids not checked against the corpus (no corpus of beir/scifact at hand" in out
    assert "predictions count those documents as misses" in out
    archive = Path(urlparse(get_spec("beir/scifact").source).path).name.removesuffix(".zip")
    folder = tmp_path / "cache" / "beir" / archive
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(f'{{"_id": "{d}", "title": "", "text": "x"}}\n'
                                                 for d in (unranked, "d1")))
    assert main(["validate", str(path)]) == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if str(path) in line]
    assert len(lines) == 1 and f"absent_ids names {unranked!r} as missing from the corpus, but the corpus in the " \
        "download cache holds it" in lines[0]
