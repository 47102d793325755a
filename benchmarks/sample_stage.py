"""The score-sampling stage of `irboard evaluate` against its search stage, BM25 on the synthetic MS MARCO-like corpus.

One process builds the BM25 index of `benchmarks/_work/corpus-<docs>` (corpus_memory.py's corpus, written if
missing), encodes the 7,000 queries and times, on the same index and queries: the search (top 1,000), then the
sampling stage (`pipeline.collect_samples`: every relevant document and 2,000 seeded others a query, scored at
those columns, fitted to the stored budget) with this code and, with `--baseline DIR` (a checkout of other code,
its C extension built), with that code's sampling stage, `SparseIndex.scores_of`, kernel and `score_samples`
module in their place. Both samples must be equal. One thread (OPENBLAS_NUM_THREADS=1); wall and CPU seconds (a loaded machine: compare CPU).

    python benchmarks/sample_stage.py --docs 100000 [--baseline DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=7000)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args()
    from corpus_memory import synthetic_corpus  # benchmarks/corpus_memory.py

    from evaluator.datasets import load_dataset
    from evaluator.models import load_model
    from evaluator.pipeline import collect_samples
    from evaluator.score_samples import encode_score_samples

    folder = synthetic_corpus(args.docs, args.queries, titles=False)
    dataset = load_dataset(f"local:{folder}")
    model = load_model("bm25")
    docs = dataset.corpus.view()
    start = time.perf_counter()
    index = model.index_corpus(docs, None)
    print(f"{args.docs:,} passages, {len(dataset.queries):,} queries: index built in {time.perf_counter() - start:.1f} s")
    query_ids = list(dataset.queries)
    import numpy as np
    import scipy.sparse as sp

    queries = model.encode_queries([dataset.queries[q] for q in query_ids],
                                   sp.csr_matrix((0, index.vocab_size), dtype=np.float32))
    start, cpu = time.perf_counter(), time.process_time()
    index.search(queries, 1000)
    search_s, search_cpu = time.perf_counter() - start, time.process_time() - cpu
    positions = dataset.corpus.positions_of()
    runs = {}
    codes = [("this", None)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    for label, code in codes:
        collect = collect_samples
        if code is not None:  # the other code's sampling: its kernel and scores_of on this index, its collector,
            # budget and stage
            old_sparse = load_module(code / "evaluator" / "index" / "sparse.py", "baseline_sparse")
            old_sparse._sparse = load_module(next((code / "evaluator" / "index").glob("_sparse*.so")), "_sparse")
            old_samples = load_module(code / "evaluator" / "score_samples.py", "baseline_score_samples")
            collect = load_module(code / "evaluator" / "pipeline.py", "baseline_pipeline").collect_samples
            index.scores_of = old_sparse.SparseIndex.scores_of.__get__(index)
            sys.modules["evaluator.score_samples"], saved = old_samples, sys.modules["evaluator.score_samples"]
        try:
            start, cpu = time.perf_counter(), time.process_time()
            samples = collect(index, queries, query_ids, positions, dataset.qrels)
            runs[label] = (time.perf_counter() - start, samples, time.process_time() - cpu)
        finally:
            if code is not None:
                sys.modules["evaluator.score_samples"] = saved
                del index.scores_of
    print(f"search (top 1,000): {search_s:.1f} s wall, {search_cpu:.1f} s CPU; load average {os.getloadavg()[0]:.1f}")
    for label, (seconds, _, cpu) in runs.items():
        print(f"sampling, {label}: {seconds:.1f} s wall = {seconds / search_s:.2f}x the search; {cpu:.1f} s CPU = "
              f"{cpu / search_cpu:.2f}x the search's")
    if "baseline" in runs:
        same = encode_score_samples(runs["this"][1], sorted(query_ids)) == \
            encode_score_samples(runs["baseline"][1], sorted(query_ids))
        print(f"this / baseline: {runs['this'][0] / runs['baseline'][0]:.2f}x wall, "
              f"{runs['this'][2] / runs['baseline'][2]:.2f}x CPU; stored samples equal: {same}")


if __name__ == "__main__":
    main()
