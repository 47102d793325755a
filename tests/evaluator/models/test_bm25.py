"""BM25 adapter: Lucene formula, agreement with bm25s, Lucene norms, options and ids, SciFact vs Pyserini."""

import json
import math

import bm25s
import numpy as np
import pytest
import pytrec_eval
import scipy.sparse as sp

from evaluator.errors import ModelLoadError, UnknownNameError
from evaluator.index.sparse import SparseIndex
from evaluator.models import load_model
from evaluator.models.base import SparseModel
from evaluator.models.bm25 import BM25Model, bm25_weights, lucene_norm_length
from tests.conftest import SCIFACT


def counts_of(token_lists, vocab):
    rows = [i for i, doc in enumerate(token_lists) for _ in doc]
    cols = [t for doc in token_lists for t in doc]
    matrix = sp.csr_matrix((np.ones(len(cols), np.float32), (rows, cols)), shape=(len(token_lists), vocab))
    matrix.sum_duplicates()
    return matrix


def test_hand_example_follows_lucene_formula():
    docs = [["a", "b", "a"], ["b", "c"], ["c", "c", "c", "d"]]
    model = BM25Model(k1=1.2, b=0.75, stemmer=False, stopwords=False, norms="exact")
    weights = model.encode_corpus([("", " ".join(d)) for d in docs]).toarray()
    n, avgdl = 3, (3 + 2 + 4) / 3

    def expected(tf, dl, df):
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        return idf * tf / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))

    ids = model.vocabulary
    assert weights[0, ids["a"]] == pytest.approx(expected(2, 3, 1), rel=1e-6)
    assert weights[0, ids["b"]] == pytest.approx(expected(1, 3, 2), rel=1e-6)
    assert weights[2, ids["c"]] == pytest.approx(expected(3, 4, 2), rel=1e-6)
    assert weights[1, ids["a"]] == 0
    query = model.encode_queries(["c c a"], sp.csr_matrix(weights)).toarray()[0]
    assert query[ids["c"]] == 2 and query[ids["a"]] == 1 and query.sum() == 3


def test_scores_equal_bm25s_lucene_on_the_same_tokens():
    rng = np.random.default_rng(7)
    vocab = 40
    p = 1 / np.arange(1, vocab + 1)
    corpus = [rng.choice(vocab, size=rng.integers(1, 30), p=p / p.sum()).tolist() for _ in range(300)]
    queries = [rng.choice(vocab, size=rng.integers(1, 6)).tolist() for _ in range(25)]
    retriever = bm25s.BM25(k1=0.9, b=0.4, method="lucene")
    retriever.index((corpus, {t: t for t in range(vocab)}), show_progress=False)
    ours = counts_of(queries, vocab) @ bm25_weights(counts_of(corpus, vocab), 0.9, 0.4).T
    for row, query in enumerate(queries):
        present = [t for t in query if t in retriever.unique_token_ids_set]
        expected = retriever.get_scores(present) if present else np.zeros(len(corpus))
        np.testing.assert_allclose(ours[row].toarray().ravel(), expected, rtol=1e-5, atol=1e-6)


def lucene_round_trip(length: int) -> int:
    """Lucene's SmallFloat.intToByte4 then byte4ToInt, written out bit by bit."""
    free = 24
    if length < free:
        return length
    value = length - free
    bits = value.bit_length()
    if bits < 4:
        encoded = value
    else:
        shift = bits - 4
        encoded = ((value >> shift) & 0x07) | ((shift + 1) << 3)
    mantissa, shift = encoded & 0x07, (encoded >> 3) - 1
    decoded = mantissa if shift == -1 else (mantissa | 0x08) << shift
    return free + decoded


def test_lucene_norm_lengths_match_smallfloat_byte4():
    lengths = np.arange(0, 20_000)
    assert lucene_norm_length(lengths).tolist() == [lucene_round_trip(int(n)) for n in lengths]
    assert lucene_norm_length(np.array([23, 24, 40, 41, 300]))[-1] == 24 + (276 >> 5 << 5)


@pytest.mark.parametrize(
    ("spec", "model_id"),
    [
        ("bm25", "bm25"),
        ("bm25:k1=0.9,b=0.4,stemmer=porter", "bm25"),
        ("bm25:k1=1.5,b=0.75", "bm25-k1-1.5-b-0.75"),
        ("bm25:stemmer=false", "bm25-stemmer-none"),
        ("bm25:stemmer=english,stopwords=false", "bm25-stemmer-english-stopwords-none"),
        ("bm25:norms=exact", "bm25-norms-exact"),
        ("bm25:language=fr", "bm25"),
    ],
)
def test_model_ids(spec, model_id):
    model = load_model(spec)
    assert isinstance(model, SparseModel)
    assert model.info.id == model_id and model.info.type == "lexical"


def test_settings_record_the_analyzer():
    info = load_model("bm25:language=de,k1=1.2").info
    assert info.settings == {
        "k1": 1.2, "b": 0.4, "language": "de", "stemmer": "german", "stopwords": True, "stopword_count": 0,
        "norms": "lucene",
    }  # fmt: skip


def test_stop_word_file_option(tmp_path):
    path = tmp_path / "Mine.txt"
    path.write_text("cells\n", encoding="utf-8")
    model = load_model(f"bm25:stopwords={path}")
    assert model.info.id == "bm25-stopwords-mine"
    model.encode_corpus([("", "cells divide")])
    assert list(model.vocabulary) == ["divid"]


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("bm25:k=1.2", UnknownNameError, "Did you mean 'k1'"),
        ("bm25:k1=abc", ModelLoadError, "k1='abc' is not a number"),
        ("bm25:b=1.5", ModelLoadError, r"b=1.5 must lie in \[0, 1\]"),
        ("bm25:norms=fast", ModelLoadError, "use lucene or exact"),
        ("bm25:language=xx", UnknownNameError, "language 'xx'"),
        ("bm25:somefile", ModelLoadError, "takes only options"),
    ],
)
def test_bad_options_raise_one_line_errors(spec, error, message):
    with pytest.raises(error, match=message):
        load_model(spec)


def test_queries_need_the_corpus_vocabulary():
    model = BM25Model()
    with pytest.raises(RuntimeError, match="encode the corpus"):
        model.encode_queries(["cells"], sp.csr_matrix((1, 5), dtype=np.float32))


def test_scifact_ndcg10_matches_pyserini_bm25_flat():
    docs = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").open()]
    texts = {q["_id"]: q["text"] for q in map(json.loads, (SCIFACT / "queries.jsonl").open())}
    qrels: dict[str, dict[str, int]] = {}
    for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, score = line.split("\t")
        qrels.setdefault(query_id, {})[doc_id] = int(score)
    query_ids = sorted(qrels)

    model = load_model("bm25")  # k1 0.9, b 0.4, Porter, Lucene stop words and norms: Pyserini's settings
    corpus = model.encode_corpus([(d["title"], d["text"]) for d in docs])
    scores, indices = SparseIndex.from_documents(corpus).search(model.encode_queries([texts[q] for q in query_ids], corpus), 1000)
    run = {
        q: {docs[j]["_id"]: float(s) for s, j in zip(scores[i], indices[i], strict=True) if j >= 0}
        for i, q in enumerate(query_ids)
    }
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    assert np.mean([m["ndcg_cut_10"] for m in per_query.values()]) == pytest.approx(0.6789, abs=0.005)
