"""The Ray engine against the local engine: wall time with 1 and 2 workers, and identical results.

Each run is a fresh `irboard evaluate` process (Ray started inside it, as a user would run it) with an empty
cache, so encoding and Ray's start-up are both counted. On this 2-core machine the two cores behave like one:
expect overhead, not speed-up; the point is that the results are the same.

    python benchmarks/distributed.py [--models "bm25;splade:../shared/models/splade-tiny"] [--workers 1,2]

`--scale 100000,1000000` measures memory instead, on a multi-node Ray cluster on this machine (a head with no
CPUs, two worker nodes of one CPU each, `ray.cluster_utils.Cluster`) and a synthetic MS MARCO-like corpus of
each size (benchmarks/corpus_memory.py's): each model of `--models` with `--engine ray --address` the cluster,
7,000 queries, top 1,000 (`--queries`, `--top-k`). Reported: the driver's peak RSS (os.wait4, exact), each worker
node's peak RSS (the sum over its worker processes, sampled every 0.1 s: a shorter peak can be missed),
throughput per worker, and the local engine's peak RSS on the same corpus (same queries) as the peer, whose
per-query values, stored ranking and score samples the Ray run must equal byte for byte. `--baseline DIR` (a
checkout of other code, its C extensions built) runs that code's Ray driver too, on a cluster of its own whose
workers import it, in the same invocation.

    python benchmarks/distributed.py --scale 100000,1000000 [--models "bm25;dense:all-MiniLM-L6-v2"] [--baseline DIR]
    python benchmarks/distributed.py --scale 8800000 --keep-local DIR     # a rerun reuses the local result kept in DIR
    python benchmarks/distributed.py --scale 100000,1000000 --local-up-to 100000   # 1M: the Ray run alone
    python benchmarks/distributed.py --scale 100000,1000000 --ray-cache DIR   # a rerun's Ray runs encode nothing
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
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


def measured(command: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float, float]:
    """Run `command` in `cwd`; (wall s, CPU s, peak RSS GiB) of that process alone. `python -m` puts `cwd` first on
    sys.path (before the editable install of this checkout), and Ray adds the driver's folder to its workers'."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as log:  # a file, not a pipe: a chatty child cannot fill it and block
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=log)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            log.seek(0)
            raise SystemExit(f"{' '.join(command)} failed:\n{log.read().decode(errors='replace')[-3000:]}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 2**20


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, resident bytes) of every process, from /proc."""
    table = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/statm") as f:
                resident = int(f.read().split()[1]) * page
        except (OSError, IndexError, ValueError):  # the process ended meanwhile
            continue
        table[int(entry)] = (int(fields[1]), resident)
    return table


class NodePeaks(threading.Thread):
    """Largest sum of resident memory over the processes below each raylet (a node's workers), sampled."""

    def __init__(self, raylets: dict[str, int]):
        super().__init__(daemon=True)
        self.raylets, self.peaks, self.stop = raylets, dict.fromkeys(raylets, 0), threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.1):
            table = _process_table()
            children: dict[int, list[int]] = {}
            for pid, (parent, _) in table.items():
                children.setdefault(parent, []).append(pid)
            for node, raylet in self.raylets.items():
                todo, total = list(children.get(raylet, [])), 0
                while todo:
                    pid = todo.pop()
                    total += table[pid][1]
                    todo.extend(children.get(pid, []))
                self.peaks[node] = max(self.peaks[node], total)


def start_cluster(code: Path):
    """A head with no CPUs and two one-CPU worker nodes whose processes import `code` first; (cluster, raylets)."""
    from ray.cluster_utils import Cluster

    os.environ["PYTHONPATH"] = str(code)  # the nodes' worker processes inherit it
    cluster = Cluster()
    cluster.add_node(num_cpus=0)  # the head: the driver connects here, no task runs here
    nodes = [cluster.add_node(num_cpus=1) for _ in range(2)]
    cluster.wait_for_nodes()
    raylets = {f"worker node {i + 1}": node.all_processes["raylet"][0].process.pid for i, node in enumerate(nodes)}
    return cluster, raylets


def _compared(result: dict) -> dict:
    """What a Ray result must equal in the local engine's: per-query values, the stored ranking, score samples."""
    return {key: result.get(key) for key in ("per_query", "run", "score_samples")}


