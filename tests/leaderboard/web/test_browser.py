"""The built site in real Chromium (Debian's /usr/bin/chromium through Playwright, see conftest.py).

Screenshots go to test-output/screenshots/.
"""

import re

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def _visible_ids(page: Page) -> list[str]:
    return page.eval_on_selector_all("#board tbody tr:not([hidden]) th a", "links => links.map(a => a.textContent)")


def _column_values(page: Page, key: str, body: str = "ranked") -> list:
    """The visible values of a column in one table body: "ranked" (verified models) or "unranked"."""
    return page.evaluate(
        """([key, body]) => {
            const ths = [...document.querySelectorAll('#board thead th')];
            const header = ths.find(th => th.dataset.key === key);
            const index = document.querySelector('#board tbody tr:not(.group-label)').cells.length
                - [...header.parentElement.children].length + [...header.parentElement.children].indexOf(header);
            return [...document.querySelectorAll(`#board tbody.${body} tr:not([hidden]):not(.group-label)`)].map(
                row => parseFloat(row.cells[index].textContent));
        }""",
        [key, body],
    )


def test_home_sorts_filters_searches_and_keeps_state_in_the_url(watched: Page, site_url, screenshots, synth):
    page = watched
    page.goto(f"{site_url}/index.html")
    expect(page.locator("#status")).to_have_text(f"Showing {len(synth.GOLDEN_MODELS)} of "
                                                 f"{len(synth.GOLDEN_MODELS)} models.")
    page.screenshot(path=screenshots / "home.png", full_page=True)

    page.locator('th[data-key="d-beir__scifact"] button.sort').click()
    assert "sort=d-beir__scifact" in page.url and "desc=1" in page.url
    values = _column_values(page, "d-beir__scifact")
    known = [v for v in values if v == v]  # NaN (no result) sorts last
    assert known == sorted(known, reverse=True) and len(known) == 8
    assert values[-1] != values[-1]
    # models not ranked on every dataset stay apart, below, sorted among themselves (splade-v3 is ranked on nfcorpus
    # though its R@100 there is not re-scored: trust per metric)
    unranked = _column_values(page, "d-beir__scifact", "unranked")
    assert len(unranked) == 3 and unranked == sorted(unranked, reverse=True)
    label = page.locator("#board tr.group-label")
    expect(label).to_contain_text("Not re-scored: not ranked")
    page.select_option("select[name=trust]", "re-scored")  # re-scored or reproduced
    expect(label).to_be_hidden()
    assert "bm25" not in _visible_ids(page) and "BAAI/bge-m3" in _visible_ids(page)
    assert "trust=re-scored" in page.url
    page.select_option("select[name=trust]", "reproduced")  # no record in the golden board: nothing reproduced
    assert _visible_ids(page) == []
    page.select_option("select[name=trust]", "")

    page.select_option("#f-type", "dense")
    dense = [m.id for m in synth.GOLDEN_MODELS if m.type == "dense"]
    assert sorted(_visible_ids(page)) == sorted(dense)
    assert "type=dense" in page.url

    page.fill("#f-q", "bge")
    assert sorted(_visible_ids(page)) == sorted(m for m in dense if "bge" in m.lower())
    page.screenshot(path=screenshots / "home-filtered.png", full_page=True)

    shared = page.url
    page.goto(shared)  # a shared address restores the view
    assert page.input_value("#f-q") == "bge" and page.input_value("#f-type") == "dense"
    assert sorted(_visible_ids(page)) == sorted(m for m in dense if "bge" in m.lower())

    page.click("#f-reset")
    page.check("input[name=zeroshot]")
    zero_shot = sorted(_visible_ids(page))
    assert "BAAI/bge-small-en-v1.5" not in zero_shot and "bm25" in zero_shot
    page.uncheck("input[name=zeroshot]")
    page.check("input[name=open]")
    assert "acme/closed-embed-1" not in _visible_ids(page)
    page.select_option("#f-view", "rank")
    expect(page.locator('th[data-key="r-beir"]')).to_be_visible()
    expect(page.locator('th[data-key="g-beir"]')).to_be_hidden()


