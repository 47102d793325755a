"""The public API: every input form gives the numbers of pytrec_eval and of `irboard evaluate --run`, bit for
bit; the docs' examples run; errors are catchable and name the fix."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval

import irboard
from evaluator.result import read_result as read_result_file
from evaluator.trec import read_qrels, read_run, write_run
from tests.conftest import SCIFACT

ROOT = Path(__file__).resolve().parents[2]
BM25 = ROOT / "results" / "bm25" / "beir__scifact.json"
QRELS = SCIFACT / "qrels" / "test.tsv"


@pytest.fixture(scope="module")
def scifact_run(tmp_path_factory) -> Path:
    """The repository's real BM25 ranking of SciFact (depth 100) as a TREC run file."""
    path = tmp_path_factory.mktemp("run") / "bm25.run"
    write_run(path, read_result_file(BM25).rankings(), "bm25")
    return path


def test_every_input_form_gives_the_same_numbers_as_pytrec_eval(scifact_run):
    qrels_dict = read_qrels(QRELS).to_dict()
    run_dict = read_run(scifact_run)
    run_frame = pd.DataFrame([(q, d, s) for q, docs in run_dict.items() for d, s in docs.items()],
                             columns=["query_id", "doc_id", "score"])
    qrels_frame = pd.DataFrame([(q, d, r) for q, docs in qrels_dict.items() for d, r in docs.items()],
                               columns=["query_id", "doc_id", "relevance"])
    metrics = "nDCG@10,AP,RR,R@100,P@5"
    results = [irboard.evaluate(run, qrels, metrics) for run in (scifact_run, run_dict, run_frame)
               for qrels in (QRELS, qrels_dict, qrels_frame)]
    assert all(result == results[0] for result in results)  # exactly equal, not approximately
    oracle = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.5"})
    per_query = oracle.evaluate(run_dict)
    for ours, theirs in [("nDCG@10", "ndcg_cut_10"), ("AP", "map"), ("RR", "recip_rank"), ("R@100", "recall_100"),
                         ("P@5", "P_5")]:
        expected = sum(per_query.get(q, {}).get(theirs, 0.0) for q in qrels_dict) / len(qrels_dict)
        assert results[0][ours] == pytest.approx(expected, abs=1e-12)


def test_per_query_frame_is_indexed_by_query_id(scifact_run):
    frame = irboard.evaluate(scifact_run, QRELS, ["nDCG@10", "R@100"], per_query=True)
    assert list(frame.columns) == ["nDCG@10", "R@100"] and frame.index.name == "query_id"
    assert len(frame) == 300 and set(frame.index) == set(read_qrels(QRELS).query_ids)
    stored = read_result_file(BM25)
    assert frame["nDCG@10"].to_dict() == stored.values("nDCG@10")  # the stored ranking re-scores exactly


