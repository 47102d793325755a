"""`irboard compare`: a Markdown comparison of new result files against the baseline and the current best.

Used by the pull-request workflow to write the job summary. Each new result is compared on its dataset's main
metric with a paired two-sided t-test over the per-query values, Holm-corrected over the two comparisons. The
"current best" is the best *verified* result (every metric re-scored from its stored ranking against the
judgments, leaderboard/submissions/verify.py), as on the site, which ranks only verified results.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from evaluator.result import ResultFile, read_result
from leaderboard.analysis.stats import holm, paired_t_test, wins_ties_losses
from leaderboard.submissions.catalog import DEFAULT_BASELINE, main_metric
from leaderboard.submissions.validate import result_files
from leaderboard.submissions.verify import Judgments

ALPHA = 0.05


def _aligned(a: ResultFile, b: ResultFile, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
    # a split file keeps only some metrics' per-query values (validate rejects one without its main metric)
    if metric not in a.per_query or metric not in b.per_query or a.query_ids != b.query_ids:
        return None
    return a.per_query[metric], b.per_query[metric]


def markdown_cell(text: str) -> str:
    """Markdown table cell: no pipes or markup from submitted text; control characters shown as \\xNN."""
    text = text.replace("&", "&amp;").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"[\x00-\x1f\x7f]", lambda match: f"\\x{ord(match[0]):02x}", text)


def comparison_markdown(new_files: list[Path], results_root: Path, baseline: str = DEFAULT_BASELINE,
                        judgments: Judgments | None = None) -> str:
    """`judgments` decide which results are verified (none without them)."""
    everything = {path.resolve(): read_result(path) for path in result_files([], results_root)}
    new = {path.resolve(): read_result(path) for path in new_files}

    def verified(result: ResultFile) -> bool:
        outcome = judgments.verification(result) if judgments is not None else None
        return outcome is not None and outcome.complete

    lines = ["## irboard: comparison of the submitted results", "",
             f"Paired two-sided t-test on per-query values, Holm correction over the two comparisons per row, "
             f"α = {ALPHA}. ▲/▼: significantly better/worse; = not significant. The current best is the best "
             "verified result (re-scored from its stored ranking).", "",
             "| model | dataset | metric | score | vs baseline | vs current best | wins/ties/losses vs baseline |",
             "|---|---|---|---|---|---|---|"]
    if not new:
        lines.append("| (no result files changed) | | | | | | |")
    for path, result in sorted(new.items()):
        metric = main_metric(result.dataset.id, result.metrics)
        peers = [r for p, r in everything.items() if p != path and r.dataset.id == result.dataset.id
                 and r.model.id != result.model.id and metric in r.metrics]
        base = next((r for r in peers if r.model.id == baseline), None)
        best = max((r for r in peers if verified(r)), key=lambda r: r.metrics[metric], default=None)
        pairs = [(other, _aligned(result, other, metric)) for other in (base, best) if other is not None]
        pvalues = holm([paired_t_test(*aligned) for _, aligned in pairs if aligned is not None]) if pairs else []
        cells, p_iter = [], iter(pvalues)
        for other in (base, best):
            aligned = _aligned(result, other, metric) if other is not None else None
            if other is None or aligned is None:
                cells.append("—")
                continue
            p = next(p_iter)
            diff = result.metrics[metric] - other.metrics[metric]
            mark = "=" if p >= ALPHA else ("▲" if diff > 0 else "▼")
            cells.append(f"{mark} {diff:+.4f} vs {markdown_cell(other.model.id)} (p = {p:.3g})")
        wtl = "—"
        if base is not None and (aligned := _aligned(result, base, metric)) is not None:
            wtl = "/".join(str(n) for n in wins_ties_losses(*aligned))
        score = f"{result.metrics[metric]:.4f}" if metric in result.metrics else "—"
        lines.append(f"| {markdown_cell(result.model.id)} | {markdown_cell(result.dataset.id)} | {metric} | "
                     f"{score} | {cells[0]} | {cells[1]} | {wtl} |")
    return "\n".join(lines) + "\n"
