"""Score samples: the per-query score distributions that recall-at-scale prediction is fitted on.

For every query the evaluator keeps the scores of all judged-relevant documents (label >=
relevance_level) and a seeded uniform random sample, without replacement, of the other documents'
scores ("non-relevant": judged 0, negative or unjudged), or all of them when the corpus is small.
The sample of a query depends only on (seed, query_id, corpus order, its qrels), never on the block
of queries it was scored with or on query order.

Encoded form: the result-file field ``score_samples`` (schema version 2), validated by
``ScoreSamplesModel``::

    {
      "format": "irboard-score-samples/1",  # str, this encoding
      "num_docs": 5183,                     # int, documents in the scored corpus (N)
      "relevance_level": 1,                 # int, label at or above which a document is relevant
      "seed": 0,                            # int, sampling seed
      "samples_requested": 2000,            # int, non-relevant sample size asked for per query
      "samples_per_query": 2000,            # int, cap actually applied (lower when the size budget
                                            #      forced a uniform reduction)
      "queries": {
        "<query_id>": {
          "n_relevant": 1,                  # int, judged-relevant documents present in the corpus
          "n_nonrelevant": 5182,            # int, num_docs - n_relevant
          "relevant": [0.6143],             # list[float], the scores of all n_relevant documents,
                                            #      ascending, unquantized
          "nonrelevant": {
            "count": 2000,                  # int, min(samples_per_query, n_nonrelevant)
            "lo": -0.0812,                  # float, smallest sampled score
            "hi": 0.5334,                   # float, largest sampled score
            "data": "eJz..."                # str, see below
          }
        }
      }
    }

``data`` holds the sorted sample quantized to 16 bits on [lo, hi]: code_i = round((s_i - lo) /
(hi - lo) * 65535), so s_i = lo + code_i * (hi - lo) / 65535 within (hi - lo) / 131070. The codes
are non-decreasing; their first differences (code_0 itself first) are written as uint16 in two
byte planes (all low bytes, then all high bytes), zlib-compressed and base64-encoded (RFC 4648,
with padding). The first code is 0 and the last is 65535 whenever count >= 2 and hi > lo.
Encoding keeps the whole field under a byte budget (1 MB by default) by lowering
samples_per_query uniformly (a seeded subsample of each query's sample).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator.errors import ResultValidationError

logger = logging.getLogger(__name__)

FORMAT = "irboard-score-samples/1"
DEFAULT_SAMPLES = 2000
MAX_ENCODED_BYTES = 1_000_000
MIN_SAMPLES = 10
_LEVELS = 65535
_FIX = "re-create the result with irboard evaluate"


@dataclass(frozen=True)
class QueryScoreSamples:
    """One query's scores: all relevant ones and a sorted sample of the non-relevant ones."""

    relevant: np.ndarray
    nonrelevant: np.ndarray
    n_relevant: int
    n_nonrelevant: int


@dataclass(frozen=True)
class ScoreSamples:
    """Decoded score samples of one result file (see the module docstring for the fields)."""

    num_docs: int
    relevance_level: int
    seed: int
    samples_requested: int
    samples_per_query: int
    queries: dict[str, QueryScoreSamples] = field(default_factory=dict)


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class NonrelevantSampleModel(_Strict):
    count: int = Field(ge=0)
    lo: float
    hi: float
    data: str


class QueryScoreSamplesModel(_Strict):
    n_relevant: int = Field(ge=0)
    n_nonrelevant: int = Field(ge=0)
    relevant: list[float]
    nonrelevant: NonrelevantSampleModel


class ScoreSamplesModel(_Strict):
    """Schema of the result-file field ``score_samples``."""

    format: Literal["irboard-score-samples/1"]
    num_docs: int = Field(ge=1)
    relevance_level: int
    seed: int
    samples_requested: int = Field(ge=0)
    samples_per_query: int = Field(ge=0)
    queries: dict[str, QueryScoreSamplesModel]


def score_samples_json_schema() -> dict[str, Any]:
    """The JSON-schema fragment of the ``score_samples`` field."""
    return ScoreSamplesModel.model_json_schema()


