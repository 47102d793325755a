"""Recall at scale on the site: the home column, the dataset column and the model page's charts.

Predictions come from leaderboard/analysis/predictions.py (one per result with score samples); this module turns them
into the typed contexts of leaderboard/web/contexts.py. Every number is labelled as a model-based prediction and
links to the method page, which holds the method's measured error.
"""

from __future__ import annotations

import math

from evaluator.result import slugify
from leaderboard.analysis import predictions
from leaderboard.analysis.aggregate import ALL_GROUP, DatasetBoard, Leaderboard, ModelBoard
from leaderboard.analysis.predictions import COLUMN_K, COLUMN_SIZE, Evidence, Prediction
from leaderboard.analysis.scale import GROWTHS
from leaderboard.submissions.load import LoadedResult
from leaderboard.web import charts
from leaderboard.web.contexts import (
    Crossing,
    CrossingSection,
    Figure,
    PredictedMean,
    PredictedValue,
    PredictionColumn,
    ScaleRow,
    ScaleSection,
)
from leaderboard.web.render import json_text, public_note

PERCENT = 100.0  # recall is shown ×100, as every bounded metric on the site
METHOD_ANCHOR = "method.html#recall-at-scale"
SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def size_label(size: float) -> str:
    """10000 -> "10⁴"; other sizes as grouped digits."""
    exponent = round(math.log10(size)) if size > 0 else 0
    if size == 10**exponent and exponent >= 2:
        return "10" + str(exponent).translate(SUPERSCRIPTS)
    return f"{int(size):,}"


def short_count(size: float) -> str:
    """10_000_000 -> "10M" (exact multiples only); 3_162_278 -> "3.2M" (others, two significant digits)."""
    size = float(size)
    for limit, suffix in ((10**9, "B"), (10**6, "M"), (10**3, "k")):
        if size >= limit:
            value = size / limit
            return f"{value:.0f}{suffix}" if value == int(value) or value >= 10 else f"{value:.1f}{suffix}"
    return f"{size:,.0f}"


COLUMN_LABEL = f"Predicted R@{COLUMN_K} @{short_count(COLUMN_SIZE)} docs (model-based)"
# what a * on a prediction means (the title of its mark, and the words beside a chart that has no marks)
UNCHECKED_WORDS = "not checked: its score samples were not checked against a stored ranking"


def method_words(board: Leaderboard) -> str:
    return f"{board.settings.scale_mode} mode, {board.settings.scale_growth} growth"


def samples_checked(result: LoadedResult) -> bool:
    """Were the result's score samples checked against its stored ranking and the judgments? Verification checks
    them with the metrics (leaderboard/submissions/sample_checks.py) and rejects a file whose samples fail, so a
    result with a ranking and re-scored metrics passed them; without a ranking or judgments nothing was checked,
    and its prediction is shown * like an unverified metric."""
    return result.has_run and bool(result.verified_metrics)


def unchecked_predictions(board: Leaderboard) -> frozenset[tuple[str, str]]:
    """The (model id, dataset id) of every prediction made from score samples that were not checked."""
    return frozenset((model.info.id, dataset_id) for model in board.models
                     for dataset_id, result in model.results.items()
                     if (model.info.id, dataset_id) in board.predictions and not samples_checked(result))


def predicted_value(prediction: Prediction | None, checked: bool = True) -> PredictedValue | None:
    if prediction is None:
        return None
    return PredictedValue(prediction.column_value, prediction.reason, checked)


def prediction_method(board: Leaderboard) -> str:
    return (f"{COLUMN_LABEL}: the Recall@{COLUMN_K} the model would reach on a corpus of {COLUMN_SIZE:,} documents "
            f"holding the same relevant documents ({board.settings.scale_growth} growth), predicted from the score "
            f"samples stored in its result ({method_words(board)}), ×100. This is a model-based prediction, not a "
            "measurement; the method, its assumptions and its measured error are on the Method page (the column "
            "header links to it). – : the result has no score samples.")


SHORT_LABEL = f"Predicted R@{COLUMN_K} @{short_count(COLUMN_SIZE)}"  # a header that fits on one line


