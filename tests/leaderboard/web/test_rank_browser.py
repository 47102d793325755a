"""Effect sizes on the compare page in real Chromium, against the numbers the dataset page states."""

import re

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.analysis.effects import paired_effect
from leaderboard.analysis.verdicts import family_size, shown_pvalue, verdict_interval
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
    # the interval of the board's corrected verdict on the pair (analysis/verdicts.py)
    board = build_leaderboard(load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification).results,
                              SiteSettings(), synth.golden_lookup)
    dataset = board.dataset("beir/scifact")
    i, j = dataset.position["BAAI/bge-m3"], dataset.position["bm25"]
    n = dataset.scores.shape[1]
    interval = verdict_interval(expected[0], float(np.std(b - a, ddof=1)) / np.sqrt(n), n - 1,
                                shown_pvalue(dataset.pvalues[i, j], 0.05), 0.05,
                                family_size(len(dataset.model_ids), "holm"))
    # the page works from per-query values rounded to 4 decimals
    assert (delta, low, high) == pytest.approx([100 * expected[0], 100 * interval[0], 100 * interval[1]], abs=0.02)
    assert dz == pytest.approx(expected[3], abs=0.01)
    assert errors == []
