"""A prediction from score samples that could not be checked (no stored ranking to check them against) is shown
unverified like a metric wherever predictions appear: the home column, dataset pages and their crossings, model
pages (table and chart caption), their downloads, and the home rows that data/board.js builds in Chromium."""

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from evaluator.result import dump_result, read_result, result_path
from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.analysis.predictions import DEFAULT_GROWTH, Evidence
from leaderboard.submissions.load import load_results
from leaderboard.web.build import build_site
from leaderboard.web.render import make_environment
from leaderboard.web.views.dataset import build as build_dataset
from leaderboard.web.views.scale import COLUMN_LABEL, UNCHECKED_WORDS, unchecked_predictions

FULL = "BAAI/bge-m3"  # a prediction on every dataset: the home column shows its mean
PARTIAL = "sentence-transformers/all-MiniLM-L6-v2"
UNRANKED = ((FULL, "classic/cranfield"), (PARTIAL, "beir/scifact"))  # their rankings are taken out
MARK = '<span class="unv" title="not checked: its score samples were not checked against a stored ranking">*</span>'


@pytest.fixture(scope="module")
def site(synth, tmp_path_factory):
    """The golden results, verified as the golden build declares, with the rankings of UNRANKED taken out: their
    samples stay (so they are predicted from) but nothing can check them. (board, built site)"""
    results = tmp_path_factory.mktemp("unchecked") / "results"
    shutil.copytree(synth.GOLDEN_RESULTS, results)
    for key in UNRANKED:
        path = result_path(*key, results)
        path.write_text(dump_result(replace(read_result(path), run=None)))
    board = build_leaderboard(load_results(results, is_verified=synth.golden_verification).results, SiteSettings(),
                              synth.golden_lookup)
    out = tmp_path_factory.mktemp("unchecked-site") / "_site"
    build_site(results, out, strict=False, is_verified=synth.golden_verification, lookup=synth.golden_lookup)
    return board, out


def _cell(html: str, value: float) -> str:
    """The table cell that shows `value` ×100 (two decimals), up to its end."""
    found = re.search(rf'<td class="(?:num |)pred">{100 * value:.2f}(.*?)</td>', html)
    assert found, f"{100 * value:.2f} not shown"
    return found.group(1)


def test_only_the_predictions_without_a_checked_ranking_are_unchecked(site):
    board, _ = site
    assert unchecked_predictions(board) == frozenset(UNRANKED)
    assert all(key in board.predictions for key in UNRANKED)


def test_dataset_page_marks_the_unchecked_prediction_only(site):
    board, out = site
    html = (out / "datasets" / "beir__scifact.html").read_text()
    assert _cell(html, board.predictions[(PARTIAL, "beir/scifact")].column_value).startswith(MARK)
    assert _cell(html, board.predictions[(FULL, "beir/scifact")].column_value) == ""
    rows = {row["model_id"]: row for row in
            json.loads((out / "downloads" / "datasets" / "beir__scifact.json").read_text())["rows"]}
    assert COLUMN_LABEL in rows[PARTIAL]["unverified"] and COLUMN_LABEL not in (rows[FULL]["unverified"] or "")


