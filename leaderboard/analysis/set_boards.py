"""Each dataset's board under each of its declared judgment sets (docs/datasets.md, "Judgment sets").

Under a set, a result's values are its stored ranking scored against that set's qrels (`submissions.set_scores`):
only the metrics the stored ranking determines by itself, each computed by the board, so each counts as re-scored
(against that set). A result whose stored ranking does not determine the dataset's main metric is left out of the
set's board, and the page says how many are. The statistics are the official board's (`aggregate._dataset_board`),
over the same queries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from leaderboard.submissions.loaded import LoadedResult


@dataclass(frozen=True, eq=False)
class SetBoard:
    """One dataset's board under one declared judgment set."""

    judgment_set: object  # evaluator.datasets.judgment_sets.JudgmentSet
    board: object  # aggregate.DatasetBoard, its results scored against the set
    left_out: tuple[str, ...]  # models whose stored ranking does not determine the main metric against the set


def under_set(result: LoadedResult, sha256: str, metric: str) -> LoadedResult | None:
    """`result` with its values against the set `sha256`; None when it has none for `metric`."""
    scores = next((s for s in result.judgment_sets if s.sha256 == sha256), None)
    if scores is None or metric not in scores.per_query:
        return None
    per_query = dict(scores.per_query)
    return replace(result, per_query=per_query, metrics=scores.means(), verified=True,
                   verified_metrics=frozenset(per_query), claimed_metrics=frozenset(), holes=scores.holes,
                   judgment_sets=(), prediction=None)


def set_boards(info, results: list[LoadedResult], settings, baseline_id: str | None, make_board) -> tuple[SetBoard, ...]:
    """The boards of every declared set of the dataset `info` describes (`make_board(info, results)`: the
    official board's builder)."""
    from evaluator.datasets.judgment_sets import sets_of

    out = []
    for judgment_set in sets_of(info.id):
        if judgment_set.official:
            continue
        shown = [under_set(result, judgment_set.sha256, info.main_metric) for result in results]
        kept = [result for result in shown if result is not None]
        if not kept:
            continue
        left_out = tuple(sorted(r.model.id for r, s in zip(results, shown, strict=True) if s is None))
        out.append(SetBoard(judgment_set, make_board(info, kept), left_out))
    return tuple(out)
