"""What the build keeps of a result file, cached by the file's exact bytes (`$IRBOARD_CACHE/read`).

A build keeps a few things of each file: its metadata, metric means, the main metric's per-query values, whether it
verified and its recall-at-scale prediction. Working them out means parsing and checking the whole file (1 ms a file
with a warm verification and prediction cache, 10 ms without); a build over 30,000 files that did this for every file
at every deploy spent most of its time re-reading files that had not changed. This cache keeps that reading (a few
KB of JSON a file) under the sha256 of the file's bytes, so an unchanged file costs reading and hashing its bytes and
one small entry.

The key fields are the file's sha256, whether a verifier was at hand and the predictor's method (its code's version
included); the entry also names the dataset and split, the kept metrics and what the verifier's outcomes on that
dataset depend on (`Verifier.judgments_key`: the sha256 of the judgments, "" without), and a hit must match what this
build would use: the metrics `keep_metrics` names for that dataset and the judgments this build has for it. Every
entry is also keyed by the version of the code of `leaderboard.submissions.load` and all it imports (reading,
verifying, checking: `leaderboard.submissions.cache.code_version`), so a change to that code misses every entry.
Entries are written only after a read that found no problem, from what that read produced, so a hit stands for
exactly what reading those bytes gives, for the same reason as the verification cache
(docs/leaderboard-at-scale.md). Split results (whose ranking lives in another file) are not kept, nor results a
verifier declares verified without judgments (`judgments_key` None).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from leaderboard.submissions.cache import ContentCache
from leaderboard.submissions.holes import HoleFigures
from leaderboard.submissions.loaded import LoadedResult, ModelInfo, Provenance
from leaderboard.submissions.stages import Forecaster, Source, Verifier


class ReadCache(ContentCache):
    """Entries of what `load.read_loaded` made of a file (see the module docstring)."""

    def __init__(self, folder: Path):
        super().__init__(folder, code=("leaderboard.submissions.load",))

    @staticmethod
    def _fields(file_sha256: str, verifier: Verifier | None, predictor: Forecaster) -> dict[str, str]:
        return {"file_sha256": file_sha256, "judged": "no" if verifier is None else "yes",
                "predictor": predictor.method()}

    def find(self, source: Source, keep_metrics: Callable[[str], Iterable[str]] | None, verifier: Verifier | None,
             predictor: Forecaster) -> LoadedResult | None:
        """What reading `source` gave before, with the same kept metrics and judgments, or None."""
        entry = self.get(self._fields(source.sha256, verifier, predictor))
        if entry is None:
            return None
        try:
            dataset_id, split, kept = entry["dataset_id"], entry["split"], entry["kept"]
            if (keep_metrics is None) != (kept is None) or (kept is not None and sorted(
                    set(keep_metrics(dataset_id)) & set(entry["metrics"])) != kept):
                return None
            key = verifier.judgments_key(dataset_id, split) if verifier is not None else ""
            if key is None or key != (entry["judgments_sha256"] or ""):
                return None
            return self._result(entry, str(source.path), predictor)
        except (KeyError, TypeError, ValueError):
            return None

    def keep(self, source: Source, loaded: LoadedResult, kept: list[str] | None, verifier: Verifier | None,
             predictor: Forecaster) -> None:
        """Store what reading `source` gave (`kept`: the metrics keep_metrics named, None: all of them)."""
        key = verifier.judgments_key(loaded.dataset_id, loaded.split) if verifier is not None else ""
        if key is None:
            return
        # shallow: their fields are numbers, strings and tuples of them (dataclasses.asdict deep-copies, 4% of a cold read)
        model, provenance = (vars(loaded.model).copy(), vars(loaded.provenance).copy())
        self.put(self._fields(source.sha256, verifier, predictor), {
            "dataset_id": loaded.dataset_id, "split": loaded.split, "kept": kept, "judgments_sha256": key or None,
            "model": model, "num_docs": loaded.num_docs, "qrels_sha256": loaded.qrels_sha256,
            "dataset_revision": loaded.dataset_revision,
            "settings": [list(item) for item in loaded.settings], "metrics": loaded.metrics,
            "query_ids": list(loaded.query_ids),
            "per_query": {name: values.tolist() for name, values in loaded.per_query.items()},
            "has_run": loaded.has_run, "verified": loaded.verified, "verified_metrics": sorted(loaded.verified_metrics),
            "claimed_metrics": sorted(loaded.claimed_metrics), "provenance": provenance,
            "references": [list(item) for item in loaded.references], "absent_claimed": loaded.absent_claimed,
            "prediction": None if loaded.prediction is None else predictor.encode(loaded.prediction),
            "holes": None if loaded.holes is None else loaded.holes.to_json()})

    def _result(self, entry: dict, path: str, predictor: Forecaster) -> LoadedResult:
        model = {**entry["model"], "training_datasets": None if entry["model"]["training_datasets"] is None
                 else tuple(entry["model"]["training_datasets"])}
        provenance = {**entry["provenance"], "timings": tuple(tuple(item) for item in entry["provenance"]["timings"])}
        if provenance.get("source") is not None:
            provenance["source"] = tuple(str(part) for part in provenance["source"])
        prediction = None
        if entry["prediction"] is not None:
            prediction = predictor.decode(entry["prediction"], model["id"], entry["dataset_id"], entry["metrics"])
            if prediction is None:
                raise ValueError("not a prediction")
        query_ids = tuple(entry["query_ids"])
        per_query = {name: np.array(values, dtype=np.float64) for name, values in entry["per_query"].items()}
        if not all(isinstance(q, str) for q in query_ids) or not all(
                values.shape == (len(query_ids),) and np.isfinite(values).all() for values in per_query.values()):
            raise ValueError("per-query values that do not fit the queries")  # a damaged entry: read the file
        return LoadedResult(
            path=path, model=ModelInfo(**model), dataset_id=entry["dataset_id"], split=entry["split"],
            num_docs=entry["num_docs"], dataset_revision=str(entry["dataset_revision"]),
            qrels_sha256=entry["qrels_sha256"], settings=tuple(tuple(item) for item in entry["settings"]),
            metrics=entry["metrics"], query_ids=query_ids, per_query=per_query,
            has_run=entry["has_run"], verified=entry["verified"], verified_metrics=frozenset(entry["verified_metrics"]),
            claimed_metrics=frozenset(entry["claimed_metrics"]), provenance=Provenance(**provenance),
            prediction=prediction, references=tuple((str(m), str(v), str(u)) for m, v, u in entry["references"]),
            absent_claimed=int(entry["absent_claimed"]),
            holes=None if entry.get("holes") is None else HoleFigures.from_json(entry["holes"], len(query_ids)))
