"""Who could be #1, in words: the one verdict on who is best (ranks.best_set, the confidence set for the best model)
as every page, download, pull-request summary and the API say it, with its level derived from the build's alpha.

A model is in the best set when no other ranked model is significantly better than it in a one-sided paired t-test
at alpha / (models - 1); the set holds the true best with probability at least 1 - alpha. It is not the top group
of the rank ranges (the models whose rank range starts at 1, from the two-sided Holm-corrected tests): nothing on
the site marks that group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by irboard's light report tables, so no heavy import at run time
    from leaderboard.analysis.aggregate import DatasetBoard

MARK = "★"
# its word in every download: the true/false column of the dataset and model downloads and of irboard.compare's
# rows, and the word of the leaderboard download's and each view download's verdict columns
COLUMN = "best_set"


def level(alpha: float) -> str:
    """The confidence of the set, "95%" at alpha 0.05 (97.5% at 0.025: no rounding to a level it does not have)."""
    return f"{100 * (1 - alpha):.10g}%"


def mark_title(alpha: float) -> str:
    """The tooltip of ★ wherever it marks a model (the home table's is written by site/js/board.js from the same)."""
    return f"could be #1 at {level(alpha)} among the ranked models (best set)"


def rule(alpha: float) -> str:
    """The method sentence for ★ on the pages that mark it."""
    return (f"★ marks who could be #1 at {level(alpha)}: the best set, the confidence set for the best model. It keeps "
            "each ranked model that no other ranked model is significantly better than in a one-sided paired t-test "
            f"at α / (models − 1) (α = {alpha:g}); only the true best's hypothesis matters, so the set holds it with "
            f"probability at least {level(alpha)}, at near-ties too, where each pair's per-query differences show "
            "their tails in the dataset's queries (a lead carried by a kind of query rarer than about one in the "
            "number of queries may be missing from them: docs/statistics.md). It is not read from the rank ranges: a "
            "model whose rank range starts at 1 can be left out, and one whose range does not can be in it.")


def sentence(where: str, tops: list[str], ranked: int, everyone: int, filtered: bool, tested: int, alpha: float,
             mark: str = MARK) -> str:
    """Who could be #1 on `where` among the `ranked` ranked models shown (of `everyone` ranked in all), `tops` best
    mean first, tested at alpha / (tested - 1). site/js/board.js writes the same for each view of the home table."""
    if not everyone:
        return (f"No model is ranked on {where}: none has a re-scored result on every one of its datasets, so the "
                "table cannot say which is best.")
    if not ranked:
        return f"None of the shown models is ranked on {where} ({everyone} ranked models in all)."
    if ranked == 1 and filtered:
        return f"Who could be #1 on {where} among the shown models: {tops[0]}, the only one ranked there."
    if ranked == 1:
        return f"Who could be #1 on {where}: {tops[0]}, the only model ranked there."
    among = f" among the {ranked} shown ranked models" if filtered else ""
    names = ", ".join(tops[:5]) + (f" and {len(tops) - 5} more" if len(tops) > 5 else "")
    return (f"Who could be #1 on {where}{among} at {level(alpha)}: {names} ({len(tops)} of {ranked}, marked {mark}; "
            f"each other is significantly worse than one of them, one-sided at α / {tested - 1}).")


def dataset_sentence(dataset: DatasetBoard, alpha: float) -> str:
    """The sentence for one dataset's board, among all of its ranked (re-scored) results: its page and the pull
    request's summary say it."""
    ranked = int(dataset.ranked.sum())
    tops = [model_id for model_id, keep in zip(dataset.model_ids, dataset.best_set, strict=True) if keep]
    where = dataset.info.id
    if not ranked:
        results = dataset.scores.shape[0]
        return (f"No model is ranked on {where}: none of its {results} result{'s' if results != 1 else ''} is "
                "re-scored, so none can be called #1.")
    if ranked == 1:
        return f"Who could be #1 on {where}: {tops[0]}, its only ranked model."
    if dataset.scores.shape[1] < 2:  # the set holds every ranked model (aggregate.py)
        return (f"Who could be #1 on {where}: any of its {ranked} ranked models (marked {MARK}); with one "
                "query no test can tell them apart.")
    return sentence(where, tops, ranked, ranked, False, ranked, alpha)  # rows: best mean first
