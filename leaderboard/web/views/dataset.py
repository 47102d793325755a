"""A dataset page: every result on the dataset with its interval, rank range, best-set mark and test against the
baseline, its charts and what pairs.js needs for any two models (`build`).
"""

from __future__ import annotations

from evaluator.result import slugify
from leaderboard.analysis import best_words
from leaderboard.analysis.aggregate import DatasetBoard, Leaderboard, SiteSettings
from leaderboard.analysis.judged_words import (
    condensed_view,
    judgments_line,
    row_condensed,
    row_holds,
    row_hole,
    row_judged,
)
from leaderboard.analysis.predictions import Evidence
from leaderboard.web import charts
from leaderboard.web.contexts import DatasetContext, DatasetRow, Download, Page, value_check
from leaderboard.web.render import json_text
from leaderboard.web.views import common
from leaderboard.web.views.common import (
    MODEL_TYPES,
    SCALE,
    VERIFIED_RULE,
    chart_figure,
    dataset_ci_text,
    describe_tests,
    effect_constants,
    metric_scale,
    shallow_notes,
)
from leaderboard.web.views.ranks import (
    baseline_effect,
    best_rule,
    effect_method,
    equivalence_mark,
    family_rule,
    rank_rule,
    separability_method,
    separability_row,
)
from leaderboard.web.views.scale import (
    crossing_section,
    dataset_prediction_column,
    predicted_value,
    prediction_method,
    samples_checked,
)

HEATMAP_MODELS = 20  # a dataset page's p-value heatmap shows the pairs among this many best models (it grows as m²)
CHART_MODELS = (10, 30, 100)  # the top-N choices of a dataset page's per-model charts (default 30), besides "all"
DEFAULT_CHART_MODELS = 30


def chart_choices(models: int) -> tuple[int, ...]:
    """How many models a per-model chart may show: the fixed choices below the count, then all of them."""
    return tuple(n for n in CHART_MODELS if n < models) + (models,)


