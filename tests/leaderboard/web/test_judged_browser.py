"""The TREC DL 2020 shallow-pool board (tests/data/dl20_board.py) in Chromium at phone width: the line on the
judgments wraps inside the screen, each mean's Judged@10 stays beside it, and the ◊ mark says what it means."""

import sys
from dataclasses import replace

import pytest
from playwright.sync_api import Browser, expect

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.web.build import render_site
from tests.conftest import OFFICIAL, ROOT
from tests.leaderboard.conftest import served, watch

sys.path.insert(0, str(ROOT / "tests" / "data"))
import dl20_board  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def dl20_url(tmp_path_factory):
    # no result file behind them, so no run file to copy into the site
    results = [replace(r, has_run=False) for r in dl20_board.loaded_results(OFFICIAL, "shallow")]
    board = build_leaderboard(results, SiteSettings(), dl20_board.lookup)
    out = tmp_path_factory.mktemp("dl20") / "_site"
    files, _ = render_site(board)
    files.write_to(out)
    with served(out) as url:
        yield url


def test_the_judgments_line_and_marks_read_at_phone_width(browser: Browser, dl20_url):
    context = browser.new_context(viewport={"width": 390, "height": 800})
    page = context.new_page()
    problems = watch(page)
    page.goto(f"{dl20_url}/datasets/{dl20_board.DATASET}.html")
    line = page.locator("#judgments")
    expect(line).to_be_visible()
    assert line.inner_text().startswith("Judged@10 of the shown models: 0.32–0.99")
    box = line.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390  # wraps within the screen
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # the wide table scrolls in its box
    row = page.locator('tr[data-id="tas-b"]')
    mean = row.locator("td.num").first
    assert mean.inner_text().replace("\n", "") == "47.37.32(Judged@10 0.32)"  # the mean, its subscript, its words
    sub = mean.locator("sub.jd")
    mean_box, sub_box = mean.bounding_box(), sub.bounding_box()
    assert sub_box["y"] >= mean_box["y"] and sub_box["x"] + sub_box["width"] <= mean_box["x"] + mean_box["width"] + 1
    flip = row.locator(".flip").first
    assert flip.get_attribute("title").startswith("could flip")
    assert problems == []
    context.close()
