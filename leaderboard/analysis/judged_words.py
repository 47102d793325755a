"""How complete a dataset's judgments are for the models a page shows, in words and per row: Judged@k at the main
metric's cutoff, the hole bounds of the means, and which verdicts hold over them (analysis.robust)."""

from __future__ import annotations

import numpy as np

from leaderboard.analysis.aggregate import DatasetBoard
from leaderboard.analysis.robust import MARK
from leaderboard.submissions.holes import judged_name


def row_judged(dataset: DatasetBoard | None, i: int | None) -> float | None:
    """Row i's mean Judged@k at the main metric's cutoff; None when unknown (not re-scored)."""
    if dataset is None or i is None or dataset.judged is None or np.isnan(dataset.judged[i]):
        return None
    return float(dataset.judged[i])


def row_hole(dataset: DatasetBoard | None, i: int | None) -> tuple[float, float] | None:
    """Row i's hole bounds of the mean (main metric); None when unknown."""
    judged = row_judged(dataset, i)
    return None if judged is None else (float(dataset.hole_low[i]), float(dataset.hole_high[i]))


def row_holds(dataset: DatasetBoard | None, i: int | None) -> tuple[bool, bool, bool]:
    """(verdict against the baseline, best-set membership, rank range) of row i hold over the hole bounds."""
    if dataset is None or i is None or dataset.robust is None:
        return True, True, True
    flags = dataset.robust
    return bool(flags.verdict[i]), bool(flags.best[i]), bool(flags.rank[i])


def flips(dataset: DatasetBoard) -> int:
    """How many of the dataset's verdicts against the baseline and best-set memberships could flip."""
    if dataset.robust is None:
        return 0
    return int((~dataset.robust.verdict).sum() + (~dataset.robust.best).sum())


def judgments_line(dataset: DatasetBoard) -> str:
    """One line: the range of Judged@k over the models shown, how far unjudged documents could move the main metric,
    and how many verdicts could flip; "" when no result was re-scored (nothing is known)."""
    judged = dataset.judged
    if judged is None or np.isnan(judged).all():
        return ""
    metric = dataset.info.main_metric
    known = ~np.isnan(judged)
    low, high = float(judged[known].min()), float(judged[known].max())
    width = float(np.nanmax(dataset.hole_high - dataset.hole_low))
    span = f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"
    shown = int(known.sum())
    of = "" if shown == len(judged) else f" ({shown:,} re-scored of {len(judged):,})"
    line = (f"{judged_name(metric)} of the shown models{of}: {span}; unjudged documents could move {metric} by up "
            f"to {100 * width:.2f} (×100)")
    count = flips(dataset)
    return line + (f"; {count} verdict{'s' if count != 1 else ''} could flip ({MARK})." if count else
                   "; every verdict holds over them.")
