"""Shard bookkeeping for distributed evaluation, free of Ray: plan, checkpoints, exact merge, BM25 statistics.

The corpus is split into contiguous shards. Each finished shard is one checkpoint file, written through a
temporary file and renamed, so a file is either absent or whole and a rerun skips finished shards.
Per-shard top-k lists merge exactly: candidates sorted by score descending, then global document position
ascending, the tie order of the local indexes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from evaluator.index.cache import EncodingCache
from evaluator.models.analyzers import TermIndexer
from evaluator.models.bm25 import bm25_weights


def plan_shards(num_docs: int, num_shards: int, align: int = 1) -> list[tuple[int, int]]:
    """Contiguous [start, stop) ranges of near-equal size covering `num_docs` positions, starting at
    multiples of `align` (at most ceil(num_docs / align) shards)."""
    units = -(-num_docs // align)
    num_shards = max(1, min(num_shards, units))
    bounds = np.minimum(np.linspace(0, units, num_shards + 1).round().astype(int) * align, num_docs)
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


class ShardStore:
    """Checkpoint files of one run, `<root>/<key>/<phase>-<shard>.np[yz]`; the key includes the shard plan.
    `root` is a folder or a `pyarrow.fs` URI every node can reach (`evaluator.index.cache.open_location`)."""

    def __init__(self, root, key_parts: dict, filesystem=None):
        self.cache = EncodingCache(root, key_parts, filesystem)
        self.files, self.path = self.cache.files, self.cache.path
        self.files.make()

    def file(self, phase: str, shard: int) -> str | None:
        """The name of the shard's checkpoint, or None while it is not written."""
        return self.files.first_existing(f"{phase}-{shard:06d}")

    def write(self, phase: str, shard: int, matrix, extra: dict | None = None) -> None:
        if extra is not None:  # written first: the matrix file is the shard's "done" marker
            self.files.write(f"{phase}-{shard:06d}.json", json.dumps(extra).encode())
        self.files.write_matrix(f"{phase}-{shard:06d}", matrix)

    def read(self, phase: str, shard: int):
        name = self.file(phase, shard)
        if name is None:
            raise FileNotFoundError(f"{self.files.base}: shard {shard} of phase '{phase}' is missing")
        return self.files.read_matrix(name)

    def read_extra(self, phase: str, shard: int) -> dict:
        return json.loads(self.files.read_bytes(f"{phase}-{shard:06d}.json"))


def merge_topk(parts: list[tuple[np.ndarray, np.ndarray]], k: int, block: int = 256) -> tuple[np.ndarray, np.ndarray]:
    """Merge per-shard (scores (q, k_s), global positions (q, k_s), -1 = empty) into the exact top k,
    `block` queries at a time so that the scratch arrays stay small at top-1,000."""
    n_queries = parts[0][0].shape[0]
    width = min(k, sum(p[0].shape[1] for p in parts))
    scores = np.full((n_queries, k), -np.inf, np.float32)  # fewer candidates than k: padded like the sparse index
    positions = np.full((n_queries, k), -1, np.int64)
    for first in range(0, n_queries, block):
        rows = slice(first, first + block)
        block_scores = np.concatenate([p[0][rows] for p in parts], axis=1).astype(np.float32)
        block_positions = np.concatenate([p[1][rows] for p in parts], axis=1).astype(np.int64)
        empty = block_positions < 0
        block_scores[empty] = -np.inf
        sort_positions = np.where(empty, np.iinfo(np.int64).max, block_positions)
        order = np.lexsort((sort_positions, -block_scores.astype(np.float64)))[:, :width]
        scores[rows, :width] = np.take_along_axis(block_scores, order, 1)
        positions[rows, :width] = np.take_along_axis(block_positions, order, 1)
    return scores, positions


def reduce_as_ready(submit: Callable[[int], Any], count: int, merge: Callable[[Any, Any], Any],
                    wait: Callable[[list], tuple[list, list]], window: int) -> tuple[Any, int]:
    """Reduce `count` task results into one, merging them pairwise as they finish (a tree of merge tasks
    whose shape follows the finishing order), with at most `window` results alive at once: tasks running
    or finished and not yet merged. `submit(i)` starts task i, `merge(a, b)` a merge of two results, and
    `wait(running)` returns (finished ones, the rest). Returns (the last result, the most alive at once).
    The merge must be associative and commutative (an exact top-k merge is), so the order does not matter."""
    if count < 1 or window < 2:
        raise ValueError(f"reduce_as_ready: needs a task ({count}) and a window of at least 2 ({window})")
    todo, running, finished, peak = list(range(count - 1, -1, -1)), [], [], 0
    while todo or running or len(finished) > 1:
        while todo and len(running) + len(finished) < window:
            running.append(submit(todo.pop()))
        peak = max(peak, len(running) + len(finished))
        if len(finished) >= 2:
            running.append(merge(finished.pop(), finished.pop()))
            continue
        ready, running = wait(running)
        finished.extend(ready)
    return finished[0], peak


