"""The pages of sealed rounds (docs/rounds.md): an index of rounds and, for each, its phase, every commitment
with the instant it was merged and what became of it, the pool, and the board once published."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from evaluator.errors import IrboardError, one_line
from leaderboard.rounds.play import RoundStatus, round_status
from leaderboard.rounds.score import RunScore
from leaderboard.rounds.spec import PHASES
from leaderboard.web.contexts import Page
from leaderboard.web.render import make_environment

ROUNDS_INDEX = "rounds/index.html"


@dataclass(frozen=True)
class PhaseRow:
    phase: str
    starts: str
    current: bool


@dataclass(frozen=True)
class EntryRow:
    name: str
    model_id: str
    revision: str
    committed_at: str
    status: str
    reason: str
    revealed_at: str


@dataclass(frozen=True)
class RoundContext:
    page: Page
    name: str
    dataset: str
    split: str
    description: str
    phase: str
    as_of: str
    phases: list[PhaseRow]
    pool_depth: int
    metrics: list[str]
    seed: int
    entries: list[EntryRow]
    withdrawn: int
    pool_pairs: int | None
    pool_queries: int | None
    judges: str
    board: list[RunScore]  # best first
    board_metrics: list[str]
    problems: list[str]
    files: list[str]


@dataclass(frozen=True)
class RoundLink:
    name: str
    href: str
    dataset: str
    phase: str
    entries: int


@dataclass(frozen=True)
class RoundsContext:
    page: Page
    rounds: list[RoundLink]


def _instant(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else ""


def build_round(status: RoundStatus) -> RoundContext:
    ledger = status.ledger
    spec = ledger.round.spec
    entries = [EntryRow(e.name, e.commitment.model.id if e.commitment else "", e.commitment.model.revision
                        if e.commitment else "", _instant(e.committed_at), e.status, e.reason,
                        _instant(e.revealed_at)) for e in ledger.entries]
    board, judges = [], ""
    if ledger.provenance is not None:
        judge = ledger.provenance.judge
        judges = ledger.provenance.description + (f" (judge: {judge.model} at {judge.revision})" if judge else "")
    # scores are shown from the publication instant on, and only when they were made from accepted judgments
    if status.board is not None and ledger.phase == "published":
        board = list(status.board.runs)
    pool = status.pool
    return RoundContext(
        page=Page(f"rounds/{spec.name}.html", f"Round {spec.name}", "../", "rounds"),
        name=spec.name, dataset=spec.dataset, split=spec.split, description=spec.description, phase=ledger.phase,
        as_of=_instant(ledger.now),
        phases=[PhaseRow(p, _instant(getattr(spec.phases, p)), p == ledger.phase) for p in PHASES],
        pool_depth=spec.pool_depth, metrics=list(spec.metrics), seed=spec.seed, entries=entries,
        withdrawn=sum(e.status == "withdrawn" for e in ledger.entries),
        pool_pairs=len(pool.contributors) if pool else None,
        pool_queries=len({q for q, _ in pool.contributors}) if pool else None,
        judges=judges, board=board, board_metrics=status.board.metrics if board else [],
        problems=list(status.problems),
        files=sorted(p.relative_to(ledger.round.folder.parent.parent).as_posix()
                     for p in ledger.round.folder.rglob("*") if p.is_file()),
    )


def build_rounds_index(contexts: list[RoundContext]) -> RoundsContext:
    return RoundsContext(Page(ROUNDS_INDEX, "Sealed rounds", "../", "rounds"),
                         [RoundLink(c.name, f"{c.name}.html", c.dataset, c.phase, len(c.entries)) for c in contexts])


def round_contexts(rounds_dir: Path | str | None, now: datetime, warnings: list[str]) -> list[RoundContext]:
    """The page context of every round under `rounds_dir`; a round that cannot be read is a build warning (and
    gets no page), since its files are checked when they are merged (`irboard round check`)."""
    contexts = []
    if rounds_dir is None or not Path(rounds_dir).is_dir():
        return contexts
    for folder in sorted(path.parent for path in Path(rounds_dir).glob("*/round.yml")):
        try:
            status = round_status(folder, now)
        except IrboardError as error:
            warnings.append(f"round {folder.name}: {one_line(str(error))}; its page is not built")
            continue
        warnings += [f"round {folder.name}: {one_line(problem)}" for problem in status.problems]
        contexts.append(build_round(status))
    return contexts


def add_round_pages(files, contexts: list[RoundContext], stamp) -> int:
    """Add the rounds index and one page per round to the site's files; returns the number of pages."""
    env = make_environment()
    env.globals["stamp"] = stamp
    index = build_rounds_index(contexts)
    files.add(index.page.path, env.get_template("rounds.html").render(ctx=index))
    for context in contexts:
        files.add(context.page.path, env.get_template("round.html").render(ctx=context))
    return 1 + len(contexts)
