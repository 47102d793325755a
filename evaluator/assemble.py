"""Turn a ranked run and its metadata into a ResultFile; shared by `evaluate --run` and `evaluate --model`."""

from __future__ import annotations

import math
import platform
import resource
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from evaluator import __version__
from evaluator.metrics import Measure, Qrels, RankedRun, evaluate
from evaluator.result import SCHEMA_VERSION, parse_result

RUN_DEPTH = 100  # rankings stored per query so that anyone can re-score the result


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


def current_command() -> str:
    """The command line as a user would type it again."""
    return shlex.join(["irboard", *sys.argv[1:]])


def hardware_summary() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        import os

        cores = os.cpu_count()
    except Exception:  # pragma: no cover - platform without cpu_count
        cores = None
    return f"{platform.system()} {platform.machine()}, {cpu}, {cores} cores, Python {platform.python_version()}"


def peak_rss_bytes() -> int:
    # ru_maxrss is kilobytes on Linux, bytes on macOS
    value = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(value if sys.platform == "darwin" else value * 1024)


def assemble_result(
    ranked: RankedRun,
    qrels: Qrels,
    measures: Sequence[Measure],
    top_rankings: dict[str, list[tuple[str, float]]],
    meta: RunMetadata,
    extra_provenance: dict | None = None,
    score_samples: dict | None = None,
):
    """Compute every measure and build the validated result object."""
    values = evaluate(ranked, qrels, measures, meta.relevance_level)
    per_query = {
        name: {query_id: float(v) for query_id, v in zip(ranked.query_ids, array.tolist(), strict=True)}
        for name, array in values.items()
    }
    metrics = {name: math.fsum(column.values()) / len(column) for name, column in per_query.items()}
    rankings = {
        query_id: [(doc_id, float(score)) for doc_id, score in ranking[:RUN_DEPTH]]
        for query_id, ranking in top_rankings.items()
    }
    data = {
        "schema_version": SCHEMA_VERSION,
        "model": meta.model,
        "dataset": {
            "id": meta.dataset_id,
            "split": meta.split,
            "num_queries": len(qrels.query_ids),
            "num_docs": meta.num_docs,
            "qrels_sha256": qrels.sha256(),
        },
        "settings": {
            "top_k": meta.top_k,
            "ignore_identical_ids": meta.ignore_identical_ids,
            "relevance_level": meta.relevance_level,
        },
        "metrics": metrics,
        "per_query": per_query,
        "run": {"depth": RUN_DEPTH, "rankings": rankings},
        "provenance": {
            "irboard_version": __version__,
            "command": meta.command or current_command(),
            "created_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "hardware": hardware_summary(),
            "timings": {k: round(float(v), 6) for k, v in meta.timings.items()},
            "peak_rss_bytes": peak_rss_bytes(),
            **(extra_provenance or {}),
        },
        "score_samples": score_samples,
    }
    return parse_result(data, f"result for {meta.model.get('id')} on {meta.dataset_id}")
