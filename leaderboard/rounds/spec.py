"""A sealed round's declaration, `rounds/<name>/round.yml`, and its phase machine.

A round moves through five phases at instants fixed in advance (docs/rounds.md):

    open       commitments are accepted (sha256 of a run and a secret salt, with the model's metadata)
    frozen     no more commitments; reveals (the run and its salt) are accepted
    revealed   no more reveals; the pool of the revealed runs is made and judged
    judged     the judgments are in; every revealed run is scored against them
    published  the board is public

Which phase a file belongs to is decided by the instant it entered the repository (the time GitHub records for
its merge, `leaderboard.rounds.ledger`), never by a date written in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evaluator.errors import IrboardError
from evaluator.metrics import parse_measures
from evaluator.result import check_id

PHASES = ("open", "frozen", "revealed", "judged", "published")
ROUND_FILE = "round.yml"
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,79}")


class RoundError(IrboardError):
    """A round file that cannot be read or breaks the round's rules."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Phases(_Strict):
    """The instant each phase begins (UTC); each strictly after the one before."""

    open: datetime
    frozen: datetime
    revealed: datetime
    judged: datetime
    published: datetime

    @field_validator("*")
    @classmethod
    def _aware(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("phase instants need a time zone; write them in UTC, e.g. 2027-01-15T00:00:00Z")
        return value.astimezone(timezone.utc)

    @model_validator(mode="after")
    def _ordered(self) -> Phases:
        instants = [getattr(self, phase) for phase in PHASES]
        for i in range(1, len(PHASES)):
            (first, a), (second, b) = (PHASES[i - 1], instants[i - 1]), (PHASES[i], instants[i])
            if not a < b:
                raise ValueError(f"phases.{second} ({b.isoformat()}) must come after phases.{first} ({a.isoformat()})")
        return self


class RoundSpec(_Strict):
    """What `round.yml` declares."""

    name: str
    dataset: str  # a registered dataset id whose queries are public
    split: str = "test"
    description: str = Field("", max_length=2000)
    phases: Phases
    pool_depth: int = Field(ge=1, le=1000)
    metrics: list[str] = Field(min_length=1, max_length=20)
    seed: int = Field(ge=0, lt=2**63)  # shuffles the assessment file; published with the round

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME_PATTERN.fullmatch(value):
            raise ValueError(f"name {value!r} must be lower case letters, digits and '._-' (it names the folder)")
        return value

    @field_validator("dataset")
    @classmethod
    def _dataset(cls, value: str) -> str:
        return check_id(value, "dataset")

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, value: list[str]) -> list[str]:
        parse_measures(value)  # raises naming the metric and the valid forms
        return value

    def phase_at(self, instant: datetime) -> str:
        """The phase the round is in at `instant` ("announced" before it opens)."""
        current = "announced"
        for phase in PHASES:
            if instant >= getattr(self.phases, phase):
                current = phase
        return current

    def window(self, phase: str) -> tuple[datetime, datetime | None]:
        """[start, end) of `phase`; the last phase never ends."""
        start = getattr(self.phases, phase)
        index = PHASES.index(phase)
        end = getattr(self.phases, PHASES[index + 1]) if index + 1 < len(PHASES) else None
        return start, end


@dataclass(frozen=True)
class Round:
    """A round folder and its declaration."""

    folder: Path
    spec: RoundSpec

    @property
    def name(self) -> str:
        return self.spec.name


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the file"
    return f"{where}: {first['msg']}"


def read_round(folder: Path | str) -> Round:
    """Read `<folder>/round.yml`; one RoundError naming the file and field on any problem."""
    folder = Path(folder)
    path = folder / ROUND_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RoundError(f"{path}: not found; a round folder needs a {ROUND_FILE} (docs/rounds.md)") from None
    except (OSError, UnicodeDecodeError) as error:
        raise RoundError(f"{path}: cannot be read ({error}); save it as UTF-8 text") from None
    if len(text) > 64_000:
        raise RoundError(f"{path}: is over 64 KB; a round declaration is a few lines")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise RoundError(f"{path}{line}: is not valid YAML; check the indentation and quoting") from None
    if not isinstance(data, dict):
        raise RoundError(f"{path}: must be a mapping of fields (name, dataset, phases, pool_depth, metrics, seed)")
    try:
        spec = RoundSpec.model_validate(data)
    except ValidationError as error:
        raise RoundError(f"{path}: {_describe(error)}") from None
    except IrboardError as error:
        raise RoundError(f"{path}: metrics: {error}") from None
    if spec.name != folder.name:
        raise RoundError(f"{path}: name {spec.name!r} differs from its folder {folder.name!r}; make them equal")
    return Round(folder, spec)
