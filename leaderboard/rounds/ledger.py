"""What a round folder holds, and which of it counts: commitments, reveals and judgments, each judged by the
instant it entered the repository.

Layout (docs/rounds.md):

    rounds/<name>/round.yml                  the declaration (leaderboard.rounds.spec)
    rounds/<name>/commitments/<entry>.json   {"model": {...}, "sha256": "<hex>", "uses_models": [...]}
    rounds/<name>/reveals/<entry>.run        the committed run, byte for byte (TREC format)
    rounds/<name>/reveals/<entry>.salt       the salt, as hex text
    rounds/<name>/pool.tsv                   the assessment file `irboard pool` writes
    rounds/<name>/judgments/qrels.txt        the judgments of the pool (TREC qrels)
    rounds/<name>/judgments/provenance.yml   who or what judged, and how
    rounds/<name>/scores.json                the board `irboard round score` writes

`<entry>` is the model's slug, then `@<revision>` when the model has one: one commitment per model revision.
A commitment is sha256(run bytes ‖ salt bytes); the salt (at least 16 random bytes) keeps a run from being
guessed from its hash before the reveal.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evaluator.errors import one_line
from evaluator.result import ModelBlock, slugify
from leaderboard.rounds.spec import ROUND_FILE, Round, RoundError

MAX_RUN_BYTES = 64 * 2**20  # a run at depth 1,000 over a few thousand queries; larger is refused unread
MAX_SMALL_FILE = 64_000
_HEX = re.compile(r"[0-9a-f]{64}")
_SALT = re.compile(r"[0-9a-f]{32,128}")
_REVISION = re.compile(r"[A-Za-z0-9._-]{1,100}")

# the folder's parts and the phase in which each may enter the repository
COMMITMENTS, REVEALS, JUDGMENTS = "commitments", "reveals", "judgments"
POOL_FILE, SCORES_FILE = "pool.tsv", "scores.json"
QRELS_FILE, PROVENANCE_FILE = "qrels.txt", "provenance.yml"
ALLOWED_IN = {COMMITMENTS: "open", REVEALS: "frozen", POOL_FILE: "revealed", JUDGMENTS: "revealed",
              SCORES_FILE: "judged"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CommitmentFile(_Strict):
    model: ModelBlock
    sha256: str
    # models the system runs inside (a reranker, a generator): a judge among them is flagged on the board
    uses_models: list[str] = Field(default_factory=list, max_length=20)

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not _HEX.fullmatch(value):
            raise ValueError("sha256 must be 64 lower-case hex digits: sha256(run bytes + salt bytes)")
        return value

    @field_validator("uses_models")
    @classmethod
    def _uses(cls, value: list[str]) -> list[str]:
        if any(not isinstance(item, str) or not 0 < len(item) <= 200 for item in value):
            raise ValueError("uses_models holds model ids of at most 200 characters")
        return value


class Judge(_Strict):
    model: str = Field(min_length=1, max_length=200)  # an open-weights model id, pinned by revision
    revision: str = Field(min_length=1, max_length=100)
    prompt: str = Field(min_length=1, max_length=20_000)
    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)


class Provenance(_Strict):
    assessors: Literal["human", "model"]
    description: str = Field(min_length=1, max_length=2000)
    judge: Judge | None = None  # required when assessors is "model"


def entry_name(model: ModelBlock) -> str:
    """The file stem of a model revision's commitment and reveal."""
    slug = slugify(model.id)
    if not model.revision:
        return slug
    if not _REVISION.fullmatch(model.revision):
        raise RoundError(f"model.revision {model.revision!r} must be letters, digits and '._-' (it names files)")
    return f"{slug}@{model.revision}"


def commitment_hash(run: bytes, salt_hex: str) -> str:
    return hashlib.sha256(run + bytes.fromhex(salt_hex)).hexdigest()


@dataclass
class Entry:
    """One commitment and what became of it. `status` is the outcome shown on the round page:
    committed (waiting for the freeze), refused (see `reason`), revealed, mismatch, withdrawn."""

    name: str
    committed_at: datetime
    commitment: CommitmentFile | None = None
    status: str = "committed"
    reason: str = ""
    revealed_at: datetime | None = None
    run_path: Path | None = None  # the revealed run, once its hash matched


@dataclass
class Ledger:
    round: Round
    now: datetime
    phase: str
    entries: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # files that cannot be read or must not be there
    judged_at: datetime | None = None
    provenance: Provenance | None = None

    def revealed(self) -> list[Entry]:
        return [entry for entry in self.entries if entry.status == "revealed"]


def _read_small(path: Path, limit: int = MAX_SMALL_FILE) -> bytes:
    size = path.stat().st_size
    if size > limit:
        raise RoundError(f"{path}: is {size:,} bytes, over the {limit:,} allowed")
    return path.read_bytes()


