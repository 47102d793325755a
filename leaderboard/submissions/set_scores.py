"""A stored ranking scored against each judgment set of its dataset besides the official one
(`evaluator.datasets.judgment_sets`, docs/datasets.md "Judgment sets").

Against another set there is nothing submitted to compare with: the values are computed, from the stored ranking
alone. So a set scores only the metrics that ranking determines by itself: a cut metric whose cutoff is within the
stored depth, an uncut one when every ranking is stored whole. Judged entries claimed below the stored depth
(`run.below`) were judged by the official qrels and say nothing about another set's, so they are not used. Scores
are kept by content (`SetScoresCache`: the result file's bytes, the set's sha256, this code's version).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluator.metrics import Qrels, evaluate
from evaluator.result import ResultFile
from evaluator.trust import rescorable
from leaderboard.submissions.cache import ContentCache
from leaderboard.submissions.holes import HoleFigures, hole_figures
from leaderboard.submissions.labels import per_qrels, ranked_from_result


@dataclass(frozen=True, eq=False)
class SetScores:
    """One result scored against one judgment set."""

    sha256: str  # the set's identity (JudgmentSet.sha256)
    name: str
    per_query: dict[str, np.ndarray]  # float64, aligned on the result's query ids: each metric the ranking determines
    holes: HoleFigures | None  # Judged@k and hole bounds against this set (None without the main metric)

    def means(self) -> dict[str, float]:
        return {name: float(values.mean()) for name, values in sorted(self.per_query.items())}


def stored_only(result: ResultFile) -> ResultFile:
    """`result` with its stored ranking alone: no claims below the stored depth, no whole run file."""
    if result.run is None or (result.run.below is None and result.run.full is None):
        return result
    return dataclasses.replace(result, run=dataclasses.replace(result.run, below=None, full=None))


def determined(result: ResultFile, names: Iterable[str] | None = None) -> list:
    """The measures among `names` (default: every reported metric) the stored ranking alone determines."""
    if result.run is None:
        return []
    return rescorable(stored_only(result), names)[0]


def score_set(result: ResultFile, qrels: Qrels, sha256: str, name: str, main_metric: str) -> SetScores:
    """The stored ranking of `result` scored against `qrels` (one set's judgments, the official queries)."""
    stored = stored_only(result)
    measures = determined(stored)
    if not measures:
        return SetScores(sha256, name, {}, None)
    level = result.settings.relevance_level
    stats = per_qrels(qrels, ("stats", level), lambda: qrels.label_stats(level))
    ranked = ranked_from_result(stored, qrels)
    values = evaluate(ranked, stats, measures, level)
    per_query = {str(m): np.asarray(values[str(m)], dtype=np.float64) for m in measures}
    return SetScores(sha256, name, per_query, hole_figures(ranked, stats, measures, level, main_metric))


class SetScoresCache(ContentCache):
    """Past scores against a judgment set, keyed by the result file's bytes, the set's sha256 and this code."""

    def __init__(self, folder: Path):
        super().__init__(folder, code=(__name__,))

    def get(self, file_sha256: str, sha256: str, name: str) -> SetScores | None:
        entry = super().get({"file_sha256": file_sha256, "set_sha256": sha256})
        if entry is None:
            return None
        try:
            queries = int(entry["queries"])
            per_query = {str(metric): np.asarray(values, dtype=np.float64) for metric, values in entry["per_query"].items()}
            if any(values.shape != (queries,) for values in per_query.values()):
                return None
            holes = None if entry["holes"] is None else HoleFigures.from_json(entry["holes"], queries)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        return SetScores(sha256, name, per_query, holes)

    def put(self, file_sha256: str, scores: SetScores) -> None:
        super().put({"file_sha256": file_sha256, "set_sha256": scores.sha256},
                    {"per_query": {metric: values.tolist() for metric, values in scores.per_query.items()},
                     "holes": None if scores.holes is None else scores.holes.to_json(),
                     "queries": next((len(v) for v in scores.per_query.values()), 0)})
