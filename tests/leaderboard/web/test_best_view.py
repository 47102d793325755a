"""Who could be #1 follows the view of the home table (issues #34 and #35): the ★ of each group mean and the bold
of each dataset value are the best set (ranks.best_set) among the ranked models the view shows, recomputed in the
browser from data/board.js (web.best_data) for every filter; the sentence above the table names it for the sorted
column; a language choice turns the multilingual groups' means into means over that language's dataset; the address
keeps the view. Expected values come from ranks.best_set applied to the shown models' own tests in Python, on the
synthetic board that the site fixture is built from."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import Page, expect

from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard, dataset_differences
from leaderboard.analysis.judged_words import set_clause
from leaderboard.analysis.ranks import beat_sizes, best_among, best_set, group_differences
from leaderboard.submissions.load import load_results
from leaderboard.web import best_data
from leaderboard.web.judged_data import dataset_flips, dataset_known
from leaderboard.web.views import home as home_view
from leaderboard.web.views.ranks import group_key

ALPHA = 0.05  # the site's default level, which the board below is built with


@pytest.fixture(scope="module")
def board(synth):
    loaded = load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification)
    return build_leaderboard(loaded.results, SiteSettings(), synth.golden_lookup)


def _group(board, name):
    return next(group for group in board.groups if group.name == name)


def _group_tests(board, group, ids):
    """The differences, standard errors and degrees of freedom of the group means of `ids`, pair by pair."""
    boards = {d.info.id: d for d in board.datasets}
    total, variance, df = group_differences(*dataset_differences(boards, group.dataset_ids, ids), group.weights)
    return np.array([group.scores[m].mean for m in ids]), total, np.sqrt(variance), df


def _alpha(board, shown: int, everyone: int) -> float:
    """The alpha that makes ranks.best_set over `shown` models test at alpha / (s - 1), s the grid's size the page
    tests them at (best_data.level_size; s = shown on the grid, s = everyone with no filter)."""
    return board.settings.tests.alpha * (shown - 1) / (best_data.level_size(shown, everyone) - 1)


def expected_group_set(board, group, shown) -> list[str]:
    """ranks.best_set over the shown ranked models alone, best mean first."""
    ids = [m for m in group.ranked_ids if m in shown]
    if len(ids) < 2:
        return ids
    means, diff, se, df = _group_tests(board, group, ids)
    keep = best_set(means, diff, se, df, _alpha(board, len(ids), len(group.ranked_ids)))
    return [ids[k] for k in sorted(range(len(ids)), key=lambda k: -means[k]) if keep[k]]


def expected_dataset_set(board, dataset, shown) -> list[str]:
    rows = [i for i in np.flatnonzero(dataset.ranked) if dataset.model_ids[i] in shown]
    n = dataset.scores.shape[1]
    means = dataset.means[rows]
    se = dataset.diff_sd[np.ix_(rows, rows)].astype(np.float64) / np.sqrt(n)
    keep = best_set(means, means[:, None] - means[None, :], se, n - 1,
                    _alpha(board, len(rows), int(dataset.ranked.sum())))
    return [dataset.model_ids[rows[k]] for k in sorted(range(len(rows)), key=lambda k: -means[k]) if keep[k]]


def test_the_set_among_any_models_is_best_set_over_them_alone(board):
    """beat_sizes/best_among (what the page computes with) against ranks.best_set run on each subset itself; with
    every model, the build's own best set."""
    rng = np.random.default_rng(7)
    alpha = board.settings.tests.alpha
    checked = 0
    for group in board.groups:
        ids = list(group.ranked_ids)
        if len(ids) < 3:
            continue
        means, diff, se, df = _group_tests(board, group, ids)
        sizes = beat_sizes(diff, se, df, alpha)
        assert best_data.best_of_all(ids, sizes) == set(group.best_set)
        for _ in range(20):
            members = np.sort(rng.choice(len(ids), size=rng.integers(2, len(ids) + 1), replace=False))
            sub = np.ix_(members, members)
            expected = best_set(means[members], diff[sub], se[sub], df[sub], alpha)
            assert best_among(sizes, members).tolist() == expected.tolist()
            tested = best_data.level_size(members.size, len(ids))  # the page: at the grid's size
            expected = best_set(means[members], diff[sub], se[sub], df[sub], alpha * (members.size - 1) / (tested - 1))
            assert best_among(sizes, members, tested).tolist() == expected.tolist()
            checked += 1
    for dataset in board.datasets:
        ids, means, sizes = best_data.dataset_sizes(board, dataset)
        assert best_data.best_of_all(ids, sizes) == {m for m, keep in zip(dataset.model_ids, dataset.best_set,
                                                                        strict=True) if keep}
    assert checked >= 40
    assert best_data.grid(180) == [2, 5, 17, 65, 180] and best_data.grid(2) == [2]


