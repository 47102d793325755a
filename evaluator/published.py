"""The published runs of `published_runs/manifest.json`, re-scored into results (`make results`).

Each run is a file in a GitHub repository at a full commit. It is downloaded from
``https://raw.githubusercontent.com/<repository>/<commit>/<path>`` (or ``$IRBOARD_RUNS_MIRROR``, a folder or URL laid
out the same way: ``<mirror>/<repository>/<commit>/<path>``) into ``$IRBOARD_CACHE/published-runs/``, checked
against the manifest's sha256 and size, and evaluated with ``irboard evaluate --run`` with the manifest's model
metadata, references and ``--source``. docs/published-runs.md describes the manifest.

    python -m evaluator.published results --results-dir results
    python -m evaluator.published mirror --snapshots /work/.mirror --out DIR   # a mirror from bare git snapshots
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from evaluator.datasets.download import CACHE_ENV, cache_root, fetch_file, file_sha256
from evaluator.errors import IrboardError
from evaluator.source import Source

logger = logging.getLogger(__name__)

MANIFEST = Path(__file__).resolve().parents[1] / "published_runs" / "manifest.json"
MIRROR_ENV = "IRBOARD_RUNS_MIRROR"
RAW_BASE = "https://raw.githubusercontent.com"
RAW_BASE_ENV = "IRBOARD_GITHUB_RAW"  # replaces RAW_BASE (the tests serve the same paths from 127.0.0.1)
# manifest model field -> `irboard evaluate` flag (values as the flag takes them)
_MODEL_FLAGS = {"type": "--model-type", "url": "--model-url", "license": "--license", "parameters": "--parameters",
                "dim": "--dim"}


@dataclass(frozen=True)
class PublishedRun:
    model_id: str
    dataset_id: str
    source: Source
    sha256: str
    bytes: int
    model: dict
    references: tuple[dict, ...] = ()

    def cached_path(self, cache_dir: str | os.PathLike[str] | None = None) -> Path:
        return cache_root(cache_dir) / "published-runs" / self.source.repository / self.source.commit / self.source.path


def read_manifest(path: Path = MANIFEST) -> list[PublishedRun]:
    """The manifest's runs in file order (IrboardError: one line naming the file, the run and the field)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        models, runs = document["models"], document["runs"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise IrboardError(f"{path}: not a manifest ({error}); it holds {{\"models\": {{…}}, \"runs\": […]}}") from None
    found, seen = [], set()
    for number, entry in enumerate(runs, 1):
        where = f"{path}: run {number}"
        try:
            source = Source(**entry["source"])
            run = PublishedRun(model_id=entry["model_id"], dataset_id=entry["dataset_id"], source=source,
                               sha256=entry["sha256"], bytes=int(entry["bytes"]), model=models[entry["model_id"]],
                               references=tuple(entry.get("references", ())))
        except KeyError as error:
            raise IrboardError(f"{where}: {error.args[0]!r} is missing (a model id needs its entry in \"models\")") from None
        except (ValueError, TypeError) as error:
            raise IrboardError(f"{where}: {str(error).splitlines()[-1].strip()}") from None
        if not re.fullmatch(r"[0-9a-f]{64}", run.sha256) or run.bytes < 1:
            raise IrboardError(f"{where}: sha256 must be 64 hex digits and bytes a positive size")
        if (run.model_id, run.dataset_id) in seen:
            raise IrboardError(f"{where}: {run.model_id} on {run.dataset_id} is listed twice; one result each")
        seen.add((run.model_id, run.dataset_id))
        found.append(run)
    return found


def download_url(source: Source) -> str:
    """Where a run file is fetched from: ``$IRBOARD_RUNS_MIRROR`` (folder or URL) when set, else GitHub's raw files."""
    relative = f"{source.repository}/{source.commit}/{source.path}"
    mirror = os.environ.get(MIRROR_ENV, "").strip()
    if mirror and "://" not in mirror:
        return (Path(mirror).expanduser().resolve() / relative).as_uri()
    base = mirror or os.environ.get(RAW_BASE_ENV, "").strip() or RAW_BASE
    return f"{base.rstrip('/')}/{quote(relative)}"


