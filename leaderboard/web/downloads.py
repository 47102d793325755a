"""CSV, JSON and Parquet downloads of every table on the site; values on the metric's own scale (0-1, not ×100 as the pages
show them). Each file says so: the CSV in its last column `unit`, the JSON in its field "unit".

Rows come in the pages' order: verified results (ranked) first, then unverified ones with empty ranks, ranges and
bands (never 0, so that sorting a file does not put them first). `vs_baseline` is the page's ▲/▼: "better" or
"worse" where the corrected test says so, empty otherwise; `best_set` its ★: true where the model could be #1
(the best set, analysis/best_words.py; on the leaderboard, a group's `verdict` is "best_set" there, among all ranked
models, as in a view's download). The pages' "Download this view"
writes, in the browser, every column the table shows as it shows it. Column
`unverified` names, per row, the values that are self-reported (not re-scored from a stored ranking; the pages' *,
space-separated), and the prediction's column label when the prediction comes from score samples that were not
checked; `claimed` (dataset and model tables) the values that rest on claimed ranks (re-scored from ranks below the
stored depth that no score samples check; the pages' †), which never demote the others. Column
headers of per-dataset values carry the full dataset id and the metric (`beir/scifact nDCG@10`); a dataset's
own table has a column `dataset_id`. Column `trust` is the result's place on the trust ladder, that of its main
metric (self-reported, rests on claimed ranks, re-scored or reproduced, evaluator/trust.py; on the leaderboard, the
model's least trusted result's); `verified` is true when the result is ranked: its main metric re-scored or
reproduced (`all`, `some` or `none` of a model's results on the leaderboard). Costs are claimed by the result
files unless irboard measured them in CI while reproducing: `parameters_measured` (leaderboard) says whether the
parameter count was; `measured_queries_per_s` (a model's table) is CI's search rate, the `timing …` columns the
claimed ones. `judged`, `hole_low`, `hole_high`: Judged@k at the main metric's cutoff and the range of its mean
over every labelling of the unjudged documents within the cutoff; `verdict_holds`, `best_set_holds`, `rank_holds`:
whether the row's verdict against the baseline, ★ and rank range hold over those bounds (false: the page's ◊,
could flip; docs/statistics.md). On the leaderboard, `<group> rank_holds` and `<group> best_set_holds` say the
same of a group mean's rank range and ★ (analysis.group_robust), and `<dataset id> judged` gives each dataset
value's Judged@k. A dataset's table ends with the main metric on the condensed lists (`nDCG'@10`: trec_eval -J,
the unjudged documents removed before scoring) where it is known."""

from __future__ import annotations

from dataclasses import asdict

from leaderboard.analysis import best_words
from leaderboard.web.contexts import (
    CLAIMED_RANKS,
    DatasetContext,
    Effect,
    HomeContext,
    ModelContext,
    PredictedMean,
    PredictedValue,
)
from leaderboard.web.parquet import parquet_bytes
from leaderboard.web.render import csv_text, rounded, table_json
from leaderboard.web.views.scale import COLUMN_LABEL

PREDICTION_COLUMNS = [COLUMN_LABEL, "prediction_problem"]


def _prediction_values(prediction: PredictedValue | None) -> list:
    return [None, None] if prediction is None else [prediction.value, prediction.reason]


def _unverified(names, checks, values, prediction: PredictedValue | PredictedMean | None = None) -> str:
    """The names of the values that are shown (not None) but self-reported (not re-scored, and not resting on
    claimed ranks: `_claimed`), then the prediction's column when it is shown but its score samples were not
    checked."""
    if prediction is not None:
        value = prediction.mean if isinstance(prediction, PredictedMean) else prediction.value
        names, checks, values = [*names, COLUMN_LABEL], [*checks, prediction.checked], [*values, value]
    return " ".join(name for name, checked, value in zip(names, checks, values, strict=True)
                    if value is not None and not checked and checked is not CLAIMED_RANKS)


def _claimed(names, checks, values) -> str:
    """The names of the values shown that rest on claimed ranks (the pages' †), space-separated."""
    return " ".join(name for name, checked, value in zip(names, checks, values, strict=True)
                    if value is not None and checked is CLAIMED_RANKS)


# Judged@k at the main metric's cutoff, the hole bounds of the mean, and whether the row's verdict against the
# baseline, its best-set membership and its rank range hold over them (analysis.robust; empty where unknown)
JUDGED_COLUMNS = ["judged", "hole_low", "hole_high", "verdict_holds", "best_set_holds", "rank_holds"]


