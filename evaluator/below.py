"""What a result keeps of its rankings below the stored depth: enough to re-score every metric, at any cutoff.

A result stores each query's ranking in full to `run.depth` (100: what a pooled re-judgment reads). Below it,
every trec_eval measure depends only on where the *judged* documents lie and on how long the ranking is: an
unjudged document counts as non-relevant (and not as judged non-relevant) wherever it sits. So `run.below`
keeps, per query, the whole ranking's length (`totals`) and the rank, id and score of every judged document
below the depth; that re-scores AP, RR, Rprec, Bpref, R@1000, nDCG@1000, Judged@1000, ... exactly, in a few
bytes a query instead of the whole ranking (docs/result-format.md). Judged means "in the qrels of its query",
whatever the label (negative labels count as judged, as in trec_eval).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from operator import eq

import numpy as np
from pydantic import BaseModel, ConfigDict

from evaluator.columns import decode_array, decode_strings, encode_array, encode_strings
from evaluator.errors import ResultValidationError

# A ranking may claim at most this many documents (the cap on stored entries a query, MAX_RUN_ENTRIES_PER_QUERY):
# re-scoring builds a (queries x longest ranking) label matrix, which a file must not be able to blow up.
MAX_RANKED = 10_000
MAX_ID_BYTES = 4 * 500 + 1  # an id of at most 500 characters (evaluator.result.MAX_TEXT_ID_CHARS) and a newline


class BelowColumns(BaseModel):
    """`run.below` as stored: `totals` and `counts` per query (uint32), then per judged entry below the depth its
    1-based `ranks` (uint32), `doc_ids` (text) and `scores` (float64), queries in per_query order."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    totals: str
    counts: str
    ranks: str
    doc_ids: str
    scores: str


@dataclass(frozen=True, eq=False)
class Below:
    """The rankings below a Run's depth: each query's whole length and its judged entries there."""

    totals: np.ndarray  # int64 (queries,): documents ranked in all
    counts: np.ndarray  # int64 (queries,): judged entries below the depth
    ranks: np.ndarray  # int64, 1-based, increasing within a query, all beyond the depth
    doc_ids: tuple[str, ...]  # aligned with ranks
    scores: np.ndarray  # float64, aligned with ranks

    @classmethod
    def from_entries(cls, totals: Sequence[int], entries: Sequence[Sequence[tuple[int, str, float]]]) -> Below:
        """From each query's total and its [(rank, doc_id, score), ...] in rank order."""
        flat = [entry for query in entries for entry in query]
        return cls(np.asarray(totals, dtype=np.int64), np.fromiter(map(len, entries), np.int64, len(entries)),
                   np.array([rank for rank, _, _ in flat], dtype=np.int64), tuple(doc for _, doc, _ in flat),
                   np.array([score for _, _, score in flat], dtype=np.float64))

    @cached_property
    def offsets(self) -> np.ndarray:
        """Where each query's entries start (and, last, where the final one's end)."""
        return np.concatenate(([0], np.cumsum(self.counts)))

    def entries(self, row: int) -> list[tuple[int, str, float]]:
        """Query `row`'s judged entries below the depth as [(rank, doc_id, score), ...]."""
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        return [(int(r), self.doc_ids[i], float(self.scores[i])) for i, r in zip(range(start, end),
                                                                                 self.ranks[start:end], strict=True)]


def encode_below(below: Below) -> dict[str, str]:
    return {"totals": encode_array(below.totals, "<u4"), "counts": encode_array(below.counts, "<u4"),
            "ranks": encode_array(below.ranks, "<u4"), "doc_ids": encode_strings(below.doc_ids),
            "scores": encode_array(below.scores, "<f8")}


def decode_below(columns: BelowColumns, num_queries: int, where: str) -> Below:
    """Decode `run.below`, refusing counts that would make it larger than MAX_RANKED entries a query."""
    totals = decode_array(columns.totals, "<u4", num_queries, f"{where}.totals").astype(np.int64)
    counts = decode_array(columns.counts, "<u4", num_queries, f"{where}.counts").astype(np.int64)
    if totals.size and int(totals.max()) > MAX_RANKED:
        raise ResultValidationError(f"{where}.totals: a ranking of {int(totals.max())} documents, over the cap of "
                                    f"{MAX_RANKED}; evaluate a run of at most {MAX_RANKED} documents a query")
    if (counts > totals).any():
        raise ResultValidationError(f"{where}.counts: more judged entries than ranked documents; re-create the "
                                    "result with irboard evaluate")
    total = int(counts.sum())
    ranks = decode_array(columns.ranks, "<u4", total, f"{where}.ranks").astype(np.int64)
    doc_ids = decode_strings(columns.doc_ids, total * MAX_ID_BYTES, f"{where}.doc_ids")
    if len(doc_ids) != total:
        raise ResultValidationError(f"{where}.doc_ids: holds {len(doc_ids)} ids, counts say {total}; re-create the "
                                    "result with irboard evaluate")
    scores = decode_array(columns.scores, "<f8", total, f"{where}.scores")
    return Below(totals, counts, ranks, tuple(doc_ids), scores)