def column_error(board: Leaderboard, evidence: Evidence | None) -> float | None:
    """The method's measured mean |error| at the column's k in the build's growth scenario and mode."""
    if evidence is None:
        return None
    return evidence.error(board.settings.scale_growth, board.settings.scale_mode, COLUMN_K)


def dataset_prediction_column(board: Leaderboard, root: str, evidence: Evidence | None = None) -> PredictionColumn:
    return PredictionColumn(COLUMN_LABEL, f"{board.settings.scale_growth} growth", root + METHOD_ANCHOR,
                            column_error(board, evidence), SHORT_LABEL)


def home_predictions(board: Leaderboard, model_ids: list[str], evidence: Evidence | None = None):
    """The home column (None without any prediction) and each model's mean over the overall group's datasets."""
    overall = next((g for g in board.groups if g.name == ALL_GROUP), board.groups[0] if board.groups else None)
    if not board.predictions or overall is None:
        return None, {}
    count = len(overall.dataset_ids)
    column = PredictionColumn(COLUMN_LABEL, f"{board.settings.scale_growth} growth, mean over all {count} "
                              f"dataset{'s' if count != 1 else ''}", METHOD_ANCHOR, column_error(board, evidence),
                              SHORT_LABEL)
    cells, unchecked = {}, unchecked_predictions(board)
    for model_id in model_ids:
        mean, covered = predictions.mean_column_value(board.predictions, model_id, overall.dataset_ids,
                                                      overall.weights)
        checked = not any((model_id, dataset_id) in unchecked for dataset_id in overall.dataset_ids)
        cells[model_id] = PredictedMean(mean, covered, count, checked)
    return column, cells


def scale_section(board: Leaderboard, model: ModelBoard, root: str,
                  evidence: Evidence | None = None) -> ScaleSection | None:
    """Charts and table of predicted recall for the model's results with score samples (None without any); each
    row with the method's measured error in its k and growth scenario, from `evidence`."""

    found = [board.predictions[(model.info.id, d)] for d in model.results if (model.info.id, d) in board.predictions]
    if not found:
        return None
    sizes = tuple(float(size) for size in predictions.CHART_SIZES)
    rows, figures, problems, dropped = [], [], [], []
    unchecked = unchecked_predictions(board)
    ordered = (board.settings.scale_growth,) + tuple(g for g in GROWTHS if g != board.settings.scale_growth)
    for prediction in found:
        if prediction.recall is None:
            # a reason may quote a validation error naming the builder's own path: cut as the home page's notes
            problems.append((prediction.dataset_id, public_note(prediction.reason or "no prediction")))
            continue
        if prediction.n_dropped:
            reasons = "; ".join(f"{count}: {reason}" for reason, count in prediction.dropped)
            dropped.append((prediction.dataset_id, prediction.n_dropped,
                            prediction.n_dropped + prediction.queries, reasons))
        measured = dict(prediction.measured)
        checked = (model.info.id, prediction.dataset_id) not in unchecked
        # the rows of the chart's sizes and of the dataset's own size (Prediction.value's numbers, looked up once)
        at = [prediction.sizes.index(size) for size in sizes] + [prediction.sizes.index(float(prediction.num_docs))]
        for growth in ordered:
            table = prediction.recall[growth][at].T.tolist()
            for k, column in zip(prediction.ks, table, strict=True):
                rows.append(ScaleRow(
                    dataset_id=prediction.dataset_id, k=k, growth=growth, num_docs=prediction.num_docs,
                    measured=measured.get(k), at_own_size=column[-1], values=tuple(column[:-1]),
                    checked=checked,
                    error=evidence.error(growth, board.settings.scale_mode, k) if evidence is not None else None))
        recall = {growth: PERCENT * prediction.recall[growth] for growth in ordered}
        figure = charts.recall_at_scale(
            prediction.dataset_id, prediction.sizes, prediction.ks, recall,
            [(k, PERCENT * value) for k, value in prediction.measured], prediction.num_docs,
            f"{board.settings.scale_mode} mode")
        figures.append(Figure(f"fig-scale-{slugify(prediction.dataset_id)}",
                              f"{prediction.dataset_id}: predicted Recall@k against corpus size in both growth "
                              "scenarios (model-based prediction)" + ("" if checked else f"; {UNCHECKED_WORDS}"),
                              json_text(figure), label=prediction.dataset_id))
    note = (f"Model-based prediction, not a measurement ({board.settings.scale_mode} mode): each result's score "
            "samples are extrapolated to larger corpora in two growth scenarios, fixed-relevant (solid lines: "
            "the judged relevant documents stay, only non-relevant ones are added) and uniform (dashed: relevant "
            "documents grow in proportion, so Recall@k cannot exceed k ÷ their number); the diamonds are the "
            "recall measured on the dataset itself, at its own size (dotted line).")
    return ScaleSection(sizes=sizes, size_labels=tuple(size_label(size) for size in sizes), rows=tuple(rows),
                        figures=tuple(figures), problems=tuple(problems), dropped=tuple(dropped), note=note,
                        method_href=root + METHOD_ANCHOR)


