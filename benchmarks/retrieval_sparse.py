"""Sparse retrieval: evaluator.index.sparse.SparseIndex against the bm25s package on synthetic Zipf corpora.

Two shapes, generated directly as sparse matrices (seeded; term ranks drawn from Zipf(1) over the vocabulary):

- bm25:   ~60 tokens per document, ~6 tokens per query; Lucene BM25 weights (k1 0.9, b 0.4), query term
          counts. bm25s indexes the same token ids itself (method "lucene": the same formula), so the
          top-k lists and scores are compared too.
- splade: ~120 weighted terms per document, ~30 weighted terms per query, weights distributed as
          SPLADE-tiny's over SciFact (nearly independent of the term's frequency). bm25s cannot index
          given weights nor weight query terms: it is handed our postings (its CSC layout) and the
          queries' term ids, so both traverse the same postings.

bm25s runs single-threaded (n_threads=1) with its default numpy backend and with numba. Peak memory is the
process's resident high-water mark (VmHWM, reset before each phase). Run:

    python benchmarks/retrieval_sparse.py                 # 1M documents, 1,000 queries, top-100
    python benchmarks/retrieval_sparse.py --docs 100000   # quicker
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from peers import require_extra  # benchmarks/peers.py

from evaluator.index.sparse import SparseIndex
from evaluator.models.bm25 import bm25_weights

GIB = 2**30


def main() -> None:
    require_extra("bench", "bm25s", "numba")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--vocab", type=int, default=30_000)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="alternating timed searches (best is reported)")
    parser.add_argument("--numpy-queries", type=int, default=200, help="queries timed on bm25s' numpy backend")
    parser.add_argument("--shapes", default="bm25,splade")
    parser.add_argument("--small", action="store_true", help="100,000 documents")
    args = parser.parse_args()
    if args.small:
        args.docs = 100_000
    rows = []
    for shape in args.shapes.split(","):
        rows += run_shape(shape, args)
    print_table(rows, args)


def run_shape(shape: str, args) -> list[dict]:
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    if shape == "bm25":
        counts = term_counts(rng, args.docs, args.vocab, mean_tokens=60)
        queries = term_counts(rng, args.queries, args.vocab, mean_tokens=6)
    else:
        documents = splade_like(rng, args.docs, args.vocab, terms=120)
        queries = splade_like(rng, args.queries, args.vocab, terms=30)
    print(f"[{shape}] generated in {time.perf_counter() - t0:.1f} s", flush=True)
    gc.collect()

    # Ours: weighting (BM25 shape), index build, one search; peak memory of this phase.
    reset_peak()
    t0 = time.perf_counter()
    if shape == "bm25":
        documents = bm25_weights(counts, 0.9, 0.4)
    weigh_s = time.perf_counter() - t0
    gc.collect()
    base = reset_peak()
    t0 = time.perf_counter()
    index = SparseIndex.from_documents(documents)
    build_s = time.perf_counter() - t0 + weigh_s
    build_peak = peak_rss() - base
    scores, indices = index.search(queries, args.k)
    ours = {
        "shape": shape,
        "engine": "irboard SparseIndex",
        "build_s": build_s,
        "peak_gib": peak_rss() / GIB,
        "index_gib": index.nbytes / GIB,
        "build_peak_ratio": build_peak / index.nbytes,
        "postings_per_query": float(index.doc_freqs[queries.indices].sum() / args.queries),
        "nnz_per_doc": documents.nnz / args.docs,
    }
    documents = None
    gc.collect()

    import bm25s

    # bm25s takes a query as a list of token ids: repeated by count for BM25, each term once otherwise.
    query_ids = token_lists(queries) if shape == "bm25" else token_lists(queries, repeat=False)
    base = reset_peak()
    t0 = time.perf_counter()
    peers = {}
    for backend in ("numpy", "numba"):
        peers[backend] = bm25s.BM25(k1=0.9, b=0.4, method="lucene", backend=backend)
    if shape == "bm25":
        peers["numpy"].index((token_lists(counts), {t: t for t in range(args.vocab)}), show_progress=False)
        adopt_index(peers["numba"], peers["numpy"])  # the same index, searched by the numba backend
    else:
        for retriever in peers.values():
            adopt_postings(retriever, index.postings)
    peer_build_s = time.perf_counter() - t0 if shape == "bm25" else float("nan")
    peer_peak = peak_rss() - base

    def peer_search(backend, n_queries=args.queries):
        return peers[backend].retrieve(query_ids[:n_queries], k=args.k, n_threads=1, show_progress=False)

    peer_search("numba")  # compile outside the timing
    times = {"ours": [], "numba": [], "numpy": []}
    results = {}
    for _ in range(args.repeats):  # alternate, so a load change on a shared machine hits both
        times["ours"].append(timed(lambda: index.search(queries, args.k))[0])
        times["numba"].append(timed(lambda: peer_search("numba"))[0])
    # The numpy backend is slow: it gets the first --numpy-queries queries, timed once.
    numpy_queries = min(args.numpy_queries, args.queries)
    numpy_s, results["numpy"] = timed(lambda: peer_search("numpy", numpy_queries))
    times["numpy"] = [numpy_s * args.queries / numpy_queries]
    results["numba"] = peer_search("numba")

    ours["qps"] = args.queries / min(times["ours"])
    rows = [ours]
    for backend in ("numpy", "numba"):
        row = {
            "shape": shape,
            "engine": f"bm25s {bm25s.__version__} ({backend})",
            "build_s": peer_build_s if backend == "numpy" else float("nan"),
            "qps": args.queries / min(times[backend]),
            "peak_gib": peak_rss() / GIB,
            "build_peak_gib": peer_peak / GIB,
        }
        row["ratio"] = ours["qps"] / row["qps"]
        if shape == "bm25":
            found = results[backend]
            n = len(found.documents)
            row["overlap"], row["max_score_diff"] = agreement(scores[:n], indices[:n], found.scores, found.documents)
        rows.append(row)
    return rows


def zipf_probabilities(vocab: int) -> np.ndarray:
    p = 1.0 / np.arange(1, vocab + 1)
    return p / p.sum()


def term_counts(rng, n: int, vocab: int, mean_tokens: float, chunk: int = 100_000) -> sp.csr_matrix:
    """Rows of term counts: Poisson(mean_tokens) tokens (at least 1), each a Zipf-drawn term id."""
    p = zipf_probabilities(vocab)
    parts = []
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        lengths = np.maximum(rng.poisson(mean_tokens, size), 1)
        terms = rng.choice(vocab, size=int(lengths.sum()), p=p).astype(np.int32)
        rows = np.repeat(np.arange(size, dtype=np.int32), lengths)
        part = sp.csr_matrix((np.ones(len(terms), np.float32), (rows, terms)), shape=(size, vocab))
        part.sum_duplicates()
        parts.append(part)
    return sp.vstack(parts, format="csr")


def splade_like(rng, n: int, vocab: int, terms: int, chunk: int = 100_000) -> sp.csr_matrix:
    """Rows of about `terms` distinct Zipf-drawn terms with SPLADE-like weights.

    Calibrated on SPLADE-tiny over SciFact: weights look like log1p(Exponential(mean 1.4)) (mean 0.7,
    90th percentile 1.5, max about 2.7) and barely depend on the term's frequency (correlation with
    log df -0.05; the 10 most frequent terms weigh about 15% less).
    """
    p = zipf_probabilities(vocab)
    draws = draws_for_distinct(p, terms)
    scale = 0.85 + 0.15 * np.minimum(1.0, np.log10(np.arange(1, vocab + 1)) / 3)
    parts = []
    for start in range(0, n, chunk):
        size = min(chunk, n - start)
        lengths = np.maximum(rng.poisson(draws, size), 1)
        ids = rng.choice(vocab, size=int(lengths.sum()), p=p).astype(np.int32)
        rows = np.repeat(np.arange(size, dtype=np.int32), lengths)
        part = sp.csr_matrix((np.ones(len(ids), np.float32), (rows, ids)), shape=(size, vocab))
        part.sum_duplicates()
        part.data = (scale[part.indices] * np.log1p(rng.exponential(1.4, part.nnz)) + 1e-3).astype(np.float32)
        parts.append(part)
    return sp.vstack(parts, format="csr")


def draws_for_distinct(p: np.ndarray, distinct: float) -> float:
    """Number of draws whose expected count of distinct terms is `distinct` (bisection)."""
    lo, hi = distinct, 50 * distinct
    for _ in range(60):
        mid = (lo + hi) / 2
        if (1 - (1 - p) ** mid).sum() < distinct:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def token_lists(counts: sp.csr_matrix, repeat: bool = True) -> list[list[int]]:
    """Each row's term ids, repeated by their counts (the pre-tokenized input bm25s indexes)."""
    times = counts.data.astype(np.int64) if repeat else np.ones(counts.nnz, dtype=np.int64)
    repeated = np.repeat(counts.indices, times)
    ends = np.cumsum(np.bincount(np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr)), times, counts.shape[0]))
    return [chunk.tolist() for chunk in np.split(repeated, ends.astype(np.int64)[:-1])]


