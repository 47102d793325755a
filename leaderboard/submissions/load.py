"""Read and validate every result file under results/, collecting every problem before anyone renders.

Each file is validated by `evaluator.result.read_result` (the schema's own reader, migrations included), then
reduced to what the site needs: metadata and per-query arrays aligned on sorted query ids. Files are then
checked against each other (same queries and qrels per dataset, consistent model metadata).
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from evaluator.errors import IrboardError, ResultValidationError
from evaluator.result import ResultFile, read_result, read_result_bytes, result_path, slugify
from evaluator.score_samples import ScoreSamples
from leaderboard.submissions.parallel import can_fork, forked_map
from leaderboard.submissions.read_cache import ReadCache
from leaderboard.submissions.verify import Judgments

logger = logging.getLogger(__name__)

SCHEMA_FILE = "schema.json"  # results/schema.json sits next to the model folders
WORKER_CHUNK = 64  # files a worker reads per task when reading in parallel


@dataclass(frozen=True)
class ModelInfo:
    id: str
    type: str
    revision: str
    parameters: int | None
    dim: int | None
    license: str
    open_weights: bool
    training_datasets: tuple[str, ...]
    url: str


@dataclass(frozen=True)
class Provenance:
    irboard_version: str
    command: str
    created_at: str
    hardware: str
    timings: tuple[tuple[str, float], ...]
    peak_rss_bytes: int | None
    index_bytes: int | None
    covered_queries: int | None = None  # judged queries the run has a ranking for (None: not recorded)


@dataclass(frozen=True, eq=False)
class LoadedResult:
    """What the site needs from one result file; per-query values are arrays aligned on `query_ids`."""

    path: str
    model: ModelInfo
    dataset_id: str
    split: str
    num_docs: int | None
    qrels_sha256: str
    settings: tuple[tuple[str, object], ...]
    metrics: dict[str, float]
    query_ids: tuple[str, ...]
    per_query: dict[str, np.ndarray]
    has_run: bool
    verified: bool  # every reported metric re-scored from the stored ranking and matching
    provenance: Provenance
    score_samples: ScoreSamples | None = None  # decoded and validated by the reader (None once predicted from)
    verified_metrics: frozenset[str] = frozenset()  # the metrics re-scored and matching
    prediction: object | None = None  # recall at scale, when the reader was given a predictor (analysis.predictions)


@dataclass
class LoadReport:
    results: list[LoadedResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # make the build fail
    warnings: list[str] = field(default_factory=list)  # shown; fail the build only with --strict


def read_loaded(path: Path, keep_metrics: Callable[[str], Iterable[str] | None] | None = None,
                is_verified: Callable[[ResultFile], bool] | None = None, predictor=None,
                reads: ReadCache | None = None) -> LoadedResult:
    """Read and validate one result file (ResultValidationError names the file and field).

    `keep_metrics(dataset_id)` names the metrics whose per-query values are kept (None: all of them), so
    that memory holds only what the site shows; `is_verified(result)` is asked about results with a run.
    A stored ranking is decoded only when it can be verified: `is_verified` given and, when it is a
    `Judgments`, holding judgments for the result's dataset (decoding it is most of the reading time). With a
    `Judgments`, a result whose exact bytes were verified before against the same judgments (its cache) is
    not decoded or re-scored again.

    `predictor(loaded, file_sha256)` (analysis.predictions.Predictor) predicts recall at scale from the score
    samples, which are then dropped; its `cached(file_sha256, header)` spares decoding them again.

    `reads` (with a predictor, and `is_verified` a `Judgments` or None): what reading these exact bytes gave
    before is taken from it instead of reading the file again (leaderboard.submissions.read_cache)."""
    stored_run, cached, predicted = [], [], []
    judgments = is_verified if isinstance(is_verified, Judgments) else None
    if predictor is None or (is_verified is not None and judgments is None):
        reads = None  # its entries hold predictions and verifications by Judgments, nothing else
    content = read_result_bytes(path)
    caching = reads is not None or (judgments is not None and judgments.cache is not None) \
        or getattr(predictor, "cache", None) is not None
    digest = hashlib.sha256(content).hexdigest() if caching else None
    if reads is not None:
        found = reads.find(digest, str(path), keep_metrics, judgments, predictor)
        if found is not None:
            return found

    def wants_run(header) -> bool:  # asked only about version-3 files that store a ranking
        stored_run.append(_decides_run(header))
        return stored_run[-1]

    def _decides_run(header) -> bool:
        if judgments is None:
            return is_verified is not None
        if digest is not None:
            cached.append(judgments.cached(digest, header))
            if cached[0] is not None:
                return False
        return judgments.get(header.dataset.id, header.dataset.split) is not None

    def wants_samples(header) -> bool:  # asked only about files that store score samples
        if predictor is None:
            return True
        predicted.append(predictor.cached(digest, header))
        return predicted[0] is None or any(stored_run)  # re-scoring the ranking checks the samples against it

    result = read_result(path, with_run=wants_run, content=content, with_samples=wants_samples)
    query_ids = result.query_ids
    kept = keep_metrics(result.dataset.id) if keep_metrics else None
    names = sorted(result.per_query if kept is None else set(kept) & set(result.per_query))
    # copies: the decoded values are views of one matrix holding every metric, which would all stay in memory
    per_query = {name: result.per_query[name].copy() for name in names}
    verified, verified_metrics = False, frozenset()
    if cached and cached[0] is not None:
        verified, verified_metrics = cached[0].complete, cached[0].verified
    elif is_verified is not None and (result.run is not None or result.full is not None):
        # a Verification (leaderboard.submissions.verify), None without qrels, or a plain bool
        outcome = judgments(result, digest) if judgments is not None else is_verified(result)
        if hasattr(outcome, "problems"):
            if outcome.problems:
                raise ResultValidationError(f"{path}: {outcome.problems[0]}")
            verified, verified_metrics = outcome.complete, outcome.verified
        else:
            verified = bool(outcome)
            verified_metrics = frozenset(result.metrics) if verified else frozenset()
    loaded = to_loaded(str(path), result, query_ids, per_query, verified, verified_metrics,
                       result.run is not None or bool(stored_run) or result.full is not None)
    if predictor is None:
        return loaded
    prediction = predicted[0] if predicted and predicted[0] is not None else predictor(loaded, digest)
    loaded = replace(loaded, score_samples=None, prediction=prediction)
    if reads is not None and result.full is None and predictor.keeps(prediction):
        reads.keep(digest, loaded, None if kept is None else names, judgments, predictor)
    return loaded


def read_cache() -> ReadCache:
    """The build's cache of what it read of each file, in $IRBOARD_CACHE/read."""
    from evaluator.datasets.download import cache_root

    return ReadCache(cache_root() / "read", _cached_result)


