import numpy as np
import pytest
from scipy import stats as scipy_stats
from scipy.stats import rankdata

from leaderboard.analysis import stats
from leaderboard.analysis.aggregate import (
    ALL_GROUP,
    DatasetInfo,
    SiteSettings,
    bootstrap_means,
    build_leaderboard,
    dataset_info,
    dataset_seed,
    find_baseline,
    is_zero_shot,
    percentile_ci,
)
from leaderboard.analysis.ranks import rank_ranges, tie_bands
from leaderboard.submissions.load import load_results
from leaderboard.submissions.loaded import ModelInfo


@pytest.fixture(scope="module")
def board(synth):
    loaded = load_results(synth.GOLDEN_RESULTS, is_verified=synth.golden_verification)
    warnings = []
    return build_leaderboard(loaded.results, SiteSettings(), synth.golden_lookup, warnings), warnings


def _model(training=()):
    return ModelInfo("org/m", "dense", "", None, None, "", True, tuple(training), "")


def test_batched_bootstrap_gives_stats_bootstrap_ci_for_every_row():
    rng = np.random.default_rng(3)
    scores = np.round(rng.random((4, 57)), 4)
    scores[3] = 0.25  # constant row: zero-width interval
    ci = percentile_ci(bootstrap_means(scores, 10_000, 0), scores)
    for row, (low, high) in zip(scores, ci, strict=True):
        expected = stats.bootstrap_ci(row, "percentile", 10_000, 0)
        assert low == pytest.approx(expected[0], abs=1e-6)
        assert high == pytest.approx(expected[1], abs=1e-6)


def test_bootstrap_draws_span_several_blocks_like_stats():
    scores = np.random.default_rng(5).random((2, 3000))  # 2**22 // 3000 = 1398 resamples per block
    ci = percentile_ci(bootstrap_means(scores, 5_000, 11), scores)
    expected = stats.bootstrap_ci(scores[1], "percentile", 5_000, 11)
    assert ci[1] == pytest.approx(expected, abs=1e-6)


def test_dataset_statistics_match_stats_module(board):
    leaderboard, _ = board
    tests = leaderboard.settings.tests
    for dataset in leaderboard.datasets:
        scores = np.stack([r.per_query[dataset.info.main_metric] for r in dataset.results])
        np.testing.assert_allclose(dataset.means, scores.mean(axis=1))
        verified = dataset.ranked
        assert list(verified) == sorted(verified, reverse=True)  # verified results first
        for part in (dataset.means[verified], dataset.means[~verified]):
            assert list(part) == sorted(part, reverse=True)
        seed = dataset_seed(tests.seed, dataset.info.id)
        expected = stats.pairwise_pvalues(scores, tests.method, tests.correction, tests.resamples, seed)
        np.testing.assert_array_equal(dataset.pvalues, expected)
        np.testing.assert_array_equal(dataset.ci, stats.score_intervals(scores))
        # rank ranges and tie bands among the verified results alone
        among = expected[np.ix_(verified, verified)]
        ranges = rank_ranges(dataset.means[verified], among, tests.alpha)
        np.testing.assert_array_equal(dataset.rank_range[verified], ranges)
        np.testing.assert_array_equal(dataset.band[verified], tie_bands(dataset.means[verified], among, tests.alpha))
        # the best set (★): no verified result better in scipy's one-sided paired t-test at alpha / (verified - 1)
        rows = np.flatnonzero(verified)
        level = tests.alpha / (rows.size - 1)
        best = [not any(scipy_stats.ttest_rel(scores[j], scores[i], alternative="greater").pvalue < level
                        for j in rows if j != i) for i in rows]
        assert dataset.best_set[verified].tolist() == best
        assert not dataset.best_set[~verified].any() and not dataset.rank_range[~verified].any()
        baseline = dataset.baseline
        b = dataset.model_ids.index("bm25")
        for i in range(len(dataset.results)):
            assert (baseline.wins[i], baseline.ties[i], baseline.losses[i]) == stats.wins_ties_losses(
                scores[i], scores[b])
            assert baseline.diff[i] == pytest.approx(scores[i].mean() - scores[b].mean())
            assert baseline.pvalue[i] == expected[i, b]


def test_rank_ranges_count_significantly_better_and_worse_models():
    means = np.array([0.5, 0.4, 0.3])
    p = np.array([[1.0, 0.2, 0.01], [0.2, 1.0, 0.03], [0.01, 0.03, 1.0]])
    # model 0: none better; worse and significant: model 2 -> worst rank 3 - 1 = 2
    assert rank_ranges(means, p, 0.05).tolist() == [[1, 2], [1, 2], [3, 3]]