def fetch_run(run: PublishedRun, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The cached copy of the run file, its sha256 and size checked; downloaded first when missing or damaged."""
    dest = run.cached_path(cache_dir)
    if dest.is_file() and (dest.stat().st_size != run.bytes or file_sha256(dest) != run.sha256):
        logger.warning("%s: differs from the published file; downloading it again", dest)
        dest.unlink()
    hint = (f"set {MIRROR_ENV} to a folder or URL holding {run.source.repository}/{run.source.commit}/"
            f"{run.source.path}, or copy the file to {dest}")
    path = fetch_file(download_url(run.source), run.sha256, dest, hint, max_bytes=run.bytes)
    if path.stat().st_size != run.bytes:  # a sha256 match makes this unreachable but for a wrong manifest
        path.unlink()
        raise IrboardError(f"{run.source}: {path.stat().st_size} bytes, the manifest says {run.bytes}")
    return path


def evaluate_arguments(run: PublishedRun, run_path: Path, results_dir: Path) -> list[str]:
    """The `irboard evaluate` arguments that re-score `run` into `results_dir`."""
    argv = ["evaluate", "--run", str(run_path), "--model-id", run.model_id, "--dataset-id", run.dataset_id,
            "--results-dir", str(results_dir), "--force", "--quiet",
            "--source", str(run.source), "--source-license", run.source.license]
    for field, flag in _MODEL_FLAGS.items():
        if run.model.get(field) is not None:
            argv += [flag, str(run.model[field])]
    if run.model.get("open_weights") is not None:
        argv.append("--open-weights" if run.model["open_weights"] else "--closed-weights")
    if run.model.get("training_datasets") is not None:
        argv += ["--training-datasets", ",".join(run.model["training_datasets"]) or "none"]
    for reference in run.references:
        argv += ["--reference", f"{reference['metric']}={reference['value']},{reference['url']}"]
    return argv


def portable_command(run: PublishedRun, argv: list[str]) -> str:
    """The `irboard evaluate` command a result records, with its run file named as a shell expression under the
    cache folder (`cache_root`'s rule: ``$IRBOARD_CACHE``, else ``$XDG_CACHE_HOME/irboard``, else
    ``~/.cache/irboard``), where `python -m evaluator.published results` puts it on any machine, rather than by
    this machine's absolute path."""
    at = argv.index("--run") + 1
    cached = "published-runs/" + "/".join((run.source.repository, run.source.commit, run.source.path))
    run_file = f'"${{{CACHE_ENV}:-${{XDG_CACHE_HOME:-$HOME/.cache}}/irboard}}"/{shlex.quote(cached)}'
    return " ".join((shlex.join(["irboard", *argv[:at]]), run_file, shlex.join(argv[at + 1:])))


def make_results(results_dir: Path, manifest: Path = MANIFEST, cache_dir: str | None = None) -> list[Path]:
    """Every run of the manifest downloaded, checked and evaluated into `results_dir`; the result paths."""
    from evaluator import cli
    from evaluator.result import result_path

    runs = read_manifest(manifest)
    paths = [fetch_run(run, cache_dir) for run in runs]  # every download checked before any result is written
    parser = argparse.ArgumentParser(prog="irboard evaluate")
    cli.add_arguments(parser)
    for run, path in zip(runs, paths, strict=True):
        argv = evaluate_arguments(run, path, results_dir)
        args = parser.parse_args(argv[1:])
        args.command_line = portable_command(run, argv)
        cli.run(args)
    return [result_path(run.model_id, run.dataset_id, results_dir) for run in runs]


def build_mirror(snapshots: Path, out: Path, manifest: Path = MANIFEST) -> int:
    """A folder laid out like the raw URLs, from bare git snapshots ``<snapshots>/<owner>+<name>/repo``; the files."""
    runs = read_manifest(manifest)
    for run in runs:
        git_dir = snapshots / run.source.repository.replace("/", "+") / "repo"
        shown = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{run.source.commit}:{run.source.path}"],
                               capture_output=True)
        if shown.returncode != 0:
            raise IrboardError(f"{git_dir}: cannot read {run.source}: {shown.stderr.decode(errors='replace').strip()}")
        dest = out / run.source.repository / run.source.commit / run.source.path
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
        with os.fdopen(fd, "wb") as stream:
            stream.write(shown.stdout)
        os.replace(tmp, dest)
    return len(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluator.published", description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    commands = parser.add_subparsers(dest="command", required=True)
    results = commands.add_parser("results", help="download, check and evaluate every run into --results-dir")
    results.add_argument("--results-dir", type=Path, default=Path("results"))
    results.add_argument("--cache-dir")
    mirror = commands.add_parser("mirror", help=f"build a {MIRROR_ENV} folder from bare git snapshots")
    mirror.add_argument("--snapshots", type=Path, required=True, help="folder of <owner>+<name>/repo git dirs")
    mirror.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="irboard: %(message)s")
    try:
        if args.command == "results":
            written = make_results(args.results_dir, args.manifest, args.cache_dir)
            print(f"irboard: wrote {len(written)} results from {args.manifest}")
        else:
            count = build_mirror(args.snapshots, args.out, args.manifest)
            print(f"irboard: {count} run files under {args.out}; export {MIRROR_ENV}={args.out}")
    except IrboardError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
