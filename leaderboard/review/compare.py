"""`irboard compare`: each new result as the board published after the merge will show it, and what it changes.

Used by the pull-request workflow to write the job summary. The summary does not run tests of its own: it builds
the board of every result under the results folder (the pull request's files included) with the site's settings,
and reports from that board, for each new result on its dataset's main metric, the difference from the baseline
and from the current best with the board's corrected p-value (the same test, over the same family: every pair of
the dataset's models, with the same correction) and the interval that verdict rests on
(analysis/verdicts.py). The "current best" is the best *ranked* other result (its main metric re-scored from its
stored ranking against the judgments, leaderboard/submissions/verify.py), as on the site, and whether the new result could be #1
(★, the best set: the site's one verdict on who is best, in the site's words, analysis/best_words.py), with the
sentence naming every model that could be #1 on each dataset it touches, and for each new result with a value short
of re-scored what `irboard evaluate` and `validate` say of its metrics' trust, in their words (evaluator/trust.py).
It then builds the board without the
pull request's files and lists, labelled, the verdicts between other models that the new results change:
adding a model adds pairs to the family, and a family-wise correction over more pairs moves every p-value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.errors import IrboardError
from evaluator.result import read_result
from evaluator.trust import RANKED_TIERS, tier_lines, weakest
from leaderboard.analysis import best_words, robust
from leaderboard.analysis.aggregate import DatasetBoard, Leaderboard, SiteSettings, build_leaderboard
from leaderboard.analysis.custom import custom_group, where
from leaderboard.analysis.judged_words import judgments_line, row_holds, row_judged
from leaderboard.analysis.stats import CORRECTIONS, PAIRED_TESTS
from leaderboard.analysis.verdicts import (
    family_size,
    pvalue_text,
    shown_pvalue,
    verdict_interval,
    verdict_words,
)
from leaderboard.submissions.catalog import DEFAULT_BASELINE, dataset_info, main_metric
from leaderboard.submissions.holes import judged_name
from leaderboard.submissions.load import load_results
from leaderboard.submissions.verify import Judgments

LISTED_CHANGES = 20  # verdict changes listed per dataset; the rest are counted


def markdown_cell(text: str) -> str:
    """Markdown table cell: no pipes or markup from submitted text; control characters shown as \\xNN."""
    text = text.replace("&", "&amp;").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"[\x00-\x1f\x7f]", lambda match: f"\\x{ord(match[0]):02x}", text)


@dataclass(frozen=True)
class PairVerdict:
    """One pair on a dataset's board, as its pages show it: difference (row minus other), the interval the verdict
    rests on, the shown corrected p-value and the verdict ("better", "worse" or "not significant")."""

    other: str
    diff: float
    interval: tuple[float, float]
    pvalue: float
    verdict: str


def pair_verdict(dataset: DatasetBoard, model_id: str, other_id: str, alpha: float, correction: str,
                 margin: float) -> PairVerdict:
    """The pair (model, other) on `dataset` as the board decides it (the p-value shown on its pages)."""
    i, j = dataset.position[model_id], dataset.position[other_id]
    p = float(shown_pvalue(dataset.pvalues[i, j], alpha))
    diff = float(dataset.means[i] - dataset.means[j])
    n = dataset.scores.shape[1]
    se = float(dataset.diff_sd[i, j]) / np.sqrt(n) if n > 1 else 0.0
    low, high = verdict_interval(diff, se, n - 1, p, alpha, family_size(len(dataset.model_ids), correction))
    verdict = str(verdict_words(diff, low, high, p, alpha, margin))
    return PairVerdict(other_id, diff, (float(low), float(high)), p, verdict)


def _board(results, settings: SiteSettings) -> Leaderboard:
    return build_leaderboard(results, settings, dataset_info, warnings=[])


class BoardProblems(Exception):
    """The results folder holds files the board cannot take (load_results' problems): no board to report from."""

    def __init__(self, problems: list[str]):
        super().__init__(problems[0])
        self.problems = problems


def boards_before_and_after(new_files: list[Path], results_root: Path, settings: SiteSettings,
                            judgments: Judgments | None) -> tuple[Leaderboard, Leaderboard, set[str]]:
    """(the board without the new files, the board with every file, the new files' paths as loaded)."""
    loaded = load_results(results_root, keep_metrics=lambda d: [dataset_info(d).main_metric],
                          is_verified=judgments)
    if loaded.problems:
        raise BoardProblems(loaded.problems)
    new = {str(Path(path).resolve()) for path in new_files}
    ours = {result.path for result in loaded.results if str(Path(result.path).resolve()) in new}
    missing = new - {str(Path(path).resolve()) for path in ours}
    if missing:
        raise IrboardError(f"{sorted(missing)[0]}: not a result file under {results_root}; pass files of that "
                           "folder")
    before = [result for result in loaded.results if result.path not in ours]
    return _board(before, settings), _board(loaded.results, settings), ours


def _cell(pair: PairVerdict | None, alpha: float) -> str:
    if pair is None:
        return "—"
    mark = {"better": "▲", "worse": "▼", "equivalent": "≈"}.get(pair.verdict, "?")
    low, high = pair.interval
    return (f"{mark} {pair.diff:+.4f} [{low:+.4f}, {high:+.4f}] vs {markdown_cell(pair.other)} "
            f"(p = {pvalue_text(pair.pvalue, alpha)})")


def _changed_verdicts(before: DatasetBoard, after: DatasetBoard, alpha: float) -> tuple[list[str], str]:
    """(pairs of models on both boards whose verdict differs, best mean first; how far their p-values move)."""
    shared = [model_id for model_id in after.model_ids if model_id in before.position]
    rows_after = np.array([after.position[m] for m in shared], dtype=np.int64)
    rows_before = np.array([before.position[m] for m in shared], dtype=np.int64)

    def signs(board: DatasetBoard, rows: np.ndarray) -> np.ndarray:
        p = shown_pvalue(board.pvalues[np.ix_(rows, rows)], alpha)
        diff = board.means[rows][:, None] - board.means[rows][None, :]
        return np.where(p < alpha, np.sign(diff), 0.0)

    old, new = signs(before, rows_before), signs(after, rows_after)
    first, second = np.nonzero(np.triu(old != new, k=1))
    moved = np.abs(shown_pvalue(after.pvalues[np.ix_(rows_after, rows_after)], alpha)
                   - shown_pvalue(before.pvalues[np.ix_(rows_before, rows_before)], alpha))
    moved = np.triu(moved, k=1)
    words = {1.0: "better", -1.0: "worse", 0.0: "not significantly different"}
    lines = []
    for i, j in zip(first.tolist(), second.tolist(), strict=True):
        a, b = rows_after[i], rows_after[j]
        p_old = shown_pvalue(before.pvalues[rows_before[i], rows_before[j]], alpha)
        lines.append(f"{markdown_cell(shared[i])} vs {markdown_cell(shared[j])}: {words[old[i, j]]} "
                     f"(p = {pvalue_text(float(p_old), alpha)}) → {words[new[i, j]]} "
                     f"(p = {pvalue_text(float(shown_pvalue(after.pvalues[a, b], alpha)), alpha)})")
    if not moved.any():
        return lines, "no p-value of other models moves"
    i, j = np.unravel_index(int(np.argmax(moved)), moved.shape)
    p_old = float(shown_pvalue(before.pvalues[rows_before[i], rows_before[j]], alpha))
    p_new = float(shown_pvalue(after.pvalues[rows_after[i], rows_after[j]], alpha))
    return lines, (f"p-values move on {int(np.count_nonzero(moved))} of {len(shared) * (len(shared) - 1) // 2} pairs "
                   f"of other models (most: {markdown_cell(shared[i])} vs {markdown_cell(shared[j])}, "
                   f"{pvalue_text(p_old, alpha)} → {pvalue_text(p_new, alpha)})")


def comparison_markdown(new_files: list[Path], results_root: Path, baseline: str = DEFAULT_BASELINE,
                        judgments: Judgments | None = None, group: tuple[list[str], list[float] | None] | None = None
                        ) -> str:
    """`judgments` decide which results are verified (none without them). `group`: (dataset ids, weights or None),
    a reader's own benchmark (analysis/custom.py, the home page's "Your own benchmark"), reported for the new
    results' models after the per-dataset table."""
    settings = SiteSettings(baseline=baseline)
    tests = settings.tests
    alpha = tests.alpha
    try:
        before, after, ours = boards_before_and_after(new_files, results_root, settings, judgments) if new_files \
            else (None, None, set())
    except BoardProblems as error:
        return _without_board(new_files, error.problems)
    lines = ["## irboard: the submitted results as the board will show them after the merge", "",
             f"{PAIRED_TESTS[tests.method].text} on per-query values, {CORRECTIONS[tests.correction][1]} of the "
             f"dataset (the family the board corrects over, with every model on it after the merge), α = {alpha:g}: "
             "the same p-values the dataset pages will show. ▲/▼: significantly better/worse; ≈ equivalent (not "
             "different, and the interval lies within the equivalence margin, 1 point ×100 unless the site sets "
             "another); ? undetermined. The interval is the one the verdict rests on (where the corrected test "
             "rejects, the t-interval at the level it tested the pair at; elsewhere Bonferroni's simultaneous "
             "interval): it excludes 0 exactly when the corrected p is below α. The current best is the best "
             "ranked result (its main metric re-scored from its stored ranking; a value resting on claimed ranks is "
             f"marked on its own and never demotes the others). {best_words.rule(alpha)}", "",
             f"| model | dataset | metric | score | vs baseline | vs current best | wins/ties/losses vs baseline | "
             f"could be #1 at {best_words.level(alpha)} |",
             "|---|---|---|---|---|---|---|---|"]
    if not ours:
        lines.append("| (no result files changed) | | | | | | | |")
        return "\n".join(lines) + "\n"
    datasets = {board.info.id: board for board in after.datasets}
    touched: list[str] = []
    for result in sorted((r for r in after_results(after) if r.path in ours), key=lambda r: r.path):
        dataset = datasets.get(result.dataset_id)
        metric = dataset_info(result.dataset_id).main_metric
        if dataset is None or result.model.id not in dataset.position:  # e.g. a split file without the main metric
            lines.append(f"| {markdown_cell(result.model.id)} | {markdown_cell(result.dataset_id)} | {metric} | "
                         f"{_score(result.metrics.get(metric))} | — | — | — | — |")
            continue
        touched.append(result.dataset_id)
        row = dataset.position[result.model.id]
        others = [m for m in dataset.model_ids if m != result.model.id]
        base = baseline_id(dataset, result.model.id)
        best = next((m for k, m in enumerate(dataset.model_ids) if m != result.model.id and dataset.ranked[k]),
                    None)
        cells = [_cell(pair_verdict(dataset, result.model.id, other, alpha, tests.correction,
                                  settings.margin(metric)) if other in others else None, alpha)
                 for other in (base, best)]
        wtl = "—"
        if dataset.baseline is not None and base is not None:
            wtl = f"{dataset.baseline.wins[row]}/{dataset.baseline.ties[row]}/{dataset.baseline.losses[row]}"
        could = (f"{best_words.MARK} yes" if dataset.best_set[row] else "no") if dataset.ranked[row] \
            else f"not ranked ({metric} {result.tier_of(metric)})"
        verdict_holds, best_holds, _ = row_holds(dataset, row)
        cells[0] += "" if verdict_holds or base is None else f" {FLIP}"
        could += "" if best_holds or not dataset.ranked[row] else f" {FLIP}"
        lines.append(f"| {markdown_cell(result.model.id)} | {markdown_cell(result.dataset_id)} | {metric} | "
                     f"{dataset.means[row]:.4f}{judged_note(dataset, row)} | {cells[0]} | {cells[1]} | {wtl} | "
                     f"{could} |")
    lines += [""] + [f"- {markdown_cell(best_words.dataset_sentence(datasets[d], alpha))}"
                     for d in dict.fromkeys(touched)]
    if group is not None:
        lines += benchmark_lines(after, sorted({r.model.id for r in after_results(after) if r.path in ours}), *group)
    trust = trust_lines([r for r in after_results(after) if r.path in ours])
    if trust:
        lines += ["", "Trust per metric (what `irboard validate` says; a result is ranked on every metric that was "
                  "re-scored):", "", *trust]
    lines += judgments_lines([datasets[d] for d in dict.fromkeys(touched)])
    lines += ["", "### Change to other models' verdicts (labelled: not about the submitted results)", "",
              "Corrected p-values depend on the models on the board: adding models adds pairs to each dataset's "
              "family, and the correction over more pairs raises p-values (and new models can move rank ranges). "
              "Pairs of models already on the board whose verdict the merge changes:", ""]
    old_boards = {board.info.id: board for board in before.datasets}
    for dataset_id in dict.fromkeys(touched):
        if dataset_id not in old_boards:
            lines.append(f"- {markdown_cell(dataset_id)}: a new dataset on the board; no earlier verdicts.")
            continue
        changes, moved = _changed_verdicts(old_boards[dataset_id], datasets[dataset_id], alpha)
        if not changes:
            lines.append(f"- {markdown_cell(dataset_id)}: no verdict between other models changes; {moved}.")
            continue
        lines.append(f"- {markdown_cell(dataset_id)}: {len(changes)} verdict{'s' if len(changes) != 1 else ''} "
                     f"change; {moved}:")
        lines += [f"  - {change}" for change in changes[:LISTED_CHANGES]]
        if len(changes) > LISTED_CHANGES:
            lines.append(f"  - … and {len(changes) - LISTED_CHANGES} more")
    return "\n".join(lines) + "\n"


def benchmark_lines(board: Leaderboard, model_ids: list[str], dataset_ids: list[str],
                    weights: list[float] | None) -> list[str]:
    """The group of `dataset_ids` (and weights) as the home page's "Your own benchmark" computes it, for these
    models: mean, interval, rank range and ★ (the same numbers as the page, analysis/custom.py), and its sentence."""
    group = custom_group(board, dataset_ids, weights)
    alpha = board.settings.tests.alpha
    chosen = ", ".join(f"{d} (weight {w:.3g})" for d, w in zip(group.dataset_ids, group.weights, strict=True))
    lines = ["", f"### {markdown_cell(group.name)}: {markdown_cell(chosen)}", "",
             "The group mean over these datasets, its interval, its rank range among the models ranked on every one "
             "of them and ★, as a registered group's and as the home page's \"Your own benchmark\" computes them "
             f"(`?datasets={','.join(group.dataset_ids)}"
             f"{'&weights=' + ','.join(f'{w:g}' for w in weights) if weights is not None else ''}`).", "",
             f"| model | mean | {best_words.level(alpha)} interval | rank range | could be #1 |", "|---|---|---|---|---|"]
    for model_id in model_ids:
        score = group.scores.get(model_id)
        if score is None:
            lines.append(f"| {markdown_cell(model_id)} | — ({group.coverage.get(model_id, 0)} of "
                         f"{len(group.dataset_ids)} datasets) | — | — | — |")
            continue
        ranked = score.mean_rank is not None
        low, high = score.rank_interval
        lines.append(f"| {markdown_cell(model_id)} | {score.mean:.4f} | [{score.ci[0]:.4f}, {score.ci[1]:.4f}] | "
                     f"{(str(low) if low == high else f'{low}–{high}') if ranked else 'not ranked'} | "
                     f"{(f'{best_words.MARK} yes' if model_id in group.best_set else 'no') if ranked else '—'} |")
    ids = list(group.ranked_ids)
    tops = sorted((m for m in ids if m in group.best_set), key=lambda m: (-group.scores[m].mean, m))
    lines += ["", f"- {markdown_cell(best_words.sentence(where(group), tops, len(ids), len(ids), False, len(ids), alpha))}"]
    return lines


def trust_lines(results) -> list[str]:
    """For each result with a value short of re-scored, one item per tier in evaluator.trust's words."""
    lines = []
    for result in sorted(results, key=lambda r: r.path):
        tiers = result.tiers()
        if weakest(tiers.values()) not in RANKED_TIERS:
            lines += [f"- {markdown_cell(result.model.id)} on {markdown_cell(result.dataset_id)}: trust: "
                      f"{markdown_cell(line)}" for line in tier_lines(tiers)]
    return lines


FLIP = f"{robust.MARK} could flip"  # a verdict the unjudged documents within the cutoff could turn round


def judged_note(dataset: DatasetBoard, row: int) -> str:
    """' (Judged@10 0.32, holes to 0.9503)' beside a score: Judged@k at the main metric's cutoff and the top of
    the mean's hole bounds; '' when unknown (not re-scored)."""
    judged = row_judged(dataset, row)
    if judged is None:
        return ""
    return f" ({judged_name(dataset.info.main_metric)} {judged:.2f}, holes up to {dataset.hole_high[row]:.4f})"


def judgments_lines(datasets: list[DatasetBoard]) -> list[str]:
    """How complete each touched dataset's judgments are, and what the flip mark means (docs/statistics.md)."""
    lines = [f"- {markdown_cell(dataset.info.id)}: {markdown_cell(judgments_line(dataset))}" for dataset in datasets
             if judgments_line(dataset)]
    if not lines:
        return []
    return ["", f"{FLIP}: the verdict (or ★) may not hold over the hole bounds of both runs, the range of each "
            "per-query value over every labelling of the unjudged documents within the cutoff.", *lines]


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def _without_board(new_files: list[Path], problems: list[str]) -> str:
    """The table when the folder holds files the board cannot take: each new file's stored score, no test, and the
    problems (validate names each with its fix)."""
    lines = ["## irboard: the submitted results (no board: the results folder has problems)", "",
             "The board after the merge cannot be built from these files, so no test is reported; "
             "`irboard validate` names each problem with its fix.", "",
             "| model | dataset | metric | score | vs baseline | vs current best | wins/ties/losses vs baseline |",
             "|---|---|---|---|---|---|---|"]
    for path in sorted(new_files):
        result = read_result(path)
        metric = main_metric(result.dataset.id, result.metrics)
        lines.append(f"| {markdown_cell(result.model.id)} | {markdown_cell(result.dataset.id)} | {metric} | "
                     f"{_score(result.metrics.get(metric))} | — | — | — |")
    lines += ["", "Problems:", ""] + [f"- {markdown_cell(problem)}" for problem in problems]
    return "\n".join(lines) + "\n"


def after_results(board: Leaderboard):
    return [result for model in board.models for result in model.results.values()]


def baseline_id(dataset: DatasetBoard, model_id: str) -> str | None:
    if dataset.baseline is None or dataset.baseline.model_id == model_id:
        return None
    return dataset.baseline.model_id