def check_below(below: Below, lengths: np.ndarray, depth: int, last_top: tuple[np.ndarray, list[str]],
                query_ids: Sequence[str], in_top: np.ndarray) -> None:
    """The invariants of `run.below` against the stored ranking; ValueError naming the field and the problem.

    `lengths`: the stored ranking's lengths; `last_top`: per entry of `below`, the float32 score (inf for an
    empty ranking) and the doc id of its query's last stored entry; `in_top`: per entry, whether its query's
    stored ranking holds that document too."""
    n, where = len(query_ids), "run.below"
    if below.totals.shape != (n,) or below.counts.shape != (n,) or int(below.counts.sum()) != below.ranks.size \
            or below.ranks.size != len(below.doc_ids) or below.scores.shape != below.ranks.shape:
        raise ValueError(f"{where}: totals and counts need one value a query, counts summing to the entries")
    if (below.totals > MAX_RANKED).any() or (below.counts < 0).any() or (below.totals < lengths).any():
        raise ValueError(f"{where}.totals: every ranking holds at least its stored entries and at most {MAX_RANKED}")
    short = lengths < depth  # a ranking stored shorter than the depth is whole
    if (below.totals[short] != lengths[short]).any():
        i = int(np.flatnonzero(short & (below.totals != lengths))[0])
        raise ValueError(f"{where}.totals: query {query_ids[i]!r} has {lengths[i]} stored entries, fewer than depth "
                         f"{depth}, so its ranking is whole, but totals says {below.totals[i]}")
    if not np.isfinite(below.scores).all():
        raise ValueError(f"{where}.scores must all be finite")
    if not below.ranks.size:
        return
    rows = np.repeat(np.arange(n), below.counts)
    outside = (below.ranks <= depth) | (below.ranks > below.totals[rows])
    if outside.any():
        i = int(rows[np.flatnonzero(outside)[0]])
        raise ValueError(f"{where}.ranks: query {query_ids[i]!r} has a rank outside (depth {depth}, its total "
                         f"{below.totals[i]}]")
    first = np.ones(rows.size, dtype=bool)
    first[1:] = rows[1:] != rows[:-1]
    if (~first[1:] & (below.ranks[1:] <= below.ranks[:-1])).any():
        i = int(rows[1:][~first[1:] & (below.ranks[1:] <= below.ranks[:-1])][0])
        raise ValueError(f"{where}.ranks: the ranks of query {query_ids[i]!r} do not increase")
    repeated = in_top.copy()
    pairs = list(zip(rows.tolist(), below.doc_ids, strict=True))
    if len(set(pairs)) != len(pairs):
        seen: set[tuple[int, str]] = set()
        repeated |= np.fromiter((pair in seen or seen.add(pair) for pair in pairs), dtype=bool, count=len(pairs))
    if repeated.any():
        k = int(np.flatnonzero(repeated)[0])
        raise ValueError(f"{where}: document {below.doc_ids[k][:80]!r} appears twice in the ranking of query "
                         f"{query_ids[rows[k]]!r}")
    # trec_eval order down the ranking: after the last stored entry, and among themselves, scores (as float32) do
    # not increase, and equal scores have decreasing doc ids (compared one by one for the ties only)
    score32 = below.scores.astype(np.float32)
    previous = np.where(first, last_top[0], np.concatenate(([np.inf], score32[:-1])).astype(np.float32))
    wrong = score32 > previous
    for k in np.flatnonzero(score32 == previous).tolist():
        wrong[k] = below.doc_ids[k] >= (last_top[1][k] if first[k] else below.doc_ids[k - 1])
    if wrong.any():
        row = int(rows[np.flatnonzero(wrong)[0]])
        raise ValueError(f"{where}: the ranking of query {query_ids[row]!r} is not in trec_eval order below "
                         "the depth (score descending, ties by doc id descending)")


