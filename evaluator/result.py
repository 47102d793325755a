"""The result file: one JSON per (model, dataset), schema version 3 (see architecture.md and docs/result-format.md).

On disk the metadata, settings, means and provenance are readable JSON; the bulky parts (per-query values,
the stored ranking, score samples) are binary columns inside the same document (evaluator/columns.py).
In memory a `ResultFile` holds those parts as numpy arrays. Versions 1 and 2 (everything expanded as
JSON) are still read, and `irboard migrate` rewrites them as version 3.

Everything a result holds comes from strangers as often as from us, so reading is strict: unknown fields
are rejected, numbers are finite and bounded, model and dataset ids use a small ASCII alphabet matched
as whole strings, query and document ids hold no whitespace or control characters, and every column is
checked against the counts that the readable part declares before it is inflated.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evaluator import below as below_part
from evaluator.artifact import AnyArtifact
from evaluator.below import Below, BelowColumns
from evaluator.columns import decode_array, decode_strings, encode_array, encode_strings, encode_text
from evaluator.errors import OutputExistsError, ResultValidationError
from evaluator.id_table import IdTable
from evaluator.metrics.names import parse_measure
from evaluator.score_samples import (
    ScoreSamples,
    decode_score_samples,
    decode_score_samples_v1,
    encode_score_samples,
)
from evaluator.source import Source

SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
# The size cap is stated per query: metadata plus about 2 KB a query (depth-100 ranking and score samples)
# fit with room to spare; a deeper ranking or many more metrics need a file of their own size class.
BASE_BYTES = 1_000_000
BYTES_PER_QUERY = 4_096
LEGACY_MAX_BYTES = 10 * 1024 * 1024  # versions 1 and 2
# A split file (readable part, main metric's per-query values, address of the full file) has its own, small cap.
SPLIT_BASE_BYTES = 64 * 1024
SPLIT_BYTES_PER_QUERY = 64
MAX_READ_BYTES = 512 * 1024 * 1024  # refused before reading, whatever the header says
FLOAT_DECIMALS = 10  # readable means; enough that a mean and the mean of its parts agree to 1e-9
MEAN_TOLERANCE = 1e-6
FEWER = "fewer metrics with --metrics, or for --model a smaller --top-k"  # what shrinks a result over its cap

MODEL_TYPES = ("lexical", "sparse", "dense", "hybrid", "late-interaction", "other")
# An id is ASCII letters, digits and . _ - separated by single slashes; no empty, "." or ".." segment.
_ID_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._-]*"
ID_PATTERN = re.compile(rf"{_ID_SEGMENT}(?:/{_ID_SEGMENT})*")
SLUG_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]*")
MAX_TEXT_ID_CHARS = 500
# A stored ranking decodes to at most this many entries a query, whatever its lengths claim (ten times what the
# per-query size cap lets a real ranking hold), so that a small file cannot make the reader inflate gigabytes.
MAX_RUN_ENTRIES_PER_QUERY = 10_000
# Query and document ids: any text but whitespace, control characters, line separators and lone surrogates
# (TREC files split on whitespace; a newline would break a file or a page).
_BAD_TEXT_ID_CHAR = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def check_id(value: str, what: str) -> str:
    """Return `value` if it is a valid model or dataset id, else raise with the rule and an example."""
    if not isinstance(value, str) or len(value) > 200 or not ID_PATTERN.fullmatch(value) or ".." in value:
        raise ValueError(
            f"{what} {value!r} is not a valid id: use ASCII letters, digits and '._-' in segments separated "
            "by '/', e.g. 'org/model-name' or 'beir/scifact'"
        )
    return value


def text_id_problem(value: str) -> str | None:
    """Why `value` cannot be a query or document id, or None when it can."""
    if not value:
        return "is empty"
    if len(value) > MAX_TEXT_ID_CHARS:
        return f"is longer than {MAX_TEXT_ID_CHARS} characters"
    bad = _BAD_TEXT_ID_CHAR.search(value)
    if bad:
        return f"contains {bad.group()!r} (whitespace or a control character)"
    return None


def _check_text_ids(values: Sequence[str], where: str) -> None:
    """All of `values` are valid ids (one regex pass over the joined text; details only on failure)."""
    if isinstance(values, IdTable):  # no string per id made
        joined, empty, longest = values.joined().decode("utf-8"), values.has_empty(), values.longest()
    else:
        joined, empty, longest = "\n".join(values), "" in values, max(map(len, values), default=0)
    if (joined.count("\n") != max(len(values) - 1, 0) or _BAD_TEXT_ID_CHAR.search(joined.replace("\n", ""))
            or empty or longest > MAX_TEXT_ID_CHARS):
        value = next(v for v in values if text_id_problem(v))
        raise ResultValidationError(f"{where}: id {value[:80]!r} {text_id_problem(value)}; ids may hold any "
                                    "text but whitespace and control characters")


def slugify(identifier: str) -> str:
    """The file-name form of an id: lower case, '/' becomes '__'. Refuses anything that could escape a folder."""
    check_id(identifier, "id")
    slug = identifier.lower().replace("/", "__")
    if not SLUG_PATTERN.fullmatch(slug):
        raise ValueError(f"id {identifier!r} gives slug {slug!r}, which is not [a-z0-9._-]")
    return slug


def result_path(model_id: str, dataset_id: str, root: Path | str = "results") -> Path:
    """The one place that turns ids into a result file's path: `<root>/<model_slug>/<dataset_slug>.json`."""
    return Path(root) / slugify(model_id) / f"{slugify(dataset_id)}.json"


