"""Honest ranks on the site: effect sizes beside p-values, what each dataset can tell apart, the ranks page with
rank ranges and tie bands of every group mean, and the method page's statistics section. The sentences that state
a rule (rank ranges, top group, bands, their guarantee) are made here once and quoted on every page that shows it."""

from __future__ import annotations

from evaluator.result import slugify
from leaderboard.analysis import effects
from leaderboard.analysis.aggregate import ALL_GROUP, DatasetBoard, GroupBoard, Leaderboard
from leaderboard.analysis.stats import CORRECTIONS, PAIRED_TESTS
from leaderboard.web import charts
from leaderboard.web.contexts import (
    Effect,
    Figure,
    Page,
    RankRow,
    RanksContext,
    RankTable,
    SeparabilityRow,
    StatisticsMethod,
)
from leaderboard.web.render import json_text

RANKS_PAGE = "ranks.html"
METHOD_ANCHOR = "method.html#statistics"


def rank_rule(board: Leaderboard) -> str:
    tests = board.settings.tests
    return (f"Rank range: from the corrected pairwise tests ({CORRECTIONS[tests.correction][1]}, α = {tests.alpha:g}): "
            "best rank = 1 + the number of ranked models significantly better, worst rank = the number of ranked "
            f"models minus those significantly worse. {guarantee(board)}")


def top_rule(board: Leaderboard) -> str:
    return ("★ marks the top group: the ranked models whose rank range starts at 1, that is, no ranked model is "
            "significantly better (the same corrected tests). It can include a model with a lower mean than one "
            "left out, when that one is significantly worse than some other model and this one is not.")


def band_rule(board: Leaderboard) -> str:
    return ("Tie bands: taking models best mean first, a band starts with the best model not yet in one (its leader) "
            "and takes every later model that the corrected test does not tell apart from the leader; so every model "
            "of a later band is significantly worse than each earlier band's leader. Band 1: tied with the best.")


def guarantee(board: Leaderboard) -> str:
    """What the rank ranges, the top group and the bands promise under the build's correction."""
    tests = board.settings.tests
    level = f"{1 - tests.alpha:.0%}"
    if tests.correction == "holm":
        return (f"Holm's correction bounds the chance of any false claim among all pairs by α, so with probability "
                f"at least {level} every rank range holds its model's true rank at once, the top group holds the "
                "best model and no band is ordered wrongly (a simulation with a near-tie cluster and small binary "
                "datasets measured 99%; the method page gives the figures).")
    return (f"This build uses {CORRECTIONS[tests.correction][1]}: the ranges and bands carry no family-wise "
            f"guarantee, so they are not {level} sets; Holm's correction (the default) gives one.")


def baseline_effect(dataset: DatasetBoard | None, model_id: str, alpha: float) -> Effect | None:
    """Effect of the model against the dataset's baseline (None for the baseline itself, or without one); meaningful
    only where the corrected test also calls the difference significant."""
    if dataset is None or dataset.baseline is None or model_id not in dataset.position \
            or model_id == dataset.baseline.model_id:
        return None
    pair, row = dataset.baseline_effects, dataset.position[model_id]
    diff = float(pair.diff[row])
    significant = bool(dataset.baseline.pvalue[row] < alpha)
    return Effect(diff=diff, ci=(float(pair.low[row]), float(pair.high[row])), dz=float(pair.dz[row]),
                  meaningful=significant and abs(diff) >= dataset.separability.threshold)


def separability_row(dataset: DatasetBoard, root: str) -> SeparabilityRow:
    summary = dataset.separability
    return SeparabilityRow(
        dataset_id=dataset.info.id, href=f"{root}datasets/{dataset.slug}.html", metric=dataset.info.main_metric,
        queries=len(dataset.query_ids), models=len(dataset.results), pairs=summary.pairs,
        separable_share=summary.separable_share, adjacent=summary.adjacent,
        adjacent_separable=summary.adjacent_separable,
        meaningful_share=summary.meaningful / summary.pairs if summary.pairs else None,
        threshold=summary.threshold, mde=summary.mde, mde_dz=summary.mde_dz, mde_corrected=summary.mde_corrected,
    )


