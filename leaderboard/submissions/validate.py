"""`irboard validate`: every problem with submitted result files, one line each, before anything merges."""

from __future__ import annotations

import functools
import hashlib
import logging
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.datasets.declared import declaration_problems, unknown_remedy
from evaluator.datasets.judgment_sets import judgment_set_problems
from evaluator.errors import DatasetLoadError, IrboardError, ResultValidationError, UnknownNameError, one_line
from evaluator.metadata import missing_note
from evaluator.metrics.depth import remedy, undetermined
from evaluator.result import ResultFile, parse_result_text, read_result, read_result_bytes, slugify
from evaluator.trust import RANKED_TIERS, tiers_of
from leaderboard.submissions.cache import ContentCache
from leaderboard.submissions.catalog import main_metric
from leaderboard.submissions.facts import StatedFacts, definition_facts, fact_problems
from leaderboard.submissions.parallel import forked_map
from leaderboard.submissions.sample_checks import claims_absences
from leaderboard.submissions.verify import Judgments

log = logging.getLogger(__name__)
QuerySet = Callable[[str], str | None]  # dataset id -> the fingerprint of the queries its results must cover
CHANGE_TOLERANCE = 0.001
# Free text in a submission may not carry markup or control characters (pages escape it anyway).
_UNSAFE_TEXT = re.compile(r"[<>\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass
class ValidationReport:
    valid: list[Path] = field(default_factory=list)  # files that read as results (problems beyond reading aside)
    problems: list[str] = field(default_factory=list)
    verified: set[Path] = field(default_factory=set)
    partly_verified: dict[Path, tuple[str, ...]] = field(default_factory=dict)  # path -> metrics not re-scorable
    unfetched: dict[Path, str] = field(default_factory=dict)  # split result -> why its full file cannot be had
    notes: dict[Path, str] = field(default_factory=dict)  # path -> what its model block leaves unstated (no problem)
    absences_unchecked: dict[Path, str] = field(default_factory=dict)  # path -> why no corpus checked its absent_ids
    claimed: dict[Path, tuple[str, ...]] = field(default_factory=dict)  # path -> metrics resting on claimed ranks
    # path -> each metric's tier (evaluator.trust), for every file re-scored or without a ranking to re-score
    tiers: dict[Path, dict[str, str]] = field(default_factory=dict)
    ranked: set[Path] = field(default_factory=set)  # files whose dataset's main metric was re-scored: ranked on it

    def add(self, path: Path, message: str) -> None:
        self.problems.append(f"{path}: {message}")


def result_files(paths: list[Path], results_root: Path) -> list[Path]:
    """Expand folders to their result files; schema.json and hidden files are not results."""
    targets = paths or [results_root]
    files: list[Path] = []
    for target in targets:
        if target.is_dir():
            files.extend(p for p in sorted(target.rglob("*.json")) if p.name != "schema.json"
                         and not any(part.startswith(".") for part in p.relative_to(target).parts))
        else:
            files.append(target)
    return files


def _text_fields(result: ResultFile) -> list[tuple[str, str]]:
    model, provenance = result.model, result.provenance
    fields = [("model.revision", model.revision), ("model.license", model.license), ("model.url", model.url),
              ("provenance.command", provenance.command), ("provenance.hardware", provenance.hardware),
              ("provenance.irboard_version", provenance.irboard_version),
              ("provenance.created_at", provenance.created_at)]
    fields += [(f"model.training_datasets[{i}]", t) for i, t in enumerate(model.training_datasets or ())]
    return fields


def check_result(path: Path, result: ResultFile, report: ValidationReport, query_set=None) -> None:
    """Checks beyond the schema: location, dataset spec, query set, text policy. `query_set(dataset_id)`: the
    fingerprint of the queries a result must cover (`load.registered_query_set`: the judgments given with
    --data-dir, else the registry's); by default the registry's."""
    expected = (slugify(result.model.id), f"{slugify(result.dataset.id)}.json")
    if (path.parent.name, path.name) != expected:
        report.add(path, f"path does not match the ids inside; move it to results/{expected[0]}/{expected[1]}")
    for name, text in _text_fields(result):
        if _UNSAFE_TEXT.search(text):
            report.add(path, f"{name} contains '<', '>' or control characters; submit plain text")
    try:
        from evaluator.datasets import get_spec, query_ids_sha256
        from evaluator.datasets.official import known_query_ids_sha256

        spec = get_spec(result.dataset.id)
    except UnknownNameError as error:
        report.add(path, f"dataset.id: {error}; {unknown_remedy(result.dataset.id)}")
        return
    except DatasetLoadError as error:  # its declaration is refused (said once for the declaration too)
        report.add(path, f"dataset.id: {result.dataset.id} has no valid definition ({one_line(str(error))})")
        return
    facts = definition_facts(spec)
    queries = result.query_ids
    registered = known_query_ids_sha256(spec.id)
    known = query_set(spec.id) if query_set is not None else registered
    for problem in fact_problems(facts, stated_facts(result)):
        report.add(path, problem)
    for problem in settings_problems(result, spec):
        report.add(path, problem)
    for reference in result.references:
        if reference.metric not in result.metrics:
            report.add(path, f"references: {reference.metric} is cited but not reported; add it to the result "
                             "(`irboard evaluate --metrics`) or leave the reference out")
    shallow = undetermined(result.metrics, result.settings.top_k, facts.num_docs)  # never the file's
    if shallow:
        report.add(path, f"metrics: {remedy(shallow, result.settings.top_k)}")
    if known == registered and spec.num_queries is not None and len(queries) != spec.num_queries:
        report.add(path, f"per_query has {len(queries)} queries, expected {spec.num_queries} "
                         f"(the {spec.split} qrels of {spec.id})")
    elif known is not None and query_ids_sha256(queries) != known:
        # checked whatever else the file stores (with or without a ranking, whole or split)
        report.add(path, f"per_query's query ids differ from the official {spec.split} queries of {spec.id}; "
                         "evaluate on every query of the dataset's official qrels")


def stated_facts(result: ResultFile) -> StatedFacts:
    dataset = result.dataset
    return StatedFacts(dataset.split, dataset.num_docs, dataset.qrels_sha256,
                       result.settings.relevance_level, dataset.revision)


def settings_problems(result: ResultFile, spec) -> list[str]:
    """Where the result's identical-ids setting differs from the dataset's definition in a way that can matter (its
    relevance level is a fact: `facts`)."""
    problems = []
    settings = result.settings
    # The setting changes nothing unless a stored ranking holds its own query's id, so such results stand.
    if settings.ignore_identical_ids != spec.ignore_identical_ids and _may_retrieve_own_id(result):
        rule = "drops" if spec.ignore_identical_ids else "keeps"
        problems.append(f"settings.ignore_identical_ids is {str(settings.ignore_identical_ids).lower()} but {spec.id} "
                        f"{rule} a retrieved document whose id is the query's, and the stored ranking does not show "
                        "that this makes no difference: re-run `irboard evaluate` with the dataset's settings")
    return problems


def _may_retrieve_own_id(result: ResultFile) -> bool:
    run = result.run
    if run is None:
        return True
    if run.below is not None and bool((run.below.totals > run.lengths).any()):
        return True  # the documents ranked below the depth and not judged are not stored: it may be among them
    shared = set(result.query_ids).intersection(run.doc_ids)  # nearly always empty: no ranking to expand
    if not shared:
        return False
    position = {doc_id: i for i, doc_id in enumerate(run.doc_ids) if doc_id in shared}
    offsets = run.offsets
    return any(position[query_id] in run.docs[offsets[row]:offsets[row + 1]]
               for row, query_id in enumerate(result.query_ids) if query_id in position)


def _file_at(revision: str, path: Path) -> str | None:
    """The text of `path` at a git revision, or None when it did not exist there."""
    try:
        return subprocess.run(["git", "show", f"{revision}:{path.as_posix()}"], capture_output=True, text=True,
                              check=True, timeout=60).stdout
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None


def check_against_base(path: Path, result: ResultFile, base: str, report: ValidationReport) -> None:
    """An existing result may not move by more than 0.001 or lose queries unless its model revision changes."""
    old_text = _file_at(base, path)
    if old_text is None:
        return
    try:
        old = parse_result_text(old_text, f"{path} at {base}")
    except ResultValidationError:
        return  # the old file no longer validates (e.g. older schema): nothing to protect
    if old.model.revision != result.model.revision:
        return
    lost = set(old.query_ids) - set(result.query_ids)
    if lost:
        report.add(path, f"loses {len(lost)} queries compared with {base} (e.g. {sorted(lost)[0]!r}) although "
                         "model.revision is unchanged; bump the revision for a new model version")
    for name, value in old.metrics.items():
        if name in result.metrics and abs(result.metrics[name] - value) > CHANGE_TOLERANCE:
            report.add(path, f"metrics[{name!r}] changes from {value:.5f} to {result.metrics[name]:.5f} compared "
                             f"with {base} although model.revision is unchanged; bump the revision")
            break


@dataclass
class _FileOutcome:
    """What checking one file found; only this goes back from a worker process (never the decoded file)."""

    problems: list[str] = field(default_factory=list)
    ids: tuple[str, str] | None = None  # (model id, dataset id) of a file that read as a result
    verified: bool = False
    partly_verified: tuple[str, ...] | None = None
    unfetched: str | None = None
    absences_unchecked: str | None = None  # why no corpus checked the file's absent_ids (None: checked, or none)
    claimed: tuple[str, ...] | None = None  # metrics re-scored from ranks below the depth that no sample checks
    tiers: dict[str, str] | None = None  # each metric's tier (None: not re-scored here, e.g. a full file unfetched)
    judgment_errors: list[str] = field(default_factory=list)  # judgments that could not be had while checking it
    note: str = ""  # what the model block leaves unstated, and the flags that state it
    model: str = ""  # the model block as sorted JSON: a model's files must agree (the build warns otherwise)


def validate_paths(
    paths: list[Path],
    results_root: Path = Path("results"),
    data_dirs: dict[str, Path] | None = None,
    data_root: Path | None = None,
    base: str | None = None,
    workers: int = 1,
    any_full_url: bool = False,
) -> ValidationReport:
    """Every problem of the result files under `paths` (default: `results_root`), each file read, checked and
    re-scored whole; in `workers` forked processes when more than one (the same report). Only checks: what the
    site makes of the files (predictions, the pages' data) is the build's."""
    report = ValidationReport()
    judgments = Judgments(data_dirs, data_root, any_full_url=any_full_url)  # official ones fetched once per dataset (per worker) when needed
    checked = _checked_cache() if judgments.cache is not None else None
    seen: dict[tuple[str, str], Path] = {}
    models: dict[str, list[tuple[Path, str]]] = {}  # model id -> (file, model block) of each file read
    files = result_files(paths, results_root)
    query_set = _query_set(judgments)
    outcomes = forked_map(lambda path: _check_file(path, judgments, base, checked, query_set), files, workers,
                          chunksize=max(1, min(64, len(files) // (4 * max(workers, 1)))))
    for path, outcome in zip(files, outcomes, strict=True):
        judgments.add_errors(outcome.judgment_errors)
        if outcome.ids is None:
            report.problems.extend(outcome.problems)
            continue
        model_id, dataset_id = outcome.ids
        if outcome.model:
            models.setdefault(model_id, []).append((path, outcome.model))
        key = (slugify(model_id), slugify(dataset_id))
        report.problems.extend(outcome.problems)
        if key in seen:
            report.add(path, f"a second result for {model_id} on {dataset_id} (first: {seen[key]})")
        seen[key] = path
        if outcome.verified:
            report.verified.add(path)
        if outcome.partly_verified is not None:
            report.partly_verified[path] = outcome.partly_verified
        if outcome.unfetched is not None:
            report.unfetched[path] = outcome.unfetched
        if outcome.note:
            report.notes[path] = outcome.note
        if outcome.absences_unchecked is not None:
            report.absences_unchecked[path] = outcome.absences_unchecked
        if outcome.claimed is not None:
            report.claimed[path] = outcome.claimed
        if outcome.tiers is not None:
            report.tiers[path] = outcome.tiers
            if outcome.tiers.get(main_metric(dataset_id)) in RANKED_TIERS:
                report.ranked.add(path)
        report.valid.append(path)
    report.problems.extend(judgments.errors)
    report.problems.extend(_model_disagreements(models))
    report.problems.extend(declaration_problems())
    report.problems.extend(judgment_set_problems())
    return report


def _model_disagreements(models: dict[str, list[tuple[Path, str]]]) -> list[str]:
    """A model's files must state the same model block: the build shows one and warns (--strict refuses)."""
    import json

    problems = []
    for model_id, files in sorted(models.items()):
        first_path, first = files[0]
        for path, block in files[1:]:
            if block != first:
                ours, theirs = json.loads(block), json.loads(first)
                fields = [name for name in ours if ours.get(name) != theirs.get(name)]
                problems.append(f"{path}: model fields {', '.join(fields)} of {model_id!r} differ from {first_path}; "
                                "state the same model metadata in every file of the model (the build refuses with "
                                "--strict)")
    return problems


def _check_file(path: Path, judgments: Judgments, base: str | None, checked: ContentCache | None,
                query_set: QuerySet) -> _FileOutcome:
    outcome = _FileOutcome()
    known = len(judgments.errors)
    try:
        _check_into(path, judgments, base, outcome, checked, query_set)
    finally:
        outcome.judgment_errors = judgments.errors[known:]
    return outcome


def _check_into(path: Path, judgments: Judgments, base: str | None, outcome: _FileOutcome,
                checked: ContentCache | None, query_set: QuerySet) -> None:
    report = ValidationReport()  # this file's problems, in the order they are found
    try:
        content = read_result_bytes(path)
        digest = hashlib.sha256(content).hexdigest()
        if checked is not None and base is None and _checked_before(checked, digest, path, judgments, outcome,
                                                                    query_set):
            return
        result = read_result(path, content=content)
    except ResultValidationError as error:
        outcome.problems.append(str(error))
        return
    whole = result  # a split result is checked and re-scored through its full file
    if result.full is not None:
        from leaderboard.submissions.full import resolve_full, split_problems

        for problem in split_problems(result):
            report.add(path, problem)
        qrels = judgments.get(result.dataset.id, result.dataset.split)
        try:
            if qrels is not None and tuple(qrels.query_ids) == result.query_ids:  # else nothing to re-score
                whole = resolve_full(result, judgments.any_full_url)
        except ResultValidationError as error:
            report.add(path, str(error))
            outcome.problems = report.problems
            return
        except DatasetLoadError as error:
            outcome.unfetched = one_line(str(error))
    full_run = whole.run is not None and whole.run.full is not None
    if full_run:  # re-scored whole from the run file it names, when it can be had
        from leaderboard.submissions.full import resolve_full_run

        qrels = judgments.get(result.dataset.id, result.dataset.split)
        try:
            if qrels is not None and tuple(qrels.query_ids) == result.query_ids:
                whole = resolve_full_run(whole, qrels, judgments.any_full_url)
        except ResultValidationError as error:
            report.add(path, str(error))
            outcome.problems = report.problems
            return
        except DatasetLoadError as error:
            outcome.unfetched = one_line(f"run.full: {error}")
    outcome.ids = (result.model.id, result.dataset.id)
    outcome.note = missing_note(result.model) or ""
    outcome.model = result.model.model_dump_json()
    check_result(path, whole, report, query_set)
    if base:
        check_against_base(path, result, base, report)
    # (a split result left whole here has other queries than the qrels: verify_result says so)
    if whole.run is not None or (whole.full is not None and outcome.unfetched is None):
        qrels = judgments.get(result.dataset.id, result.dataset.split)
        if qrels is not None:
            # a whole file's verification is cached by the sha256 of its bytes; a split one's is not
            verification = judgments.verify(whole, qrels, digest if whole is result and not full_run else None)
            for problem in verification.problems:
                report.add(path, problem)
            outcome.verified = verification.complete
            if not verification.complete and not verification.problems:
                outcome.partly_verified = verification.unverified or None
                outcome.claimed = tuple(sorted(verification.claimed)) or None
            if not verification.problems:
                outcome.tiers = tiers_of(whole.metrics, verification.verified, verification.claimed)
    elif whole.full is None:  # no ranking to re-score: every value as submitted
        outcome.tiers = tiers_of(whole.metrics, ())
    if not report.problems and claims_absences(whole):
        from leaderboard.submissions.absences import check_absences

        absences = check_absences(whole, judgments.data_dirs, judgments.data_root)
        for problem in absences.problems:
            report.add(path, problem)
        outcome.absences_unchecked = absences.unchecked
    outcome.problems = report.problems
    # a file that claims absences is checked again each time: only a corpus at hand can check those claims
    if checked is not None and not report.problems and result.full is None and not full_run \
            and not _is_local(result.dataset.id) and not claims_absences(whole):
        checked.put(_checked_fields(digest, path), {
            "model_id": result.model.id, "dataset_id": result.dataset.id, "split": result.dataset.split,
            "metrics": sorted(result.metrics), "has_run": result.run is not None,
            "spec": _spec_digest(result.dataset.id), "queries": query_set(result.dataset.id) or "",
            "note": outcome.note, "model": outcome.model})


# --- files checked clean before ----------------------------------------------------------------------------------
#
# A file whose exact bytes, at the same place (model and dataset folder names), were read, checked and re-scored by
# this code with no problem is not decoded again: `$IRBOARD_CACHE/checked` keeps its ids and metric names, and the
# digest of its dataset's registered definition (a changed definition misses). Its re-scoring is taken from the
# verification cache for the judgments at hand now; without such an entry the file is checked whole. Files with a
# problem, split files, local datasets and --base runs are always checked whole.


def _query_set(judgments: Judgments) -> QuerySet:
    """The query set each dataset's results must cover: that of the judgments given with --data-dir, else the
    registered one (never one a submitted file brings); each dataset looked up once."""
    from leaderboard.submissions.catalog import dataset_info
    from leaderboard.submissions.load import registered_query_set

    return registered_query_set(functools.lru_cache(maxsize=None)(dataset_info), judgments)


def _checked_cache() -> ContentCache:
    """Keyed by the version of this module's code and all it imports (the checks, re-scoring, reading)."""
    from evaluator.datasets.download import cache_root

    return ContentCache(cache_root() / "checked", code=(__name__,))


def _checked_fields(digest: str, path: Path) -> dict[str, str]:
    return {"file_sha256": digest, "place": f"{path.parent.name}/{path.name}"}


def _is_local(dataset_id: str) -> bool:  # its definition is read from a folder, which may change
    from evaluator.datasets.spec import LOCAL_PREFIX

    return dataset_id.startswith(LOCAL_PREFIX)


def _spec_digest(dataset_id: str) -> str:
    from evaluator.datasets import get_spec

    return hashlib.sha256(repr(get_spec(dataset_id)).encode("utf-8")).hexdigest()


def _checked_before(checked: ContentCache, digest: str, path: Path, judgments: Judgments,
                    outcome: _FileOutcome, query_set: QuerySet) -> bool:
    """Fill `outcome` from the entry of a file checked clean before, when there is one that still holds."""
    entry = checked.get(_checked_fields(digest, path))
    if entry is None:
        return False
    try:
        dataset_id, split, metrics = str(entry["dataset_id"]), str(entry["split"]), list(entry["metrics"])
        if _is_local(dataset_id) or _spec_digest(dataset_id) != entry["spec"] \
                or (query_set(dataset_id) or "") != entry["queries"]:
            return False
        verification = None
        if entry["has_run"] is True and (qrels := judgments.get(dataset_id, split)) is not None:
            verification = judgments.cache.get(digest, qrels.sha256(), metrics)
            if verification is None:
                return False
        outcome.ids = (str(entry["model_id"]), dataset_id)
        outcome.note = str(entry["note"])
        outcome.model = str(entry["model"])
    except (KeyError, TypeError, ValueError, IrboardError):
        return False
    if verification is not None:
        outcome.verified = verification.complete
        outcome.partly_verified = None if verification.complete else verification.unverified or None
        outcome.claimed = tuple(sorted(verification.claimed)) or None
        outcome.tiers = tiers_of(metrics, verification.verified, verification.claimed)
    elif entry["has_run"] is not True:
        outcome.tiers = tiers_of(metrics, ())
    return True
