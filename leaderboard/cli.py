"""The `irboard` command: evaluate (evaluator), validate, build, predict, serve and the rest (leaderboard/commands/,
one module per command); this module wires them up and turns errors into one line and exit 1."""

from __future__ import annotations

import argparse
import ctypes
import logging
import os
import shlex
import sys

from evaluator import __version__
from evaluator.errors import IrboardError, missing_extra, one_line


def _parser() -> argparse.ArgumentParser:
    from evaluator import cli as evaluate_cli
    from leaderboard.commands import (
        build,
        compare,
        datasets,
        migrate,
        predict,
        reproduce,
        rounds,
        split,
        validate,
    )

    parser = argparse.ArgumentParser(prog="irboard", description="Reproducible IR leaderboard.")
    parser.add_argument("--version", action="version", version=f"irboard {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help: str, add_arguments, handler) -> None:
        sub = commands.add_parser(name, help=help)
        add_arguments(sub)
        sub.set_defaults(handler=handler)

    command("evaluate", "print a run file's metrics as trec_eval does, or write a result file from a run file or a "
            "model", evaluate_cli.add_arguments, evaluate_cli.run)
    command("validate", "check result files; exit 1 listing every problem", validate.add_arguments, validate.run)
    command("migrate", "rewrite result files of older schema versions, losslessly", migrate.add_arguments,
            migrate.run)
    command("split", "keep a result's readable part and main metric in git; write its full file, named by sha256, "
            "for upload outside git", split.add_arguments, split.run)
    command("datasets", "list the registered datasets and whether their judgments are cached",
            datasets.add_arguments, datasets.run)
    command("compare", "Markdown comparison of result files with baseline and best", compare.add_arguments,
            compare.run)
    command("build", "render the static site from results/", build.add_arguments, build.run)
    command("predict", "predicted Recall@k of a result at another corpus size (JSON)", predict.add_arguments,
            predict.run)
    command("reproduce", "run results' declared artifacts again and compare the rankings", reproduce.add_arguments,
            reproduce.run)
    rounds.add_round_commands(commands)
    command("serve", "preview the built site on http://127.0.0.1:PORT", build.add_serve_arguments, build.serve)
    return parser


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
    except ImportError as error:  # an optional extra not installed: name it (any other module is a bug)
        extra = missing_extra(error)
        if extra is None:
            raise
        print(f"error: {extra}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