def size_limit(num_queries: int) -> int:
    """The largest result file accepted for a dataset of `num_queries` queries."""
    return BASE_BYTES + BYTES_PER_QUERY * num_queries


def split_size_limit(num_queries: int) -> int:
    """The largest split result file (one with a `full` address) accepted for `num_queries` queries."""
    return SPLIT_BASE_BYTES + SPLIT_BYTES_PER_QUERY * num_queries


# ---------------------------------------------------------------------------------------------- readable part


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


class ModelBlock(_Strict):
    id: str
    type: Literal["lexical", "sparse", "dense", "hybrid", "late-interaction", "other"]
    revision: str = Field("", max_length=200)
    parameters: int | None = Field(None, ge=0, le=10**14)
    dim: int | None = Field(None, ge=1, le=10**7)
    license: str = Field("", max_length=100)
    open_weights: bool | None = None  # None (or absent): not stated
    training_datasets: list[str] | None = Field(None, max_length=500)  # None: not stated; []: trained on none
    url: str = Field("", max_length=500)
    artifact: AnyArtifact | None = None  # what `irboard reproduce` runs again (evaluator/artifact.py)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_id(value, "model.id")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if value and not re.fullmatch(r"https?://[^\s\"'<>`\\]+", value):
            raise ValueError(f"model.url {value!r} must be an http:// or https:// address without spaces or quotes")
        return value

    @field_validator("training_datasets")
    @classmethod
    def _training(cls, value: list[str] | None) -> list[str] | None:
        for item in value or ():
            if len(item) > 200:
                raise ValueError("model.training_datasets entries must be at most 200 characters")
        return value


class DatasetBlock(_Strict):
    id: str
    split: str = Field(pattern=r"^[a-zA-Z0-9._-]{1,50}$")
    num_queries: int = Field(ge=1, le=10**7)
    num_docs: int | None = Field(None, ge=0, le=10**11)
    qrels_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    revision: str = Field("", max_length=200)  # hub revision or archive checksum of the data used (since v3)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_id(value, "dataset.id")


class Settings(_Strict):
    top_k: int = Field(ge=1, le=10**6)
    ignore_identical_ids: bool = False
    relevance_level: int = Field(1, ge=1, le=1000)


class Coverage(_Strict):
    """Which queries the run answered (absent in files written before it was recorded): the judged queries,
    those of them with at least one ranked document, the run's queries without judgments (ignored), and how many
    documents the covered queries' rankings hold."""

    judged_queries: int = Field(ge=1, le=10**7)
    covered_queries: int = Field(ge=0, le=10**7)
    unjudged_run_queries: int = Field(0, ge=0, le=10**9)
    depth_min: int = Field(ge=0, le=10**9)
    depth_median: float = Field(ge=0, le=10**9)
    depth_max: int = Field(ge=0, le=10**9)


class Provenance(_Strict):
    irboard_version: str = Field(max_length=50)
    command: str = Field(max_length=2000)
    created_at: str = Field(max_length=50)
    hardware: str = Field("", max_length=300)
    timings: dict[str, float] = Field(default_factory=dict, max_length=100)
    peak_rss_bytes: int | None = Field(None, ge=0, le=2**60)
    index_bytes: int | None = Field(None, ge=0, le=2**60)  # size of the search index (since version 2)
    git_commit: str = Field("", pattern=r"^([0-9a-f]{7,40}(-dirty)?)?$")  # irboard's commit (since version 3)
    versions: dict[str, str] = Field(default_factory=dict, max_length=50)  # package -> version (since version 3)
    run_format: str = Field("", max_length=300)  # how `evaluate --run` read the run file (format, compression)
    coverage: Coverage | None = None
    source: Source | None = None  # the published run file the result was scored from (evaluator/source.py)

    @field_validator("timings")
    @classmethod
    def _timings(cls, value: dict[str, float]) -> dict[str, float]:
        for key, number in value.items():
            if not re.fullmatch(r"[a-z0-9_]{1,50}", key):
                raise ValueError(f"provenance.timings key {key!r} must be [a-z0-9_]")
            if not -1e15 <= number <= 1e15:
                raise ValueError(f"provenance.timings[{key!r}] = {number} is out of range")
        return value

    @field_validator("versions")
    @classmethod
    def _versions(cls, value: dict[str, str]) -> dict[str, str]:
        for key, version in value.items():
            if not re.fullmatch(r"[a-z0-9._-]{1,50}", key) or not re.fullmatch(r"[A-Za-z0-9.+_-]{0,50}", version):
                raise ValueError(f"provenance.versions entry {key!r}: {version!r} must be a package name and a version")
        return value


