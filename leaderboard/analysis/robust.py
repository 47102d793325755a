"""Judgment-robust verdicts: does a verdict still hold whatever the unjudged documents in the metric's cutoff are?

Each run has per-query values at the low end of its hole bounds (trec_eval's: every unjudged document
non-relevant) and at the high end (every one relevant at the top grade). A verdict is *robust* when the same test
still makes it with the two runs at their most adverse ends (docs/statistics.md, "Verdicts over the holes"):

- a significant difference "i above j" holds when i at its low end against j at its high end is still
  significant the same way; the correction runs over every pair at its adverse end at once (each pair's p-value
  is then at least as large as at any labelling's, which keeps the corrected values conservative);
- "no significant difference" holds when neither crossing (i low against j high, i high against j low) becomes
  significant, every pair of the family at its smaller crossing p-value;
- "equivalent" holds when, besides, both crossings' verdict intervals lie within the margin;
- a best-set exclusion holds when some model at its low end still beats the excluded one at its high end; an
  inclusion holds when no model at its high end beats the included one at its low end.

The tests are the board's own (stats.PAIRED_TESTS, its corrections, verdicts.verdict_interval and verdict_words,
ranks.beat_sizes), called a second time on the crossed values.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy import special

from leaderboard.analysis import stats
from leaderboard.analysis.ranks import _sizes
from leaderboard.analysis.verdicts import t_isf, t_pvalue, t_sf, verdict_interval, verdict_words

MARK = "◊"  # beside a verdict the unjudged documents could flip (its title says so)
MARK_TITLE = "could flip: unjudged documents within the cutoff could change this verdict"
MARK_LEGEND = f"{MARK} a verdict unjudged documents could flip"  # a table caption's legend of the mark


def cross_spread(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(diff, sd): diff[i, j] = mean(low_i) - mean(high_j) and the SD of the per-query differences low_i - high_j
    (n >= 2), from one cross-covariance product, as effects.spread does for one matrix."""
    crossings = Crossings.of(low, high)
    return crossings.diff(), crossings.sd


