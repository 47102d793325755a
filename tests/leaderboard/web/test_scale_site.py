"""Recall at scale on the site: predictions per result, the home and dataset columns, the model page's charts, the
dataset page's crossings and the method page. The predictions themselves are checked against
leaderboard.analysis.scale.forecasts on the raw file; the pages get them as data and never fit anything."""

import json
import math
import re
import shutil
from dataclasses import replace

import numpy as np
import pytest

from evaluator.errors import InputFormatError
from evaluator.result import dump_result, read_result, result_path
from leaderboard.analysis import predictions
from leaderboard.analysis.aggregate import ALL_GROUP, SiteSettings, build_leaderboard
from leaderboard.analysis.predictions import (
    COLUMN_K,
    COLUMN_SIZE,
    CURVE_SIZES,
    DEFAULT_GROWTH,
    DEFAULT_MODE,
    DEFAULT_TAIL,
    Evidence,
    load_evidence,
    predict_result,
)
from leaderboard.analysis.scale import GROWTHS, forecasts
from leaderboard.submissions.load import load_results, read_loaded
from leaderboard.web.build import BuildError, build_site
from leaderboard.web.contexts import PredictedValue
from leaderboard.web.render import make_environment
from leaderboard.web.views.dataset import build as build_dataset
from leaderboard.web.views.home import build as build_home
from leaderboard.web.views.method import build as build_method
from leaderboard.web.views.model import build as build_model

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


def test_prediction_is_the_forecast_of_the_stored_samples_in_both_scenarios(board, synth):
    raw = _raw(synth, *SAMPLED)
    num_docs = raw.score_samples.num_docs
    sizes = sorted({10.0**e for e in range(4, 9)} | set(CURVE_SIZES) | {float(num_docs)})
    expected = forecasts(raw, sizes, (10, 100, 1000), mode=DEFAULT_MODE, tail=DEFAULT_TAIL)
    prediction = board.predictions[SAMPLED]
    assert prediction.sizes == tuple(sizes) and prediction.ks == (10, 100, 1000)
    assert set(prediction.recall) == set(GROWTHS)
    for growth in GROWTHS:
        np.testing.assert_allclose(prediction.recall[growth], expected[growth].recall, rtol=0, atol=1e-12)
    column = expected[DEFAULT_GROWTH].recall[sizes.index(1e7), 1]
    assert prediction.value(COLUMN_SIZE, COLUMN_K) == pytest.approx(column, abs=1e-12)
    assert prediction.measured == ((100, raw.metrics["R@100"]),)  # R@10 and R@1000 are not in the file
    assert prediction.reason is None and prediction.num_docs == num_docs


def test_sparse_scores_with_a_tie_mass_get_a_prediction(board):
    prediction = board.predictions[TIED]
    assert prediction.reason is None and prediction.value(COLUMN_SIZE, COLUMN_K) is not None
    assert prediction.queries + prediction.n_dropped == 30


def test_site_settings_choose_the_mode(synth):
    path = result_path(*SAMPLED, synth.GOLDEN_RESULTS)
    prediction = predict_result(read_loaded(path), mode="rank")
    expected = forecasts(_raw(synth, *SAMPLED), prediction.sizes, prediction.ks, "rank")
    np.testing.assert_allclose(prediction.recall["uniform"], expected["uniform"].recall, rtol=0, atol=1e-12)
    assert prediction.mode == "rank"


@pytest.fixture(scope="module")
def unmodellable(synth, tmp_path_factory):
    """A copy of the results where naver/splade-v3's SciFact samples leave 5 scores above the zeros of every query
    and its relevant scores above those: no query can be modelled. (board, built site)"""
    results = tmp_path_factory.mktemp("unmodellable") / "results"
    shutil.copytree(synth.GOLDEN_RESULTS, results)
    path = result_path(*TIED, results)
    result = read_result(path)
    samples = result.score_samples
    queries = {qid: replace(q, relevant=np.full(q.n_relevant, 9.0),
                               nonrelevant=np.r_[np.zeros(q.nonrelevant.size - 5), 1.0, 2.0, 3.0, 4.0, 5.0])
               for qid, q in samples.queries.items()}
    path.write_text(dump_result(replace(result, score_samples=replace(samples, queries=queries))))
    board = build_leaderboard(load_results(results).results, SiteSettings(), synth.golden_lookup)
    out = tmp_path_factory.mktemp("unmodellable-site") / "_site"
    build_site(results, out, strict=True, lookup=synth.golden_lookup)
    return board, out


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
    assert (rows["naver/splade-v3"].mean, rows["naver/splade-v3"].covered) == (None, 1)
    assert (rows["bm25"].mean, rows["bm25"].covered) == (None, 0)


