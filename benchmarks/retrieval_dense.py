"""Dense exact search: irboard's DenseIndex (float32, bfloat16) against faiss IndexFlatIP, same run, same data.

Random unit-norm corpus (seeded), 1,000 queries, top-100. Each engine runs with 1 and with 2 threads
(BLAS / torch / faiss OpenMP); the best of --repeats timings counts, engines interleaved so that load
from other processes hits them alike. Peak RSS is the process high-water mark during each engine's
run measured alone in a fresh process (corpus generation, index build, one search).

    python benchmarks/retrieval_dense.py              # 1,000,000 x 384
    python benchmarks/retrieval_dense.py --small      # 100,000 x 384
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np
from peers import require_extra  # benchmarks/peers.py

from evaluator.index.dense import DenseIndex


def random_unit_vectors(n: int, dim: int, rng: np.random.Generator, chunk: int = 100_000) -> np.ndarray:
    out = np.empty((n, dim), np.float32)
    for start in range(0, n, chunk):
        block = rng.standard_normal((min(chunk, n - start), dim), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + block.shape[0]] = block
    return out


def peak_rss_bytes() -> int:
    """This process's high-water mark (VmHWM; ru_maxrss would carry the parent's over exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def peak_rss_alone(engine: str, args: argparse.Namespace, n_docs: int) -> int:
    """Peak RSS of a fresh process that generates the corpus, builds `engine` and searches once."""
    command = [sys.executable, __file__, "--peak-of", engine, "--docs", str(n_docs), "--dim", str(args.dim),
               "--queries", str(args.queries), "-k", str(args.k), "--seed", str(args.seed)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return int(output.split()[-1])


ENGINES = {
    "faiss IndexFlatIP": lambda corpus, threads: faiss_searcher(corpus, threads),
    "irboard float32": lambda corpus, threads: irboard_searcher(corpus, threads, "float32"),
    "irboard bfloat16": lambda corpus, threads: irboard_searcher(corpus, threads, "bfloat16"),
}


def faiss_searcher(corpus: np.ndarray, threads: int):
    import faiss

    index = faiss.IndexFlatIP(corpus.shape[1])
    index.add(corpus)

    def search(queries, k):
        faiss.omp_set_num_threads(threads)
        return index.search(queries, k)

    return search


def irboard_searcher(corpus: np.ndarray, threads: int, dtype: str):
    index = DenseIndex(corpus, dtype=dtype, threads=threads)
    return lambda queries, k: index.search(queries, k, quiet=True)


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean([len(set(x) & set(y)) / len(x) for x, y in zip(a.tolist(), b.tolist(), strict=True)]))


def main() -> None:
    require_extra("faiss", "faiss", "torch")
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--small", action="store_true", help="100,000 documents")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("-k", type=int, default=100)
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--peak-of", choices=list(ENGINES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    n_docs = 100_000 if args.small else args.docs

    rng = np.random.default_rng(args.seed)
    corpus = random_unit_vectors(n_docs, args.dim, rng)
    queries = random_unit_vectors(args.queries, args.dim, rng)
    if args.peak_of:
        ENGINES[args.peak_of](corpus, 1)(queries, args.k)
        print(peak_rss_bytes())
        return
    print(f"corpus {n_docs:,} x {args.dim} float32, {args.queries:,} queries, top-{args.k}, "
          f"{os.cpu_count()} cpus, best of {args.repeats}")

    rows = []
    exact = None
    for threads in [int(t) for t in args.threads.split(",")]:
        searchers = {name: build(corpus, threads) for name, build in ENGINES.items()}
        results, best = {}, {}
        for _ in range(args.repeats):
            for name, search in searchers.items():
                start = time.perf_counter()
                results[name] = search(queries, args.k)
                best[name] = min(best.get(name, np.inf), time.perf_counter() - start)
        del searchers
        if exact is None:
            exact = results["irboard float32"][1]
        for name in ENGINES:
            rows.append((name, threads, args.queries / best[name], best["faiss IndexFlatIP"] / best[name],
                         overlap(results[name][1], exact)))
    del corpus
    peaks = {name: peak_rss_alone(name, args, n_docs) for name in ENGINES}

    print(f"\n{'engine':<20} {'threads':>7} {'queries/s':>10} {'vs faiss':>9} {'top-k overlap':>14} {'peak RSS GiB':>13}")
    for name, threads, qps, ratio, ov in rows:
        print(f"{name:<20} {threads:>7} {qps:>10.1f} {ratio:>8.2f}x {ov:>14.4f} {peaks[name] / 2**30:>13.2f}")
    print("\nvs faiss: faiss time / engine time at the same thread count; overlap: against irboard float32;")
    print("peak RSS: a fresh process generating the corpus, building the engine and searching once.")


if __name__ == "__main__":
    main()
