"""Recall-at-scale prediction, checked against the self-check tables of ../shared/design/sdm.md §4 and §6."""

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from evaluator.errors import IrboardError
from evaluator.score_samples import (
    QueryScoreSamples,
    ScoreSamples,
    collect_score_samples,
    decode_score_samples,
    encode_score_samples,
)
from leaderboard.analysis.scale import (
    CannotPredictError,
    HybridTail,
    fit_score_model,
    fit_skewnorm,
    forecast,
    plugin_recall,
    solve_threshold,
)

RELEVANT = stats.norm(0.40, 0.10)
NONRELEVANT = stats.norm(0.00, 0.10)

# sdm.md §6.1: (N non-relevant, k, tau_k, plug-in Recall@k, exact E[Recall@k]); R = 10.
NORMAL_TABLE = [
    (1e4, 1, 0.528192, 0.099936, 0.099598),
    (1e4, 10, 0.344221, 0.711507, 0.712274),
    (1e4, 100, 0.236353, 0.949129, 0.949216),
    (1e4, 1000, 0.128725, 0.996664, 0.996663),
    (1e5, 1, 0.528514, 0.099372, 0.096992),
    (1e5, 10, 0.390885, 0.536314, 0.535415),
    (1e5, 100, 0.311529, 0.811843, 0.812029),
    (1e5, 1000, 0.232994, 0.952547, 0.952554),
    (1e6, 1, 0.531292, 0.094606, 0.086175),
    (1e6, 10, 0.436293, 0.358330, 0.356717),
    (1e6, 100, 0.373474, 0.604595, 0.604691),
    (1e6, 1000, 0.309267, 0.817884, 0.817901),
    (1e7, 10, 0.480122, 0.211501, 0.209992),
    (1e7, 100, 0.427381, 0.392114, 0.392062),
    (1e7, 1000, 0.372056, 0.610046, 0.610056),
    (1e8, 1, 0.571029, 0.043607, 0.037362),
    (1e8, 10, 0.522117, 0.111011, 0.109979),
    (1e8, 100, 0.475801, 0.224224, 0.224112),
    (1e8, 1000, 0.426577, 0.395206, 0.395202),
]
EXACT = {(n, k): exact for n, k, _, _, exact in NORMAL_TABLE}


@pytest.mark.parametrize(("n", "k", "tau", "recall", "_exact"), NORMAL_TABLE)
def test_plugin_recall_reproduces_the_normal_table(n, k, tau, recall, _exact):
    assert solve_threshold(RELEVANT, NONRELEVANT, 10, n, k) == pytest.approx(tau, abs=1e-6)
    assert plugin_recall(RELEVANT, NONRELEVANT, 10, n, [k])[k] == pytest.approx(recall, abs=1e-6)


def test_plugin_recall_without_isf_and_at_full_depth():
    class SurvivalOnly:  # a distribution with nothing but a vectorized sf
        def __init__(self, dist):
            self.sf = dist.sf

    recall = plugin_recall(SurvivalOnly(RELEVANT), SurvivalOnly(NONRELEVANT), 10, 1e7, [1, 10])
    assert recall[1] == pytest.approx(0.074164, abs=1e-6)
    assert recall[10] == pytest.approx(0.211501, abs=1e-6)
    # k at or past the corpus size retrieves everything.
    assert plugin_recall(RELEVANT, NONRELEVANT, 10, 90, [100, 500]) == {100: 1.0, 500: 1.0}


