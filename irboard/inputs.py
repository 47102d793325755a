"""What a notebook user hands the API, checked and turned into irboard's own objects: runs and judgments as
paths, dicts of dicts or pandas DataFrames, metrics as a string, `Measure`s or a list, and the plain
arguments. Anything that would be read as something else is an `InputFormatError` (one sentence naming the
query, document, row or argument and the fix), never a number computed from a misread input:

- ids are strings, or whole numbers (written as decimal strings), of one kind per run or judgments, and the
  same kind in both (an id read as a number has lost its leading zeros); a float id is refused;
- scores are finite numbers within float32's range (the precision trec_eval orders by); None, strings,
  booleans and NaN are refused;
- relevance labels are whole numbers in [-1000, 1000] (1.0 is 1; 0.5, NaN and 10**30 are refused);
- a (query, document) pair given twice, empty judgments, a judged query without judgments and a run sharing
  no query id with the judgments are refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from evaluator.errors import InputFormatError
from evaluator.metrics import Measure, Qrels, RankedRun, parse_measure, parse_measures
from evaluator.metrics.ranking import (
    FLOAT32_OVERFLOW,
    FLOAT32_PROBLEM,
    MAX_LABEL,
    MIN_LABEL,
    UNJUDGED,
    rank_columns,
    rank_plain_dict,
)

RunLike = str | Path | Mapping[str, Mapping[str, float]] | RankedRun | Any  # Any: a pandas DataFrame
QrelsLike = str | Path | Mapping[str, Mapping[str, int]] | Qrels | Any
MetricsLike = str | Measure | Iterable[str | Measure]

RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
_NUMBERS = (int, float, np.integer, np.floating)


def _show(value: object) -> str:
    return repr(value)[:80]


# --- plain arguments ---------------------------------------------------------------------------------------------

def check_whole(value: object, name: str, minimum: int = 1, maximum: float = math.inf) -> int:
    """`value` as an int, when it is a whole number (not a bool) in [minimum, maximum]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or \
            not minimum <= value <= maximum:
        bound = f"from {minimum}" + (f" to {maximum:,.0f}" if maximum != math.inf else "")
        raise InputFormatError(f"{name}={_show(value)}: expected a whole number {bound}")
    return int(value)


