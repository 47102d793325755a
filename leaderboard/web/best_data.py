"""Who could be #1 among the models a view of the home table shows: the ★ of a group mean and the bold of a dataset
value, for any filter, computed in the browser (site/js/board.js) from a compact table in data/board.js.

The best set (ranks.best_set) keeps a model that no other is significantly better than in a one-sided test at
alpha / (models - 1). Each pairwise test depends only on the pair, so among a subset S of the models the best set is
the same rule over S alone, at alpha / (|S| - 1) (ranks.beat_sizes, ranks.best_among): valid for S because which
models a filter shows depends on their metadata, never on their scores. A model with a lower mean is never
significantly better (its one-sided p is above 1/2), and most models above a model beat it at any size, so a
column's table lists, for each ranked model, only the exceptions.

A column's entry: [order, exceptions]
- order: the home rows (indices into data/board.js's rows) of the models ranked in the column, best mean first;
- exceptions[p]: flat pairs [q, size] for the model at position p: the model at position q is significantly better
  only while at most `size` models are compared (beat_sizes). Unlisted, a model above p is always better, one
  below never.
"""

from __future__ import annotations

import numpy as np

from leaderboard.analysis.aggregate import DatasetBoard, GroupBoard, Leaderboard
from leaderboard.analysis.ranks import beat_sizes, best_among, group_differences


def group_sizes(board: Leaderboard, group: GroupBoard) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The group's ranked models, their means and beat_sizes, from the tests behind its rank ranges."""
    ids = list(group.ranked_ids)
    if not ids:
        return ids, np.zeros(0), np.zeros((0, 0), dtype=np.int64)
    boards = {d.info.id: d for d in board.datasets}
    diffs, variances, queries = [], [], []
    for dataset_id in group.dataset_ids:
        dataset = boards[dataset_id]
        rows = [dataset.position[model_id] for model_id in ids]
        means = dataset.means[rows]
        diffs.append(means[:, None] - means[None, :])
        variances.append(np.square(dataset.diff_sd[np.ix_(rows, rows)].astype(np.float64)))
        queries.append(dataset.scores.shape[1])
    total, variance, df = group_differences(diffs, variances, queries, group.weights)
    means = np.array([group.scores[model_id].mean for model_id in ids])
    return ids, means, beat_sizes(total, np.sqrt(variance), df, board.settings.tests.alpha)


def dataset_sizes(board: Leaderboard, dataset: DatasetBoard) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """The dataset's ranked (verified) models, their means and beat_sizes; None with fewer than two queries."""
    n = dataset.scores.shape[1]
    if n < 2 or dataset.diff_sd is None:
        return None
    rows = np.flatnonzero(dataset.ranked)
    means = dataset.means[rows]
    se = dataset.diff_sd[np.ix_(rows, rows)].astype(np.float64) / np.sqrt(n)
    return [dataset.model_ids[i] for i in rows], means, beat_sizes(means[:, None] - means[None, :], se, n - 1,
                                                                   board.settings.tests.alpha)


def best_of_all(ids: list[str], sizes: np.ndarray) -> set[str]:
    """The best set among every ranked model of a column: what the page shows before any filter."""
    return {ids[k] for k in np.flatnonzero(best_among(sizes, range(len(ids))))}


def column_entry(ids: list[str], means: np.ndarray, sizes: np.ndarray, row_of: dict[str, int]) -> list:
    """[order, exceptions] of one column (module docstring)."""
    order = sorted(range(len(ids)), key=lambda k: (-means[k], row_of[ids[k]]))
    m = len(ids)
    ordered = sizes[np.ix_(order, order)]  # [p, q]: the model at q against the model at p
    above = np.tri(m, k=-1, dtype=bool)  # q < p
    listed = np.where(above, ordered < m, ordered >= 2)  # unlike the default: above always, below never
    np.fill_diagonal(listed, False)
    exceptions = []
    for p in range(m):
        qs = np.flatnonzero(listed[p])
        pairs = np.empty(2 * qs.size, dtype=np.int64)
        pairs[0::2] = qs
        pairs[1::2] = np.minimum(ordered[p, qs], m)
        exceptions.append(pairs.tolist())
    return [[row_of[ids[k]] for k in order], exceptions]


def best_sentence(where: str, tops: list[str], ranked: int, everyone: int, filtered: bool, mark: str = "★") -> str:
    """The sentence above the home table (site/js/board.js writes the same for each view): who could be #1 on
    `where` among the `ranked` ranked models the view shows (of `everyone` ranked in all), `tops` best mean
    first."""
    if not everyone:
        return (f"No model is ranked on {where}: none has a re-scored result on every one of its datasets, so the "
                "table cannot say which is best.")
    if not ranked:
        return f"None of the shown models is ranked on {where} ({everyone} ranked models in all)."
    if ranked == 1:
        return f"Who could be #1 on {where} among the shown models: {tops[0]}, the only one ranked there."
    among = f" among the {ranked} shown ranked models" if filtered else ""
    names = ", ".join(tops[:5]) + (f" and {len(tops) - 5} more" if len(tops) > 5 else "")
    return (f"Who could be #1 on {where}{among} at 95%: {names} ({len(tops)} of {ranked}, marked {mark}: the "
            "confidence set for the best; each other model is significantly worse than one of them in a one-sided "
            f"test at α / {ranked - 1}).")
