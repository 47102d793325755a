"""`irboard evaluate --model SPEC --dataset ID`: encode, index, search, score, and assemble the result."""

from __future__ import annotations

import hashlib
import time
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from evaluator.artifact import declare_artifact
from evaluator.assemble import (
    MIN_RUN_DEPTH,
    RunMetadata,
    assemble_result,
    may_fit_whole,
    needs_below,
    stored_depth,
)
from evaluator.below import Below
from evaluator.errors import IrboardError
from evaluator.id_table import IdTable
from evaluator.metrics import Qrels
from evaluator.metrics.ranking import PAD, UNJUDGED, rank_arrays
from evaluator.progress import bars_enabled, step
from evaluator.result import Run


def retrieve(model, corpus_docs, query_texts, top_k: int, timings: dict[str, float], cache=None, spill_dir=None):
    """Encode and search; returns (scores (q, k), doc positions (q, k), index) with -1 for empty slots.
    `spill_dir`: where BM25 spills its term counts while it builds the index (default: the system's temp folder)."""
    from evaluator.index.dense import DenseIndex
    from evaluator.index.sparse import SparseIndex

    dense = model.info.type == "dense"
    from_cache = cache is not None and cache.is_complete
    with step(f"encoding {len(corpus_docs)} documents" + (" (cached)" if from_cache else ""), timings, "index_s"):
        if cache is None and hasattr(model, "index_corpus"):  # BM25: postings built from streamed term counts
            index = model.index_corpus(corpus_docs, spill_dir)
            encoded = sp.csr_matrix((0, index.vocab_size), dtype=np.float32)  # its queries need only the width
        else:
            encoded = encode_corpus(model, corpus_docs, cache)
            index = DenseIndex(encoded) if dense else SparseIndex.from_documents(encoded)
    if not from_cache:  # a throughput read from the cache would measure the disk, not the model
        timings["encode_docs_per_s"] = len(corpus_docs) / max(timings["index_s"], 1e-9)
    start = time.perf_counter()
    with step(f"encoding and searching {len(query_texts)} queries", timings, "search_s"):
        queries = model.encode_queries(query_texts) if dense else model.encode_queries(query_texts, encoded)
        # the sparse index draws its bar through evaluator.progress, which already follows --quiet
        scores, positions = (index.search(queries, top_k, quiet=not bars_enabled()) if dense
                             else index.search(queries, top_k))
    timings["queries_per_s"] = len(query_texts) / max(time.perf_counter() - start, 1e-9)
    return scores, positions, index, queries


def encode_corpus(model, docs, cache):
    if cache is None:
        return model.encode_corpus(docs)
    from evaluator.index import cache as encoding_cache

    return encoding_cache.encode_cached(model.encode_corpus, docs, encoding_cache.ENCODE_CHUNK, cache,
                                        quiet=not bars_enabled(), desc="encode documents")


