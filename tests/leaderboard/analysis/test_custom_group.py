"""A reader's own benchmark (analysis/custom.py): over a registered group's datasets it is that group, number for
number; with weights its means, intervals and tests are the formulas of docs/statistics.md computed here from the
per-query values with numpy and scipy; the choice is read or refused in one line; `irboard compare
--group-datasets` reports it."""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest
from scipy import stats as scipy_stats

from evaluator.errors import IrboardError
from leaderboard.analysis.aggregate import SiteSettings, build_leaderboard
from leaderboard.analysis.custom import NAME, custom_group, parse_choice, where
from leaderboard.cli import main
from leaderboard.submissions.load import load_results
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def board(synth):
    loaded = load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification)
    return build_leaderboard(loaded.results, SiteSettings(), synth.golden_lookup)


def test_a_registered_groups_datasets_give_that_group(board):
    for group in board.groups:
        mine = custom_group(board, list(reversed(group.dataset_ids)))  # any order: the board's order is used
        assert mine.name == group.name and mine.dataset_ids == group.dataset_ids
        assert mine.scores == group.scores and mine.best_set == group.best_set
        assert mine.ranked_ids == group.ranked_ids and np.array_equal(mine.pvalues, group.pvalues)
        assert where(mine) == f"{group.name} ({len(group.dataset_ids)} dataset{'s' if len(group.dataset_ids) > 1 else ''})"


def _holm(p: list[float]) -> list[float]:
    order = sorted(range(len(p)), key=lambda k: p[k])
    adjusted, running = [0.0] * len(p), 0.0
    for step, k in enumerate(order):
        running = max(running, min(1.0, (len(p) - step) * p[k]))
        adjusted[k] = running
    return adjusted


def test_weighted_means_intervals_and_tests_follow_the_formulas(board):
    chosen = [d.info.id for d in board.datasets][:5:2]
    weights = [2.0, 1.0, 3.0]
    group = custom_group(board, chosen, weights)
    assert group.name == NAME and where(group) == "your benchmark (3 datasets)"
    assert group.weights == pytest.approx([2 / 6, 1 / 6, 3 / 6], abs=1e-15)
    boards = [board.dataset(d) for d in group.dataset_ids]
    w = dict(zip(chosen, weights, strict=True))
    share = np.array([w[d] for d in group.dataset_ids]) / 6.0
    rows = {m: [b.scores[b.position[m]] for b in boards] for m in group.scores}
    assert rows and set(group.coverage) >= set(group.scores)
    quantile_level = 0.975
    for model_id, score in group.scores.items():
        means = np.array([values.mean() for values in rows[model_id]])
        assert score.mean == pytest.approx(float(share @ means), abs=1e-14)
        # the score interval of a weighted mean: Wilson's form with the variance of the weighted sum and
        # Welch-Satterthwaite degrees of freedom
        parts = np.array([s * s * values.var() / values.size for s, values in zip(share, rows[model_id], strict=True)])
        df = parts.sum() ** 2 / sum(part * part / (values.size - 1) for part, values in zip(parts, rows[model_id],
                                                                                            strict=True))
        q2 = scipy_stats.t.ppf(quantile_level, df) ** 2
        m = score.mean
        c = q2 * parts.sum() / (m * (1 - m))
        centre, half = (m + c / 2) / (1 + c), np.sqrt(c * m * (1 - m) + c * c / 4) / (1 + c)
        assert score.ci == pytest.approx((centre - half, centre + half), abs=1e-12)
    # each pair of ranked models: a Welch-Satterthwaite t-test of the weighted sum of mean differences, Holm over
    # the pairs
    ids = list(group.ranked_ids)
    assert len(ids) >= 3
    pairs = list(itertools.combinations(range(len(ids)), 2))
    raw = []
    for i, j in pairs:
        diffs = [b.scores[b.position[ids[i]]] - b.scores[b.position[ids[j]]] for b in boards]
        parts = [s * s * d.var(ddof=1) / d.size for s, d in zip(share, diffs, strict=True)]
        df = sum(parts) ** 2 / sum(part * part / (d.size - 1) for part, d in zip(parts, diffs, strict=True))
        t = sum(s * d.mean() for s, d in zip(share, diffs, strict=True)) / np.sqrt(sum(parts))
        raw.append(2 * scipy_stats.t.sf(abs(t), df))
    for (i, j), p in zip(pairs, _holm(raw), strict=True):
        assert group.pvalues[i, j] == pytest.approx(p, rel=1e-4, abs=1e-12)
    # rank ranges from those tests
    for k, model_id in enumerate(ids):
        mean = group.scores[model_id].mean
        better = sum(group.pvalues[k, o] < 0.05 and group.scores[ids[o]].mean > mean for o in range(len(ids)))
        worse = sum(group.pvalues[k, o] < 0.05 and group.scores[ids[o]].mean < mean for o in range(len(ids)))
        assert group.scores[model_id].rank_interval == (1 + better, len(ids) - worse)


