"""Honest ranks on the site: effect sizes beside p-values, what each dataset can tell apart, the ranks page with
rank ranges, tie bands and the best set (★) of every group mean, and the method page's statistics section. The
sentences that state a rule (rank ranges, bands, their guarantee; ★ from analysis/best_words.py) are made here once
and quoted on every page that shows it."""

from __future__ import annotations

import numpy as np

from evaluator.result import slugify
from leaderboard.analysis import best_words, effects, meta
from leaderboard.analysis.aggregate import ALL_GROUP, DatasetBoard, GroupBoard, Leaderboard, unit_of
from leaderboard.analysis.judged_words import group_holds
from leaderboard.analysis.stability import SPLITS, group_stability
from leaderboard.analysis.stats import CORRECTIONS, PAIRED_TESTS
from leaderboard.analysis.verdicts import family_size, shown_pvalue, verdict_interval
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
from leaderboard.web.judged_data import group_set_clause
from leaderboard.web.render import json_text
from leaderboard.web.views.common import group_key, ordered_groups

RANKS_PAGE = "ranks.html"
METHOD_ANCHOR = "method.html#statistics"


def rank_rule(board: Leaderboard) -> str:
    tests = board.settings.tests
    return (f"Rank range: from the corrected pairwise tests ({CORRECTIONS[tests.correction][1]}, α = {tests.alpha:g}): "
            "best rank = 1 + the number of ranked models significantly better, worst rank = the number of ranked "
            f"models minus those significantly worse. {guarantee(board)}")


def best_rule(board: Leaderboard) -> str:
    """What ★ means on every page that marks it: the best set (analysis/best_words.py)."""
    return best_words.rule(board.settings.tests.alpha)


def band_rule(board: Leaderboard) -> str:
    return ("Tie bands: taking models best mean first, a band starts with the best model not yet in one (its leader) "
            "and takes every later model that the corrected test does not tell apart from the leader; so every model "
            "of a later band is significantly worse than each earlier band's leader. Band 1: tied with the best.")


def guarantee(board: Leaderboard) -> str:
    """What the rank ranges and the bands promise under the build's correction."""
    tests = board.settings.tests
    level = best_words.level(tests.alpha)
    if tests.correction == "holm":
        return (f"Holm's correction bounds the chance of any false claim among all pairs by α, so with probability "
                f"at least {level} every rank range holds its model's true rank at once and no band is ordered "
                "wrongly (a simulation with a near-tie cluster and small binary "
                "datasets measured 99%; the method page gives the figures).")
    return (f"This build uses {CORRECTIONS[tests.correction][1]}: the ranges and bands carry no family-wise "
            f"guarantee, so they are not {level} sets; Holm's correction (the default) gives one.")


