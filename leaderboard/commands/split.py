"""`irboard split`: rewrite whole result files as split files and write their full files for upload; or, with
`--run`, record the run file a result was evaluated from (`run.full`) and write it for upload."""

from __future__ import annotations

import argparse
from pathlib import Path

from leaderboard.submissions.full import FULL_STORE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, help="whole result files, rewritten as split files")
    parser.add_argument("--url-base", default=FULL_STORE,
                        help="http(s) address the full files will be uploaded under (default: the project's store, "
                        f"{FULL_STORE}); CI also fetches from there when it is on huggingface.co, github.com or "
                        "zenodo.org")
    parser.add_argument("--out-dir", type=Path, required=True, help="folder to write <sha256>.json full files to")
    parser.add_argument("--run", type=Path, help="instead of splitting the one result given, record the run file it "
                        "was evaluated from as its run.full and write it to --out-dir as <sha256>.run, so that its "
                        "deep metrics verify from the run's bytes")


def run(args: argparse.Namespace) -> int:
    from evaluator.errors import IrboardError
    from leaderboard.submissions.full import add_full_run, split_result
    from leaderboard.submissions.verify import qrels_for

    if args.run is not None:
        if len(args.paths) != 1:
            raise IrboardError("split --run: give one result file, the one the run was evaluated into")
        full = add_full_run(args.paths[0], args.run, url_base=args.url_base, out_dir=args.out_dir,
                            judgments=lambda dataset_id, split: qrels_for(dataset_id, split, {}, None))
        print(f"{args.paths[0]}: run.full recorded; upload {args.out_dir / f'{full.sha256}.run'} ({full.bytes} bytes) "
              f"to {full.url}")
        return 0
    for path in args.paths:
        full = split_result(path, url_base=args.url_base, out_dir=args.out_dir)
        print(f"{path}: split; upload {args.out_dir / f'{full.sha256}.json'} ({full.bytes} bytes) to {full.url}")
    return 0
