"""`irboard evaluate --engine ray`: corpus encoding and search on a Ray cluster, shard by shard.

Neural models encode on a pool of Ray actors, each given its next shard when free (one model replica per
actor, a GPU per actor when the cluster has GPUs); BM25 counts terms per shard in Ray tasks, each also giving its
shard's statistics (terms, document frequencies, total length), which one task adds up (vocabulary in
corpus order, document frequencies, average length) without reading any count matrix; a second pass of
tasks turns each shard's counts into weights, and the queries are encoded on a worker with the vocabulary,
which never reaches the driver. Every query then goes to every shard and the per-shard
top-k lists merge exactly (`shards.merge_topk`). Each finished shard is a checkpoint file; a lost worker
costs only its shard (Ray restarts it) and a rerun reads finished shards instead of computing them.
Sparse shards search with the corpus-wide largest weight per term as their pruning bound, so every
shard accumulates a query's terms in the same order as the local index and the float32 scores match;
SPLADE's idf option reads the document frequencies summed over shards. Score samples are gathered the
same way, by a task on a worker (`ShardedIndex.on_a_worker`) that makes each block of queries' sample columns,
has each shard score those it holds and fits the samples to their size budget: the driver never loads the
index and receives only the fitted samples. The final top-k comes to the driver in pieces of `TOPK_PIECE`
queries, one held at a time while the ranking reads it.
The driver sends no documents either: each task reads its shard's range from the corpus's Arrow file
(`evaluator.datasets.corpus.read_documents`), which the driver copies once to `--cache-dir/corpora/<sha256>.arrow`
(a folder every node sees, or a `pyarrow.fs` URI), so no worker machine needs a copy of its own. The driver keeps
no list of the corpus's ids either (`evaluator.datasets.corpus.IdsOnDemand`, used by `pipeline`).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import scipy.sparse as sp

from evaluator.engines.shards import (
    ShardStore,
    bm25_shard_weights,
    column_max,
    corpus_statistics,
    merge_topk,
    plan_shards,
    reduce_as_ready,
    remap_columns,
    shard_statistics,
    shard_term_counts,
)
from evaluator.errors import IrboardError
from evaluator.progress import step

logger = logging.getLogger(__name__)

CPUS_PER_ACTOR = 0.5  # fractional, so the search and merge tasks still get a CPU beside the encoders


def connect(address: str | None) -> dict:
    """Join the cluster at `address` (or an already started Ray); returns its resources."""
    try:
        import ray
    except ImportError as exc:
        raise IrboardError("evaluate --engine ray: Ray is not installed; `pip install 'irboard[ray]'`") from exc
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, include_dashboard=False)
    return ray.cluster_resources()


def ray_retrieve(model_spec, overrides, model, spec, docs, query_texts, top_k, timings, *, address=None,
                 cache_dir=None, workers=None, shards=None):
    """Like `pipeline.retrieve` on Ray: returns (scores (q, k), positions (q, k), index, queries)."""
    resources = connect(address)  # first: a clear error when Ray is not installed
    from evaluator.index import cache as encoding_cache
    from evaluator.index import dense as dense_index

    lexical, dense = model.info.type == "lexical", model.info.type == "dense"
    gpus = int(resources.get("GPU", 0))
    workers = workers or gpus or max(1, int(resources.get("CPU", 1) / CPUS_PER_ACTOR / 2))
    # Neural shards start at the local engine's chunk bounds and encode chunk by chunk: the same batches,
    # hence bit-identical encodings (batch composition changes padding and so the last float bits).
    # Dense shards also start at search-block bounds: a block's float32 scores depend on its rows alone.
    chunk, block_size = encoding_cache.ENCODE_CHUNK, dense_index.DEFAULT_BLOCK_SIZE
    align = 1 if lexical else math.lcm(chunk, block_size) if dense else chunk
    plan = plan_shards(len(docs), shards or max(2 * workers, math.ceil(len(docs) / 100_000)), align)
    # the corpus file, under --cache-dir when given: each task reads its own range of documents from it
    source, corpus_sha256 = encoding_cache.shared_corpus(docs.corpus.path, cache_dir)
    store = ShardStore(_root(cache_dir), _key(model, spec, corpus_sha256, len(plan)))
    with step(f"encoding {len(docs)} documents in {len(plan)} shards on Ray", timings, "index_s"):
        vocabulary = None
        if lexical:
            phase, vocabulary = _bm25_passes(model_spec, overrides, model, store, plan, source, len(docs))
        else:
            _encode_with_actors(model_spec, overrides, store, plan, source, workers, gpus, chunk)
            phase = "encoded"
        bound = doc_freqs = None
        if not dense:  # corpus-wide largest weight per term (pruning bound) and document frequencies
            bound, doc_freqs = _corpus_bounds(store, phase, len(plan))
    timings["encode_docs_per_s"] = len(docs) / max(timings["index_s"], 1e-9)
    with step(f"encoding and searching {len(query_texts)} queries on {len(plan)} shards", timings, "search_s"):
        if lexical:  # on a worker, with the corpus vocabulary that stays on the cluster
            queries = _encode_bm25_queries.remote(model_spec, overrides, vocabulary, list(query_texts))
        else:  # on a worker, where the model is: the driver loads no neural model and never holds the queries
            idf = (doc_freqs, len(docs)) if getattr(model, "idf", False) else None
            queries = _encode_queries.options(num_gpus=1 if gpus else 0).remote(
                model_spec, actor_overrides(model_spec, overrides, gpus), list(query_texts), idf)
        index = ShardedIndex(store, phase, plan, bound, block_size, queries, len(query_texts))
        scores, positions = index.search(top_k)
    timings["queries_per_s"] = len(query_texts) / max(timings["search_s"], 1e-9)
    return scores, positions, index, index.queries


class RemoteModel:
    """What the driver knows of a neural model it never loads: its `info` and SPLADE's `idf` option, read on a
    worker. The workers encode (`_ShardEncoder`, `_encode_queries`)."""

    def __init__(self, info, idf: bool):
        self.info, self.idf = info, idf


def load_model_info(model_spec: str, overrides: dict[str, str], address: str | None):
    """The model as the Ray driver holds it: BM25 itself (light: its settings; its vocabulary and queries stay on
    the workers), a neural model as a `RemoteModel` loaded on a worker (on a GPU when the cluster has
    them, as the encoding actors run it), so the driver never imports torch."""
    from evaluator.models import load_model, parse_model_spec

    if parse_model_spec(model_spec)[0] == "bm25":
        return load_model(model_spec, **overrides)
    gpus = int(connect(address).get("GPU", 0))
    import ray

    return ray.get(_model_info.options(num_gpus=1 if gpus else 0).remote(
        model_spec, actor_overrides(model_spec, overrides, gpus)))


def _model_info_of(model_spec, overrides):
    from evaluator.models import load_model

    model = load_model(model_spec, **overrides)
    return RemoteModel(model.info, bool(getattr(model, "idf", False)))


def _queries_of(model_spec, overrides, texts, idf):
    """The queries' encodings, made where the model runs; `idf`: (document frequencies, documents) summed over
    the shards, for SPLADE's idf option."""
    from evaluator.models import load_model

    model = load_model(model_spec, **overrides)
    if model.info.type == "dense":
        return model.encode_queries(texts)
    return model.encode_queries(texts, idf)