def test_group_means_only_for_complete_coverage_with_units(board, synth):
    leaderboard, _ = board
    beir = next(g for g in leaderboard.groups if g.name == "BEIR")
    assert "org/partial-model" not in beir.scores and beir.coverage["org/partial-model"] == 2
    assert beir.coverage["test/markup-in-metadata"] == 1
    means = {d.info.id: dict(zip(d.model_ids, d.means, strict=True)) for d in leaderboard.datasets}
    for model_id, score in beir.scores.items():
        cqa = (means["beir/cqadupstack/android"][model_id] + means["beir/cqadupstack/english"][model_id]) / 2
        expected = (cqa + means["beir/nfcorpus"][model_id] + means["beir/scifact"][model_id]) / 3
        assert score.mean == pytest.approx(expected)
        assert score.ci[0] <= score.mean <= score.ci[1]
    everything = next(g for g in leaderboard.groups if g.name == ALL_GROUP)
    assert len(everything.dataset_ids) == len(synth.GOLDEN_DATASETS)
    assert set(everything.scores) == {m.id for m in synth.GOLDEN_MODELS if m.datasets is None}


def test_group_of_one_dataset_has_that_datasets_mean_and_ci(board):
    leaderboard, _ = board
    classic = next(g for g in leaderboard.groups if g.name == "Classic")
    dataset = leaderboard.dataset("classic/cranfield")
    for i, model_id in enumerate(dataset.model_ids):
        assert classic.scores[model_id].mean == pytest.approx(dataset.means[i])
        assert classic.scores[model_id].ci == pytest.approx(tuple(dataset.ci[i]), abs=1e-12)


def test_mean_rank_is_the_weighted_mean_of_ranks_among_complete_models(board):
    leaderboard, _ = board
    mmarco = next(g for g in leaderboard.groups if g.name == "mMARCO")
    complete = sorted(mmarco.scores)
    ranks = []
    for dataset_id in mmarco.dataset_ids:
        dataset = leaderboard.dataset(dataset_id)
        means = [dataset.means[dataset.model_ids.index(m)] for m in complete]
        ranks.append(rankdata(-np.array(means), method="average"))
    expected = np.mean(ranks, axis=0)
    assert [mmarco.scores[m].mean_rank for m in complete] == pytest.approx(list(expected))


def test_results_are_ranked_on_what_was_re_scored(board, synth):
    """Trust per metric (issue 44): a result is ranked on a dataset whenever its main metric was re-scored; another
    value that was not, or that rests on claimed ranks, never demotes it (it is marked on its own); one without a
    re-scored main metric is unranked, and so is its model in the groups of that dataset."""
    leaderboard, _ = board
    scifact = leaderboard.dataset("beir/scifact")
    assert set(scifact.model_ids[-2:]) == {"test/markup-in-metadata", "org/partial-model"}
    assert not scifact.ranked[-2:].any() and scifact.ranked[:-2].all() and scifact.rank_range[:-2].min() == 1
    bge = scifact.results[scifact.position["BAAI/bge-m3"]]  # its R@100 rests on claimed ranks: still ranked
    assert scifact.ranked[scifact.position["BAAI/bge-m3"]] and bge.tier_of("R@100") == "rests on claimed ranks"
    # splade's R@100 on nfcorpus is not re-scored, its nDCG@10 is: ranked, as every model but the unverified one
    nfcorpus = leaderboard.dataset("beir/nfcorpus")
    assert set(np.array(nfcorpus.model_ids)[~nfcorpus.ranked]) == {"org/partial-model"}
    splade = nfcorpus.results[nfcorpus.position["naver/splade-v3"]]
    assert (splade.tier_of("nDCG@10"), splade.tier_of("R@100")) == ("re-scored", "self-reported")
    # bm25's main metric on miracl/fi is not re-scored: a MIRACL mean, but no mean rank; the others are ranked
    miracl = next(g for g in leaderboard.groups if g.name == "MIRACL")
    assert miracl.scores["bm25"].mean is not None and miracl.scores["bm25"].mean_rank is None
    ranked = sorted(m for m, score in miracl.scores.items() if score.mean_rank is not None)
    assert ranked == sorted(set(miracl.scores) - {"bm25"})
    ranks = [rankdata(-np.array([d.means[d.model_ids.index(m)] for m in ranked]), method="average")
             for d in map(leaderboard.dataset, miracl.dataset_ids)]
    assert [miracl.scores[m].mean_rank for m in ranked] == pytest.approx(list(np.mean(ranks, axis=0)))
    models = {m.info.id: m for m in leaderboard.models}
    assert [models[m].verified for m in ("bm25", "org/partial-model", "BAAI/bge-m3")] == ["some", "none", "all"]
    assert [models[m].tier for m in ("bm25", "org/partial-model", "BAAI/bge-m3")] == ["self-reported"] * 2 + \
        ["re-scored"]