def _judged_values(row) -> list:
    if row.judged is None:
        return [None] * 6
    return [row.judged, row.hole[0], row.hole[1], row.verdict_holds, row.best_holds, row.rank_holds]


EFFECT_COLUMNS = ["baseline_diff_ci_low", "baseline_diff_ci_high", "baseline_dz", "baseline_meaningful"]


def _effect_values(effect: Effect | None) -> list:
    return [None] * 4 if effect is None else [effect.ci[0], effect.ci[1], effect.dz, effect.meaningful]


UNIT = "0-1"  # the CSV's unit column: scores as fractions, not ×100
UNIT_TEXT = ("Scores, means, intervals and differences are on the metric's own scale, 0-1 (the site's tables show "
             "them ×100); ARP, an average rank, as it is; ranks, counts and p-values as they are.")


def _both(stem: str, header: list[str], rows: list[list], meta: dict) -> dict[str, str | bytes]:
    """The CSV (with a last column `unit` on every row), the JSON (with a field "unit") and the Parquet file (the
    CSV's columns, typed; the JSON's metadata under the key "irboard") of one table."""
    json_text = table_json({**meta, "unit": UNIT_TEXT}, header, rows)
    return {f"{stem}.csv": csv_text([*header, "unit"], [[*row, UNIT] for row in rows]), f"{stem}.json": json_text,
            f"{stem}.parquet": parquet_bytes([*header, "unit"], [[*row, UNIT] for row in rows],
                                             {**meta, "unit": UNIT_TEXT})}


def home_downloads(home: HomeContext) -> dict[str, str]:
    header = ["model_id", "type", "parameters", "license", "open_weights", "zero_shot", "verified", "unverified",
              "trust", "parameters_measured"]
    for group in home.groups:
        header += [f"{group.name} mean", f"{group.name} ci_low", f"{group.name} ci_high",
                   f"{group.name} mean_rank", f"{group.name} datasets_covered"]
    columns = [column for group in home.dataset_groups for column in group.columns]
    header += [f"{column.dataset_id} {column.metric}" for column in columns]
    if home.prediction:
        header += [f"{home.prediction.label}, {home.prediction.detail}", "prediction datasets_covered",
                   "prediction error"]  # the method's measured mean |error|, beside each prediction
    rows = []
    for row in home.rows:
        values = [row.model_id, row.type, row.parameters, row.license, row.open_weights, row.zero_shot, row.verified,
                  _unverified([c.dataset_id for c in columns], [c.verified for c in row.cells],
                              [c.value for c in row.cells], row.prediction if home.prediction else None),
                  row.tier, row.parameters_measured]
        for cell in row.groups:
            values += [cell.mean, cell.ci[0] if cell.ci else None, cell.ci[1] if cell.ci else None, cell.mean_rank,
                       cell.covered]
        values += [cell.value for cell in row.cells]
        if home.prediction:
            values += [row.prediction.mean, row.prediction.covered,
                       home.prediction.error if row.prediction.mean is not None else None]
        for cell in row.groups:  # verdict: "best_set" where the model could be #1 among all ranked (★)
            values += [*(cell.rank_interval or (None, None)), cell.band,
                       None if cell.rank_interval is None else best_words.COLUMN if cell.top else ""]
        for cell in row.groups:  # over the hole bounds (analysis.group_robust): empty where not ranked
            ranked = cell.rank_interval is not None
            values += [cell.rank_holds if ranked else None, cell.best_holds if ranked else None]
        values += [cell.judged for cell in row.cells]
        rows.append(values)
    for group in home.groups:
        header += [f"{group.name} rank_low", f"{group.name} rank_high", f"{group.name} band",
                   f"{group.name} verdict"]
    for group in home.groups:
        header += [f"{group.name} rank_holds", f"{group.name} best_set_holds"]
    header += [f"{column.dataset_id} judged" for column in columns]
    meta = {"table": "leaderboard", "significance": home.tests, "methods": list(home.methods),
            "separability": [asdict(row) for row in home.separability]}
    return _both("downloads/leaderboard", header, rows, meta)