def check_flag(value: object, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InputFormatError(f"{name}={_show(value)}: expected True or False")
    return bool(value)


def check_text(value: object, name: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputFormatError(f"{name}={_show(value)}: expected a non-empty string")
    return value


def check_path(value: object, name: str) -> Path:
    if isinstance(value, Path):
        return value
    if not isinstance(value, str) or not value or "\0" in value:
        raise InputFormatError(f"{name}={_show(value)}: expected a path (a str or pathlib.Path)")
    return Path(value)


# --- ids -------------------------------------------------------------------------------------------------------------

def _is_whole_type(kind: type) -> bool:
    return issubclass(kind, (int, np.integer)) and not issubclass(kind, (bool, np.bool_))


def _id_kind(ids: Iterable[object], what: str, kinds: set[type] | None = None) -> type | None:
    """str or int: the one kind of `ids` (None when there are none); any other kind, or a mix, is an error.
    `kinds`: the ids' types when already known (`ids` is then read only to name the error)."""
    if kinds is None:
        ids = list(ids) if not isinstance(ids, (list, dict)) else ids
        kinds = set(map(type, ids))
    if not kinds or kinds == {str}:
        return str if kinds else None
    if all(map(_is_whole_type, kinds)):
        return int
    ids = list(ids) if not isinstance(ids, (list, dict)) else ids
    odds = [i for i in ids if not isinstance(i, str) and not _is_whole_type(type(i))][:1]
    if odds:
        odd = odds[0]
        hint = (" (a DataFrame column of ids turns to floats when it holds a NaN: drop those rows, then "
                ".astype(str))" if isinstance(odd, (float, np.floating)) else "")
        raise InputFormatError(f"{what} {_show(odd)} is a {type(odd).__name__}; ids are strings or whole "
                               f"numbers{hint}")
    text = next(i for i in ids if isinstance(i, str))
    number = next(i for i in ids if not isinstance(i, str))
    raise InputFormatError(f"{what}s mix strings and whole numbers ({text[:40]!r} and {number}); give them all as "
                           "strings (1 and '1' would be one id)")


def _same_kind(run_kind: type | None, judged_kind: type | None, what: str) -> None:
    if run_kind and judged_kind and run_kind is not judged_kind:
        name = {str: "strings", int: "whole numbers"}
        raise InputFormatError(f"the run's {what} ids are {name[run_kind]} and the judgments' are "
                               f"{name[judged_kind]}; give both as strings (an id read as a number has lost any "
                               "leading zeros, so they would not match)")


# --- judgments -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Judgments:
    """Checked judgments, and the kind of ids the user gave (str or int; None for a file's, which are text)."""

    qrels: Qrels
    query_kind: type | None = str
    doc_kind: type | None = str
    # the judgment set of a registered or declared dataset these are (evaluator.datasets.judgment_sets), when
    # named with judgments=
    judgment_set: Any = None


def _label(value: object, where: str) -> int:
    whole = None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        whole = int(value)
    elif isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        whole = int(value)
    if whole is None:
        raise InputFormatError(f"{where}: relevance {_show(value)} is not a whole number; labels are whole "
                               "numbers such as 0, 1, 2")
    if not MIN_LABEL <= whole <= MAX_LABEL:
        raise InputFormatError(f"{where}: relevance {whole:.4g} is outside [{MIN_LABEL}, {MAX_LABEL}]; fix the label")
    return whole


def _is_mapping(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # the common case without abc's check


def _judgments_from_mapping(qrels: Mapping) -> Judgments:
    if not qrels:
        raise InputFormatError("qrels: the judgments are empty; give {query_id: {doc_id: relevance}} with at least "
                               "one judged document")
    query_kind = _id_kind(qrels, "qrels: query id")
    doc_types: set[type] = set()
    labels: list[object] = []
    for query_id, judged in qrels.items():
        if not _is_mapping(judged):
            raise InputFormatError(f"qrels: query {_show(query_id)}: expected {{doc_id: relevance}}, found a "
                                   f"{type(judged).__name__}")
        if not judged:
            raise InputFormatError(f"qrels: query {_show(query_id)} has no judged document; drop it or judge one")
        doc_types.update(map(type, judged))
        labels.extend(judged.values())
    doc_kind = _id_kind((d for judged in qrels.values() for d in judged), "qrels: document id", doc_types)
    plain = set(map(type, labels)) == {int} and MIN_LABEL <= min(labels) and max(labels) <= MAX_LABEL
    if plain and query_kind is str and doc_kind is str:
        return Judgments(Qrels.from_dict(qrels), str, str)  # the common case, checked at C speed (it copies)
    converted = {}
    for query_id, judged in qrels.items():
        values = judged.values() if plain else [
            _label(value, f"qrels: query {_show(query_id)}, document {_show(doc_id)}")
            for doc_id, value in judged.items()]
        docs = judged if doc_kind is str else map(str, judged)
        converted[query_id if query_kind is str else str(query_id)] = dict(zip(docs, values, strict=True))
    return Judgments(Qrels.from_dict(converted), query_kind, doc_kind)


def to_judgments(qrels: QrelsLike) -> Judgments:
    if isinstance(qrels, Judgments):
        return qrels
    if isinstance(qrels, Qrels):
        if not qrels.query_ids:
            raise InputFormatError("qrels: the judgments are empty; give at least one judged document")
        return Judgments(qrels)
    if isinstance(qrels, (str, Path)):
        from evaluator.trec import read_qrels

        return Judgments(read_qrels(check_path(qrels, "qrels")), None, None)
    if _is_frame(qrels):
        return _judgments_from_mapping(_frame_dict(qrels, QRELS_COLUMNS, "qrels"))
    if isinstance(qrels, Mapping):
        return _judgments_from_mapping(qrels)
    raise InputFormatError(f"qrels: a {type(qrels).__name__} is not judgments; pass a path, a dict "
                           "{query_id: {doc_id: relevance}} or a DataFrame with query_id, doc_id, relevance")


def set_judgments(dataset: object, judgments: object) -> Judgments:
    """The judgment set `judgments` (its name, "official", or its sha256 or a 12-digit prefix of it) of the
    dataset id `dataset` (registered or declared), loaded and checked (docs/datasets.md, "Judgment sets")."""
    from evaluator.datasets import get_spec
    from evaluator.datasets.judgment_sets import find_set, load_qrels

    if not isinstance(dataset, str) or not dataset:
        raise InputFormatError(f"qrels={_show(dataset)}: with judgments=, qrels is the dataset id whose judgment set "
                               "is named, e.g. 'beir/webis-touche2020'")
    get_spec(dataset)  # an unknown id: UnknownNameError with the closest names
    found = find_set(dataset, check_text(judgments, "judgments"))
    return Judgments(load_qrels(found), None, None, found)


def to_qrels(qrels: QrelsLike) -> Qrels:
    return to_judgments(qrels).qrels


# --- DataFrames ------------------------------------------------------------------------------------------------------

def _is_frame(value: object) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "columns")


def _frame_dict(frame: Any, columns: tuple[str, str, str], what: str) -> dict[object, dict[object, object]]:
    """{query_id: {doc_id: value}} of a DataFrame's rows; a (query, document) pair in two rows is an error."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputFormatError(f"{what} DataFrame: missing column(s) {', '.join(missing)}; it needs "
                               f"{', '.join(columns)} (rename yours with DataFrame.rename)")
    query_ids, doc_ids, values = (frame[c].tolist() for c in columns)
    _id_kind(query_ids, f"{what} DataFrame: query id")  # before a NaN id (a float) is looked up in a dict
    _id_kind(doc_ids, f"{what} DataFrame: document id")
    nested: dict[object, dict[object, object]] = {}
    for label, query_id, doc_id, value in zip(frame.index, query_ids, doc_ids, values, strict=True):
        ranking = nested.setdefault(query_id, {})
        if doc_id in ranking:
            first = next(row for row, q, d in zip(frame.index, query_ids, doc_ids, strict=True)
                         if q == query_id and d == doc_id)
            raise InputFormatError(f"{what} DataFrame: rows {first!r} and {label!r} both give query "
                                   f"{_show(query_id)}, document {_show(doc_id)}; keep one (DataFrame."
                                   f"drop_duplicates(['{columns[0]}', '{columns[1]}']))")
        ranking[doc_id] = value
    return nested


# --- runs ------------------------------------------------------------------------------------------------------------

def _score_problem(value: object) -> str:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, _NUMBERS):
        return f"score {_show(value)} is not a number"
    try:
        number = float(value)
    except OverflowError:
        return f"score {_show(value)} {FLOAT32_PROBLEM}"
    if not math.isfinite(number):
        return f"score {_show(value)} is not finite; scores must be finite numbers"
    return f"score {_show(value)} {FLOAT32_PROBLEM}" if not abs(number) < FLOAT32_OVERFLOW else ""


def _refuse_score(run: Mapping) -> None:
    """Raise naming the first bad score of the run (looked for only after a whole-run check failed)."""
    for query_id, ranking in run.items():
        for doc_id, score in ranking.items():
            problem = _score_problem(score)
            if problem:
                raise InputFormatError(f"run: query {_show(query_id)}, document {_show(doc_id)}: {problem}")
    raise InputFormatError("run: a score is not a finite number within float32's range; check the scores")


def _ranked_from_mapping(run: Mapping, judgments: Judgments, ignore_identical_ids: bool) -> RankedRun:
    qrels = judgments.qrels
    if type(run) is dict and judgments.query_kind in (str, None) and judgments.doc_kind in (str, None):
        ranked = rank_plain_dict(run, qrels, ignore_identical_ids)  # str ids and plain scores, ranked in C
        if ranked is not None:
            return ranked
    if not run:
        raise InputFormatError("run: the run is empty; give {query_id: {doc_id: score}}")
    query_kind = _id_kind(run, "run: query id")
    _same_kind(query_kind, judgments.query_kind, "query")
    doc_types: set[type] = set()
    for query_id, ranking in run.items():
        if not _is_mapping(ranking):
            raise InputFormatError(f"run: query {_show(query_id)}: the ranking is a {type(ranking).__name__}; give "
                                   "{doc_id: score} (dict(pairs) makes one of (doc_id, score) pairs)")
        doc_types.update(map(type, ranking))
    doc_kind = _id_kind((d for ranking in run.values() for d in ranking), "run: document id", doc_types)
    _same_kind(doc_kind, judgments.doc_kind, "document")
    row_of = {q: i for i, q in enumerate(qrels.query_ids)}
    rows, counts, docs, scores, labels = [], [], [], [], []
    for query_id, ranking in run.items():
        key = query_id if query_kind is str else str(query_id)
        row = row_of.get(key)
        if row is None:
            continue
        names, values = (ranking, ranking.values()) if doc_kind is str else (list(map(str, ranking)), ranking.values())
        if ignore_identical_ids and key in names:  # the query's own id as a document: dropped
            kept = [(d, v) for d, v in zip(names, values, strict=True) if d != key]
            names, values = [d for d, _ in kept], [v for _, v in kept]
        judged = qrels.judgments[row]
        rows.append(row)
        counts.append(len(names))
        docs.extend(names)
        scores.extend(values)
        labels.extend(map(judged.get, names, repeat(UNJUDGED)))
    if not rows:
        first_run, first_judged = next(iter(run)), qrels.query_ids[0]
        raise InputFormatError(f"the run and the judgments share no query id (the run's first is "
                               f"{_show(first_run)}, the judgments' {first_judged[:80]!r}); check that they are for "
                               "the same dataset and split")
    score_kinds = set(map(type, scores))
    if not all(issubclass(kind, _NUMBERS) and not issubclass(kind, (bool, np.bool_)) for kind in score_kinds):
        _refuse_score(run)
    try:
        score_array = np.array(scores, dtype=np.float64)
    except OverflowError:  # an int beyond float64
        _refuse_score(run)
    if not (np.abs(score_array) < FLOAT32_OVERFLOW).all():  # NaN fails too
        _refuse_score(run)
    query_index = np.repeat(np.array(rows, dtype=np.int64), counts)
    matrix, lengths = rank_columns(query_index, docs, score_array, np.array(labels, dtype=np.int32),
                                   len(qrels.query_ids))
    return RankedRun(list(qrels.query_ids), matrix, lengths)


def to_ranked(run: RunLike, judgments: Judgments | QrelsLike, ignore_identical_ids: bool = False) -> RankedRun:
    judgments = to_judgments(judgments)
    if isinstance(run, RankedRun):
        if list(run.query_ids) != list(judgments.qrels.query_ids):
            raise InputFormatError("run: a RankedRun ranked against other judgments (its query ids differ); rank "
                                   "it against these, or pass the run itself")
        return run
    if isinstance(run, (str, Path)):  # any format `irboard evaluate --run` reads (detected)
        from evaluator.run_formats import read_run_file

        reading = read_run_file(check_path(run, "run"), judgments.qrels, ignore_identical_ids=ignore_identical_ids,
                                keep_top=0)
        return reading.ranking.ranked
    if _is_frame(run):
        run = _frame_dict(run, RUN_COLUMNS, "run")
    if isinstance(run, Mapping):
        return _ranked_from_mapping(run, judgments, ignore_identical_ids)
    raise InputFormatError(f"run: a {type(run).__name__} is not a run; pass a path, a dict "
                           "{query_id: {doc_id: score}} or a DataFrame with query_id, doc_id, score")


# --- metrics ---------------------------------------------------------------------------------------------------------

def to_measures(metrics: MetricsLike) -> list[Measure]:
    if isinstance(metrics, str):
        return parse_measures(metrics)
    if isinstance(metrics, Measure):
        return [metrics]
    items = list(metrics) if isinstance(metrics, (list, tuple)) else None
    if not items or not all(isinstance(m, (str, Measure)) for m in items):
        raise InputFormatError(f"metrics={_show(metrics)}: give a string such as 'nDCG@10,R@100', a Measure, or a "
                               "non-empty list of them")
    measures = [m if isinstance(m, Measure) else parse_measure(m) for m in items]
    return list(dict.fromkeys(measures))


def mean(values: np.ndarray) -> float:
    """A metric's mean over the judged queries, exactly as a result file records it."""
    return math.fsum(values.tolist()) / len(values) if len(values) else 0.0


def check_relevance_level(value: object, dataset: object = None) -> int:
    """`value` checked; None is the registered or declared dataset's own rule when `dataset` names one (TREC DL: 2),
    else 1."""
    if value is None:
        if isinstance(dataset, str) and dataset:
            from evaluator.datasets import get_spec

            return get_spec(dataset).relevance_level
        return 1
    return check_whole(value, "relevance_level", 1, MAX_LABEL)