def ranked_from_topk(scores, positions, query_ids, corpus, qrels: Qrels, ignore_identical_ids: bool,
                     keep_below: bool = False, depth: int = MIN_RUN_DEPTH, top_k: int | None = None,
                     block: int = 512, label_depth: int | None = None):
    """Put search output into trec_eval order and join it with the qrels (vectorised), `block` queries at a
    time so that the scratch arrays stay small at top-1000: the ranked run, each query's top `depth` entries as a
    `Run` (arrays, rows aligned with the qrels' queries: no Python list per query), and (with `keep_below`, else
    None) the judged entries below them. `corpus` gives the documents' positions
    (`positions_of`), their ids (`take_ids`) and keys that sort like the ids (`keys_of`, for ties): a `Corpus`,
    or on Ray its `IdsOnDemand`, which holds no list of ids; `top_k`: the most a ranking keeps (one more is searched where
    the query's own document may be dropped); `label_depth`: the deepest rank a measure reads (the ranked run's
    label matrix keeps no more columns; its lengths stay whole)."""
    from evaluator.metrics import RankedRun

    n_queries, k = positions.shape
    block = getattr(positions, "rows_per_piece", block)  # Ray's top-k comes in pieces: one read a block
    row_of = {q: i for i, q in enumerate(qrels.query_ids)}
    rows = np.array([row_of[q] for q in query_ids], dtype=np.int64)
    position_of = corpus.positions_of()
    own = np.full(n_queries, -2, np.int64)  # each query's own position in the corpus, for ignore_identical_ids
    if ignore_identical_ids:
        own = np.array([position_of[q] if q in position_of else -2 for q in query_ids], dtype=np.int64)
    # judged (qrels row, doc position) pairs as sorted int64 keys; a search hit's label is one lookup away
    n_docs = len(corpus)
    judged_keys, judged_labels = [], []
    for row, judgments in enumerate(qrels.judgments):
        for doc_id, label in judgments.items():
            if doc_id in position_of:
                judged_keys.append(row * n_docs + position_of[doc_id])
                judged_labels.append(label)
    order = np.argsort(np.array(judged_keys, dtype=np.int64))
    judged_keys = np.array(judged_keys, dtype=np.int64)[order]
    judged_labels = np.array(judged_labels, dtype=np.int32)[order]

    width = max(min(k, top_k) if top_k is not None else k, 1)
    if label_depth is not None:
        width = max(min(width, label_depth), 1)
    matrix = np.full((len(qrels.query_ids), width), PAD, dtype=np.int32)
    lengths = np.zeros(len(qrels.query_ids), dtype=np.int64)
    top_rows, top_lengths, top_positions, top_scores = [], [], [], []  # each block's first `depth` hits
    below_rows: dict[int, list[tuple[int, str, float]]] = {}
    for first in range(0, n_queries, block):
        last = min(first + block, n_queries)
        local = np.repeat(np.arange(last - first, dtype=np.int64), k)
        flat_positions = positions[first:last].ravel()
        flat_scores = scores[first:last].ravel().astype(np.float64)
        keep = (flat_positions >= 0) & (flat_positions != np.repeat(own[first:last], k))
        local, flat_positions, flat_scores = local[keep], flat_positions[keep], flat_scores[keep]
        hit_keys = rows[first:last][local] * n_docs + flat_positions
        at = np.searchsorted(judged_keys, hit_keys)
        found = at < len(judged_keys)
        found[found] = judged_keys[at[found]] == hit_keys[found]
        labels = np.where(found, judged_labels[np.minimum(at, max(len(judged_keys) - 1, 0))] if len(judged_keys)
                          else 0, UNJUDGED).astype(np.int32)
        part, part_lengths, row_order = rank_arrays(local, corpus.keys_of(flat_positions), flat_scores, labels,
                                                    last - first)
        starts = np.concatenate(([0], np.cumsum(part_lengths)))  # each query's entries in the sorted arrays
        if top_k is not None and part.shape[1] > top_k:  # the extra document searched was not the query's own
            part, part_lengths = part[:, :top_k], np.minimum(part_lengths, top_k)
        block_rows = rows[first:last]
        matrix[block_rows, :min(part.shape[1], width)] = part[:, :width]
        lengths[block_rows] = part_lengths
        # each query's first `depth` hits, their ids read in one take
        sorted_positions, sorted_scores = flat_positions[row_order], flat_scores[row_order]
        ends = np.minimum(starts[:-1] + depth, starts[:-1] + part_lengths)
        wanted = np.concatenate([np.arange(lo, hi) for lo, hi in zip(starts[:-1].tolist(), ends.tolist(), strict=True)]
                                or [np.zeros(0, np.int64)]).astype(np.int64)
        top_rows.append(block_rows)
        top_lengths.append(ends - starts[:-1])
        top_positions.append(sorted_positions[wanted].astype(np.int64))
        top_scores.append(sorted_scores[wanted])
        if keep_below:  # the judged entries ranked below the depth: (local row, 0-based rank) of each
            local_rows, ranks = np.nonzero((part[:, depth:] != UNJUDGED) & (part[:, depth:] != PAD))
            ranks += depth
            at = starts[local_rows] + ranks
            ids = corpus.take_ids(sorted_positions[at])
            for local_row, rank, doc_id, score in zip(local_rows.tolist(), ranks.tolist(), ids,
                                                      sorted_scores[at].tolist(), strict=True):
                below_rows.setdefault(int(block_rows[local_row]), []).append((rank + 1, doc_id, score))
    used = min(int(lengths.max(initial=0)), width)
    below = None
    if keep_below:
        below = Below.from_entries(lengths.tolist(), [below_rows.get(row, []) for row in range(len(qrels.query_ids))])
    return (RankedRun(qrels.query_ids, np.ascontiguousarray(matrix[:, :max(used, 1)]), lengths),
            _top_run(corpus, len(qrels.query_ids), depth, top_rows, top_lengths, top_positions, top_scores, below),
            below)


