"""Hypothesis fuzzing of the public API and the run readers: any input (Unicode, types, sizes, bytes, separators,
compression) gives a result or an `irboard.errors` error, nothing else; and well-formed input gives
pytrec_eval's numbers."""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import irboard
from evaluator.run_formats import read_run_file
from evaluator.trec import read_qrels, read_run
from irboard.errors import IrboardError
from irboard.inputs import to_qrels

ROOT = Path(__file__).resolve().parents[2]
BM25 = ROOT / "results" / "bm25" / "beir__scifact.json"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])

ids = st.one_of(st.text(max_size=6), st.sampled_from(["q1", "q2", "d1", "d2", "1", "é", "a b", ""]),
                st.integers(-3, 3), st.floats(allow_nan=True), st.none(), st.booleans(), st.binary(max_size=3))
scores = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**40, 10**40), st.none(),
                   st.text(max_size=3), st.booleans(), st.lists(st.floats(), max_size=2),
                   st.sampled_from([np.float32(1.5), np.int64(3), 3.4028235e38, 1e39]))
labels = st.one_of(st.integers(-2, 3), st.integers(-10**31, 10**31), st.floats(allow_nan=True), st.none(),
                   st.text(max_size=2), st.booleans(), st.sampled_from([1.0, 0.5, np.int8(2), 2.0**70]))
runs = st.dictionaries(ids, st.one_of(st.dictionaries(ids, scores, max_size=5),
                                      st.lists(st.tuples(ids, scores), max_size=3), scores), max_size=4)
qrels_dicts = st.dictionaries(ids, st.one_of(st.dictionaries(ids, labels, max_size=4), labels), max_size=4)
metrics = st.one_of(st.sampled_from(["nDCG@10", "AP,RR", "R@5,P@1,nDCG@3", "", "nDCG@0", "P@-1", "AP@1e3"]),
                    st.text(max_size=12), st.lists(st.sampled_from(["AP", "RR@10", 7, None]), max_size=3),
                    st.integers(), st.none())


def result_or_irboard_error(call) -> object:
    try:
        return call()
    except IrboardError as error:
        assert "\n" not in str(error), str(error)
        return error


@FUZZ
@given(run=runs, qrels=qrels_dicts, metric=metrics)
def test_evaluate_gives_values_or_an_irboard_error(run, qrels, metric):
    out = result_or_irboard_error(lambda: irboard.evaluate(run, qrels, metric))
    if not isinstance(out, IrboardError):
        assert out and all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in out.values()), out


@FUZZ
@given(rows=st.lists(st.tuples(ids, ids, scores), max_size=6), judged=st.lists(st.tuples(ids, ids, labels),
                                                                                  max_size=6))
def test_evaluate_on_dataframes_gives_values_or_an_irboard_error(rows, judged):
    run = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(judged, columns=["query_id", "doc_id", "relevance"])
    out = result_or_irboard_error(lambda: irboard.evaluate(run, qrels, "nDCG@10,AP", per_query=True))
    if not isinstance(out, IrboardError):
        assert out.index.name == "query_id" and out.notna().all().all()


@FUZZ
@given(a=runs, b=runs, qrels=qrels_dicts, alpha=st.one_of(st.floats(), st.text(max_size=2), st.none()),
       test=st.sampled_from(["t", "wilcoxon", "randomization", "z", ""]))
def test_compare_gives_a_report_or_an_irboard_error(a, b, qrels, alpha, test):
    out = result_or_irboard_error(lambda: irboard.compare({"a": a, "b": b}, qrels, "nDCG@10", alpha=alpha,
                                                          test=test))
    if not isinstance(out, IrboardError):
        assert len(out.to_dataframe()) == 2 and "| a |" in out.to_markdown()


@FUZZ
@given(docs=st.one_of(st.floats(allow_nan=True), st.integers(-10, 10**13), st.text(max_size=3), st.none()),
       k=st.one_of(st.integers(-2, 10**4), st.lists(st.integers(-1, 2000), max_size=3), st.floats(), st.none(),
                   st.text(max_size=2)),
       growth=st.sampled_from(["uniform", "fixed-relevant", "", "UNIFORM", None]))