def test_dataset_page_column_shows_values_reasons_and_dashes(unmodellable):
    board, site = unmodellable
    page = build_dataset(board, board.dataset("beir/scifact"))
    cells = {row.model_id: row.prediction for row in page.rows}
    assert cells["bm25"] is None
    assert cells["BAAI/bge-m3"].value == board.predictions[SAMPLED].column_value
    assert cells["naver/splade-v3"].value is None and cells["naver/splade-v3"].reason
    html = (site / "datasets" / "beir__scifact.html").read_text()
    assert '<a href="../method.html#recall-at-scale"' in html and "Predicted R@100 @10M docs (model-based)" in html
    # built without judgments: no result is verified, so its prediction is marked as an unverified metric is
    assert f'{100 * cells["BAAI/bge-m3"].value:.2f}<span class="unv"' in html
    assert "cannot predict: no query could be modelled (30 fewer than 11 sampled scores above the tie mass" in html
    assert "model-based prediction, not a measurement" in html  # the method line


def test_a_site_without_score_samples_has_no_prediction_columns(synth):
    results = [r for r in load_results(synth.GOLDEN_RESULTS).results if r.score_samples is None]
    board = build_leaderboard(results, SiteSettings(), synth.golden_lookup)
    assert board.predictions == {}
    home = build_home(board)
    assert home.prediction is None and all(row.prediction is None for row in home.rows)
    page = build_dataset(board, board.dataset("beir/scifact"))
    assert page.prediction is None and page.crossings is None
    html = make_environment().get_template("home.html").render(ctx=home)
    assert "Predicted R@100" not in html and 'data-key="pred"' not in html


def test_model_page_draws_both_growth_scenarios_on_a_log_axis_with_measured_points(board, built_site, synth):
    html = (built_site / "models" / "baai__bge-m3.html").read_text()
    # one chart with a dataset picker, each dataset's figure in a JSON block the picker names
    assert html.count('<div class="plot" id="fig-scale"') == 1
    assert html.count('<script type="application/json" id="fig-scale-') == len(synth.GOLDEN_DATASETS)
    assert html.count('<option value="fig-scale-') == len(synth.GOLDEN_DATASETS)
    figure = _figure(html, "fig-scale-beir__scifact")
    prediction = board.predictions[SAMPLED]
    assert figure["layout"]["xaxis"]["type"] == "log" and "model-based prediction" in figure["layout"]["title"]["text"]
    lines = [trace for trace in figure["data"] if trace["mode"] == "lines"]
    assert [trace["name"] for trace in lines] == [f"R@{k}, {g}" for g in ("fixed-relevant", "uniform")
                                                 for k in (10, 100, 1000)]
    assert [trace["line"]["dash"] for trace in lines] == ["solid"] * 3 + ["dash"] * 3
    assert lines[1]["x"] == list(prediction.sizes) and min(lines[1]["x"]) <= 1e4 and max(lines[1]["x"]) == 1e8
    assert lines[1]["y"] == [round(100 * v, 2) for v in prediction.recall["fixed-relevant"][:, 1]]
    assert lines[4]["y"] == [round(100 * v, 2) for v in prediction.recall["uniform"][:, 1]]
    (measured,) = [trace for trace in figure["data"] if trace["mode"] == "markers"]
    assert measured["x"] == [float(prediction.num_docs)]
    assert measured["y"] == [round(100 * _raw(synth, *SAMPLED).metrics["R@100"], 2)]
    assert '<a href="../method.html#recall-at-scale">Method and measured error</a>' in html
    assert "<td>uniform</td>" in html and "<td>fixed-relevant</td>" in html


