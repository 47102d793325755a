"""What the build keeps of a result file, cached by the file's exact bytes (`$IRBOARD_CACHE/read`).

A build keeps a few things of each file: its metadata, metric means, the main metric's per-query values, whether it
verified and its recall-at-scale prediction. Working them out means parsing and checking the whole file (1 ms a file
with a warm verification and prediction cache, 10 ms without); a build over 30,000 files that did this for every file
at every deploy spent most of its time re-reading files that had not changed. This cache keeps that reading (a few
KB of JSON a file) under the sha256 of the file's bytes, so an unchanged file costs reading and hashing its bytes and
one small entry.

The key fields are READ_VERSION, the file's sha256, whether judgments were at hand and the predictor's method; the
entry also names the dataset and split, the kept metrics and the sha256 of the judgments the file was verified
against (null: none were at hand), and a hit must match what this build would use: the metrics `keep_metrics` names
for that dataset and the judgments this build has for it. Entries are written only after a read that found no
problem, from what that read produced, so a hit stands for exactly what reading those bytes gives, for the same
reason as the verification cache (docs/leaderboard-at-scale.md). Split results (whose ranking lives in another file)
are not kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from leaderboard.submissions.cache import ContentCache
from leaderboard.submissions.verify import VERIFICATION_VERSION

# Bump when what a build keeps of a file changes (reading, checking, LoadedResult's fields); verification and
# prediction carry their own versions, which are part of the key too.
READ_VERSION = "2"  # 2: the coverage of the run


class ReadCache(ContentCache):
    """Entries of what `read_loaded` made of a file (see the module docstring); `loaded` builds LoadedResults."""

    def __init__(self, folder: Path, loaded: Callable[..., object]):
        super().__init__(folder)
        self._loaded = loaded  # the LoadedResult factory of leaderboard.submissions.load (it imports this module)

    @staticmethod
    def _fields(file_sha256: str, judged: bool, predictor) -> dict[str, str]:
        return {"version": f"{READ_VERSION} verification={VERIFICATION_VERSION}", "file_sha256": file_sha256,
                "judged": "yes" if judged else "no", "predictor": predictor.method() if predictor else "none"}

    def find(self, file_sha256: str, path: str, keep_metrics: Callable[[str], Iterable[str] | None] | None,
             judgments, predictor):
        """The LoadedResult of the file at `path` whose bytes hash to `file_sha256`, or None."""
        entry = self.get(self._fields(file_sha256, judgments is not None, predictor))
        if entry is None:
            return None
        try:
            dataset_id, split, kept = entry["dataset_id"], entry["split"], entry["kept"]
            if (keep_metrics is None) != (kept is None) or (kept is not None and sorted(
                    set(keep_metrics(dataset_id)) & set(entry["metrics"])) != kept):
                return None
            qrels = judgments.get(dataset_id, split) if judgments is not None else None
            if (None if qrels is None else qrels.sha256()) != entry["judgments_sha256"]:
                return None
            return self._result(entry, path, predictor)
        except (KeyError, TypeError, ValueError):
            return None

    def keep(self, file_sha256: str, loaded, kept: list[str] | None, judgments, predictor) -> None:
        """Store what reading the file gave (`kept`: the metrics keep_metrics named, None: all of them)."""
        qrels = judgments.get(loaded.dataset_id, loaded.split) if judgments is not None else None
        model, provenance = dataclasses.asdict(loaded.model), dataclasses.asdict(loaded.provenance)
        self.put(self._fields(file_sha256, judgments is not None, predictor), {
            "dataset_id": loaded.dataset_id, "split": loaded.split, "kept": kept,
            "judgments_sha256": None if qrels is None else qrels.sha256(),
            "model": model, "num_docs": loaded.num_docs, "qrels_sha256": loaded.qrels_sha256,
            "settings": [list(item) for item in loaded.settings], "metrics": loaded.metrics,
            "query_ids": list(loaded.query_ids),
            "per_query": {name: values.tolist() for name, values in loaded.per_query.items()},
            "has_run": loaded.has_run, "verified": loaded.verified, "verified_metrics": sorted(loaded.verified_metrics),
            "provenance": provenance,
            "prediction": None if loaded.prediction is None else predictor.encode(loaded.prediction)})

    def _result(self, entry: dict, path: str, predictor):
        model = {**entry["model"], "training_datasets": tuple(entry["model"]["training_datasets"])}
        provenance = {**entry["provenance"], "timings": tuple(tuple(item) for item in entry["provenance"]["timings"])}
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
        return self._loaded(
            path=path, model=model, dataset_id=entry["dataset_id"], split=entry["split"], num_docs=entry["num_docs"],
            qrels_sha256=entry["qrels_sha256"], settings=tuple(tuple(item) for item in entry["settings"]),
            metrics=entry["metrics"], query_ids=query_ids, per_query=per_query,
            has_run=entry["has_run"], verified=entry["verified"], verified_metrics=frozenset(entry["verified_metrics"]),
            provenance=provenance, prediction=prediction)