def test_predict_recall_gives_predictions_or_an_irboard_error(docs, k, growth):
    out = result_or_irboard_error(lambda: irboard.predict_recall(BM25, docs, k, growth))
    if not isinstance(out, IrboardError):
        assert all(0.0 <= value <= 1.0 for key, value in out.items() if key.startswith("R@"))


# --- the run readers -----------------------------------------------------------------------------------------------

QRELS_TEXT = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\né 0 ü 1\n"
tokens = st.one_of(st.sampled_from(["q1", "q2", "é", "Q0", "d1", "d2", "d3", "ü", "1", "2", "0.5", "-1e3", "1e39",
                                    "nan", "inf", "{", "}", '"q1"', ":", ",", "[", "\ufeff", "a b"]),
                   st.text(max_size=4))
lines = st.lists(st.lists(tokens, min_size=0, max_size=7).map(lambda fields: fields), max_size=6)
separators = st.sampled_from([" ", "\t", "  ", " \t", "\r"])
wrappers = st.sampled_from(["plain", "gzip", "bzip2", "xz", "bom", "truncated gzip"])


def wrap(content: bytes, how: str) -> bytes:
    if how == "gzip":
        return gzip.compress(content)
    if how == "bzip2":
        return bz2.compress(content)
    if how == "xz":
        return lzma.compress(content)
    if how == "bom":
        return b"\xef\xbb\xbf" + content
    if how == "truncated gzip":
        return gzip.compress(content)[: max(len(content) // 2, 11)]
    return content


@pytest.fixture(scope="module")
def qrels_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("qrels") / "qrels.txt"
    path.write_text(QRELS_TEXT)
    return path


@FUZZ
@given(rows=lines, sep=separators, how=wrappers, run_format=st.sampled_from([None, "trec", "msmarco", "json"]))
def test_run_readers_read_any_text_or_say_why_not(tmp_path, qrels_file, rows, sep, how, run_format):
    content = "".join(sep.join(fields) + "\n" for fields in rows).encode("utf-8")
    path = tmp_path / "run"
    path.write_bytes(wrap(content, how))
    qrels = read_qrels(qrels_file)
    result_or_irboard_error(lambda: read_run_file(path, qrels, run_format, keep_top=None, judged_below=True))
    result_or_irboard_error(lambda: irboard.evaluate(path, qrels_file, "nDCG@10,AP"))
    result_or_irboard_error(lambda: read_run(path))
    result_or_irboard_error(lambda: read_qrels(path))


@FUZZ
@given(data=st.binary(max_size=200), how=wrappers)
def test_run_readers_read_any_bytes_or_say_why_not(tmp_path, qrels_file, data, how):
    path = tmp_path / "run"
    path.write_bytes(wrap(data, how))
    result_or_irboard_error(lambda: irboard.evaluate(path, qrels_file, "AP"))
    result_or_irboard_error(lambda: read_qrels(path))


# --- well-formed input: pytrec_eval's numbers --------------------------------------------------------------------

doc_names = st.sampled_from(["a", "b", "c", "é", "z", "ａ", "10", "9", "d d"])


@FUZZ
@given(run=st.dictionaries(st.sampled_from(["q1", "q2", "q3"]),
                           st.dictionaries(doc_names, st.integers(0, 3).map(float), min_size=1, max_size=8),
                           min_size=1),
       qrels=st.dictionaries(st.sampled_from(["q1", "q2", "q4"]),
                             st.dictionaries(doc_names, st.integers(0, 2), min_size=1, max_size=5), min_size=1))
def test_well_formed_input_gives_pytrec_evals_numbers(run, qrels):
    """Many tied scores (whole numbers) and ids beyond ASCII: trec_eval's tie order, bit for bit."""
    assume(set(run) & set(qrels))
    ours = irboard.evaluate(run, qrels, "nDCG@10,AP,RR,P@3,R@5")
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank", "P.3", "recall.5"}
                                               ).evaluate(run)
    for name, theirs in [("nDCG@10", "ndcg_cut_10"), ("AP", "map"), ("RR", "recip_rank"), ("P@3", "P_3"),
                         ("R@5", "recall_5")]:
        expected = math.fsum(per_query.get(q, {}).get(theirs, 0.0) for q in qrels) / len(qrels)
        assert ours[name] == pytest.approx(expected, abs=1e-12), name
    assert to_qrels(qrels).to_dict() == qrels
