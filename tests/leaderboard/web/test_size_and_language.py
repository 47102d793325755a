"""What readers of MTEB and MIRACL look for: a size-against-score chart of every model on the ranks page (log
parameters, the overall group mean with its interval, one colour per type, lexical models as lines at 0 learned
parameters), and a language filter on the home board that keeps one language's columns of the multilingual groups.
The synthetic board has MIRACL (fi, sw) and mMARCO (de-en, fr)."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from leaderboard.analysis.aggregate import ALL_GROUP, SiteSettings, build_leaderboard
from leaderboard.submissions.load import load_results
from leaderboard.web.views.ranks import build as build_ranks


@pytest.fixture(scope="module")
def board(synth):
    loaded = load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification)
    return build_leaderboard(loaded.results, SiteSettings(), synth.golden_lookup)


def test_the_size_chart_places_every_model_with_a_mean(board):
    ranks = build_ranks(board)
    (figure,) = ranks.figures
    chart = json.loads(figure.json)
    group = next(g for g in board.groups if g.name == ALL_GROUP)
    info = {m.info.id: m.info for m in board.models}
    plotted = {name: (x, y, trace["name"]) for trace in chart["data"]
               for name, x, y in zip(trace["text"], trace["x"], trace["y"], strict=True)}
    lines = {note["text"].split(" (0 learned")[0]: note["y"] for note in chart["layout"]["annotations"]}
    assert chart["layout"]["xaxis"]["type"] == "log"
    for model_id, score in group.scores.items():
        if info[model_id].parameters:
            x, y, kind = plotted.pop(model_id)
            assert x == info[model_id].parameters and kind == info[model_id].type
            assert y == pytest.approx(100 * score.mean, abs=1e-3)
        elif info[model_id].type == "lexical":
            assert lines.pop(model_id) == pytest.approx(100 * score.mean, abs=1e-3)  # 0 parameters: a line
        else:
            assert model_id in ranks.unplaced  # said so under the chart
    assert plotted == {} and lines == {}  # nothing else drawn
    for trace in chart["data"]:  # each point's whiskers reach its interval
        for name, y, up, down in zip(trace["text"], trace["y"], trace["error_y"]["array"],
                                     trace["error_y"]["arrayminus"], strict=True):
            low, high = group.scores[name].ci
            assert (y - down, y + up) == pytest.approx((100 * low, 100 * high), abs=2e-3)


@pytest.mark.browser
def test_the_size_chart_is_drawn(watched: Page, site_url):
    watched.goto(f"{site_url}/ranks.html")
    watched.locator("#fig-size").scroll_into_view_if_needed()
    expect(watched.locator("#fig-size svg.main-svg").first).to_be_visible()
    expect(watched.locator("#fig-size .annotation")).to_have_count(1)  # bm25, lexical, at 0 learned parameters
    expect(watched.locator("#size-unplaced")).to_contain_text("acme/closed-embed-1")


@pytest.mark.browser
def test_the_language_filter_keeps_one_languages_columns(watched: Page, site_url):
    page = watched
    page.goto(f"{site_url}/index.html")
    expect(page.locator("#f-lang option")).to_have_text(["every language", "de-en", "fi", "fr", "sw"])
    page.select_option("#f-lang", "fi")

    def visible(key):
        return page.locator(f'#board thead th[data-key="{key}"]').is_visible()

    expect(page.locator('#board thead th[data-key="d-miracl__sw"]')).to_be_hidden()
    assert visible("d-miracl__fi") and visible("d-beir__scifact") and visible("d-classic__cranfield")
    assert not visible("d-mmarco__fr") and not visible("d-mmarco__de-en")
    assert visible("g-miracl")  # the group mean stays, now over the fi dataset (test_best_view.py)
    assert "hide=" in page.url and "d-miracl__sw" in page.url  # the view is in the address
    page.select_option("#f-lang", "")
    expect(page.locator('#board thead th[data-key="d-miracl__sw"]')).to_be_visible()
