"""The steps of a round as library functions (`irboard round …` and `irboard pool` only parse arguments for
them): commit, reveal, check, pool and score."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from evaluator.errors import IrboardError
from evaluator.result import ModelBlock, write_atomic
from leaderboard.rounds.ledger import (
    COMMITMENTS,
    POOL_FILE,
    REVEALS,
    SCORES_FILE,
    Ledger,
    commitment_hash,
    entry_name,
    git_times,
    pending_problems,
    read_ledger,
)
from leaderboard.rounds.pool import Pool, assessment_text, check_pool_file, round_pool
from leaderboard.rounds.score import Board, check_scores_file, score_round
from leaderboard.rounds.spec import RoundError, read_round


def commit_run(folder: Path | str, run: Path | str, model: ModelBlock, salt_out: Path | str,
               uses_models: Sequence[str] = ()) -> Path:
    """Write the commitment of `run` into the round folder and its new random salt to `salt_out` (keep it
    private until the reveal; it must not be inside the round folder). Returns the commitment's path."""
    round_ = read_round(folder)
    salt_out = Path(salt_out)
    if round_.folder.resolve() in salt_out.resolve().parents:
        raise RoundError(f"{salt_out}: the salt stays private until the reveal; write it outside {round_.folder}")
    path = round_.folder / COMMITMENTS / f"{entry_name(model)}.json"
    if path.exists():
        raise RoundError(f"{path}: exists; one commitment per model revision (give the model a new revision)")
    salt = secrets.token_hex(32)
    data = {"model": model.model_dump(), "sha256": commitment_hash(Path(run).read_bytes(), salt),
            "uses_models": list(uses_models)}
    write_atomic(salt_out, salt + "\n")
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True) + "\n")
    return path


def reveal_run(folder: Path | str, name: str, run: Path | str, salt: Path | str) -> tuple[Path, Path]:
    """Copy the committed run and its salt into the round's reveals/ after checking them against the
    commitment `name` (the commitment file's stem)."""
    round_ = read_round(folder)
    commitment = round_.folder / COMMITMENTS / f"{name}.json"
    if not commitment.is_file():
        raise RoundError(f"{commitment}: no such commitment; reveal one of "
                         f"{sorted(p.stem for p in (round_.folder / COMMITMENTS).glob('*.json'))}")
    salt_hex = Path(salt).read_text(encoding="ascii").strip()
    run_bytes = Path(run).read_bytes()
    expected = json.loads(commitment.read_text(encoding="utf-8")).get("sha256")
    if commitment_hash(run_bytes, salt_hex) != expected:
        raise RoundError(f"{run}: sha256(run + salt) differs from {commitment}; reveal the exact run and salt "
                         "that were committed")
    run_path, salt_path = round_.folder / REVEALS / f"{name}.run", round_.folder / REVEALS / f"{name}.salt"
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


def round_status(folder: Path | str, now: datetime, times: Mapping[str, datetime] | None = None,
                 pending: Sequence[str] = ()) -> RoundStatus:
    """Everything known about a round at `now`: its entries, the pool once the reveals are closed, the board
    once judged, and every problem. `times` (when each file entered the repository) default to the folder's git
    history; `pending` are files a pull request would add now."""
    round_ = read_round(folder)
    if times is None:
        times = git_times(round_.folder)
    times = dict(times)
    for relative in pending:
        times[relative] = now
    ledger = read_ledger(round_, times, now)
    status = RoundStatus(ledger, problems=list(ledger.problems) + pending_problems(round_, list(pending), now))
    if ledger.phase in ("revealed", "judged", "published") and ledger.revealed():
        status.pool = round_pool(ledger)
        status.problems += check_pool_file(ledger, status.pool)
        if ledger.judged_at is not None:
            try:
                status.board = score_round(ledger, status.pool)
                status.problems += check_scores_file(ledger, status.board)
            except IrboardError as error:  # judgments that cannot be read or judge pairs outside the pool
                status.problems.append(str(error))
    return status


def write_pool(folder: Path | str, now: datetime, times: Mapping[str, datetime] | None = None) -> Path:
    status = round_status(folder, now, times)
    if status.pool is None:
        status.pool = round_pool(status.ledger)  # raises with the reason
    path = status.ledger.round.folder / POOL_FILE
    write_atomic(path, assessment_text(status.pool))
    return path


def write_scores(folder: Path | str, now: datetime, times: Mapping[str, datetime] | None = None) -> Path:
    status = round_status(folder, now, times)
    if status.board is None:
        problems = [p for p in status.problems if SCORES_FILE not in p]
        raise RoundError(problems[0] if problems else f"{folder}: nothing to score yet (phase {status.ledger.phase})")
    path = status.ledger.round.folder / SCORES_FILE
    write_atomic(path, status.board.to_json())
    return path
