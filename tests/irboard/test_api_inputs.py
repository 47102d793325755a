"""The API keeps its promise: every public function checks what it is given, and input that would be misread
(ids of another kind, empty or foreign judgments, labels that are not whole numbers, scores that are not
numbers, duplicate rows, bad arguments) raises an `irboard.errors` error whose message is one sentence naming
it, never a number (often 0.0) and never a raw TypeError, ValueError, OverflowError or AttributeError."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import irboard
from irboard.errors import InputFormatError, IrboardError

ROOT = Path(__file__).resolve().parents[2]
BM25 = ROOT / "results" / "bm25" / "beir__scifact.json"
QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1, "d4": 1}}
RUN = {"q1": {"d3": 2.5, "d1": 2.0, "d7": 1.0}, "q2": {"d4": 0.5, "d1": 0.25}}


def oracle(run: dict, qrels: dict) -> dict[str, float]:
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map"}).evaluate(run)
    return {ours: sum(per_query.get(q, {}).get(theirs, 0.0) for q in qrels) / len(qrels)
            for ours, theirs in [("nDCG@10", "ndcg_cut_10"), ("AP", "map")]}


def frame(rows, value: str) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", value])


def with_score(score) -> dict:
    return {"q1": {"d3": 2.5, "d1": score}, "q2": {"d4": 0.5}}


def with_label(label) -> dict:
    return {"q1": {"d1": 2, "d3": label}, "q2": {"d4": 1}}


CASES = [
    # judgments
    ("no shared query id", lambda: irboard.evaluate(RUN, {"q9": {"d1": 1}}), "share no query id"),
    ("empty judgments", lambda: irboard.evaluate(RUN, {}), "the judgments are empty"),
    ("empty judgments frame", lambda: irboard.evaluate(RUN, frame([], "relevance")), "the judgments are empty"),
    ("a query judging nothing", lambda: irboard.evaluate(RUN, {"q1": {"d1": 1}, "q2": {}}),
     "query 'q2' has no judged document"),
    ("judgments as a list", lambda: irboard.evaluate(RUN, {"q1": [("d1", 1)]}),
     "query 'q1': expected {doc_id: relevance}, found a list"),
    ("a NaN label", lambda: irboard.evaluate(RUN, with_label(float("nan"))), "relevance nan is not a whole number"),
    ("a fractional label", lambda: irboard.evaluate(RUN, with_label(0.5)), "relevance 0.5 is not a whole number"),
    ("a huge label", lambda: irboard.evaluate(RUN, with_label(10**30)), "relevance 1e+30 is outside [-1000, 1000]"),
    ("a label as text", lambda: irboard.evaluate(RUN, with_label("1")), "relevance '1' is not a whole number"),
    ("a boolean label", lambda: irboard.evaluate(RUN, with_label(True)), "relevance True is not a whole number"),
    ("a None label", lambda: irboard.evaluate(RUN, with_label(None)), "relevance None is not a whole number"),
    ("duplicate qrels rows", lambda: irboard.evaluate(RUN, frame([("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d1", 2)],
                                                                 "relevance")),
     "rows 0 and 2 both give query 'q1', document 'd1'"),
    # ids
    ("float ids against string ids", lambda: irboard.evaluate({1.0: {"d1": 1.0}}, {"1": {"d1": 1}}),
     "query id 1.0 is a float"),
    ("float doc ids", lambda: irboard.evaluate({"q1": {1.0: 1.0}}, QRELS), "document id 1.0 is a float"),
    ("1 and '1' in one run", lambda: irboard.evaluate({"q1": {1: 2.0, "1": 1.0}}, QRELS),
     "mix strings and whole numbers"),
    ("1 and '1' as query ids", lambda: irboard.evaluate({1: {"d1": 2.0}, "1": {"d1": 1.0}}, {"1": {"d1": 1}}),
     "mix strings and whole numbers"),
    ("whole-number ids against string ids", lambda: irboard.evaluate({1: {"d1": 1.0}}, {"1": {"d1": 1}}),
     "the run's query ids are whole numbers and the judgments' are strings"),
    ("None as an id", lambda: irboard.evaluate({None: {"d1": 1.0}}, QRELS), "query id None is a NoneType"),
    ("string ids against whole-number ids", lambda: irboard.evaluate({"1": {"1": 1.0}}, {1: {1: 1}}),
     "the run's query ids are strings and the judgments' are whole numbers"),
    ("string doc ids against whole-number doc ids", lambda: irboard.evaluate({"q1": {"1": 1.0}}, {"q1": {1: 1}}),
     "the run's document ids are strings and the judgments' are whole numbers"),
    # scores
    ("a None score", lambda: irboard.evaluate(with_score(None), QRELS),
     "query 'q1', document 'd1': score None is not a number"),
    ("a score as text", lambda: irboard.evaluate(with_score("2"), QRELS), "score '2' is not a number"),
    ("a boolean score", lambda: irboard.evaluate(with_score(True), QRELS), "score True is not a number"),
    ("a NaN score", lambda: irboard.evaluate(with_score(float("nan")), QRELS), "score nan is not finite"),
    ("a numpy NaN score", lambda: irboard.evaluate(with_score(np.float64("nan")), QRELS),
     "is not finite; scores must be finite numbers"),
    ("an infinite score", lambda: irboard.evaluate(with_score(-math.inf), QRELS), "score -inf is not finite"),
    ("a float32-overflowing score", lambda: irboard.evaluate(with_score(1e39), QRELS), "beyond float32's range"),
    ("an int beyond float64", lambda: irboard.evaluate(with_score(10**400), QRELS), "beyond float32's range"),
    ("a ranking as a list of pairs", lambda: irboard.evaluate({"q1": [("d1", 1.0), ("d3", 0.5)]}, QRELS),
     "query 'q1': the ranking is a list; give {doc_id: score}"),
    ("a ranking as a number", lambda: irboard.evaluate({"q1": 3.0}, QRELS), "the ranking is a float"),
    ("an empty run", lambda: irboard.evaluate({}, QRELS), "the run is empty"),
    ("duplicate run rows", lambda: irboard.evaluate(frame([("q1", "d1", 1.0), ("q1", "d1", 2.0)], "score"), QRELS),
     "run DataFrame: rows 0 and 1 both give query 'q1', document 'd1'"),
    ("a run of another type", lambda: irboard.evaluate(42, QRELS), "a int is not a run"),
    # arguments
    ("no metrics", lambda: irboard.evaluate(RUN, QRELS, []), "metrics=[]"),
    ("metrics as a number", lambda: irboard.evaluate(RUN, QRELS, 10), "metrics=10"),
    ("metrics as None", lambda: irboard.evaluate(RUN, QRELS, None), "metrics=None"),
    ("per_query as text", lambda: irboard.evaluate(RUN, QRELS, per_query="yes"), "per_query='yes'"),
    ("relevance level 0", lambda: irboard.evaluate(RUN, QRELS, relevance_level=0), "relevance_level=0"),
    ("relevance level 1.5", lambda: irboard.evaluate(RUN, QRELS, relevance_level=1.5), "relevance_level=1.5"),
    # compare
    ("compare with empty judgments", lambda: irboard.compare({"a": RUN, "b": RUN}, {}), "the judgments are empty"),
    ("compare with one run", lambda: irboard.compare({"a": RUN}, QRELS), "at least two runs, got 1 run(s)"),
    ("compare with a list of runs", lambda: irboard.compare([RUN, RUN], QRELS), "got a list"),
    ("compare with alpha as text", lambda: irboard.compare({"a": RUN, "b": RUN}, QRELS, alpha="0.05"),
     "alpha='0.05'"),
    ("compare with an unknown baseline", lambda: irboard.compare({"a": RUN, "b": RUN}, QRELS, baseline="c"),
     "baseline 'c' is not one of the runs"),
    ("compare with a bad run", lambda: irboard.compare({"a": RUN, "b": with_score(None)}, QRELS),
     "compare: run 'b': run: query 'q1', document 'd1': score None"),
    # predict_recall, read_result, validate, build, evaluate_model
    ("predict_recall at k=0", lambda: irboard.predict_recall(BM25, docs=10_000_000, k=0), "k=0"),
    ("predict_recall at k=(10, 0)", lambda: irboard.predict_recall(BM25, docs=10_000_000, k=(10, 0)), "k=0"),
    ("predict_recall at 0 documents", lambda: irboard.predict_recall(BM25, docs=0), "docs=0"),
    ("predict_recall at NaN documents", lambda: irboard.predict_recall(BM25, docs=math.nan), "docs=nan"),
    ("predict_recall with docs as text", lambda: irboard.predict_recall(BM25, docs="1e7"), "docs='1e7'"),
    ("predict_recall with an unknown growth", lambda: irboard.predict_recall(BM25, 1e7, growth="fast"),
     "growth='fast'"),
    ("predict_recall of a number", lambda: irboard.predict_recall(42, 1e7), "result is a int"),
    ("read_result of a number", lambda: irboard.read_result(42), "path=42"),
    ("validate with paths as a number", lambda: irboard.validate(42), "paths=42"),
    ("build with no workers", lambda: irboard.build("results", "/nonexistent/site", workers=0), "workers=0"),
    ("evaluate_model at top_k=0", lambda: irboard.evaluate_model("bm25", "beir/scifact", top_k=0), "top_k=0"),
    ("evaluate_model of no model", lambda: irboard.evaluate_model(None, "beir/scifact"), "model=None"),
]


@pytest.mark.parametrize(("name", "call", "words"), CASES, ids=[case[0] for case in CASES])
def test_input_that_would_be_misread_raises_one_sentence(name, call, words):
    with pytest.raises(IrboardError) as caught:
        call()
    message = str(caught.value)
    assert words in message, message
    assert "\n" not in message and isinstance(caught.value, InputFormatError), message


def test_whole_numbers_as_ids_and_labels_give_the_string_ids_numbers():
    """Ids given as whole numbers on both sides are their decimal strings; labels such as 1.0 are whole; numpy
    scalars are numbers. The values are pytrec_eval's on the string form."""
    as_ints_run = {int(q[1]): {int(d[1]): s for d, s in docs.items()} for q, docs in RUN.items()}
    as_ints_qrels = {np.int64(q[1]): {int(d[1]): float(r) for d, r in docs.items()} for q, docs in QRELS.items()}
    expected = oracle({q[1]: {d[1]: s for d, s in docs.items()} for q, docs in RUN.items()},
                      {q[1]: {d[1]: r for d, r in docs.items()} for q, docs in QRELS.items()})
    assert irboard.evaluate(as_ints_run, as_ints_qrels, "nDCG@10,AP") == pytest.approx(expected, abs=1e-12)
    run_frame = frame([(q, d, np.float32(s)) for q, docs in as_ints_run.items() for d, s in docs.items()], "score")
    qrels_frame = frame([(q, d, r) for q, docs in as_ints_qrels.items() for d, r in docs.items()], "relevance")
    assert irboard.evaluate(run_frame, qrels_frame, "nDCG@10,AP") == pytest.approx(expected, abs=1e-12)
    assert irboard.evaluate(RUN, QRELS, "nDCG@10,AP") == pytest.approx(oracle(RUN, QRELS), abs=1e-12)


