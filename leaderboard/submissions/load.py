"""Read and validate every result file under results/, collecting every problem before anyone renders.

Each file goes through the read step's stages (`leaderboard.submissions.stages`): read (validated by
`evaluator.result.read_result`, the schema's own reader, migrations included), verify, predict, and the read
cache; what is kept of it is a `LoadedResult` (metadata and per-query arrays aligned on sorted query ids). Files
are then checked against each other (same queries and qrels per dataset, consistent model metadata).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from evaluator.errors import IrboardError, ResultValidationError
from evaluator.metrics.depth import remedy, undetermined
from evaluator.result import ResultFile, read_result, result_path, slugify
from leaderboard.submissions.catalog import DatasetInfo
from leaderboard.submissions.facts import DatasetFacts
from leaderboard.submissions.loaded import LoadedResult, ModelInfo, to_loaded
from leaderboard.submissions.parallel import can_fork, forked_map
from leaderboard.submissions.read_cache import ReadCache
from leaderboard.submissions.stages import Decoding, Forecaster, Verifier, read_source

logger = logging.getLogger(__name__)

SCHEMA_FILE = "schema.json"  # results/schema.json sits next to the model folders
WORKER_CHUNK = 64  # files a worker reads per task when reading in parallel
KeepMetrics = Callable[[str], Iterable[str]]  # dataset id -> the metrics whose per-query values are kept
Facts = Callable[[str], DatasetFacts | None]  # dataset id -> what its definition states (None: nothing known)
OnRun = Callable[[str, ResultFile], None]  # (the file's sha256, the result read with its ranking): what else uses it


@dataclass
class LoadReport:
    results: list[LoadedResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # make the build fail
    warnings: list[str] = field(default_factory=list)  # shown; fail the build only with --strict


def read_loaded(path: Path, keep_metrics: KeepMetrics | None = None, is_verified: Verifier | None = None,
                predictor: Forecaster | None = None, reads: ReadCache | None = None,
                on_run: OnRun | None = None) -> LoadedResult:
    """Read and validate one result file through the read step's stages (ResultValidationError names the file
    and field; a verification with a problem is one).

    `keep_metrics(dataset_id)` names the metrics whose per-query values are kept (None: all of them), so that
    memory holds only what the site shows. `is_verified` re-scores results that store a ranking (none is verified
    without it); `predictor` predicts recall at scale from the score samples, which are then dropped; `reads`
    (used with a predictor): what these stages made of these exact bytes before, taken instead of reading the
    file again. A ranking or score samples whose outcome is kept by content are not decoded; a ranking that was
    decoded goes to `on_run` (the build makes its run file from it) once the read has no problem, whether it was
    verified or not (no verify stage, no judgments)."""
    source = read_source(path)
    if reads is not None and predictor is not None:
        found = reads.find(source, keep_metrics, is_verified, predictor)
        if found is not None:
            return found
    decoding = Decoding(source, is_verified, predictor)
    result = read_result(path, with_run=decoding.wants_run, content=source.content,
                         with_samples=decoding.wants_samples)
    kept = keep_metrics(result.dataset.id) if keep_metrics else None
    names = sorted(result.per_query if kept is None else set(kept) & set(result.per_query))
    # copies: the decoded values are views of one matrix holding every metric, which would all stay in memory
    per_query = {name: result.per_query[name].copy() for name in names}
    verification = decoding.verification
    if verification is None and is_verified is not None and (result.run is not None or result.full is not None):
        verification = is_verified.verification(result, source.sha256)
        if verification is not None and verification.problems:
            raise ResultValidationError(f"{path}: {verification.problems[0]}")
    if on_run is not None and result.run is not None:
        on_run(source.sha256, result)
    loaded = to_loaded(str(path), result, result.query_ids, per_query,
                       verification is not None and verification.complete,
                       verification.verified if verification is not None else frozenset(),
                       result.run is not None or decoding.stores_run or result.full is not None,
                       verification.claimed if verification is not None else frozenset(),
                       verification.holes if verification is not None else None,
                       verification.sets if verification is not None else ())
    if predictor is None:
        return loaded
    prediction = decoding.prediction
    if prediction is None:
        prediction = predictor.predict(loaded, source.sha256)
    loaded = replace(loaded, score_samples=None, prediction=prediction)
    full_run = result.run is not None and result.run.full is not None  # its outcome hangs on a fetch
    if reads is not None and result.full is None and not full_run and predictor.keeps(prediction):
        reads.keep(source, loaded, None if kept is None else names, is_verified, predictor)
    return loaded


def read_cache() -> ReadCache:
    """The build's cache of what it read of each file, in $IRBOARD_CACHE/read."""
    from evaluator.datasets.download import cache_root

    return ReadCache(cache_root() / "read")


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


