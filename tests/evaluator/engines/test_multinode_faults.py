"""A worker node removed while `--engine ray` encodes: the job finishes on the node left, with the local engine's
result, and the shards finished before the removal are not redone. The removal waits on a state (a shard
checkpointed, others not yet), never on a time. Both tests run on the session's cluster (conftest.py); a removed
node is replaced by a fresh one after the test."""

import threading

import pytest
import ray

from evaluator.index import cache as encoding_cache
from tests.evaluator.engines.test_distributed import (
    SPLADE_SHORT,
    _assert_same,
    _evaluate,
    _stored_samples,
)

pytestmark = pytest.mark.ray  # excluded from `make check`

SHARDS = 6
CHUNK = 25  # 150 documents: one chunk per shard


@pytest.fixture
def cluster_to_lose_a_node(ray_cluster):
    """The session's cluster; a worker node the test removes is replaced by a fresh one afterwards."""
    yield ray_cluster
    cluster, workers = ray_cluster
    for i, node in enumerate(workers):
        if node not in cluster.worker_nodes:
            workers[i] = cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()


def test_removed_worker_node_and_the_job_still_finishes(cluster_to_lose_a_node, small_scifact, local_result,
                                                         tmp_path, monkeypatch):
    cluster, workers = cluster_to_lose_a_node
    model = SPLADE_SHORT
    monkeypatch.setattr(encoding_cache, "ENCODE_CHUNK", CHUNK)
    local = local_result(model, CHUNK)
    cache_dir = tmp_path / "ray"
    removed: dict[str, object] = {}
    job_done = threading.Event()

    def remove_after_first_shard():
        while not job_done.is_set():
            finished = sorted(cache_dir.glob("encodings/*/encoded-*.npz"))
            if finished and len(finished) < SHARDS:
                removed["before"] = {p.name: p.stat().st_mtime_ns for p in finished}
                cluster.remove_node(workers[1])
                removed["node"] = workers[1].node_id
                return
            job_done.wait(0.01)  # a polling interval, not a deadline

    remover = threading.Thread(target=remove_after_first_shard)
    remover.start()
    try:
        distributed = _evaluate(model, small_scifact, cache_dir, "ray", workers=2, shards=SHARDS)
    finally:
        job_done.set()
        remover.join()
    assert "node" in removed, "the encoder finished every shard before one was checkpointed and a node removed"
    assert removed["node"] not in {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    _assert_same(distributed, local)
    assert _stored_samples(distributed) == _stored_samples(local)
    after = {p.name: p.stat().st_mtime_ns for p in cache_dir.glob("encodings/*/encoded-*.npz")}
    assert len(after) == SHARDS
    assert all(after[name] == mtime for name, mtime in removed["before"].items())  # finished shards kept


def test_rerun_after_a_killed_job_redoes_only_unfinished_shards(ray_cluster, small_scifact, local_result, tmp_path,
                                                                monkeypatch):
    """The first job runs in its own process on its own Ray and is killed (its whole process group) once a shard
    is checkpointed; the rerun, on the session's cluster, reads the finished shards and encodes only the rest."""
    import os
    import signal
    import subprocess
    import sys

    from tests.conftest import ROOT

    model = SPLADE_SHORT
    cache_dir = tmp_path / "ray"
    script = (
        "from evaluator import pipeline\n"
        "from evaluator.index import cache as encoding_cache\n"
        "from evaluator.metrics import DEFAULT_MEASURES\n"
        f"encoding_cache.ENCODE_CHUNK = {CHUNK}\n"
        f"pipeline.evaluate_model({model!r}, {f'local:{small_scifact}'!r}, list(DEFAULT_MEASURES),"
        f" cache_dir={str(cache_dir)!r}, top_k=100, engine='ray', address='local', workers=1, shards={SHARDS})\n"
    )
    job = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    before: dict[str, int] = {}
    while job.poll() is None:  # wait for the state: some shards checkpointed, not all
        finished = sorted(cache_dir.glob("encodings/*/encoded-*.npz"))
        if finished and len(finished) < SHARDS:
            before = {p.name: p.stat().st_mtime_ns for p in finished}
            os.killpg(job.pid, signal.SIGKILL)
            break
        threading.Event().wait(0.01)  # a polling interval, not a deadline
    job.wait()
    assert before, "the first job ended before it could be killed mid-way"
    monkeypatch.setattr(encoding_cache, "ENCODE_CHUNK", CHUNK)
    local = local_result(model, CHUNK)
    rerun = _evaluate(model, small_scifact, cache_dir, "ray", workers=2, shards=SHARDS)
    _assert_same(rerun, local)
    after = {p.name: p.stat().st_mtime_ns for p in cache_dir.glob("encodings/*/encoded-*.npz")}
    assert len(after) == SHARDS
    assert all(after[name] == mtime for name, mtime in before.items())  # finished shards read, not redone
