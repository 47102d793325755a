"""The result file: one JSON per (model, dataset) (see architecture.md), schema version 2.

Version 2 adds two optional fields to version 1: `score_samples` (score distributions for recall-at-scale
prediction, format in evaluator/score_samples.py) and `provenance.index_bytes`. Version 1 files are migrated
on reading; nothing else changed.

Everything a result holds comes from strangers as often as from us, so the model is strict: unknown fields are
rejected, numbers must be finite, ids use a small ASCII alphabet, and URLs are http(s) only.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evaluator.errors import OutputExistsError, ResultValidationError
from evaluator.score_samples import ScoreSamplesModel

SCHEMA_VERSION = 2
MAX_RESULT_BYTES = 10 * 1024 * 1024
FLOAT_DECIMALS = 10  # metric values; enough that a mean and the mean of its rounded parts agree to 1e-9

MODEL_TYPES = ("lexical", "sparse", "dense", "hybrid", "late-interaction", "other")
# An id is ASCII letters, digits and . _ - separated by single slashes; no empty, "." or ".." segment.
_ID_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9._-]*"
ID_PATTERN = re.compile(rf"^{_ID_SEGMENT}(/{_ID_SEGMENT})*$")
SLUG_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
QUERY_ID_PATTERN = re.compile(r"^[\x21-\x7e]{1,200}$")  # printable ASCII, no spaces (TREC files split on them)


def check_id(value: str, what: str) -> str:
    """Return `value` if it is a valid model or dataset id, else raise with the rule and an example."""
    if not isinstance(value, str) or len(value) > 200 or not ID_PATTERN.match(value) or ".." in value:
        raise ValueError(
            f"{what} {value!r} is not a valid id: use ASCII letters, digits and '._-' in segments separated "
            "by '/', e.g. 'org/model-name' or 'beir/scifact'"
        )
    return value


def slugify(identifier: str) -> str:
    """The file-name form of an id: lower case, '/' becomes '__'. Refuses anything that could escape a folder."""
    check_id(identifier, "id")
    slug = identifier.lower().replace("/", "__")
    if not SLUG_PATTERN.match(slug):
        raise ValueError(f"id {identifier!r} gives slug {slug!r}, which is not [a-z0-9._-]")
    return slug


def result_path(model_id: str, dataset_id: str, root: Path | str = "results") -> Path:
    """The one place that turns ids into a result file's path: `<root>/<model_slug>/<dataset_slug>.json`."""
    return Path(root) / slugify(model_id) / f"{slugify(dataset_id)}.json"


def _finite(value: float, where: str) -> float:
    if not math.isfinite(value):
        raise ValueError(f"{where} is {value}, expected a finite number")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


class ModelBlock(_Strict):
    id: str
    type: Literal["lexical", "sparse", "dense", "hybrid", "late-interaction", "other"]
    revision: str = Field("", max_length=200)
    parameters: int | None = Field(None, ge=0)
    dim: int | None = Field(None, ge=1)
    license: str = Field("", max_length=100)
    open_weights: bool = True
    training_datasets: list[str] = Field(default_factory=list, max_length=500)
    url: str = Field("", max_length=500)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_id(value, "model.id")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if value and not re.match(r"^https?://[^\s\"'<>]+$", value):
            raise ValueError(f"model.url {value!r} must be an http:// or https:// address without spaces or quotes")
        return value

    @field_validator("training_datasets")
    @classmethod
    def _training(cls, value: list[str]) -> list[str]:
        for item in value:
            if len(item) > 200:
                raise ValueError("model.training_datasets entries must be at most 200 characters")
        return value


class DatasetBlock(_Strict):
    id: str
    split: str = Field(pattern=r"^[a-zA-Z0-9._-]{1,50}$")
    num_queries: int = Field(ge=1)
    num_docs: int | None = Field(None, ge=0)
    qrels_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        return check_id(value, "dataset.id")


class Settings(_Strict):
    top_k: int = Field(ge=1)
    ignore_identical_ids: bool = False
    relevance_level: int = Field(1, ge=1)