def _top_run(corpus, num_queries: int, depth: int, rows, lengths, positions, scores, below):
    """The `Run` of the blocks' top hits (each block: its qrels rows, each row's count, the hits' positions and
    scores in rank order) with the judged entries `below` them: rows in qrels order, the ids read once per distinct
    document into a sorted `IdTable`."""
    rows = np.concatenate(rows or [np.zeros(0, np.int64)])
    lengths = np.concatenate(lengths or [np.zeros(0, np.int64)]).astype(np.int64)
    order = np.argsort(np.repeat(rows, lengths), kind="stable")  # entries in row order, ranks kept within a row
    positions = np.concatenate(positions or [np.zeros(0, np.int64)])[order]
    scores = np.concatenate(scores or [np.zeros(0)]).astype(np.float64)[order]
    per_row = np.zeros(num_queries, np.int64)
    per_row[rows] = lengths
    unique, inverse = np.unique(positions, return_inverse=True)
    table, rank = IdTable.sorted_from(corpus.take_id_array(unique))  # one Arrow array, no string per id
    return Run(depth, table, per_row, rank[inverse.reshape(-1)], scores, below)


def evaluate_model(model_spec: str, dataset_id: str, measures, *, data_dir: str | Path | None = None,
                   cache_dir: str | Path | None = None, batch_size: int | None = None, top_k: int = 1000,
                   engine: str = "local", address: str | None = None, workers: int | None = None,
                   shards: int | None = None, command: str = "", reuse_encodings: bool = True,
                   model_fields: dict | None = None, keep_depth: int | None = None):
    """Run `model_spec` (bm25, bm25:k1=0.9,b=0.4, splade:<dir>, dense:<dir or hub id>) over `dataset_id` and
    return the result (every measure, the stored ranking, score samples). `engine` "ray" spreads encoding and
    search over a Ray cluster (`address`, `workers`, `shards`); `cache_dir` is a folder or a pyarrow.fs URI for
    encodings and shard checkpoints; `command` is recorded in the provenance; `reuse_encodings` False encodes the
    corpus afresh even when the cache holds its encoding (a reproduction must run the model itself);
    `model_fields`: model-block fields declared by the caller (id, licence, training data, ...), replacing what the
    model states of itself; `keep_depth`: store rankings whole to this depth only (`assemble_result`)."""
    from evaluator.datasets import load_dataset
    from evaluator.datasets.declared import check_declared_judgments
    from evaluator.index.cache import is_uri, local_cache_dir, open_location
    from evaluator.models import load_model

    if engine not in ("local", "ray"):
        raise IrboardError(f"engine {engine!r}: choose local or ray")
    if is_uri(cache_dir):
        open_location(cache_dir)  # a URI that cannot be opened fails now, not after the dataset loads
    timings: dict[str, float] = {}
    with step(f"loading dataset {dataset_id}", timings, "load_dataset_s"):
        dataset = load_dataset(dataset_id, data_dir=data_dir, cache_dir=local_cache_dir(cache_dir))
    spec, corpus = dataset.spec, dataset.corpus
    with step(f"loading model {model_spec}", timings, "load_model_s"):
        overrides = model_overrides(model_spec, spec, batch_size)
        if engine == "ray":  # a neural model loads on a worker, never in the driver
            from evaluator.engines.ray_engine import load_model_info  # Ray is an optional extra

            model = load_model_info(model_spec, overrides, address)
        else:
            model = load_model(model_spec, **overrides)
    qrels = Qrels.from_dict(dataset.qrels)
    check_declared_judgments(spec.id, qrels, data_dir or spec.source)
    query_ids = list(dataset.queries)
    docs = corpus.view()  # a sequence that reads the slices asked for: the corpus is never a list
    top_k = min(top_k, len(docs))
    extra = 1 if spec.ignore_identical_ids else 0  # one slot may be dropped as the query itself
    query_texts, k = [dataset.queries[q] for q in query_ids], min(top_k + extra, len(docs))
    if engine == "ray":
        from evaluator.engines.ray_engine import ray_retrieve  # Ray is an optional extra

        scores, positions, index, queries = ray_retrieve(
            model_spec, overrides, model, spec, docs, query_texts, k, timings, address=address, cache_dir=cache_dir,
            workers=workers, shards=shards)
    else:
        from evaluator.datasets.corpus import corpus_root

        cache = corpus_cache(model, spec, docs, cache_dir) if reuse_encodings else None
        # BM25 spills to the cache's corpora folder: a corpus.arrow opened in place may lie in a read-only folder
        scores, positions, index, queries = retrieve(model, docs, query_texts, k, timings, cache,
                                                     spill_dir=corpus_root())
    ids = corpus
    if engine == "ray":  # the driver holds no list of the corpus's ids: only those of judged documents and queries
        ids = corpus.ids_on_demand([d for judged in dataset.qrels.values() for d in judged]
                                   + (query_ids if spec.ignore_identical_ids else []))
    # the samples first: then the index and the queries go before ranking's scratch arrays come
    with step("sampling score distributions", timings, "score_samples_s"):
        if engine == "ray":  # on a worker: only the fitted samples, encoded as stored, reach the driver
            samples = index.on_a_worker(collect_packed_samples, queries, query_ids, ids.positions_of(), dataset.qrels)
        else:
            samples = collect_samples(index, queries, query_ids, ids.positions_of(), dataset.qrels)
    index_bytes = int(index.nbytes)
    del index, queries
    _release_on_ray(engine)
    with step("ranking and scoring", timings, "metrics_s"):
        # the top 100 (or keep_depth) and the judged entries below; then, when the whole may fit the file's size
        # cap, the whole rankings (assemble_result keeps them if they do)
        depth = stored_depth(top_k) if keep_depth is None else max(1, min(keep_depth, top_k))
        rank = partial(ranked_from_topk, scores, positions, query_ids, ids, qrels, spec.ignore_identical_ids,
                       top_k=top_k, label_depth=_deepest_rank(measures))
        ranked, top, below = rank(depth < top_k and needs_below(measures, depth), depth)
        if keep_depth is None and depth < top_k and may_fit_whole(top, int(ranked.lengths.sum()), len(qrels.query_ids)):
            ranked, top, below = rank(False, top_k)
    del scores, positions
    _release_on_ray(engine)
    info = model.info
    meta = RunMetadata(
        model={"id": info.id, "type": info.type, "revision": info.revision, "parameters": info.parameters,
               "dim": info.dim, "license": info.license, "open_weights": info.open_weights,
               "training_datasets": None if info.training_datasets is None else list(info.training_datasets),
               "url": info.url,
               "artifact": declare_artifact(model_spec, info.revision, info.settings.get("dtype", "")).model_dump(),
               **(model_fields or {})},
        dataset_id=spec.id, split=spec.split, num_docs=len(docs), top_k=top_k,
        ignore_identical_ids=spec.ignore_identical_ids, relevance_level=spec.relevance_level, timings=timings,
        command=command, dataset_revision=spec.revision or spec.md5 or "",
    )
    return assemble_result(ranked, qrels, measures, top, meta, extra_provenance={"index_bytes": index_bytes},
                           score_samples=samples, below=below, keep_depth=keep_depth)


