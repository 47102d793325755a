"""`irboard.compare`: several runs against the same judgments, with the site's statistics (the same functions
the leaderboard's dataset pages use, not a second implementation): per metric, each run's mean and 95% score
interval, its rank range and tie band from the corrected pairwise tests, `best_set` (★ on the site: whether the run
could be #1 at 1 - alpha, ranks.best_set over the runs given, a one-sided paired t-test at alpha / (runs - 1)
whatever `test` is, as the site's), and against the baseline the paired
difference with the interval its corrected verdict rests on (analysis/verdicts.py), d_z, the corrected p-value and
the verdict (better, worse, equivalent within the margin, undetermined). The family of the correction is every
pair of the runs given (the site's is every pair of a dataset's models).

Over several datasets (qrels a mapping of dataset names to judgments, each run a mapping of the same names to
runs), each dataset is compared as above and `Report.pooled` holds, per metric and run against the baseline, the
random-effects pooling of the per-dataset differences (analysis/meta.py): the pooled difference with its interval
(meta.mean_interval: the hull of the modified Hartung-Knapp interval and the t-interval of the unweighted mean),
tau, the prediction interval for a new dataset and P(the run beats the baseline there), and the pooled equivalence
verdict: the same interval at Bonferroni's level alpha / pairs (the same family as the per-dataset verdicts: every
pair of the runs given) and whether it lies within the margin, withheld (never equivalent, `equivalence_note` says
why) below meta.MIN_EQUIVALENCE_UNITS units; the numbers the compare page shows for a group of these datasets.

A run may be a result file read with `irboard.read_result` (or its `ResultFile`): its stored ranking is scored, and
column `trust` gives each metric's tier in the words `irboard validate` uses (evaluator/trust.py): "re-scored", or
"rests on claimed ranks" for a deep metric read from judged ranks below the stored depth that no score samples
check (the site's †). A metric the stored ranking does not determine, or judgments other than the result's own, are
refused. For a run given as such, `trust` is None: it is scored whole, as given."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evaluator.errors import InputFormatError
from irboard.inputs import MetricsLike, QrelsLike, RunLike, check_flag, check_relevance_level, check_text

POOLED_COLUMNS = ("metric", "run", "datasets", "pooled", "ci_low", "ci_high", "tau", "prediction_low",
                  "prediction_high", "p_beats", "equivalence_low", "equivalence_high", "equivalent",
                  "equivalence_note", "robust")
COLUMNS = ("dataset", "metric", "run", "mean", "ci_low", "ci_high", "rank_best", "rank_worst", "band", "best_set",
           "diff", "diff_low", "diff_high", "d_z", "p_corrected", "significant", "verdict", "trust", "judged",
           "hole_low", "hole_high", "robust", "robust_verdict", "robust_best")
DEFAULT_MARGIN = 0.01  # = leaderboard.analysis.verdicts.DEFAULT_MARGIN (tested), kept here for a light import


@dataclass(frozen=True)
class Report:
    """One row per metric and run; `to_dataframe()` and `to_markdown()` render the rows, `to_latex()` and a notebook
    (`_repr_html_`) a table of runs × metrics."""

    rows: list[dict[str, Any]]
    baseline: str
    test: str
    correction: str
    alpha: float
    queries: int  # judged queries (summed over the datasets)
    pooled: list[dict[str, Any]] = field(default_factory=list)  # over several datasets: POOLED_COLUMNS

    @property
    def columns(self) -> tuple[str, ...]:
        """COLUMNS; without "dataset" for one dataset."""
        return COLUMNS if any(row.get("dataset") for row in self.rows) else COLUMNS[1:]

    @property
    def family(self) -> str:
        """The pairs the correction runs over, in words."""
        from leaderboard.analysis import stats

        runs = len({row["run"] for row in self.rows})
        return (f"{stats.CORRECTIONS[self.correction][1].split(' over ')[0]} over the {runs * (runs - 1) // 2} pairs "
                f"of the {runs} runs given, per metric and dataset; the leaderboard corrects over every pair of a "
                "dataset's models, so its p-values equal these only for the same set of models")

    def to_dataframe(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.rows, columns=list(self.columns))

    def pooled_dataframe(self) -> Any:
        import pandas as pd

        return pd.DataFrame(self.pooled, columns=list(POOLED_COLUMNS))

    def _cells(self) -> list[list[str]]:
        from leaderboard.web.render import format_pvalue

        def cell(key: str, value: Any) -> str:
            if value is None:
                return ""
            if key in ("rank_best", "rank_worst", "band"):
                return str(value)
            if key in ("significant", "best_set", "robust", "robust_verdict", "robust_best"):
                return "yes" if value else "no"
            if key == "p_corrected":
                return format_pvalue(value, self.alpha)
            return f"{value:.4f}" if isinstance(value, float) else str(value)

        return [[cell(key, row[key]) for key in self.columns] for row in self.rows]

    def describe(self) -> str:
        from leaderboard.analysis import stats
        from leaderboard.analysis.best_words import level

        return (f"{self.queries} judged queries; {stats.PAIRED_TESTS[self.test].text}, {self.family}, "
                f"α = {self.alpha:g}; differences against {self.baseline} with the interval each corrected verdict "
                "rests on (it excludes 0 exactly when the corrected p is below α); rank ranges and bands from the "
                f"corrected tests; best_set: could be #1 at {level(self.alpha)} (the best set: one-sided paired "
                "t-tests at α / (runs − 1)); judged: Judged@k at the metric's cutoff; hole_low, hole_high: the range "
                "of the mean over every labelling of the unjudged documents within the cutoff; robust: the row's "
                "verdict (robust_verdict) and best-set membership (robust_best) hold at those bounds "
                "(docs/statistics.md)")

    def to_markdown(self, judged: bool = True) -> str:
        """A Markdown table of the rows: every cell on one line, its punctuation escaped (report_tables); a verdict
        or best_set cell that could flip over the hole bounds carries ◊, with its footnote below the table.
        `judged` False leaves out the judged and hole_low/hole_high columns."""
        from irboard.report_tables import MARKS, flip_note, flips, markdown_escape

        keep = [k for k, name in enumerate(self.columns) if judged or name not in ("judged", "hole_low", "hole_high")]
        names = [self.columns[k] for k in keep]
        lines = ["| " + " | ".join(markdown_escape(name) for name in names) + " |", "|" + "---|" * len(names)]
        for row, cells in zip(self.rows, self._cells(), strict=True):
            for key, holds in (("verdict", row.get("robust_verdict")), ("best_set", row.get("robust_best"))):
                if holds is False:
                    cells[self.columns.index(key)] += f" {MARKS['flip'][1]}"
            lines.append("| " + " | ".join(markdown_escape(cells[k]) for k in keep) + " |")
        note = f"\n\n{markdown_escape(flip_note(self))}." if flips(self.rows) else ""
        return "\n".join(lines) + f"{note}\n\n{markdown_escape(self.describe())}\n"

    def to_latex(self, digits: int = 3, judged: bool = True) -> str:
        """A booktabs table for a paper: runs × metrics, the best in bold, the tests' verdicts as marks (◊ where one
        could flip over the hole bounds, with its footnote), one Judged@k column per cutoff unless `judged` is
        False, and a caption naming the test and the correction (irboard/report_tables.py)."""
        from irboard import report_tables

        return report_tables.to_latex(self, digits, judged)

    def to_html(self, digits: int = 3, judged: bool = True) -> str:
        """The notebook's table (`_repr_html_`), with `digits` decimals and the Judged@k columns unless `judged` is
        False."""
        from irboard import report_tables

        return report_tables.to_html(self, digits, judged)

    def _repr_html_(self) -> str:
        """The same table in a notebook, each mean with its 95% interval."""
        from irboard import report_tables

        return report_tables.to_html(self)


def compare(runs: Mapping[str, RunLike], qrels: QrelsLike, metrics: MetricsLike = "nDCG@10", *,
            baseline: str | None = None, test: str = "t", correction: str = "holm", alpha: float = 0.05,
            relevance_level: int | None = None, ignore_identical_ids: bool = False, margin: float = DEFAULT_MARGIN,
            judgments: str | None = None) -> Report:
    """Compare `runs` ({name: run}, each in any form `irboard.evaluate` takes) on the judged queries of `qrels`.
    `baseline`: the run every other is compared with (default: the first); `test`: "t", "randomization" or
    "wilcoxon"; `correction`: "holm" (the site's default: rank ranges and bands then hold together with
    probability 1 - alpha), "bh" or "none", over every pair of the runs given (Report.family says so); `margin`:
    the equivalence margin in metric units (the site's default, 0.01 = one point ×100).
    Several datasets: `qrels` = {dataset: judgments} and each run = {dataset: run} over the same names; the rows
    then name their dataset and Report.pooled holds the pooling across them (module docstring).
    `judgments`: a judgment set of the dataset `qrels` then names by its id (its name, "official", or its sha256
    or a 12-digit prefix; docs/datasets.md, "Judgment sets"): every run is scored against that set, a result file
    on its stored ranking alone (the metrics that ranking determines by itself)."""
    from irboard.inputs import set_judgments, to_judgments, to_measures
    from leaderboard.analysis import stats
    from leaderboard.analysis.verdicts import family_size

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
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not 0 <= margin < math.inf:
        raise InputFormatError(f"compare: margin={margin!r}: expected a number >= 0 in metric units, e.g. 0.01")
    settings = stats.TestSettings(method=check_text(test, "test"), alpha=float(alpha),
                                  correction=check_text(correction, "correction"))  # checks the names
    relevance_level = check_relevance_level(relevance_level, qrels if judgments is not None else None)
    ignore_identical_ids = check_flag(ignore_identical_ids, "ignore_identical_ids")
    measures = to_measures(metrics)
    if judgments is not None or not _by_dataset(qrels):
        judged = set_judgments(qrels, judgments) if judgments is not None else to_judgments(qrels)
        rows, queries = _compare_one(None, runs, judged, measures, names, baseline, settings,
                                     relevance_level, ignore_identical_ids, margin)
        return Report(rows, baseline, settings.method, settings.correction, alpha, queries)
    rows, queries, per_dataset = [], 0, {}
    for dataset, given in qrels.items():
        missing = [name for name in names if not isinstance(runs[name], Mapping) or dataset not in runs[name]]
        if missing:
            raise InputFormatError(f"compare: run {missing[0]!r} has no run for dataset {dataset!r}; over several "
                                   "datasets each run is {dataset: run} with every dataset of qrels")
        part, count = _compare_one(dataset, {name: runs[name][dataset] for name in names}, to_judgments(given),
                                   measures, names, baseline, settings, relevance_level, ignore_identical_ids, margin)
        rows += part
        queries += count
        per_dataset[dataset] = part
    pairs = family_size(len(names), settings.correction)
    return Report(rows, baseline, settings.method, settings.correction, alpha, queries,
                  _pooled(per_dataset, measures, names, baseline, alpha, pairs, margin))


def _holes(rankings, label_stats, measure, relevance_level: int, scores) -> tuple[Any, Any, Any]:
    """(Judged@k at the measure's cutoff, per-query low bounds, high bounds), each (runs, queries); a measure
    without hole bounds (ARP) gets its values as both bounds."""
    import numpy as np

    from evaluator.errors import UnknownNameError
    from evaluator.metrics.holes import hole_bounds, judged_at
    from leaderboard.submissions.holes import judged_measure

    cutoff = judged_measure(str(measure)).cutoff
    judged = np.stack([judged_at(ranked, cutoff) for ranked in rankings])
    try:
        found = [hole_bounds(ranked, label_stats, measure, relevance_level) for ranked in rankings]
    except UnknownNameError:
        return judged, scores, scores
    return judged, np.stack([bounds.low for bounds in found]), np.stack([bounds.high for bounds in found])


def _by_dataset(qrels: Any) -> bool:
    """Is `qrels` a mapping of dataset names to judgments (rather than one dataset's {query: {doc: relevance}})?"""
    if not isinstance(qrels, Mapping) or not qrels:
        return False
    return not all(isinstance(docs, Mapping) and all(isinstance(grade, int) or hasattr(grade, "dtype")
                                                     for grade in docs.values()) for docs in qrels.values())


def _pooled(per_dataset: dict[str, list[dict]], measures, names: list[str], baseline: str, alpha: float,
            pairs: int, margin: float) -> list[dict]:
    """Random-effects pooling of each run's per-dataset differences from the baseline, datasets of one parent as
    one unit (as the site's groups), with its equivalence verdict at alpha / pairs (meta.equivalence)."""
    from leaderboard.analysis import meta
    from leaderboard.analysis.aggregate import unit_of

    out = []
    datasets = list(per_dataset)
    units = [unit_of(dataset) for dataset in datasets]
    for measure in measures:
        metric = str(measure)
        for name in names:
            if name == baseline:
                continue
            found = [next(row for row in per_dataset[d] if row["metric"] == metric and row["run"] == name)
                     for d in datasets]
            y, v = meta.unit_differences([row["diff"] for row in found], [row["_variance"] for row in found], units)
            fit = meta.pool(y, v, 1 - alpha)  # intervals at the level of the verdicts
            equivalence = meta.equivalence(fit, alpha, pairs, margin) or (None, None, None)
            robust = _pooled_holds(found, units, alpha, pairs, margin, equivalence[2])
            out.append({"metric": metric, "run": name, "datasets": fit.datasets, "pooled": fit.mean,
                        "ci_low": fit.ci[0] if fit.ci else None, "ci_high": fit.ci[1] if fit.ci else None,
                        "tau": fit.tau, "prediction_low": fit.prediction[0] if fit.prediction else None,
                        "prediction_high": fit.prediction[1] if fit.prediction else None, "p_beats": fit.p_beats,
                        "equivalence_low": equivalence[0], "equivalence_high": equivalence[1],
                        "equivalent": equivalence[2],
                        "equivalence_note": meta.equivalence_withheld(fit.datasets) if fit.datasets > 1 else None,
                        "robust": robust})
    for rows in per_dataset.values():
        for row in rows:
            row.pop("_variance", None)
            row.pop("_crossed", None)
    return out


def _pooled_holds(found: list[dict], units: list[str], alpha: float, pairs: int, margin: float,
                  equivalent: bool | None) -> bool:
    """Does the pooled verdict hold over the hole bounds (docs/statistics.md, "Verdicts over the holes")? Only when
    every per-dataset verdict it pools holds (robust_verdict), and the pooled equivalence verdict is the same with
    each dataset's difference at either crossing of the two runs' bounds (run low against baseline high, and the
    reverse) pooled again."""
    from leaderboard.analysis import meta

    if not all(row["robust_verdict"] for row in found):
        return False
    for side in (0, 1):
        y, v = meta.unit_differences([row["_crossed"][side][0] for row in found],
                                     [row["_crossed"][side][1] for row in found], units)
        again = meta.equivalence(meta.pool(y, v, 1 - alpha), alpha, pairs, margin) or (None, None, None)
        if again[2] != equivalent:
            return False
    return True


def _compare_one(dataset: str | None, runs: Mapping[str, RunLike], judgments, measures, names: list[str],
                 baseline: str, settings, relevance_level: int, ignore_identical_ids: bool,
                 margin: float) -> tuple[list[dict], int]:
    import numpy as np

    from evaluator.metrics import evaluate as evaluate_ranked
    from irboard.inputs import to_ranked
    from leaderboard.analysis import stats
    from leaderboard.analysis.effects import pair_effects
    from leaderboard.analysis.ranks import best_set, rank_ranges, tie_bands
    from leaderboard.analysis.robust import board_robustness
    from leaderboard.analysis.verdicts import family_size, shown_pvalue, verdict_interval, verdict_words

    alpha = settings.alpha
    per_run, trust, rankings = [], [], []
    for name in names:
        try:
            stored = _stored_result(runs[name])
            if stored is not None:
                ranked, tiers = _result_ranking(stored, judgments, measures)
            else:
                ranked, tiers = to_ranked(runs[name], judgments, ignore_identical_ids), {}
        except InputFormatError as error:
            raise InputFormatError(f"compare: run {name!r}: {error}") from None
        per_run.append(evaluate_ranked(ranked, judgments.qrels, measures, relevance_level))
        trust.append(tiers)
        rankings.append(ranked)
    label_stats = judgments.qrels.label_stats(relevance_level)
    b = names.index(baseline)
    rows = []
    for measure in measures:
        metric = str(measure)
        scores = np.stack([values[metric] for values in per_run])
        n = scores.shape[1]
        means = scores.mean(axis=1)
        ci = stats.score_intervals(scores)
        pvalues = stats.pairwise_pvalues(scores, settings.method, settings.correction, settings.resamples,
                                         settings.seed)
        ranges, bands = rank_ranges(means, pvalues, alpha), tie_bands(means, pvalues, alpha)
        effects = pair_effects(scores)
        # the site's one verdict on who is best (aggregate.py); one query: no test, so no run is shown worse
        contenders = best_set(means, effects.diff, effects.sd / np.sqrt(n), n - 1, alpha) if n > 1 \
            else np.ones(len(names), dtype=bool)
        se = effects.sd[:, b] / np.sqrt(n)
        low, high = verdict_interval(effects.diff[:, b], se, n - 1, shown_pvalue(pvalues[:, b], alpha), alpha,
                                     family_size(len(names), settings.correction))
        words = verdict_words(effects.diff[:, b], low, high, pvalues[:, b], alpha, margin)
        judged, lows, highs = _holes(rankings, label_stats, measure, relevance_level, scores)
        robust = board_robustness(lows, highs, np.ones(len(names), dtype=bool), pvalues, contenders, b, settings,
                                  margin, (effects.diff[:, b], effects.sd[:, b])) if n > 1 else None
        for i, name in enumerate(names):
            against = i != b
            rows.append({
                "dataset": dataset, "metric": metric, "run": name, "mean": float(means[i]),
                "ci_low": float(ci[i, 0]), "ci_high": float(ci[i, 1]), "rank_best": int(ranges[i, 0]),
                "rank_worst": int(ranges[i, 1]), "band": int(bands[i]), "best_set": bool(contenders[i]),
                "diff": float(effects.diff[i, b]) if against else None,
                "diff_low": float(low[i]) if against else None,
                "diff_high": float(high[i]) if against else None,
                "d_z": float(effects.dz[i, b]) if against else None,
                "p_corrected": float(pvalues[i, b]) if against else None,
                "significant": bool(pvalues[i, b] < alpha) if against else None,
                "verdict": str(words[i]) if against else None,
                "trust": trust[i].get(metric),
                "judged": float(judged[i].mean()), "hole_low": float(lows[i].mean()),
                "hole_high": float(highs[i].mean()),
                "robust": True if robust is None else bool(robust.verdict[i] and robust.best[i]),
                "robust_verdict": (True if robust is None else bool(robust.verdict[i])) if against else None,
                "robust_best": True if robust is None else bool(robust.best[i]),
                "_variance": float(se[i] ** 2),
                "_crossed": _crossed(lows[i], highs[i], lows[b], highs[b]),
            })
    if dataset is None:
        for row in rows:
            row.pop("_variance")
            row.pop("_crossed")
    return rows, len(judgments.qrels.query_ids)


def _crossed(low, high, base_low, base_high) -> tuple[tuple[float, float], tuple[float, float]]:
    """The run's per-query differences from the baseline at the two crossings of their hole bounds (the run low and
    the baseline high, then the reverse): each (mean, variance of the mean), as the pooling reads a difference."""
    out = []
    for d in (low - base_high, high - base_low):
        out.append((float(d.mean()), float(d.var(ddof=1) / d.size) if d.size > 1 else 0.0))
    return out[0], out[1]


def _stored_result(run: Any):
    """The ResultFile of a run given as a result file (irboard.Result or ResultFile), else None."""
    from evaluator.result import ResultFile
    from irboard.results import Result

    return run.file if isinstance(run, Result) else run if isinstance(run, ResultFile) else None


def _result_ranking(result, judgments, measures) -> tuple[Any, dict[str, str]]:
    """(the stored ranking ranked against `judgments`, each metric's tier): the result's own judgments only, and
    only metrics its stored ranking determines."""
    from evaluator.trust import rescorable, tiers_of
    from leaderboard.submissions.labels import ranked_from_result

    qrels = judgments.qrels
    if result.run is None:
        raise InputFormatError("the result stores no ranking to score; pass its run file")
    chosen = judgments.judgment_set
    if chosen is not None and not chosen.official:
        return _set_ranking(result, chosen, qrels, measures)
    if result.dataset.qrels_sha256 != qrels.sha256() or tuple(qrels.query_ids) != result.query_ids:
        raise InputFormatError(f"the result was scored on other judgments than these (its dataset.qrels_sha256 "
                               f"is {result.dataset.qrels_sha256[:12]}…); compare it on the judgments of "
                               f"{result.dataset.id}, or pass its run file")
    names = [str(m) for m in measures]
    found, undetermined, claimed = rescorable(result, names)
    if undetermined:
        raise InputFormatError(f"its stored ranking does not determine {', '.join(undetermined)} (stored to depth "
                               f"{result.run.depth}); compare those on its run file")
    return ranked_from_result(result, qrels), tiers_of(names, {str(m) for m in found} - claimed, claimed)


def _set_ranking(result, chosen, qrels, measures) -> tuple[Any, dict[str, str]]:
    """The stored ranking alone ranked against a declared judgment set of the result's dataset; every metric
    re-scored against it (leaderboard.submissions.set_scores)."""
    from evaluator.trust import RESCORED
    from leaderboard.submissions.labels import ranked_from_result
    from leaderboard.submissions.set_scores import determined, stored_only

    if result.dataset.id != chosen.dataset_id or tuple(qrels.query_ids) != result.query_ids:
        raise InputFormatError(f"the result is on {result.dataset.id}, not {chosen.dataset_id} whose judgment set "
                               f"{chosen.name!r} was named; compare it on its own dataset's judgments")
    names = [str(m) for m in measures]
    found = {str(m) for m in determined(result, names)}
    missing = [name for name in names if name not in found]
    if missing:
        raise InputFormatError(f"its stored ranking alone does not determine {', '.join(missing)} (stored to depth "
                               f"{result.run.depth}); against another judgment set only those metrics are scored")
    return ranked_from_result(stored_only(result), qrels), dict.fromkeys(names, RESCORED)