def test_model_without_samples_has_no_prediction_and_no_error(board, built_site):
    model = next(m for m in board.models if m.info.id == "bm25")
    context = build_model(board, model)
    assert context.scale is None and all(row.prediction is None for row in context.rows)
    html = (built_site / "models" / "bm25.html").read_text()
    assert 'id="recall-at-scale"' not in html and "cannot predict" not in html and "fig-scale-" not in html


def test_model_that_cannot_be_predicted_says_why_without_a_chart(unmodellable):
    board, site = unmodellable
    context = build_model(board, next(m for m in board.models if m.info.id == "naver/splade-v3"))
    assert context.scale.figures == () and context.scale.rows == ()
    assert context.scale.problems == (("beir/scifact", board.predictions[TIED].reason),)
    html = (site / "models" / "naver__splade-v3.html").read_text()
    assert "<li>beir/scifact: cannot predict: no query could be modelled" in html


def test_dropped_queries_are_counted_on_the_model_page(board, synth):
    prediction = replace(board.predictions[SAMPLED], dropped=(("the sampled scores of the tail are all tied", 2),))
    predictions = {**board.predictions, SAMPLED: prediction}
    changed = replace(board, predictions=predictions)
    context = build_model(changed, next(m for m in board.models if m.info.id == SAMPLED[0]))
    assert context.scale.dropped == (("beir/scifact", 2, prediction.queries + 2,
                                      "2: the sampled scores of the tail are all tied"),)
    html = make_environment().get_template("model.html").render(ctx=context)
    assert f"beir/scifact: 2 of {prediction.queries + 2} queries left out of the prediction" in html


def test_reasons_are_escaped(board):
    page = build_dataset(board, board.dataset("beir/scifact"))
    index = next(i for i, row in enumerate(page.rows) if row.prediction)
    rows = list(page.rows)
    rows[index] = replace(rows[index], prediction=PredictedValue(None, "<script>alert('reason')</script>"))
    html = make_environment().get_template("dataset.html").render(ctx=replace(page, rows=tuple(rows)))
    assert "cannot predict: &lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt;" in html
    assert "<script>alert" not in html


def test_downloads_carry_the_prediction_and_its_problem(unmodellable):
    board, site = unmodellable
    data = json.loads((site / "downloads" / "datasets" / "beir__scifact.json").read_text())
    rows = {row["model_id"]: row for row in data["rows"]}
    label = "Predicted R@100 @10M docs (model-based)"
    assert rows["BAAI/bge-m3"][label] == round(board.predictions[SAMPLED].column_value, 6)
    assert rows["naver/splade-v3"][label] is None and "no query" in rows["naver/splade-v3"]["prediction_problem"]
    assert rows["bm25"][label] is None and rows["bm25"]["prediction_problem"] is None
    home = json.loads((site / "downloads" / "leaderboard.json").read_text())
    covered = {row["model_id"]: row["prediction datasets_covered"] for row in home["rows"]}
    assert covered["BAAI/bge-m3"] == 10 and covered[PARTIAL] == 2 and covered["bm25"] == 0


def _with_curve(prediction, column, values):
    """The prediction with its fixed-relevant Recall@100 curve replaced by `values` (one per size)."""
    recall = {growth: matrix.copy() for growth, matrix in prediction.recall.items()}
    recall[DEFAULT_GROWTH][:, column] = values
    return replace(prediction, recall=recall)


