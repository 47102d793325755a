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
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import lru_cache, partial
from pathlib import Path

import numpy as np

from evaluator import __version__
from evaluator.below import Below, judged_below
from evaluator.columns import encode_array
from evaluator.errors import IrboardError
from evaluator.metrics import Measure, Qrels, RankedRun, evaluate
from evaluator.metrics.depth import deeper, ranked_to, undetermined, why
from evaluator.result import ResultFile, Run, build_result, dump_result, encode_ids, size_limit
from evaluator.score_samples import ScoreSamples

# A result keeps its whole ranking when the file then fits its size cap; otherwise rankings are stored whole to this
# depth (what a pooled re-judgment reads), and below it each ranking's length and its judged entries (`Run.below`),
# which re-score every measure at any cutoff.
MIN_RUN_DEPTH = 100
log = logging.getLogger(__name__)
VERSIONED_PACKAGES = ("numpy", "scipy", "torch", "transformers", "sentence-transformers", "datasets",
                      "huggingface-hub", "pydantic", "faiss-cpu", "PyStemmer", "ray")


def stored_depth(top_k: int) -> int:
    """How deep rankings are stored whole: MIN_RUN_DEPTH, never beyond top_k."""
    return max(1, min(top_k, MIN_RUN_DEPTH))


def needs_below(measures: Sequence[Measure], depth: int = MIN_RUN_DEPTH) -> bool:
    """Whether a measure looks below `depth` (AP, RR, R@1000, ...), so a result stored to it keeps `Run.below`."""
    return any(m.cutoff is None or m.cutoff > depth for m in measures)


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
    keep_depth: int | None = None,
) -> ResultFile:
    """Compute every measure (unless `values` holds them, from `evaluate`) and build the validated result
    object. `top_rankings`: {query_id: [(doc_id, score), ...]} (and `below`, its judged entries below its depth),
    or a Run whose rows are `ranked`'s queries (with its own `below`). A ranking given whole (a Run of depth
    `meta.top_k` without `below`, or the dict) is stored whole when the result then fits its size cap
    (`fits_cap`); otherwise, or with `keep_depth`, to `keep_depth` (default MIN_RUN_DEPTH) with each ranking's
    length and its judged entries below (`Run.below`), kept only when a measure reads below that depth."""
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
    if isinstance(top_rankings, Run):  # rows aligned with ranked.query_ids (from rank_trec_run)
        run = top_rankings
    else:
        run = Run.from_rankings(ranked.query_ids, top_rankings, meta.top_k)
        run = Run(run.depth, run.doc_ids, run.lengths, run.docs, run.scores, below)
    whole = run.below is None and run.depth >= meta.top_k  # every ranking as long as the caller has it
    build = partial(build_result, header, ranked.query_ids, per_query, score_samples=score_samples,
                    source=f"result for {meta.model.get('id')} on {meta.dataset_id}")
    if whole and keep_depth is None:
        result = build(Run(meta.top_k, run.doc_ids, run.lengths, run.docs, run.scores))
        if fits_cap(result):
            return result
        log.info("the whole ranking would take the result over its size cap: stored to depth %d, and below it "
                 "only the judged documents (docs/result-format.md, \"Deep metrics\")", MIN_RUN_DEPTH)
    depth = stored_depth(meta.top_k) if keep_depth is None else max(1, min(keep_depth, meta.top_k))
    if whole and depth < meta.top_k:
        deep = judged_below(run, qrels.judgments, depth) if needs_below(measures, depth) else None
        run = run.cut(depth)
        run = Run(run.depth, run.doc_ids, run.lengths, run.docs, run.scores, deep)
    else:
        run = run.cut(depth)
    if run.below is not None and not needs_below(measures, depth):
        run = Run(run.depth, run.doc_ids, run.lengths, run.docs, run.scores)
    return build(run)


# A whole ranking is tried only when its top, encoded, extrapolates to within this share over the cap: deeper
# entries rarely cost less than the top's (ids recur less), and trying costs reading the run again.
TRY_WHOLE_MARGIN = 1.25


def may_fit_whole(top: Run, entries: int, num_queries: int) -> bool:
    """Could the whole ranking (`entries` in all) fit the cap, judged from its top `top` (as read)? The bytes an
    entry of the top's columns, times every entry, against the cap (with TRY_WHOLE_MARGIN): a cheap test that spares
    reading a run far over the cap whole (MS MARCO's 6,980 x 1,000)."""
    stored = int(top.docs.size)
    if not stored or entries <= stored:
        return True
    part = len(encode_ids(top.doc_ids)) + len(encode_array(top.docs, "<u4")) + len(encode_array(top.scores, "<f8"))
    return part / stored * entries <= TRY_WHOLE_MARGIN * size_limit(num_queries)


# Room kept beside a whole ranking's columns: the JSON around them (keys, quotes, indentation: under 200 bytes) and
# what `evaluate` may add after assembling (up to 20 `--reference` figures, each under 600 bytes)
RUN_BLOCK_OVERHEAD = 16_384


def fits_cap(result: ResultFile) -> bool:
    """Whether `result` (its ranking whole) is written within its size cap, found without writing it all when it
    is not: everything else is encoded first, then the ranking's columns one by one while the cap allows."""
    run = result.run
    budget = size_limit(result.dataset.num_queries) - RUN_BLOCK_OVERHEAD
    budget -= len(dump_result(replace(result, run=None)))
    for encode in (lambda: encode_array(run.lengths, "<u4"), lambda: encode_array(run.docs, "<u4"),
                   lambda: encode_array(run.scores, "<f8"), lambda: encode_ids(run.doc_ids)):
        budget -= len(encode())
        if budget < 0:
            return False
    return True
