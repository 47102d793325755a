"""The names a recall-at-scale prediction is chosen by, and the site's defaults. Light on purpose: the command
line reads them to build its parser without importing the fitting code (scipy)."""

from __future__ import annotations

from typing import Literal

from evaluator.errors import IrboardError

Growth = Literal["fixed-relevant", "uniform"]
GROWTHS: tuple[str, ...] = ("fixed-relevant", "uniform")
Tail = Literal["hybrid", "skewnorm"]
Mode = Literal["per_query", "pooled", "rank"]
MODES: tuple[str, ...] = ("per_query", "pooled", "rank")

# Chosen from benchmarks/scale.py (four datasets, three models, 5-30% sub-corpora, both growth scenarios; see
# benchmarks/README.md and the method page).
# fixed-relevant: a number that keeps telling models apart at 10^7 documents; under uniform growth Recall@k is
# capped by k / (relevant documents), which grows with the corpus (see the method page).
DEFAULT_MODE: Mode = "per_query"
DEFAULT_TAIL: Tail = "hybrid"  # the pooled mode's non-relevant tail; the per-query model always has a GPD tail
DEFAULT_GROWTH: Growth = "fixed-relevant"


class CannotPredictError(IrboardError, ValueError):
    """The scores cannot support a recall prediction; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
