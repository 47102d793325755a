"""The `irboard` command: evaluate (evaluator), validate, build, predict and serve (leaderboard)."""

from __future__ import annotations

import argparse
import ctypes
import logging
import os
import shlex
import sys
from pathlib import Path

from evaluator import __version__
from evaluator.errors import IrboardError, one_line


def _parser() -> argparse.ArgumentParser:
    from evaluator import cli as evaluate_cli
    from leaderboard.analysis import predict as predict_cli
    from leaderboard.submissions.full import FULL_STORE

    parser = argparse.ArgumentParser(prog="irboard", description="Reproducible IR leaderboard.")
    parser.add_argument("--version", action="version", version=f"irboard {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    evaluate = commands.add_parser("evaluate", help="write a result file from a run file or a model")
    evaluate_cli.add_arguments(evaluate)
    evaluate.set_defaults(handler=evaluate_cli.run)

    validate = commands.add_parser("validate", help="check result files; exit 1 listing every problem")
    validate.add_argument("paths", nargs="*", type=Path, help="files or folders (default: results/)")
    validate.add_argument("--results", type=Path, default=Path("results"), help="the results folder")
    validate.add_argument("--data-dir", action="append", default=[],
                          help="local datasets for re-scoring submitted runs: ID=DIR for one dataset, or a DIR "
                               "holding <dataset id>/ folders (e.g. ../shared/data); repeatable")
    validate.add_argument("--base", help="git revision to compare existing results against (e.g. origin/main)")
    validate.add_argument("--allow-any-full-url", action="store_true",
                          help="fetch a split result's full file from the address it names (full.url) instead of the "
                               "project's store or IRBOARD_FULL_MIRROR; only for files you trust")
    validate.set_defaults(handler=_validate)

    migrate = commands.add_parser("migrate", help="rewrite result files of older schema versions, losslessly")
    migrate.add_argument("paths", nargs="*", type=Path, help="files or folders (default: results/)")
    migrate.add_argument("--results", type=Path, default=Path("results"), help="the results folder")
    migrate.set_defaults(handler=_migrate)

    split = commands.add_parser("split", help="keep a result's readable part and main metric in git; write its full "
                                "file, named by sha256, for upload outside git")
    split.add_argument("paths", nargs="+", type=Path, help="whole result files, rewritten as split files")
    split.add_argument("--url-base", default=FULL_STORE,
                       help="http(s) address the full files will be uploaded under (default: the project's store, "
                       f"{FULL_STORE})")
    split.add_argument("--out-dir", type=Path, required=True, help="folder to write <sha256>.json full files to")
    split.set_defaults(handler=_split)

    datasets = commands.add_parser("datasets", help="list the registered datasets and whether their judgments are "
                                   "cached")
    datasets.add_argument("prefix", nargs="?", default="", help="only ids starting with this (e.g. miracl/)")
    datasets.set_defaults(handler=_datasets)

    compare = commands.add_parser("compare", help="Markdown comparison of result files with baseline and best")
    compare.add_argument("paths", nargs="*", type=Path, help="the new or changed result files")
    compare.add_argument("--results", type=Path, default=Path("results"))
    compare.add_argument("--baseline", default="bm25", help="model id of the baseline")
    compare.add_argument("--out", type=Path, help="write the Markdown here instead of stdout")
    compare.add_argument("--data-dir", action="append", default=[],
                         help="local datasets to verify results against, as for validate; repeatable")
    compare.set_defaults(handler=_compare)

    build = commands.add_parser("build", help="render the static site from results/")
    build.add_argument("--results", type=Path, default=Path("results"))
    build.add_argument("--out", type=Path, default=Path("_site"))
    build.add_argument("--strict", action="store_true", help="treat warnings as errors")
    build.add_argument("--rounds", type=Path, default=Path("rounds"), help="the sealed rounds folder (docs/rounds.md)")
    build.add_argument("--now", help="the instant to show round phases at, ISO 8601 with a zone (default: the "
                       "checked-out commit's time, so that a commit always builds the same site)")
    build.add_argument("--data-dir", action="append", default=[],
                       help="local datasets (as for validate) to re-score stored rankings: those are 'verified'")
    build.set_defaults(handler=_build)

    predict = commands.add_parser("predict", help="predicted Recall@k of a result at another corpus size (JSON)")
    predict_cli.add_arguments(predict)
    predict.set_defaults(handler=_predict)

    _add_round_commands(commands)

    serve = commands.add_parser("serve", help="preview the built site on http://127.0.0.1:PORT")
    serve.add_argument("--out", type=Path, default=Path("_site"))
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(handler=_serve)
    return parser


def _add_round_commands(commands) -> None:
    """`irboard round check|commit|reveal|score` and `irboard pool` (sealed rounds, docs/rounds.md)."""
    round_parser = commands.add_parser("round", help="sealed rounds: commit, reveal, check and score runs")
    steps = round_parser.add_subparsers(dest="step", required=True)
    now_help = "the instant to judge phases at, ISO 8601 with a zone (default: now)"

    check = steps.add_parser("check", help="check a round folder; exit 1 listing every problem")
    check.add_argument("round", type=Path, help="the round folder, rounds/<name>")
    check.add_argument("--pending", nargs="*", default=[], type=Path,
                       help="files a pull request adds or changes (repository paths): each must be allowed now")
    check.add_argument("--now", help=now_help)
    check.set_defaults(handler=_round_check)

    commit = steps.add_parser("commit", help="write the commitment of a run and a private salt")
    commit.add_argument("round", type=Path)
    commit.add_argument("--run", type=Path, required=True, help="the TREC run to commit to (keep it unchanged)")
    commit.add_argument("--model-id", required=True)
    commit.add_argument("--revision", default="", help="the model revision (one commitment per revision)")
    commit.add_argument("--type", default="other", help="lexical, sparse, dense, hybrid, late-interaction, other")
    commit.add_argument("--license", default="")
    commit.add_argument("--url", default="")
    commit.add_argument("--uses-model", action="append", default=[],
                        help="a model the system runs inside (reranker, generator); repeatable")
    commit.add_argument("--salt-out", type=Path, help="where to keep the salt (default: RUN.salt); keep it private")
    commit.set_defaults(handler=_round_commit)

    reveal = steps.add_parser("reveal", help="copy a committed run and its salt into the round after the freeze")
    reveal.add_argument("round", type=Path)
    reveal.add_argument("--entry", required=True, help="the commitment's name (its file name without .json)")
    reveal.add_argument("--run", type=Path, required=True)
    reveal.add_argument("--salt", type=Path, required=True)
    reveal.set_defaults(handler=_round_reveal)

    score = steps.add_parser("score", help="write scores.json: every revealed run against the judgments")
    score.add_argument("round", type=Path)
    score.add_argument("--now", help=now_help)
    score.set_defaults(handler=_round_score)

    pool = commands.add_parser("pool", help="write a round's pool of revealed runs as its assessment file")
    pool.add_argument("round", type=Path, help="the round folder, rounds/<name>")
    pool.add_argument("--now", help=now_help)
    pool.set_defaults(handler=_pool)


def _instant(text: str | None):
    from datetime import datetime, timezone

    if text is None:
        return datetime.now(timezone.utc)
    try:
        instant = datetime.fromisoformat(text)
    except ValueError:
        instant = None
    if instant is None or instant.tzinfo is None:
        raise IrboardError(f"--now {text!r}: write an ISO 8601 instant with a zone, e.g. 2027-01-15T12:00:00Z")
    return instant.astimezone(timezone.utc)


def _round_check(args: argparse.Namespace) -> int:
    from leaderboard.rounds.play import round_status

    folder = args.round.resolve()
    pending = [p.resolve().relative_to(folder).as_posix() for p in args.pending
               if folder in p.resolve().parents]
    status = round_status(args.round, _instant(args.now), pending=pending)
    ledger = status.ledger
    print(f"irboard: round {ledger.round.name}: phase {ledger.phase}; "
          + ", ".join(f"{entry.name} {entry.status}" for entry in ledger.entries))
    for problem in status.problems:
        print(f"error: {one_line(problem)}", file=sys.stderr)
    return 1 if status.problems else 0


def _round_commit(args: argparse.Namespace) -> int:
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
    path = commit_run(args.round, args.run, model, salt_out, args.uses_model)
    print(f"irboard: wrote {path}; the salt is in {salt_out}: keep it private until the reveal")
    return 0


def _round_reveal(args: argparse.Namespace) -> int:
    from leaderboard.rounds.play import reveal_run

    run, salt = reveal_run(args.round, args.entry, args.run, args.salt)
    print(f"irboard: wrote {run} and {salt}; open a pull request with both")
    return 0


def _round_score(args: argparse.Namespace) -> int:
    from leaderboard.rounds.play import write_scores

    print(f"irboard: wrote {write_scores(args.round, _instant(args.now))}")
    return 0


def _pool(args: argparse.Namespace) -> int:
    from leaderboard.rounds.play import write_pool

    print(f"irboard: wrote {write_pool(args.round, _instant(args.now))}")
    return 0


def _validate(args: argparse.Namespace) -> int:
    from leaderboard.analysis.predictions import Predictor
    from leaderboard.submissions.validate import run_validate

    # what a site build with default settings will predict from each file's samples, made while validate has them
    # decoded, so that the build after it (make site, the deploy) decodes no samples
    return run_validate(args, predictor=Predictor())


def _migrate(args: argparse.Namespace) -> int:
    from leaderboard.submissions.migrate import run_migrate

    return run_migrate(args)

def _split(args: argparse.Namespace) -> int:
    from leaderboard.submissions.full import run_split

    return run_split(args)


def _datasets(args: argparse.Namespace) -> int:
    from leaderboard.submissions.catalog import run_datasets

    return run_datasets(args)


def _compare(args: argparse.Namespace) -> int:
    from leaderboard.review.compare import run_compare

    return run_compare(args)


def _build(args: argparse.Namespace) -> int:
    from leaderboard.submissions.parallel import cores
    from leaderboard.submissions.validate import parse_data_dirs
    from leaderboard.submissions.verify import verifier
    from leaderboard.web.build import build_site
    from leaderboard.web.provenance import build_stamp

    data_dirs, data_root = parse_data_dirs(args.data_dir)
    # one process per core reads, decodes and verifies the files, computes each dataset's statistics and renders the
    # pages (BLAS stays at one thread in each: see main)
    workers = min(cores(), 4)
    report = build_site(args.results, args.out, strict=args.strict, is_verified=verifier(data_dirs, data_root),
                        workers=workers, stamp=build_stamp(args.results), rounds_dir=args.rounds,
                        now=_instant(args.now) if args.now else _head_time())
    for warning in report.warnings:
        print(f"warning: {one_line(warning)}", file=sys.stderr)
    print(f"irboard: built {args.out}: {report.pages} pages from {report.results} results "
          f"({report.models} models, {report.datasets} datasets)")
    return 0


def _head_time():
    """The committer time of the checked-out commit: the instant a build judges round phases at, so that the
    same commit builds the same site. The current time outside a git checkout."""
    import subprocess
    from datetime import datetime, timezone

    try:
        out = subprocess.run(["git", "log", "-1", "--format=%cI"], capture_output=True, text=True, check=True).stdout
        return datetime.fromisoformat(out.strip()).astimezone(timezone.utc)
    except (OSError, ValueError, subprocess.CalledProcessError):
        return datetime.now(timezone.utc)


def _predict(args: argparse.Namespace) -> int:
    from leaderboard.analysis.predict import run_predict

    return run_predict(args)


def _serve(args: argparse.Namespace) -> int:
    from leaderboard.web.build import serve_site

    serve_site(args.out, args.port)
    return 0


def keep_freed_memory() -> None:
    """Let glibc keep freed memory for the next allocation instead of returning it to the system.

    By default glibc unmaps a freed block of 128 KB or more and trims the heap's top once 128 KB of it are free;
    the next array of that size is then faulted in again, page by page. Reading a result file allocates and
    frees megabyte arrays (its score samples decode to 1.6 MB a 100-query file), and those page faults cost more
    than the decoding: reading a benchmark file and predicting from its samples took 3.05 ms with this and 5.8 ms
    without (benchmarks/README.md). Peak memory is unchanged; a process may hold up to 256 MB it has freed.
    Other C libraries: nothing to do."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    libc.mallopt(m_mmap_threshold, 32 * 2**20)  # the largest glibc accepts
    libc.mallopt(m_trim_threshold, 256 * 2**20)


def main(argv: list[str] | None = None) -> int:
    # Before numpy loads: OpenBLAS would start a thread per core, each spinning ~0.1 s of CPU before it sleeps,
    # for matrix products no command needs in parallel; dense search sets its BLAS threads itself.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    keep_freed_memory()
    logging.basicConfig(level=logging.WARNING, format="irboard: %(message)s")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = _parser().parse_args(argv)
    args.command_line = shlex.join(["irboard", *argv])  # recorded in result provenance
    try:
        return args.handler(args)
    except IrboardError as error:
        # A BuildError lists its problems one per line (each already one line); anything else is one line.
        print(f"error: {error if hasattr(error, 'problems') else one_line(str(error))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
