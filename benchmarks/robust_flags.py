"""Whether two code trees give the same could-flip flags (analysis.robust, analysis.group_robust), array for array, on
the same results with the synthetic hole bounds of stats_stage.py --holes.

    python benchmarks/robust_flags.py RESULTS_DIR CODE_DIR CODE_DIR

Each tree builds the leaderboard once in its own process and saves every flag array of the build (each dataset's
verdict, ★, rank and pair flags, each group's pair, ★ and rank flags) to a temporary .npz; the two files are then
compared: the same names, shapes and values. Prints one JSON line; exits 1 when some array differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from stats_stage import HOLES  # benchmarks/stats_stage.py

CHILD = HOLES + r"""
import numpy as np
board = build_leaderboard(results, lookup=lookup, workers=1)
flags = {}
for dataset in board.datasets:
    if dataset.robust is not None:
        for name in ("verdict", "best", "rank", "pairs"):
            if getattr(dataset.robust, name) is not None:
                flags[f"dataset {dataset.info.id} {name}"] = getattr(dataset.robust, name)
for group in board.groups:
    if group.robust is not None:
        for name in ("pairs", "best", "rank"):
            flags[f"group {group.name} {name}"] = getattr(group.robust, name)
np.savez(sys.argv[4], **flags)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("code", nargs=2, help="the two repository checkouts")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        saved = []
        for k, code in enumerate(args.code):
            path = os.path.join(folder, f"{k}.npz")
            env = {**os.environ, "PYTHONPATH": code, "OPENBLAS_NUM_THREADS": "1"}
            done = subprocess.run([sys.executable, "-c", CHILD, os.path.abspath(args.results), code, "holes", path],
                                  env=env, cwd=code, capture_output=True, text=True, check=False)
            if done.returncode:
                print(f"{code}: failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                return 1
            saved.append(dict(np.load(path)))
        first, second = saved
        differing = sorted(name for name in first.keys() | second.keys()
                           if name not in first or name not in second or first[name].shape != second[name].shape
                           or not np.array_equal(first[name], second[name]))
        flips = {name: int((~first[name]).sum()) for name in first if name.endswith((" best", " rank"))}
        print(json.dumps({"arrays": len(first), "differing": differing,
                          "could_flip": sum(flips.values()), "all_equal": not differing}))
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
