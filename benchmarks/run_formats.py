"""Benchmark: reading a run file in each format `evaluate --run` takes, against pandas and ranx reading the same.

Usage: python benchmarks/run_formats.py [--queries 2000] [--docs 1000] [--repeat 3]
       python benchmarks/run_formats.py --small          (200 queries x 100 docs, a quick check)

A seeded synthetic run is written to benchmarks/_work/formats/ as plain TREC, TREC with two extra columns,
gzipped TREC, MS MARCO `qid<TAB>pid<TAB>rank` and a JSON dictionary {qid: {docid: score}}. Each reader runs in
its own process (so its peak RSS is its own), best wall time of --repeat:

- irboard: `read_run_file` (detect the format, decompress, parse, join with the qrels, rank, keep the top 100
  of every query as a result stores them for the standard metrics; once with the top 1,000 kept, as R@1000
  needs), and `rank_trec_run` (the plain-TREC path as before);
- pandas: `read_csv(sep=r"\\s+", header=None)` of the TREC files (parsing only: no ranking, no qrels);
- ranx: `Run.from_file` of the TREC and JSON files (parsing into its dictionaries only; numba compiles its code
  on a tiny file first, untimed).
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from peers import require_extra  # benchmarks/peers.py

WORK = Path(__file__).resolve().parent / "_work" / "formats"
FILES = {"trec": "run.trec", "trec+2 columns": "wide.trec", "trec gzip": "run.trec.gz", "msmarco": "run.tsv",
         "json": "run.json"}


def write_files(queries: int, docs: int) -> None:
    rng = np.random.default_rng(0)
    WORK.mkdir(parents=True, exist_ok=True)
    trec, wide, msmarco, as_dict, qrels = [], [], [], {}, []
    for q in range(queries):
        ids = rng.choice(8_000_000, docs, replace=False)
        scores = np.round(np.sort(rng.random(docs))[::-1] * 30, 4)
        lines = [f"{q} Q0 {d} {i} {s} run" for i, (d, s) in enumerate(zip(ids.tolist(), scores.tolist(), strict=True), 1)]
        trec += lines
        wide += [f"{line} 0.5 x" for line in lines]
        msmarco += [f"{q}\t{d}\t{i}" for i, d in enumerate(ids.tolist(), 1)]
        as_dict[str(q)] = dict(zip(map(str, ids.tolist()), scores.tolist(), strict=True))
        qrels += [f"{q} 0 {d} 1" for d in ids[rng.choice(docs, 2, replace=False)].tolist()]
    text = "\n".join(trec) + "\n"
    (WORK / "run.trec").write_text(text)
    (WORK / "wide.trec").write_text("\n".join(wide) + "\n")
    (WORK / "run.trec.gz").write_bytes(gzip.compress(text.encode(), compresslevel=6))
    (WORK / "run.tsv").write_text("\n".join(msmarco) + "\n")
    (WORK / "run.json").write_text(json.dumps(as_dict))
    (WORK / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (WORK / "tiny.trec").write_text("\n".join(trec[:10]) + "\n")
    (WORK / "tiny.json").write_text(json.dumps({"0": as_dict["0"]}))


def child(tool: str, name: str) -> None:
    """One reading, in this process; prints its wall time and peak RSS as JSON."""
    path = WORK / FILES[name]
    start = time.perf_counter()
    if tool.startswith("irboard"):
        from evaluator.run_formats import read_run_file
        from evaluator.trec import rank_trec_run, read_qrels

        qrels = read_qrels(WORK / "qrels.txt")
        depth = 1000 if tool.endswith("1,000 kept") else 100  # the standard set's depth, or R@1000's
        start = time.perf_counter()
        if tool == "irboard rank_trec_run":
            rank_trec_run(path, qrels, keep_top=depth, label_depth=depth)
        else:
            read_run_file(path, qrels, keep_top=depth, label_depth=depth)
    elif tool == "pandas":
        import pandas as pd

        start = time.perf_counter()
        pd.read_csv(path, sep=r"\s+", header=None, dtype={0: str, 2: str})
    else:
        from ranx import Run

        kind = "json" if name == "json" else "trec"
        Run.from_file(str(WORK / f"tiny.{kind}"), kind=kind)  # numba compiles on the first call: not timed
        start = time.perf_counter()
        Run.from_file(str(path), kind=kind)
    wall = time.perf_counter() - start
    print(json.dumps({"wall": wall, "peak_rss": peak_rss_bytes()}))


def peak_rss_bytes() -> int:
    """This process's peak RSS: VmHWM where /proc has it (ru_maxrss keeps the parent's peak across exec)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)


CASES = [("irboard read_run_file", name) for name in FILES] + [("irboard rank_trec_run", "trec"),
                                                                 ("irboard read_run_file, top 1,000 kept", "trec")] + [
    ("pandas", "trec"), ("pandas", "trec gzip"), ("ranx", "trec"), ("ranx", "json")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--small", action="store_true", help="200 queries x 100 documents")
    parser.add_argument("--child", nargs=2, metavar=("TOOL", "FILE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    require_extra("bench", "pandas", "ranx")
    queries, docs = (200, 100) if args.small else (args.queries, args.docs)
    write_files(queries, docs)
    sizes = {name: (WORK / file).stat().st_size / 1e6 for name, file in FILES.items()}
    print(f"{queries:,} queries x {docs:,} documents; best of {args.repeat}, each reader in its own process\n")
    print("| reader | file | MB | wall s | peak RSS MiB |\n|---|---|---|---|---|")
    for tool, name in CASES:
        runs = [json.loads(subprocess.run([sys.executable, __file__, "--child", tool, name], check=True,
                                          capture_output=True, text=True).stdout) for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["wall"])
        print(f"| {tool} | {name} | {sizes[name]:.0f} | {best['wall']:.2f} | {best['peak_rss'] / 2**20:.0f} |")


if __name__ == "__main__":
    main()
