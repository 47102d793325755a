"""`irboard compare`: the Markdown comparison of result files with the baseline and the best, to stdout or --out."""

from __future__ import annotations

import argparse
from pathlib import Path

from leaderboard.commands.options import parse_data_dirs
from leaderboard.submissions.catalog import DEFAULT_BASELINE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", type=Path, help="the new or changed result files")
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="model id of the baseline")
    parser.add_argument("--out", type=Path, help="write the Markdown here instead of stdout")
    parser.add_argument("--data-dir", action="append", default=[],
                        help="local datasets to verify results against, as for validate; repeatable")
    parser.add_argument("--group-datasets", default="", metavar="IDS",
                        help="also report your own benchmark: comma-separated dataset ids (the home page's "
                             "?datasets=), aggregated as a group")
    parser.add_argument("--group-weights", default="", metavar="WEIGHTS",
                        help="with --group-datasets: one positive weight per dataset (the page's ?weights=)")
    parser.add_argument("--group-from", type=Path, metavar="FILE",
                        help="take --group-datasets (and --group-weights) from the first such option written in "
                             "FILE, e.g. a pull request's description; none there: no group")


def run(args: argparse.Namespace) -> int:
    from evaluator.errors import IrboardError
    from evaluator.result import write_atomic
    from leaderboard.analysis.custom import choice_in_text, parse_choice
    from leaderboard.review.compare import comparison_markdown
    from leaderboard.submissions.verify import Judgments

    if args.group_weights and not args.group_datasets:
        raise IrboardError("--group-weights needs --group-datasets: name the datasets the weights are for")
    if args.group_from and not args.group_datasets:
        try:
            text = args.group_from.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            raise IrboardError(f"--group-from {args.group_from}: cannot read it ({error.strerror})") from None
        args.group_datasets, args.group_weights = choice_in_text(text) or ("", "")
    group = parse_choice(args.group_datasets, args.group_weights) if args.group_datasets else None
    text = comparison_markdown(list(args.paths), results_root=args.results, baseline=args.baseline,
                               judgments=Judgments(*parse_data_dirs(args.data_dir)), group=group)
    if args.out:
        write_atomic(args.out, text)
    else:
        print(text, end="")
    return 0