def baseline_effect(dataset: DatasetBoard | None, model_id: str, alpha: float, correction: str = "holm") -> Effect | None:
    """Effect of the model against the dataset's baseline (None for the baseline itself, or without one); meaningful
    only where the corrected test also calls the difference significant."""
    if dataset is None or dataset.baseline is None or model_id not in dataset.position \
            or model_id == dataset.baseline.model_id:
        return None
    pair, row = dataset.baseline_effects, dataset.position[model_id]
    diff = float(pair.diff[row])
    significant = bool(dataset.baseline.pvalue[row] < alpha)
    n = dataset.scores.shape[1]
    # the interval the corrected verdict rests on (verdicts.py), from the p-value the page shows
    pairs = family_size(len(dataset.model_ids), correction)
    low, high = verdict_interval(diff, float(pair.sd[row]) / np.sqrt(n), n - 1,
                                 shown_pvalue(dataset.baseline.pvalue[row], alpha), alpha, pairs) if n > 1 else (diff, diff)
    return Effect(diff=diff, ci=(float(low), float(high)), dz=float(pair.dz[row]),
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


def equivalence_mark(effect: Effect | None, margin: float) -> str:
    """"equivalent" where the pair is not significantly different and its interval (Bonferroni's simultaneous one,
    verdicts.py) lies within the margin; else ""."""
    if effect is None or not (-margin < effect.ci[0] and effect.ci[1] < margin):
        return ""
    return "equivalent" if effect.ci[0] <= 0 <= effect.ci[1] else ""


def family_rule(board: Leaderboard) -> str:
    """The sentence that says corrected p-values depend on the models on the board, and how."""
    correction = board.settings.tests.correction
    how = {"holm": "Holm's correction multiplies each p-value by the number of pairs still in play, so a new model "
                   "raises other pairs' corrected p-values (a pair can stop being significant) and can widen rank "
                   "ranges",
           "bh": "the Benjamini–Hochberg correction rescales each p-value by the pairs' count and its rank among "
                 "them, so a new model moves other pairs' corrected p-values either way",
           "none": "without a correction the p-values do not move, but nothing holds for all pairs at once"}
    return ("Corrected p-values depend on the models on the board: the correction runs over every pair of the "
            f"dataset's models (the group's, for group means), and {how.get(correction, how['holm'])}. A pull "
            "request's summary (irboard compare) reports each new result with the board's own test and family after "
            "the merge, and lists, labelled, the verdicts between other models it changes.")


def effect_method(board: Leaderboard) -> str:
    return ("Effect beside every p-value: Δ is the paired mean difference with the interval its corrected verdict "
            "rests on: the t-interval at the level the correction tested the pair at (α × uncorrected p / corrected "
            "p: α / pairs at Holm's first step, Bonferroni's simultaneous interval; the level of its step for a pair "
            "Holm rejects later), so it excludes 0 exactly when the corrected p is below α; d_z = Δ / SD of the per-query "
            "differences (0.2 small, 0.5 medium, 0.8 large by Cohen's rule of thumb); ● marks a meaningful "
            f"difference: significant after correction and at least {effects.MEANINGFUL_SHARE:.0%} of the dataset's "
            "median score.")


def group_rank_rows(group: GroupBoard, root: str) -> tuple[RankRow, ...]:
    # only models ranked on every dataset of the group (main metric re-scored) are ranked (see aggregate.py)
    ordered = sorted(((m, s) for m, s in group.scores.items() if s.mean_rank is not None),
                     key=lambda item: (-item[1].mean, item[0]))
    return tuple(
        RankRow(model_id=model_id, href=f"{root}models/{slugify(model_id)}.html", mean=score.mean, ci=score.ci,
                rank=position, rank_interval=score.rank_interval, band=score.band, best=model_id in group.best_set,
                **dict(zip(("rank_holds", "best_holds"), group_holds(group, model_id), strict=True)))
        for position, (model_id, score) in enumerate(ordered, start=1)
    )


def group_where(group: GroupBoard) -> str:
    """How the sentences on who could be #1 name a group: "BEIR (4 datasets)"."""
    return f"{group.name} ({len(group.dataset_ids)} dataset{'s' if len(group.dataset_ids) != 1 else ''})"


def rank_tables(board: Leaderboard, root: str = "", rows: bool = True) -> tuple[RankTable, ...]:
    tables = []
    for g in ordered_groups(board):
        text, figure = stability(board, g) if rows else ("", None)
        tables.append(RankTable(name=g.name, key=group_key(g.name), datasets=len(g.dataset_ids),
                                rows=group_rank_rows(g, root) if rows else (),
                                bands=max((score.band for score in g.scores.values()), default=0),
                                complete=len(g.scores), stability=text, stability_figure=figure))
    return tuple(tables)


def stability(board: Leaderboard, group: GroupBoard) -> tuple[str, Figure | None]:
    """Who could be #1 on the group (at 1 - alpha), how often #1 stays #1 over random halves of the queries, and which
    model is #1 with each dataset left out (analysis/stability.py): as a sentence, and the two checks as a chart
    (the sentence gives its numbers: the chart's text alternative)."""
    ranked = list(group.ranked_ids)
    if not ranked:
        return "", None
    boards = {d.info.id: d for d in board.datasets}
    scores = [boards[d].scores[[boards[d].position[m] for m in ranked]] for d in group.dataset_ids]
    found = group_stability(ranked, scores, list(group.weights), [unit_of(d) for d in group.dataset_ids],
                            seed=board.settings.tests.seed)
    means = {m: group.scores[m].mean for m in ranked}
    contenders = sorted((m for m in ranked if m in group.best_set), key=lambda m: (-means[m], m))
    shares = sorted(found.split_half.items(), key=lambda item: -item[1])
    halves = "; ".join(f"{model_id} {share:.1%}" for model_id, share in shares)
    units = len(found.leave_one_out)
    changed = {unit: model_id for unit, model_id in found.leave_one_out.items() if model_id != found.leader}
    left_out = ("the group has one dataset unit, so none to leave out" if not units else
                f"with any one of its {units} dataset units left out, {found.leader} stays #1"
                if not changed else "with one dataset unit left out, #1 changes "
                f"{len(changed)} time{'s' if len(changed) != 1 else ''} of {units}: "
                + "; ".join(f"without {unit}, {model_id}" for unit, model_id in list(changed.items())[:10])
                + (" …" if len(changed) > 10 else ""))
    who = best_words.sentence(group_where(group), contenders, len(ranked), len(ranked), False, len(ranked),
                              board.settings.tests.alpha)
    who += group_set_clause(board, group, {m: i for i, m in enumerate(ranked)})
    text = (f"{who} #1 by mean: {found.leader}. On random halves of each dataset's queries ({SPLITS} splits), #1 was: "
            f"{halves}. By leaving out datasets: {left_out}.")
    winners = list(dict.fromkeys([found.leader] + [m for m, _ in shares] + list(found.leave_one_out.values())))
    counts = [sum(model_id == m for model_id in found.leave_one_out.values()) for m in winners]
    chart = charts.stability_chart(winners, [found.split_half.get(m, 0.0) for m in winners], counts, SPLITS, units,
                                   group.name)
    title = (f"How stable is #1 on {group.name}: for each model that is #1 in either check, the share of {SPLITS} "
             "random halves of each dataset's queries in which it is #1"
             + (f", and the share of the {units} dataset units whose leaving-out leaves it #1" if units else ""))
    return text, Figure(f"fig-stability-{group_key(group.name)}", title, json_text(chart),
                        note="The chart needs JavaScript; the sentence above gives the same numbers.")


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
             f"with one, with its {best_words.level(board.settings.tests.alpha)} confidence interval, against its parameter count (log scale), one colour per "
             "model type; lexical models (no learned parameters) are dashed lines at their mean")
    return Figure("fig-size", title, json_text(chart)), tuple(model_id for model_id, _, _ in unplaced)


