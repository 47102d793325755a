"""What a round folder holds, and which of it counts: commitments, reveals and judgments, each judged by the
instant it entered the repository and by what the repository's history says of it.

Layout (docs/rounds.md):

    rounds/<name>/round.yml                  the declaration (leaderboard.rounds.spec)
    rounds/<name>/commitments/<entry>.json   {"model": {...}, "owner": "<login>", "sha256": "<hex>", "uses_models": [...]}
    rounds/<name>/reveals/<entry>.run        the committed run, byte for byte (TREC format)
    rounds/<name>/reveals/<entry>.salt       the salt, as hex text
    rounds/<name>/pool.tsv                   the assessment file `irboard pool` writes
    rounds/<name>/judgments/qrels.txt        the judgments of the pool (TREC qrels)
    rounds/<name>/judgments/provenance.yml   who or what judged, and how
    rounds/<name>/scores.json                the board `irboard round score` writes

`<entry>` is the model's slug, then `@<revision>` when the model has one: one commitment per model revision.
A commitment is sha256(binding ‖ run bytes ‖ salt bytes), where the binding names the round, the entry, the
model id and revision and the owner (the GitHub account that opened its pull request): a hash copied into
another entry, or under another account, can never be opened. The salt (at least 16 random bytes) keeps a run
from being guessed from its hash before the reveal.

The ledger reads the history, not only the tree: a commitment counts as it first entered, and one deleted or
changed afterwards is shown with its original as withdrawn or tampered; round.yml counts as it was when the
round opened, changed since only by an extension that delays its later phases (spec.extension_problem).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evaluator.errors import IrboardError, one_line
from evaluator.result import ModelBlock, slugify
from evaluator.trec import read_run
from leaderboard.rounds.history import COMMITMENTS, JUDGMENTS, MAX_SMALL_FILE, History, tree_history
from leaderboard.rounds.spec import (
    ROUND_FILE,
    Round,
    RoundError,
    RoundSpec,
    check_login,
    extension_problem,
    load_yaml,
    parse_round,
)

MAX_RUN_BYTES = 64 * 2**20  # a run at depth 1,000 over a few thousand queries; larger is refused unread
_HEX = re.compile(r"[0-9a-f]{64}")
_SALT = re.compile(r"[0-9a-f]{32,128}")
_REVISION = re.compile(r"[A-Za-z0-9._-]{1,100}")
# an entry's name: its owner's account (lower case), '~', the model's slug, then @revision; never a path (no '/',
# never starting with '.'). The owner in the name binds the entry to its account: no one can take the name of
# another's entry first (committing under another organisation's model id makes one's own entry, never theirs).
ENTRY_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,38}~[a-z0-9][a-z0-9._-]{0,199}(?:@[A-Za-z0-9._-]{1,100})?")
BINDING_TAG = "irboard sealed-round commitment v3"

# the folder's parts and the phase in which each may enter the repository
REVEALS = "reveals"
POOL_FILE, SCORES_FILE = "pool.tsv", "scores.json"
QRELS_FILE, PROVENANCE_FILE = "qrels.txt", "provenance.yml"
ALLOWED_IN = {COMMITMENTS: "open", REVEALS: "frozen", POOL_FILE: "revealed", JUDGMENTS: "revealed",
              SCORES_FILE: "judged"}
MAINTAINERS_ONLY = (POOL_FILE, SCORES_FILE, JUDGMENTS)  # derived files and the judgments


class Problem(str):
    """A problem's line, with the file it is about (`about`, relative to the round folder: a reveal by its entry,
    `reveals/<entry>`; the judgments by their folder) and, for a file whose every version is read, the instant
    the version it is about entered (`at`; None: the file as the tree holds it). The pull-request check answers
    for the problems of the files it adds or changes, and for no other (`pull_request_problems`)."""

    about: str
    at: datetime | None

    def __new__(cls, text: str, about: str, at: datetime | None = None) -> Problem:
        problem = super().__new__(cls, text)
        problem.about, problem.at = about, at
        return problem


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CommitmentFile(_Strict):
    model: ModelBlock
    owner: str  # the GitHub account that opens the commitment's pull request; bound into the hash
    sha256: str
    # models the system runs inside (a reranker, a generator): a judge among them is flagged on the board
    uses_models: list[str] = Field(default_factory=list, max_length=20)

    @field_validator("owner")
    @classmethod
    def _owner(cls, value: str) -> str:
        if check_login(value).endswith("[bot]"):
            raise ValueError(f"owner {value!r} is a bot account; a participant is a person's account")
        return value

    @field_validator("sha256")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not _HEX.fullmatch(value):
            raise ValueError("sha256 must be 64 lower-case hex digits: write it with `irboard round commit`")
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


def entry_name(model: ModelBlock, owner: str) -> str:
    """The file stem of the commitment and reveal of a model revision by `owner`: `<owner>~<slug>@<revision>`."""
    slug = f"{owner.lower()}~{slugify(model.id)}"
    if not model.revision:
        return slug
    if not _REVISION.fullmatch(model.revision):
        raise RoundError(f"model.revision {model.revision!r} must be letters, digits and '._-' (it names files)")
    return f"{slug}@{model.revision}"


def check_entry(name: str) -> str:
    """`name` if it can name an entry's files (never a path), else a RoundError."""
    if not isinstance(name, str) or not ENTRY_PATTERN.fullmatch(name):
        raise RoundError(f"entry {name!r} is not an entry name (owner~model-slug@revision: lower case letters, "
                         "digits and '._-'); give the commitment file's name without .json")
    return name