def query_rng(seed: int, query_id: str, *extra: int) -> np.random.Generator:
    """A generator that depends only on the seed and the query id (never on block or order)."""
    digest = hashlib.sha256(query_id.encode("utf-8")).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little"), *extra])


@dataclass(frozen=True)
class SampleColumns:
    """Corpus columns of one query's sample: relevant documents and sampled non-relevant ones."""

    relevant: np.ndarray
    nonrelevant: np.ndarray


class ScoreSampleCollector:
    """Collects score samples block by block while the evaluator scores the corpus.

    ``doc_ids`` gives the column order of the score rows (a sequence, or a mapping doc_id ->
    column). ``qrels`` maps query_id -> {doc_id: label}.
    """

    def __init__(
        self,
        doc_ids: Sequence[str] | Mapping[str, int],
        qrels: Mapping[str, Mapping[str, int]],
        n_samples: int = DEFAULT_SAMPLES,
        seed: int = 0,
        relevance_level: int = 1,
    ) -> None:
        if n_samples < 0:
            raise ValueError(f"n_samples must be >= 0, got {n_samples}")
        if isinstance(doc_ids, Mapping):
            self._column = doc_ids
        else:
            self._column = {doc_id: i for i, doc_id in enumerate(doc_ids)}
        self.num_docs = len(self._column)
        self.qrels = qrels
        self.n_samples = n_samples
        self.seed = seed
        self.relevance_level = relevance_level
        self._queries: dict[str, QueryScoreSamples] = {}
        self._missing_relevant = 0

    def add(self, query_ids: Sequence[str], score_rows: np.ndarray) -> None:
        """Adds a block: ``score_rows[i]`` holds query_ids[i]'s scores over the whole corpus."""
        rows = np.asarray(score_rows)
        if rows.ndim != 2 or rows.shape != (len(query_ids), self.num_docs):
            raise ValueError(
                f"score_rows has shape {rows.shape}, expected ({len(query_ids)}, {self.num_docs})"
            )
        for query_id, row in zip(query_ids, rows, strict=True):
            columns = self.columns(query_id)
            nonfinite = int(np.count_nonzero(~np.isfinite(row)))
            self.add_scores(query_id, columns, row[columns.relevant], row[columns.nonrelevant], nonfinite)

    def columns(self, query_id: str) -> SampleColumns:
        """The corpus columns whose scores a query's sample needs: its relevant documents and a seeded
        sample of the others (both ascending). For indexes that score only these columns."""
        labels = self.qrels.get(query_id, {})
        judged = [d for d, label in labels.items() if label >= self.relevance_level]
        relevant = np.array(sorted(self._column[d] for d in judged if d in self._column), dtype=np.int64)
        self._missing_relevant += len(judged) - len(relevant)
        n_nonrelevant = self.num_docs - len(relevant)
        take = min(self.n_samples, n_nonrelevant)
        if take == n_nonrelevant:
            mask = np.ones(self.num_docs, dtype=bool)
            mask[relevant] = False
            picked = np.flatnonzero(mask)
        else:
            picks = np.sort(query_rng(self.seed, query_id).choice(n_nonrelevant, size=take, replace=False))
            # The j-th non-relevant column c satisfies c - #{relevant columns < c} = j.
            shifted = relevant - np.arange(len(relevant))
            picked = picks + np.searchsorted(shifted, picks, side="right")
        return SampleColumns(relevant, picked)

    def add_scores(self, query_id: str, columns: SampleColumns, relevant: np.ndarray, nonrelevant: np.ndarray,
                   nonfinite: int = 0) -> None:
        """Adds one query from the scores at `columns` (from `columns(query_id)`); `nonfinite` counts the
        NaN or infinite scores in its whole row."""
        if query_id in self._queries:
            raise ValueError(f"query {query_id!r} was already added")
        if nonfinite:
            raise ResultValidationError(
                f"score_samples: query {query_id!r} has {nonfinite} non-finite scores (NaN or inf); "
                "fix the model or its inputs so that every score is finite"
            )
        self._queries[query_id] = QueryScoreSamples(
            relevant=np.sort(np.asarray(relevant, dtype=np.float64)),
            nonrelevant=np.sort(np.asarray(nonrelevant, dtype=np.float64)),
            n_relevant=len(columns.relevant),
            n_nonrelevant=self.num_docs - len(columns.relevant),
        )

    def result(self) -> ScoreSamples:
        if self._missing_relevant:
            logger.warning(
                "score samples: %d judged-relevant documents are not in the corpus and were not counted",
                self._missing_relevant,
            )
        return ScoreSamples(
            num_docs=self.num_docs,
            relevance_level=self.relevance_level,
            seed=self.seed,
            samples_requested=self.n_samples,
            samples_per_query=self.n_samples,
            queries=dict(self._queries),
        )