def _cached_result(*, model: dict, provenance: dict, **fields) -> LoadedResult:
    return LoadedResult(model=ModelInfo(**model), provenance=Provenance(**provenance), **fields)


def to_loaded(path: str, result: ResultFile, query_ids: tuple[str, ...], per_query: dict[str, np.ndarray],
              verified: bool, verified_metrics: frozenset[str] = frozenset(), has_run: bool | None = None) -> LoadedResult:
    """What the site keeps of `result` read from `path` (with the score samples, until they are predicted from)."""
    model, dataset, prov = result.model, result.dataset, result.provenance
    return LoadedResult(
        path=path,
        model=ModelInfo(
            id=model.id, type=model.type, revision=model.revision, parameters=model.parameters, dim=model.dim,
            license=model.license, open_weights=model.open_weights,
            training_datasets=tuple(model.training_datasets), url=model.url,
        ),
        dataset_id=dataset.id,
        split=dataset.split,
        num_docs=dataset.num_docs,
        qrels_sha256=dataset.qrels_sha256,
        settings=tuple(sorted(result.settings.model_dump().items())),
        metrics=dict(sorted(result.metrics.items())),
        query_ids=query_ids,
        per_query=per_query,
        has_run=result.run is not None if has_run is None else has_run,
        verified=verified,
        verified_metrics=verified_metrics,
        provenance=Provenance(
            irboard_version=prov.irboard_version, command=prov.command, created_at=prov.created_at,
            hardware=prov.hardware, timings=tuple(sorted(prov.timings.items())), peak_rss_bytes=prov.peak_rss_bytes,
            index_bytes=prov.index_bytes,
            covered_queries=prov.coverage.covered_queries if prov.coverage is not None else None,
        ),
        score_samples=result.score_samples,
    )


def is_interrupted_write(path: Path) -> bool:
    """A hidden `.<name>.*.tmp` file: what an atomic write leaves behind when the process is killed mid-way."""
    return path.name.startswith(".") and path.name.endswith(".tmp")


