"""The pages of sealed rounds (docs/rounds.md): an index of rounds and, for each, its phase, every commitment
with the instant it was merged and what became of it, the pool, and the board once published."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from evaluator.errors import IrboardError, one_line
from leaderboard.analysis import ranks, stats
from leaderboard.rounds.ledger import known_file
from leaderboard.rounds.play import RoundStatus, round_status
from leaderboard.rounds.score import Board, RunScore
from leaderboard.rounds.spec import JUDGMENT_SOURCES, PHASES
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
    owner: str
    committed_at: str
    status: str
    reason: str
    revealed_at: str


@dataclass(frozen=True)
class BoardRow:
    """A run on the round's board, as the main board shows a model: its interval, its test against the round's
    best and its tie band (never a bare rank)."""

    score: RunScore
    low: float
    high: float
    p_vs_best: float | None  # corrected p-value of the paired test against the best run; None for the best
    band: int  # 1: tied with the best
    rank_low: int
    rank_high: int


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
    board: list[BoardRow]  # best first
    board_metrics: list[str]
    tests: str  # the sentence saying which tests and intervals the board uses
    problems: list[str]
    files: list[str]
    judgment_source: str
    public_judgments: bool  # the dataset's judgments were public before the round: a rehearsal, not blind
    runs_per_participant: int
    groups: dict[str, list[str]]
    pool_share_cap: float
    maintainers: list[str]


@dataclass(frozen=True)
class RoundLink:
    name: str
    href: str
    dataset: str
    phase: str
    entries: int
    rehearsal: bool  # the dataset's judgments were public before the round


@dataclass(frozen=True)
class RoundsContext:
    page: Page
    rounds: list[RoundLink]


def _instant(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else ""


def board_rows(board: Board) -> list[BoardRow]:
    """The board's runs with the site's statistics (stats.TestSettings' defaults: paired t-tests with Holm's
    correction over every pair, 95% score intervals, tie bands and rank ranges as on the main board)."""
    runs = list(board.runs)
    if not runs or not board.query_ids:
        return []
    settings = stats.TestSettings()
    scores = np.array([run.per_query for run in runs], dtype=np.float64)
    means = scores.mean(axis=1)
    intervals = stats.score_intervals(scores)
    if len(runs) > 1:
        pvalues = stats.pairwise_pvalues(scores, settings.method, settings.correction, settings.resamples,
                                         settings.seed)
    else:
        pvalues = np.ones((1, 1))
    bands = ranks.tie_bands(means, pvalues, settings.alpha)
    ranges = ranks.rank_ranges(means, pvalues, settings.alpha)
    best = int(np.argmax(means))
    return [BoardRow(run, float(intervals[i, 0]), float(intervals[i, 1]),
                     None if i == best else float(pvalues[best, i]), int(bands[i]), int(ranges[i, 0]),
                     int(ranges[i, 1])) for i, run in enumerate(runs)]


def _public_judgments(dataset_id: str) -> bool:
    """Were the dataset's judgments public before the round? Every dataset with official judgments has them."""
    from evaluator.datasets.official import official_judgments

    return official_judgments(dataset_id) is not None


def build_round(status: RoundStatus) -> RoundContext:
    ledger = status.ledger
    spec = ledger.round.spec
    entries = [EntryRow(e.name, e.commitment.model.id if e.commitment else "", e.commitment.model.revision
                        if e.commitment else "", e.owner, _instant(e.committed_at), e.status, e.reason,
                        _instant(e.revealed_at)) for e in ledger.entries]
    board, judges = [], ""
    if ledger.provenance is not None:
        judge = ledger.provenance.judge
        judges = ledger.provenance.description + (f" (judge: {judge.model} at {judge.revision})" if judge else "")
    # scores are shown from the publication instant on, and only when they were made from accepted judgments
    if status.board is not None and ledger.phase == "published":
        board = board_rows(status.board)
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
        tests=stats.TestSettings().describe(), problems=[one_line(problem) for problem in status.problems],
        # only the round's own plain files: the page offers a shell command naming one, and a stray file named
        # `$(…)` must never be what a reader pastes
        files=sorted(p.relative_to(ledger.round.folder.parent.parent).as_posix()
                     for p in ledger.round.folder.rglob("*") if p.is_file() and not p.is_symlink()
                     and known_file(p.relative_to(ledger.round.folder).as_posix())),
        judgment_source=JUDGMENT_SOURCES[spec.judgments], public_judgments=_public_judgments(spec.dataset),
        runs_per_participant=spec.runs_per_participant, groups=dict(spec.groups), pool_share_cap=spec.pool_share_cap,
        maintainers=list(spec.maintainers),
    )


def build_rounds_index(contexts: list[RoundContext]) -> RoundsContext:
    return RoundsContext(Page(ROUNDS_INDEX, "Sealed rounds", "../", "rounds"),
                         [RoundLink(c.name, f"{c.name}.html", c.dataset, c.phase, len(c.entries), c.public_judgments)
                          for c in contexts])


def build(rounds_dir: Path | str | None, now: datetime, warnings: list[str],
                   notes: list[str] | None = None) -> list[RoundContext]:
    """The page context of every round under `rounds_dir`. Nothing in a round's files stops the site: a round's
    problems are shown on its page and logged as `notes` (never build warnings, which --strict refuses), and a
    round that cannot be read at all is a note and gets no page. `warnings` is kept for the caller's list."""
    contexts = []
    notes = notes if notes is not None else []
    if rounds_dir is None or not Path(rounds_dir).is_dir():
        return contexts
    # every folder, not only those with a round.yml now: a round whose declaration was deleted keeps its page (its
    # rules are read from history); a link in place of a folder is never followed
    for folder in sorted(path for path in Path(rounds_dir).iterdir() if path.is_dir() and not path.is_symlink()):
        try:
            status = round_status(folder, now)
            context = build_round(status)
        except IrboardError as error:
            notes.append(f"round {folder.name}: {one_line(str(error))}; its page is not built")
            continue
        notes += [f"round {folder.name}: {one_line(problem)}" for problem in status.problems]
        contexts.append(context)
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