class Reference(_Strict):
    """A figure the model's authors published for this dataset (paper, model card, a reproduction page), as printed
    there: `value` keeps its decimals, which say how far a measured value may differ by rounding alone."""

    metric: str = Field(max_length=50)
    value: str = Field(pattern=r"^(0(\.[0-9]{1,6})?|1(\.0{1,6})?)$")  # in [0, 1], as printed
    url: str = Field(max_length=500, pattern=r"^https?://[^\s\"'<>`\\]+$")

    @field_validator("metric")
    @classmethod
    def _metric(cls, value: str) -> str:
        measure = parse_measure(value)
        if str(measure) != value:
            raise ValueError(f"references: {value!r} is not the canonical spelling; write {str(measure)!r}")
        return value


class Header(_Strict):
    """The readable part of a result: everything but the binary columns."""

    schema_version: Literal[3]
    model: ModelBlock
    dataset: DatasetBlock
    settings: Settings
    metrics: dict[str, float] = Field(max_length=200)
    provenance: Provenance
    references: list[Reference] = Field(default_factory=list, max_length=20)  # optional; absent when empty


class FullAddress(_Strict):
    """Where a split result's full file lies outside git: its address, sha256 and exact size."""

    url: str = Field(max_length=500, pattern=r"^https?://[^\s\"'<>`\\]+$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    bytes: int = Field(ge=1, le=MAX_READ_BYTES)


# ---------------------------------------------------------------------------------------------- columns


class PerQueryColumns(_Strict):
    """`values` is the (metrics in sorted name order) x (queries) float64 matrix, metric by metric. A split file
    names the metrics it keeps (sorted) in `metrics`; a whole file keeps every metric and leaves it out."""

    query_ids: str
    values: str
    metrics: list[str] | None = Field(None, min_length=1, max_length=200)


class RunColumns(_Strict):
    """The stored ranking: `lengths` per query (uint32), `docs` indices into the sorted unique `doc_ids` (uint32),
    `scores` (float64), queries in per_query order, in trec_eval order; `below`: beyond depth (evaluator/below.py)."""

    depth: int = Field(ge=1, le=10**6)
    doc_ids: str
    lengths: str
    docs: str
    scores: str
    below: BelowColumns | None = None


class Document(_Strict):
    """A version-3 file as stored."""

    schema_version: Literal[3]
    model: dict
    dataset: dict
    settings: dict
    metrics: dict
    provenance: dict
    references: list | None = None
    per_query: PerQueryColumns
    run: RunColumns | None = None
    score_samples: dict | None = None
    full: FullAddress | None = None


# ---------------------------------------------------------------------------------------------- in memory


@dataclass(frozen=True, eq=False)
class Run:
    """The top `depth` of every query's ranking in trec_eval order, as arrays aligned with the result's queries."""

    depth: int
    # sorted unique ids (code point order, which is UTF-8 byte order): a tuple as read, an `IdTable` (no Python
    # string per id) as `irboard evaluate --model` builds it
    doc_ids: Sequence[str]
    lengths: np.ndarray  # int64 (queries,)
    docs: np.ndarray  # int64 indices into doc_ids, all rankings concatenated
    scores: np.ndarray  # float64, aligned with docs
    below: Below | None = None  # each ranking's length and its judged entries below depth (all metrics re-score)

    @cached_property
    def offsets(self) -> np.ndarray:
        """Where each query's ranking starts in `docs` (and, last, where the final one ends)."""
        return np.concatenate(([0], np.cumsum(self.lengths)))

    @classmethod
    def from_rankings(cls, query_ids: Sequence[str], rankings: Mapping[str, Sequence[tuple[str, float]]],
                      depth: int) -> Run:
        """Arrays from {query_id: [(doc_id, score), ...]} in rank order, cut at `depth`."""
        cut = [rankings.get(q, ())[:depth] for q in query_ids]
        lengths = np.fromiter(map(len, cut), dtype=np.int64, count=len(cut))
        names = [doc for ranking in cut for doc, _ in ranking]
        scores = np.fromiter((score for ranking in cut for _, score in ranking), dtype=np.float64, count=len(names))
        table = sorted(set(names))
        position = {doc: i for i, doc in enumerate(table)}
        docs = np.fromiter(map(position.__getitem__, names), dtype=np.int64, count=len(names))
        return cls(depth, tuple(table), lengths, docs, scores)

    def cut(self, depth: int) -> Run:
        """The top `depth` of every ranking, with the doc-id table reduced to the ids still used."""
        if depth >= int(self.lengths.max(initial=0)):
            return Run(depth, self.doc_ids, self.lengths, self.docs, self.scores, self.below)
        if self.below is not None:
            raise ValueError("a run with judged entries below its depth cannot be cut shallower")
        rank = np.arange(self.docs.size) - np.repeat(self.offsets[:-1], self.lengths)
        keep = rank < depth
        used, docs = np.unique(self.docs[keep], return_inverse=True)
        table = (self.doc_ids.take(used) if isinstance(self.doc_ids, IdTable)
                 else tuple(self.doc_ids[i] for i in used.tolist()))
        return Run(depth, table, np.minimum(self.lengths, depth),
                   docs.astype(np.int64), self.scores[keep])

    def ranking(self, row: int) -> list[tuple[str, float]]:
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        return [(self.doc_ids[d], float(s)) for d, s in zip(self.docs[start:end], self.scores[start:end], strict=True)]


@dataclass(frozen=True, eq=False)
class ResultFile:
    """A validated result: the readable header plus per-query values, ranking and score samples as arrays."""

    header: Header
    query_ids: tuple[str, ...]  # sorted, one per query of the dataset's qrels
    per_query: dict[str, np.ndarray]  # metric -> float64 values aligned with query_ids
    run: Run | None = None
    score_samples: ScoreSamples | None = None
    source_version: int = SCHEMA_VERSION  # schema version of the file it was read from
    full: FullAddress | None = None  # a split file: per_query holds the main metric only, the rest lies at `full`

    schema_version = SCHEMA_VERSION

    def __post_init__(self) -> None:
        _check_arrays(self)

    @property
    def model(self) -> ModelBlock:
        return self.header.model

    @property
    def dataset(self) -> DatasetBlock:
        return self.header.dataset

    @property
    def settings(self) -> Settings:
        return self.header.settings

    @property
    def metrics(self) -> dict[str, float]:
        return self.header.metrics

    @property
    def provenance(self) -> Provenance:
        return self.header.provenance

    @property
    def references(self) -> list[Reference]:
        return self.header.references

    @property
    def path_parts(self) -> tuple[str, str]:
        return slugify(self.model.id), slugify(self.dataset.id)

    def values(self, metric: str) -> dict[str, float]:
        """One metric's per-query values as {query_id: value}."""
        return dict(zip(self.query_ids, self.per_query[metric].tolist(), strict=True))

    def rankings(self) -> dict[str, list[tuple[str, float]]]:
        """The stored ranking as {query_id: [(doc_id, score), ...]} (queries with an empty ranking left out)."""
        if self.run is None:
            return {}
        return {q: self.run.ranking(i) for i, q in enumerate(self.query_ids) if self.run.lengths[i]}


def _sorted_unique(values: Sequence[str]) -> bool:
    """Strictly increasing (sorting an already sorted list is one pass, in C: far faster than a Python loop)."""
    if isinstance(values, IdTable):
        return values.is_sorted_unique()
    return list(values) == sorted(values) and len(set(values)) == len(values)


def _check_arrays(result: ResultFile) -> None:
    """The invariants between the header and the arrays; raise ValueError with the field and the problem."""
    header, query_ids = result.header, result.query_ids
    if not header.metrics:
        raise ValueError("metrics is empty; a result needs at least one metric")
    if result.full is not None:
        _check_split(result)
    elif set(header.metrics) != set(result.per_query):
        differing = sorted(set(header.metrics) ^ set(result.per_query))
        raise ValueError(f"metrics and per_query must name the same metrics; differing: {differing[:5]}")
    if len(query_ids) != header.dataset.num_queries:
        raise ValueError(f"per_query has {len(query_ids)} queries but dataset.num_queries is "
                         f"{header.dataset.num_queries}")
    if not _sorted_unique(query_ids):
        raise ValueError("per_query.query_ids must be sorted and unique")
    _check_text_ids(query_ids, "per_query.query_ids")
    names, bounded = list(result.per_query), []
    for name in names:
        try:
            measure = parse_measure(name)
        except ValueError as error:
            raise ValueError(f"metrics: {error}") from None
        if str(measure) != name:
            raise ValueError(f"metrics: {name!r} is not the canonical spelling; write {str(measure)!r}")
        if result.per_query[name].shape != (len(query_ids),):
            raise ValueError(f"per_query[{name!r}] has {result.per_query[name].size} values for {len(query_ids)} "
                             "queries")
        bounded.append(measure.bounded)
    # all metrics at once (a build reads tens of thousands of files with 30 metrics each)
    matrix = np.stack([result.per_query[name] for name in names])
    limits = np.where(bounded, 1.0, 1e12)
    bad = ~np.isfinite(matrix) | (matrix < 0.0) | (matrix > limits[:, None])
    if bad.any():
        row, i = (int(k) for k in np.argwhere(bad)[0])
        limit = "[0, 1]" if bounded[row] else "[0, 1e12]"
        raise ValueError(f"per_query[{names[row]!r}][{query_ids[i]!r}] = {matrix[row, i]} is not a finite number in "
                         f"{limit}")
    means = np.array([header.metrics[name] for name in names])
    wrong = ~(np.abs(means - matrix.mean(axis=1)) <= MEAN_TOLERANCE)  # also catches a non-finite mean
    if wrong.any():
        row = int(np.flatnonzero(wrong)[0])
        expected = math.fsum(matrix[row].tolist()) / len(query_ids)
        raise ValueError(f"metrics[{names[row]!r}] = {means[row]} but the mean of its per_query values is "
                         f"{expected:.10f}")
    if result.run is not None:
        _check_run(result.run, query_ids, header.settings.top_k)
    if result.score_samples is not None:
        samples = result.score_samples
        if set(samples.queries) != set(query_ids):
            raise ValueError("score_samples must cover exactly the queries of per_query")
        if header.dataset.num_docs is not None and samples.num_docs != header.dataset.num_docs:
            raise ValueError(f"score_samples.num_docs is {samples.num_docs} but dataset.num_docs is "
                             f"{header.dataset.num_docs}")
        if samples.relevance_level != header.settings.relevance_level:
            raise ValueError("score_samples.relevance_level differs from settings.relevance_level")


def _check_split(result: ResultFile) -> None:
    """A split file keeps some metrics' per-query values and the address of the full file, nothing else."""
    if not result.per_query or not set(result.per_query) <= set(result.header.metrics):
        raise ValueError("per_query of a split file must hold some of the metrics in metrics (the main metric)")
    if result.run is not None or result.score_samples is not None:
        raise ValueError("a split file holds no run or score_samples; they belong in the full file at full.url")
    limit = size_limit(result.header.dataset.num_queries)
    if result.full.bytes > limit:
        raise ValueError(f"full.bytes is {result.full.bytes}, over the cap of {limit} bytes for "
                         f"{result.header.dataset.num_queries} queries (1 MB + 4 KB a query)")


def _check_run(run: Run, query_ids: Sequence[str], top_k: int) -> None:
    where = "run"
    if run.depth > top_k:
        raise ValueError(f"run.depth {run.depth} is deeper than settings.top_k {top_k}")
    if run.lengths.shape != (len(query_ids),) or (run.lengths < 0).any() or int(run.lengths.sum()) != run.docs.size:
        raise ValueError(f"{where}.lengths must give one count per query, summing to the stored entries")
    if run.lengths.size and int(run.lengths.max()) > run.depth:
        i = int(np.argmax(run.lengths))
        raise ValueError(f"{where}: query {query_ids[i]!r} has {run.lengths[i]} entries, more than depth {run.depth}")
    if run.docs.size and (run.docs.min() < 0 or run.docs.max() >= len(run.doc_ids)):
        raise ValueError(f"{where}.docs points outside doc_ids")
    if not _sorted_unique(run.doc_ids):
        raise ValueError(f"{where}.doc_ids must be sorted and unique")
    _check_text_ids(run.doc_ids, f"{where}.doc_ids")
    if not np.isfinite(run.scores).all():
        raise ValueError(f"{where}.scores must all be finite")
    below_part.check_run_below(run, query_ids, _check_text_ids)
    if run.docs.size < 2:
        return
    query_of = np.repeat(np.arange(len(query_ids)), run.lengths)
    same = query_of[1:] == query_of[:-1]
    pairs = np.sort(query_of * np.int64(len(run.doc_ids)) + run.docs)  # sorting beats np.unique's hashing 80x here
    if (pairs[1:] == pairs[:-1]).any():
        raise ValueError(f"{where}: a document appears twice in one query's ranking")
    # trec_eval order: score (as float32) descending, ties by doc id descending
    score32 = run.scores.astype(np.float32)
    higher = score32[:-1] > score32[1:]
    tie_ok = (score32[:-1] == score32[1:]) & (run.docs[:-1] > run.docs[1:])
    wrong = same & ~(higher | tie_ok)
    if wrong.any():
        i = int(query_of[1:][wrong][0])
        raise ValueError(f"{where}: the ranking of query {query_ids[i]!r} is not in trec_eval order "
                         "(score descending, ties by doc id descending)")


# ---------------------------------------------------------------------------------------------- building


def _describe_error(error: ValidationError, prefix: str = "") -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in (*([prefix] if prefix else []), *first["loc"])) or "(top level)"
    message = first["msg"].removeprefix("Value error, ")
    more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
    return f"{where}: {message}{more}"