def build(board: Leaderboard) -> RanksContext:
    figure, unplaced = size_figure(board)
    return RanksContext(page=Page(RANKS_PAGE, "Ranks with uncertainty", "", "ranks"), tables=rank_tables(board),
                        methods=(rank_method(board), band_rule(board), best_rule(board),
                                 f"See the method page ({METHOD_ANCHOR}) for the reasons."),
                        verified=sum(model.verified == "all" for model in board.models),
                        figures=(figure,) if figure else (), unplaced=unplaced, alpha=board.settings.tests.alpha)


def statistics_method(board: Leaderboard) -> StatisticsMethod:
    tests = board.settings.tests
    return StatisticsMethod(
        tests=tests.describe(), test=PAIRED_TESTS[tests.method].text, correction=CORRECTIONS[tests.correction][1],
        alpha=tests.alpha, resamples=tests.ci_resamples, seed=tests.seed,
        resample_datasets=board.settings.resample_datasets, meaningful_share=effects.MEANINGFUL_SHARE,
        power=effects.POWER, thresholds=tuple(separability_row(d, "") for d in board.datasets),
        family=family_rule(board),
        predictive=predictive_method(board),
    )


def predictive_method(board: Leaderboard) -> tuple[str, ...]:
    """The method page's paragraphs on claims beyond these datasets: prediction intervals, equivalence, the best set."""
    alpha = board.settings.tests.alpha
    margin = board.settings.margin("nDCG@10")
    return (
        "Will A beat B on a dataset like mine? The compare page pools a pair's differences over the datasets of each "
        "group (random effects: each dataset's true difference is drawn around a group mean with spread τ; τ by "
        "Paule and Mandel; the mean's interval is the hull of the modified Hartung–Knapp interval (its factor "
        "floored at 1, so that it is never narrower where τ is estimated 0) and the t-interval of the unweighted "
        "mean of the datasets (which a link between a dataset's size and its difference does not bias), t with "
        "k − 1 degrees of freedom over k datasets, those below one parent as one; it keeps its level where the "
        "datasets differ roughly symmetrically (docs/statistics.md tabulates where it does not). The prediction "
        "interval is where the true difference on a new dataset of the group lies with "
        f"{best_words.level(alpha)} probability: mean ± t(k − 2) × √(τ² + SE²), with τ at the upper end of "
        "its one-sided 80% Q-profile interval, since with few datasets or a spread small next to the datasets' own "
        "errors τ is often estimated 0 and the interval would be too narrow (85–91% coverage in the simulation; "
        "with the bound 95–99% for 4–30 datasets). It needs at least three datasets, and it assumes the datasets "
        "of a group are exchangeable: a new dataset is like one drawn at random from the same population. A dataset "
        "unlike the group's (another language, another kind of query) is not covered by it. P(better on a new "
        "dataset) is the predictive probability that the difference there is above 0.",
        f"Equivalence: a difference smaller than the margin (default {100 * margin:g} point ×100 of the main "
        "metric; SiteSettings.margins sets one per metric) is of no practical importance. A pair is better or worse "
        "where the corrected test rejects; equivalent where it does not and its interval, Bonferroni's "
        f"simultaneous interval at α / pairs, lies within ± the margin (two one-sided tests at α / (2 × pairs) "
        f"each); undetermined otherwise. All equivalence claims of a dataset hold together with probability at "
        f"least 1 − α ({alpha:g}), as the significance claims do. On the compare page the pooled difference over a "
        "group's datasets is equivalent where that interval at α / the group's pairs lies within the margin, the "
        "same rule over datasets instead of queries; it is withheld below "
        f"{meta.MIN_EQUIVALENCE_UNITS} datasets, where a rare kind of dataset is often missing from the sample. It "
        "is a claim about the mean over the group's datasets (a new dataset may differ by more).",
        f"Who could be #1 (★ on every page): the {best_words.level(alpha)} confidence set for the best model keeps "
        "every model that no other is significantly better than in a one-sided paired t-test at α / (models − 1). "
        "Only one model is the true best, so only its hypothesis matters: the set holds it with probability at "
        f"least {best_words.level(alpha)}, at near-ties too, and it needs far less evidence than a claim about "
        "every pair, whose Holm correction starts at α / (all pairs). The home, ranks and dataset pages name it in "
        "one sentence.",
    )