def shard_term_counts(analyzer, docs) -> tuple[sp.csr_matrix, list[str]]:
    """Term counts (docs x shard vocabulary, float32) and the shard's terms in order of first appearance."""
    vocabulary: dict[str, int] = {}
    indexer = TermIndexer(analyzer, vocabulary)
    rows, term_ids = [], []
    for row, (title, text) in enumerate(docs):
        ids = [i for i in indexer.ids(f"{title} {text}" if title else text) if i >= 0]
        rows.extend([row] * len(ids))
        term_ids.extend(ids)
    counts = sp.csr_matrix((np.ones(len(term_ids), np.float32), (rows, term_ids)),
                           shape=(len(docs), len(vocabulary)))
    counts.sum_duplicates()
    return counts, list(vocabulary)


def shard_statistics(counts: sp.csr_matrix, terms: list[str]) -> dict:
    """What the corpus-wide BM25 statistics need of one shard: its terms (shard column order), each term's
    document frequency in the shard, and the shard's total length in tokens (an exact integer)."""
    df = np.bincount(counts.indices, minlength=len(terms))
    return {"terms": terms, "df": df.tolist(), "length": int(counts.sum(dtype=np.float64))}


class GlobalVocabulary:
    """Term ids as the local engine assigns them: first appearance over the corpus in document order."""

    def __init__(self):
        self.ids: dict[str, int] = {}

    def add_shard(self, terms: list[str]) -> np.ndarray:
        """Global ids of a shard's terms; shards must be added in corpus order."""
        return np.array([self.ids.setdefault(t, len(self.ids)) for t in terms], dtype=np.int32)


def corpus_statistics(shards: Iterable[dict], num_docs: int) -> tuple[dict[str, int], list[np.ndarray], np.ndarray,
                                                                      float]:
    """The corpus-wide BM25 statistics from each shard's `shard_statistics`, given in corpus order: the
    vocabulary (term -> id, first appearance), each shard's global term ids, document frequencies, and the
    average length. Only these small vectors are added up; no shard's counts are needed."""
    vocabulary, global_ids, parts, total_length = GlobalVocabulary(), [], [], 0
    for stats in shards:
        global_ids.append(vocabulary.add_shard(stats["terms"]))
        parts.append(np.asarray(stats["df"], np.int64))
        total_length += int(stats["length"])
    df = np.zeros(len(vocabulary.ids), np.int64)
    for ids, part in zip(global_ids, parts, strict=True):
        df[ids] += part  # a shard's terms are distinct
    # an exact integer total divided once: the float64 mean of the local engine's (integer) lengths
    avg_length = total_length / num_docs if total_length > 0 else 1.0
    return vocabulary.ids, global_ids, df, avg_length


def remap_columns(counts: sp.csr_matrix, global_ids: np.ndarray, vocab_size: int) -> sp.csr_matrix:
    remapped = sp.csr_matrix((counts.data, global_ids[counts.indices], counts.indptr),
                             shape=(counts.shape[0], vocab_size))
    remapped.sort_indices()
    return remapped


def bm25_shard_weights(counts: sp.csr_matrix, doc_freqs: np.ndarray, num_docs: int, avg_length: float,
                       k1: float, b: float, lucene_norms: bool) -> sp.csr_matrix:
    """BM25 weights of one shard from corpus-wide statistics: bit-identical to weighting the whole corpus."""
    return bm25_weights(counts, k1, b, lucene_norms, corpus_stats=(doc_freqs, num_docs, avg_length))


def column_max(matrix: sp.csr_matrix) -> np.ndarray:
    """Largest weight per column (float32, 0 for empty columns)."""
    out = np.zeros(matrix.shape[1], np.float32)
    if matrix.nnz:
        np.maximum.at(out, matrix.indices, matrix.data.astype(np.float32))
    return out