def _read_commitment(path: Path) -> CommitmentFile:
    try:
        data = json.loads(_read_small(path))
    except (ValueError, UnicodeDecodeError):
        raise RoundError(f"{path}: is not valid JSON; write it with `irboard round commit`") from None
    try:
        commitment = CommitmentFile.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise RoundError(f"{path}: {where}: {first['msg']}") from None
    if entry_name(commitment.model) != path.stem:
        raise RoundError(f"{path}: is named for another model; name it {entry_name(commitment.model)}.json")
    return commitment


def read_provenance(path: Path) -> Provenance:
    try:
        data = yaml.safe_load(_read_small(path).decode("utf-8"))
        provenance = Provenance.model_validate(data)
    except (yaml.YAMLError, UnicodeDecodeError):
        raise RoundError(f"{path}: is not valid UTF-8 YAML") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise RoundError(f"{path}: {where}: {first['msg']}") from None
    if provenance.assessors == "model" and provenance.judge is None:
        raise RoundError(f"{path}: judge: a model's judgments name the model, its revision, prompt and settings")
    return provenance


def _in_phase(round_: Round, part: str, instant: datetime) -> str | None:
    """Why a file of `part` may not enter at `instant`, or None."""
    phase = ALLOWED_IN[part]
    start, end = round_.spec.window(phase)
    if part in (POOL_FILE, SCORES_FILE):  # derived files may be remade later
        end = None
    if instant < start or (end is not None and instant >= end):
        until = f" until {end.isoformat()}" if end else ""
        return f"entered at {instant.isoformat()}, but {part} are accepted from {start.isoformat()}{until}"
    return None


def read_ledger(round_: Round, times: Mapping[str, datetime], now: datetime) -> Ledger:
    """Every entry of the round and its status at `now`; `times[path]` is when each file (relative to the round
    folder, '/'-separated) last changed in the repository. A file without a time has not entered it yet and
    does not count."""
    folder, spec = round_.folder, round_.spec
    ledger = Ledger(round_, now, spec.phase_at(now))
    changed = times.get(ROUND_FILE)
    if changed is not None and changed >= spec.phases.open:
        ledger.problems.append(f"{folder / ROUND_FILE}: changed at {changed.isoformat()}, after the round opened; "
                               "a round's rules are fixed once it is open")
    for unknown in sorted(_unknown_files(folder)):
        ledger.problems.append(f"{unknown}: not part of a round; see docs/rounds.md for the files a round holds")

    seen_models: dict[tuple[str, str], str] = {}
    seen_hashes: dict[str, str] = {}
    paths = sorted((folder / COMMITMENTS).glob("*.json")) if (folder / COMMITMENTS).is_dir() else []
    # in the order they entered, so that the first of two duplicates is the one kept
    dated = sorted((times[f"{COMMITMENTS}/{p.name}"], p) for p in paths if f"{COMMITMENTS}/{p.name}" in times)
    for committed_at, path in dated:
        entry = Entry(path.stem, committed_at)
        ledger.entries.append(entry)
        try:
            entry.commitment = _read_commitment(path)
        except RoundError as error:
            entry.status, entry.reason = "refused", str(error)
            ledger.problems.append(str(error))
            continue
        late = _in_phase(round_, COMMITMENTS, committed_at)
        key = (entry.commitment.model.id.lower(), entry.commitment.model.revision)
        if late:
            entry.status, entry.reason = "refused", late
        elif key in seen_models:
            entry.status, entry.reason = "refused", f"a second commitment for the model revision of {seen_models[key]}"
        elif entry.commitment.sha256 in seen_hashes:
            entry.status, entry.reason = "refused", f"the same run as {seen_hashes[entry.commitment.sha256]}"
        else:
            seen_models[key] = entry.name
            seen_hashes[entry.commitment.sha256] = entry.name
        if entry.status == "committed":
            _reveal(round_, entry, times, ledger)
    for path in _reveal_files(folder):
        if path.stem not in {entry.name for entry in ledger.entries if entry.status != "refused"}:
            ledger.problems.append(f"{path}: reveals no accepted commitment; only committed runs can be revealed")

    qrels_time, provenance_time = (times.get(f"{JUDGMENTS}/{name}") for name in (QRELS_FILE, PROVENANCE_FILE))
    if qrels_time is not None and provenance_time is not None:
        judged_at = max(qrels_time, provenance_time)
        late = _in_phase(round_, JUDGMENTS, judged_at)
        if late:
            ledger.problems.append(f"{folder / JUDGMENTS}: {late}")
        else:
            try:
                ledger.provenance = read_provenance(folder / JUDGMENTS / PROVENANCE_FILE)
                ledger.judged_at = judged_at
            except RoundError as error:
                ledger.problems.append(str(error))
    elif qrels_time is not None or provenance_time is not None:
        ledger.problems.append(f"{folder / JUDGMENTS}: needs both {QRELS_FILE} and {PROVENANCE_FILE}")
    return ledger