def test_dataset_page_shows_where_predicted_curves_cross_with_the_measured_error(board):
    first, second = SAMPLED, (PARTIAL, "beir/scifact")
    sizes = np.array(board.predictions[first].sizes)
    own = board.predictions[first].num_docs
    # The leader starts 5 points ahead and loses 3 points per decade, the follower 1: they cross 2.5 decades up.
    leader = 0.8 - 0.03 * np.log10(sizes / own)
    follower = 0.75 - 0.01 * np.log10(sizes / own)
    predictions = {**board.predictions, first: _with_curve(board.predictions[first], 1, leader),
                   second: _with_curve(board.predictions[second], 1, follower)}
    evidence = Evidence.model_validate({"description": "d", "rows": [], "summary": {
        DEFAULT_GROWTH: {DEFAULT_MODE: {"10": 0.01, "100": 0.012, "1000": 0.003}}}})
    page = build_dataset(replace(board, predictions=predictions), board.dataset("beir/scifact"), evidence)
    (crossing,) = [c for c in page.crossings.crossings if {c.leader, c.follower} == {first[0], second[0]}]
    assert (crossing.leader, crossing.follower) == (first[0], second[0])
    assert crossing.size == pytest.approx(own * 10 ** 2.5, rel=0.02)  # log-linear between grid sizes
    assert crossing.gap_at_own_size == pytest.approx(0.05)
    assert page.crossings.error == 0.012 and page.crossings.k == COLUMN_K
    html = make_environment().get_template("dataset.html").render(ctx=page)
    # loaded without judgments, no sample was checked: both models' names carry the unverified mark
    assert f"{PARTIAL}</a><span class=\"unv\"" in html and "the method's measured error at R@100: ±1.20" in html


def test_crossings_are_among_the_best_predicted_models_only(board, monkeypatch):
    """With more predicted models than CROSSING_MODELS, only pairs among those with the highest predicted R@k at
    the dataset's own size are compared (all pairs of 1,000 models would be a million curves a dataset)."""
    from leaderboard.web.views import scale as scale_view

    dataset = board.dataset("beir/scifact")
    found = [p for m in dataset.model_ids if (p := board.predictions.get((m, "beir/scifact"))) and p.recall is not None]
    assert len(found) >= 3
    first, second = SAMPLED, (PARTIAL, "beir/scifact")
    sizes = np.array(board.predictions[first].sizes)
    own = board.predictions[first].num_docs
    predictions = {**board.predictions,
                   first: _with_curve(board.predictions[first], 1, 1.99 - 0.03 * np.log10(sizes / own)),
                   second: _with_curve(board.predictions[second], 1, 1.98 - 0.01 * np.log10(sizes / own))}
    monkeypatch.setattr(scale_view, "CROSSING_MODELS", 2)  # (values above 1 put the two first, whatever the rest)
    page = build_dataset(replace(board, predictions=predictions), dataset, None)
    assert {(c.leader, c.follower) for c in page.crossings.crossings} == {(first[0], second[0])}
    assert f"of the 2 models with the highest predicted Recall@{COLUMN_K} at the dataset's own size (of " \
        f"{len(found)})" in page.crossings.note


def test_pages_get_predictions_as_data_and_never_fit(board, synth, monkeypatch, tmp_path):
    """Rendering every page from a board whose predictions were computed leaves the fitting code untouched."""
    from leaderboard.analysis import scale, scale_query
    from leaderboard.web.build import render_site

    def refuse(*args, **kwargs):
        raise AssertionError("a page builder called into the fitting code")

    for module, name in ((scale, "forecasts"), (scale, "forecast"), (scale_query, "fit_queries"),
                         (scale_query, "query_recall"), (scale, "fit_score_model"), (predictions, "forecasts")):
        monkeypatch.setattr(module, name, refuse)
    files, pages = render_site(board)
    assert pages > 10 and any(path.startswith("models/") for path in files.files)


EVIDENCE = {
    "description": "Sub-corpora of <SciFact>, predicted at the full size.",
    "fractions": [0.1], "seeds": 2,
    "summary": {"fixed-relevant": {"per_query": {"10": 0.012, "100": 0.004}, "rank": {"10": 0.02, "100": 0.005},
                                   "pooled": None},
                "uniform": {"per_query": {"10": 0.05, "100": 0.03}, "rank": {"10": 0.04, "100": 0.03}}},
    "rows": [
        {"dataset": "beir/scifact", "model": "dense:<b>m</b>", "growth": "fixed-relevant",
         "measured": {"10": 0.7, "100": 0.9}, "dropped": 0.0,
         "errors": {"per_query": {"10": 0.012, "100": 0.004}, "rank": {"10": 0.031, "100": 0.005}, "pooled": None},
         "cannot_predict": {"pooled": "relevant scores: <tied>"}},
        {"dataset": "beir/scifact", "model": "bm25", "growth": "uniform", "measured": {"10": 0.6, "100": 0.8},
         "dropped": 0.02, "errors": {"per_query": {"10": 0.05, "100": 0.03}}},
    ],
}


