"""A cold `irboard build` with score samples against the same build without them, in the same run.

    python benchmarks/sample_build.py [--results results] [--copies 25] [--rounds 3] [--data-dir ../shared/data]
                                      [--code DIR ...]

The board: every result of `--results` that carries score samples (the repository's real results: rankings and
samples in every such file), `--copies` times each under other model ids, and the same files with `score_samples`
removed. Each build is `python -m leaderboard.cli build --strict --results BOARD --out OUT [--data-dir DIR]` in a
process of its own from an empty `$IRBOARD_CACHE` (every verification and prediction computed), one BLAS thread,
run in the checkout `--code` names (default this one; several: each in turn). With and without samples alternate
within each round, so that the machine's load falls on both alike. Prints one JSON line per build (wall and CPU
seconds of the command and its workers, the load average at its end) and the median ratio with / without per tree.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def write_boards(source: Path, copies: int, work: Path) -> dict[str, Path]:
    """The results with score samples, `copies` times each, with and without their samples."""
    from evaluator.result import result_path

    folders = {"with samples": work / "with", "without samples": work / "without"}
    for path in sorted(source.glob("*/*.json")):
        data = json.loads(path.read_text())
        if not data.get("score_samples"):
            continue
        for name, folder in folders.items():
            kept = data if name == "with samples" else {k: v for k, v in data.items() if k != "score_samples"}
            for copy in range(copies):
                model_id = data["model"]["id"] + (f"-copy{copy}" if copy else "")
                target = result_path(model_id, data["dataset"]["id"], folder)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps({**kept, "model": {**kept["model"], "id": model_id}}))
    for folder in folders.values():
        if (source / "schema.json").exists():
            (folder / "schema.json").write_bytes((source / "schema.json").read_bytes())
    return folders


def timed_build(code: Path, board: Path, out: Path, data_dir: Path | None) -> dict:
    """One cold build in its own process: wall and CPU seconds (the command and every worker it waited for)."""
    command = [sys.executable, "-m", "leaderboard.cli", "build", "--strict", "--results", str(board), "--out",
               str(out)]
    if data_dir is not None:
        command += ["--data-dir", str(data_dir)]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPATH": str(code), "OPENBLAS_NUM_THREADS": "1", "IRBOARD_CACHE": cache}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, cwd=code, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{code}: build failed: {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load": round(os.getloadavg()[0], 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--copies", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data-dir", type=Path, help="verify every result against these datasets (a cold cache)")
    parser.add_argument("--code", type=Path, nargs="+", default=[ROOT], help="checkouts to build with")
    args = parser.parse_args()
    cpu: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as work:
        folders = write_boards(args.results.resolve(), args.copies, Path(work))
        files = len(list(folders["with samples"].glob("*/*.json")))
        print(f"{files} results with score samples, {files} without", flush=True)
        for _ in range(args.rounds):
            for code in args.code:
                for name, board in folders.items():
                    row = timed_build(code.resolve(), board, Path(work) / "site", args.data_dir)
                    cpu.setdefault((str(code), name), []).append(row["cpu_s"])
                    print(json.dumps({"code": str(code), "build": name, **row}), flush=True)
    for code in args.code:
        with_samples = statistics.median(cpu[(str(code), "with samples")])
        without = statistics.median(cpu[(str(code), "without samples")])
        print(f"{code}: median CPU {with_samples:.1f} s with samples, {without:.1f} s without: "
              f"{with_samples / without:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