# --- in Chromium ----------------------------------------------------------------------------------------------

# The shown rows of the home table: per model id, the text of a column's cell, read the way table.js indexes columns.
READ = """key => {
  const table = document.getElementById('board'), taken = [];
  let index = null;
  Array.from(table.tHead.rows).forEach((row, r) => {
    let c = 0; taken[r] = taken[r] || [];
    Array.from(row.cells).forEach(cell => {
      while (taken[r][c]) { c += 1; }
      for (let dr = 0; dr < cell.rowSpan; dr += 1) {
        taken[r + dr] = taken[r + dr] || [];
        for (let dc = 0; dc < cell.colSpan; dc += 1) { taken[r + dr][c + dc] = true; }
      }
      if (cell.dataset.key === key) { index = c; }
      c += cell.colSpan;
    });
  });
  const out = {};
  table.querySelectorAll('tbody tr:not(.group-label)').forEach(row => {
    const cell = row.cells[index];
    out[row.querySelector('th a').textContent] = [cell.textContent.replace(/\\s+/g, ' ').trim(),
                                                  cell.classList.contains('top'), cell.nextElementSibling ?
                                                  cell.nextElementSibling.textContent.trim() : ''];
  });
  return out;
}"""


def _starred(page, key) -> set[str]:
    return {model for model, (text, _, _) in page.evaluate(READ, key).items() if "★" in text}


def _bold(page, key) -> set[str]:
    return {model for model, (_, top, _) in page.evaluate(READ, key).items() if top}


def _where(group) -> str:
    return f"{group.name} ({len(group.dataset_ids)} dataset{'s' if len(group.dataset_ids) != 1 else ''})"


@pytest.mark.browser
def test_star_bold_and_sentence_follow_filter_and_sort(watched: Page, site_url, board):
    page = watched
    page.goto(f"{site_url}/index.html")
    answer = page.locator("#answer-text")
    home = home_view.build(board)
    every = {m.info.id for m in board.models}
    overall = _group(board, "All datasets")
    expect(answer).to_have_text(home.answer)  # the page's own sentence, written again by the script
    assert _starred(page, "g-all") == set(overall.best_set)

    # a filter: the dense models only (acme/closed-embed-1, best on BEIR, stays; the lexical baseline goes)
    shown = {m.info.id for m in board.models if m.info.type == "dense"}
    assert shown and shown != every
    page.select_option("#f-type", "dense")
    beir = _group(board, "BEIR")
    page.locator('#board th[data-key="g-beir"] button.sort').click()
    tops = expected_group_set(board, beir, shown)
    ranked = [m for m in beir.ranked_ids if m in shown]
    assert len(ranked) >= 2 and tops
    expect(answer).to_have_text(best_data.best_sentence(_where(beir), tops, len(ranked), len(beir.ranked_ids),
                                                        True, ALPHA))
    for group in board.groups:
        assert _starred(page, f"g-{group_key(group.name)}") == set(expected_group_set(board, group, shown)), group.name
    for dataset in board.datasets:
        assert _bold(page, f"d-{dataset.slug}") == set(expected_dataset_set(board, dataset, shown)), dataset.info.id

    # a filter that leaves out the models that could be #1 among all: the set among the others is not empty
    best_all = set(expected_group_set(board, beir, every))
    rest = {m for m in shown if m not in best_all}
    page.fill("#f-q", "bge")
    narrowed = {m for m in shown if "bge" in m.lower()}
    assert narrowed & rest
    expect(answer).to_contain_text(f"among the {len([m for m in beir.ranked_ids if m in narrowed])} shown")
    assert _starred(page, "g-beir") == set(expected_group_set(board, beir, narrowed)) != set()

    # sorting by a dataset column: the sentence speaks of that dataset's bold
    dataset = next(d for d in board.datasets if d.info.group == "BEIR")
    page.fill("#f-q", "")
    page.locator(f'#board th[data-key="d-{dataset.slug}"] button.sort').click()
    ranked_there = [m for i, m in enumerate(dataset.model_ids) if dataset.ranked[i] and m in shown]
    expect(answer).to_have_text(best_data.best_sentence(
        f"{dataset.info.id} ({dataset.info.main_metric})", expected_dataset_set(board, dataset, shown),
        len(ranked_there), int(dataset.ranked.sum()), True, ALPHA, "bold"))


