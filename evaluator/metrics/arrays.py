"""Metrics on (batch, list) score and label arrays, as learning-to-rank code holds them (numpy or torch).

Each row is one query whose candidate list is fully judged by `labels`. The values equal those of the
equivalent run and qrels: row i becomes query i, position j becomes a document whose id sorts so that among
equal scores the earlier position ranks first. A `mask` marks padding positions (False = not a candidate).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evaluator.errors import InputFormatError
from evaluator.metrics.measures import evaluate
from evaluator.metrics.names import Measure, parse_measures
from evaluator.metrics.ranking import PAD, QrelsStats, RankedRun


def _to_numpy(array) -> np.ndarray:
    if hasattr(array, "detach"):  # a torch tensor, possibly on a GPU
        return array.detach().cpu().numpy()
    return np.asarray(array)


def _ranked_order(scores, mask):
    """Per-row order by float32 score descending, earlier position first among ties, padding last."""
    if hasattr(scores, "detach"):
        import torch

        keys = scores.detach().to(torch.float32)
        if mask is not None:
            keys = keys.masked_fill(~mask.to(torch.bool), float("-inf"))
        return torch.sort(keys, dim=1, descending=True, stable=True).indices.cpu().numpy()
    keys = np.asarray(scores, dtype=np.float32)
    if mask is not None:
        keys = np.where(np.asarray(mask, dtype=bool), keys, -np.inf)
    return np.argsort(-keys, axis=1, kind="stable")


def evaluate_arrays(
    scores,
    labels,
    measures: Sequence[Measure | str],
    relevance_level: int = 1,
    mask=None,
) -> dict[str, np.ndarray]:
    """Per-row values of each measure for (batch, list) `scores` and integer `labels`."""
    measures = [m if isinstance(m, Measure) else parse_measures([m])[0] for m in measures]
    score_np, label_np = _to_numpy(scores), _to_numpy(labels)
    if score_np.ndim != 2 or score_np.shape != label_np.shape:
        raise InputFormatError(
            f"scores {score_np.shape} and labels {label_np.shape} must both be 2-D (batch, list) of one shape"
        )
    if not np.all(np.isfinite(score_np.astype(np.float64))):
        raise InputFormatError("scores contain NaN or infinity; every score must be finite")
    if not np.array_equal(label_np, np.round(label_np)):
        raise InputFormatError("labels must be integers (graded relevance)")
    label_np = label_np.astype(np.int64)
    valid = np.ones(label_np.shape, dtype=bool) if mask is None else _to_numpy(mask).astype(bool)
    order = _ranked_order(scores, mask)
    ranked_labels = np.take_along_axis(np.where(valid, label_np, PAD), order, axis=1).astype(np.int32)
    lengths = valid.sum(axis=1)

    judged_labels = np.where(valid, label_np, 0)
    ideal = -np.sort(-np.where(judged_labels > 0, judged_labels, 0), axis=1)
    stats = QrelsStats(
        ideal_labels=ideal,
        n_relevant=((judged_labels >= relevance_level) & valid).sum(axis=1),
        n_nonrelevant=((judged_labels >= 0) & (judged_labels < relevance_level) & valid).sum(axis=1),
    )
    ranked = RankedRun([str(i) for i in range(len(lengths))], ranked_labels, lengths)
    return evaluate(ranked, stats, measures, relevance_level)
