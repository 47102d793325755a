"""BM25 as a sparse model: documents become rows of precomputed BM25 term weights, queries term counts.

Spec: `bm25[:option=value,...]`. Options (defaults as in Pyserini/Anserini):

- `k1` (0.9), `b` (0.4): BM25 parameters.
- `language` (en): the analyzer (see `evaluator.models.analyzers.LANGUAGES`).
- `stemmer` (true): true for the language's Snowball stemmer (Porter for English), false for none, or a
  PyStemmer algorithm name such as `english`.
- `stopwords` (true): true for the language's list (Lucene's English list; other languages have none),
  false for none, or the path of a UTF-8 file with one word per line.
- `norms` (lucene): `lucene` rounds document lengths to Lucene's one-byte norm (4 significant bits above
  24 tokens), as Pyserini's indexes do; `exact` uses the token count as is.

Scoring is Lucene's BM25 (Lucene >= 8): weight(t, d) = idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl)),
idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)); dl counts the tokens kept after stop-word removal, N is the
number of documents. A query's score is the sum over its tokens (repeats count), i.e. counts · weights.

Model ids: `bm25` for the defaults; otherwise each non-default setting is appended as `-name-value` in the
order k1, b, stemmer, stopwords, norms: `bm25:k1=1.5,b=0.75` -> `bm25-k1-1.5-b-0.75`,
`bm25:stemmer=false` -> `bm25-stemmer-none`. The language is recorded in the settings, not in the id, so
one model id covers all languages of a multilingual benchmark.
"""

from __future__ import annotations

import logging
import re
from array import array
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from evaluator.errors import ModelLoadError
from evaluator.models.analyzers import Analyzer, TermIndexer, language_profile, read_stopwords
from evaluator.models.base import Document, ModelInfo
from evaluator.models.lucene_norms import lucene_norm_length
from evaluator.models.options import bool_or_text, check_option_names, parse_number
from evaluator.progress import bar

logger = logging.getLogger(__name__)

OPTIONS = ("k1", "b", "language", "stemmer", "stopwords", "norms")
CHUNK = 8192  # documents tokenised at a time
_WEIGH_ROWS = 65536  # documents weighted at a time: bounds the per-posting scratch array


def from_spec(argument: str, options: dict[str, str]) -> BM25Model:
    check_option_names("bm25", options, OPTIONS)
    if argument:
        raise ModelLoadError(
            f"model 'bm25': unexpected argument '{argument}'; bm25 takes only options, e.g. bm25:k1=0.9,b=0.4"
        )
    norms = options.get("norms", "lucene")
    if norms not in ("lucene", "exact"):
        raise ModelLoadError(f"model 'bm25': option norms={norms!r} is not valid; use lucene or exact")
    return BM25Model(
        k1=parse_number("bm25", "k1", options.get("k1", 0.9), minimum=0.0),
        b=parse_number("bm25", "b", options.get("b", 0.4), minimum=0.0),
        language=options.get("language", "en"),
        stemmer=bool_or_text(options.get("stemmer", "true")),  # or a PyStemmer algorithm
        stopwords=bool_or_text(options.get("stopwords", "true")),  # or a file
        norms=norms,
    )


