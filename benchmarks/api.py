"""Benchmark: the library on in-memory dicts against ranx and ir_measures, and how long each takes to import.

Usage: python benchmarks/api.py [--sizes 1000x100,10000x1000] [--repeat 3] [--imports 5]
       python benchmarks/api.py --small            (200 queries x 50 docs, a quick check)

What a notebook user does: the run {query_id: {doc_id: score}} and the qrels {query_id: {doc_id: relevance}} are
Python dicts already in memory (a seeded synthetic run, scores with 2 decimals so ties are common; graded
qrels, labels 0-3, 10 judged documents a query), and one call gives the means of nDCG@10, R@100, AP and RR over
the judged queries. Each tool's time includes building its objects from the dicts:

- irboard: `irboard.evaluate(run, qrels, metrics)` (its input checks, ranking and metrics);
- ranx: `Qrels(qrels)`, `Run(run)`, `evaluate(qrels, run, metrics)` (numba's compilation is warmed up first on
  a small run and not counted; ranx scores the run's queries, the same set here);
- ir_measures: `calc_aggregate(measures, qrels, run)` (its pytrec_eval provider, which builds trec_eval's
  structures from the dicts).

Each tool runs in its own process (the dicts are generated there from the seed, not timed), the median of
`--repeat` calls. Import times: `import X` in a fresh interpreter, best of `--imports`. irboard's means must equal
ir_measures' (trec_eval's) within 1e-9; ranx's differences (its tie order) are reported.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
from peers import require_extra  # benchmarks/peers.py

MEASURES = ("nDCG@10", "R@100", "AP", "RR")
RANX_NAMES = {"nDCG@10": "ndcg@10", "R@100": "recall@100", "AP": "map", "RR": "mrr"}
TOLERANCE = 1e-9


def make_dicts(queries: int, docs: int, seed: int = 7) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for i in range(queries):
        ids = rng.choice(50 * docs + 1000, size=docs, replace=False)
        scores = np.round(rng.random(docs) * 20, 2)
        run[f"q{i}"] = dict(zip([f"d{d}" for d in ids.tolist()], scores.tolist(), strict=True))
        judged = rng.choice(ids, size=min(10, docs), replace=False)
        qrels[f"q{i}"] = {f"d{d}": r for d, r in zip(judged.tolist(), rng.integers(0, 4, len(judged)).tolist(),
                                                     strict=True)}
    return run, qrels


def timed(function, repeat: int) -> tuple[float, float, object]:
    """Median wall and CPU seconds of `repeat` calls, and the last value."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        value = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return float(np.median(walls)), float(np.median(cpus)), value


def run_irboard(run: dict, qrels: dict, repeat: int) -> tuple[float, float, dict]:
    import irboard

    irboard.evaluate(*make_dicts(20, 20, seed=1), list(MEASURES))  # first-use imports, as for the peers
    return timed(lambda: irboard.evaluate(run, qrels, list(MEASURES)), repeat)


def run_ranx(run: dict, qrels: dict, repeat: int) -> tuple[float, float, dict]:
    from ranx import Qrels, Run, evaluate

    names = list(RANX_NAMES.values())

    def call(run_dict, qrels_dict):
        values = evaluate(Qrels(qrels_dict), Run(run_dict), names)
        return {ours: float(values[theirs]) for ours, theirs in RANX_NAMES.items()}

    call(*make_dicts(20, 20, seed=1))  # numba compiles on first use: not counted
    return timed(lambda: call(run, qrels), repeat)


def run_ir_measures(run: dict, qrels: dict, repeat: int) -> tuple[float, float, dict]:
    import ir_measures

    measures = [ir_measures.parse_measure(m) for m in MEASURES]

    def call(run_dict, qrels_dict):
        values = ir_measures.calc_aggregate(measures, qrels_dict, run_dict)
        return {str(measure): float(value) for measure, value in values.items()}

    call(*make_dicts(20, 20, seed=1))
    return timed(lambda: call(run, qrels), repeat)


TOOLS = {"irboard": run_irboard, "ranx": run_ranx, "ir_measures": run_ir_measures}
IMPORTS = {"irboard": "irboard", "ranx": "ranx", "ir_measures": "ir_measures"}


def worker(tool: str, queries: int, docs: int, repeat: int) -> None:
    run, qrels = make_dicts(queries, docs)
    wall, cpu, means = TOOLS[tool](run, qrels, repeat)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"wall": wall, "cpu": cpu, "means": means, "peak_rss": peak}))


def import_seconds(module: str, times: int) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True
                                    ).stdout) for _ in range(times))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000x100,10000x1000", help="queries x docs, comma-separated")
    parser.add_argument("--small", action="store_true", help="200 queries x 50 docs")
    parser.add_argument("--repeat", type=int, default=3, help="calls per tool; the median time is reported")
    parser.add_argument("--imports", type=int, default=5, help="fresh interpreters per import time")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        tool, queries, docs, repeat = args.worker
        worker(tool, int(queries), int(docs), int(repeat))
        return 0
    require_extra("bench", "ranx", "ir_measures")
    sizes = [(200, 50)] if args.small else [tuple(map(int, size.split("x"))) for size in args.sizes.split(",")]
    print(f"import times (best of {args.imports} fresh interpreters):")
    imports = {tool: import_seconds(module, args.imports) for tool, module in IMPORTS.items()}
    for tool, seconds in imports.items():
        print(f"  import {tool:<12} {seconds:7.3f} s")
    for queries, docs in sizes:
        print(f"\n{queries:,} queries x {docs:,} docs as dicts, {', '.join(MEASURES)}, median of {args.repeat}:")
        found = {}
        for tool in TOOLS:
            done = subprocess.run([sys.executable, __file__, "--worker", tool, str(queries), str(docs),
                                   str(args.repeat)], capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"error: {tool} failed:\n{done.stderr[-2000:]}")
            found[tool] = json.loads(done.stdout.splitlines()[-1])
        reference = found["ir_measures"]["means"]
        base = found["irboard"]["wall"]
        print(f"  {'tool':<12} {'wall s':>8} {'CPU s':>8} {'peak RSS':>9} {'vs irboard':>10}  max |mean - trec_eval|")
        for tool, row in found.items():
            gap = max(abs(row["means"][m] - reference[m]) for m in MEASURES)
            print(f"  {tool:<12} {row['wall']:8.3f} {row['cpu']:8.3f} {row['peak_rss'] / 2**30:8.2f}G "
                  f"{row['wall'] / base:9.1f}x  {gap:.1e}")
        if max(abs(found["irboard"]["means"][m] - reference[m]) for m in MEASURES) > TOLERANCE:
            raise SystemExit("error: irboard's means differ from trec_eval's (ir_measures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
