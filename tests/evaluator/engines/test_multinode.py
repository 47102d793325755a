"""`--engine ray` on a multi-node cluster on one machine (a head with no CPUs, two worker nodes, as Ray's own
tests build it): every shard task runs on a worker node and reads its documents from the corpus file the driver
put under `--cache-dir`; the driver never loads the corpus's ids; the per-query values, rankings and score
samples equal the local engine's for BM25, SPLADE and dense (exact search per shard, top-k merged)."""

import contextlib
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import ray

from evaluator.datasets import corpus as corpus_module
from evaluator.index import cache as encoding_cache
from evaluator.index import dense as dense_index
from tests.conftest import write_scifact_slice
from tests.evaluator.engines.test_distributed import SPLADE, _assert_same, _evaluate, _stored_samples

pytestmark = pytest.mark.ray  # excluded from `make check`

ROOT = Path(__file__).resolve().parents[3]


@contextlib.contextmanager
def head_and_two_workers():
    """A Ray cluster on this machine: a head without CPUs (the driver runs there, no task can) and two worker
    nodes of one CPU; yields (cluster, worker nodes) with the driver connected."""
    from ray.cluster_utils import Cluster

    cluster = Cluster()
    cluster.add_node(num_cpus=0)
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, include_dashboard=False)
    try:
        yield cluster, workers
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture(scope="module")
def two_node_cluster():
    with head_and_two_workers() as nodes:
        yield nodes


@pytest.fixture(scope="module")
def small_scifact(tmp_path_factory):
    folder = tmp_path_factory.mktemp("scifact-120")
    write_scifact_slice(folder, num_queries=15, num_docs=120)
    return folder


class _NoIdTable:
    def __init__(self, path):
        raise AssertionError(f"the driver built the id lookup table of {path}")


@pytest.mark.parametrize("model", ["bm25", f"splade:{SPLADE}", "dense:all-MiniLM-L6-v2"])
def test_two_worker_nodes_give_the_local_engines_result(model, two_node_cluster, small_scifact, tmp_path,
                                                         monkeypatch):
    monkeypatch.setattr(encoding_cache, "ENCODE_CHUNK", 30)  # both engines encode in the same batches
    monkeypatch.setattr(dense_index, "DEFAULT_BLOCK_SIZE", 30)
    local = _evaluate(model, small_scifact, tmp_path / "local", "local")
    with monkeypatch.context() as driver:  # the Ray driver holds no list of ids: it never builds the table
        driver.setattr(corpus_module, "_IdTable", _NoIdTable)
        distributed = _evaluate(model, small_scifact, tmp_path / "ray", "ray", workers=2, shards=4)
    assert len(list(tmp_path.glob("ray/encodings/*/*-000003.np[yz]"))) >= 1  # four shards
    _assert_same(distributed, local)
    assert _stored_samples(distributed) == _stored_samples(local)
    # the workers read the corpus from --cache-dir: the driver's Arrow file, named by its sha256
    (shared,) = tmp_path.glob("ray/corpora/*.arrow")
    assert shared.name == f"{hashlib.sha256(shared.read_bytes()).hexdigest()}.arrow"


def test_shared_cache_uri_lets_a_rerun_skip_every_finished_shard(two_node_cluster, small_scifact, tmp_path):
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


@pytest.mark.parametrize("model", [f"splade:{SPLADE}", "dense:all-MiniLM-L6-v2"])
def test_the_driver_never_imports_torch(model, two_node_cluster, small_scifact, tmp_path):
    """The driver loads no neural model: the workers read its information and encode the queries, so a driver
    process that evaluates SPLADE or a dense model on the cluster never imports torch (or transformers); the
    encoding actors are plain Ray actors, so it does not import Ray Data either."""
    cluster, _ = two_node_cluster
    script = (
        "import sys\n"
        "from evaluator.metrics import DEFAULT_MEASURES\n"
        "from evaluator.pipeline import evaluate_model\n"
        f"result = evaluate_model({model!r}, 'local:{small_scifact}', list(DEFAULT_MEASURES), top_k=100,"
        f" engine='ray', address={cluster.address!r}, cache_dir={str(tmp_path / 'cache')!r}, shards=2)\n"
        "assert result.metrics['nDCG@10'] > 0.3, result.metrics\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'tokenizers', 'ray.data')"
        " if m in sys.modules)\n"
        "assert not heavy, f'the driver imported {heavy}'\n"
        "print('driver clean')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "driver clean" in done.stdout
