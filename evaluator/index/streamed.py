"""BM25 postings built from term counts streamed chunk by chunk, without a documents x terms matrix in memory.

Building the inverted index from a documents x terms matrix holds both at once (the matrix, then its
transpose). Here the chunks of term counts go to a spill file as they come, while the corpus statistics
(document frequencies, lengths) accumulate; then the postings arrays are allocated at their final size and
the chunks, read back one at a time, are weighted and scattered into place. The peak is the index itself plus
one chunk. Each weight is computed with the same float32 operations as `bm25_weights`, so the index equals
`SparseIndex.from_documents(bm25_weights(counts, ...))` bit for bit.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from evaluator.index.sparse import SparseIndex
from evaluator.models.lucene_norms import lucene_norm_length


def bm25_index(count_chunks: Iterable[sp.csr_matrix], num_docs: int, k1: float, b: float, lucene_norms: bool,
               spill_dir: Path | str | None = None) -> SparseIndex:
    """The BM25 index of documents given as consecutive chunks of term counts (float32 CSR, canonical; a
    chunk's columns are the vocabulary as far as it has grown)."""
    lengths = np.empty(num_docs, np.float64)
    df = np.zeros(0, np.int64)
    sizes: list[tuple[int, int]] = []
    with tempfile.TemporaryFile(dir=spill_dir, prefix="irboard-bm25-") as spill:
        row = 0
        for chunk in count_chunks:
            n = chunk.shape[0]
            lengths[row:row + n] = np.asarray(chunk.sum(axis=1), dtype=np.float64).ravel()  # as bm25_weights
            counts = np.bincount(chunk.indices, minlength=chunk.shape[1])
            if len(counts) > len(df):
                df = np.concatenate([df, np.zeros(len(counts) - len(df), np.int64)])
            df[:len(counts)] += counts
            for array in (chunk.indptr.astype(np.int64), chunk.indices.astype(np.int32), chunk.data.astype(np.float32)):
                spill.write(array.tobytes())
            sizes.append((n, chunk.nnz))
            row += n
        if row != num_docs:
            raise ValueError(f"bm25: the chunks hold {row} documents, expected {num_docs}")

        avg_length = lengths.mean() if lengths.sum() > 0 else 1.0
        if lucene_norms:
            lengths = lucene_norm_length(lengths.astype(np.int64)).astype(np.float64)
        idf = np.log1p((num_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        length_norm = (k1 * (1.0 - b + b * lengths / avg_length)).astype(np.float32)
        del lengths

        indptr = np.concatenate(([0], np.cumsum(df)))
        nnz = int(indptr[-1])
        docs = np.empty(nnz, np.int32)
        weights = np.empty(nnz, np.float32)
        cursor = indptr[:-1].copy()  # next free slot of each term's postings
        spill.seek(0)
        row = 0
        for n, chunk_nnz in sizes:
            chunk_indptr = np.frombuffer(spill.read(8 * (n + 1)), np.int64)
            terms = np.frombuffer(spill.read(4 * chunk_nnz), np.int32)
            tf = np.frombuffer(spill.read(4 * chunk_nnz), np.float32)
            rows = np.repeat(np.arange(row, row + n, dtype=np.int32), np.diff(chunk_indptr))
            denominator = length_norm[rows] + tf  # idf * tf / (tf + norm(doc)), in float32 as bm25_weights
            weight = tf / denominator
            weight *= idf[terms]
            order = np.argsort(terms, kind="stable")  # by term, documents ascending within each
            by_term = terms[order]
            rank = np.arange(len(order)) - np.searchsorted(by_term, by_term, side="left")
            target = cursor[by_term] + rank
            docs[target] = rows[order]
            weights[target] = weight[order]
            cursor += np.bincount(terms, minlength=len(cursor))
            row += n
    postings = sp.csr_matrix((weights, docs, indptr), shape=(len(df), num_docs), copy=False)
    postings.has_sorted_indices = True
    postings.eliminate_zeros()  # as SparseIndex.from_documents: a weight that rounded to 0 is no posting
    postings.indices = postings.indices.astype(np.int32, copy=False)
    return SparseIndex(postings)
