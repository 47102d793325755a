"""Small cases whose expected values are written as the formula."""

import math

import numpy as np
import pytest

from evaluator.metrics import Qrels, evaluate, parse_measure, rank_run

QRELS = {"q": {"a": 2, "b": 0, "c": 1, "d": 3, "e": -1}}
# trec order: a (0.9), x (0.8, unjudged), b (0.7), c (0.6), e (0.5); d is never retrieved
RUN = {"q": {"a": 0.9, "x": 0.8, "b": 0.7, "c": 0.6, "e": 0.5}}


def _values(*names, qrels=QRELS, run=RUN, level=1):
    q = Qrels.from_dict(qrels)
    return {n: float(v[0]) for n, v in evaluate(rank_run(run, q), q, [parse_measure(n) for n in names], level).items()}


def test_ndcg_linear_and_exponential_gain():
    values = _values("nDCG@5", "nDCG(dcg='exp-log2')@5")
    dcg = 2 / math.log2(2) + 1 / math.log2(5)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert values["nDCG@5"] == pytest.approx(dcg / idcg, abs=1e-12)
    exp_dcg = (2**2 - 1) / math.log2(2) + (2**1 - 1) / math.log2(5)
    exp_idcg = (2**3 - 1) / math.log2(2) + (2**2 - 1) / math.log2(3) + (2**1 - 1) / math.log2(4)
    assert values["nDCG(dcg='exp-log2')@5"] == pytest.approx(exp_dcg / exp_idcg, abs=1e-12)


def test_precision_recall_ap_rr():
    values = _values("P@5", "P@10", "R@5", "AP", "RR", "Rprec", "Success@1")
    assert values["P@5"] == pytest.approx(2 / 5)
    assert values["P@10"] == pytest.approx(2 / 10)  # divides by k although only 5 are ranked
    assert values["R@5"] == pytest.approx(2 / 3)  # R = 3: a, c, d; -1 is never relevant
    assert values["AP"] == pytest.approx((1 / 1 + 2 / 4) / 3)
    assert values["RR"] == pytest.approx(1.0)
    assert values["Rprec"] == pytest.approx(1 / 3)  # one relevant among the first R = 3
    assert values["Success@1"] == 1.0


def test_relevance_level_two():
    values = _values("P@5", "R@5", level=2)
    assert values["P@5"] == pytest.approx(1 / 5)
    assert values["R@5"] == pytest.approx(1 / 2)  # a (2) and d (3)


def test_judged_and_arp():
    values = _values("Judged@5", "Judged@10", "ARP")
    assert values["Judged@5"] == pytest.approx(4 / 5)  # x is unjudged; e (-1) is judged
    assert values["Judged@10"] == pytest.approx(4 / 5)  # divided by min(k, ranking length), as ir_measures
    assert values["ARP"] == pytest.approx((2 * 1 + 1 * 4) / (2 + 1))


def test_bpref_formula():
    # relevant a (no judged non-relevant above), c (b above it); R = 3, N = 1 judged non-relevant
    values = _values("Bpref")
    assert values["Bpref"] == pytest.approx((1 + (1 - min(1, 3) / min(3, 1))) / 3)


def test_query_missing_from_run_scores_zero_and_unjudged_only_query():
    qrels = {"q": QRELS["q"], "only_zero": {"z": 0}, "missing": {"m": 1}}
    q = Qrels.from_dict(qrels)
    values = evaluate(rank_run({**RUN, "only_zero": {"z": 1.0}}, q), q, [parse_measure("nDCG@10")])
    row = {query_id: i for i, query_id in enumerate(q.query_ids)}
    assert values["nDCG@10"][row["missing"]] == 0.0
    assert values["nDCG@10"][row["only_zero"]] == 0.0
    assert np.isfinite(values["nDCG@10"]).all()


def test_ties_ordered_by_doc_id_descending_bytes():
    # all tied: order zz, d2, d10, d1 (byte order descending); only d1 is relevant -> RR = 1/4
    qrels = {"t": {"d1": 1, "d10": 0, "d2": 0, "zz": 0}}
    run = {"t": {"d1": 1.0, "d10": 1.0, "d2": 1.0, "zz": 1.0}}
    assert _values("RR", qrels=qrels, run=run)["RR"] == pytest.approx(1 / 4)


def test_float32_ties():
    # 0.1 and 0.10000000000000002 are equal as float32, so the doc id decides: "b" before "a"
    qrels = {"t": {"a": 1, "b": 0}}
    run = {"t": {"a": 0.10000000000000002, "b": 0.1}}
    assert _values("RR", qrels=qrels, run=run)["RR"] == pytest.approx(1 / 2)
