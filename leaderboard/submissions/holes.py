"""What the board keeps of a result's unjudged documents (over `evaluator.metrics.holes`): Judged@k at the main
metric's cutoff, and the hole bounds of every reported metric's mean, with per-query bounds for the main metric
only (the verdicts need them; the other metrics show their range), and the main metric on the condensed lists
(trec_eval -J: nDCG'@10, P'@10, AP'), per query, for the dataset page's condensed view. Per-query arrays are float32, like the site's
other per-query arrays at scale (1,000 models x 30 datasets, docs/leaderboard-at-scale.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from evaluator.errors import UnknownNameError
from evaluator.metrics import Measure, QrelsStats, RankedRun, parse_measure
from evaluator.metrics.holes import hole_bounds, judged_at
from evaluator.metrics.measures import evaluate
from evaluator.metrics.names import JUDGED_ONLY_KINDS


@dataclass(frozen=True, eq=False)
class HoleFigures:
    """Judged@k and hole bounds of one result (the main metric's per query, aligned on its query ids)."""

    metric: str  # the main metric the per-query arrays and `judged` are for
    judged: float  # mean Judged@k at the main metric's cutoff (the whole ranking for an uncut metric)
    judged_per_query: np.ndarray  # float32
    low: np.ndarray  # float32: the main metric's per-query minimum over every labelling of its unjudged documents
    high: np.ndarray  # float32: the maximum
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)  # metric -> (low, high) of the mean
    # float32: the main metric on the condensed lists (trec_eval -J: unjudged documents removed first), per query;
    # None for a metric without a condensed form (condensed_name)
    condensed: np.ndarray | None = None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HoleFigures) and (self.metric, self.judged, self.bounds) == (
            other.metric, other.judged, other.bounds) and all(
            np.array_equal(getattr(self, name), getattr(other, name)) for name in ("judged_per_query", "low", "high")) \
            and (self.condensed is None) == (other.condensed is None) and (
                self.condensed is None or np.array_equal(self.condensed, other.condensed))

    __hash__ = None  # type: ignore[assignment]

    def to_json(self) -> dict:
        return {"metric": self.metric, "judged": self.judged, "judged_per_query": self.judged_per_query.tolist(),
                "low": self.low.tolist(), "high": self.high.tolist(),
                "bounds": {name: list(pair) for name, pair in sorted(self.bounds.items())},
                "condensed": None if self.condensed is None else self.condensed.tolist()}

    @classmethod
    def from_json(cls, entry: dict, queries: int) -> HoleFigures:
        """The figures `to_json` gave; ValueError (or KeyError, TypeError) for anything else."""
        arrays = [np.asarray(entry[key], dtype=np.float32) for key in ("judged_per_query", "low", "high")]
        if any(array.shape != (queries,) or not np.isfinite(array).all() for array in arrays):
            raise ValueError("per-query hole figures that do not fit the queries")
        bounds = {str(name): (float(pair[0]), float(pair[1])) for name, pair in entry["bounds"].items()}
        condensed = None
        if entry.get("condensed") is not None:
            condensed = np.asarray(entry["condensed"], dtype=np.float32)
            if condensed.shape != (queries,) or not np.isfinite(condensed).all():
                raise ValueError("condensed values that do not fit the queries")
        return cls(str(entry["metric"]), float(entry["judged"]), *arrays, bounds, condensed)


def judged_measure(metric: str) -> Measure:
    """Judged@k at the metric's cutoff (Judged@1000 for an uncut metric: trec_eval's depth)."""
    cutoff = parse_measure(metric).cutoff
    return Measure("Judged", cutoff if cutoff is not None else 1000)


def judged_name(metric: str) -> str:
    """'Judged@10' for 'nDCG@10' (judged_measure's name; 'Judged@k' for a name that does not parse)."""
    try:
        return str(judged_measure(metric))
    except UnknownNameError:
        return "Judged@k"


def condensed_measure(metric: str) -> Measure | None:
    """The metric on the condensed lists (nDCG@10 -> nDCG(judged_only=True)@10, trec_eval -J), None where trec_eval
    has no condensed form of it (evaluator.metrics.names.JUDGED_ONLY_KINDS) or it is one already."""
    try:
        measure = parse_measure(metric)
    except UnknownNameError:
        return None
    if measure.judged_only or measure.kind not in JUDGED_ONLY_KINDS:
        return None
    return replace(measure, judged_only=True)


def condensed_name(metric: str) -> str:
    """How the pages name the condensed form: nDCG'@10, P'@10, AP' (Sakai's prime); "" where there is none."""
    measure = condensed_measure(metric)
    if measure is None:
        return ""
    return f"{measure.kind}'" + ("" if measure.cutoff is None else f"@{measure.cutoff}")


def hole_figures(ranked: RankedRun, stats: QrelsStats, measures: Iterable[Measure], level: int,
                 main_metric: str) -> HoleFigures | None:
    """The figures of a ranked result; None when it does not report `main_metric` (or the main metric has no
    bounds: ARP)."""
    by_name = {str(m): m for m in measures}
    if main_metric not in by_name:
        return None
    bounds: dict[str, tuple[float, float]] = {}
    main = None
    for name, measure in sorted(by_name.items()):
        try:
            found = hole_bounds(ranked, stats, measure, level)
        except UnknownNameError:  # a metric without bounds (ARP)
            continue
        bounds[name] = found.mean()
        if name == main_metric:
            main = found
    if main is None:
        return None
    judged = judged_at(ranked, judged_measure(main_metric).cutoff)
    condensed = condensed_measure(main_metric)
    values = None if condensed is None else evaluate(ranked, stats, [condensed], level)[str(condensed)]
    return HoleFigures(main_metric, float(judged.mean()) if judged.size else 0.0, judged.astype(np.float32),
                       main.low.astype(np.float32), main.high.astype(np.float32), bounds,
                       None if values is None else np.asarray(values, dtype=np.float32))
