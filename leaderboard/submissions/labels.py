"""The labels of a stored ranking: every ranked entry's qrels label, and the label matrix that re-scoring reads."""

from __future__ import annotations

from bisect import bisect_left
from itertools import repeat
from operator import eq

import numpy as np

from evaluator.metrics import Qrels, RankedRun
from evaluator.metrics.ranking import PAD, UNJUDGED
from evaluator.result import ResultFile


def entry_labels(result: ResultFile, qrels: Qrels) -> np.ndarray:
    """The qrels label of every stored ranking entry (aligned with `run.docs`; UNJUDGED where not judged), the
    query's own id included. Vectorised: each judged (query, document) is looked up once in the run's sorted
    doc-id table, and every ranked entry then finds its label by one sorted search."""
    run, n = result.run, len(result.query_ids)
    size = len(run.doc_ids)
    qrels_rows, names, judged_labels = flat_judgments(qrels)
    if tuple(qrels.query_ids) == result.query_ids:
        rows_of_judged = qrels_rows
    else:
        row_of = {query_id: i for i, query_id in enumerate(result.query_ids)}
        rows_of_judged = np.array([row_of.get(query_id, -1) for query_id in qrels.query_ids],
                                  dtype=np.int64)[qrels_rows]
    # position of each judged document in the sorted table, and whether it is there at all (all in C)
    at = np.fromiter(map(bisect_left, repeat(run.doc_ids), names), dtype=np.int64, count=len(names))
    clipped = np.minimum(at, max(size - 1, 0)).tolist()
    there = np.fromiter(map(eq, map(run.doc_ids.__getitem__, clipped), names), dtype=bool, count=len(names)) \
        if size else np.zeros(len(names), dtype=bool)
    there &= rows_of_judged >= 0
    keys = rows_of_judged[there] * size + at[there]
    order = np.argsort(keys)
    keys, labels = keys[order], judged_labels[there][order]
    rows = np.repeat(np.arange(n, dtype=np.int64), run.lengths)
    found_labels = np.full(rows.size, UNJUDGED, dtype=np.int32)
    if keys.size:
        judged_anywhere = np.zeros(size, dtype=bool)
        judged_anywhere[at[there]] = True
        candidates = np.flatnonzero(judged_anywhere[run.docs])  # few: search only these
        entries = rows[candidates] * size + run.docs[candidates]
        found = np.minimum(np.searchsorted(keys, entries), keys.size - 1)
        hit = keys[found] == entries
        found_labels[candidates[hit]] = labels[found[hit]]
    return found_labels


def ranked_from_result(result: ResultFile, qrels: Qrels, labels: np.ndarray | None = None) -> RankedRun:
    """The label matrix of the stored ranking, in its stored order (dropping the query's own id when the
    settings ignore identical ids); `labels`: `entry_labels(result, qrels)`, when the caller has them. With
    `run.below`, the judged entries below the depth sit at their ranks, the positions between them hold unjudged
    documents and each ranking has its whole length."""
    run, n = result.run, len(result.query_ids)
    if labels is None:
        labels = entry_labels(result, qrels)
    rows = np.repeat(np.arange(n, dtype=np.int64), run.lengths)
    positions = np.arange(rows.size) - np.repeat(run.offsets[:-1], run.lengths)  # 0-based ranks
    own = None
    if result.settings.ignore_identical_ids:
        own = run.docs == np.array([_table_index(run.doc_ids, q) for q in result.query_ids], dtype=np.int64)[rows]
    lengths = run.lengths.astype(np.int64)
    if run.below is not None:
        below = run.below
        below_rows = np.repeat(np.arange(n, dtype=np.int64), below.counts)
        judged = dict(zip(qrels.query_ids, qrels.judgments, strict=True))
        below_labels = np.fromiter((judged.get(result.query_ids[row], {}).get(doc, UNJUDGED) for row, doc in
                                    zip(below_rows.tolist(), below.doc_ids, strict=True)), np.int32, below_rows.size)
        rows, positions = np.concatenate((rows, below_rows)), np.concatenate((positions, below.ranks - 1))
        labels = np.concatenate((labels, below_labels))
        if own is not None:
            own = np.concatenate((own, np.array([doc == result.query_ids[row] for row, doc in
                                                 zip(below_rows.tolist(), below.doc_ids, strict=True)], dtype=bool)))
        lengths = below.totals.astype(np.int64)
    if own is not None and own.any():  # every later entry of the query moves up one place
        span = int(positions.max()) + 1
        dropped = np.sort(rows[own] * span + positions[own])
        keys = rows * span + positions
        positions = positions - (np.searchsorted(dropped, keys) - np.searchsorted(dropped, rows * span))
        lengths = lengths - np.bincount(rows[own], minlength=n)
        rows, positions, labels = rows[~own], positions[~own], labels[~own]
    depth = max(int(positions.max(initial=-1)) + 1, 1)
    matrix = np.full((n, depth), PAD, dtype=np.int32)
    matrix[np.arange(depth) < np.minimum(lengths, depth)[:, None]] = UNJUDGED  # ranked, not stored: unjudged
    matrix[rows, positions] = labels
    return RankedRun(list(result.query_ids), matrix, lengths)


def _table_index(table: tuple[str, ...], name: str) -> int:
    """Where `name` is in the sorted tuple `table`, or -1."""
    at = bisect_left(table, name)
    return at if at < len(table) and table[at] == name else -1


_PER_QRELS: dict[tuple[int, object], tuple] = {}  # (id(qrels), what) -> (qrels, value)


def per_qrels(qrels: Qrels, what: object, make):
    """`make()`, once per qrels object (a build re-scores about 1,000 results against each)."""
    held = _PER_QRELS.get((id(qrels), what))
    if held is None or held[0] is not qrels:
        if len(_PER_QRELS) >= 256:
            _PER_QRELS.clear()
        held = _PER_QRELS[(id(qrels), what)] = (qrels, make())
    return held[1]


def flat_judgments(qrels: Qrels) -> tuple[np.ndarray, list[str], np.ndarray]:
    """Every judgment flattened: (qrels row, doc id, label), in query order."""
    def flatten():
        counts = [len(judged) for judged in qrels.judgments]
        names = [name for judged in qrels.judgments for name in judged]
        labels = np.fromiter((label for judged in qrels.judgments for label in judged.values()), dtype=np.int32,
                             count=len(names))
        return np.repeat(np.arange(len(counts), dtype=np.int64), counts), names, labels

    return per_qrels(qrels, "judged", flatten)
