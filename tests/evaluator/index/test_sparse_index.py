"""SparseIndex: exact top-k equal to brute force (dense q · D^T, then sort), with ties, padding and pruning."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import evaluator.index.sparse as sparse_module
from evaluator.index.sparse import SparseIndex


def brute_force(queries: sp.csr_matrix, docs: sp.csr_matrix, k: int):
    """Scores in float64; order: score descending, then document index; only scores > 0; padded."""
    dense = (queries.astype(np.float64) @ docs.astype(np.float64).T).toarray()
    scores = np.full((dense.shape[0], k), -np.inf)
    indices = np.full((dense.shape[0], k), -1)
    for row, values in enumerate(dense):
        order = np.lexsort((np.arange(len(values)), -values))
        order = order[values[order] > 0][:k]
        scores[row, : len(order)], indices[row, : len(order)] = values[order], order
    return scores, indices


@pytest.fixture(params=["measured", "forced"])
def pruning(request, monkeypatch):
    """The kernel's own choice of when to prune, and pruning forced as soon as the bounds allow it."""
    if request.param == "forced":
        monkeypatch.setattr(sparse_module, "_GALLOP_STEP", 0.0)
    return request.param


def zipf_matrix(rng, rows: int, vocab: int, terms: float, levels: int = 4) -> sp.csr_matrix:
    """Zipf-drawn term ids with small integer weights, so float32 sums are exact and ties are common."""
    p = 1 / np.arange(1, vocab + 1)
    lengths = rng.poisson(terms, rows)
    cols = rng.choice(vocab, size=lengths.sum(), p=p / p.sum())
    data = rng.integers(1, levels + 1, size=lengths.sum()).astype(np.float32)
    matrix = sp.csr_matrix((data, (np.repeat(np.arange(rows), lengths), cols)), shape=(rows, vocab))
    matrix.sum_duplicates()
    return matrix


@pytest.mark.parametrize("k", [1, 7, 50, 3000])
def test_search_equals_brute_force_with_ties(pruning, k):
    rng = np.random.default_rng(k)
    docs = zipf_matrix(rng, 2000, 300, terms=12)
    queries = zipf_matrix(rng, 40, 300, terms=5)
    scores, indices = SparseIndex.from_documents(docs).search(queries, k)
    expected_scores, expected_indices = brute_force(queries, docs, k)
    assert scores.dtype == np.float32 and indices.dtype == np.int64
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_array_equal(scores, expected_scores.astype(np.float32))


def test_real_valued_weights_agree_with_brute_force(pruning):
    rng = np.random.default_rng(3)
    docs = zipf_matrix(rng, 3000, 500, terms=20)
    docs.data = rng.lognormal(size=docs.nnz).astype(np.float32) / (1 + np.log1p(docs.indices))
    queries = zipf_matrix(rng, 60, 500, terms=8)
    queries.data = rng.random(queries.nnz).astype(np.float32)
    scores, indices = SparseIndex.from_documents(docs).search(queries, 20)
    expected_scores, expected_indices = brute_force(queries, docs, 20)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-5)
    assert (indices == expected_indices).mean() > 0.99  # float32 vs float64 may swap near-equal neighbours
    dense = (queries @ docs.T).toarray()
    np.testing.assert_allclose(np.take_along_axis(dense, indices, axis=1), scores, rtol=1e-5)


def float32_in_kernel_order(queries: sp.csr_matrix, docs: sp.csr_matrix, k: int):
    """Scores summed in float32, terms by decreasing bound (query weight x largest weight), as documented."""
    postings = sp.csr_matrix(docs.T, dtype=np.float32)
    postings.sort_indices()
    max_weights = np.array([postings[t].data.max(initial=0) for t in range(postings.shape[0])], dtype=np.float32)
    scores = np.full((queries.shape[0], k), -np.inf, dtype=np.float32)
    indices = np.full((queries.shape[0], k), -1)
    for row in range(queries.shape[0]):
        terms = queries.indices[queries.indptr[row] : queries.indptr[row + 1]]
        weights = queries.data[queries.indptr[row] : queries.indptr[row + 1]]
        total = np.zeros(docs.shape[0], dtype=np.float32)
        for i in np.argsort(-(weights.astype(np.float64) * max_weights[terms]), kind="stable"):
            lo, hi = postings.indptr[terms[i]], postings.indptr[terms[i] + 1]
            total[postings.indices[lo:hi]] += np.float32(weights[i]) * postings.data[lo:hi]
        order = np.lexsort((np.arange(len(total)), -total))
        order = order[total[order] > 0][:k]
        scores[row, : len(order)], indices[row, : len(order)] = total[order], order
    return scores, indices


