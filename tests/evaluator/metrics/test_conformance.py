"""Every conformance case: per-query values and means over all qrels queries equal the pytrec_eval oracle."""

import json

import numpy as np
import pytest

from evaluator.metrics import Qrels, evaluate, parse_measure, rank_run
from tests.evaluator.metrics.conftest import CASES, irboard_name, read_qrels_text

CASE_NAMES = sorted(p.name for p in CASES.iterdir() if p.is_dir())


def _check_view(case, view: str, ignore_identical_ids: bool) -> None:
    expected = json.loads((case / "expected.json").read_text())[view]
    run = json.loads((case / "run.json").read_text())
    qrels = Qrels.from_dict(read_qrels_text(case / "qrels.txt"))
    ranked = rank_run(run, qrels, ignore_identical_ids=ignore_identical_ids)
    trec_names = sorted({name for values in expected["per_query"].values() for name in values})
    values = evaluate(ranked, qrels, [parse_measure(irboard_name(n)) for n in trec_names])
    checked = 0
    for query_id, per_measure in expected["per_query"].items():
        row = ranked.query_ids.index(query_id)
        for name, value in per_measure.items():
            assert values[irboard_name(name)][row] == pytest.approx(value, abs=1e-9), (query_id, name)
            checked += 1
    for name, value in expected.get("aggregate_c", {}).items():
        assert float(np.mean(values[irboard_name(name)])) == pytest.approx(value, abs=1e-9), name
    assert checked > 0


@pytest.mark.parametrize("case_name", CASE_NAMES)
def test_trec_eval_view(case_name):
    _check_view(CASES / case_name, "trec_eval", ignore_identical_ids=False)


def test_beir_ignore_identical_ids_view():
    case = CASES / "10_beir_identical_ids"
    _check_view(case, "beir_ignore_identical_ids", ignore_identical_ids=True)


def test_judged_matches_ir_measures_where_no_ties():
    # ir_measures breaks ties by doc id ascending; on the tie-free graded case its Judged@10 is the oracle.
    case = CASES / "02_graded"
    expected = json.loads((case / "expected.json").read_text())["ir_measures"]["per_query"]
    qrels = Qrels.from_dict(read_qrels_text(case / "qrels.txt"))
    ranked = rank_run(json.loads((case / "run.json").read_text()), qrels)
    values = evaluate(ranked, qrels, [parse_measure("Judged@10")])
    for query_id, per_measure in expected.items():
        row = ranked.query_ids.index(query_id)
        assert values["Judged@10"][row] == pytest.approx(per_measure["Judged@10"], abs=1e-9)


def test_every_qrels_query_gets_a_value():
    case = CASES / "05_query_sets"
    qrels = Qrels.from_dict(read_qrels_text(case / "qrels.txt"))
    ranked = rank_run(json.loads((case / "run.json").read_text()), qrels)
    values = evaluate(ranked, qrels, [parse_measure("nDCG@10")])
    assert ranked.query_ids == qrels.query_ids
    assert len(values["nDCG@10"]) == len(qrels.query_ids)