def adopt_index(retriever, built) -> None:
    retriever.scores, retriever.vocab_dict = built.scores, built.vocab_dict
    retriever.unique_token_ids_set, retriever.nonoccurrence_array = built.unique_token_ids_set, None


def adopt_postings(retriever, postings: sp.csr_matrix) -> None:
    """Hand bm25s our postings: its eager index is the same terms x documents layout."""
    retriever.scores = {
        "data": postings.data,
        "indices": postings.indices,
        "indptr": postings.indptr.astype(np.int64),
        "num_docs": postings.shape[1],
    }
    retriever.vocab_dict = {t: t for t in range(postings.shape[0])}
    retriever.unique_token_ids_set = set(range(postings.shape[0]))
    retriever.nonoccurrence_array = None


def agreement(scores, indices, their_scores, their_docs) -> tuple[float, float]:
    """Mean top-k overlap, and the largest difference between the rank-aligned scores."""
    overlap = np.mean([len(set(a[a >= 0]) & set(b)) / indices.shape[1] for a, b in zip(indices, their_docs, strict=True)])
    theirs = np.sort(their_scores, axis=1)[:, ::-1]
    both = np.isfinite(scores) & (theirs > 0)
    return float(overlap), float(np.abs(scores[both] - theirs[both]).max())


