"""Inverted index for sparse models (BM25, SPLADE): exact top-k that reads only the postings that can matter.

The index is the transposed document matrix (terms x documents, CSR): per term its document ids ascending
and float32 weights, plus each term's largest weight. Weights must be non-negative (BM25 and SPLADE
weights are). The search loop is the `_sparse` C extension: per query, term at a time with MaxScore
bounds, it adds the postings of the query's most important terms into a float32 accumulator, and once
the remaining terms cannot lift an unseen document into the top k, only updates the candidates (by
galloping search), dropping those that can no longer make it; see `_sparse.c`.

`search` returns (scores float32 (q, k), indices int64 (q, k)), best first; equal scores go to the lower
document index. The result equals sorting the full score vector q · D^T (float32 sums, terms taken by
decreasing bound). Only documents with a nonzero score are returned; a query matching fewer than k
documents is padded with index -1 and score -inf.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from evaluator.index import _sparse
from evaluator.progress import bar

_QUERIES_PER_CALL = 64  # one progress-bar step; the kernel allocates its scratch once per call
# What one galloping step costs in postings read in sequence: the kernel restricts a query to its
# candidates only when galloping through the remaining lists is that much cheaper (measured here: ~8).
_GALLOP_STEP = 8.0
# The same for the sampled columns of many queries at once (`_sparse.score_columns`): ascending targets gallop
# in short steps, so a step costs about one posting read in sequence (measured at 100k and 1M documents).
_SAMPLE_STEP = 1.0
# Scores whose exact bound stays below this cannot overflow float32 (3.4e38) in any order of float32 additions.
_SAFE_SUM = 1e37


class SparseIndex:
    """Exact sparse retrieval over a documents x vocabulary matrix of non-negative weights."""

    def __init__(self, postings: sp.csr_matrix):
        """`postings`: terms x documents, CSR, float32, document ids ascending in each row."""
        self.postings = postings
        self.doc_freqs = np.diff(postings.indptr)
        self.max_weights = np.zeros(postings.shape[0], dtype=np.float32)
        nonempty = np.flatnonzero(self.doc_freqs)
        if len(nonempty):
            self.max_weights[nonempty] = np.maximum.reduceat(postings.data, postings.indptr[nonempty])
        self._indptr = postings.indptr.astype(np.int64)  # the kernel's index type (one entry per term)
        self._all_finite: bool | None = None

    @classmethod
    def from_documents(cls, documents: sp.spmatrix) -> SparseIndex:
        """Build from a documents x vocabulary matrix; explicit zeros are dropped."""
        documents = sp.csr_matrix(documents, dtype=np.float32)
        if documents.nnz and documents.data.min() < 0:
            raise ValueError("SparseIndex needs non-negative weights; the document matrix has negative entries")
        # CSR (docs x terms) read as CSC is its transpose; tocsr() lays out the postings in one pass.
        postings = sp.csc_matrix(
            (documents.data, documents.indices, documents.indptr), shape=documents.shape[::-1]
        ).tocsr()
        postings.sum_duplicates()
        postings.eliminate_zeros()
        postings.indices = postings.indices.astype(np.int32, copy=False)
        return cls(postings)

    @property
    def num_docs(self) -> int:
        return self.postings.shape[1]

    @property
    def vocab_size(self) -> int:
        return self.postings.shape[0]

    @property
    def nbytes(self) -> int:
        p = self.postings
        arrays = (p.data, p.indices, p.indptr, self.doc_freqs, self.max_weights, self._indptr)
        return sum(a.nbytes for a in arrays)

    def score_rows(self, queries: sp.spmatrix) -> np.ndarray:
        """Dense scores (q, num_docs) float32 for a block of queries."""
        return (self._as_queries(queries) @ self.postings).toarray()

    def scores_of(self, queries: sp.spmatrix, columns: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
        """Per query, its float32 scores at `columns[i]` (document indexes), and the number of non-finite scores
        in its whole row; equal bit for bit to `score_rows(queries)[i, columns[i]]` without the (q, N) block.

        Each score adds the query's terms in ascending term order, in float32, as the sparse product in
        `score_rows` does; each term's postings are matched with the wanted columns by binary search, the
        shorter list looked up in the longer (the `_sparse.score_columns` kernel, all queries in one call).
        Columns of one query must be distinct. The non-finite count is 0 without scoring the row when the query's
        weights are finite and their products with the terms' largest weights sum to well below float32's largest value
        (weights are non-negative, so no partial sum can overflow); otherwise the row is scored to count.
        """
        queries = self._as_queries(queries)
        n = queries.shape[0]
        sizes = np.array([len(c) for c in columns], np.int64)
        at = np.concatenate(([0], np.cumsum(sizes)))
        flat = np.concatenate([np.asarray(c, np.int64) for c in columns] or [np.zeros(0, np.int64)])
        # every query's columns ascending, queries one after the other: one stable sort of (query, column) keys,
        # quick on what the sampler passes (a few relevant columns, then an ascending sample)
        order = np.argsort(np.repeat(np.arange(n, dtype=np.int64), sizes) * (self.num_docs + 1) + flat, kind="stable")
        scores = np.empty(len(flat), np.float32)
        _sparse.score_columns(self._indptr, self.postings.indices.astype(np.int32, copy=False),
                              self.postings.data.astype(np.float32, copy=False), queries.indptr.astype(np.int64),
                              queries.indices.astype(np.int32), queries.data.astype(np.float32, copy=False),
                              flat[order].astype(np.int32), at, scores, _SAMPLE_STEP)
        found = np.empty(len(flat), np.float32)
        found[order] = scores
        # the largest score each query can reach, summed in float64: well below float32's largest, no sum overflows
        rows = np.repeat(np.arange(n), np.diff(queries.indptr))
        weights = queries.data.astype(np.float64)
        bounds = np.bincount(rows, weights * self.max_weights[queries.indices].astype(np.float64), minlength=n)
        finite = np.bincount(rows, ~np.isfinite(weights), minlength=n) == 0
        nonfinite = np.zeros(n, np.int64)
        for i in np.flatnonzero(~(self._finite_index() & finite & (bounds < _SAFE_SUM))).tolist():
            nonfinite[i] = np.count_nonzero(~np.isfinite(self.score_rows(queries[i])))
        return (np.split(found, at[1:-1]) if n else []), nonfinite

    def _finite_index(self) -> bool:
        if self._all_finite is None:
            self._all_finite = bool(np.isfinite(self.max_weights).all())  # a NaN or inf weight makes its max so
        return self._all_finite

    def search(self, queries: sp.spmatrix, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k documents per query row: (scores float32 (q, k), indices int64 (q, k))."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        queries = self._as_queries(queries)
        n_queries = queries.shape[0]
        scores = np.empty((n_queries, k), dtype=np.float32)
        indices = np.empty((n_queries, k), dtype=np.int64)
        arrays = (
            self._indptr,
            self.postings.indices,
            self.postings.data,
            self.max_weights,
            queries.indptr.astype(np.int64),
            queries.indices.astype(np.int32),
            queries.data,
        )
        with bar(total=n_queries, desc="search", unit="query") as progress:
            for first in range(0, n_queries, _QUERIES_PER_CALL):
                last = min(first + _QUERIES_PER_CALL, n_queries)
                _sparse.search(*arrays, self.num_docs, k, first, last, scores, indices, _GALLOP_STEP)
                progress.update(last - first)
        return scores, indices

    def _as_queries(self, queries: sp.spmatrix) -> sp.csr_matrix:
        queries = sp.csr_matrix(queries, dtype=np.float32, copy=True)
        if queries.shape[1] != self.vocab_size:
            raise ValueError(f"queries have {queries.shape[1]} columns, the index vocabulary {self.vocab_size}")
        if queries.nnz and queries.data.min() < 0:
            raise ValueError("SparseIndex needs non-negative query weights")
        queries.sum_duplicates()
        queries.eliminate_zeros()
        return queries
