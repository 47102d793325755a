"""Hole bounds against brute force over every labelling of the unjudged documents, and their rules on cases
small enough to write as formulas."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.metrics import Qrels, evaluate, parse_measure, rank_run
from evaluator.metrics.holes import hole_bounds, judged_at, judged_count, max_grade
from evaluator.metrics.ranking import PAD, UNJUDGED, QrelsStats, RankedRun

BOUNDED = ["P@{k}", "R@{k}", "nDCG@{k}", "nDCG", "nDCG(dcg='exp-log2')@{k}", "AP", "AP@{k}", "RR", "RR@{k}",
           "Success@{k}", "Rprec", "Bpref"]


def _stats(rows: list[list[int]], extra: list[list[int]], level: int) -> QrelsStats:
    """The judgments of each row: its judged labels (ranked or `extra`, judged but not retrieved)."""
    judged = [[label for label in row if label >= 0] + more for row, more in zip(rows, extra, strict=True)]
    width = max([sum(1 for label in labels if label > 0) for labels in judged] + [1])
    ideal = np.zeros((len(judged), width), dtype=np.int64)
    for i, labels in enumerate(judged):
        positive = sorted((label for label in labels if label > 0), reverse=True)
        ideal[i, :len(positive)] = positive
    return QrelsStats(ideal, np.array([sum(label >= level for label in labels) for labels in judged]),
                      np.array([sum(0 <= label < level for label in labels) for labels in judged]))


def _ranked(rows: list[list[int]], width: int) -> RankedRun:
    labels = np.full((len(rows), width), PAD, dtype=np.int32)
    for i, row in enumerate(rows):
        labels[i, :len(row)] = row
    return RankedRun([str(i) for i in range(len(rows))], labels, np.array([len(row) for row in rows]))


def _brute_force(row: list[int], extra: list[int], metric: str, level: int, grade: int) -> tuple[float, float]:
    """min and max of `metric` over every labelling, in 0..grade, of the unjudged documents it reads."""
    measure = parse_measure(metric)
    reads = len(row) if measure.cutoff is None else measure.cutoff
    holes = [j for j, label in enumerate(row) if label == UNJUDGED and j < reads]
    labellings = []
    for grades in itertools.product(range(grade + 1), repeat=len(holes)):
        labelled = list(row)
        for j, g in zip(holes, grades, strict=True):
            labelled[j] = g
        labellings.append(labelled)
    values = evaluate(_ranked(labellings, max(len(row), 1)), _stats(labellings, [extra] * len(labellings), level),
                      [measure], level)[metric]
    return float(values.min()), float(values.max())


label = st.sampled_from([UNJUDGED, UNJUDGED, 0, 1, 2, 3])
query = st.tuples(st.lists(label, max_size=10).filter(lambda row: row.count(UNJUDGED) <= 8),
                  st.lists(st.integers(0, 3), max_size=4))


@settings(max_examples=300, deadline=None)
@given(st.lists(query, min_size=1, max_size=3), st.sampled_from([1, 2]), st.integers(1, 12),
       st.sampled_from(BOUNDED), st.sampled_from([None, 1, 3]))
def test_bounds_equal_brute_force(queries, level, k, pattern, top_grade):
    metric = pattern.format(k=k)
    rows, extra = [row for row, _ in queries], [more for _, more in queries]
    stats = _stats(rows, extra, level)
    ranked = _ranked(rows, max(max(len(row) for row in rows), 1))
    bounds = hole_bounds(ranked, stats, metric, level, top_grade)
    grade = max_grade(stats) if top_grade is None else top_grade
    assert np.array_equal(bounds.value, evaluate(ranked, stats, [parse_measure(metric)], level)[metric])
    for i, (row, more) in enumerate(queries):
        low, high = _brute_force(row, more, metric, level, grade)
        assert bounds.low[i] == pytest.approx(low, abs=1e-12), (row, more)
        assert bounds.high[i] == pytest.approx(high, abs=1e-12), (row, more)
    if pattern != "Bpref":  # Bpref skips unjudged documents: its value is no labelling's
        assert np.all(bounds.low <= bounds.value) and np.all(bounds.value <= bounds.high)
    assert bounds.mean() == pytest.approx((np.mean(bounds.low), np.mean(bounds.high)), abs=1e-15)


def test_monotone_families_start_at_trec_eval():
    # P, R, RR and Success only grow when an unjudged document becomes relevant: their low end is trec_eval's value.
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0, "c": 2}})
    ranked = rank_run({"q": {"a": 5, "u1": 4, "b": 3, "u2": 2}}, qrels)
    for metric in ("P@4", "R@4", "RR", "Success@4", "RR@2"):
        bounds = hole_bounds(ranked, qrels, metric)
        assert bounds.low[0] == bounds.value[0], metric
    assert hole_bounds(ranked, qrels, "P@4").high[0] == 3 / 4
    assert hole_bounds(ranked, qrels, "R@4").high[0] == pytest.approx((1 + 2) / (2 + 2))


def test_ndcg_and_ap_can_fall_below_trec_eval():
    # A perfect ranking of the judged documents: an unjudged one labelled relevant lifts the ideal DCG more than
    # the DCG, and R more than the precision sum.
    qrels = Qrels.from_dict({"q": {"a": 1}})
    ranked = rank_run({"q": {"a": 2, "b": 1}}, qrels)  # b unjudged at rank 2
    ndcg = hole_bounds(ranked, qrels, "nDCG@2", top_grade=3)
    assert ndcg.value[0] == 1.0
    assert ndcg.low[0] == pytest.approx((1 + 3 / np.log2(3)) / (3 + 1 / np.log2(3)), abs=1e-12)
    ranked = rank_run({"q": {"a": 3, "x": 2, "b": 1}}, Qrels.from_dict({"q": {"a": 1, "x": 0}}))
    ap = hole_bounds(ranked, Qrels.from_dict({"q": {"a": 1, "x": 0}}), "AP")
    assert ap.value[0] == 1.0
    assert ap.low[0] == pytest.approx((1 + 2 / 3) / 2, abs=1e-12)
    # two unjudged documents at ranks 5 and 6: the lowest AP makes both relevant (each counts the other above)
    ranked = RankedRun(["q"], np.array([[1, 0, 0, 0, UNJUDGED, UNJUDGED]], dtype=np.int32), np.array([6]))
    ap = hole_bounds(ranked, QrelsStats(np.array([[1]]), np.array([1]), np.array([3])), "AP")
    assert ap.low[0] == pytest.approx((1 + 2 / 5 + 3 / 6) / 3, abs=1e-12)
    rprec = hole_bounds(ranked, QrelsStats(np.array([[1]]), np.array([1]), np.array([3])), "Rprec")
    assert (rprec.value[0], rprec.low[0]) == (1.0, pytest.approx(1 / 3, abs=1e-12))  # both relevant: R = 3


def test_no_bounds_for_arp():
    qrels = Qrels.from_dict({"q": {"a": 1}})
    with pytest.raises(Exception, match="no hole bounds for ARP"):
        hole_bounds(rank_run({"q": {"a": 1.0}}, qrels), qrels, "ARP")


def test_judged_at_and_count():
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0}, "r": {"c": 1}, "s": {"d": 1}})
    ranked = rank_run({"q": {"a": 4, "u": 3, "b": 2}, "r": {"v": 1}}, qrels)
    assert judged_at(ranked, 2).tolist() == [1 / 2, 0.0, 0.0]
    assert judged_at(ranked, 10).tolist() == [2 / 3, 0.0, 0.0]  # ir_measures: divided by min(k, length)
    assert judged_count(ranked, 2).tolist() == [1, 0, 0]
    assert np.array_equal(judged_at(ranked, 10), evaluate(ranked, qrels, [parse_measure("Judged@10")])["Judged@10"])
