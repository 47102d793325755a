"""`--engine ray` on a local Ray gives the local engine's top-k and metrics; a killed worker changes nothing."""

import os
import signal
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
import ray

from evaluator.engines import ray_engine
from evaluator.engines.shards import merge_topk, plan_shards, reduce_as_ready
from evaluator.index import cache as encoding_cache
from evaluator.index import dense as dense_index
from evaluator.metrics import DEFAULT_MEASURES
from evaluator.pipeline import evaluate_model
from evaluator.score_samples import encode_score_samples
from tests.conftest import SCIFACT, SHARED

pytestmark = pytest.mark.ray  # excluded from `make check`

SPLADE = SHARED / "models" / "splade-tiny"
# The engines' agreement does not depend on how much of a passage is read; encoding whole abstracts on one CPU
# took most of each test's time, so the equality tests cut them at 32 word pieces (the same spec on both sides).
SPLADE_SHORT = f"splade:{SPLADE},doc_max_length=32"
DENSE_SHORT = "dense:all-MiniLM-L6-v2,max_length=32"


@pytest.fixture
def local_ray(ray_cluster):
    """The session's Ray (tests/evaluator/engines/conftest.py): two worker nodes of one CPU, the driver connected."""
    return ray_cluster


@pytest.fixture(scope="session")
def ray_cache(tmp_path_factory):
    """A --cache-dir per model for the Ray runs that search the same nine shards: the first run encodes them,
    the next reads them (as a rerun does) and runs only what it tests, the search and the samples."""
    folders = {}

    def cache_of(model: str) -> Path:
        if model not in folders:
            folders[model] = tmp_path_factory.mktemp("ray-cache")
        return folders[model]

    return cache_of


def _evaluate(model, folder, cache_dir, engine, **extra):
    return evaluate_model(model, f"local:{folder}", list(DEFAULT_MEASURES), cache_dir=cache_dir, top_k=100,
                          engine=engine, **extra)


def _assert_same(ray_result, local_result):
    assert ray_result.metrics.keys() == local_result.metrics.keys()
    for name, value in local_result.metrics.items():
        assert ray_result.metrics[name] == pytest.approx(value, abs=1e-9)
        for query_id, per_query in local_result.values(name).items():
            assert ray_result.values(name)[query_id] == pytest.approx(per_query, abs=1e-9)
    ray_rankings, local_rankings = ray_result.rankings(), local_result.rankings()
    assert ray_rankings.keys() == local_rankings.keys()
    for query_id, local_top in local_rankings.items():
        ray_top = ray_rankings[query_id]
        assert [s for _, s in ray_top] == [s for _, s in local_top]  # float32 scores, bit for bit
        # a document may differ only where its score ties with the next one outside the list
        cut = local_top[-1][1]
        assert [d for d, s in ray_top if s != cut] == [d for d, s in local_top if s != cut]


def _stored_samples(result) -> dict:
    """The score samples as the result file stores them (numpy arrays do not compare as a whole)."""
    return encode_score_samples(result.score_samples, result.query_ids)


@pytest.mark.parametrize("model", ["bm25", SPLADE_SHORT, f"{SPLADE_SHORT},idf=true", DENSE_SHORT])
def test_ray_engine_matches_local_engine(model, local_ray, small_scifact, local_result, ray_cache, monkeypatch):
    monkeypatch.setattr(encoding_cache, "ENCODE_CHUNK", 15)  # both engines encode in the same batches
    monkeypatch.setattr(dense_index, "DEFAULT_BLOCK_SIZE", 15)  # and search in the same blocks
    local = local_result(model, 15, 15)
    cache_dir = ray_cache(model)
    distributed = _evaluate(model, small_scifact, cache_dir, "ray", workers=2, shards=9)
    assert len(list(cache_dir.glob("encodings/*/*-000008.np[yz]"))) >= 1  # nine shards
    _assert_same(distributed, local)
    # the same postings or embeddings; sparse shards each add per-term arrays
    assert distributed.provenance.index_bytes >= local.provenance.index_bytes > 0
    assert _stored_samples(distributed) == _stored_samples(local)  # gathered shard by shard, the same scores


def test_ray_engine_matches_local_engine_on_full_scifact(local_ray, tmp_path):
    """All 5,183 documents and 300 queries (BM25; the neural models' full runs are in benchmarks/distributed.py)."""
    local = _evaluate("bm25", SCIFACT, tmp_path / "local", "local")
    distributed = _evaluate("bm25", SCIFACT, tmp_path / "ray", "ray", workers=2, shards=7)
    assert local.metrics["nDCG@10"] == pytest.approx(0.6789, abs=5e-5)  # Pyserini's BM25-flat figure
    _assert_same(distributed, local)
    assert _stored_samples(distributed) == _stored_samples(local)


