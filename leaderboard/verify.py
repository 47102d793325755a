"""Re-scoring a submitted ranking against the qrels: what makes a result "verified"."""

from __future__ import annotations

import logging
from pathlib import Path

from evaluator.errors import DatasetLoadError, IrboardError
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
    """The qrels to re-score a result on `dataset_id` against: an explicit `--data-dir ID=DIR`, `<root>/<dataset id>`,
    the official judgments (cached, else downloaded), or a copy extracted into the cache (datasets without an
    official download, or offline); None when there is none. DatasetLoadError: official judgments that cannot be had
    and no copy."""
    from evaluator.datasets.download import cache_root
    from evaluator.datasets.official import official_judgments, official_qrels
    from evaluator.trec import read_qrels

    folders = [data_dirs[dataset_id]] if dataset_id in data_dirs else []
    if data_root is not None:
        folders.append(data_root / dataset_id)
    for folder in folders:
        path = folder / "qrels" / f"{split}.tsv"
        if path.is_file():
            try:
                return read_qrels(path)
            except IrboardError as error:
                log.warning("cannot read %s: %s", path, error)
    # where downloads are extracted, or a user placed e.g. a classic collection
    cached = cache_root() / dataset_id / "qrels" / f"{split}.tsv"
    official = official_judgments(dataset_id)
    if official is not None and official.split == split:
        try:
            return official_qrels(dataset_id)
        except DatasetLoadError:
            if not cached.is_file():
                raise
    return read_qrels(cached) if cached.is_file() else None


class Judgments:
    """Qrels by (dataset id, split), looked up once each through `qrels_for`. Judgments that cannot be had are
    None, with the reason in `errors` (one line per dataset). Called with a result, says whether it is verified."""

    def __init__(self, data_dirs: dict[str, Path] | None = None, data_root: Path | None = None):
        self.data_dirs, self.data_root = data_dirs or {}, data_root
        self.errors: list[str] = []
        self._qrels: dict[tuple[str, str], Qrels | None] = {}

    def get(self, dataset_id: str, split: str) -> Qrels | None:
        key = (dataset_id, split)
        if key not in self._qrels:
            try:
                self._qrels[key] = qrels_for(dataset_id, split, self.data_dirs, self.data_root)
            except DatasetLoadError as error:
                self._qrels[key] = None
                self.errors.append(str(error))
        return self._qrels[key]

    def __call__(self, result: ResultFile) -> bool:
        if result.run is None:
            return False
        qrels = self.get(result.dataset.id, result.dataset.split)
        return qrels is not None and not rescore_problems(result, qrels)


def verifier(data_dirs: dict[str, Path], data_root: Path | None) -> Judgments:
    """`is_verified(result)` for the site build; its `errors` name the datasets whose judgments were missing."""
    return Judgments(data_dirs, data_root)
