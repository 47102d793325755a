"""BM25 over a synthetic MS MARCO-like corpus: CPU seconds and peak memory of `irboard evaluate`, against a baseline.

The corpus (seeded): passages of Poisson(55) words, at least 1, drawn Zipf(1) from 200,000 synthetic words
(lower-case letter strings, so stemming and stop words do real work); 7,000 queries, each Poisson(6) words of its one
judged-relevant passage. MS MARCO passages have no titles, so neither have these (`--titles` gives
every passage a 4-word title, as MIRACL's have). Written once per size to benchmarks/_work/corpus-<docs>[-titled]/.

Each run is `irboard evaluate --model bm25 --dataset local:DIR --top-k 1000` in its own process (one thread:
OPENBLAS_NUM_THREADS=1), measured with os.wait4: CPU seconds and peak RSS of that process alone; the stage
timings come from the result's provenance. `--baseline DIR` runs the same command with DIR (a checkout of
another commit, its C extensions built) first on PYTHONPATH, in the same invocation, and prints the ratios.

    python benchmarks/corpus_memory.py --docs 100000,300000 [--baseline /tmp/irboard-before]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WORK = Path(__file__).resolve().parent / "_work"
VOCABULARY = 200_000
STAGES = ("load_dataset_s", "index_s", "search_s", "metrics_s", "score_samples_s")


def synthetic_corpus(num_docs: int, num_queries: int, titles: bool, seed: int = 55, work: Path = WORK) -> Path:
    folder = work / f"corpus-{num_docs}{'-titled' if titles else ''}"
    if (folder / "qrels" / "test.tsv").exists():
        return folder
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 11, VOCABULARY)
    words = np.array(["".join(rng.choice(letters, n)) for n in lengths], dtype=object)
    p = 1.0 / np.arange(1, VOCABULARY + 1)
    p /= p.sum()

    def texts(n: int, mean_words: float) -> list[str]:
        counts = np.maximum(rng.poisson(mean_words, n), 1)
        picks = words[rng.choice(VOCABULARY, size=int(counts.sum()), p=p)]
        ends = np.cumsum(counts)
        return [" ".join(picks[end - count:end]) for count, end in zip(counts.tolist(), ends.tolist(), strict=True)]

    folder.mkdir(parents=True, exist_ok=True)
    relevant = rng.choice(num_docs, size=num_queries, replace=False)
    query_of = {int(d): q for q, d in enumerate(relevant.tolist())}
    relevant_text: dict[int, str] = {}
    with open(folder / "corpus.jsonl", "w") as out:
        for start in range(0, num_docs, 50_000):
            size = min(50_000, num_docs - start)
            bodies = texts(size, 55)
            heads = texts(size, 4) if titles else [""] * size
            relevant_text |= {query_of[d]: bodies[d - start] for d in range(start, start + size) if d in query_of}
            out.write("".join(json.dumps({"_id": f"p{start + i}", "title": heads[i], "text": bodies[i]}) + "\n"
                              for i in range(size)))
    # a query: Poisson(6) words of its relevant passage, so that BM25 has something to find
    queries = []
    for q in range(num_queries):
        passage = relevant_text[q].split()
        take = min(max(int(rng.poisson(6)), 1), len(passage))
        queries.append(" ".join(rng.choice(passage, size=take, replace=False)))
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": t}) + "\n"
                                                  for i, t in enumerate(queries)))
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\tp{d}\t1\n" for i, d in enumerate(relevant.tolist())))
    return folder


def evaluate(folder: Path, code: Path, out: Path) -> dict:
    """One `irboard evaluate` process with `code` first on PYTHONPATH: wall, CPU, peak RSS, stage timings."""
    command = [sys.executable, "-m", "leaderboard.cli", "evaluate", "--model", "bm25", "--dataset",
               f"local:{folder}", "--top-k", "1000", "--out", str(out), "--force", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(code), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.chdir(code)
        log = os.open(WORK / "corpus_memory.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.execvpe(command[0], command, env)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{(WORK / 'corpus_memory.log').read_text()[-3000:]}")
    result = json.loads(out.read_text())
    return {"wall": time.perf_counter() - start, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_gib": usage.ru_maxrss / 2**20, "timings": result["provenance"]["timings"],
            "ndcg": result["metrics"]["nDCG@10"], "per_query": result["per_query"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default="100000", help="comma-separated corpus sizes")
    parser.add_argument("--queries", type=int, default=7000)
    parser.add_argument("--titles", action="store_true", help="every passage gets a title")
    parser.add_argument("--baseline", type=Path, help="a checkout of another commit, run in the same invocation")
    args = parser.parse_args()
    print(f"| passages | code | wall s | CPU s | peak RSS GiB | {' | '.join(STAGES)} | nDCG@10 | per-query values |")
    print("|---" * (7 + len(STAGES)) + "|")
    for num_docs in [int(n) for n in args.docs.split(",")]:
        folder = synthetic_corpus(num_docs, args.queries, args.titles)
        runs = {}
        for label, code in (("baseline", args.baseline), ("this", ROOT)):
            if code is None:
                continue
            runs[label] = run = evaluate(folder, code.resolve(), WORK / f"corpus-{label}.json")
            same = "-" if label == "baseline" else (
                "equal" if "baseline" not in runs else
                "equal" if run["per_query"] == runs["baseline"]["per_query"] else "DIFFER")
            stages = " | ".join(f"{run['timings'].get(s, float('nan')):.1f}" for s in STAGES)
            print(f"| {num_docs:,} | {label} | {run['wall']:.1f} | {run['cpu']:.1f} | {run['peak_gib']:.2f} | {stages} | "
                  f"{run['ndcg']:.4f} | {same} |", flush=True)
        if len(runs) == 2:
            before, after = runs["baseline"], runs["this"]
            print(f"|  | this ÷ baseline | {after['wall'] / before['wall']:.2f}× | {after['cpu'] / before['cpu']:.2f}× | "
                  f"{after['peak_gib'] / before['peak_gib']:.2f}× |" + " |" * len(STAGES) + "  |  |", flush=True)


if __name__ == "__main__":
    main()
