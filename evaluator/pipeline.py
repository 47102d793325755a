"""`irboard evaluate --model SPEC --dataset ID`: encode, index, search, score, and assemble the result."""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path

import numpy as np

from evaluator.assemble import MIN_RUN_DEPTH, RunMetadata, assemble_result, stored_depth
from evaluator.metrics import Qrels
from evaluator.metrics.ranking import UNJUDGED, byte_order_keys, rank_arrays
from evaluator.progress import bars_enabled, step


def retrieve(model, corpus_docs, query_texts, top_k: int, timings: dict[str, float], cache=None):
    """Encode and search; returns (scores (q, k), doc positions (q, k), index) with -1 for empty slots."""
    from evaluator.index.dense import DenseIndex
    from evaluator.index.sparse import SparseIndex

    dense = model.info.type == "dense"
    from_cache = cache is not None and cache.is_complete
    with step(f"encoding {len(corpus_docs)} documents" + (" (cached)" if from_cache else ""), timings, "index_s"):
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


ENCODE_CHUNK = 1024  # documents per cached chunk: what an interrupted run loses at most


def encode_corpus(model, docs, cache):
    if cache is None:
        return model.encode_corpus(docs)
    from evaluator.index.cache import encode_cached

    return encode_cached(model.encode_corpus, docs, ENCODE_CHUNK, cache, quiet=not bars_enabled(),
                         desc="encode documents")


