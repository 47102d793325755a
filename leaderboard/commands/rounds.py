"""`irboard round check|commit|reveal|score` and `irboard pool`: sealed rounds (docs/rounds.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluator.errors import IrboardError, one_line
from leaderboard.commands.options import instant

NOW_HELP = "the instant to judge phases at, ISO 8601 with a zone (default: now)"


def add_round_commands(commands) -> None:
    """Add `round` with its four steps and `pool` to the `irboard` subcommands."""
    round_parser = commands.add_parser("round", help="sealed rounds: commit, reveal, check and score runs")
    steps = round_parser.add_subparsers(dest="step", required=True)

    check = steps.add_parser("check", help="check a round folder; exit 1 listing every problem")
    check.add_argument("round", type=Path, help="the round folder, rounds/<name>")
    check.add_argument("--pending", nargs="*", default=[], type=Path,
                       help="files a pull request adds or changes (repository paths): each must be allowed now")
    check.add_argument("--base", help="check the checked-out pull request against this commit of main: the history "
                       "as of it, the pull request's changes entering now (the `rounds` workflow)")
    check.add_argument("--author", help="with --base: the pull request's author (GitHub account); it may change only "
                       "its own entries' files, and the pool, judgments and scores only as a round maintainer")
    check.add_argument("--now", help=NOW_HELP)
    check.set_defaults(handler=run_check)

    commit = steps.add_parser("commit", help="write the commitment of a run and a private salt")
    commit.add_argument("round", type=Path)
    commit.add_argument("--run", type=Path, required=True, help="the TREC run to commit to (keep it unchanged)")
    commit.add_argument("--model-id", required=True)
    commit.add_argument("--owner", required=True,
                        help="your GitHub account, which opens the pull request (bound into the commitment)")
    commit.add_argument("--revision", default="", help="the model revision (one commitment per revision)")
    commit.add_argument("--type", default="other", help="lexical, sparse, dense, hybrid, late-interaction, other")
    commit.add_argument("--license", default="")
    commit.add_argument("--url", default="")
    commit.add_argument("--uses-model", action="append", default=[],
                        help="a model the system runs inside (reranker, generator); repeatable")
    commit.add_argument("--salt-out", type=Path, help="where to keep the salt (default: RUN.salt); keep it private")
    commit.set_defaults(handler=run_commit)

    reveal = steps.add_parser("reveal", help="copy a committed run and its salt into the round after the freeze")
    reveal.add_argument("round", type=Path)
    reveal.add_argument("--entry", required=True, help="the commitment's name (its file name without .json)")
    reveal.add_argument("--run", type=Path, required=True)
    reveal.add_argument("--salt", type=Path, required=True)
    reveal.set_defaults(handler=run_reveal)

    score = steps.add_parser("score", help="write scores.json: every revealed run against the judgments")
    score.add_argument("round", type=Path)
    score.add_argument("--now", help=NOW_HELP)
    score.set_defaults(handler=run_score)

    pool = commands.add_parser("pool", help="write a round's pool of revealed runs as its assessment file")
    pool.add_argument("round", type=Path, help="the round folder, rounds/<name>")
    pool.add_argument("--now", help=NOW_HELP)
    pool.set_defaults(handler=run_pool)


def run_check(args: argparse.Namespace) -> int:
    from leaderboard.rounds.play import round_status

    folder = args.round.resolve()
    pending = [p.resolve().relative_to(folder).as_posix() for p in args.pending
               if folder in p.resolve().parents]
    if (args.base is None) != (args.author is None):
        raise IrboardError("--base and --author go together: the pull request's base commit and its author")
    status = round_status(args.round, instant(args.now), pending=pending, base=args.base, author=args.author)
    ledger = status.ledger
    print(f"irboard: round {ledger.round.name}: phase {ledger.phase}; "
          + ", ".join(f"{entry.name} {entry.status}" for entry in ledger.entries))
    for problem in status.problems:
        print(f"error: {one_line(problem)}", file=sys.stderr)
    return 1 if status.problems else 0


def run_commit(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from evaluator.result import ModelBlock
    from leaderboard.rounds.play import commit_run

    try:
        model = ModelBlock.model_validate({"id": args.model_id, "revision": args.revision, "type": args.type,
                                           "license": args.license, "url": args.url})
    except ValidationError as error:
        first = error.errors()[0]
        raise IrboardError(f"--{first['loc'][0]}: {first['msg']}") from None
    salt_out = args.salt_out or args.run.with_name(args.run.name + ".salt")
    path = commit_run(args.round, args.run, model, args.owner, salt_out, args.uses_model)
    print(f"irboard: wrote {path}; the salt is in {salt_out}: keep it private until the reveal")
    return 0


def run_reveal(args: argparse.Namespace) -> int:
    from leaderboard.rounds.play import reveal_run

    run, salt = reveal_run(args.round, args.entry, args.run, args.salt)
    print(f"irboard: wrote {run} and {salt}; open a pull request with both")
    return 0


def run_score(args: argparse.Namespace) -> int:
    from leaderboard.rounds.play import write_scores

    print(f"irboard: wrote {write_scores(args.round, instant(args.now))}")
    return 0


def run_pool(args: argparse.Namespace) -> int:
    from leaderboard.rounds.play import write_pool

    print(f"irboard: wrote {write_pool(args.round, instant(args.now))}")
    return 0
