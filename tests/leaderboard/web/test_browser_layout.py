"""The built site on phones and desktops, in both colour themes, checked by axe-core; and what a chart page weighs.

axe-core (tests/data/axe/axe.min.js, MPL-2.0, from the npm package axe-core 4.14.1) runs inside the page.
"""

import csv
import io
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.leaderboard.conftest import ROOT, watch

pytestmark = pytest.mark.browser

AXE = ROOT / "tests" / "data" / "axe" / "axe.min.js"
# One page of every type; the model page with the most charts, the compare page drawing two.
PAGES = {
    "home": "index.html",
    "dataset": "datasets/beir__scifact.html",
    "model": "models/baai__bge-m3.html",
    "compare": "compare.html?a=bm25&b=BAAI/bge-m3",
    "method": "method.html",
    "submit": "submit.html",
    "pareto": "pareto/g-miracl.html",
}
CHART_PAGES = ("dataset", "model", "compare", "pareto")
PHONE, DESKTOP = {"width": 390, "height": 800}, {"width": 1366, "height": 900}


@pytest.fixture
def open_page(browser: Browser, site_url):
    """open_page(kind, viewport, scheme) -> a Page showing PAGES[kind] with its charts drawn; fails the test on
    console errors."""
    contexts, problems = [], []

    def open_(kind: str, viewport: dict, scheme: str = "light") -> Page:
        context = browser.new_context(viewport=viewport, color_scheme=scheme)
        contexts.append(context)
        page = context.new_page()
        problems.extend(watch(page))
        page.goto(f"{site_url}/{PAGES[kind]}")
        if kind in CHART_PAGES:
            lazy = page.locator("[data-figure]")  # drawn when they come near the screen
            if lazy.count():
                lazy.first.scroll_into_view_if_needed()
            expect(page.locator(".js-plotly-plot svg.main-svg").first).to_be_visible()
        page.wait_for_load_state("load")
        return page

    yield open_
    for context in contexts:
        context.close()
    assert problems == []


def _axe_violations(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("""async () => (await axe.run(document, {resultTypes: ['violations']})).violations
        .filter(v => v.impact === 'serious' || v.impact === 'critical')
        .map(v => v.id + ' (' + v.impact + '): ' + v.nodes.map(n => n.target.join(' ')).slice(0, 3).join(', '))""")
    return found


@pytest.mark.parametrize("kind", PAGES)
@pytest.mark.parametrize(("viewport", "scheme"), [(DESKTOP, "light"), (PHONE, "dark")], ids=["desktop", "phone-dark"])
def test_axe_finds_nothing_serious(open_page, kind, viewport, scheme):
    page = open_page(kind, viewport, scheme)
    assert _axe_violations(page) == []


@pytest.mark.parametrize("width", [360, 390])
@pytest.mark.parametrize("kind", PAGES)
def test_no_page_is_wider_than_a_phone(open_page, kind, width, screenshots):
    page = open_page(kind, {"width": width, "height": 800})
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    submit = page.locator(".site-header a", has_text="Submit").bounding_box()
    assert submit["x"] + submit["width"] <= width  # the nav wraps instead of pushing links off the screen
    for box in page.locator(".js-plotly-plot").evaluate_all("plots => plots.map(p => p.getBoundingClientRect())"):
        assert box["right"] <= width
    page.screenshot(path=screenshots / f"phone-{width}-{kind}.png", full_page=True)


def test_home_on_a_phone_shows_scores_beside_the_model_column(open_page):
    page = open_page("home", PHONE)
    model = page.locator("#board tbody th").first.bounding_box()
    assert model["width"] <= PHONE["width"] / 2
    score = page.locator("#board tbody td.s").first
    expect(score).to_be_visible()
    box = score.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]


def test_plots_follow_the_window_width(open_page):
    page = open_page("dataset", DESKTOP)
    wide = page.locator("#fig-scores .main-svg").first.bounding_box()["width"]
    page.set_viewport_size(PHONE)
    page.wait_for_function("""width => [...document.querySelectorAll('.js-plotly-plot .main-svg')]
        .every(svg => svg.getBoundingClientRect().right <= width)""", arg=PHONE["width"], timeout=5000)
    assert wide > 1000


def test_the_dark_theme_follows_the_system_setting(open_page):
    for scheme, light in (("light", True), ("dark", False)):
        page = open_page("model", PHONE, scheme)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(255, 255, 255)") == light
        paper = page.locator("#fig-model .main-svg").first.evaluate("svg => svg.style.background")
        assert paper == background  # the charts take the page's colours


@pytest.mark.parametrize("kind", CHART_PAGES)
def test_a_chart_page_weighs_at_most_1_5_mb(open_page, kind):
    page = open_page(kind, DESKTOP)
    sizes = page.evaluate("""() => performance.getEntriesByType('navigation').concat(
        performance.getEntriesByType('resource')).map(e => [e.name, e.decodedBodySize])""")
    assert any(name.endswith("js/plotly.min.js") for name, _ in sizes)
    assert sum(size for _, size in sizes) <= 1_500_000, sizes


