"""Metrics that look below rank 100 (AP, RR, R@1000, nDCG@1000, Bpref, ...) at any size: the result keeps each
ranking to depth 100 and below it the judged documents' ranks and each ranking's length (`run.below`), and
`irboard validate` re-scores every metric from that, equal to pytrec_eval."""

import json

import numpy as np
import pytest
import pytrec_eval

from evaluator.cli import add_arguments
from evaluator.errors import ResultValidationError
from evaluator.result import (
    dump_result,
    expand_result,
    parse_result,
    parse_result_text,
    read_result,
    result_path,
    size_limit,
    write_result,
)
from evaluator.trec import read_qrels
from leaderboard.cli import main
from leaderboard.submissions.verify import verify_result
from tests.conftest import OFFICIAL, SCIFACT

DEEP = ("AP,RR,R@1000,nDCG@1000,Bpref,Rprec,P@1000,Judged@1000,nDCG(dcg='exp-log2')@1000,AP@500,RR@10,"
        "Success@1000,ARP,nDCG@10")
# irboard name -> pytrec_eval measure (ARP and Judged have none: written as formulas below)
PYTREC = {"AP": "map", "RR": "recip_rank", "R@1000": "recall_1000", "nDCG@1000": "ndcg_cut_1000", "Bpref": "bpref",
          "Rprec": "Rprec", "P@1000": "P_1000", "AP@500": "map_cut_500", "nDCG@10": "ndcg_cut_10",
          "Success@1000": "success_1000"}
PYTREC_REQUEST = {"map", "recip_rank", "recall.1000", "ndcg_cut.1000,10", "bpref", "Rprec", "P.1000",
                  "map_cut.500", "success.1000"}


def _synthetic(folder, queries: int = 200, depth: int = 1000, seed: int = 7):
    """A depth-1,000 run (two-decimal scores: many ties) and graded qrels (labels -1..3, judged documents at every
    depth and some never retrieved); a few rankings shorter than 100, one query absent from the run, and the
    query's own id ranked deep in some rankings (for --ignore-identical-ids)."""
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    lines, judgments = [], []
    for i in range(queries):
        query_id = f"q{i}"
        size = 60 if i % 25 == 3 else depth
        docs = [f"d{d}" for d in rng.choice(50_000, size=size, replace=False)]
        if i % 10 == 1 and size > 500:
            docs[int(rng.integers(150, 900))] = query_id
        scores = np.round(rng.normal(10, 3, size=size), 2)
        judged = {docs[j]: int(rng.integers(-1, 4)) for j in rng.choice(size, size=12, replace=False)}
        judged |= {f"x{i}-{k}": int(rng.integers(1, 4)) for k in range(2)}  # relevant, never retrieved
        judged.pop(query_id, None)
        qrels[query_id] = judged
        judgments += [f"{query_id} 0 {doc} {label}\n" for doc, label in judged.items()]
        if i == 5:
            continue  # judged, not in the run
        run[query_id] = dict(zip(docs, scores.tolist(), strict=True))
        order = np.argsort(-scores, kind="stable")
        lines += [f"{query_id} Q0 {docs[j]} {rank} {scores[j]:.2f} t\n" for rank, j in enumerate(order, 1)]
    (folder / "run.txt").write_text("".join(lines))
    (folder / "qrels.txt").write_text("".join(judgments))
    return run, qrels


