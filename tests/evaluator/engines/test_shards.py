"""Shard bookkeeping without Ray: BM25's corpus statistics from per-shard count vectors equal the whole
corpus's, so shard weights and search scores equal the local engine's bit for bit; checkpoints on a URI."""

import numpy as np
import pyarrow.fs as pafs
import scipy.sparse as sp

from evaluator.engines.shards import (
    ShardStore,
    bm25_shard_weights,
    corpus_statistics,
    plan_shards,
    remap_columns,
    shard_statistics,
    shard_term_counts,
)
from evaluator.index.sparse import SparseIndex
from evaluator.models import load_model
from tests.conftest import write_scifact_slice


def test_bm25_statistics_from_shard_counts_equal_the_local_engines(tmp_path):
    _, rows, query_texts = write_scifact_slice(tmp_path, num_queries=20, num_docs=300)
    docs = [(row.get("title", ""), row["text"]) for row in rows]
    local = load_model("bm25")
    whole = local.encode_corpus(docs)  # the local engine's weights of the whole corpus
    local_index = local.index_corpus(docs)

    sharded = load_model("bm25")
    plan = plan_shards(len(docs), 4)
    shards = [shard_term_counts(sharded.analyzer, docs[a:b]) for a, b in plan]
    vocabulary, global_ids, df, avg_length = corpus_statistics(
        (shard_statistics(counts, terms) for counts, terms in shards), len(docs))

    assert vocabulary == local.vocabulary  # term ids in the same order
    assert df.tolist() == np.bincount(whole.indices, minlength=whole.shape[1]).tolist()
    lengths = np.concatenate([np.asarray(c.sum(axis=1), np.float64).ravel() for c, _ in shards])
    assert avg_length == lengths.mean()  # the local engine's average, float64

    weights = sp.vstack([bm25_shard_weights(remap_columns(counts, ids, len(vocabulary)), df, len(docs), avg_length,
                                            local.k1, local.b, local.norms == "lucene")
                         for (counts, _), ids in zip(shards, global_ids, strict=True)], format="csr")
    assert np.array_equal(weights.indptr, whole.indptr) and np.array_equal(weights.indices, whole.indices)
    assert np.array_equal(weights.data, whole.data)  # float32, bit for bit

    sharded.vocabulary = vocabulary
    queries = sharded.encode_queries(list(query_texts.values())[:20], weights)
    scores, positions = SparseIndex.from_documents(weights).search(queries, 50)
    local_scores, local_positions = local_index.search(local.encode_queries(list(query_texts.values())[:20],
                                                                            whole), 50)
    assert np.array_equal(scores, local_scores) and np.array_equal(positions, local_positions)


def test_shard_checkpoints_on_a_file_uri_and_on_any_pyarrow_filesystem(tmp_path):
    counts = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0]], np.float32))
    store = ShardStore(f"file://{tmp_path}/shared", {"run": 1})
    assert store.file("counts", 0) is None
    store.write("counts", 0, counts, extra=shard_statistics(counts, ["a", "b", "c"]))
    store.write("encoded", 1, np.eye(2, dtype=np.float32))
    again = ShardStore(f"file://{tmp_path}/shared", {"run": 1})  # another process, or another node
    assert again.file("counts", 0) == "counts-000000.npz" and again.file("counts", 1) is None
    assert (again.read("counts", 0) != counts).nnz == 0
    assert again.read_extra("counts", 0) == {"terms": ["a", "b", "c"], "df": [1, 1, 1], "length": 6}
    assert np.array_equal(again.read("encoded", 1), np.eye(2, dtype=np.float32))

    subtree = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    remote = ShardStore("bucket/encodings", {"run": 1}, filesystem=subtree)
    remote.write("weights", 2, counts)
    assert (tmp_path / "bucket" / "encodings" / remote.cache.key / "weights-000002.npz").is_file()
    assert (remote.read("weights", 2) != counts).nnz == 0
    assert not list((tmp_path / "bucket").rglob("*.tmp-*"))
