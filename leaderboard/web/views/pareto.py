"""The "could be #1" page: on each group mean and each dataset, the models that could be #1 (the best set, ★
elsewhere on the site: analysis/best_words.py), against what they cost, with each cost's Pareto front.

No second test is run here: the groups' and the datasets' best sets come from leaderboard/analysis (aggregate.py,
ranks.best_set); leaderboard/analysis/pareto.py marks the front.
"""

from __future__ import annotations

from evaluator.result import slugify
from leaderboard.analysis import best_words
from leaderboard.analysis.aggregate import ALL_GROUP, DatasetBoard, GroupBoard, Leaderboard, ModelBoard
from leaderboard.analysis.pareto import COSTS, LATENCY_TIMING, latency_ms, pareto_front
from leaderboard.web import charts
from leaderboard.web.contexts import (
    Figure,
    Page,
    ParetoChoice,
    ParetoContext,
    ParetoCost,
    ParetoRow,
    ParetoView,
)
from leaderboard.web.render import format_parameters, json_text
from leaderboard.web.views.common import ordered_groups
from leaderboard.web.views.ranks import best_rule, group_key, group_where

PARETO_PAGE = "pareto.html"
SCALE = 100.0
COST_LABELS = {"parameters": "Parameters", "dim": "Embedding dimensions", "latency": "Milliseconds per query"}
WHY_MISSING = {"parameters": "no parameter count (model.parameters)",
               "dim": "no embedding dimension (model.dim)",
               "latency": f"no search rate (provenance.timings.{LATENCY_TIMING}) on every dataset here"}
# A cost is measured only when irboard measured it: CI reproduced every result of the choice, reading the parameter
# count and dimension from the model it loaded and timing the search (docs/reproduction.md). Every other cost is
# what the result files claim. Each cost has a second view that keeps the measured ones only.
MEASURED = "-measured"
WHY_NOT_MEASURED = "no cost measured by irboard: not every result here was reproduced in CI"


# A lexical model (BM25) weighs terms by a formula: it has no learned parameters, so it is placed at 0 rather than
# left off the chart when its result files state no count.
LEXICAL_PARAMETERS = "0 (lexical: no learned parameters)"
# The cost the page shows first: the first of these that places every model that could be #1.
DEFAULT_COSTS = ("latency", "parameters", "dim")


def cost_text(cost: str, value: float | None) -> str:
    if value is None:
        return "–"
    if cost == "parameters":
        return LEXICAL_PARAMETERS if value == 0 else format_parameters(int(value))
    if cost == "dim":
        return f"{int(value):,}"
    if value >= 99.95:  # three figures or more: whole milliseconds ("116 ms", not "116. ms")
        return f"{value:,.0f} ms"
    return f"{value:#.3g} ms"  # 1.00 ms beside 1.04 ms


def pareto_rule(board: Leaderboard) -> str:
    return (f"Could be #1: the ranked models in the best set ({best_words.level(board.settings.tests.alpha)}; "
            "marked ★ on the ranks, dataset and home pages). Among them a model is on the Pareto front "
            "of a cost when no other of them has at least its mean at no more cost, better in one of the two. "
            "A lexical model whose result files state no parameter count is plotted at 0 learned parameters (its "
            "term weights come from a formula); any other model whose result files do not state the cost is listed, "
            "not plotted. The page opens on the first cost, of milliseconds per query, parameters and embedding "
            "dimensions, that places every model that could be #1.")


def _model_costs(model: ModelBoard, dataset_ids) -> tuple[dict[str, float | None], bool]:
    """(each cost of the model on these datasets, whether irboard measured them): measured when every result here was
    reproduced (the costs of the reproduction), else as the result files claim them. A lexical model without a
    parameter count has 0 learned parameters."""
    results = [model.results.get(d) for d in dataset_ids]
    if results and all(r is not None and r.measured is not None for r in results):
        costs = {"parameters": results[0].measured["parameters"], "dim": results[0].measured["dim"],
                 "latency": latency_ms([r.measured["queries_per_s"] for r in results])}
        measured = True
    else:
        rates = [dict(r.provenance.timings).get(LATENCY_TIMING) if r is not None else None for r in results]
        costs = {"parameters": model.info.parameters, "dim": model.info.dim, "latency": latency_ms(rates)}
        measured = False
    if costs["parameters"] is None and model.info.type == "lexical":
        costs["parameters"] = 0
    return costs, measured


