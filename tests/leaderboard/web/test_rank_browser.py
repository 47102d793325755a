"""Effect sizes on the compare page in real Chromium, against the numbers the dataset page states."""

import re

import pytest
from playwright.sync_api import Page, expect

from leaderboard.analysis.effects import paired_effect
from leaderboard.submissions.load import load_results

pytestmark = pytest.mark.browser


def test_compare_page_shows_the_effect_beside_the_p_value(page: Page, site_url, synth):
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{site_url}/compare.html?a=bm25&b=BAAI/bge-m3")
    block = page.locator(".compare-block", has=page.locator("summary", has_text="beir/scifact"))
    expect(block).to_contain_text("Effect BAAI/bge-m3 − bm25: Δ")
    text = block.locator("p").first.text_content()
    delta, low, high, dz = (float(x) for x in re.search(
        r"Δ (-?[\d.]+) \[(-?[\d.]+), (-?[\d.]+)\], d_z (-?[\d.]+)", text).groups())
    results = {(r.model.id, r.dataset_id): r for r in load_results(synth.GOLDEN_RESULTS).results}
    a, b = (results[(model, "beir/scifact")].per_query["nDCG@10"] for model in ("bm25", "BAAI/bge-m3"))
    expected = paired_effect(b, a)
    # the page works from per-query values rounded to 4 decimals
    assert (delta, low, high) == pytest.approx([100 * v for v in expected[:3]], abs=0.02)
    assert dz == pytest.approx(expected[3], abs=0.01)
    assert errors == []
