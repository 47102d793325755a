"""What a pull request changes, written for CI: `python -I -m leaderboard.commands.changes --repo PR_DIR
--base BASE_SHA --out DIR` (run by .github/scripts/changed-results.sh; the listing is leaderboard/review/changes.py).
Exit status 1, with one line per problem on stderr, when something under results/ is not a regular result file
or cannot be read."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    from leaderboard.review.changes import list_changes, write_outputs

    parser = argparse.ArgumentParser(prog="python -m leaderboard.commands.changes",
                                     description="What a pull request changes: every result added, changed, "
                                                 "replaced, renamed or deleted, and every file outside results/.")
    parser.add_argument("--repo", type=Path, default=Path("."), help="the pull request's checkout (data only)")
    parser.add_argument("--base", required=True, help="the base revision (its merge base with HEAD is used)")
    parser.add_argument("--head", default="HEAD")
    parser.add_argument("--out", type=Path, required=True, help="folder for changed.nul, counts.json, changes.md")
    args = parser.parse_args(argv)
    try:
        listing = list_changes(args.repo, args.base, args.head)
    except subprocess.CalledProcessError as error:
        print(f"error: git failed in {args.repo}: {error.stderr.decode(errors='replace').strip()}", file=sys.stderr)
        return 1
    write_outputs(listing, args.out)
    for problem in listing.problems:
        print(problem, file=sys.stderr)
    return 1 if listing.problems else 0


if __name__ == "__main__":
    sys.exit(main())