def test_zero_shot_follows_training_datasets():
    scifact = DatasetInfo("beir/scifact", "scifact", "BEIR", "en", "nDCG@10")
    android = DatasetInfo("beir/cqadupstack/android", "cqadupstack/android", "BEIR", "en", "nDCG@10")
    swahili = DatasetInfo("miracl/sw", "sw", "MIRACL", "sw", "nDCG@10")
    assert is_zero_shot(_model(["msmarco", "nq"]), scifact)
    assert not is_zero_shot(_model(["SciFact"]), scifact)
    assert not is_zero_shot(_model(["beir/scifact"]), scifact)
    assert not is_zero_shot(_model(["cqadupstack"]), android)
    assert is_zero_shot(_model(["cqadupstack"]), scifact)
    assert not is_zero_shot(_model(["MIRACL"]), swahili)


def test_dataset_info_uses_the_registry_and_falls_back_to_other():
    assert dataset_info("beir/scifact").group == "BEIR"
    assert dataset_info("mmarco/fr").main_metric == "RR@10"
    unknown = dataset_info("nowhere/at-all")
    assert (unknown.group, unknown.main_metric, unknown.name) == ("Other", "nDCG@10", "nowhere/at-all")


def test_find_baseline_by_id_or_unique_last_segment():
    assert find_baseline(["a/b", "bm25"], "bm25") == "bm25"
    assert find_baseline(["a/b", "irboard/BM25"], "bm25") == "irboard/BM25"
    assert find_baseline(["x/bm25", "y/bm25"], "bm25") is None


def test_missing_main_metric_leaves_the_model_out_with_a_warning(board, synth):
    leaderboard, _ = board
    loaded = load_results(synth.GOLDEN_RESULTS)

    def lookup(dataset_id):
        info = synth.golden_lookup(dataset_id)
        return DatasetInfo(info.id, info.name, info.group, info.language, "AP") if dataset_id == "custom/tiny" else info

    warnings = []
    changed = build_leaderboard(loaded.results, SiteSettings(), lookup, warnings)
    assert all(d.info.id != "custom/tiny" for d in changed.datasets)
    assert sum("custom/tiny" in w and "AP" in w for w in warnings) == 10
    assert leaderboard.warnings == ()


def test_no_baseline_gives_a_warning_and_no_comparisons(synth):
    loaded = load_results(synth.GOLDEN_RESULTS)
    warnings = []
    board = build_leaderboard(loaded.results, SiteSettings(baseline="no-such-model"), synth.golden_lookup, warnings)
    assert board.baseline_id is None and all(d.baseline is None for d in board.datasets)
    assert len(warnings) == 1 and "no-such-model" in warnings[0]


def test_percentile_settings_give_the_bootstrap_intervals(synth):
    loaded = load_results(synth.GOLDEN_RESULTS).results
    settings = SiteSettings(tests=stats.TestSettings(ci_method="percentile", ci_resamples=2_000))
    board = build_leaderboard([r for r in loaded if r.dataset_id == "miracl/fi"], settings, synth.golden_lookup)
    dataset = board.dataset("miracl/fi")
    seed = dataset_seed(0, "miracl/fi")
    np.testing.assert_array_equal(dataset.ci, percentile_ci(bootstrap_means(dataset.scores, 2_000, seed), dataset.scores))


def test_bca_intervals_come_from_stats_bootstrap_ci(synth):
    loaded = load_results(synth.GOLDEN_RESULTS).results
    settings = SiteSettings(tests=stats.TestSettings(ci_method="bca", ci_resamples=2_000))
    board = build_leaderboard([r for r in loaded if r.dataset_id == "miracl/fi"], settings, synth.golden_lookup)
    dataset = board.dataset("miracl/fi")
    for row, interval in zip(dataset.scores, dataset.ci, strict=True):
        assert tuple(interval) == stats.bootstrap_ci(row, "bca", 2_000, dataset_seed(0, "miracl/fi"))


def test_datasets_draw_their_own_resamples():
    """Equally many queries must not mean the same resample indices: each dataset's seed mixes in its id."""
    seeds = {dataset_seed(0, name) for name in ("beir/scifact", "beir/nfcorpus", "classic/cisi")}
    assert len(seeds) == 3 and dataset_seed(0, "beir/scifact") == dataset_seed(0, "beir/scifact")
    assert dataset_seed(1, "beir/scifact") != dataset_seed(0, "beir/scifact")
    scores = np.random.default_rng(3).random((2, 50))
    a = bootstrap_means(scores, 200, dataset_seed(0, "beir/scifact"))
    b = bootstrap_means(scores, 200, dataset_seed(0, "beir/nfcorpus"))
    assert not np.array_equal(a, b)
