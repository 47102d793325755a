"""Honest ranks on the site: effect sizes beside p-values, what each dataset can tell apart, the ranks page with
rank intervals and bands of every group mean, and the method page's statistics section."""

from __future__ import annotations

from evaluator.result import slugify
from leaderboard.analysis import effects
from leaderboard.analysis.aggregate import ALL_GROUP, DatasetBoard, GroupBoard, Leaderboard
from leaderboard.analysis.stats import CORRECTIONS, PAIRED_TESTS
from leaderboard.web.contexts import (
    Effect,
    Page,
    RankRow,
    RanksContext,
    RankTable,
    SeparabilityRow,
    StatisticsMethod,
)

RANKS_PAGE = "ranks.html"
METHOD_ANCHOR = "method.html#statistics"


def baseline_effect(dataset: DatasetBoard | None, model_id: str) -> Effect | None:
    """Effect of the model against the dataset's baseline (None for the baseline itself, or without one)."""
    if dataset is None or dataset.baseline is None or model_id not in dataset.position \
            or model_id == dataset.baseline.model_id:
        return None
    pair, row = dataset.baseline_effects, dataset.position[model_id]
    diff = float(pair.diff[row])
    return Effect(diff=diff, ci=(float(pair.low[row]), float(pair.high[row])), dz=float(pair.dz[row]),
                  meaningful=abs(diff) >= dataset.separability.threshold)


def separability_row(dataset: DatasetBoard, root: str) -> SeparabilityRow:
    summary = dataset.separability
    return SeparabilityRow(
        dataset_id=dataset.info.id, href=f"{root}datasets/{dataset.slug}.html", metric=dataset.info.main_metric,
        queries=len(dataset.query_ids), models=len(dataset.results), pairs=summary.pairs,
        separable_share=summary.separable_share, adjacent=summary.adjacent,
        adjacent_separable=summary.adjacent_separable,
        meaningful_share=summary.meaningful / summary.pairs if summary.pairs else None,
        threshold=summary.threshold, mde=summary.mde, mde_dz=summary.mde_dz,
    )


def separability_method(board: Leaderboard) -> str:
    tests = board.settings.tests
    return (f"What a dataset can tell apart: the minimum detectable difference is the smallest difference of means "
            f"that the {PAIRED_TESTS[tests.method].text.lower()} finds with {effects.POWER:.0%} power at "
            f"α = {tests.alpha:g} for one planned comparison, for a pair whose per-query differences have the "
            "dataset's typical (median) SD; separable: pairs (all, and models next to each other in the ranking) "
            f"whose corrected p-value is below {tests.alpha:g}; meaningful: pairs whose means differ by at least "
            f"{effects.MEANINGFUL_SHARE:.0%} of the dataset's median score. See the method page.")


def effect_method(board: Leaderboard) -> str:
    return ("Effect beside every p-value: Δ is the paired mean difference with its 95% t-interval (it excludes 0 "
            "exactly when the uncorrected t-test rejects), and d_z = Δ / SD of the per-query differences "
            "(0.2 small, 0.5 medium, 0.8 large by Cohen's rule of thumb); ● marks a meaningful difference (at least "
            f"{effects.MEANINGFUL_SHARE:.0%} of the dataset's median score).")


def group_rank_rows(group: GroupBoard, root: str) -> tuple[RankRow, ...]:
    # only models verified on the whole group are ranked (see aggregate.py)
    ordered = sorted(((m, s) for m, s in group.scores.items() if s.mean_rank is not None),
                     key=lambda item: (-item[1].mean, item[0]))
    return tuple(
        RankRow(model_id=model_id, href=f"{root}models/{slugify(model_id)}.html", mean=score.mean, ci=score.ci,
                rank=position, rank_interval=score.rank_interval, band=score.band)
        for position, (model_id, score) in enumerate(ordered, start=1)
    )


def group_key(name: str) -> str:
    return "all" if name == ALL_GROUP else "".join(c for c in name.lower() if c.isalnum()) or "group"


def rank_tables(board: Leaderboard, root: str = "", rows: bool = True) -> tuple[RankTable, ...]:
    groups = [g for g in board.groups if g.name != ALL_GROUP] + [g for g in board.groups if g.name == ALL_GROUP]
    return tuple(
        RankTable(name=g.name, key=group_key(g.name), datasets=len(g.dataset_ids),
                  rows=group_rank_rows(g, root) if rows else (),
                  bands=max((score.band for score in g.scores.values()), default=0))
        for g in groups
    )


def rank_method(board: Leaderboard) -> str:
    tests = board.settings.tests
    level = ("the group's datasets (units) are resampled with replacement as well, so the interval also covers "
             "another sample of tasks" if board.settings.resample_datasets else
             "the datasets stay fixed: a group mean is defined over exactly its datasets, so only the sampling of "
             "queries is uncertain")
    return (f"Rank intervals: a two-level bootstrap ({tests.ci_resamples:,} resamples, seed {tests.seed}); the "
            f"queries of each dataset are resampled (the same draws as the dataset's CI) and {level}. In every "
            "resample the models with a group mean are ranked by it; the interval holds the middle 95% of each "
            "model's ranks. Bands: taking models best mean first, a band starts with the best model not yet in "
            "one and takes every later model whose rank interval reaches the leader's worst rank; models in one "
            "band cannot be told apart from its leader.")


def build_ranks(board: Leaderboard) -> RanksContext:
    return RanksContext(page=Page(RANKS_PAGE, "Ranks with uncertainty", "", "home"), tables=rank_tables(board),
                        methods=(rank_method(board), f"See the method page ({METHOD_ANCHOR}) for the reasons."))


def statistics_method(board: Leaderboard) -> StatisticsMethod:
    tests = board.settings.tests
    return StatisticsMethod(
        tests=tests.describe(), test=PAIRED_TESTS[tests.method].text, correction=CORRECTIONS[tests.correction][1],
        alpha=tests.alpha, resamples=tests.ci_resamples, seed=tests.seed,
        resample_datasets=board.settings.resample_datasets, meaningful_share=effects.MEANINGFUL_SHARE,
        power=effects.POWER, thresholds=tuple(separability_row(d, "") for d in board.datasets),
    )