def check_run_below(run, query_ids: Sequence[str], check_ids: Callable[[Sequence[str], str], None]) -> None:
    """`run.below` of a Run (when it has one) against its stored ranking: each entry after the query's last stored
    one, never one of them (`check_ids(ids, where)`: the result's check of document ids)."""
    below = run.below
    if below is None:
        return
    check_ids(below.doc_ids, "run.below.doc_ids")
    n = len(query_ids)
    if below.counts.shape != (n,) or int(below.counts.sum()) != len(below.doc_ids):
        raise ValueError("run.below: counts need one value a query, summing to the entries")
    rows = np.repeat(np.arange(n), below.counts)
    ends = np.maximum(run.offsets[1:] - 1, 0)[rows]  # each entry's query's last stored entry
    stored = run.lengths[rows] > 0
    last_scores = np.where(stored, run.scores[ends] if run.scores.size else 0.0, np.inf).astype(np.float32)
    last_docs = [run.doc_ids[d] for d in run.docs[ends].tolist()] if run.docs.size else [""] * rows.size
    in_top = np.zeros(rows.size, dtype=bool)
    if rows.size and run.docs.size:
        # each below id's place in the sorted doc-id table (bisect in C), then whether its query's ranking has it
        size = len(run.doc_ids)
        at = np.fromiter(map(bisect_left, repeat(run.doc_ids), below.doc_ids), dtype=np.int64, count=rows.size)
        at = np.minimum(at, size - 1)
        known = np.fromiter(map(eq, map(run.doc_ids.__getitem__, at.tolist()), below.doc_ids), bool, rows.size)
        top_keys = np.sort(np.repeat(np.arange(n), run.lengths) * size + run.docs)
        keys = rows * size + at
        in_top = known & (top_keys[np.minimum(np.searchsorted(top_keys, keys), top_keys.size - 1)] == keys)
    check_below(below, run.lengths, run.depth, (last_scores, last_docs), query_ids, in_top)


def below_from_expanded(block: object, query_ids: Sequence[str], lengths: np.ndarray, source: str) -> Below:
    """`run.below` of the expanded form: {"totals": {query_id: int}, "judged": {query_id: [[rank, doc_id,
    score], ...]}} (a query left out of totals has the stored length, one left out of judged none)."""
    shape = (f"{source}: run.below: expected {{'totals': {{query_id: int}}, 'judged': {{query_id: [[rank, doc_id, "
             "score], ...]}}}}")
    if not isinstance(block, dict) or set(block) != {"totals", "judged"} or not isinstance(block["totals"], dict) \
            or not isinstance(block["judged"], dict):
        raise ResultValidationError(shape)
    known = set(query_ids)
    for key in (*block["totals"], *block["judged"]):
        if key not in known:
            raise ResultValidationError(f"{source}: run.below: query {key!r} is not among the per_query queries")
    if not all(type(v) is int and 0 <= v <= MAX_RANKED for v in block["totals"].values()):
        raise ResultValidationError(shape)
    entries = []
    for query_id in query_ids:
        judged = block["judged"].get(query_id, [])
        if not isinstance(judged, list) or not all(
                isinstance(e, list) and len(e) == 3 and type(e[0]) is int and 0 < e[0] <= MAX_RANKED
                and isinstance(e[1], str) and type(e[2]) in (float, int) for e in judged):
            raise ResultValidationError(shape)
        entries.append([(e[0], e[1], float(e[2])) for e in judged])
    totals = [block["totals"].get(q, int(length)) for q, length in zip(query_ids, lengths.tolist(), strict=True)]
    return Below.from_entries(totals, entries)


def expand_below(below: Below, query_ids: Sequence[str]) -> dict:
    """The expanded form of `run.below` (see below_from_expanded)."""
    return {"totals": dict(zip(query_ids, below.totals.tolist(), strict=True)),
            "judged": {q: [list(e) for e in below.entries(i)] for i, q in enumerate(query_ids) if below.counts[i]}}


def judged_below(run, judgments: Sequence[Mapping[str, int]], depth: int) -> Below:
    """`run.below` of a Run stored whole (rows aligned with `judgments`, each query's qrels): each ranking's length
    and its judged entries ranked below `depth`, what a result keeps when its whole ranking does not fit."""
    n, size = len(run.lengths), len(run.doc_ids)
    keys = []  # (row, place in the doc-id table) of every judged document the run ranks somewhere
    for row, judged in enumerate(judgments):
        for doc in judged:
            at = bisect_left(run.doc_ids, doc)
            if at < size and run.doc_ids[at] == doc:
                keys.append(row * size + at)
    keys = np.sort(np.asarray(keys, dtype=np.int64))
    rows = np.repeat(np.arange(n, dtype=np.int64), run.lengths)
    rank = np.arange(rows.size, dtype=np.int64) - np.repeat(run.offsets[:-1], run.lengths)  # 0-based
    entry_keys = rows * size + run.docs
    found = keys[np.minimum(np.searchsorted(keys, entry_keys), max(keys.size - 1, 0))] == entry_keys if keys.size \
        else np.zeros(rows.size, dtype=bool)
    pick = np.flatnonzero(found & (rank >= depth))
    return Below(np.asarray(run.lengths, dtype=np.int64).copy(), np.bincount(rows[pick], minlength=n).astype(np.int64),
                 rank[pick] + 1, tuple(run.doc_ids[d] for d in run.docs[pick].tolist()),
                 np.asarray(run.scores[pick], dtype=np.float64))
