"""The home page's "Your own benchmark": the dataset picker and the per-query data its script recomputes from.

site/js/custom.js aggregates the datasets a reader ticks (and the weights typed, if any) exactly as the build
aggregates a group (leaderboard/analysis/custom.py, docs/statistics.md): it loads, when a choice is computed and
only for the chosen datasets, `data/queries/<slug>.js`, one file per dataset: the main metric's per-query values of
every model with a result there, in the dataset board's row order, each value written as the shortest text that
reads back as the same double (Python's repr; JavaScript's parser gives the same bits), so the page's means, sums
and the build's are the same numbers. A script file, loaded with <script> as data/models/*.js is, so that a page
opened from file:// works as well as one served over http.

One file: {"n": queries, "models": [model id, ...], "ranked": [1 or 0, ...], "values": [[value per query], ...]}.
"""

from __future__ import annotations

from dataclasses import dataclass

from leaderboard.analysis import best_words
from leaderboard.analysis.aggregate import ALL_GROUP, DatasetBoard, Leaderboard, bootstrapped_groups, unit_of
from leaderboard.analysis.custom import NAME
from leaderboard.web.render import json_text


@dataclass(frozen=True)
class PickedDataset:
    id: str
    slug: str
    unit: str  # datasets of one unit share its weight when no weights are given (aggregate._weights)
    metric: str
    queries: int


@dataclass(frozen=True)
class PickerGroup:
    name: str
    datasets: tuple[PickedDataset, ...]


@dataclass(frozen=True)
class Picker:
    """What templates/_benchmark.html shows and custom.js reads (as data- attributes)."""

    groups: tuple[PickerGroup, ...]  # the registered groups' datasets, in the board's order
    registered: tuple[tuple[str, tuple[str, ...]], ...]  # (name, dataset ids) of every group, All datasets too
    alpha: float
    correction: str
    level: str  # "95%"
    name: str  # how the page names a choice that is no registered group
    available: bool  # False where the build's group intervals are bootstrapped, which the page does not reproduce


def picker(board: Leaderboard) -> Picker:
    tests = board.settings.tests
    boards = {dataset.info.id: dataset for dataset in board.datasets}
    groups = tuple(PickerGroup(group.name, tuple(
        PickedDataset(d, boards[d].slug, unit_of(d), boards[d].info.main_metric, boards[d].scores.shape[1])
        for d in group.dataset_ids)) for group in board.groups if group.name != ALL_GROUP)  # each dataset once
    return Picker(groups, tuple((g.name, g.dataset_ids) for g in board.groups), tests.alpha, tests.correction,
                  best_words.level(tests.alpha), NAME, not bootstrapped_groups(board.settings))


def query_data(dataset: DatasetBoard) -> str:
    """The JSON of data/queries/<slug>.js (module docstring), script-safe."""
    return json_text({"n": int(dataset.scores.shape[1]), "models": list(dataset.model_ids),
                      "ranked": [int(flag) for flag in dataset.ranked], "values": dataset.scores.tolist()})