def _read_or_problem(path: Path, keep_metrics: KeepMetrics | None, is_verified: Verifier | None,
                     predictor: Forecaster | None, reads: ReadCache | None, on_run: OnRun | None) -> LoadedResult | str:
    try:
        return read_loaded(path, keep_metrics, is_verified, predictor, reads, on_run)
    except (IrboardError, OSError) as error:
        return str(error) if isinstance(error, IrboardError) else f"{path}: cannot read ({error})"


def _read_all(files: list[Path], keep_metrics: KeepMetrics | None, is_verified: Verifier | None,
              predictor: Forecaster | None, reads: ReadCache | None, workers: int,
              on_run: OnRun | None = None) -> Iterator[LoadedResult | str]:
    """`read_loaded` of each file, or its problem; in `workers` forked processes when more than one (each file
    is read, decoded and verified whole by one process; what judgments a worker could not have is added to
    `is_verified.errors`)."""
    if not can_fork(workers) or len(files) < 4 * WORKER_CHUNK:
        yield from (_read_or_problem(path, keep_metrics, is_verified, predictor, reads, on_run) for path in files)
        return

    def read(path: Path) -> tuple[LoadedResult | str, list[str]]:  # in a worker: its new errors go back with it
        known = len(is_verified.errors) if is_verified is not None else 0
        loaded = _read_or_problem(path, keep_metrics, is_verified, predictor, reads, on_run)
        return loaded, is_verified.errors[known:] if is_verified is not None else []

    for loaded, new_errors in forked_map(read, files, workers, WORKER_CHUNK):
        if is_verified is not None:
            is_verified.add_errors(new_errors)
        yield loaded


def load_results(results_dir: Path | str, keep_metrics: KeepMetrics | None = None,
                 is_verified: Verifier | None = None, workers: int = 1, predictor: Forecaster | None = None,
                 reads: ReadCache | None = None, query_set: Callable[[str], str | None] | None = None,
                 on_run: OnRun | None = None, facts: Facts | None = None) -> LoadReport:
    """Read every result file under `results_dir` and check them against each other; never raises for
    problems in the files: every problem and warning is collected in the returned report. `workers` > 1 reads
    the files in that many forked processes (the same report); `is_verified`, `predictor`, `reads`: the stages
    (see read_loaded); `query_set`: see _check_datasets; `on_run`: see read_loaded; `facts(dataset_id)`: what the
    dataset's definition states (`catalog.DatasetInfo.facts`), which each result is held to (`dataset_facts`)."""
    results_dir = Path(results_dir)
    report = LoadReport()
    if not results_dir.is_dir():
        report.problems.append(f"{results_dir}: no such folder; pass --results with the folder of result files")
        return report
    files = find_result_files(results_dir, report)
    if not files:
        report.problems.append(f"{results_dir}: no result files found; add <model_slug>/<dataset_slug>.json files")
    for path, loaded in zip(files, _read_all(files, keep_metrics, is_verified, predictor, reads, workers, on_run), strict=True):
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
    _check_datasets(report, query_set, facts)
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


