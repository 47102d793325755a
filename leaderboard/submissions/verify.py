"""Re-scoring a submitted result against the qrels: what makes a value, and a result, "verified".

- A metric is *determined* by the stored ranking when every query's stored part decides it: a metric with
  cutoff k needs k <= run.depth, or the query's whole ranking stored (fewer entries than the depth, or
  depth >= settings.top_k); a metric without cutoff (AP, RR, Rprec, Bpref, ARP) needs every whole ranking.
  A ranking with `run.below` (each ranking's length and its judged entries below the depth) determines every
  metric: below the depth only the judged documents' ranks and the length matter.
- Every determined metric is recomputed for every query from the stored ranking (in its stored order, which
  the reader has checked is trec_eval's) and must equal the submitted per-query values: any difference is
  a problem that rejects the result.
- Metrics that are not determined are *unverified*: kept, shown as such per value, never counted verified.
- A metric is verified (re-scored) when it was recomputed and matched, and the file's score samples agree with
  its ranking (see `score_sample_problems`) and with its claims below the stored depth
  (`deep_checks.deep_claim_problems`). Metrics that read below the depth of a file whose samples cannot check
  those claims (no samples) are re-scored but *rest on claimed ranks* (`Verification.claimed`), never verified.
  Which metric gets which tier is `evaluator.trust.rescorable` (what `irboard evaluate` announces); the board
  ranks a result on every verified metric, and a problem refuses the whole file.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.errors import DatasetLoadError, IrboardError, ResultValidationError
from evaluator.metrics import Qrels, evaluate
from evaluator.result import ResultFile
from evaluator.trust import rescorable
from leaderboard.submissions.cache import ContentCache
from leaderboard.submissions.catalog import main_metric
from leaderboard.submissions.deep_checks import deep_claim_problems
from leaderboard.submissions.holes import HoleFigures, hole_figures
from leaderboard.submissions.labels import entry_labels, per_qrels, ranked_from_result
from leaderboard.submissions.sample_checks import cut_problems, score_sample_problems
from leaderboard.submissions.set_scores import SetScoresCache, score_set

log = logging.getLogger(__name__)
TOLERANCE = 1e-9  # per-query values are stored as float64; migrated ones were rounded to 10 decimals


@dataclass(frozen=True)
class Verification:
    """The outcome of re-scoring one result."""

    verified: frozenset[str]  # metrics re-scored and matching
    unverified: tuple[str, ...]  # metrics the stored ranking does not determine (or no ranking at all)
    problems: tuple[str, ...]  # differences and inconsistencies: the result is rejected
    # metrics re-scored and matching, but from ranks below the stored depth that no score sample checks
    claimed: frozenset[str] = frozenset()
    # Judged@k and hole bounds of the re-scored metrics (submissions.holes); None when the main metric was not
    # re-scored
    holes: HoleFigures | None = None
    # the stored ranking scored against each declared judgment set of its dataset (submissions.set_scores)
    sets: tuple = ()

    @property
    def complete(self) -> bool:
        """Every reported metric re-scored and matching, nothing inconsistent, nothing resting on claimed ranks."""
        return not self.problems and not self.unverified and not self.claimed


def verify_result(result: ResultFile, qrels: Qrels) -> Verification:
    """Re-score every determined metric and check the score samples against the ranking."""
    if qrels.sha256() != result.dataset.qrels_sha256:
        return Verification(frozenset(), tuple(sorted(result.metrics)), (
            f"dataset.qrels_sha256 does not match the official qrels of {result.dataset.id}; "
            "evaluate on the official qrels",))
    if tuple(qrels.query_ids) != result.query_ids:
        return Verification(frozenset(), tuple(sorted(result.metrics)), (
            f"per_query's queries differ from the queries of the qrels of {result.dataset.id}",))
    measures, others, claimed = rescorable(result)
    problems: list[str] = coverage_problems(result)
    labels = entry_labels(result, qrels) if result.run is not None else None
    holes = None
    if measures:
        level = result.settings.relevance_level
        stats = per_qrels(qrels, ("stats", level), lambda: qrels.label_stats(level))
        ranked = ranked_from_result(result, qrels, labels)
        values = evaluate(ranked, stats, measures, level)
        holes = hole_figures(ranked, stats, measures, level, main_metric(result.dataset.id, result.metrics))
        for measure in measures:
            name = str(measure)
            submitted, rescored = result.per_query[name], np.asarray(values[name], dtype=np.float64)
            wrong = np.flatnonzero(np.abs(submitted - rescored) > TOLERANCE)
            if wrong.size:
                i = int(wrong[0])
                problems.append(
                    f"per_query[{name!r}][{result.query_ids[i]!r}] is {submitted[i]:.6f} but re-scoring the stored "
                    f"ranking gives {rescored[i]:.6f} ({wrong.size} queries differ); regenerate the result with "
                    "`irboard evaluate`")
    if result.score_samples is not None and result.run is not None:
        problems += score_sample_problems(result, qrels, labels) or cut_problems(result, qrels, labels) \
            or deep_claim_problems(result, qrels, labels)
    rescored = {str(m) for m in measures}
    claimed = frozenset() if problems else claimed
    verified = frozenset() if problems else frozenset(rescored - claimed)
    return Verification(verified, tuple(others), tuple(problems), claimed, None if problems else holes)


def coverage_problems(result: ResultFile) -> list[str]:
    """A coverage record must agree with the queries and the stored ranking: the site marks partial runs by it."""
    coverage = result.provenance.coverage
    if coverage is None or result.run is None:
        return []
    ranked = int(np.count_nonzero(result.run.lengths))
    if (coverage.judged_queries, coverage.covered_queries) == (len(result.query_ids), ranked):
        return []
    return [f"provenance.coverage says {coverage.covered_queries} of {coverage.judged_queries} judged queries are "
            f"covered, but the stored ranking has {ranked} of {len(result.query_ids)} queries with documents; "
            "regenerate the result with `irboard evaluate`"]


def rescore_problems(result: ResultFile, qrels: Qrels) -> list[str]:
    """The problems re-scoring finds (empty when every determined metric matches)."""
    return list(verify_result(result, qrels).problems)


class VerifiedCache(ContentCache):
    """Past verifications, keyed by (the sha256 of a result file's exact bytes, the sha256 of the qrels it was
    re-scored against) and the version of this module's code (with everything it imports: reading a ranking, the
    metrics, the sample checks). An entry says only that those exact bytes re-scored cleanly against those exact
    judgments with this code, so a file that differs in one byte, other judgments or other code miss it. Only
    outcomes without problems are stored (a rejected file is re-checked, and rejected again, every time)."""

    def __init__(self, folder: Path):
        super().__init__(folder, code=(__name__,))

    @staticmethod
    def _fields(file_sha256: str, qrels_sha256: str) -> dict[str, str]:
        return {"file_sha256": file_sha256, "qrels_sha256": qrels_sha256}

    def get(self, file_sha256: str, qrels_sha256: str, metrics: Iterable[str]) -> Verification | None:
        entry = super().get(self._fields(file_sha256, qrels_sha256))
        if entry is None:
            return None
        verified, unverified, claimed = entry.get("verified"), entry.get("unverified"), entry.get("claimed", [])
        if not isinstance(verified, list) or not isinstance(unverified, list) or not isinstance(claimed, list) \
                or not all(isinstance(name, str) for name in [*verified, *unverified, *claimed]) \
                or sorted([*verified, *unverified, *claimed]) != sorted(metrics):
            return None
        holes = None
        if entry.get("holes") is not None:
            try:
                holes = HoleFigures.from_json(entry["holes"], int(entry["queries"]))
            except (KeyError, TypeError, ValueError):
                return None  # a damaged entry: verify again
        return Verification(frozenset(verified), tuple(unverified), (), frozenset(claimed), holes)

    def put(self, file_sha256: str, qrels_sha256: str, outcome: Verification) -> None:
        if not outcome.problems:
            super().put(self._fields(file_sha256, qrels_sha256),
                        {"verified": sorted(outcome.verified), "unverified": list(outcome.unverified),
                         "claimed": sorted(outcome.claimed),
                         "holes": None if outcome.holes is None else outcome.holes.to_json(),
                         "queries": 0 if outcome.holes is None else len(outcome.holes.low)})


def qrels_for(dataset_id: str, split: str, data_dirs: dict[str, Path], data_root: Path | None) -> Qrels | None:
    """The qrels to re-score a result on `dataset_id` against: an explicit `--data-dir ID=DIR`, `<root>/<dataset id>`,
    the official judgments (`<root>/official/qrels/<file>` when its sha256 is the official file's, as
    ../shared/data holds them; else cached, else downloaded), or a copy extracted into the cache (datasets without an
    official download, or offline); None when there is none. DatasetLoadError: official judgments that cannot be had
    and no copy."""
    from evaluator.datasets.download import cache_root, file_sha256
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
        local = data_root / "official" / official.qrels.path if data_root is not None else None
        if local is not None and local.is_file() and file_sha256(local) == official.qrels.sha256:
            return read_qrels(local)
        try:
            return official_qrels(dataset_id)
        except DatasetLoadError:
            if not cached.is_file():
                raise
    return read_qrels(cached) if cached.is_file() else None


class Judgments:
    """The verify stage of the build's read step (a `stages.Verifier`) and of `irboard validate`: qrels by
    (dataset id, split), looked up once each through `qrels_for`. Judgments that cannot be had are None, with the
    reason in `errors` (one line per dataset). Verifications are cached by content (`VerifiedCache` under
    `<cache>/verified`) unless `cache` is False."""

    def __init__(self, data_dirs: dict[str, Path] | None = None, data_root: Path | None = None, cache: bool = True,
                 any_full_url: bool = False):
        from evaluator.datasets.download import cache_root

        self.any_full_url = any_full_url  # fetch a split result's full file from the address it names (not the store)
        self.data_dirs, self.data_root = data_dirs or {}, data_root
        self.errors: list[str] = []
        self._qrels: dict[tuple[str, str], Qrels | None] = {}
        self._query_sets: dict[str, str | None] = {}
        self.cache = VerifiedCache(cache_root() / "verified") if cache else None
        self.set_cache = SetScoresCache(cache_root() / "set-scores") if cache else None
        self._sets: dict[str, list] = {}

    def get(self, dataset_id: str, split: str) -> Qrels | None:
        key = (dataset_id, split)
        if key not in self._qrels:
            try:
                self._qrels[key] = qrels_for(dataset_id, split, self.data_dirs, self.data_root)
            except DatasetLoadError as error:
                self._qrels[key] = None
                self.errors.append(str(error))
        return self._qrels[key]

    def can_verify(self, dataset_id: str, split: str) -> bool:
        return self.get(dataset_id, split) is not None

    def judgments_key(self, dataset_id: str, split: str) -> str | None:
        if self.sets(dataset_id):
            return None  # what is read depends on every set too: the read cache keeps none (set scores are cached)
        qrels = self.get(dataset_id, split)
        return "" if qrels is None else qrels.sha256()

    def sets(self, dataset_id: str) -> list:
        """[(JudgmentSet, Qrels)] of each declared judgment set of `dataset_id` whose qrels can be had (the others
        are `irboard validate`'s and `build`'s problems: `judgment_set_problems`); looked up once per dataset."""
        if dataset_id not in self._sets:
            from evaluator.datasets.judgment_sets import load_qrels, sets_of

            found = []
            for judgment_set in sets_of(dataset_id):
                if judgment_set.official:
                    continue
                try:
                    found.append((judgment_set, load_qrels(judgment_set)))
                except IrboardError:
                    continue
            self._sets[dataset_id] = found
        return self._sets[dataset_id]

    def _set_scores(self, result: ResultFile, file_sha256: str | None) -> tuple:
        """The stored ranking of `result` scored against each declared set of its dataset, through the cache."""
        out = []
        for judgment_set, qrels in self.sets(result.dataset.id):
            scores = None
            if file_sha256 is not None and self.set_cache is not None:
                scores = self.set_cache.get(file_sha256, judgment_set.sha256, judgment_set.name)
            if scores is None:
                scores = score_set(result, qrels, judgment_set.sha256, judgment_set.name,
                                   main_metric(result.dataset.id, result.metrics))
                if file_sha256 is not None and self.set_cache is not None:
                    self.set_cache.put(file_sha256, scores)
            out.append(scores)
        return tuple(out)

    def local_query_set(self, dataset_id: str) -> str | None:
        """The query set of the qrels given with --data-dir for `dataset_id` (None when none were given); looked
        up once per dataset (validate and the build ask for every file)."""
        if dataset_id not in self._query_sets:
            self._query_sets[dataset_id] = self._local_query_set(dataset_id)
        return self._query_sets[dataset_id]

    def _local_query_set(self, dataset_id: str) -> str | None:
        from evaluator.datasets import get_spec, query_ids_sha256

        try:
            split = get_spec(dataset_id).split
        except IrboardError:
            return None
        folders = [self.data_dirs.get(dataset_id), self.data_root and self.data_root / dataset_id]
        if not any(folder is not None and (folder / "qrels" / f"{split}.tsv").is_file() for folder in folders):
            return None
        qrels = self.get(dataset_id, split)
        return None if qrels is None else query_ids_sha256(qrels.query_ids)

    def add_errors(self, errors: list[str]) -> None:
        """Add the errors a worker process's copy of these judgments met, each error once."""
        self.errors.extend(error for error in errors if error not in self.errors)

    def cached(self, file_sha256: str, header) -> Verification | None:
        """The cached verification of the file whose bytes hash to `file_sha256` (`header`: its parsed header),
        against the judgments of its dataset; None when not cached (or no judgments)."""
        qrels = self.get(header.dataset.id, header.dataset.split) if self.cache is not None else None
        outcome = None if qrels is None else self.cache.get(file_sha256, qrels.sha256(), header.metrics)
        sets = self.sets(header.dataset.id) if outcome is not None else []
        if not sets:
            return outcome
        found = [self.set_cache.get(file_sha256, judgment_set.sha256, judgment_set.name) for judgment_set, _ in sets]
        return None if any(scores is None for scores in found) else dataclasses.replace(outcome, sets=tuple(found))

    def verify(self, result: ResultFile, qrels: Qrels, file_sha256: str | None = None) -> Verification:
        """`verify_result`, through the cache when the sha256 of the result file's bytes is given; a result without
        problems is then scored against every declared judgment set of its dataset (`Verification.sets`)."""
        if file_sha256 is None or self.cache is None:
            outcome = verify_result(result, qrels)
        else:
            outcome = self.cache.get(file_sha256, qrels.sha256(), result.metrics)
            if outcome is None:
                outcome = verify_result(result, qrels)
                self.cache.put(file_sha256, qrels.sha256(), outcome)
        if outcome.problems or result.run is None or not self.sets(result.dataset.id):
            return outcome
        return dataclasses.replace(outcome, sets=self._set_scores(result, file_sha256))

    def verification(self, result: ResultFile, file_sha256: str | None = None) -> Verification | None:
        """The verification of a result with a stored ranking (a split result's: that of its full file); None
        without one, without judgments or when a split result's full file cannot be fetched (said in `errors`).
        `file_sha256`: the sha256 of the result file's bytes, to look the verification up in the cache (and
        store it there); split results are not cached."""
        if result.run is None and result.full is None:
            return None
        qrels = self.get(result.dataset.id, result.dataset.split)
        if qrels is None:
            return None
        if result.full is not None:
            file_sha256 = None
        # a split result whose queries are not the qrels' is rejected below without fetching its full file
        if result.full is not None and tuple(qrels.query_ids) == result.query_ids:
            from leaderboard.submissions.full import resolve_full

            try:
                result = resolve_full(result, self.any_full_url)
            except ResultValidationError as error:
                return Verification(frozenset(), tuple(sorted(result.metrics)), (str(error),))
            except DatasetLoadError as error:
                self.errors.append(f"{result.model.id} on {result.dataset.id}: full file not available: {error}")
                return None
            return verify_result(result, qrels)
        if result.run is not None and result.run.full is not None and tuple(qrels.query_ids) == result.query_ids:
            return self._verify_full_run(result, qrels)
        return self.verify(result, qrels, file_sha256)

    def _verify_full_run(self, result: ResultFile, qrels: Qrels) -> Verification:
        """A result re-scored whole from the run file it names (`run.full`); from its stored ranking alone when
        that file cannot be fetched (said in `errors`). Not cached, as a split result's is not."""
        from leaderboard.submissions.full import resolve_full_run

        try:
            outcome = verify_result(resolve_full_run(result, qrels, self.any_full_url), qrels)
        except ResultValidationError as error:
            return Verification(frozenset(), tuple(sorted(result.metrics)), (str(error),))
        except DatasetLoadError as error:
            self.errors.append(f"{result.model.id} on {result.dataset.id}: full run not available: {error}")
            outcome = verify_result(result, qrels)
        if outcome.problems or not self.sets(result.dataset.id):
            return outcome
        return dataclasses.replace(outcome, sets=self._set_scores(result, None))


def verifier(data_dirs: dict[str, Path], data_root: Path | None) -> Judgments:
    """`verification(result)` for the site build; its `errors` name the datasets whose judgments were missing."""
    return Judgments(data_dirs, data_root)
