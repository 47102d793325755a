"""Exact dense search: blocked matrix multiply plus a running top-k, with a bf16 path and an optional faiss one.

Ranking order everywhere: score descending, then document index ascending. The numpy paths apply it
exactly, ties at the k-th place included; the faiss path sorts faiss's top-k the same way, but which of
several documents tied at the k-th place faiss keeps is faiss's choice.

Parallelism has one level: the matrix multiply (BLAS for float32, torch for bfloat16, faiss's OpenMP for
faiss) runs on `threads` threads; candidate selection and merging run on the calling thread.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

import numpy as np
from tqdm import tqdm

from evaluator.environment import cores
from evaluator.errors import IrboardError, UnknownNameError

logger = logging.getLogger(__name__)

DTYPES = ("float32", "bfloat16")
BACKENDS = ("numpy", "faiss")
DEFAULT_BLOCK_SIZE = 4096  # documents per block
QUERY_BLOCK_SIZE = 1024  # queries per block: a (1024, 4096) float32 score block (16 MiB) stays in L3 cache


class DenseIndex:
    """Exact inner-product search over `embeddings` (N, d) float32.

    dtype="bfloat16" scores in bf16 (torch matmul), keeps `candidates_factor * k` candidates per query
    and re-scores them in float32, so the returned scores are exact and the top-k is exact up to bf16
    rounding near the k-th place. backend="faiss" uses faiss.IndexFlatIP (extra `irboard[faiss]`).
    `threads`: threads for the matrix multiply (None: all cores).
    """

    def __init__(
        self,
        embeddings: np.ndarray,
        dtype: str = "float32",
        backend: str = "numpy",
        threads: int | None = None,
        candidates_factor: float = 2.0,
    ):
        if dtype not in DTYPES:
            raise UnknownNameError(f"dense index: unknown dtype '{dtype}'; valid: {', '.join(DTYPES)}")
        if backend not in BACKENDS:
            raise UnknownNameError(f"dense index: unknown backend '{backend}'; valid: {', '.join(BACKENDS)}")
        if backend == "faiss" and dtype != "float32":
            raise UnknownNameError("dense index: backend 'faiss' supports dtype 'float32' only")
        embeddings = np.ascontiguousarray(embeddings, dtype=np.float32)
        if embeddings.ndim != 2:
            raise ValueError(f"embeddings must be a 2-d array, got shape {embeddings.shape}")
        if not np.isfinite(embeddings).all():
            raise ValueError("embeddings contain NaN or infinite values")
        self.embeddings = embeddings
        self.dtype = dtype
        self.backend = backend
        self.threads = threads
        self.candidates_factor = candidates_factor
        self._bf16 = _to_bf16(embeddings) if dtype == "bfloat16" else None
        self._faiss = _faiss_index(embeddings) if backend == "faiss" else None
        self._largest_norm: float | None = None

    def __len__(self) -> int:
        return self.embeddings.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes of the float32 embeddings, plus the bf16 copy when searching in bf16."""
        return int(self.embeddings.nbytes + (self._bf16.nbytes if self._bf16 is not None else 0))

    def search(
        self, queries: np.ndarray, k: int, block_size: int | None = None, quiet: bool = False
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k documents per query: (scores float32 (q, k'), indices int64 (q, k')), k' = min(k, N).

        Rows are ordered by score descending, then document index ascending. `block_size` documents are
        scored per matrix multiply (default DEFAULT_BLOCK_SIZE); a block's float32 scores depend only on
        its rows, so an index over a slice starting at a block boundary reproduces them bit for bit.
        `quiet` turns the progress bar off; it is also off when stderr is not a terminal.
        """
        block_size = block_size or DEFAULT_BLOCK_SIZE
        queries = self._check_queries(queries)
        k = min(int(k), len(self))
        if k <= 0 or queries.shape[0] == 0:
            shape = (queries.shape[0], max(k, 0))
            return np.zeros(shape, np.float32), np.zeros(shape, np.int64)
        if self.backend == "faiss":
            return self._search_faiss(queries, k)
        if self.dtype == "bfloat16":
            n_candidates = min(len(self), max(k, int(np.ceil(k * self.candidates_factor))))
            _, candidates = self._top_k(queries, n_candidates, block_size, quiet, bf16=True)
            return _rescore(self.embeddings, queries, candidates, k)
        return self._top_k(queries, k, block_size, quiet, bf16=False)

    def score_rows(self, queries: np.ndarray, block_size: int | None = None) -> np.ndarray:
        """Float32 scores of every document for each query, shape (q, N); for score-distribution samples."""
        block_size = block_size or DEFAULT_BLOCK_SIZE
        queries = self._check_queries(queries)
        out = np.empty((queries.shape[0], len(self)), np.float32)
        with _blas_threads(self.threads):
            for start in range(0, len(self), block_size):
                block = slice(start, start + block_size)
                np.matmul(queries, self.embeddings[block].T, out=out[:, block])
        return out

    def scores_of(self, queries: np.ndarray, columns: list[np.ndarray], block_size: int | None = None,
                  query_block: int = 64) -> tuple[list[np.ndarray], np.ndarray]:
        """Per query, its float32 scores at `columns[i]` (document indexes) and the number of non-finite scores
        in its whole row: `score_rows` of `query_block` queries at a time, kept block by block of documents,
        so the scores are the same matrix products bit for bit and no (q, N) block is ever held.

        Document blocks holding no wanted column are skipped when no score can be non-finite: finite queries
        whose norm times the largest document norm stays well below float32's largest value (Cauchy-Schwarz
        bounds every partial sum of the dot products).
        """
        block_size = block_size or DEFAULT_BLOCK_SIZE
        queries = self._check_queries(queries)
        values: list[np.ndarray] = []
        nonfinite = np.zeros(queries.shape[0], np.int64)
        buffer = np.empty((min(query_block, max(queries.shape[0], 1)), block_size), np.float32)
        with _blas_threads(self.threads):
            for first in range(0, queries.shape[0], query_block):
                block = queries[first:first + query_block]
                wanted = [np.asarray(c, np.int64) for c in columns[first:first + query_block]]
                flat = np.concatenate(wanted) if wanted else np.zeros(0, np.int64)
                rows = np.repeat(np.arange(len(wanted)), [len(c) for c in wanted])
                order = np.argsort(flat, kind="stable")
                flat_sorted = flat[order]
                found = np.empty(len(flat), np.float32)
                safe = self._cannot_overflow(block)
                for start in range(0, len(self), block_size):
                    stop = min(start + block_size, len(self))
                    lo, hi = np.searchsorted(flat_sorted, [start, stop])
                    if safe and lo == hi:
                        continue
                    scores = buffer[:len(block), :stop - start]
                    np.matmul(block, self.embeddings[start:stop].T, out=scores)
                    if not safe:
                        nonfinite[first:first + len(block)] += np.count_nonzero(~np.isfinite(scores), axis=1)
                    picked = order[lo:hi]
                    found[picked] = scores[rows[picked], flat[picked] - start]
                values.extend(np.split(found, np.cumsum([len(c) for c in wanted])[:-1]) if wanted else [])
        return values, nonfinite

    def _cannot_overflow(self, queries: np.ndarray) -> bool:
        if not np.isfinite(queries).all():
            return False
        if self._largest_norm is None:
            self._largest_norm = max((float(np.linalg.norm(self.embeddings[i:i + 65536].astype(np.float64), axis=1)
                                            .max(initial=0.0)) for i in range(0, len(self), 65536)), default=0.0)
        query_norm = float(np.linalg.norm(queries.astype(np.float64), axis=1).max(initial=0.0))
        return query_norm * self._largest_norm < 1e37

    def _check_queries(self, queries: np.ndarray) -> np.ndarray:
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        if queries.ndim != 2 or queries.shape[1] != self.embeddings.shape[1]:
            raise ValueError(f"queries must have shape (q, {self.embeddings.shape[1]}), got {queries.shape}")
        return queries

    def _top_k(self, queries, k, block_size, quiet, bf16):
        top = _RunningTopK(queries.shape[0], k, len(self))
        if bf16:
            import torch

            query_matrix = torch.from_numpy(queries).to(torch.bfloat16)
        with _compute_threads(self.threads, torch_too=bf16):
            blocks = range(0, len(self), block_size)
            for start in tqdm(blocks, desc="search", unit="block", disable=True if quiet else None):
                stop = min(start + block_size, len(self))
                docs = self._bf16[start:stop].T if bf16 else self.embeddings[start:stop].T
                for q_start in range(0, queries.shape[0], QUERY_BLOCK_SIZE):
                    q_stop = min(q_start + QUERY_BLOCK_SIZE, queries.shape[0])
                    if bf16:
                        scores = query_matrix[q_start:q_stop] @ docs
                        top.add_bf16_block(scores.view(torch.int16).numpy(), q_start, start)
                    else:
                        top.add_block(queries[q_start:q_stop] @ docs, q_start, start)
                top.maybe_merge()
        return top.result()

    def _search_faiss(self, queries, k):
        import faiss

        faiss.omp_set_num_threads(self.threads or cores())
        scores, indices = self._faiss.search(queries, k)
        indices = indices.astype(np.int64)
        order = np.lexsort((indices, -scores))  # faiss's own order among ties is unspecified
        return np.take_along_axis(scores, order, 1), np.take_along_axis(indices, order, 1)


class _RunningTopK:
    """Top-k per query over documents seen in increasing index order.

    A block's scores are filtered against each query's current k-th best score (strictly greater: an
    equal score from a later document loses the tie). Candidates wait in a buffer and are merged by
    a sort when the buffer grows; a stale threshold only lets more candidates through.
    """

    def __init__(self, n_queries: int, k: int, n_docs: int):
        self.k = k
        self.scores = np.full((n_queries, k), -np.inf, np.float32)
        self.indices = np.full((n_queries, k), n_docs, np.int64)  # sentinel index sorts after real ones
        self.threshold = np.full(n_queries, -np.inf, np.float32)
        self.pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.pending_count = 0
        self.merge_at = max(n_queries * k, 1024)

    def add_block(self, scores: np.ndarray, row_offset: int, doc_offset: int) -> None:
        n_rows, n_cols = scores.shape
        threshold = self.threshold[row_offset : row_offset + n_rows, None]
        mask = scores > threshold
        if n_cols > self.k and np.isneginf(threshold).any():
            # rows without k results yet: keep this block's top-k, ties at the k-th place included
            kth = np.partition(scores, n_cols - self.k, axis=1)[:, n_cols - self.k, None]
            mask &= scores >= kth
        flat = np.flatnonzero(mask)
        if flat.size:
            rows, cols = np.divmod(flat, n_cols)
            self.pending.append((rows + row_offset, cols + doc_offset, scores.ravel()[flat]))
            self.pending_count += flat.size

    def add_bf16_block(self, bits: np.ndarray, row_offset: int, doc_offset: int) -> None:
        """Scores given as bfloat16 bit patterns (int16). Once every threshold is >= 0, comparing the
        int16 patterns orders like the values (non-negative bf16 patterns are monotonic, negative ones
        are negative integers); before that, the block is widened to float32."""
        threshold = self.threshold[row_offset : row_offset + bits.shape[0]]
        if not (threshold >= 0).all():
            self.add_block(_bf16_bits_to_float32(bits), row_offset, doc_offset)
            return
        # thresholds are bf16 values (they come from bf16 scores), so their top 16 bits are exact;
        # adding 0.0 turns -0.0 into +0.0, whose pattern is the smallest non-negative one
        threshold_bits = ((threshold + np.float32(0.0)).view(np.uint32) >> 16).astype(np.int16)[:, None]
        flat = np.flatnonzero(bits > threshold_bits)
        if flat.size:
            rows, cols = np.divmod(flat, bits.shape[1])
            values = _bf16_bits_to_float32(bits.ravel()[flat])
            self.pending.append((rows + row_offset, cols + doc_offset, values))
            self.pending_count += flat.size

    def maybe_merge(self) -> None:
        if self.pending_count >= self.merge_at or (self.pending and np.isneginf(self.threshold).any()):
            self._merge()

    def _merge(self) -> None:
        n_queries, k = self.scores.shape
        rows = np.concatenate([np.repeat(np.arange(n_queries), k)] + [p[0] for p in self.pending])
        cols = np.concatenate([self.indices.ravel()] + [p[1] for p in self.pending])
        vals = np.concatenate([self.scores.ravel()] + [p[2] for p in self.pending])
        # One stable sort by (row, score descending). Equal keys keep concatenation order, which is
        # document order: the current top-k comes from earlier blocks than the pending candidates.
        key = (rows.astype(np.uint64) << np.uint64(32)) | _descending_key(vals)
        order = np.argsort(key, kind="stable")
        rows = rows[order]
        # every row holds at least k entries (its current top-k), so keeping ranks < k gives k per row
        row_start = np.searchsorted(rows, np.arange(n_queries))
        keep = order[np.arange(rows.size) - row_start[rows] < k]
        self.scores = vals[keep].reshape(n_queries, k)
        self.indices = cols[keep].reshape(n_queries, k)
        self.threshold = self.scores[:, -1].copy()
        self.pending, self.pending_count = [], 0

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        if self.pending:
            self._merge()
        return self.scores, self.indices


def _bf16_bits_to_float32(bits: np.ndarray) -> np.ndarray:
    return (bits.view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def _descending_key(scores: np.ndarray) -> np.ndarray:
    """uint64 keys whose ascending order is the float32 scores' descending order (-0.0 equals 0.0)."""
    bits = (scores + np.float32(0.0)).view(np.uint32)
    ascending = np.where(bits & np.uint32(0x80000000), ~bits, bits | np.uint32(0x80000000))
    return (~ascending).astype(np.uint64)


