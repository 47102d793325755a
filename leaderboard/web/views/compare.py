"""The compare page (any two models, `build`) and the data its script reads: data/datasets.js (`datasets_data`,
`groups_data`) and each model's per-query values and p-values (`compare_data`, data/models/<slug>.js).
"""

from __future__ import annotations

import numpy as np
from scipy import stats as scipy_stats

from leaderboard.analysis import meta
from leaderboard.analysis.aggregate import Leaderboard, ModelBoard, unit_of
from leaderboard.analysis.verdicts import family_size, shown_pvalue
from leaderboard.web.contexts import CompareContext, Page
from leaderboard.web.judged_data import compare_judged, group_compare_flips, judged_label
from leaderboard.web.render import json_rounded, json_text
from leaderboard.web.views.common import describe_tests, effect_constants
from leaderboard.web.views.home import home_order


def build(board: Leaderboard) -> CompareContext:
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
                         f'"values":{json_rounded(dataset.scores[i], 4)}{compare_judged(dataset, i)}}}')
    groups = []  # the corrected p-values of the model's group means against every ranked model (groups_data's order)
    for group in board.groups:
        if group.pvalues is not None and model.info.id in group.ranked_ids:
            row = group.pvalues[group.ranked_ids.index(model.info.id)]
            groups.append(f"{json_text(group.name)}:{_pvalue_list(shown_pvalue(row, board.settings.tests.alpha))}")
    if groups:
        parts.append('"groups":{' + ",".join(groups) + "}")
    flips = [f"{json_text(g.name)}:{json_text(group_compare_flips(g, model.info.id))}" for g in board.groups
             if group_compare_flips(g, model.info.id)]
    if flips:  # per group, the ranked models whose group-mean verdict with this one could flip (◊)
        parts.append('"groupFlips":{' + ",".join(flips) + "}")
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
        d.info.id: {"name": d.info.name, "metric": d.info.main_metric, "judged": judged_label(d), "slug": d.slug,
                    "queries": list(d.query_ids),
                    "models": list(d.model_ids), "unit": unit_of(d.info.id),
                    **effect_constants(d, board.settings.tests.alpha, board.settings)}
        for d in board.datasets
    }
