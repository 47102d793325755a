"""One Ray cluster for every Ray test of this folder, and one SciFact slice written once.

Starting a cluster and the workers that import torch costs far more than the small encodings the tests make, so
the tests share: a head without CPUs (the driver runs there, no task can) and two worker nodes of one CPU, as
Ray's own tests build a multi-node cluster on one machine. A test that removes a node puts a fresh one back (a
removed node says so to the cluster as it stops: no health-check wait).
"""

import contextlib

import pytest

from tests.conftest import write_scifact_slice


@contextlib.contextmanager
def head_and_two_workers():
    """A Ray cluster on this machine with the driver connected; yields (cluster, worker nodes: a list that a test
    removing a node updates)."""
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster()
    cluster.add_node(num_cpus=0, include_dashboard=False)
    workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, include_dashboard=False)
    try:
        yield cluster, workers
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture(scope="package")
def ray_cluster():
    """(cluster, its two worker nodes), the driver connected, for this folder's tests. Not for the session: a test
    process still connected to Ray when a later test forks (the build's worker pools) can be ended by Ray."""
    with head_and_two_workers() as nodes:
        yield nodes


@pytest.fixture(scope="session")
def small_scifact(tmp_path_factory):
    """A BEIR-layout folder: 20 SciFact test queries, their judged documents and others, 150 in all."""
    folder = tmp_path_factory.mktemp("scifact-150")
    write_scifact_slice(folder, num_queries=20, num_docs=150)
    return folder


@pytest.fixture(scope="session")
def local_result(small_scifact, tmp_path_factory):
    """`local_result(model, chunk, block)`: the local engine's result on the slice, encoding `chunk` documents at
    a time and searching dense blocks of `block` (None: the default), made once per session: the Ray tests compare
    with it, and Ray shards start at those bounds (the same batches, hence the same float32 values)."""
    from evaluator.index import cache as encoding_cache
    from evaluator.index import dense as dense_index
    from evaluator.metrics import DEFAULT_MEASURES
    from evaluator.pipeline import evaluate_model

    made = {}

    def local(model: str, chunk: int, block: int | None = None):
        if (model, chunk, block) not in made:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(encoding_cache, "ENCODE_CHUNK", chunk)
                if block is not None:
                    patch.setattr(dense_index, "DEFAULT_BLOCK_SIZE", block)
                made[model, chunk, block] = evaluate_model(
                    model, f"local:{small_scifact}", list(DEFAULT_MEASURES), top_k=100, engine="local",
                    cache_dir=tmp_path_factory.mktemp("local-cache"))
        return made[model, chunk, block]

    return local