class BM25Model:
    """Holds the corpus vocabulary after `encode_corpus`; `encode_queries` maps query terms onto it."""

    def __init__(
        self,
        k1: float = 0.9,
        b: float = 0.4,
        language: str = "en",
        stemmer: bool | str = True,
        stopwords: bool | str | Path = True,
        norms: str = "lucene",
    ):
        if not 0.0 <= b <= 1.0:
            raise ModelLoadError(f"model 'bm25': option b={b} must lie in [0, 1]")
        profile = language_profile(language)
        if stemmer == profile.stemmer:
            stemmer = True
        words = stopwords if isinstance(stopwords, bool) else read_stopwords(stopwords)
        self.analyzer = Analyzer(profile.code, stemmer=stemmer, stopwords=words)
        self.k1, self.b, self.norms = k1, b, norms
        self.vocabulary: dict[str, int] = {}
        stopwords_setting = stopwords if isinstance(stopwords, bool) else f"file:{Path(stopwords).name}"
        self.info = ModelInfo(
            id=_model_id(k1, b, stemmer, stopwords, norms),
            type="lexical",
            open_weights=True, training_datasets=(),  # no weights to hide, nothing trained
            settings={
                "k1": k1,
                "b": b,
                "language": profile.code,
                "stemmer": self.analyzer.stemmer_name or "none",
                "stopwords": stopwords_setting,
                "stopword_count": len(self.analyzer.stopwords),
                "norms": norms,
            },
        )

    def encode_corpus(self, docs: Sequence[Document]) -> sp.csr_matrix:
        """BM25 weights, float32 (documents x vocabulary); the vocabulary is built from `docs`.

        `docs` is read `CHUNK` documents at a time (a slice each: a corpus view reads only that range), so no
        list of all texts or of all term ids is ever held. The evaluator itself builds its index with
        `index_corpus`, which never holds this matrix.
        """
        chunks = list(self._count_chunks(docs))
        for chunk in chunks:  # earlier chunks end at a smaller vocabulary
            chunk.resize(chunk.shape[0], len(self.vocabulary))
        counts = sp.vstack(chunks, format="csr") if chunks else sp.csr_matrix((0, 0), dtype=np.float32)
        del chunks
        logger.info("bm25: %d documents, %d terms, %d postings", counts.shape[0], counts.shape[1], counts.nnz)
        return bm25_weights(counts, self.k1, self.b, lucene_norms=self.norms == "lucene", in_place=True)

    def index_corpus(self, docs: Sequence[Document], spill_dir=None):
        """The BM25 index (an `evaluator.index.sparse.SparseIndex`) of `docs`, equal to indexing
        `encode_corpus(docs)`; built from term counts streamed through a spill file in `spill_dir`
        (evaluator/index/streamed.py), so the documents x terms matrix never exists."""
        from evaluator.index.streamed import bm25_index

        index = bm25_index(self._count_chunks(docs), len(docs), self.k1, self.b, self.norms == "lucene", spill_dir)
        logger.info("bm25: %d documents, %d terms, %d postings", len(docs), index.vocab_size, index.postings.nnz)
        return index

    def _count_chunks(self, docs: Sequence[Document]):
        """Term counts of `CHUNK` documents at a time, as the vocabulary grows (float32 CSR, canonical)."""
        self.vocabulary = {}
        indexer = TermIndexer(self.analyzer, self.vocabulary)
        with bar(total=len(docs), desc="bm25 docs", unit="doc") as progress:
            for start in range(0, len(docs), CHUNK):
                chunk = self._term_counts([_join(d) for d in docs[start:start + CHUNK]], indexer)
                progress.update(chunk.shape[0])
                yield chunk

    def encode_queries(self, queries: Sequence[str], corpus: sp.csr_matrix) -> sp.csr_matrix:
        """Term counts, float32 (queries x vocabulary); terms absent from the corpus are dropped."""
        if corpus.shape[1] != len(self.vocabulary):
            raise RuntimeError(
                f"bm25: the corpus matrix has {corpus.shape[1]} columns but the vocabulary {len(self.vocabulary)} "
                "terms; encode the corpus with this model (or restore its `vocabulary`) before the queries"
            )
        indexer = TermIndexer(self.analyzer, self.vocabulary, grow=False)
        texts = list(queries)
        with bar(total=len(texts), desc="bm25 queries", unit="query") as progress:
            counts = self._term_counts(texts, indexer)
            progress.update(len(texts))
        return counts

    def _term_counts(self, texts: list[str], indexer: TermIndexer) -> sp.csr_matrix:
        flat, lengths = array("i"), array("q")
        for text in texts:
            ids = indexer.ids(text)
            flat.extend(ids)
            lengths.append(len(ids))
        term_ids = np.frombuffer(flat, dtype=np.int32) if len(flat) else np.zeros(0, np.int32)
        rows = np.repeat(np.arange(len(texts), dtype=np.int32), np.frombuffer(lengths, dtype=np.int64))
        kept = term_ids >= 0
        term_ids, rows = term_ids[kept], rows[kept]
        # Duplicate (row, term) pairs are summed into term counts.
        matrix = sp.csr_matrix(
            (np.ones(len(term_ids), dtype=np.float32), (rows, term_ids)),
            shape=(len(texts), len(self.vocabulary)),
        )
        matrix.sum_duplicates()
        return matrix


def bm25_weights(
    term_counts: sp.csr_matrix,
    k1: float,
    b: float,
    lucene_norms: bool = False,
    corpus_stats: tuple[np.ndarray, int, float] | None = None,
    in_place: bool = False,
) -> sp.csr_matrix:
    """Lucene BM25 document weights (float32 CSR, same sparsity) from a documents x terms count matrix.

    `corpus_stats` = (document frequencies, number of documents, average length) of the whole corpus when
    `term_counts` is only a shard of it; by default they are computed from `term_counts` itself.
    `in_place`: the weights overwrite a float32 `term_counts`' data (the caller's matrix is consumed).
    """
    counts = sp.csr_matrix(term_counts)
    if not counts.has_canonical_format:
        counts = counts.copy()
        counts.sum_duplicates()
    lengths = np.asarray(counts.sum(axis=1), dtype=np.float64).ravel()
    if corpus_stats is None:
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        corpus_stats = (df, counts.shape[0], lengths.mean() if lengths.sum() > 0 else 1.0)
    df, n_docs, avg_length = corpus_stats
    if lucene_norms:
        lengths = lucene_norm_length(lengths.astype(np.int64)).astype(np.float64)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
    length_norm = (k1 * (1.0 - b + b * lengths / avg_length)).astype(np.float32)
    # Per posting, in float32 and in place: idf * tf / (tf + norm(doc)), a block of documents at a time.
    weights = counts.data if in_place and counts.data.dtype == np.float32 else counts.data.astype(np.float32)
    for first in range(0, counts.shape[0], _WEIGH_ROWS):
        last = min(first + _WEIGH_ROWS, counts.shape[0])
        lo, hi = counts.indptr[first], counts.indptr[last]
        block = weights[lo:hi]
        denominator = np.repeat(length_norm[first:last], np.diff(counts.indptr[first:last + 1]))
        denominator += block
        block /= denominator
        block *= idf[counts.indices[lo:hi]]
    return sp.csr_matrix((weights, counts.indices, counts.indptr), shape=counts.shape)


def _join(doc: Document) -> str:
    title, text = doc
    return f"{title} {text}" if title else text


def _model_id(k1: float, b: float, stemmer: bool | str, stopwords: bool | str | Path, norms: str) -> str:
    parts = ["bm25"]
    if k1 != 0.9:
        parts += ["k1", f"{k1:g}"]
    if b != 0.4:
        parts += ["b", f"{b:g}"]
    if stemmer is not True:
        parts += ["stemmer", stemmer or "none"]
    if stopwords is not True:
        parts += ["stopwords", "none" if stopwords is False else re.sub(r"[^a-z0-9.]+", "-", Path(stopwords).stem.lower())]
    if norms != "lucene":
        parts += ["norms", norms]
    return "-".join(parts)
