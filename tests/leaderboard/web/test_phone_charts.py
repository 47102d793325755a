"""Charts on a phone (390 px, touch) and a desktop in Chromium: on the phone the legend sits below the axis title
without covering it, tick labels stay inside the chart, no toolbar is drawn and dragging does not zoom; at 768 and
1366 px no legend covers an axis title either, and zooming by drag stays."""

import pytest
from playwright.sync_api import Browser, expect

from tests.leaderboard.conftest import watch

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 800}, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1366, "height": 900}}
CHARTS = [("models/baai__bge-m3.html", "#fig-scale"), ("datasets/beir__scifact.html", "#fig-wtl"),
          ("datasets/beir__scifact.html", "#fig-pvalues"), ("datasets/beir__scifact.html", "#fig-scores"),
          ("pareto/g-miracl.html?cost=dim", "#fig-g-miracl-dim")]
BOXES = """chart => Object.fromEntries(['.legend', '.xtitle', '.ytitle', '.modebar', '.main-svg', '.xtick text',
    '.ytick text'].map(s => [s, [...chart.querySelectorAll(s)].map(e => { const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom]; })]).concat([['dragmode', chart._fullLayout.dragmode]]))"""


def _overlap(a, b) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def _drawn(browser: Browser, site_url: str, device: dict, path: str, selector: str):
    context = browser.new_context(**device)
    page = context.new_page()
    problems = watch(page)
    page.goto(f"{site_url}/{path}")
    chart = page.locator(selector)
    chart.scroll_into_view_if_needed()
    expect(chart.locator("svg.main-svg").first).to_be_visible()
    return context, chart.evaluate(BOXES), problems


@pytest.mark.parametrize("path,selector", CHARTS)
def test_on_a_phone_nothing_covers_the_axis_titles_and_dragging_scrolls(browser: Browser, site_url, path, selector):
    context, boxes, problems = _drawn(browser, site_url, PHONE, path, selector)
    context.close()
    assert problems == []
    svg = boxes[".main-svg"][0]
    for legend in boxes[".legend"]:
        for title in boxes[".xtitle"] + boxes[".ytitle"]:
            assert not _overlap(legend, title), (legend, title)
        assert legend[3] <= svg[3] + 0.5 and legend[0] >= svg[0] - 0.5  # inside the chart, not cut off
    for label in boxes[".xtick text"] + boxes[".ytick text"]:
        assert label[0] >= svg[0] - 0.5 and label[2] <= svg[2] + 0.5, label  # tick labels not clipped
    assert boxes[".modebar"] == [] and boxes["dragmode"] is False


def test_a_phone_legend_goes_below_the_plot(browser: Browser, site_url):
    context, boxes, _ = _drawn(browser, site_url, PHONE, "models/baai__bge-m3.html", "#fig-scale")
    context.close()
    (legend,), (title,) = boxes[".legend"], boxes[".xtitle"]
    assert legend[1] >= title[3] - 0.5  # the legend starts under the x-axis title


@pytest.mark.parametrize("width", [768, 1366])
@pytest.mark.parametrize("path,selector", CHARTS)
def test_on_a_desktop_legends_clear_the_axis_titles_and_zoom_stays(browser: Browser, site_url, path, selector,
                                                                    width):
    context, boxes, problems = _drawn(browser, site_url, {"viewport": {"width": width, "height": 900}}, path,
                                      selector)
    context.close()
    assert problems == [] and boxes["dragmode"] == "zoom"
    for legend in boxes[".legend"]:
        for title in boxes[".xtitle"] + boxes[".ytitle"]:
            assert not _overlap(legend, title), (legend, title)


@pytest.mark.parametrize("path", ["models/baai__bge-m3.html", "datasets/beir__scifact.html",
                                  "pareto/g-miracl.html"])
def test_on_a_phone_table_captions_wrap_to_the_screen(browser: Browser, site_url, path):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.goto(f"{site_url}/{path}")
    edges = page.locator(".table-wrap caption").evaluate_all(
        "captions => captions.filter(c => c.offsetParent).map(c => c.getBoundingClientRect().right)")
    context.close()
    assert edges and max(edges) <= 390, edges
