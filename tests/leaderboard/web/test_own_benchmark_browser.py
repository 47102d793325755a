"""Your own benchmark (issue #47) in real Chromium, on a board of 200 models x 30 datasets: the home page's
recomputation of a chosen group from data/queries/*.js gives, to the printed digit, the build's own numbers for the
same group (data/board.js's cells, which the home table prints, and the ranks page's sentence), and for any subset
with weights the numbers of analysis/custom.py called directly; the address keeps the choice. One build (the
session's board_200x30), one page load."""

from __future__ import annotations

import html
import re

import pytest
from playwright.sync_api import Browser, expect

from leaderboard.analysis import best_words
from leaderboard.analysis.aggregate import ALL_GROUP
from leaderboard.analysis.custom import custom_group, where
from leaderboard.web.render import format_ci, format_number, format_score
from leaderboard.web.views.ranks import group_key
from tests.leaderboard.conftest import served, watch

pytestmark = [pytest.mark.browser]

TABLE = """() => [...document.querySelectorAll('#bench-table tbody tr')].map(r => [...r.cells].map(c => c.textContent))"""


def _range(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}–{high}"


def _expected_rows(group) -> dict[str, list[str]]:
    """Each model's row as the page must print it, from the GroupBoard the Python code made."""
    rows = {}
    for model_id, score in group.scores.items():
        ranked = score.mean_rank is not None
        rows[model_id] = [format_score(score.mean), format_ci(score.ci), _range(*score.rank_interval) if ranked else "–",
                          best_words.MARK if ranked and model_id in group.best_set else "",
                          format_number(score.mean_rank, 2) if ranked else "–"]
    return rows


def _page_sentence(group) -> str:
    ids = list(group.ranked_ids)
    tops = sorted((m for m in ids if m in group.best_set), key=lambda m: -group.scores[m].mean)
    return best_words.sentence(where(group), tops, len(ids), len(ids), False, len(ids), 0.05)


def test_the_page_recomputes_a_group_as_the_build_and_any_subset_as_python(browser: Browser, board_200x30):
    site, board = board_200x30
    overall = next(group for group in board.groups if group.name == ALL_GROUP)
    assert len(board.models) == 200 and len(overall.dataset_ids) == 30
    assert 0 < overall.ranked_models < len(overall.scores) < 200  # some unranked, some not covering every dataset
    page = browser.new_page(viewport={"width": 1366, "height": 900})
    problems = watch(page)
    with served(site) as url:
        # the address's choice: every dataset, the registered group All datasets
        page.goto(f"{url}/index.html?datasets={','.join(overall.dataset_ids)}")
        expect(page.locator("#bench")).to_have_attribute("open", "")
        expect(page.locator("#bench-answer")).to_be_visible()
        shown = {row[0]: row[1:] for row in page.evaluate(TABLE)}
        # the build's own numbers for the group: the home table's cells (data/board.js, printed by the build)
        cells = page.evaluate("""key => {
            const keys = [...document.querySelectorAll('#board thead th[data-key^="g-"]')].map(th => th.dataset.key);
            const g = keys.indexOf(key);
            return window.irboardData.board.rows.map(row => [row[0], row[7][g]]);
        }""", f"g-{group_key(ALL_GROUP)}")
        built = {}
        for model_id, cell in cells:
            if isinstance(cell, list):  # [mean, ci, mean rank or None, rank range or None, ★ 1/0]
                built[model_id] = [cell[0], cell[1], cell[3] or "–", best_words.MARK if cell[4] and cell[3] else "",
                                   cell[2] or "–"]
        assert shown == built
        assert sum(row[3] == best_words.MARK for row in shown.values()) >= 1
        # and the build's sentence for that group, as its ranks page prints it
        answer = page.locator("#bench-answer").text_content()
        ranks = html.unescape(re.sub(r"\s+", " ", (site / "ranks.html").read_text(encoding="utf-8")))
        assert answer.startswith("Who could be #1 on All datasets (30 datasets) at 95%: ") and answer in ranks

        # an arbitrary subset with weights, through the form: against analysis/custom.py called directly
        chosen = [overall.dataset_ids[k] for k in (0, 3, 13, 14, 17, 24, 29)]  # two cqadupstack parts among them
        weights = [2.0, 1.0, 0.5, 1.0, 3.0, 1.0, 1.5]
        page.click("#bench-none")
        for dataset_id, weight in zip(chosen, weights, strict=True):
            page.check(f"#bench-form input[name=ds][value='{dataset_id}']")
            page.fill(f"#bench-form input[name=w][data-for='{dataset_id}']", f"{weight:g}")
        page.click("#bench-go")
        expect(page.locator("#bench-answer")).to_contain_text("your benchmark (7 datasets)")
        expected = custom_group(board, chosen, weights)
        assert {row[0]: row[1:] for row in page.evaluate(TABLE)} == _expected_rows(expected)
        assert page.locator("#bench-answer").text_content() == _page_sentence(expected)
        assert f"datasets={'%2C'.join(d.replace('/', '%2F') for d in chosen)}" in page.url
        assert "weights=2%2C1%2C0.5%2C1%2C3%2C1%2C1.5" in page.url
        expect(page.locator("#bench-cite")).to_contain_text(f"--group-datasets {','.join(chosen)} "
                                                            "--group-weights 2,1,0.5,1,3,1,1.5")
    page.close()
    assert problems == []