def _deepest_rank(measures) -> int | None:
    """The deepest rank the measures read (None: one reads the whole ranking): the label matrix needs no more."""
    cutoffs = [m.cutoff for m in measures]
    return None if not cutoffs or None in cutoffs else max(cutoffs)


def _release_on_ray(engine: str) -> None:
    """The Ray driver gives a stage's freed scratch back before the next stage (its peak memory is a goal)."""
    if engine == "ray":
        from evaluator.engines.ray_engine import release_freed_memory

        release_freed_memory()


def collect_samples(index, queries, query_ids, doc_ids, qrels, block: int = 1024):
    """Scores of every relevant document and a seeded sample of non-relevant ones per query, scored at those
    columns only, `block` queries at a time (on Ray the index's `sample_block`, one round of shard tasks each;
    the samples do not depend on it): only one block's sample columns exist at once."""
    from evaluator.score_samples import ScoreSampleCollector, fit_to_budget

    sharded = hasattr(index, "scores_at")  # each shard scores only the sampled columns it holds
    # on Ray the samples are kept as float32 (the scores' own type, widened when encoded): half the driver's bytes
    collector = ScoreSampleCollector(doc_ids, qrels, dtype=np.float32 if sharded else np.float64)
    step = index.sample_block if sharded else block
    for start in range(0, len(query_ids), step):
        ids = query_ids[start:start + step]
        columns = collector.columns_of(ids)
        if sharded:
            scored = index.scores_at(queries[start:start + step], columns)
            relevant, nonrelevant, nonfinite = ([s[i] for s in scored] for i in range(3))
        else:
            values, counts = index.scores_of(queries[start:start + step],
                                             [np.concatenate([c.relevant, c.nonrelevant]) for c in columns])
            relevant = [v[:len(c.relevant)] for v, c in zip(values, columns, strict=True)]
            nonrelevant = [v[len(c.relevant):] for v, c in zip(values, columns, strict=True)]
            nonfinite = counts.tolist()
        collector.add_scores_of(ids, columns, relevant, nonrelevant, nonfinite)
        del columns, relevant, nonrelevant  # before the next block's are made
    return fit_to_budget(collector.result(), sorted(query_ids))


