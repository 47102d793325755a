"""`irboard validate`: every problem with result files, one line each on stderr, and exit 1 when there is one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluator.errors import IrboardError, one_line
from leaderboard.commands.options import parse_data_dirs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders (default: results/)")
    parser.add_argument("--results", type=Path, default=Path("results"), help="the results folder")
    parser.add_argument("--data-dir", action="append", default=[],
                        help="local datasets for re-scoring submitted runs: ID=DIR for one dataset, or a DIR "
                             "holding <dataset id>/ folders (e.g. ../shared/data); repeatable")
    parser.add_argument("--base", help="git revision to compare existing results against (e.g. origin/main)")
    parser.add_argument("--allow-any-full-url", action="store_true",
                        help="fetch a split result's full file from the address it names (full.url) instead of the "
                             "project's store or IRBOARD_FULL_MIRROR; only for files you trust")


def run(args: argparse.Namespace) -> int:
    from evaluator.environment import cores
    from evaluator.trust import RANKED_TIERS, tier_lines, weakest
    from leaderboard.submissions.validate import validate_paths

    data_dirs, data_root = parse_data_dirs([str(v) for v in args.data_dir])
    report = validate_paths(list(args.paths), results_root=args.results, data_dirs=data_dirs, data_root=data_root,
                            base=args.base, workers=min(cores(), 4), any_full_url=args.allow_any_full_url)
    for problem in report.problems:
        print(one_line(problem), file=sys.stderr)
    if report.problems:
        raise IrboardError(f"{len(report.problems)} problem(s) found; fix each line above")
    for path, note in sorted(report.notes.items()):  # advice, not a problem: beside the log, not in the summary
        print(f"irboard: {path}: {note}", file=sys.stderr)
    for path, reason in sorted(report.unfetched.items()):
        print(f"{path}: not verified: its full file cannot be fetched ({reason})")
    for path, reason in sorted(report.absences_unchecked.items()):
        print(f"{path}: absent_ids not checked against the corpus ({reason}); predictions count those documents as "
              "misses")
    for path, tiers in sorted(report.tiers.items()):  # files with a value short of re-scored: each tier in words
        if weakest(tiers.values()) not in RANKED_TIERS:
            for line in tier_lines(tiers):
                print(f"{path}: trust: {line}")
    if len(report.ranked - report.verified):  # trust per metric: ranked on what was re-scored
        print(f"irboard: {len(report.ranked - report.verified)} result file(s) not re-scored on every metric but "
              "ranked on their dataset's main metric, which was")
    print(f"irboard: {len(report.valid)} result file(s) valid, {len(report.verified)} verified by re-scoring "
          "every metric")
    return 0
