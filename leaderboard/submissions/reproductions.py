"""The reproduction ledger: one record per reproduced result, `reproductions/<model_slug>/<dataset_slug>.json`.

A record says "the result file with these bytes (sha256) was obtained again by running its declared artifact":
it is written by `irboard reproduce --ledger` in the maintainers' workflow (.github/workflows/reproduce.yml), and a
pull request that touches `reproductions/` changes a file outside results/, so the tooling gate holds it for a
maintainer's approval: a submitter cannot add a record for their own result. A record names the result's bytes,
so it stands exactly as long as those bytes do: changes to other files (other results, irboard's code, judgments)
never take it away, and any change to the result file itself, even of one byte, leaves the result re-scored only
until it is reproduced again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluator.artifact import AnyArtifact, Artifact
from evaluator.errors import IrboardError, one_line
from evaluator.result import check_id, result_path, write_atomic
from leaderboard.submissions.loaded import LoadedResult
from leaderboard.submissions.reproduce import Reproduction
from leaderboard.submissions.sandbox import NOT_ISOLATED

LEDGER = "reproductions"  # beside results/ in the repository
FORMAT = "irboard-reproduction/1"
MAX_RECORD_BYTES = 4096


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


class Compared(_Strict):
    queries: int = Field(ge=1, le=10**7)
    depth: int = Field(ge=1, le=10**6)
    max_relative_score_difference: float = Field(ge=0.0, le=1.0)
    tolerance: float = Field(gt=0.0, le=1.0)


class Measured(_Strict):
    """The costs irboard measured while reproducing: read from the model it loaded, and its search rate there."""

    parameters: int | None = Field(None, ge=0, le=10**14)
    dim: int | None = Field(None, ge=1, le=10**7)
    queries_per_s: float | None = Field(None, gt=0.0, le=1e12)


class Record(_Strict):
    """One reproduced result."""

    format: str = Field(pattern=f"^{FORMAT}$")
    model_id: str
    dataset_id: str
    result_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    artifact: AnyArtifact
    compared: Compared
    measured: Measured = Measured()
    reproduced_at: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
    irboard_commit: str = Field("", pattern=r"^([0-9a-f]{7,40}(-dirty)?)?$")
    # how the submitted code was isolated (sandbox.py, or the container); "" for a spec, which runs irboard's code
    isolation: str = Field("", max_length=200, pattern=r"^[^<>\x00-\x1f]*$")


def record_path(ledger: Path | str, model_id: str, dataset_id: str) -> Path:
    """Where the record of (model, dataset) lies: the result's own path, under the ledger instead of results/."""
    return result_path(model_id, dataset_id, ledger)


def write_record(reproduction: Reproduction, ledger: Path | str, tolerance: float, irboard_commit: str = "",
                 now: datetime | None = None) -> Path:
    """Record a successful reproduction (atomically); an unsuccessful one has nothing to record."""
    if not reproduction.reproduced:
        raise IrboardError(f"{reproduction.path}: not reproduced ({reproduction.difference}); nothing to record")
    if reproduction.isolation == NOT_ISOLATED:
        raise IrboardError(f"{reproduction.path}: reproduced without isolation (--no-isolation), so not blind; it is "
                           "never recorded: reproduce it isolated")
    when = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    record = Record(format=FORMAT, model_id=reproduction.model_id, dataset_id=reproduction.dataset_id,
                    result_sha256=reproduction.result_sha256,
                    artifact=reproduction.artifact or Artifact(spec=reproduction.spec, revision=reproduction.revision),
                    compared=Compared(queries=reproduction.queries, depth=reproduction.depth,
                                      max_relative_score_difference=reproduction.max_score_difference,
                                      tolerance=tolerance),
                    measured=Measured(parameters=reproduction.parameters, dim=reproduction.dim,
                                      queries_per_s=reproduction.queries_per_s),
                    reproduced_at=when, irboard_commit=irboard_commit, isolation=reproduction.isolation)
    path = record_path(ledger, reproduction.model_id, reproduction.dataset_id)
    write_atomic(path, json.dumps(record.model_dump(mode="json"), sort_keys=True, indent=1) + "\n")
    return path


def read_record(path: Path) -> Record:
    """A record, strictly: one line naming the file and the field on any problem."""
    try:
        if path.stat().st_size > MAX_RECORD_BYTES:
            raise IrboardError(f"{path}: over {MAX_RECORD_BYTES} bytes; a reproduction record is a few hundred")
        record = Record.model_validate(json.loads(path.read_bytes()))
        check_id(record.model_id, "model_id")
        check_id(record.dataset_id, "dataset_id")
    except (OSError, ValueError, RecursionError) as error:  # JSON, pydantic and id errors are ValueErrors
        if isinstance(error, ValidationError):
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(top level)"
            error = f"{where}: {first['msg']}"
        elif isinstance(error, RecursionError):
            error = "nested too deeply"
        raise IrboardError(one_line(f"{path}: not a reproduction record ({error}); records are written by irboard "
                                    "reproduce --ledger")) from None
    if path != record_path(path.parents[1], record.model_id, record.dataset_id):
        raise IrboardError(f"{path}: the record names {record.model_id} on {record.dataset_id}, whose record lies at "
                           f"{record_path(path.parents[1], record.model_id, record.dataset_id)}")
    return record


def reproduced_records(result_paths: Iterable[tuple[str, str, str]], ledger: Path | str,
                       problems: list[str]) -> dict[str, Record]:
    """{path: its record} for the result files (of (path, model id, dataset id)) whose bytes a ledger record names;
    a record that cannot be read is a problem, a record for other bytes (a result changed since) does not count."""
    ledger, found = Path(ledger), {}
    for path, model_id, dataset_id in result_paths:
        where = record_path(ledger, model_id, dataset_id)
        if not where.is_file():
            continue
        try:
            record = read_record(where)
        except IrboardError as error:
            problems.append(str(error))
            continue
        if record.result_sha256 == hashlib.sha256(Path(path).read_bytes()).hexdigest():
            found[path] = record
    return found


def mark_reproduced(results: list[LoadedResult], ledger: Path | str | None, problems: list[str]) -> list[LoadedResult]:
    """`results` with those a ledger record names marked reproduced, with the costs measured while reproducing them;
    unchanged when there is no ledger folder. Problems with records are added to `problems`."""
    if ledger is None or not Path(ledger).is_dir():
        return results
    records = reproduced_records(((r.path, r.model.id, r.dataset_id) for r in results), ledger, problems)
    return [replace(r, reproduced=True, measured=records[r.path].measured.model_dump()) if r.path in records else r
            for r in results]
