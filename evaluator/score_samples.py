"""Score samples: the per-query score distributions that recall-at-scale prediction is fitted on.

For every query the evaluator keeps the scores of all judged-relevant documents (label >=
relevance_level) and a seeded uniform random sample, without replacement, of the other documents'
scores ("non-relevant": judged 0, negative or unjudged), or all of them when the corpus is small.
The sample of a query depends only on (seed, query_id, corpus order, its qrels), never on the block
of queries it was scored with or on query order.

Stored form (result schema version 3), the field ``score_samples``, format ``irboard-score-samples/2``::

    {
      "format": "irboard-score-samples/2",
      "num_docs": 5183,            # documents in the scored corpus (N)
      "relevance_level": 1,        # label at or above which a document is relevant
      "seed": 0,                   # sampling seed
      "samples_requested": 2000,   # non-relevant sample size asked for per query
      "samples_per_query": 2000,   # cap actually applied (lower when the size budget forced a reduction)
      "levels": 4095,              # quantisation levels of the non-relevant sample: 4095 (12 bits) or 65535
      "n_relevant": "<column>",    # uint32 per query (queries in the result's per_query order)
      "relevant": "<column>",      # float64: every relevant score, ascending within each query, unquantised
      "lo": "<column>",            # float64 per query: smallest sampled non-relevant score
      "hi": "<column>",            # float64 per query: largest
      "codes": "<column>",         # uint16: per query, the first differences of its sorted codes
      "absent_relevant": "<column>",  # optional, uint32 per query: judged relevant documents the corpus lacks
      "absent_ids": "<text column>"   # with it: their ids, query after query, each query's ascending
    }

`absent_relevant` and `absent_ids` are written only when some query's judgments name a relevant document that
is not in the scored corpus (ArguAna's do): the file then says why its query holds fewer relevant scores than
the judgments count, and which documents those are, so that `irboard validate` can check each claim (judged
relevant, not in the stored ranking, and with `--data-dir`, not in the corpus). Columns are evaluator/columns.py's. A query's sample holds count = min(samples_per_query, N - n_relevant)
values; value_i = lo + code_i * (hi - lo) / levels, code_i = round((s_i - lo) / (hi - lo) * levels), so each
is within (hi - lo) / (2 * levels) of the score it stands for. Twelve bits keep that error below 1/8190 of
the query's score range at under half the bytes of sixteen; files migrated from version 2 keep their
16-bit codes (levels 65535), so migration is lossless. The sample shrinks uniformly (a seeded subsample of
each query's sample) when the field would exceed BYTES_PER_QUERY a query.

Version 2 results held the format ``irboard-score-samples/1`` (a JSON object per query, 16-bit codes);
`decode_score_samples_v1` reads it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator.columns import decode_array, decode_strings, encode_array, encode_strings
from evaluator.errors import ResultValidationError

logger = logging.getLogger(__name__)

FORMAT = "irboard-score-samples/2"
FORMAT_V1 = "irboard-score-samples/1"
DEFAULT_SAMPLES = 2000
DEFAULT_LEVELS = 4095
# Decoding inflates at most this many scores a query (relevant and sampled), whatever the counts claim: ten times
# what `irboard evaluate` stores, so that a small file cannot make the reader inflate gigabytes.
MAX_DECODED_PER_QUERY = 10 * DEFAULT_SAMPLES
LEGACY_LEVELS = 65535
BYTES_PER_QUERY = 1_500  # budget of the stored field per query (base64 text)
MIN_SAMPLES = 10
_FIX = "re-create the result with irboard evaluate"


@dataclass(frozen=True)
class QueryScoreSamples:
    """One query's scores: all relevant ones and a sorted sample of the non-relevant ones."""

    relevant: np.ndarray
    nonrelevant: np.ndarray
    n_relevant: int
    n_nonrelevant: int
    absent: int = 0  # judged relevant documents that are not in the scored corpus (so have no score)
    absent_ids: tuple[str, ...] = ()  # their ids, ascending (files written before they were recorded: none)