def find_result_files(results_dir: Path, report: LoadReport) -> list[Path]:
    """`<results_dir>/<model_slug>/<dataset_slug>.json`, sorted; anything else is named in a warning, except
    hidden folders and the temporary files of interrupted writes, which are skipped without a word."""
    files = []
    for path in sorted(results_dir.rglob("*")):
        relative = path.relative_to(results_dir)
        if path.is_dir() or relative.parts[0].startswith(".") or is_interrupted_write(path):
            continue
        if len(relative.parts) == 2 and path.suffix == ".json":
            files.append(path)
        elif relative != Path(SCHEMA_FILE):
            report.warnings.append(
                f"{path}: ignored; result files live at <results>/<model_slug>/<dataset_slug>.json"
            )
    return files


def _read_or_problem(path: Path, keep_metrics, is_verified, predictor, reads) -> LoadedResult | str:
    try:
        return read_loaded(path, keep_metrics, is_verified, predictor, reads)
    except (IrboardError, OSError) as error:
        return str(error) if isinstance(error, IrboardError) else f"{path}: cannot read ({error})"


def _read_all(files: list[Path], keep_metrics, is_verified, predictor, reads,
              workers: int) -> Iterator[LoadedResult | str]:
    """`read_loaded` of each file, or its problem; in `workers` forked processes when more than one (each file
    is read, decoded and verified whole by one process; what judgments a worker could not have is added to
    `is_verified.errors`)."""
    if not can_fork(workers) or len(files) < 4 * WORKER_CHUNK:
        yield from (_read_or_problem(path, keep_metrics, is_verified, predictor, reads) for path in files)
        return
    judgments = is_verified if isinstance(is_verified, Judgments) else None

    def read(path: Path) -> tuple[LoadedResult | str, list[str]]:  # in a worker: its new errors go back with it
        known = len(judgments.errors) if judgments is not None else 0
        loaded = _read_or_problem(path, keep_metrics, is_verified, predictor, reads)
        return loaded, judgments.errors[known:] if judgments is not None else []

    for loaded, new_errors in forked_map(read, files, workers, WORKER_CHUNK):
        if judgments is not None:
            judgments.add_errors(new_errors)
        yield loaded


def load_results(results_dir: Path | str, keep_metrics: Callable[[str], Iterable[str] | None] | None = None,
                 is_verified: Callable[[ResultFile], bool] | None = None, workers: int = 1,
                 predictor=None, reads: ReadCache | None = None,
                 query_set: Callable[[str], str | None] | None = None) -> LoadReport:
    """Read every result file under `results_dir` and check them against each other; never raises for
    problems in the files: every problem and warning is collected in the returned report. `workers` > 1 reads
    the files in that many forked processes (the same report); `predictor`, `reads`: see read_loaded;
    `query_set`: see _check_datasets."""
    results_dir = Path(results_dir)
    report = LoadReport()
    if not results_dir.is_dir():
        report.problems.append(f"{results_dir}: no such folder; pass --results with the folder of result files")
        return report
    files = find_result_files(results_dir, report)
    if not files:
        report.problems.append(f"{results_dir}: no result files found; add <model_slug>/<dataset_slug>.json files")
    for path, loaded in zip(files, _read_all(files, keep_metrics, is_verified, predictor, reads, workers), strict=True):
        if isinstance(loaded, str):
            report.problems.append(loaded)
            continue
        expected = result_path(loaded.model.id, loaded.dataset_id, results_dir)
        if path != expected:
            report.problems.append(
                f"{path}: a result for model {loaded.model.id!r} on {loaded.dataset_id!r} belongs at {expected}; "
                "move it there"
            )
            continue
        report.results.append(loaded)
    _check_slugs(report)
    _check_datasets(report, query_set)
    _check_models(report)
    logger.info("loaded %d result files from %s", len(report.results), results_dir)
    return report


def _check_slugs(report: LoadReport) -> None:
    """Ids that differ only in case share a file name, so they would share a page: refuse them."""
    for kind, key in (("model", lambda r: r.model.id), ("dataset", lambda r: r.dataset_id)):
        spellings: dict[str, dict[str, str]] = {}
        for result in report.results:
            spellings.setdefault(slugify(key(result)), {}).setdefault(key(result), result.path)
        for variants in spellings.values():
            if len(variants) > 1:
                names = ", ".join(f"{name!r} ({path})" for name, path in sorted(variants.items()))
                report.problems.append(f"{kind} ids {names} differ only in case; use one spelling")


def _majority(items: list[LoadedResult], key: Callable[[LoadedResult], object]) -> object:
    """The most common value of key; ties go to the value of the first file in path order."""
    counts = Counter(key(item) for item in items)
    best = max(counts.values())
    return next(key(item) for item in items if counts[key(item)] == best)


