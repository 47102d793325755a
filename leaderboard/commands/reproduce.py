"""`irboard reproduce RESULT…`: run each result's declared artifact again and compare the ranking (exit 1 when one
differs); with `--ledger`, record each reproduced one there (the maintainers' workflow does, docs/reproduction.md)."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from evaluator.errors import IrboardError, one_line
from leaderboard.commands.options import parse_data_dirs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, help="result files to reproduce")
    parser.add_argument("--data-dir", action="append", default=[],
                        help="local datasets: ID=DIR for one dataset, or a DIR holding <dataset id>/ folders "
                             "(e.g. ../shared/data); without it datasets are downloaded as for evaluate")
    parser.add_argument("--ledger", type=Path, help="write a record of each reproduced result under this folder "
                        "(the repository's reproductions/, written by the maintainers' workflow)")
    parser.add_argument("--max-docs", type=int, help="skip results on corpora larger than this (CI's budget); "
                        "skipped results are listed and leave the exit code 0")
    parser.add_argument("--run-submitted-code", action="store_true",
                        help="also reproduce script and container artifacts, which run the submitter's code with this "
                        "machine's rights (skipped without it; the maintainers' workflow passes it only when a "
                        "maintainer asks, docs/reproduction.md)")
    parser.add_argument("--no-isolation", action="store_true",
                        help="run script artifacts without the sandbox where the machine has none (a local check: the "
                        "code can reach the judgments and this machine's files, so the outcome is not blind and is "
                        "never recorded; refused with --ledger)")
    parser.add_argument("--cache-dir", help="cache for datasets and encodings (default $IRBOARD_CACHE)")
    parser.add_argument("--batch-size", type=int, help="texts per forward pass for neural models")
    parser.add_argument("--quiet", action="store_true", help="no progress output (the result lines stay)")


def run(args: argparse.Namespace) -> int:
    from evaluator.progress import set_quiet

    set_quiet(args.quiet)
    if args.no_isolation and args.ledger is not None:
        raise IrboardError("--no-isolation runs submitted code where it can reach the judgments and the ledger: its "
                           "outcomes are not blind and are never recorded; leave out --ledger, or --no-isolation")
    data_dirs, data_root = parse_data_dirs([str(v) for v in args.data_dir])
    before = _ledger_files(args.ledger)
    failed, reproduced = 0, []
    for path in args.paths:
        try:
            ok, line, outcome = _reproduce_one(path, args, data_dirs, data_root)
        except IrboardError as error:  # this file cannot be reproduced: say why and go on with the others
            ok, line, outcome = False, str(error), None
        failed += not ok
        print(one_line(line))
        if outcome is not None:
            reproduced.append(outcome)
    if reproduced and args.ledger is not None:
        _record(reproduced, args.ledger, before)
    if failed:
        raise IrboardError(f"{failed} of {len(args.paths)} result(s) not reproduced; each line above names the first "
                           "difference")
    return 0


def _ledger_files(ledger: Path | None) -> dict[str, str]:
    """{file under the ledger: its sha256}, to see whether anything wrote there while results were re-run."""
    if ledger is None or not ledger.is_dir():
        return {}
    found = {}
    for path in sorted(ledger.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as f:
                found[path.relative_to(ledger).as_posix()] = hashlib.file_digest(f, "sha256").hexdigest()
        elif not path.is_dir():
            found[path.relative_to(ledger).as_posix()] = "not a file"
    return found


def _record(reproduced: list, ledger: Path, before: dict[str, str]) -> None:
    """Write the records once every re-run has ended, and only into a ledger no re-run changed (a submitted command
    can find the ledger through this process; the workflow's record job checks the records again)."""
    from evaluator.assemble import git_commit
    from leaderboard.submissions.reproduce import RELATIVE_TOLERANCE
    from leaderboard.submissions.reproductions import write_record

    after = _ledger_files(ledger)
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    if changed:
        raise IrboardError(f"{ledger / changed[0]}: the ledger changed while the artifacts ran (submitted code "
                           "writing records?); no record written: remove what this run did not write and reproduce "
                           "again")
    commit = git_commit()
    for outcome in reproduced:
        print(one_line(f"{outcome.path}: recorded in {write_record(outcome, ledger, RELATIVE_TOLERANCE, commit)}"))


def _reproduce_one(path: Path, args: argparse.Namespace, data_dirs: dict,
                   data_root: Path | None) -> tuple[bool, str, object]:
    """(reproduced or skipped, one line: reproduced, skipped, or not reproduced with the first difference; the
    Reproduction when reproduced, else None)."""
    from evaluator.artifact import Artifact
    from evaluator.result import read_result
    from leaderboard.submissions.reproduce import reproduce_result, reproducible
    from leaderboard.submissions.sandbox import NOT_ISOLATED

    result = read_result(path, with_run=False, with_samples=False)
    if result.model.artifact is None or result.full is not None:
        reproducible(result, str(path))  # says why there is nothing to run again
    if args.max_docs is not None and (result.dataset.num_docs or 0) > args.max_docs:
        return True, (f"{path}: skipped: {result.dataset.num_docs} documents, over --max-docs {args.max_docs}; a "
                      "maintainer reproduces it on request"), None
    if not isinstance(result.model.artifact, Artifact) and not args.run_submitted_code:
        return True, (f"{path}: skipped: {result.model.artifact.spec} runs the submitter's code; a maintainer "
                      "reproduces it on request (--run-submitted-code)"), None
    dataset_id = result.dataset.id
    data_dir = data_dirs.get(dataset_id) or (data_root / dataset_id if data_root is not None else None)
    outcome = reproduce_result(path, data_dir=data_dir, cache_dir=args.cache_dir, batch_size=args.batch_size,
                               isolated=not args.no_isolation)
    if not outcome.reproduced:
        return False, f"{path}: not reproduced by {outcome.spec}: {outcome.difference}", None
    blind = outcome.isolation != NOT_ISOLATED
    return True, (f"{path}: reproduced by {outcome.spec} ({outcome.queries} queries to depth {outcome.depth}, scores "
                  f"within {outcome.max_score_difference:.1e} relative)"
                  + ("" if blind else "; not blind: run without isolation (--no-isolation), never recorded")), outcome