def test_ties_are_broken_by_doc_id_bytes_like_trec_eval():
    """Equal scores (as float32) are ordered by doc id, descending in UTF-8 byte order: the same as pytrec_eval,
    also for ids beyond ASCII and for scores equal only in float32."""
    qrels = {"q": {"b": 1, "é": 1, "a": 0, "z": 1, "ａ": 2}}
    run = {"q": {"a": 1.0, "b": 1.0, "é": 1.0, "z": 1.0 + 1e-9, "ａ": 0.5, "y": 1.0}}
    assert irboard.evaluate(run, qrels, "nDCG@10,AP") == pytest.approx(oracle(run, qrels), abs=1e-12)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"P.1", "P.2"}).evaluate(run)["q"]
    # float32 ties 'z' with the rest, and 'é' (bytes c3 a9) sorts after 'z': it ranks first
    assert irboard.evaluate(run, qrels, "P@1,P@2") == pytest.approx({"P@1": per_query["P_1"],
                                                                      "P@2": per_query["P_2"]}, abs=1e-12)


def test_errors_name_the_function_argument_for_every_public_function():
    """Each public function of irboard raises only irboard errors for arguments of the wrong type."""
    calls = {
        "evaluate": lambda bad: irboard.evaluate(bad, bad, bad),
        "compare": lambda bad: irboard.compare(bad, bad, bad),
        "evaluate_model": lambda bad: irboard.evaluate_model(bad, bad),
        "read_result": lambda bad: irboard.read_result(bad),
        "validate": lambda bad: irboard.validate(bad),
        "build": lambda bad: irboard.build(bad, bad),
        "predict_recall": lambda bad: irboard.predict_recall(bad, bad),
    }
    assert set(calls) == {name for name in irboard.__all__ if callable(getattr(irboard, name))
                          and name[0].islower()}
    for name, call in calls.items():
        for bad in (None, 3.5, object(), [3], {"x": None}, b"\xff"):
            with pytest.raises(IrboardError) as caught:
                call(bad)
                pytest.fail(f"irboard.{name}({bad!r}) raised nothing")
            assert "\n" not in str(caught.value), (name, bad)
            assert re.search(r"\w", str(caught.value)), (name, bad)


def test_ignoring_identical_ids_drops_the_query_itself():
    run = {"q1": {"q1": 9.0, "d3": 2.5, "d1": 2.0}, "q2": {"q2": 1.0}}
    expected = oracle({"q1": {"d3": 2.5, "d1": 2.0}}, QRELS)
    assert irboard.evaluate(run, QRELS, "nDCG@10,AP", ignore_identical_ids=True) == pytest.approx(expected)
    as_ints = {1: {1: 9.0, 3: 2.5, 1000: 2.0}}
    judged = {1: {3: 1, 1: 1}}
    assert irboard.evaluate(as_ints, judged, "P@1", ignore_identical_ids=True) == {"P@1": 1.0}
    assert irboard.evaluate(as_ints, judged, "P@1") == {"P@1": 1.0}  # 1 is judged relevant to itself here
