"""`irboard datasets`: a table of the registered datasets and whether their judgments are cached."""

from __future__ import annotations

import argparse

from evaluator.errors import IrboardError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prefix", nargs="?", default="", help="only ids starting with this (e.g. miracl/)")


def run(args: argparse.Namespace) -> int:
    from leaderboard.submissions.catalog import COLUMNS, dataset_rows

    rows = dataset_rows(args.prefix)
    if not rows:
        raise IrboardError(f"no registered dataset id starts with {args.prefix!r}; try `irboard datasets` for all")
    widths = [max(len(row[i]) for row in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
    for row in [COLUMNS, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return 0
