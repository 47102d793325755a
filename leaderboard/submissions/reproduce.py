"""Reproduce a result: run its declared artifact (`model.artifact`) again on its dataset and compare the rankings.

A result is *reproduced* when the re-run, with the weights of the declared revision, gives the stored ranking: the
same documents in the same order at every query's stored depth (documents whose scores agree within the tolerance
may change places: they are tied within it), the same judged documents at the same ranks below
it (`run.below`), the same ranking lengths, every per-query value re-scored from the re-run's ranking equal to the
stored one exactly (so a swap within the tolerance only passes when it changes no value: a ranking whose relevant
documents were lifted past near-ties is refused), and every score within `RELATIVE_TOLERANCE` of the stored one
(scores differ in their last bits between CPUs, GPUs and library versions; documents may not). The outcome is a
`Reproduction`; `leaderboard.submissions.reproductions` keeps the successful ones in the ledger.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.artifact import AnyArtifact, Artifact
from evaluator.errors import IrboardError, one_line
from evaluator.result import ResultFile, Run, read_result, read_result_bytes

# |fresh - stored| <= RELATIVE_TOLERANCE * max(|stored|, 1): float32 encoders on other hardware agree to about 1e-6
RELATIVE_TOLERANCE = 1e-4


class ReproductionError(IrboardError):
    """A result that cannot be reproduced at all (no artifact, no ranking, a split file): one line and the fix."""


@dataclass(frozen=True)
class Reproduction:
    """The outcome of running a result's artifact again."""

    path: str
    result_sha256: str  # the bytes of the result file that was compared
    model_id: str
    dataset_id: str
    spec: str
    revision: str
    reproduced: bool
    difference: str  # "" when reproduced; else the first difference found, in one line
    queries: int
    depth: int
    max_score_difference: float  # relative, over every compared score
    # the costs irboard measured while re-running: the model's parameters and dimension as loaded (equal to the
    # result's when reproduced) and the search rate on the reproducing machine
    parameters: int | None = None
    dim: int | None = None
    queries_per_s: float | None = None
    artifact: AnyArtifact | None = None  # what was run (recorded in the ledger)
    # how submitted code was kept from the judgments and the ledger (sandbox.py): "" for a spec (irboard's own code)
    isolation: str = ""


def _ids(run: Run) -> np.ndarray:
    return np.asarray(run.doc_ids, dtype=object)[run.docs] if run.docs.size else np.zeros(0, dtype=object)


def _relative(fresh: np.ndarray, stored: np.ndarray) -> np.ndarray:
    return np.abs(fresh - stored) / np.maximum(np.abs(stored), 1.0)


def compare_runs(stored: ResultFile, fresh: ResultFile, tolerance: float = RELATIVE_TOLERANCE) -> tuple[str, float]:
    """(the first difference between the stored and the re-run ranking, "" when none; the largest relative score
    difference). Both results are on the same queries; `fresh` is cut to the stored depth."""
    if stored.query_ids != fresh.query_ids:
        return "the re-run judged other queries (other judgments?)", 0.0
    if stored.dataset.qrels_sha256 != fresh.dataset.qrels_sha256:
        return "the re-run used other judgments (dataset.qrels_sha256 differs)", 0.0
    a, b = stored.run, fresh.run
    if b.below is None and b.depth != a.depth:
        b = b.cut(a.depth)
    if b.depth != a.depth:
        return f"the re-run stores its ranking to depth {b.depth}, the result to {a.depth}", 0.0
    differing = np.flatnonzero(a.lengths != b.lengths)
    if differing.size:
        q = int(differing[0])
        return (f"query {stored.query_ids[q]!r}: {int(a.lengths[q])} documents stored to depth {a.depth}, the re-run "
                f"ranks {int(b.lengths[q])}"), 0.0
    ids_a, ids_b = _ids(a), _ids(b)
    aligned = np.array(b.scores, dtype=np.float64)  # the re-run's score of the document the result has there
    wrong = np.flatnonzero(ids_a != ids_b)
    for q in np.unique(np.searchsorted(a.offsets, wrong, side="right") - 1):
        start, end = int(a.offsets[q]), int(a.offsets[q]) + int(a.lengths[q])
        rescored = dict(zip(ids_b[start:end].tolist(), b.scores[start:end].tolist(), strict=True))
        scores = [rescored.get(doc, np.nan) for doc in ids_a[start:end].tolist()]
        gaps = _relative(np.array(scores, dtype=np.float64), a.scores[start:end])
        if not (gaps <= tolerance).all():  # not a swap of documents tied within the tolerance
            i = int(wrong[np.searchsorted(wrong, start)])
            return (f"query {stored.query_ids[q]!r} rank {i - start + 1}: the result has {ids_a[i]!r}, the "
                    f"re-run {ids_b[i]!r}"), 0.0
        aligned[start:end] = scores
    difference = _compare_values(stored, fresh)
    if difference:
        return difference, 0.0
    gaps = _relative(aligned, a.scores)
    worst = float(gaps.max(initial=0.0))
    if worst > tolerance:
        i = int(np.argmax(gaps))
        q = int(np.searchsorted(a.offsets, i, side="right") - 1)
        return (f"query {stored.query_ids[q]!r} rank {i - int(a.offsets[q]) + 1}: score {a.scores[i]!r} in the "
                f"result, {b.scores[i]!r} in the re-run (beyond the relative tolerance {tolerance:g})"), worst
    difference = _compare_below(stored, a, b, tolerance)
    if difference:
        return difference, worst
    if a.below is not None:
        worst = max(worst, float(_relative(b.below.scores, a.below.scores).max(initial=0.0)))
    return "", worst


