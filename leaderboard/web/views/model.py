"""A model page: the model's result on every dataset and its group means, its metrics, costs, runs and recall at
scale (`build`).
"""

from __future__ import annotations

from leaderboard.analysis import best_words
from leaderboard.analysis.aggregate import Leaderboard, ModelBoard, metric_order
from leaderboard.analysis.judged_words import group_holds, row_holds, row_hole, row_judged
from leaderboard.analysis.predictions import Evidence
from leaderboard.web import charts
from leaderboard.web.contexts import (
    Download,
    EfficiencyRow,
    ModelContext,
    ModelDatasetRow,
    ModelGroupRow,
    Page,
    ReproduceRow,
    value_check,
)
from leaderboard.web.references import reference_rows, source_rows
from leaderboard.web.run_files import run_path
from leaderboard.web.views.common import (
    GROUP_MEANS,
    SCALE,
    chart_figure,
    describe_tests,
    group_method,
    metric_scale,
    ordered_groups,
    shallow_notes,
)
from leaderboard.web.views.ranks import baseline_effect, equivalence_mark
from leaderboard.web.views.scale import predicted_value, samples_checked, scale_section


def build(board: Leaderboard, model: ModelBoard, evidence: Evidence | None = None) -> ModelContext:
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
            rank_interval=g.scores[model.info.id].rank_interval if ranked_in(g, model.info.id) else None,
            band=g.scores[model.info.id].band if ranked_in(g, model.info.id) else None,
            ranked=g.ranked_models,
            verified=sum(by_dataset[d].verified for d in g.dataset_ids if d in by_dataset),
            top=sum(by_dataset[d].best for d in g.dataset_ids if d in by_dataset),
            best=model.info.id in g.best_set,
            **dict(zip(("rank_holds", "best_holds"), group_holds(g, model.info.id), strict=True)),
        )
        for g in ordered_groups(board)
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
        figures=(chart_figure("fig-model", "Main metric per dataset against the baseline", figure),) if shown else (),
        downloads=(Download("CSV", f"{root}downloads/models/{model.slug}.csv"),
                   Download("JSON", f"{root}downloads/models/{model.slug}.json"),
                   Download("Parquet", f"{root}downloads/models/{model.slug}.parquet")),
        scale=scale_section(board, model, root, evidence),
        runs=tuple(Download(dataset_id, root + run_path(model.slug, dataset_id))
                   for dataset_id, result in sorted(model.results.items()) if result.has_run),
        references=reference_rows(model.results),
        sources=source_rows(model.results),
    )


def ranked_in(group, model_id: str) -> bool:
    """Has the model a rank in the group (a group mean, verified on every dataset of the group)?"""
    return model_id in group.scores and group.scores[model_id].mean_rank is not None
