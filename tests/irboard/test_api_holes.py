"""`irboard.evaluate(..., judged=True, bounds=True)`: Judged@k as ir_measures defines it, written out here from the
run and qrels dicts, and the hole bounds, on small cases and on published runs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

import irboard
from evaluator.trec import read_qrels, read_run
from tests.conftest import OFFICIAL

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"
TOUCHE = OFFICIAL / "qrels" / "qrels.beir-v1.0.0-webis-touche2020.test.txt"
DL20 = OFFICIAL / "qrels" / "qrels.dl20-passage.txt"


def judged_formula(run: dict, qrels: dict, k: int) -> dict[str, float]:
    """ir_measures' Judged@k: of the top min(k, ranking length), the fraction in the qrels; 0 for a query the run
    lacks. trec_eval's order: score descending (float32), doc id descending."""
    values = {}
    for query_id, judged in qrels.items():
        ranking = sorted(run.get(query_id, {}).items(), key=lambda item: (np.float32(item[1]), item[0]),
                         reverse=True)[:k]
        values[query_id] = sum(doc in judged for doc, _ in ranking) / len(ranking) if ranking else 0.0
    return values


def test_columns_on_a_small_case():
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}, "q3": {"d5": 1}}
    run = {"q1": {"d1": 3.0, "u1": 2.0, "d2": 1.0}, "q2": {"u2": 3.0, "d3": 1.5}}
    table = irboard.evaluate(run, qrels, "P@2,AP", per_query=True, judged=True, bounds=True)
    assert list(table.columns) == ["P@2", "P@2 judged", "P@2 hole_low", "P@2 hole_high",
                                   "AP", "AP judged", "AP hole_low", "AP hole_high"]
    assert table["P@2 judged"].tolist() == [1 / 2, 1 / 2, 0.0]
    assert table["AP judged"].tolist() == [2 / 3, 1 / 2, 0.0]
    assert table["P@2 hole_high"].tolist() == [1.0, 1.0, 0.0]  # each unjudged document of the top 2 relevant
    # q2: u2 at rank 1 relevant makes R = 2 and AP = (1/1 + 2/2) / 2; q1: u1 relevant, AP = (1 + 2/2) / 2
    assert table["AP hole_high"].tolist() == pytest.approx([1.0, 1.0, 0.0], abs=1e-12)
    assert table["AP hole_low"].tolist() == pytest.approx([1.0, 1 / 2, 0.0], abs=1e-12)
    means = irboard.evaluate(run, qrels, "P@2,AP", judged=True, bounds=True)
    assert means["P@2 hole_high"] == pytest.approx((1 + 1 + 0) / 3) and means["AP judged"] == (2 / 3 + 1 / 2) / 3
    assert irboard.evaluate(run, qrels, "P@2") == {"P@2": (1 / 2 + 1 / 2) / 3}  # nothing added unless asked


def test_a_metric_without_bounds_is_named():
    with pytest.raises(irboard.errors.UnknownNameError, match="ARP"):
        irboard.evaluate({"q": {"d": 1.0}}, {"q": {"d": 1}}, "nDCG@10,ARP", bounds=True)
    with pytest.raises(irboard.errors.InputFormatError, match="bounds"):
        irboard.evaluate({"q": {"d": 1.0}}, {"q": {"d": 1}}, "nDCG@10", bounds="yes")


@pytest.mark.parametrize(("run_name", "qrels_path", "level", "judged_range"), [
    ("touche2020-bm25-multifield.trec.xz", TOUCHE, 1, (0.32, 0.34)),
    ("dl20-bm25.trec.xz", DL20, 2, (0.93, 0.995)),
    ("dl20-tas-b.trec.xz", DL20, 2, (0.93, 0.995)),
])
def test_published_runs(run_name, qrels_path, level, judged_range):
    run, qrels = read_run(RUNS / run_name), read_qrels(qrels_path).to_dict()
    table = irboard.evaluate(RUNS / run_name, qrels_path, "nDCG@10,AP@100", per_query=True, judged=True,
                             bounds=True, relevance_level=level)
    expected = judged_formula(run, qrels, 10)
    assert table["nDCG@10 judged"].to_dict() == pytest.approx(expected, abs=1e-15)
    assert judged_range[0] <= table["nDCG@10 judged"].mean() <= judged_range[1]
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10"}, relevance_level=level).evaluate(run)
    assert table["nDCG@10"].to_dict() == pytest.approx({q: v["ndcg_cut_10"] for q, v in oracle.items()}, abs=1e-12)
    assert (table["nDCG@10 hole_low"] <= table["nDCG@10"]).all()
    assert (table["nDCG@10"] <= table["nDCG@10 hole_high"]).all()
    width = table["nDCG@10 hole_high"].mean() - table["nDCG@10 hole_low"].mean()
    if run_name.startswith("touche"):
        assert width > 0.5  # two thirds of the top 10 unjudged: the holes could move nDCG@10 anywhere
    else:
        assert 0 < width < 0.1
    assert math.isclose(table["nDCG@10 judged"].mean(), np.mean(list(expected.values())), abs_tol=1e-15)