def test_tables_show_without_scripts(browser: Browser, built_site: Path):
    context = browser.new_context(java_script_enabled=False, viewport=PHONE)
    page = context.new_page()
    page.goto((built_site / "datasets" / "beir__scifact.html").as_uri())
    expect(page.locator("table").first).to_be_visible()
    expect(page.locator(".noscript-note").first).to_be_visible()
    context.close()


def _shown(page: Page) -> list[str]:
    return page.eval_on_selector_all("#board tbody tr:not([hidden]) th a", "links => links.map(a => a.textContent)")


def test_address_values_the_page_cannot_show_are_reset_and_said(watched: Page, site_url, synth):
    page = watched
    page.goto(f"{site_url}/index.html?type=alien&sort=nonsense&open=yes&view=rank&q=bge")
    expect(page.locator("#status")).to_contain_text("Ignored from the address (not a choice here): type=alien, "
                                                    "open=yes, sort=nonsense.")
    assert page.input_value("#f-type") == "" and not page.is_checked("input[name=open]")
    assert page.input_value("#f-view") == "rank" and page.input_value("#f-q") == "bge"  # valid values kept
    assert sorted(_shown(page)) == sorted(m.id for m in synth.GOLDEN_MODELS if "bge" in m.id.lower())
    assert "type=" not in page.url and "sort=" not in page.url
    page.fill("#f-q", "")
    expect(page.locator("#status")).to_have_text(f"Showing {len(synth.GOLDEN_MODELS)} of "
                                                 f"{len(synth.GOLDEN_MODELS)} models.")


def test_search_matches_every_word_in_any_order(watched: Page, site_url, synth):
    page = watched
    page.goto(f"{site_url}/index.html")
    page.fill("#f-q", "  small   BGE ")
    assert _shown(page) == ["BAAI/bge-small-en-v1.5"]
    page.fill("#f-q", "bge nothing-like-this")
    assert _shown(page) == []


def test_the_header_rows_stay_in_view_while_the_board_scrolls(watched: Page, site_url):
    page = watched
    page.set_viewport_size({"width": 1366, "height": 420})
    page.goto(f"{site_url}/index.html")
    box = page.locator(".table-wrap:has(> .board)")
    box.evaluate("wrap => wrap.scrollTo(0, 250)")
    top = box.bounding_box()["y"]
    first = page.locator('#board th[data-key="model"]').bounding_box()
    second = page.locator('#board th[data-key="d-beir__scifact"]').bounding_box()
    assert abs(first["y"] - top) <= 2  # the header is at the top of the box, not scrolled away
    assert second["y"] >= first["y"] + 10 and second["y"] < top + first["height"]


def test_download_of_the_view_keeps_filters_sort_units_and_dataset_ids(watched: Page, site_url, synth):
    page = watched
    page.goto(f"{site_url}/index.html?type=dense&sort=d-beir__scifact&desc=1")
    with page.expect_download() as event:
        page.click("#download-view")
    rows = list(csv.reader(io.StringIO(Path(event.value.path()).read_text(encoding="utf-8"))))
    header, body = rows[0], rows[1:]
    assert header[:3] == ["model_id", "type", "parameters"]
    assert "beir/scifact nDCG@10 ×100" in header and not any(name.endswith("mean rank") for name in header)
    assert [row[0] for row in body] == _shown(page)  # the rows shown, in the order shown
    assert {row[1] for row in body} == {"dense"}
    ranked = set(page.locator("#board tbody.ranked tr:not([hidden]) th a").all_inner_texts())
    column = header.index("beir/scifact nDCG@10 ×100")
    verified = header.index("verified")
    for group in (True, False):  # verified models first, each group sorted as the table shows it
        scifact = [float(row[column]) for row in body if row[column] != "" and (row[0] in ranked) == group]
        assert scifact == sorted(scifact, reverse=True) and all(1 < value <= 100 for value in scifact)
        assert all(row[verified] == ("true" if group else "false") for row in body if (row[0] in ranked) == group)
    shown = page.locator('#board tbody tr:not([hidden])').first
    first_score = header.index("beir/scifact nDCG@10 ×100")
    assert f"{float(body[0][first_score]):.2f}" in shown.inner_text()
    # one value a cell: a group mean, its interval, its rank range and its verdict in columns of their own
    mean = header.index("All datasets mean ×100")
    assert header[mean + 1:mean + 8] == [f"All datasets mean ×100 {part}" for part in
                                         ("ci_low", "ci_high", "rank_low", "rank_high", "covered", "total", "verdict")]
    for row in body:
        if row[mean]:
            low, value, high = float(row[mean + 1]), float(row[mean]), float(row[mean + 2])
            assert low <= value <= high
        assert all(cell != "–" and "/" not in cell for cell in row if cell != row[0])  # missing is empty
    assert event.value.suggested_filename == "leaderboard-group-means-by-d-beir__scifact-filtered.csv"