def test_dataset_page_from_the_home_link_draws_its_charts(watched: Page, site_url, screenshots):
    page = watched
    page.goto(f"{site_url}/index.html")
    page.click('th[data-key="d-beir__scifact"] a')
    expect(page).to_have_url(f"{site_url}/datasets/beir__scifact.html")
    expect(page.locator("h1")).to_have_text("beir/scifact")
    page.locator("#fig-scores").scroll_into_view_if_needed()  # charts are drawn when they come near the screen
    expect(page.locator("#fig-scores svg.main-svg").first).to_be_visible()
    for plot in page.locator("[data-figure]").all():  # each is drawn when it comes near the screen
        plot.scroll_into_view_if_needed()
        expect(plot).to_have_class(re.compile("js-plotly-plot"))
    assert page.locator(".js-plotly-plot").count() == 4
    page.screenshot(path=screenshots / "dataset.png", full_page=True)


def test_model_page_shows_markup_as_text_and_runs_nothing(watched: Page, site_url, screenshots):
    page = watched
    page.goto(f"{site_url}/index.html")
    page.click("text=test/markup-in-metadata")
    expect(page.locator("h1")).to_have_text("test/markup-in-metadata")
    expect(page.locator(".facts")).to_contain_text("<script>alert('xss')</script>")
    expect(page.locator("pre code").first).to_contain_text("</pre><h1>x</h1>")
    assert page.locator("iframe, main img").count() == 0
    page.locator("#fig-model").scroll_into_view_if_needed()
    expect(page.locator("#fig-model svg.main-svg").first).to_be_visible()
    page.screenshot(path=screenshots / "model-markup.png", full_page=True)


def test_model_page_draws_one_recall_at_scale_chart_when_scrolled_to(watched: Page, site_url, screenshots, synth):
    page = watched
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{site_url}/models/baai__bge-m3.html")
    chart = page.locator("#fig-scale")
    page.wait_for_load_state("load")
    assert chart.evaluate("el => el.getBoundingClientRect().top") > 900 + 300  # beyond the observer's margin
    expect(chart).not_to_have_class(re.compile("js-plotly-plot"))
    picker = page.locator("#scale-choice")
    assert sorted(picker.locator("option").all_inner_texts()) == sorted(d.id for d in synth.GOLDEN_DATASETS)
    expect(page.locator('.plot[id^="fig-scale"]')).to_have_count(1)  # one chart, not ten
    chart.scroll_into_view_if_needed()
    expect(chart.locator("svg.main-svg").first).to_be_visible()
    expect(chart.locator(".xtitle")).to_contain_text("log scale")
    # three k in each of the two growth scenarios, and the measured points
    expect(chart.locator(".legendtext")).to_have_count(7)
    expect(chart.locator(".gtitle")).to_contain_text("beir/cqadupstack/android")
    picker.select_option(label="beir/scifact")
    expect(chart.locator(".gtitle")).to_contain_text("beir/scifact")
    expect(page.locator("#recall-at-scale ~ figure .choice-title")).to_contain_text("beir/scifact")
    page.screenshot(path=screenshots / "model-recall-at-scale.png", full_page=True)
    page.click("text=Method and measured error")
    expect(page).to_have_url(f"{site_url}/method.html#recall-at-scale")
    evidence = page.locator("#evidence-caption").locator("xpath=..")  # the table of measured errors
    expect(evidence).to_contain_text("all-MiniLM-L6-v2")
    expect(evidence.locator("tr.used").first).to_contain_text("per_query")


def test_home_prediction_column_sorts_and_links_to_the_method(watched: Page, site_url, screenshots):
    page = watched
    page.goto(f"{site_url}/index.html")
    header = page.locator('th[data-key="pred"]')
    expect(header).to_contain_text("model-based")
    header.locator("button.sort").click()
    assert "sort=pred" in page.url
    assert _visible_ids(page)[0] == "BAAI/bge-m3"  # the only model with a mean; the others sort last
    header.locator("a").click()
    expect(page).to_have_url(f"{site_url}/method.html#recall-at-scale")
    expect(page.locator("h2#recall-at-scale")).to_contain_text("model-based prediction")
    page.screenshot(path=screenshots / "method.png", full_page=True)