def _header(data: Mapping[str, Any], source: str) -> Header:
    blocks = {key: data.get(key) for key in ("model", "dataset", "settings", "metrics", "provenance")}
    if data.get("references") is not None:
        blocks["references"] = data["references"]
    try:
        return Header.model_validate({"schema_version": SCHEMA_VERSION, **blocks})
    except ValidationError as error:
        raise ResultValidationError(f"{source}: {_describe_error(error)}") from None


def build_result(
    header: Mapping[str, Any] | Header,
    query_ids: Sequence[str],
    per_query: Mapping[str, np.ndarray],
    run: Run | None = None,
    score_samples: ScoreSamples | None = None,
    source: str = "<result>",
    source_version: int = SCHEMA_VERSION,
    full: FullAddress | None = None,
) -> ResultFile:
    """Validate the parts of a result and put them together; problems raise ResultValidationError."""
    if not isinstance(header, Header):
        header = _header(header, source)
    try:
        return ResultFile(header, tuple(query_ids), {k: np.asarray(v, dtype=np.float64) for k, v in per_query.items()},
                          run, score_samples, source_version, full)
    except ValueError as error:
        raise ResultValidationError(f"{source}: {error}") from None


_EXPANDED_KEYS = {"schema_version", "model", "dataset", "settings", "metrics", "per_query", "run", "provenance",
                  "score_samples", "full", "references"}