CROSSING_MODELS = 20  # a dataset page lists the crossings among this many models (the pairs grow as m²)


def crossing_section(board: Leaderboard, dataset: DatasetBoard, evidence: Evidence | None,
                     root: str) -> CrossingSection | None:
    """Where one model's predicted Recall@k (the column's k, the site's growth scenario) overtakes another's as
    the corpus grows; None when no two predicted curves cross."""
    growth, k = board.settings.scale_growth, COLUMN_K
    found = [p for model_id in dataset.model_ids
             if (p := board.predictions.get((model_id, dataset.info.id))) is not None and p.recall is not None]
    predicted = len(found)
    # every pair of 1,000 models would be a million curves a dataset: the pairs among the best predicted at own size
    found = sorted(found, key=lambda p: -p.value(p.num_docs, k, growth))[:CROSSING_MODELS]
    error = evidence.error(growth, board.settings.scale_mode, k) if evidence is not None else None
    largest = predictions.CURVE_SIZES[-1]
    crossings, unchecked = [], unchecked_predictions(board)
    within = 0  # crossings whose predicted lead stays within the method's measured error: not claimed
    for leader in found:
        for follower in found:
            if leader is follower:
                continue
            gap = leader.value(leader.num_docs, k, growth) - follower.value(follower.num_docs, k, growth)
            size = predictions.crossing(leader, follower, k, growth) if gap > 0 else None
            if size is not None and error is not None and \
                    follower.value(largest, k, growth) - leader.value(largest, k, growth) <= error:
                within += 1
            elif size is not None:
                crossings.append(Crossing(
                    leader=leader.model_id, follower=follower.model_id,
                    leader_href=f"{root}models/{slugify(leader.model_id)}.html",
                    follower_href=f"{root}models/{slugify(follower.model_id)}.html",
                    size=size, size_text=short_count(size), gap_at_own_size=gap,
                    leader_checked=(leader.model_id, dataset.info.id) not in unchecked,
                    follower_checked=(follower.model_id, dataset.info.id) not in unchecked))
    if not crossings and not within:
        return None
    among = (f" of the {CROSSING_MODELS} models with the highest predicted Recall@{k} at the dataset's own size "
             f"(of {predicted:,})" if predicted > CROSSING_MODELS else "")
    note = (f"From the predicted Recall@{k} curves{among} ({method_words(board)}), between the dataset's own size and "
            f"{size_label(predictions.CURVE_SIZES[-1])} documents. A crossing is only as reliable as the prediction: "
            + (f"on the validation datasets the method's mean absolute error at R@{k} in this scenario was "
               f"{PERCENT * error:.2f} points (×100); where the two curves stay closer than that, the order is not "
               "settled." if error is not None else "its error has not been measured in this scenario."))
    if within:
        note += (f" Listed only where the follower's predicted lead at {size_label(largest)} documents exceeds that "
                 f"error; {within} more crossing{'s stay' if within != 1 else ' stays'} within it and "
                 f"{'are' if within != 1 else 'is'} not listed.")
    return CrossingSection(k=k, growth=growth, crossings=tuple(sorted(crossings, key=lambda c: c.size)),
                           error=error, note=note, method_href=root + METHOD_ANCHOR)