def _compare_values(stored: ResultFile, fresh: ResultFile) -> str:
    """The first per-query value of the result that the re-run's ranking does not give exactly."""
    for name in sorted(stored.per_query):
        if name not in fresh.per_query:
            return f"the re-run was not scored with {name}"
        differing = np.flatnonzero(stored.per_query[name] != fresh.per_query[name])
        if differing.size:
            q = int(differing[0])
            return (f"query {stored.query_ids[q]!r}: {name} {float(stored.per_query[name][q])!r} in the result, "
                    f"{float(fresh.per_query[name][q])!r} from the re-run's ranking (re-scored values must be equal; "
                    "scores within the tolerance only decide ties)")
    return ""


def _compare_below(stored: ResultFile, a: Run, b: Run, tolerance: float) -> str:
    """The first difference below the stored depth (ranking lengths, judged documents' ranks, ids and scores)."""
    if a.below is None:
        return ""
    if b.below is None:
        return "the result keeps judged documents below its depth (run.below), the re-run none"
    for name in ("totals", "counts"):
        differing = np.flatnonzero(getattr(a.below, name) != getattr(b.below, name))
        if differing.size:
            q = int(differing[0])
            what = "documents ranked in all" if name == "totals" else "judged documents below the depth"
            return (f"query {stored.query_ids[q]!r}: {int(getattr(a.below, name)[q])} {what} in the result, "
                    f"{int(getattr(b.below, name)[q])} in the re-run")
    same = (a.below.ranks == b.below.ranks) & (np.asarray(a.below.doc_ids, dtype=object)
                                               == np.asarray(b.below.doc_ids, dtype=object))
    same &= _relative(b.below.scores, a.below.scores) <= tolerance
    if not same.all():
        i = int(np.flatnonzero(~same)[0])
        q = int(np.searchsorted(a.below.offsets, i, side="right") - 1)
        return (f"query {stored.query_ids[q]!r} below the depth: the result has {a.below.doc_ids[i]!r} at rank "
                f"{int(a.below.ranks[i])} (score {a.below.scores[i]!r}), the re-run {b.below.doc_ids[i]!r} at rank "
                f"{int(b.below.ranks[i])} (score {b.below.scores[i]!r})")
    return ""


def reproducible(result: ResultFile, path: str) -> None:
    """Raise ReproductionError unless `result` declares an artifact and stores a ranking to compare with."""
    if result.model.artifact is None:
        raise ReproductionError(f"{path}: model.artifact: no artifact declared, so there is nothing to run again; "
                                "results of `irboard evaluate --model` declare theirs")
    if result.full is not None:
        raise ReproductionError(f"{path}: a split file holds no ranking; reproduce its full file")
    if result.run is None:
        raise ReproductionError(f"{path}: run: no stored ranking to compare a re-run with; re-create the result with "
                                "irboard evaluate")


