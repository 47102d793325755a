"""What the page builders of leaderboard/web/views/ share: how scores are shown, the sentences several pages quote
(tests, intervals, group means, trust), the order of the groups, and the constants of the tables.
"""

from __future__ import annotations

from evaluator.metrics import parse_measure
from evaluator.metrics.depth import is_determined, ranked_to
from leaderboard.analysis.aggregate import (
    ALL_GROUP,
    DatasetBoard,
    GroupBoard,
    Leaderboard,
    SiteSettings,
    bootstrapped_groups,
)
from leaderboard.analysis.effects import t_critical
from leaderboard.analysis.stats import CI_TEXT
from leaderboard.analysis.verdicts import family_size
from leaderboard.web.contexts import Figure
from leaderboard.web.render import json_text

MODEL_TYPES = ("lexical", "sparse", "dense", "hybrid", "late-interaction", "other")
SCALE = 100.0  # scores are shown ×100 in tables and charts
LISTED_ROWS = 50  # a table shows a page of this many matching rows until asked for all (table.js): layout is what costs
# (the builders read it as common.LISTED_ROWS, so that setting it here reaches every page)


def metric_scale(name: str) -> float:
    """Scores in [0, 1] are shown ×100; unbounded ones (ARP, an average rank) as they are."""
    return SCALE if parse_measure(name).bounded else 1.0


def chart_figure(figure_id: str, title: str, figure: dict) -> Figure:
    return Figure(figure_id, title, json_text(figure), figure.get("rows", {}).get("count", 0))


def describe_tests(board: Leaderboard) -> str:
    return board.settings.tests.describe()


def dataset_ci_text(board: Leaderboard) -> str:
    tests = board.settings.tests
    if tests.ci_method == "score":
        return ("the score interval of the mean (Wilson's interval with the effective number of queries n·m(1−m)/s², "
                "Student's t quantile): it keeps its level on small, low-scoring and 0/1 datasets, where the "
                "percentile bootstrap does not (the method page gives the simulation).")
    return (f"{CI_TEXT[tests.ci_method]} over queries, {tests.ci_resamples:,} resamples, seed {tests.seed} (the same "
            "draws for every model).")


def group_ci_text(board: Leaderboard) -> str:
    tests = board.settings.tests
    if not bootstrapped_groups(board.settings):
        return ("the score interval of a weighted mean: the variance adds each dataset's variance of the mean with "
                "the group's weights (the datasets' queries are independent), Student's t with Welch–Satterthwaite "
                "degrees of freedom; with one dataset it is that dataset's interval.")
    return (f"percentile bootstrap over queries, {tests.ci_resamples:,} resamples, seed {tests.seed}: the queries of "
            "each dataset are resampled and the dataset means combined with the group's weights.")


GROUP_MEANS = ("Group means: the mean of the main metric over every dataset of the group, only for models with a "
               "result on every one of them; a model with partial coverage shows k/n (datasets covered / datasets "
               "in the group) instead of a mean, never an average over fewer datasets.")


def group_method(group: GroupBoard) -> str:
    count = len(group.dataset_ids)
    if group.units != count:
        return (f"{count} datasets; those below a common parent (such as beir/cqadupstack/*) are averaged first, "
                f"so the mean weighs {group.units} units equally.")
    return f"{count} dataset{'s' if count != 1 else ''}, equally weighted."


def ordered_groups(board: Leaderboard) -> list[GroupBoard]:
    return [group for group in board.groups if group.name != ALL_GROUP] + [
        group for group in board.groups if group.name == ALL_GROUP]


VERIFIED_RULE = ("Trust, per value: a value is re-scored when it was recomputed from the ranking stored in the result "
                 "file against the official judgments and matched, reproduced when CI also ran the result's declared "
                 "artifact again and obtained the same ranking, rests on claimed ranks (†) when it was re-scored from "
                 "ranks below the stored depth that no score samples check, and is self-reported (*) otherwise. A "
                 "result is ranked on every value that was re-scored: on a dataset's main metric whenever that was, "
                 "whatever its other values rest on; a result's tier is that of its main metric. The others are "
                 "listed apart below the ranked ones, without rank or ★. The method page gives the rule.")


def effect_constants(dataset: DatasetBoard, alpha: float, settings: SiteSettings) -> dict:
    """What pairs.js needs for a pair's effect: the t quantile of the interval, the meaningful difference, and alpha
    (a difference is meaningful only where the corrected p is below it)."""
    return {"t975": round(t_critical(len(dataset.query_ids)), 6), "meaningful": round(dataset.separability.threshold, 6),
            "alpha": alpha, "pairs": family_size(len(dataset.model_ids), settings.tests.correction),
            "margin": settings.margin(dataset.info.main_metric)}


def shallow_notes(metrics: tuple[str, ...], result) -> tuple[str, ...]:
    """Per metric, what a cell shows where the result's ranking depth does not determine it ("–, ranked to 100");
    "" elsewhere."""
    top_k = int(dict(result.settings)["top_k"])
    return tuple(ranked_to(top_k) if name not in result.metrics and not is_determined(name, top_k, result.num_docs)
                 else "" for name in metrics)


def group_key(name: str) -> str:
    """A group's key in addresses and element ids: "all" for every dataset, else its name's letters and digits."""
    return "all" if name == ALL_GROUP else "".join(c for c in name.lower() if c.isalnum()) or "group"
