"""The site's honest-ranks parts: effect sizes beside p-values, what each dataset can tell apart, the ranks page."""

import html
import json
import re

import numpy as np
import pytest
from playwright.sync_api import expect
from scipy import stats as scipy_stats

from leaderboard.analysis.aggregate import ALL_GROUP, SiteSettings, build_leaderboard, unit_of
from leaderboard.analysis.effects import minimum_detectable_effect, paired_effect
from leaderboard.analysis.ranks import group_difference_pvalues, rank_ranges, tie_bands
from leaderboard.analysis.stability import group_stability
from leaderboard.analysis.stats import corrected_matrix
from leaderboard.analysis.verdicts import shown_pvalue
from leaderboard.submissions.load import load_results
from leaderboard.web.views.dataset import build as build_dataset
from leaderboard.web.views.home import build as build_home
from leaderboard.web.views.model import build as build_model
from leaderboard.web.views.ranks import build as build_ranks
from leaderboard.web.views.ranks import group_key


@pytest.fixture(scope="module")
def board(synth):
    return build_leaderboard(load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification).results, SiteSettings(), synth.golden_lookup)


def test_dataset_rows_carry_the_effect_against_the_baseline(board):
    dataset = next(d for d in board.datasets if d.baseline is not None)
    page = build_dataset(board, dataset)
    b = dataset.position[dataset.baseline.model_id]
    for i, row in enumerate(page.rows):
        if i == b:
            assert row.effect is None
            continue
        diff, low, high, dz = paired_effect(dataset.scores[i], dataset.scores[b])
        assert row.effect.diff == pytest.approx(diff) == pytest.approx(row.diff)
        # the interval of the corrected verdict: the level the correction tested the pair at where it rejects,
        # Bonferroni's alpha / pairs elsewhere; it excludes 0 exactly when the corrected p is below alpha
        n, m = dataset.scores.shape[1], len(dataset.results)
        shown = shown_pvalue(dataset.pvalues[i, b], 0.05)
        se = (high - low) / 2 / scipy_stats.t.ppf(0.975, n - 1)
        raw = 2 * scipy_stats.t.sf(abs(diff) / se, n - 1)
        level = 0.05 * raw / shown if shown < 0.05 else 0.05 / (m * (m - 1) // 2)
        half = scipy_stats.t.isf(level / 2, n - 1) * se
        assert row.effect.ci == pytest.approx((diff - half, diff + half))
        assert (row.effect.ci[0] > 0 or row.effect.ci[1] < 0) == (shown < 0.05)
        assert row.effect.dz == pytest.approx(dz)
        # meaningful: significant after correction (the corrected p of the pair) and large enough
        significant = dataset.pvalues[i, b] < 0.05
        assert row.effect.meaningful == (significant and abs(diff) >= 0.05 * np.median(dataset.means))
    summary = page.separability
    assert summary.queries == len(dataset.query_ids) and summary.models == len(dataset.results)
    assert summary.mde_dz == pytest.approx(minimum_detectable_effect(len(dataset.query_ids), 0.05))
    pairs = len(dataset.results) * (len(dataset.results) - 1) // 2
    assert summary.mde_corrected == pytest.approx(
        minimum_detectable_effect(len(dataset.query_ids), 0.05 / pairs) * dataset.separability.typical_sd)
    first, second = np.triu_indices(len(dataset.results), k=1)
    assert summary.separable_share == pytest.approx(np.mean(dataset.pvalues[first, second] < 0.05))


def test_group_rank_ranges_and_bands_come_from_corrected_tests_of_group_means(board):
    for group in board.groups:
        # only models verified on the whole group are ranked; the others have no range and no band
        unranked = [m for m in group.scores if group.scores[m].mean_rank is None]
        assert all(group.scores[m].rank_interval == (0, 0) and group.scores[m].band == 0 for m in unranked)
        ordered = sorted((m for m in group.scores if m not in unranked), key=lambda m: (-group.scores[m].mean, m))
        if not ordered:
            continue
        boards = {d.info.id: d for d in board.datasets}
        diffs, variances, queries = [], [], []
        for dataset_id in group.dataset_ids:
            dataset = boards[dataset_id]
            scores = dataset.scores[[dataset.position[m] for m in ordered]]
            means = scores.mean(axis=1)
            diffs.append(means[:, None] - means[None, :])
            variances.append(np.var(scores[:, None, :] - scores[None, :, :], axis=2, ddof=1))
            queries.append(scores.shape[1])
        pvalues = corrected_matrix(group_difference_pvalues(diffs, variances, queries, group.weights), "holm")
        means = np.array([group.scores[m].mean for m in ordered])
        np.testing.assert_array_equal([group.scores[m].rank_interval for m in ordered],
                                      rank_ranges(means, pvalues, 0.05))
        np.testing.assert_array_equal([group.scores[m].band for m in ordered], tie_bands(means, pvalues, 0.05))
        assert group.scores[ordered[0]].band == 1


def test_ranks_home_and_model_pages(board):
    ranks = build_ranks(board)
    assert [table.name for table in ranks.tables][-1] == ALL_GROUP
    overall = next(g for g in board.groups if g.name == ALL_GROUP)
    table = ranks.tables[-1]
    ranked = [m for m in overall.scores if overall.scores[m].mean_rank is not None]  # verified on every dataset
    assert [row.model_id for row in table.rows] == sorted(ranked, key=lambda m: -overall.scores[m].mean)
    assert [row.rank for row in table.rows] == list(range(1, len(table.rows) + 1))
    home = build_home(board)
    assert len(home.separability) == len(board.datasets)
    assert [t.bands for t in home.rank_summary] == [t.bands for t in ranks.tables]
    group = next(g for g in board.groups if any(s.mean_rank is not None for s in g.scores.values()))
    model = next(m for m in board.models if m.info.id in group.scores and group.scores[m.info.id].mean_rank is not None)
    groups = {row.name: row for row in build_model(board, model).groups}
    assert groups[group.name].rank_interval == group.scores[model.info.id].rank_interval
    assert groups[group.name].ranked == sum(s.mean_rank is not None for s in group.scores.values())


def test_built_site_shows_ranks_effects_and_the_method(built_site):
    ranks = (built_site / "ranks.html").read_text()
    assert "Rank range" in ranks and 'id="all"' in ranks
    home = (built_site / "index.html").read_text()
    assert 'href="ranks.html"' in home and "What each benchmark can tell apart" in home
    dataset = (built_site / "datasets" / "beir__scifact.html").read_text()
    assert "What this dataset can tell apart" in dataset and "(interval of the corrected verdict)" in dataset
    assert "found with 80% power by one uncorrected comparison" in dataset
    method = (built_site / "method.html").read_text()
    for cited in ("Otero", "Urbano", "Parapar", "Ihemelandu", "Sakai", "Benjamini", "Sparck Jones", "Al Mohamad",
                  "Wilson", "Lancaster", "Hartung", "Paule", "Q-profile"):
        assert cited in method
    assert "exchangeable" in method and "Corrected p-values depend on the board" in method
    assert "Who could be #1 on " in home and "Who could be #1 on BEIR (4 datasets) at 95%" in ranks and "random halves" in ranks
    assert "Holm–Bonferroni correction (family-wise error rate)" in method
    assert "99.1%" in method  # the simulation's figure, quoted


def test_the_ranks_page_draws_how_stable_number_one_is_with_the_sentences_numbers(board, built_site):
    """Per ranked group a chart of the two stability checks (analysis/stability.py): its bars are the shares the
    checks compute, and the sentence above it (its text alternative) states the same numbers."""
    page = (built_site / "ranks.html").read_text()
    boards = {d.info.id: d for d in board.datasets}
    drawn = 0
    for group in board.groups:
        ranked = list(group.ranked_ids)
        if not ranked:
            continue
        key = group_key(group.name)
        figure = json.loads(re.search(rf'id="fig-stability-{key}-data">(.*?)</script>', page, re.S).group(1))
        found = group_stability(ranked, [boards[d].scores[[boards[d].position[m] for m in ranked]]
                                         for d in group.dataset_ids],
                                list(group.weights), [unit_of(d) for d in group.dataset_ids], seed=0)
        units = len(found.leave_one_out)  # 0 where the group has one unit: no second check
        halves, *left_out = figure["data"]
        assert len(left_out) == (1 if units else 0) and halves["y"][-1] == found.leader  # the leader at the top
        assert set(found.split_half) | set(found.leave_one_out.values()) == set(halves["y"])
        for model_id, share in zip(halves["y"], halves["x"], strict=True):
            assert share == round(100 * found.split_half.get(model_id, 0.0), 1)
        for model_id, left in zip(*(left_out[0][axis] for axis in "yx"), strict=True) if units else ():
            assert left == round(100 * list(found.leave_one_out.values()).count(model_id) / units, 1)
        section = page[page.index(f'<section aria-labelledby="{key}">'):]
        sentence = html.unescape(re.search(r'<p class="stability">(.*?)</p>', section, re.S).group(1))
        for model_id, share in found.split_half.items():
            assert f"{model_id} {share:.1%}" in sentence
        assert (f"{units} dataset units" in sentence or f"of {units}:" in sentence) if units else \
            "one dataset unit, so none to leave out" in sentence
        assert "the sentence above gives the same numbers" in section[:section.index("</figure>")]
        drawn += 1
    assert drawn >= 3
    assert 'src="js/plotly.min.js"' in page and 'src="js/charts.js"' in page


@pytest.mark.browser
def test_the_stability_chart_is_drawn_in_chromium(watched, site_url):
    watched.goto(f"{site_url}/ranks.html")
    chart = watched.locator("#fig-stability-all")
    chart.scroll_into_view_if_needed()
    expect(chart.locator("svg.main-svg").first).to_be_visible()
    expect(chart.locator("g.trace.bars")).to_have_count(2)  # split halves and datasets left out
    expect(chart.locator(".legendtext")).to_have_count(2)