def build(board: Leaderboard, dataset: DatasetBoard, evidence: Evidence | None = None) -> DatasetContext:
    """The dataset page; `evidence` (the recall-at-scale method's measured error) is quoted beside crossings."""
    root = "../"
    alpha = board.settings.tests.alpha
    lowest, highest = float(dataset.ci[:, 0].min()), float(dataset.ci[:, 1].max())
    span = (highest - lowest) or 1.0
    comparison = dataset.baseline
    others = dataset.metrics[1:]
    rows = []
    for i, result in enumerate(dataset.results):
        model_id = result.model.id
        position = tuple(round(100 * (float(v) - lowest) / span, 1) for v in
                         (dataset.ci[i, 0], dataset.means[i], dataset.ci[i, 1]))
        mark = ""
        if comparison is not None and model_id != comparison.model_id and comparison.pvalue[i] < alpha:
            mark = "better" if comparison.diff[i] > 0 else "worse"
        effect = baseline_effect(dataset, model_id, alpha, board.settings.tests.correction)
        mark = mark or equivalence_mark(effect, board.settings.margin(dataset.info.main_metric))
        ranked = bool(dataset.ranked[i])  # its main metric re-scored, whatever the other values rest on
        rows.append(DatasetRow(
            model_id=model_id, href=f"{root}models/{slugify(model_id)}.html",
            rank_low=int(dataset.rank_range[i, 0]) if ranked else None,
            rank_high=int(dataset.rank_range[i, 1]) if ranked else None,
            best=bool(dataset.best_set[i]), mean=float(dataset.means[i]),
            ci=(float(dataset.ci[i, 0]), float(dataset.ci[i, 1])), whisker=position,
            values=tuple(result.metrics.get(metric) for metric in others),
            diff=float(comparison.diff[i]) if comparison else None,
            wins=int(comparison.wins[i]) if comparison else None,
            ties=int(comparison.ties[i]) if comparison else None,
            losses=int(comparison.losses[i]) if comparison else None,
            pvalue=float(comparison.pvalue[i]) if comparison and model_id != comparison.model_id else None,
            mark=mark, zero_shot=dataset.zero_shot[i], verified=ranked,
            is_baseline=model_id == board.baseline_id,
            prediction=predicted_value(board.predictions.get((model_id, dataset.info.id)), samples_checked(result)),
            mean_verified=dataset.info.main_metric in result.verified_metrics,
            values_verified=tuple(value_check(result, metric) for metric in others),
            value_notes=shallow_notes(others, result),
            effect=effect, model_type=result.model.type,
            coverage=partial_coverage(result), tier=result.tier_of(dataset.info.main_metric),
            absent_claimed=result.absent_claimed,
            judged=row_judged(dataset, i), hole=row_hole(dataset, i), condensed=row_condensed(dataset, i),
            **dict(zip(("verdict_holds", "best_holds", "rank_holds"), row_holds(dataset, i), strict=True)),
        ))
    has_predictions = any(row.prediction is not None for row in rows)
    metric = dataset.info.main_metric
    models = dataset.model_ids
    tests = board.settings.tests
    figures = [
        chart_figure("fig-scores", f"{metric} with {best_words.level(tests.alpha)} CI", charts.scores_with_ci(
            models, SCALE * dataset.means, SCALE * dataset.ci[:, 0], SCALE * dataset.ci[:, 1], dataset.best_set, metric,
            SCALE * float(dataset.means[dataset.position[comparison.model_id]]) if comparison else None,
            best_words.level(tests.alpha))),
        chart_figure("fig-pvalues", "p-values of all pairs" if len(models) <= HEATMAP_MODELS else
                f"p-values of the pairs among the {HEATMAP_MODELS} best of {len(models):,} models",
                charts.pvalue_heatmap(models[:HEATMAP_MODELS], dataset.pvalues[:HEATMAP_MODELS, :HEATMAP_MODELS],
                                      alpha, tests.correction, len(models))),
        chart_figure("fig-boxes", f"Per-query {metric}", charts.per_query_boxes(
            models, {name: SCALE * values for name, values in dataset.box.items()}, metric)),
    ]
    if comparison is not None:
        keep = [k for k, model_id in enumerate(models) if model_id != comparison.model_id]
        figures.append(chart_figure("fig-wtl", f"Wins, ties and losses against {comparison.model_id}",
                               charts.wins_ties_losses([models[k] for k in keep], comparison.wins[keep],
                                                       comparison.ties[keep], comparison.losses[keep],
                                                       comparison.model_id)))
    methods = (
        f"Score: {metric} (this dataset's main metric), the mean over its {len(dataset.query_ids):,} queries, ×100; "
        "the other metric columns are the means stored in each result file.",
        f"{best_words.level(board.settings.tests.alpha)} CI: {dataset_ci_text(board)}",
        f"Significance: {describe_tests(board)} The tests compare per-query {metric} of every pair of the "
        f"{len(models)} models; the correction runs over all {len(models) * (len(models) - 1) // 2} pairs. "
        f"{family_rule(board)}",
        f"Among the re-scored results only. {rank_rule(board)}",
        best_rule(board),
        VERIFIED_RULE,
        (f"Against the baseline {comparison.model_id}: Δ is the difference of means; W/T/L count queries where "
         f"the model scores higher / within 1e-9 / lower; p is the corrected p-value of that pair; ▲/▼ mark "
         f"p < {alpha:g} (the same corrected test as the ranks).") if comparison else
        "No baseline model has results on this dataset.",
    ) + ((prediction_method(board),) if has_predictions else ()) + (effect_method(board), separability_method(board))
    return DatasetContext(
        page=Page(f"datasets/{dataset.slug}.html", dataset.info.name, root, "datasets"),
        id=dataset.info.id, name=dataset.info.name, group=dataset.info.group, language=dataset.info.language,
        main_metric=metric, other_metrics=others, other_scales=tuple(metric_scale(m) for m in others),
        queries=len(dataset.query_ids), rows=tuple(rows),
        baseline_id=comparison.model_id if comparison else None, left_out=dataset.left_out,
        tests=describe_tests(board), methods=methods, figures=tuple(figures), alpha=alpha,
        answer=best_words.dataset_sentence(dataset, alpha), judgments=judgments_line(dataset),
        condensed_name=condensed_view(dataset),
        downloads=(Download("CSV", f"{root}downloads/datasets/{dataset.slug}.csv"),
                   Download("JSON", f"{root}downloads/datasets/{dataset.slug}.json"),
                   Download("Parquet", f"{root}downloads/datasets/{dataset.slug}.parquet")),
        prediction=dataset_prediction_column(board, root, evidence) if has_predictions else None,
        crossings=crossing_section(board, dataset, evidence, root) if has_predictions else None,
        column_count=8 + 5 * (comparison is not None) + len(others) + has_predictions + bool(condensed_view(dataset)),
        separability=separability_row(dataset, root),
        types=tuple(t for t in MODEL_TYPES if any(r.model.type == t for r in dataset.results)),
        headline=(f"{', '.join(dataset.info.headline_metrics)} ({dataset.info.headline_source})"
                  if dataset.info.headline_metrics else ""),
        listed_rows=common.LISTED_ROWS, top_choices=chart_choices(len(models)),
        top_default=min(DEFAULT_CHART_MODELS, len(models)), pairs=json_text(pair_data(dataset, root, alpha, board.settings)),
    )


def partial_coverage(result) -> str:
    """'153 of 300 queries' for a result whose run lacks some judged queries (they score 0), else ''."""
    covered, judged = result.provenance.covered_queries, len(result.query_ids)
    return f"{covered:,} of {judged:,} queries" if covered is not None and covered < judged else ""


def pair_data(dataset: DatasetBoard, root: str, alpha: float, settings: SiteSettings) -> dict:
    """What pairs.js needs to show any two models' p-value and effect on this dataset: the models in the order of
    the p-value rows, the data files holding their per-query values and p-values, and the dataset's constants."""
    return {"dataset": dataset.info.id, "metric": dataset.info.main_metric, "root": root,
            "models": list(dataset.model_ids), "slugs": [slugify(model_id) for model_id in dataset.model_ids],
            **effect_constants(dataset, alpha, settings)}
