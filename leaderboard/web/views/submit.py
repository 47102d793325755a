"""The submit page: how to add a result (`build`)."""

from __future__ import annotations

from evaluator.result import SCHEMA_VERSION
from leaderboard.analysis.aggregate import Leaderboard
from leaderboard.web.contexts import Page, SubmitContext


def build(board: Leaderboard) -> SubmitContext:
    return SubmitContext(Page("submit.html", "Submit results", "", "submit"), SCHEMA_VERSION, board.baseline_id)
