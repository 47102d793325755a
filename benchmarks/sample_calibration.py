"""How much room honest results leave the score-sample checks below the ranking's cut: the density margin.

    python benchmarks/sample_calibration.py results/*/*.json FRESH/*/*.json

For every result file given (with its qrels under ../shared/data/<dataset id>/qrels/), one line: whether
`verify_result` accepts it, the p-value bounds of the whole-file tests of leaderboard/submissions/sample_checks.py
(share above the cut, both sides; the deepest judged documents of run.below, where the file has it) and, per window (the gap to the farthest, 1/2, 1/4 and
1/8 farthest ranked non-relevant document above the cut), the file's density ratio: the sampled scores in the
window over m/M times the ranked non-relevant documents above the cut that set its width. The checks assume a
ratio of at least DENSITY_RATIO (0.75); `break-even` is the largest DENSITY_RATIO under which the file would still
pass, so min(break-even) over honest files is the margin the constant leaves. benchmarks/README.md records them.
"""
import sys
from pathlib import Path

import numpy as np

from evaluator.result import read_result
from evaluator.trec import read_qrels
from leaderboard.submissions.labels import entry_labels
from leaderboard.submissions.sample_checks import (
    CUT_TESTS,
    DENSITY_RATIO,
    IMPLAUSIBLE,
    WINDOW_DIVISORS,
    chernoff_tail,
    cut_counts,
)
from leaderboard.submissions.verify import verify_result

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TESTS = CUT_TESTS


def break_even(observed: float, base: float) -> float:
    """The largest ratio r for which observed >= r * base passes (p >= IMPLAUSIBLE / TESTS), by bisection."""
    if base <= 0:
        return float("inf")
    low, high = 0.0, 1.0
    while chernoff_tail(observed, high * base) >= IMPLAUSIBLE / TESTS or observed >= high * base:
        low, high = high, 2 * high
        if high > 1e6:
            return float("inf")
    for _ in range(60):
        middle = (low + high) / 2
        passes = observed >= middle * base or chernoff_tail(observed, middle * base) >= IMPLAUSIBLE / TESTS
        low, high = (middle, high) if passes else (low, middle)
    return low


def main(paths: list[str]) -> None:
    print(f"{'file':70s} {'verified':8s} {'p few':>8s} {'p many':>8s} {'p deep':>8s} {'deep o/e':>8s} "
          + " ".join(f"{'ratio 1/' + str(d):>10s}" for d in WINDOW_DIVISORS) + f" {'break-even':>10s}")
    lowest = []
    for path in paths:
        result = read_result(Path(path))
        qrels = read_qrels(SHARED / result.dataset.id / "qrels" / f"{result.dataset.split}.tsv")
        outcome = verify_result(result, qrels)
        counts = cut_counts(result, entry_labels(result, qrels))
        seen, low, high = (float(counts[name].sum()) for name in ("above", "above_low", "above_high"))
        p_few = chernoff_tail(seen, low) if seen < low else 1.0
        p_many = chernoff_tail(seen, high) if seen > high else 1.0
        deep, deep_least = float(counts["deep"].sum()), float(counts["deep_least"].sum())
        p_deep = chernoff_tail(deep, deep_least) if deep < deep_least else 1.0
        ratios, evens = [], []
        for j in range(len(WINDOW_DIVISORS)):
            observed, base = float(counts["window"][:, j].sum()), float(counts["window_least"][:, j].sum())
            base /= DENSITY_RATIO  # the expected count at a density ratio of 1
            ratios.append(observed / base if base else float("nan"))
            evens.append(break_even(observed, base))
        lowest.append(min(evens))
        name = f"{Path(path).parent.name}/{Path(path).name}"
        print(f"{name:70s} {'yes' if not outcome.problems else 'NO':8s} {p_few:8.1e} {p_many:8.1e} "
              f"{p_deep:8.1e} {deep / deep_least if deep_least else float('nan'):8.3f} "
              + " ".join(f"{ratio:10.3f}" for ratio in ratios) + f" {min(evens):10.3f}"
              + ("" if not outcome.problems else f"  {outcome.problems[0][:100]}"))
    print(f"lowest break-even over {len(paths)} files: {np.min(lowest):.3f} (the checks use {DENSITY_RATIO})")


if __name__ == "__main__":
    main(sys.argv[1:])
