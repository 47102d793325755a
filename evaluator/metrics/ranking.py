"""Runs and qrels as arrays: the ranked label matrix every metric is computed from.

trec_eval order: score descending, scores compared as float32, ties broken by doc id descending in byte order.
Every qrels query gets a row (an empty ranking when the run lacks it); run queries without qrels are dropped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from evaluator import _trec

UNJUDGED = -1_000_000  # label of a retrieved document that is not in the qrels
PAD = -2_000_000  # label of a position past the end of a ranking
MIN_LABEL, MAX_LABEL = -1000, 1000  # qrels labels outside this range are refused as input errors

FLOAT32_OVERFLOW = 2.0**128 - 2.0**103  # the smallest magnitude float32 rounds to infinity (half an ulp past its max)
FLOAT32_PROBLEM = ("is beyond float32's range (about 3.4e38), where trec_eval compares scores: it would tie as "
                   "infinity; rescale the run's scores")


def float32_overflows(value: float) -> bool:
    """Whether a finite score becomes an infinity in float32, the precision trec_eval orders by."""
    return not abs(value) < FLOAT32_OVERFLOW  # NaN too


@dataclass(frozen=True)
class Qrels:
    """Judgments in arrays, one row per query; `query_ids` sorted in byte order so outputs are deterministic."""

    query_ids: list[str]
    judgments: list[dict[str, int]]  # per query: doc_id -> label
    _digest: list[str] = field(default_factory=list, init=False, repr=False, compare=False)  # sha256(), once

    @classmethod
    def from_dict(cls, qrels: Mapping[str, Mapping[str, int]]) -> Qrels:
        query_ids = sorted(qrels, key=lambda q: q.encode("utf-8"))
        return cls(query_ids, [dict(qrels[q]) for q in query_ids])

    def sha256(self) -> str:
        """A fingerprint of the judgments, independent of file format and line order: the sha256 of the UTF-8
        lines f"{query_id}\t{doc_id}\t{label}\n", queries in order, each one's doc ids sorted (the C extension
        writes them three times as fast as Python)."""
        if not self._digest:
            lines = _trec.judgment_lines(list(self.query_ids), list(self.judgments))
            self._digest.append(hashlib.sha256(lines).hexdigest())
        return self._digest[0]

    def to_dict(self) -> dict[str, dict[str, int]]:
        return dict(zip(self.query_ids, self.judgments, strict=True))

    def label_stats(self, relevance_level: int) -> QrelsStats:
        """Per-query counts and ideal gains, the qrels side of every metric."""
        n = len(self.query_ids)
        counts = np.fromiter(map(len, self.judgments), dtype=np.int64, count=n)
        labels = np.fromiter(chain.from_iterable(j.values() for j in self.judgments), dtype=np.int64,
                             count=int(counts.sum()))
        rows = np.repeat(np.arange(n), counts)
        n_relevant = np.bincount(rows[labels >= relevance_level], minlength=n).astype(np.int64)
        n_nonrelevant = np.bincount(rows[(labels >= 0) & (labels < relevance_level)], minlength=n).astype(np.int64)
        # the ideal ranking: each query's positive labels in descending order, left-aligned in its row
        positive = labels > 0
        rows, labels = rows[positive], labels[positive]
        order = np.lexsort((-labels, rows))
        rows, labels = rows[order], labels[order]
        per_row = np.bincount(rows, minlength=n)
        ideal = np.zeros((n, max(int(per_row.max(initial=0)), 1)), dtype=np.int64)
        ideal[rows, np.arange(rows.size) - np.repeat(np.cumsum(per_row) - per_row, per_row)] = labels
        return QrelsStats(ideal, n_relevant, n_nonrelevant)


@dataclass(frozen=True)
class QrelsStats:
    ideal_labels: np.ndarray  # (queries, width) positive labels sorted descending, 0-padded
    n_relevant: np.ndarray  # (queries,) labels >= relevance_level
    n_nonrelevant: np.ndarray  # (queries,) judged labels in [0, relevance_level): Bpref's denominator side


@dataclass(frozen=True)
class RankedRun:
    """`labels[i, j]` is the qrels label of query i's document at rank j+1 (UNJUDGED, or PAD past the end)."""

    query_ids: list[str]
    labels: np.ndarray  # (queries, depth) int32
    lengths: np.ndarray  # (queries,) number of ranked documents

    @property
    def depth(self) -> int:
        return self.labels.shape[1]

    def condensed(self) -> RankedRun:
        """The condensed lists of trec_eval -J (pytrec_eval's judged_docs_only_flag): each ranking with its
        unjudged documents removed, the judged ones moved up in their order. As in trec_eval, a document with a
        negative label goes too (it reads every label below 0 as not judged)."""
        kept = self.labels >= 0
        order = np.argsort(~kept, axis=1, kind="stable")  # kept columns first, in rank order
        labels = np.take_along_axis(self.labels, order, axis=1)
        judged = kept.sum(axis=1)
        labels = np.where(np.arange(labels.shape[1])[None, :] < judged[:, None], labels, PAD).astype(np.int32)
        return RankedRun(self.query_ids, labels, judged.astype(np.int64))


def byte_order_keys(doc_ids: np.ndarray) -> np.ndarray:
    """Integer keys that sort like the doc ids' UTF-8 bytes (C strcmp), for tie-breaking."""
    encoded = np.array([d.encode("utf-8", "surrogatepass") for d in doc_ids], dtype=object)
    order = np.argsort(encoded, kind="stable")
    keys = np.empty(len(doc_ids), dtype=np.int64)
    keys[order] = np.arange(len(doc_ids))
    return keys


