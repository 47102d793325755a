"""The cost of the group means' could-flip flags (analysis.group_robust) at 1,000 models × 30 datasets × 200 queries,
beside the group's own tests they repeat on crossed values, in one process, on synthetic per-query values and
bounds (up to +0.05 a query above them, as stats_stage.py --holes). Each dataset's crossings (robust.Crossings) are
made in the setup, as the datasets' own flags make them in a build: crossed_tests_s pools them.

    python benchmarks/group_flags.py [--models 1000] [--datasets 30] [--queries 200]
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import numpy as np


def main() -> None:
    from leaderboard.analysis import stats
    from leaderboard.analysis.group_robust import DatasetPart, crossed_tests, group_robustness
    from leaderboard.analysis.ranks import best_set, difference_pvalues, group_differences
    from leaderboard.analysis.robust import Crossings, cross_spread

    parser = argparse.ArgumentParser()
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--datasets", type=int, default=30)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    skill = rng.normal(0.4, 0.05, args.models)
    parts, weights, dataset_means, dataset_terms = [], [1.0 / args.datasets] * args.datasets, [], []
    for _ in range(args.datasets):
        values = np.clip(skill[:, None] + rng.normal(0, 0.2, (args.models, args.queries)), 0, 1)
        high = np.minimum(values + rng.uniform(0, 0.05, values.shape), 1)
        means = values.mean(axis=1)
        _, sd = cross_spread(values, values)
        crossings = Crossings.of(values, high)  # the dataset's own flags compute them
        terms = means[:, None] - means[None, :], np.square(sd)
        parts.append(DatasetPart(args.queries, lambda block, out, terms=terms: (terms[0][block], terms[1][block]),
                                 functools.partial(crossings.among, np.arange(args.models))))
        dataset_means.append(means)
        dataset_terms.append(terms)
    tests = stats.TestSettings()
    start = time.perf_counter()
    own = group_differences([diff for diff, _ in dataset_terms], [variance for _, variance in dataset_terms],
                            [p.queries for p in parts], weights)
    pvalues = stats.corrected_matrix(difference_pvalues(*own), tests.correction)
    means = sum(w * dataset_mean for w, dataset_mean in zip(weights, dataset_means, strict=True))
    best = best_set(means, own[0], np.sqrt(own[1]), own[2], tests.alpha)
    board_tests = time.perf_counter() - start
    start = time.perf_counter()
    crossed = crossed_tests(parts, weights, args.models)
    middle = time.perf_counter()
    flags = group_robustness(means, own, pvalues, best, crossed, tests, 0.01)
    end = time.perf_counter()
    print(json.dumps({"models": args.models, "datasets": args.datasets, "queries": args.queries,
                      "group_tests_s": round(board_tests, 2), "crossed_tests_s": round(middle - start, 2),
                      "flags_s": round(end - middle, 2), "rank_flips": int((~flags.rank).sum()),
                      "best_flips": int((~flags.best).sum())}))


if __name__ == "__main__":
    main()
