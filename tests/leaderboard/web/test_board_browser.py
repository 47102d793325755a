"""A board of many models in real Chromium, over http and file://, on a desktop and a phone: the home table from
data/board.js with its column chooser, the dataset table's sort and filters, top-N charts and the any-two-models
p-value lookup; axe finds nothing serious on the pages as these controls leave them."""

import csv
import io
import re
import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import Browser, Page, expect

from leaderboard.analysis.aggregate import build_leaderboard
from leaderboard.analysis.effects import paired_effect
from leaderboard.analysis.verdicts import family_size, shown_pvalue, verdict_interval
from leaderboard.submissions.catalog import dataset_info
from leaderboard.submissions.load import load_results
from leaderboard.web.views import common
from leaderboard.web.views import dataset as dataset_view
from leaderboard.web.views import home as home_view
from tests.leaderboard.conftest import watch
from tests.leaderboard.web.test_browser_layout import DESKTOP, PHONE, _axe_violations

pytestmark = pytest.mark.browser

MODELS, DATASETS, QUERIES, HTML_ROWS, LISTED = 45, 6, 40, 12, 30


@pytest.fixture(scope="module")
def many(tmp_path_factory, synth):
    """A site of 45 models on 6 datasets whose home page HTML holds only 12 rows (views.home.HOME_ROWS) and whose tables
    list 30 rows until asked for all (views.common.LISTED_ROWS), every result verified, and its leaderboard (the oracle
    for the numbers the pages show)."""
    from leaderboard.web.build import build_site, make_server

    root = tmp_path_factory.mktemp("many")
    synth.write_scaled_results(root / "results", MODELS, DATASETS, QUERIES, depth=5)
    rows, listed = home_view.HOME_ROWS, common.LISTED_ROWS
    home_view.HOME_ROWS, common.LISTED_ROWS = HTML_ROWS, LISTED
    try:
        # synthetic queries and corpora on registered dataset ids: no registered query set or dataset facts for them
        build_site(root / "results", root / "_site", is_verified=synth.DeclaredVerification((), {}),
                   lookup=lambda d: replace(dataset_info(d), query_ids_sha256=None, facts=None))
    finally:
        home_view.HOME_ROWS, common.LISTED_ROWS = rows, listed
    board = build_leaderboard(load_results(root / "results", is_verified=synth.DeclaredVerification((), {})).results)
    server = make_server(root / "_site", port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield {"site": root / "_site", "url": f"http://127.0.0.1:{server.server_address[1]}", "board": board}
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture(params=["http", "file"])
def scheme(request):
    return request.param


@pytest.fixture(params=[DESKTOP, PHONE], ids=["1366", "390"])
def opened(request, browser: Browser, many, scheme):
    """open(path) -> a Page of the many-model site at 1366 or 390 px, over http or file://; the test fails on
    console errors."""
    context = browser.new_context(viewport=request.param)
    problems = []

    def open_(path: str) -> Page:
        page = context.new_page()
        problems.extend(watch(page))
        base = many["url"] if scheme == "http" else many["site"].as_uri()
        page.goto(f"{base}/{path}")
        return page

    open_.width = request.param["width"]
    yield open_
    context.close()
    assert problems == []


def _shown_ids(page: Page, table: str = "board") -> list[str]:
    return page.eval_on_selector_all(f"#{table} tbody tr:not([hidden]):not(.group-label) th a",
                                     "links => links.map(a => a.textContent)")


def _fits(page: Page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_home_html_holds_the_top_rows_and_the_script_the_whole_table(opened, many, browser):
    page = opened("index.html")
    expect(page.locator("#status")).to_have_text(f"Showing 1–{LISTED} of {MODELS} matching models ({MODELS} in all).")
    order, _ = home_view.home_order(many["board"])
    assert _shown_ids(page) == [m.info.id for m in order[:LISTED]]
    expect(page.locator("#page-previous")).to_be_disabled()
    page.click("#page-next")  # the next page of rows, from data/board.js
    expect(page.locator("#status")).to_have_text(f"Showing {LISTED + 1}–{MODELS} of {MODELS} matching models "
                                                 f"({MODELS} in all).")
    assert _shown_ids(page) == [m.info.id for m in order[LISTED:]] and "page=2" in page.url
    expect(page.locator("#page-next")).to_be_disabled()
    page.click("#show-all")  # long tables show a page of rows until asked for all
    expect(page.locator("#status")).to_have_text(f"Showing {MODELS} of {MODELS} models.")
    assert _shown_ids(page) == [m.info.id for m in order] and "all=1" in page.url
    expect(page.locator("#show-all")).to_be_hidden()
    expect(page.locator("#board-partial")).to_be_hidden()
    datasets = page.locator('#board thead th[data-key^="d-"]')
    expect(datasets).to_have_count(DATASETS)
    groups = page.locator('#board thead th[data-key^="g-"]').count()
    assert page.locator("#board tbody tr").first.locator("td").count() == 2 + 2 * groups + DATASETS  # type, params
    _fits(page, opened.width)
    assert _axe_violations(page) == []
    # without scripts: the page's own rows, group means only, and a note that says so
    context = browser.new_context(java_script_enabled=False, viewport={"width": opened.width, "height": 800})
    bare = context.new_page()
    bare.goto((many["site"] / "index.html").as_uri())
    expect(bare.locator("#board")).to_be_visible()
    expect(bare.locator("#board-partial")).to_contain_text(f"the first {HTML_ROWS} of {MODELS} models")
    assert bare.locator("#board tbody tr").count() == HTML_ROWS
    assert bare.locator('#board th[data-key^="d-"]').count() == 0
    assert bare.locator("#board tbody th a").all_inner_texts() == [m.info.id for m in order[:HTML_ROWS]]
    context.close()


def _unfold(page: Page) -> None:
    """Open the filters where they are folded behind "Filters" (a phone's screen, no filter set)."""
    if not page.locator("details.filter-fold").evaluate("fold => fold.open"):
        page.click("details.filter-fold > summary")


def test_column_chooser_hides_columns_and_keeps_them_in_the_address(opened, many):
    page = opened("index.html")
    _unfold(page)
    page.click("details.columns summary")
    dataset = page.locator('#board th[data-key^="d-"]').first
    key = dataset.get_attribute("data-key")
    page.uncheck(f'input[name=col][value="{key}"]')
    expect(dataset).to_be_hidden()
    index = page.evaluate("k => [...document.querySelectorAll('#board thead tr:last-child th')].findIndex(th => "
                          "th.dataset.key === k)", key)
    assert index == 0
    groups = page.locator('#board thead th[data-key^="g-"]').count()
    assert page.locator(f"#board tbody tr:not(.group-label) > :nth-child({3 + 2 * groups + 1})").first.is_hidden()
    page.uncheck('input[name=col][value="g-beir"]')
    expect(page.locator('#board th[data-key="g-beir"]')).to_be_hidden()
    assert f"hide=g-beir%2C{key}" in page.url or f"hide={key}%2Cg-beir" in page.url
    shared = page.url
    page.goto(shared)  # the address restores the columns
    expect(page.locator(f'#board th[data-key="{key}"]')).to_be_hidden()
    expect(page.locator('#board th[data-key="g-beir"]')).to_be_hidden()
    assert not page.is_checked(f'input[name=col][value="{key}"]')
    _unfold(page)
    page.click("details.columns summary")
    page.click("#cols-means")
    expect(page.locator('#board thead th[data-key^="d-"]:not([hidden])')).to_have_count(0)
    expect(page.locator("#board thead th.group:not([hidden])")).to_have_count(0)
    expect(page.locator('#board th[data-key="g-beir"]')).to_be_visible()
    _fits(page, opened.width)
    assert _axe_violations(page) == []
    with page.expect_download() as event:  # the view's download: the shown columns, every matching row
        page.click("#download-view")
    rows = list(csv.reader(io.StringIO(Path(event.value.path()).read_text(encoding="utf-8"))))
    assert len(rows) == 1 + MODELS and len(_shown_ids(page)) == LISTED
    assert "BEIR mean ×100" in rows[0] and not any(name.startswith("beir/") for name in rows[0])
    page.click("#cols-all")
    expect(page.locator('#board thead th[data-key^="d-"]:not([hidden])')).to_have_count(DATASETS)
    assert "hide=" not in page.url
    page.goto(re.sub(r"\?.*", "", page.url) + "?hide=d-nothing")
    expect(page.locator("#status")).to_contain_text("Ignored from the address (not a choice here): hide=d-nothing.")


def test_dataset_table_sorts_and_filters_like_the_home_table(opened, many):
    page = opened("datasets/beir__nfcorpus.html?all=1")
    expect(page.locator("#status")).to_have_text(f"Showing {MODELS} of {MODELS} models.")
    dataset = many["board"].dataset("beir/nfcorpus")
    assert _shown_ids(page, "scores") == list(dataset.model_ids)
    page.locator('#scores th[data-key="mean"] button.sort').click()
    assert "sort=mean" in page.url and "desc=1" in page.url
    page.locator('#scores th[data-key="mean"] button.sort').click()  # ascending: the worst first
    by_mean = sorted(zip(dataset.means, dataset.model_ids, strict=True))
    assert _shown_ids(page, "scores")[0] == by_mean[0][1]
    page.fill("#f-q", "model-00 org0")
    wanted = [m for m in dataset.model_ids if "model-00" in m and "org0" in m]
    assert sorted(_shown_ids(page, "scores")) == sorted(wanted) and wanted
    page.fill("#f-q", "")
    _unfold(page)
    page.select_option("#f-type", "dense")
    types = {r.model.id: r.model.type for r in dataset.results}
    assert sorted(_shown_ids(page, "scores")) == sorted(m for m in dataset.model_ids if types[m] == "dense")
    page.goto(page.url)  # the address restores the view
    assert page.input_value("#f-type") == "dense"
    page.check("input[name=zeroshot]")
    zero_shot = {m for m, flag in zip(dataset.model_ids, dataset.zero_shot, strict=True) if flag}
    assert set(_shown_ids(page, "scores")) == {m for m in zero_shot if types[m] == "dense"}
    _fits(page, opened.width)


def _drawn(page: Page, figure_id: str):
    """The chart, scrolled to: charts.js draws a chart when it comes near the screen."""
    chart = page.locator(f"#{figure_id}")
    chart.scroll_into_view_if_needed()
    expect(chart.locator("svg.main-svg").first).to_be_visible()
    return chart


def test_charts_show_the_top_n_models_and_say_so(opened, many):
    page = opened("datasets/beir__nfcorpus.html")
    dataset = many["board"].dataset("beir/nfcorpus")
    names = "div => div.data[0].y"
    shown = _drawn(page, "fig-scores").evaluate(names)
    assert shown == list(dataset.model_ids[:30])[::-1]  # the best 30, the best drawn on top
    expect(page.locator("#fig-scores").locator("xpath=..").locator(".top-note")).to_have_text(
        f" (top 30 of {MODELS} models)")
    page.select_option("#top-n", "10")
    assert page.locator("#fig-scores").evaluate(names) == list(dataset.model_ids[:10])[::-1]  # redrawn
    expect(_drawn(page, "fig-boxes").locator("xpath=..").locator(".top-note")).to_have_text(
        f" (top 10 of {MODELS} models)")  # drawn later, with the N chosen before
    assert page.locator("#fig-boxes").evaluate("div => div.layout.title.text").endswith(f"top 10 of {MODELS} models") \
        or opened.width < 560  # a phone leaves the title to the caption
    assert len(_drawn(page, "fig-wtl").evaluate("div => div.data[0].y")) == 10
    assert "top=10" in page.url
    page.goto(page.url)
    assert len(_drawn(page, "fig-scores").evaluate(names)) == 10
    page.select_option("#top-n", str(MODELS))
    expect(page.locator("#fig-scores").locator("xpath=..").locator(".top-note")).to_have_text(
        f" (all {MODELS} models)")
    heatmap = _drawn(page, "fig-pvalues").evaluate("div => div.data[0].x")
    assert heatmap == list(dataset.model_ids[:dataset_view.HEATMAP_MODELS])
    _fits(page, opened.width)


def test_any_two_models_show_their_p_value_and_effect(opened, many):
    dataset = many["board"].dataset("beir/nfcorpus")
    a, b = dataset.model_ids[3], dataset.model_ids[-2]  # b is far outside the heatmap
    page = opened("datasets/beir__nfcorpus.html")
    result = page.locator("#pair-result")
    expect(result).to_contain_text("Corrected p =")  # the two best, at first
    assert "pa=" not in page.url and "pb=" not in page.url  # the default pair leaves the address alone
    page.fill("#pair-a", a)
    page.fill("#pair-b", b)
    page.locator("#pair-b").dispatch_event("change")
    expect(result).to_contain_text(f"Effect {b} − {a}: Δ")
    text = result.text_content()
    p = re.search(r"Corrected p = (< 0\.001|[\d.]+)", text).group(1)
    expected_p = dataset.pvalues[dataset.position[a], dataset.position[b]]
    assert (p == "< 0.001") == (expected_p < 0.001)
    if p != "< 0.001":
        assert float(p) == pytest.approx(expected_p, abs=0.0015)  # the page's p-values are rounded to 4 decimals
    delta, low, high = (float(x) for x in re.search(r"Δ (-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\]", text).groups())
    scores_b, scores_a = dataset.scores[dataset.position[b]], dataset.scores[dataset.position[a]]
    effect = paired_effect(scores_b, scores_a)
    # the interval of the board's corrected verdict on the pair (analysis/verdicts.py)
    n = scores_a.size
    interval = verdict_interval(effect[0], float(np.std(scores_b - scores_a, ddof=1)) / np.sqrt(n), n - 1,
                                shown_pvalue(expected_p, 0.05), 0.05, family_size(len(dataset.model_ids), "holm"))
    assert (delta, low, high) == pytest.approx([100 * effect[0], 100 * interval[0], 100 * interval[1]], abs=0.02)
    assert "pa=" in page.url and "pb=" in page.url
    page.fill("#pair-b", "no/such-model")
    page.locator("#pair-b").dispatch_event("change")
    expect(result).to_have_text("No model named “no/such-model” on beir/nfcorpus: pick one from the list.")
    assert page.locator("#pair-models option").count() == MODELS
    _fits(page, opened.width)
    assert _axe_violations(page) == []


def _cells(page: Page) -> dict[str, list[str]]:
    """Each row of the home table: model id -> the outer HTML of its row element's attributes and of every cell."""
    return page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('#board tbody tr:not(.group-label)')]
        .map(row => [row.querySelector('th a').textContent,
                     [[...row.attributes].map(a => a.name + '=' + a.value).join(' ')]
                     .concat([...row.cells].map(cell => cell.outerHTML))]))""")


def test_the_script_builds_the_rows_the_page_writes(browser: Browser, built_site, synth):
    """table.js builds the home rows from data/board.js; where the page's own HTML has the same row, every cell
    agrees to the character, and the dataset cells say what the home context says (bold, †, *)."""
    from leaderboard.analysis.aggregate import SiteSettings

    context = browser.new_context(java_script_enabled=False)
    bare = context.new_page()
    bare.goto((built_site / "index.html").as_uri())
    written = _cells(bare)
    context.close()
    page = browser.new_page()
    problems = watch(page)
    page.goto((built_site / "index.html").as_uri())
    built = _cells(page)
    assert sorted(built) == sorted(written) == sorted(m.id for m in synth.GOLDEN_MODELS)
    for model_id, cells in written.items():
        assert built[model_id][:len(cells)] == cells, model_id
    loaded = load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification)
    home = home_view.build(build_leaderboard(loaded.results, SiteSettings(), synth.golden_lookup, []))
    marks = 0
    for row in home.rows:
        shown = page.evaluate("""([id, n]) => [...[...document.querySelectorAll('#board tbody tr:not(.group-label)')]
            .find(r => r.querySelector('th a').textContent === id).cells].slice(-n)
            .map(c => [c.className, c.textContent])""", [row.model_id, len(row.cells)])
        for (css, text), cell in zip(shown, row.cells, strict=True):
            value = "–" if cell.value is None else f"{100 * cell.value:.2f}"
            unverified = cell.value is not None and not cell.verified
            assert text == value + ("†" if cell.trained else "") + ("* (not re-scored)" if unverified else "")
            assert (css == "top") == cell.best
            marks += cell.trained + unverified + cell.best
    assert marks > 3 and problems == []
    page.close()