@pytest.fixture(scope="module", params=[False, True], ids=["keep-identical", "ignore-identical"])
def deep_result(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("deep")
    run, qrels = _synthetic(folder)
    out = folder / "result.json"
    flag = "--ignore-identical-ids" if request.param else "--no-ignore-identical-ids"
    assert main(["evaluate", "--run", str(folder / "run.txt"), "--qrels", str(folder / "qrels.txt"), "--model-id",
                 "org/deep", "--dataset-id", "test/deep", "--metrics", DEEP, flag, "--out", str(out), "--quiet",
                 "--declare", "--stored-depth", "100"]) == 0
    if request.param:
        run = {q: {d: s for d, s in ranking.items() if d != q} for q, ranking in run.items()}
    return out, run, qrels, read_qrels(folder / "qrels.txt")


def _trec_order(ranking: dict) -> list:
    """[(doc_id, score), ...] in trec_eval order: score as float32 descending, ties by doc id descending (bytes)."""
    by_id = sorted(ranking.items(), key=lambda e: e[0].encode(), reverse=True)
    return sorted(by_id, key=lambda e: -np.float32(e[1]))  # stable: ties keep the doc id order


def _judged_at(run, qrels, k):
    """Judged@k as ir_measures defines it: judged documents in the top k / min(k, ranking length)."""
    values = {}
    for query_id, judged in qrels.items():
        top = _trec_order(run.get(query_id, {}))[:k]
        values[query_id] = sum(doc in judged for doc, _ in top) / len(top) if top else 0.0
    return values


def test_deep_metrics_equal_pytrec_eval_and_validate_re_scores_every_one(deep_result):
    path, run, qrels_dict, qrels = deep_result
    result = read_result(path)
    assert result.run.depth == 100 and result.run.below is not None
    oracle = pytrec_eval.RelevanceEvaluator(qrels_dict, PYTREC_REQUEST).evaluate(run)
    for name, measure in PYTREC.items():
        for query_id, value in result.values(name).items():
            assert value == pytest.approx(oracle.get(query_id, {}).get(measure, 0.0), abs=1e-9), (name, query_id)
    judged = _judged_at(run, qrels_dict, 1000)
    assert result.values("Judged@1000") == pytest.approx(judged, abs=1e-12)
    outcome = verify_result(result, qrels)
    # every metric re-scored and matching; those reading below rank 100 rest on the claimed ranks there, since a
    # result evaluated from a run file has no score samples to check them (tests/leaderboard/test_deep_claims.py)
    assert outcome.problems == () and outcome.unverified == ()
    assert outcome.verified | outcome.claimed == set(result.metrics) and outcome.verified == {"nDCG@10", "RR@10"}
    # what is stored below rank 100: exactly the judged documents ranked there, and every ranking's length
    assert int(result.run.below.counts.sum()) == sum(
        1 for query_id, ranking in run.items() for doc, _ in _trec_order(ranking)[100:]
        if doc in qrels_dict[query_id]) > 100
    assert result.run.below.totals.tolist() == [len(run.get(q, {})) for q in result.query_ids]


def test_below_costs_a_few_bytes_a_query_and_the_file_stays_under_its_cap(deep_result):
    path, run, _, _ = deep_result
    data = json.loads(path.read_text())
    below = sum(len(v) for v in data["run"]["below"].values())
    entries = int(read_result(path).run.below.counts.sum())  # ~11 judged documents a query below rank 100
    assert below < 20 * entries  # a rank, an id and a score each: far less than the 900 other documents
    assert path.stat().st_size < size_limit(len(run) + 1)


def test_round_trip_keeps_every_value(deep_result):
    path, *_ = deep_result
    text = path.read_text()
    result = read_result(path)
    assert dump_result(result) == text
    again = parse_result(json.loads(json.dumps(expand_result(result) | {"score_samples": None})), "x")
    assert dump_result(again) == text


def _tampered(path, edit):
    data = expand_result(read_result(path))
    data["score_samples"] = None
    edit(data)
    return parse_result(json.loads(json.dumps(data)), "tampered.json")


def _deep_relevant(data, qrels):
    """(query id, index in its below list) of a relevant entry below the depth with room to move one rank down."""
    for query_id, entries in data["run"]["below"]["judged"].items():
        ranks = [e[0] for e in entries]
        for k, (rank, doc, _) in enumerate(entries):
            room = ranks[k + 1] if k + 1 < len(ranks) else data["run"]["below"]["totals"][query_id] + 1
            if rank + 1 < room and qrels[query_id].get(doc, 0) >= 1:
                return query_id, k
    raise AssertionError("no movable entry")


def test_moving_a_judged_documents_rank_below_the_depth_is_caught(deep_result):
    path, _, qrels_dict, qrels = deep_result

    def move(data):
        query_id, k = _deep_relevant(data, qrels_dict)
        data["run"]["below"]["judged"][query_id][k][0] += 1

    outcome = verify_result(_tampered(path, move), qrels)
    assert outcome.problems and "re-scoring the stored ranking" in outcome.problems[0]


def test_dropping_a_judged_entry_or_changing_a_length_is_caught(deep_result):
    path, _, qrels_dict, qrels = deep_result

    def drop(data):
        query_id, k = _deep_relevant(data, qrels_dict)
        del data["run"]["below"]["judged"][query_id][k]

    def shorten(data):  # Judged@1000 divides by the ranking's length
        query_id = next(q for q, total in data["run"]["below"]["totals"].items() if total == 1000
                        and all(e[0] < 1000 for e in data["run"]["below"]["judged"].get(q, [])))
        data["run"]["below"]["totals"][query_id] = 999

    for edit in (drop, shorten):
        assert verify_result(_tampered(path, edit), qrels).problems, edit.__name__


@pytest.mark.parametrize("edit, message", [
    (lambda below, top: below["judged"][next(iter(below["judged"]))][0].__setitem__(0, 100), "rank outside"),
    (lambda below, top: below["judged"][next(iter(below["judged"]))][0].__setitem__(0, 5000), "rank outside"),
    (lambda below, top: below["judged"][next(iter(below["judged"]))][0].__setitem__(2, 1e6), "trec_eval order"),
    (lambda below, top: below["judged"][next(iter(below["judged"]))][0].__setitem__(
        1, top[next(iter(below["judged"]))][0][0]), "appears twice"),
    (lambda below, top: below["totals"].__setitem__(next(iter(below["totals"])), 50), "totals"),
    (lambda below, top: below["totals"].__setitem__(next(iter(below["totals"])), 20_000), "expected"),
])
def test_an_inconsistent_below_part_is_one_error_naming_it(deep_result, edit, message):
    path, *_ = deep_result

    def apply(data):
        edit(data["run"]["below"], data["run"]["rankings"])

    with pytest.raises(ResultValidationError, match=message):
        _tampered(path, apply)


def test_the_stored_columns_are_checked_too(deep_result):
    path, *_ = deep_result
    data = json.loads(path.read_text())
    data["run"]["below"]["extra"] = "x"  # a reader that does not know a field refuses the file
    with pytest.raises(ResultValidationError, match=r"run\.below\.extra"):
        parse_result_text(json.dumps(data), "x.json")
    data = json.loads(path.read_text())
    data["run"]["below"]["ranks"] = json.loads(path.read_text())["run"]["below"]["counts"]  # fewer values
    with pytest.raises(ResultValidationError, match=r"run\.below\.ranks"):
        parse_result_text(json.dumps(data), "x.json")


def test_a_whole_ranking_without_below_still_verifies(deep_result):
    """Results written before `run.below` stored the whole ranking for uncut metrics; they still verify."""
    path, run, _, qrels = deep_result

    def whole(data):
        data["run"] = {"depth": data["settings"]["top_k"],
                       "rankings": {q: [list(e) for e in _trec_order(run[q])] for q in run}}

    result = _tampered(path, whole)
    assert result.run.below is None and verify_result(result, qrels).complete


def test_over_the_cap_the_error_names_options_that_exist(deep_result, monkeypatch, tmp_path):
    import argparse

    import evaluator.result as module

    path, *_ = deep_result
    monkeypatch.setattr(module, "BASE_BYTES", 0)
    monkeypatch.setattr(module, "BYTES_PER_QUERY", 1)
    with pytest.raises(ResultValidationError) as error:
        write_result(read_result(path), tmp_path / "out.json")
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    named = [word.strip("(),;") for word in str(error.value).split() if word.startswith("--")]
    assert named and all(option in parser._option_string_actions for option in named)


# ---------------------------------------------------------------------------------------------- real judgments


def _official_run(folder, qrels, queries, seed=11):
    """Depth 1,000 over the first `queries` qrels queries: a relevant document at a random rank (often below 100),
    the rest made-up ids; the other judged queries are absent."""
    rng = np.random.default_rng(seed)
    lines = []
    for query_id, judged in list(zip(qrels.query_ids, qrels.judgments, strict=True))[:queries]:
        docs = [f"none{query_id}-{k}" for k in range(1000)]
        for doc in sorted(judged):
            docs[int(rng.integers(0, 1000))] = doc
        lines += [f"{query_id} Q0 {doc} {rank} {1000 - rank} t\n" for rank, doc in enumerate(docs, 1)]
    (folder / "run.txt").write_text("".join(lines))


@pytest.mark.parametrize("dataset, qrels_path, metrics", [
    ("mmarco/en", OFFICIAL / "qrels" / "qrels.msmarco-passage.dev-subset.txt", "RR@10,R@1000,AP"),
    ("beir/scifact", SCIFACT / "qrels" / "test.tsv", "AP,RR,R@1000,nDCG@1000"),
])
def test_official_metrics_at_depth_1000_verify_with_validate(tmp_path, capsys, dataset, qrels_path, metrics):
    qrels = read_qrels(qrels_path)
    _official_run(tmp_path, qrels, 300)
    results = tmp_path / "results"
    assert main(["evaluate", "--run", str(tmp_path / "run.txt"), "--model-id", "org/deep", "--dataset-id", dataset,
                 "--metrics", metrics, "--results-dir", str(results), "--quiet", "--stored-depth", "100"]) == 0
    path = result_path("org/deep", dataset, results)
    result = read_result(path)
    assert result.run.depth == 100 and path.stat().st_size < size_limit(len(qrels.query_ids))
    oracle = pytrec_eval.RelevanceEvaluator(qrels.to_dict(), {"recip_rank", "recall.1000", "map"}).evaluate(
        {q: {d: float(s) for d, s in ranking} for q, ranking in _read_ranking(tmp_path / "run.txt").items()})
    for name, measure in (("AP", "map"), ("R@1000", "recall_1000")):
        assert result.values(name) == pytest.approx(
            {q: oracle.get(q, {}).get(measure, 0.0) for q in result.query_ids}, abs=1e-9)
    assert main(["validate", "--results", str(results)]) == 0
    out = capsys.readouterr().out  # re-scored, but from ranks below the depth that no score samples check
    assert "1 result file(s) valid, 0 verified" in out and "rest on claimed ranks" in out


def _read_ranking(path):
    rankings = {}
    for line in path.read_text().splitlines():
        query_id, _, doc, _, score, _ = line.split()
        rankings.setdefault(query_id, []).append((doc, score))
    return rankings


def test_a_model_evaluated_with_deep_metrics_keeps_its_judged_documents_below_100(tmp_path):
    """`evaluate --model` (BM25 on SciFact, top 1,000 of 5,183 documents): the same storage, and every metric
    re-scores from it."""
    out = tmp_path / "bm25.json"
    assert main(["evaluate", "--model", "bm25", "--dataset", "beir/scifact", "--data-dir", str(SCIFACT), "--metrics",
                 "AP,R@1000,nDCG@1000,Bpref,RR@10", "--out", str(out), "--quiet", "--stored-depth", "100"]) == 0
    result = read_result(out)
    below = result.run.below
    # at most top_k (1,000) a ranking, although one more is searched in case the query's own document comes back
    assert result.run.depth == 100 and below is not None and below.totals.max() == 1000
    assert int(below.counts.sum()) > 0 and below.ranks.min() > 100
    assert verify_result(result, read_qrels(SCIFACT / "qrels" / "test.tsv")).complete


def test_the_ranker_finds_the_same_judged_documents_below_the_top_in_an_interleaved_file(tmp_path):
    """Lines of different queries mixed (the C ranker then groups them at the end): the same `run.below`."""
    from evaluator.trec import rank_trec_run

    run, qrels = _synthetic(tmp_path, queries=30, depth=300)
    lines = (tmp_path / "run.txt").read_text().splitlines(keepends=True)
    (tmp_path / "mixed.txt").write_text("".join(lines[i] for i in np.random.default_rng(3).permutation(len(lines))))
    judged = read_qrels(tmp_path / "qrels.txt")
    belows = [rank_trec_run(tmp_path / name, judged, keep_top=100, judged_below=True)[1].below
              for name in ("run.txt", "mixed.txt")]
    for below in belows:
        expected = [[(rank, doc) for rank, (doc, _) in enumerate(_trec_order(run.get(q, {})), 1)
                     if rank > 100 and doc in qrels[q]] for q in judged.query_ids]
        assert [[(rank, doc) for rank, doc, _ in below.entries(i)] for i in range(len(expected))] == expected
        assert below.totals.tolist() == [len(run.get(q, {})) for q in judged.query_ids]
