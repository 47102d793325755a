"""SPLADE adapter with the real SPLADE-tiny checkpoint on SciFact documents."""

import hashlib
import json
from itertools import islice

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from transformers import AutoModelForMaskedLM, AutoTokenizer

from evaluator.errors import ModelLoadError, UnknownNameError
from evaluator.models import load_model
from evaluator.models.base import SparseModel
from evaluator.models.splade import idf_weights, keep_largest, nonzeros_to_csr
from tests.conftest import SCIFACT, SHARED

SPLADE_TINY = SHARED / "models" / "splade-tiny"


@pytest.fixture(scope="module")
def model():
    return load_model(f"splade:{SPLADE_TINY}")


@pytest.fixture(scope="module")
def docs():
    with (SCIFACT / "corpus.jsonl").open() as lines:
        return [(d["title"], d["text"]) for d in map(json.loads, islice(lines, 50))]


@pytest.fixture(scope="module")
def corpus(model, docs):
    return model.encode_corpus(docs)


QUERIES = ["0-dimensional biomaterials show inductive properties.", "ALDH1 expression is associated with poorer prognosis."]


def test_corpus_rows_are_sparse_non_negative_weights_over_the_vocabulary(model, corpus):
    assert isinstance(model, SparseModel)
    assert corpus.shape == (50, 30522) and corpus.dtype == np.float32
    assert corpus.data.min() > 0
    assert (np.diff(corpus.indptr) > 0).all()
    assert 20 < corpus.nnz / 50 < 2000


def test_row_is_the_masked_max_of_log1p_relu_logits(docs, corpus):
    tokenizer = AutoTokenizer.from_pretrained(SPLADE_TINY)
    mlm = AutoModelForMaskedLM.from_pretrained(SPLADE_TINY).eval()
    title, text = docs[3]
    encoded = tokenizer([f"{title} {text}"], max_length=256, truncation=True, return_tensors="pt")
    with torch.no_grad():
        logits = mlm(**encoded).logits[0]  # (tokens, vocab); one text, so no padding to mask
    expected = torch.log(1 + torch.clamp(logits, min=0)).max(dim=0).values.numpy()
    np.testing.assert_allclose(corpus[3].toarray().ravel(), expected, rtol=1e-4, atol=1e-5)


def test_padding_is_masked_so_rows_do_not_depend_on_batching(docs, corpus):
    single = load_model(f"splade:{SPLADE_TINY},batch_size=1").encode_corpus(docs[:6])
    np.testing.assert_allclose(single.toarray(), corpus[:6].toarray(), rtol=1e-4, atol=1e-5)


def test_query_weights_and_idf_option(model, corpus):
    plain = model.encode_queries(QUERIES, corpus)
    weighted = load_model(f"splade:{SPLADE_TINY},idf=true").encode_queries(QUERIES, corpus)
    df = np.bincount(corpus.indices, minlength=corpus.shape[1])
    idf = np.log(1 + (50 - df + 0.5) / (df + 0.5))
    np.testing.assert_allclose(weighted.toarray(), plain.toarray() * idf, rtol=1e-5)
    np.testing.assert_allclose(idf_weights(corpus), idf)
    assert plain.shape == (2, 30522) and plain.nnz > 0


def test_query_max_length_truncates(model, corpus):
    long_query = " ".join(["protein"] * 10 + ["kinase"] * 100)
    short = load_model(f"splade:{SPLADE_TINY},query_max_length=8").encode_queries([long_query], corpus)
    full = model.encode_queries([long_query], corpus)
    assert not np.allclose(short.toarray(), full.toarray())


def test_pruning_keeps_each_documents_largest_weights(corpus, docs):
    pruned = load_model(f"splade:{SPLADE_TINY},prune=10").encode_corpus(docs[:5])
    for row in range(5):
        full = corpus[row].toarray().ravel()
        kept = pruned[row].toarray().ravel()
        assert (kept > 0).sum() == 10
        assert kept[kept > 0].min() >= np.sort(full)[-10] - 1e-5
        np.testing.assert_allclose(kept[kept > 0], full[kept > 0], rtol=1e-4)


def test_threshold_drops_small_weights(corpus, docs):
    cut = load_model(f"splade:{SPLADE_TINY},threshold=0.5").encode_corpus(docs[:5])
    assert cut.data.min() >= 0.5
    assert cut.nnz == (corpus[:5].data >= 0.5).sum()


def test_keep_largest_breaks_ties_by_lower_column():
    matrix = sp.csr_matrix(np.array([[0, 2, 1, 2, 0], [0, 0, 0, 0, 0], [3, 0, 0, 0, 1]], dtype=np.float32))
    assert keep_largest(matrix, 1).toarray().tolist() == [[0, 2, 0, 0, 0], [0, 0, 0, 0, 0], [3, 0, 0, 0, 0]]


def test_gpu_path_builds_the_same_csr_as_the_dense_copy():
    # The path a GPU takes (only nonzeros leave the device) run on CPU tensors: empty rows, NaN, -0.0, ties.
    rng = np.random.default_rng(7)
    dense = np.where(rng.random((9, 50)) < 0.2, rng.random((9, 50)), 0).astype(np.float32)
    dense[3] = 0
    dense[0, :3] = [np.nan, -0.0, 1.0]
    dense[8, -1] = 2.5
    expected, built = sp.csr_matrix(dense), nonzeros_to_csr(torch.from_numpy(dense))
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(built, name), getattr(expected, name), equal_nan=True), name
    assert built.dtype == np.float32 and built.shape == dense.shape
    assert nonzeros_to_csr(torch.zeros((0, 50))).shape == (0, 50)


def test_model_info(model):
    weights = (SPLADE_TINY / "model.safetensors").read_bytes()
    info = model.info
    assert info.id == "splade-tiny" and info.type == "sparse" and info.dim == 30522
    assert info.revision == "sha256:" + hashlib.sha256(weights).hexdigest()[:16]
    mlm = AutoModelForMaskedLM.from_pretrained(SPLADE_TINY)
    assert info.parameters == sum(p.numel() for p in mlm.parameters())
    assert info.settings == {"query_max_length": 64, "doc_max_length": 256, "idf": False, "prune": 0, "threshold": 0.0}
    named = load_model(f"splade:{SPLADE_TINY},id=org/splade-tiny,license=apache-2.0").info
    assert (named.id, named.license, named.settings) == ("org/splade-tiny", "apache-2.0", info.settings)


def test_missing_directory_is_a_model_load_error(tmp_path):
    with pytest.raises(ModelLoadError, match="no such model directory"):
        load_model(f"splade:{tmp_path / 'nowhere'}")
    with pytest.raises(ModelLoadError, match="cannot load a masked-language model"):
        load_model(f"splade:{tmp_path}")  # exists, but holds no model


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("splade", ModelLoadError, "missing model"),
        (f"splade:{SPLADE_TINY},idf=maybe", ModelLoadError, "not a boolean"),
        (f"splade:{SPLADE_TINY},max_length=12", UnknownNameError, "Did you mean"),
        (f"splade:{SPLADE_TINY},doc_max_length=1", ModelLoadError, "at least 2"),
    ],
)
def test_bad_specs(spec, error, message):
    with pytest.raises(error, match=message):
        load_model(spec)
