"""`irboard build` (the static site from results/) and `irboard serve` (a preview of it)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from evaluator.errors import one_line
from leaderboard.commands.options import instant, parse_data_dirs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--out", type=Path, default=Path("_site"))
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")
    parser.add_argument("--rounds", type=Path, default=Path("rounds"), help="the sealed rounds folder (docs/rounds.md)")
    parser.add_argument("--reproductions", type=Path, default=Path("reproductions"),
                        help="the reproduction ledger (docs/reproduction.md): results it names are 'reproduced'")
    parser.add_argument("--now", help="the instant to show round phases at, ISO 8601 with a zone (default: the "
                        "checked-out commit's time, so that a commit always builds the same site)")
    parser.add_argument("--highlight", nargs="*", type=Path, default=[], metavar="RESULT",
                        help="a pull request's preview: mark the rows of the models of these result files (and say so "
                        "on every page)")
    parser.add_argument("--data-dir", action="append", default=[],
                        help="local datasets (as for validate) to re-score stored rankings: those are 'verified'")


def run(args: argparse.Namespace) -> int:
    from evaluator.environment import cores
    from leaderboard.submissions.verify import verifier
    from leaderboard.web.build import build_site
    from leaderboard.web.provenance import build_stamp, commit_time

    data_dirs, data_root = parse_data_dirs(args.data_dir)
    # one process per core reads, decodes and verifies the files, computes each dataset's statistics and renders the
    # pages (BLAS stays at one thread in each: see leaderboard.cli.main)
    workers = min(cores(), 4)
    stamp = build_stamp(args.results)
    if args.highlight:
        stamp = replace(stamp, highlight=highlighted_models(args.highlight))
    report = build_site(args.results, args.out, strict=args.strict, is_verified=verifier(data_dirs, data_root),
                        workers=workers, stamp=stamp, rounds_dir=args.rounds, reproductions_dir=args.reproductions,
                        now=instant(args.now) if args.now else commit_time(args.results) or datetime.now(timezone.utc))
    for warning in report.warnings:
        print(f"warning: {one_line(warning)}", file=sys.stderr)
    for note in report.trust_notes:
        print(note)
    print(f"irboard: built {args.out}: {report.pages} pages from {report.results} results "
          f"({report.models} models, {report.datasets} datasets)")
    return 0


def highlighted_models(paths: list[Path]) -> tuple[str, ...]:
    """The model ids of the result files given to --highlight (files that do not read are named by validate)."""
    from evaluator.errors import IrboardError
    from evaluator.result import read_result

    ids = set()
    for path in paths:
        try:
            ids.add(read_result(path, with_run=False, with_samples=False).model.id)
        except IrboardError:
            continue
    return tuple(sorted(ids))


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=Path("_site"))
    parser.add_argument("--port", type=int, default=8000)


def serve(args: argparse.Namespace) -> int:
    from leaderboard.web.build import make_server

    server = make_server(args.out, args.port)
    # the address, at once (flushed): the port may be one the system picked (--port 0)
    print(f"irboard: serving {args.out} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