def separability_method(board: Leaderboard) -> str:
    tests = board.settings.tests
    return (f"What a dataset can tell apart: the minimum detectable difference is the smallest difference of means "
            f"that the {PAIRED_TESTS[tests.method].text.lower()} finds with {effects.POWER:.0%} power at "
            f"α = {tests.alpha:g} for one uncorrected comparison, for a pair whose per-query differences have the "
            "dataset's typical (median) SD; after the correction over all pairs a pair needs more: the table gives "
            "the difference found with that power at Bonferroni's level α / pairs (Holm's first step, which every "
            "corrected rejection passes at most at that level); separable: pairs (all, and models next to each other "
            "in the ranking) "
            f"whose corrected p-value is below {tests.alpha:g}; meaningful: pairs whose means differ by at least "
            f"{effects.MEANINGFUL_SHARE:.0%} of the dataset's median score. See the method page.")


def effect_method(board: Leaderboard) -> str:
    return ("Effect beside every p-value: Δ is the paired mean difference with its 95% t-interval, which is not "
            "corrected for the number of pairs (it excludes 0 exactly when the uncorrected t-test rejects, so it may "
            "exclude 0 beside a corrected p above α; the corrected p decides), and d_z = Δ / SD of the per-query "
            "differences (0.2 small, 0.5 medium, 0.8 large by Cohen's rule of thumb); ● marks a meaningful "
            f"difference: significant after correction and at least {effects.MEANINGFUL_SHARE:.0%} of the dataset's "
            "median score.")


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
                  bands=max((score.band for score in g.scores.values()), default=0), complete=len(g.scores))
        for g in groups
    )


def rank_method(board: Leaderboard) -> str:
    return ("Group means are compared pair by pair: the difference of two models' group means is a weighted sum of "
            "their per-dataset mean differences, tested with a t-test whose variance adds each dataset's variance of "
            "the per-query differences (Welch–Satterthwaite degrees of freedom; with one dataset it is the paired "
            f"t-test). {rank_rule(board)}")


def size_figure(board: Leaderboard) -> tuple[Figure | None, tuple[str, ...]]:
    """Every model with a mean on the overall group (the home page's order) against its parameter count, and the
    models left out for want of a count; a lexical model without one has 0 learned parameters."""
    group = next((g for g in board.groups if g.name == ALL_GROUP), board.groups[0] if board.groups else None)
    if group is None:
        return None, ()
    info = {model.info.id: model.info for model in board.models}
    shown, unplaced = [], []
    for model_id, score in sorted(group.scores.items(), key=lambda item: -item[1].mean):
        count = info[model_id].parameters
        count = 0 if count is None and info[model_id].type == "lexical" else count
        (unplaced if count is None or score.ci is None else shown).append((model_id, count, score))
    if not any(count for _, count, _ in shown):
        return None, tuple(model_id for model_id, _, _ in unplaced)
    chart = charts.size_score_chart([m for m, _, _ in shown], [c for _, c, _ in shown],
                                    [info[m].type for m, _, _ in shown], [100 * s.mean for *_, s in shown],
                                    [100 * s.ci[0] for *_, s in shown], [100 * s.ci[1] for *_, s in shown], group.name)
    title = (f"Size against score: the {group.name} mean ({len(group.dataset_ids)} datasets) ×100 of every model "
             "with one, with its 95% confidence interval, against its parameter count (log scale), one colour per "
             "model type; lexical models (no learned parameters) are dashed lines at their mean")
    return Figure("fig-size", title, json_text(chart)), tuple(model_id for model_id, _, _ in unplaced)


def build_ranks(board: Leaderboard) -> RanksContext:
    figure, unplaced = size_figure(board)
    return RanksContext(page=Page(RANKS_PAGE, "Ranks with uncertainty", "", "ranks"), tables=rank_tables(board),
                        methods=(rank_method(board), band_rule(board), top_rule(board),
                                 f"See the method page ({METHOD_ANCHOR}) for the reasons."),
                        verified=sum(model.verified == "all" for model in board.models),
                        figures=(figure,) if figure else (), unplaced=unplaced)


def statistics_method(board: Leaderboard) -> StatisticsMethod:
    tests = board.settings.tests
    return StatisticsMethod(
        tests=tests.describe(), test=PAIRED_TESTS[tests.method].text, correction=CORRECTIONS[tests.correction][1],
        alpha=tests.alpha, resamples=tests.ci_resamples, seed=tests.seed,
        resample_datasets=board.settings.resample_datasets, meaningful_share=effects.MEANINGFUL_SHARE,
        power=effects.POWER, thresholds=tuple(separability_row(d, "") for d in board.datasets),
    )
