"""Recall at scale on the site: predictions per result, the home and dataset columns, the model page's charts and
the method page. The predictions themselves are checked against leaderboard.scale.recall_curve on the raw file."""

import json
import math
import re
from dataclasses import replace

import numpy as np
import pytest

from evaluator.errors import InputFormatError
from evaluator.result import read_result, result_path
from leaderboard import predictions
from leaderboard.aggregate import ALL_GROUP, SiteSettings, build_leaderboard
from leaderboard.build import BuildError, build_site
from leaderboard.contexts import PredictedValue
from leaderboard.load import load_results, read_loaded
from leaderboard.pages import build_dataset, build_home, build_method, build_model
from leaderboard.predictions import (
    COLUMN_K,
    COLUMN_SIZE,
    DEFAULT_MODE,
    DEFAULT_TAIL,
    Evidence,
    load_evidence,
    predict_result,
)
from leaderboard.render import make_environment
from leaderboard.scale import CannotPredictError, recall_curve

SAMPLED = ("BAAI/bge-m3", "beir/scifact")
TIED = ("naver/splade-v3", "beir/scifact")
PARTIAL = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def board(synth):
    return build_leaderboard(load_results(synth.GOLDEN_RESULTS).results, SiteSettings(), synth.golden_lookup)


def _raw(synth, model_id, dataset_id):
    return read_result(result_path(model_id, dataset_id, synth.GOLDEN_RESULTS))


def _figure(html: str, figure_id: str) -> dict:
    match = re.search(f'<script type="application/json" id="{re.escape(figure_id)}-data">(.*?)</script>', html)
    return json.loads(match.group(1))


def test_only_results_with_score_samples_get_a_prediction(board, synth):
    assert set(board.predictions) == set(synth.SAMPLED_RESULTS)


def test_prediction_is_recall_curve_of_the_stored_samples(board, synth):
    raw = _raw(synth, *SAMPLED)
    num_docs = raw.score_samples.num_docs
    sizes = sorted({10.0**e for e in range(4, 9)} | {float(num_docs)})
    expected = recall_curve(raw, sizes, (10, 100, 1000), mode=DEFAULT_MODE, tail=DEFAULT_TAIL)
    prediction = board.predictions[SAMPLED]
    assert prediction.sizes == tuple(sizes) and prediction.ks == (10, 100, 1000)
    np.testing.assert_allclose(prediction.recall, expected.recall, rtol=0, atol=1e-12)
    assert prediction.value(COLUMN_SIZE, COLUMN_K) == pytest.approx(expected.recall[sizes.index(1e7), 1], abs=1e-12)
    assert prediction.measured == ((100, raw.metrics["R@100"]),)  # R@10 and R@1000 are not in the file
    assert prediction.reason is None and prediction.num_docs == num_docs


def test_tied_scores_give_the_reason_of_the_score_model(board, synth):
    with pytest.raises(CannotPredictError) as caught:
        recall_curve(_raw(synth, *TIED), [1e7], [100], DEFAULT_MODE, DEFAULT_TAIL)
    prediction = board.predictions[TIED]
    assert prediction.recall is None and prediction.value(COLUMN_SIZE, COLUMN_K) is None
    assert prediction.reason == caught.value.reason and "tied" in prediction.reason


def test_site_settings_choose_the_mode_and_tail(synth):
    path = result_path(*SAMPLED, synth.GOLDEN_RESULTS)
    prediction = predict_result(read_loaded(path), mode="per_query", tail="skewnorm")
    expected = recall_curve(_raw(synth, *SAMPLED), prediction.sizes, prediction.ks, "per_query", "skewnorm")
    np.testing.assert_allclose(prediction.recall, expected.recall, rtol=0, atol=1e-12)
    assert (prediction.mode, prediction.tail) == ("per_query", "skewnorm")


def test_home_column_is_the_weighted_mean_only_with_full_coverage(board, synth):
    home = build_home(board)
    assert "model-based" in home.prediction.label and home.prediction.href == "method.html#recall-at-scale"
    overall = next(g for g in board.groups if g.name == ALL_GROUP)
    rows = {row.model_id: row.prediction for row in home.rows}
    values = [board.predictions[("BAAI/bge-m3", d)].column_value for d in overall.dataset_ids]
    expected = math.fsum(w * v for w, v in zip(overall.weights, values, strict=True)) / math.fsum(overall.weights)
    assert rows["BAAI/bge-m3"].mean == pytest.approx(expected, abs=1e-12)
    assert (rows["BAAI/bge-m3"].covered, rows["BAAI/bge-m3"].total) == (10, 10)
    assert (rows[PARTIAL].mean, rows[PARTIAL].covered) == (None, 2)
    assert (rows["naver/splade-v3"].mean, rows["naver/splade-v3"].covered) == (None, 0)  # cannot predict
    assert (rows["bm25"].mean, rows["bm25"].covered) == (None, 0)