class RunBlock(_Strict):
    """The top of the ranking per query, so that anyone can re-score it."""

    depth: int = Field(ge=1)
    rankings: dict[str, list[tuple[str, float]]]

    @model_validator(mode="after")
    def _check(self) -> RunBlock:
        for query_id, ranking in self.rankings.items():
            if not QUERY_ID_PATTERN.match(query_id):
                raise ValueError(f"run.rankings: query id {query_id!r} must be 1-200 printable ASCII characters")
            if len(ranking) > self.depth:
                raise ValueError(f"run.rankings[{query_id!r}] has {len(ranking)} entries, more than depth {self.depth}")
            seen = set()
            for doc_id, score in ranking:
                _finite(score, f"run.rankings[{query_id!r}] score of {doc_id!r}")
                if not QUERY_ID_PATTERN.match(doc_id):
                    raise ValueError(f"run.rankings[{query_id!r}]: doc id {doc_id!r} must be printable ASCII")
                if doc_id in seen:
                    raise ValueError(f"run.rankings[{query_id!r}]: doc id {doc_id!r} appears twice")
                seen.add(doc_id)
        return self


class Provenance(_Strict):
    irboard_version: str = Field(max_length=50)
    command: str = Field(max_length=2000)
    created_at: str = Field(max_length=50)
    hardware: str = Field("", max_length=300)
    timings: dict[str, float] = Field(default_factory=dict)
    peak_rss_bytes: int | None = Field(None, ge=0)
    index_bytes: int | None = Field(None, ge=0)  # size of the search index (since version 2)

    @field_validator("timings")
    @classmethod
    def _timings(cls, value: dict[str, float]) -> dict[str, float]:
        for key, number in value.items():
            if not re.match(r"^[a-z0-9_]{1,50}$", key):
                raise ValueError(f"provenance.timings key {key!r} must be [a-z0-9_]")
            _finite(number, f"provenance.timings[{key!r}]")
        return value


class ResultFile(_Strict):
    schema_version: Literal[2]
    model: ModelBlock
    dataset: DatasetBlock
    settings: Settings
    metrics: dict[str, float]
    per_query: dict[str, dict[str, float]]
    run: RunBlock | None = None
    provenance: Provenance
    score_samples: ScoreSamplesModel | None = None  # since version 2

    @model_validator(mode="after")
    def _invariants(self) -> ResultFile:
        from evaluator.metrics import parse_measure  # local: metrics imports nothing from here

        if set(self.metrics) != set(self.per_query):
            missing = sorted(set(self.metrics) ^ set(self.per_query))
            raise ValueError(f"metrics and per_query must name the same metrics; differing: {missing[:5]}")
        if not self.metrics:
            raise ValueError("metrics is empty; a result needs at least one metric")
        query_sets = set()
        for name, values in self.per_query.items():
            bounded = parse_measure(name).bounded
            query_sets.add(frozenset(values))
            numbers = list(values.values())
            # checked in bulk; the message is worded only when something is wrong
            if not all(map(math.isfinite, numbers)) or (numbers and min(numbers) < 0.0) or (
                bounded and numbers and max(numbers) > 1.0
            ):
                query_id, value = next((q, v) for q, v in values.items()
                                       if not math.isfinite(v) or v < 0.0 or (bounded and v > 1.0))
                where = f"per_query[{name!r}][{query_id!r}] = {value}"
                if not math.isfinite(value):
                    raise ValueError(f"{where}, expected a finite number")
                raise ValueError(f"{where} is outside [0, 1]" if bounded else f"{where} is negative")
            mean = self.metrics[name]
            _finite(mean, f"metrics[{name!r}]")
            expected = math.fsum(numbers) / max(len(numbers), 1)
            if abs(mean - expected) > 1e-6:
                raise ValueError(
                    f"metrics[{name!r}] = {mean} but the mean of its per_query values is {expected:.10f}"
                )
        if len(query_sets) != 1:
            raise ValueError("per_query metrics cover different query sets; every metric needs every query")
        (queries,) = query_sets
        if len(queries) != self.dataset.num_queries:
            raise ValueError(
                f"per_query has {len(queries)} queries but dataset.num_queries is {self.dataset.num_queries}"
            )
        for query_id in queries:
            if not QUERY_ID_PATTERN.match(query_id):
                raise ValueError(f"per_query: query id {query_id!r} must be 1-200 printable ASCII characters")
        return self

    @property
    def path_parts(self) -> tuple[str, str]:
        return slugify(self.model.id), slugify(self.dataset.id)