@dataclass(frozen=True, eq=False)
class FlatScores:
    """Every query's scores as flat arrays, queries in the order of the mapping `queries` (the mapping whose
    arrays are views into these).

    `relevant` and `nonrelevant` hold the queries' scores one query after the other, ascending within each
    query; `n_relevant` and `n_sampled` (int64, per query) say how many each query has. Relevant scores are
    finite. A sampled score lo + code * step is finite unless (hi - lo) / levels or the sum overflows: then it
    is NaN where the code is 0 (a prefix of the query) and inf elsewhere (a suffix), so a query whose first and
    last sampled scores are finite has only finite ones."""

    queries: Mapping[str, QueryScoreSamples]
    n_relevant: np.ndarray
    relevant: np.ndarray
    n_sampled: np.ndarray
    nonrelevant: np.ndarray
    absent: np.ndarray | None = None  # per query, when the file has `absent_relevant` (else none is absent)


@dataclass(frozen=True)
class ScoreSamples:
    """Decoded score samples of one result file (see the module docstring for the fields).

    `flat`: the flat arrays `queries` was decoded from, for readers of all queries at once (see `flat_scores`)."""

    num_docs: int
    relevance_level: int
    seed: int
    samples_requested: int
    samples_per_query: int
    queries: Mapping[str, QueryScoreSamples] = field(default_factory=dict)
    levels: int = DEFAULT_LEVELS  # quantisation of the non-relevant sample when stored
    flat: FlatScores | None = field(default=None, compare=False, repr=False)

    def flat_scores(self) -> FlatScores | None:
        """`flat` while it holds `queries`; None without it or after `replace` gave other queries."""
        flat = self.flat
        return flat if flat is not None and flat.queries is self.queries else None


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
    """Schema of the version-2 result-file field ``score_samples`` (format irboard-score-samples/1)."""

    format: Literal["irboard-score-samples/1"]
    num_docs: int = Field(ge=1)
    relevance_level: int
    seed: int
    samples_requested: int = Field(ge=0)
    samples_per_query: int = Field(ge=0)
    queries: dict[str, QueryScoreSamplesModel]


class ScoreSamplesColumns(_Strict):
    """Schema of the version-3 field ``score_samples`` (format irboard-score-samples/2)."""

    format: Literal["irboard-score-samples/2"]
    num_docs: int = Field(ge=1, le=10**11)
    relevance_level: int = Field(ge=1, le=1000)
    seed: int = Field(ge=0, le=2**63 - 1)
    samples_requested: int = Field(ge=0, le=10**6)
    samples_per_query: int = Field(ge=0, le=10**6)
    levels: Literal[4095, 65535]
    n_relevant: str
    relevant: str
    lo: str
    hi: str
    codes: str
    absent_relevant: str | None = None
    absent_ids: str | None = None


def score_samples_json_schema() -> dict[str, Any]:
    """The JSON-schema fragment of the ``score_samples`` field."""
    return ScoreSamplesColumns.model_json_schema()


def query_rng(seed: int, query_id: str, *extra: int) -> np.random.Generator:
    """A generator that depends only on the seed and the query id (never on block or order)."""
    digest = hashlib.sha256(query_id.encode("utf-8")).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little"), *extra])


