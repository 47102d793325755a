"""Re-scoring a submitted ranking against the qrels: what makes a result "verified"."""

from __future__ import annotations

import logging
from pathlib import Path

from evaluator.errors import IrboardError
from evaluator.metrics import Qrels, evaluate, parse_measure, rank_run
from evaluator.result import ResultFile

log = logging.getLogger(__name__)
TOLERANCE = 1e-6


def verifiable_measures(result: ResultFile) -> list:
    """Metrics the stored ranking determines: those with a cutoff no deeper than the stored depth."""
    if result.run is None:
        return []
    measures = [parse_measure(name) for name in result.metrics]
    return [m for m in measures if m.cutoff is not None and m.cutoff <= result.run.depth]


def rescore_problems(result: ResultFile, qrels: Qrels) -> list[str]:
    """Differences between the submitted per-query values and the ones the stored ranking gives."""
    measures = verifiable_measures(result)
    if not measures:
        return ["has no stored ranking (run) deep enough to re-score any metric"]
    if qrels.sha256() != result.dataset.qrels_sha256:
        return [f"dataset.qrels_sha256 does not match the qrels of {result.dataset.id}; evaluate on the official qrels"]
    run = {query_id: dict(ranking) for query_id, ranking in result.run.rankings.items()}
    ranked = rank_run(run, qrels, ignore_identical_ids=result.settings.ignore_identical_ids)
    values = evaluate(ranked, qrels, measures, result.settings.relevance_level)
    problems = []
    for measure in measures:
        name = str(measure)
        submitted = result.per_query[name]
        for query_id, value in zip(ranked.query_ids, values[name].tolist(), strict=True):
            if abs(submitted.get(query_id, float("nan")) - value) > TOLERANCE or query_id not in submitted:
                problems.append(
                    f"per_query[{name!r}][{query_id!r}] is {submitted.get(query_id)} but re-scoring the stored "
                    f"ranking gives {value:.6f}; regenerate the result with `irboard evaluate`"
                )
                break
    return problems


def qrels_for(dataset_id: str, split: str, data_dirs: dict[str, Path], data_root: Path | None) -> Qrels | None:
    """The qrels of a dataset if a local copy is known: an explicit folder, `<root>/<dataset id>`, or the cache."""
    from evaluator.trec import read_qrels

    candidates = []
    if dataset_id in data_dirs:
        candidates.append(data_dirs[dataset_id])
    if data_root is not None:
        candidates.append(data_root / dataset_id)
    try:
        from evaluator.datasets.download import cache_root

        candidates.append(cache_root() / dataset_id)  # where downloads are extracted
    except ImportError:  # pragma: no cover - datasets package always present
        pass
    for folder in candidates:
        path = folder / "qrels" / f"{split}.tsv"
        if path.is_file():
            try:
                return read_qrels(path)
            except IrboardError as error:
                log.warning("cannot read %s: %s", path, error)
    return None


def verifier(data_dirs: dict[str, Path], data_root: Path | None):
    """`is_verified(result)` for the site build: re-scores results whose qrels are at hand (qrels cached)."""
    cache: dict[tuple[str, str], Qrels | None] = {}

    def is_verified(result: ResultFile) -> bool:
        key = (result.dataset.id, result.dataset.split)
        if key not in cache:
            cache[key] = qrels_for(*key, data_dirs, data_root)
        return result.run is not None and cache[key] is not None and not rescore_problems(result, cache[key])

    return is_verified