def scale(sizes: list[int], queries: int, top_k: int, models: list[str], baseline: Path | None,
          keep_local: Path | None = None, local_up_to: int | None = None, ray_cache: Path | None = None) -> None:
    """Driver and per-node peak memory on a two-worker-node cluster, against the local engine, for each model
    and corpus size; with `baseline` (a checkout of other code) its Ray driver too, on a cluster of its own.
    With `keep_local` (a folder) the local engine's results are kept there and reused by a later invocation
    with the same command, so that a Ray-only rerun at MS MARCO's size need not redo the local run. With
    `local_up_to` the local engine runs only at sizes up to it: larger sizes measure the Ray run's memory alone.
    With `ray_cache` (a folder) the Ray runs checkpoint their encodings there, so a later invocation measures the
    driver again without encoding again. Each Ray driver converts the corpus to Arrow itself (an empty cache of
    its own), as a first run on a fresh driver machine does."""
    from corpus_memory import synthetic_corpus  # benchmarks/corpus_memory.py

    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "OPENBLAS_NUM_THREADS": "1",
           "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    os.environ.update(env)
    codes = [("this", ROOT)] + ([("baseline", baseline.resolve())] if baseline else [])
    print(f"{queries:,} queries, top {top_k:,}\n")
    print("| model | passages | engine | wall s | driver peak RSS GiB | worker node peak RSS GiB | "
          "index docs/s per worker | queries/s | per-query values, ranking, samples equal to local |")
    print("|---|---|---|---|---|---|---|---|---|")
    drivers: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        locals_ = {}
        for model in models:
            for num_docs in sizes:
                folder = synthetic_corpus(num_docs, queries, titles=False)
                command = [sys.executable, "-m", "leaderboard.cli", "evaluate", "--model", model, "--dataset",
                           f"local:{folder}", "--top-k", str(top_k), "--quiet", "--force", "--out"]
                kept = _kept_local(keep_local, command) if keep_local else None
                out = kept or work / f"local-{len(locals_)}.json"
                if local_up_to is not None and num_docs > local_up_to:
                    locals_[model, num_docs] = (command + [str(out)], None)  # Ray alone: nothing to compare
                    continue
                if kept and kept.exists():
                    figures, note = "– | –", f"kept from an earlier run ({kept.name})"
                else:
                    wall, _, peak = measured(command + [str(out)], env)
                    figures, note = f"{wall:.1f} | {peak:.2f}", "–"
                local = json.loads(out.read_text())
                locals_[model, num_docs] = (command + [str(out)], _compared(local))
                timings = local["provenance"]["timings"]
                print(f"| {model} | {num_docs:,} | local | {figures} | – | {timings['encode_docs_per_s']:,.0f} | "
                      f"{timings['queries_per_s']:,.0f} | {note} |", flush=True)
        for label, code in codes:
            cluster, raylets = start_cluster(code)
            try:
                for (model, num_docs), (command, per_query) in locals_.items():
                    sampler = NodePeaks(raylets)
                    sampler.start()
                    out, fresh = work / "ray.json", work / f"driver-cache-{label}-{num_docs}"
                    shared = f"file://{ray_cache.resolve() / label if ray_cache else work / f'shared-{label}'}"
                    wall, _, peak = measured(command[:-1] + [str(out), "--engine", "ray", "--address",
                                                             cluster.address, "--workers", "2", "--cache-dir",
                                                             shared],
                                             {**env, "PYTHONPATH": str(code), "IRBOARD_CACHE": str(fresh)}, cwd=code)
                    sampler.stop.set()
                    sampler.join()
                    result = json.loads(out.read_text())
                    timings = result["provenance"]["timings"]
                    same = "– (local not run)" if per_query is None else \
                        "yes" if _compared(result) == per_query else "NO"
                    nodes_gib = " / ".join(f"{peak_bytes / 2**30:.2f}" for peak_bytes in sampler.peaks.values())
                    print(f"| {model} | {num_docs:,} | ray, 2 worker nodes ({label}) | {wall:.1f} | {peak:.2f} | "
                          f"{nodes_gib} | {timings['encode_docs_per_s'] / 2:,.0f} | {timings['queries_per_s']:,.0f} | "
                          f"{same} |", flush=True)
                    drivers.setdefault((model, label), []).append(peak)
            finally:
                cluster.shutdown()
    for (model, label), peaks in drivers.items():
        if len(peaks) > 1:
            growth = peaks[-1] / peaks[0] - 1
            print(f"\n{model} ({label}): driver peak RSS {peaks[0]:.2f} GiB at {sizes[0]:,} passages, {peaks[-1]:.2f} "
                  f"GiB at {sizes[-1]:,} ({growth:+.1%}, {'flat within 10%' if abs(growth) <= 0.10 else 'NOT flat'})")


def _kept_local(folder: Path, command: list[str]) -> Path:
    """Where the local result of `command` is kept: named by a hash of the command (model, corpus, depth)."""
    import hashlib

    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"local-{hashlib.sha256(' '.join(command[1:]).encode()).hexdigest()[:16]}.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="bm25", help="';'-separated model specs")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--scale", help="comma-separated corpus sizes: measure memory on a two-node cluster instead")
    parser.add_argument("--queries", type=int, default=7000, help="--scale: queries of the synthetic corpus")
    parser.add_argument("--top-k", type=int, default=1000, help="--scale: documents retrieved a query")
    parser.add_argument("--baseline", type=Path, help="--scale: a checkout of other code (its C extensions built), "
                                                      "whose Ray driver runs too, on a cluster of its own")
    parser.add_argument("--keep-local", type=Path, help="--scale: keep the local engine's results in this folder "
                                                        "and reuse them when the same command runs again")
    parser.add_argument("--ray-cache", type=Path, help="--scale: the Ray runs' shared cache (encodings), kept in "
                                                       "this folder for a later invocation")
    parser.add_argument("--local-up-to", type=int, help="--scale: run the local engine only at sizes up to this "
                                                          "(larger: the Ray run alone, not compared)")
    args = parser.parse_args()
    if args.scale:
        require_extra("test", "ray")
        scale([int(n) for n in args.scale.split(",")], args.queries, args.top_k,
              [m for m in args.models.split(";") if m], args.baseline, args.keep_local, args.local_up_to,
              args.ray_cache)
        return
    require_extra("test", "ray", "torch", "transformers")
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
