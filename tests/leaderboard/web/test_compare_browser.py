"""The compare page's searchable pickers in Chromium: a filter box over each select keeps the models holding every
typed word, and Enter picks the first."""

import pytest
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser


def _shown(page: Page, select: str) -> list[str]:
    return page.locator(f"{select} option").evaluate_all("options => options.filter(o => !o.hidden).map(o => o.value)")


def test_the_filter_keeps_models_with_every_word_and_enter_picks_the_first(watched: Page, site_url, synth):
    page = watched
    page.goto(f"{site_url}/compare.html?a=bm25&b=acme/closed-embed-1")
    expect(page.locator("#compare-summary")).to_be_visible()
    box = page.locator("#model-b-filter")
    box.fill("BGE baai")
    wanted = [m.id for m in synth.GOLDEN_MODELS if "bge" in m.id.lower() and "baai" in m.id.lower()]
    assert sorted(_shown(page, "#model-b")) == sorted(wanted + ["acme/closed-embed-1"])  # the chosen one stays
    expect(page.locator("#model-b-count")).to_have_text(f"{len(wanted)} of {len(synth.GOLDEN_MODELS)} models match")
    box.press("Enter")
    first = page.locator("#model-b option").evaluate_all(
        "options => options.filter(o => o.value.toLowerCase().includes('bge')).map(o => o.value)")[0]
    expect(page.locator("#model-b")).to_have_value(first)
    assert "b=" + first.replace("/", "%2F") in page.url
    assert sorted(_shown(page, "#model-b")) == sorted(wanted)  # the old choice is filtered out now
    expect(page.locator("#compare-summary caption")).to_contain_text(first)
    box.fill("")
    box.dispatch_event("input")
    assert len(_shown(page, "#model-b")) == len(synth.GOLDEN_MODELS)
    box.fill("no such words")
    expect(page.locator("#model-b-count")).to_have_text(f"0 of {len(synth.GOLDEN_MODELS)} models match")
    box.press("Enter")
    expect(page.locator("#model-b")).to_have_value(first)  # nothing matches: the choice stays