def _describe_error(error: ValidationError) -> str:
    first = error.errors()[0]
    if first["type"] == "json_invalid":
        return f"invalid JSON ({first['msg'].removeprefix('Invalid JSON: ')}); fix or regenerate the file"
    where = ".".join(str(part) for part in first["loc"]) or "(top level)"
    message = first["msg"].removeprefix("Value error, ")
    more = f" (and {error.error_count() - 1} more problems)" if error.error_count() > 1 else ""
    return f"{where}: {message}{more}"


def parse_result(data: object, source: str = "<result>") -> ResultFile:
    """Validate a decoded JSON object; raise ResultValidationError naming the file and the field."""
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as error:
        problem = "a number is NaN or infinite; every number must be finite" if isinstance(error, ValueError) else error
        raise ResultValidationError(f"{source}: not JSON data: {problem}") from None
    return parse_result_text(text, source)


_VERSION_1 = re.compile(r'"schema_version"\s*:\s*1\s*[,}]')


def migrate(data: dict) -> dict:
    """Bring an older result up to the current schema version (1 -> 2: the new fields are optional)."""
    if isinstance(data, dict) and data.get("schema_version") == 1:
        data = {**data, "schema_version": 2}
    return data


def parse_result_text(text: str, source: str = "<result>") -> ResultFile:
    """Validate JSON text in strict JSON mode (arrays read as tuples, no NaN/Infinity)."""
    if _VERSION_1.search(text):
        try:
            text = json.dumps(migrate(json.loads(text)))
        except ValueError:
            pass  # invalid JSON: the validation below reports it
    try:
        return ResultFile.model_validate_json(text)
    except ValidationError as error:
        raise ResultValidationError(f"{source}: {_describe_error(error)}") from None


def read_result(path: Path | str) -> ResultFile:
    """Read and validate one result file, refusing oversized or deeply nested JSON before parsing it."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise ResultValidationError(f"{path}: cannot read ({error.strerror}); check the path") from None
    if size > MAX_RESULT_BYTES:
        raise ResultValidationError(
            f"{path}: file is {size / 1e6:.1f} MB, the limit is {MAX_RESULT_BYTES / 1e6:.0f} MB; "
            "store a shallower run (depth) or fewer metrics"
        )
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise ResultValidationError(f"{path}: not UTF-8 text (byte {error.start}); save the file as UTF-8") from None
    return parse_result_text(text, str(path))


def _rounded(value: object) -> object:
    if isinstance(value, float):
        return round(value, FLOAT_DECIMALS)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(item) for item in value]
    return value


def dump_result(result: ResultFile) -> str:
    """Deterministic JSON text: sorted keys, fixed rounding of metric values (run scores are kept as given)."""
    data = result.model_dump(mode="json")
    data["metrics"] = _rounded(data["metrics"])
    data["per_query"] = _rounded(data["per_query"])
    return json.dumps(data, sort_keys=True, indent=1, ensure_ascii=True, allow_nan=False) + "\n"


def write_atomic(path: Path | str, text: str) -> None:
    """Write via a temporary file in the same folder and rename, so readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # mkstemp creates 0600; give the usual permissions
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_result(result: ResultFile, path: Path | str, force: bool = False) -> Path:
    """Write `result` atomically; an existing file is replaced only with `force`."""
    path = Path(path)
    if path.exists() and not force:
        raise OutputExistsError(f"{path}: already exists; pass --force to overwrite it")
    text = dump_result(result)
    parse_result_text(text, str(path))  # what we write must read back
    write_atomic(path, text)
    return path


def schema_json() -> str:
    """The JSON Schema committed as results/schema.json."""
    return json.dumps(ResultFile.model_json_schema(), sort_keys=True, indent=1) + "\n"
