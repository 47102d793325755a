"""Randomised differential tests against pytrec_eval (trec_eval 9.0.8), the oracle."""

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator.metrics import Qrels, evaluate, parse_measure, rank_run

TREC_MEASURES = {
    "ndcg_cut.1,3,5,10,20,100": None, "recall.1,5,10,100": None, "P.1,5,10,20": None,
    "map": None, "map_cut.5,10": None, "recip_rank": None, "Rprec": None, "bpref": None, "success.1,5,10": None,
}
NAME_OF = {
    **{f"ndcg_cut_{k}": f"nDCG@{k}" for k in (1, 3, 5, 10, 20, 100)},
    **{f"recall_{k}": f"R@{k}" for k in (1, 5, 10, 100)},
    **{f"P_{k}": f"P@{k}" for k in (1, 5, 10, 20)},
    "map": "AP", "map_cut_5": "AP@5", "map_cut_10": "AP@10", "recip_rank": "RR", "Rprec": "Rprec",
    "bpref": "Bpref", **{f"success_{k}": f"Success@{k}" for k in (1, 5, 10)},
}
DOC_IDS = ["d1", "d2", "d10", "D3", "_a", "zz", "b", "é1", "a-1", "A", "a", "0", "9z", "x_y"]
QUERY_IDS = ["q1", "q2", "q3", "Q4", "10", "9"]


@st.composite
def run_and_qrels(draw):
    qrels, run = {}, {}
    for query_id in draw(st.lists(st.sampled_from(QUERY_IDS), unique=True, max_size=5)):
        docs = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, min_size=1, max_size=10))
        qrels[query_id] = {d: draw(st.integers(-2, 3)) for d in docs}
        qrels[query_id][docs[0]] = draw(st.integers(0, 3))  # the oracle crashes on all-negative queries
    for query_id in draw(st.lists(st.sampled_from(QUERY_IDS), unique=True, max_size=5)):
        docs = draw(st.lists(st.sampled_from(DOC_IDS), unique=True, max_size=12))
        # few distinct scores so ties are common; some equal only after rounding to float32
        scores = st.sampled_from([0.0, 0.5, 1.0, 1.0000000001, -2.25, 3.0, 0.1, 0.10000000000000002])
        run[query_id] = {d: draw(scores) for d in docs}
    return run, qrels


def _oracle(run, qrels, level):
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES), relevance_level=level)
    return evaluator.evaluate(run)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_and_qrels(), st.sampled_from([1, 2]))
def test_equals_pytrec_eval(case, level):
    run, qrels = case
    if not qrels:
        return
    ranked = rank_run(run, Qrels.from_dict(qrels))
    values = evaluate(ranked, Qrels.from_dict(qrels), [parse_measure(n) for n in NAME_OF.values()], level)
    oracle = _oracle({q: r for q, r in run.items() if r}, qrels, level)
    for row, query_id in enumerate(ranked.query_ids):
        for trec_name, name in NAME_OF.items():
            # trec_eval skips queries missing from the run; irboard scores them 0 (trec_eval -c)
            expected = oracle[query_id][trec_name] if query_id in oracle else 0.0
            assert values[name][row] == pytest.approx(expected, abs=1e-9), (query_id, name)


def test_larger_random_runs_equal_pytrec_eval():
    rng = np.random.default_rng(7)
    docs = [f"doc{i}" for i in range(300)]
    qrels = {f"q{q}": {d: int(rng.integers(-1, 4)) for d in rng.choice(docs, 40, replace=False)} for q in range(50)}
    run = {f"q{q}": {d: float(np.round(rng.normal(), 1)) for d in rng.choice(docs, 150, replace=False)}
           for q in range(0, 60, 1)}
    oracle = _oracle(run, qrels, 1)
    qrels_arrays = Qrels.from_dict(qrels)
    values = evaluate(rank_run(run, qrels_arrays), qrels_arrays, [parse_measure(n) for n in NAME_OF.values()])
    for row, query_id in enumerate(qrels_arrays.query_ids):
        for trec_name, name in NAME_OF.items():
            assert values[name][row] == pytest.approx(oracle[query_id][trec_name], abs=1e-9)
