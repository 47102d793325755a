"""`irboard.compare`: several runs against the same judgments, with the site's statistics (the same functions
the leaderboard's dataset pages use, not a second implementation): per metric, each run's mean and 95% score
interval, its rank range and tie band from the corrected pairwise tests, and against the baseline the paired
difference with its (uncorrected) 95% t-interval, d_z and the corrected p-value."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evaluator.errors import InputFormatError
from irboard.inputs import MetricsLike, QrelsLike, RunLike, check_flag, check_relevance_level, check_text

COLUMNS = ("metric", "run", "mean", "ci_low", "ci_high", "rank_best", "rank_worst", "band", "diff", "diff_low",
           "diff_high", "d_z", "p_corrected", "significant")


@dataclass(frozen=True)
class Report:
    """One row per metric and run; `to_dataframe()` and `to_markdown()` render the rows, `to_latex()` and a notebook
    (`_repr_html_`) a table of runs × metrics."""

    rows: list[dict[str, Any]]
    baseline: str
    test: str
    correction: str
    alpha: float
    queries: int

    def to_dataframe(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows, columns=list(COLUMNS))

    def _cells(self) -> list[list[str]]:
        from leaderboard.web.render import format_pvalue

        def cell(key: str, value: Any) -> str:
            if value is None:
                return ""
            if key in ("rank_best", "rank_worst", "band"):
                return str(value)
            if key == "significant":
                return "yes" if value else "no"
            if key == "p_corrected":
                return format_pvalue(value, self.alpha)
            return f"{value:.4f}" if isinstance(value, float) else str(value)

        return [[cell(key, row[key]) for key in COLUMNS] for row in self.rows]

    def describe(self) -> str:
        from leaderboard.analysis import stats

        return (f"{self.queries} judged queries; {stats.PAIRED_TESTS[self.test].text}, "
                f"{stats.CORRECTIONS[self.correction][1]}, α = {self.alpha:g}; differences against {self.baseline} "
                "with their uncorrected 95% t-interval; rank ranges and bands from the corrected tests")

    def to_markdown(self) -> str:
        lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |" for cells in self._cells()]
        return "\n".join(lines) + f"\n\n{self.describe()}\n"

    def to_latex(self, digits: int = 3) -> str:
        """A booktabs table for a paper: runs × metrics, the best in bold, the tests' verdicts as marks and a
        caption naming the test and the correction (irboard/report_tables.py)."""
        from irboard import report_tables

        return report_tables.to_latex(self, digits)

    def _repr_html_(self) -> str:
        """The same table in a notebook, each mean with its 95% interval."""
        from irboard import report_tables

        return report_tables.to_html(self)


def compare(runs: Mapping[str, RunLike], qrels: QrelsLike, metrics: MetricsLike = "nDCG@10", *,
            baseline: str | None = None, test: str = "t", correction: str = "holm", alpha: float = 0.05,
            relevance_level: int = 1, ignore_identical_ids: bool = False) -> Report:
    """Compare `runs` ({name: run}, each in any form `irboard.evaluate` takes) on the judged queries of `qrels`.
    `baseline`: the run every other is compared with (default: the first); `test`: "t", "randomization" or
    "wilcoxon"; `correction`: "holm" (the site's default: rank ranges and bands then hold together with
    probability 1 - alpha), "bh" or "none"."""
    import numpy as np

    from evaluator.metrics import evaluate as evaluate_ranked
    from irboard.inputs import to_judgments, to_measures, to_ranked
    from leaderboard.analysis import stats
    from leaderboard.analysis.effects import pair_effects
    from leaderboard.analysis.ranks import rank_ranges, tie_bands

    if not isinstance(runs, Mapping) or len(runs) < 2:
        given = f"{len(runs)} run(s)" if isinstance(runs, Mapping) else f"a {type(runs).__name__}"
        raise InputFormatError(f"compare: runs must be a dict {{name: run}} of at least two runs, got {given}")
    names = list(runs)
    odd = next((name for name in names if not isinstance(name, str) or not name), None)
    if odd is not None:
        raise InputFormatError(f"compare: run name {odd!r} is not a non-empty string; name the runs with strings")
    baseline = names[0] if baseline is None else check_text(baseline, "baseline")
    if baseline not in runs:
        raise InputFormatError(f"compare: baseline {baseline!r} is not one of the runs {names}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1 or math.isnan(alpha):
        raise InputFormatError(f"compare: alpha={alpha!r}: expected a number in (0, 1), e.g. 0.05")
    settings = stats.TestSettings(method=check_text(test, "test"), alpha=float(alpha),
                                  correction=check_text(correction, "correction"))  # checks the names
    relevance_level = check_relevance_level(relevance_level)
    ignore_identical_ids = check_flag(ignore_identical_ids, "ignore_identical_ids")
    judgments = to_judgments(qrels)
    measures = to_measures(metrics)
    per_run = []
    for name in names:
        try:
            ranked = to_ranked(runs[name], judgments, ignore_identical_ids)
        except InputFormatError as error:
            raise InputFormatError(f"compare: run {name!r}: {error}") from None
        per_run.append(evaluate_ranked(ranked, judgments.qrels, measures, relevance_level))
    b = names.index(baseline)
    rows = []
    for measure in measures:
        metric = str(measure)
        scores = np.stack([values[metric] for values in per_run])
        means = scores.mean(axis=1)
        ci = stats.score_intervals(scores)
        pvalues = stats.pairwise_pvalues(scores, settings.method, settings.correction, settings.resamples,
                                         settings.seed)
        ranges, bands = rank_ranges(means, pvalues, alpha), tie_bands(means, pvalues, alpha)
        effects = pair_effects(scores)
        for i, name in enumerate(names):
            against = i != b
            rows.append({
                "metric": metric, "run": name, "mean": float(means[i]), "ci_low": float(ci[i, 0]),
                "ci_high": float(ci[i, 1]), "rank_best": int(ranges[i, 0]), "rank_worst": int(ranges[i, 1]),
                "band": int(bands[i]),
                "diff": float(effects.diff[i, b]) if against else None,
                "diff_low": float(effects.low[i, b]) if against else None,
                "diff_high": float(effects.high[i, b]) if against else None,
                "d_z": float(effects.dz[i, b]) if against else None,
                "p_corrected": float(pvalues[i, b]) if against else None,
                "significant": bool(pvalues[i, b] < alpha) if against else None,
            })
    return Report(rows, baseline, settings.method, settings.correction, alpha, len(judgments.qrels.query_ids))