def _reveal(round_: Round, entry: Entry, times: Mapping[str, datetime], ledger: Ledger) -> None:
    folder = round_.folder
    run_key, salt_key = f"{REVEALS}/{entry.name}.run", f"{REVEALS}/{entry.name}.salt"
    if run_key not in times or salt_key not in times:
        if ledger.now >= round_.spec.phases.revealed:
            entry.status, entry.reason = "withdrawn", "not revealed before the reveals closed"
        return
    revealed_at = max(times[run_key], times[salt_key])
    late = _in_phase(round_, REVEALS, revealed_at)
    if late:
        entry.status, entry.reason = "withdrawn", f"reveal {late}"
        return
    try:
        salt = _read_small(folder / salt_key, 1000).decode("ascii").strip()
        run = _read_small(folder / run_key, MAX_RUN_BYTES)
    except (RoundError, UnicodeDecodeError, OSError) as error:
        entry.status, entry.reason = "mismatch", f"the reveal cannot be read: {error}"
        return
    if not _SALT.fullmatch(salt):
        entry.status, entry.reason = "mismatch", "the salt must be 32 to 128 lower-case hex digits"
    elif commitment_hash(run, salt) != entry.commitment.sha256:
        entry.status, entry.reason = "mismatch", "sha256(run + salt) differs from the commitment"
    else:
        entry.status, entry.revealed_at, entry.run_path = "revealed", revealed_at, folder / run_key


def _reveal_files(folder: Path) -> list[Path]:
    reveals = folder / REVEALS
    return sorted({p.with_suffix("") for p in reveals.iterdir()}) if reveals.is_dir() else []


def _unknown_files(folder: Path) -> list[Path]:
    known = {ROUND_FILE, POOL_FILE, SCORES_FILE}
    unknown = []
    for path in folder.rglob("*"):
        if path.is_dir():
            continue
        relative = path.relative_to(folder).as_posix()
        part, _, rest = relative.partition("/")
        ok = (relative in known
              or (part == COMMITMENTS and "/" not in rest and rest.endswith(".json"))
              or (part == REVEALS and "/" not in rest and rest.endswith((".run", ".salt")))
              or (part == JUDGMENTS and rest in (QRELS_FILE, PROVENANCE_FILE)))
        if not ok or path.is_symlink():
            unknown.append(path)
    return unknown


def pending_problems(round_: Round, paths: list[str], now: datetime) -> list[str]:
    """For a pull request: the files it adds or changes (relative to the round folder) that may not enter at
    `now`. Merge time decides in the end (`read_ledger`); this refuses early what would be refused then."""
    problems = []
    for relative in paths:
        part = relative.split("/", 1)[0]
        if relative == ROUND_FILE:
            if now >= round_.spec.phases.open:
                problems.append(f"{round_.folder / relative}: the round is open; its rules can no longer change")
            continue
        if part not in ALLOWED_IN:
            continue  # _unknown_files reports it
        why = _in_phase(round_, part, now)
        if why:
            problems.append(f"{round_.folder / relative}: {why.replace('entered', 'would enter', 1)}")
    return problems


def git_times(folder: Path) -> dict[str, datetime]:
    """When each file under `folder` last changed on the current branch, by the committer time of the commit on
    its first-parent history that changed it: for a pull request merged on GitHub, the time GitHub made the
    merge (or squash) commit. Times in files, and the dates of a pull request's own commits, are never read."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, check=True).stdout

    try:
        top = Path(git("rev-parse", "--show-toplevel").strip())
        relative = folder.resolve().relative_to(top.resolve()).as_posix()
        out = git("log", "--first-parent", "--diff-merges=first-parent", "--name-only", "--format=%x00%cI",
                  "--", ".")
    except (OSError, ValueError, subprocess.CalledProcessError) as error:
        raise RoundError(f"{folder}: cannot read its git history ({one_line(str(error))}); run inside a full "
                         "clone (fetch-depth: 0 in a workflow)") from None
    times: dict[str, datetime] = {}
    for block in out.split("\0")[1:]:
        lines = block.strip().splitlines()
        if not lines:
            continue
        instant = datetime.fromisoformat(lines[0]).astimezone(timezone.utc)
        for name in lines[1:]:
            if name.startswith(relative + "/"):
                times.setdefault(name[len(relative) + 1:], instant)  # newest first: keep the last change
    return {path: instant for path, instant in times.items() if (folder / path).exists()}
