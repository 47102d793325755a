"""DenseIndex against brute force: numpy's full score matrix ranked by (score descending, index ascending)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.errors import UnknownNameError
from evaluator.index.dense import DenseIndex


def brute_force(queries, docs, k):
    scores = queries.astype(np.float64) @ docs.astype(np.float64).T
    doc_index = np.broadcast_to(np.arange(docs.shape[0]), scores.shape)
    order = np.lexsort((doc_index, -scores))[:, : min(k, docs.shape[0])]
    return np.take_along_axis(scores, order, 1), order


def unit_rows(rng, n, dim):
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@settings(max_examples=60, deadline=None)
@given(
    n_docs=st.integers(1, 300),
    dim=st.integers(1, 6),
    n_queries=st.integers(1, 12),
    k=st.integers(1, 320),
    block_size=st.integers(1, 64),
    low=st.sampled_from([-2, 0]),
    dtype=st.sampled_from(["float32", "bfloat16"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_search_equals_brute_force_with_ties(n_docs, dim, n_queries, k, block_size, low, dtype, seed):
    # small integers: many tied scores, and exact in bf16 too, so both paths must match exactly
    rng = np.random.default_rng(seed)
    docs = rng.integers(low, 3, (n_docs, dim)).astype(np.float32)
    queries = rng.integers(low, 3, (n_queries, dim)).astype(np.float32)
    scores, indices = DenseIndex(docs, dtype=dtype, threads=1).search(queries, k, block_size=block_size, quiet=True)
    expected_scores, expected_indices = brute_force(queries, docs, k)
    assert indices.shape == (n_queries, min(k, n_docs)) and indices.dtype == np.int64
    assert scores.dtype == np.float32
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_array_equal(scores, expected_scores.astype(np.float32))


def test_k_larger_than_corpus_returns_every_document_ranked():
    docs = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], np.float32)
    scores, indices = DenseIndex(docs).search(np.array([[1.0, 0.5]], np.float32), k=10, quiet=True)
    np.testing.assert_array_equal(indices, [[0, 2, 1]])  # 1.0, 1.0 (tie: lower index first), 0.5
    np.testing.assert_array_equal(scores, [[1.0, 1.0, 0.5]])


@pytest.mark.parametrize("block_size", [1000, 777, 4096])
def test_random_unit_vectors_match_brute_force(block_size):
    rng = np.random.default_rng(7)
    docs, queries = unit_rows(rng, 5000, 32), unit_rows(rng, 40, 32)
    scores, indices = DenseIndex(docs, threads=1).search(queries, 50, block_size=block_size, quiet=True)
    expected_scores, expected_indices = brute_force(queries, docs, 50)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_allclose(scores, expected_scores, rtol=0, atol=1e-6)


def test_bfloat16_overlaps_exact_top_100_and_rescores_in_float32():
    rng = np.random.default_rng(11)
    docs, queries = unit_rows(rng, 20_000, 64), unit_rows(rng, 30, 64)
    exact_scores, exact = DenseIndex(docs, threads=1).search(queries, 100, quiet=True)
    scores, indices = DenseIndex(docs, dtype="bfloat16", threads=1).search(queries, 100, quiet=True)
    overlap = np.mean([len(set(a) & set(b)) / 100 for a, b in zip(indices.tolist(), exact.tolist(), strict=True)])
    assert overlap >= 0.99
    # returned scores are the float32 dot products of the returned documents, in ranking order
    recomputed = np.einsum("qkd,qd->qk", docs[indices].astype(np.float64), queries.astype(np.float64))
    np.testing.assert_allclose(scores, recomputed, rtol=0, atol=1e-6)
    assert (np.diff(scores, axis=1) <= 0).all()
    common = indices == exact
    np.testing.assert_allclose(scores[common], exact_scores[common], rtol=0, atol=1e-6)


def test_faiss_backend_equals_numpy():
    rng = np.random.default_rng(3)
    docs, queries = unit_rows(rng, 3000, 24), unit_rows(rng, 25, 24)
    numpy_scores, numpy_indices = DenseIndex(docs).search(queries, 20, quiet=True)
    faiss_scores, faiss_indices = DenseIndex(docs, backend="faiss", threads=1).search(queries, 20)
    np.testing.assert_array_equal(faiss_indices, numpy_indices)
    np.testing.assert_allclose(faiss_scores, numpy_scores, rtol=0, atol=1e-5)


def test_thread_counts_give_identical_rankings():
    rng = np.random.default_rng(5)
    docs, queries = unit_rows(rng, 4000, 16), unit_rows(rng, 20, 16)
    one = DenseIndex(docs, threads=1).search(queries, 30, block_size=512, quiet=True)
    two = DenseIndex(docs, threads=2).search(queries, 30, block_size=512, quiet=True)
    np.testing.assert_array_equal(one[1], two[1])


def test_score_rows_are_all_dot_products():
    rng = np.random.default_rng(9)
    docs, queries = unit_rows(rng, 1000, 8), unit_rows(rng, 3, 8)
    rows = DenseIndex(docs).score_rows(queries, block_size=300)
    assert rows.shape == (3, 1000) and rows.dtype == np.float32
    np.testing.assert_allclose(rows, queries.astype(np.float64) @ docs.astype(np.float64).T, atol=1e-6)


def test_no_queries_gives_empty_result():
    scores, indices = DenseIndex(np.eye(3, dtype=np.float32)).search(np.zeros((0, 3), np.float32), 2)
    assert scores.shape == (0, 2) and indices.shape == (0, 2)


def test_bad_arguments_are_reported():
    docs = np.eye(3, dtype=np.float32)
    with pytest.raises(UnknownNameError, match="bfloat16"):
        DenseIndex(docs, dtype="int8")
    with pytest.raises(UnknownNameError, match="faiss"):
        DenseIndex(docs, backend="annoy")
    with pytest.raises(ValueError, match=r"\(q, 3\)"):
        DenseIndex(docs).search(np.zeros((2, 4), np.float32), 1)
    with pytest.raises(ValueError, match="NaN"):
        DenseIndex(np.array([[np.nan, 1.0]], np.float32))


@pytest.mark.parametrize("block_size", [333, 4096])
def test_bfloat16_candidates_are_the_bfloat16_top_k(block_size):
    # with candidates_factor=1 the candidates are exactly the top-k of the bf16 scores (ties by index),
    # which torch computes here as one matrix product
    import torch

    rng = np.random.default_rng(13)
    docs, queries = unit_rows(rng, 3000, 48), unit_rows(rng, 20, 48)
    bf16_scores = (torch.from_numpy(queries).bfloat16() @ torch.from_numpy(docs).bfloat16().T).float().numpy()
    doc_index = np.broadcast_to(np.arange(3000), bf16_scores.shape)
    expected = np.lexsort((doc_index, -bf16_scores))[:, :40]
    index = DenseIndex(docs, dtype="bfloat16", threads=1, candidates_factor=1.0)
    _, indices = index.search(queries, 40, block_size=block_size, quiet=True)
    assert len(np.unique(bf16_scores[0])) < 3000  # bf16 rounding does produce ties here
    np.testing.assert_array_equal(np.sort(indices, axis=1), np.sort(expected, axis=1))


@pytest.mark.parametrize(("dtype", "step"), [("float32", 2.0**-23), ("bfloat16", 2.0**-7)])
def test_running_threshold_admits_one_ulp_higher_and_refuses_a_tie(dtype, step):
    # one document per block: 1.0 sets the threshold, the next scores one ulp (of the dtype, at 1.0)
    # higher and must get in, the third only ties it and must stay out (the lower index wins)
    values = [1.0, 1.0 + step, 1.0 + step, 1.0]
    docs = np.array(values, np.float32)[:, None]
    index = DenseIndex(docs, dtype=dtype, threads=1, candidates_factor=1.0)
    scores, indices = index.search(np.ones((1, 1), np.float32), 1, block_size=1, quiet=True)
    np.testing.assert_array_equal(indices, [[1]])
    np.testing.assert_array_equal(scores, [[values[1]]])


def test_nbytes_counts_the_embeddings_and_the_bf16_copy():
    docs = np.ones((10, 4), np.float32)
    assert DenseIndex(docs).nbytes == 10 * 4 * 4
    assert DenseIndex(docs, dtype="bfloat16").nbytes == 10 * 4 * (4 + 2)
