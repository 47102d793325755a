"""A board of 1,000 models in real Chromium: the home page shows one page of rows, sorts every model (not only
the rows shown), its pages and "List all" hold every model in the sorted order, the rank range stays beside the
sorted mean, the view's download equals the view, and text from board.js stays text."""

import csv
import io
import json
import re
import threading
import zlib
from dataclasses import replace
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from leaderboard.web.views import common
from tests.leaderboard.conftest import watch

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MODELS, DATASETS, QUERIES = 1000, 2, 10
PAGE = common.LISTED_ROWS


def _verified(model_id: str) -> bool:  # nine models in ten, as a board with judgments at hand looks
    return zlib.crc32(model_id.encode()) % 10 != 0


@pytest.fixture(scope="module")
def big(tmp_path_factory, synth):
    """The site of 1,000 models on 2 datasets, served over HTTP, and its leaderboard download (the oracle: every
    model's group means and dataset means as the build computed them)."""
    from leaderboard.submissions.catalog import dataset_info
    from leaderboard.web.build import build_site, make_server

    root = tmp_path_factory.mktemp("big")
    synth.write_scaled_results(root / "results", MODELS, DATASETS, QUERIES, depth=5)  # a ranking: verifiable
    # synthetic queries and corpora on registered dataset ids: no registered query set or dataset facts for them
    build_site(root / "results", root / "_site", is_verified=synth.VerifiedWhen(lambda result: _verified(result.model.id)),
               lookup=lambda d: replace(dataset_info(d), query_ids_sha256=None, facts=None))
    with open(root / "_site" / "downloads" / "leaderboard.csv", encoding="utf-8", newline="") as handle:
        oracle = {row["model_id"]: row for row in csv.DictReader(handle)}
    server = make_server(root / "_site", port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield {"url": f"http://127.0.0.1:{server.server_address[1]}", "oracle": oracle}
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def home(browser: Browser, big):
    """The home page at 1366 px; the test fails on console errors, uncaught exceptions or dialogs."""
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    problems = watch(page)
    page.goto(f"{big['url']}/index.html")
    yield page
    page.close()
    assert problems == []


def _rows(page: Page, key: str) -> list[tuple[str, str, str]]:
    """(model id, body, text of column `key`) of every row in the table, in order."""
    return page.evaluate("""key => {
        const [first, second] = document.querySelectorAll('#board thead tr');  // columns: rowspan cells, then datasets
        const columns = [...first.cells].filter(th => th.rowSpan === 2).concat([...second.cells]);
        const index = columns.findIndex(th => th.dataset.key === key);
        return [...document.querySelectorAll('#board tbody tr:not(.group-label)')].map(row =>
            [row.querySelector('th a').textContent, row.parentElement.className, row.cells[index].textContent]);
    }""", key)


def _number(text: str) -> float | None:
    head = text.split(" ")[0].rstrip("*†")
    return None if head in ("–", "") or "/" in head else float(head)


def _check_order(rows: list, oracle: dict, column: str, descending: bool) -> None:
    """`rows` ((model id, body, text) as shown) hold every model once, verified models first, each body sorted by
    its value (missing last in both directions), every value the model's own in the CSV `column` (×100, as shown
    with two decimals)."""
    assert sorted(model_id for model_id, _, _ in rows) == sorted(oracle)
    bodies = [body for _, body, _ in rows]
    assert bodies == sorted(bodies)  # "ranked" < "unranked"
    for model_id, body, text in rows:
        assert (body == "ranked") == (oracle[model_id]["verified"] == "all")
        expected = oracle[model_id][column]
        if expected == "":
            assert _number(text) is None, model_id
        else:
            assert _number(text) == pytest.approx(100 * float(expected), abs=0.005 + 1e-9), model_id
    for kind in ("ranked", "unranked"):
        values = [_number(text) for _, body, text in rows if body == kind]
        known = [value for value in values if value is not None]
        assert values == known + [None] * (len(values) - len(known))
        assert known == sorted(known, reverse=descending)


def _walk_pages(page: Page, key: str) -> list[tuple[str, str, str]]:
    """Every row, page after page with the "Next" button."""
    rows = []
    for number in range(1, -(-MODELS // PAGE) + 1):
        first = (number - 1) * PAGE + 1
        expect(page.locator("#status")).to_have_text(f"Showing {first:,}–{min(number * PAGE, MODELS):,} of {MODELS:,} "
                                                     f"matching models ({MODELS:,} in all).")
        rows += _rows(page, key)
        if number * PAGE < MODELS:
            page.click("#page-next")
    expect(page.locator("#page-next")).to_be_disabled()
    expect(page.locator("#page-next")).to_be_focused()  # at the last page the button keeps the focus
    page.keyboard.press("Enter")  # and does nothing
    expect(page.locator("#status")).to_contain_text(f"Showing {first:,}–{MODELS:,} of")
    return rows


def test_a_sort_orders_every_model_across_the_pages(home, big):
    page, oracle = home, big["oracle"]
    assert len(oracle) == MODELS
    expect(page.locator("#board tbody tr:not(.group-label)")).to_have_count(PAGE)  # one page in the document
    dataset = page.locator('#board thead th[data-key^="d-"]').first.get_attribute("data-key")
    header = page.locator(f'#board thead th[data-key="{dataset}"]')
    header.locator("button.sort").click()
    header.locator("button.sort").click()  # lowest first
    expect(header).to_have_attribute("aria-sort", "ascending")
    assert f"sort={dataset}" in page.url and "desc=0" in page.url
    walked = _walk_pages(page, dataset)
    column = header.get_attribute("data-unit").removesuffix(" ×100")  # "<dataset id> <metric>": the CSV's column
    _check_order(walked, oracle, column, descending=False)
    page.click("#show-all")  # every row at once, in the same order
    expect(page.locator("#status")).to_have_text(f"Showing {MODELS} of {MODELS} models.")
    assert _rows(page, dataset) == walked and "all=1" in page.url


def test_the_default_sort_shows_rank_ranges_and_the_download_equals_the_view(home, big):
    page, oracle = home, big["oracle"]
    key = page.locator("#filters").get_attribute("data-sort")
    expect(page.locator(f'#board thead th[data-key="{key}"]')).to_have_attribute("aria-sort", "descending")
    group = page.locator(f'#board thead th[data-key="{key}"]').get_attribute("data-unit").removesuffix(" ×100")
    ranked = [text for _, body, text in _rows(page, key) if body == "ranked"]
    assert ranked and all("[" in text and " rank " in text for text in ranked)  # interval and rank range
    page.goto(f"{big['url']}/index.html?all=1")
    rows = _rows(page, key)
    _check_order(rows, oracle, group, descending=True)
    with page.expect_download() as event:
        page.click("#download-view")
    table = list(csv.reader(io.StringIO(Path(event.value.path()).read_text(encoding="utf-8"))))
    header, body = table[0], table[1:]
    assert [row[0] for row in body] == [model_id for model_id, _, _ in rows]  # the rows shown, in order
    shown_headers = page.eval_on_selector_all(
        "#board thead th[data-key]", "ths => ths.filter(th => th.offsetParent !== null && th.colSpan === 1).length")
    assert shown_headers < len(header) and f"{group} ×100" in header and header[-1] == "verified"
    column = header.index(f"{group} ×100")
    part = {name[len(group) + 6:]: header.index(name) for name in header if name.startswith(f"{group} ×100 ")}
    assert {"ci_low", "ci_high", "rank_low", "rank_high", "verdict"} <= set(part)
    for (model_id, kind, text), row in zip(rows, body, strict=True):  # one value a cell, each as the cell shows it
        value = _number(text)
        assert (row[column] == "") == (value is None) and (value is None or float(row[column]) == value)
        interval = re.search(r"\[([^,]+), ([^\]]+)\]", text)
        assert [row[part["ci_low"]], row[part["ci_high"]]] == (
            [f"{float(interval[1]):g}", f"{float(interval[2]):g}"] if interval else ["", ""])
        ranks = re.search(r"rank (\d+)(?:–(\d+))?", text)  # unverified: no rank
        assert [row[part["rank_low"]], row[part["rank_high"]]] == (
            [ranks[1], ranks[2] or ranks[1]] if ranks else ["", ""])
        assert (ranks is not None) == (kind == "ranked" and value is not None)
        assert row[part["verdict"]] == ("best_set" if "★" in text else "")
        assert row[-1] == ("true" if kind == "ranked" else "false")
        assert (oracle[model_id]["verified"] == "all") == (kind == "ranked")
    assert any(kind == "unranked" for _, kind, _ in rows)


def test_text_from_board_js_stays_text(browser: Browser, big):
    """Markup in the data file (a model id, a type) is shown as text and runs nothing."""
    page = browser.new_page()
    problems = watch(page)
    markup = '<img src=x onerror="alert(1)"><script>alert(2)</script>'

    def hostile(route):
        text = route.fetch().text()
        start, end = text.index("d.board = ") + len("d.board = "), text.rindex(";\n})")
        data = json.loads(text[start:end])
        data["rows"][0][0] = markup
        data["rows"][0][2] = markup
        route.fulfill(body=text[:start] + json.dumps(data) + text[end:], content_type="text/javascript")

    page.route("**/data/board.js", hostile)
    page.goto(f"{big['url']}/index.html?q=img")
    expect(page.locator("#board tbody th a")).to_have_text([markup])
    expect(page.locator("#board tbody td").first).to_have_text(markup)
    assert page.locator("#board img, #board tbody script").count() == 0
    page.close()
    assert problems == []