@pytest.mark.browser
def test_a_language_recomputes_the_multilingual_means_and_the_address_keeps_it(watched: Page, site_url, board):
    page = watched
    page.goto(f"{site_url}/index.html")
    fi = next(d for d in board.datasets if d.info.id == "miracl/fi")
    page.select_option("#f-lang", "fi")
    page.locator('#board th[data-key="g-miracl"] button.sort').click()
    expect(page.locator("#lang-note")).to_be_visible()
    expect(page.locator("#lang-note")).to_contain_text("without an interval")

    def check():
        cells = page.evaluate(READ, "g-miracl")
        ranked = [fi.model_ids[i] for i in np.flatnonzero(fi.ranked)]
        order = sorted(ranked, key=lambda m: -fi.means[fi.position[m]])
        for model in board.models:
            text, _, rank = cells[model.info.id]
            if model.info.id not in fi.position:  # no result on the chosen dataset: no mean, never one over fewer
                assert text == "0/1"
                continue
            value = 100 * fi.means[fi.position[model.info.id]]
            assert float(text.split()[0].rstrip("*†")) == pytest.approx(value, abs=0.051)
            assert "[" not in text and "rank" not in text  # no stale interval, no stale rank range
            assert rank == (str(order.index(model.info.id) + 1) if model.info.id in order else "–")
        assert _starred(page, "g-miracl") == set(expected_dataset_set(board, fi, set(fi.model_ids)))
        # mMARCO has no fi dataset: no mean at all, said in the line
        assert all(text == "–" for text, _, _ in page.evaluate(READ, "g-mmarco").values())
        expect(page.locator("#answer-text")).to_have_text(best_data.best_sentence(
            "MIRACL in fi (1 dataset)", expected_dataset_set(board, fi, set(fi.model_ids)), len(ranked), len(ranked),
            False, ALPHA) + (set_clause(dataset_flips(fi)) if dataset_known(fi) else ""))  # every model shown: whether the set holds over the holes
        # the sort line says what the recomputed mean lacks: no rank range says how sure the order is
        expect(page.locator("#board-sort")).to_have_text(
            "Sorted by MIRACL mean, highest first; each mean is over the fi dataset only and has no rank range, so "
            "nothing here says how sure the order is (the dataset page's rank ranges do).")

    check()
    assert "lang=fi" in page.url and "sort=g-miracl" in page.url
    page.goto(page.url)  # a shared link opens the same view
    expect(page.locator("#f-lang")).to_have_value("fi")
    check()
    sort = page.locator("#board-sort")
    page.locator('#board th[data-key="g-mmarco"] button.sort').click()  # no fi dataset: no mean to order by
    expect(sort).to_contain_text("; this group has no mean in fi, so the rows keep the default order.")
    page.select_option("#f-lang", "")  # over every language the means have their rank ranges again
    expect(sort).to_contain_text("; the rank range beside each mean says how sure.")
    expect(sort).not_to_contain_text("no rank range")