def collect_score_samples(
    query_ids: Sequence[str],
    doc_ids: Sequence[str] | Mapping[str, int],
    score_rows: np.ndarray | Iterable[np.ndarray],
    qrels: Mapping[str, Mapping[str, int]],
    n_samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    relevance_level: int = 1,
) -> ScoreSamples:
    """One-call form of ScoreSampleCollector: ``score_rows[i]`` is query_ids[i]'s score row."""
    collector = ScoreSampleCollector(doc_ids, qrels, n_samples, seed, relevance_level)
    for query_id, row in zip(query_ids, score_rows, strict=True):
        collector.add([query_id], np.asarray(row)[None, :])
    return collector.result()


def _encode_sample(values: np.ndarray) -> dict[str, Any]:
    if values.size == 0:
        return {"count": 0, "lo": 0.0, "hi": 0.0, "data": base64.b64encode(zlib.compress(b"", 9)).decode()}
    lo, hi = float(values[0]), float(values[-1])
    width = hi - lo
    codes = np.zeros(values.size, dtype=np.int64)
    if width > 0:
        codes = np.rint((values - lo) / width * _LEVELS).astype(np.int64)
    deltas = np.diff(codes, prepend=0).astype("<u2")
    planes = deltas.view(np.uint8).reshape(-1, 2).T.tobytes()
    data = base64.b64encode(zlib.compress(planes, 9)).decode("ascii")
    return {"count": int(values.size), "lo": lo, "hi": hi, "data": data}


def _subsample(values: np.ndarray, cap: int, seed: int, query_id: str) -> np.ndarray:
    if values.size <= cap:
        return values
    keep = query_rng(seed, query_id, cap).choice(values.size, size=cap, replace=False)
    return values[np.sort(keep)]


def encoded_size(encoded: Mapping[str, Any]) -> int:
    """Bytes of the field as the result writer stores it (sorted keys, two-space indentation)."""
    return len(json.dumps(encoded, indent=2, sort_keys=True).encode("utf-8"))


def encode_score_samples(samples: ScoreSamples, max_bytes: int = MAX_ENCODED_BYTES) -> dict[str, Any]:
    """The JSON-safe ``score_samples`` field, within max_bytes (lowering samples_per_query if needed)."""
    cap = samples.samples_per_query
    while True:
        queries = {}
        for query_id in sorted(samples.queries):
            q = samples.queries[query_id]
            sample = _subsample(q.nonrelevant, cap, samples.seed, query_id)
            queries[query_id] = {
                "n_relevant": q.n_relevant,
                "n_nonrelevant": q.n_nonrelevant,
                "relevant": [float(s) for s in np.sort(q.relevant)],
                "nonrelevant": _encode_sample(sample),
            }
        encoded = {
            "format": FORMAT,
            "num_docs": samples.num_docs,
            "relevance_level": samples.relevance_level,
            "seed": samples.seed,
            "samples_requested": samples.samples_requested,
            "samples_per_query": cap,
            "queries": queries,
        }
        size = encoded_size(encoded)
        if size <= max_bytes:
            break
        largest = min(cap, max((len(q.nonrelevant) for q in samples.queries.values()), default=0))
        if largest <= MIN_SAMPLES:
            raise ResultValidationError(
                f"score_samples: {len(queries)} queries take {size} bytes with at most {largest} "
                f"non-relevant samples per query, over the {max_bytes}-byte budget; raise max_bytes or sample fewer queries"
            )
        cap = max(MIN_SAMPLES, min(int(largest * max_bytes / size * 0.97), largest - 1))
    if cap < samples.samples_per_query:
        logger.info("score samples: reduced to %d per query to stay within %d bytes", cap, max_bytes)
    return encoded


