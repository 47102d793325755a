"""Benchmark: an MS MARCO-size result, from run file to a verified result.

Usage: python benchmarks/msmarco.py [--depth 1000] [--shared ../shared]

A seeded synthetic run of depth 1,000 over the 6,980 official MS MARCO dev-small query ids (the judgments
mMARCO uses; passage ids drawn from MS MARCO's 8,841,823, a judged passage placed at a random rank for most
queries) is written to benchmarks/_work/. Then, each as its own process:

1. `irboard evaluate --run RUN --model-id ... --dataset-id mmarco/en --out FILE` with default settings (the
   official judgments from IRBOARD_MIRROR=<shared>/data/official): wall and CPU seconds, peak memory, bytes;
2. `irboard validate FILE --data-dir DIR` with the qrels in BEIR layout at DIR/mmarco/en/qrels/dev.tsv and no
   official judgments to fall back on (an empty mirror and cache);
3. `irboard validate FILE` against the official judgments (IRBOARD_MIRROR, a fresh cache).

Both validations must report the file verified.
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


def generate(qrels_path: Path, depth: int, seed: int = 2026) -> Path:
    """The synthetic run, written once per depth."""
    path = WORK / f"msmarco_run_{depth}.txt"
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
            if relevant not in docs and rng.random() < 0.8:  # found at a rank around 10 for most queries
                docs[min(int(rng.geometric(0.1)), depth) - 1] = relevant
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
    sizes["readable part and layout"] = path.stat().st_size - sum(sizes.values())
    return sizes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    args = parser.parse_args()
    official = (args.shared / "data" / "official").resolve()
    qrels_path = official / "qrels" / QRELS_NAME
    run_path = generate(qrels_path, args.depth)

    from evaluator.result import result_path, size_limit

    irboard = str(Path(sys.executable).with_name("irboard"))
    folder = WORK / "msmarco"
    out = result_path(MODEL_ID, DATASET_ID, folder / "results")
    data = beir_layout(qrels_path, folder / "data")
    print(f"run: {run_path.name} ({run_path.stat().st_size / 1e6:.0f} MB, 6,980 queries x {args.depth})")

    evaluate = run_child([irboard, "evaluate", "--run", str(run_path), "--model-id", MODEL_ID, "--dataset-id",
                          DATASET_ID, "--out", str(out), "--force", "--quiet"],
                         {"IRBOARD_MIRROR": str(official), "IRBOARD_CACHE": str(folder / "cache-evaluate")})
    size, limit = out.stat().st_size, size_limit(6980)
    print(f"\nirboard evaluate --run ... --dataset-id {DATASET_ID} (default settings):")
    print(f"  wall {evaluate['wall']:.2f} s, CPU {evaluate['cpu']:.2f} s, peak RSS {evaluate['peak_rss'] / 2**30:.2f} GiB")
    print(f"  result file {size / 1e6:.2f} MB = {size / 6980:.0f} bytes per query; cap for 6,980 queries "
          f"{limit / 1e6:.2f} MB")
    for name, count in column_bytes(out).items():
        print(f"    {name:<28} {count / 1e6:8.2f} MB")

    checks = {
        f"--data-dir {data} (BEIR layout; no official judgments reachable)":
            ([irboard, "validate", str(out), "--data-dir", str(data)],
             {"IRBOARD_MIRROR": str(folder / "no-mirror"), "IRBOARD_CACHE": str(folder / "cache-empty")}),
        "official judgments (IRBOARD_MIRROR, fresh cache)":
            ([irboard, "validate", str(out)],
             {"IRBOARD_MIRROR": str(official), "IRBOARD_CACHE": str(folder / "cache-validate")}),
    }
    failed = False
    for label, (command, env) in checks.items():
        for cache in (folder / "cache-empty", folder / "cache-validate"):
            shutil.rmtree(cache, ignore_errors=True)
        done = run_child(command, env)
        verified = "1 verified" in done["output"]
        failed |= not verified
        print(f"\nirboard validate, {label}:\n  {done['output'].strip().splitlines()[-1]}\n  wall {done['wall']:.2f} s, "
              f"CPU {done['cpu']:.2f} s, peak RSS {done['peak_rss'] / 2**30:.2f} GiB; verified: {verified}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
