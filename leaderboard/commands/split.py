"""`irboard split`: rewrite whole result files as split files and write their full files for upload."""

from __future__ import annotations

import argparse
from pathlib import Path

from leaderboard.submissions.full import FULL_STORE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", type=Path, help="whole result files, rewritten as split files")
    parser.add_argument("--url-base", default=FULL_STORE,
                        help="http(s) address the full files will be uploaded under (default: the project's store, "
                        f"{FULL_STORE})")
    parser.add_argument("--out-dir", type=Path, required=True, help="folder to write <sha256>.json full files to")


def run(args: argparse.Namespace) -> int:
    from leaderboard.submissions.full import split_result

    for path in args.paths:
        full = split_result(path, url_base=args.url_base, out_dir=args.out_dir)
        print(f"{path}: split; upload {args.out_dir / f'{full.sha256}.json'} ({full.bytes} bytes) to {full.url}")
    return 0