def _encoder_worker_pids() -> list[int]:
    """Processes of the encoding actors (their title names the actor class: ray::_ShardEncoder)."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"ray::_ShardEncoder" in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:  # the process ended meanwhile
            continue
    return pids


def test_killed_worker_costs_only_its_shard(local_ray, small_scifact, local_result, tmp_path, monkeypatch):
    model = SPLADE_SHORT
    monkeypatch.setattr(encoding_cache, "ENCODE_CHUNK", 25)
    reference = local_result(model, 25)
    cache_dir = tmp_path / "ray"
    killed: dict[str, object] = {}
    job_done = threading.Event()

    def kill_after_first_shard():
        """Waits for a state, not a time: a shard checkpointed while the encoder still runs (or the job's end,
        which the assertions below then report); a loaded machine only makes the wait longer."""
        while not job_done.is_set():
            finished = sorted(cache_dir.glob("encodings/*/encoded-*.npz"))
            pids = _encoder_worker_pids()
            if finished and len(finished) < 6 and pids:
                killed["before"] = {p.name: p.stat().st_mtime_ns for p in finished}
                killed["pid"] = pids[0]
                os.kill(pids[0], signal.SIGKILL)
                return
            job_done.wait(0.01)  # a polling interval, not a deadline

    killer = threading.Thread(target=kill_after_first_shard)
    killer.start()
    try:
        result = _evaluate(model, small_scifact, cache_dir, "ray", workers=1, shards=6)
    finally:
        job_done.set()
        killer.join()
    assert "pid" in killed, "the encoder finished before a shard was checkpointed and the worker could be killed"
    assert 0 < len(killed["before"]) < 6  # killed mid-way
    _assert_same(result, reference)
    after = {p.name: p.stat().st_mtime_ns for p in cache_dir.glob("encodings/*/encoded-*.npz")}
    assert len(after) == 6
    assert all(after[name] == mtime for name, mtime in killed["before"].items())  # finished shards kept


def test_rerun_reads_finished_shards(local_ray, small_scifact, tmp_path):
    first = _evaluate("bm25", small_scifact, tmp_path, "ray", workers=1, shards=4)
    files = sorted(tmp_path.glob("encodings/*/*-*.np[yz]"))
    mtimes = [p.stat().st_mtime_ns for p in files]
    second = _evaluate("bm25", small_scifact, tmp_path, "ray", workers=1, shards=4)
    assert len(files) == 8 and [p.stat().st_mtime_ns for p in files] == mtimes
    _assert_same(second, first)


def test_merge_topk_orders_by_score_then_position():
    scores = np.array([[3.0, 1.0, 2.0, 2.0, 5.0, 2.0]], np.float32)
    positions = np.arange(6)[None, :]
    assert plan_shards(10, 3, align=4) == [(0, 4), (4, 8), (8, 10)]
    parts = [(scores[:, a:b], positions[:, a:b]) for a, b in plan_shards(6, 3)]
    merged_scores, merged_positions = merge_topk(parts, 4)
    expected = np.lexsort((positions[0], -scores[0]))[:4]  # the full sort, ties to the lower position
    assert merged_positions[0].tolist() == expected.tolist()
    assert merged_scores[0].tolist() == scores[0, expected].tolist()
    padded_scores, padded_positions = merge_topk([(scores[:, :1], positions[:, :1])], 3)
    assert padded_positions[0].tolist() == [0, -1, -1] and np.isneginf(padded_scores[0, 1:]).all()


def test_local_engine_never_imports_ray(tmp_path):
    script = (
        "import sys\n"
        "from leaderboard.cli import main\n"
        f"code = main(['evaluate', '--model', 'bm25', '--dataset', 'beir/scifact', '--data-dir', {str(SCIFACT)!r},"
        f" '--out', {str(tmp_path / 'out.json')!r}, '--quiet'])\n"
        "assert code in (0, None), code\n"
        "assert 'ray' not in sys.modules, 'the local engine imported ray'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).resolve().parents[3])
    assert (tmp_path / "out.json").exists()


def test_missing_ray_is_a_one_line_error(tmp_path, monkeypatch, capsys):
    from leaderboard.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    code = main(["evaluate", "--model", "bm25", "--dataset", "beir/scifact", "--data-dir", str(SCIFACT),
                 "--out", str(tmp_path / "out.json"), "--engine", "ray", "--quiet"])
    assert code == 1
    assert "Ray is not installed; `pip install 'irboard[ray]'`" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()


def test_gpu_actors_run_the_model_on_their_gpu():
    from evaluator.engines.ray_engine import actor_overrides

    assert actor_overrides(f"splade:{SPLADE}", {"batch_size": "8"}, gpus=2) == {"batch_size": "8", "device": "cuda"}
    assert actor_overrides(f"splade:{SPLADE},device=cpu", {}, gpus=2) == {}  # the user's choice stands
    assert actor_overrides("dense:all-MiniLM-L6-v2", {}, gpus=0) == {}


def test_cpu_actors_run_as_many_torch_threads_as_their_share_of_cores():
    """Not every core of the node for each actor (the models' default): two actors on a two-core node would run
    four threads. A spec's own `threads` stands; a GPU actor's model runs on its GPU."""
    from evaluator.engines.ray_engine import encoder_overrides

    assert encoder_overrides(f"splade:{SPLADE}", {}, gpus=0, threads=1) == {"threads": "1"}
    assert encoder_overrides("dense:all-MiniLM-L6-v2", {"batch_size": "8"}, gpus=0, threads=4) == \
        {"batch_size": "8", "threads": "4"}
    assert encoder_overrides(f"splade:{SPLADE},threads=3", {}, gpus=0, threads=1) == {}
    assert encoder_overrides(f"splade:{SPLADE}", {}, gpus=1, threads=1) == {"device": "cuda"}


def test_sharded_scores_at_sampled_columns(local_ray, tmp_path):
    """Each shard scores the wanted columns it holds; the pieces go back in the columns' order."""
    from evaluator.engines.ray_engine import ShardedIndex
    from evaluator.engines.shards import ShardStore
    from evaluator.score_samples import SampleColumns

    rng = np.random.default_rng(0)
    embeddings = rng.standard_normal((50, 8)).astype(np.float32)
    plan = [(0, 20), (20, 50)]
    store = ShardStore(tmp_path, {"test": "scores_at"})
    for shard, (start, stop) in enumerate(plan):
        store.write("encoded", shard, embeddings[start:stop])
    queries = rng.standard_normal((4, 8)).astype(np.float32)
    queries[3, 0] = np.nan
    index = ShardedIndex(store, "encoded", plan, None, 16, ray.put(queries), 4)
    columns = [SampleColumns(np.array([25, 49]), np.array([0, 19, 20])), SampleColumns(np.array([], np.int64),
               np.array([3, 30])), SampleColumns(np.array([7]), np.array([8]))]
    expected = queries @ embeddings.T
    got = index.scores_at(index.queries[1:], columns)  # the queries' rows 1 to 3
    for row, (cols, (relevant, nonrelevant, nonfinite)) in enumerate(zip(columns[:2], got[:2], strict=True), 1):
        np.testing.assert_allclose(relevant, expected[row, cols.relevant], rtol=1e-6)
        np.testing.assert_allclose(nonrelevant, expected[row, cols.nonrelevant], rtol=1e-6)
        assert nonfinite == 0
    assert got[2][2] == 50  # a NaN query: every score in its row is non-finite, counted over both shards


def test_reduce_as_ready_keeps_at_most_the_window_alive():
    """Without Ray: tasks finishing in a scrambled order, merged pairwise into the full sum, never more than the
    window alive (a driver gathering every shard at once would hold all 11)."""
    order = np.random.default_rng(3).permutation(40).tolist()  # the order in which running tasks finish
    alive = set()

    def submit(i):
        alive.add(("task", i))
        return ("task", i)

    def merge(a, b):
        alive.discard(a)
        alive.discard(b)
        merged = ("merged", value(a) + value(b))
        alive.add(merged)
        return merged

    def value(item):
        return 2 ** item[1] if item[0] == "task" else item[1]

    def wait(running):
        first = min(running, key=lambda item: order.index(item[1] % 40))
        return [first], [r for r in running if r is not first]

    peaks = []
    for window in (2, 3, 4):
        final, peak = reduce_as_ready(submit, 11, merge, wait, window)
        assert value(final) == 2 ** 11 - 1  # every task's result, each once
        assert peak <= window
        peaks.append(peak)
    assert peaks[-1] == 4
    with pytest.raises(ValueError, match="window of at least 2"):
        reduce_as_ready(submit, 3, merge, wait, 1)


class _CountingGet:
    """`ray.get` that counts the shard replies (tuples holding arrays) alive in the driver at once: a reply stays
    alive while any of its arrays does."""

    def __init__(self, real):
        self.real, self.alive, self.peak, self.fetched = real, set(), 0, 0

    def __call__(self, refs, *args, **kwargs):
        value = self.real(refs, *args, **kwargs)
        for reply in value if isinstance(refs, list) else [value]:
            arrays = [a for a in reply if isinstance(a, np.ndarray)] if isinstance(reply, tuple) else []
            if arrays:
                token = object()
                self.alive.add(token)
                self.fetched += 1
                remaining = [len(arrays)]

                def gone(token=token, remaining=remaining):
                    remaining[0] -= 1
                    if remaining[0] == 0:
                        self.alive.discard(token)

                for array in arrays:
                    weakref.finalize(array, gone)
        self.peak = max(self.peak, len(self.alive))
        return value


def _sample_in_this_process(monkeypatch):
    """Score sampling as a worker runs it (`ShardedIndex.on_a_worker`), here in the test's process, so that what it
    holds and fetches can be counted; the other tests run it on a worker."""
    monkeypatch.setattr(ray_engine.ShardedIndex, "on_a_worker", lambda self, fn, *args: fn(self, *args))


@pytest.mark.parametrize("model", ["bm25", SPLADE_SHORT, DENSE_SHORT])
def test_more_shards_than_the_merge_window_keep_the_driver_bounded(model, local_ray, small_scifact, local_result,
                                                                     ray_cache, monkeypatch):
    """Nine shards, a window of two: the driver holds at most the final top-k and one shard reply at a time
    (gathering every shard's top-k or samples at once would hold nine), and the result is the local one. The
    shards' encodings are those test_ray_engine_matches_local_engine checkpointed, when it ran first."""
    monkeypatch.setattr(encoding_cache, "ENCODE_CHUNK", 15)
    monkeypatch.setattr(dense_index, "DEFAULT_BLOCK_SIZE", 15)
    local = local_result(model, 15, 15)
    indexes = []

    class Recording(ray_engine.ShardedIndex):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            indexes.append(self)

    monkeypatch.setattr(ray_engine, "ShardedIndex", Recording)
    monkeypatch.setattr(ray_engine, "MERGE_WINDOW", 2)
    _sample_in_this_process(monkeypatch)
    counting = _CountingGet(ray.get)
    monkeypatch.setattr(ray, "get", counting)
    distributed = _evaluate(model, small_scifact, ray_cache(model), "ray", workers=2, shards=9)
    (index,) = indexes
    assert len(index.plan) == 9
    assert index.peak_alive <= 2  # shard results running or awaiting a merge
    assert counting.fetched >= 9  # the sample replies and the final top-k came through ray.get, one by one
    assert counting.peak <= 2  # the final top-k and one reply
    _assert_same(distributed, local)
    assert _stored_samples(distributed) == _stored_samples(local)


def test_sample_columns_and_the_top_k_come_one_block_at_a_time(local_ray, small_scifact, tmp_path, monkeypatch):
    """The driver makes the sample columns of one block of queries at a time, each block one round of shard
    tasks, the collector keeping float32 scores: never all 20 queries' columns alive at once (the driver that
    made every query's columns first held 20). The final top-k comes back in pieces of 6 queries, one held at a
    time. The stored samples and rankings are the local engine's, byte for byte."""
    from evaluator import score_samples

    local = _evaluate("bm25", small_scifact, tmp_path / "local", "local")
    monkeypatch.setattr(ray_engine, "SAMPLE_BLOCK", 6)
    monkeypatch.setattr(ray_engine, "TOPK_PIECE", 6)
    pieces = []

    class Recording(ray_engine.TopkPieces):
        def __init__(self, *args):
            super().__init__(*args)
            pieces.append(self)

    monkeypatch.setattr(ray_engine, "TopkPieces", Recording)
    counting = _CountingGet(ray.get)
    monkeypatch.setattr(ray, "get", counting)
    alive, peak, real = set(), [0], score_samples.ScoreSampleCollector.columns_of

    def columns_of(self, query_ids):
        made = real(self, query_ids)
        for one in made:
            token = object()
            alive.add(token)
            weakref.finalize(one, alive.discard, token)
        peak[0] = max(peak[0], len(alive))
        return made

    monkeypatch.setattr(score_samples.ScoreSampleCollector, "columns_of", columns_of)
    sent, real_packed = [], score_samples.packed  # what the worker sends the driver: the stored field
    monkeypatch.setattr(score_samples, "packed", lambda samples: sent.append(samples) or real_packed(samples))
    _sample_in_this_process(monkeypatch)
    distributed = _evaluate("bm25", small_scifact, tmp_path / "ray", "ray", workers=2, shards=3)
    assert 0 < peak[0] <= 6
    (topk,) = pieces
    assert len(topk.refs) == 4 and topk.fetched == 4  # 20 queries in pieces of 6, each fetched once
    assert counting.peak <= 2  # a piece of the top-k or a shard's sample reply, and the one being fetched
    assert {q.nonrelevant.dtype for q in sent[0].queries.values()} == {np.dtype(np.float32)}
    assert distributed.score_samples.queries.stored == _stored_samples(local)
    _assert_same(distributed, local)
    assert _stored_samples(distributed) == _stored_samples(local)