# sdm.md §2.4: parameters hard-coded in the ECIR repository.
REPO_PARAMETERS = {
    "passage": (
        (-1.1354841658575139, 0.5999989559183001, 0.1640972863796495),
        (1.9481929392131, -0.06781844355611863, 0.09664460845810896),
        0.054019863903522494,
        -0.09189467458446031,
        0.055916698480706115,
    ),
    "document": (
        (-0.8149857601520807, 0.43847698142456465, 0.20881832344587004),
        (1.872776999852325, -0.08486812316555292, 0.09372104622741906),
        0.03376907110214234,
        -0.10099099932515726,
        0.05416256408068892,
    ),
}
KS = [10, 20, 50, 100, 200, 500, 1000]
# sdm.md §4.2: predicted Recall@k (hybrid, R = 10, N = S - 110).
HYBRID_TABLE = {
    ("passage", 1e4): [0.8700, 0.9435, 0.9725, 0.9837, 0.9907, 0.9959, 0.9980],
    ("passage", 1e5): [0.7843, 0.8638, 0.9140, 0.9390, 0.9578, 0.9755, 0.9847],
    ("passage", 1e6): [0.6829, 0.7557, 0.8175, 0.8542, 0.8856, 0.9202, 0.9415],
    ("passage", 1e7): [0.5780, 0.6380, 0.6992, 0.7401, 0.7784, 0.8253, 0.8578],
    ("passage", 1e8): [0.4810, 0.5274, 0.5803, 0.6186, 0.6565, 0.7065, 0.7438],
    ("document", 1e4): [0.6109, 0.6868, 0.7605, 0.8073, 0.8487, 0.8956, 0.9249],
    ("document", 1e5): [0.4945, 0.5519, 0.6176, 0.6646, 0.7105, 0.7691, 0.8112],
    ("document", 1e6): [0.3959, 0.4370, 0.4885, 0.5280, 0.5688, 0.6249, 0.6685],
    ("document", 1e7): [0.3185, 0.3472, 0.3851, 0.4153, 0.4474, 0.4933, 0.5307],
}
SKEWNORM_ONLY_TABLE = {
    ("passage", 1e8): [0.6247, 0.7714, 0.8607],
    ("passage", 1e6): [0.8023, 0.9231, 0.9670],
    ("document", 1e7): [0.3965, 0.5125, 0.6216],
}
FOUR_DECIMALS = 5.01e-5


def repo_model(collection):
    relevant, body, threshold, shape, scale = REPO_PARAMETERS[collection]
    body = stats.skewnorm(*body)
    return stats.skewnorm(*relevant), HybridTail(body, threshold, shape, scale)


@pytest.mark.parametrize(("collection", "size"), list(HYBRID_TABLE))
def test_repo_parameters_reproduce_the_hybrid_table(collection, size):
    relevant, hybrid = repo_model(collection)
    recall = plugin_recall(relevant, hybrid, 10, size - 110, KS)
    assert [recall[k] for k in KS] == pytest.approx(HYBRID_TABLE[collection, size], abs=FOUR_DECIMALS)


@pytest.mark.parametrize(("collection", "size"), list(SKEWNORM_ONLY_TABLE))
def test_repo_parameters_without_tail_reproduce_the_skewnorm_table(collection, size):
    relevant, hybrid = repo_model(collection)
    recall = plugin_recall(relevant, hybrid.body, 10, size - 110, [10, 100, 1000])
    assert list(recall.values()) == pytest.approx(SKEWNORM_ONLY_TABLE[collection, size], abs=FOUR_DECIMALS)


def test_repo_parameters_reproduce_thresholds():
    relevant, hybrid = repo_model("passage")
    expected = {1e4: [0.3532, 0.2058, 0.0933], 1e6: [0.4428, 0.3633, 0.2901], 1e8: [0.5120, 0.4661, 0.4185]}
    for size, taus in expected.items():
        got = [solve_threshold(relevant, hybrid, 10, size - 110, k) for k in (10, 100, 1000)]
        assert got == pytest.approx(taus, abs=FOUR_DECIMALS)


def test_hybrid_tail_splices_scipy_genpareto_continuously():
    _, hybrid = repo_model("passage")
    body, u, shape, scale = hybrid.body, hybrid.threshold, hybrid.shape, hybrid.scale
    # sdm.md §2.4: the stored scale is the continuity scale to 6 decimals; endpoint 0.6625.
    assert body.sf(u) / body.pdf(u) == pytest.approx(scale, abs=1e-6)
    assert hybrid.endpoint == pytest.approx(0.6625, abs=5e-5)
    x = np.array([-0.2, 0.0, u, 0.1, 0.3, 0.6])
    gpd = stats.genpareto(c=shape, loc=0, scale=scale)
    expected = np.where(x <= u, body.sf(x), body.sf(u) * gpd.sf(np.maximum(x - u, 0)))
    np.testing.assert_allclose(hybrid.sf(x), expected, rtol=1e-12)
    np.testing.assert_allclose(hybrid.cdf(x) + hybrid.sf(x), 1.0)
    np.testing.assert_allclose(hybrid.pdf(x[x > u]), body.sf(u) * gpd.pdf(x[x > u] - u), rtol=1e-12)
    assert hybrid.pdf(u + 1e-9) == pytest.approx(float(hybrid.pdf(u)), rel=1e-5)
    assert float(hybrid.sf(hybrid.endpoint + 0.01)) == 0.0
    q = np.array([0.5, 0.2, 1e-3, 1e-9])
    np.testing.assert_allclose(hybrid.sf(hybrid.isf(q)), q, rtol=1e-9)