@dataclass(frozen=True, eq=False)
class Crossings:
    """A dataset's crossings over its hole bounds, row i at its low bounds against row j at its high bounds, per row
    of its board: computed once for its own flags and kept for the group means' (analysis.group_robust)."""

    low_mean: np.ndarray  # (models,) mean of each row's low bounds
    high_mean: np.ndarray
    sd: np.ndarray | None  # (models, models) SD of the per-query differences low_i - high_j; None with one query
    holes: np.ndarray  # bool per row: some query's bounds differ

    @classmethod
    def of(cls, low, high) -> Crossings:
        low = np.asarray(low, dtype=np.float64)
        high = np.asarray(high, dtype=np.float64)
        n = low.shape[1]
        mean_low, mean_high = low.mean(axis=1), high.mean(axis=1)
        holes = (low != high).any(axis=1)
        if n < 2:
            return cls(mean_low, mean_high, None, holes)
        centered_low, centered_high = low - mean_low[:, None], high - mean_high[:, None]
        var_diff = centered_low @ centered_high.T / (n - 1)  # the cross-covariance, turned in place into the
        var_low = np.einsum("ij,ij->i", centered_low, centered_low) / (n - 1)  # variance of the differences
        var_high = np.einsum("ij,ij->i", centered_high, centered_high) / (n - 1)
        total = var_low[:, None] + var_high[None, :]
        var_diff *= -2.0  # total - 2 cov, the same bits: doubling and negating are exact
        var_diff += total
        total *= 1e-12
        var_diff[var_diff <= total] = 0.0
        np.maximum(var_diff, 0.0, out=var_diff)
        return cls(mean_low, mean_high, np.sqrt(var_diff, out=var_diff), holes)

    def diff(self) -> np.ndarray:
        """(models, models) mean(low_i) - mean(high_j)."""
        return np.subtract.outer(self.low_mean, self.high_mean)

    def unjudged(self, rows) -> bool:
        """Whether one of these rows has a bound apart from its value (else nothing among them can flip)."""
        return bool(self.holes[np.asarray(rows, dtype=np.int64)].any())

    def among(self, rows, block: slice = slice(None),
              out: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(diff, variance of the per-query differences) of the crossings among `rows` (their order), of the rows
        `block` (a slice) of it against all, the variance 0 with one query; into `out` ((block rows, rows) float64
        each) when given, so that a caller taking one dataset's at a time fills the same memory again (fresh pages
        cost more than the copy)."""
        rows = np.asarray(rows, dtype=np.int64)
        diff, variance = out if out is not None else (None, None)
        diff = np.subtract(self.low_mean[rows[block], None], self.high_mean[None, rows], out=diff)
        if self.sd is None:  # one query: no variance
            variance = np.empty_like(diff) if variance is None else variance
            variance.fill(0.0)
            return diff, variance
        variance = np.take(self.sd[rows[block]], rows, axis=1, out=variance)  # np.ix_'s values, 3x faster
        return diff, np.square(variance, out=variance)


def cross_pvalues(low, high, method: str, resamples: int = 100_000, seed: int = 0,
                  spread: tuple[np.ndarray, np.ndarray] | None = None, alpha: float | None = None,
                  pairs: int = 1) -> np.ndarray:
    """(m, m) uncorrected two-sided p-values of the paired test of low_i against high_j (the board's test).

    With `alpha` (t-test only), only the p-values a correction over `pairs` pairs could decide either way are
    computed: those of a t beyond the one at alpha / pairs are 0 and those short of the one at alpha are 1. Every
    corrected p-value then falls on the same side of alpha as the exact one (Holm and Benjamini-Hochberg order
    the pairs as their t does, one df for all), at a fraction of the cost (the t distribution's tail is most of it
    at 1,000 models)."""
    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    m, n = low.shape
    if method == "t" and n >= 2:
        diff, sd = cross_spread(low, high) if spread is None else spread
        se = sd / np.sqrt(n)
        if alpha is None:
            return t_pvalue(diff, se, n - 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.abs(diff) / np.where(se > 0, se, 1.0)
        sure, never = t_isf(alpha / (2 * max(pairs, 1)), n - 1), t_isf(alpha / 2, n - 1)
        p = np.where(t > sure, 0.0, 1.0)
        middle = (se > 0) & (t > never) & (t <= sure)
        p[middle] = np.minimum(2.0 * t_sf(t[middle], n - 1), 1.0)
        p[se == 0] = np.where(diff[se == 0] == 0, 1.0, 0.0)
        return p
    run = stats.PAIRED_TESTS[method].run
    out = np.empty((m, m))
    for i in range(m):
        out[i] = run(low[i][None, :] - high, resamples, seed)
    return out


def _family(matrix: np.ndarray, correction: str) -> np.ndarray:
    """The correction over the m(m-1)/2 pairs of a symmetric matrix of uncorrected p-values."""
    return stats.corrected_matrix(matrix, correction)


def extreme_pvalues(means, low, high, method: str, correction: str, resamples: int = 100_000, seed: int = 0,
                    spread=None, alpha: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(adverse, favourable, crossing) corrected p-value matrices: adverse[i, j] tests the pair with the one of
    higher mean (as the verdict is made, from `means`) at its low end and the other at its high end (1 when that
    turns the difference round); favourable[i, j] the smaller of the two crossings; crossing: the uncorrected
    p-values of low_i against high_j. `alpha`: only decisions at alpha are needed (cross_pvalues)."""
    means = np.asarray(means, dtype=np.float64)
    m = np.shape(low)[0]
    pairs = m * (m - 1) // 2 if correction != "none" else 1
    crossing = cross_pvalues(low, high, method, resamples, seed, spread, alpha, pairs)
    diff = (cross_spread(low, high) if spread is None else spread)[0]
    adverse, favourable = adverse_favourable(means, crossing, diff, correction)
    return adverse, favourable, crossing


def adverse_favourable(means, crossing: np.ndarray, diff: np.ndarray, correction: str) -> tuple[np.ndarray, np.ndarray]:
    """(adverse, favourable) corrected p-value matrices (extreme_pvalues) from the uncorrected p-values `crossing`
    of low_i against high_j and their mean differences `diff`; the group means' flags use it on their own tests."""
    means = np.asarray(means, dtype=np.float64)
    above = means[:, None] > means[None, :]
    # the one above at its low end against the other at its high end: crossing[i, j] where i is above
    kept = np.where(above, diff > 0, (-diff.T) < 0)  # sign of the difference kept at the adverse ends
    adverse = np.where(above, crossing, crossing.T)
    adverse = np.where(kept | (means[:, None] == means[None, :]), adverse, 1.0)
    adverse = np.maximum(adverse, adverse.T)  # symmetric (ties of means: the larger)
    favourable = np.minimum(crossing, crossing.T)
    return _family(adverse, correction), _family(favourable, correction)


def robust_pairs(pvalues, adverse, favourable, alpha: float) -> np.ndarray:
    """bool (m, m): each pair's decision (significant or not, the corrected `pvalues`) holds over the bounds."""
    significant = np.asarray(pvalues) < alpha
    robust = np.where(significant, adverse < alpha, favourable >= alpha)
    np.fill_diagonal(robust, True)
    return robust


def robust_verdicts(words, b: int, low, high, pair_robust: np.ndarray, favourable: np.ndarray, alpha: float,
                    margin: float, pairs: int, spread=None) -> np.ndarray:
    """bool per row: its verdict against row `b` (verdicts.verdict_words) holds over the bounds; "equivalent" also
    needs both crossings' verdict intervals within the margin. `favourable`: the favourable family's corrected
    p-value of each row against `b` (extreme_pvalues' favourable[:, b]; read for the equivalent rows only)."""
    words = np.asarray(words)
    robust = pair_robust[:, b].copy()
    equivalent = np.flatnonzero(words == "equivalent")
    if equivalent.size:
        n = np.shape(low)[1]
        diff, sd = cross_spread(low, high) if spread is None else spread
        for d, s in ((diff[:, b], sd[:, b]), (-diff[b, :], sd[b, :])):  # low_i - high_b, high_i - low_b
            lo, hi = verdict_interval(d, s / np.sqrt(n), n - 1, favourable, alpha, pairs)
            again = verdict_words(d, lo, hi, favourable, alpha, margin)
            robust[equivalent] &= again[equivalent] == "equivalent"
    robust[b] = True
    return robust


def robust_best(best, low, high, alpha: float, spread=None) -> np.ndarray:
    """bool per model (all ranked): its best-set membership (ranks.best_set's rule, `best`) holds over the bounds.
    An exclusion holds when some model at its low end beats it at its high end; an inclusion when no model at its
    high end beats it at its low end (one-sided tests at alpha / (models - 1), ranks.beat_sizes)."""
    best = np.asarray(best, dtype=bool)
    m = best.size
    if m < 2:
        return np.ones(m, dtype=bool)
    n = np.shape(low)[1]
    if n < 2:  # no test: every model stays in the set, whatever its bounds
        return best.copy()
    diff, sd = cross_spread(low, high) if spread is None else spread
    # included i: j at its high end against i at its low end, t = -diff[i, j] / se; excluded i: j at its low end
    # against i at its high end, t = diff[j, i] / se. One df for every pair, so each row is decided by its largest
    # t (as best_set does): the beat size of that one comparison. Both from one matrix q = diff / se (negating is
    # exact, so -q is ranks._better_t's values), NaN and the model itself never better
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.divide(diff, sd / np.sqrt(n))
    never = np.isnan(q)
    np.fill_diagonal(never, True)
    q[never] = np.inf
    keeps = _largest_beat(-q.min(axis=1), n - 1, alpha)
    q[never] = -np.inf
    drops = _largest_beat(q.max(axis=0), n - 1, alpha)
    return np.where(best, keeps < m, drops >= m)


def _largest_beat(largest_t, df, alpha: float) -> np.ndarray:
    """Per row i, the largest beat size (ranks.beat_sizes' rule) of any other model over i: that of its largest t."""
    return _sizes(t_sf(largest_t, max(float(df), 1.0)), alpha)


def crossed_t(diff: np.ndarray, sd: np.ndarray, n: int) -> np.ndarray:
    """(m, m) |t| of each crossing low_i - high_j as cross_pvalues computes it, with se 0 read as a t of +inf (a
    difference: p 0) or 0 (none: p 1); the diagonal -inf (no test)."""
    se = sd / np.sqrt(n)
    flat = se == 0
    se[~(se > 0)] = 1.0  # in place: |diff| / where(se > 0, se, 1), one (m, m) array fewer
    t = np.abs(diff)
    with np.errstate(divide="ignore", invalid="ignore"):
        t /= se
    if flat.any():
        t[flat] = np.where(diff[flat] == 0, 0.0, np.inf)
    np.fill_diagonal(t, -np.inf)
    return t


def _pair_p(t: np.ndarray, sure: float, never: float, df: int) -> np.ndarray:
    """cross_pvalues' decision-only p-value of each |t|: 0 beyond `sure`, 1 at or short of `never`, exact between."""
    p = np.where(t > sure, 0.0, 1.0)
    middle = (t > never) & (t <= sure)
    p[middle] = np.minimum(2.0 * special.stdtr(df, -t[middle]), 1.0)  # stats.t.sf without its argument checks
    return p


def holm_decisions(key: np.ndarray, pvalue, df: int, alpha: float, pairs: int,
                   wanted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """Holm's decisions at alpha over the upper triangle of a symmetric (m, m) family, the same as
    corrected_matrix(p, "holm") < alpha over cross_pvalues' decision-only p-values, with the exact p-values computed
    only for the members Holm's steps can reach.

    key[i, j]: a |t| that orders the member (larger: smaller p; p 0 beyond the t at alpha / (2 pairs), 1 at or short
    of the one at alpha / 2; the diagonal -inf); pvalue(i, j) -> the exact p-values of members i < j (index arrays).
    Past the zeros (z of them) Holm's step z + c + 1 multiplies by pairs - z - c, so no member with p >= q =
    alpha / (pairs - z - c) can be rejected once c members lie below q: those are the only ones computed, q rising
    with c until no more fall below it. `wanted`: flat indices (i * m + j) whose corrected p-values are returned too
    (exact where below 1 and not 0; every member of p at most theirs is then computed).
    Returns (rejected (m, m) bool, the wanted corrected p-values or None)."""
    m = key.shape[0]
    sure = t_isf(alpha / (2 * max(pairs, 1)), df)
    never = t_isf(alpha / 2, df)
    rejected = key > sure
    zeros = int(np.count_nonzero(rejected)) // 2  # symmetric, diagonal never
    middle = np.flatnonzero(np.triu((key > never) & ~rejected, 1))  # the upper triangle's members, in order
    middle_key = key.ravel()[middle]
    done_cut, parts = np.inf, []

    def exact_below(q: float) -> tuple[np.ndarray, np.ndarray]:
        """The members computed so far and their p-values, now every one with p < q among them (q only rises)."""
        nonlocal done_cut
        # a t a little short of the one at q: every member with p < q lies beyond it
        cut = t_isf(q / 2, df) * (1 - 1e-6) if q < 1 else -np.inf
        new = middle[(middle_key > cut) & (middle_key <= done_cut)]
        parts.append((new, pvalue(new // m, new % m)))
        done_cut = cut
        return np.concatenate([part[0] for part in parts]), np.concatenate([part[1] for part in parts])

    below = 0
    while True:
        left = pairs - zeros - below
        q = alpha / left * (1 + 1e-9) if left > 0 else 1.0
        chosen, p = exact_below(q)
        now = int(np.count_nonzero(p < q))
        if now == below:
            break
        below = now
    if wanted is not None:
        wanted_p = _flat_p(key, wanted, pvalue, sure, never, pairs, df)
    order = np.argsort(p)
    adjusted = np.minimum(np.maximum.accumulate(p[order] * (pairs - zeros - np.arange(order.size))), 1.0)
    corrected = np.empty(order.size)
    corrected[order] = adjusted
    hit = chosen[corrected < alpha]
    rejected[hit // m, hit % m] = True
    rejected[hit % m, hit // m] = True
    if wanted is None:
        return rejected, None
    values = np.where(wanted_p == 0, 0.0, 1.0)
    inside = (wanted_p > 0) & (wanted_p < 1)
    if inside.any():
        flat = wanted[inside]
        upper = np.where(flat // m < flat % m, flat, (flat % m) * m + flat // m)
        by_index = np.argsort(chosen)
        at = np.minimum(np.searchsorted(chosen, upper, sorter=by_index), max(chosen.size - 1, 0))
        found = chosen.size > 0
        known = chosen[by_index[at]] == upper if found else np.zeros(upper.size, dtype=bool)
        # a member not computed cannot be rejected: its corrected value lies in [alpha, min(1, pairs p)], and the
        # upper end stands for it, marked negative (holm_decisions' caller checks it reads the same)
        inside_values = -np.minimum(pairs * wanted_p[inside], 1.0)
        if found:
            inside_values[known] = corrected[by_index[at]][known]
        values[inside] = inside_values
    return rejected, values


def _t_above(p: float, df: int) -> float:
    """A |t| at or short of which the two-sided t-test's p-value (df) surely exceeds p."""
    return float(t_isf(p / 2 * (1 + 1e-9), df)) * (1 - 1e-9)


def _flat_p(key, flat, pvalue, sure, never, pairs: int = 1, df: int | None = None) -> np.ndarray:
    """The decision-only p-values of members at flat indices (either triangle). With `df`: a member whose key lies
    at or short of _t_above(1 / pairs) is only known to have a p-value above 1 / pairs (all holm_decisions reads
    of it: its upper end min(pairs p, 1) is 1) and stands at min(2 / pairs, 0.5), uncomputed."""
    m = key.shape[0]
    i, j = flat // m, flat % m
    keys = key.ravel()[flat]
    out = np.where(keys > sure, 0.0, 1.0)
    middle = (keys > never) & (keys <= sure) & (i != j)
    if df is not None:
        short = middle & (keys <= _t_above(1 / max(pairs, 1), df))
        out[short] = min(2.0 / max(pairs, 1), 0.5)
        middle &= ~short
    if middle.any():
        first, second = np.minimum(i, j)[middle], np.maximum(i, j)[middle]
        out[middle] = pvalue(first, second)
    return out


def _same_levels(spread, n: int, flat: np.ndarray, upper: np.ndarray, alpha: float, pairs: int) -> bool:
    """Whether every member at `flat` (a pair's favourable corrected p-value unknown in [alpha, upper]) gets the
    same verdict level (verdicts.verdict_level) for both its crossings at either end, so at its exact value too
    (the level does not rise with the p-value)."""
    from leaderboard.analysis.verdicts import verdict_level

    diff, sd = spread
    m = diff.shape[0]
    i, j = flat // m, flat % m
    # a crossing's p_raw above upper / pairs (upper >= alpha) gives alpha / pairs at both ends: so does a |t| at or
    # short of _t_above(max upper / pairs), most crossings at many pairs (where upper is 1); only the others are
    # computed
    short = _t_above(upper.max() / max(pairs, 1), n - 1) if upper.min() >= alpha else -np.inf
    for first, second in ((i, j), (j, i)):
        d, se = diff[first, second], sd[first, second] / np.sqrt(n)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(se > 0, np.abs(d) / np.where(se > 0, se, 1.0), np.where(d == 0, 0.0, np.inf))
        exact = t > short
        p_raw = t_pvalue(d[exact], se[exact], n - 1)
        low_end = verdict_level(p_raw, np.full(p_raw.size, alpha), alpha, pairs)
        if not np.array_equal(low_end, verdict_level(p_raw, upper[exact], alpha, pairs)):
            return False
    return True


def _exact_favourable(spread: tuple[np.ndarray, np.ndarray], n: int, correction: str) -> np.ndarray:
    """extreme_pvalues' favourable matrix from the exact crossed t-tests (no decision-only p-values)."""
    diff, sd = spread
    crossing = t_pvalue(diff, sd / np.sqrt(n), n - 1)
    return _family(np.minimum(crossing, crossing.T), correction)


@dataclass(frozen=True, eq=False)
class BoardRobustness:
    """One dataset's flags, per row of its board (True: holds over the bounds)."""

    verdict: np.ndarray  # the verdict against the baseline (True for the baseline, and without one)
    best: np.ndarray  # best-set membership (★ or not), ranked rows; True for unranked rows
    rank: np.ndarray  # every pair decision the row's rank range rests on, ranked rows; True for unranked rows
    # (models, models): each pair's verdict (better, worse, equivalent, undetermined) holds, as the compare page
    # shows it; None when nothing can flip (or the pairs' SDs were not given)
    pairs: np.ndarray | None = None
    crossings: Crossings | None = None  # None when nothing is unjudged

    @property
    def all_hold(self) -> bool:
        return bool(self.verdict.all() and self.best.all() and self.rank.all())

    def pair_holds(self, i: int, j: int) -> bool:
        return True if self.pairs is None else bool(self.pairs[i, j])


def close_pairs(means, pvalues, alpha: float, margin: float) -> np.ndarray:
    """bool (m, m): the pairs not found different whose means lie closer than the margin (the only ones that can be
    "equivalent")."""
    diff = np.subtract.outer(means, means)
    close = np.abs(diff, out=diff) < margin
    close &= np.asarray(pvalues) >= alpha
    return close


def equivalence_holds(means, sd, n: int, pvalues, crossed: tuple[np.ndarray, np.ndarray], favourable, alpha: float,
                      pairs: int, margin: float, close: np.ndarray | None = None) -> np.ndarray:
    """bool (m, m): False where a pair's verdict is "equivalent" (verdicts.verdict_words, its corrected p-value
    `pvalues`, the SD of its per-query differences `sd`) and a crossing's verdict interval (`crossed`: cross_spread,
    at the `favourable` p-value) leaves the margin. Only pairs not significant and closer than the margin can be
    equivalent, so only those are worked out (`close`: that mask, close_pairs', when the caller has it)."""
    from leaderboard.analysis.verdicts import shown_pvalue

    means = np.asarray(means, dtype=np.float64)
    m = means.size
    holds = np.ones((m, m), dtype=bool)
    rows, columns = np.nonzero(close_pairs(means, pvalues, alpha, margin) if close is None else close)
    if not rows.size or n < 2:
        return holds
    # a pair not found different gets an interval at a level of alpha / pairs or below (verdicts.verdict_level), so
    # one wider than this margin allows is never equivalent
    widest = t_isf(alpha / (2 * max(pairs, 1)), n - 1) * (1 - 1e-9)
    se = np.asarray(sd, dtype=np.float64)[rows, columns] / np.sqrt(n)
    possible = np.abs(means[rows] - means[columns]) + widest * se < margin  # the (m, m) differences at these pairs
    rows, columns = rows[possible], columns[possible]
    if not rows.size:
        return holds
    shown = shown_pvalue(np.asarray(pvalues)[rows, columns], alpha)
    d, se = means[rows] - means[columns], np.asarray(sd, dtype=np.float64)[rows, columns] / np.sqrt(n)
    lo, hi = verdict_interval(d, se, n - 1, shown, alpha, pairs)
    equivalent = verdict_words(d, lo, hi, shown, alpha, margin) == "equivalent"
    cross_diff, cross_sd = crossed
    p = np.asarray(favourable)[rows, columns]
    for d2, s2 in ((cross_diff[rows, columns], cross_sd[rows, columns]),  # low_i - high_j
                   (-cross_diff[columns, rows], cross_sd[columns, rows])):  # high_i - low_j
        lo, hi = verdict_interval(d2, s2 / np.sqrt(n), n - 1, p, alpha, pairs)
        equivalent_again = verdict_words(d2, lo, hi, p, alpha, margin) == "equivalent"
        holds[rows, columns] &= ~equivalent | equivalent_again
    np.fill_diagonal(holds, True)  # a model against itself: no verdict
    return holds


def t_pair_robustness(means, spread: tuple[np.ndarray, np.ndarray], n: int, pvalues, alpha: float, correction: str,
                      wanted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """robust_pairs(pvalues, *extreme_pvalues(means, low, high, "t", correction, alpha=alpha)[:2], alpha) for Holm or
    no correction, without either corrected matrix: each family's decisions from holm_decisions on the crossed t's.
    `wanted`: flat indices whose favourable corrected p-values are returned too (robust_verdicts' equivalences)."""
    diff, sd = spread
    m = diff.shape[0]
    pairs = m * (m - 1) // 2 if correction != "none" else 1  # no correction: Holm's steps over one pair
    df = n - 1
    t = crossed_t(diff, sd, n)
    sure = t_isf(alpha / (2 * max(pairs, 1)), df)
    never = t_isf(alpha / 2, df)

    def crossing(i, j):
        return _pair_p(t[i, j], sure, never, df)

    # the adverse ends: the row of higher mean at its low end against the other at its high end (p 1 when that
    # turns the difference round); equal means: the larger of the two crossings
    means = np.asarray(means, dtype=np.float64)
    above = means[:, None] > means[None, :]
    # t where the difference keeps its sign, else 0 or NaN (inf or the diagonal's -inf times 0): like -inf, neither
    # beyond `never` > 0 nor `sure`, all holm_decisions reads of a key, and without np.where's branch a member
    with np.errstate(invalid="ignore"):
        kept = np.multiply(t, diff > 0)
    adverse_key = np.where(above, kept, kept.T)
    level = (means[:, None] == means[None, :])
    np.fill_diagonal(level, False)
    if level.any():
        rows, columns = np.nonzero(level)
        adverse_key[rows, columns] = np.minimum(t[rows, columns], t[columns, rows])

    def adverse_p(i, j):
        top = np.where(means[i] > means[j], i, j)
        other = np.where(means[i] > means[j], j, i)
        p = np.where(diff[top, other] > 0, crossing(top, other), 1.0)
        same = means[i] == means[j]
        p[same] = np.maximum(crossing(i[same], j[same]), crossing(j[same], i[same]))
        return p

    adverse, _ = holm_decisions(adverse_key, adverse_p, df, alpha, pairs)
    favourable_key = np.maximum(t, t.T, out=kept)  # kept's memory, read by nothing more
    favourable, values = holm_decisions(favourable_key, lambda i, j: np.minimum(crossing(i, j), crossing(j, i)),
                                        df, alpha, pairs, wanted)
    robust = np.where(np.asarray(pvalues) < alpha, adverse, ~favourable)
    np.fill_diagonal(robust, True)
    return robust, values


def board_robustness(low, high, ranked, pvalues, best, b: int | None, tests: stats.TestSettings,
                     margin: float, against: tuple[np.ndarray, np.ndarray] | None = None,
                     values=None, pair_sd=None) -> BoardRobustness:
    """The flags of a dataset's board: `low`/`high` its (models, queries) per-query bounds (low = high for a result
    without bounds), `ranked` the rows with a rank, `pvalues` its corrected pairwise p-values, `best` its ★ rows,
    `against`: (mean difference, SD of the per-query differences) of every row against row `b`, when known.
    With `values` (the (models, queries) values the verdicts are made on) and `pair_sd` (the SDs of every pair's
    per-query differences), every pair's flag too (`pairs`, equivalence_holds)."""
    from leaderboard.analysis.verdicts import family_size, shown_pvalue

    low = np.asarray(low, dtype=np.float64)
    high = np.asarray(high, dtype=np.float64)
    m, n = low.shape
    flags = BoardRobustness(np.ones(m, dtype=bool), np.ones(m, dtype=bool), np.ones(m, dtype=bool))
    if np.array_equal(low, high):  # nothing unjudged: nothing can flip
        return flags
    crossings = Crossings.of(low, high)
    flags = dataclasses.replace(flags, crossings=crossings)
    if n < 2 or m < 2:  # no test: nothing can flip
        return flags
    means = low.mean(axis=1)
    spread = crossings.diff(), crossings.sd
    words = family = None
    if b is not None:
        if against is None:
            from leaderboard.analysis.effects import spread as plain_spread

            against = tuple(part[:, b] for part in plain_spread(low))
        diff, sd = against
        family = family_size(m, tests.correction)
        shown = shown_pvalue(pvalues[:, b], tests.alpha)
        lo, hi = verdict_interval(diff, sd / np.sqrt(n), n - 1, shown, tests.alpha, family)
        words = verdict_words(diff, lo, hi, shown, tests.alpha, margin)
    pair_flags = values is not None and pair_sd is not None
    if pair_flags:
        means_shown = np.asarray(values, dtype=np.float64).mean(axis=1)
        close = close_pairs(means_shown, pvalues, tests.alpha, margin)
    if tests.method == "t" and tests.correction in ("holm", "none"):
        # only the decisions at alpha, and the favourable p-values the equivalences read (equivalence_holds' pairs,
        # the rows equivalent to b): the other entries of `favourable` stand at 1, read by nothing
        wanted = [np.flatnonzero(words == "equivalent") * m + b] if words is not None else []
        if pair_flags:
            wanted.append(np.flatnonzero(close))
        if wanted:  # their union, sorted (a mask: np.unique's sort of a million indices is slower)
            mask = np.zeros(m * m, dtype=bool)
            for part in wanted:
                mask[part] = True
            wanted = np.flatnonzero(mask)
        else:
            wanted = None
        pairs, found = t_pair_robustness(means, spread, n, pvalues, tests.alpha, tests.correction, wanted)
        favourable = np.ones((m, m))
        if wanted is not None:
            favourable.ravel()[wanted] = np.abs(found)
            if (found < 0).any() and not _same_levels(spread, n, wanted[found < 0], -found[found < 0], tests.alpha,
                                                        family_size(m, tests.correction)):
                favourable = extreme_pvalues(means, low, high, "t", tests.correction, spread=spread,
                                             alpha=tests.alpha)[1]
    else:
        adverse, favourable, _ = extreme_pvalues(means, low, high, tests.method, tests.correction, tests.resamples,
                                                 tests.seed, spread, tests.alpha)
        pairs = robust_pairs(pvalues, adverse, favourable, tests.alpha)
    if tests.method == "t" and family_size(m, tests.correction) * tests.alpha < 1:
        # the decision-only p-values stand at 1 where no correction over so few pairs can reject, and an
        # equivalence's interval reads the corrected value itself (verdicts.verdict_level): the exact one
        favourable = _exact_favourable(spread, n, tests.correction)
    favourable_b = favourable[:, b] if b is not None else None
    if pair_flags:
        flags = dataclasses.replace(flags, pairs=pairs & equivalence_holds(
            means_shown, pair_sd, n, pvalues, spread, favourable, tests.alpha, family_size(m, tests.correction),
            margin, close))
    rows = np.flatnonzero(np.asarray(ranked, dtype=bool))
    if rows.size == m:
        flags.rank[:] = pairs.all(axis=1)
        flags.best[:] = robust_best(np.asarray(best, dtype=bool), low, high, tests.alpha, spread)
    elif rows.size:
        flags.rank[rows] = pairs[np.ix_(rows, rows)].all(axis=1)
        among = (spread[0][np.ix_(rows, rows)], spread[1][np.ix_(rows, rows)])
        flags.best[rows] = robust_best(np.asarray(best, dtype=bool)[rows], low[rows], high[rows], tests.alpha, among)
    if b is not None:
        flags.verdict[:] = robust_verdicts(words, b, low, high, pairs, favourable_b, tests.alpha, margin, family,
                                           spread)
    return flags
