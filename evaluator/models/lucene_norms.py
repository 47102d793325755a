"""Lucene's one-byte document-length norm, shared by the in-memory and the streamed BM25 weighting."""

from __future__ import annotations

import numpy as np

_LUCENE_FREE_LENGTHS = 24  # lengths below this are stored exactly in Lucene's one-byte norm


def lucene_norm_length(lengths: np.ndarray) -> np.ndarray:
    """Document lengths as Lucene's BM25 reads them back from its one-byte norm (SmallFloat.intToByte4).

    Lengths below 24 are exact; above, `length - 24` keeps its 4 most significant bits.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    excess = np.maximum(lengths - _LUCENE_FREE_LENGTHS, 0)
    bits = np.zeros_like(excess)
    positive = excess > 0
    bits[positive] = np.floor(np.log2(excess[positive])).astype(np.int64) + 1
    shift = np.maximum(bits - 4, 0)
    rounded = (excess >> shift) << shift
    return np.where(lengths < _LUCENE_FREE_LENGTHS, lengths, _LUCENE_FREE_LENGTHS + rounded)