def test_download_of_a_dataset_view_keeps_every_column_as_shown(watched: Page, site_url):
    page = watched
    page.goto(f"{site_url}/datasets/beir__scifact.html")
    with page.expect_download() as event:
        page.click("#download-view")
    assert event.value.suggested_filename == "beir__scifact-view.csv"
    rows = list(csv.reader(io.StringIO(Path(event.value.path()).read_text(encoding="utf-8"))))
    header, body = rows[0], rows[1:]
    for name in ("Rank range rank_low", "Rank range rank_high", "Best set verdict", "95% CI ci_low", "95% CI ci_high",
                 "W/T/L wins", "W/T/L ties", "W/T/L losses", "p vs baseline", "verified"):
        assert name in header
    shown = page.eval_on_selector_all("#scores tbody tr:not(.group-label):not([hidden])",
                                      "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))")
    assert len(body) == len(shown)
    low, high, top, ci_low, ci_high, wins = (header.index(name) for name in (
        "Rank range rank_low", "Rank range rank_high", "Best set verdict", "95% CI ci_low", "95% CI ci_high", "W/T/L wins"))
    assert any(row[low] != row[high] for row in body if row[low])  # ranges stay ranges (1–4, not 1)
    assert {row[top] for row in body} <= {"best_set", ""} and any(row[top] == "best_set" for row in body)
    assert all(float(row[ci_low]) < float(row[ci_high]) for row in body)
    assert all(row[wins] == "" or row[wins].isdigit() for row in body)
    main = header.index("beir/scifact nDCG@10 ×100")
    assert any(row[main + 1] == "unverified" for row in body)  # the * of an unverified value, as its verdict
    assert all(float(row[main]) == float(cells[3].split("*")[0]) for row, cells in zip(body, shown, strict=True))
    expected = [cells[0].split("\n")[0] for cells in shown]
    assert [f"{row[low]}–{row[high]}" if row[low] != row[high] else row[low] for row in body] == \
        [text if text != "–" else "" for text in expected]
    p = header.index("p vs baseline")
    assert all(row[p] == "" or 0 <= float(row[p]) <= 1 for row in body)  # exact p-values, not "<0.001"


def test_home_says_which_model_is_best_and_how_sure_with_the_sort_in_view_on_a_phone(open_page):
    page = open_page("home", PHONE)
    expect(page.locator("#answer")).to_contain_text("Who could be #1 on All datasets")
    header = page.locator('#board th[data-key="g-all"]')
    expect(header).to_have_attribute("aria-sort", "descending")  # the default order is a sort by this column
    expect(page.locator("#board-sort")).to_have_text("Sorted by All datasets mean, highest first; the rank range "
                                                     "beside each mean says how sure.")
    box = page.locator("#board").locator("xpath=ancestor::div[contains(@class,'table-wrap')]").bounding_box()
    cell = header.bounding_box()
    assert box["x"] <= cell["x"] and cell["x"] + cell["width"] <= box["x"] + box["width"] + 1
    ranked = page.locator('#board tbody.ranked td.s small.rk').first
    expect(ranked).to_contain_text("rank ")
    expect(page.locator('nav a[href="ranks.html"]')).to_have_count(1)


def test_compare_checks_its_address_refuses_self_compare_and_summarises_every_dataset(watched: Page, site_url):
    page = watched
    page.goto(f"{site_url}/compare.html?a=no/such-model&b=bm25")
    expect(page.locator("#compare-status")).to_have_text("No such model on this site: a=no/such-model (from the "
                                                         "address). Pick the models above.")
    expect(page.locator("#compare-results > *")).to_have_count(0)  # no other model shown in its place
    page.goto(f"{site_url}/compare.html?a=bm25&b=bm25")
    expect(page.locator("#compare-status")).to_contain_text("Pick two different models")
    expect(page.locator("#compare-results > *")).to_have_count(0)
    page.goto(f"{site_url}/compare.html?a=bm25&b=BAAI/bge-m3")
    expect(page.locator("#compare-summary")).to_be_visible()
    datasets = page.locator("#compare-summary tbody tr").count()
    assert datasets >= 2
    # each group both models cover, with the board's corrected test of the group means, then the pooled prediction
    expect(page.locator("#compare-summary tfoot th").first).to_contain_text("group mean")
    expect(page.locator("#compare-pooled tbody tr").first).to_be_visible()
    expect(page.locator("details.compare-block")).to_have_count(datasets)
    expect(page.locator("details.compare-block[open] .js-plotly-plot")).to_have_count(1)  # one drawn, the rest on demand
    page.locator("details.compare-block summary").nth(1).click()
    expect(page.locator("details.compare-block .js-plotly-plot")).to_have_count(2)