def cost_label(key: str) -> str:
    """The label of a cost view: the cost, or the cost measured by irboard only."""
    cost = key.removesuffix(MEASURED)
    return COST_LABELS[cost] + (" (measured by irboard only)" if key != cost else "")


def _choice(board: Leaderboard, choice_key: str, name: str, kind: str, metric: str, href: str, dataset_ids,
            tied: list[tuple[str, float, tuple[float, float], tuple[int, int]]], ranked: int, where: str,
            empty: str) -> ParetoChoice:
    """`tied`: (model id, mean, CI, rank range) of each model that could be #1 (the best set), best mean first;
    `where` names the group or dataset in the summary, `empty` says why none is ranked there."""
    if not ranked:
        return ParetoChoice(choice_key, name, kind, metric, href, 0, (), (), empty)
    models = {m.info.id: m for m in board.models}
    stated = [_model_costs(models[model_id], dataset_ids) for model_id, *_ in tied]
    measured = [was for _, was in stated]
    # the measured-only views: a claimed cost counts as none
    costs = [{**c, **{cost + MEASURED: c[cost] if was else None for cost in COSTS}} for c, was in stated]
    means = [mean for _, mean, _, _ in tied]
    keys = [key for cost in COSTS for key in (cost, cost + MEASURED)]
    fronts = {key: pareto_front(means, [c[key] for c in costs]) for key in keys}
    rows = tuple(
        ParetoRow(model_id, f"models/{slugify(model_id)}.html", mean, ci, interval,
                  tuple(ParetoCost(c[cost], cost_text(cost, c[cost]), bool(fronts[cost][i]),
                                   claimed=c[cost] is not None and not measured[i]) for cost in COSTS))
        for i, ((model_id, mean, ci, interval), c) in enumerate(zip(tied, costs, strict=True)))
    views = []
    for key in keys:
        cost = key.removesuffix(MEASURED)
        shown = [i for i, c in enumerate(costs) if c[key] is not None]
        figure = None
        if shown:
            chart = charts.pareto_chart(
                [tied[i][0] for i in shown], [costs[i][key] for i in shown],
                [SCALE * means[i] for i in shown], [SCALE * tied[i][2][0] for i in shown],
                [SCALE * tied[i][2][1] for i in shown], [fronts[key][i] for i in shown], COST_LABELS[cost], metric)
            figure = Figure(f"fig-{choice_key}-{key}", f"{name}: the models that could be #1 against "
                            f"{cost_label(key).lower()}", json_text(chart))
        why = WHY_NOT_MEASURED if key != cost else WHY_MISSING[cost]
        views.append(ParetoView(key, cost_label(key), why, figure,
                                tuple(tied[i][0] for i in shown if fronts[key][i]),
                                tuple(tied[i][0] for i, c in enumerate(costs) if c[key] is None),
                                claimed=tuple(tied[i][0] for i in shown if not measured[i])))
    placed = {view.cost: len(tied) - len(view.missing) for view in views if view.cost in COSTS}
    default = next((cost for cost in DEFAULT_COSTS if placed[cost] == len(tied)), max(COSTS, key=placed.get))
    count = len(tied)
    summary = (f"{count} of {ranked} ranked model{'s' if ranked != 1 else ''} "
               f"could be #1 on {where} at {best_words.level(board.settings.tests.alpha)} (the best set).")
    return ParetoChoice(choice_key, name, kind, metric, href, ranked, rows, tuple(views), summary, default)