def test_model_page_marks_every_predicted_value_of_the_unchecked_dataset(site):
    board, out = site
    html = (out / "models" / "sentence-transformers__all-minilm-l6-v2.html").read_text()
    table = html[html.index('id="scale-caption"'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr>\n<th scope=\"row\">([^<]+)</th>(.*?)</tr>", table, re.S)
    assert {dataset for dataset, _ in rows} == {"beir/scifact", "beir/nfcorpus"}
    for dataset, cells in rows:
        values = re.findall(r'<td class="num pred">([^<]*)(.*?)</td>', cells)
        assert values[0][0].startswith("±")  # the method's measured error, then the predictions
        predicted = values[1:]  # at its own size, then every chart size
        assert predicted and all((rest == MARK + '<span class="sr"> (not checked)</span>') == (
            dataset == "beir/scifact") for _, rest in predicted), dataset
    assert f"beir/scifact: predicted Recall@k against corpus size in both growth scenarios (model-based " \
           f"prediction); {UNCHECKED_WORDS}" in html
    # the chart picker's titles: the checked dataset's says nothing of checks
    assert 'data-title="beir/nfcorpus: predicted Recall@k against corpus size in both growth scenarios ' \
           '(model-based prediction)"' in html
    rows = {row["dataset_id"]: row for row in
            json.loads((out / "downloads" / "models" / "sentence-transformers__all-minilm-l6-v2.json").read_text())[
                "rows"]}
    assert COLUMN_LABEL in rows["beir/scifact"]["unverified"]
    assert COLUMN_LABEL not in (rows["beir/nfcorpus"]["unverified"] or "")


def test_home_column_marks_a_mean_that_holds_an_unchecked_prediction(site):
    board, out = site
    html = (out / "index.html").read_text()
    home = {row["model_id"]: row for row in json.loads((out / "downloads" / "leaderboard.json").read_text())["rows"]}
    mean = home[FULL][f"{COLUMN_LABEL}, {DEFAULT_GROWTH} growth, mean over all 10 datasets"]
    assert mean is not None and COLUMN_LABEL in home[FULL]["unverified"]
    cell = _cell(html, mean)  # the prediction, its error, then the mark: "27.36 ±0.75*"
    assert "</small>" + MARK in cell and cell.index("±") < cell.index(MARK)
    script = (out / "data" / "board.js").read_text()
    data = json.loads(script[script.index("d.board = ") + len("d.board = "):script.index(";\n}")])
    (row,) = [row for row in data["rows"] if row[0] == FULL]
    assert row[8] == [f"{100 * mean:.2f}*", 0, re.search(r"±([0-9.]+)<", cell)[1]]  # the same error as the cell
    marked = [row[0] for row in data["rows"] if row[8] and row[8][0].endswith("*")]
    assert marked == [FULL]  # the partial model has no mean, the others only checked predictions


def test_crossings_mark_the_model_whose_samples_were_not_checked(site):
    board, _ = site
    first, second = (FULL, "beir/scifact"), (PARTIAL, "beir/scifact")
    sizes = np.array(board.predictions[first].sizes)
    own = board.predictions[first].num_docs
    curves = {first: 0.8 - 0.03 * np.log10(sizes / own), second: 0.75 - 0.01 * np.log10(sizes / own)}
    predictions = dict(board.predictions)
    for key, curve in curves.items():
        recall = {growth: matrix.copy() for growth, matrix in predictions[key].recall.items()}
        recall[DEFAULT_GROWTH][:, 1] = curve
        predictions[key] = replace(predictions[key], recall=recall)
    evidence = Evidence.model_validate({"description": "d", "rows": [], "summary": {
        DEFAULT_GROWTH: {"sdm": {"10": 0.01, "100": 0.012, "1000": 0.003}}}})
    page = build_dataset(replace(board, predictions=predictions), board.dataset("beir/scifact"), evidence)
    (crossing,) = [c for c in page.crossings.crossings if {c.leader, c.follower} == {FULL, PARTIAL}]
    assert (crossing.leader_checked, crossing.follower_checked) == (True, False)
    html = make_environment().get_template("dataset.html").render(ctx=page)
    assert f"{PARTIAL}</a>{MARK}" in html and f"{FULL}</a> beyond" in html


@pytest.mark.browser
def test_chromium_shows_the_mark_in_the_home_rows_board_js_builds(site, page):
    """table.js replaces the page's rows by those data/board.js builds: the mark must survive that."""
    _, out = site
    page.goto((out / "index.html").as_uri())
    cell = page.locator(f'#board tr[data-id="{FULL.lower()}"] td.pred')
    assert cell.locator(".unv").get_attribute("title") == \
        "not checked: its score samples were not checked against a stored ranking"
    assert page.locator("#board td.pred .unv").count() == 1


def test_method_page_says_what_the_checks_miss_and_how_far_a_prediction_can_move(site):
    """The figures of benchmarks/sample_attacks.py (benchmarks/README.md) and the density margin, in the method."""
    _, out = site
    html = (out / "method.html").read_text()
    for words in ("What the checks cannot see", "up to about a fifth", "+23% at most in these measurements",
                  "the lowest such ratio measured on honest results", "needs no assumption about any distribution",
                  "marked * like a metric not re-scored, on every page and download that shows it"):
        assert words in html, words
    readme = (Path(__file__).resolve().parents[3] / "benchmarks" / "README.md").read_text()
    assert "| the sample below the widest window collapsed onto its minimum | −23 to +23% | 0 of 16 |" in readme