def ranked_from_topk(scores, positions, query_ids, doc_ids, doc_keys, qrels: Qrels, ignore_identical_ids: bool,
                     keep_top: int = MIN_RUN_DEPTH):
    """Put search output into trec_eval order and join it with the qrels (vectorised); the top `keep_top` of each
    ranking are returned as {query_id: [(doc_id, score), ...]} for the result to store."""
    n_queries, k = positions.shape
    row_of = {q: i for i, q in enumerate(qrels.query_ids)}
    rows = np.array([row_of[q] for q in query_ids], dtype=np.int64)
    query_index = np.repeat(rows, k)
    flat_positions = positions.ravel()
    flat_scores = scores.ravel().astype(np.float64)
    keep = flat_positions >= 0
    if ignore_identical_ids:
        identical = np.array([doc_ids[p] == query_ids[i // k] if p >= 0 else False
                              for i, p in enumerate(flat_positions.tolist())])
        keep &= ~identical
    query_index, flat_positions, flat_scores = query_index[keep], flat_positions[keep], flat_scores[keep]

    # judged (query row, doc position) pairs as sorted int64 keys; a search hit's label is one lookup away
    n_docs = len(doc_ids)
    position_of = {d: i for i, d in enumerate(doc_ids)}
    judged_keys, judged_labels = [], []
    for row, judgments in enumerate(qrels.judgments):
        for doc_id, label in judgments.items():
            if (p := position_of.get(doc_id)) is not None:
                judged_keys.append(row * n_docs + p)
                judged_labels.append(label)
    order = np.argsort(np.array(judged_keys, dtype=np.int64))
    judged_keys = np.array(judged_keys, dtype=np.int64)[order]
    judged_labels = np.array(judged_labels, dtype=np.int32)[order]
    hit_keys = query_index * n_docs + flat_positions
    at = np.searchsorted(judged_keys, hit_keys)
    found = at < len(judged_keys)
    found[found] = judged_keys[at[found]] == hit_keys[found]
    labels = np.where(found, judged_labels[np.minimum(at, max(len(judged_keys) - 1, 0))] if len(judged_keys) else 0,
                      UNJUDGED).astype(np.int32)

    matrix, lengths, row_order = rank_arrays(query_index, doc_keys[flat_positions], flat_scores, labels,
                                             len(qrels.query_ids))
    from evaluator.metrics import RankedRun

    top: dict[str, list[tuple[str, float]]] = {}
    sorted_positions = flat_positions[row_order]
    sorted_scores = flat_scores[row_order]
    starts = np.concatenate(([0], np.cumsum(lengths)))
    for row, query_id in enumerate(qrels.query_ids):
        lo, hi = starts[row], min(starts[row + 1], starts[row] + keep_top)
        if hi > lo:
            top[query_id] = [(doc_ids[p], float(s)) for p, s in zip(sorted_positions[lo:hi].tolist(),
                                                                    sorted_scores[lo:hi].tolist(), strict=True)]
    return RankedRun(qrels.query_ids, matrix, lengths), top


def evaluate_model(args: argparse.Namespace, measures):
    from evaluator.datasets import load_dataset
    from evaluator.models import load_model

    timings: dict[str, float] = {}
    with step(f"loading dataset {args.dataset}", timings, "load_dataset_s"):
        dataset = load_dataset(args.dataset, data_dir=args.data_dir, cache_dir=args.cache_dir)
    spec, corpus = dataset.spec, dataset.corpus
    with step(f"loading model {args.model}", timings, "load_model_s"):
        overrides = model_overrides(args.model, spec, args.batch_size)
        model = load_model(args.model, **overrides)
    qrels = Qrels.from_dict(dataset.qrels)
    query_ids = list(dataset.queries)
    docs = list(zip(corpus.titles, corpus.texts, strict=True))
    top_k = min(args.top_k, len(docs))
    extra = 1 if spec.ignore_identical_ids else 0  # one slot may be dropped as the query itself
    query_texts, k = [dataset.queries[q] for q in query_ids], min(top_k + extra, len(docs))
    if args.engine == "ray":
        from evaluator.engines.ray_engine import ray_retrieve  # Ray is an optional extra

        scores, positions, index, queries = ray_retrieve(
            args.model, overrides, model, spec, docs, query_texts, k, timings, address=args.address,
            cache_dir=args.cache_dir, workers=getattr(args, "workers", None), shards=getattr(args, "shards", None))
    else:
        cache = corpus_cache(model, spec, docs, args.cache_dir)
        scores, positions, index, queries = retrieve(model, docs, query_texts, k, timings, cache)
    with step("ranking and scoring", timings, "metrics_s"):
        doc_keys = byte_order_keys(np.array(corpus.ids, dtype=object))
        ranked, top = ranked_from_topk(scores, positions, query_ids, corpus.ids, doc_keys, qrels,
                                       spec.ignore_identical_ids, stored_depth(measures, top_k))
    with step("sampling score distributions", timings, "score_samples_s"):
        samples = collect_samples(index, queries, query_ids, corpus.ids, dataset.qrels)
    info = model.info
    meta = RunMetadata(
        model={"id": info.id, "type": info.type, "revision": info.revision, "parameters": info.parameters,
               "dim": info.dim, "license": info.license, "open_weights": info.open_weights,
               "training_datasets": list(info.training_datasets), "url": info.url},
        dataset_id=spec.id, split=spec.split, num_docs=len(docs), top_k=top_k,
        ignore_identical_ids=spec.ignore_identical_ids, relevance_level=spec.relevance_level, timings=timings,
        command=getattr(args, "command_line", ""), dataset_revision=spec.revision or spec.md5 or "",
    )
    return assemble_result(ranked, qrels, measures, top, meta, extra_provenance={"index_bytes": int(index.nbytes)},
                           score_samples=samples)


def collect_samples(index, queries, query_ids, doc_ids, qrels, block: int = 64):
    """Scores of every relevant document and a seeded sample of non-relevant ones per query."""
    from evaluator.score_samples import ScoreSampleCollector, fit_to_budget

    collector = ScoreSampleCollector(doc_ids, qrels)
    if hasattr(index, "scores_at"):  # a sharded index: each shard scores only the sampled columns it holds
        columns = [collector.columns(q) for q in query_ids]
        for query_id, cols, (relevant, nonrelevant, nonfinite) in zip(
                query_ids, columns, index.scores_at(queries, columns), strict=True):
            collector.add_scores(query_id, cols, relevant, nonrelevant, nonfinite)
    else:
        for start in range(0, len(query_ids), block):
            collector.add(query_ids[start:start + block], index.score_rows(queries[start:start + block]))
    return fit_to_budget(collector.result(), sorted(query_ids))


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
    from evaluator.index.cache import EncodingCache, default_cache_root

    if model.info.type == "lexical":
        return None
    digest = hashlib.sha256()
    for title, text in docs:
        digest.update(f"{title}\x1f{text}\x1e".encode())
    key = {"model": model.info.id, "revision": model.info.revision, "settings": dict(model.info.settings),
           "dataset": spec.id, "corpus_sha256": digest.hexdigest()}
    root = Path(cache_dir) / "encodings" if cache_dir else default_cache_root()
    return EncodingCache(root, key)
