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
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evaluator.errors import IrboardError, one_line
from evaluator.metrics import parse_measures
from evaluator.result import check_id

PHASES = ("open", "frozen", "revealed", "judged", "published")
EXTENSIBLE = ("revealed", "judged", "published")  # the phases a documented extension may move later
ROUND_FILE = "round.yml"
NAME_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,79}")
# a GitHub account name: letters, digits and single hyphens, at most 39 characters (bots end in "[bot]")
LOGIN_PATTERN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
JUDGMENT_SOURCES = {
    "pool": "the pool of the revealed runs, judged after the reveals closed",
    "new-queries": "queries written after the freeze, judged on the pool of the revealed runs",
}


def check_login(value: str, what: str = "owner") -> str:
    if not isinstance(value, str) or not LOGIN_PATTERN.fullmatch(value):
        raise ValueError(f"{what} {value!r} is not a GitHub account name (letters, digits and '-', at most 39)")
    return value


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
    # where the judgments come from: made after the freeze, so that nobody could tune to them (docs/rounds.md)
    judgments: Literal["pool", "new-queries"] = "pool"
    # the GitHub accounts whose pull requests may add the pool, the judgments and the scores
    maintainers: list[str] = Field(default_factory=list, max_length=50)
    # anti-probing rules: each participant (the GitHub account that opened the commitment's pull request) may
    # commit this many runs; groups count as one participant for leave-one-group-out and the pool share cap
    runs_per_participant: int = Field(3, ge=1, le=100)
    groups: dict[str, list[str]] = Field(default_factory=dict, max_length=200)
    pool_share_cap: float = Field(1.0, gt=0, le=1)  # the largest share of the pool one participant's runs alone add

    @field_validator("maintainers")
    @classmethod
    def _maintainers(cls, value: list[str]) -> list[str]:
        return [check_login(login, "maintainers:") for login in value]

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[str, str] = {}
        for group, logins in value.items():
            if not NAME_PATTERN.fullmatch(group):
                raise ValueError(f"group name {group!r} must be lower case letters, digits and '._-'")
            for login in logins:
                check_login(login, f"groups.{group}:")
                if login.lower() in seen:
                    raise ValueError(f"{login} is in groups {seen[login.lower()]} and {group}; one group each")
                seen[login.lower()] = group
        return value

    def participant(self, owner: str) -> str:
        """The participant an account counts as: its group, else the account itself (lower case)."""
        for group, logins in self.groups.items():
            if owner.lower() in {login.lower() for login in logins}:
                return f"group {group}"
        return owner.lower()

    def is_maintainer(self, login: str) -> bool:
        return login.lower() in {name.lower() for name in self.maintainers}

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


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping: PyYAML keeps the last silently, so a reviewer
    reading the first `open:` of a long file would see other rules than the ones that count."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(None, None, f"the key {key_node.value!r} is given twice",
                                                            key_node.start_mark)
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)


def load_yaml(text: str, path: Path) -> object:
    """The YAML document `text` (the file `path`), or one RoundError naming the line: invalid YAML, a key given
    twice, an impossible date (a leap second, 30 February) or nesting too deep to read."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        problem = getattr(error, "problem", None)
        detail = f" ({one_line(problem)})" if problem else ""
        raise RoundError(f"{path}{line}: is not valid YAML{detail}; check the indentation and quoting") from None
    except ValueError as error:  # a timestamp that is no instant, e.g. second 60 or day 30 of February
        raise RoundError(f"{path}: holds an impossible date or time ({one_line(str(error))}); write instants "
                         "as 2027-01-15T00:00:00Z") from None
    except RecursionError:
        raise RoundError(f"{path}: is nested too deeply to read; a round file is a few flat fields") from None


def _describe(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the file"
    return f"{where}: {first['msg']}"


def read_round(folder: Path | str) -> Round:
    """Read `<folder>/round.yml`; one RoundError naming the file and field on any problem."""
    folder = Path(folder)
    path = folder / ROUND_FILE
    try:
        if path.is_symlink():
            raise OSError("a symbolic link")
        data = path.read_bytes()
    except FileNotFoundError:
        raise RoundError(f"{path}: not found; a round folder needs a {ROUND_FILE} (docs/rounds.md)") from None
    except OSError as error:
        raise RoundError(f"{path}: cannot be read ({one_line(str(error))}); save it as UTF-8 text") from None
    return Round(folder, parse_round(data, folder))


def parse_round(data: bytes, folder: Path) -> RoundSpec:
    """The declaration in `data` (one version of `<folder>/round.yml`)."""
    path = folder / ROUND_FILE
    if len(data) > 64_000:
        raise RoundError(f"{path}: is over 64 KB; a round declaration is a few lines")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise RoundError(f"{path}: is not UTF-8; save it as UTF-8 text") from None
    if len(text) > 64_000:
        raise RoundError(f"{path}: is over 64 KB; a round declaration is a few lines")
    data = load_yaml(text, path)
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
    return spec


def extension_problem(before: RoundSpec, after: RoundSpec, entered: datetime,
                      judgments_since: datetime | None = None) -> str | None:
    """Why `after`, a version of round.yml entering at `entered` once the round is open, is not the one permitted
    change: an extension that moves later phases later, each before it has begun (never the open or freeze
    instants, never earlier, nothing else). One exception, for late judgments: the judging window may be
    reopened (phases.judged moved later once it has begun) before the board is published, when no judgments
    entered before the extension (`judgments_since`: when the first did), so that none can be judged again once
    scores could be seen."""
    changed = sorted(key for key, value in after.model_dump(exclude={"phases"}).items()
                     if before.model_dump(exclude={"phases"})[key] != value)
    if changed:
        return f"changes {', '.join(changed)}; once the round is open only its later phases may move later"
    for phase in PHASES:
        old, new = getattr(before.phases, phase), getattr(after.phases, phase)
        if old == new:
            continue
        if phase not in EXTENSIBLE:
            return f"moves phases.{phase}; the open and freeze instants never move once the round is open"
        if new < old:
            return f"moves phases.{phase} earlier ({old.isoformat()} to {new.isoformat()}); an extension only delays"
        late_judgments = (phase == "judged" and entered < before.phases.published
                          and (judgments_since is None or judgments_since >= entered))
        if old <= entered and not late_judgments:
            return f"moves phases.{phase}, which had begun at {old.isoformat()} when the change entered"
    return None
