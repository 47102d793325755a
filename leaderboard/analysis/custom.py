"""A reader's own benchmark: any set of the board's datasets, optionally weighted, aggregated exactly as a group.

The home page's "Your own benchmark" (site/js/custom.js) recomputes in the browser what `custom_group` computes
here, from the per-query values of data/queries/<slug>.js: the group mean over the chosen datasets, its score
interval, the rank ranges from Holm-corrected tests of the group means, the best set (★) and the sentence, with
the same closed formulas as a registered group (aggregate._GroupAccumulator, ranks.py); nothing in them is drawn
at random. `irboard compare --group-datasets` names such a group in the pull request's summary.

Weights: without any, the registered groups' rule (each unit, datasets of one parent such as beir/cqadupstack/*,
weighs the same; aggregate._weights); with weights w_k, dataset k weighs w_k / sum(w). The address keeps the choice
as `?datasets=a,b&weights=2,1` (`parse_choice` reads it, in the order written).
"""

from __future__ import annotations

import math
import re

from evaluator.errors import IrboardError
from leaderboard.analysis.aggregate import GroupBoard, Leaderboard, _GroupAccumulator, bootstrapped_groups

NAME = "Your benchmark"  # how the page and the summary name a group that is no registered one


def where(group: GroupBoard) -> str:
    """How the best set's sentence names the group: "BEIR (4 datasets)", "your benchmark (3 datasets)" (custom.js
    says the same)."""
    count = len(group.dataset_ids)
    name = group.name[0].lower() + group.name[1:] if group.name == NAME else group.name
    return f"{name} ({count} dataset{'s' if count != 1 else ''})"


def normalised(weights: list[float]) -> list[float]:
    """Each weight over their sum (summed in order, as the page does)."""
    total = 0.0
    for weight in weights:
        total += weight
    return [weight / total for weight in weights]


def parse_choice(datasets: str, weights: str = "") -> tuple[list[str], list[float] | None]:
    """The address's (or the command line's) choice: comma-separated dataset ids and, optionally, as many positive
    weights."""
    ids = [part.strip() for part in datasets.split(",") if part.strip()]
    if not ids:
        raise IrboardError("--group-datasets: no dataset id given; give comma-separated ids, e.g. beir/scifact,beir/nfcorpus")
    if len(set(ids)) != len(ids):
        raise IrboardError(f"--group-datasets: {datasets!r} names a dataset twice; name each once")
    if not weights.strip():
        return ids, None
    parts = [part.strip() for part in weights.split(",")]
    try:
        values = [float(part) for part in parts]
    except ValueError:
        raise IrboardError(f"--group-weights: {weights!r} is not a list of numbers; give e.g. 2,1") from None
    if len(values) != len(ids) or not all(math.isfinite(v) and v > 0 for v in values):
        raise IrboardError(f"--group-weights: give {len(ids)} positive numbers, one per dataset of --group-datasets, "
                           f"got {weights!r}")
    return ids, values


# the option as the page prints it, found in a pull request's description (ids and weights in a narrow alphabet:
# nothing of the text beyond them reaches the comparison)
_OPTION = re.compile(r"--group-datasets[ =]([A-Za-z0-9/_.,:-]+)(?:[ \t]+--group-weights[ =]([0-9.,eE+-]+))?")
MAX_TEXT = 65536  # a pull request's description is read to this many characters


def choice_in_text(text: str) -> tuple[str, str] | None:
    """(datasets, weights) of the first `--group-datasets IDS [--group-weights W]` in `text` (a pull request's
    description, where its author pasted the option the home page prints), or None."""
    found = _OPTION.search(text[:MAX_TEXT])
    return None if found is None else (found.group(1), found.group(2) or "")


def registered_name(board: Leaderboard, dataset_ids: list[str], weights: list[float] | None) -> str | None:
    """The registered group with exactly these datasets (and no weights of the reader's), else None."""
    if weights is not None:
        return None
    chosen = set(dataset_ids)
    return next((group.name for group in board.groups if set(group.dataset_ids) == chosen), None)


def custom_group(board: Leaderboard, dataset_ids: list[str], weights: list[float] | None = None) -> GroupBoard:
    """The group of these datasets (and weights), as the build aggregates a registered group; its name is the
    registered group's where the datasets are one (without weights), else NAME."""
    if bootstrapped_groups(board.settings):
        raise IrboardError("this board's group intervals are bootstrapped (ci_method or resample_datasets), which "
                           "a reader's benchmark does not reproduce; build with the default score intervals")
    boards = {dataset.info.id: dataset for dataset in board.datasets}
    unknown = [d for d in dataset_ids if d not in boards]
    if unknown:
        raise IrboardError(f"--group-datasets: {unknown[0]!r} is not a dataset of the board; choose among "
                           f"{', '.join(sorted(boards))}")
    given = dict(zip(dataset_ids, weights, strict=True)) if weights is not None else None
    ordered = [d for d in boards if d in set(dataset_ids)]  # the board's order, as a registered group sums
    name = registered_name(board, ordered, weights) or NAME
    model_index = {model.info.id: i for i, model in enumerate(board.models)}
    accumulator = _GroupAccumulator(name, ordered, model_index,
                                    board.settings.tests, bootstrap=False,
                                    weights=None if given is None else normalised([given[d] for d in ordered]))
    for dataset_id in ordered:
        accumulator.add(boards[dataset_id], None)
    return accumulator.finish(boards)