def rank_arrays(
    query_index: np.ndarray,
    doc_keys: np.ndarray,
    scores: np.ndarray,
    labels: np.ndarray,
    n_queries: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort rows into trec_eval order and scatter their labels into a (queries, depth) matrix.

    `doc_keys` sort like the doc ids in byte order; returns (label matrix, lengths, row order).
    """
    score32 = np.asarray(scores, dtype=np.float32)
    order = np.lexsort((-doc_keys, -score32.astype(np.float64), query_index))
    matrix, lengths = _scatter(order, query_index, labels, n_queries)
    return matrix, lengths, order


def _scatter(order: np.ndarray, query_index: np.ndarray, labels: np.ndarray,
             n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """The labels in `order` (grouped by query, ranked) as a (queries, depth) matrix, and the lengths."""
    sorted_queries = query_index[order]
    lengths = np.bincount(sorted_queries, minlength=n_queries)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    positions = np.arange(len(order)) - starts[sorted_queries]
    depth = int(lengths.max(initial=0))
    matrix = np.full((n_queries, max(depth, 1)), PAD, dtype=np.int32)
    matrix[sorted_queries, positions] = labels[order]
    return matrix, lengths


def rank_columns(query_index: np.ndarray, doc_ids: Sequence[str], scores: np.ndarray, labels: np.ndarray,
                 n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """`rank_arrays` for doc ids as strings, in one sort of 64-bit keys (query, float32 score descending).
    Within a tie, trec_eval orders by doc id; that order is worked out only for the ties whose labels differ
    (most tie only unjudged documents, whose order leaves the label matrix as it is). Returns (label matrix,
    lengths). Scores must be finite."""
    negated = -np.asarray(scores, dtype=np.float32) + np.float32(0.0)  # + 0: -0.0 and 0.0 tie, as in trec_eval
    bits = negated.view(np.uint32)
    ascending = np.where(bits >> 31, ~bits, bits | np.uint32(1 << 31))  # unsigned order = float order
    key = (query_index.astype(np.uint64) << np.uint64(32)) | ascending.astype(np.uint64)
    order = np.argsort(key)
    ranked_keys = key[order]
    starts = np.concatenate(([True], ranked_keys[1:] != ranked_keys[:-1])) if len(order) else np.ones(0, bool)
    if len(order) and not starts.all():  # ties, each contiguous in `order`
        first = np.flatnonzero(starts)
        ranked_labels = labels[order]
        mixed = np.minimum.reduceat(ranked_labels, first) != np.maximum.reduceat(ranked_labels, first)
        tied = mixed[np.cumsum(starts) - 1]
    if len(order) and not starts.all() and tied.any():  # those ties by doc id, descending
        entries = order[tied]
        names = [doc_ids[i] for i in entries.tolist()]
        within = np.lexsort((-_text_order(names), ranked_keys[tied]))
        order[tied] = entries[within]
    return _scatter(order, query_index, labels, n_queries)


def _text_order(names: list[str]) -> np.ndarray:
    """Integer keys that sort like the strings' UTF-8 bytes: numpy's fixed-width text compares code points,
    which is the same order, unless a string ends in NUL (dropped by that width) or is long (wasted memory)."""
    widths = np.fromiter(map(len, names), dtype=np.int64, count=len(names))
    if len(names) and widths.max() <= 64:
        text = np.array(names, dtype=str)
        if np.array_equal(np.char.str_len(text), widths):
            keys = np.empty(len(names), dtype=np.int64)
            keys[np.argsort(text, kind="stable")] = np.arange(len(names))
            return keys
    return byte_order_keys(np.array(names, dtype=object))


def rank_plain_dict(run: dict, qrels: Qrels, ignore_identical_ids: bool = False) -> RankedRun | None:
    """`rank_run` at C speed for the common case: a dict of dicts with str ids, the judged queries' scores floats or
    ints, finite within float32's range, and a query in common with the qrels. None for anything else (the
    caller's general path converts it or says what is wrong)."""
    ranked = _trec.rank_dict(run, list(qrels.query_ids), list(qrels.judgments), ignore_identical_ids)
    if ranked is None:
        return None
    labels, lengths, depth = ranked
    return RankedRun(list(qrels.query_ids), np.frombuffer(labels, dtype=np.int32).reshape(-1, depth),
                     np.frombuffer(lengths, dtype=np.int64))


def rank_run(
    run: Mapping[str, Mapping[str, float]],
    qrels: Qrels | Mapping[str, Mapping[str, int]],
    ignore_identical_ids: bool = False,
) -> RankedRun:
    """Rank a run given as {query_id: {doc_id: score}} (the general, dict-based path)."""
    if not isinstance(qrels, Qrels):
        qrels = Qrels.from_dict(qrels)
    row_of = {q: i for i, q in enumerate(qrels.query_ids)}
    query_index, doc_ids, scores, labels = [], [], [], []
    for query_id, ranking in run.items():
        row = row_of.get(query_id)
        if row is None:
            continue
        judged = qrels.judgments[row]
        for doc_id, score in ranking.items():
            if ignore_identical_ids and doc_id == query_id:
                continue
            query_index.append(row)
            doc_ids.append(doc_id)
            scores.append(score)
            labels.append(judged.get(doc_id, UNJUDGED))
    doc_array = np.array(doc_ids, dtype=object)
    matrix, lengths, _ = rank_arrays(
        np.array(query_index, dtype=np.int64),
        byte_order_keys(doc_array),
        np.array(scores, dtype=np.float64),
        np.array(labels, dtype=np.int32),
        len(qrels.query_ids),
    )
    return RankedRun(qrels.query_ids, matrix, lengths)