def test_dataset_page_column_shows_values_reasons_and_dashes(board, built_site):
    page = build_dataset(board, board.dataset("beir/scifact"))
    cells = {row.model_id: row.prediction for row in page.rows}
    assert cells["bm25"] is None
    assert cells["BAAI/bge-m3"].value == board.predictions[SAMPLED].column_value
    assert cells["naver/splade-v3"].value is None and cells["naver/splade-v3"].reason
    html = (built_site / "datasets" / "beir__scifact.html").read_text()
    assert '<a href="../method.html#recall-at-scale"' in html and "Predicted R@100 @10M docs (model-based)" in html
    assert f"{100 * cells['BAAI/bge-m3'].value:.2f}</td>" in html
    assert "cannot predict: query &#39;SCI-001&#39;: non-relevant scores: " in html
    assert "model-based prediction, not a measurement" in html  # the method line


def test_a_site_without_score_samples_has_no_prediction_columns(synth):
    results = [r for r in load_results(synth.GOLDEN_RESULTS).results if r.score_samples is None]
    board = build_leaderboard(results, SiteSettings(), synth.golden_lookup)
    assert board.predictions == {}
    home = build_home(board)
    assert home.prediction is None and all(row.prediction is None for row in home.rows)
    assert build_dataset(board, board.dataset("beir/scifact")).prediction is None
    html = make_environment().get_template("home.html").render(ctx=home)
    assert "Predicted R@100" not in html and 'data-key="pred"' not in html


def test_model_page_draws_a_log_axis_chart_per_dataset_with_measured_points(board, built_site, synth):
    html = (built_site / "models" / "baai__bge-m3.html").read_text()
    assert html.count('<div class="plot" id="fig-scale-') == len(synth.GOLDEN_DATASETS)
    figure = _figure(html, "fig-scale-beir__scifact")
    prediction = board.predictions[SAMPLED]
    assert figure["layout"]["xaxis"]["type"] == "log" and "model-based prediction" in figure["layout"]["title"]["text"]
    lines = [trace for trace in figure["data"] if trace["mode"] == "lines+markers"]
    assert [trace["name"] for trace in lines] == ["predicted R@10", "predicted R@100", "predicted R@1000"]
    assert lines[1]["x"] == list(prediction.sizes)
    assert lines[1]["y"] == [round(100 * v, 2) for v in prediction.recall[:, 1]]
    (measured,) = [trace for trace in figure["data"] if trace["mode"] == "markers"]
    assert measured["x"] == [float(prediction.num_docs)]
    assert measured["y"] == [round(100 * _raw(synth, *SAMPLED).metrics["R@100"], 2)]
    assert '<a href="../method.html#recall-at-scale">Method and measured error</a>' in html


def test_model_without_samples_has_no_prediction_and_no_error(board, built_site):
    model = next(m for m in board.models if m.info.id == "bm25")
    context = build_model(board, model)
    assert context.scale is None and all(row.prediction is None for row in context.rows)
    html = (built_site / "models" / "bm25.html").read_text()
    assert 'id="recall-at-scale"' not in html and "cannot predict" not in html and "fig-scale-" not in html


def test_model_that_cannot_be_predicted_says_why_without_a_chart(board, built_site):
    context = build_model(board, next(m for m in board.models if m.info.id == "naver/splade-v3"))
    assert context.scale.figures == () and context.scale.rows == ()
    assert context.scale.problems == (("beir/scifact", board.predictions[TIED].reason),)
    html = (built_site / "models" / "naver__splade-v3.html").read_text()
    assert "<li>beir/scifact: cannot predict: query &#39;SCI-001&#39;: non-relevant scores:" in html


def test_reasons_are_escaped(board):
    page = build_dataset(board, board.dataset("beir/scifact"))
    index = next(i for i, row in enumerate(page.rows) if row.prediction and row.prediction.reason)
    rows = list(page.rows)
    rows[index] = replace(rows[index], prediction=PredictedValue(None, "<script>alert('reason')</script>"))
    html = make_environment().get_template("dataset.html").render(ctx=replace(page, rows=tuple(rows)))
    assert "cannot predict: &lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt;" in html
    assert "<script>alert" not in html


