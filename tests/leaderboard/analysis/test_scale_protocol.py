"""benchmarks/scale.py's protocol under uniform growth: a small uniform sub-corpus keeps a query only if one of its
relevant documents was drawn, and r x (full size / sub-corpus size) then overstates its relevant count in the
full corpus. On a collection a perfect model ranks, the error that makes is known in closed form."""

import sys

import numpy as np
import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import scale as protocol  # noqa: E402  (benchmarks/scale.py)


def perfect_collection(queries=40, docs=4000, seed=0):
    """Every query has one relevant document scoring 2 + its index / docs, above all non-relevant ones (in
    (0, 1)), so Recall@k on the full corpus is 1 at every k."""
    rng = np.random.default_rng(seed)
    scores = rng.random((queries, docs))
    relevant = np.zeros((queries, docs), dtype=bool)
    relevant[np.arange(queries), rng.choice(docs, queries, replace=False)] = True
    scores[relevant] = 2.0 + np.arange(queries) / docs
    return scores, relevant


@pytest.mark.parametrize("fraction", [0.05, 0.1])
def test_uniform_protocol_with_the_full_corpus_count_has_no_count_error(fraction):
    scores, relevant = perfect_collection()
    report = protocol.evaluate_pair(scores, relevant, [fraction], [0, 1], ("per_query", "rank"))["uniform"]
    np.testing.assert_allclose(report["measured"], 1.0)
    for method in ("per_query", "rank", protocol.FLOOR):
        assert report["errors"][method], method
        for _, error in report["errors"][method]:
            np.testing.assert_allclose(error, 0.0, atol=1e-6)


@pytest.mark.parametrize("fraction", [0.05, 0.1])
def test_uniform_protocol_with_the_scaled_count_is_off_by_the_selection(fraction):
    """A kept relevant document stands for g = docs / sub-corpus size of them, so at most k of those g are in the
    top k: predicted Recall@k = min(1, k / g), error min(1, k / g) - 1 (g is 20 or 10: R@10 only)."""
    scores, relevant = perfect_collection()
    report = protocol.evaluate_pair(scores, relevant, [fraction], [0, 1], ("per_query", "rank"),
                                    uniform_count="sample")["uniform"]
    for seed in (0, 1):
        rng = np.random.default_rng([seed, int(fraction * 1000)])
        growth = scores.shape[1] / (rng.random(scores.shape[1]) < fraction).sum()
        expected = [min(1.0, k / growth) - 1.0 for k in protocol.KS]
        for method in ("per_query", "rank"):
            np.testing.assert_allclose(report["errors"][method][seed][1], expected, atol=1e-6)
