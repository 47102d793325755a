"""Score samples scored at the sampled columns only equal those cut from whole score rows, bit for bit."""

import numpy as np
import pytest
import scipy.sparse as sp

from evaluator import pipeline
from evaluator.datasets import load_dataset
from evaluator.index import dense as dense_index
from evaluator.index import sparse as sparse_index
from evaluator.index.dense import DenseIndex
from evaluator.index.sparse import SparseIndex
from evaluator.models import load_model
from evaluator.score_samples import ScoreSampleCollector, fit_to_budget
from tests.conftest import SCIFACT, SHARED, write_scifact_slice

SPLADE = SHARED / "models" / "splade-tiny"


def _from_whole_rows(index, queries, query_ids, doc_ids, qrels, block=64):
    """The samples as the evaluator took them before: a (64, N) block of scores, then the sampled columns."""
    collector = ScoreSampleCollector(doc_ids, qrels)
    for start in range(0, len(query_ids), block):
        collector.add(query_ids[start:start + block], index.score_rows(queries[start:start + block]))
    return fit_to_budget(collector.result(), sorted(query_ids))


def _assert_identical(got, expected):
    assert got.queries.keys() == expected.queries.keys()
    assert got.samples_per_query == expected.samples_per_query
    for query_id, want in expected.queries.items():
        have = got.queries[query_id]
        assert have.relevant.tobytes() == want.relevant.tobytes()  # float64 of float32 scores, bit for bit
        assert have.nonrelevant.tobytes() == want.nonrelevant.tobytes()
        assert (have.n_relevant, have.n_nonrelevant) == (want.n_relevant, want.n_nonrelevant)


def _encoded(model_spec, folder):
    dataset = load_dataset(f"local:{folder}")
    model = load_model(model_spec)
    docs = list(zip(dataset.corpus.titles, dataset.corpus.texts, strict=True))
    encoded = model.encode_corpus(docs)
    query_ids = list(dataset.queries)
    texts = [dataset.queries[q] for q in query_ids]
    if model.info.type == "dense":
        return DenseIndex(encoded), model.encode_queries(texts), query_ids, dataset
    return SparseIndex.from_documents(encoded), model.encode_queries(texts, encoded), query_ids, dataset


@pytest.mark.slow
def test_bm25_samples_on_full_scifact_equal_whole_rows():
    """5,183 documents, so 2,000 of the non-relevant ones are sampled per query; 300 queries in 5 blocks."""
    index, queries, query_ids, dataset = _encoded("bm25", SCIFACT)
    got = pipeline.collect_samples(index, queries, query_ids, dataset.corpus.ids, dataset.qrels)
    expected = _from_whole_rows(index, queries, query_ids, dataset.corpus.ids, dataset.qrels)
    assert len(got.queries) == 300 and all(len(q.nonrelevant) == 2000 for q in got.queries.values())
    _assert_identical(got, expected)


@pytest.fixture(scope="module")
def scifact_slice(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scifact-120")
    write_scifact_slice(folder, num_queries=20, num_docs=120)
    return folder


# passages cut at 32 word pieces: the columns must equal the rows whatever the encodings, in a fraction of the time
@pytest.mark.parametrize("model_spec", [f"splade:{SPLADE},doc_max_length=32", "dense:all-MiniLM-L6-v2,max_length=32"])
@pytest.mark.slow
def test_neural_samples_equal_whole_rows(model_spec, scifact_slice, monkeypatch):
    monkeypatch.setattr(dense_index, "DEFAULT_BLOCK_SIZE", 32)  # several document blocks, a partial last one
    index, queries, query_ids, dataset = _encoded(model_spec, scifact_slice)
    got = pipeline.collect_samples(index, queries, query_ids, dataset.corpus.ids, dataset.qrels, block=8)
    expected = _from_whole_rows(index, queries, query_ids, dataset.corpus.ids, dataset.qrels, block=8)
    _assert_identical(got, expected)


def test_dense_columns_across_blocks_and_nonfinite_counts():
    rng = np.random.default_rng(3)
    index = DenseIndex(rng.standard_normal((3000, 16)).astype(np.float32))
    queries = rng.standard_normal((70, 16)).astype(np.float32)
    queries[5, 3] = np.nan
    queries[66] = 3e38  # finite, but dot products overflow float32
    columns = [np.sort(rng.choice(3000, size=int(rng.integers(0, 40)), replace=False)) for _ in range(70)]
    values, nonfinite = index.scores_of(queries, columns, block_size=256)
    rows = np.vstack([index.score_rows(queries[a:a + 64], 256) for a in range(0, 70, 64)])
    for i, wanted in enumerate(columns):
        assert values[i].tobytes() == rows[i, wanted].tobytes()
    assert nonfinite.tolist() == np.count_nonzero(~np.isfinite(rows), axis=1).tolist()
    assert nonfinite[5] == 3000 and nonfinite[66] > 0 and nonfinite.sum() == nonfinite[5] + nonfinite[66]


# 0: every term galloped query by query; 1e9: every term's postings read once for all queries; 1.0: chosen per term
@pytest.mark.parametrize("step", [0.0, 1e9, 1.0])
def test_sparse_columns_and_nonfinite_counts(step, monkeypatch):
    monkeypatch.setattr(sparse_index, "_SAMPLE_STEP", step)
    rng = np.random.default_rng(4)
    documents = sp.random(500, 60, density=0.1, random_state=5, dtype=np.float32, format="csr")
    index = SparseIndex.from_documents(documents)
    queries = sp.random(6, 60, density=0.2, random_state=6, dtype=np.float32, format="csr")
    queries.data[0] = np.inf  # a non-finite query weight: only the documents holding its term score inf
    columns = [np.sort(rng.choice(500, size=50, replace=False)) for _ in range(6)]
    values, nonfinite = index.scores_of(queries, columns)
    rows = index.score_rows(queries)
    for i, wanted in enumerate(columns):
        assert values[i].tobytes() == rows[i, wanted].tobytes()
    assert nonfinite.tolist() == np.count_nonzero(~np.isfinite(rows), axis=1).tolist()
    assert nonfinite[0] > 0 and nonfinite[1:].sum() == 0


def test_sparse_kernel_keeps_each_query_term_order_when_terms_do_not_ascend():
    """Queries whose terms are not in ascending order are scored query by query, adding terms in their CSR order."""
    from evaluator.index import _sparse

    documents = sp.random(300, 40, density=0.2, random_state=7, dtype=np.float32, format="csr")
    index = SparseIndex.from_documents(documents)
    terms = np.array([30, 2, 17, 5, 5, 9], np.int32)  # descending, then a repeated term
    weights = np.array([0.7, 1.3, 2.9, 0.1, 0.4, 1.1], np.float32)
    wanted = np.arange(0, 300, 3, dtype=np.int32)
    out = np.empty(2 * len(wanted), np.float32)
    _sparse.score_columns(index._indptr, index.postings.indices, index.postings.data, np.array([0, 4, 6]), terms,
                          weights, np.concatenate([wanted, wanted]), np.array([0, len(wanted), 2 * len(wanted)]), out,
                          1.0)
    dense = index.postings.toarray()
    for q, (lo, hi) in enumerate([(0, 4), (4, 6)]):
        expected = np.zeros(len(wanted), np.float32)
        for term, weight in zip(terms[lo:hi], weights[lo:hi], strict=True):
            expected += weight * dense[term, wanted]  # float32 products added in the query's own term order
        assert out[q * len(wanted):(q + 1) * len(wanted)].tobytes() == expected.tobytes()
