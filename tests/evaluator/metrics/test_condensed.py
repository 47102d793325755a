"""Condensed-list metrics (`judged_only=True`, trec_eval -J) against pytrec_eval's judged_docs_only_flag, on every
conformance case and on published runs."""

import json
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from evaluator.metrics import Qrels, evaluate, parse_measure, parse_measures, rank_run
from evaluator.metrics.depth import depth_needed
from evaluator.metrics.ranking import PAD, UNJUDGED, RankedRun
from evaluator.trec import rank_trec_run, read_qrels, read_run
from tests.conftest import SHARED
from tests.evaluator.metrics.conftest import CASES, read_qrels_text

RUNS = Path(__file__).resolve().parents[2] / "data" / "runs"
OFFICIAL = SHARED / "data" / "official" / "qrels"
CONDENSED = {"nDCG(judged_only=True)@5": "ndcg_cut_5", "nDCG(judged_only=True)@10": "ndcg_cut_10",
             "nDCG(judged_only=True)": "ndcg", "P(judged_only=True)@5": "P_5", "P(judged_only=True)@10": "P_10",
             "AP(judged_only=True)": "map", "AP(judged_only=True)@10": "map_cut_10"}


def _check(run: dict, qrels: dict, ranked_values: dict, query_ids: list[str], relevance_level: int = 1) -> int:
    oracle = pytrec_eval.RelevanceEvaluator(qrels, set(CONDENSED.values()), relevance_level=relevance_level,
                                            judged_docs_only_flag=True).evaluate(run)
    checked = 0
    for query_id, expected in oracle.items():
        row = query_ids.index(query_id)
        for name, trec_name in CONDENSED.items():
            assert ranked_values[name][row] == pytest.approx(expected[trec_name], abs=1e-12), (query_id, name)
            checked += 1
    return checked


@pytest.mark.parametrize("case_name", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_conformance_cases_equal_pytrec_eval(case_name):
    case = CASES / case_name
    run = json.loads((case / "run.json").read_text())
    qrels_dict = read_qrels_text(case / "qrels.txt")
    qrels = Qrels.from_dict(qrels_dict)
    ranked = rank_run(run, qrels)
    values = evaluate(ranked, qrels, parse_measures(list(CONDENSED)))
    assert _check(run, qrels_dict, values, ranked.query_ids) > 0


@pytest.mark.parametrize(("run_name", "qrels_name", "level"), [
    ("touche2020-bm25-multifield.trec.xz", "qrels.beir-v1.0.0-webis-touche2020.test.txt", 1),
    ("dl20-tas-b.trec.xz", "qrels.dl20-passage.txt", 2),
])
def test_published_runs_equal_pytrec_eval(run_name, qrels_name, level):
    qrels = read_qrels(OFFICIAL / qrels_name)
    ranked, _ = rank_trec_run(RUNS / run_name, qrels)
    values = evaluate(ranked, qrels, parse_measures(list(CONDENSED)), level)
    plain = evaluate(ranked, qrels, [parse_measure("nDCG@10")], level)["nDCG@10"]
    assert not np.allclose(values["nDCG(judged_only=True)@10"], plain)  # the holes matter on these runs
    assert _check(read_run(RUNS / run_name), qrels.to_dict(), values, ranked.query_ids, level) > 40


def test_condensed_lists_keep_the_judged_order():
    labels = np.array([[UNJUDGED, 2, -1, 0, 1, PAD], [UNJUDGED, UNJUDGED, PAD, PAD, PAD, PAD]], dtype=np.int32)
    condensed = RankedRun(["a", "b"], labels, np.array([5, 2])).condensed()
    assert condensed.labels.tolist() == [[2, 0, 1, PAD, PAD, PAD], [PAD] * 6]
    assert condensed.lengths.tolist() == [3, 0]


def test_names_parse_back_and_need_the_whole_ranking():
    for name in [*CONDENSED, "nDCG(dcg='exp-log2',judged_only=True)@10"]:
        assert str(parse_measure(name)) == name
        assert depth_needed(name) == 1000  # a condensed top k may reach any depth
    for wrong in ("R(judged_only=True)@10", "nDCG(judged_only=False)@10", "P(dcg='exp-log2')@10"):
        with pytest.raises(Exception, match="parameters supported"):
            parse_measure(wrong)
    with pytest.raises(Exception, match="canonically"):
        parse_measure("nDCG(judged_only=True,dcg='exp-log2')@10")