def parse_result(data: object, source: str = "<result>") -> ResultFile:
    """A result from its expanded form (versions 1 and 2, or the same shape with schema_version 3): per_query
    as {metric: {query_id: value}}, run as {"depth", "rankings": {query_id: [[doc_id, score], ...]}}, and
    score_samples as a ScoreSamples object or a version-2 `irboard-score-samples/1` field; a split result
    (version 3) has `full` and per_query holding only the metrics it keeps."""
    if not isinstance(data, dict):
        raise ResultValidationError(f"{source}: a result is a JSON object; regenerate it with irboard evaluate")
    unknown = sorted(set(data) - _EXPANDED_KEYS)
    if unknown:
        raise ResultValidationError(f"{source}: {unknown[0]}: unknown field; remove it")
    version = data.get("schema_version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise ResultValidationError(f"{source}: schema_version: expected one of {READABLE_VERSIONS}, got {version!r}")
    if version == 1 and data.get("score_samples") is not None:
        raise ResultValidationError(f"{source}: score_samples: not part of schema version 1")
    full = _full_address(data.get("full"), version, source)
    header = _header(data, source)
    per_query = data.get("per_query")
    if not isinstance(per_query, dict) or not per_query or not all(isinstance(v, dict) for v in per_query.values()):
        raise ResultValidationError(f"{source}: per_query: expected {{metric: {{query_id: value}}}}")
    query_sets = {frozenset(values) for values in per_query.values()}
    if len(query_sets) != 1:
        raise ResultValidationError(f"{source}: per_query metrics cover different query sets; every metric "
                                    "needs every query")
    query_ids = sorted(next(iter(query_sets)))
    arrays = {}
    for name, values in per_query.items():
        if not all(type(v) in (float, int) for v in values.values()):
            raise ResultValidationError(f"{source}: per_query[{name!r}]: every value must be a number")
        arrays[name] = np.array([values[q] for q in query_ids], dtype=np.float64)
    run = _expanded_run(data.get("run"), query_ids, source)
    samples = data.get("score_samples")
    if samples is not None and not isinstance(samples, ScoreSamples):
        samples = decode_score_samples_v1(samples, f"{source}: score_samples")
    return build_result(header, query_ids, arrays, run, samples, source, version, full)


def _full_address(block: object, version: object, source: str) -> FullAddress | None:
    if block is None:
        return None
    if version != SCHEMA_VERSION:
        raise ResultValidationError(f"{source}: full: split files exist since schema version {SCHEMA_VERSION}")
    try:
        return FullAddress.model_validate(block)
    except ValidationError as error:
        raise ResultValidationError(f"{source}: {_describe_error(error, 'full')}") from None


def _expanded_run(block: object, query_ids: Sequence[str], source: str) -> Run | None:
    if block is None:
        return None
    if not isinstance(block, dict) or set(block) - {"below"} != {"depth", "rankings"} \
            or type(block["depth"]) is not int or not isinstance(block["rankings"], dict) \
            or not 1 <= block["depth"] <= 10**6:
        raise ResultValidationError(f"{source}: run: expected {{'depth': int, 'rankings': {{query_id: [[doc_id, "
                                    "score], ...]}}}}")
    rankings = block["rankings"]
    extra = sorted(set(rankings) - set(query_ids))
    if extra:
        raise ResultValidationError(f"{source}: run.rankings: query {extra[0]!r} is not among the per_query queries")
    for query_id, ranking in rankings.items():
        if not isinstance(ranking, list | tuple) or len(ranking) > block["depth"] or not all(
                isinstance(e, list | tuple) and len(e) == 2 and isinstance(e[0], str)
                and type(e[1]) in (float, int) for e in ranking):
            raise ResultValidationError(f"{source}: run.rankings[{query_id!r}]: expected at most depth "
                                        "[doc_id, score] pairs")
    run = Run.from_rankings(query_ids, rankings, block["depth"])
    below = below_part.below_from_expanded(block["below"], query_ids, run.lengths, source) if "below" in block else None
    return Run(run.depth, run.doc_ids, run.lengths, run.docs, run.scores, below)


def _decode_document(data: dict, source: str, with_run: bool | Callable[[Header], bool] = True,
                     with_samples: bool | Callable[[Header], bool] = True) -> ResultFile:
    try:
        document = Document.model_validate(data)
    except ValidationError as error:
        raise ResultValidationError(f"{source}: {_describe_error(error)}") from None
    header = _header(data, source)
    num_queries = header.dataset.num_queries
    where = f"{source}: per_query"
    query_ids = decode_strings(document.per_query.query_ids, num_queries * (4 * MAX_TEXT_ID_CHARS + 1),
                               f"{where}.query_ids")
    if len(query_ids) != num_queries:
        raise ResultValidationError(f"{where}.query_ids: holds {len(query_ids)} ids, dataset.num_queries says "
                                    f"{num_queries}")
    names = sorted(header.metrics)
    if document.per_query.metrics is not None:
        kept = document.per_query.metrics
        if document.full is None or kept != sorted(set(kept)) or not set(kept) <= set(names):
            raise ResultValidationError(f"{where}.metrics: only a split file (with full) names its per-query "
                                        "metrics, sorted, unique and among metrics; remove it or add full")
        names = kept
    elif document.full is not None:
        raise ResultValidationError(f"{where}.metrics: a split file names the metrics whose per-query values it "
                                    "keeps; run `irboard split` on the full file")
    matrix = decode_array(document.per_query.values, "<f8", len(names) * num_queries, f"{where}.values")
    per_query = {name: matrix[i * num_queries:(i + 1) * num_queries] for i, name in enumerate(names)}
    run = None
    if document.run is not None and (with_run(header) if callable(with_run) else with_run):
        columns, at = document.run, f"{source}: run"
        lengths = decode_array(columns.lengths, "<u4", num_queries, f"{at}.lengths").astype(np.int64)
        if lengths.size and int(lengths.max()) > columns.depth:
            raise ResultValidationError(f"{at}.lengths: a ranking is longer than depth {columns.depth}")
        total = int(lengths.sum())
        if total > MAX_RUN_ENTRIES_PER_QUERY * num_queries:
            raise ResultValidationError(f"{at}.lengths: claim {total} ranked documents, over the cap of "
                                        f"{MAX_RUN_ENTRIES_PER_QUERY} a query; re-create the result with irboard "
                                        "evaluate (rankings are stored to depth 100)")
        table = decode_strings(columns.doc_ids, total * (4 * MAX_TEXT_ID_CHARS + 1), f"{at}.doc_ids")
        docs = decode_array(columns.docs, "<u4", total, f"{at}.docs").astype(np.int64)
        scores = decode_array(columns.scores, "<f8", total, f"{at}.scores")
        below = columns.below and below_part.decode_below(columns.below, num_queries, f"{at}.below")
        run = Run(columns.depth, tuple(table), lengths, docs, scores, below)
    samples = None
    if document.score_samples is not None and (with_samples(header) if callable(with_samples) else with_samples):
        samples = decode_score_samples(document.score_samples, query_ids, f"{source}: score_samples")
    return build_result(header, query_ids, per_query, run, samples, source, full=document.full)


def parse_result_text(text: str | bytes, source: str = "<result>",
                      with_run: bool | Callable[[Header], bool] = True,
                      with_samples: bool | Callable[[Header], bool] = True) -> ResultFile:
    """Validate a result file's text, of any readable schema version.

    `with_run` False, or a function of the header that returns False, leaves a version-3 file's ranking
    columns undecoded and unchecked (`run` is None): for readers that will not re-score it, such as a site
    build without judgments. `with_samples` does the same for its score samples (for a reader that has what
    it needs of them already, such as a build with a cached prediction). `irboard validate` always decodes
    and checks both."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as error:
        raise ResultValidationError(f"{source}: invalid JSON ({error}); fix or regenerate the file") from None
    if isinstance(data, dict) and data.get("schema_version") == SCHEMA_VERSION and "per_query" in data \
            and isinstance(data["per_query"], dict) and {"query_ids", "values"} <= set(data["per_query"]):
        return _decode_document(data, source, with_run, with_samples)
    return parse_result(data, source)


def read_result_bytes(path: Path | str) -> bytes:
    """A result file's bytes, refusing (before reading) a file far over any result's size cap."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_READ_BYTES:
            raise ResultValidationError(f"{path}: file is {size / 1e6:.0f} MB, far over any result's size cap; "
                                        f"re-create it with irboard evaluate ({FEWER})")
        return path.read_bytes()
    except OSError as error:
        raise ResultValidationError(f"{path}: cannot read ({error.strerror}); check the path") from None


def read_result(path: Path | str, with_run: bool | Callable[[Header], bool] = True,
                content: bytes | None = None, with_samples: bool | Callable[[Header], bool] = True) -> ResultFile:
    """Read and validate one result file, refusing files over the size cap for their query count
    (`with_run`, `with_samples`: see parse_result_text; `content`: the file's bytes, when the caller has read them with
    `read_result_bytes`, e.g. to hash them)."""
    path = Path(path)
    if content is None:
        content = read_result_bytes(path)
    size = len(content)
    result = parse_result_text(content, str(path), with_run, with_samples)
    limit = size_limit(result.dataset.num_queries)
    if result.source_version < SCHEMA_VERSION:
        limit = max(limit, LEGACY_MAX_BYTES)  # expanded JSON; `irboard migrate` brings it under the cap
    if result.full is not None and size > split_size_limit(result.dataset.num_queries):
        raise ResultValidationError(
            f"{path}: split file is {size} bytes, over its cap of {split_size_limit(result.dataset.num_queries)} "
            f"bytes for {result.dataset.num_queries} queries (64 KB + 64 bytes a query); keep only the main "
            "metric's per-query values (irboard split)")
    if size > limit:
        raise ResultValidationError(
            f"{path}: file is {size / 1e6:.1f} MB, over the cap of {limit / 1e6:.1f} MB for "
            f"{result.dataset.num_queries} queries (1 MB + 4 KB a query); re-create it with irboard evaluate ({FEWER})"
        )
    return result


# ---------------------------------------------------------------------------------------------- writing


def _readable(header: Header) -> dict[str, Any]:
    """The readable part as JSON values; a result without a declared artifact has no `model.artifact` key, so
    files written before it existed keep their bytes."""
    data = header.model_dump(mode="json")
    if data["model"]["artifact"] is None:
        del data["model"]["artifact"]
    if not data["references"]:
        del data["references"]  # files without references stay byte for byte as before
    if data["provenance"]["source"] is None:
        del data["provenance"]["source"]  # likewise files not made from a published run
    return data


def dump_result(result: ResultFile) -> str:
    """Deterministic version-3 text: readable blocks with sorted keys and rounded means, then the columns."""
    header = _readable(result.header)
    header["metrics"] = {name: round(value, FLOAT_DECIMALS) for name, value in header["metrics"].items()}
    names = sorted(result.per_query)
    matrix = np.concatenate([result.per_query[name] for name in names])
    document: dict[str, Any] = {
        **header,
        "per_query": {"query_ids": encode_strings(result.query_ids), "values": encode_array(matrix, "<f8")},
    }
    if result.full is not None:
        document["per_query"]["metrics"] = names
        document["full"] = result.full.model_dump(mode="json")
    if result.run is not None:
        run = result.run
        ids = encode_text(run.doc_ids.joined()) if isinstance(run.doc_ids, IdTable) else encode_strings(run.doc_ids)
        document["run"] = {"depth": run.depth, "doc_ids": ids,
                           "lengths": encode_array(run.lengths, "<u4"), "docs": encode_array(run.docs, "<u4"),
                           "scores": encode_array(run.scores, "<f8")}
        if run.below is not None:
            document["run"]["below"] = below_part.encode_below(run.below)
    if result.score_samples is not None:
        document["score_samples"] = encode_score_samples(result.score_samples, result.query_ids)
    return json.dumps(document, sort_keys=True, indent=1, ensure_ascii=True, allow_nan=False) + "\n"


def expand_result(result: ResultFile) -> dict[str, Any]:
    """The expanded form (everything as plain JSON, as versions 1 and 2 stored it) with the current schema
    version: for reading a result by eye, and for tests that edit one field. `parse_result` reads it back;
    score_samples stay a ScoreSamples object (None when absent)."""
    data = _readable(result.header)
    data["per_query"] = {name: result.values(name) for name in sorted(result.per_query)}
    if result.run is not None:
        data["run"] = {"depth": result.run.depth,
                       "rankings": {q: [list(entry) for entry in ranking] for q, ranking in result.rankings().items()}}
        if result.run.below is not None:
            data["run"]["below"] = below_part.expand_below(result.run.below, result.query_ids)
    data["score_samples"] = result.score_samples
    if result.full is not None:
        data["full"] = result.full.model_dump(mode="json")
    return data


def temporary_name(path: Path) -> str:
    """The prefix of the temporary file a write of `path` uses (hidden, so readers of the folder skip it)."""
    return f".{path.name}."


def write_atomic(path: Path | str, content: str | bytes, sync: bool = True) -> None:
    """Write via a temporary file in the same folder and rename, so readers never see half a file.

    Text is written as UTF-8; `sync=False` skips the flush to disk (for caches, which may be lost)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=temporary_name(path), suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp creates 0600; give the usual permissions
        with os.fdopen(handle, "wb") as stream:
            stream.write(content.encode("utf-8") if isinstance(content, str) else content)
            if sync:
                stream.flush()
                os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_result(result: ResultFile, path: Path | str, force: bool = False) -> Path:
    """Write `result` atomically as version 3; an existing file is replaced only with `force`."""
    path = Path(path)
    if path.exists() and not force:
        raise OutputExistsError(f"{path}: already exists; pass --force to overwrite it")
    # `result` was validated when it was built and dump_result is ASCII text (len = bytes), so reading it back
    # would repeat the same checks (tests/evaluator/test_result.py checks that it reads back unchanged)
    text = dump_result(result)
    limit = (split_size_limit if result.full is not None else size_limit)(result.dataset.num_queries)
    if len(text) > limit:
        raise ResultValidationError(
            f"{path}: the result would take {len(text) / 1e6:.1f} MB, over the cap of {limit / 1e6:.1f} MB for "
            f"{result.dataset.num_queries} queries; {FEWER}")
    write_atomic(path, text)
    return path


def schema_json() -> str:
    """The JSON Schema of the readable part, committed as results/schema.json (columns: docs/result-format.md)."""
    schema = Document.model_json_schema()
    schema["$defs"] = {**schema.get("$defs", {}), **Header.model_json_schema().get("$defs", {})}
    for key in ("model", "dataset", "settings", "provenance"):
        schema["properties"][key] = {"$ref": f"#/$defs/{Header.model_fields[key].annotation.__name__}"}
    return json.dumps(schema, sort_keys=True, indent=1) + "\n"