def _past_relevant(picks: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """Ascending draws j among a query's non-relevant documents, as corpus columns: the j-th non-relevant column c
    satisfies c - #{relevant columns < c} = j."""
    return picks + np.searchsorted(relevant - np.arange(len(relevant)), picks, side="right")


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
        dtype: type = np.float64,
    ) -> None:
        """`dtype`: how the scores are kept until encoded; float32 (scores that are float32) halves the memory
        and encodes to the same bytes (`_quantize` widens to float64)."""
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
        self.dtype = dtype
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
        return self.columns_of([query_id])[0]

    def columns_of(self, query_ids: Sequence[str]) -> list[SampleColumns]:
        """`columns` of each query, each sample drawn from the query's own generator; draws of one size are sorted
        in one call."""
        relevant = [self._relevant_columns(q) for q in query_ids]
        picks: list[np.ndarray | None] = []
        for query_id, mine in zip(query_ids, relevant, strict=True):
            n_nonrelevant = self.num_docs - len(mine)
            take = min(self.n_samples, n_nonrelevant)
            picks.append(None if take == n_nonrelevant else
                         query_rng(self.seed, query_id).choice(n_nonrelevant, size=take, replace=False))
        picked: list[np.ndarray | None] = [None] * len(picks)
        drawn = [i for i, p in enumerate(picks) if p is not None]
        if drawn and len({len(picks[i]) for i in drawn}) == 1:  # one size: one sort and one search for all
            for i, ascending in zip(drawn, np.sort(np.stack([picks[i] for i in drawn]), axis=1), strict=True):
                picked[i] = _past_relevant(ascending, relevant[i])
        columns = []
        for mine, pick, done in zip(relevant, picks, picked, strict=True):
            if pick is None:  # the whole rest of the corpus
                mask = np.ones(self.num_docs, dtype=bool)
                mask[mine] = False
                done = np.flatnonzero(mask)
            elif done is None:
                done = _past_relevant(np.sort(pick), mine)
            columns.append(SampleColumns(mine, done))
        return columns

    def _relevant_columns(self, query_id: str) -> np.ndarray:
        labels = self.qrels.get(query_id, {})
        judged = [d for d, label in labels.items() if label >= self.relevance_level]
        relevant = np.array(sorted(self._column[d] for d in judged if d in self._column), dtype=np.int64)
        self._missing_relevant += len(judged) - len(relevant)
        return relevant

    def add_scores(self, query_id: str, columns: SampleColumns, relevant: np.ndarray, nonrelevant: np.ndarray,
                   nonfinite: int = 0) -> None:
        """Adds one query from the scores at `columns` (from `columns(query_id)`); `nonfinite` counts the
        NaN or infinite scores in its whole row."""
        self._add(query_id, columns, relevant, np.sort(np.asarray(nonrelevant, dtype=np.float64)), nonfinite)

    def add_scores_of(self, query_ids: Sequence[str], columns: Sequence[SampleColumns],
                      relevant: Sequence[np.ndarray], nonrelevant: Sequence[np.ndarray],
                      nonfinite: Sequence[int]) -> None:
        """`add_scores` of several queries: samples of one size are sorted in one call."""
        if len({len(v) for v in nonrelevant}) == 1:
            ascending = np.sort(np.stack(nonrelevant).astype(np.float64), axis=1)
        else:
            ascending = [np.sort(np.asarray(v, dtype=np.float64)) for v in nonrelevant]
        for query_id, cols, rel, non, count in zip(query_ids, columns, relevant, ascending, nonfinite, strict=True):
            self._add(query_id, cols, rel, non, count)

    def _add(self, query_id: str, columns: SampleColumns, relevant: np.ndarray, ascending: np.ndarray,
             nonfinite: int) -> None:
        if query_id in self._queries:
            raise ValueError(f"query {query_id!r} was already added")
        if nonfinite:
            raise ResultValidationError(
                f"score_samples: query {query_id!r} has {nonfinite} non-finite scores (NaN or inf); "
                "fix the model or its inputs so that every score is finite"
            )
        judged = [d for d, label in self.qrels.get(query_id, {}).items() if label >= self.relevance_level]
        absent_ids = tuple(sorted(d for d in judged if d not in self._column))
        self._queries[query_id] = QueryScoreSamples(
            relevant=np.sort(np.asarray(relevant, dtype=self.dtype)),
            nonrelevant=np.asarray(ascending, dtype=self.dtype),  # sorted as float64; rounding keeps the order
            n_relevant=len(columns.relevant),
            n_nonrelevant=self.num_docs - len(columns.relevant),
            absent=max(len(judged) - len(columns.relevant), 0),
            absent_ids=absent_ids,
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




def _subsample(values: np.ndarray, cap: int, seed: int, query_id: str) -> np.ndarray:
    if values.size <= cap:
        return values
    keep = query_rng(seed, query_id, cap).choice(values.size, size=cap, replace=False)
    return values[np.sort(keep)]


def _columns(samples: ScoreSamples, query_ids: Sequence[str], cap: int) -> dict[str, Any]:
    queries = [samples.queries[q] for q in query_ids]
    absent = [q.absent for q in queries]
    absent_ids = [d for q in queries for d in q.absent_ids]
    sampled = [_subsample(q.nonrelevant, cap, samples.seed, query_id) for q, query_id in zip(queries, query_ids,
                                                                                              strict=True)]
    lows, highs, codes = _quantize_all(sampled, samples.levels)
    relevant = [np.sort(np.asarray(q.relevant, dtype=np.float64)) for q in queries]
    said = {"absent_relevant": encode_array(np.array(absent, dtype=np.int64), "<u4")} if any(absent) else {}
    if said and len(absent_ids) == sum(absent):  # samples made before the ids were kept have none to write
        said["absent_ids"] = encode_strings(absent_ids)
    return {
        **said,
        "format": FORMAT,
        "num_docs": samples.num_docs,
        "relevance_level": samples.relevance_level,
        "seed": samples.seed,
        "samples_requested": samples.samples_requested,
        "samples_per_query": cap,
        "levels": samples.levels,
        "n_relevant": encode_array(np.array([q.n_relevant for q in queries], dtype=np.int64), "<u4"),
        "relevant": encode_array(np.concatenate(relevant) if relevant else np.zeros(0), "<f8"),
        "lo": encode_array(lows, "<f8"),
        "hi": encode_array(highs, "<f8"),
        "codes": encode_array(codes, "<u2"),  # per query, the first differences of its ascending codes
    }


def _quantize_all(sampled: Sequence[np.ndarray], levels: int, chunk: int = 64) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
    """Every query's sorted sample quantised: (lo, hi) per query (0, 0 when empty), codes round((s - lo) / (hi - lo)
    * levels) (all 0 when hi <= lo), stored as each query's first differences from 0, one query after the other.
    `chunk` queries at a time, so that the arrays stay in cache."""
    lows, highs = np.zeros(len(sampled)), np.zeros(len(sampled))
    out = np.empty(sum(len(v) for v in sampled), np.uint16)  # filled in place: no list of parts to concatenate
    at = 0
    for first in range(0, len(sampled), chunk):
        part = sampled[first:first + chunk]
        counts = np.array([len(v) for v in part], dtype=np.int64)
        values = np.concatenate([np.asarray(v, dtype=np.float64) for v in part])
        starts = np.cumsum(counts) - counts
        filled = counts > 0
        lo, hi = np.zeros(len(part)), np.zeros(len(part))
        lo[filled], hi[filled] = values[starts[filled]], values[starts[filled] + counts[filled] - 1]
        spread = np.where(hi > lo, hi - lo, np.inf)  # hi <= lo: every code 0
        values -= np.repeat(lo, counts)
        values /= np.repeat(spread, counts)
        values *= levels
        codes = np.rint(values, out=values).astype(np.int64)
        np.clip(codes, 0, levels, out=codes)
        deltas = np.diff(codes, prepend=0)
        deltas[starts[filled]] = codes[starts[filled]]  # each query's first difference is from 0
        out[at:at + deltas.size] = deltas
        at += deltas.size
        lows[first:first + chunk], highs[first:first + chunk] = lo, hi
    return lows, highs, out


def encoded_size(encoded: Mapping[str, Any]) -> int:
    """Bytes of the stored field (its columns' text dominates)."""
    return len(json.dumps(encoded, sort_keys=True).encode("utf-8"))


def encode_score_samples(samples: ScoreSamples, query_ids: Sequence[str]) -> dict[str, Any]:
    """The stored ``score_samples`` field, queries in `query_ids` order (lossless for decoded samples)."""
    queries = samples.queries
    if isinstance(queries, _PackedQueries) and queries.ids == tuple(query_ids):
        return queries.stored
    return _columns(samples, query_ids, samples.samples_per_query)


def packed(samples: ScoreSamples) -> ScoreSamples:
    """`samples` kept as the stored field they encode to (queries in id order), each query decoded from it when
    first read: what a Ray worker sends the driver, about 0.3 KB a query where the scores take 8 KB (float32,
    2,000 a query), and what the driver writes as it is (the same bytes as encoding the scores there)."""
    query_ids = tuple(sorted(samples.queries))
    return replace(samples, queries=_PackedQueries(query_ids, encode_score_samples(samples, query_ids)), flat=None)


def fit_to_budget(samples: ScoreSamples, query_ids: Sequence[str],
                  bytes_per_query: int = BYTES_PER_QUERY) -> ScoreSamples:
    """`samples` with samples_per_query lowered uniformly (a seeded subsample of each query's sample) until
    the stored field takes at most `bytes_per_query` a query."""
    budget = bytes_per_query * max(len(query_ids), 1)
    cap = samples.samples_per_query
    while True:
        size = encoded_size(_columns(samples, query_ids, cap))
        largest = min(cap, max((len(q.nonrelevant) for q in samples.queries.values()), default=0))
        if size <= budget or largest <= MIN_SAMPLES:
            break
        cap = max(MIN_SAMPLES, min(int(largest * budget / size * 0.97), largest - 1))
    if cap == samples.samples_per_query:
        return samples
    logger.info("score samples: reduced to %d per query to stay within %d bytes a query", cap, bytes_per_query)
    queries = {q: replace(v, nonrelevant=_subsample(v.nonrelevant, cap, samples.seed, q))
               for q, v in samples.queries.items()}
    return replace(samples, samples_per_query=cap, queries=queries)


def _validated(schema: type[_Strict], data: Mapping[str, Any], where: str):
    """`data` checked against `schema` (either stored format), with the sample cap within the request."""
    try:
        model = schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ResultValidationError(
            f"{where}{_field_path(first['loc'])}: {first['msg']} ({exc.error_count()} problem(s) in all); {_FIX}"
        ) from None
    if model.samples_per_query > model.samples_requested:
        raise ResultValidationError(f"{where}.samples_per_query: {model.samples_per_query} exceeds "
                                    f"samples_requested {model.samples_requested}; {_FIX}")
    return model


def decode_score_samples(data: Mapping[str, Any], query_ids: Sequence[str],
                         where: str = "score_samples") -> ScoreSamples:
    """Validates and decodes the stored field (format irboard-score-samples/2) of a result whose queries are
    `query_ids`; problems raise ResultValidationError naming the field."""
    model = _validated(ScoreSamplesColumns, data, where)
    n = len(query_ids)
    n_relevant = decode_array(model.n_relevant, "<u4", n, f"{where}.n_relevant").astype(np.int64)
    if n_relevant.size and int(n_relevant.max()) > model.num_docs:
        raise ResultValidationError(f"{where}.n_relevant: more relevant documents than num_docs; {_FIX}")
    counts = np.minimum(model.samples_per_query, model.num_docs - n_relevant)
    decoded = int(n_relevant.sum()) + int(counts.sum())
    if decoded > MAX_DECODED_PER_QUERY * n:
        raise ResultValidationError(f"{where}: its counts (samples_per_query {model.samples_per_query}, n_relevant) "
                                    f"claim {decoded} scores, over the cap of {MAX_DECODED_PER_QUERY} a query; {_FIX}")
    relevant = decode_array(model.relevant, "<f8", int(n_relevant.sum()), f"{where}.relevant")
    absent = None if model.absent_relevant is None else \
        decode_array(model.absent_relevant, "<u4", n, f"{where}.absent_relevant").astype(np.int64)
    absent_ids = _absent_ids(model, absent, where)
    lows = decode_array(model.lo, "<f8", n, f"{where}.lo")
    highs = decode_array(model.hi, "<f8", n, f"{where}.hi")
    deltas = decode_array(model.codes, "<u2", int(counts.sum()), f"{where}.codes")
    for name, column in (("relevant", relevant), ("lo", lows), ("hi", highs)):
        if not np.isfinite(column).all():
            raise ResultValidationError(f"{where}.{name}: every score must be finite; {_FIX}")
    if (highs < lows).any():
        raise ResultValidationError(f"{where}: a query's hi is below its lo; {_FIX}")
    rel_at = np.concatenate(([0], np.cumsum(n_relevant)))
    code_at = np.concatenate(([0], np.cumsum(counts)))
    # Every query's codes at once, in place in one array: the deltas, less the previous query's last code at each
    # query's first one, summed up in one running sum (a query's last code is the sum of its deltas).
    has_codes = counts > 0
    firsts = code_at[:-1][has_codes]
    last = np.zeros(n, dtype=np.int64)
    if firsts.size:
        last[has_codes] = np.add.reduceat(deltas, firsts, dtype=np.int64)
    bad = last > model.levels
    # A fall between consecutive relevant scores of one query (not from one query's last to the next's first).
    falls = np.flatnonzero(np.diff(relevant) < 0) + 1
    owners = np.searchsorted(rel_at[1:], falls, side="right")
    falling = owners[falls - 1 >= rel_at[owners]]
    if bad.any() or falling.size:
        first = min(int(np.argmax(bad)) if bad.any() else n, int(falling.min()) if falling.size else n)
        if bad[first]:
            raise ResultValidationError(f"{where}.codes: query {query_ids[first]!r} has codes above {model.levels}; "
                                        f"{_FIX}")
        raise ResultValidationError(f"{where}.relevant: query {query_ids[first]!r} is not in ascending order; {_FIX}")
    codes = deltas.astype(np.int64)
    codes[firsts[1:]] -= last[has_codes][:-1]
    np.cumsum(codes, out=codes)
    # value = lo + code * ((hi - lo) / levels), each operation as a per-query loop would do it
    nonrelevant = codes * np.repeat((highs - lows) / model.levels, counts)
    nonrelevant += np.repeat(lows, counts)
    queries = _DecodedQueries(tuple(query_ids), model.num_docs, relevant, rel_at, nonrelevant, code_at, absent,
                              absent_ids)
    if len(set(query_ids)) != n:  # repeated ids (a problem the result's checks name): one entry an id, no flat arrays
        return ScoreSamples(model.num_docs, model.relevance_level, model.seed, model.samples_requested,
                            model.samples_per_query, dict(queries.items()), model.levels)
    flat = FlatScores(queries, n_relevant, relevant, counts, nonrelevant, absent)
    return ScoreSamples(model.num_docs, model.relevance_level, model.seed, model.samples_requested,
                        model.samples_per_query, queries, model.levels, flat)


def _absent_ids(model: ScoreSamplesColumns, absent: np.ndarray | None, where: str) -> tuple[str, ...] | None:
    """The ids `absent_ids` names, as many as `absent_relevant` counts (None without the field)."""
    if model.absent_ids is None:
        return None
    if absent is None:
        raise ResultValidationError(f"{where}.absent_ids: names documents without absent_relevant to count them; "
                                    f"{_FIX}")
    claimed = int(absent.sum())
    ids = decode_strings(model.absent_ids, max_bytes=1024 * (claimed + 1), where=f"{where}.absent_ids") \
        if claimed else []
    if len(ids) != claimed:
        raise ResultValidationError(f"{where}.absent_ids: names {len(ids)} documents but absent_relevant counts "
                                    f"{claimed}; {_FIX}")
    return tuple(ids)


class _DecodedQueries(Mapping[str, QueryScoreSamples]):
    """The queries of decoded flat arrays, in `query_ids` order, each made when it is first asked for: a build reads
    the flat arrays (`ScoreSamples.flat_scores`) and asks for none of them."""

    def __init__(self, query_ids: tuple[str, ...], num_docs: int, relevant: np.ndarray, rel_at: np.ndarray,
                 nonrelevant: np.ndarray, code_at: np.ndarray, absent: np.ndarray | None = None,
                 absent_ids: tuple[str, ...] | None = None):
        self._ids, self._num_docs, self._absent = query_ids, num_docs, absent
        self._absent_ids = absent_ids
        self._absent_at = None if absent_ids is None else np.concatenate(([0], np.cumsum(absent)))
        self._relevant, self._rel_at, self._nonrelevant, self._code_at = relevant, rel_at, nonrelevant, code_at
        self._rows: dict[str, int] | None = None
        self._made: dict[str, QueryScoreSamples] = {}

    def __getitem__(self, query_id: str) -> QueryScoreSamples:
        made = self._made.get(query_id)
        if made is None:
            if self._rows is None:
                self._rows = {q: row for row, q in enumerate(self._ids)}
            row = self._rows[query_id]
            r0, r1 = int(self._rel_at[row]), int(self._rel_at[row + 1])
            c0, c1 = int(self._code_at[row]), int(self._code_at[row + 1])
            ids = () if self._absent_at is None else \
                self._absent_ids[int(self._absent_at[row]):int(self._absent_at[row + 1])]
            made = self._made[query_id] = QueryScoreSamples(
                self._relevant[r0:r1], self._nonrelevant[c0:c1], r1 - r0, self._num_docs - (r1 - r0),
                0 if self._absent is None else int(self._absent[row]), ids)
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


class _PackedQueries(Mapping[str, QueryScoreSamples]):
    """The queries of `packed` samples: their ids, and their stored field, decoded when a query is first read."""

    def __init__(self, query_ids: tuple[str, ...], stored: dict[str, Any]):
        self.ids, self.stored = query_ids, stored
        self._known = frozenset(query_ids)
        self._decoded: Mapping[str, QueryScoreSamples] | None = None

    def __getitem__(self, query_id: str) -> QueryScoreSamples:
        if query_id not in self._known:
            raise KeyError(query_id)
        if self._decoded is None:
            self._decoded = decode_score_samples(self.stored, self.ids).queries
        return self._decoded[query_id]

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._known

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __len__(self) -> int:
        return len(self.ids)


def _decode_sample_v1(sample: NonrelevantSampleModel, where: str) -> np.ndarray:
    if sample.hi < sample.lo:
        raise ResultValidationError(f"{where}: hi {sample.hi} is below lo {sample.lo}; {_FIX}")
    # uint16 deltas in two byte planes: the same layout as a numeric column
    codes = np.cumsum(decode_array(sample.data, "<u2", sample.count, f"{where}.data").astype(np.int64))
    if codes.size and codes[-1] > LEGACY_LEVELS:
        raise ResultValidationError(f"{where}.data: codes exceed {LEGACY_LEVELS}; {_FIX}")
    return sample.lo + codes * ((sample.hi - sample.lo) / LEGACY_LEVELS)


def _field_path(loc: tuple) -> str:
    """('queries', 'q1', 'relevant', 0) -> ".queries['q1'].relevant[0]"."""
    parts = []
    for i, part in enumerate(loc):
        is_key = isinstance(part, int) or (i > 0 and loc[i - 1] == "queries")
        parts.append(f"[{part!r}]" if is_key else f".{part}")
    return "".join(parts)


def decode_score_samples_v1(data: Mapping[str, Any], where: str = "score_samples") -> ScoreSamples:
    """Validates and decodes a version-2 result's field (format irboard-score-samples/1)."""
    model = _validated(ScoreSamplesModel, data, where)
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
            nonrelevant=_decode_sample_v1(q.nonrelevant, f"{at}.nonrelevant"),
            n_relevant=q.n_relevant,
            n_nonrelevant=q.n_nonrelevant,
        )
    return ScoreSamples(model.num_docs, model.relevance_level, model.seed, model.samples_requested,
                        model.samples_per_query, queries, LEGACY_LEVELS)