def test_downloads_carry_the_prediction_and_its_problem(built_site, board):
    data = json.loads((built_site / "downloads" / "datasets" / "beir__scifact.json").read_text())
    rows = {row["model_id"]: row for row in data["rows"]}
    label = "Predicted R@100 @10M docs (model-based)"
    assert rows["BAAI/bge-m3"][label] == round(board.predictions[SAMPLED].column_value, 6)
    assert rows["naver/splade-v3"][label] is None and "tied" in rows["naver/splade-v3"]["prediction_problem"]
    assert rows["bm25"][label] is None and rows["bm25"]["prediction_problem"] is None
    home = json.loads((built_site / "downloads" / "leaderboard.json").read_text())
    covered = {row["model_id"]: row["prediction datasets_covered"] for row in home["rows"]}
    assert covered["BAAI/bge-m3"] == 10 and covered[PARTIAL] == 2 and covered["bm25"] == 0


EVIDENCE = {
    "description": "Fitted on 10% of <SciFact>, predicted at the full size.",
    "rows": [
        {"model": "dense:<b>m</b>", "extrapolation": 9.6, "measured": {"10": 0.7, "100": 0.9},
         "errors": {"pooled/hybrid": {"10": 0.031, "100": None}, "per_query/hybrid": {"10": 0.012, "100": 0.004}},
         "cannot_predict": {}},
        {"model": "bm25", "extrapolation": 9.6, "measured": {"10": 0.6, "100": 0.8}, "errors": {},
         "cannot_predict": {"pooled/hybrid": "relevant scores: <tied>"}},
    ],
}


def test_method_page_renders_the_measured_errors(board):
    context = build_method(board, Evidence.model_validate(EVIDENCE))
    assert context.evidence_ks == (10, 100) and context.variant == f"{DEFAULT_MODE}/{DEFAULT_TAIL}"
    dense = context.evidence[0]
    assert [v.variant for v in dense.variants] == ["pooled/hybrid", "per_query/hybrid"]
    assert dense.variants[0].errors == (0.031, None) and dense.measured == (0.7, 0.9)
    assert [v.used for v in dense.variants] == [False, True]
    html = make_environment().get_template("method.html").render(ctx=context)
    assert 'id="recall-at-scale"' in html and "No measurements yet" not in html
    assert "dense:&lt;b&gt;m&lt;/b&gt;" in html and "&lt;SciFact&gt;" in html
    assert "cannot predict: relevant scores: &lt;tied&gt;" in html
    assert '<td class="num">3.10</td><td class="num">–</td>' in html
    assert "<b>m</b>" not in html and "<tied>" not in html


def test_method_page_without_measurements_says_so(board):
    context = build_method(board, Evidence(description="none yet", rows=[]))
    html = make_environment().get_template("method.html").render(ctx=context)
    assert "No measurements yet." in html and 'id="recall-at-scale"' in html
    assert f"{DEFAULT_MODE} mode with the {DEFAULT_TAIL} tail" in html


def test_built_method_page_shows_the_committed_evidence(built_site):
    html = (built_site / "method.html").read_text()
    rows = load_evidence().rows
    assert rows and "No measurements yet." not in html
    assert all(row.model in html for row in rows)
    assert '<a href="method.html" aria-current="page">Method</a>' in html


def test_evidence_file_loads_and_bad_files_name_the_field(tmp_path):
    evidence = load_evidence(predictions.EVIDENCE_FILE)
    assert evidence.description and {row.model for row in evidence.rows} >= {"sentence-transformers/all-MiniLM-L6-v2"}
    bad = tmp_path / "evidence.json"
    bad.write_text(json.dumps({"description": "x", "rows": [{"model": "m", "extrapolation": "far"}]}))
    with pytest.raises(InputFormatError, match=r"evidence.json: rows\.0\.extrapolation"):
        load_evidence(bad)
    bad.write_text("{")
    with pytest.raises(InputFormatError, match="invalid JSON"):
        load_evidence(bad)


def test_samples_that_do_not_decode_reject_their_result_and_fail_the_build(tmp_path, results_copy, synth):
    path = result_path("BAAI/bge-m3", "custom/tiny", results_copy)
    data = json.loads(path.read_text())
    data["score_samples"]["codes"] = "AAAA"  # valid base64, not zlib
    path.write_text(json.dumps(data))
    problems = load_results(results_copy).problems
    assert len(problems) == 1 and str(path) in problems[0] and "score_samples.codes: not zlib data" in problems[0]
    with pytest.raises(BuildError, match="not zlib data"):
        build_site(results_copy, tmp_path / "_site", lookup=synth.golden_lookup)
