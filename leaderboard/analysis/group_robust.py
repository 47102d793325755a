"""Group means' verdicts over the hole bounds: do a group's rank ranges, its best set (★) and the verdicts between
its models (the compare page's group rows) hold whatever the unjudged documents within the cutoff are?

Recomputed over the bounds, not read off the datasets' flags (docs/statistics.md, "Verdicts over the holes"): a
group verdict does not rest on the datasets' verdicts but on the group mean's own test (ranks.group_differences,
Welch-Satterthwaite over the datasets), so a pair undetermined on every dataset can be significant on the group,
and "every dataset verdict holds" would not make it hold. The group test is called again on crossed values: on
each dataset of the group, model i at its low bounds against model j at its high bounds (robust.Crossings, those
the dataset's own flags computed; a dataset without unjudged documents among these models keeps its own
differences), the crossed differences pooled with the group's weights as the group mean's are. Each rule is then robust.py's: a significant pair must stay
significant at its adverse ends, a pair not found different must stay so at its favourable ends (the correction
over every pair at once), an equivalent one must stay so at both crossings, a ★ must survive every model at its
high bounds against it at its low ones, an exclusion some model at its low bounds against it at its high ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from leaderboard.analysis import stats
from leaderboard.analysis.ranks import _better_t, _sizes, beat_sizes, difference_pvalues, pooled_differences
from leaderboard.analysis.robust import adverse_favourable, robust_pairs
from leaderboard.analysis.verdicts import (
    family_size,
    shown_pvalue,
    t_isf,
    t_sf,
    verdict_interval,
    verdict_words,
)


@dataclass(frozen=True, eq=False)
class GroupRobustness:
    """One group's flags over its ranked models (GroupBoard.ranked_ids order); True: holds over the bounds."""

    pairs: np.ndarray  # (ranked, ranked): the verdict between the two group means
    best: np.ndarray  # best-set membership (★ or not)
    rank: np.ndarray  # every pair decision the rank range rests on


