"""The home and compare pages' Judged@k and ◊ in Chromium, on tests/data/holes_board.py (holey's bounds straddle the
baseline; solid is fully judged): the rows site/js/board.js builds carry each dataset value's Judged@10 and the ◊
of the group mean whose rank range could flip, as the page's own HTML does, and its sentence is the build's; the
compare page gives both models' Judged@10 and says which verdicts could flip."""

import re
import sys

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from leaderboard.web.build import render_site
from leaderboard.web.views.home import build as build_home
from tests.conftest import ROOT
from tests.leaderboard.conftest import served, watch

sys.path.insert(0, str(ROOT / "tests" / "data"))
import holes_board  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def holes_url(tmp_path_factory):
    board = holes_board.board()
    out = tmp_path_factory.mktemp("holes") / "_site"
    files, _ = render_site(board)
    files.write_to(out)
    with served(out) as url:
        yield url, build_home(board)


def test_home_and_compare_show_judged_and_what_could_flip(page: Page, holes_url):
    url, home = holes_url
    problems = watch(page)
    page.goto(f"{url}/index.html")
    expect(page.locator("#board-sort")).to_contain_text("Sorted by")  # the script has built the view
    expect(page.locator("#answer-text")).to_have_text(home.answer)  # written again by board.js, word for word
    holey = page.locator('#board tr[data-id="holey"]')
    flip = holey.locator("td.s .flip")
    expect(flip).to_have_count(1)
    assert flip.get_attribute("title") == ("could flip: unjudged documents within the cutoff could change its "
                                           "rank range")
    expect(page.locator('#board tr[data-id="solid"] .flip')).to_have_count(0)
    sub = holey.locator("sub.jd").first  # beside the first dataset value, as on the dataset page
    assert sub.inner_text().replace("\n", "") == ".40(Judged@10 0.40)"  # the figure, and its words for readers
    assert sub.get_attribute("title").startswith("Judged@10 0.40")
    expect(page.locator('#board tr[data-id="solid"] sub.jd').first).to_have_attribute("title", "Judged@10 1.00: "
                                                                                      "the share of the top "
                                                                                      "documents that is judged")

    page.goto(f"{url}/compare.html?a=bm25&b=holey")
    summary = page.locator("#compare-summary")
    expect(summary).to_be_visible()
    head = summary.locator("thead th").all_text_contents()
    assert head[-2:] == ["Judged@k, bm25 / holey", "Over the unjudged documents"]
    for dataset in holes_board.DATASETS:
        cells = summary.locator(f'tr[data-dataset="{dataset}"] td').all_text_contents()
        assert cells[3] == "worse" and cells[-2] == "Judged@10 1.00 / 0.40" and cells[-1] == "◊ could flip"
    group = summary.locator('tr[data-group="Other"] td').all_text_contents()
    assert group[3] == "worse" and group[-1] == "◊ could flip"
    expect(page.locator(".compare-block p").first).to_contain_text("bm25 ")
    expect(page.locator(".compare-block p").first).to_contain_text("(Judged@10 0.40)")
    page.select_option("#model-b", "solid")
    expect(summary.locator('tr[data-group="Other"] td').last).to_have_text("holds")

    # the dataset page's condensed view: hidden until the reader asks for it, then beside the other values
    page.goto(f"{url}/datasets/local__holes-a.html")
    column = page.locator('#scores th[data-key="cond"]')
    expect(column).to_be_hidden()
    page.locator('#filters input[name="col"][value="cond"]').check()
    expect(column).to_be_visible()
    expect(column).to_contain_text("nDCG'@10")
    cell = page.locator('#scores tr[data-id="holey"] td.cond')
    expect(cell).to_be_visible()
    value = holes_board.values(holes_board.DATASETS[0])["holey"][0]
    assert float(cell.inner_text()) == pytest.approx(100 * np.minimum(value + 0.1, 1).mean(), abs=0.006)
    assert problems == []


def test_the_condensed_view_is_kept_in_the_address(page: Page, holes_url):
    url, _ = holes_url
    problems = watch(page)
    address = f"{url}/datasets/local__holes-a.html"
    column = page.locator('#scores th[data-key="cond"]')
    box = page.locator('#filters input[name="col"][value="cond"]')
    page.goto(address)
    expect(column).to_be_hidden()
    box.check()
    expect(column).to_be_visible()
    assert re.search(r"[?&]hide=(&|$)", page.url)  # nothing hidden: the page's default hidden column shown
    page.reload()
    expect(column).to_be_visible()
    expect(box).to_be_checked()
    expect(page.locator('#scores tr[data-id="holey"] td.cond')).to_be_visible()
    shared = page.url
    other = page.context.new_page()  # a shared link, opened afresh
    other.goto(shared)
    expect(other.locator('#scores th[data-key="cond"]')).to_be_visible()
    other.close()
    box.uncheck()
    expect(column).to_be_hidden()
    assert "hide" not in page.url  # back to the page's own default
    page.reload()
    expect(column).to_be_hidden()
    expect(box).not_to_be_checked()
    page.goto(address + "?hide=&q=holey")  # with another control's state beside it
    expect(column).to_be_visible()
    expect(page.locator('#scores tr[data-id="solid"]')).to_be_hidden()
    assert problems == []