def _decode_sample(sample: NonrelevantSampleModel, where: str) -> np.ndarray:
    try:
        raw = zlib.decompress(base64.b64decode(sample.data.encode("ascii"), validate=True))
    except (binascii.Error, zlib.error, UnicodeEncodeError, ValueError) as exc:
        raise ResultValidationError(f"{where}.data: not base64-encoded zlib data ({exc}); {_FIX}") from None
    if len(raw) != 2 * sample.count:
        raise ResultValidationError(
            f"{where}.data: holds {len(raw) // 2} values, count says {sample.count}; {_FIX}"
        )
    if sample.hi < sample.lo:
        raise ResultValidationError(f"{where}: hi {sample.hi} is below lo {sample.lo}; {_FIX}")
    planes = np.frombuffer(raw, dtype=np.uint8).reshape(2, -1)
    codes = np.cumsum(planes[0].astype(np.int64) + 256 * planes[1].astype(np.int64))
    if codes.size and codes[-1] > _LEVELS:
        raise ResultValidationError(f"{where}.data: codes exceed {_LEVELS}; {_FIX}")
    return sample.lo + codes * ((sample.hi - sample.lo) / _LEVELS)


def _field_path(loc: tuple) -> str:
    """('queries', 'q1', 'relevant', 0) -> ".queries['q1'].relevant[0]"."""
    parts = []
    for i, part in enumerate(loc):
        is_key = isinstance(part, int) or (i > 0 and loc[i - 1] == "queries")
        parts.append(f"[{part!r}]" if is_key else f".{part}")
    return "".join(parts)


def decode_score_samples(
    data: Mapping[str, Any] | ScoreSamplesModel, where: str = "score_samples"
) -> ScoreSamples:
    """Validates and decodes the ``score_samples`` field; problems raise ResultValidationError."""
    try:
        model = data if isinstance(data, ScoreSamplesModel) else ScoreSamplesModel.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ResultValidationError(
            f"{where}{_field_path(first['loc'])}: {first['msg']} ({exc.error_count()} problem(s) in all); "
            f"{_FIX}"
        ) from None
    if model.samples_per_query > model.samples_requested:
        raise ResultValidationError(
            f"{where}.samples_per_query: {model.samples_per_query} exceeds samples_requested "
            f"{model.samples_requested}; {_FIX}"
        )
    queries = {}
    for query_id, q in model.queries.items():
        at = f"{where}.queries[{query_id!r}]"
        if q.n_relevant + q.n_nonrelevant != model.num_docs:
            raise ResultValidationError(
                f"{at}: n_relevant + n_nonrelevant = {q.n_relevant + q.n_nonrelevant}, "
                f"expected num_docs {model.num_docs}; {_FIX}"
            )
        if len(q.relevant) != q.n_relevant:
            raise ResultValidationError(
                f"{at}.relevant: {len(q.relevant)} scores, n_relevant says {q.n_relevant}; {_FIX}"
            )
        expected = min(model.samples_per_query, q.n_nonrelevant)
        if q.nonrelevant.count != expected:
            raise ResultValidationError(
                f"{at}.nonrelevant.count: {q.nonrelevant.count}, expected min(samples_per_query, "
                f"n_nonrelevant) = {expected}; {_FIX}"
            )
        queries[query_id] = QueryScoreSamples(
            relevant=np.sort(np.asarray(q.relevant, dtype=np.float64)),
            nonrelevant=_decode_sample(q.nonrelevant, f"{at}.nonrelevant"),
            n_relevant=q.n_relevant,
            n_nonrelevant=q.n_nonrelevant,
        )
    return ScoreSamples(
        num_docs=model.num_docs,
        relevance_level=model.relevance_level,
        seed=model.seed,
        samples_requested=model.samples_requested,
        samples_per_query=model.samples_per_query,
        queries=queries,
    )
