"""Benchmark: MS MARCO-size results, from run file to a verified result, with and without the deep metrics; and
with `--corpus`, BM25 end to end over the synthetic MS MARCO-like corpus up to MS MARCO's full size.

Usage: python benchmarks/msmarco.py [--depth 1000] [--shared ../shared] [--skip-quora]
       python benchmarks/msmarco.py --corpus 100000,1000000,8800000 [--work DIR] [--bm25s 100000,1000000]

`--corpus SIZES`: for each size, benchmarks/corpus_memory.py's synthetic corpus (written once to DIR/corpus-<size>,
8.8M passages are 4.2 GB of JSONL), then `irboard evaluate --model bm25 --dataset local:<corpus> --top-k 1000`
(7,000 queries) in its own process on one thread: wall and CPU seconds and peak RSS (os.wait4), the stages from
the result's provenance (loading, encoding, search, sampling score distributions) and sampling / search. The
result's dataset is then declared (`datasets/<slug>.json` under DIR, from its judgments, as `evaluate --declare`
writes it) and `irboard validate` checks it and verifies it against the corpus's judgments. `--bm25s SIZES`:
the bm25s package on the same corpus and queries (its tokenizer with English stop words, Lucene BM25 k1 0.9,
b 0.4, top 1,000, one thread, numba backend when numba is installed), in its own process: wall, CPU, peak RSS.
The load average is printed beside each run.

A seeded synthetic run of depth 1,000 over the 6,980 official MS MARCO dev-small query ids (the judgments
mMARCO uses; passage ids drawn from MS MARCO's 8,841,823, a judged passage at a rank around 10 for 60% of the
queries and between 101 and 1,000 for another 20%, so that deep metrics differ from those at 100 and the part
below depth 100 is not empty) is written to benchmarks/_work/. Then, each as its own process (wall and CPU seconds, peak memory,
bytes a query, each column's share):

1. `irboard evaluate --run RUN --model-id ... --dataset-id mmarco/en --out FILE` with the default metrics, then
   `irboard validate FILE` against the official judgments (IRBOARD_MIRROR=<shared>/data/official, fresh caches);
2. the same with MS MARCO's official metrics and MAP, `--metrics RR@10,R@1000,AP` (stored to depth 100 and,
   below it, the judged passages' ranks and each ranking's length: `run.below`), then also
   `irboard validate FILE --data-dir DIR` with the qrels in BEIR layout at DIR/mmarco/en/qrels/dev.tsv and no
   official judgments to fall back on;
3. 10,000 queries x 1,000 documents with graded judgments (benchmarks/metrics.py's run and qrels), submitted as
   beir/quora, with the default metrics and with `--metrics AP,RR,R@1000,nDCG@1000`, each validated with
   `--data-dir beir/quora=DIR`.

After each deep case, what the ranking would take stored otherwise: whole to depth 1,000 (as results did
before `run.below`), and the depth-100 ranking's scores as float32. Every validation must verify the file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

WORK = Path(__file__).resolve().parent / "_work"
ROOT = Path(__file__).resolve().parents[1]
QRELS_NAME = "qrels.msmarco-passage.dev-subset.txt"
NUM_PASSAGES = 8_841_823
MODEL_ID, DATASET_ID = "bench/msmarco-synthetic", "mmarco/en"
DEEP = "RR@10,R@1000,AP"  # MS MARCO's official MRR@10 and Recall@1000, and MAP
DEEP_10K = "AP,RR,R@1000,nDCG@1000"


def generate(qrels_path: Path, depth: int, seed: int = 2026) -> Path:
    """The synthetic run, written once per depth (v2: some judged passages below rank 100, as in real runs)."""
    path = WORK / f"msmarco_run_{depth}_v2.txt"
    if path.exists():
        return path
    from evaluator.trec import read_qrels

    WORK.mkdir(parents=True, exist_ok=True)
    qrels = read_qrels(qrels_path)
    rng = np.random.default_rng(seed)
    with open(path.with_suffix(".tmp"), "w") as stream:
        for query_id, judged in zip(qrels.query_ids, qrels.judgments, strict=True):
            docs = rng.choice(NUM_PASSAGES, size=depth, replace=False).astype(str).tolist()
            relevant = sorted(judged)[0]
            found = rng.random()
            if relevant not in docs and found < 0.8:  # at a rank around 10 for 60% of the queries, 101-1,000 for 20%
                rank = int(rng.geometric(0.1)) if found < 0.6 else int(rng.integers(101, 1001))
                docs[min(rank, depth) - 1] = relevant
            scores = np.sort(rng.normal(20.0, 4.0, size=depth))[::-1].tolist()
            stream.write("".join(f"{query_id} Q0 {doc} {rank} {score:.4f} synthetic\n"
                                 for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), 1)))
    path.with_suffix(".tmp").replace(path)
    return path


def beir_layout(qrels_path: Path, root: Path) -> Path:
    """The official qrels as `root/mmarco/en/qrels/dev.tsv` (BEIR's TSV with its header)."""
    target = root / DATASET_ID / "qrels" / "dev.tsv"
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = [line.split() for line in qrels_path.read_text().splitlines() if line.strip()]
    target.write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{r}\n" for q, _, d, r in rows))
    return root


def run_child(command: list[str], env: dict[str, str]) -> dict:
    """Run `command` with `env` added; its wall and CPU seconds and peak RSS (os.wait4: this child's alone)."""
    start = time.perf_counter()
    logs = WORK / f"child-{os.getpid()}"  # one pair of files per benchmark process
    pid = os.fork()
    if pid == 0:  # child: exec the command with its output in files
        out = os.open(logs.with_suffix(".out"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(logs.with_suffix(".err"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.execvpe(command[0], command, {**os.environ, **env})
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    stdout = logs.with_suffix(".out").read_text() + logs.with_suffix(".err").read_text()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{stdout}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak_rss": usage.ru_maxrss * 1024,
            "output": stdout}


def column_bytes(path: Path) -> dict[str, int]:
    """Bytes of each binary column in the file (base64 text), and of the readable rest."""
    data = json.loads(path.read_text())
    sizes = {f"per_query.{k}": len(v) for k, v in data["per_query"].items()}
    sizes |= {f"run.{k}": len(v) for k, v in (data.get("run") or {}).items() if isinstance(v, str)}
    sizes |= {f"run.below.{k}": len(v) for k, v in (data.get("run") or {}).get("below", {}).items()}
    sizes["readable part and layout"] = path.stat().st_size - sum(sizes.values())
    return sizes


def evaluate_and_validate(label: str, run_path: Path, dataset_id: str, num_queries: int, extra: list[str],
                          env: dict[str, str], validate_extra: list[str], folder: Path) -> tuple[Path, bool]:
    """One case: `irboard evaluate` then `irboard validate`, each a fresh process; prints the figures."""
    from evaluator.result import result_path, size_limit

    irboard = str(Path(sys.executable).with_name("irboard"))
    out = result_path(MODEL_ID, dataset_id, folder / "results")
    evaluate = run_child([irboard, "evaluate", "--run", str(run_path), "--model-id", MODEL_ID, "--dataset-id",
                          dataset_id, "--out", str(out), "--force", "--quiet", *extra], env)
    size, limit = out.stat().st_size, size_limit(num_queries)
    print(f"\n{label}: irboard evaluate --run ... --dataset-id {dataset_id} {' '.join(extra)}")
    print(f"  wall {evaluate['wall']:.2f} s, CPU {evaluate['cpu']:.2f} s, peak RSS {evaluate['peak_rss'] / 2**30:.2f} GiB")
    print(f"  result file {size / 1e6:.2f} MB = {size / num_queries:.0f} bytes per query; cap for {num_queries:,} "
          f"queries {limit / 1e6:.2f} MB")
    for name, count in column_bytes(out).items():
        print(f"    {name:<28} {count / 1e6:8.3f} MB  {count / num_queries:9.1f} bytes a query")
    done = run_child([irboard, "validate", str(out), *validate_extra], env)
    verified = "1 verified" in done["output"]
    print(f"  irboard validate: {done['output'].strip().splitlines()[-1]}\n  wall {done['wall']:.2f} s, "
          f"CPU {done['cpu']:.2f} s, peak RSS {done['peak_rss'] / 2**30:.2f} GiB; verified: {verified}")
    return out, verified


def alternatives(run_path: Path, qrels_path: Path, out: Path, num_queries: int) -> None:
    """What the same result's ranking would take stored otherwise: whole to depth 1,000 (what versions before
    `run.below` wrote for AP, RR or R@1000), and the depth-100 ranking with float32 scores."""
    from evaluator.columns import encode_array, encode_strings
    from evaluator.result import read_result
    from evaluator.trec import rank_trec_run, read_qrels

    _, whole = rank_trec_run(run_path, read_qrels(qrels_path), keep_top=None)
    columns = (encode_strings(whole.doc_ids), encode_array(whole.lengths, "<u4"), encode_array(whole.docs, "<u4"),
               encode_array(whole.scores, "<f8"))
    print(f"  alternatives for the ranking (bytes a query): whole ranking to depth {whole.depth}: "
          f"{sum(map(len, columns)) / num_queries:,.0f}", end="")
    run = read_result(out).run
    as_stored = len(encode_array(run.scores, "<f8"))
    narrow = len(encode_array(run.scores.astype(np.float32), "<f4"))
    print(f"; depth-100 scores as float64 {as_stored / num_queries:,.0f}, as float32 {narrow / num_queries:,.0f}")


def load_average() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def corpus_runs(sizes: list[int], work: Path, peer_sizes: list[int]) -> int:
    """`--corpus`: BM25 end to end at each size, its result declared and validated; bm25s at `peer_sizes`."""
    from corpus_memory import synthetic_corpus  # benchmarks/corpus_memory.py

    from evaluator.trec import read_qrels

    irboard = str(Path(sys.executable).with_name("irboard"))
    env = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "IRBOARD_CACHE": str(work / "cache"),
           "IRBOARD_DATASETS": str(work / "datasets")}
    os.environ["IRBOARD_DATASETS"] = env["IRBOARD_DATASETS"]  # where write_declaration below writes
    WORK.mkdir(parents=True, exist_ok=True)  # run_child's output files
    failed = False
    for num_docs in sizes:
        folder = synthetic_corpus(num_docs, 7000, titles=False, work=work)
        before = load_average()
        run = run_child([irboard, "evaluate", "--model", "bm25", "--dataset", f"local:{folder}", "--top-k", "1000",
                         "--results-dir", str(work / "results"), "--force"], env)
        out = max((work / "results").glob(f"*/*{folder.name}.json"), key=lambda p: p.stat().st_mtime)
        result = json.loads(out.read_text())
        stages = result["provenance"]["timings"]
        print(f"\n{num_docs:,} passages, 7,000 queries x top 1,000: irboard evaluate --model bm25 --dataset "
              f"local:{folder} --top-k 1000\n  wall {run['wall']:.1f} s, CPU {run['cpu']:.1f} s, peak RSS "
              f"{run['peak_rss'] / 2**30:.2f} GiB; load average before {before}, after {load_average()}")
        print("  stages (wall s): " + ", ".join(f"{name} {value:.1f}" for name, value in stages.items()))
        print(f"  sampling / search: {stages['score_samples_s'] / stages['search_s']:.2f}; "
              + ", ".join(f"{k} {v:.4f}" for k, v in result["metrics"].items() if k in ("nDCG@10", "R@1000")))
        from evaluator.datasets.declared import write_declaration

        dataset_id = result["dataset"]["id"]
        declaration = write_declaration(dataset_id, read_qrels(folder / "qrels" / "test.tsv"))
        for extra in ([], ["--data-dir", f"{dataset_id}={folder}"]):
            done = run_child([irboard, "validate", str(out), *extra], env)
            said = done["output"].strip().splitlines()[-1]
            print(f"  irboard validate {out.name} {' '.join(extra)} (declared in {declaration}): {said}; "
                  f"wall {done['wall']:.1f} s")
            failed |= bool(extra) and "1 verified" not in done["output"]
    for num_docs in peer_sizes:
        folder = synthetic_corpus(num_docs, 7000, titles=False, work=work)
        before = load_average()
        run = run_child([sys.executable, __file__, "--bm25s-child", str(folder)], env)
        figures = json.loads(run["output"].strip().splitlines()[-1])
        print(f"\n{num_docs:,} passages: bm25s {figures['version']} ({figures['backend']}), top 1,000, one thread: "
              f"wall {run['wall']:.1f} s, CPU {run['cpu']:.1f} s, peak RSS {run['peak_rss'] / 2**30:.2f} GiB; load "
              f"average before {before}, after {load_average()}\n  stages (wall s): read {figures['read_s']:.1f}, "
              f"tokenize and index {figures['index_s']:.1f}, retrieve {figures['retrieve_s']:.1f}; relevant passage "
              f"in the top 1,000: {figures['found']:.4f}")
    return 1 if failed else 0


def bm25s_child(folder: Path) -> None:
    """The bm25s peer over one corpus: prints its stage times as one JSON line."""
    import importlib.util

    import bm25s

    backend = "numba" if importlib.util.find_spec("numba") else "numpy"
    start = time.perf_counter()
    with open(folder / "corpus.jsonl") as stream:
        texts = [json.loads(line)["text"] for line in stream]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    retriever = bm25s.BM25(k1=0.9, b=0.4, method="lucene", backend=backend)
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    index_s = time.perf_counter() - start
    del texts
    start = time.perf_counter()
    tokens = bm25s.tokenize([q["text"] for q in queries], stopwords="en", show_progress=False)
    documents, _ = retriever.retrieve(tokens, k=1000, n_threads=1, show_progress=False)
    retrieve_s = time.perf_counter() - start
    relevant = {}
    for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query_id, doc_id, _ = line.split("\t")
        relevant[query_id] = int(doc_id[1:])  # p<row>: the corpus's row
    found = np.mean([relevant[q["_id"]] in set(row.tolist()) for q, row in zip(queries, documents, strict=True)])
    print(json.dumps({"version": bm25s.__version__, "backend": backend, "read_s": read_s, "index_s": index_s,
                      "retrieve_s": retrieve_s, "found": float(found)}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--skip-quora", action="store_true", help="leave out the 10,000 x 1,000 case")
    parser.add_argument("--corpus", help="comma-separated corpus sizes: BM25 end to end over the synthetic corpus")
    parser.add_argument("--bm25s", default="", help="with --corpus: comma-separated sizes to run bm25s on")
    parser.add_argument("--work", type=Path, default=WORK, help="with --corpus: where corpora and results go")
    parser.add_argument("--bm25s-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bm25s_child:
        bm25s_child(args.bm25s_child)
        return 0
    if args.corpus:
        return corpus_runs([int(n) for n in args.corpus.split(",")], args.work.resolve(),
                           [int(n) for n in args.bm25s.split(",") if n])
    official = (args.shared / "data" / "official").resolve()
    qrels_path = official / "qrels" / QRELS_NAME
    run_path = generate(qrels_path, args.depth)
    folder = WORK / "msmarco"
    data = beir_layout(qrels_path, folder / "data")
    print(f"run: {run_path.name} ({run_path.stat().st_size / 1e6:.0f} MB, 6,980 queries x {args.depth})")
    failed = False
    for label, extra in [("default metrics", []), ("MS MARCO's official metrics and MAP", ["--metrics", DEEP])]:
        for cache in ("cache-evaluate", "cache-validate"):
            shutil.rmtree(folder / cache, ignore_errors=True)
        out, verified = evaluate_and_validate(
            label, run_path, DATASET_ID, 6980, extra,
            {"IRBOARD_MIRROR": str(official), "IRBOARD_CACHE": str(folder / "cache-evaluate")}, [], folder)
        failed |= not verified
    alternatives(run_path, qrels_path, out, 6980)
    # the same file against qrels in BEIR layout under --data-dir, with no official judgments to fall back on
    irboard = str(Path(sys.executable).with_name("irboard"))
    done = run_child([irboard, "validate", str(out), "--data-dir", str(data)],
                     {"IRBOARD_MIRROR": str(folder / "no-mirror"), "IRBOARD_CACHE": str(folder / "cache-empty")})
    shutil.rmtree(folder / "cache-empty", ignore_errors=True)
    failed |= "1 verified" not in done["output"]
    print(f"  irboard validate --data-dir {data} (no official judgments reachable): "
          f"{done['output'].strip().splitlines()[-1]}; wall {done['wall']:.2f} s, peak RSS "
          f"{done['peak_rss'] / 2**30:.2f} GiB")
    if not args.skip_quora:  # 10,000 x 1,000 with graded judgments, submitted as beir/quora (10,000 test queries)
        from metrics import generate as generate_graded  # benchmarks/metrics.py

        run_10k, qrels_10k = generate_graded(10_000, 1000)
        quora = WORK / "msmarco-quora"
        (quora / "qrels").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(qrels_10k, quora / "qrels" / "test.tsv")
        for label, extra in [("10,000 x 1,000, default metrics", []),
                             ("10,000 x 1,000, deep metrics", ["--metrics", DEEP_10K])]:
            out, verified = evaluate_and_validate(
                label, run_10k, "beir/quora", 10_000, ["--qrels", str(qrels_10k), *extra],
                {"IRBOARD_CACHE": str(quora / "cache")}, ["--data-dir", f"beir/quora={quora}"], quora)
            failed |= not verified
        alternatives(run_10k, qrels_10k, out, 10_000)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
