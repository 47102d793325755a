"""The statistics stage of the build (`build_leaderboard`, one process) of two code trees on the same results.

    python benchmarks/stats_stage.py RESULTS_DIR CODE_DIR [CODE_DIR ...] [--rounds 2]

RESULTS_DIR: e.g. `tests/data/make_synthetic_results.py --scale 200 30 1000 --out RESULTS_DIR`. Each code tree (a
checkout of this repository, e.g. the branch before a change and after it) runs in its own fresh process, in turn,
`--rounds` times, so that the machine's load falls on both alike; each process loads the results, counts every
result verified (synthetic files store no ranking, and only verified results are ranked) and builds the
leaderboard twice, then the ranks page's context once (its stability checks). Prints one JSON line per process:
wall and CPU seconds of each build, seconds of the ranks page, ranked models on "All datasets", the top group's
size, the widest rank range, peak RSS, the load average at its end. `--holes` gives every result synthetic hole
bounds where the tree keeps them (the board then computes which verdicts hold over them, analysis/robust.py);
`--both` runs each tree without and then with them, in turn, so that a build with the bounds and flags is
measured beside one without in the same run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

# the results, every one counted verified, and with "holes" (sys.argv[3]) the synthetic hole bounds
HOLES = r"""
import dataclasses, functools, json, os, resource, sys, time
from leaderboard.analysis.aggregate import build_leaderboard
from leaderboard.submissions.catalog import dataset_info
from leaderboard.submissions.load import load_results
lookup = functools.lru_cache(maxsize=None)(dataset_info)
loaded = load_results(sys.argv[1], keep_metrics=lambda d: [lookup(d).main_metric], workers=2)
results = [dataclasses.replace(r, verified=True, verified_metrics=frozenset(r.metrics)) for r in loaded.results]
holes = False
if sys.argv[3] == "holes":  # synthetic hole bounds on every result, where the tree keeps them (submissions.holes)
    try:
        import numpy as np
        from leaderboard.submissions.holes import HoleFigures
    except ImportError:
        pass
    else:
        rng = np.random.default_rng(0)
        def with_holes(r):
            metric = lookup(r.dataset_id).main_metric
            values = r.per_query[metric].astype(np.float32)
            high = np.minimum(values + rng.uniform(0, 0.05, values.size).astype(np.float32), 1).astype(np.float32)
            judged = np.full(values.size, 0.9, dtype=np.float32)
            return dataclasses.replace(r, holes=HoleFigures(metric, 0.9, judged, values, high,
                                                            {metric: (float(values.mean()), float(high.mean()))}))
        results = [with_holes(r) for r in results]
        holes = True
"""

CHILD = HOLES + r"""
times, cpu = [], []
for _ in range(2):
    board = None  # the command builds one board: the first one's memory is not held through the second build
    start, start_cpu = time.perf_counter(), time.process_time()
    board = build_leaderboard(results, lookup=lookup, workers=1)
    times.append(round(time.perf_counter() - start, 2))
    cpu.append(round(time.process_time() - start_cpu, 2))
try:  # the ranks page's statistics (who could be #1, split halves, datasets left out), where the tree has them
    try:
        from leaderboard.web.views.ranks import build as build_ranks
    except ImportError:  # a tree from before leaderboard/web/views/
        from leaderboard.web.rank_pages import build_ranks
    start = time.perf_counter()
    build_ranks(board)
    ranks_seconds = round(time.perf_counter() - start, 2)
except ImportError:
    ranks_seconds = None
group = next(g for g in board.groups if g.name == "All datasets")
ranked = [s for s in group.scores.values() if s.mean_rank is not None]
print(json.dumps({"code": sys.argv[2], "holes": holes, "seconds": times, "cpu_seconds": cpu, "ranks_page_seconds": ranks_seconds, "ranked": len(ranked),
                  "top_group": sum(s.rank_interval[0] == 1 for s in ranked),
                  "widest_range": max((s.rank_interval[1] - s.rank_interval[0] + 1 for s in ranked), default=0),
                  "rss_gib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
                  "load": round(os.getloadavg()[0], 1)}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("code", nargs="+", help="repository checkouts to compare")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--holes", action="store_true",
                        help="give every result synthetic hole bounds (main metric: up to +0.05 a query) where the "
                             "tree keeps them, so that the board computes its could-flip flags")
    parser.add_argument("--both", action="store_true", help="run each tree without and then with the hole bounds")
    args = parser.parse_args()
    kinds = ["", "holes"] if args.both else ["holes" if args.holes else ""]
    for _ in range(args.rounds):
        for code in args.code:
            for kind in kinds:
                env = {**os.environ, "PYTHONPATH": code, "OPENBLAS_NUM_THREADS": "1"}
                # run in the checkout: `python -c` puts the working folder first on the path, before PYTHONPATH
                done = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(args.results), code, kind],
                                      env=env, cwd=code, capture_output=True, text=True, check=False)
                print(done.stdout.strip() or f"{code}: failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
