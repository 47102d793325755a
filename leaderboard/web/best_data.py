"""Who could be #1 among the models a view of the home table shows: the ★ of a group mean and the bold of a dataset
value, for any filter, computed in the browser (site/js/board.js) from a compact table in data/board.js.

The best set (ranks.best_set) keeps a model that no other is significantly better than in a one-sided test at
alpha / (models - 1). Each pairwise test depends only on the pair, so among a subset S of the models the same rule
over S alone is valid (which models a filter shows depends on their metadata, never on their scores); any level at
most alpha / (|S| - 1) is (Bonferroni over at least the comparisons made). The page takes alpha / (s - 1) with s the
smallest size of a grid (2, 5, 17, 65, ... and the column's own number of ranked models m) at least |S|: with no
filter that is the build's own set, and a pair's verdict at every size of the grid is one small number (`level`:
how many sizes of the grid it holds at), so a column weighs a few numbers per model rather than one per pair.

A column's entry: [order, grid, rows]
- order: the home rows (indices into data/board.js's rows) of the models ranked in the column, best mean first;
- grid: the sizes;
- rows[p]: for the model at position p, the levels of the models above it (positions 0 .. p-1) as runs, flat pairs
  [level, run length], a last run of level 0 left out. The model at q is significantly better than the one at p
  among s models when its level exceeds the index of s's grid size. A model below p never is: its mean is lower,
  its one-sided p above 1/2.
"""

from __future__ import annotations

import numpy as np

from leaderboard.analysis import best_words
from leaderboard.analysis.aggregate import (
    DatasetBoard,
    GroupBoard,
    Leaderboard,
    dataset_tests,
    group_tests,
    testable,
)
from leaderboard.analysis.ranks import beat_sizes, best_among


def group_sizes(board: Leaderboard, group: GroupBoard) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The group's ranked models, their means and beat_sizes, from the tests behind its rank ranges."""
    ids = list(group.ranked_ids)
    if not ids:
        return ids, np.zeros(0), np.zeros((0, 0), dtype=np.int64)
    boards = {d.info.id: d for d in board.datasets}
    means = np.array([group.scores[model_id].mean for model_id in ids])
    if not testable(boards, group.dataset_ids):  # no test: no model beats another at any size
        return ids, means, np.zeros((len(ids), len(ids)), dtype=np.int64)
    total, variance, df = group_tests(boards, group.dataset_ids, group.weights, ids)
    return ids, means, beat_sizes(total, np.sqrt(variance), df, board.settings.tests.alpha)


def dataset_sizes(board: Leaderboard, dataset: DatasetBoard) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """The dataset's ranked (verified) models, their means and beat_sizes; None with fewer than two queries."""
    n = dataset.scores.shape[1]
    if n < 2 or dataset.diff_sd is None:
        return None
    rows = np.flatnonzero(dataset.ranked)
    means = dataset.means[rows]
    return [dataset.model_ids[i] for i in rows], means, beat_sizes(
        *dataset_tests(means, dataset.diff_sd[np.ix_(rows, rows)], n), board.settings.tests.alpha)


def best_of_all(ids: list[str], sizes: np.ndarray) -> set[str]:
    """The best set among every ranked model of a column: what the page shows before any filter."""
    return {ids[k] for k in np.flatnonzero(best_among(sizes, range(len(ids))))}


# each size tests 4 times the comparisons of the one before: at most 4 times as conservative as alpha / (|S| - 1);
# at 200 models x 30 datasets (100 queries) the table weighs 49 KB compressed, 67 KB with a step of 2 (home.md)
GRID_STEP = 4


def grid(models: int) -> list[int]:
    """The sizes at which the page tests (module docstring): 2, 5, 17, 65, ... below `models`, then `models`."""
    sizes, size = [], 2
    while size < models:
        sizes.append(size)
        size = GRID_STEP * (size - 1) + 1
    return sizes + [max(models, 2)]


def level_size(shown: int, models: int) -> int:
    """The grid size the page tests `shown` models of a column of `models` at: the smallest at least `shown`."""
    return next(size for size in grid(models) if size >= shown)


def column_entry(ids: list[str], means: np.ndarray, sizes: np.ndarray, row_of: dict[str, int]) -> list:
    """[order, grid, rows] of one column (module docstring)."""
    order = sorted(range(len(ids)), key=lambda k: (-means[k], row_of[ids[k]]))
    sizes_grid = grid(len(ids))
    ordered = sizes[np.ix_(order, order)]  # [p, q]: the model at q against the model at p
    levels = np.searchsorted(np.array(sizes_grid), ordered, side="right")  # grid sizes at most beat_sizes
    if len(ids) and np.triu(levels, k=1).any():
        raise ValueError("a model with a lower mean cannot be significantly better")  # beat_sizes' contract
    rows = []
    for p in range(len(ids)):
        values = levels[p, :p]
        starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]]) if p else np.zeros(0, dtype=np.int64)
        lengths = np.diff(np.r_[starts, p])
        runs = [[int(values[start]), int(length)] for start, length in zip(starts, lengths, strict=True)]
        if runs and runs[-1][0] == 0:
            runs.pop()
        rows.append([number for run in runs for number in run])
    return [[row_of[ids[k]] for k in order], sizes_grid, rows]


def best_sentence(where: str, tops: list[str], ranked: int, everyone: int, filtered: bool, alpha: float,
                  mark: str = "★") -> str:
    """The sentence above the home table (best_words.sentence) for `ranked` shown ranked models of `everyone`,
    tested at the grid size the page uses for them."""
    return best_words.sentence(where, tops, ranked, everyone, filtered, level_size(ranked, everyone), alpha, mark)