def test_the_same_means_as_the_command_line(scifact_run, tmp_path):
    out = tmp_path / "r.json"
    metrics = "nDCG@10,AP,RR@10,R@100"
    done = subprocess.run([sys.executable, "-m", "leaderboard.cli", "evaluate", "--run", str(scifact_run), "--qrels",
                           str(QRELS), "--model-id", "bm25", "--dataset-id", "local-test/scifact", "--metrics",
                           metrics, "--out", str(out), "--quiet", "--declare"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = read_result_file(out)
    means = irboard.evaluate(scifact_run, QRELS, metrics)
    # the file leaves out AP, which a depth-100 run does not determine (docs/result-format.md, "Depth")
    assert {name: round(value, 10) for name, value in means.items() if name != "AP"} == written.metrics


def test_result_object(tmp_path):
    result = irboard.read_result(BM25)
    assert (result.model_id, result.dataset_id) == ("bm25", "beir/scifact")
    assert result.per_query.shape == (300, len(result.metrics))
    assert result.per_query["nDCG@10"].mean() == pytest.approx(result.metrics["nDCG@10"], abs=1e-9)
    first = next(iter(result.run.values()))
    assert all(a[1] >= b[1] for a, b in zip(first, first[1:], strict=False))


@pytest.mark.parametrize("call, error, words", [
    (lambda: irboard.evaluate({"q": {"d": 1.0}}, {"q": {"d": 1}}, "nDGC@10"), irboard.errors.UnknownNameError,
     "nDGC@10"),
    (lambda: irboard.evaluate({"q": {"d": float("nan")}}, {"q": {"d": 1}}), irboard.errors.InputFormatError,
     "not finite"),
    (lambda: irboard.evaluate(pd.DataFrame({"qid": ["q"]}), {"q": {"d": 1}}), irboard.errors.InputFormatError,
     "query_id, doc_id, score"),
    (lambda: irboard.evaluate(42, {"q": {"d": 1}}), irboard.errors.InputFormatError, "is not a run"),
    (lambda: irboard.read_result(Path("/nonexistent.json")), irboard.errors.IrboardError, "nonexistent"),
])
def test_errors_a_user_can_catch(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


def test_the_docs_examples_run():
    text = (ROOT / "docs" / "api.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for block in blocks:
            exec(compile(block, "docs/api.md", "exec"), {})
    finally:
        os.chdir(cwd)


def test_the_package_is_typed():
    assert (Path(irboard.__file__).parent / "py.typed").exists()
    assert set(irboard.__all__) >= {"evaluate", "read_result", "validate", "build", "predict_recall", "errors"}


def test_compare_uses_the_sites_statistics(scifact_run):
    """irboard.compare on three real SciFact rankings: the numbers are the site's functions' on the same matrix
    (and scipy's paired t-test, Holm-corrected), in a DataFrame, Markdown and LaTeX."""
    import numpy as np
    from scipy import stats as scipy_stats
    from statsmodels.stats.multitest import multipletests

    from leaderboard.analysis.ranks import rank_ranges

    names = ["bm25", "splade-tiny", "sentence-transformers__all-minilm-l6-v2"]
    runs = {name: irboard.read_result(ROOT / "results" / name / "beir__scifact.json").run for name in names}
    runs = {name: {q: dict(ranking) for q, ranking in run.items()} for name, run in runs.items()}
    report = irboard.compare(runs, QRELS, "nDCG@10", baseline="bm25")
    frame = report.to_dataframe()
    assert list(frame["run"]) == names and frame["diff"].isna().tolist() == [True, False, False]
    per_query = {name: irboard.evaluate(run, QRELS, "nDCG@10", per_query=True)["nDCG@10"] for name, run in runs.items()}
    scores = np.stack([per_query[name].to_numpy() for name in names])
    assert frame["mean"].tolist() == pytest.approx(scores.mean(axis=1).tolist(), abs=1e-12)
    raw = [scipy_stats.ttest_rel(scores[i], scores[j]).pvalue for i, j in [(0, 1), (0, 2), (1, 2)]]
    holm = multipletests(raw, method="holm")[1]
    assert frame["p_corrected"].tolist()[1:] == pytest.approx([holm[0], holm[1]], abs=1e-9)
    matrix = np.ones((3, 3))
    for (i, j), p in zip([(0, 1), (0, 2), (1, 2)], holm, strict=True):
        matrix[i, j] = matrix[j, i] = p
    expected = rank_ranges(scores.mean(axis=1), matrix, 0.05)
    assert frame[["rank_best", "rank_worst"]].to_numpy().tolist() == expected.tolist()
    diff = scores[1] - scores[0]
    assert frame["diff"][1] == pytest.approx(diff.mean(), abs=1e-12)
    # the interval of the corrected verdict: the t-interval at level alpha * raw p / corrected p (shown to 4 decimals)
    shown = np.floor(holm[0] * 1e4) / 1e4 if holm[0] < 0.05 else np.ceil(holm[0] * 1e4) / 1e4
    level = 0.05 * raw[0] / shown
    half = scipy_stats.t.isf(level / 2, diff.size - 1) * diff.std(ddof=1) / np.sqrt(diff.size)
    assert (frame["diff_low"][1], frame["diff_high"][1]) == pytest.approx((diff.mean() - half, diff.mean() + half))
    assert (frame["diff_low"][1] > 0 or frame["diff_high"][1] < 0) == (holm[0] < 0.05)
    assert "3 pairs of the 3 runs given" in report.family
    markdown = report.to_markdown()
    assert markdown.count("\n|") == 4 and "Holm" in markdown
    assert "\\begin{tabular}" in report.to_latex() and "sentence-transformers\\_\\_all-minilm-l6-v2" in report.to_latex()
    with pytest.raises(irboard.errors.IrboardError, match="baseline"):
        irboard.compare(runs, QRELS, "nDCG@10", baseline="nope")
    with pytest.raises(irboard.errors.IrboardError, match="correction"):
        irboard.compare(runs, QRELS, "nDCG@10", correction="bonferonni")


def test_a_path_in_any_run_format(scifact_run, tmp_path):
    """A gzipped TREC run and a JSON run dictionary give the plain file's numbers (the formats evaluate --run reads)."""
    import gzip
    import json

    plain = irboard.evaluate(scifact_run, QRELS, "nDCG@10,AP")
    packed = tmp_path / "run.trec.gz"
    packed.write_bytes(gzip.compress(scifact_run.read_bytes()))
    as_json = tmp_path / "run.json"
    as_json.write_text(json.dumps(read_run(scifact_run)))
    assert irboard.evaluate(packed, QRELS, "nDCG@10,AP") == plain
    assert irboard.evaluate(as_json, QRELS, "nDCG@10,AP") == plain


@pytest.mark.slow
def test_evaluate_model_equals_the_command(tmp_path):
    """irboard.evaluate_model and `irboard evaluate --model` give the same per-query values (BM25 on SciFact)."""
    result = irboard.evaluate_model("bm25", "beir/scifact", data_dir=SCIFACT, metrics="nDCG@10,R@100,AP")
    out = tmp_path / "r.json"
    done = subprocess.run([sys.executable, "-m", "leaderboard.cli", "evaluate", "--model", "bm25", "--dataset",
                           "beir/scifact", "--data-dir", str(SCIFACT), "--metrics", "nDCG@10,R@100,AP", "--out",
                           str(out), "--quiet"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = read_result_file(out)
    assert {name: round(value, 10) for name, value in result.metrics.items()} == written.metrics  # file: 10 decimals
    assert result.per_query.to_dict("list") == {m: written.per_query[m].tolist() for m in written.per_query}
    with pytest.raises(irboard.errors.IrboardError, match="engine"):
        irboard.evaluate_model("bm25", "beir/scifact", data_dir=SCIFACT, engine="spark")


def test_the_default_margin_is_the_sites():
    from irboard.comparison import DEFAULT_MARGIN
    from leaderboard.analysis import verdicts

    assert DEFAULT_MARGIN == verdicts.DEFAULT_MARGIN


def test_predict_recall_prints_what_the_command_prints():
    # The same defaults (growth, mode, tail) as `irboard predict`: called with no options, both give one answer.
    import json

    done = subprocess.run([sys.executable, "-m", "leaderboard.cli", "predict", str(BM25), "--docs", "10000000",
                           "--k", "100"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert irboard.predict_recall(BM25, docs=10_000_000, k=100) == json.loads(done.stdout)
