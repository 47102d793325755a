"""Benchmark: MS MARCO-size results, from run file to a verified result, with and without the deep metrics.

Usage: python benchmarks/msmarco.py [--depth 1000] [--shared ../shared] [--skip-quora]

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
    pid = os.fork()
    if pid == 0:  # child: exec the command with its output in files
        out = os.open(WORK / "child.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        err = os.open(WORK / "child.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.execvpe(command[0], command, {**os.environ, **env})
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    stdout = (WORK / "child.out").read_text() + (WORK / "child.err").read_text()
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--skip-quora", action="store_true", help="leave out the 10,000 x 1,000 case")
    args = parser.parse_args()
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
