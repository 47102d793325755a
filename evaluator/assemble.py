"""Turn a ranked run and its metadata into a ResultFile; shared by `evaluate --run` and `evaluate --model`."""

from __future__ import annotations

import logging
import math
import os
import platform
import resource
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

import numpy as np

from evaluator import __version__
from evaluator.below import Below
from evaluator.errors import IrboardError
from evaluator.metrics import Measure, Qrels, RankedRun, evaluate
from evaluator.metrics.depth import deeper, ranked_to, undetermined, why
from evaluator.result import ResultFile, Run, build_result
from evaluator.score_samples import ScoreSamples

# Rankings are stored whole to this depth (when retrieved): what a pooled re-judgment reads. Below it a result keeps
# each ranking's length and its judged entries (`Run.below`), which re-score every measure at any cutoff.
MIN_RUN_DEPTH = 100
log = logging.getLogger(__name__)
VERSIONED_PACKAGES = ("numpy", "scipy", "torch", "transformers", "sentence-transformers", "datasets",
                      "huggingface-hub", "pydantic", "faiss-cpu", "PyStemmer", "ray")


def stored_depth(top_k: int) -> int:
    """How deep rankings are stored whole: MIN_RUN_DEPTH, never beyond top_k."""
    return max(1, min(top_k, MIN_RUN_DEPTH))


def needs_below(measures: Sequence[Measure]) -> bool:
    """Whether a measure looks below MIN_RUN_DEPTH (AP, RR, R@1000, ...), so the result keeps `Run.below`."""
    return any(m.cutoff is None or m.cutoff > MIN_RUN_DEPTH for m in measures)


@dataclass
class RunMetadata:
    """Everything a result records besides the metric values."""

    model: dict  # the `model` block
    dataset_id: str
    split: str = "test"
    num_docs: int | None = None
    top_k: int = 1000
    ignore_identical_ids: bool = False
    relevance_level: int = 1
    timings: dict[str, float] = field(default_factory=dict)
    command: str = ""
    dataset_revision: str = ""
    unjudged_run_queries: int = 0  # run queries without judgments, skipped (evaluate --run)
    run_format: str = ""  # how the run file was read (evaluate --run)


def coverage_of(ranked: RankedRun, unjudged_run_queries: int = 0) -> dict:
    """The result's coverage record: judged queries, those with a ranked document, the run's queries without
    judgments, and the ranking depth (documents ranked) of the covered queries: min, median, max."""
    lengths = np.asarray(ranked.lengths)
    covered = lengths[lengths > 0]
    return {
        "judged_queries": int(lengths.size),
        "covered_queries": int(covered.size),
        "unjudged_run_queries": int(unjudged_run_queries),
        "depth_min": int(covered.min()) if covered.size else 0,
        "depth_median": float(np.median(covered)) if covered.size else 0.0,
        "depth_max": int(covered.max(initial=0)),
    }


def current_command() -> str:
    """The command line as a user would type it again."""
    return shlex.join(["irboard", *sys.argv[1:]])


def hardware_summary() -> str:
    cpu = platform.processor() or platform.machine()
    return f"{platform.system()} {platform.machine()}, {cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def peak_rss_bytes() -> int:
    # ru_maxrss is kilobytes on Linux, bytes on macOS
    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(value if sys.platform == "darwin" else value * 1024)


def package_versions() -> dict[str, str]:
    """Installed versions of the packages a result depends on (those not installed are left out)."""
    from importlib import metadata

    versions = {}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name.lower()] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


@lru_cache(maxsize=1)
def git_commit() -> str:
    """irboard's git commit when it runs from a checkout ('-dirty' with uncommitted changes to its code), else ''."""
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return ""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--",
                                "evaluator", "leaderboard", "pyproject.toml"],
                               capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{head}-dirty" if dirty else head


def assemble_result(
    ranked: RankedRun,
    qrels: Qrels,
    measures: Sequence[Measure],
    top_rankings: dict[str, list[tuple[str, float]]] | Run,
    meta: RunMetadata,
    extra_provenance: dict | None = None,
    score_samples: ScoreSamples | None = None,
    values: dict[str, np.ndarray] | None = None,
    below: Below | None = None,
) -> ResultFile:
    """Compute every measure (unless `values` holds them, from `evaluate`) and build the validated result
    object. `top_rankings`: {query_id: [(doc_id, score), ...]} (and `below`, its judged entries below
    MIN_RUN_DEPTH), or a Run whose rows are `ranked`'s queries (with its own `below`); the part below is kept
    only when a measure needs it."""
    if values is None:
        values = evaluate(ranked, qrels, measures, meta.relevance_level)
    per_query = {name: np.asarray(array, dtype=np.float64) for name, array in values.items()}
    shallow = undetermined(per_query, meta.top_k, meta.num_docs)
    if shallow and len(shallow) == len(per_query):
        raise IrboardError(f"evaluate: no metric asked for is determined by this run: {why(shallow, meta.top_k)}; "
                           f"{deeper(shallow)}, or ask for shallower metrics with --metrics")
    if shallow:  # a value that reads like R@1000 but is R@100 is never written (docs/result-format.md, "Depth")
        log.warning("left out %s: %s; the board shows them as '%s'; %s", ", ".join(shallow),
                    why(shallow, meta.top_k), ranked_to(meta.top_k), deeper(shallow))
        per_query = {name: array for name, array in per_query.items() if name not in shallow}
        measures = [m for m in measures if str(m) not in shallow]
    header = {
        "model": meta.model,
        "dataset": {
            "id": meta.dataset_id,
            "split": meta.split,
            "num_queries": len(qrels.query_ids),
            "num_docs": meta.num_docs,
            "qrels_sha256": qrels.sha256(),
            "revision": meta.dataset_revision,
        },
        "settings": {
            "top_k": meta.top_k,
            "ignore_identical_ids": meta.ignore_identical_ids,
            "relevance_level": meta.relevance_level,
        },
        "metrics": {name: math.fsum(array.tolist()) / len(array) for name, array in per_query.items()},
        "provenance": {
            "irboard_version": __version__,
            "command": meta.command or current_command(),
            "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "hardware": hardware_summary(),
            "timings": {k: round(float(v), 6) for k, v in meta.timings.items()},
            "peak_rss_bytes": peak_rss_bytes(),
            "git_commit": git_commit(),
            "versions": package_versions(),
            "coverage": coverage_of(ranked, meta.unjudged_run_queries),
            **({"run_format": meta.run_format} if meta.run_format else {}),
            **(extra_provenance or {}),
        },
    }
    depth = stored_depth(meta.top_k)
    if isinstance(top_rankings, Run):  # rows aligned with ranked.query_ids (from rank_trec_run)
        run = top_rankings.cut(depth)
    else:
        run = Run.from_rankings(ranked.query_ids, top_rankings, depth)
        run = Run(run.depth, run.doc_ids, run.lengths, run.docs, run.scores, below)
    if run.below is not None and not needs_below(measures):
        run = Run(run.depth, run.doc_ids, run.lengths, run.docs, run.scores)
    return build_result(header, ranked.query_ids, per_query, run, score_samples,
                        f"result for {meta.model.get('id')} on {meta.dataset_id}")
