"""Group means' verdicts over the hole bounds: do a group's rank ranges, its best set (★) and the verdicts between
its models (the compare page's group rows) hold whatever the unjudged documents within the cutoff are?

Recomputed over the bounds, not read off the datasets' flags (docs/statistics.md, "Verdicts over the holes"): a
group verdict does not rest on the datasets' verdicts but on the group mean's own test (ranks.group_differences,
Welch-Satterthwaite over the datasets), so a pair undetermined on every dataset can be significant on the group,
and "every dataset verdict holds" would not make it hold. The group test is called again on crossed values: on
each dataset of the group, model i at its low bounds against model j at its high bounds (robust.cross_spread; a
dataset without unjudged documents among these models keeps its own differences), the crossed differences pooled
with the group's weights as the group mean's are. Each rule is then robust.py's: a significant pair must stay
significant at its adverse ends, a pair not found different must stay so at its favourable ends (the correction
over every pair at once), an equivalent one must stay so at both crossings, a ★ must survive every model at its
high bounds against it at its low ones, an exclusion some model at its low bounds against it at its high ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from leaderboard.analysis import stats
from leaderboard.analysis.ranks import beat_sizes, difference_pvalues, group_differences
from leaderboard.analysis.robust import adverse_favourable, cross_spread, robust_pairs
from leaderboard.analysis.verdicts import family_size, shown_pvalue, verdict_interval, verdict_words


@dataclass(frozen=True, eq=False)
class GroupRobustness:
    """One group's flags over its ranked models (GroupBoard.ranked_ids order); True: holds over the bounds."""

    pairs: np.ndarray  # (ranked, ranked): the verdict between the two group means
    best: np.ndarray  # best-set membership (★ or not)
    rank: np.ndarray  # every pair decision the rank range rests on


@dataclass(frozen=True)
class DatasetPart:
    """One dataset of the group, its rows for the group's ranked models: per-query bounds (None: none unjudged among
    them) and the differences and variances the group's own test used."""

    low: np.ndarray | None
    high: np.ndarray | None
    diff: np.ndarray  # (models, models) mean differences
    variance: np.ndarray  # (models, models) variances of the per-query differences
    queries: int


def crossed_tests(parts: Sequence[DatasetPart], weights: Sequence[float]) -> tuple[np.ndarray, ...] | None:
    """(total, variance, df) of the group means' differences with row i at its low bounds and column j at its high
    bounds on every dataset; None when no dataset has an unjudged document among these models (nothing can flip)."""
    if all(part.low is None for part in parts):
        return None
    diffs, variances = [], []
    for part in parts:
        if part.low is None:
            diffs.append(part.diff)
            variances.append(part.variance)
        elif part.queries >= 2:
            diff, sd = cross_spread(part.low, part.high)
            diffs.append(diff)
            variances.append(np.square(sd))
        else:  # one query: no variance, as the group's own test (dataset_differences) has none either
            diffs.append(part.low.mean(axis=1)[:, None] - part.high.mean(axis=1)[None, :])
            variances.append(np.zeros_like(part.diff))
    return group_differences(diffs, variances, [part.queries for part in parts], weights)


def group_robustness(means, own: tuple[np.ndarray, np.ndarray, np.ndarray], pvalues, best,
                     crossed: tuple[np.ndarray, ...], tests: stats.TestSettings, margin: float) -> GroupRobustness:
    """The flags of a group's ranked models: `means` their group means, `own` the group's own (total, variance, df),
    `pvalues` its corrected p-values, `best` its ★, `crossed` crossed_tests' (module docstring)."""
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
