"""Recall-at-scale predictions as the site shows them, from leaderboard.scale (../shared/design/sdm.md).

The method, corpus sizes and cut-offs the site uses are fixed here, in one place. A result without score
samples (schema version 1, or evaluated without them) has no prediction; a result whose samples cannot
support the score model gets the reason instead of a number, never a silent value. The measured error of the
method comes from `scale_evidence.json`, written from the benchmark `benchmarks/scale.py`.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from evaluator.errors import InputFormatError, ResultValidationError
from leaderboard.load import LoadedResult
from leaderboard.scale import CannotPredictError, Mode, Tail, recall_curve

logger = logging.getLogger(__name__)

# Chosen from benchmarks/scale.py on SciFact (all-MiniLM-L6-v2, 6.6x extrapolation): per-query/hybrid erred by
# 0.010 (R@10) and 0.008 (R@100); the pooled model of the paper by 0.091 and 0.042. See benchmarks/README.md.
DEFAULT_MODE: Mode = "per_query"
DEFAULT_TAIL: Tail = "hybrid"
CHART_SIZES: tuple[int, ...] = tuple(10**exponent for exponent in range(4, 9))
CHART_KS: tuple[int, ...] = (10, 100, 1000)
COLUMN_SIZE = 10**7  # the leaderboard column: predicted R@COLUMN_K at COLUMN_SIZE documents
COLUMN_K = 100
EVIDENCE_FILE = Path(__file__).with_name("scale_evidence.json")


@dataclass(frozen=True, eq=False)
class Prediction:
    """Predicted Recall@k of one result over corpus sizes, or the reason there is none.

    `sizes` are CHART_SIZES plus the result's own corpus size (`num_docs`), ascending; `recall[i, j]` is the
    prediction at sizes[i] for ks[j]. `measured` holds the result's own R@k at num_docs, for the k in `ks` whose
    metric the result has."""

    model_id: str
    dataset_id: str
    num_docs: int
    sizes: tuple[float, ...]
    ks: tuple[int, ...]
    recall: np.ndarray | None
    reason: str | None
    measured: tuple[tuple[int, float], ...]
    mode: str
    tail: str
    queries: int  # queries with a relevant document, the ones the fit uses

    def value(self, size: float, k: int) -> float | None:
        """The prediction at a corpus size and cut-off the prediction holds, or None without one."""
        if self.recall is None or k not in self.ks or float(size) not in self.sizes:
            return None
        return float(self.recall[self.sizes.index(float(size)), self.ks.index(k)])

    @property
    def column_value(self) -> float | None:
        return self.value(COLUMN_SIZE, COLUMN_K)


def predict_result(result: LoadedResult, mode: Mode = DEFAULT_MODE, tail: Tail = DEFAULT_TAIL,
                   warnings: list[str] | None = None) -> Prediction | None:
    """The prediction for one result; None when it has no score samples.

    Samples that the schema accepted but that do not decode (bad base64, wrong counts) give a reason and a
    warning in `warnings` naming the file, so that `irboard build --strict` stops on them."""
    samples = result.score_samples
    if samples is None:
        return None
    num_docs = int(samples.num_docs)
    sizes = tuple(sorted({float(size) for size in CHART_SIZES} | {float(num_docs)}))
    measured = tuple((k, float(result.metrics[f"R@{k}"])) for k in CHART_KS if f"R@{k}" in result.metrics)
    recall, reason, queries = None, None, 0
    try:
        curve = recall_curve(result, sizes, CHART_KS, mode, tail)
        recall, queries = curve.recall, curve.n_queries
    except CannotPredictError as error:
        reason = error.reason
    except ResultValidationError as error:
        reason = f"the score samples cannot be read ({error})"
        if warnings is not None:
            warnings.append(f"{result.path}: {reason}; no recall-at-scale prediction is shown for this result")
    if reason is not None:
        logger.info("%s: cannot predict recall at scale: %s", result.path, reason)
    return Prediction(model_id=result.model.id, dataset_id=result.dataset_id, num_docs=num_docs, sizes=sizes,
                      ks=CHART_KS, recall=recall, reason=reason, measured=measured, mode=mode, tail=tail,
                      queries=queries)


def predict_results(results: Iterable[LoadedResult], mode: Mode = DEFAULT_MODE, tail: Tail = DEFAULT_TAIL,
                    warnings: list[str] | None = None) -> dict[tuple[str, str], Prediction]:
    """(model id, dataset id) -> Prediction for every result with score samples (the others are left out)."""
    start = time.perf_counter()
    predictions = {}
    for result in results:
        prediction = predict_result(result, mode, tail, warnings)
        if prediction is not None:
            predictions[(result.model.id, result.dataset_id)] = prediction
    if predictions:
        logger.info("predicted recall at scale for %d results in %.1f s", len(predictions),
                    time.perf_counter() - start)
    return predictions


def mean_column_value(predictions: dict[tuple[str, str], Prediction], model_id: str, dataset_ids: Sequence[str],
                      weights: Sequence[float]) -> tuple[float | None, int]:
    """(weighted mean of the column value over dataset_ids, datasets with a value); the mean only when every
    dataset has one, as with group means."""
    values = []
    for dataset_id in dataset_ids:
        prediction = predictions.get((model_id, dataset_id))
        values.append(prediction.column_value if prediction is not None else None)
    covered = sum(value is not None for value in values)
    if covered < len(values) or not values:
        return None, covered
    total = math.fsum(weights)
    return math.fsum(w * v for w, v in zip(weights, values, strict=True)) / total, covered


# --- measured error of the method -------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class EvidenceRow(_Strict):
    model: str
    extrapolation: float  # full corpus size / the size the fit saw
    measured: dict[str, float]  # k -> measured Recall@k on the full corpus
    errors: dict[str, dict[str, float | None]]  # "mode/tail" -> k -> mean |predicted - measured|
    cannot_predict: dict[str, str] = {}  # "mode/tail" -> reason


class Evidence(_Strict):
    description: str
    rows: list[EvidenceRow]


def load_evidence(path: Path | str = EVIDENCE_FILE) -> Evidence:
    """The measured errors of the prediction; a malformed file raises InputFormatError naming the field."""
    path = Path(path)
    fix = "regenerate it from the output of benchmarks/scale.py"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputFormatError(f"{path}: cannot read ({error.strerror}); {fix}") from None
    try:
        return Evidence.model_validate(json.loads(text))
    except json.JSONDecodeError as error:
        raise InputFormatError(f"{path}: line {error.lineno}: invalid JSON ({error.msg}); {fix}") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise InputFormatError(f"{path}: {where}: {first['msg']}; {fix}") from None