def test_method_page_renders_the_measured_errors(board):
    context = build_method(board, Evidence.model_validate(EVIDENCE))
    assert context.evidence_ks == (10, 100) and context.mode == DEFAULT_MODE and context.growth == DEFAULT_GROWTH
    dense = context.evidence[0]
    assert [v.variant for v in dense.variants] == ["per_query", "pooled", "rank"]
    assert dense.variants[0].errors == (0.012, 0.004) and dense.measured == (0.7, 0.9)
    assert [v.used for v in dense.variants] == [True, False, False]
    assert dense.variants[1].reason == "relevant scores: <tied>"
    (fixed, uniform) = context.summary
    assert fixed.growth == "fixed-relevant" and fixed.variants[2].errors == (0.02, 0.005)
    html = make_environment().get_template("method.html").render(ctx=context)
    assert 'id="recall-at-scale"' in html and "No measurements yet" not in html
    assert "dense:&lt;b&gt;m&lt;/b&gt;" in html and "&lt;SciFact&gt;" in html
    assert "cannot predict: relevant scores: &lt;tied&gt;" in html
    assert '<td class="num">1.20</td><td class="num">0.40</td>' in html
    assert "<b>m</b>" not in html and "<tied>" not in html
    assert "fixed-relevant</strong>" in html and "uniform</strong>" in html


def test_method_page_without_measurements_says_so(board):
    context = build_method(board, Evidence(description="none yet", rows=[]))
    html = make_environment().get_template("method.html").render(ctx=context)
    assert "No measurements yet." in html and 'id="recall-at-scale"' in html
    assert "The per-query model (used on this site)" in html


def test_built_method_page_shows_the_committed_evidence(built_site):
    html = (built_site / "method.html").read_text()
    evidence = load_evidence()
    assert evidence.rows and "No measurements yet." not in html
    assert all(row.model in html and row.dataset in html for row in evidence.rows)
    assert {row.growth for row in evidence.rows} == set(GROWTHS)
    assert '<a href="method.html" aria-current="page">Method</a>' in html


def test_evidence_file_loads_and_bad_files_name_the_field(tmp_path):
    evidence = load_evidence(predictions.EVIDENCE_FILE)
    assert evidence.description and {row.model for row in evidence.rows} >= {"sentence-transformers/all-MiniLM-L6-v2",
                                                                             "bm25", "splade-tiny"}
    assert {row.dataset for row in evidence.rows} == {"beir/scifact", "classic/cranfield", "classic/cisi",
                                                      "classic/cacm"}
    for growth in GROWTHS:
        for k in (10, 100, 1000):
            assert evidence.error(growth, DEFAULT_MODE, k) is not None
    bad = tmp_path / "evidence.json"
    bad.write_text(json.dumps({"description": "x", "rows": [{"model": "m", "dataset": "d", "growth": "uniform",
                                                             "measured": {}, "errors": {}, "dropped": "many"}]}))
    with pytest.raises(InputFormatError, match=r"evidence.json: rows\.0\.dropped"):
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


def test_a_reason_quoting_the_builders_path_is_cut_on_the_model_page(board):
    """A result whose samples could not be read gives the reason with the loader's error, which names the file by
    the path the builder read it from; the model page keeps the file's last part only."""
    key = ("BAAI/bge-m3", "beir/scifact")
    reason = f"{predictions.UNREADABLE} (/home/builder/checkout/results/baai__bge-m3/beir__scifact.json: bad)"
    unreadable = replace(board, predictions={**board.predictions,
                                             key: replace(board.predictions[key], recall=None, reason=reason)})
    model = next(m for m in board.models if m.info.id == key[0])
    problems = dict(build_model(unreadable, model).scale.problems)
    assert problems["beir/scifact"] == f"{predictions.UNREADABLE} (…/beir__scifact.json: bad)"
