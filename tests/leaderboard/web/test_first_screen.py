"""What a reader sees first, measured in Chromium at 390 × 844 (a phone), 768 × 1024 and 1366 × 900, on the
repository's own board (results/, verified against ../shared/data) and on a synthetic board of 200 models × 30
datasets: on every table the first row's name, main score and interval lie inside the screen once the table is
scrolled to; no table opens scrolled sideways; the name stays in view when the table is scrolled to its right end;
the sentence that explains unranked results is inside the screen at either end; no page is wider than the screen."""

from __future__ import annotations

import threading
import zlib
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.leaderboard.conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENS = {390: 844, 768: 1024, 1366: 900}
# (page, table, the first row's name, score and interval cells, the headers of the score and interval columns)
# The home board's score cell is the first group mean (the one its rows are ordered by), its interval inside it.
TABLES = [
    ("index.html", "#board", "th[scope=row] a", "td.s", "td.s small", None),
    ("datasets/beir__scifact.html", "#scores", "th[scope=row] a", "td:nth-child(4)", "td:nth-child(5)",
     ("nDCG@10", "95% CI")),
    ("ranks.html", "table.results", "th[scope=row] a", "td:nth-child(3)", "td:nth-child(4)", ("Mean", "95% CI")),
    ("{pareto}", "table.pareto-table", "th[scope=row] a", "td:nth-child(2)", "td:nth-child(3)",
     ("group mean", "95% CI")),
    ("models/bm25.html", "#model-datasets", "th[scope=row]", "td:nth-child(4)", "td:nth-child(5)",
     ("Score", "95% CI")),
    ("compare.html?a=bm25&b={other}", "#compare-summary", "th[scope=row]", "td:nth-child(2)", "td:nth-child(3)",
     ("Δ", "Interval of the verdict")),
]

MEASURE = """([table, name, score, interval, headers]) => {
  const t = document.querySelector(table), wrap = t.closest('.table-wrap');
  const opened = wrap.scrollLeft;
  window.scrollTo(0, window.scrollY + wrap.getBoundingClientRect().top - 4);  // down to the table, not sideways
  const row = t.querySelector('tbody tr:not(.group-label):not([hidden])');
  const box = (element) => { const r = element.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const heads = headers ? [score, interval].map(s => Number(s.match(/nth-child\\((\\d+)\\)/)[1]))
    .map(k => t.tHead.rows[t.tHead.rows.length - 1].cells[k - 1].textContent.replace(/[↕▲▼]/g, '').trim()) : null;
  const shown = [row.querySelector(name), row.querySelector(score), row.querySelector(interval)].map(box);
  const texts = [row.querySelector(name), row.querySelector(score), row.querySelector(interval)]
    .map(e => e.textContent.trim());
  wrap.scrollLeft = wrap.scrollWidth;  // the far end: the name column sticks
  const end = box(row.querySelector(name)), frame = box(wrap);
  wrap.scrollLeft = 0;
  return {opened, shown, texts, heads, end, frame, page: document.documentElement.scrollWidth};
}"""

LABELS = """() => [...document.querySelectorAll('tr.group-label .label')].filter(e => e.offsetParent).flatMap(e => {
  const wrap = e.closest('.table-wrap'), at = [];
  for (const left of [0, wrap.scrollWidth]) {
    wrap.scrollLeft = left;
    const r = e.getBoundingClientRect();
    at.push([r.left, r.right, r.width]);
  }
  wrap.scrollLeft = 0;
  return at;
})"""


def _serve(site: Path):
    from leaderboard.web.build import make_server

    server = make_server(site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture(scope="module", params=["repository", "200x30"])
def board(request, tmp_path_factory, synth):
    """(site URL, the model compared with bm25, a page listing every row of the home board) of either board."""
    from leaderboard.submissions.catalog import dataset_info
    from leaderboard.web.build import build_site

    root = tmp_path_factory.mktemp(request.param)
    if request.param == "repository":
        root = request.getfixturevalue("repository_site").parent  # shared with test_board_first.py
        other = "splade-tiny"
    else:  # one model in ten unverified, as a board with judgments at hand looks: the unranked group shows
        synth.write_scaled_results(root / "results", 200, 30, 10, depth=5)
        build_site(root / "results", root / "_site",
                   is_verified=synth.VerifiedWhen(lambda result: zlib.crc32(result.model.id.encode()) % 10 != 0),
                   lookup=lambda d: replace(dataset_info(d), query_ids_sha256=None, facts=None))
        other = "org01/model-0001"
    server, thread, url = _serve(root / "_site")
    yield url, other
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.mark.parametrize("width", SCREENS)
def test_every_table_shows_name_score_and_interval_on_the_first_screen(browser: Browser, board, width):
    url, other = board
    page = browser.new_page(viewport={"width": width, "height": SCREENS[width]})
    problems = watch(page)
    failures = []
    for path, table, name, score, interval, headers in TABLES:
        # the repository's models are on no common set of all eight datasets: its pareto page of every dataset lists
        # nobody, that of the classic collections (where all four are ranked) is measured
        pareto = "pareto/g-classic.html" if other == "splade-tiny" else "pareto.html"
        page.goto(f"{url}/{path.format(other=other, pareto=pareto)}")
        page.wait_for_selector(f"{table} tbody tr")
        found = page.evaluate(MEASURE, [table, name, score, interval, headers])
        where = f"{path} at {width} px"
        if headers:
            assert found["heads"][0].startswith(headers[0]) and found["heads"][1] == headers[1], where
        assert all(text and text != "–" for text in found["texts"]), (where, found["texts"])
        if found["opened"] != 0:
            failures.append(f"{where}: {table} opens scrolled {found['opened']} px sideways")
        for what, (left, top, right, bottom) in zip(("name", "score", "interval"), found["shown"], strict=True):
            if left < 0 or right > width or top < 0 or bottom > SCREENS[width]:
                failures.append(f"{where}: the {what} lies at x {left:.0f}–{right:.0f}, y {top:.0f}–{bottom:.0f}")
        if found["end"][0] < found["frame"][0] - 1 or found["end"][2] > width:
            failures.append(f"{where}: scrolled to its end, the name lies at x {found['end'][0]:.0f}")
        if found["page"] > width:
            failures.append(f"{where}: the page is {found['page']} px wide")
    page.close()
    assert failures == []
    assert problems == []


@pytest.mark.parametrize("width", SCREENS)
def test_the_unranked_sentence_is_never_clipped(browser: Browser, board, width):
    url, _ = board
    page = browser.new_page(viewport={"width": width, "height": SCREENS[width]})
    boxes = []
    for path in ("index.html?all=1", "datasets/beir__scifact.html?all=1"):
        page.goto(f"{url}/{path}")
        page.wait_for_selector("#status:not(:empty)")
        boxes += page.evaluate(LABELS)
    page.close()
    for left, right, width_of in boxes:
        assert 0 <= left and right <= width and width_of > 0, (left, right)
    if board[1] != "splade-tiny":  # the synthetic board has unverified models: the sentence is measured there
        assert len(boxes) == 4  # two pages, each at either end of its table