Terms = Callable[[slice, tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class DatasetPart:
    """One dataset of the group, for the group's ranked models: functions giving the (differences, variances of the
    per-query differences) the group's own test used and those of the crossings (robust.Crossings.among: row i at
    its low bounds against column j at its high bounds; None: none unjudged among these models), each called with
    a block of rows (a slice) and two (rows, models) arrays it may fill (ranks.pooled_differences)."""

    queries: int
    own: Terms
    crossed: Terms | None


def crossed_tests(parts: Sequence[DatasetPart], weights: Sequence[float], models: int) -> tuple[np.ndarray, ...] | None:
    """(total, variance, df) of the group means' differences with row i at its low bounds and column j at its high
    bounds on every dataset (`models` ranked models); None when no dataset has an unjudged document among these
    models (nothing can flip)."""
    if all(part.crossed is None for part in parts):
        return None
    terms = [part.own if part.crossed is None else part.crossed for part in parts]
    return pooled_differences(terms, [part.queries for part in parts], weights, models)


def group_robustness(means, own: tuple[np.ndarray, np.ndarray, np.ndarray], pvalues, best,
                     crossed: tuple[np.ndarray, ...], tests: stats.TestSettings, margin: float) -> GroupRobustness:
    """The flags of a group's ranked models: `means` their group means, `own` the group's own (total, variance, df),
    `pvalues` its corrected p-values, `best` its ★, `crossed` crossed_tests' (module docstring).

    Holm or no correction: each family's decisions from the exact p-values of only the pairs no bound on the
    degrees of freedom decides (_decisions), the ★ flags from the pairs that could beat a model at all
    (_beaten_rows), the equivalences only where a pair's own interval can lie within the margin; the same flags as
    the corrected matrices give (exact_robustness, which serves the other corrections)."""
    means = np.asarray(means, dtype=np.float64)
    m = means.size
    if tests.correction not in ("holm", "none") or m < 2:
        return exact_robustness(means, own, pvalues, best, crossed, tests, margin)
    total, variance, df = crossed
    pairs_count = family_size(m, tests.correction)
    adverse, favourable = _decisions(means, total, variance, df, tests.alpha, pairs_count, tests.correction)
    pairs = np.where(np.asarray(pvalues) < tests.alpha, adverse, ~favourable)
    np.fill_diagonal(pairs, True)
    rank = pairs.all(axis=1)
    if _equivalence_possible(own, pvalues, tests, pairs_count, margin):
        exact = exact_robustness(means, own, pvalues, best, crossed, tests, margin)
        pairs = exact.pairs
    best = np.asarray(best, dtype=bool)
    se = np.sqrt(np.maximum(variance, 0.0))
    keeps = ~_beaten_rows(total, se, df, tests.alpha, m)  # i low against every j high
    drops = _beaten_rows(-total.T, se.T, df.T, tests.alpha, m)  # i high against every j low
    return GroupRobustness(pairs, np.where(best, keeps, drops), rank)


def exact_robustness(means, own, pvalues, best, crossed: tuple[np.ndarray, ...], tests: stats.TestSettings,
                     margin: float) -> GroupRobustness:
    """group_robustness from every crossed p-value and both corrected matrices (any correction)."""
    means = np.asarray(means, dtype=np.float64)
    m = means.size
    total, variance, df = crossed
    crossing = difference_pvalues(total, variance, df)
    adverse, favourable = adverse_favourable(means, crossing, total, tests.correction)
    pairs = robust_pairs(pvalues, adverse, favourable, tests.alpha)
    rank = pairs.all(axis=1)
    pairs = pairs & _equivalence_holds(own, pvalues, crossed, favourable, tests, margin, m)
    np.fill_diagonal(pairs, True)  # a model against itself: no verdict
    best = np.asarray(best, dtype=bool)
    if m < 2:
        return GroupRobustness(pairs, np.ones(m, dtype=bool), rank)
    se = np.sqrt(np.maximum(variance, 0.0))
    keeps = _never_beaten(beat_sizes(total, se, df, tests.alpha), m)  # i low against every j high
    drops = ~_never_beaten(beat_sizes(-total.T, se.T, df.T, tests.alpha), m)  # i high against every j low
    return GroupRobustness(pairs, np.where(best, keeps, drops), rank)


def _crossing_classes(total, variance, df, alpha: float, pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """(class, t) of each crossing's two-sided p-value (difference_pvalues' test): 0 where it is surely below
    alpha / pairs whatever its degrees of freedom within the matrix's range, 2 where surely above alpha, 1 between
    (its exact value needed)."""
    varying = variance > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.abs(total) / np.sqrt(np.where(varying, variance, 1.0))
    t[~varying] = np.where(total[~varying] != 0, np.inf, 0.0)  # p 0 or 1, as difference_pvalues has them
    dfs = df[varying] if varying.any() else np.ones(1)
    low_df, high_df = float(dfs.min()), float(dfs.max())
    # a smaller df gives a heavier tail: the t that surely rejects is the one at the smallest df
    sure = t_isf(alpha / (2 * max(pairs, 1)), low_df) * (1 + 1e-7)
    never = t_isf(alpha / 2, high_df) * (1 - 1e-7)
    classes = np.where(t > sure, 0, np.where(t < never, 2, 1)).astype(np.int8)
    classes[~varying] = np.where(total[~varying] != 0, 0, 2)
    return classes, t


def _decisions(means, total, variance, df, alpha: float, pairs: int, correction: str) -> tuple[np.ndarray, ...]:
    """(adverse rejected, favourable rejected), bool (m, m): Holm's (or no correction's) decisions at alpha over
    adverse_favourable's two families, from the exact p-values of the pairs _crossing_classes leaves open only.
    A member surely below alpha / pairs is rejected and one surely above alpha is not, whatever the others are, so
    standing them at 0 and 1 keeps every decision."""
    m = means.size
    classes, t = _crossing_classes(total, variance, df, alpha, pairs)
    first, second = np.triu_indices(m, k=1)
    c_ij, c_ji = classes[first, second], classes[second, first]

    def exact(i, j):
        p = np.where(classes[i, j] == 0, 0.0, 1.0)
        open_ = classes[i, j] == 1
        p[open_] = np.minimum(2.0 * special.stdtr(df[i[open_], j[open_]], -t[i[open_], j[open_]]), 1.0)
        return p

    # favourable: the smaller of the two crossings
    favourable_class = np.minimum(c_ij, c_ji)
    # adverse: the one of higher mean at its low end (1 where that turns the difference round); ties: the larger
    top_first = means[first] > means[second]
    tie = means[first] == means[second]
    top = np.where(top_first, first, second)
    other = np.where(top_first, second, first)
    kept = total[top, other] > 0
    adverse_class = np.where(kept, classes[top, other], 2)
    adverse_class = np.where(tie, np.maximum(c_ij, c_ji), adverse_class)
    out = []
    for family, value in ((adverse_class, lambda k: np.where(
            tie[k], np.maximum(exact(first[k], second[k]), exact(second[k], first[k])),
            np.where(kept[k], exact(top[k], other[k]), 1.0))),
            (favourable_class, lambda k: np.minimum(exact(first[k], second[k]), exact(second[k], first[k])))):
        rejected = family == 0
        open_ = np.flatnonzero(family == 1)
        if open_.size:
            p = value(open_)
            if correction == "holm":
                order = np.argsort(p, kind="stable")
                steps = pairs - int(np.count_nonzero(rejected)) - np.arange(order.size)
                adjusted = np.maximum.accumulate(p[order] * steps)
                hit = np.zeros(open_.size, dtype=bool)
                hit[order] = adjusted < alpha
            else:
                hit = p < alpha
            rejected[open_] = hit
        matrix = np.zeros((m, m), dtype=bool)
        matrix[first, second] = rejected
        matrix[second, first] = rejected
        out.append(matrix)
    return tuple(out)


def _beaten_rows(diff, se, df, alpha: float, m: int) -> np.ndarray:
    """bool per row i: some j is better than i at beat size m or more (ranks.beat_sizes(diff, se, df) >= m off the
    diagonal). A t beyond the one at alpha / (m - 1) at the smallest df surely beats, one short of it at the largest
    df never does; only the rows left open work out their pairs between, largest t first."""
    t = _better_t(diff, se)
    dfs = np.maximum(np.asarray(df, dtype=np.float64), 1.0)
    level = alpha / max(m - 1, 1)
    sure = t_isf(level, float(dfs.min())) * (1 + 1e-7)
    reach = t_isf(level, float(dfs.max())) * (1 - 1e-7)
    largest = t.max(axis=1)
    beaten = largest > sure
    open_rows = np.flatnonzero(~beaten & (largest > reach))
    if open_rows.size:
        sub = t[open_rows]
        rows, columns = np.nonzero(sub > reach)
        sizes = _sizes(t_sf(sub[rows, columns], dfs[open_rows[rows], columns]), alpha)
        beaten[open_rows[rows[sizes >= m]]] = True
    return beaten


def _equivalence_possible(own, pvalues, tests: stats.TestSettings, pairs: int, margin: float) -> bool:
    """Whether some pair can be "equivalent" on the group: not significant, and its interval (at a level of
    alpha / pairs or below, verdicts.verdict_level) narrow enough at the largest df to lie within the margin."""
    total, variance, df = own
    close = (np.asarray(pvalues) >= tests.alpha) & (np.abs(total) < margin)
    np.fill_diagonal(close, False)
    if not close.any():
        return False
    dfs = np.maximum(np.asarray(df, dtype=np.float64)[close], 1.0)
    widest = t_isf(tests.alpha / (2 * max(pairs, 1)), float(dfs.max())) * (1 - 1e-7)
    se = np.sqrt(np.maximum(np.asarray(variance, dtype=np.float64)[close], 0.0))
    return bool((np.abs(total[close]) + widest * se < margin).any())


def _never_beaten(sizes: np.ndarray, m: int) -> np.ndarray:
    sizes = sizes.copy()
    np.fill_diagonal(sizes, 0)
    return (sizes < m).all(axis=1)


def _equivalence_holds(own, pvalues, crossed, favourable, tests: stats.TestSettings, margin: float,
                       m: int) -> np.ndarray:
    """False where a pair is "equivalent" on the group (its interval, as the compare page's group rows) and a
    crossing's interval at the favourable p-value leaves the margin. Only pairs not significant and closer than the
    margin can be equivalent, so only those are worked out."""
    total, variance, df = own
    holds = np.ones((m, m), dtype=bool)
    rows, columns = np.nonzero((np.asarray(pvalues) >= tests.alpha) & (np.abs(total) < margin))
    if not rows.size:
        return holds
    pairs = family_size(m, tests.correction)
    shown = shown_pvalue(np.asarray(pvalues)[rows, columns], tests.alpha)
    d, v, f = total[rows, columns], variance[rows, columns], np.asarray(df)[rows, columns]
    low, high = verdict_interval(d, np.sqrt(v), f, shown, tests.alpha, pairs)
    equivalent = verdict_words(d, low, high, shown, tests.alpha, margin) == "equivalent"
    cross_total, cross_variance, cross_df = crossed
    p = np.asarray(favourable)[rows, columns]
    for side in ((cross_total[rows, columns], cross_variance[rows, columns], cross_df[rows, columns]),
                 (-cross_total[columns, rows], cross_variance[columns, rows], cross_df[columns, rows])):
        low, high = verdict_interval(side[0], np.sqrt(side[1]), side[2], p, tests.alpha, pairs)
        holds[rows, columns] &= ~equivalent | (verdict_words(side[0], low, high, p, tests.alpha, margin) == "equivalent")
    return holds