@pytest.mark.parametrize(
    ("n_docs", "vocab", "terms_per_query", "k", "weighting"),
    [
        (5000, 2000, 6, 10, "splade"),
        (5000, 2000, 40, 100, "splade"),
        (3000, 2000, 300, 20, "splade"),
        (20000, 20000, 4, 10, "idf"),  # rare terms weigh most, as in BM25: few documents get touched
        (20000, 20000, 8, 100, "idf"),
    ],
)
def test_pruning_never_changes_the_float32_result(pruning, n_docs, vocab, terms_per_query, k, weighting):
    rng = np.random.default_rng(terms_per_query)
    docs = zipf_matrix(rng, n_docs, vocab, terms=40 if weighting == "splade" else 20)
    if weighting == "splade":
        docs.data = np.log1p(rng.exponential(1.4, docs.nnz)).astype(np.float32) + 1e-3
    else:
        df = np.bincount(docs.indices, minlength=vocab)
        docs.data = (np.log1p(n_docs / df[docs.indices]) * rng.uniform(0.5, 1, docs.nnz)).astype(np.float32)
    queries = zipf_matrix(rng, 30, vocab, terms=terms_per_query)
    queries.data = rng.random(queries.nnz).astype(np.float32) + 0.01
    scores, indices = SparseIndex.from_documents(docs).search(queries, k)
    expected_scores, expected_indices = float32_in_kernel_order(queries, docs, k)
    np.testing.assert_array_equal(scores, expected_scores)
    np.testing.assert_array_equal(indices, expected_indices)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 60),
    st.integers(1, 30),
    st.integers(1, 12),
    st.integers(0, 2**32 - 1),
    st.floats(0.05, 0.9),
    st.sampled_from([8.0, 0.0]),
)
def test_any_small_index_equals_brute_force(n_docs, vocab, k, seed, density, gallop_step):
    rng = np.random.default_rng(seed)
    docs = sp.random(n_docs, vocab, density=density, random_state=rng, format="csr", dtype=np.float32)
    docs.data = np.ceil(docs.data * 3)
    queries = sp.random(5, vocab, density=0.3, random_state=rng, format="csr", dtype=np.float32)
    queries.data = np.ceil(queries.data * 2)
    old, sparse_module._GALLOP_STEP = sparse_module._GALLOP_STEP, gallop_step
    try:
        scores, indices = SparseIndex.from_documents(docs).search(queries, k)
    finally:
        sparse_module._GALLOP_STEP = old
    expected_scores, expected_indices = brute_force(queries, docs, k)
    np.testing.assert_array_equal(indices, expected_indices)
    np.testing.assert_array_equal(scores, expected_scores.astype(np.float32))


def test_empty_queries_and_unmatched_terms_are_padded():
    docs = sp.csr_matrix(np.array([[1, 0, 0], [2, 1, 0]], dtype=np.float32))
    queries = sp.csr_matrix(np.array([[0, 0, 0], [0, 0, 5], [0, 1, 0]], dtype=np.float32))
    scores, indices = SparseIndex.from_documents(docs).search(queries, 3)
    assert indices.tolist() == [[-1, -1, -1], [-1, -1, -1], [1, -1, -1]]
    assert scores[2, 0] == 1 and np.isneginf(scores[:2]).all() and np.isneginf(scores[2, 1:]).all()


def test_score_rows_is_the_dense_product():
    rng = np.random.default_rng(5)
    docs = zipf_matrix(rng, 200, 50, terms=6)
    queries = zipf_matrix(rng, 7, 50, terms=4)
    index = SparseIndex.from_documents(docs)
    rows = index.score_rows(queries)
    assert rows.shape == (7, 200) and rows.dtype == np.float32
    np.testing.assert_array_equal(rows, (queries @ docs.T).toarray())


def test_postings_and_sizes():
    docs = sp.csr_matrix(np.array([[1, 0, 2], [0, 0, 3], [4, 0, 0]], dtype=np.float32))
    index = SparseIndex.from_documents(docs)
    assert (index.num_docs, index.vocab_size) == (3, 3)
    assert index.doc_freqs.tolist() == [2, 0, 2]
    assert index.max_weights.tolist() == [4, 0, 3]
    assert index.postings.toarray().tolist() == docs.T.toarray().tolist()
    assert index.nbytes >= index.postings.data.nbytes + index.postings.indices.nbytes


def test_inputs_are_left_untouched():
    docs = sp.csr_matrix(np.array([[1, 0], [0, 2]], dtype=np.float32))
    queries = sp.csr_matrix((np.array([1, 1, 0], np.float32), np.array([0, 0, 1]), np.array([0, 3])), shape=(1, 2))
    before = queries.data.copy(), queries.indices.copy()
    scores, indices = SparseIndex.from_documents(docs).search(queries, 2)
    assert indices.tolist() == [[0, -1]] and scores[0, 0] == 2  # duplicates summed
    np.testing.assert_array_equal(queries.data, before[0])
    np.testing.assert_array_equal(queries.indices, before[1])


@pytest.mark.parametrize(
    ("docs", "queries", "message"),
    [
        (np.array([[1, -1]]), np.array([[1, 1]]), "non-negative weights"),
        (np.array([[1, 1]]), np.array([[1, -1]]), "non-negative query weights"),
        (np.array([[1, 1]]), np.array([[1, 1, 1]]), "3 columns"),
    ],
)
def test_invalid_inputs(docs, queries, message):
    with pytest.raises(ValueError, match=message):
        SparseIndex.from_documents(sp.csr_matrix(docs.astype(np.float32))).search(
            sp.csr_matrix(queries.astype(np.float32)), 1
        )


def test_kernel_rejects_inconsistent_arrays():
    from evaluator.index import _sparse

    postings = (np.array([0, 2], np.int64), np.array([0, 1], np.int32), np.ones(2, np.float32), np.ones(1, np.float32))
    out = np.empty((1, 1), np.float32), np.empty((1, 1), np.int64)
    query = np.array([0, 1], np.int64), np.array([0], np.int32), np.ones(1, np.float32)
    _sparse.search(*postings, *query, 2, 1, 0, 1, *out, 8.0)
    assert out[1].tolist() == [[0]]
    with pytest.raises(ValueError, match="inconsistent"):
        _sparse.search(*postings, query[0], np.array([5], np.int32), query[2], 2, 1, 0, 1, *out, 8.0)
    with pytest.raises(TypeError, match="query_weights"):
        _sparse.search(*postings, *query[:2], np.ones(1), 2, 1, 0, 1, *out, 8.0)
