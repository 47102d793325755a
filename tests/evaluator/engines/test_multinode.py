"""`--engine ray` on a multi-node cluster on one machine (the session's: a head with no CPUs, two worker nodes, as
Ray's own tests build it): every shard task runs on a worker node and reads its documents from the corpus file the
driver put under `--cache-dir`; the driver never loads the corpus's ids nor, for a neural model, torch; the per-query
values, rankings and score samples equal the local engine's for BM25, SPLADE and dense (exact search per shard,
top-k merged). The driver is a process of its own, run once per model for both tests that read it."""

import hashlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tests.evaluator.engines.test_distributed import (
    DENSE_SHORT,
    SPLADE_SHORT,
    _assert_same,
    _evaluate,
    _stored_samples,
)

pytestmark = pytest.mark.ray  # excluded from `make check`

ROOT = Path(__file__).resolve().parents[3]
CHUNK = 15  # documents per encoding batch and per dense search block, in the driver and in the local engine

DRIVER = """\
import pickle
import sys

from evaluator.datasets import corpus as corpus_module
from evaluator.index import cache as encoding_cache
from evaluator.index import dense as dense_index
from evaluator.metrics import DEFAULT_MEASURES
from evaluator.pipeline import evaluate_model


class NoIdTable:  # the Ray driver holds no list of ids: it never builds the table
    def __init__(self, path):
        raise AssertionError(f"the driver built the id lookup table of {path}")


model, folder, address, cache_dir, chunk, out = sys.argv[1:]
encoding_cache.ENCODE_CHUNK = dense_index.DEFAULT_BLOCK_SIZE = int(chunk)  # the local engine's batches
corpus_module._IdTable = NoIdTable
result = evaluate_model(model, f"local:{folder}", list(DEFAULT_MEASURES), top_k=100, engine="ray", address=address,
                        cache_dir=cache_dir, workers=2, shards=4)
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers", "tokenizers", "ray.data")
               if m in sys.modules)
with open(out, "wb") as f:
    pickle.dump((result, heavy), f)
"""


@pytest.fixture(scope="module")
def driver_run(ray_cluster, small_scifact, tmp_path_factory):
    """`driver_run(model)`: (the driver process's exit, its result or None, the heavy modules it imported, its
    --cache-dir) for `model` evaluated on the cluster in a process of its own, run once per model."""
    cluster, _ = ray_cluster
    runs = {}

    def run(model: str):
        if model not in runs:
            folder = tmp_path_factory.mktemp("driver")
            out = folder / "result.pickle"
            done = subprocess.run(
                [sys.executable, "-c", DRIVER, model, str(small_scifact), cluster.address, str(folder / "ray"),
                 str(CHUNK), str(out)],
                cwd=ROOT, capture_output=True, text=True, env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"})
            result, heavy = pickle.loads(out.read_bytes()) if done.returncode == 0 else (None, None)
            runs[model] = done, result, heavy, folder / "ray"
        return runs[model]

    return run


@pytest.mark.parametrize("model", ["bm25", SPLADE_SHORT, DENSE_SHORT])
def test_two_worker_nodes_give_the_local_engines_result(model, driver_run, local_result):
    local = local_result(model, CHUNK, CHUNK)
    done, distributed, _, cache_dir = driver_run(model)
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(list(cache_dir.glob("encodings/*/*-000003.np[yz]"))) >= 1  # four shards
    _assert_same(distributed, local)
    assert _stored_samples(distributed) == _stored_samples(local)
    # the workers read the corpus from --cache-dir: the driver's Arrow file, named by its sha256
    (shared,) = cache_dir.glob("corpora/*.arrow")
    assert shared.name == f"{hashlib.sha256(shared.read_bytes()).hexdigest()}.arrow"


def test_shared_cache_uri_lets_a_rerun_skip_every_finished_shard(ray_cluster, small_scifact, tmp_path):
    """`--cache-dir file://…` (what `s3://…` or `gs://…` is to machines without a shared mount): BM25's two
    passes checkpoint there, the result equals the local engine's, and a rerun rewrites no checkpoint."""
    local = _evaluate("bm25", small_scifact, tmp_path / "local", "local")
    shared = f"file://{tmp_path}/shared"
    first = _evaluate("bm25", small_scifact, shared, "ray", workers=2, shards=4)
    checkpoints = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("shared/encodings/*/*")}
    assert {f"{phase}-00000{s}.npz" for phase in ("counts", "weights") for s in range(4)} <= set(checkpoints)
    corpus_files = {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("shared/corpora/*")}
    assert len(corpus_files) == 1  # the corpus, uploaded once, whole (no temporary file left)
    _assert_same(first, local)
    rerun = _evaluate("bm25", small_scifact, shared, "ray", workers=2, shards=4)
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("shared/encodings/*/*")} == checkpoints
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.glob("shared/corpora/*")} == corpus_files
    _assert_same(rerun, local)


@pytest.mark.parametrize("model", [SPLADE_SHORT, DENSE_SHORT])
def test_the_driver_never_imports_torch(model, driver_run):
    """The driver loads no neural model: the workers read its information and encode the queries, so a driver
    process that evaluates SPLADE or a dense model on the cluster never imports torch (or transformers); the
    encoding actors are plain Ray actors, so it does not import Ray Data either."""
    done, result, heavy, _ = driver_run(model)
    assert done.returncode == 0, done.stderr[-3000:]
    assert result.metrics["nDCG@10"] > 0.3, result.metrics
    assert heavy == [], f"the driver imported {heavy}"
