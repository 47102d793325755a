"""`irboard evaluate --run RUN --qrels QRELS` without --out or --results-dir: the metrics printed as trec_eval
prints them (`measure<TAB>all<TAB>value`), equal to pytrec_eval's, and nothing written or declared. The flags that
only describe a result file are one error line, exit 1."""

from __future__ import annotations

import lzma
import math
import os

import pytest
import pytrec_eval

from evaluator.metrics import DEFAULT_MEASURES
from leaderboard.cli import main
from tests.conftest import OFFICIAL, ROOT

TREC_EVAL = ROOT / "tests" / "data" / "trec_eval"
TOUCHE_RUN = ROOT / "tests" / "data" / "runs" / "touche2020-bm25-multifield.trec.xz"
TOUCHE_QRELS = OFFICIAL / "qrels" / "qrels.beir-v1.0.0-webis-touche2020.test.txt"
THEIRS = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "R@1000": "recall_1000", "AP": "map",
          "RR": "recip_rank", "P@5": "P_5"}


def trec_lines(text: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        query_id, _, doc_id, _, score, *_ = line.split()
        run.setdefault(query_id, {})[doc_id] = float(score)
    return run


def qrels_lines(text: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in text.splitlines():
        query_id, _, doc_id, label = line.split()
        qrels.setdefault(query_id, {})[doc_id] = int(label)
    return qrels


def oracle(run: dict, qrels: dict, measures) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """pytrec_eval's (means over every judged query, {query: {measure: value}}); a query the run misses is 0."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100,1000", "map", "recip_rank", "P.5"})
    found = evaluator.evaluate(run)
    per_query = {q: {m: found.get(q, {}).get(THEIRS[m], 0.0) for m in measures} for q in qrels}
    return {m: math.fsum(values[m] for values in per_query.values()) / len(qrels) for m in measures}, per_query


@pytest.fixture
def workplace(tmp_path, monkeypatch):
    """A fresh working folder holding an empty results/ (the board's), made the current directory."""
    (tmp_path / "work" / "results").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path / "work"


def everything_under(*folders) -> list[str]:
    return sorted(str(path) for folder in folders for path in folder.rglob("*"))


def evaluate(capsys, *arguments: str) -> tuple[int, list[str], str]:
    capsys.readouterr()
    code = main(["evaluate", *arguments])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_run_and_qrels_alone_print_trec_eval_lines_equal_to_pytrec_eval_and_write_nothing(workplace, capsys):
    declarations = os.environ["IRBOARD_DATASETS"]
    declared = everything_under(workplace.parent / declarations)
    measures = ["nDCG@10", "AP", "R@100", "P@5", "RR"]
    code, lines, err = evaluate(capsys, "--run", str(TREC_EVAL / "results.test"), "--qrels",
                                str(TREC_EVAL / "qrels.test"), "--metrics", ",".join(measures))
    assert code == 0, err
    means, _ = oracle(trec_lines((TREC_EVAL / "results.test").read_text()),
                      qrels_lines((TREC_EVAL / "qrels.test").read_text()), measures)
    assert lines == [f"{m:<22}\tall\t{means[m]:.4f}" for m in measures]  # trec_eval's own layout
    assert lines[1] == "AP                    \tall\t0.1785"  # map in trec_eval's test/out.test
    assert "the run covers 3 of 3 judged queries" in err and "error" not in err
    assert everything_under(workplace) == [str(workplace / "results")]  # nothing written, results/ stays empty
    assert everything_under(workplace.parent / declarations) == declared  # nothing declared


def test_the_default_metric_set_is_printed_without_metrics(workplace, capsys):
    code, lines, err = evaluate(capsys, "--run", str(TREC_EVAL / "results.test"), "--qrels",
                                str(TREC_EVAL / "qrels.test"), "--quiet")
    assert code == 0 and err == "", err
    assert [line.split("\t")[0].rstrip() for line in lines] == [str(m) for m in DEFAULT_MEASURES]
    assert all(line.split("\t")[1] == "all" for line in lines)


def test_a_published_run_on_a_registered_dataset_prints_its_published_figures(workplace, capsys):
    """Pyserini's BM25 on Touché (depth 1,000) against the official judgments, which --dataset-id brings:
    nDCG@10, R@100 and R@1000 equal pytrec_eval's and the published 0.3673 / 0.5376 / 0.8668."""
    code, lines, err = evaluate(capsys, "--run", str(TOUCHE_RUN), "--dataset-id", "beir/webis-touche2020")
    assert code == 0, err
    printed = {name.rstrip(): value for name, query, value in (line.split("\t") for line in lines)
               if query == "all"}
    assert "R@1000" in printed  # the dataset's headline metric joins the default set
    measures = ["nDCG@10", "R@100", "R@1000"]
    means, _ = oracle(trec_lines(lzma.decompress(TOUCHE_RUN.read_bytes()).decode()),
                      qrels_lines(TOUCHE_QRELS.read_text()), measures)
    assert {m: printed[m] for m in measures} == {m: f"{means[m]:.4f}" for m in measures}
    assert [printed[m] for m in measures] == ["0.3673", "0.5376", "0.8668"]
    assert "the run covers 49 of 49 judged queries" in err
    assert everything_under(workplace) == [str(workplace / "results")]


def test_per_query_prints_every_judged_query_then_the_means(workplace, capsys, caplog):
    """As trec_eval -q -c: a judged query the run misses (q3) prints 0 and counts in the mean."""
    (workplace.parent / "run").write_text("q1 Q0 d3 1 2.5 t\nq1 Q0 d1 2 2.0 t\nq2 Q0 d2 1 0.5 t\nq2 Q0 d1 2 0.4 t\n")
    qrels_text = "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d1 1\nq3 0 d9 1\n"
    (workplace.parent / "qrels").write_text(qrels_text)
    measures = ["nDCG@10", "AP"]
    code, lines, err = evaluate(capsys, "--run", str(workplace.parent / "run"), "--qrels",
                                str(workplace.parent / "qrels"), "--metrics", "nDCG@10,AP", "--per-query")
    assert code == 0, err
    means, per_query = oracle(trec_lines((workplace.parent / "run").read_text()), qrels_lines(qrels_text), measures)
    assert per_query["q3"] == {"nDCG@10": 0.0, "AP": 0.0} and per_query["q2"]["AP"] == 0.5
    assert lines == [f"{m:<22}\t{q}\t{per_query[q][m]:.4f}" for q in ("q1", "q2", "q3") for m in measures] + \
        [f"{m:<22}\tall\t{means[m]:.4f}" for m in measures]
    assert "the 1 missing score 0" in err + caplog.text
    assert everything_under(workplace) == [str(workplace / "results")]


@pytest.mark.parametrize(("extra", "words"), [
    (["--model-id", "org/model"], ["--model-id is for a result file", "add --results-dir results"]),
    (["--declare", "--dataset-id", "org/claims"], ["--declare is for a result file"]),
    (["--closed-weights"], ["--closed-weights is for a result file"]),
    (["--reference", "nDCG@10=0.5,https://example.org"], ["--reference is for a result file"]),
    (["--dataset-id", "beir/scifactt"], ["unknown dataset id", "beir/scifact", "leave it out"]),
    (["--metrics", "ndcg@10"], ["Did you mean 'nDCG@10'"]),
    (["--per-query", "--results-dir", "results"], ["--per-query prints", "leave one out"]),
    (["--qrels", "QRELS_MISSING"], ["QRELS_MISSING: cannot be read"]),
])
def test_a_flag_that_needs_a_result_file_or_bad_input_is_one_error_line(workplace, capsys, extra, words):
    qrels = [] if "--qrels" in extra else ["--qrels", str(TREC_EVAL / "qrels.test")]
    code, lines, err = evaluate(capsys, "--run", str(TREC_EVAL / "results.test"), *qrels, *extra)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and lines == [] and len(errors) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in errors[0], (word, errors[0])
    assert everything_under(workplace) == [str(workplace / "results")]


@pytest.mark.parametrize(("arguments", "words"), [
    (["--run", str(TREC_EVAL / "results.test")], ["pass --qrels QRELS"]),
    (["--model", "bm25", "--dataset", "beir/scifact"], ["give --results-dir results (or --out FILE)"]),
    (["--qrels", str(TREC_EVAL / "qrels.test")], ["give --results-dir results", "--run RUN --qrels QRELS prints"]),
])
def test_without_a_run_and_judgments_to_print_the_error_says_what_to_give(workplace, capsys, arguments, words):
    code, lines, err = evaluate(capsys, *arguments)
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 1 and lines == [] and len(errors) == 1, err
    for word in words:
        assert word in errors[0], (word, errors[0])
    assert everything_under(workplace) == [str(workplace / "results")]