def registered_query_set(lookup: Callable, judgments=None) -> Callable[[str], str | None]:
    """`query_set` for `load_results`: the query set of the judgments the builder supplied for a dataset (a
    `Judgments` with `--data-dir` folders), else the registered one (`lookup(dataset_id).query_ids_sha256`). Either
    way the builder's, never a submitted file's."""
    from evaluator.datasets import get_spec, query_ids_sha256
    from evaluator.errors import IrboardError

    def local(dataset_id: str) -> str | None:
        if not isinstance(judgments, Judgments):
            return None
        folders = [judgments.data_dirs.get(dataset_id), judgments.data_root and judgments.data_root / dataset_id]
        try:
            split = get_spec(dataset_id).split
        except IrboardError:
            return None
        if not any(folder is not None and (folder / "qrels" / f"{split}.tsv").is_file() for folder in folders):
            return None
        qrels = judgments.get(dataset_id, split)
        return None if qrels is None else query_ids_sha256(qrels.query_ids)

    def query_set(dataset_id: str) -> str | None:
        found = local(dataset_id)
        return found if found is not None else getattr(lookup(dataset_id), "query_ids_sha256", None)

    return query_set


def _check_datasets(report: LoadReport, query_set: Callable[[str], str | None] | None = None) -> None:
    """All results on a dataset must score the same queries against the same qrels. `query_set(dataset_id)`: the
    registered fingerprint of its query set (evaluator.datasets.query_ids_sha256), which then decides, never the
    majority of the submitted files; for a dataset without one, most files' queries do."""
    from evaluator.datasets import query_ids_sha256

    by_dataset: dict[str, list[LoadedResult]] = {}
    for result in report.results:
        known = query_set(result.dataset_id) if query_set is not None else None
        if known is not None and query_ids_sha256(result.query_ids) != known:
            report.problems.append(f"{result.path}: per_query's query ids differ from the official queries of "
                                   f"{result.dataset_id}; evaluate on every query of the dataset's official qrels")
            continue
        by_dataset.setdefault(result.dataset_id, []).append(result)
    kept: list[LoadedResult] = []
    for dataset_id, items in sorted(by_dataset.items()):
        reference = _majority(items, lambda r: (r.split, r.qrels_sha256, r.query_ids))
        example = next(r for r in items if (r.split, r.qrels_sha256, r.query_ids) == reference)
        for item in items:
            if item.split != example.split or item.qrels_sha256 != example.qrels_sha256:
                report.problems.append(
                    f"{item.path}: dataset {dataset_id!r} split {item.split!r} with qrels sha256 "
                    f"{item.qrels_sha256[:12]}… differs from {example.path} (split {example.split!r}, "
                    f"{example.qrels_sha256[:12]}…); evaluate against the same qrels"
                )
                continue
            if item.query_ids != example.query_ids:
                extra = sorted(set(item.query_ids) - set(example.query_ids))
                missing = sorted(set(example.query_ids) - set(item.query_ids))
                report.problems.append(
                    f"{item.path}: per_query covers {len(item.query_ids)} queries, not the same "
                    f"{len(example.query_ids)} as {example.path} (extra: {extra[:3]}, missing: {missing[:3]}); "
                    f"evaluate on every query of {dataset_id!r}'s qrels"
                )
                continue
            if item.settings != example.settings:
                report.warnings.append(
                    f"{item.path}: settings {dict(item.settings)} differ from {example.path} "
                    f"({dict(example.settings)}); scores on {dataset_id!r} may not be comparable"
                )
            # Equal query ids become one shared tuple, so memory holds one per dataset.
            kept.append(replace(item, query_ids=example.query_ids))
    report.results = sorted(kept, key=lambda r: r.path)


def _check_models(report: LoadReport) -> None:
    """A model's metadata should agree across its files; the most common version is the one shown."""
    by_model: dict[str, list[LoadedResult]] = {}
    for result in report.results:
        by_model.setdefault(result.model.id, []).append(result)
    for model_id, items in sorted(by_model.items()):
        reference = _majority(items, lambda r: r.model)
        example = next(r for r in items if r.model == reference)
        for item in items:
            if item.model != reference:
                fields = [name for name in ModelInfo.__dataclass_fields__
                          if getattr(item.model, name) != getattr(reference, name)]
                report.warnings.append(
                    f"{item.path}: model fields {', '.join(fields)} of {model_id!r} differ from {example.path}; "
                    f"the site shows the metadata of {example.path}"
                )