def group_choice(board: Leaderboard, group: GroupBoard) -> ParetoChoice:
    ranked = [(m, s) for m, s in group.scores.items() if s.mean_rank is not None]
    tied = sorted(((m, s.mean, s.ci, tuple(s.rank_interval)) for m, s in ranked if m in group.best_set),
                  key=lambda row: (-row[1], row[0]))
    where = group_where(group)
    return _choice(board, f"g-{group_key(group.name)}", group.name, "group", "group mean",
                   f"ranks.html#{group_key(group.name)}", group.dataset_ids, tied, len(ranked), where,
                   f"No model is ranked on {where}: none has its main metric re-scored on every one of its datasets, so "
                   "none can be called #1.")


def dataset_choice(board: Leaderboard, dataset: DatasetBoard) -> ParetoChoice:
    # dataset.best_set: verified and could be #1, the ★
    tied = sorted(((model_id, float(dataset.means[i]), (float(dataset.ci[i, 0]), float(dataset.ci[i, 1])),
                    (int(dataset.rank_range[i, 0]), int(dataset.rank_range[i, 1])))
                   for i, model_id in enumerate(dataset.model_ids) if dataset.best_set[i]),
                  key=lambda row: (-row[1], row[0]))
    return _choice(board, f"d-{dataset.slug}", dataset.info.id, "dataset", dataset.info.main_metric,
                   f"datasets/{dataset.slug}.html", (dataset.info.id,), tied, int(dataset.ranked.sum()),
                   dataset.info.id, best_words.dataset_sentence(dataset, board.settings.tests.alpha))


def choice_path(key: str, default: str) -> str:
    """The page of a choice: pareto.html for the default one (the mean the home page is ordered by), else
    pareto/<key>.html; one page each, so that a board of 1,000 models does not put 35 tables in one page."""
    return PARETO_PAGE if key == default else f"pareto/{key}.html"


def build(board: Leaderboard) -> list[ParetoContext]:
    """One page per group mean and per dataset, each with a picker of all of them."""
    # groups as the home and ranks pages order them: "All datasets" last
    choices = [group_choice(board, group) for group in ordered_groups(board)]
    choices += [dataset_choice(board, dataset) for dataset in board.datasets]
    methods = (
        best_rule(board),
        "Costs: parameters and embedding dimensions (model.parameters, model.dim); milliseconds per query: 1000 ÷ "
        f"the search rate (provenance.timings.{LATENCY_TIMING}), the median over the datasets of the choice, only "
        "where every one of them records it. A cost is measured only when irboard measured it: CI reproduced every "
        "result of the model here, reading the parameter count and dimension from the model it loaded and timing "
        "the search on its own machine (the Method page, trust). Every other cost is what the result files claim "
        "(a submitter's flags or edits; timings from the submitter's hardware), marked claimed; each cost's "
        "'measured by irboard only' view leaves claimed costs out of the chart and the front.",
        "Group means and dataset scores ×100 with their 95% confidence intervals, as on the ranks and dataset pages.",
    )
    default = next((c.key for c in choices if c.kind == "group" and c.name == ALL_GROUP),
                   choices[0].key if choices else "")
    paths = {c.key: choice_path(c.key, default) for c in choices}
    pages = []
    for choice in choices or [None]:
        path = paths[choice.key] if choice else PARETO_PAGE
        root = "../" if "/" in path else ""
        title = "Could be #1, against cost" + (f": {choice.name}" if choice and path != PARETO_PAGE else "")
        links = tuple((c.key, c.name, c.kind, root + paths[c.key]) for c in choices)
        pages.append(ParetoContext(page=Page(path, title, root, "pareto"), choice=choice, links=links,
                                   costs=tuple((cost, COST_LABELS[cost]) for cost in COSTS), rule=pareto_rule(board),
                                   cost_views=tuple((key, cost_label(key)) for cost in COSTS
                                                    for key in (cost, cost + MEASURED)),
                                   methods=methods))
    return pages