@pytest.fixture(scope="module")
def skewnorm_case():
    """sdm.md §6.3: 65 x 10 relevant and 65 x 9,890 non-relevant skew-normal scores, relevant first."""
    rng = np.random.default_rng(2026)
    relevant = stats.skewnorm.rvs(-1.1355, 0.6000, 0.1641, size=65 * 10, random_state=rng)
    nonrelevant = stats.skewnorm.rvs(1.9482, -0.0678, 0.0966, size=65 * 9890, random_state=rng)
    return relevant, nonrelevant


# sdm.md §6.3: (S, k, truth from the true skew-normals, fitted hybrid).
RECOVERY_TABLE = [
    (1e4, 10, 0.9203, 0.9310),
    (1e6, 10, 0.8023, 0.8816),
    (1e6, 100, 0.9231, 0.9344),
    (1e8, 10, 0.6247, 0.8461),
    (1e8, 100, 0.7714, 0.8790),
    (1e8, 1000, 0.8607, 0.9058),
]


def test_skewnorm_fit_recovers_the_true_recall(skewnorm_case):
    relevant, nonrelevant = fit_score_model(*skewnorm_case, tail="skewnorm")
    assert relevant.args == pytest.approx((-1.4448, 0.6144, 0.1719), abs=2e-4)
    assert nonrelevant.args == pytest.approx((1.9591, -0.0682, 0.0969), abs=2e-4)
    for size, k, truth, _ in RECOVERY_TABLE:
        assert plugin_recall(relevant, nonrelevant, 10, size - 110, [k])[k] == pytest.approx(truth, abs=0.005)


def test_hybrid_fit_regression(skewnorm_case):
    relevant, hybrid = fit_score_model(*skewnorm_case, tail="hybrid")
    assert hybrid.threshold == pytest.approx(np.percentile(skewnorm_case[1], 80))
    assert hybrid.threshold == pytest.approx(0.05597, abs=1e-4)
    assert int(np.sum(skewnorm_case[1] > hybrid.threshold)) == 128_570
    assert hybrid.tail_weight == pytest.approx(1 - 0.7999, abs=1e-4)
    assert hybrid.scale == pytest.approx(0.05551, abs=1e-4)
    assert hybrid.shape == pytest.approx(-0.16495, abs=2e-3)
    for size, k, _, fitted_hybrid in RECOVERY_TABLE:
        assert plugin_recall(relevant, hybrid, 10, size - 110, [k])[k] == pytest.approx(
            fitted_hybrid, abs=2e-3
        )


def test_fit_skewnorm_matches_scipy_likelihood():
    rng = np.random.default_rng(7)
    scores = stats.skewnorm.rvs(1.5, 0.1, 0.2, size=3000, random_state=rng)
    ours = fit_skewnorm(scores).args
    reference = stats.skewnorm.fit(scores)
    assert stats.skewnorm.nnlf(ours, scores) <= stats.skewnorm.nnlf(reference, scores) + 1e-6
    assert ours == pytest.approx(reference, abs=1e-3)


