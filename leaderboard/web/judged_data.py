"""Judged@k and the could-flip flags (◊) the home and compare pages carry (analysis.judged_words, analysis.robust,
analysis.group_robust): each dataset value's Judged@k, which group memberships of the best set and which rank
ranges could flip, the home sentence's words on them, and per pair which verdicts could flip.

In data/board.js (board_data.py) a dataset cell's Judged@k travels as the two decimals the page shows, written as
a whole number (93 for 0.93, 100 for 1.00); each column of `best` (best_data.column_entry) gains a fourth entry, the
home rows whose best-set membership could flip, for the sentence above the table in the view of every model.
"""

from __future__ import annotations

import json

import numpy as np

from leaderboard.analysis.aggregate import DatasetBoard, GroupBoard, Leaderboard
from leaderboard.analysis.judged_words import row_judged, set_clause, set_flips
from leaderboard.submissions.holes import judged_name
from leaderboard.web.render import group_flip
from leaderboard.web.views.common import group_key


def judged_cells(board: Leaderboard) -> dict[tuple[str, str], float]:
    """(dataset id, model id) -> mean Judged@k at the main metric's cutoff, where known."""
    out = {}
    for dataset in board.datasets:
        for i, model_id in enumerate(dataset.model_ids):
            value = row_judged(dataset, i)
            if value is not None:
                out[dataset.info.id, model_id] = value
    return out


def judged_hundredths(value: float | None) -> int | None:
    """Judged@k as the page shows it (two decimals), as a whole number of hundredths (board.js's form)."""
    return None if value is None else int(f"{value:.2f}".replace(".", ""))


def dataset_flips(dataset: DatasetBoard) -> list[str]:
    """The dataset's ranked models whose best-set membership could flip, in row order (best mean first)."""
    if dataset.robust is None:
        return []
    return [dataset.model_ids[i] for i in range(len(dataset.model_ids))
            if dataset.ranked[i] and not dataset.robust.best[i]]


def group_flips(group: GroupBoard) -> list[str]:
    return [] if group.robust is None else set_flips(group.ranked_ids, group.robust.best)


def dataset_known(dataset: DatasetBoard) -> bool:
    """Are the hole bounds of some ranked model of the dataset known (re-scored with its judgments)? Without any,
    nothing is said of them."""
    return dataset.judged is not None and bool((~np.isnan(dataset.judged[dataset.ranked])).any())


def group_known(board: Leaderboard, group: GroupBoard) -> bool:
    return any(dataset_known(board.dataset(d)) for d in group.dataset_ids)


def add_flips(columns: dict[str, list], board: Leaderboard, groups, row_of: dict[str, int]) -> None:
    """Append to each column entry of best_data the home rows whose membership could flip (module docstring);
    nothing where no ranked model's bounds are known."""
    for group in groups:
        entry = columns.get(f"g-{group_key(group.name)}")
        if entry is not None and group_known(board, group):
            entry.append([row_of[model_id] for model_id in group_flips(group)])
    for dataset in board.datasets:
        entry = columns.get(f"d-{dataset.slug}")
        if entry is not None and dataset_known(dataset):
            entry.append([row_of[model_id] for model_id in dataset_flips(dataset)])


def group_set_clause(board: Leaderboard, group: GroupBoard, row_of: dict[str, int]) -> str:
    """The home sentence's words on whether the group's best set holds over the hole bounds ("" for fewer than two
    ranked models, no set to speak of, or where no bounds are known); names best mean first, as the sentence's."""
    if len(group.ranked_ids) < 2 or not group_known(board, group):
        return ""
    flipping = sorted(group_flips(group), key=lambda m: (-group.scores[m].mean, row_of[m]))
    return set_clause(flipping)


def flip_marks() -> dict[str, str]:
    """The ◊ of a home group mean as HTML, keyed by what could flip ("r" rank range, "b" ★, "rb" both): the page's
    own rows (templates/_board.html, render.group_flip) and site/js/board.js's use the same markup."""
    return {key: str(group_flip("r" not in key, "b" not in key)) for key in ("r", "b", "rb")}


def compare_flips(dataset: DatasetBoard, i: int) -> list[int]:
    """The rows (into the dataset's models) whose verdict with row i could flip (the compare page's ◊)."""
    if dataset.robust is None or dataset.robust.pairs is None:
        return []
    return [int(j) for j in (~dataset.robust.pairs[i]).nonzero()[0]]


def compare_judged(dataset: DatasetBoard, i: int) -> str:
    """The compare data's entries beside a model's values on a dataset: ',"j":0.93' (its Judged@k, two decimals)
    and ',"f":[3,7]' (compare_flips), each left out when unknown or empty."""
    judged = row_judged(dataset, i)
    flips = compare_flips(dataset, i)
    return ("" if judged is None else f',"j":{judged:.2f}') + (f',"f":{json.dumps(flips, separators=(",", ":"))}' if flips else "")


def group_compare_flips(group: GroupBoard, model_id: str) -> list[int]:
    """The ranked models (into group.ranked_ids) whose group-mean verdict with the model could flip."""
    if group.robust is None or model_id not in group.ranked_ids:
        return []
    return [int(j) for j in (~group.robust.pairs[group.ranked_ids.index(model_id)]).nonzero()[0]]


def judged_label(dataset: DatasetBoard) -> str:
    return judged_name(dataset.info.main_metric)

