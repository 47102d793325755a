"""Recall-at-scale predictions as the site shows them, from leaderboard.analysis.scale (../shared/design/sdm.md).

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
from leaderboard.analysis.scale import GROWTHS, CannotPredictError, Mode, Tail, forecasts, samples_of
from leaderboard.analysis.scale_options import DEFAULT_GROWTH, DEFAULT_MODE, DEFAULT_TAIL  # noqa: F401 (re-exported)
from leaderboard.submissions.cache import ContentCache, code_version
from leaderboard.submissions.loaded import LoadedResult

logger = logging.getLogger(__name__)

CHART_SIZES: tuple[int, ...] = tuple(10**exponent for exponent in range(4, 9))
CURVE_SIZES: tuple[float, ...] = tuple(float(size) for size in CHART_SIZES)  # charts and crossings (log-linear)
CHART_KS: tuple[int, ...] = (10, 100, 1000)
COLUMN_SIZE = 10**7  # the leaderboard column: predicted R@COLUMN_K at COLUMN_SIZE documents
COLUMN_K = 100
EVIDENCE_FILE = Path(__file__).with_name("scale_evidence.json")


@dataclass(frozen=True, eq=False)
class Prediction:
    """Predicted Recall@k of one result over corpus sizes in each growth scenario, or the reason there is none.

    `sizes` are CURVE_SIZES, CHART_SIZES and the result's own corpus size (`num_docs`), ascending;
    `recall[growth][i, j]` is the prediction at sizes[i] for ks[j]. `measured` holds the result's own R@k at
    num_docs, for the k in `ks` whose metric the result has. `dropped` counts the queries the model could not
    describe (by reason); they are left out of the mean."""

    model_id: str
    dataset_id: str
    num_docs: int
    sizes: tuple[float, ...]
    ks: tuple[int, ...]
    recall: dict[str, np.ndarray] | None
    reason: str | None
    measured: tuple[tuple[int, float], ...]
    mode: str
    tail: str
    queries: int  # queries the prediction averages over
    dropped: tuple[tuple[str, int], ...] = ()

    def value(self, size: float, k: int, growth: str = DEFAULT_GROWTH) -> float | None:
        """The prediction at a corpus size and cut-off the prediction holds, or None without one."""
        if self.recall is None or k not in self.ks or float(size) not in self.sizes:
            return None
        return float(self.recall[growth][self.sizes.index(float(size)), self.ks.index(k)])

    def curve(self, k: int, growth: str = DEFAULT_GROWTH) -> np.ndarray | None:
        """Predicted Recall@k at every size in `sizes`."""
        if self.recall is None or k not in self.ks:
            return None
        return self.recall[growth][:, self.ks.index(k)]

    @property
    def n_dropped(self) -> int:
        return sum(count for _, count in self.dropped)

    @property
    def column_value(self) -> float | None:
        return self.value(COLUMN_SIZE, COLUMN_K)


def predict_result(result: LoadedResult, mode: Mode = DEFAULT_MODE, tail: Tail = DEFAULT_TAIL,
                   warnings: list[str] | None = None) -> Prediction | None:
    """The prediction for one result in both growth scenarios; None when it has no score samples.

    Samples that the schema accepted but that do not decode (bad base64, wrong counts) give a reason and a
    warning in `warnings` naming the file, so that `irboard build --strict` stops on them."""
    if result.score_samples is None:
        return None
    measured = _measured(result.metrics)
    recall, reason, queries, dropped, num_docs = None, None, 0, (), int(result.num_docs or 0)
    sizes = tuple(float(size) for size in CHART_SIZES)
    try:
        samples = samples_of(result)
        num_docs = int(samples.num_docs)
        sizes = tuple(sorted({float(s) for s in CHART_SIZES} | set(CURVE_SIZES) | {float(num_docs)}))
        found = forecasts(samples, sizes, CHART_KS, mode, tail, GROWTHS)
        recall = {growth: f.recall for growth, f in found.items()}
        first = found[GROWTHS[0]]
        queries, dropped = first.queries, tuple(sorted(first.dropped.items()))
    except CannotPredictError as error:
        reason = error.reason
    except ResultValidationError as error:
        reason = f"{UNREADABLE} ({error})"
        if warnings is not None:
            warnings.append(f"{result.path}: {reason}; no recall-at-scale prediction is shown for this result")
    if reason is not None:
        logger.info("%s: cannot predict recall at scale: %s", result.path, reason)
    return Prediction(model_id=result.model.id, dataset_id=result.dataset_id, num_docs=num_docs, sizes=sizes,
                      ks=CHART_KS, recall=recall, reason=reason, measured=measured, mode=mode, tail=tail,
                      queries=queries, dropped=dropped)


def _measured(metrics) -> tuple[tuple[int, float], ...]:
    return tuple((k, float(metrics[f"R@{k}"])) for k in CHART_KS if f"R@{k}" in metrics)


UNREADABLE = "the score samples cannot be read"


class Predictor:
    """The predict stage of the build's read step (a `submissions.stages.Forecaster`): `predict_result` once per
    file while it is read, so that no score samples stay in memory. Outcomes are kept by content (`ContentCache`
    under `<cache>/predicted`, unless `cache` is False): a file whose exact bytes were predicted before, by this
    code (this module and all it imports: decoding the samples, the score model) with this method and these sizes,
    is neither decoded nor fitted again."""

    def __init__(self, mode: Mode = DEFAULT_MODE, tail: Tail = DEFAULT_TAIL, cache: bool = True):
        from evaluator.datasets.download import cache_root

        self.mode, self.tail = mode, tail
        self.cache = ContentCache(cache_root() / "predicted", code=(__name__,)) if cache else None

    def _fields(self, file_sha256: str) -> dict[str, str]:
        return {"file_sha256": file_sha256, "mode": self.mode, "tail": self.tail,
                "chart": repr((CHART_SIZES, CURVE_SIZES, CHART_KS, GROWTHS))}

    def method(self) -> str:
        """What a prediction depends on besides the file: this code's version, the method and the chart's sizes."""
        fields = {"code": code_version(__name__), **self._fields("")}
        return " ".join(f"{name}={value}" for name, value in fields.items() if name != "file_sha256")

    def cached(self, file_sha256: str | None, header) -> Prediction | None:
        """The prediction made before from the file whose bytes hash to `file_sha256` (`header`: its parsed
        header), or None."""
        entry = self.cache.get(self._fields(file_sha256)) if self.cache is not None and file_sha256 else None
        return None if entry is None else self.decode(entry, header.model.id, header.dataset.id, header.metrics)

    def keeps(self, prediction: Prediction | None) -> bool:
        """Whether a prediction may be kept for the same bytes: not one whose samples could not be read, which
        the build reports as a warning every time."""
        return not (prediction is not None and (prediction.reason or "").startswith(UNREADABLE))

    @staticmethod
    def encode(prediction: Prediction) -> dict:
        """The prediction as JSON data (its result's measured values excepted: `decode` takes them again)."""
        recall = prediction.recall
        return {"num_docs": prediction.num_docs, "sizes": list(prediction.sizes), "reason": prediction.reason,
                "recall": None if recall is None else {growth: recall[growth].tolist() for growth in GROWTHS},
                "queries": prediction.queries, "dropped": [list(item) for item in prediction.dropped]}

    def decode(self, entry: dict, model_id: str, dataset_id: str, metrics: dict[str, float]) -> Prediction | None:
        """The Prediction `encode` gave `entry` for a result of `model_id` on `dataset_id` with these metric
        means; None when `entry` is not one."""
        try:
            recall = entry["recall"]
            sizes = tuple(float(size) for size in entry["sizes"])
            return Prediction(
                model_id=model_id, dataset_id=dataset_id, num_docs=int(entry["num_docs"]), sizes=sizes,
                ks=CHART_KS, recall=None if recall is None else {
                    growth: np.array(recall[growth], dtype=np.float64).reshape(len(sizes), len(CHART_KS))
                    for growth in GROWTHS},
                reason=entry["reason"], measured=_measured(metrics), mode=self.mode, tail=self.tail,
                queries=int(entry["queries"]), dropped=tuple((str(why), int(count)) for why, count in entry["dropped"]))
        except (KeyError, TypeError, ValueError):
            return None

    def predict(self, result: LoadedResult, file_sha256: str | None = None) -> Prediction | None:
        prediction = predict_result(result, self.mode, self.tail)
        if prediction is not None and self.cache is not None and file_sha256 and self.keeps(prediction):
            self.cache.put(self._fields(file_sha256), self.encode(prediction))
        return prediction


def predict_results(results: Iterable[LoadedResult], mode: Mode = DEFAULT_MODE, tail: Tail = DEFAULT_TAIL,
                    warnings: list[str] | None = None) -> dict[tuple[str, str], Prediction]:
    """(model id, dataset id) -> Prediction for every result with score samples (the others are left out).

    Computed once per result while the leaderboard is aggregated, or taken from the result when its reader made
    it (`Predictor`); the pages only read these values."""
    start = time.perf_counter()
    predictions = {}
    for result in results:
        prediction = result.prediction
        if prediction is None:
            prediction = predict_result(result, mode, tail, warnings)
        elif (prediction.reason or "").startswith(UNREADABLE) and warnings is not None:
            warnings.append(f"{result.path}: {prediction.reason}; no recall-at-scale prediction is shown for this "
                            "result")
        if prediction is not None:
            predictions[(result.model.id, result.dataset_id)] = prediction
    if predictions:
        logger.info("predicted recall at scale for %d results in %.2f s", len(predictions),
                    time.perf_counter() - start)
    return predictions


def crossing(first: Prediction, second: Prediction, k: int, growth: str = DEFAULT_GROWTH) -> float | None:
    """The corpus size beyond the larger of the two datasets' sizes where `second`'s predicted Recall@k passes
    `first`'s (log-linear interpolation between CURVE_SIZES), or None where it does not."""
    a, b = first.curve(k, growth), second.curve(k, growth)
    if a is None or b is None or first.sizes != second.sizes:
        return None
    sizes = np.asarray(first.sizes)
    start = max(first.num_docs, second.num_docs)
    keep = sizes >= start
    sizes, gap = sizes[keep], (b - a)[keep]
    for i in range(1, gap.size):
        if gap[i - 1] < 0 <= gap[i] and gap[i] > gap[i - 1]:
            t = -gap[i - 1] / (gap[i] - gap[i - 1])
            return float(10 ** (math.log10(sizes[i - 1]) + t * (math.log10(sizes[i]) - math.log10(sizes[i - 1]))))
    return None


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
    dataset: str
    model: str
    growth: str
    measured: dict[str, float]  # k -> Recall@k measured on the full corpus
    errors: dict[str, dict[str, float] | None]  # method -> k -> mean |predicted - measured| (None: cannot predict)
    dropped: float  # share of queries the per-query model dropped
    cannot_predict: dict[str, str] = {}  # method -> reason


class Evidence(_Strict):
    description: str
    fractions: list[float] = []
    seeds: int = 0
    summary: dict[str, dict[str, dict[str, float] | None]] = {}  # growth -> method -> k -> mean |error|
    by_fraction: dict[str, dict[str, dict[str, dict[str, float]]]] = {}  # growth -> method -> fraction -> k -> error
    rows: list[EvidenceRow]

    def error(self, growth: str, method: str, k: int) -> float | None:
        """The mean |error| over every row of a scenario and method at cut-off k, None if not measured."""
        return ((self.summary.get(growth) or {}).get(method) or {}).get(str(k))


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
