"""Benchmark: `irboard validate` over many real results, as `make site` and the results workflow run it.

Usage: python benchmarks/validate.py [--models 1000]      (needs ../shared/data and the repository's results)
       python benchmarks/validate.py --models 40           (a quick check)

The repository's four real SciFact results (BM25, BM25 k1 1.5, SPLADE-tiny, all-MiniLM-L6-v2: rankings of depth
100, the 30 default metrics, score samples) are written again under `--models` model ids (cycling through the four,
only the model id changed), to benchmarks/_work/validate_<models>/results, once. `irboard validate --results ...
--data-dir ../shared/data` then checks and re-scores every file against SciFact's judgments, timed from a process
of its own (CPU time and the largest peak RSS of the command and its workers):

- from an empty $IRBOARD_CACHE (every file decoded, checked and re-scored, and predicted from for the build);
- with the verifications cached but not the clean checks (`checked/` removed: every file decoded and checked,
  nothing re-scored; the best case of validate before the clean checks were kept);
- from the cache the first run filled (nothing decoded);

each on both cores (one worker process per core) and pinned to one core.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "benchmarks" / "_work"
SHARED = Path(os.environ.get("IRBOARD_SHARED", ROOT.parent / "shared"))
SOURCES = ("bm25", "bm25-k1-1.5-b-0.75", "splade-tiny", "sentence-transformers__all-minilm-l6-v2")

TIMED_COMMAND = """
import json, os, resource, subprocess, sys, time
if sys.argv[1] == "1":
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
start = time.perf_counter()
done = subprocess.run(sys.argv[2:], capture_output=True, text=True)
seconds = time.perf_counter() - start
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"returncode": done.returncode, "out": done.stdout[-500:], "err": done.stderr[-3000:],
                  "seconds": seconds, "cpu": used.ru_utime + used.ru_stime, "rss": used.ru_maxrss * 1024}))
"""


def write_copies(models: int) -> Path:
    from dataclasses import replace

    from evaluator.result import dump_result, read_result, result_path

    folder = WORK / f"validate_{models}"
    done = folder / "complete"
    if done.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    sources = [read_result(ROOT / "results" / name / "beir__scifact.json") for name in SOURCES]
    for i in range(models):
        source = sources[i % len(sources)]
        model = source.model.model_copy(update={"id": f"bench{i % 17:02d}/copy-{i:04d}"})
        result = replace(source, header=source.header.model_copy(update={"model": model}))
        path = result_path(model.id, "beir/scifact", folder / "results")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump_result(result), encoding="utf-8")
    done.write_text(f"{models}\n")
    return folder


def run_validate(folder: Path, cache: Path, one_core: bool) -> dict:
    irboard = str(Path(sys.executable).with_name("irboard"))
    env = {"OPENBLAS_NUM_THREADS": "1", **os.environ, "IRBOARD_CACHE": str(cache)}
    done = subprocess.run([sys.executable, "-c", TIMED_COMMAND, "1" if one_core else "all", irboard, "validate",
                           "--results", str(folder / "results"), "--data-dir", str(SHARED / "data")],
                          capture_output=True, text=True, env=env)
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    if measured["returncode"] != 0:
        raise SystemExit(f"irboard validate failed:\n{measured['err']}")
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=1000)
    args = parser.parse_args()
    if not (SHARED / "data" / "beir" / "scifact").is_dir():
        raise SystemExit(f"benchmarks/validate.py needs SciFact in {SHARED / 'data'}; run `make shared-data`")
    folder = write_copies(args.models)
    files = sorted((folder / "results").rglob("*.json"))
    megabytes = sum(path.stat().st_size for path in files) / 1e6
    rows = []
    for cores in ("2 cores", "1 core"):
        cache = folder / "cache"
        shutil.rmtree(cache, ignore_errors=True)
        for state in ("empty cache", "verifications cached, no clean checks", "warm cache"):
            if state.startswith("verifications"):
                shutil.rmtree(cache / "checked")
            measured = run_validate(folder, cache, cores == "1 core")
            if f"{len(files)} result file(s) valid, {len(files)} verified" not in measured["out"]:
                raise SystemExit(f"not every file verified: {measured['out']}")
            rows.append((f"{cores}, {state}", measured))
    print(f"\nirboard validate: {len(files)} SciFact results (300 queries each; {megabytes:.0f} MB), every one "
          "verified\n")
    print(f"| {'run':<48} | {'wall s':>7} | {'CPU s':>7} | {'peak RSS':>9} |")
    print(f"|{'-' * 50}|{'-' * 9}|{'-' * 9}|{'-' * 11}|")
    for name, measured in rows:
        print(f"| {name:<48} | {measured['seconds']:>7.1f} | {measured['cpu']:>7.1f} | "
              f"{measured['rss'] / 2**20:>5.0f} MiB |")


if __name__ == "__main__":
    main()
