"""How complete a dataset's judgments are for the models a page shows, in words and per row: Judged@k at the main
metric's cutoff, the hole bounds of the means, and which verdicts hold over them (analysis.robust)."""

from __future__ import annotations

import numpy as np

from leaderboard.analysis.aggregate import DatasetBoard, GroupBoard
from leaderboard.analysis.robust import MARK, MARK_TITLE
from leaderboard.submissions.holes import judged_name


def row_judged(dataset: DatasetBoard | None, i: int | None) -> float | None:
    """Row i's mean Judged@k at the main metric's cutoff; None when unknown (not re-scored)."""
    if dataset is None or i is None or dataset.judged is None or np.isnan(dataset.judged[i]):
        return None
    return float(dataset.judged[i])


def row_condensed(dataset: DatasetBoard | None, i: int | None) -> float | None:
    """Row i's main-metric mean on the condensed lists (trec_eval -J); None when unknown."""
    if dataset is None or i is None or dataset.condensed is None or np.isnan(dataset.condensed[i]):
        return None
    return float(dataset.condensed[i])


def condensed_view(dataset: DatasetBoard) -> str:
    """The name of the dataset page's condensed view (nDCG'@10), "" when no row has a condensed value."""
    from leaderboard.submissions.holes import condensed_name

    if dataset.condensed is None or np.isnan(dataset.condensed).all():
        return ""
    return condensed_name(dataset.info.main_metric)


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


def group_holds(group: GroupBoard | None, model_id: str) -> tuple[bool, bool]:
    """(rank range, best-set membership) of the model's group mean hold over the hole bounds (analysis.group_robust);
    True where nothing can flip or the model is not ranked on the group."""
    if group is None or group.robust is None or model_id not in group.ranked_ids:
        return True, True
    k = group.ranked_ids.index(model_id)
    return bool(group.robust.rank[k]), bool(group.robust.best[k])


def set_flips(ranked_ids, holds) -> list[str]:
    """The models (of `ranked_ids`, in that order) whose best-set membership could flip (`holds` False)."""
    return [model_id for model_id, keep in zip(ranked_ids, holds, strict=True) if not keep]


def set_clause(flipping: list[str]) -> str:
    """The words after the sentence on who could be #1 (best_words.sentence): whether the set holds over the hole
    bounds of the unjudged documents within the cutoff. site/js/board.js writes the same for the unfiltered view."""
    if not flipping:
        return " The set holds over the hole bounds of the unjudged documents within the cutoff."
    names = ", ".join(flipping[:5]) + (f" and {len(flipping) - 5} more" if len(flipping) > 5 else "")
    return (f" {MARK} It could flip: unjudged documents within the cutoff could change whether {names} "
            f"{'is' if len(flipping) == 1 else 'are'} in it.")


def flip_title(rank: bool, best: bool) -> str:
    """The ◊'s title on a home group mean: what could flip (its rank range, its ★ or its absence)."""
    what = " and ".join(part for part, flips in (("its rank range", rank), ("its ★ (best-set membership)", best))
                        if flips)
    return f"{MARK_TITLE.split(':')[0]}: unjudged documents within the cutoff could change {what}"
