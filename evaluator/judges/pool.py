"""The pool a judge grades: the top `depth` documents of every stored ranking of one dataset in `results/`, each
ranking cut the way trec_eval reads it (score descending, ties by document id descending), split into the pairs
the official qrels judge and the holes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaluator.datasets.judgment_sets import dataset_slug
from evaluator.errors import InputFormatError
from evaluator.result import read_result


@dataclass(frozen=True)
class Pool:
    """The pooled pairs of one dataset, each as (query id, doc id), sorted in byte order."""

    dataset_id: str
    depth: int
    results: tuple[str, ...]  # the result files pooled, relative to the results folder
    judged: tuple[tuple[str, str], ...]  # pairs the official qrels judge
    holes: tuple[tuple[str, str], ...]  # pairs they do not


def top(ranking: list[tuple[str, float]], depth: int) -> list[str]:
    """The first `depth` document ids in trec_eval's order (score descending, then doc id descending)."""
    ordered = sorted(ranking, key=lambda pair: (pair[1], pair[0].encode("utf-8")), reverse=True)
    return [doc_id for doc_id, _ in ordered[:depth]]


def result_files(results_dir: Path, dataset_id: str) -> list[Path]:
    """Every result file of `dataset_id` under `results_dir` (`<model_slug>/<dataset_slug>.json`)."""
    return sorted(Path(results_dir).glob(f"*/{dataset_slug(dataset_id)}.json"))


def make_pool(results_dir: Path, dataset_id: str, official: dict[str, dict[str, int]], depth: int = 10) -> Pool:
    """The pool of `dataset_id`'s stored rankings at `depth`, split by the `official` judgments
    ({query: {doc: grade}}); pairs of queries the official judgments do not hold are left out."""
    files = result_files(results_dir, dataset_id)
    if not files:
        raise InputFormatError(f"{results_dir}: no result of {dataset_id} ({dataset_slug(dataset_id)}.json under a "
                               "model folder); pool the results of a dataset on the board")
    pairs: set[tuple[str, str]] = set()
    for path in files:
        result = read_result(path)
        if result.dataset.id != dataset_id:
            raise InputFormatError(f"{path}: a result of {result.dataset.id}, not {dataset_id}")
        for query_id, ranking in result.rankings().items():
            if query_id in official:
                pairs.update((query_id, doc_id) for doc_id in top(ranking, depth))
    ordered = sorted(pairs, key=lambda pair: (pair[0].encode("utf-8"), pair[1].encode("utf-8")))
    return Pool(dataset_id, depth, tuple(str(path.relative_to(results_dir)) for path in files),
                tuple(p for p in ordered if p[1] in official[p[0]]),
                tuple(p for p in ordered if p[1] not in official[p[0]]))
