"""Predictions are shown as predictions: wherever a predicted recall appears (the home column, a dataset page's
column, a model page's table) it carries the method's measured error from leaderboard/analysis/scale_evidence.json,
its cells are set apart from measured ones (class pred), and the home column's header takes no more lines than a
group mean's (measured in Chromium at 1366 px)."""

from __future__ import annotations

import csv
import re

import pytest
from playwright.sync_api import Page

from leaderboard.analysis.aggregate import SiteSettings
from leaderboard.analysis.predictions import COLUMN_K, GROWTHS, load_evidence

SETTINGS = SiteSettings()


def _error(growth: str = SETTINGS.scale_growth, k: int = COLUMN_K) -> str:
    return f"±{100 * load_evidence().error(growth, SETTINGS.scale_mode, k):.2f}"


def test_home_and_dataset_columns_state_the_methods_error(built_site):
    for path in ("index.html", "datasets/beir__scifact.html"):
        html = (built_site / path).read_text()
        header = re.search(r'<th scope="col"[^>]* class="pred"[^>]*>(.*?)</th>', html, re.S).group(1)
        assert f"model-based, {_error()}" in header, path
        assert header.count("<br>") == 1  # two lines: what is predicted, and how far off the method was


def test_model_page_gives_each_rows_error(built_site):
    html = (built_site / "models" / "baai__bge-m3.html").read_text()
    table = html[html.index('id="scale-caption"'):]
    rows = re.findall(r'<td class="num">R@(\d+)</td>\n<td>([a-z-]+)</td>.*?<td class="num pred">([^<]*)</td>',
                      table[:table.index("</table>")], re.S)
    assert rows and {growth for _, growth, _ in rows} == set(GROWTHS)
    for k, growth, shown in rows:  # the error of that row's k and growth scenario, not the column's
        assert shown == _error(growth, int(k)), (k, growth)


@pytest.mark.browser
def test_home_prediction_header_is_no_taller_than_a_group_mean(watched: Page, site_url):
    watched.set_viewport_size({"width": 1366, "height": 900})
    watched.goto(f"{site_url}/index.html")
    heights = watched.evaluate("""() => {
        const h = (sel) => {  // the height of the header's text (the cells of a row share the row's height)
          const range = document.createRange();
          range.selectNodeContents(document.querySelector('#board thead ' + sel));
          return range.getBoundingClientRect().height; };
        return [h('th.pred'), h('th[data-key="g-all"]')]; }""")
    assert heights[0] <= heights[1] + 0.5, heights
    style = watched.evaluate("""() => { const s = getComputedStyle(document.querySelector('#board tbody td.pred'));
        return [s.fontStyle, s.borderLeftStyle]; }""")
    assert style == ["italic", "dashed"]  # set apart from the measured scores


def test_home_prediction_cells_carry_the_error(built_site):
    """Each predicted mean on the home page shows the method's error in its own cell, and the download gives it
    in a column beside the prediction (on the metric's scale, as every value there)."""
    html = (built_site / "index.html").read_text()
    cells = re.findall(r'<td class="pred">(.*?)</td>', html, re.S)
    assert cells and all('<small class="err"' in cell and f">{_error()}</small>" in cell for cell in cells)
    with open(built_site / "downloads" / "leaderboard.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    error = load_evidence().error(SETTINGS.scale_growth, SETTINGS.scale_mode, COLUMN_K)
    predicted = [row for row in rows if row[next(name for name in row if name.startswith("Predicted"))]]
    assert predicted and all(float(row["prediction error"]) == pytest.approx(error) for row in predicted)
    assert all(row["prediction error"] == "" for row in rows if row not in predicted)


@pytest.mark.browser
def test_home_prediction_cells_built_by_the_script_carry_the_error(watched: Page, site_url):
    watched.goto(f"{site_url}/index.html")
    texts = watched.locator("#board tbody td.pred:not(.part)").all_text_contents()
    assert texts and all(_error() in text for text in texts)  # the rows data/board.js builds, not only the page's