def monte_carlo_recall(rng, n_nonrelevant, n_queries, ks, relevant_scores=None):
    """sdm.md §6.2: explicit draws, top-kmax non-relevant kept, per-query Recall@k."""
    kmax = max(ks)
    recalls = np.zeros((n_queries, len(ks)))
    for q in range(n_queries):
        relevant = 0.4 + 0.1 * rng.standard_normal(10) if relevant_scores is None else relevant_scores[q]
        nonrelevant = 0.1 * rng.standard_normal(int(n_nonrelevant), dtype=np.float32)
        top = np.partition(nonrelevant, nonrelevant.size - kmax)[-kmax:]
        labels = np.concatenate([np.ones(relevant.size), np.zeros(kmax)])
        ranked = labels[np.argsort(-np.concatenate([relevant, top]), kind="stable")]
        recalls[q] = [ranked[:k].sum() / relevant.size for k in ks]
    return recalls


@pytest.mark.parametrize(("n", "n_queries"), [(1e4, 2000), (1e5, 400), (1e6, 120)])
def test_monte_carlo_agrees_with_the_plugin_prediction(n, n_queries):
    ks = [1, 10, 100, 1000]
    recalls = monte_carlo_recall(np.random.default_rng(12345), n, n_queries, ks)
    mean = recalls.mean(axis=0)
    standard_error = recalls.std(axis=0, ddof=1) / math.sqrt(n_queries)
    predicted = plugin_recall(RELEVANT, NONRELEVANT, 10, n, ks)
    for j, k in enumerate(ks):
        assert abs(mean[j] - EXACT[n, k]) <= 3 * standard_error[j]
        if k >= 10:  # the plug-in differs from the expectation by up to 0.01 at k = 1
            assert abs(mean[j] - predicted[k]) <= 3 * standard_error[j]


def arrays_to_samples(relevant, nonrelevant, num_docs):
    return ScoreSamples(int(num_docs), 1, 0, 2000, 2000, {
        f"q{i}": QueryScoreSamples(np.sort(np.asarray(r, float)), np.sort(np.asarray(n, float)), len(r),
                                   int(num_docs) - len(r))
        for i, (r, n) in enumerate(zip(relevant, nonrelevant, strict=True))})


def test_pooling_check_per_query_removes_the_shift_penalty():
    """sdm.md §6.4: per-query shifts m_q ~ N(0, 0.05) make the pooled prediction pessimistic."""
    rng = np.random.default_rng(64)
    shifts = 0.05 * rng.standard_normal(400)
    relevant = [m + 0.4 + 0.1 * rng.standard_normal(10) for m in shifts]
    nonrelevant = [m + 0.1 * rng.standard_normal(2000) for m in shifts]
    samples = arrays_to_samples(relevant, nonrelevant, 2010)
    sizes = np.array([1e4, 1e6]) + 10  # the table's N counts non-relevant documents
    pooled = forecast(samples, sizes, [10, 100], mode="pooled", tail="skewnorm").recall
    per_query = forecast(samples, sizes, [10, 100]).recall
    # Tolerances cover 400 drawn shifts and fits from samples; the gap between the modes is ~0.1.
    np.testing.assert_allclose(pooled[:, 0], [0.5913, 0.2282], atol=0.02)
    np.testing.assert_allclose(pooled[:, 1], [0.8881, 0.4393], atol=0.02)
    # The per-query model at 5x its sample: the shift penalty is gone. (At 500x a GPD tail fitted to the top
    # of normal scores is too light, as sdm.md §5 pitfall 2 says; real scores prefer it: benchmarks/scale.py.)
    np.testing.assert_allclose(per_query[0], [0.7115, 0.9491], atol=0.035)
    assert per_query[0, 0] - pooled[0, 0] > 0.1


@pytest.fixture(scope="module")
def synthetic_result():
    """A result-file fragment collected from a 20,000-document synthetic corpus (normal scores)."""
    rng = np.random.default_rng(5)
    n_queries, n_docs = 80, 20_000
    doc_ids = [f"d{i}" for i in range(n_docs)]
    rows = (0.1 * rng.standard_normal((n_queries, n_docs))).astype(np.float32)
    qrels = {}
    for q in range(n_queries):
        columns = rng.choice(n_docs, size=10, replace=False)
        rows[q, columns] = 0.4 + 0.1 * rng.standard_normal(10)
        qrels[f"q{q}"] = {doc_ids[c]: 1 for c in columns}
    samples = collect_score_samples(list(qrels), doc_ids, rows, qrels, n_samples=2000, seed=3)
    query_ids = sorted(samples.queries)
    stored = decode_score_samples(json.loads(json.dumps(encode_score_samples(samples, query_ids))), query_ids)
    relevant = [np.sort(rows[q, [int(d[1:]) for d in qrels[f"q{q}"]]]) for q in range(n_queries)]
    return SimpleNamespace(score_samples=stored), relevant


