"""`irboard datasets`: every registered dataset with its official judgments' source and whether they are cached."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from evaluator.datasets import all_specs
from evaluator.datasets.download import cache_root
from evaluator.datasets.official import SOURCE, is_cached, known_query_ids_sha256, official_judgments
from evaluator.errors import IrboardError
from leaderboard.submissions.facts import DatasetFacts, definition_facts

DEFAULT_MAIN_METRIC = "nDCG@10"
DEFAULT_BASELINE = "bm25"  # the model id the site and `irboard compare` measure every other result against


@dataclass(frozen=True)
class DatasetInfo:
    id: str
    name: str
    group: str
    language: str
    main_metric: str
    headline_metrics: tuple[str, ...] = ()  # what the dataset is published with, main metric first
    headline_source: str = ""  # where (paper or leaderboard)
    query_ids_sha256: str | None = None  # the registered query set (evaluator.datasets.query_ids_sha256), if any
    known: bool = True  # registered or declared (False: an id no one defined, which the build refuses)
    facts: DatasetFacts | None = None  # what its definition states, which the build holds results to (facts.py)


def dataset_info(dataset_id: str) -> DatasetInfo:
    """The registered spec of a dataset, or group "Other" with nDCG@10 when there is none."""
    from evaluator.datasets import get_spec

    try:
        spec = get_spec(dataset_id)
        facts = definition_facts(spec)
    except (LookupError, ValueError, IrboardError):
        return DatasetInfo(dataset_id, dataset_id, "Other", "", DEFAULT_MAIN_METRIC, known=False)
    return DatasetInfo(
        id=dataset_id, name=spec.name or dataset_id, group=spec.group or "Other", language=spec.language,
        main_metric=spec.main_metric or DEFAULT_MAIN_METRIC, headline_metrics=tuple(spec.headline_metrics),
        headline_source=spec.headline_source, query_ids_sha256=known_query_ids_sha256(dataset_id), facts=facts,
    )


def main_metric(dataset_id: str, stored: Collection[str] | None = None) -> str:
    """The metric the site ranks a dataset by (its spec's main metric; nDCG@10 for unregistered ids). Given the
    metrics a result stores, the first of them by name when it lacks that one (what compare reports it by)."""
    wanted = dataset_info(dataset_id).main_metric
    if stored is None or wanted in stored:
        return wanted
    return min(stored, default=wanted)


COLUMNS = ("id", "split", "queries", "documents", "source", "licence", "judgments")


def dataset_rows(prefix: str = "") -> list[tuple[str, ...]]:
    """One row per registered dataset whose id starts with `prefix`, in registry order."""
    rows = []
    for spec in all_specs():
        if not spec.id.startswith(prefix):
            continue
        official = official_judgments(spec.id)
        if official is not None:
            source, cached = SOURCE, is_cached(official.qrels)
        else:  # no official download: verified from a copy placed in the cache (or --data-dir)
            source, cached = "local copy only", (cache_root() / spec.id / "qrels" / f"{spec.split}.tsv").is_file()
        rows.append((spec.id, spec.split, _count(spec.num_queries), _count(spec.num_docs), source, spec.license,
                     "cached" if cached else "not cached"))
    return rows


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"
