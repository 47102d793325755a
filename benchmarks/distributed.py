"""The Ray engine against the local engine: wall time with 1 and 2 workers, and identical results.

Each run is a fresh `irboard evaluate` process (Ray started inside it, as a user would run it) with an empty
cache, so encoding and Ray's start-up are both counted. On this 2-core machine the two cores behave like one:
expect overhead, not speed-up; the point is that the results are the same.

    python benchmarks/distributed.py [--models "bm25;splade:../shared/models/splade-tiny"] [--workers 1,2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peers import require_extra  # benchmarks/peers.py

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "data" / "beir" / "scifact"


def run(model: str, engine: str, workers: int | None, out: Path, cache: Path) -> float:
    command = [str(Path(sys.executable).parent / "irboard"), "evaluate", "--model", model, "--dataset",
               "beir/scifact", "--data-dir", str(SCIFACT), "--out", str(out), "--cache-dir", str(cache),
               "--engine", engine, "--quiet", "--force"]
    if workers:
        command += ["--workers", str(workers)]
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT)
    return time.perf_counter() - start


def main() -> None:
    require_extra("test", "ray", "torch", "transformers")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="bm25", help="';'-separated model specs")
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    print("| model | engine | workers | wall s | vs local | nDCG@10 | per-query values equal to local |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        for model in [m for m in args.models.split(";") if m]:
            local_out = work / "local.json"
            local_s = run(model, "local", None, local_out, work / "cache-local")
            local = json.loads(local_out.read_text())
            print(f"| {model} | local | – | {local_s:.1f} | 1.00× | {local['metrics']['nDCG@10']:.4f} | – |",
                  flush=True)
            for workers in [int(w) for w in args.workers.split(",")]:
                out = work / f"ray-{workers}.json"
                seconds = run(model, "ray", workers, out, work / f"cache-ray-{workers}")
                result = json.loads(out.read_text())
                same = all(abs(result["per_query"][m][q] - v) <= 1e-9
                           for m, values in local["per_query"].items() for q, v in values.items())
                print(f"| {model} | ray | {workers} | {seconds:.1f} | {seconds / local_s:.2f}× | "
                      f"{result['metrics']['nDCG@10']:.4f} | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
