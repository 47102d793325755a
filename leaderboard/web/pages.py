"""One entry per page: the function that builds its typed context (leaderboard/web/contexts.py).

Contexts hold raw numbers and ready-made text; templates only format them (filters in render.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import stats as scipy_stats

from evaluator.metrics import parse_measure
from evaluator.metrics.depth import is_determined, ranked_to
from evaluator.result import SCHEMA_VERSION, slugify
from leaderboard.analysis import best_words, meta
from leaderboard.analysis.aggregate import (
    ALL_GROUP,
    DatasetBoard,
    GroupBoard,
    Leaderboard,
    ModelBoard,
    SiteSettings,
    bootstrapped_groups,
    metric_order,
    unit_of,
)
from leaderboard.analysis.effects import t_critical
from leaderboard.analysis.judged_words import judgments_line, row_holds, row_hole, row_judged
from leaderboard.analysis.predictions import Evidence
from leaderboard.analysis.stats import CI_TEXT
from leaderboard.analysis.verdicts import family_size, shown_pvalue
from leaderboard.submissions.reproduce import RELATIVE_TOLERANCE
from leaderboard.submissions.sample_checks import DENSITY_RATIO, IMPLAUSIBLE, SCORE_TOLERANCE
from leaderboard.submissions.verify import TOLERANCE
from leaderboard.web import charts
from leaderboard.web.best_data import best_sentence, column_entry, dataset_sizes, group_sizes
from leaderboard.web.contexts import (
    Column,
    CompareContext,
    DatasetCell,
    DatasetContext,
    DatasetRow,
    Download,
    EfficiencyRow,
    Figure,
    GroupCell,
    GroupHeader,
    HomeContext,
    HomeRow,
    MethodContext,
    ModelContext,
    ModelDatasetRow,
    ModelGroupRow,
    Page,
    ReproduceRow,
    SubmitContext,
    value_check,
)
from leaderboard.web.views.ranks import (
    RANKS_PAGE,
    band_rule,
    baseline_effect,
    best_rule,
    effect_method,
    equivalence_mark,
    family_rule,
    group_key,
    group_where,
    rank_rule,
    rank_tables,
    separability_method,
    separability_row,
    statistics_method,
)
from leaderboard.web.references import reference_rows, source_rows
from leaderboard.web.render import json_rounded, json_text, public_note
from leaderboard.web.run_files import run_path
from leaderboard.web.views.scale import (
    crossing_section,
    dataset_prediction_column,
    home_predictions,
    method_context,
    predicted_value,
    prediction_method,
    samples_checked,
    scale_section,
)

MODEL_TYPES = ("lexical", "sparse", "dense", "hybrid", "late-interaction", "other")
SCALE = 100.0  # scores are shown ×100 in tables and charts
HEATMAP_MODELS = 20  # a dataset page's p-value heatmap shows the pairs among this many best models (it grows as m²)
LISTED_ROWS = 50  # a table shows a page of this many matching rows until asked for all (table.js): layout is what costs
HOME_ROWS = 50  # rows in the home page's own HTML (its first page); data/board.js holds every row and dataset column
CHART_MODELS = (10, 30, 100)  # the top-N choices of a dataset page's per-model charts (default 30), besides "all"
DEFAULT_CHART_MODELS = 30
PARAMETER_BOUNDS = (50_000_000, 150_000_000, 500_000_000, 1_000_000_000, 10_000_000_000)


def metric_scale(name: str) -> float:
    """Scores in [0, 1] are shown ×100; unbounded ones (ARP, an average rank) as they are."""
    return SCALE if parse_measure(name).bounded else 1.0


def _figure(figure_id: str, title: str, figure: dict) -> Figure:
    return Figure(figure_id, title, json_text(figure), figure.get("rows", {}).get("count", 0))


def chart_choices(models: int) -> tuple[int, ...]:
    """How many models a per-model chart may show: the fixed choices below the count, then all of them."""
    return tuple(n for n in CHART_MODELS if n < models) + (models,)


def describe_tests(board: Leaderboard) -> str:
    return board.settings.tests.describe()


def dataset_ci_text(board: Leaderboard) -> str:
    tests = board.settings.tests
    if tests.ci_method == "score":
        return ("the score interval of the mean (Wilson's interval with the effective number of queries n·m(1−m)/s², "
                "Student's t quantile): it keeps its level on small, low-scoring and 0/1 datasets, where the "
                "percentile bootstrap does not (the method page gives the simulation).")
    return (f"{CI_TEXT[tests.ci_method]} over queries, {tests.ci_resamples:,} resamples, seed {tests.seed} (the same "
            "draws for every model).")


def group_ci_text(board: Leaderboard) -> str:
    tests = board.settings.tests
    if not bootstrapped_groups(board.settings):
        return ("the score interval of a weighted mean: the variance adds each dataset's variance of the mean with "
                "the group's weights (the datasets' queries are independent), Student's t with Welch–Satterthwaite "
                "degrees of freedom; with one dataset it is that dataset's interval.")
    return (f"percentile bootstrap over queries, {tests.ci_resamples:,} resamples, seed {tests.seed}: the queries of "
            "each dataset are resampled and the dataset means combined with the group's weights.")


GROUP_MEANS = ("Group means: the mean of the main metric over every dataset of the group, only for models with a "
               "result on every one of them; a model with partial coverage shows k/n (datasets covered / datasets "
               "in the group) instead of a mean, never an average over fewer datasets.")


def group_method(group: GroupBoard) -> str:
    count = len(group.dataset_ids)
    if group.units != count:
        return (f"{count} datasets; those below a common parent (such as beir/cqadupstack/*) are averaged first, "
                f"so the mean weighs {group.units} units equally.")
    return f"{count} dataset{'s' if count != 1 else ''}, equally weighted."


# --- home ---------------------------------------------------------------------------------------------


def _dataset_column(board: DatasetBoard, root: str, multilingual: bool = False) -> Column:
    return Column(key=f"d-{board.slug}", dataset_id=board.info.id, label=board.info.id.split("/", 1)[-1],
                  title=board.info.name,
                  href=f"{root}datasets/{board.slug}.html", metric=board.info.main_metric,
                  language=board.info.language if multilingual else "")


def _ordered_groups(board: Leaderboard) -> list[GroupBoard]:
    return [group for group in board.groups if group.name != ALL_GROUP] + [
        group for group in board.groups if group.name == ALL_GROUP]


BEST_SET_PAGE = "method.html#best-set"

VERIFIED_RULE = ("Trust, per value: a value is re-scored when it was recomputed from the ranking stored in the result "
                 "file against the official judgments and matched, reproduced when CI also ran the result's declared "
                 "artifact again and obtained the same ranking, rests on claimed ranks (†) when it was re-scored from "
                 "ranks below the stored depth that no score samples check, and is self-reported (*) otherwise. A "
                 "result is ranked on every value that was re-scored: on a dataset's main metric whenever that was, "
                 "whatever its other values rest on; a result's tier is that of its main metric. The others are "
                 "listed apart below the ranked ones, without rank or ★. The method page gives the rule.")


def home_order(board: Leaderboard) -> tuple[list[ModelBoard], str]:
    """Verified models (every result verified) before the others; within each, models with a mean over every
    dataset first, best first, then the rest by id."""
    overall = _sorted_group(board)
    if overall is None:
        return sorted(board.models, key=lambda m: (m.verified != "all", m.info.id)), "Models are listed by id."
    ordered = sorted(board.models, key=lambda m: (
        m.verified != "all", m.info.id not in overall.scores,
        -overall.scores[m.info.id].mean if m.info.id in overall.scores else 0.0, m.info.id))
    text = (f"Default order: re-scored models first, then the others apart; in each, models with a result on all "
            f"{len(overall.dataset_ids)} datasets by their {overall.name} mean (best first), then the rest by id. "
            "Sorting by a column keeps the two apart.")
    return ordered, text


def build_home(board: Leaderboard, evidence: Evidence | None = None) -> HomeContext:
    page = Page("index.html", "Leaderboard", "", "home")
    boards = {d.info.id: d for d in board.datasets}
    means = {(d.info.id, model_id): float(mean) for d in board.datasets for model_id, mean in zip(d.model_ids, d.means,
                                                                                                 strict=True)}
    checked = {(d.info.id, r.model.id): d.info.main_metric in r.verified_metrics for d in board.datasets
               for r in d.results}
    # the mean the rows are ordered by comes first, beside the model names: on a phone it is on the first screen
    sorted_group = _sorted_group(board)
    groups = sorted(_ordered_groups(board), key=lambda g: g.name != (sorted_group.name if sorted_group else ALL_GROUP))
    headers = tuple(GroupHeader(g.name, group_key(g.name), (), len(g.dataset_ids)) for g in groups)
    dataset_groups = tuple(
        GroupHeader(g.name, group_key(g.name), tuple(_dataset_column(boards[d], "", multilingual) for d in g.dataset_ids),
                    len(g.dataset_ids))
        for g in groups if g.name != ALL_GROUP
        for multilingual in [len({boards[d].info.language for d in g.dataset_ids}) > 1]
    )
    languages = tuple(sorted({c.language for header in dataset_groups for c in header.columns if c.language}))
    ordered_ids = [column.dataset_id for header in dataset_groups for column in header.columns]
    models, order_text = home_order(board)
    column, predicted = home_predictions(board, [m.info.id for m in models], evidence)
    # who could be #1 in each column (the ★ and the bold), for every view: best_data
    best_level = best_words.level(board.settings.tests.alpha)
    row_of = {model.info.id: i for i, model in enumerate(models)}
    best_columns: dict[str, list] = {}
    sized = [(f"g-{group_key(g.name)}", group_sizes(board, g)) for g in groups]
    sized += [(f"d-{d.slug}", dataset_sizes(board, d)) for d in board.datasets]
    for key, found in sized:
        if found is not None:
            best_columns[key] = column_entry(*found, row_of)
    # with no filter the page shows the build's own best sets, which the script finds again from the same tests
    best = {(d.info.id, model_id): bool(flag)
            for d in board.datasets for model_id, flag in zip(d.model_ids, d.best_set, strict=True)}
    rows = []
    for model in models:
        model_id = model.info.id
        group_cells = []
        for group in groups:
            score = group.scores.get(model_id)
            ranked = score is not None and score.mean_rank is not None  # unranked: no range, no band (not 0)
            group_cells.append(GroupCell(
                mean=score.mean if score else None, ci=score.ci if score else None,
                mean_rank=score.mean_rank if score else None,
                covered=group.coverage.get(model_id, 0), total=len(group.dataset_ids),
                rank_interval=score.rank_interval if ranked else None, band=score.band if ranked else None,
                top=ranked and model_id in group.best_set))
        cells = tuple(
            DatasetCell(means.get((d, model_id)), best.get((d, model_id), False),
                        model.zero_shot.get(d) is False, checked.get((d, model_id), False))
            for d in ordered_ids
        )
        rows.append(HomeRow(model_id=model_id, href=f"models/{model.slug}.html", type=model.info.type,
                            parameters=model.info.parameters, license=model.info.license,
                            open_weights=model.info.open_weights, zero_shot=model.zero_shot_all,
                            verified=model.verified, is_baseline=model_id == board.baseline_id,
                            groups=tuple(group_cells), cells=cells, prediction=predicted.get(model_id),
                            tier=model.tier, parameters_measured=model.costs_measured))
    methods = [
        "Each dataset column shows the dataset's main metric (named in its header), the mean over all of its "
        "queries, ×100. – : no result.",
        GROUP_MEANS,
        *(f"{g.name}: {group_method(g)}" for g in groups),
        f"{best_words.level(board.settings.tests.alpha)} confidence intervals [low, high] of group means: "
        f"{group_ci_text(board)} Dataset pages give each "
        "dataset's interval.",
        "Mean rank (rank view): each model's rank on every dataset of the group among the re-scored models that "
        "cover the whole group (1 = best, ties share the average rank), averaged with the group's weights.",
        f"★ beside a group mean and bold on a dataset value: the model could be #1 there at {best_level} among the "
        "ranked models the view shows (the best set: each other shown model is significantly worse than one of them in a "
        "one-sided test at α / (s − 1), s the number shown rounded up to 2, 5, 17, 65, … or all); without a filter, "
        "among all ranked models. Each filter recomputes it "
        f"(the method page: {BEST_SET_PAGE}). Rank ranges stay those among all ranked models.",
        VERIFIED_RULE,
        f"Rank ranges and tie bands of every group mean (among the re-scored models): the ranks page ({RANKS_PAGE}). "
        f"{rank_rule(board)} {band_rule(board)}",
        "† the model's training data includes this dataset (model.training_datasets), so it is not zero-shot "
        "there; the zero-shot filter keeps models that are zero-shot on every dataset.",
    ]
    if column is not None:
        methods.append(f"{prediction_method(board)} On this page: {column.detail}, weighted as in the group means, "
                       "only for models with a prediction on every one of them (k/n otherwise: datasets with a "
                       "prediction / datasets); dataset and model pages give each dataset's prediction or the reason "
                       "there is none.")
    licenses = tuple(sorted({m.info.license for m in board.models if m.info.license}))
    return HomeContext(
        page=page, groups=headers, dataset_groups=dataset_groups, rows=tuple(rows),
        types=tuple(t for t in MODEL_TYPES if any(m.info.type == t for m in board.models)),
        licenses=licenses, parameter_bounds=PARAMETER_BOUNDS, baseline_id=board.baseline_id,
        baseline_href=f"models/{slugify(board.baseline_id)}.html" if board.baseline_id else "",
        dataset_count=len(board.datasets),
        tests=describe_tests(board), methods=tuple(methods), order=order_text,
        warnings=tuple(public_note(warning) for warning in board.warnings),
        downloads=(Download("CSV", "downloads/leaderboard.csv"), Download("JSON", "downloads/leaderboard.json"),
                   Download("Parquet", "downloads/leaderboard.parquet")),
        prediction=column,
        column_count=3 + 2 * len(headers) + (column is not None) + len(ordered_ids),
        html_rows=HOME_ROWS, listed_rows=LISTED_ROWS, mean_column_count=3 + 2 * len(headers) + (column is not None),
        column_choices=tuple(GroupHeader(g.name, g.key, next((d.columns for d in dataset_groups if d.key == g.key), ()),
                                         g.size) for g in headers),
        separability=tuple(separability_row(d, "") for d in board.datasets),
        rank_summary=rank_tables(board, rows=False),
        default_sort=f"g-{group_key(sorted_group.name)}" if sorted_group else "",
        answer=best_answer(board, sorted_group), best_level=best_level,
        languages=languages,
        best_columns=best_columns,
    )


def _sorted_group(board: Leaderboard) -> GroupBoard | None:
    """The group whose mean orders the home page by default (home_order) and leads its columns: "All datasets"
    when some model has its mean, else the group where the most models have one (the first of those), so the
    first screen shows scores even when no model covers every dataset."""
    overall = next((g for g in board.groups if g.name == ALL_GROUP), None)
    if overall is not None and overall.scores or not board.groups:
        return overall if overall is not None else None
    return max(board.groups, key=lambda g: len(g.scores))  # max keeps the first of equals


def best_answer(board: Leaderboard, group: GroupBoard | None) -> str:
    """The home page's first answer, for the default view (every model, sorted by `group`'s mean): who could be #1
    at 1 - alpha (best_data.best_sentence; the table's script rewrites it for each view)."""
    if group is None:
        return ""
    ids = list(group.ranked_ids)
    row_of = {model.info.id: i for i, model in enumerate(home_order(board)[0])}
    ordered = sorted((m for m in ids if m in group.best_set), key=lambda m: (-group.scores[m].mean, row_of[m]))
    return best_sentence(group_where(group), ordered, len(ids), len(ids), False, board.settings.tests.alpha)


def _listed(model_ids: list[str]) -> str:
    return ", ".join(model_ids[:5]) + (f" and {len(model_ids) - 5} more" if len(model_ids) > 5 else "")


# --- dataset ------------------------------------------------------------------------------------------


def build_dataset(board: Leaderboard, dataset: DatasetBoard, evidence: Evidence | None = None) -> DatasetContext:
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
            judged=row_judged(dataset, i), hole=row_hole(dataset, i),
            **dict(zip(("verdict_holds", "best_holds", "rank_holds"), row_holds(dataset, i), strict=True)),
        ))
    has_predictions = any(row.prediction is not None for row in rows)
    metric = dataset.info.main_metric
    models = dataset.model_ids
    tests = board.settings.tests
    figures = [
        _figure("fig-scores", f"{metric} with {best_words.level(tests.alpha)} CI", charts.scores_with_ci(
            models, SCALE * dataset.means, SCALE * dataset.ci[:, 0], SCALE * dataset.ci[:, 1], dataset.best_set, metric,
            SCALE * float(dataset.means[dataset.position[comparison.model_id]]) if comparison else None,
            best_words.level(tests.alpha))),
        _figure("fig-pvalues", "p-values of all pairs" if len(models) <= HEATMAP_MODELS else
                f"p-values of the pairs among the {HEATMAP_MODELS} best of {len(models):,} models",
                charts.pvalue_heatmap(models[:HEATMAP_MODELS], dataset.pvalues[:HEATMAP_MODELS, :HEATMAP_MODELS],
                                      alpha, tests.correction, len(models))),
        _figure("fig-boxes", f"Per-query {metric}", charts.per_query_boxes(
            models, {name: SCALE * values for name, values in dataset.box.items()}, metric)),
    ]
    if comparison is not None:
        keep = [k for k, model_id in enumerate(models) if model_id != comparison.model_id]
        figures.append(_figure("fig-wtl", f"Wins, ties and losses against {comparison.model_id}",
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
        downloads=(Download("CSV", f"{root}downloads/datasets/{dataset.slug}.csv"),
                   Download("JSON", f"{root}downloads/datasets/{dataset.slug}.json"),
                   Download("Parquet", f"{root}downloads/datasets/{dataset.slug}.parquet")),
        prediction=dataset_prediction_column(board, root, evidence) if has_predictions else None,
        crossings=crossing_section(board, dataset, evidence, root) if has_predictions else None,
        column_count=8 + 5 * (comparison is not None) + len(others) + has_predictions,
        separability=separability_row(dataset, root),
        types=tuple(t for t in MODEL_TYPES if any(r.model.type == t for r in dataset.results)),
        headline=(f"{', '.join(dataset.info.headline_metrics)} ({dataset.info.headline_source})"
                  if dataset.info.headline_metrics else ""),
        listed_rows=LISTED_ROWS, top_choices=chart_choices(len(models)), top_default=min(DEFAULT_CHART_MODELS, len(models)), pairs=json_text(pair_data(dataset, root, alpha, board.settings)),
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
            **_effect_constants(dataset, alpha, settings)}


def _effect_constants(dataset: DatasetBoard, alpha: float, settings: SiteSettings) -> dict:
    """What pairs.js needs for a pair's effect: the t quantile of the interval, the meaningful difference, and alpha
    (a difference is meaningful only where the corrected p is below it)."""
    return {"t975": round(t_critical(len(dataset.query_ids)), 6), "meaningful": round(dataset.separability.threshold, 6),
            "alpha": alpha, "pairs": family_size(len(dataset.model_ids), settings.tests.correction),
            "margin": settings.margin(dataset.info.main_metric)}


# --- model --------------------------------------------------------------------------------------------


def build_model(board: Leaderboard, model: ModelBoard, evidence: Evidence | None = None) -> ModelContext:
    root = "../"
    alpha = board.settings.tests.alpha
    boards = {d.info.id: d for d in board.datasets}
    rows = []
    for dataset_id, result in model.results.items():
        dataset = boards.get(dataset_id)
        i = dataset.position.get(model.info.id) if dataset else None
        ranked = i is not None and bool(dataset.ranked[i])  # its main metric re-scored
        comparison = dataset.baseline if dataset else None
        b = dataset.position[comparison.model_id] if comparison else None
        is_base = comparison is not None and comparison.model_id == model.info.id
        mark = ""
        if i is not None and comparison is not None and not is_base and comparison.pvalue[i] < alpha:
            mark = "better" if comparison.diff[i] > 0 else "worse"
        effect = baseline_effect(dataset, model.info.id, alpha, board.settings.tests.correction)
        if dataset is not None:
            mark = mark or equivalence_mark(effect, board.settings.margin(dataset.info.main_metric))
        rows.append(ModelDatasetRow(
            dataset_id=dataset_id, name=dataset.info.name if dataset else dataset_id,
            href=f"{root}datasets/{dataset.slug}.html" if dataset else None,
            group=dataset.info.group if dataset else "",
            metric=dataset.info.main_metric if dataset else "",
            mean=float(dataset.means[i]) if i is not None else None,
            ci=(float(dataset.ci[i, 0]), float(dataset.ci[i, 1])) if i is not None else None,
            rank_low=int(dataset.rank_range[i, 0]) if ranked else None,
            rank_high=int(dataset.rank_range[i, 1]) if ranked else None,
            models=int(dataset.ranked.sum()) if dataset else 0,
            best=bool(dataset.best_set[i]) if i is not None else False,
            baseline_mean=float(dataset.means[b]) if b is not None else None,
            diff=float(comparison.diff[i]) if comparison and i is not None else None,
            wins=int(comparison.wins[i]) if comparison and i is not None else None,
            ties=int(comparison.ties[i]) if comparison and i is not None else None,
            losses=int(comparison.losses[i]) if comparison and i is not None else None,
            pvalue=float(comparison.pvalue[i]) if comparison and i is not None and not is_base else None,
            mark=mark, zero_shot=model.zero_shot[dataset_id], verified=ranked,
            prediction=predicted_value(board.predictions.get((model.info.id, dataset_id)), samples_checked(result)),
            mean_verified=bool(dataset) and dataset.info.main_metric in result.verified_metrics,
            effect=effect, tier=model.tiers[dataset_id],
            absent_claimed=result.absent_claimed,
            judged=row_judged(dataset, i), hole=row_hole(dataset, i),
            **dict(zip(("verdict_holds", "best_holds", "rank_holds"), row_holds(dataset, i), strict=True)),
        ))
    by_dataset = {row.dataset_id: row for row in rows}
    groups = tuple(
        ModelGroupRow(
            name=g.name,
            mean=g.scores[model.info.id].mean if model.info.id in g.scores else None,
            ci=g.scores[model.info.id].ci if model.info.id in g.scores else None,
            mean_rank=g.scores[model.info.id].mean_rank if model.info.id in g.scores else None,
            covered=g.coverage.get(model.info.id, 0), total=len(g.dataset_ids), method=group_method(g),
            rank_interval=g.scores[model.info.id].rank_interval if _ranked_in(g, model.info.id) else None,
            band=g.scores[model.info.id].band if _ranked_in(g, model.info.id) else None,
            ranked=g.ranked_models,
            verified=sum(by_dataset[d].verified for d in g.dataset_ids if d in by_dataset),
            top=sum(by_dataset[d].best for d in g.dataset_ids if d in by_dataset),
            best=model.info.id in g.best_set,
        )
        for g in _ordered_groups(board)
    )
    metrics = tuple(sorted({name for r in model.results.values() for name in r.metrics}, key=metric_order))
    metric_rows = tuple((d, tuple(r.metrics.get(name) for name in metrics)) for d, r in model.results.items())
    metric_checks = tuple(tuple(value_check(r, name) for name in metrics) for r in model.results.values())
    metric_notes = tuple(shallow_notes(metrics, r) for r in model.results.values())
    efficiency = tuple(EfficiencyRow(d, r.provenance.timings, r.provenance.peak_rss_bytes, r.provenance.index_bytes,
                                     r.provenance.hardware, r.measured["queries_per_s"] if r.measured else None)
                       for d, r in model.results.items())
    reproduce = tuple(
        ReproduceRow(d, r.provenance.command, r.provenance.irboard_version, r.provenance.created_at,
                     ", ".join(f"{key}={value}" for key, value in r.settings), r.provenance.artifact)
        for d, r in model.results.items()
    )
    shown = [row for row in rows if row.mean is not None]
    figure = charts.model_vs_baseline(
        [row.dataset_id for row in shown], [SCALE * row.mean for row in shown], [SCALE * row.ci[0] for row in shown],
        [SCALE * row.ci[1] for row in shown],
        [None if row.baseline_mean is None else SCALE * row.baseline_mean for row in shown],
        model.info.id, board.baseline_id, best_words.level(board.settings.tests.alpha))
    return ModelContext(
        page=Page(f"models/{model.slug}.html", model.info.id, root, "models"),
        model=model.info, group_means=GROUP_MEANS, verified=model.verified, tier=model.tier,
        costs_measured=model.costs_measured,
        zero_shot=model.zero_shot_all,
        is_baseline=model.info.id == board.baseline_id, baseline_id=board.baseline_id, rows=tuple(rows),
        groups=groups, metrics=metrics, metric_scales=tuple(metric_scale(m) for m in metrics), metric_rows=metric_rows,
        metric_checks=metric_checks, metric_notes=metric_notes, efficiency=efficiency, reproduce=reproduce,
        tests=describe_tests(board), alpha=alpha,
        figures=(_figure("fig-model", "Main metric per dataset against the baseline", figure),) if shown else (),
        downloads=(Download("CSV", f"{root}downloads/models/{model.slug}.csv"),
                   Download("JSON", f"{root}downloads/models/{model.slug}.json"),
                   Download("Parquet", f"{root}downloads/models/{model.slug}.parquet")),
        scale=scale_section(board, model, root, evidence),
        runs=tuple(Download(dataset_id, root + run_path(model.slug, dataset_id))
                   for dataset_id, result in sorted(model.results.items()) if result.has_run),
        references=reference_rows(model.results),
        sources=source_rows(model.results),
    )


def shallow_notes(metrics: tuple[str, ...], result) -> tuple[str, ...]:
    """Per metric, what a cell shows where the result's ranking depth does not determine it ("–, ranked to 100");
    "" elsewhere."""
    top_k = int(dict(result.settings)["top_k"])
    return tuple(ranked_to(top_k) if name not in result.metrics and not is_determined(name, top_k, result.num_docs)
                 else "" for name in metrics)


# --- method, compare and submit ----------------------------------------------------------------------


def _ranked_in(group, model_id: str) -> bool:
    """Has the model a rank in the group (a group mean, verified on every dataset of the group)?"""
    return model_id in group.scores and group.scores[model_id].mean_rank is not None


def build_method(board: Leaderboard, evidence: Evidence) -> MethodContext:
    """The method page: what "verified" means, and how recall at scale is predicted with its measured error
    (leaderboard/analysis/scale_evidence.json)."""
    context = method_context(board, evidence)
    return replace(context, page=replace(context.page, title="Method: trust and recall at scale"),
                   verification=verification_method(), statistics=statistics_method(board))


def verification_method() -> tuple[str, ...]:
    """The rule of leaderboard/submissions/verify.py, in words, with its thresholds."""
    return (
        "A result file may store the ranking its model produced (field run: for every query, the retrieved "
        "documents and their scores in trec_eval order, down to a stored depth). The site re-scores that ranking "
        "against the official judgments of the dataset and compares every query's value with the submitted one.",
        "A metric is determined by the stored ranking when every query's stored part decides it: a metric with a "
        "cutoff k (nDCG@10, R@100, ...) needs k at most the stored depth, or the query's whole ranking stored "
        "(fewer documents than the depth, or a depth reaching settings.top_k); a metric without a cutoff (AP, RR, "
        "Rprec, Bpref, ARP) needs every query's whole ranking.",
        f"Every determined metric is re-scored for every query and must match the submitted value within "
        f"{TOLERANCE:g}; any difference rejects the whole file, so it never reaches the site.",
        "Metrics the stored ranking does not determine (R@1000 or AP beside a ranking stored to depth 100, "
        "nDCG@10 beside one stored to depth 5) cannot be checked: they are shown, but marked * as not re-scored "
        "(self-reported), and the result is never ranked on them.",
        "Score samples (used for the recall-at-scale prediction) are checked against the stored ranking and the "
        "judgments: each query's sample must hold the score of every judged relevant document (or its file names "
        "those the corpus lacks, allowed only where the dataset's judgments are known to name missing documents, "
        "and each named document must be judged relevant, not in the stored ranking, and, where the corpus is at "
        "hand, not in it); every sampled score above the ranking's last score must be the score of a ranked document "
        f"of the same relevance (within {SCORE_TOLERANCE:g} relative, plus the quantisation step for non-relevant "
        "scores), and every relevant document ranked above it must be there, since every document the ranking "
        "leaves out scores at most that last score; the number of sampled non-relevant scores above it must be "
        "plausible for a uniform sample (hypergeometric tail per query, and over the whole file on both sides); "
        "and just below it the sample must hold at least "
        f"{DENSITY_RATIO:g} times as many scores per unit of score as the ranking holds just above it, in windows "
        "as wide as the gap to the farthest, the 2nd, 4th and 8th farthest ranked non-relevant document (score "
        "densities fall towards the top of a ranking; the lowest such ratio measured on honest results of BM25, "
        "SPLADE and a dense model on SciFact and the three classic collections is 0.93). Deeper down, where the "
        "file keeps the ranks of the judged documents ranked below its stored depth (run.below), the sample must "
        "hold at least as many scores at or above the deepest one's score as its rank implies: a test that needs "
        "no assumption about any distribution. Every count is tested with a bound under which an honest "
        f"file is rejected with probability at most {IMPLAUSIBLE:g}, and every window is measured in the "
        "ranking's own scores, so the checks do not depend on the scale of a model's scores. A contradiction "
        "rejects the file.",
        "What the checks catch, measured on the repository's 16 results (BM25 with two settings, SPLADE-tiny and "
        "all-MiniLM-L6-v2 on SciFact, Cranfield, CISI and CACM), with the predicted R@100 at 10 million documents "
        "each manipulation gives: always caught are dropping the relevant scores below the last ranked score "
        "(+5 to +232%), moving the sample below it down (−100 to +52%) and collapsing it onto its minimum "
        "(−45 to +42%); moving a quarter or more of the sample within the widest window away is caught in 14 of "
        "16 files (the two that pass lower their own prediction, −21 to −26%). What the checks cannot see: moving "
        "about a tenth of that sample away (6 of 16 files pass, −27 to +15%), and changes below the widest window "
        "(moved down: 13 of 16 pass, no change to the prediction; collapsed onto its minimum: all 16 pass, −23 to "
        "+23%). So a result that passes every check may still have moved its prediction by up to about a fifth "
        "(+23% at most in these measurements); the prediction is a model-based estimate with that caveat. Where the "
        "samples cannot be checked (no stored ranking, or no judgments to check them against), the result is not "
        "re-scored and its prediction is marked * like a metric not re-scored, on every page and download that shows "
        "it.",
        "Below its stored depth a file keeps only the ranks and scores of its judged documents and each "
        "ranking's length (run.below); the deep metrics (AP, R@1000, nDCG@1000, Judged@1000, ...) are re-scored "
        "from those claims, and the score samples of the same file must agree with them: every relevant document "
        "claimed there must have one of the sample's relevant scores; the relevant scores no ranked document takes "
        "must lie below every ranked score; a document claimed at rank r with score s has at most r − 1 documents "
        "above it, so the sample may hold no more scores above s than a hypergeometric draw allows (each claim, "
        "and the deepest relevant claim of every query summed over the file); a ranking claimed shorter than "
        "settings.top_k holds every document scoring above the corpus's lowest score, which the sample counts; no "
        "ranking is longer than top_k. Each test is bounded so that an honest file is refused with probability at "
        f"most {IMPLAUSIBLE:g}. Measured with benchmarks/deep_attacks.py on fresh depth-1,000 BM25 runs on "
        "SciFact, CACM, CISI and Cranfield (every honest one re-scored): claiming every relevant document the run "
        "never retrieved at ranks 101 and beyond (CACM: R@1000 0.887 → 1.000, AP 0.327 → 0.331, nDCG@1000 "
        "0.604 → 0.637) is refused in all four whatever scores it is given, and so is shortening the rankings "
        "(Judged@1000 up to ×10). What can still move: a document may be claimed higher than it lies by up to "
        "about the sample's error, 6·√(r·M/m) ranks at rank r for m sampled of M documents (relevant documents "
        "lying up to 100 ranks beyond the ranking's end, claimed inside it, passed on CACM: R@1000 0.887 → 0.947; "
        "up to 250 on SciFact: 0.977 → 0.983; none on CISI and Cranfield, whose samples hold every document; on "
        "MS MARCO's 8.8 million passages with 2,000 samples a query, about 12,600 ranks at rank 1,000, so there "
        "the check says little); and a forger who rewrites the samples' relevant scores together with the ranks "
        "leaves nothing in the file to contradict where the sample is partial (SciFact and CACM: R@1000 → 1.000 "
        "passed): the deep metrics are as trustworthy as the samples' relevant scores below the stored ranking, "
        "which only running the model again checks. A file without "
        "score samples (a run evaluated from a file) has nothing to check these claims against: its deep metrics "
        "are re-scored, but rest on claimed ranks, marked †: the result is never ranked on them, and they never "
        "demote its other metrics.",
        "Absence claims (score_samples.absent_ids: judged relevant documents the corpus lacks, allowed where the "
        "dataset's judgments are known to name such documents) are looked up in the corpus wherever one is at "
        "hand: irboard validate, in the results workflow too, fetches the corpus of such a registered dataset "
        "(ArguAna) into its cache as it fetches judgments, and says in its log which files' claims no corpus "
        "checked. Checked or not, the recall-at-scale prediction counts every claimed-absent document as a miss "
        "at every size, as trec_eval's R@k does, and a query whose relevant documents are all claimed absent as "
        "recall 0: a claim can only lower a prediction.",
        "Trust is per metric: a result is ranked on every metric that was re-scored and matched (its score samples "
        "agreeing with its ranking and its claims below the stored depth), whatever its other metrics rest on. A "
        "dataset page ranks a result whenever its main metric was re-scored (rank ranges, best sets); a group ranks a "
        "model on its mean (mean ranks, rank ranges) when it is ranked on every dataset of the group. The others are "
        "listed apart, after them, in every table and download; a value resting on claimed ranks is marked † on "
        "its own and listed in the downloads' column claimed, one not re-scored * and in column unverified. A "
        "value that re-scores to anything else than the file states rejects the whole file. irboard evaluate "
        "says each metric's tier before anything is validated, with the one step that reaches the next (for a "
        "claim: score samples, which irboard evaluate --model stores), and irboard validate, irboard build and "
        "the pull request's summary say it in the same words.",
        *TRUST_LADDER,
    )


TRUST_LADDER = (
    "The trust ladder, per metric; beside every result the tier of its main metric, chosen with the Trust filter: "
    "self-reported (not re-scored: the value is as the submitter's file states it), rests on claimed ranks "
    "(re-scored from ranks below the stored depth that no score samples check), re-scored (recomputed from the "
    "stored ranking against the official judgments, as above: the numbers follow from the ranking, which says "
    "nothing of where the ranking came from) and reproduced (re-scored, and CI ran the model again from the "
    "artifact the result declares, model.artifact: irboard's BM25 with its settings, or a hub, packaged or shared "
    "model pinned to the revision of its weights, on the dataset, and obtained the stored ranking: the same "
    f"documents in the same order at the stored depth, the same judged documents at the same ranks below it, every "
    f"score within {RELATIVE_TOLERANCE:g} relative, and the same parameter count and dimension). A model stands "
    "where its least trusted result stands.",
    "Reproduction runs in CI after every merge that changes results, for corpora of at most 100,000 documents, "
    "and on a maintainer's request for the rest (.github/workflows/reproduce.yml, run with main's code, never a pull "
    "request's). Its records (reproductions/) name the exact bytes of each result: a pull request cannot add one "
    "without a maintainer's approval, a record never lapses because other files change, and a result changed by "
    "one byte is re-scored only until it is reproduced again (docs/reproduction.md).",
    "Costs are measured only when irboard measured them: the parameter count and dimension it read from the model "
    "it loaded, and the search rate it timed, while reproducing the result in CI. Everything else (the model block "
    "of a result file, flags such as --parameters, timings recorded on a submitter's machine) is claimed, and "
    "marked claimed wherever it is shown: the model pages, the home table, the tied-for-best pages (whose "
    "'measured by irboard only' views leave claimed costs out) and the downloads.",
)


# --- compare and submit -------------------------------------------------------------------------------


def build_compare(board: Leaderboard) -> CompareContext:
    ids = [m.info.id for m in board.models]
    ordered, _ = home_order(board)
    first = ordered[0].info.id if ordered else ""
    second = board.baseline_id if board.baseline_id and board.baseline_id != first else (
        next((i for i in ids if i != first), first))
    return CompareContext(
        page=Page("compare.html", "Compare two models", "", "compare"),
        models=tuple((m.info.id, m.slug) for m in board.models), first=first, second=second,
        datasets=len(board.datasets), tests=describe_tests(board),
    )


def build_submit(board: Leaderboard) -> SubmitContext:
    return SubmitContext(Page("submit.html", "Submit results", "", "submit"), SCHEMA_VERSION, board.baseline_id)


def compare_data(board: Leaderboard, model: ModelBoard) -> str:
    """Per-query main-metric values and corrected p-values against every model, per dataset, for compare.js, as
    script-safe JSON text (values to 4 decimals; p-values as the pages show them, verdicts.shown_pvalue; they are
    most of the site's bytes, hence json_rounded)."""
    parts = []
    for dataset in sorted(board.datasets, key=lambda d: d.info.id):
        i = dataset.position.get(model.info.id)
        if i is not None:
            pvalues = shown_pvalue(dataset.pvalues[i], board.settings.tests.alpha)
            parts.append(f'{json_text(dataset.info.id)}:{{"p":{_pvalue_list(pvalues)},'
                         f'"values":{json_rounded(dataset.scores[i], 4)}}}')
    groups = []  # the corrected p-values of the model's group means against every ranked model (groups_data's order)
    for group in board.groups:
        if group.pvalues is not None and model.info.id in group.ranked_ids:
            row = group.pvalues[group.ranked_ids.index(model.info.id)]
            groups.append(f"{json_text(group.name)}:{_pvalue_list(shown_pvalue(row, board.settings.tests.alpha))}")
    if groups:
        parts.append('"groups":{' + ",".join(groups) + "}")
    return "{" + ",".join(parts) + "}"


def groups_data(board: Leaderboard) -> dict:
    """For compare.js: each group's datasets and their weights in the group mean, its units (datasets of one parent
    pooled as one) and the models ranked on it, in the order of the per-model files' group p-values."""
    return {g.name: {"datasets": list(g.dataset_ids), "weights": list(g.weights),
                     "units": [unit_of(d) for d in g.dataset_ids], "models": list(g.ranked_ids),
                     "pairs": family_size(len(g.ranked_ids), board.settings.tests.correction),
                     "minEquivalence": meta.MIN_EQUIVALENCE_UNITS,  # fewer units: pooled equivalence withheld
                     # the prediction's tau bound (analysis/meta.py): 20% quantiles of chi^2 with 0 .. units df
                     "chi20": [0.0] + [float(scipy_stats.chi2.ppf(meta.UPPER_TAU_QUANTILE, df))
                                       for df in range(1, g.units + 1)]}
            for g in board.groups}


def _pvalue_list(pvalues: np.ndarray) -> str:
    """JSON list of shown p-values: the 4-decimal grid, with the few below 1e-4 in their three digits (pairs.js
    computes the interval of a verdict from them, as the pages do)."""
    text = json_rounded(pvalues, 4)
    small = np.flatnonzero((pvalues > 0) & (pvalues < 1e-4))
    if not small.size:
        return text
    items = text[1:-1].split(",")
    for k in small.tolist():
        items[k] = repr(float(pvalues[k]))
    return "[" + ",".join(items) + "]"


def datasets_data(board: Leaderboard) -> dict:
    return {
        d.info.id: {"name": d.info.name, "metric": d.info.main_metric, "slug": d.slug, "queries": list(d.query_ids),
                    "models": list(d.model_ids), "unit": unit_of(d.info.id),
                    **_effect_constants(d, board.settings.tests.alpha, board.settings)}
        for d in board.datasets
    }
