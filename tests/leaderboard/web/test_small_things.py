"""Small things a reader met: "1 warning", not "1 warnings"; `irboard serve` says where it serves; the ranks page
of a long board has a search box over every table, and its first column says what it is."""

from __future__ import annotations

import select
import subprocess
import sys
import urllib.request

import pytest
from playwright.sync_api import Page, expect

from leaderboard.web.build import BuildError


@pytest.mark.parametrize(("count", "words"), [(1, "1 warning (--strict); fix it and"),
                                              (2, "2 warnings (--strict); fix them and")])
def test_the_count_of_problems_agrees_with_its_noun(count, words):
    error = BuildError([f"problem {i}" for i in range(count)], "warning", " (--strict)")
    assert str(error).startswith(f"build stopped: {words} build again:")
    assert str(BuildError(["one"])).startswith("build stopped: 1 problem; fix it")


def test_serve_prints_its_address_and_serves_there(built_site):
    server = subprocess.Popen([sys.executable, "-m", "leaderboard.cli", "serve", "--out", str(built_site),
                               "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        ready, _, _ = select.select([server.stdout], [], [], 30)  # flushed at once, before any request
        assert ready, "irboard serve printed nothing"
        line = server.stdout.readline()
        assert line.startswith(f"irboard: serving {built_site} at http://127.0.0.1:") and "(Ctrl-C stops)" in line
        address = line.split(" at ", 1)[1].split(" ", 1)[0]
        with urllib.request.urlopen(address + "index.html", timeout=10) as response:
            assert response.status == 200 and b"Retrieval leaderboard" in response.read()
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.browser
def test_ranks_search_finds_models_in_every_table(watched: Page, site_url):
    page = watched
    page.goto(f"{site_url}/ranks.html")
    header = page.locator("table.results thead th").first
    expect(header.locator("abbr")).to_have_attribute("title", "place in this table: models ordered by group mean, "
                                                     "best first")
    all_ids = set(page.eval_on_selector_all("table.results tbody tr[data-id]", "rows => rows.map(r => r.dataset.id)"))
    page.fill("#rank-q", "bge")
    wanted = {model_id for model_id in all_ids if "bge" in model_id}
    expect(page.locator("#rank-status")).to_have_text(f"{len(wanted)} of {len(all_ids)} models match.")
    shown = page.eval_on_selector_all("table.results tbody tr[data-id]:not([hidden])",
                                      "rows => rows.map(r => r.dataset.id)")
    assert set(shown) == wanted and len(shown) > len(wanted)  # in every group's table
    assert "q=bge" in page.url
    page.reload()  # the address keeps the search
    expect(page.locator("#rank-q")).to_have_value("bge")
    expect(page.locator("table.results tbody tr[data-id]:not([hidden])")).to_have_count(len(shown))
    page.fill("#rank-q", "")
    expect(page.locator("table.results tbody tr[data-id][hidden]")).to_have_count(0)