def _rescore(embeddings, queries, candidates, k, chunk: int = 32):
    """Exact float32 scores of the candidates; keep the best k per query in ranking order."""
    scores = np.empty(candidates.shape, np.float32)
    vectors = np.empty((chunk, candidates.shape[1], embeddings.shape[1]), np.float32)  # cache-sized
    for start in range(0, queries.shape[0], chunk):
        stop = min(start + chunk, queries.shape[0])
        gathered = np.take(embeddings, candidates[start:stop], axis=0, out=vectors[: stop - start])
        scores[start:stop] = np.matmul(gathered, queries[start:stop, :, None])[:, :, 0]
    order = np.lexsort((candidates, -scores))[:, :k]
    return np.take_along_axis(scores, order, 1), np.take_along_axis(candidates, order, 1)


def _to_bf16(embeddings: np.ndarray):
    try:
        import torch
    except ImportError as exc:
        raise IrboardError(
            "dense index: dtype 'bfloat16' needs torch; install it with `pip install 'irboard[models]'` "
            "or use dtype 'float32'"
        ) from exc
    return torch.from_numpy(embeddings).to(torch.bfloat16)


def _faiss_index(embeddings: np.ndarray):
    try:
        import faiss
    except ImportError as exc:
        raise IrboardError(
            "dense index: backend 'faiss' needs faiss; install it with `pip install 'irboard[faiss]'` "
            "or use backend 'numpy'"
        ) from exc
    index = faiss.IndexFlatIP(embeddings.shape[1])
    index.add(embeddings)
    return index


@contextmanager
def _blas_threads(threads: int | None):
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # BLAS keeps its own default (OPENBLAS_NUM_THREADS / OMP_NUM_THREADS)
        logger.debug("threadpoolctl is not installed; BLAS threads are not set")
        yield
        return
    with threadpool_limits(limits=threads or cores()):
        yield


@contextmanager
def _compute_threads(threads: int | None, torch_too: bool):
    """BLAS threads for numpy, and torch's intra-op threads for the bf16 path; restored afterwards."""
    with _blas_threads(threads):
        if not torch_too:
            yield
            return
        import torch

        before = torch.get_num_threads()
        torch.set_num_threads(threads or cores())
        try:
            yield
        finally:
            torch.set_num_threads(before)