def reproduce_result(path: Path | str, *, data_dir: Path | str | None = None, cache_dir: Path | str | None = None,
                     tolerance: float = RELATIVE_TOLERANCE, batch_size: int | None = None,
                     isolated: bool = True) -> Reproduction:
    """Run the artifact `path` declares on its dataset (`data_dir`: a local copy of it) and compare the ranking; a
    script runs isolated (`sandbox`) unless `isolated` is False, whose outcome is not blind and never recorded."""
    from evaluator.metrics import parse_measures
    from evaluator.pipeline import evaluate_model

    content = read_result_bytes(path)
    stored = read_result(path, content=content)
    reproducible(stored, str(path))
    artifact = stored.model.artifact
    if not isinstance(artifact, Artifact):  # a script at a commit or a container image: run its command
        return _reproduce_declared(path, content, stored, data_dir, cache_dir, tolerance, isolated)
    # stored as the result was: whole, or to its depth with the judged documents below
    keep = stored.run.depth if stored.run is not None and stored.run.depth < stored.settings.top_k else None
    fresh = evaluate_model(artifact.spec, stored.dataset.id, parse_measures(sorted(stored.metrics)),
                           data_dir=data_dir, cache_dir=cache_dir, top_k=stored.settings.top_k, batch_size=batch_size,
                           command=f"irboard reproduce {path}", reuse_encodings=False, keep_depth=keep)
    loaded = fresh.model.revision
    if loaded != artifact.revision:
        difference, worst = (f"the spec {artifact.spec!r} loads revision {loaded!r}, the result declares "
                             f"{artifact.revision!r}"), 0.0
    elif (fresh.model.id, fresh.model.type) != (stored.model.id, stored.model.type):
        difference, worst = (f"the spec {artifact.spec!r} runs model {fresh.model.id!r} ({fresh.model.type}), the "
                             f"result names {stored.model.id!r} ({stored.model.type})"), 0.0
    elif (fresh.model.parameters, fresh.model.dim) != (stored.model.parameters, stored.model.dim):
        difference, worst = (f"the model loaded has {fresh.model.parameters} parameters and dimension "
                             f"{fresh.model.dim}, the result states {stored.model.parameters} and "
                             f"{stored.model.dim}"), 0.0
    elif fresh.settings != stored.settings:
        difference, worst = "the re-run's settings (top_k, ignore_identical_ids, relevance_level) differ", 0.0
    else:
        difference, worst = compare_runs(stored, fresh, tolerance)
    return Reproduction(path=str(path), result_sha256=hashlib.sha256(content).hexdigest(), model_id=stored.model.id,
                        dataset_id=stored.dataset.id, spec=artifact.spec, revision=artifact.revision,
                        reproduced=not difference, difference=difference, queries=len(stored.query_ids),
                        depth=stored.run.depth, max_score_difference=worst, parameters=fresh.model.parameters,
                        dim=fresh.model.dim, queries_per_s=fresh.provenance.timings.get("queries_per_s"),
                        artifact=artifact)


def _reproduce_declared(path, content: bytes, stored: ResultFile, data_dir, cache_dir, tolerance: float,
                        isolated: bool) -> Reproduction:
    """A script's or container's re-run compared with the stored ranking (`reproduce_declared`)."""
    from leaderboard.submissions.reproduce_declared import NotReproduced, rerun_declared

    artifact, isolation = stored.model.artifact, ""
    try:
        fresh, isolation = rerun_declared(stored, data_dir, cache_dir, isolated=isolated)
        difference, worst = compare_runs(stored, fresh, tolerance)
    except NotReproduced as error:
        difference, worst = str(error), 0.0
    except ReproductionError:
        raise
    except IrboardError as error:  # nothing could be run here (no dataset folder, no container runtime)
        raise ReproductionError(f"{path}: {one_line(str(error))}") from None
    return Reproduction(path=str(path), result_sha256=hashlib.sha256(content).hexdigest(), model_id=stored.model.id,
                        dataset_id=stored.dataset.id, spec=artifact.spec, revision=artifact.revision,
                        reproduced=not difference, difference=difference, queries=len(stored.query_ids),
                        depth=stored.run.depth, max_score_difference=worst, artifact=artifact, isolation=isolation)
