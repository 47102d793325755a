"""What a notebook user hands `irboard.evaluate`: runs and judgments as paths, dicts of dicts or pandas
DataFrames, and metrics as a string, `Measure`s or a list; each turned into irboard's own objects here."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from evaluator.errors import InputFormatError
from evaluator.metrics import Measure, Qrels, RankedRun, parse_measure, parse_measures, rank_run
from evaluator.run_formats import read_run_file
from evaluator.trec import read_qrels

RunLike = str | Path | Mapping[str, Mapping[str, float]] | RankedRun | Any  # Any: a pandas DataFrame
QrelsLike = str | Path | Mapping[str, Mapping[str, int]] | Qrels | Any
MetricsLike = str | Measure | Iterable[str | Measure]

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")


def _is_frame(value: object) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "columns")


def _frame_dict(frame: Any, columns: tuple[str, str, str], what: str, cast) -> dict[str, dict[str, Any]]:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputFormatError(f"{what} DataFrame: missing column(s) {', '.join(missing)}; it needs "
                               f"{', '.join(columns)} (rename yours with DataFrame.rename)")
    nested: dict[str, dict[str, Any]] = {}
    for query_id, doc_id, value in zip(*(frame[c].tolist() for c in columns), strict=True):
        nested.setdefault(str(query_id), {})[str(doc_id)] = cast(value)
    return nested


def _finite(value) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise InputFormatError(f"run: score {value!r} is not finite; scores must be finite numbers")
    return value


def to_qrels(qrels: QrelsLike) -> Qrels:
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, Path)):
        return read_qrels(qrels)
    if _is_frame(qrels):
        return Qrels.from_dict(_frame_dict(qrels, QRELS_COLUMNS, "qrels", int))
    if isinstance(qrels, Mapping):
        return Qrels.from_dict({str(q): {str(d): int(label) for d, label in judged.items()}
                                for q, judged in qrels.items()})
    raise InputFormatError(f"qrels: a {type(qrels).__name__} is not judgments; pass a path, a dict "
                           "{query_id: {doc_id: relevance}} or a DataFrame with query_id, doc_id, relevance")


def to_ranked(run: RunLike, qrels: Qrels, ignore_identical_ids: bool = False) -> RankedRun:
    if isinstance(run, RankedRun):
        return run
    if isinstance(run, (str, Path)):  # any format `irboard evaluate --run` reads (detected)
        return read_run_file(Path(run), qrels, ignore_identical_ids=ignore_identical_ids, keep_top=0).ranking.ranked
    if _is_frame(run):
        run = _frame_dict(run, RUN_COLUMNS, "run", _finite)
    if isinstance(run, Mapping):
        return rank_run({str(q): {str(d): _finite(s) for d, s in docs.items()} for q, docs in run.items()},
                        qrels, ignore_identical_ids)
    raise InputFormatError(f"run: a {type(run).__name__} is not a run; pass a path, a dict "
                           "{query_id: {doc_id: score}} or a DataFrame with query_id, doc_id, score")


def to_measures(metrics: MetricsLike) -> list[Measure]:
    if isinstance(metrics, str):
        return parse_measures(metrics)
    if isinstance(metrics, Measure):
        return [metrics]
    return [m if isinstance(m, Measure) else parse_measure(str(m)) for m in metrics]


def mean(values: np.ndarray) -> float:
    """A metric's mean over the judged queries, exactly as a result file records it."""
    return math.fsum(values.tolist()) / len(values) if len(values) else 0.0
