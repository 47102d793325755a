"""Judgment-robust verdicts (analysis/robust.py): the crossed tests equal scipy's on the crossed values; a verdict
that the bounds can turn round is not robust, one they cannot move is; best-set exclusions and inclusions likewise;
the board's flags equal their definitions computed pair by pair (scipy, statsmodels) on random boards."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from leaderboard.analysis import stats
from leaderboard.analysis.effects import spread
from leaderboard.analysis.ranks import best_set
from leaderboard.analysis.robust import (
    Crossings,
    board_robustness,
    cross_pvalues,
    cross_spread,
    equivalence_holds,
    extreme_pvalues,
    robust_best,
    robust_pairs,
    robust_verdicts,
    t_pair_robustness,
)
from leaderboard.analysis.verdicts import shown_pvalue, verdict_interval, verdict_words

ALPHA = 0.05


def _scores(rng, models=5, queries=40):
    shift = np.linspace(0.0, 0.3, models)[:, None]
    return np.clip(rng.random(queries) * 0.5 + shift + rng.normal(0, 0.1, (models, queries)), 0, 1)


def test_the_crossed_t_test_is_scipys_paired_t_test_of_low_against_high():
    rng = np.random.default_rng(3)
    low = _scores(rng)
    high = np.minimum(low + rng.random(low.shape) * 0.2, 1)
    p = cross_pvalues(low, high, "t")
    for i in range(len(low)):
        for j in range(len(low)):
            assert abs(p[i, j] - scipy_stats.ttest_rel(low[i], high[j]).pvalue) < 1e-9
    diff, sd = cross_spread(low, high)
    assert abs(diff[1, 3] - (low[1].mean() - high[3].mean())) < 1e-12
    assert abs(sd[1, 3] - np.std(low[1] - high[3], ddof=1)) < 1e-12
    wilcoxon = cross_pvalues(low, high, "wilcoxon")
    assert abs(wilcoxon[0, 4] - scipy_stats.wilcoxon(low[0] - high[4]).pvalue) < 1e-9


def test_the_adverse_family_is_holm_over_each_pair_at_its_adverse_ends():
    rng = np.random.default_rng(4)
    low = _scores(rng)
    high = np.minimum(low + 0.02, 1)
    means = low.mean(axis=1)
    adverse, favourable, crossing = extreme_pvalues(means, low, high, "t", "holm")
    first, second = np.triu_indices(len(low), k=1)
    raw_adverse = [crossing[i, j] if means[i] > means[j] else crossing[j, i] for i, j in zip(first, second, strict=True)]
    assert np.allclose(adverse[first, second], multipletests(raw_adverse, method="holm")[1])
    raw_favourable = [min(crossing[i, j], crossing[j, i]) for i, j in zip(first, second, strict=True)]
    assert np.allclose(favourable[first, second], multipletests(raw_favourable, method="holm")[1])


def _verdicts(low, high, b=0, margin=0.01):
    n = low.shape[1]
    pvalues = stats.pairwise_pvalues(low, "t", "holm")
    diff, sd = spread(low)
    lo, hi = verdict_interval(diff[:, b], sd[:, b] / np.sqrt(n), n - 1, pvalues[:, b], ALPHA, 10)
    words = verdict_words(diff[:, b], lo, hi, pvalues[:, b], ALPHA, margin)
    adverse, favourable, _ = extreme_pvalues(low.mean(axis=1), low, high, "t", "holm")
    pairs = robust_pairs(pvalues, adverse, favourable, ALPHA)
    return words, robust_verdicts(words, b, low, high, pairs, favourable[:, b], ALPHA, margin, 10)


def test_without_holes_every_verdict_is_robust_and_a_hole_that_turns_one_round_is_marked():
    rng = np.random.default_rng(5)
    low = _scores(rng)
    words, robust = _verdicts(low, low.copy())
    assert set(words[1:]) & {"better"} and robust.all()
    # the baseline's unjudged documents could all be relevant: at its high end it passes the best model
    high = low.copy()
    high[0] = 1.0
    words, robust = _verdicts(low, high)
    assert words[4] == "better" and not robust[4]
    # a small hole does not move a large difference
    high = low.copy()
    high[0] = low[0] + 0.001
    words, robust = _verdicts(low, high)
    assert words[4] == "better" and robust[4]


def test_no_difference_is_robust_only_when_neither_crossing_makes_one():
    rng = np.random.default_rng(6)
    base = rng.random(60)
    low = np.stack([base, np.clip(base + rng.normal(0, 0.05, 60), 0, 1)])
    words, robust = _verdicts(low, low.copy(), margin=0.0)
    assert words[1] == "undetermined" and robust[1]
    high = low.copy()
    high[1] = np.minimum(low[1] + 0.3, 1)  # the model's holes could make it much better
    words, robust = _verdicts(low, high, margin=0.0)
    assert words[1] == "undetermined" and not robust[1]


def test_a_best_set_exclusion_holds_only_when_the_excluded_model_at_its_high_end_is_still_beaten():
    rng = np.random.default_rng(8)
    low = _scores(rng, models=4, queries=50)
    n = low.shape[1]
    diff, sd = spread(low)
    best = best_set(low.mean(axis=1), diff, sd / np.sqrt(n), n - 1, ALPHA)
    assert best.tolist() == [False, False, False, True]
    assert robust_best(best, low, low.copy(), ALPHA).all()
    high = low.copy()
    high[0] = 1.0  # model 0 could be the best
    robust = robust_best(best, low, high, ALPHA)
    assert robust.tolist() == [False, True, True, False]  # its exclusion and the best's inclusion could flip


def test_the_decision_only_p_values_give_every_corrected_decision_of_the_exact_ones():
    rng = np.random.default_rng(9)
    low = _scores(rng, models=30, queries=30)
    high = np.minimum(low + rng.uniform(0, 0.05, low.shape), 1)
    exact = cross_pvalues(low, high, "t")
    pairs = 30 * 29 // 2
    quick = cross_pvalues(low, high, "t", alpha=ALPHA, pairs=pairs)
    assert ((quick == 0) | (quick == 1) | (quick == exact)).all() and ((quick == 0) | (quick == 1)).any()
    for correction in ("holm", "bh", "none"):
        a = stats.corrected_matrix(np.minimum(exact, exact.T), correction) < ALPHA
        b = stats.corrected_matrix(np.minimum(quick, quick.T), correction) < ALPHA
        assert np.array_equal(a, b)


def _reference_flags(low, high, ranked, pvalues, best, b, correction, margin):
    """The flags from their definitions (docs/statistics.md, "Verdicts over the holes"), pair by pair: scipy's
    paired t-test of every crossing, statsmodels' correction over each family, Bonferroni's one-sided test for the
    best set."""
    m, n = low.shape
    crossing = scipy_stats.ttest_rel(low[:, None, :], high[None, :, :], axis=-1).pvalue  # low_i against high_j
    means = low.mean(axis=1)
    first, second = np.triu_indices(m, k=1)
    adverse_raw, favourable_raw = [], []
    for i, j in zip(first, second, strict=True):
        top, other = (i, j) if means[i] > means[j] else (j, i)
        kept = low[top].mean() - high[other].mean() > 0  # the higher one at its low end still ahead
        adverse_raw.append(crossing[top, other] if kept else 1.0)
        favourable_raw.append(min(crossing[i, j], crossing[j, i]))
    if correction == "none":
        adjust = np.asarray
    else:
        adjust = lambda p: multipletests(p, method={"holm": "holm", "bh": "fdr_bh"}[correction])[1]  # noqa: E731
    adverse, favourable = np.ones((m, m)), np.ones((m, m))
    adverse[first, second] = adverse[second, first] = adjust(np.array(adverse_raw))
    favourable[first, second] = favourable[second, first] = adjust(np.array(favourable_raw))
    holds = np.where(pvalues < ALPHA, adverse < ALPHA, favourable >= ALPHA)
    np.fill_diagonal(holds, True)
    rows = np.flatnonzero(ranked)
    rank = np.ones(m, dtype=bool)
    rank[rows] = holds[np.ix_(rows, rows)].all(axis=1)
    best_holds = np.ones(m, dtype=bool)
    level = ALPHA / (rows.size - 1) if rows.size > 1 else 0.0
    for i in rows:  # one-sided: some model beats i (its low end against i's high end, or the reverse)
        others = [j for j in rows if j != i]
        if best[i]:
            best_holds[i] = not any(scipy_stats.ttest_rel(high[j], low[i], alternative="greater").pvalue < level
                                    for j in others)
        else:
            best_holds[i] = any(scipy_stats.ttest_rel(low[j], high[i], alternative="greater").pvalue < level
                                for j in others)
    verdict = np.ones(m, dtype=bool)
    if b is not None:
        family = 1 if correction == "none" else m * (m - 1) // 2
        diff, sd = spread(low)
        shown = shown_pvalue(pvalues[:, b], ALPHA)
        lo, hi = verdict_interval(diff[:, b], sd[:, b] / np.sqrt(n), n - 1, shown, ALPHA, family)
        words = verdict_words(diff[:, b], lo, hi, shown, ALPHA, margin)
        verdict = holds[:, b].copy()
        for i in np.flatnonzero(words == "equivalent"):
            for a, c in ((low[i], high[b]), (high[i], low[b])):  # both crossings' intervals within the margin
                d = a - c
                lo, hi = verdict_interval(d.mean(), d.std(ddof=1) / np.sqrt(n), n - 1, favourable[i, b], ALPHA, family)
                verdict[i] &= favourable[i, b] >= ALPHA and -margin < lo and hi < margin
        verdict[b] = True
    return verdict, best_holds, rank


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), models=st.integers(2, 9), queries=st.integers(4, 40),
       correction=st.sampled_from(["holm", "none", "bh"]), hole=st.sampled_from([0.0, 0.005, 0.03, 0.2]),
       baseline=st.booleans())
def test_the_flags_are_their_definitions_computed_pair_by_pair(seed, models, queries, correction, hole, baseline):
    rng = np.random.default_rng(seed)
    low = np.clip(rng.random(queries) * 0.4 + rng.uniform(0, 0.3, (models, 1))
                  + rng.normal(0, 0.05, (models, queries)), 0, 1)
    high = np.minimum(low + rng.uniform(0, hole, low.shape) * (rng.random((models, 1)) < 0.7), 1)
    ranked = rng.random(models) < 0.8
    pvalues = stats.pairwise_pvalues(low, "t", correction)
    n = queries
    diff, sd = spread(low)
    best = np.zeros(models, dtype=bool)
    rows = np.flatnonzero(ranked)
    best[rows] = best_set(low.mean(axis=1)[rows], diff[np.ix_(rows, rows)], sd[np.ix_(rows, rows)] / np.sqrt(n), n - 1,
                          ALPHA)
    b = int(rng.integers(models)) if baseline else None
    margin = 0.05  # wide enough for equivalences
    tests = stats.TestSettings(correction=correction, alpha=ALPHA)
    flags = board_robustness(low, high, ranked, pvalues, best, b, tests, margin)
    if np.array_equal(low, high):
        assert flags.all_hold
        return
    verdict, best_holds, rank = _reference_flags(low, high, ranked, pvalues, best, b, correction, margin)
    assert flags.verdict.tolist() == verdict.tolist()
    assert flags.best.tolist() == best_holds.tolist()
    assert flags.rank.tolist() == rank.tolist()


def test_the_decisions_from_the_crossed_t_equal_both_corrected_families_on_a_large_board():
    """t_pair_robustness (Holm's decisions computed only where its steps reach) against robust_pairs over
    extreme_pvalues' whole corrected matrices: every pair, and the favourable p-values an equivalence reads."""
    rng = np.random.default_rng(11)
    models, queries = 120, 60
    low = np.clip(rng.random(queries) * 0.4 + np.linspace(0, 0.3, models)[:, None]
                  + rng.normal(0, 0.08, (models, queries)), 0, 1)
    high = np.minimum(low + rng.uniform(0, 0.04, low.shape), 1)
    means = low.mean(axis=1)
    pvalues = stats.pairwise_pvalues(low, "t", "holm")
    pairs = 120 * 119 // 2
    for correction in ("holm", "none"):
        adverse, favourable, _ = extreme_pvalues(means, low, high, "t", correction, alpha=ALPHA)
        wanted = np.arange(models) * models + 7  # every row against row 7
        robust, values = t_pair_robustness(means, cross_spread(low, high), queries, pvalues, ALPHA, correction, wanted)
        assert np.array_equal(robust, robust_pairs(pvalues, adverse, favourable, ALPHA))
        known = values >= 0  # the others were never computed: not rejected, at most -value (holm_decisions)
        assert np.array_equal(values[known], favourable[known, 7])
        assert (favourable[~known, 7] >= ALPHA).all() and (favourable[~known, 7] <= -values[~known]).all()
        assert 0 < (~robust).sum() < pairs  # some pair decisions could flip, not all


def test_every_pair_flag_on_a_large_board_is_the_one_from_the_exact_corrected_matrices():
    """board_robustness' pair flags (decisions and the favourable p-values an equivalence reads computed only where
    they can matter, robust._flat_p and _same_levels) against robust_pairs and equivalence_holds over
    extreme_pvalues' exact matrices, on a board of many close models (equivalences whose crossings leave the
    margin and others that stay)."""
    rng = np.random.default_rng(12)
    models, queries = 80, 60
    low = np.clip(rng.random(queries) * 0.4 + np.linspace(0, 0.1, models)[:, None]
                  + rng.normal(0, 0.03, (models, queries)), 0, 1)
    high = np.minimum(low + rng.uniform(0, 0.01, low.shape) * (rng.random((models, 1)) < 0.5), 1)
    means = low.mean(axis=1)
    pvalues = stats.pairwise_pvalues(low, "t", "holm")
    _, sd = spread(low)
    margin = 0.03
    tests = stats.TestSettings(correction="holm", alpha=ALPHA)
    flags = board_robustness(low, high, np.ones(models, dtype=bool), pvalues, np.zeros(models, dtype=bool), 0, tests,
                             margin, values=low, pair_sd=sd)
    adverse, favourable, _ = extreme_pvalues(means, low, high, "t", "holm")
    pairs = models * (models - 1) // 2
    expected = robust_pairs(pvalues, adverse, favourable, ALPHA) & equivalence_holds(
        means, sd, queries, pvalues, cross_spread(low, high), favourable, ALPHA, pairs, margin)
    assert np.array_equal(flags.pairs, expected)
    close = (pvalues >= ALPHA) & (np.abs(means[:, None] - means[None, :]) < margin)
    shown = shown_pvalue(pvalues, ALPHA)
    lo, hi = verdict_interval(means[:, None] - means[None, :], sd / np.sqrt(queries), queries - 1, shown, ALPHA, pairs)
    equivalent = close & (verdict_words(means[:, None] - means[None, :], lo, hi, shown, ALPHA, margin) == "equivalent")
    assert equivalent.any() and (equivalent & ~expected).any() and (equivalent & expected).any()


def test_a_datasets_crossings_among_some_rows_are_those_of_the_rows_bounds():
    rng = np.random.default_rng(13)
    low = _scores(rng, models=9, queries=30)
    high = np.minimum(low + rng.uniform(0, 0.05, low.shape) * (np.arange(9) % 3 == 0)[:, None], 1)
    crossings = Crossings.of(low, high)
    rows = np.array([7, 3, 4, 1])
    diff, sd = cross_spread(low[rows], high[rows])
    got_diff, got_variance = crossings.among(rows)
    assert np.array_equal(got_diff, diff) and np.array_equal(got_variance, np.square(sd))  # the same bits
    out = (np.full((4, 4), np.nan), np.full((4, 4), np.nan))
    assert all(np.array_equal(a, b) for a, b in zip(crossings.among(rows, out=out), (diff, np.square(sd)), strict=True))
    block = (np.full((2, 4), np.nan), np.full((2, 4), np.nan))  # rows 1 and 2 of it against all, into `block`
    got = crossings.among(rows, slice(1, 3), block)
    assert all(a is b for a, b in zip(got, block, strict=True))
    assert np.array_equal(got[0], diff[1:3]) and np.array_equal(got[1], np.square(sd[1:3]))
    assert crossings.unjudged(rows) and not crossings.unjudged([1, 2, 4])  # rows 0, 3, 6 have bounds apart
    one = Crossings.of(low[:, :1], high[:, :1]).among(rows)  # one query: the group's test has no variance either
    assert np.array_equal(one[0], low[rows, :1] - high[rows, 0]) and not one[1].any()