@pytest.mark.parametrize("mode", ["pooled", "per_query"])
def test_prediction_from_collected_samples_matches_explicit_draws(synthetic_result, mode):
    result, relevant = synthetic_result
    ks = [1, 10, 100]
    size = 200_010
    predicted = forecast(result, [size], ks, mode=mode, tail="skewnorm").recall[0]
    recalls = monte_carlo_recall(np.random.default_rng(11), size - 10, len(relevant), ks, relevant)
    standard_error = recalls.std(axis=0, ddof=1) / math.sqrt(len(relevant))
    for j in range(len(ks)):
        # 3 standard errors of the draws, plus 0.02 for fitting 2,000 samples per query.
        assert abs(recalls[:, j].mean() - predicted[j]) <= 3 * standard_error[j] + 0.02


@pytest.mark.parametrize("mode", ["pooled", "per_query", "rank"])
def test_recall_curve_shape_and_monotonicity(synthetic_result, mode):
    result, _ = synthetic_result
    sizes, ks = [2e4, 1e5, 1e6, 1e7], [1, 10, 100, 1000]
    curve = forecast(result, sizes, ks, mode=mode, tail="hybrid")
    assert curve.recall.shape == (4, 4) and curve.queries == 80
    assert (np.diff(curve.recall, axis=0) <= 1e-12).all()  # larger corpus, lower recall
    assert (np.diff(curve.recall, axis=1) >= -1e-12).all()  # deeper cut-off, higher recall
    assert isinstance(curve.fit.nonrelevant, HybridTail) if mode == "pooled" else curve.fit is None
    again = forecast({"score_samples": result.score_samples}, sizes, ks, mode=mode)
    np.testing.assert_allclose(again.recall, curve.recall)


def _samples(relevant=None, nonrelevant=None):
    rng = np.random.default_rng(0)
    relevant = [0.4 + 0.1 * rng.standard_normal(10) for _ in range(5)] if relevant is None else relevant
    nonrelevant = [0.1 * rng.standard_normal(500) for _ in range(5)] if nonrelevant is None else nonrelevant
    return arrays_to_samples(relevant, nonrelevant, 1000)


DEGENERATE = {
    "constant non-relevant": (_samples(nonrelevant=[np.full(500, 0.2)] * 5), "equal"),
    "mostly tied non-relevant": (_samples(nonrelevant=[np.r_[np.zeros(400), np.linspace(1, 5, 100)]] * 5), "tied"),
    "fewer than 10 samples": (_samples(nonrelevant=[np.array([0.1 + q / 100]) for q in range(5)]), "at least 10"),
}


@pytest.mark.parametrize("case", list(DEGENERATE))
def test_pooled_mode_gives_a_reason_where_its_continuous_model_does_not_apply(case):
    samples, words = DEGENERATE[case]
    with pytest.raises(CannotPredictError) as caught:
        forecast(samples, [1e6], [10], mode="pooled")
    assert isinstance(caught.value, IrboardError)
    assert words in caught.value.reason


def test_too_few_pooled_relevant_scores():
    with pytest.raises(CannotPredictError, match="relevant scores: 5 scores, at least 10"):
        forecast(_samples(relevant=[np.array([0.5])] * 5), [1e6], [10], mode="pooled")


def test_results_and_sizes_that_cannot_be_predicted():
    with pytest.raises(CannotPredictError, match="no score_samples"):
        forecast(SimpleNamespace(score_samples=None), [1e6], [10])
    with pytest.raises(CannotPredictError, match="no score_samples"):
        forecast({"metrics": {}}, [1e6], [10])
    with pytest.raises(CannotPredictError, match="larger than the relevant count"):
        forecast(_samples(), [8], [10])
    with pytest.raises(CannotPredictError, match="n_relevant > 0"):
        plugin_recall(RELEVANT, NONRELEVANT, 0, 1e6, [10])