def test_the_choice_is_read_or_refused_in_one_line(board):
    assert parse_choice("beir/scifact, classic/cacm") == (["beir/scifact", "classic/cacm"], None)
    assert parse_choice("beir/scifact,classic/cacm", "2,0.5") == (["beir/scifact", "classic/cacm"], [2.0, 0.5])
    for datasets, weights, words in (("", "", "no dataset id"), ("a,a", "", "twice"), ("a,b", "1", "2 positive"),
                                     ("a,b", "1,-1", "2 positive"), ("a,b", "x,1", "not a list of numbers")):
        with pytest.raises(IrboardError, match=words):
            parse_choice(datasets, weights)
    with pytest.raises(IrboardError, match="'nope' is not a dataset of the board; choose among"):
        custom_group(board, ["nope"])


def test_compare_reports_the_group_of_the_pull_request(tmp_path, capsys):
    root = tmp_path / "results"
    for model in ("bm25", "splade-tiny"):
        shutil.copytree(ROOT / "results" / model, root / model)
    new = root / "splade-tiny" / "classic__cacm.json"
    chosen = "classic/cacm,classic/cisi,beir/scifact"
    assert main(["compare", "--results", str(root), str(new), "--group-datasets", chosen, "--group-weights",
                 "1,1,2"]) == 0
    text = capsys.readouterr().out
    assert "### Your benchmark: beir/scifact (weight 0.5), classic/cacm (weight 0.25), classic/cisi (weight 0.25)" in text
    loaded = load_results(root)
    group = custom_group(build_leaderboard(loaded.results, SiteSettings(), warnings=[]),
                         ["classic/cacm", "classic/cisi", "beir/scifact"], [1.0, 1.0, 2.0])
    score = group.scores["splade-tiny"]
    assert f"| splade-tiny | {score.mean:.4f} | [{score.ci[0]:.4f}, {score.ci[1]:.4f}] |" in text
    assert "- No model is ranked on your benchmark (3 datasets)" in text  # without judgments none is re-scored
    assert main(["compare", "--results", str(root), str(new), "--group-datasets", "classic/cacm,nope"]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "'nope' is not a dataset of the board" in error


def test_the_pull_requests_description_can_name_the_group(tmp_path, capsys):
    """The option the home page prints, pasted into a pull request's description among other text (and markup),
    is what `compare --group-from` reports; a description without it reports no group, and nothing but the ids
    and weights of the option is taken."""
    from leaderboard.analysis.custom import choice_in_text

    assert choice_in_text("x\n`irboard compare --group-datasets classic/cacm,beir/scifact --group-weights 1,2`") == (
        "classic/cacm,beir/scifact", "1,2")
    assert choice_in_text("--group-datasets=beir/scifact;rm -rf /") == ("beir/scifact", "")
    assert choice_in_text("no option here") is None
    root = tmp_path / "results"
    for model in ("bm25", "splade-tiny"):
        shutil.copytree(ROOT / "results" / model, root / model)
    new = root / "splade-tiny" / "classic__cacm.json"
    description = tmp_path / "description.txt"
    description.write_text("Adds CACM.\n\nMy benchmark: `irboard compare --group-datasets "
                           "classic/cacm,classic/cisi,beir/scifact --group-weights 1,1,2` <script>x</script>\n")
    assert main(["compare", "--results", str(root), str(new), "--group-from", str(description)]) == 0
    text = capsys.readouterr().out
    assert "### Your benchmark: beir/scifact (weight 0.5), classic/cacm (weight 0.25), classic/cisi (weight 0.25)" in text
    assert "<script>" not in text
    description.write_text("Adds CACM.")
    assert main(["compare", "--results", str(root), str(new), "--group-from", str(description)]) == 0
    assert "Your benchmark" not in capsys.readouterr().out
    description.write_text("--group-datasets classic/cacm,nope")
    assert main(["compare", "--results", str(root), str(new), "--group-from", str(description)]) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "'nope' is not a dataset of the board" in error
    assert main(["compare", "--results", str(root), str(new), "--group-from", str(tmp_path / "missing")]) == 1
    assert "cannot read it" in capsys.readouterr().err
