"""Recall at scale on the site: the home column, the dataset column, the model page's charts and the method page.

Predictions come from leaderboard/predictions.py (one per result with score samples); this module turns them
into the typed contexts of leaderboard/contexts.py. Every number is labelled as a model-based prediction and
links to the method page, which holds the method's measured error.
"""

from __future__ import annotations

import math

from evaluator.result import slugify
from leaderboard import charts, predictions
from leaderboard.aggregate import ALL_GROUP, Leaderboard, ModelBoard
from leaderboard.contexts import (
    EvidenceRow,
    EvidenceVariant,
    Figure,
    MethodContext,
    Page,
    PredictedMean,
    PredictedValue,
    PredictionColumn,
    ScaleRow,
    ScaleSection,
)
from leaderboard.predictions import COLUMN_K, COLUMN_SIZE, Evidence, Prediction
from leaderboard.render import json_text
from leaderboard.scale import TAIL_QUANTILE

PERCENT = 100.0  # recall is shown ×100, as every bounded metric on the site
METHOD_ANCHOR = "method.html#recall-at-scale"
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def size_label(size: float) -> str:
    """10000 -> "10⁴"; other sizes as grouped digits."""
    exponent = round(math.log10(size)) if size > 0 else 0
    if size == 10**exponent and exponent >= 2:
        return "10" + str(exponent).translate(SUPERSCRIPTS)
    return f"{int(size):,}"


def short_count(size: int) -> str:
    """10_000_000 -> "10M" (exact multiples only)."""
    for limit, suffix in ((10**9, "B"), (10**6, "M"), (10**3, "k")):
        if size >= limit and size % limit == 0:
            return f"{size // limit}{suffix}"
    return f"{size:,}"


COLUMN_LABEL = f"Predicted R@{COLUMN_K} @{short_count(COLUMN_SIZE)} docs (model-based)"


def method_words(board: Leaderboard) -> str:
    return f"{board.settings.scale_mode} mode, {board.settings.scale_tail} tail"


def predicted_value(prediction: Prediction | None) -> PredictedValue | None:
    if prediction is None:
        return None
    return PredictedValue(prediction.column_value, prediction.reason)


def prediction_method(board: Leaderboard) -> str:
    return (f"{COLUMN_LABEL}: the Recall@{COLUMN_K} the model would reach on a corpus of {COLUMN_SIZE:,} documents, "
            "predicted from the score samples stored in its result by the Score Distribution Model "
            f"({method_words(board)}), ×100. This is a model-based prediction, not a measurement; the method, its "
            "assumptions and its measured error are on the Method page (the column header links to it). – : the "
            "result has no score samples.")


def dataset_prediction_column(root: str) -> PredictionColumn:
    return PredictionColumn(COLUMN_LABEL, "", root + METHOD_ANCHOR)


def home_predictions(board: Leaderboard, model_ids: list[str]):
    """The home column (None without any prediction) and each model's mean over the overall group's datasets."""
    overall = next((g for g in board.groups if g.name == ALL_GROUP), board.groups[0] if board.groups else None)
    if not board.predictions or overall is None:
        return None, {}
    count = len(overall.dataset_ids)
    column = PredictionColumn(COLUMN_LABEL, f"mean over all {count} dataset{'s' if count != 1 else ''}",
                              METHOD_ANCHOR)
    cells = {}
    for model_id in model_ids:
        mean, covered = predictions.mean_column_value(board.predictions, model_id, overall.dataset_ids,
                                                      overall.weights)
        cells[model_id] = PredictedMean(mean, covered, count)
    return column, cells


def scale_section(board: Leaderboard, model: ModelBoard, root: str) -> ScaleSection | None:
    """Charts and table of predicted recall for the model's results with score samples (None without any)."""
    found = [board.predictions[(model.info.id, d)] for d in model.results if (model.info.id, d) in board.predictions]
    if not found:
        return None
    sizes = tuple(float(size) for size in predictions.CHART_SIZES)
    rows, figures, problems = [], [], []
    for prediction in found:
        if prediction.recall is None:
            problems.append((prediction.dataset_id, prediction.reason or "no prediction"))
            continue
        measured = dict(prediction.measured)
        for k in prediction.ks:
            rows.append(ScaleRow(
                dataset_id=prediction.dataset_id, k=k, num_docs=prediction.num_docs, measured=measured.get(k),
                at_own_size=prediction.value(prediction.num_docs, k),
                values=tuple(prediction.value(size, k) for size in sizes)))
        figure = charts.recall_at_scale(
            prediction.dataset_id, prediction.sizes, prediction.ks, PERCENT * prediction.recall,
            [(k, PERCENT * value) for k, value in prediction.measured], prediction.num_docs, method_words(board))
        figures.append(Figure(f"fig-scale-{slugify(prediction.dataset_id)}",
                              f"{prediction.dataset_id}: predicted Recall@k against corpus size "
                              "(model-based prediction)", json_text(figure)))
    note = (f"Model-based prediction, not a measurement: the Score Distribution Model ({method_words(board)}) is "
            "fitted to the score samples stored in each result and extrapolated to larger corpora; the diamonds "
            "are the recall measured on the dataset itself, at its own size (dotted line).")
    return ScaleSection(sizes=sizes, size_labels=tuple(size_label(size) for size in sizes), rows=tuple(rows),
                        figures=tuple(figures), problems=tuple(problems), note=note,
                        method_href=root + METHOD_ANCHOR)


def method_context(board: Leaderboard, evidence: Evidence) -> MethodContext:
    """The method page: how recall at scale is predicted, and its measured error (scale_evidence.json)."""
    used = f"{board.settings.scale_mode}/{board.settings.scale_tail}"
    ks = sorted({int(k) for row in evidence.rows for k in row.measured}
                | {int(k) for row in evidence.rows for errors in row.errors.values() for k in errors})
    known = ("pooled/hybrid", "pooled/skewnorm", "per_query/hybrid", "per_query/skewnorm")
    rows = []
    for row in evidence.rows:
        names = set(row.errors) | set(row.cannot_predict)
        ordered = [name for name in known if name in names] + sorted(names - set(known))
        variants = tuple(
            EvidenceVariant(name, name == used, tuple(row.errors.get(name, {}).get(str(k)) for k in ks),
                            row.cannot_predict.get(name))
            for name in ordered
        )
        rows.append(EvidenceRow(row.model, row.extrapolation, tuple(row.measured.get(str(k)) for k in ks), variants))
    found = list(board.predictions.values())
    return MethodContext(
        page=Page("method.html", "Method: recall at scale", "", "method"),
        variant=used, mode=board.settings.scale_mode, tail=board.settings.scale_tail,
        tail_quantile=TAIL_QUANTILE,
        size_labels=tuple(size_label(size) for size in predictions.CHART_SIZES), ks=predictions.CHART_KS,
        column=COLUMN_LABEL, predictions=sum(p.recall is not None for p in found),
        cannot_predict=sum(p.recall is None for p in found),
        evidence_description=evidence.description, evidence_ks=tuple(ks), evidence=tuple(rows),
    )