def collect_packed_samples(index, queries, query_ids, doc_ids, qrels):
    """`collect_samples` kept as their stored field (`score_samples.packed`), for a Ray worker to send back."""
    from evaluator.score_samples import packed

    return packed(collect_samples(index, queries, query_ids, doc_ids, qrels))


def model_overrides(model_spec: str, spec, batch_size: int | None) -> dict[str, str]:
    """Options the dataset and flags add: BM25 analyses the documents' language; neural models batch."""
    from evaluator.models import parse_model_spec

    kind, _, options = parse_model_spec(model_spec)
    overrides = {}
    if kind == "bm25" and "language" not in options and spec.language not in ("", "und"):
        overrides["language"] = spec.language.split("-")[-1]  # query-doc pairs: the documents' language
    if batch_size and kind != "bm25":
        overrides["batch_size"] = str(batch_size)
    return overrides


def corpus_cache(model, spec, docs, cache_dir=None):
    """Cache of the corpus encoding, keyed by model, revision, settings, dataset and the corpus itself.

    None for lexical models: BM25 needs corpus-wide statistics and is fast to recompute.
    """
    from evaluator.index.cache import EncodingCache, encodings_root

    if model.info.type == "lexical":
        return None
    digest = hashlib.sha256()
    for title, text in docs:
        digest.update(f"{title}\x1f{text}\x1e".encode())
    key = {"model": model.info.id, "revision": model.info.revision, "settings": dict(model.info.settings),
           "dataset": spec.id, "corpus_sha256": digest.hexdigest()}
    return EncodingCache(encodings_root(cache_dir), key)
