"""The steps of a round as library functions (`irboard round …` and `irboard pool` only parse arguments for
them): commit, reveal, check, pool and score."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from evaluator.errors import IrboardError, one_line
from evaluator.result import ModelBlock, write_atomic
from leaderboard.rounds.history import History, git_history, tracked, tree_history
from leaderboard.rounds.ledger import (
    COMMITMENTS,
    JUDGMENTS,
    MAX_RUN_BYTES,
    POOL_FILE,
    REVEALS,
    SCORES_FILE,
    Ledger,
    Problem,
    change_problems,
    check_entry,
    commitment_binding,
    commitment_hash,
    entry_name,
    parse_commitment,
    pending_problems,
    pull_request_problems,
    read_ledger,
)
from leaderboard.rounds.pool import Pool, assessment_text, check_pool_file, round_pool
from leaderboard.rounds.score import Board, check_scores_file, score_round
from leaderboard.rounds.spec import RoundError, RoundSpec, check_login, read_round


def commit_run(folder: Path | str, run: Path | str, model: ModelBlock, owner: str, salt_out: Path | str,
               uses_models: Sequence[str] = ()) -> Path:
    """Write the commitment of `run` by `owner` (the GitHub account that will open its pull request) into the
    round folder and its new random salt to `salt_out` (keep it private until the reveal; it must not be inside
    the round folder). Returns the commitment's path."""
    round_ = read_round(folder)
    salt_out = Path(salt_out)
    if round_.folder.resolve() in salt_out.resolve().parents:
        raise RoundError(f"{salt_out}: the salt stays private until the reveal; write it outside {round_.folder}")
    try:
        check_login(owner, "--owner")
    except ValueError as error:
        raise RoundError(str(error)) from None
    if owner.endswith("[bot]"):
        raise RoundError(f"--owner {owner}: is a bot account; commit as the person's account that opens the pull "
                         "request")
    path = _inside(round_.folder, COMMITMENTS, f"{check_entry(entry_name(model, owner))}.json")
    if path.exists():
        raise RoundError(f"{path}: exists; one commitment per model revision (give the model a new revision)")
    salt = secrets.token_hex(32)
    binding = commitment_binding(round_.name, model, owner)
    data = {"model": model.model_dump(), "owner": owner, "sha256": commitment_hash(_read_input(run, "--run"), salt, binding),
            "uses_models": list(uses_models)}
    write_atomic(salt_out, salt + "\n")
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def _read_input(path: Path | str, what: str) -> bytes:
    """A file the user names (`--run`, `--salt`): one line saying why it cannot be read, never a traceback."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_RUN_BYTES:
            raise RoundError(f"{path}: is {size:,} bytes, over the {MAX_RUN_BYTES:,} a round accepts for a run")
        return path.read_bytes()
    except OSError as error:
        raise RoundError(f"{what} {path}: cannot be read ({error.strerror or error}); give an existing file") from None


def _salt(path: Path | str) -> str:
    salt = _read_input(path, "--salt").decode("ascii", "replace").strip()
    if not re.fullmatch(r"[0-9a-f]{32,128}", salt):
        raise RoundError(f"--salt {path}: must hold the 32 to 128 lower-case hex digits `irboard round commit` wrote")
    return salt


def _inside(folder: Path, *parts: str) -> Path:
    """`folder/parts...`, refused unless it stays inside `folder` (no '..', no link leading out)."""
    path = folder.joinpath(*parts)
    if folder.resolve() not in path.resolve().parents:
        raise RoundError(f"{path}: is outside the round folder {folder}; name an entry, not a path")
    return path


def reveal_run(folder: Path | str, name: str, run: Path | str, salt: Path | str) -> tuple[Path, Path]:
    """Copy the committed run and its salt into the round's reveals/ after checking them against the
    commitment `name` (the commitment file's stem)."""
    round_ = read_round(folder)
    check_entry(name)
    commitment_path = _inside(round_.folder, COMMITMENTS, f"{name}.json")
    if not commitment_path.is_file():
        raise RoundError(f"{commitment_path}: no such commitment; reveal one of "
                         f"{sorted(p.stem for p in (round_.folder / COMMITMENTS).glob('*.json'))}")
    commitment = parse_commitment(commitment_path.read_bytes(), commitment_path)
    salt_hex = _salt(salt)
    run_bytes = _read_input(run, "--run")
    binding = commitment_binding(round_.name, commitment.model, commitment.owner)
    if commitment_hash(run_bytes, salt_hex, binding) != commitment.sha256:
        raise RoundError(f"{run}: sha256(binding + run + salt) differs from {commitment_path}; reveal the exact run "
                         "and salt that were committed, under the entry they were committed for")
    run_path = _inside(round_.folder, REVEALS, f"{name}.run")
    salt_path = _inside(round_.folder, REVEALS, f"{name}.salt")
    run_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(salt_path, salt_hex + "\n")
    tmp = run_path.with_name(f".{run_path.name}.tmp")
    tmp.write_bytes(run_bytes)
    tmp.replace(run_path)
    return run_path, salt_path


@dataclass
class RoundStatus:
    ledger: Ledger
    pool: Pool | None = None
    board: Board | None = None
    problems: list[str] = field(default_factory=list)


QuerySource = Callable[[RoundSpec], Collection[str]]


def registered_queries(spec: RoundSpec) -> frozenset[str]:
    """The query ids of the round's dataset and split: those of its official judgments (downloaded once and
    checked by sha256, evaluator.datasets.official), never those of a submitted file."""
    from evaluator.datasets.official import official_judgments, official_qrels

    record = official_judgments(spec.dataset)
    if record is None or record.split != spec.split:
        raise RoundError(f"{spec.dataset} ({spec.split}): has no registered query set to restrict the pool to; a "
                         "round ranks the queries of a registered dataset split")
    return frozenset(official_qrels(spec.dataset).query_ids)


def pull_request_changes(folder: Path, base: str) -> dict[str, str]:
    """What the checked-out pull request changes in `folder` against `base`: path (relative to the folder) ->
    A (added), M (changed) or D (deleted); a rename is a deletion and an addition."""
    import subprocess

    try:
        top = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
        relative = folder.resolve().relative_to(Path(top).resolve()).as_posix()
        out = subprocess.run(["git", "-C", str(folder), "diff", "--name-status", "--no-renames", "-z", base, "HEAD",
                              "--", "."], capture_output=True, check=True).stdout.decode("utf-8", "replace")
    except (OSError, ValueError, subprocess.CalledProcessError) as error:
        raise RoundError(f"{folder}: cannot list the pull request's changes against {base} ({error})") from None
    fields = [f for f in out.split("\0") if f]
    return {name[len(relative) + 1:]: status[:1] for status, name in zip(fields[::2], fields[1::2], strict=False)
            if name.startswith(relative + "/")}


def round_status(folder: Path | str, now: datetime, times: Mapping[str, datetime] | None = None,
                 pending: Sequence[str] = (), *, base: str | None = None, author: str | None = None,
                 queries: QuerySource | None = registered_queries) -> RoundStatus:
    """Everything known about a round at `now`: its entries, the pool once the reveals are closed, the board
    once judged, and every problem.

    `times` (when each file entered the repository) stand for a history of the files present now; without them
    the folder's git history is read. `pending`: files a pull request would add now. `base` and `author`: check
    the checked-out pull request by `author` against the commit `base` (history as of `base`, the pull request's
    changes entering now, each allowed only to its owner). `queries(spec)`: the round's query ids."""
    folder = Path(folder)
    history = tree_history(folder, times) if times is not None else git_history(folder, base or "HEAD")
    changes = pull_request_changes(folder, base) if base is not None else {}
    base_history = History(dict(history.times), {k: list(v) for k, v in history.versions.items()},
                           list(history.backwards))
    for relative in pending:
        changes.setdefault(relative, "A")
    for relative, change in changes.items():
        path = folder / relative
        history.times.pop(relative, None)
        if change != "D":
            history.times[relative] = now
        if tracked(relative):
            data = path.read_bytes() if change != "D" and path.is_file() and not path.is_symlink() else None
            if data is not None or relative in history.versions:
                history.versions.setdefault(relative, []).append((now, data))
    status = _status(read_ledger(folder, history, now, queries))
    if author is not None:
        # a pull request answers for each file it adds, changes or deletes, judged on its own whatever main
        # holds; the problems of other files are on the round's page
        status.problems = pull_request_problems(status.ledger, status.problems, changes, now)
        status.problems += change_problems(status.ledger, base_history, changes, author, now)
    else:
        status.problems += pending_problems(status.ledger.round, list(changes), now)
    return status


def _status(ledger: Ledger) -> RoundStatus:
    status = RoundStatus(ledger, problems=list(ledger.problems))
    if ledger.phase in ("revealed", "judged", "published") and ledger.revealed() and ledger.queries_known:
        status.pool = round_pool(ledger)
        status.problems += [Problem(problem, POOL_FILE) for problem in check_pool_file(ledger, status.pool)]
        if ledger.judged_at is not None:
            try:
                status.board = score_round(ledger, status.pool)
                status.problems += [Problem(problem, SCORES_FILE) for problem in check_scores_file(ledger, status.board)]
            except IrboardError as error:  # judgments that cannot be read or judge pairs outside the pool
                status.problems.append(Problem(one_line(str(error)), JUDGMENTS))
    return status


def write_pool(folder: Path | str, now: datetime, times: Mapping[str, datetime] | None = None,
               queries: QuerySource | None = registered_queries) -> Path:
    status = round_status(folder, now, times, queries=queries)
    if status.pool is None:
        if status.ledger.phase not in ("announced", "open", "frozen") and not status.ledger.queries_known:
            raise RoundError(next(p for p in status.problems if "query" in p))
        status.pool = round_pool(status.ledger)  # raises with the reason
    path = status.ledger.round.folder / POOL_FILE
    write_atomic(path, assessment_text(status.pool))
    return path


def write_scores(folder: Path | str, now: datetime, times: Mapping[str, datetime] | None = None,
                 queries: QuerySource | None = registered_queries) -> Path:
    status = round_status(folder, now, times, queries=queries)
    if status.board is None:
        problems = [p for p in status.problems if SCORES_FILE not in p]
        raise RoundError(problems[0] if problems else f"{folder}: nothing to score yet (phase {status.ledger.phase})")
    path = status.ledger.round.folder / SCORES_FILE
    write_atomic(path, status.board.to_json())
    return path
