"""What the build's read step keeps of one result file (`LoadedResult`), the output of its stages.

`leaderboard.submissions.load` makes these from the files (reading, verification and prediction, `stages`), and
`leaderboard.submissions.read_cache` makes them again from what it kept of unchanged files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluator.result import ResultFile
from evaluator.score_samples import ScoreSamples
from evaluator.trust import RANKED_TIERS, TIERS, tiers_of, weakest  # noqa: F401 (the ladder: evaluator.trust)


@dataclass(frozen=True)
class ModelInfo:
    id: str
    type: str
    revision: str
    parameters: int | None
    dim: int | None
    license: str
    open_weights: bool | None  # None: not stated
    training_datasets: tuple[str, ...] | None  # None: not stated
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
    artifact: str = ""  # the declared artifact (model.artifact) as "spec" or "spec at revision R"; "" when none
    # the published run file it was scored from (provenance.source): (repository, commit, path, license); None: none
    source: tuple[str, str, str, str] | None = None


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
    verified: bool  # every reported metric re-scored from the stored ranking and matching (ranking: `ranked_on`)
    provenance: Provenance
    score_samples: ScoreSamples | None = None  # decoded and validated by the reader (None once predicted from)
    verified_metrics: frozenset[str] = frozenset()  # the metrics re-scored and matching
    # recall at scale (an analysis.predictions.Prediction), when the reader was given the prediction stage
    prediction: object | None = None
    # metrics re-scored from ranks claimed below the stored depth that no score sample checks (verify.Verification)
    claimed_metrics: frozenset[str] = frozenset()
    # a ledger record names this file's bytes: its declared artifact, run again, gave its ranking (reproductions.py)
    reproduced: bool = False
    # the costs irboard measured while reproducing it ({"parameters", "dim", "queries_per_s"}); None when not reproduced
    measured: dict | None = None
    references: tuple[tuple[str, str, str], ...] = ()  # (metric, value as published, url): the authors' figures
    # judged relevant documents the score samples claim are absent from the corpus (absent_relevant): the build
    # checks no corpus, so the site marks them unchecked; the predictor counts them as misses (analysis.scale)
    absent_claimed: int = 0
    # Judged@k at the main metric's cutoff and the hole bounds (submissions.holes.HoleFigures); None when the main
    # metric was not re-scored (no ranking, no judgments)
    holes: object | None = None
    # the stored ranking scored against each declared judgment set of the dataset (submissions.set_scores.SetScores)
    judgment_sets: tuple = ()
    dataset_revision: str = ""  # the data's revision the file states (dataset.revision; checked by `facts`)

    def tiers(self) -> dict[str, str]:
        """Each reported metric's place on the trust ladder (evaluator.trust.TIERS)."""
        return tiers_of(self.metrics, self.verified_metrics, self.claimed_metrics, self.reproduced)

    def tier_of(self, metric: str) -> str:
        """`metric`'s place on the trust ladder; a result's own tier is that of its dataset's main metric."""
        return tiers_of([metric], self.verified_metrics, self.claimed_metrics, self.reproduced)[metric]

    def ranked_on(self, metric: str) -> bool:
        """Is the result ranked on `metric`: was it re-scored (whatever the other metrics rest on)?"""
        return metric in self.verified_metrics


def to_loaded(path: str, result: ResultFile, query_ids: tuple[str, ...], per_query: dict[str, np.ndarray],
              verified: bool, verified_metrics: frozenset[str] = frozenset(), has_run: bool | None = None,
              claimed_metrics: frozenset[str] = frozenset(), holes: object | None = None,
              judgment_sets: tuple = ()) -> LoadedResult:
    """What the site keeps of `result` read from `path` (with the score samples, until they are predicted from)."""
    model, dataset, prov = result.model, result.dataset, result.provenance
    return LoadedResult(
        path=path,
        model=ModelInfo(
            id=model.id, type=model.type, revision=model.revision, parameters=model.parameters, dim=model.dim,
            license=model.license, open_weights=model.open_weights,
            training_datasets=None if model.training_datasets is None else tuple(model.training_datasets),
            url=model.url,
        ),
        dataset_id=dataset.id,
        split=dataset.split,
        num_docs=dataset.num_docs,
        qrels_sha256=dataset.qrels_sha256,
        dataset_revision=dataset.revision,
        settings=tuple(sorted(result.settings.model_dump().items())),
        metrics=dict(sorted(result.metrics.items())),
        query_ids=query_ids,
        per_query=per_query,
        has_run=result.run is not None if has_run is None else has_run,
        verified=verified,
        verified_metrics=verified_metrics,
        claimed_metrics=claimed_metrics,
        provenance=Provenance(
            irboard_version=prov.irboard_version, command=prov.command, created_at=prov.created_at,
            hardware=prov.hardware, timings=tuple(sorted(prov.timings.items())), peak_rss_bytes=prov.peak_rss_bytes,
            index_bytes=prov.index_bytes,
            covered_queries=prov.coverage.covered_queries if prov.coverage is not None else None,
            artifact=_artifact_text(model.artifact),
            source=None if prov.source is None else (prov.source.repository, prov.source.commit, prov.source.path,
                                                     prov.source.license),
        ),
        score_samples=result.score_samples,
        absent_claimed=_absent_claimed(result),
        references=tuple((r.metric, r.value, r.url) for r in result.references),
        holes=holes,
        judgment_sets=judgment_sets,
    )


def _absent_claimed(result: ResultFile) -> int:
    """How many judged relevant documents the result's score samples call absent from the corpus."""
    samples = result.score_samples
    if samples is None:
        return 0
    flat = samples.flat_scores()
    if flat is not None:
        return 0 if flat.absent is None else int(flat.absent.sum())
    return sum(int(q.absent) for q in samples.queries.values())


def _artifact_text(artifact) -> str:
    if artifact is None:
        return ""
    return artifact.spec + (f" at revision {artifact.revision}" if artifact.revision else "")
