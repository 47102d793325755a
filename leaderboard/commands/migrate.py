"""`irboard migrate`: rewrite result files of older schema versions, one line per file rewritten."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluator.errors import IrboardError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders (default: results/)")
    parser.add_argument("--results", type=Path, default=Path("results"), help="the results folder")


def run(args: argparse.Namespace) -> int:
    from evaluator.errors import ResultValidationError
    from evaluator.result import SCHEMA_VERSION
    from leaderboard.submissions.migrate import migrate_file
    from leaderboard.submissions.validate import result_files

    files = result_files(list(args.paths), args.results)
    problems, rewritten = [], 0
    for path in files:
        try:
            if migrate_file(path):
                rewritten += 1
                print(f"{path}: rewritten as schema version {SCHEMA_VERSION}")
        except ResultValidationError as error:
            problems.append(str(error))
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        raise IrboardError(f"{len(problems)} file(s) could not be migrated; fix each line above")
    print(f"irboard: {rewritten} of {len(files)} result file(s) rewritten, the others were already version "
          f"{SCHEMA_VERSION}")
    return 0