def registered_query_set(lookup: Callable[[str], DatasetInfo],
                         verifier: Verifier | None = None) -> Callable[[str], str | None]:
    """`query_set` for `load_results`: the query set of the judgments the builder supplied for a dataset
    (`verifier.local_query_set`: `--data-dir` folders), else the registered one (`lookup(dataset_id)`). Either way
    the builder's, never a submitted file's."""

    def query_set(dataset_id: str) -> str | None:
        found = verifier.local_query_set(dataset_id) if verifier is not None else None
        return found if found is not None else lookup(dataset_id).query_ids_sha256

    return query_set


def _check_datasets(report: LoadReport, query_set: Callable[[str], str | None] | None = None,
                    facts: Facts | None = None) -> None:
    """All results on a dataset must score the same queries against the same qrels. `query_set(dataset_id)`: the
    registered fingerprint of its query set (evaluator.datasets.query_ids_sha256), which then decides, never the
    majority of the submitted files; for a dataset without one, most files' queries do."""
    from evaluator.datasets import query_ids_sha256

    by_dataset: dict[str, list[LoadedResult]] = {}
    for result in report.results:
        checked = dataset_facts(result, report, facts)
        if checked is None:
            continue
        known = query_set(result.dataset_id) if query_set is not None else None
        if known is not None and query_ids_sha256(checked.query_ids) != known:
            report.problems.append(f"{result.path}: per_query's query ids differ from the official queries of "
                                   f"{result.dataset_id}; evaluate on every query of the dataset's official qrels")
            continue
        by_dataset.setdefault(result.dataset_id, []).append(checked)
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
            differ = _rules(item) != _rules(example)
            if differ:  # the depth is not among them: each metric is compared where the depth determines it
                report.warnings.append(
                    f"{item.path}: settings {_rules(item)} differ from {example.path} ({_rules(example)}); scores on "
                    f"{dataset_id!r} are not comparable: re-run `irboard evaluate` with the dataset's settings "
                    "(`irboard validate` names them)"
                )
            shallow = undetermined(item.metrics, int(dict(item.settings)["top_k"]), item.num_docs)  # the definition's
            if shallow:  # never shown as if it were a deeper result's value
                report.warnings.append(f"{item.path}: {remedy(shallow, int(dict(item.settings)['top_k']))}; "
                                       "the board leaves them out")
                item = replace(item, metrics={k: v for k, v in item.metrics.items() if k not in shallow},
                               per_query={k: v for k, v in item.per_query.items() if k not in shallow})
            # Equal query ids become one shared tuple, so memory holds one per dataset.
            kept.append(replace(item, query_ids=example.query_ids))
    report.results = sorted(kept, key=lambda r: r.path)


def dataset_facts(result: LoadedResult, report: LoadReport, facts: Facts | None) -> LoadedResult | None:
    """The result with the corpus size its dataset's definition states (`facts(dataset_id)`, never the file's), or
    None when a fact it states differs from the definition's (said in `report`). Without `facts`, or for an id no
    one defined (the build refuses it: `web.build.unknown_datasets`), no corpus size."""
    from leaderboard.submissions.facts import StatedFacts, fact_problems

    known = facts(result.dataset_id) if facts is not None else None
    if known is None:
        return replace(result, num_docs=None)
    stated = StatedFacts(result.split, result.num_docs, result.qrels_sha256,
                         int(dict(result.settings)["relevance_level"]), result.dataset_revision)
    problems = fact_problems(known, stated)
    report.problems += [f"{result.path}: {problem}" for problem in problems]
    return None if problems else replace(result, num_docs=known.num_docs)


def _rules(result: LoadedResult) -> dict[str, object]:
    """The settings that define what a score means on a dataset (relevance level, identical ids); the ranking depth
    is not one of them (`evaluator.metrics.depth`)."""
    return {key: value for key, value in result.settings if key != "top_k"}


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