def test_compare_page_over_http(watched: Page, site_url, screenshots):
    page = watched
    page.goto(f"{site_url}/compare.html?a=bm25&b=BAAI/bge-m3")
    expect(page.locator("#compare-status")).to_have_text("10 datasets with results for both models.")
    page.select_option("#model-b", "org/partial-model")
    expect(page.locator("#compare-status")).to_have_text("2 datasets with results for both models.")
    assert "b=org%2Fpartial-model" in page.url
    expect(page.locator(".compare-block")).to_have_count(2)  # the first drawn, the others when opened
    expect(page.locator(".compare-block .js-plotly-plot")).to_have_count(1)
    expect(page.locator("#compare-summary tbody tr")).to_have_count(2)
    page.screenshot(path=screenshots / "compare.png", full_page=True)


def test_pages_work_from_file_urls(watched: Page, built_site, screenshots):
    page = watched
    page.goto((built_site / "index.html").as_uri() + "?type=sparse")
    assert _visible_ids(page) == ["naver/splade-v3"]
    page.goto((built_site / "compare.html").as_uri() + "?a=bm25&b=org/miracl-only")
    expect(page.locator("#compare-status")).to_have_text("2 datasets with results for both models.")
    page.screenshot(path=screenshots / "compare-file-url.png", full_page=True)
    page.goto((built_site / "datasets" / "miracl__sw.html").as_uri())
    page.locator("#fig-boxes").scroll_into_view_if_needed()
    expect(page.locator("#fig-boxes svg.main-svg").first).to_be_visible()


MARKUP_QUERIES = ["<b>x</b>", "<img/src=x/onerror=alert(1)>", "<a/href=javascript:alert(2)>y</a>", "a&amp;b",
                  "%{x}"]


@pytest.fixture(scope="module")
def markup_site(tmp_path_factory):
    """Two models evaluated with `irboard evaluate --run` on a dataset whose query ids are markup."""
    from leaderboard.cli import main
    from leaderboard.web.build import build_site

    root = tmp_path_factory.mktemp("markup-queries")
    (root / "qrels.txt").write_text("".join(f"{q} 0 d{i} 1\n" for i, q in enumerate(MARKUP_QUERIES)))
    for model_id, reverse in (("org/a", False), ("org/b", True)):
        lines = []
        for i, query in enumerate(MARKUP_QUERIES):  # the relevant document at a different rank for every query
            rank = len(MARKUP_QUERIES) - i if reverse else i + 1
            docs = [f"z{j}" for j in range(rank - 1)] + [f"d{i}"]
            lines += [f"{query} Q0 {doc} {r + 1} {10.0 - r} t\n" for r, doc in enumerate(docs)]
        (root / "run.txt").write_text("".join(lines))
        assert main(["evaluate", "--run", str(root / "run.txt"), "--qrels", str(root / "qrels.txt"), "--quiet",
                     "--model-id", model_id, "--dataset-id", "test/markup", "--results-dir",
                     str(root / "results"), "--declare", "--depth", "1000"]) == 0  # all each query retrieves
    build_site(root / "results", root / "_site")
    return root / "_site"


def test_compare_chart_shows_markup_query_ids_as_text(watched: Page, markup_site, screenshots):
    page = watched
    page.goto((markup_site / "compare.html").as_uri() + "?a=org/a&b=org/b")
    expect(page.locator(".compare-block .js-plotly-plot svg.main-svg").first).to_be_visible()
    queries = page.evaluate("() => window.irboardData.datasets['test/markup'].queries")
    assert sorted(queries) == sorted(MARKUP_QUERIES)
    for index, query in enumerate(queries):
        page.wait_for_timeout(60)  # Plotly drops hover events closer together than 50 ms
        page.evaluate("""i => Plotly.Fx.hover(document.querySelector('.compare-block .js-plotly-plot'),
                                              [{curveNumber: 0, pointNumber: i}])""", index)
        label = page.locator(".compare-block .hovertext text").first
        expect(label).to_contain_text(f"query {query}x")  # the id exactly as written, markup and all
        assert label.locator("a, [style*='bold']").count() == 0
        if index == 0:
            page.screenshot(path=screenshots / "compare-markup.png", full_page=True)
    assert page.locator("img").count() == 0