def dataset_downloads(page: DatasetContext, slug: str) -> dict[str, str]:
    header = ["model_id", "dataset_id", "rank_best", "rank_worst", best_words.COLUMN, page.main_metric, "ci_low", "ci_high",
              *page.other_metrics, "baseline_diff", "wins", "ties", "losses", "p_vs_baseline", "vs_baseline",
              "zero_shot", "verified", "unverified", "claimed", "trust"]
    rows = [
        [row.model_id, page.id, row.rank_low, row.rank_high, row.best, row.mean, row.ci[0], row.ci[1], *row.values,
         row.diff, row.wins, row.ties, row.losses, row.pvalue, row.mark or None, row.zero_shot, row.verified,
         _unverified([page.main_metric, *page.other_metrics], [row.mean_verified, *row.values_verified],
                     [row.mean, *row.values], row.prediction if page.prediction else None),
         _claimed(page.other_metrics, row.values_verified, row.values), row.tier]
        for row in page.rows
    ]
    if page.prediction:
        header += PREDICTION_COLUMNS
        rows = [values + _prediction_values(row.prediction) for values, row in zip(rows, page.rows, strict=True)]
    header += EFFECT_COLUMNS + JUDGED_COLUMNS
    rows = [values + _effect_values(row.effect) + _judged_values(row) for values, row in zip(rows, page.rows,
                                                                                             strict=True)]
    if page.condensed_name:  # the condensed view's values (trec_eval -J), as the page's hidden column
        header += [page.condensed_name]
        rows = [values + [row.condensed] for values, row in zip(rows, page.rows, strict=True)]
    meta = {"table": f"dataset {page.id}", "judgments": page.judgments, "dataset_id": page.id, "main_metric": page.main_metric,
            "baseline": page.baseline_id, "significance": page.tests, "methods": list(page.methods),
            "separability": asdict(page.separability) if page.separability else None}
    if page.shown_set is not None:  # the judgment set the values are scored against (docs/datasets.md)
        meta["judgment_set"] = page.shown_set
    return _both(f"downloads/datasets/{slug}", header, rows, meta)


def model_downloads(page: ModelContext, slug: str) -> dict[str, str]:
    """The model's dataset table, with every metric and the efficiency figures as extra columns."""
    timing_keys = sorted({key for row in page.efficiency for key, _ in row.timings})
    header = ["dataset_id", "main_metric", "score", "ci_low", "ci_high", "rank_best", "rank_worst", best_words.COLUMN,
              "baseline_score", "baseline_diff", "wins", "ties", "losses", "p_vs_baseline", "zero_shot", "verified",
              "unverified", "claimed", "trust", *page.metrics, *(f"timing {key}" for key in timing_keys), "index_bytes", "peak_rss_bytes", "hardware", "measured_queries_per_s"]
    values = dict(page.metric_rows)
    checks = {dataset_id: flags for (dataset_id, _), flags in zip(page.metric_rows, page.metric_checks, strict=True)}
    efficiency = {row.dataset_id: row for row in page.efficiency}
    rows = []
    for row in page.rows:
        cost = efficiency[row.dataset_id]
        timings = dict(cost.timings)
        rows.append([
            row.dataset_id, row.metric, row.mean, row.ci[0] if row.ci else None, row.ci[1] if row.ci else None,
            row.rank_low, row.rank_high, row.best, row.baseline_mean, row.diff, row.wins, row.ties, row.losses,
            row.pvalue, row.zero_shot, row.verified,
            _unverified(page.metrics, checks[row.dataset_id], values[row.dataset_id],
                        row.prediction if page.scale else None),
            _claimed(page.metrics, checks[row.dataset_id], values[row.dataset_id]), row.tier,
            *values[row.dataset_id],
            *(timings.get(key) for key in timing_keys), cost.index_bytes, cost.peak_rss_bytes, cost.hardware,
            cost.measured_queries_per_s,
            *(_prediction_values(row.prediction) if page.scale else []), *_effect_values(row.effect),
            *_judged_values(row),
        ])
    if page.scale:
        header += PREDICTION_COLUMNS
    header += EFFECT_COLUMNS + JUDGED_COLUMNS
    groups = {group.name: {"mean": group.mean, "ci": list(group.ci) if group.ci else None,
                           "mean_rank": group.mean_rank, "datasets_covered": group.covered,
                           "datasets_in_group": group.total, "rank_interval": group.rank_interval,
                           "band": group.band, best_words.COLUMN: group.best} for group in page.groups}
    meta = {"table": f"model {page.model.id}", "model_id": page.model.id, "baseline": page.baseline_id,
            "significance": page.tests, "group_means": rounded(groups)}
    return _both(f"downloads/models/{slug}", header, rows, meta)