class RemoteQueries:
    """Rows [start, stop) of the encoded queries: an object on the cluster, which the driver never fetches."""

    def __init__(self, ref, start: int, stop: int):
        self.ref, self.start, self.stop = ref, start, stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, rows: slice) -> RemoteQueries:
        start, stop, _ = rows.indices(len(self))
        return RemoteQueries(self.ref, self.start + start, self.start + max(start, stop))


MERGE_WINDOW = 4  # shard results alive at once: running, or finished and waiting to be merged or placed
SAMPLE_BLOCK = 1024  # queries whose sample columns the driver makes and places at once (one round of shard tasks)
TOPK_PIECE = 128  # queries a piece of the final top-k holds: the ranking fetches and ranks one piece at a time


class ShardedIndex:
    """The shards' indexes as one: every query goes to every shard, each in its own Ray task, so no
    machine ever holds the whole index. The driver stays flat in the number of shards: search results
    merge pairwise in Ray tasks as they finish (`shards.reduce_as_ready`) and the driver fetches only the
    final top-k, one piece of queries at a time (`TopkPieces`); score samples come back shard by shard, one
    block of queries at a time, and are placed as each arrives. At most
    `MERGE_WINDOW` shard results are alive at once. `peak_alive` and `peak_held` (shard replies the driver
    held at once) record what a run reached, for the tests."""

    def __init__(self, store: ShardStore, phase: str, plan: list[tuple[int, int]], bound, block_size: int,
                 queries=None, num_queries: int = 0):
        self.store, self.phase, self.plan = store, phase, plan
        self.bound, self.block_size = bound, block_size
        self.queries = RemoteQueries(queries, 0, num_queries)
        self.nbytes = 0  # known after `search`
        self.peak_alive = self.peak_held = 0
        self.sample_block = SAMPLE_BLOCK

    def _submit(self, task, shard: int, *args):
        start, stop = self.plan[shard]
        return task.options(num_cpus=CPUS_PER_ACTOR).remote(self.store, self.phase, shard, start, stop,
                                                            self.bound, self.block_size, *args)

    def search(self, top_k: int):
        import ray

        rows = self.queries
        final, peak = reduce_as_ready(
            lambda shard: self._submit(_search_shard, shard, rows.ref, rows.start, rows.stop, top_k),
            len(self.plan), lambda a, b: _merge_parts.options(num_cpus=CPUS_PER_ACTOR).remote(a, b, top_k),
            lambda running: ray.wait(running, num_returns=1), MERGE_WINDOW)
        self.peak_alive = max(self.peak_alive, peak)
        count = -(-len(rows) // TOPK_PIECE)
        *pieces, sizes = _split_topk.options(num_cpus=CPUS_PER_ACTOR, num_returns=count + 1).remote(final, TOPK_PIECE)
        del final
        self.nbytes, width = ray.get(sizes)
        self.peak_held = max(self.peak_held, 1)
        topk = TopkPieces(pieces, TOPK_PIECE, len(rows), width)
        return topk.rows(0), topk.rows(1)

    def on_a_worker(self, fn, *args):
        """`fn(self, *args)` run in a task on the cluster and its result fetched: score sampling (`pipeline.
        collect_samples`: every query's columns, scores and the fit to the size budget) keeps its per-query state
        on a worker, which drives the shard tasks, and the driver receives only the fitted samples."""
        import ray

        return ray.get(_on_a_worker.options(num_cpus=CPUS_PER_ACTOR).remote(fn, self, *args))

    def scores_at(self, queries: RemoteQueries, columns) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """For each query of `queries`, (scores at columns.relevant, scores at columns.nonrelevant, non-finite
        scores in its row), each shard scoring the columns it holds."""
        import ray

        sizes = np.array([len(c.relevant) + len(c.nonrelevant) for c in columns], np.int64)
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        narrow = np.int32 if self.plan[-1][1] < 2**31 else np.int64
        flat = np.concatenate([np.concatenate([c.relevant, c.nonrelevant]) for c in columns]
                              or [np.zeros(0, np.int64)]).astype(narrow)
        wanted = ray.put((flat, offsets))
        values, nonfinite = np.empty(len(flat), np.float32), np.zeros(len(columns), np.int64)

        def place(reply):
            shard, shard_values, shard_nonfinite = reply
            start, stop = self.plan[shard]
            values[(flat >= start) & (flat < stop)] = shard_values
            nonfinite[:] += shard_nonfinite

        self._stream(lambda shard: self._submit(_sample_shard, shard, queries.ref, queries.start, queries.stop,
                                                wanted), place)
        out = []
        for i, cols in enumerate(columns):
            mine = values[offsets[i]:offsets[i + 1]]
            out.append((mine[:len(cols.relevant)], mine[len(cols.relevant):], int(nonfinite[i])))
        return out

    def _stream(self, submit, place) -> None:
        """One task a shard, at most MERGE_WINDOW running; each reply is fetched when it is ready, placed, and
        let go before the next is fetched."""
        stream_replies(submit, len(self.plan), place, self)


class TopkPieces:
    """The final top-k (scores, positions) as objects of `piece` queries each on the cluster; `rows(0)` and
    `rows(1)` read like the scores and positions arrays (`shape`, row slices), fetching a piece when its rows are
    asked for and letting the previous one go: the driver never holds every query's top-k at once. A piece is
    fetched once (rows are read in order) and its object released then, so that the next takes its place in the
    object store's memory rather than new pages."""

    def __init__(self, refs: list, piece: int, num_queries: int, width: int):
        self.refs, self.piece, self.num_queries, self.width = list(refs), piece, num_queries, width
        self.held: tuple[int, tuple] | None = None  # (piece number, its arrays)
        self.fetched = 0

    def _piece(self, number: int) -> tuple:
        import ray

        if self.held is None or self.held[0] != number:
            self.held = None  # the previous piece goes before the next comes
            ref, self.refs[number] = self.refs[number], None
            if ref is None:
                raise RuntimeError(f"top-k piece {number} was read already: the rows are read once, in order")
            self.held = (number, ray.get(ref))
            self.fetched += 1
        return self.held[1]

    def rows(self, which: int) -> _TopkRows:
        return _TopkRows(self, which)


class _TopkRows:
    """One of the top-k's arrays (0: scores, 1: positions), read by row slices."""

    def __init__(self, pieces: TopkPieces, which: int):
        self.pieces, self.which = pieces, which
        self.rows_per_piece = pieces.piece

    @property
    def shape(self) -> tuple[int, int]:
        return self.pieces.num_queries, self.pieces.width

    def __getitem__(self, rows: slice) -> np.ndarray:
        start, stop, step = rows.indices(self.pieces.num_queries)
        if step != 1:
            raise ValueError("the top-k is read by contiguous row slices")
        size, parts = self.pieces.piece, []
        for number in range(start // size, -(-stop // size)):
            first = number * size
            part = self.pieces._piece(number)[self.which][max(start - first, 0):stop - first]
            parts.append(part if stop - start <= size else part.copy())  # a copy lets its piece go
        return parts[0] if len(parts) == 1 else np.concatenate(parts or [np.zeros((0, self.shape[1]))])


def release_freed_memory() -> None:
    """Give the heap's freed pages back to the system (glibc's `malloc_trim`; elsewhere nothing): between the
    driver's stages, so that one stage's freed scratch (small arrays and strings, which the heap otherwise keeps,
    fragmented) is not counted again under the next stage's."""
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def stream_replies(submit, count: int, place, record=None) -> None:
    """Run `submit(i)` for i < count with at most MERGE_WINDOW tasks running, and `place` each reply as it
    arrives, one fetched at a time; `record` (when given) keeps the peaks in `peak_alive` and `peak_held`."""
    import ray

    todo, running = list(range(count - 1, -1, -1)), []
    while todo or running:
        while todo and len(running) < MERGE_WINDOW:
            running.append(submit(todo.pop()))
        if record is not None:
            record.peak_alive = max(record.peak_alive, len(running))
        (ready,), running = ray.wait(running, num_returns=1)
        reply = ray.get(ready)
        if record is not None:
            record.peak_held = max(record.peak_held, 1)  # one reply at a time: the previous one is gone
        place(reply)
        del reply, ready


def _corpus_bounds(store, phase, num_shards):
    """The corpus-wide largest weight per term and document frequencies, added up as each shard's arrive."""
    totals = {}

    def add(reply):
        largest, doc_freqs = reply
        if not totals:
            totals.update(bound=np.array(largest), df=np.array(doc_freqs, np.int64))
        else:
            np.maximum(totals["bound"], largest, out=totals["bound"])
            totals["df"] += doc_freqs

    stream_replies(lambda shard: _shard_statistics.remote(store, phase, shard), num_shards, add)
    return totals["bound"], totals["df"]


def _shard_index(encoded, bound):
    from evaluator.index.dense import DenseIndex
    from evaluator.index.sparse import SparseIndex

    if bound is None:
        return DenseIndex(encoded, threads=1)
    index = SparseIndex.from_documents(encoded)
    index.max_weights = np.asarray(bound, np.float32)  # corpus-wide bounds: the local engine's term order
    return index


def _encode_with_actors(model_spec, overrides, store, plan, source, workers, gpus, chunk):
    """Encode the shards not yet checkpointed on a pool of `_ShardEncoder` actors, each given its next shard as soon as
    it is free. Plain actors, not Ray Data: the driver then does not import Ray Data (22 MiB more of its memory
    for a neural model than for BM25, 261 modules). A lost actor restarts and its call is retried (Ray Data's
    defaults too); a shard checkpointed before the loss is not redone."""
    import ray

    todo = [s for s in range(len(plan)) if store.file("encoded", s) is None]
    logger.info("ray: %d of %d shards to encode (%d checkpointed)", len(todo), len(plan), len(plan) - len(todo))
    if not todo:
        return
    threads = max(1, int(ray.cluster_resources().get("CPU", 1) // workers))  # each actor's share of the cores
    overrides = encoder_overrides(model_spec, overrides, gpus, threads)
    encoder = ray.remote(_ShardEncoder).options(num_cpus=CPUS_PER_ACTOR, num_gpus=1 if gpus else 0,
                                                max_restarts=-1, max_task_retries=-1)
    idle = [encoder.remote(model_spec, overrides, store, chunk, source)
            for _ in range(min(workers, len(todo)))]
    waiting, running, done = list(reversed(todo)), {}, []
    while waiting or running:
        while waiting and idle:
            shard = waiting.pop()
            actor = idle.pop()
            running[actor.encode.remote(shard, *plan[shard])] = actor
        (ready,), _ = ray.wait(list(running), num_returns=1)
        done.append(ray.get(ready))
        idle.append(running.pop(ready))
    del idle  # the actors end with their handles
    if sorted(done) != todo:
        raise IrboardError(f"ray: encoding returned shards {sorted(done)}, expected {todo}")


def actor_overrides(model_spec: str, overrides: dict[str, str], gpus: int) -> dict[str, str]:
    """Model options inside an encoding actor: with a GPU per actor the model runs on it (Ray makes the
    actor's GPU its only visible `cuda` device), unless the spec names a device."""
    from evaluator.models import parse_model_spec

    if gpus and "device" not in parse_model_spec(model_spec)[2] and "device" not in overrides:
        return {**overrides, "device": "cuda"}
    return overrides


def encoder_overrides(model_spec: str, overrides: dict[str, str], gpus: int, threads: int) -> dict[str, str]:
    """An encoding actor's model options: `actor_overrides`, and on CPU torch threads as many as the actor's share
    of the cluster's cores, unless the spec says (the models' default, every core of the node, would make each
    actor run as many threads as the node has cores)."""
    from evaluator.models import parse_model_spec

    overrides = actor_overrides(model_spec, overrides, gpus)
    if gpus or "threads" in parse_model_spec(model_spec)[2] or "threads" in overrides:
        return overrides
    return {**overrides, "threads": str(threads)}


class _ShardEncoder:
    """One model replica per actor; encodes a shard and checkpoints it."""

    def __init__(self, model_spec, overrides, store, chunk, source):
        from evaluator.models import load_model

        self.model = load_model(model_spec, **overrides)
        self.store, self.chunk, self.source = store, chunk, source

    def encode(self, shard: int, start: int, stop: int) -> int:
        from evaluator.datasets.corpus import read_documents

        if self.store.file("encoded", shard) is None:  # else written before a crash lost the reply: not redone
            docs = read_documents(self.source, start, stop)
            parts = [self.model.encode_corpus(docs[i:i + self.chunk]) for i in range(0, len(docs), self.chunk)]
            self.store.write("encoded", shard, np.vstack(parts) if isinstance(parts[0], np.ndarray)
                             else sp.vstack(parts, format="csr"))
        return shard


def _bm25_passes(model_spec, overrides, model, store, plan, source, num_docs):
    """First pass: each task counts its shard's terms and checkpoints them with the shard's statistics (its
    terms in order of first appearance, their document frequencies, its total length). A task adds these
    small vectors up into the corpus-wide statistics and vocabulary, which stay on the cluster: the driver
    holds neither the vocabulary nor any count matrix. Second pass: each task weighs its shard with the
    corpus-wide statistics. Returns the phase holding the weights, and the vocabulary (an object on the cluster,
    which the queries are encoded with on a worker)."""
    import ray

    count = _remote(_count_shard)
    ray.get([count.remote(store, model_spec, overrides, s, source, a, b) for s, (a, b) in enumerate(plan)
             if store.file("counts", s) is None])
    weighting = {"n": num_docs, "k1": model.k1, "b": model.b, "lucene": model.norms == "lucene"}
    vocabulary, stats = _bm25_statistics.options(num_returns=2).remote(store, len(plan), weighting)
    weigh = _remote(_weigh_shard)
    ray.get([weigh.remote(store, s, stats) for s in range(len(plan)) if store.file("weights", s) is None])
    return "weights", vocabulary


def _bm25_statistics_of(store, num_shards, weighting):
    """(the corpus vocabulary, what weighing a shard needs: each shard's global term ids and the corpus-wide
    statistics), from the shards' count checkpoints in corpus order."""
    vocabulary, global_ids, df, avg_length = corpus_statistics(
        (store.read_extra("counts", s) for s in range(num_shards)), weighting["n"])
    return vocabulary, {**weighting, "global_ids": global_ids, "df": df, "avg": avg_length, "size": len(vocabulary)}


def _bm25_queries_of(model_spec, overrides, vocabulary, texts):
    """BM25's query term counts over the corpus vocabulary."""
    from evaluator.models import load_model

    model = load_model(model_spec, **overrides)
    model.vocabulary = vocabulary
    return model.encode_queries(texts, sp.csr_matrix((0, len(vocabulary)), dtype=np.float32))


def _count_shard(store, model_spec, overrides, shard, source, start, stop):
    from evaluator.datasets.corpus import read_documents
    from evaluator.models import load_model

    docs = read_documents(source, start, stop)
    counts, terms = shard_term_counts(load_model(model_spec, **overrides).analyzer, docs)
    store.write("counts", shard, counts, extra=shard_statistics(counts, terms))


def _weigh_shard(store, shard, stats):
    counts = remap_columns(store.read("counts", shard), stats["global_ids"][shard], stats["size"])
    store.write("weights", shard, bm25_shard_weights(counts, stats["df"], stats["n"], stats["avg"], stats["k1"],
                                                     stats["b"], stats["lucene"]))


def _remote(fn):
    import ray

    return ray.remote(num_cpus=CPUS_PER_ACTOR, max_retries=-1)(fn)


class _Lazy:
    """A Ray remote function made on first use, so importing this module does not need Ray."""

    def __init__(self, fn):
        self.fn, self._remote = fn, None

    def remote(self, *args):
        return self.options().remote(*args)

    def options(self, **kwargs):
        if self._remote is None:
            self._remote = _remote(self.fn)
        return self._remote.options(**kwargs) if kwargs else self._remote


def _statistics_of(store, phase, shard):
    from evaluator.models.splade import document_frequencies

    matrix = store.read(phase, shard)
    return column_max(matrix), document_frequencies(matrix)


def _search_of(store, phase, shard, start, stop, bound, block_size, queries, first, last, top_k):
    index = _shard_index(store.read(phase, shard), bound)
    queries = queries[first:last]
    scores, positions = index.search(queries, top_k, block_size=block_size) if bound is None else \
        index.search(queries, top_k)
    positions = np.where(positions >= 0, positions + start, -1)
    return scores, positions, index.nbytes


def _merge_of(a, b, top_k):
    """Two (scores, positions, index bytes) parts merged into the exact top-k, their index bytes added; positions
    as int32 where they fit (half the bytes the driver maps)."""
    scores, positions = merge_topk([a[:2], b[:2]], top_k)
    if positions.size and int(positions.max()) < 2**31:
        positions = positions.astype(np.int32)
    return scores, positions, a[2] + b[2]


def _call(fn, *args):
    return fn(*args)


def _split_of(part, piece):
    """The final (scores, positions, index bytes) as pieces of `piece` queries, then (index bytes, k)."""
    scores, positions, nbytes = part
    return (*[(scores[i:i + piece].copy(), positions[i:i + piece].copy()) for i in range(0, len(scores), piece)],
            (nbytes, scores.shape[1]))


def _sample_of(store, phase, shard, start, stop, bound, block_size, queries, first, last, wanted):
    """(shard, its scores at the wanted columns inside [start, stop), query after query, float32; the non-finite
    scores of each query's row in the shard). `wanted`: (every query's columns one after the other, offsets)."""
    flat, offsets = wanted
    index = _shard_index(store.read(phase, shard), bound)
    local = [columns[(columns >= start) & (columns < stop)].astype(np.int64) - start
             for columns in np.split(flat, offsets[1:-1])]
    queries = queries[first:last]
    values, nonfinite = index.scores_of(queries, local, block_size) if bound is None else \
        index.scores_of(queries, local)
    return shard, np.concatenate(values or [np.zeros(0, np.float32)]).astype(np.float32), nonfinite


_shard_statistics = _Lazy(_statistics_of)
_search_shard = _Lazy(_search_of)
_sample_shard = _Lazy(_sample_of)
_merge_parts = _Lazy(_merge_of)
_split_topk = _Lazy(_split_of)
_on_a_worker = _Lazy(_call)
_model_info = _Lazy(_model_info_of)
_encode_queries = _Lazy(_queries_of)
_bm25_statistics = _Lazy(_bm25_statistics_of)
_encode_bm25_queries = _Lazy(_bm25_queries_of)


def _root(cache_dir):
    from evaluator.index.cache import encodings_root

    return encodings_root(cache_dir)


def _key(model, spec, corpus_sha256: str, num_shards) -> dict:
    return {"model": model.info.id, "revision": model.info.revision, "settings": dict(model.info.settings),
            "dataset": spec.id, "corpus_file_sha256": corpus_sha256, "engine": "ray", "shards": num_shards,
            "checkpoints": 2}  # 2: count checkpoints carry their shard's BM25 statistics
