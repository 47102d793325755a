"""Per-query IR metrics with trec_eval 9.0.8 semantics, computed for all queries at once."""

from evaluator.metrics.names import (
    DEFAULT_MEASURES,
    KINDS,
    Measure,
    parse_measure,
    parse_measures,
    valid_forms,
)

__all__ = ["DEFAULT_MEASURES", "KINDS", "Measure", "parse_measure", "parse_measures", "valid_forms"]

from evaluator.metrics.measures import evaluate  # noqa: E402
from evaluator.metrics.ranking import Qrels, QrelsStats, RankedRun, rank_run  # noqa: E402

__all__ += ["Qrels", "QrelsStats", "RankedRun", "evaluate", "rank_run"]