def timed(run):
    t0 = time.perf_counter()
    result = run()
    return time.perf_counter() - t0, result


def reset_peak() -> int:
    """Reset the resident high-water mark (Linux); return the current resident size in bytes."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    return _status_kib("VmRSS") * 1024


def peak_rss() -> int:
    return _status_kib("VmHWM") * 1024


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def print_table(rows: list[dict], args) -> None:
    print(f"\n{args.docs:,} documents, vocabulary {args.vocab:,}, {args.queries:,} queries, top-{args.k}")
    header = f"{'shape':<7}{'engine':<26}{'build s':>9}{'queries/s':>11}{'ours/this':>10}{'peak GiB':>10}  notes"
    print(header)
    print("-" * len(header))
    for row in rows:
        notes = []
        if "index_gib" in row:
            notes.append(f"index {row['index_gib']:.2f} GiB, index build peak +{row['build_peak_ratio']:.2f}x index")
            notes.append(f"{row['nnz_per_doc']:.0f} terms/doc, {row['postings_per_query']:,.0f} postings/query")
        if "overlap" in row:
            notes.append(f"top-{args.k} overlap {row['overlap']:.4f}, max score diff {row['max_score_diff']:.1e}")
        ratio = f"{row['ratio']:.2f}x" if "ratio" in row else "-"
        build = f"{row['build_s']:.1f}" if row["build_s"] == row["build_s"] else "(same)"
        print(
            f"{row['shape']:<7}{row['engine']:<26}{build:>9}{row['qps']:>11.1f}{ratio:>10}"
            f"{row['peak_gib']:>10.2f}  {'; '.join(notes)}"
        )


if __name__ == "__main__":
    main()