def commitment_binding(round_name: str, model: ModelBlock, owner: str) -> bytes:
    """What a commitment's hash binds besides the run: the round, the entry, the model revision and its owner."""
    return "\n".join([BINDING_TAG, round_name, entry_name(model, owner), model.id, model.revision, owner.lower(),
                      ""]).encode()


def commitment_hash(run: bytes, salt_hex: str, binding: bytes) -> str:
    return hashlib.sha256(binding + run + bytes.fromhex(salt_hex)).hexdigest()


@dataclass
class Entry:
    """One commitment and what became of it. `status` is the outcome shown on the round page: committed
    (waiting for the freeze), refused, revealed, mismatch (the reveal does not open the commitment), invalid (it
    does, but the run cannot be used), withdrawn (never revealed in time, or deleted), tampered (changed after it
    entered); `reason` says why. `commitment` is the file as it first entered."""

    name: str
    committed_at: datetime
    commitment: CommitmentFile | None = None
    status: str = "committed"
    reason: str = ""
    revealed_at: datetime | None = None
    run_path: Path | None = None  # the revealed run, once its hash matched
    run: dict[str, dict[str, float]] | None = None  # the revealed run as read, on the round's queries only
    changed_at: datetime | None = None  # when a commitment was deleted or changed after it entered

    @property
    def owner(self) -> str:
        return self.commitment.owner if self.commitment else ""


@dataclass
class Ledger:
    round: Round  # with the rules in force now (the declaration as it opened, and any extension)
    now: datetime
    phase: str
    entries: list[Entry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # files that cannot be read or must not be there
    judged_at: datetime | None = None
    provenance: Provenance | None = None
    rules: list[tuple[datetime, RoundSpec]] = field(default_factory=list)  # each accepted round.yml, oldest first
    query_ids: frozenset[str] | None = None  # the round's queries (None: not checked)
    queries_known: bool = True  # False: the round's queries could not be had, so no pool is made

    def revealed(self) -> list[Entry]:
        return [entry for entry in self.entries if entry.status == "revealed"]

    def spec_at(self, instant: datetime) -> RoundSpec:
        """The rules in force at `instant`: a file is judged by the rules of the moment it entered, so that an
        extension never changes the status of a file that entered before it."""
        current = self.rules[0][1]
        for entered, spec in self.rules:
            if entered <= instant:
                current = spec
        return current


def plain_file(folder: Path, relative: str) -> Path | None:
    """`folder/relative` when it is a plain file inside the round folder (no symbolic link on the way, which
    could lead a reader to any file of the machine, or to one that never ends), else None."""
    path = folder / relative
    try:
        inside = path.resolve().is_relative_to(folder.resolve()) and path.resolve() == folder.resolve() / relative
        return path if inside and path.is_file() and not path.is_symlink() else None
    except (OSError, ValueError):
        return None


def read_limited(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of `path`; None when it holds more."""
    with open(path, "rb") as stream:
        data = stream.read(limit + 1)
    return data if len(data) <= limit else None


def _read_small(path: Path, limit: int = MAX_SMALL_FILE) -> bytes:
    if path.is_symlink():
        raise RoundError(f"{path}: is a symbolic link; a round holds plain files")
    size = path.stat().st_size
    if size > limit:
        raise RoundError(f"{path}: is {size:,} bytes, over the {limit:,} allowed")
    return path.read_bytes()


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object, refused when a key is given twice (json keeps the last silently, so a reviewer reading the
    first "owner" would see another owner than the one that counts)."""
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise _DuplicateKey(f"the key {key!r} is given twice")
        found[key] = value
    return found


def parse_commitment(data: bytes, path: Path) -> CommitmentFile:
    if len(data) > MAX_SMALL_FILE:
        raise RoundError(f"{path}: is {len(data):,} bytes, over the {MAX_SMALL_FILE:,} allowed")
    try:
        parsed = json.loads(data, object_pairs_hook=_unique_keys)
    except (ValueError, UnicodeDecodeError, RecursionError) as error:  # RecursionError: '[[[[…' nested too deep
        detail = f" ({error})" if isinstance(error, _DuplicateKey) else ""
        raise RoundError(f"{path}: is not valid JSON{detail}; write it with `irboard round commit`") from None
    try:
        commitment = CommitmentFile.model_validate(parsed)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise RoundError(f"{path}: {where}: {first['msg']}") from None
    expected = entry_name(commitment.model, commitment.owner)
    if expected != path.stem:
        raise RoundError(f"{path}: is named for another model or owner; name it {expected}.json")
    return commitment


def read_provenance(path: Path) -> Provenance:
    try:
        data = load_yaml(_read_small(path).decode("utf-8"), path)
        provenance = Provenance.model_validate(data)
    except UnicodeDecodeError:
        raise RoundError(f"{path}: is not valid UTF-8 YAML") from None
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the file"
        raise RoundError(f"{path}: {where}: {first['msg']}") from None
    if provenance.assessors == "model" and provenance.judge is None:
        raise RoundError(f"{path}: judge: a model's judgments name the model, its revision, prompt and settings")
    return provenance


def in_phase(spec: RoundSpec, part: str, instant: datetime) -> str | None:
    """Why a file of `part` may not enter at `instant` under `spec`, or None."""
    phase = ALLOWED_IN[part]
    start, end = spec.window(phase)
    if part in (POOL_FILE, SCORES_FILE):  # derived files may be remade later
        end = None
    if instant < start or (end is not None and instant >= end):
        until = f" until {end.isoformat()}" if end else ""
        return f"entered at {instant.isoformat()}, but {part} are accepted from {start.isoformat()}{until}"
    return None


def _first_judgments(history: History) -> datetime | None:
    """When a judgments file first entered main (None: never)."""
    firsts = [versions[0][0] for relative, versions in history.versions.items()
              if relative.startswith(f"{JUDGMENTS}/") and versions]
    firsts += [instant for relative, instant in history.times.items() if relative.startswith(f"{JUDGMENTS}/")]
    return min(firsts, default=None)


def _rules(folder: Path, history: History, problems: list[str]) -> list[tuple[datetime, RoundSpec]]:
    """Every accepted version of round.yml, oldest first. Before the round opens anything goes; once it is open,
    a version that is not a permitted extension is a problem and the round keeps its rules."""
    path = folder / ROUND_FILE
    accepted: list[tuple[datetime, RoundSpec]] = []
    for entered, data in history.versions.get(ROUND_FILE, []):
        if data is None:
            if accepted:
                problems.append(Problem(f"{path}: deleted at {entered.isoformat()}; a round keeps its declaration",
                                        ROUND_FILE, entered))
            continue
        try:
            spec = parse_round(data, folder)
        except RoundError as error:
            if accepted:
                problems.append(Problem(f"{error} (entered at {entered.isoformat()}; the round keeps its earlier "
                                        "rules)", ROUND_FILE, entered))
                continue
            raise
        if accepted and entered >= accepted[-1][1].phases.open:
            why = extension_problem(accepted[-1][1], spec, entered, _first_judgments(history))
            if why:
                problems.append(Problem(f"{path}: changed at {entered.isoformat()}, after the round opened: {why}; "
                                        "the change is ignored", ROUND_FILE, entered))
                continue
        accepted.append((entered, spec))
    if not accepted:
        raise RoundError(f"{path}: has not entered the repository yet; merge it before anything else of the round")
    return accepted


def read_ledger(folder: Path, history: History | Mapping[str, datetime], now: datetime,
                queries: Callable[[RoundSpec], Collection[str]] | None = None) -> Ledger:
    """Every entry of the round in `folder` and its status at `now`. `history` says when each file (relative to
    the folder, '/'-separated) entered the repository (a plain mapping of last-change times stands for a history
    with one version of each file); a file that has not entered does not count. `queries(spec)`: the queries the
    round ranks (the dataset's registered ones); a revealed run ranking others is left out, as a problem."""
    folder = Path(folder)
    if not isinstance(history, History):
        history = tree_history(folder, history)
    # a file that is not a plain file of the folder (a link) is listed as a problem and never read
    history = History({relative: instant for relative, instant in history.times.items()
                       if relative == ROUND_FILE or plain_file(folder, relative) is not None}, history.versions,
                      history.backwards)
    problems: list[str] = list(history.backwards)
    rules = _rules(folder, history, problems)
    spec = rules[-1][1]
    ledger = Ledger(Round(folder, spec), now, spec.phase_at(now), problems=problems, rules=rules)
    if queries is not None:
        try:
            ledger.query_ids = frozenset(queries(spec))
        except IrboardError as error:
            ledger.queries_known = False
            ledger.problems.append(Problem(f"{folder}: {one_line(str(error))}; no pool can be made without them",
                                           ROUND_FILE))
    for unknown in sorted(_unknown_files(folder)):
        ledger.problems.append(f"{unknown}: not part of a round; see docs/rounds.md for the files a round holds")
    _commitments(ledger, history)
    for entry in ledger.entries:
        if entry.status == "committed":
            _reveal(ledger, entry, history.times)
    _copied_hashes(ledger)
    accepted = {entry.name: entry for entry in ledger.entries if entry.status not in ("refused", "tampered")}
    for path in _reveal_files(folder):  # each without its suffix: path.name is the entry (which may hold dots)
        entry, about = accepted.get(path.name), f"{REVEALS}/{path.name}"
        if entry is None:
            ledger.problems.append(Problem(f"{path}: reveals no accepted commitment; only committed runs can be "
                                           "revealed", about))
        elif entry.status == "withdrawn" and entry.changed_at is not None:
            ledger.problems.append(Problem(f"{path}: reveals a commitment its owner deleted at "
                                           f"{entry.changed_at.isoformat()}; a withdrawn entry is never pooled", about))
    _judgments(ledger, history.times)
    return ledger


def _commitments(ledger: Ledger, history: History) -> None:
    """Every commitment that ever entered, as it first entered, in that order (so that the first of two
    commitments for one model revision is the one kept)."""
    folder = ledger.round.folder
    dated = sorted((versions[0][0], relative) for relative, versions in history.versions.items()
                   if relative.startswith(f"{COMMITMENTS}/") and versions and versions[0][1] is not None)
    models: dict[tuple[str, str], str] = {}
    runs: dict[str, int] = {}
    for committed_at, relative in dated:
        versions = history.versions[relative]
        path = folder / relative
        name = Path(relative).stem
        entry = Entry(name, committed_at)
        ledger.entries.append(entry)
        try:
            if "/" in relative[len(COMMITMENTS) + 1:] or not relative.endswith(".json"):
                raise RoundError(f"{path}: not a commitment file (commitments/<entry>.json)")
            check_entry(name)
            entry.commitment = parse_commitment(versions[0][1], path)
        except RoundError as error:
            entry.status, entry.reason = "refused", str(error)
            ledger.problems.append(Problem(str(error), relative, committed_at))
            continue
        spec = ledger.spec_at(committed_at)
        late = in_phase(spec, COMMITMENTS, committed_at)
        model = entry.commitment.model
        key = (entry.owner.lower(), model.id.lower(), model.revision)
        participant = spec.participant(entry.owner)
        if late:
            entry.status, entry.reason = "refused", late
        elif key in models:
            entry.status, entry.reason = "refused", f"a second commitment for the model revision of {models[key]}"
        elif runs.get(participant, 0) >= spec.runs_per_participant:
            entry.status, entry.reason = "refused", (f"{participant} already has {spec.runs_per_participant} "
                                                     "commitments, the round's runs_per_participant")
        else:
            models[key] = name
            runs[participant] = runs.get(participant, 0) + 1
        last_at, last = versions[-1]
        if len(versions) > 1 and entry.status != "refused":
            entry.changed_at = last_at
            if last is None:
                entry.status, entry.reason = "withdrawn", f"deleted at {last_at.isoformat()}; shown as it entered"
            elif last != versions[0][1] or any(data != versions[0][1] for _, data in versions):
                entry.status, entry.reason = "tampered", (f"changed at {last_at.isoformat()} after it entered; "
                                                          "shown as it entered, and never scored")
                ledger.problems.append(Problem(f"{path}: changed at {last_at.isoformat()} after it entered at "
                                               f"{committed_at.isoformat()}; a commitment never changes", relative,
                                               last_at))


def _copied_hashes(ledger: Ledger) -> None:
    """Two commitments with one hash: one was copied. The hash binds its entry and owner, so only the original
    can be revealed; once one is, the others are refused as copies. Before that nothing is refused (the copy may
    have been merged first), and a later file is only marked."""
    groups: dict[str, list[Entry]] = {}
    for entry in ledger.entries:
        if entry.commitment is not None and entry.status != "refused":
            groups.setdefault(entry.commitment.sha256, []).append(entry)
    for entries in groups.values():
        if len(entries) < 2:
            continue
        opened = [entry for entry in entries if entry.status == "revealed"]
        original = opened[0] if opened else entries[0]
        for entry in entries:
            if entry is original:
                continue
            if opened:
                entry.status, entry.reason = "refused", (f"a copy of the hash of {original.name}, which its reveal "
                                                         "opened; a copied hash can never be opened")
                entry.run_path = entry.run = None
                ledger.problems.append(Problem(f"{ledger.round.folder / COMMITMENTS / entry.name}.json: copies the "
                                               f"hash of {original.name}", f"{COMMITMENTS}/{entry.name}.json",
                                               entry.committed_at))
            elif entry.status == "committed":
                entry.reason = (f"the same hash as {original.name}, merged earlier: only the entry and owner the "
                                "hash was made for can open it")


def _reveal(ledger: Ledger, entry: Entry, times: Mapping[str, datetime]) -> None:
    folder, spec = ledger.round.folder, ledger.round.spec
    run_key, salt_key = f"{REVEALS}/{entry.name}.run", f"{REVEALS}/{entry.name}.salt"
    if run_key not in times or salt_key not in times:
        if ledger.now >= spec.phases.revealed:
            entry.status, entry.reason = "withdrawn", "not revealed before the reveals closed"
        return
    revealed_at = max(times[run_key], times[salt_key])
    late = in_phase(ledger.spec_at(revealed_at), REVEALS, revealed_at)
    if late:
        entry.status, entry.reason = "withdrawn", f"reveal {late}"
        return
    try:
        salt = _read_small(folder / salt_key, 1000).decode("ascii").strip()
        run = _read_small(folder / run_key, MAX_RUN_BYTES)
    except (RoundError, UnicodeDecodeError, OSError) as error:
        entry.status, entry.reason = "mismatch", f"the reveal cannot be read: {one_line(str(error))}"
        return
    commitment = entry.commitment
    if not _SALT.fullmatch(salt):
        entry.status, entry.reason = "mismatch", "the salt must be 32 to 128 lower-case hex digits"
        return
    binding = commitment_binding(spec.name, commitment.model, commitment.owner)
    if commitment_hash(run, salt, binding) != commitment.sha256:
        entry.status, entry.reason = "mismatch", ("sha256(binding + run + salt) differs from the commitment: not "
                                                  "the run and salt this entry and owner committed")
        return
    entry.revealed_at = revealed_at
    why = _unusable(folder / run_key, ledger.query_ids)
    if isinstance(why, str):
        entry.status, entry.reason = "invalid", why
        ledger.problems.append(Problem(f"{folder / run_key}: {why}; left out of the pool", f"{REVEALS}/{entry.name}"))
        return
    entry.status, entry.run_path, entry.run = "revealed", folder / run_key, why


def _unusable(path: Path, query_ids: Collection[str] | None) -> str | dict[str, dict[str, float]]:
    """The run at `path`, or why it cannot be pooled: it cannot be read as a TREC run, or ranks queries that are
    not the round's."""
    try:
        run = read_run(path)
    except IrboardError as error:
        return f"cannot be read as a TREC run ({one_line(str(error)).replace(str(path), 'the run')})"
    if query_ids is not None:
        outside = sorted(set(run) - set(query_ids))
        if outside:
            return (f"ranks {len(outside):,} queries that are not the round's registered queries, e.g. "
                    f"{outside[0][:80]!r}; rank only the dataset's queries")
    return run


def _judgments(ledger: Ledger, times: Mapping[str, datetime]) -> None:
    folder = ledger.round.folder
    qrels_time, provenance_time = (times.get(f"{JUDGMENTS}/{name}") for name in (QRELS_FILE, PROVENANCE_FILE))
    if qrels_time is not None and provenance_time is not None:
        judged_at = max(qrels_time, provenance_time)
        late = in_phase(ledger.spec_at(judged_at), JUDGMENTS, judged_at)
        if late:
            ledger.problems.append(Problem(f"{folder / JUDGMENTS}: {late}", JUDGMENTS))
        else:
            try:
                ledger.provenance = read_provenance(folder / JUDGMENTS / PROVENANCE_FILE)
                ledger.judged_at = judged_at
            except (RoundError, OSError) as error:
                ledger.problems.append(Problem(one_line(str(error)), JUDGMENTS))
    elif qrels_time is not None or provenance_time is not None:
        ledger.problems.append(Problem(f"{folder / JUDGMENTS}: needs both {QRELS_FILE} and {PROVENANCE_FILE}",
                                       JUDGMENTS))


def _reveal_files(folder: Path) -> list[Path]:
    reveals = folder / REVEALS
    if reveals.is_symlink() or not reveals.is_dir():  # a link to a folder of the machine is never listed
        return []
    return sorted({p.with_suffix("") for p in reveals.iterdir()})


def known_file(relative: str) -> bool:
    """Is `relative` (to the round folder) the name of a file a round holds (docs/rounds.md)?"""
    part, _, rest = relative.partition("/")
    stem = rest.rsplit(".", 1)[0]
    return bool(relative in (ROUND_FILE, POOL_FILE, SCORES_FILE)
                or (part == COMMITMENTS and "/" not in rest and rest.endswith(".json") and ENTRY_PATTERN.fullmatch(stem))
                or (part == REVEALS and "/" not in rest and rest.endswith((".run", ".salt"))
                    and ENTRY_PATTERN.fullmatch(stem))
                or (part == JUDGMENTS and rest in (QRELS_FILE, PROVENANCE_FILE)))


def _unknown_files(folder: Path) -> list[Path]:
    unknown = []
    for path in folder.rglob("*"):
        if path.is_dir() and not path.is_symlink():
            continue
        if not known_file(path.relative_to(folder).as_posix()) or path.is_symlink():
            unknown.append(path)
    return unknown


def change_problems(ledger: Ledger, history: History, changes: Mapping[str, str], author: str,
                    now: datetime) -> list[str]:
    """For a pull request by `author`: the files it adds ("A"), changes ("M") or deletes ("D") (relative to the
    round folder) that it may not, now. Its author may add or delete only the files of the entries it owns,
    and add or change the pool, the judgments and the scores only as one of the round's maintainers; a
    commitment or reveal that is on main never changes; each file must be allowed in the phase it would enter
    now. Merge time decides again in the end (`read_ledger`)."""
    folder, spec = ledger.round.folder, ledger.round.spec
    before = [rules for entered, rules in ledger.rules if entered < now]  # the rules before this pull request
    base_spec = before[-1] if before else spec
    owners = {entry.name: entry.owner for entry in ledger.entries if entry.commitment is not None}
    problems = []
    for relative, change in sorted(changes.items()):
        path = folder / relative
        part = relative.split("/", 1)[0]
        stem = Path(relative).stem
        on_main = relative in history.versions or relative in history.times
        if change != "D" and (not known_file(relative) or path.is_symlink()):
            # the ledger lists it too, but from the tree, where the pull request's files are already there
            problems.append(f"{path}: not part of a round; see docs/rounds.md for the files a round holds")
            continue
        if relative == ROUND_FILE:
            # the ledger judges every version of the rules (an extension, or a problem); on a round that is on
            # main only its maintainers may propose one: a participant extending the reveals would reveal late
            if history.versions.get(ROUND_FILE) and not base_spec.is_maintainer(author):
                problems.append(f"{path}: only the round's maintainers ({', '.join(base_spec.maintainers) or 'none'}) "
                                f"change its rules; {author} is not one")
            continue
        if part in (COMMITMENTS, REVEALS):
            if change == "A" and part == COMMITMENTS:
                try:
                    plain = plain_file(folder, relative)  # never through a link out of the folder
                    owner = parse_commitment(read_limited(plain, MAX_SMALL_FILE) or b"", path).owner if plain else ""
                except (RoundError, OSError):
                    continue  # the ledger reports the file
            else:
                owner = owners.get(stem, "")
            if owner.lower() != author.lower():
                whose = f"the entry of {owner}" if owner else "no commitment of its author"
                problems.append(f"{path}: is {whose}, but the pull request is by {author}; change only the files "
                                "of your own entries")
                continue
            if change == "M" or (change == "A" and on_main):
                problems.append(f"{path}: is on main already; a {part[:-1]} never changes (withdraw it, or commit a "
                                "new revision)")
                continue
            if change == "D" and (part == REVEALS or now >= spec.phases.revealed):
                problems.append(f"{path}: deleted once {'revealed' if part == REVEALS else 'the reveals closed'}; "
                                "the pool is made of what was revealed, so it stays")
                continue
            if change == "D":
                continue  # withdrawing one's own entry; it stays visible as withdrawn
        elif part in MAINTAINERS_ONLY:
            if not spec.is_maintainer(author):
                problems.append(f"{path}: only the round's maintainers ({', '.join(spec.maintainers) or 'none'}) add "
                                f"the pool, the judgments and the scores; {author} is not one")
                continue
        if part in ALLOWED_IN and change != "D":
            why = in_phase(spec, part, now)
            if why:
                problems.append(f"{path}: {why.replace('entered', 'would enter', 1)}")
    return problems


def _about(problem: str, relative: str, now: datetime) -> bool:
    """Is `problem` about the file `relative` that a pull request adds, changes or deletes, entering at `now`?"""
    about, at = getattr(problem, "about", None), getattr(problem, "at", None)
    if about is None or (at is not None and at != now):
        return False  # about no file, or about an earlier version of it (already on the round's page)
    part = relative.split("/", 1)[0]
    return (relative == about or (about == JUDGMENTS and part == JUDGMENTS)
            or (part == REVEALS and relative.rsplit(".", 1)[0] == about))


def pull_request_problems(ledger: Ledger, problems: list[str], changes: Mapping[str, str], now: datetime) -> list[str]:
    """The problems of the files a pull request adds, changes or deletes (`changes`, relative to the round folder),
    each judged on its own in `ledger`, where the pull request's files entered at `now`, whatever main holds
    already: the `problems` about one of its files (or about the round, when it changes round.yml), a commitment
    it adds that is refused (late, a second one for a model revision, over runs_per_participant), a reveal it adds
    that does not open its commitment. Problems about other files are the round page's, never its author's: an
    honest reveal never fails because someone else's copy is refused once it is opened."""
    folder = ledger.round.folder
    found = [problem for problem in problems if any(_about(problem, relative, now) for relative in changes)]
    entries = {entry.name: entry for entry in ledger.entries}
    for relative, change in sorted(changes.items()):
        part, _, rest = relative.partition("/")
        entry = entries.get(rest.rsplit(".", 1)[0]) if part in (COMMITMENTS, REVEALS) else None
        if change == "D" or entry is None or any(_about(problem, relative, now) for problem in found):
            continue
        if part == COMMITMENTS and entry.committed_at == now and entry.status == "refused":
            found.append(Problem(f"{folder / relative}: is refused: {entry.reason}", relative, now))
        elif part == REVEALS and entry.status == "mismatch":
            found.append(Problem(f"{folder / REVEALS / entry.name}: does not open its commitment: {entry.reason}",
                                 f"{REVEALS}/{entry.name}"))
    return found


def pending_problems(round_: Round, paths: list[str], now: datetime) -> list[str]:
    """For a pull request: the files it adds or changes (relative to the round folder) that may not enter at
    `now`. Merge time decides in the end (`read_ledger`); this refuses early what would be refused then."""
    problems = []
    for relative in paths:
        part = relative.split("/", 1)[0]
        if relative == ROUND_FILE or part not in ALLOWED_IN:
            continue  # the ledger judges the rules' versions and reports unknown files
        why = in_phase(round_.spec, part, now)
        if why:
            problems.append(f"{round_.folder / relative}: {why.replace('entered', 'would enter', 1)}")
    return problems


